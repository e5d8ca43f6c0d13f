"""Loading claims files: TOML (declarative, never runs code) and Python (a program you trust).

:func:`load_claims_file` reads one file into a :class:`LoadedFile`: a
:class:`~symq.core.registry.PaperSpec` whose claims ``symq check`` runs like a built-in paper's,
the models the file declares, and the errors of the claims that could not be built (each names
the file, the line and the claim; the other claims still run).  :func:`claims_files` lists the
claims files of a folder.

A TOML file has the tables ``[paper]``, ``[constants]``, ``[models.NAME]`` and ``[[claims]]``
(see ``symq new-claims`` and the README section "Check a formula from your own paper").  Every
formula in it is parsed into a whitelisted syntax tree; nothing in a TOML file is executed, so it
is safe to check a file received from someone else.

A Python file defines the same things as module attributes ``PAPER`` (dict), ``CONSTANTS``
(dict), ``MODELS`` (dict name -> table, or name -> :class:`~symq.core.registry.ModelSpec` for a
model built in Python) and ``CLAIMS`` (a list of tables, or of
:class:`~symq.core.claims.Claim` objects), and may use Python functions where a TOML file writes
formulas.  Checking a Python claims file runs it, like running a script: check only files you
trust.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import re
import sys
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import sympy as sp

from ..claims import Claim
from ..derivation import Derivation
from ..errors import InvalidParameter, SymqError
from ..registry import ModelSpec, PaperSpec
from .claim import FileClaim, build_claim, parse_quantities
from .declarations import declare_model
from .quantities import FileContext

__all__ = ["ClaimsFileError", "LoadedFile", "load_claims_file", "claims_files", "is_claims_path",
           "PAPER_KEYS", "SUFFIXES"]

SUFFIXES = (".toml", ".py")
PAPER_KEYS = ("key", "title", "authors", "year", "venue", "doi", "arxiv", "url", "notes")
_TOP_KEYS = ("paper", "constants", "models", "claims")


class ClaimsFileError(SymqError):
    """A claims file (or one claim of it) cannot be used: ``path:line: what: why``."""

    def __init__(self, path: str, line: int | None, what: str, message: str) -> None:
        self.path, self.line, self.what = path, line, what
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {what}: {message}" if what else f"{where}: {message}")


@dataclass
class LoadedFile:
    """A claims file read into a paper, its declared models and the errors of its claims."""

    path: Path
    paper: PaperSpec
    models: dict[str, ModelSpec] = field(default_factory=dict)
    errors: list[ClaimsFileError] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)


def is_claims_path(text: str) -> bool:
    """Whether a ``symq check`` argument names a file or folder rather than a paper key."""
    path = Path(text)
    return path.exists() or text.endswith(SUFFIXES) or "/" in text or "\\" in text


def _defines_claims(path: Path) -> bool:
    """Whether a Python file's text assigns ``CLAIMS`` at top level (read, never run)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"(?m)^CLAIMS\s*(:[^=]*)?=", text) is not None


def claims_files(path: Path) -> list[Path]:
    """The claims files of ``path``: itself if a file; in a folder, recursively, every
    ``*.toml`` and every ``*.py`` that assigns ``CLAIMS`` at top level (so that checking a
    folder of scripts does not run them), skipping names that start with ``_`` or ``.``."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                  and not any(part.startswith(("_", ".")) for part in p.relative_to(path).parts)
                  and (p.suffix == ".toml" or _defines_claims(p)))


# ----------------------------------------------------------------------------- line numbers

class _Lines:
    """Finds the line of a table or a claim in the file's text (for error messages)."""

    def __init__(self, text: str, toml: bool) -> None:
        self.lines = text.splitlines()
        self.toml = toml

    def find(self, pattern: str, occurrence: int = 0) -> int | None:
        regex = re.compile(pattern)
        seen = 0
        for number, line in enumerate(self.lines, 1):
            if regex.search(line):
                if seen == occurrence:
                    return number
                seen += 1
        return None

    def claim(self, index: int, name: Any) -> int | None:
        """The line of the claim's own table, else of the claims list that holds it."""
        if self.toml:
            own = self.find(r"^\s*\[\[\s*claims\s*\]\]", index)
            if own is None and isinstance(name, str) and name:
                own = self.find(re.escape(f'"{name}"'))
            return own or self.find(r"^\s*claims\s*=")
        if isinstance(name, str) and name:
            own = self.find(re.escape(repr(name))) or self.find(re.escape(f'"{name}"'))
            if own:
                return own
        return self.find(r"^\s*CLAIMS\b")

    def table(self, name: str) -> int | None:
        if self.toml:
            return self.find(rf"^\s*\[\s*{re.escape(name)}\s*\]") or \
                self.find(rf"^\s*{re.escape(name.split('.')[0])}\b")
        top = name.split(".")[0].upper()
        return self.find(rf"^\s*{top}\b")


# ----------------------------------------------------------------------------- reading

def _read_toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ClaimsFileError(str(path), int(match.group(1)) if match else None, "TOML syntax",
                              str(exc)) from None


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
    except Exception as exc:  # the file's own code failed: say where, in one line
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if Path(f.filename).resolve() == path.resolve()]
        line = frames[-1].lineno if frames else None
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        raise ClaimsFileError(str(path), line, "running the file", last) from None
    finally:
        sys.modules.pop(module_name, None)
    return {key.lower(): getattr(module, key) for key in ("PAPER", "CONSTANTS", "MODELS", "CLAIMS")
            if hasattr(module, key)}


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
    paper = _paper_table(path, data, lines)
    context = FileContext(str(path))
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
        what = f"claim {name!r}" if name else f"claims[{i}]"
        line = lines.claim(i, name)
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
            loaded.errors.append(ClaimsFileError(str(path), line, what, str(exc)))
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
