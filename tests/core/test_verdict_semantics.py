"""Verdict semantics (issue 30): symmetric tolerances and equivalence tests of simulation evidence.

The truth of every synthetic claim is known: the tolerance rule is recomputed with exact
rationals, and the simulation intervals are Student-t intervals of exact normal draws (which
cover at exactly their level), so the rate at which a true claim fails, or a false one holds,
can be compared with the family level by a binomial test.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from symq.core.claims import Inconclusive, Status
from symq.core.claimsfile import build_claim
from symq.core.claimsfile.quantities import FileContext
from symq.core.simstats import ConfidenceInterval
from symq.core.tolerance import (
    RUN_MARGIN,
    Tolerance,
    ToleranceRequired,
    parse_tolerance,
    point_error,
    widen,
)

# ----------------------------------------------------------------------------- symmetric rule

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
tolerances = st.one_of(
    st.builds(lambda r: Tolerance(relative=r), st.floats(0, 0.5)),
    st.builds(lambda t: Tolerance(absolute=t), st.floats(0, 10)),
    st.builds(lambda r, t: Tolerance(relative=r, absolute=t), st.floats(0, 0.5), st.floats(0, 10)),
)


def exact_holds(a: float, op: str, b: float, tol: Tolerance) -> bool:
    """``|a - b| <= max(t, r max(|a|, |b|))`` (or ``a - b <= ...``) in exact rationals."""
    fa, fb = Fraction(a), Fraction(b)
    r = Fraction(tol.relative) if tol.relative is not None else Fraction(0)
    t = Fraction(tol.absolute) if tol.absolute is not None else Fraction(0)
    allowed = max(t, r * max(abs(fa), abs(fb)))
    gap = fa - fb if op == "<=" else abs(fa - fb)
    return gap <= allowed


@settings(max_examples=300, deadline=None)
@given(finite, finite, tolerances)
def test_the_tolerance_is_symmetric_and_is_the_documented_rule(a, b, tol):
    forward = point_error(a, "==", b, tol, 1)
    backward = point_error(b, "==", a, tol, 1)
    assert forward == backward
    bound = tol.bound("==")
    assert (forward <= bound) == exact_holds(a, "==", b, tol) or \
        math.isclose(forward, bound, rel_tol=1e-12)
    # a <= b is b >= a, and is decided by the same rule
    le, ge = point_error(a, "<=", b, tol, 1), point_error(b, ">=", a, tol, 1)
    assert le == ge
    assert (le <= bound) == exact_holds(a, "<=", b, tol) or math.isclose(le, bound, rel_tol=1e-12)


def test_the_relative_error_divides_by_the_larger_side():
    tol = Tolerance(relative=0.05)
    assert point_error(100.0, "==", 95.0, tol, 1) == pytest.approx(0.05)   # 5/100
    assert point_error(95.0, "==", 100.0, tol, 1) == pytest.approx(0.05)
    assert point_error(0.0, "==", 0.0, tol, 1) == 0.0


# ----------------------------------------------------------------------------- equivalence

def interval(mean, half, n=10, run_length=None, doubt=""):
    return ConfidenceInterval(mean, half, 0.95, n, "batch_means", run_length, doubt)


def test_holds_only_when_the_whole_interval_lies_in_the_band():
    tol = Tolerance(relative=0.05, ci=0.95)
    # band around 100 for s: [95, 100/0.95 = 105.263]
    assert point_error(interval(100.0, 4.9), "==", 100.0, tol, 1) <= 0.05
    assert point_error(interval(103.0, 2.2), "==", 100.0, tol, 1) <= 0.05   # 105.2 < 105.263
    with pytest.raises(Inconclusive, match="cannot decide"):
        point_error(interval(103.0, 2.3), "==", 100.0, tol, 1)              # 105.3 > 105.263
    # fails when the whole interval lies outside; the error is the nearest end's
    error = point_error(interval(110.0, 2.0), "==", 100.0, tol, 1)
    assert error > 0.05 and error == pytest.approx(8 / 108)
    error = point_error(100.0, "==", interval(90.0, 2.0), tol, 1)
    assert error == pytest.approx(8 / 100)
    with pytest.raises(Inconclusive):
        point_error(interval(94.0, 2.0), "==", 100.0, tol, 1)


def test_inequalities_shift_the_bound_by_the_tolerance():
    tol = Tolerance(relative=0.1, ci=0.95)
    # s <= 100 within 10%: s - 100 <= 0.1 max(s, 100), i.e. s <= 111.1
    assert point_error(interval(109.0, 2.0), "<=", 100.0, tol, 1) == pytest.approx(11 / 111)
    assert point_error(interval(115.0, 2.0), "<=", 100.0, tol, 1) > 0.1
    with pytest.raises(Inconclusive, match="n_jobs"):
        point_error(interval(110.0, 2.0, run_length=10_000), "<=", 100.0, tol, 1)
    # without a numeric tolerance the bound is the other side itself
    bare = Tolerance(ci=0.95)
    assert point_error(interval(1.0, 0.1), ">=", 0.5, bare, 1) == 0.0
    assert point_error(interval(1.0, 0.1), "<", 0.5, bare, 1) > 0.0


def test_two_simulated_sides_give_the_same_verdict_swapped():
    tol = Tolerance(relative=0.05, ci=0.95)
    cases = [(interval(100, 1), interval(101, 1)), (interval(100, 1), interval(120, 1)),
             (interval(100, 3), interval(104, 3))]
    for a, b in cases:
        outcomes = []
        for x, y in ((a, b), (b, a)):
            try:
                outcomes.append(point_error(x, "==", y, tol, 1))
            except Inconclusive:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1]
    assert outcomes[0] is None  # 100 ± 3 against 104 ± 3: the difference's interval straddles


def test_the_run_length_that_would_decide():
    """A true claim whose interval straddles the band's edge: the run length is the present
    one times (half-width / distance of the estimate to the edge)^2 times the margin."""
    tol = Tolerance(relative=0.05, ci=0.95)
    ci = interval(101.0, 6.0, run_length=20_000)
    with pytest.raises(Inconclusive) as info:
        point_error(ci, "==", 100.0, tol, 1)
    needed = min(101.0 - 95.0, 100 / 0.95 - 101.0)           # the nearer edge: 4.263
    expected = 20_000 * RUN_MARGIN * (6.0 / needed) ** 2      # 59,430
    wanted = int(re.search(r"n_jobs = ([\d,]+)", str(info.value)).group(1).replace(",", ""))
    assert expected <= wanted <= expected * 1.02
    assert "now 20,000" in str(info.value)
    with pytest.raises(Inconclusive, match="about 3 times longer"):  # 1.5 (6/4.263)^2 = 2.97
        point_error(interval(101.0, 6.0), "==", 100.0, tol, 1)


def test_a_doubtful_interval_is_inconclusive_with_its_doubt():
    ci = interval(100.0, 0.1, run_length=1000, doubt="batch means correlated (lag-1 0.6)")
    with pytest.raises(Inconclusive, match="lag-1 0.6"):
        point_error(ci, "==", 100.0, Tolerance(relative=0.05, ci=0.95), 1)


def test_an_equality_against_a_simulation_needs_a_tolerance():
    for spec in ({"ci": 0.95}, None, "ci"):
        tol = parse_tolerance("claims[3].tolerance", spec)
        with pytest.raises(ToleranceRequired) as info:
            point_error(interval(1.0, 0.1), "==", 1.0, tol, 1)
        assert info.value.name == "claims[3].tolerance"
        assert "relative = 0.02" in str(info.value)
    assert point_error(interval(1.0, 0.1), "<=", 2.0, parse_tolerance("t", {"ci": 0.9}), 1) == 0


def test_the_family_level_widens_each_interval_by_bonferroni():
    """With 10 points each interval is widened to the 99.5% level (Student t, 9 d.f.)."""
    tol = Tolerance(absolute=0.0, ci=0.95)
    ci = interval(1.0, 0.1, n=10)
    wide = 0.1 * stats.t.ppf(1 - 0.005 / 2, 9) / stats.t.ppf(0.975, 9)
    assert widen(ci, 0.995) == pytest.approx(wide)
    assert point_error(ci, "==", 1.0 + wide * 1.001, tol, 10) > 0           # just outside
    with pytest.raises(Inconclusive):
        point_error(ci, "==", 1.0 + wide * 0.999, tol, 10)                  # just inside


# ----------------------------------------------------------------------------- error rates

def sim_claim(truth, claimed, n_points, seed, tolerance):
    """A claim `S == claimed` over n_points, S a t-interval of 10 normal draws around truth."""
    rng = np.random.default_rng(seed)
    draws = {i: rng.normal(truth, 1.0, 10) for i in range(1, n_points + 1)}

    def estimate(point):
        x = draws[point["i"]]
        half = stats.t.ppf(0.975, 9) * x.std(ddof=1) / math.sqrt(10)
        return ConfidenceInterval(float(x.mean()), float(half), 0.95, 10, "replications", 10)

    table = {"name": "synthetic", "statement": f"S == {claimed}", "let": {"S": estimate},
             "region": {"i": {"integers": [1, n_points]} if n_points > 1 else 1},
             "tolerance": tolerance}
    return build_claim("claims[0]", table, FileContext("test"))


def binomial_ok(count, trials, level=0.05):
    """Not significantly above ``level`` (one-sided binomial test at 0.1%)."""
    return stats.binom.sf(count - 1, trials, level) > 1e-3


def test_a_true_claim_at_the_edge_of_its_band_fails_at_most_at_the_family_level():
    """Truth 21 against the claim 20 within 5% (band for S: [19, 21.05]): the worst case for a
    true claim.  Over 240 seeds of 5 points the claim fails in at most 5% of runs (binomial)."""
    seeds, failures, verdicts = 240, 0, set()
    for seed in range(seeds):
        v = sim_claim(21.0, 20, 5, seed, {"relative": 0.05, "ci": 0.95}).check()
        verdicts.add(v.status)
        failures += v.status is Status.FAILS
    assert binomial_ok(failures, seeds)
    assert Status.HOLDS in verdicts or Status.INCONCLUSIVE in verdicts


def test_a_false_claim_never_holds_more_often_than_the_family_level():
    """Truth 21.1 against the claim 20 within 5% (just outside the band [19, 21.05]): over 240
    seeds of 1 and of 4 points it holds in at most 5% of runs; far from the band it fails."""
    seeds = 240
    for n_points in (1, 4):
        holds = sum(sim_claim(21.1, 20, n_points, seed, {"relative": 0.05, "ci": 0.95}
                              ).check().status is Status.HOLDS for seed in range(seeds))
        assert binomial_ok(holds, seeds)
    far = [sim_claim(30.0, 20, 3, seed, {"relative": 0.05}).check() for seed in range(20)]
    assert all(v.status is Status.FAILS for v in far)


def test_a_verdict_states_its_resolution_and_keeps_its_points():
    v = sim_claim(20.0, 20, 2, 1, {"relative": 0.5, "ci": 0.9}).check()
    assert v.status is Status.HOLDS
    halves = [widen(o.claimed, 1 - 0.1 / 2) for o in v.points]
    resolution = 100 * max(halves) / 20
    shown = float(re.search(r"detects differences >= ([\d.e+-]+)%", v.detail).group(1))
    assert shown == pytest.approx(resolution, rel=0.05)
    assert [o.point for o in v.points] == [{"i": 1}, {"i": 2}]
    data = v.to_dict()
    assert [p["status"] for p in data["points"]] == ["holds", "holds"]
    assert data["points"][0]["claimed"]["run_length"] == 10
    assert data["unexpected"] is False and v.units == "relative"
