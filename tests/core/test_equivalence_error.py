"""equivalence_error: the built-in papers' equivalence test of a simulation against a value.

The expected errors are computed here by hand: the Student t quantiles from the regularized
incomplete beta function at 30 digits (mpmath, not scipy), the Bonferroni per-point level
``1 - (1 - L)/n``, the band ``|s - c| <= r max(|s|, c)`` around the value ``c > 0``, i.e.
``[c (1 - r), c / (1 - r)]``, and the error ``|s - c| / max(|s|, c)`` at the interval's ends.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from symq.core.claims import (
    Claim,
    Evidence,
    Inconclusive,
    Status,
    ci_error,
    equivalence_error,
)
from symq.core.errors import InvalidParameter
from symq.core.simstats import ConfidenceInterval


def t_quantile(q: float, df: int) -> float:
    """The q-quantile (q > 1/2) of Student's t with ``df`` degrees of freedom:
    ``F(t) = 1 - I_{df/(df+t^2)}(df/2, 1/2)/2`` solved for t."""
    with mpmath.workdps(30):
        def cdf(t):
            return 1 - mpmath.betainc(mpmath.mpf(df) / 2, mpmath.mpf(1) / 2, 0,
                                      df / (df + t * t), regularized=True) / 2
        return float(mpmath.findroot(lambda t: cdf(t) - q, 2.0))


def widened(ci: ConfidenceInterval, family: float, n_points: int) -> float:
    """Half-width at the Bonferroni per-point level of a family level over n_points."""
    per_point = 1 - (1 - family) / n_points
    return ci.half_width * t_quantile((1 + per_point) / 2, ci.n - 1) \
        / t_quantile((1 + ci.level) / 2, ci.n - 1)


def relative_gap(s: float, c: float) -> float:
    return abs(s - c) / max(abs(s), abs(c))


def interval(mean: float, half: float, **kwargs) -> ConfidenceInterval:
    return ConfidenceInterval(mean=mean, half_width=half, level=0.99, n=20,
                              method="batch_means", **kwargs)


def test_t_quantile_is_right():
    assert t_quantile(0.975, 19) == pytest.approx(2.093024054, abs=1e-8)  # printed tables


def test_holds_when_the_widened_interval_lies_inside_the_band():
    c, r, n = 10.0, 0.05, 3
    ci = interval(10.05, 0.1)
    h = widened(ci, 0.95, n)
    assert c * (1 - r) < ci.mean - h and ci.mean + h < c / (1 - r)  # inside the band
    error = equivalence_error(relative=r, n_points=n)(c, ci)
    expected = max(relative_gap(ci.mean - h, c), relative_gap(ci.mean + h, c))
    assert error == pytest.approx(expected, rel=1e-9)
    assert error <= r
    assert error.resolution == pytest.approx(h / c, rel=1e-9)


def test_fails_when_the_widened_interval_lies_outside_the_band():
    c, r, n = 10.0, 0.05, 4
    ci = interval(11.0, 0.2)
    h = widened(ci, 0.95, n)
    low = ci.mean - h
    assert low > c / (1 - r)  # wholly above the band
    error = equivalence_error(relative=r, n_points=n)(c, ci)
    assert error == pytest.approx(relative_gap(low, c), rel=1e-9)
    assert error > r


def test_inconclusive_when_the_interval_straddles_the_edge_with_the_run_that_decides():
    c, r = 10.0, 0.05
    ci = interval(10.5, 0.1, run_length=100_000)
    h = widened(ci, 0.95, 1)
    high = c / (1 - r) - c  # the band's upper edge for a - b
    assert ci.mean - c - h < high < ci.mean - c + h
    with pytest.raises(Inconclusive) as info:
        equivalence_error(relative=r)(c, ci)
    # the estimate lies inside the band: the interval must shrink to its distance to the edge,
    # and the half-width shrinks as 1/sqrt(run length) (with compare's margin of 1.5)
    needed = 1.5 * 100_000 * (h / (high - (ci.mean - c))) ** 2
    step = 10 ** (math.floor(math.log10(needed)) - 1)
    assert f"n_jobs = {math.ceil(needed / step) * step:,}" in str(info.value)


def test_an_underpowered_run_no_longer_holds_a_false_claim():
    # the Lee-Longton case: the value is 6% off, the run is too short to tell
    truth, claimed = 10.0, 10.6
    ci = interval(truth, 0.7)
    assert ci_error(ci, claimed) <= 1  # the old rule: "holds"
    with pytest.raises(Inconclusive):
        equivalence_error(relative=0.02)(claimed, ci)
    long_run = interval(truth, 0.05)
    assert equivalence_error(relative=0.02)(claimed, long_run) > 0.02  # fails


def test_the_family_level_widens_every_interval():
    c, r = 10.0, 0.02
    ci = interval(10.1, 0.09)
    assert equivalence_error(relative=r, n_points=1)(c, ci) <= r
    h = widened(ci, 0.95, 50)
    assert ci.mean + h > c / (1 - r)  # at the Bonferroni level of 50 points it reaches out
    with pytest.raises(Inconclusive):
        equivalence_error(relative=r, n_points=50)(c, ci)


def test_symmetric_in_the_sides_and_absolute_tolerance():
    ci = interval(2.0, 0.01)
    error = equivalence_error(relative=0.01)
    assert error(2.01, ci) == error(ci, 2.01)
    h = widened(ci, 0.95, 1)
    absolute = equivalence_error(absolute=0.05)
    assert absolute.units == "absolute" and absolute.tolerance == 0.05
    assert absolute(2.01, ci) == pytest.approx(0.01 + h, rel=1e-9)


def test_a_doubtful_interval_is_inconclusive():
    ci = interval(10.0, 0.01, doubt="batch means correlated at lag 1")
    with pytest.raises(Inconclusive, match="correlated"):
        equivalence_error(relative=0.05)(10.0, ci)


@pytest.mark.parametrize("kwargs, name", [
    ({}, "relative"), ({"relative": -0.1}, "relative"), ({"relative": math.inf}, "relative"),
    ({"absolute": "1"}, "absolute"), ({"relative": 0.1, "n_points": 0}, "n_points"),
    ({"relative": 0.1, "level": 1.0}, "level")])
def test_bad_arguments_are_refused_by_name(kwargs, name):
    with pytest.raises(InvalidParameter) as info:
        equivalence_error(**kwargs)
    assert info.value.name == name


def test_a_claim_states_the_tolerance_units_and_resolution():
    cis = {1: interval(1.001, 0.002), 2: interval(2.0, 0.004)}
    error = equivalence_error(relative=0.01, n_points=2)
    claim = Claim("c", "test", "value = simulation", lambda p: float(p["k"]),
                  lambda p: cis[p["k"]], [{"k": 1}, {"k": 2}], tolerance=error.tolerance,
                  error=error, evidence=Evidence.SIMULATION)
    verdict = claim.check()
    assert verdict.status is Status.HOLDS
    assert verdict.units == "relative"
    resolution = max(widened(cis[k], 0.95, 2) / k for k in cis)
    assert f"detects differences >= {100 * resolution:.2g}%" in verdict.detail
    assert all(o.status(verdict.tolerance) is Status.HOLDS for o in verdict.points)

    short = Claim("c", "test", "value = simulation", lambda p: 1.0,
                  lambda p: interval(1.0, 0.02, run_length=10_000), [{}],
                  tolerance=0.01, error=equivalence_error(relative=0.01),
                  evidence=Evidence.SIMULATION).check()
    assert short.status is Status.INCONCLUSIVE and "n_jobs" in short.detail
