"""Rich display of claims, verdicts and confidence intervals (``_repr_markdown_``)."""

from __future__ import annotations

import re

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
    from symq.core.display import MAX_TRANSITIONS
    from symq.meanfield.population import PopulationProcess

    pp = PopulationProcess(1)
    (x,) = pp.variables
    for k in range(MAX_TRANSITIONS + 3):
        pp.add_transition([1 if k % 2 else -1], (k + 1) * x)
    md = pp._repr_markdown_()
    assert "| ... | 3 more |" in md
    assert sum(line.startswith("| (") for line in md.splitlines()) == MAX_TRANSITIONS
