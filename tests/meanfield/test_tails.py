"""Power-law PH family and the tail-regime scan (Bramson, Lu, Prabhakar 2013)."""

from __future__ import annotations

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.laws import ph_moments
from symq.meanfield.tails import (
    classify_levels,
    powerlaw_hyperexponential,
    predicted_regime,
    tail_regime_scan,
)


@pytest.mark.parametrize("beta", [1.5, 2.0, 3.0])
def test_powerlaw_family_ccdf_slope(beta: float) -> None:
    # fit the log-log slope of the ccdf in the middle of the scale range: close to -beta
    alpha, A = powerlaw_hyperexponential(beta, 13)
    rates = -np.diag(A)
    x = np.geomspace(rates.max() ** -1 * 4 ** 3, rates.min() ** -1 / 4 ** 3, 40)
    ccdf = np.array([np.sum(alpha * np.exp(-rates * t)) for t in x])
    slope = np.polyfit(np.log(x), np.log(ccdf), 1)[0]
    assert slope == pytest.approx(-beta, rel=0.05)
    assert ph_moments((alpha, A), 1)[0] == pytest.approx(1.0, rel=1e-12)


def test_predicted_regime_follows_d_over_d_minus_one() -> None:
    assert predicted_regime(2, 3.0) == "doubly exponential"
    assert predicted_regime(2, 2.0) == "exponential"
    assert predicted_regime(2, 1.75) == "power law"
    assert predicted_regime(3, 1.75) == "doubly exponential"   # threshold 3/2


def test_classify_levels_rules() -> None:
    assert classify_levels([5, 9, 9, 10]) == "doubly exponential"
    assert classify_levels([6, 9, 17, 45, 149]) == "power law"
    assert classify_levels([9, 10, 12, 13, 15]) == "undecided"   # linear growth
    assert classify_levels([3, 4]) == "undecided"


def test_scan_separates_regimes_at_d_two() -> None:
    # same d, exponents on both sides of d/(d-1) = 2
    light = tail_regime_scan(2, 0.5, 3.0, phases=(5, 7, 9, 11))
    heavy = tail_regime_scan(2, 0.5, 1.5, phases=(5, 7, 9, 11))
    assert light.regime == "doubly exponential" == light.predicted
    assert heavy.regime == "power law" == heavy.predicted
    # the heavy case needs more and more levels, and its E[T] keeps growing with the scale
    assert heavy.levels[-1] > 5 * light.levels[-1]
    assert all(b > a for a, b in zip(heavy.ET, heavy.ET[1:]))


def test_scan_bad_input() -> None:
    with pytest.raises(InvalidParameter, match="parameter d"):
        tail_regime_scan(1, 0.5, 3.0)
    with pytest.raises(InvalidParameter, match="phases"):
        tail_regime_scan(2, 0.5, 3.0, phases=(5, 7))
    with pytest.raises(InvalidParameter, match="beta"):
        powerlaw_hyperexponential(1.0, 5)
