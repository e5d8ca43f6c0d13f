r"""How symq writes mathematics: :func:`sympy.latex` with the names mathematicians use.

One printer for every formula symq shows (derivations, the rich display of results and models):

* symbols named in :data:`SYMBOL_NAMES` print as the letter they stand for (``lam`` as
  :math:`\lambda`; sympy already writes ``rho``, ``mu``, ``beta``, ... as Greek letters), also with
  subscripts (``lam_1`` as :math:`\lambda_1`);
* an undefined function applied to one integer argument is a sequence and prints with a
  subscript: ``u(k)`` as :math:`u_k`, ``u(k + 1)**d`` as :math:`u_{k+1}^d` (a function of a real
  variable such as ``a(w)`` keeps its parentheses);
* with ``digits``, numbers are shortened for reading: a rational whose numerator or denominator
  has more than ``digits`` digits (the exact rationals of a fit from decimal data) and every float
  are shown as decimals with ``digits`` significant digits; small rationals such as ``3/2`` stay
  exact.  The expression itself is not changed.

The printer settings are passed per call; sympy's global printing state is never touched.

Examples
--------
>>> import sympy as sp
>>> lam, k = sp.Symbol("lam", positive=True), sp.Symbol("k", integer=True)
>>> u = sp.Function("u")
>>> latex(lam * u(k + 1) ** 2)
'\\lambda u_{k + 1}^{2}'
>>> latex(sp.Rational(3, 2) * k + sp.Rational(10**40 + 1, 7 * 10**39), digits=6)
'\\frac{3 k}{2} + 1.42857'
>>> text(sp.Rational(10**40 + 1, 7 * 10**39) * sp.Symbol("s"))
'1.42857*s'
"""

from __future__ import annotations

import html
import re
from typing import Any

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

__all__ = ["SYMBOL_NAMES", "DIGITS", "SymqLatexPrinter", "latex", "text", "shorten_numbers",
           "math_to_mathml", "markdown_to_html",
           "is_long_rational"]

#: Symbol names (the base, before any subscript) printed as another LaTeX name.
SYMBOL_NAMES: dict[str, str] = {"lam": r"\lambda", "Lam": r"\Lambda", "lamda": r"\lambda"}

#: Significant digits of the numbers shown by the rich displays.
DIGITS = 6


class SymqLatexPrinter(LatexPrinter):
    r"""sympy's LaTeX printer with symq's names: :data:`SYMBOL_NAMES`, ``u(k)`` as ``u_{k}``.

    Examples
    --------
    >>> import sympy as sp
    >>> SymqLatexPrinter().doprint(sp.Symbol("lam_2"))
    '\\lambda_{2}'
    """

    def _split_super_sub(self, name: str) -> tuple[str, list[str], list[str]]:
        base, supers, subs = super()._split_super_sub(name)
        return SYMBOL_NAMES.get(base, base), supers, subs

    def _print_Function(self, expr: Any, exp: str | None = None) -> str:
        if isinstance(expr, AppliedUndef) and len(expr.args) == 1 and expr.args[0].is_integer:
            name = expr.func.__name__
            if "_" not in name:
                body = f"{self._hprint_Function(name)}_{{{self._print(expr.args[0])}}}"
                if exp is None:
                    return body
                return f"{{{body}}}^{{{exp}}}" if "^" in name else f"{body}^{{{exp}}}"
        return super()._print_Function(expr, exp)


def is_long_rational(value: Any, digits: int = DIGITS) -> bool:
    """Whether ``value`` is a sympy rational with more than ``digits`` digits above or below."""
    if not isinstance(value, sp.Rational):
        return False
    bound = 10 ** digits
    return abs(value.p) >= bound or value.q >= bound


def shorten_numbers(expr: Any, digits: int = DIGITS) -> Any:
    """``expr`` with its long rationals (see :func:`is_long_rational`) and floats replaced by
    floats of ``digits`` significant digits, for display only."""
    if not isinstance(expr, (sp.Basic, sp.MatrixBase)):
        return expr
    atoms = expr.atoms(sp.Rational, sp.Float)
    swap = {a: sp.Float(a, digits) for a in atoms
            if isinstance(a, sp.Float) or is_long_rational(a, digits)}
    return expr.xreplace(swap) if swap else expr


def latex(expr: Any, digits: int | None = None, **settings: Any) -> str:
    r"""``expr`` in LaTeX by :class:`SymqLatexPrinter` (settings as for :func:`sympy.latex`).

    Parameters
    ----------
    expr : sympy object
        What to print (strings are returned unchanged: already LaTeX).
    digits : int, optional
        Shorten numbers to this many significant digits (:func:`shorten_numbers`); exact by
        default.
    **settings
        Any setting of :func:`sympy.latex` (``symbol_names``, ``mode``, ...), for this call only.
    """
    if isinstance(expr, str):
        return expr
    if digits is not None:
        expr = shorten_numbers(expr, digits)
    return SymqLatexPrinter(settings).doprint(expr)


def text(expr: Any, digits: int = DIGITS) -> str:
    """``expr`` as plain text (:func:`sympy.sstr`), numbers shortened to ``digits`` digits."""
    if not isinstance(expr, (sp.Basic, sp.MatrixBase)):
        return str(expr)
    return StrPrinter({"full_prec": False}).doprint(shorten_numbers(expr, digits))


# ------------------------------------------------------------------ Markdown and MathML
def math_to_mathml(tex: str, display: bool) -> str:
    """LaTeX (as :func:`sympy.latex` writes it) to a MathML element; if the converter cannot
    read it, the TeX itself in a ``code`` element, so that nothing is dropped."""
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - the converter's own exceptions have no common base class
        escaped = html.escape(tex.strip())
        return f'<code class="tex">{escaped}</code>' if not display else \
            f'<pre class="tex">{escaped}</pre>'


_INLINE = re.compile(r"\$\$([^$]+)\$\$|\$([^$\n]+)\$|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|`([^`]+)`")


def _inline(text: str) -> str:
    """Escape a paragraph, converting inline math, strong, emphasis and code."""
    out, last = [], 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[last:match.start()]))
        display, tex, strong, em, code = match.groups()
        if display is not None:
            out.append(math_to_mathml(display, display=True))
        elif tex is not None:
            out.append(math_to_mathml(tex, display=False))
        elif strong is not None:
            out.append(f"<strong>{html.escape(strong)}</strong>")
        elif em is not None:
            out.append(f"<em>{html.escape(em)}</em>")
        else:
            out.append(f"<code>{html.escape(code)}</code>")
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` is a pipe inside a cell)."""
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def _table(rows: list[str]) -> str:
    """A Markdown table (header, rule, rows) as an HTML table, cells converted inline."""
    head, *body = [_cells(r) for r in rows if not re.fullmatch(r"\|?[\s:|-]+\|?", r.strip())]
    out = ['<table class="symq">', "<thead><tr>"
           + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead>", "<tbody>"]
    out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in body]
    return "\n".join(out + ["</tbody></table>"])


def markdown_to_html(markdown: str, shift: int = 0) -> str:
    """The Markdown subset that symq writes (:meth:`Derivation.to_markdown`, the rich displays
    of :class:`~symq.core.display.MarkdownDisplay`), as HTML with MathML formulas.

    Parameters
    ----------
    markdown : str
        Headings (``#`` to ``######``), paragraphs, ``$$``-delimited display math, tables
        (``| a | b |`` rows under a ``|---|`` rule) and bullet lists (lines that start with
        a dash and a space).
    shift : int
        Added to every heading level (a derivation's ``#`` title becomes ``h3`` with 2).
    """
    parts: list[str] = []
    lines = markdown.splitlines()
    i = 0
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            parts.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    while i < len(lines):
        line = lines[i].rstrip()
        heading = re.match(r"(#{1,6}) (.*)", line)
        one_line = line.strip()
        if len(one_line) > 4 and one_line.startswith("$$") and one_line.endswith("$$"):
            flush()                           # $$ ... $$ on one line: a display formula
            parts.append(f'<div class="math">{math_to_mathml(one_line[2:-2], display=True)}'
                         "</div>")
            i += 1
            continue
        if line.strip() == "$$":
            flush()
            end = i + 1
            while end < len(lines) and lines[end].strip() != "$$":
                end += 1
            formula = math_to_mathml("\n".join(lines[i + 1:end]), display=True)
            parts.append(f'<div class="math">{formula}</div>')
            i = end + 1
            continue
        if line.lstrip().startswith("|"):
            flush()
            end = i
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            parts.append(_table(lines[i:end]))
            i = end
            continue
        if line.startswith("- "):
            flush()
            end = i
            while end < len(lines) and lines[end].startswith("- "):
                end += 1
            parts.append("<ul>" + "".join(f"<li>{_inline(item[2:].strip())}</li>"
                                          for item in lines[i:end]) + "</ul>")
            i = end
            continue
        if heading:
            flush()
            level = min(6, len(heading.group(1)) + shift)
            parts.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif not line.strip():
            flush()
        else:
            paragraph.append(line.strip())
        i += 1
    flush()
    return "\n".join(parts)
