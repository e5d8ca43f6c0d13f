"""Tests of symq.window.mimd (MIMD, constant loss rate, floor; derivations/awp.md,
section "Multiplicative increase, constant losses and a floor").

Oracles: scipy brentq on the theta equation, the level-crossing equation in log scale,
quadrature of the density, and a Monte Carlo of the Lindley recursion (time averages by the
renewal-reward ratio, batch-means confidence intervals).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from symq.core.errors import InvalidParameter, StabilityError
from symq.window.mimd import MIMDFloor, mimd_theta

CASES = [
    (1.0, 5.0, 0.5, 1.0),        # theta > 2: finite variance
    (0.01, 0.1, 0.875, 10.0),    # Scalable TCP, lam (1-beta) = 0.0125 > a
    (1.0, 1.5, 0.5, 2.0),        # stable, infinite mean (theta < 1)
    (0.3, 0.31, 0.05, 1.0),      # strong decrease
]


@pytest.mark.parametrize("a,lam,beta,w_min", CASES)
def test_theta_against_brentq(a, lam, beta, w_min):
    # independent root: h(t) = lam (1 - beta^t) - a t, positive root bracketed by (tiny, lam/a]
    def h(t):
        return lam * (1 - beta ** t) - a * t

    t_lo = 1e-9
    assert h(t_lo) > 0 and h(lam / a) < 0
    ref = brentq(h, t_lo, lam / a, xtol=1e-15, rtol=1e-15)
    m = MIMDFloor(a, lam, beta, w_min)
    assert m.theta == pytest.approx(ref, rel=1e-12)
    assert m.theta == mimd_theta(a, lam, beta)
    assert m.mean_exists == (a < lam * (1 - beta))


@pytest.mark.parametrize("a,lam,beta,w_min", CASES)
def test_level_crossing_in_log_scale(a, lam, beta, w_min):
    """a f_Z(z) = lam P(z < Z <= z + delta) with Z = ln(W/w_min) (no atom at 0)."""
    m = MIMDFloor(a, lam, beta, w_min)
    delta = math.log(1 / beta)
    for z in (0.0 + 1e-9, 0.3, 1.0, 4.0):
        w = w_min * math.exp(z)
        fz = float(m.pdf(w)) * w   # density of Z
        p = float(m.cdf(w_min * math.exp(z + delta)) - m.cdf(w))
        assert a * fz == pytest.approx(lam * p, rel=1e-10)
    assert quad(lambda x: float(m.pdf(x)), w_min, np.inf)[0] == pytest.approx(1.0, rel=1e-9)
    assert float(m.cdf(w_min)) == 0.0 and float(m.pdf(0.5 * w_min)) == 0.0
    assert float(m.ccdf(3 * w_min) + m.cdf(3 * w_min)) == pytest.approx(1.0, rel=1e-15)


def test_moments_by_quadrature():
    m = MIMDFloor(1.0, 5.0, 0.5, 1.5)
    for s in (-1.0, 0.5, 1.0, 2.0):
        ref = quad(lambda x, s=s: x ** s * float(m.pdf(x)), m.w_min, np.inf, epsrel=1e-12)[0]
        assert m.moment(s) == pytest.approx(ref, rel=1e-9)
    assert m.mean() == pytest.approx(m.w_min * m.theta / (m.theta - 1), rel=1e-15)


def _lindley_time_averages(a, lam, beta, n, rng, zs):
    """Post-loss log-windows Z_n = S_n - min_{k<=n} S_k (S_0 = 0), cycle T_n ~ Exp(lam)."""
    delta = math.log(1 / beta)
    T = rng.exponential(1 / lam, size=n)
    S = np.cumsum(a * T - delta)
    Znext = S - np.minimum(np.minimum.accumulate(S), 0.0)
    Z = np.concatenate([[0.0], Znext[:-1]])      # value at the start of cycle n
    rewards = {
        "T": T,
        "W": np.exp(Z) * np.expm1(a * T) / a,     # int e^{Z(t)} dt over the cycle (w_min = 1)
        "Z": Z * T + a * T ** 2 / 2,
    }
    for z in zs:
        rewards[f"P{z}"] = np.where(Z >= z, T, np.maximum(0.0, T - (z - Z) / a))
    return rewards


def test_against_lindley_monte_carlo():
    a, lam, beta, w_min = 1.0, 5.0, 0.5, 1.0
    m = MIMDFloor(a, lam, beta, w_min)
    rng = np.random.default_rng(7)
    zs = (0.2, 0.5, 1.0)
    r = _lindley_time_averages(a, lam, beta, 1_000_000, rng, zs)
    B = 50
    Tb = r["T"].reshape(B, -1).sum(axis=1)

    def check(key, exact):
        Xb = r[key].reshape(B, -1).sum(axis=1)
        est = Xb.sum() / Tb.sum()
        se = np.std(Xb / Tb, ddof=1) / math.sqrt(B)
        assert abs(est - exact) < 4.5 * se, (key, est, exact, se)

    check("Z", 1 / m.theta)
    check("W", m.mean())
    for z in zs:
        check(f"P{z}", float(m.ccdf(w_min * math.exp(z))))


def test_infinite_mean_is_reported_not_returned():
    m = MIMDFloor(1.0, 1.5, 0.5, 2.0)      # a >= lam (1 - beta) but lam ln 2 > a
    assert m.stable and not m.mean_exists and m.theta < 1
    with pytest.raises(StabilityError, match="E\\[W\\] is infinite: tail exponent theta"):
        m.mean()
    with pytest.raises(InvalidParameter, match="parameter order="):
        m.moment(m.theta)
    assert m.moment(0.5 * m.theta) == pytest.approx(2 ** (0.5 * m.theta) * 2.0, rel=1e-14)
    assert not m.moment_exists(1.0) and m.moment_exists(0.0)


def test_unstable_raises_stability_error():
    with pytest.raises(StabilityError, match="lam=0.05 must be > a/ln\\(1/beta\\)"):
        MIMDFloor(0.01, 0.05, 0.875, 1.0)   # 0.05 < 0.01/ln(8/7) = 0.0749
    with pytest.raises(StabilityError):
        mimd_theta(1.0, 1.0 / math.log(2), 0.5)  # boundary lam = a/ln(1/beta)


@pytest.mark.parametrize("kwargs,name", [
    ({"a": -1.0, "lam": 1.0, "beta": 0.5, "w_min": 1.0}, "a"),
    ({"a": 1.0, "lam": 0.0, "beta": 0.5, "w_min": 1.0}, "lam"),
    ({"a": 1.0, "lam": 5.0, "beta": 1.5, "w_min": 1.0}, "beta"),
    ({"a": 1.0, "lam": 5.0, "beta": 0.5, "w_min": 0.0}, "w_min"),
    ({"a": 1.0, "lam": "5", "beta": 0.5, "w_min": 1.0}, "lam"),
])
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(InvalidParameter, match=f"parameter {name}="):
        MIMDFloor(**kwargs)
