"""Rich (Markdown) display of symq's results, claims, verdicts, models and processes for Jupyter.

One set of helpers behind every ``_repr_markdown_`` of symq:

* :func:`result_markdown`: any :class:`~symq.core.result.ResultBase` (a bold title from the class
  and its method, then a table of the values, the main ones first, errors shown with the value
  they qualify, formulas in LaTeX below the table);
* :func:`markdown`: the same layout for an object that lists its own rows (models, declared
  processes, distributions);
* :func:`verdict_markdown`, :func:`claim_markdown`, :func:`interval_markdown`,
  :func:`population_markdown`, :func:`spec_markdown` for claims, verdicts, confidence intervals,
  population processes and registered models.

Numbers are rounded for reading (:data:`~symq.core.printing.DIGITS` = 6 significant digits; long
exact rationals too, small ones such as 3/2 stay exact; the exact values stay on the objects and
in ``to_dict()``), long values are shortened, ``|`` is escaped so that table cells stay cells, and
formulas are written by :func:`symq.core.printing.latex` (sympy's LaTeX with ``lam`` as
:math:`\\lambda`, ``u(k)`` as :math:`u_k`).

Examples
--------
>>> from symq.core.simstats import ConfidenceInterval
>>> print(interval_markdown(ConfidenceInterval(1.5, 0.25, 0.99, 30, "batch_means")))
1.50 ± 0.25 (99%, 30 batches): [1.25, 1.75]
>>> print(markdown("M/M/1", [("ET", 1 / (1 - 0.3)), ("rho", 0.3)]))
**M/M/1**
<BLANKLINE>
| quantity | value |
|---|---|
| `ET` | 1.42857 |
| `rho` | 0.3 |
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sp

from .printing import DIGITS, is_long_rational, latex

if TYPE_CHECKING:  # pragma: no cover - typing only
    from symq.meanfield.population import PopulationProcess

    from .claims import Claim, Verdict
    from .registry import ModelKind, ModelSpec, PaperSpec
    from .result import ResultBase
    from .simstats import ConfidenceInterval

__all__ = ["verdict_markdown", "claim_markdown", "interval_markdown", "population_markdown",
           "short_text", "number_text", "array_text", "cell", "with_error", "markdown",
           "result_markdown", "doc_title", "formula_line", "spec_markdown", "parameters_table",
           "distribution_markdown", "sweep_markdown"]

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


def _is_formula(value: Any) -> bool:
    """A symbolic object shown in LaTeX (not a number, not a boolean)."""
    if isinstance(value, sp.MatrixBase):
        return True
    return isinstance(value, sp.Basic) and not value.is_number and \
        not isinstance(value, sp.logic.boolalg.BooleanAtom)


def _plain(value: Any, digits: int) -> str:
    """The text of one value (not shortened, ``|`` not escaped; a formula's ``|`` as ``\\vert``)."""
    from .simstats import ConfidenceInterval

    if _is_formula(value) or (isinstance(value, sp.Basic) and value.is_number and value.is_finite
                              and not isinstance(value, (sp.Rational, sp.Float))
                              and len(latex(value)) <= SHORT_LATEX):
        text = "$" + latex(value, digits=digits).replace("|", r"\vert ") + "$"
        return text if _is_formula(value) else f"{text} ≈ {number_text(value, digits)}"
    if _is_number(value):
        return number_text(value, digits)
    if isinstance(value, ConfidenceInterval):
        return str(value)
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


def _fields(obj: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)
            if f.repr and not f.name.startswith("_")]


def result_markdown(result: ResultBase) -> str:
    """A result: **name**, what it is (its docstring's first sentence), method and exactness;
    a table of its values, the fields of :attr:`~symq.core.result.ResultBase.summary` first, each
    error of :attr:`~symq.core.result.ResultBase.uncertainty` next to its value; formulas in
    LaTeX after the table.  ``None`` fields are left out."""
    items = dict(_fields(result))
    errors: Mapping[str, Any] = getattr(result, "uncertainty", {}) or {}
    labels: Mapping[str, str] = getattr(result, "labels", {}) or {}
    used = {e.split()[-1] for spec in errors.values()
            for e in ((spec,) if isinstance(spec, str) else spec)}
    how = [cell(items[k]) for k in ("method", "exactness") if items.get(k) not in (None, "")]
    title = f"**{type(result).__name__}**"
    about = doc_title(type(result))
    if about:
        title += f": {about}"
    if how:
        title += f" ({', '.join(how)})"
    order = [n for n in getattr(result, "summary", ()) if n in items]
    order += [n for n in items if n not in order]
    rows: list[tuple[str, Any]] = []
    formulas: list[tuple[str, Any]] = []
    for name in order:
        value = items[name]
        if name in ("method", "exactness") or name in used or value is None:
            continue
        spec = errors.get(name)
        if isinstance(spec, str) and spec.startswith("relative "):
            error = items.get(spec.split()[-1])
            rows.append((name, f"{number_text(value)} (relative error {cell(error)}, "
                               f"{spec.split()[-1]})"))
        elif isinstance(spec, str):
            rows.append((name, f"{with_error(value, items.get(spec))} ({spec})"))
        elif spec is not None:
            low, high = (items.get(k) for k in spec)
            rows.append((name, f"{number_text(value)} in [{number_text(low)}, "
                               f"{number_text(high)}] ({', '.join(spec)})"))
        elif _is_formula(value) or (isinstance(value, (list, tuple)) and value
                                    and all(_is_formula(v) for v in value)):
            formulas.append((labels.get(name, f"`{name}`"), value if not isinstance(
                value, (list, tuple)) else sp.Tuple(*value)))
        elif isinstance(value, Mapping) and any(_is_formula(v) for v in value.values()):
            formulas += [(f"`{name}.{k}`", v) for k, v in value.items()]
        elif isinstance(getattr(value, "expr", None), sp.Basic) and hasattr(value, "_repr_latex_"):
            formulas.append((labels.get(name, f"`{name}`"), value.expr))  # e.g. a RationalLST
        else:
            rows.append((name, value))
    return markdown(title, rows, formulas)


def _status_line(v: Verdict) -> str:
    status, expected = str(v.status), str(v.expected)
    if not v.unexpected:
        if v.status is v.expected and expected == "fails":
            return "fails, as expected (a statement symq refutes)"
        return status
    return f"**{status.upper()}** (expected: {expected})"


def verdict_markdown(v: Verdict) -> str:
    """A verdict as a heading line and a two-column table."""
    from .claims import pair_text

    rows: list[tuple[str, Any]] = [("status", _status_line(v))]
    if v.max_error is not None:
        tol = "" if v.tolerance is None else f" (tolerance {v.tolerance:.3g})"
        rows.append(("max error", f"{v.max_error:.3g}{tol}"))
        if v.units:
            rows.append(("error units", v.units))
    rows.append(("evidence", ", ".join(str(e) for e in v.evidence)))
    rows.append(("points", v.n_points))
    if v.worst_point:
        rows.append(("worst point", v.worst_point))
    shown = pair_text(v.claimed_value, v.reference_value)
    if v.claimed_value is not None:
        rows.append((v.side_names[0], shown[0]))
    if v.reference_value is not None:
        rows.append((v.side_names[1], shown[1]))
    if v.counterexample:
        rows.append(("counterexample", v.counterexample))
    rows.append(("detail", v.detail))
    if v.source:
        rows.append(("source", v.source))
    rows.append(("time", f"{v.seconds:.2f} s"))
    title = f"**{short_text(v.paper)}**: {short_text(v.claim)}" if v.paper else \
        f"**{short_text(v.claim)}**"
    body = "\n".join(f"| {name} | {short_text(value)} |" for name, value in rows)
    return f"{title}\n\n| | |\n|---|---|\n{body}"


def claim_markdown(c: Claim) -> str:
    """A claim (before it is checked): name, source, statement, tolerance, evidence."""
    evidence = c.evidence if isinstance(c.evidence, tuple) else (c.evidence,)
    sample = c.sample if isinstance(c.sample, (list, tuple)) else None
    rows: list[tuple[str, Any]] = [
        ("source", c.source), ("statement", c.statement),
        ("tolerance", f"{c.tolerance:.3g}"),
        ("evidence", ", ".join(str(e) for e in evidence)),
        ("points", len(sample) if sample is not None else "drawn at random"),
        ("expected", str(c.expected)),
    ]
    body = "\n".join(f"| {name} | {short_text(value)} |" for name, value in rows)
    return f"**{short_text(c.name)}** (not checked yet: `.check()`)\n\n| | |\n|---|---|\n{body}"


def interval_markdown(ci: ConfidenceInterval) -> str:
    """``mean ± half_width (level, n): [low, high]``, the ends with the same decimals."""
    text = str(ci)
    if ci.half_width > 0 and math.isfinite(ci.half_width):
        decimals = min(15, max(0, 1 - math.floor(math.log10(ci.half_width))))
        return f"{text}: [{ci.low:.{decimals}f}, {ci.high:.{decimals}f}]"
    return f"{text}: [{ci.low:.6g}, {ci.high:.6g}]"


def approximate_markdown(value: Any) -> str:
    """A number with an error bar (an accelerated sum, a quadrature): ``**v ± e**`` and how it
    was computed."""
    return f"**{value}** ({value.how})"


#: Transitions shown in the table of a population process (the rest are counted).
MAX_TRANSITIONS = 12


def population_markdown(pp: PopulationProcess) -> str:
    r"""A declared population process: its variables, parameters, transitions (jump
    :math:`\ell`, rate :math:`\beta_\ell(x)`) and drift :math:`F(x) = \sum_\ell \ell
    \beta_\ell(x)` in LaTeX."""
    names = ", ".join(f"${latex(v)}$" for v in pp.variables)
    params = ", ".join(f"${latex(p)}$" for p in pp.parameters) or "none"
    lines = [f"**{short_text(pp.name)}**: {pp.dimension} variable(s) {names}; parameters "
             f"{params}; {len(pp.transitions)} transition(s), "
             r"$x \to x + \ell/N$ at rate $N \beta_\ell(x)$", ""]
    if pp.transitions:
        lines += ["| jump $\\ell$ | rate $\\beta_\\ell(x)$ |", "|---|---|"]
        for jump, rate in pp.transitions[:MAX_TRANSITIONS]:
            lines.append(f"| {tuple(jump)} | ${latex(rate)}$ |")
        more = len(pp.transitions) - MAX_TRANSITIONS
        if more > 0:
            lines.append(f"| ... | {more} more |")
        drift = r" \\ ".join(f"\\dot{{{latex(v)}}} &= {latex(f)}"
                              for v, f in zip(pp.variables, pp.drift))
        lines += ["", f"$$\\begin{{aligned}} {drift} \\end{{aligned}}$$"]
    return "\n".join(lines)


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


def spec_markdown(spec: ModelSpec | ModelKind | PaperSpec) -> str:
    """A registered model (its summary, paper, parameters and results), a model kind of
    claims files (its keys) or a paper (citation, models, derivation)."""
    from .registry import ModelKind, ModelSpec

    if isinstance(spec, ModelSpec):
        lines = [f"**{spec.name}**: {cell(spec.summary, 400)}", ""]
        if spec.paper:
            lines += [f"paper: {cell(spec.paper, 400)}", ""]
        if spec.parameters:
            lines += parameters_table(spec.parameters)
        if spec.outputs:
            lines += ["", "results: " + ", ".join(f"`{o}`" for o in spec.outputs)]
        lines += ["", f"`symq solve {spec.name} key=value ...`; source: {spec.source}"]
        return "\n".join(lines)
    if isinstance(spec, ModelKind):
        lines = [f"**{spec.kind}** (model kind of claims files): {cell(spec.summary, 400)}", "",
                 "| key | meaning |", "|---|---|"]
        lines += [f"| `{k}` | {cell(v)} |" for k, v in spec.keys.items()]
        if spec.outputs:
            lines += ["", "results: " + ", ".join(f"`{o}`" for o in spec.outputs)]
        return "\n".join(lines)
    lines = [f"**{spec.key}**: {cell(spec.title, 400)}", "", f"*{cell(spec.citation, 400)}*", "",
             "| | |", "|---|---|",
             f"| models | {', '.join(f'`{m}`' for m in spec.models) or 'none'} |",
             f"| derivation | {'`symq derive ' + spec.key + '`' if spec.derivation else 'none'} |",
             f"| claims | `symq check {spec.key}` |", f"| source | {cell(spec.source)} |"]
    return "\n".join(lines)


def distribution_markdown(law: Any, title: str | None = None,
                          formulas: Sequence[tuple[str, Any]] = ()) -> str:
    """A distribution (:class:`~symq.core.distribution.Distribution`): its name, mean,
    variance, squared coefficient of variation and support, and ``formulas`` in LaTeX.  A moment
    the law cannot give (infinite, or not computable) is left out."""
    from .errors import SymqError

    rows: list[tuple[str, Any]] = []
    try:
        mean, variance = law.mean(), law.variance()
        rows += [("mean", mean), ("variance", variance)]
        if float(mean) != 0.0 and math.isfinite(float(variance)):
            rows.append(("scv", float(variance) / float(mean) ** 2))
    except (SymqError, ArithmeticError, ValueError, TypeError, NotImplementedError):
        pass
    low, high = law.support()
    rows.append(("support", f"[{number_text(low)}, {number_text(high)}" +
                 (")" if math.isinf(float(high)) else "]")))
    if title is None:
        name = getattr(law, "name", None)
        title = f"**{type(law).__name__}** {cell(name)}" if isinstance(name, str) and name \
            else f"**{cell(repr(law))}**"
    return markdown(title, rows, formulas)


#: Rows and columns of a sweep shown (the rest are counted).
SWEEP_ROWS, SWEEP_COLUMNS = 12, 10


def sweep_markdown(sweep: Any) -> str:
    """A :class:`~symq.core.sweep.SweepResult`: points, backend and time, then its tidy
    :meth:`~symq.core.sweep.SweepResult.rows` as a table (numbers rounded; long sweeps and wide
    rows shortened, with the count of what is left out)."""
    rows = sweep.rows()
    title = (f"**SweepResult**: {len(rows)} point(s), {cell(sweep.backend)}, "
             f"{sweep.seconds:.3g} s")
    if not rows:
        return title
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    shown = columns[:SWEEP_COLUMNS]
    lines = [title, "", "| " + " | ".join(f"`{c}`" for c in shown) + " |",
             "|" + "---|" * len(shown)]
    for row in rows[:SWEEP_ROWS]:
        lines.append("| " + " | ".join(cell(row.get(c, ""), 40) for c in shown) + " |")
    more = [f"{len(rows) - SWEEP_ROWS} more row(s)"] if len(rows) > SWEEP_ROWS else []
    more += [f"{len(columns) - SWEEP_COLUMNS} more column(s)"] if len(columns) > SWEEP_COLUMNS \
        else []
    if more:
        lines += ["", "; ".join(more) + " (`.rows()`, `.to_dataframe()`)"]
    return "\n".join(lines)
