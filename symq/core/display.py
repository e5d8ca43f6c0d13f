"""Rich (Markdown) display for Jupyter: the type-free text helpers and the display mixin.

Each type of symq renders itself (its ``to_markdown()``, beside the type: a result in
:mod:`symq.core.result`, a claim and a verdict in :mod:`symq.core.claims`, a confidence interval
in :mod:`symq.core.simstats`, a sweep in :mod:`symq.core.sweep_result`, a law in
:mod:`symq.laws`, ...) from the helpers of this module, which know no symq type:

* :class:`MarkdownDisplay`: the mixin that gives a type Jupyter's ``_repr_markdown_`` from its
  ``to_markdown()``, and ``_repr_html_`` from that (:func:`html_display`: the Markdown as HTML,
  formulas as MathML);
* :func:`markdown`: the common layout (a bold title, a two-column table, formulas in LaTeX below);
* :func:`cell`, :func:`number_text`, :func:`array_text`, :func:`with_error`, :func:`short_text`:
  one value as one table cell; :func:`formula_line`, :func:`doc_title`.

Numbers are rounded for reading (:data:`~symq.core.printing.DIGITS` = 6 significant digits; long
exact rationals too, small ones such as 3/2 stay exact; the exact values stay on the objects and
in ``to_dict()``), long values are shortened, ``|`` is escaped so that table cells stay cells, and
formulas are written by :func:`symq.core.printing.latex` (sympy's LaTeX with ``lam`` as
:math:`\\lambda`, ``u(k)`` as :math:`u_k`).

Examples
--------
>>> print(markdown("M/M/1", [("ET", 1 / (1 - 0.3)), ("rho", 0.3)]))
**M/M/1**
<BLANKLINE>
| quantity | value |
|---|---|
| `ET` | 1.42857 |
| `rho` | 0.3 |
>>> class Point(MarkdownDisplay):
...     def to_markdown(self) -> str:
...         return markdown("Point", [("x", 2 / 3)])
>>> print(Point()._repr_markdown_())
**Point**
<BLANKLINE>
| quantity | value |
|---|---|
| `x` | 0.666667 |
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from .printing import DIGITS, is_long_rational, latex

__all__ = [
    "MarkdownDisplay",
    "array_text",
    "cell",
    "doc_title",
    "formula_line",
    "html_display",
    "is_formula",
    "markdown",
    "number_text",
    "parameters_table",
    "short_text",
    "with_error",
]


class MarkdownDisplay:
    """Mixin: Jupyter's rich display of a type from its own ``to_markdown()``.

    A type renders itself beside its definition (with :func:`markdown` and :func:`cell`); the
    mixin gives ``_repr_markdown_``, which Jupyter calls.  Subclasses define :meth:`to_markdown`
    (the default shows only the name and ``repr``).
    """

    __slots__ = ()

    def to_markdown(self) -> str:
        """This object as Markdown (a bold title line, a table, formulas in LaTeX).

        The default is the type's name in bold over its ``repr`` (a type shows its values by
        defining its own ``to_markdown``)."""
        return markdown(f"**{type(self).__name__}**", [("repr", repr(self))])

    def _repr_markdown_(self) -> str:  # Jupyter
        return self.to_markdown()

    def _repr_html_(self) -> str:  # Jupyter, and the docs' notebooks: no TeX left to render
        """The Markdown display as HTML, formulas as MathML (latex2mathml, the converter of
        the HTML report): it renders where Markdown math does not (no MathJax, no network)."""
        return html_display(self._repr_markdown_())


def html_display(text: str) -> str:
    """Jupyter's HTML display of a type from its Markdown (or a ``$...$`` LaTeX display).

    The text is converted by :func:`symq.core.printing.markdown_to_html` (tables as HTML tables,
    formulas as MathML) inside a ``<div class="symq-display">``; :class:`MarkdownDisplay` gives
    every type that uses it this ``_repr_html_``, and a type with only a LaTeX display
    (``_repr_latex_``) calls it on that.

    Examples
    --------
    >>> html_display("**x** is $x^{2}$").startswith('<div class="symq-display"><p><strong>x')
    True
    """
    from .printing import markdown_to_html

    return f'<div class="symq-display">{markdown_to_html(text)}</div>'


#: Longest text shown in one table cell.
CELL = 160


def number_text(value: Any, digits: int = DIGITS) -> str:
    """A number for reading: floats (numpy, mpmath, long sympy rationals) to ``digits``
    significant digits, integers and small exact rationals (``3/2``) as they are."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}g}"
    if isinstance(value, (complex, np.complexfloating)):
        z = complex(value)
        if z.imag == 0 or math.isnan(z.imag):
            return f"{z.real:.{digits}g}"
        return f"{z.real:.{digits}g}{z.imag:+.{digits}g}i"
    if isinstance(value, sp.Rational) and not is_long_rational(value, digits):
        return str(value)
    if _is_number(value):
        try:
            z = complex(value)
        except (TypeError, ValueError):
            return str(value)
        return number_text(z.real if z.imag == 0 else z, digits)
    return str(value)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float, complex, np.number)) and not isinstance(value, bool)) \
        or (isinstance(value, sp.Basic) and value.is_number) \
        or type(value).__module__.startswith("mpmath")


#: Entries of a long vector shown (the first ones and the last).
SHOWN = 6
#: Longest LaTeX of an exact number (``2 - \\sqrt{2}``) shown next to its decimal value.
SHORT_LATEX = 40


def array_text(values: Any, digits: int = DIGITS) -> str:
    """A vector or matrix in a few characters: all entries of a short vector, the first and the
    last of a long one, the shape and range of a matrix."""
    array = np.asarray(values)
    if array.dtype == object:
        return f"{array.size} values"
    if array.ndim == 0:
        return number_text(array[()], digits)
    if array.size == 0:
        return "[]"
    if array.ndim > 1:
        shape = "×".join(str(n) for n in array.shape)
        if array.dtype.kind in "fiu":
            return (f"{shape} array in [{number_text(array.min(), digits)}, "
                    f"{number_text(array.max(), digits)}]")
        return f"{shape} array"
    return _listed([number_text(v, digits) for v in array.tolist()])


def _listed(entries: list[str]) -> str:
    if len(entries) > SHOWN:
        return f"{len(entries)} values: [{', '.join(entries[:SHOWN - 2])}, …, {entries[-1]}]"
    return f"[{', '.join(entries)}]"


def is_formula(value: Any) -> bool:
    """Whether ``value`` is a symbolic object shown in LaTeX (a sympy matrix or expression that
    is not a number and not a boolean)."""
    if isinstance(value, sp.MatrixBase):
        return True
    return isinstance(value, sp.Basic) and not value.is_number and \
        not isinstance(value, sp.logic.boolalg.BooleanAtom)


def _plain(value: Any, digits: int) -> str:
    """The text of one value (not shortened, ``|`` not escaped; a formula's ``|`` as ``\\vert``)."""
    if is_formula(value) or (isinstance(value, sp.Basic) and value.is_number and value.is_finite
                              and not isinstance(value, (sp.Rational, sp.Float))
                              and len(latex(value)) <= SHORT_LATEX):
        text = "$" + latex(value, digits=digits).replace("|", r"\vert ") + "$"
        return text if is_formula(value) else f"{text} ≈ {number_text(value, digits)}"
    if _is_number(value):
        return number_text(value, digits)
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, np.ndarray):
        return array_text(value, digits)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_plain(v, digits)}" for k, v in value.items())
    if isinstance(value, (list, tuple)) and value:
        if all(_is_number(v) for v in value):
            return _listed([number_text(v, digits) for v in value])
        if all(isinstance(v, np.ndarray) for v in value):
            return f"{len(value)} arrays of sizes {array_text([v.size for v in value])}"
        return "; ".join("none" if v is None else _plain(v, digits) for v in value)
    return str(value)


def cell(value: Any, limit: int = 0, digits: int = DIGITS) -> str:
    """``value`` as one table cell: numbers by :func:`number_text`, vectors by
    :func:`array_text`, confidence intervals as ``mean ± half-width``, a formula inline in LaTeX
    (an exact number also as a decimal), a nested result by its one-line ``str``; shortened to
    ``limit`` characters (:data:`CELL` when 0; a formula is never cut) and ``|`` escaped."""
    text = " ".join(_plain(value, digits).split())
    limit = limit or CELL
    if len(text) > limit:
        text = text[:limit - 1]
        if text.count("$") % 2:  # never cut a formula
            text = text[:text.rindex("$")]
        text += "…"
    return text.replace("|", "\\|")


def short_text(value: Any, limit: int = CELL) -> str:
    """``value`` as one table cell (:func:`cell`), shortened to ``limit`` characters."""
    return cell(value, limit)


def with_error(value: Any, error: Any, digits: int = DIGITS) -> str:
    """``value ± error``, the value to ``digits`` significant digits, the error to 2."""
    if error is None or not _is_number(error):
        return number_text(value, digits)
    return f"{number_text(value, digits)} ± {float(error):.2g}"


def markdown(title: str, rows: Sequence[tuple[str, Any]], formulas: Sequence[tuple[str, Any]] = (),
             notes: Sequence[str] = (), header: tuple[str, str] = ("quantity", "value")) -> str:
    """The common layout: a bold title line, a two-column table, then formulas and notes.

    Parameters
    ----------
    title : str
        Shown in bold (Markdown, not escaped).
    rows : sequence of (name, value)
        Table rows; a value is formatted by :func:`cell` unless it is already a ``str``.
    formulas : sequence of (label, sympy object)
        Shown after the table, one per line, as ``label: $LaTeX$`` (numbers shortened).
    notes : sequence of str
        Lines of Markdown after the formulas.
    header : (str, str)
        Column titles.
    """
    lines = [f"**{title}**" if not title.startswith("**") else title]
    if rows:
        lines += ["", f"| {header[0]} | {header[1]} |", "|---|---|"]
        lines += [f"| `{name}` | {value if isinstance(value, str) else cell(value)} |"
                  for name, value in rows]
    if formulas:
        lines.append("")
        lines += [formula_line(label, expr) + "  " for label, expr in formulas]
        lines[-1] = lines[-1].rstrip()
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def formula_line(label: str, expr: Any) -> str:
    """``label: $LaTeX$``, ``$f^*(s) = LaTeX$`` for a label that is itself math
    (``"$f^*(s)$"``), or ``$LaTeX$`` alone for an empty label (an equation that names its left
    side); numbers shortened (:func:`symq.core.printing.latex` with ``digits``)."""
    body = latex(expr, digits=DIGITS)
    if not label:
        return f"${body}$"
    if len(label) > 1 and label.startswith("$") and label.endswith("$"):
        return f"${label[1:-1]} = {body}$"
    return f"{label}: ${body}$"


_ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|obj|exc):`~?(?:[^`<]*<)?([^`>]+)>?`")
_MATH = re.compile(r":math:`([^`]+)`")


def doc_title(obj: Any) -> str:
    """The first sentence of ``obj``'s docstring, with reST roles made Markdown
    (``:func:`~a.b``` as ``b``, ``:math:`x``` as ``$x$``)."""
    doc = (getattr(obj, "__doc__", None) or "").strip()
    first = " ".join(doc.split("\n\n")[0].split())
    first = _ROLE.sub(lambda m: "`" + m.group(1).rsplit(".", 1)[-1] + "`", first)
    first = _MATH.sub(lambda m: "$" + m.group(1) + "$", first)
    return first.replace("``", "`").rstrip(".")


def parameters_table(parameters: Sequence[Any]) -> list[str]:
    """Declared parameters (:class:`~symq.core.parameters.Parameter`) as a Markdown table:
    name, allowed values, typical value or default, meaning."""
    lines = ["| parameter | values | typical | meaning |", "|---|---|---|---|"]
    for p in parameters:
        typical = p.typical if p.typical is not None else (
            f"default {cell(p.default)}" if not p.required else "")
        need = "" if p.required else " (optional)"
        lines.append(f"| `{p.name}` | {cell(p.domain.describe())}{need} | {cell(typical)} | "
                     f"{cell(p.description)} |")
    return lines
