r"""The tokens of a TeX formula: the lexer of :mod:`symq.core.formula_tex`.

:func:`tokenize` splits TeX into numbers, letters, commands (``\\frac``) and symbols, drops
spacing (``\\, \\; \\quad``), sizes (``\\left``, ``\\big``) and one pair of ``$``
delimiters around the formula, reads aliases (``\\{`` as a parenthesis, ``\\lvert`` as ``|``,
the Unicode minus) and wraps a one-token sub- or superscript in braces (``x_1`` as ``x_{1}``:
TeX reads one token there).  The length (:data:`MAX_TEX_LENGTH`) and the nesting depth
(:data:`MAX_TEX_DEPTH`) of the text are checked here, before anything is parsed.  A symbol
map (``{ '\\lambda' = 'lam' }``) is checked by :func:`check_symbol_map`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from .errors import InvalidParameter
from .formula import MAX_LENGTH

__all__ = ["TexFormulaError", "Token", "tokenize", "fail", "check_symbol_map",
           "compiled_symbols", "tex_has_relation", "tex_shown", "MAX_TEX_LENGTH",
           "MAX_TEX_DEPTH", "MAX_SYMBOLS", "TEX_DOMAIN", "GREEK", "RELATIONS", "OPEN", "HINTS",
           "TEXT"]

#: Longest TeX formula accepted, in characters.
MAX_TEX_LENGTH = MAX_LENGTH
#: Deepest nesting of groups, arguments and signs accepted.
MAX_TEX_DEPTH = 40
#: Most entries of a symbol map.
MAX_SYMBOLS = 200
#: What a TeX formula may contain (named in error messages).
TEX_DOMAIN = (r"a formula in LaTeX: numbers, symbols (x, x_{1}, \lambda), + - \cdot \times / ^, "
              r"\frac, \sqrt, \binom, n!, |x|, \exp \log \ln \sin \cos \tan \min \max "
              r"\operatorname{NAME}, \sum_{k=a}^{b}, \int_{a}^{b} ... dx (see 'Formulas in "
              r"LaTeX' in the claims reference)")

GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu "
         "nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma "
         "Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell").split()
TEXT = {"mathrm", "text", "textrm", "mathit", "operatorname", "mathbf", "mathbb", "mathcal",
        "mathsf", "boldsymbol", "textit"}
_IGNORED = {",", ";", ":", "!", " ", "quad", "qquad", "left", "right", "displaystyle",
            "textstyle", "limits", "nolimits", "big", "Big", "bigg", "Bigg", "bigl", "bigr",
            "Bigl", "Bigr", "biggl", "biggr", "Biggl", "Biggr"}
RELATIONS = {"=": "==", "<": "<", ">": ">", r"\le": "<=", r"\leq": "<=", r"\leqslant": "<=",
             r"\ge": ">=", r"\geq": ">=", r"\geqslant": ">=", r"\lt": "<", r"\gt": ">",
             r"\to": "->", r"\rightarrow": "->", r"\longrightarrow": "->"}
_ALIASES = {r"\{": "(", r"\}": ")", r"\lbrace": "(", r"\rbrace": ")", r"\lvert": "|",
            r"\rvert": "|", r"\vert": "|", r"\lbrack": "[", r"\rbrack": "]", "~": None,
            "\u2212": "-", "\u00b7": r"\cdot", "\u00d7": r"\times", "\u2264": r"\le",
            "\u2265": r"\ge"}
OPEN = {"(": ")", "[": "]", "{": "}"}
HINTS = {r"\prod": "products are not in the formula grammar: write the product in closed form",
         r"\ne": "!= is not a claim symq can check", r"\neq": "!= is not a claim symq can check",
         r"\approx": "state = with a tolerance instead", r"\sim": "state = with a tolerance "
         "instead", r"\cdots": "write the sum with \\sum", r"\ldots": "write the sum with \\sum",
         r"\lim": "write the limit as a statement lhs \\to rhs with the claim's limit key",
         "&": "one formula, not an aligned environment", r"\\": "one line, not several",
         r"\infty": "\\infty is allowed only as a bound of \\sum or \\int",
         "$": "write the formula without $ inside it"}


class TexFormulaError(InvalidParameter):
    """A TeX formula of a claims file outside the grammar of :mod:`symq.core.formula_tex`: the
    message names the key, the token and its position, and what is accepted."""


@dataclass(frozen=True)
class Token:
    kind: str  # num, letter, cmd, sym, end
    text: str
    pos: int   # 0-based offset in the text as typed

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.text


def fail(name: str, text: str, token: Token, message: str, domain: str = TEX_DOMAIN
          ) -> NoReturn:
    """Raise :class:`TexFormulaError`: ``message``, the token and its position (1-based)."""
    shown = "the end of the formula" if token.kind == "end" else f"'{token.text}'"
    hint = f" ({HINTS[token.text]})" if token.text in HINTS else ""
    raise TexFormulaError(name, text, domain, f"at character {token.pos + 1}, {shown}: "
                          f"{message}{hint}")


def tokenize(name: str, text: str) -> list[Token]:
    """The tokens of ``text`` (spacing dropped, aliases resolved, single-token sub- and
    superscripts wrapped in braces), with a final ``end`` token; depth checked."""
    if not isinstance(text, str):
        raise TexFormulaError(name, text, TEX_DOMAIN, "not a string")
    if len(text) > MAX_TEX_LENGTH:
        raise TexFormulaError(name, text[:60] + f"... ({len(text)} characters)", TEX_DOMAIN,
                              f"longer than {MAX_TEX_LENGTH} characters")
    start, end = 0, len(text)
    stripped = text.strip()
    for left, right in (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]")):
        if len(stripped) > len(left) + len(right) and stripped.startswith(left) \
                and stripped.endswith(right):
            start = text.index(left) + len(left)
            end = text.rindex(right)
            break
    raw: list[Token] = []
    i = start
    while i < end:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c == "\\":
            match = re.match(r"\\([A-Za-z]+|.)", text[i:end])
            word = match.group(1) if match else ""
            if not word:
                fail(name, text, Token("sym", "\\", i), "a lone backslash")
            token = Token("cmd", "\\" + word, i)
            i += 1 + len(word)
            if word in _IGNORED:
                continue
        elif c.isdigit():
            match = re.match(r"\d+(?:\.\d+)?", text[i:end])
            assert match is not None
            if raw and raw[-1].text in ("^", "_") and len(match.group()) > 1:
                fail(name, text, Token("num", match.group(), i), "TeX reads one digit here: "
                     f"write {raw[-1].text}{{{match.group()}}}")
            token = Token("num", match.group(), i)
            i += len(match.group())
        elif c.isascii() and c.isalpha():
            token = Token("letter", c, i)
            i += 1
        elif c in "+-*/^_()[]{}|,=<>!'":
            token = Token("sym", c, i)
            i += 1
        elif c in _ALIASES:
            token = Token("sym", c, i)
            i += 1
        else:
            hint = " (write greek letters as \\lambda, \\mu, ...)" if c.isalpha() else ""
            fail(name, text, Token("sym", c, i), "a character outside the grammar" + hint)
        if token.text in _ALIASES:
            alias = _ALIASES[token.text]
            if alias is None:
                continue
            token = Token("cmd" if alias.startswith("\\") else "sym", alias, token.pos)
        raw.append(token)
    tokens = _wrap_scripts(name, text, raw)
    depth = 0
    for token in tokens:
        if token.text in OPEN:
            depth += 1
            if depth > MAX_TEX_DEPTH:
                fail(name, text, token, f"groups nested deeper than {MAX_TEX_DEPTH} levels")
        elif token.text in OPEN.values():
            depth -= 1
    return [*tokens, Token("end", "", end)]


def _wrap_scripts(name: str, text: str, raw: list[Token]) -> list[Token]:
    """``x_1`` and ``e^\\lambda`` as ``x_{1}`` and ``e^{\\lambda}`` (TeX reads one token)."""
    out: list[Token] = []
    i = 0
    while i < len(raw):
        token = raw[i]
        out.append(token)
        i += 1
        if token.text not in ("^", "_") or token.kind != "sym" or i >= len(raw) \
                or raw[i].text == "{":
            continue
        unit = [raw[i]]
        if raw[i].text[1:] in TEXT and i + 1 < len(raw) and raw[i + 1].text == "{":
            close = next((j for j in range(i + 1, len(raw)) if raw[j].text == "}"), None)
            if close is None:
                fail(name, text, raw[i], "an unclosed argument")
            unit = raw[i:close + 1]
        elif raw[i].kind == "sym" and raw[i].text not in ("'",):
            fail(name, text, raw[i], f"write {token.text}{{...}} with braces here")
        out += [Token("sym", "{", unit[0].pos), *unit, Token("sym", "}", unit[-1].pos)]
        i += len(unit)
    return out


def check_symbol_map(where: str, table: Any) -> dict[str, str]:
    r"""Check a symbol map ``{ TeX = name }`` (``{ '\lambda' = 'lam', 'E[T]' = 'ET' }``).

    Parameters
    ----------
    where : str
        Its key as typed (``tex.symbols``), named in errors.
    table : mapping
        TeX snippets (each tokenized like a formula) to names (identifiers).

    Returns
    -------
    dict
        The map as given.

    Raises
    ------
    InvalidParameter
        A table that is not a map of strings, a key that is not TeX this module reads, or a
        value that is not a name.
    """
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table { '\\lambda' = 'lam', ... } of TeX "
                               "symbols and the names they stand for")
    if len(table) > MAX_SYMBOLS:
        raise InvalidParameter(where, f"<{len(table)} entries>", f"at most {MAX_SYMBOLS} "
                               "entries")
    for key, value in table.items():
        if not isinstance(key, str) or not key.strip() or len(key) > 100:
            raise InvalidParameter(f"{where}.{key!r}", key, "a TeX symbol of 1 to 100 "
                                   "characters")
        if not isinstance(value, str) or not value.isidentifier():
            raise InvalidParameter(f"{where}.{key!r}", value, "a name (a region parameter, a "
                                   "let quantity or a constant), e.g. 'lam'")
        tokenize(f"{where}.{key!r}", key)
    return dict(table)


def compiled_symbols(name: str, symbols: Mapping[str, str] | None
                     ) -> list[tuple[tuple[Any, ...], str]]:
    """The symbol map as token sequences, longest first."""
    out = []
    for key, value in (symbols or {}).items():
        seq = tuple(t.key for t in tokenize(f"{name} (symbol {key!r})", key)[:-1])
        out.append((seq, value))
    return sorted(out, key=lambda kv: -len(kv[0]))



def tex_has_relation(name: str, text: str) -> bool:
    r"""Whether the TeX ``text`` holds a relation (``=``, ``\le``, ...) outside any group:
    a statement, not a formula (:class:`TexFormulaError` for text that does not tokenize)."""
    depth = 0
    for token in tokenize(name, text):
        depth += (token.text in OPEN) - (token.text in OPEN.values())
        if depth == 0 and token.text in RELATIONS and token.kind in ("sym", "cmd"):
            return True
    return False


def tex_shown(text: str) -> str:
    """The TeX as printed back in verdicts and reports: between ``$`` signs (a ``$`` pair the
    user wrote is not doubled)."""
    body = text.strip()
    for left, right in (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]")):
        if len(body) > len(left) + len(right) and body.startswith(left) and body.endswith(right):
            body = body[len(left):-len(right)].strip()
            break
    return f"${' '.join(body.split())}$"
