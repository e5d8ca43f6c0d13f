"""Rich display (``_repr_markdown_``) of claims, verdicts, intervals, results, sweeps, models, and
the LaTeX printer behind them (symq.core.display, symq.core.printing)."""

from __future__ import annotations

import re
from typing import ClassVar

import numpy as np

from symq.core.claims import Claim, Evidence, Status
from symq.core.simstats import ConfidenceInterval


def _mean_queue(point):
    """E[N] of M/M/1 by summing k P(N = k) (an independent computation of rho/(1 - rho))."""
    rho = point["rho"]
    return sum(k * (1 - rho) * rho ** k for k in range(4000))


def _cells(markdown: str) -> dict[str, str]:
    rows = re.findall(r"^\| ([^|]+?) \| (.*) \|$", markdown, flags=re.M)
    return {name: value for name, value in rows if name.strip()}


def test_a_verdict_shows_status_error_tolerance_and_worst_point():
    claim = Claim("M/M/1 mean queue length", "textbook", "E[N] = rho/(1 - rho)",
                  lambda p: p["rho"] / (1 - p["rho"]), _mean_queue,
                  [{"rho": 0.3}, {"rho": 0.8}], tolerance=1e-9, paper="demo")
    claim_md = claim._repr_markdown_()
    assert claim_md.startswith("**M/M/1 mean queue length**")
    assert _cells(claim_md)["points"] == "2" and "not checked yet" in claim_md
    verdict = claim.check()
    assert verdict.status is Status.HOLDS
    md = verdict._repr_markdown_()
    cells = _cells(md)
    assert md.startswith("**demo**: M/M/1 mean queue length")
    assert cells["status"] == "holds"
    assert cells["max error"] == f"{verdict.max_error:.3g} (tolerance 1e-09)"
    assert cells["worst point"] in ("rho=0.3", "rho=0.8")
    assert cells["evidence"] == "numeric"


def test_an_unexpected_failure_is_highlighted_and_a_declared_refutation_is_not():
    wrong = Claim("a wrong formula", "a paper", "E[N] = rho", lambda p: p["rho"], _mean_queue,
                  [{"rho": 0.5}], tolerance=1e-6, evidence=Evidence.CLOSED_FORM)
    cells = _cells(wrong.check()._repr_markdown_())
    assert cells["status"] == "**FAILS** (expected: holds)"
    # E[N] = 1 at rho = 0.5 against the claimed 0.5: the sides are shown, rounded
    assert cells["claimed"] == "0.5" and cells["reference"] == "1"
    refuted = Claim("a wrong formula", "a paper", "E[N] = rho", lambda p: p["rho"], _mean_queue,
                    [{"rho": 0.5}], tolerance=1e-6, expected=Status.FAILS)
    assert _cells(refuted.check()._repr_markdown_())["status"].startswith("fails, as expected")


def test_pipes_in_values_do_not_break_the_table():
    claim = Claim("abs", "src", "|x| = x for x >= 0", lambda p: abs(p["x"]), lambda p: p["x"],
                  [{"x": 2.0}])
    md = claim._repr_markdown_()
    assert "\\|x\\|" in md
    assert all(line.count("|") - line.count("\\|") == 3 for line in md.splitlines()
               if line.startswith("| ") and "---" not in line)


def test_an_interval_shows_its_ends_with_the_same_decimals():
    ci = ConfidenceInterval(2.34567, 0.0123, 0.99, 30, "batch_means")
    md = ci._repr_markdown_()
    assert md == f"{ci}: [{2.34567 - 0.0123:.3f}, {2.34567 + 0.0123:.3f}]"
    assert md.startswith("2.346 ± 0.012 (99%")


def test_a_population_process_shows_its_transitions_and_drift():
    import sympy as sp

    from symq.meanfield.population import PopulationProcess

    beta = sp.Symbol("beta", positive=True)
    pp = PopulationProcess(2, [beta], name="two-class SIS")
    x1, x2 = pp.variables
    for jump, rate in (([1, 0], beta * x1 * (1 - x1 - x2)), ([-1, 0], x1),
                       ([0, 1], beta * x2 * (1 - x1 - x2)), ([0, -1], 2 * x2)):
        pp.add_transition(jump, rate)
    md = pp._repr_markdown_()
    assert md.startswith("**two-class SIS**: 2 variable(s)") and "4 transition(s)" in md
    rows = [line for line in md.splitlines() if line.startswith("| (")]
    assert rows[1] == f"| (-1, 0) | ${sp.latex(x1)}$ |" and len(rows) == 4
    # the drift shown is F = sum_l l beta_l, written out here by hand
    hand = [beta * x1 * (1 - x1 - x2) - x1, beta * x2 * (1 - x1 - x2) - 2 * x2]
    assert all(sp.simplify(f - h) == 0 for f, h in zip(pp.drift, hand))
    for v, f in zip(pp.variables, pp.drift):
        assert f"\\dot{{{sp.latex(v)}}} &= {sp.latex(f)}" in md


def test_many_transitions_are_counted_not_listed():
    from symq.meanfield.population import MAX_TRANSITIONS, PopulationProcess

    pp = PopulationProcess(1)
    (x,) = pp.variables
    for k in range(MAX_TRANSITIONS + 3):
        pp.add_transition([1 if k % 2 else -1], (k + 1) * x)
    md = pp._repr_markdown_()
    assert "| ... | 3 more |" in md
    assert sum(line.startswith("| (") for line in md.splitlines()) == MAX_TRANSITIONS


# ---------------------------------------------------------------- printing and shared helpers
def test_symbols_print_as_mathematicians_write_them_without_changing_sympy():
    import sympy as sp

    from symq.core.printing import latex

    lam, k, w = sp.Symbol("lam"), sp.Symbol("k", integer=True), sp.Symbol("w", positive=True)
    u, a = sp.Function("u"), sp.Function("a")
    assert latex(lam) == r"\lambda" and latex(sp.Symbol("lam_2")) == r"\lambda_{2}"
    assert latex(sp.Symbol("rho") * sp.Symbol("mu")) == r"\mu \rho"
    assert latex(u(k + 1) ** 2) == "u_{k + 1}^{2}"            # a sequence: subscript
    assert latex(a(w)) == sp.latex(a(w)) == r"a{\left(w \right)}"  # a function of w: as sympy
    assert latex(sp.Function("f_j")(k)) == sp.latex(sp.Function("f_j")(k))
    # nothing global changed: sympy's own printer still writes lam and u(k)
    assert sp.latex(lam) == "lam" and sp.latex(u(k)) == r"u{\left(k \right)}"


def test_numbers_are_rounded_for_reading_and_small_rationals_stay_exact():
    import sympy as sp

    from symq.core.display import cell, number_text
    from symq.core.printing import latex, text

    long = sp.Rational(10**50 + 7, 3 * 10**49)            # 3.3333...
    assert number_text(long) == "3.33333" and number_text(sp.Rational(3, 2)) == "3/2"
    assert number_text(1 / 3) == "0.333333" and number_text(np.int64(12)) == "12"
    s = sp.Symbol("s")
    assert latex(long * s + sp.Rational(1, 2), digits=6) == r"3.33333 s + \frac{1}{2}"
    assert text(long * s) == "3.33333*s"
    assert cell(2 - sp.sqrt(2)) == f"$2 - \\sqrt{{2}}$ ≈ {2 - 2 ** 0.5:.6g}"
    assert cell(np.arange(10.0)) == "10 values: [0, 1, 2, 3, …, 9]"


def test_a_long_cell_is_shortened_without_cutting_a_formula():
    import sympy as sp

    from symq.core.display import cell

    x = sp.Symbol("x")
    shortened = cell({"a": "y" * 30, "f": sp.Abs(x) + x ** 2}, limit=40)
    assert shortened.endswith("…") and shortened.count("$") % 2 == 0
    assert "\\|" not in cell(sp.Abs(x))                 # a formula's bars are \vert, not cells


def test_a_result_shows_errors_with_their_values_and_formulas_in_latex():
    import dataclasses

    import sympy as sp

    from symq.core.result import ResultBase

    @dataclasses.dataclass(frozen=True)
    class Toy(ResultBase):
        """A toy result of :func:`solve_toy`."""

        summary: ClassVar[tuple[str, ...]] = ("ET",)
        uncertainty: ClassVar[dict] = {"ET": "error_estimate", "EW": ("EW_low", "EW_high"),
                                       "EQ": "relative EQ_error"}
        labels: ClassVar[dict] = {"lst": "$f^*(s)$"}
        ET: float
        error_estimate: float
        EW: float
        EW_low: float
        EW_high: float
        EQ: float
        EQ_error: float
        lst: object
        method: str = "closed form"

    s = sp.Symbol("s")
    md = Toy(1 / 0.3, 2e-7, 1.5, 1.25, 1.75, 2.0, 1e-9, 1 / (s + 1))._repr_markdown_()
    assert md.startswith("**Toy**: A toy result of `solve_toy` (closed form)")
    cells = _cells(md)
    assert cells["`ET`"] == f"{1 / 0.3:.6g} ± 2e-07 (error_estimate)"
    assert cells["`EW`"] == "1.5 in [1.25, 1.75] (EW_low, EW_high)"
    assert cells["`EQ`"] == "2 (relative error 1e-09, EQ_error)"
    assert "`error_estimate`" not in cells and "`EW_low`" not in cells
    assert f"$f^*(s) = {sp.latex(1 / (s + 1))}$" in md
    assert md.splitlines()[4].startswith("| `ET` |")       # the summary field comes first


def test_a_sweep_and_a_registered_model_are_tables():
    from symq.core import registry
    from symq.core.sweep import SweepResult

    sweep = SweepResult([{"lam": 0.05 * k} for k in range(15)],
                        [{"ET": 1 / (1 - 0.05 * k)} for k in range(15)], 0.5, "serial")
    md = sweep._repr_markdown_()
    assert md.startswith("**SweepResult**: 15 point(s), serial")
    assert f"| {0.05 * 3:.6g} | {1 / (1 - 0.05 * 3):.6g} |" in md and "3 more row(s)" in md
    spec = registry.get_model("supermarket")._repr_markdown_()
    assert spec.startswith("**supermarket**") and "| `lam` | a positive real number |" in spec
