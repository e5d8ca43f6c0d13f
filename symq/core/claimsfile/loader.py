"""Loading claims files: TOML (declarative, never runs code) and Python (a program you trust).

:func:`load_claims_file` reads one file into a :class:`LoadedFile`: a
:class:`~symq.core.registry.PaperSpec` whose claims ``symq check`` runs like a built-in paper's,
the models the file declares, and the errors of the claims that could not be built (each names
the file, the line and the claim; the other claims still run).  :func:`claims_files` lists the
claims files of a folder: its own ``*.toml`` files, one level deep, and only when asked
(``allow_python``) its ``*.py`` claims files.

A TOML file has the tables ``[paper]``, ``[constants]``, ``[models.NAME]``, ``[tex]`` (the
symbols of formulas written in LaTeX, :mod:`~symq.core.claimsfile.tex`) and ``[[claims]]`` (see
``symq new-claims`` and the README section "Check a formula from your own paper").  Every
formula in it is parsed into a whitelisted syntax tree; nothing in a TOML file is executed, so it
is safe to check a file received from someone else.

A Python file defines the same things as module attributes ``PAPER`` (dict), ``CONSTANTS``
(dict), ``TEX`` (dict), ``MODELS`` (dict name -> table, or name ->
:class:`~symq.core.registry.ModelSpec` for a model built in Python) and ``CLAIMS`` (a list of
tables, or of :class:`~symq.core.claims.Claim` objects), and may use Python functions where a
TOML file writes formulas.  Checking a Python claims file runs it, like running a script: check
only files you trust.  It runs only when asked for by name (``symq check FILE.py``, or ``symq
check --allow-python DIR``); listing never runs it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import re
import sys
import tomllib
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy as sp

from ..claims import Claim
from ..derivation import Derivation
from ..display import MarkdownDisplay, cell
from ..errors import InvalidParameter, SymqError
from ..formula_tex import tex_shown
from ..registry import ModelSpec, PaperSpec
from .claim import FileClaim, build_claim, parse_quantities
from .declarations import declare_model
from .quantities import FileContext
from .tex import file_symbols

__all__ = [
    "MAX_DEPTH",
    "PAPER_KEYS",
    "SUFFIXES",
    "ClaimsFileError",
    "LoadedFile",
    "claims_files",
    "is_claims_path",
    "is_explicit_path",
    "load_claims_file",
    "python_claims_files",
    "shadowed_path_note",
]

SUFFIXES = (".toml", ".py")
PAPER_KEYS = ("key", "title", "authors", "year", "venue", "doi", "arxiv", "url", "notes")
_TOP_KEYS = ("paper", "constants", "models", "claims", "tex")


class ClaimsFileError(SymqError):
    """A claims file (or one claim of it) cannot be used: ``path:line: what: why``."""

    def __init__(self, path: str, line: int | None, what: str, message: str) -> None:
        self.path, self.line, self.what = path, line, what
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {what}: {message}" if what else f"{where}: {message}")


@dataclass(repr=False)
class LoadedFile(MarkdownDisplay):
    """A claims file read into a paper, its declared models and the errors of its claims."""

    path: Path
    paper: PaperSpec
    models: dict[str, ModelSpec] = field(default_factory=dict)
    errors: list[ClaimsFileError] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)

    def __repr__(self) -> str:
        return (f"LoadedFile({str(self.path)!r}: paper {self.paper.key!r}, "
                f"{len(self.models)} models, {len(self.claims)} claims, "
                f"{len(self.errors)} errors)")

    def to_markdown(self) -> str:
        """The file, its paper, its models (name and summary), its claims (name and
        statement) and its errors (Jupyter's display)."""
        lines = [f"**LoadedFile** `{self.path}`: {cell(self.paper.title)} "
                 f"(`{self.paper.key}`)", ""]
        if self.models:
            lines += ["| model | summary |", "|---|---|"]
            lines += [f"| `{name}` | {cell(m.summary, 120)} |" for name, m in self.models.items()]
            lines.append("")
        if self.claims:
            lines += ["| claim | statement |", "|---|---|"]
            lines += [f"| {cell(c.name, 80)} | {_statement_cell(c)} |" for c in self.claims]
        if self.errors:
            lines += ["", f"{len(self.errors)} claim(s) could not be built:"]
            lines += [f"- {cell(str(e), 200)}" for e in self.errors]
        return "\n".join(lines)


def _statement_cell(claim: Claim) -> str:
    """A claim's statement in a Markdown table: as code, or as math when written in LaTeX."""
    if isinstance(claim, FileClaim) and claim.tex:  # $...$: rendered, never cut
        shorthand = claim.relation is not None and claim.relation.text == "formula == reference"
        return cell(tex_shown(claim.tex), 100) + (" == `reference`" if shorthand else "")
    return f"`{cell(claim.statement, 100)}`"


def is_explicit_path(text: str) -> bool:
    """Whether a command-line argument is written as a path (``./awp``, ``awp/``, an absolute
    path, ``NAME.toml``, ``NAME.py``) rather than as a bare name that may be a paper key."""
    return "/" in text or "\\" in text or text.endswith(SUFFIXES) or Path(text).is_absolute()


def is_claims_path(text: str) -> bool:
    """Whether a ``symq check`` argument names a file or folder rather than a paper key."""
    return is_explicit_path(text) or Path(text).exists()


def defines_claims(path: Path) -> bool:
    """Whether a Python file's text assigns ``CLAIMS`` at top level (read, never run)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"(?m)^CLAIMS\s*(:[^=]*)?=", text) is not None


def claims_files(path: Path, allow_python: bool = False) -> list[Path]:
    """The claims files of ``path``.

    Parameters
    ----------
    path : Path
        A claims file (returned as it is, whatever its suffix: a file named on the command line
        is the user's choice) or a folder.
    allow_python : bool
        In a folder, also the ``*.py`` files that assign ``CLAIMS`` at top level (their text is
        read, never run, to decide).  Off by default: a folder's Python files run only when
        asked for (``symq check --allow-python DIR``).

    Returns
    -------
    list of Path
        In a folder, its own ``*.toml`` files (one level deep: subfolders are not searched),
        sorted, skipping names that start with ``_`` or ``.``.
    """
    if path.is_file():
        return [path]
    try:
        entries = list(path.iterdir())
    except OSError:
        return []
    return sorted(p for p in entries if not p.name.startswith(("_", ".")) and p.is_file()
                  and (p.suffix == ".toml"
                       or (allow_python and p.suffix == ".py" and defines_claims(p))))


def shadowed_path_note(name: str, what: str = "paper") -> str | None:
    """The note for a bare name that is a built-in (or plugin) paper key and also a local file
    or folder: the built-in wins, and the note says how to name the path instead."""
    path = Path(name)
    if is_explicit_path(name) or not path.exists():
        return None
    kind = "folder" if path.is_dir() else "file"
    return (f"{name!r} is the built-in {what} {name}; the local {kind} {name!r} was not used "
            f"(write ./{name} to use it)")


def python_claims_files(folder: Path) -> list[Path]:
    """The ``*.py`` files of ``folder`` (one level deep) that assign ``CLAIMS`` at top level:
    what ``symq check --allow-python`` would run there (read, never run)."""
    toml = set(claims_files(folder))
    return [p for p in claims_files(folder, allow_python=True) if p not in toml]


# ----------------------------------------------------------------------------- line numbers

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_TABLE_HEADER = re.compile(r"^\s*\[\s*([^\[\]]*?)\s*\]")
_FIRST_WORD = re.compile(r"^\s*([A-Za-z0-9_]+)")


class _Lines:
    """Finds the line of a table or a claim in the file's text (for error messages).

    The text is indexed once (in one pass per pattern, and one pass for the string literals), so
    that finding the lines of n claims takes time linear in the file, not n times its length.
    """

    def __init__(self, text: str, toml: bool) -> None:
        self.lines = text.splitlines()
        self.toml = toml
        self._matches: dict[str, list[int]] = {}
        self._strings: dict[str, int] | None = None
        self._headers: dict[str, int] | None = None
        self._words: dict[str, int] | None = None

    def find(self, pattern: str, occurrence: int = 0) -> int | None:
        """The line of the ``occurrence``-th line matching ``pattern`` (each pattern is
        searched once per file)."""
        found = self._matches.get(pattern)
        if found is None:
            regex = re.compile(pattern)
            found = self._matches[pattern] = [n for n, line in enumerate(self.lines, 1)
                                              if regex.search(line)]
        return found[occurrence] if occurrence < len(found) else None

    def string(self, literal: str) -> int | None:
        """The first line holding the string literal ``literal`` (with its quotes)."""
        if self._strings is None:
            self._strings = {}
            for number, line in enumerate(self.lines, 1):
                for match in _STRING.finditer(line):
                    self._strings.setdefault(match.group(), number)
        return self._strings.get(literal)

    def claim(self, index: int, name: Any) -> int | None:
        """The line of the claim's own table, else of the claims list that holds it."""
        if self.toml:
            own = self.find(r"^\s*\[\[\s*claims\s*\]\]", index)
            if own is None and isinstance(name, str) and name:
                own = self.string(f'"{name}"')
            return own or self.find(r"^\s*claims\s*=")
        if isinstance(name, str) and name:
            found = [n for n in (self.string(repr(name)), self.string(f'"{name}"')) if n]
            if found:
                return min(found)
        return self.find(r"^\s*CLAIMS\b")

    def key(self, start: int | None, end: int | None, name: Any, value: Any) -> int | None:
        """The line, among lines ``start`` to ``end - 1``, where the key path ``name``
        (``claims[2].let.ET``) is written: a line assigning its last part (``ET = ...``,
        ``let.ET = ...``, ``"ET": ...``), preferring one that shows ``value``; else a line
        that shows ``value``; else None."""
        if start is None or not isinstance(name, str):
            return None
        last = re.sub(r"\[[^\]]*\]$", "", name.rsplit(".", 1)[-1])
        if not re.fullmatch(r"\w+", last):
            return None
        assign = re.compile(rf"(^|[\s.{{,])({last}\s*=(?!=)|['\"]{last}['\"]\s*:)")
        shown = value if isinstance(value, str) and value.strip() else None
        stop = min(end or len(self.lines) + 1, len(self.lines) + 1)
        numbers = range(start, stop)
        keyed = [n for n in numbers if assign.search(self.lines[n - 1])]
        if shown is not None:
            both = [n for n in keyed if shown in self.lines[n - 1]]
            if both:
                return both[0]
        if keyed:
            return keyed[0]
        if shown is not None:
            return next((n for n in numbers if shown in self.lines[n - 1]), None)
        return None

    def table(self, name: str) -> int | None:
        if self._headers is None:
            self._headers, self._words = {}, {}
            for number, line in enumerate(self.lines, 1):
                header = _TABLE_HEADER.match(line)
                if header:
                    self._headers.setdefault(header.group(1), number)
                word = _FIRST_WORD.match(line)
                if word:
                    self._words.setdefault(word.group(1), number)
        assert self._words is not None
        top = name.split(".")[0]
        if self.toml:
            return self._headers.get(name) or self._word(top)
        return self._word(top.upper())

    def _word(self, word: str) -> int | None:
        """The first line that starts with ``word`` (a whole word)."""
        if re.fullmatch(r"[A-Za-z0-9_]+", word):
            return self._words.get(word) if self._words else None
        return self.find(rf"^\s*{re.escape(word)}\b")


# ----------------------------------------------------------------------------- reading

MAX_DEPTH = 32
"""How deep the tables and lists of a claims file may nest (a claims file needs about six
levels); deeper data is refused before it is parsed or walked."""

_TOML_TOKENS = re.compile(r'"""|' + r"'''" + r"""|["'#\[\]{},=.\n]""")
_TOML_STRING_ENDS = {'"""': re.compile(r'(?:\\.|[^\\])*?"""', re.DOTALL),
                     "'''": re.compile(r".*?'''", re.DOTALL),
                     '"': re.compile(r'(?:\\.|[^"\\\n])*"'),
                     "'": re.compile(r"[^'\n]*'")}


def _toml_too_deep(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The line where the TOML text nests deeper than ``limit`` (tables, inline tables, arrays
    and the parts of dotted keys), or None.

    One pass over the text, without parsing it: Python's ``tomllib`` recurses once per level of
    arrays and inline tables (a RecursionError at a few hundred levels) and takes time and memory
    quadratic in the parts of a dotted key, so depth is refused before ``tomllib`` sees the
    text.  The count is an upper bound of the depth of the parsed data; syntax errors are left
    to ``tomllib``.
    """
    stack: list[tuple[str, int]] = []  # open arrays and inline tables, with the key parts before
    outer = 0  # the key parts before the open arrays and inline tables, in all
    header = 0  # the depth of the current [table] or [[array of tables]]
    header_parts = 0  # the levels so far of the header being read
    parts = 0  # the dots so far of the key being read
    expect_key, in_header = True, False
    pos = 0
    while (match := _TOML_TOKENS.search(text, pos)) is not None:
        token, pos = match.group(), match.end()
        if token in _TOML_STRING_ENDS:
            end = _TOML_STRING_ENDS[token].match(text, pos)
            if end is None:
                return None  # unterminated: tomllib says where
            pos = end.end()
            continue
        if token == "#":
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
        elif token == "\n":
            if not stack:
                expect_key, parts = True, 0
        elif token == "=":
            expect_key = False
        elif token == ".":
            parts += expect_key or in_header
            header_parts += in_header
        elif token == ",":
            if stack and stack[-1][0] == "{":
                expect_key, parts = True, 0
        elif token in "[{":
            if token == "[" and not stack and expect_key:
                in_header, header, header_parts = True, 0, 0
            header_parts += in_header
            stack.append((token, parts))
            outer, parts = outer + parts, 0
            expect_key = token == "{" or in_header
        elif stack:  # ] or }
            _, parts = stack.pop()
            outer -= parts
            expect_key = False
            if in_header and not stack:
                in_header, header, parts = False, header_parts, 0
        if 1 + header + len(stack) + outer + parts > limit:  # 1: the file's own table
            return text.count("\n", 0, match.start()) + 1
    return None


def _read_toml(path: Path, text: str) -> dict[str, Any]:
    line = _toml_too_deep(text)
    if line is not None:
        raise ClaimsFileError(str(path), line, "", "tables, arrays or dotted keys nested more "
                              f"than {MAX_DEPTH} levels deep (a claims file needs a few)")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ClaimsFileError(str(path), int(match.group(1)) if match else None, "TOML syntax",
                              str(exc)) from None
    except RecursionError:  # not reached after the scan above; kept as a guard
        raise ClaimsFileError(str(path), None, "", f"nested more than {MAX_DEPTH} levels "
                              "deep") from None


_DEEP = (f"lists and tables nested more than {MAX_DEPTH} levels deep, or holding themselves "
         "(a claims file needs a few)")


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests dicts, lists and tuples more than ``limit`` levels deep (or holds
    itself).  Level by level, without recursion; a container shared within a level is counted
    once."""
    level = [value]
    for _ in range(limit + 1):
        seen: set[int] = set()
        children: list[Any] = []
        for item in level:
            if id(item) in seen:
                continue
            seen.add(id(item))
            values = item.values() if isinstance(item, Mapping) else \
                item if isinstance(item, (list, tuple)) else ()
            children += [v for v in values if isinstance(v, (Mapping, list, tuple))]
        if not children:
            return False
        level = children
    return True


def _read_python(path: Path) -> dict[str, Any]:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    module_name = f"symq_claims_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ClaimsFileError(str(path), None, "", "cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ClaimsFileError(str(path), exc.lineno, "Python syntax", exc.msg) from None
    except Exception as exc:  # noqa: BLE001 - the user's file may raise anything; say where, in one line
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if Path(f.filename).resolve() == path.resolve()]
        line = frames[-1].lineno if frames else None
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        raise ClaimsFileError(str(path), line, "running the file", last) from None
    finally:
        sys.modules.pop(module_name, None)
    return {key.lower(): getattr(module, key) for key in ("PAPER", "CONSTANTS", "MODELS", "TEX",
                                                          "CLAIMS") if hasattr(module, key)}


def _citation(paper: Mapping[str, Any]) -> str:
    authors = paper.get("authors", "")
    if isinstance(authors, (list, tuple)):
        authors = ", ".join(str(a) for a in authors)
    parts = [str(authors), str(paper.get("venue", "")), str(paper.get("year", ""))]
    for key, label in (("doi", "doi:"), ("arxiv", "arXiv ")):
        if paper.get(key):
            parts.append(f"{label}{paper[key]}")
    if paper.get("url"):
        parts.append(str(paper["url"]))
    return ", ".join(p for p in parts if p)


def _paper_table(path: Path, data: Mapping[str, Any], lines: _Lines) -> dict[str, Any]:
    paper = data.get("paper")
    line = lines.table("paper")
    if not isinstance(paper, Mapping):
        raise ClaimsFileError(str(path), line, "paper", "the file must declare its paper: "
                              "[paper] with title (and authors, year, doi or arxiv)")
    unknown = [k for k in paper if k not in PAPER_KEYS]
    if unknown:
        raise ClaimsFileError(str(path), line, "paper", f"unknown key {unknown[0]!r}; keys: "
                              + ", ".join(PAPER_KEYS))
    if not isinstance(paper.get("title"), str) or not paper["title"].strip():
        raise ClaimsFileError(str(path), line, "paper", "title must be a non-empty string")
    key = paper.get("key", path.stem.replace("_", "-"))
    if not isinstance(key, str) or not re.match(r"^[A-Za-z0-9][\w.\-]*$", key):
        raise ClaimsFileError(str(path), line, "paper", f"key {key!r} must be letters, digits, "
                              "-, _ or .")
    return {**paper, "key": key}


def load_claims_file(path: str | Path) -> LoadedFile:
    """Read a claims file.

    Raises
    ------
    ClaimsFileError
        For a file that cannot be used at all (missing, unreadable, a syntax error, no
        ``[paper]``, a bad model declaration).  The errors of single claims are collected in
        :attr:`LoadedFile.errors` instead, so that the other claims still run.
    """
    path = Path(path)
    if not path.is_file():
        raise ClaimsFileError(str(path), None, "", "no such claims file")
    if path.suffix not in SUFFIXES:
        raise ClaimsFileError(str(path), None, "", "a claims file ends in .toml or .py")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaimsFileError(str(path), None, "", f"cannot be read: {exc}") from None
    toml = path.suffix == ".toml"
    lines = _Lines(text, toml)
    data = _read_toml(path, text) if toml else _read_python(path)
    if toml:
        unknown = [k for k in data if k not in _TOP_KEYS]
        if unknown:
            raise ClaimsFileError(str(path), lines.table(unknown[0]), unknown[0],
                                  "unknown table; a claims file has " + ", ".join(_TOP_KEYS))
    for key in ("paper", "constants", "models", "tex"):  # the claims: one by one below
        if key in data and _too_deep(data[key], MAX_DEPTH - 1):
            raise ClaimsFileError(str(path), lines.table(key), key if toml else key.upper(),
                                  _DEEP)
    paper = _paper_table(path, data, lines)
    context = FileContext(str(path))
    try:
        context.tex_symbols = file_symbols(data.get("tex"))
    except SymqError as exc:
        raise ClaimsFileError(str(path), lines.table("tex"), "tex" if toml else "TEX",
                              str(exc)) from None
    models = data.get("models") or {}
    if not isinstance(models, Mapping):
        raise ClaimsFileError(str(path), lines.table("models"), "models",
                              "a table of [models.NAME] tables")
    for name, table in models.items():
        if isinstance(table, ModelSpec):  # a Python file may give a model object directly
            context.models[str(name)] = dataclasses.replace(table, source=f"file {path}")
            continue
        try:
            context.models[str(name)] = declare_model(str(path), str(name), table)
        except SymqError as exc:
            raise ClaimsFileError(str(path), lines.table(f"models.{name}"), f"model {name}",
                                  str(exc)) from None
    try:
        constants = parse_quantities("constants", data.get("constants"), (), context, {},
                                     allow_references=False)
    except SymqError as exc:
        raise ClaimsFileError(str(path), lines.table("constants"), "constants",
                              str(exc)) from None
    entries = data.get("claims") or []
    if not isinstance(entries, (list, tuple)):
        raise ClaimsFileError(str(path), lines.table("claims"), "claims",
                              "a list of claims ([[claims]] tables)")
    loaded = LoadedFile(path, None, context.models)  # type: ignore[arg-type]
    names: set[str] = set()
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else getattr(entry, "name", "")
        what = f"claim {name!r}" if isinstance(name, str) and name else f"claims[{i}]"
        line = lines.claim(i, name)
        if _too_deep(entry, MAX_DEPTH - 2):  # before anything walks it or prints it
            loaded.errors.append(ClaimsFileError(str(path), line, f"claims[{i}]", _DEEP))
            continue
        try:
            if isinstance(entry, Claim):
                claim = entry
            else:
                claim = build_claim(f"claims[{i}]", entry, context, constants)
            if claim.name in names:
                raise InvalidParameter(f"claims[{i}].name", claim.name, "a name unique in "
                                       "the file", "repeated")
            names.add(claim.name)
            if isinstance(claim, FileClaim):
                claim.location = f"{path}:{line}" if line else str(path)
            loaded.claims.append(claim)
        except SymqError as exc:
            message = str(exc)
            if isinstance(exc, InvalidParameter):  # the line of the key itself, if found
                following = entries[i + 1] if i + 1 < len(entries) else None
                end = lines.claim(i + 1, following.get("name")) \
                    if isinstance(following, Mapping) else None
                at = lines.key(line, end if end and line and end > line else None,
                               exc.name, exc.value)
                if at and at != line:
                    message += f" [line {at}]"
            loaded.errors.append(ClaimsFileError(str(path), line, what, message))
    if not entries:
        loaded.errors.append(ClaimsFileError(str(path), lines.table("claims"), "claims",
                                             "the file has no claims"))
    claims = loaded.claims
    loaded.paper = PaperSpec(
        key=paper["key"], title=paper["title"], citation=_citation(paper),
        claims=lambda quick=False: list(claims), derivation=lambda: _derivation(loaded, paper),
        models=tuple(context.models), source=f"file {path}")
    return loaded


def _derivation(loaded: LoadedFile, paper: Mapping[str, Any]) -> Derivation:
    """What ``symq derive FILE`` prints: the declared models' derivations and the claims."""
    out = Derivation(title=paper["title"], source=_citation(paper),
                     summary=f"Claims file {loaded.path}.")
    for name, model in loaded.models.items():
        out.section(f"Model {name}: {model.summary}")
        if model.derivation is None:
            out.add(f"{name}", [], "This kind of model has no symbolic derivation.")
            continue
        derived = model.derivation()
        for step in derived:
            out.add(step.title, step.content, step.prose)
    out.section("Claims")
    for claim in loaded.claims:
        if isinstance(claim, FileClaim) and claim.relation is not None:
            out.add(claim.name, _relation_formula(claim), "; ".join(
                t for t in (claim.source, claim.proof) if t))
        else:
            out.add(claim.name, [], str(claim.statement))
    return out


def _relation_formula(claim: FileClaim) -> Any:
    """The claim's relation as a sympy object (a limit as ``Eq(Limit(lhs, p, p0), rhs)``)."""
    r = claim.relation
    assert r is not None
    relations = {"==": sp.Eq, "<=": sp.Le, ">=": sp.Ge, "<": sp.Lt, ">": sp.Gt}
    if r.op in relations:
        return relations[r.op](r.lhs, r.rhs, evaluate=False)
    (name, target), = claim.limit.items()
    symbol = next((s for s in r.lhs.free_symbols if s.name == name), sp.Symbol(name))
    return sp.Eq(sp.Limit(r.lhs, symbol, sp.nsimplify(target)), r.rhs, evaluate=False)
