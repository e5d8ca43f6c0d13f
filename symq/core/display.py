"""Rich (Markdown) display of claims, verdicts and confidence intervals for Jupyter.

:class:`~symq.core.claims.Claim`, :class:`~symq.core.claims.Verdict` and
:class:`~symq.core.simstats.ConfidenceInterval` define ``_repr_markdown_`` through these
functions, so that a notebook shows a claim's statement and source, a verdict's status (a
failure that was not expected in bold capitals, a declared refutation as such), its error against
the tolerance, evidence and worst point, and an interval with its ends and level.  Numbers are
rounded for reading (6 significant digits; the exact values stay on the objects and in
``to_dict()``), long values are shortened, and ``|`` is escaped so that table cells stay cells.

Examples
--------
>>> from symq.core.simstats import ConfidenceInterval
>>> print(interval_markdown(ConfidenceInterval(1.5, 0.25, 0.99, 30, "batch_means")))
1.50 ± 0.25 (99%, 30 batches): [1.25, 1.75]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from symq.meanfield.population import PopulationProcess

    from .claims import Claim, Verdict
    from .simstats import ConfidenceInterval

__all__ = ["verdict_markdown", "claim_markdown", "interval_markdown", "population_markdown",
           "short_text"]

#: Longest text shown in one table cell.
CELL = 160


def short_text(value: Any, limit: int = CELL) -> str:
    """``value`` as one table cell: floats to 6 significant digits, mappings as ``k=v``,
    shortened to ``limit`` characters, ``|`` escaped and newlines joined."""
    if isinstance(value, float):
        text = f"{value:.6g}"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k}={short_text(v, limit)}" for k, v in value.items())
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, float) for v in value):
        text = "[" + ", ".join(f"{v:.6g}" for v in value) + "]"
    else:
        text = str(value)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return text.replace("|", "\\|")


def _status_line(v: Verdict) -> str:
    status, expected = str(v.status), str(v.expected)
    if v.status is v.expected:
        if expected == "fails":
            return "fails, as expected (a statement symq refutes)"
        return status
    return f"**{status.upper()}** (expected: {expected})"


def verdict_markdown(v: Verdict) -> str:
    """A verdict as a heading line and a two-column table."""
    rows: list[tuple[str, Any]] = [("status", _status_line(v))]
    if v.max_error is not None:
        tol = "" if v.tolerance is None else f" (tolerance {v.tolerance:.3g})"
        rows.append(("max error", f"{v.max_error:.3g}{tol}"))
    rows.append(("evidence", ", ".join(str(e) for e in v.evidence)))
    rows.append(("points", v.n_points))
    if v.worst_point:
        rows.append(("worst point", v.worst_point))
    if v.claimed_value is not None:
        rows.append((v.side_names[0], v.claimed_value))
    if v.reference_value is not None:
        rows.append((v.side_names[1], v.reference_value))
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


#: Transitions shown in the table of a population process (the rest are counted).
MAX_TRANSITIONS = 12


def population_markdown(pp: PopulationProcess) -> str:
    r"""A declared population process: its variables, parameters, transitions (jump
    :math:`\ell`, rate :math:`\beta_\ell(x)`) and drift :math:`F(x) = \sum_\ell \ell
    \beta_\ell(x)` in LaTeX."""
    import sympy as sp

    names = ", ".join(f"${sp.latex(v)}$" for v in pp.variables)
    params = ", ".join(f"${sp.latex(p)}$" for p in pp.parameters) or "none"
    lines = [f"**{short_text(pp.name)}**: {pp.dimension} variable(s) {names}; parameters "
             f"{params}; {len(pp.transitions)} transition(s), "
             r"$x \to x + \ell/N$ at rate $N \beta_\ell(x)$", ""]
    if pp.transitions:
        lines += ["| jump $\\ell$ | rate $\\beta_\\ell(x)$ |", "|---|---|"]
        for jump, rate in pp.transitions[:MAX_TRANSITIONS]:
            lines.append(f"| {tuple(jump)} | ${sp.latex(rate)}$ |")
        more = len(pp.transitions) - MAX_TRANSITIONS
        if more > 0:
            lines.append(f"| ... | {more} more |")
        drift = r" \\ ".join(f"\\dot{{{sp.latex(v)}}} &= {sp.latex(f)}"
                              for v, f in zip(pp.variables, pp.drift))
        lines += ["", f"$$\\begin{{aligned}} {drift} \\end{{aligned}}$$"]
    return "\n".join(lines)
