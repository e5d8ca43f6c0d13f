"""Every window law follows the distribution protocol of symq.laws.

``PowerLawWindow``, ``MIMDFloor``, ``WindowSolution`` and ``WindowLaw`` are checked against
closed forms written out here (AIMD with a constant loss rate, the Pareto law of MIMD with a
floor, NewReno's Ott-Kemperman-Mathis constant), against their own cdf (quantiles), by sampling
(a mean within a confidence interval) and through scipy's ``make_distribution``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.laws import Distribution
from symq.window import (
    MIMDFloor,
    PowerLawWindow,
    WindowLaw,
    WindowSolution,
    newreno,
    solve_protocol,
    solve_window,
)

ALPHA, LAM, BETA = 1.0, 0.1, 0.5
#: AIMD with a constant loss rate: E[W^n] = n! (alpha/lam)^n / prod_{k<=n} (1 - beta^k)
AIMD_MEAN = ALPHA / (LAM * (1 - BETA))
AIMD_SECOND = 2 * (ALPHA / LAM) ** 2 / ((1 - BETA) * (1 - BETA ** 2))
MIMD = MIMDFloor(1.0, 5.0, 0.5, 2.0)


def _laws():
    theta = MIMD.theta
    return {
        "power law": (PowerLawWindow(ALPHA, 0, LAM, 0, BETA), AIMD_MEAN,
                      AIMD_SECOND - AIMD_MEAN ** 2),
        "MIMD floor": (MIMD, 2.0 * theta / (theta - 1),
                       4.0 * theta / (theta - 2) - (2.0 * theta / (theta - 1)) ** 2),
        "numeric": (solve_window(lambda w: ALPHA + 0 * w, lambda w: LAM + 0 * w,
                                 lambda w: BETA * w, rtol=1e-8),
                    AIMD_MEAN, AIMD_SECOND - AIMD_MEAN ** 2),
        "protocol": (solve_protocol(newreno(1e-2)), 1.3098332746580208 / 0.1, None),
    }


LAWS = _laws()


def test_the_types_implement_the_protocol():
    for cls in (PowerLawWindow, MIMDFloor, WindowSolution, WindowLaw):
        assert issubclass(cls, Distribution)
    for name, (law, _, _) in LAWS.items():
        assert callable(law.mean) and callable(law.variance), name


@pytest.mark.parametrize("name", LAWS)
def test_mean_and_variance_are_methods_with_the_closed_form_values(name):
    law, mean, variance = LAWS[name]
    assert law.mean() == pytest.approx(mean, rel=1e-7)
    assert float(law.moment(1)) == pytest.approx(mean, rel=1e-7)
    if variance is not None:
        assert law.variance() == pytest.approx(variance, rel=1e-6)
        assert law.moment(2, "central") == pytest.approx(variance, rel=1e-6)


@pytest.mark.parametrize("name", LAWS)
def test_quantiles_invert_the_cdf(name):
    law = LAWS[name][0]
    p = np.array([0.05, 0.5, 0.95])
    x = np.asarray(law.icdf(p), dtype=float)
    assert np.all(np.diff(x) > 0)
    assert np.asarray(law.cdf(x), dtype=float) == pytest.approx(p, abs=1e-9)
    low, high = law.support()
    assert low <= x[0] and x[-1] <= high


@pytest.mark.parametrize("name", LAWS)
@pytest.mark.parametrize("p", [-0.1, 1.5, math.nan, [0.5, 2.0]])
def test_quantiles_refuse_a_p_outside_the_unit_interval(name, p):
    with pytest.raises(InvalidParameter) as info:
        LAWS[name][0].icdf(p)
    assert info.value.name == "p"


@pytest.mark.parametrize("name", LAWS)
def test_quantiles_at_the_ends_are_the_ends_of_the_support(name):
    law = LAWS[name][0]
    low, high = law.support()
    x = np.asarray(law.icdf([0.0, 1.0]), dtype=float)
    assert x[0] == pytest.approx(low, rel=1e-12, abs=1e-300)
    assert x[1] == pytest.approx(high, rel=1e-12) or x[1] == high


@pytest.mark.parametrize("name", ["power law", "MIMD floor", "numeric"])
def test_samples_have_the_mean_of_the_law(name):
    law, mean, variance = LAWS[name]
    n = 400
    draws = np.asarray(law.sample(n, rng=7), dtype=float)
    assert draws.shape == (n,)
    assert np.array_equal(draws, law.sample(n, rng=7))          # same seed, same sample
    if name == "MIMD floor":            # theta < 2 would give no variance; here theta > 2
        assert MIMD.theta > 2
    half_width = 4.0 * math.sqrt(variance / n)
    assert abs(draws.mean() - mean) < half_width


@pytest.mark.parametrize("name", ["power law", "MIMD floor"])
def test_scipy_adapter_gives_the_same_law(name):
    law, mean, _ = LAWS[name]
    dist = law.to_scipy()
    assert float(dist.mean()) == pytest.approx(mean, rel=1e-7)
    x = float(law.icdf(0.3))
    assert float(dist.cdf(x)) == pytest.approx(0.3, abs=1e-9)
