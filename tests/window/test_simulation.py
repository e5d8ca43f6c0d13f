"""Tests of the exact event-sampling window simulator against closed forms and independent code.

References: moments and rate conservation (drift balances), the q-series for NewReno, MIMD with
constant rate and a floor (Z = ln(W/w_min) ~ Exp(theta)), HSTCP (RFC 3649); see derivations/awp.md.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.optimize import brentq

from symq.core.errors import InvalidParameter
from symq.core.simstats import batch_means, ratio_batch_means
from symq.window.simulation import WindowEstimate, simulate_window


def ones(w):
    return np.ones_like(w)


def close(ci, value, factor=1.5):
    """``value`` within ``factor`` half-widths (95% CI -> about 3 sigma for factor 1.5)."""
    assert abs(ci.mean - value) <= factor * ci.half_width, (str(ci), value)


def agree(ci1, ci2, factor=1.5):
    """Two independent estimates agree within ``factor`` combined half-widths."""
    gap = abs(ci1.mean - ci2.mean)
    assert gap <= factor * math.hypot(ci1.half_width, ci2.half_width), (str(ci1), str(ci2))


# ------------------------------------------------------------------------------ AIMD, const lam

@pytest.mark.parametrize("path", ["power_law", "tabulated"])
def test_aimd_constant_rate_mean(path):
    alpha, lam, beta = 2.0, 0.1, 0.7
    exact = alpha / (lam * (1 - beta))
    if path == "power_law":
        est = simulate_window(None, None, None, 400_000, power_law=(alpha, 0, lam, 0, beta), rng=3)
    else:
        est = simulate_window(lambda w: alpha * ones(w), lambda w: lam * ones(w),
                              lambda w: beta * w, 400_000, rng=3)
    assert isinstance(est, WindowEstimate) and not est.escaped
    close(est.mean_window, exact)
    # E[W^2] = 2 (alpha/lam)^2 / ((1-beta)(1-beta^2))  (AIMD constant rate, q-series)
    close(est.mean_square_window, 2 * (alpha / lam) ** 2 / ((1 - beta) * (1 - beta**2)))
    close(est.loss_rate, lam)
    # PASTA: the pre-loss (Palm) mean is the time-stationary mean
    close(est.pre_loss_mean, exact)


def test_tabulated_matches_exact_path_cycle_by_cycle():
    # same seed: the tabulated path reproduces the exact one (interpolation exact for power laws)
    kw = dict(rng=11, keep_pre_loss=1000)
    for alpha, k, gamma, l, beta in [(1.0, 0, 1e-3, 1, 0.5), (0.01, 1, 1e-4, 1, 0.875),
                                     (0.2, 0.8, 1e-4, 1, 0.7)]:
        ex = simulate_window(None, None, None, 30_000, power_law=(alpha, k, gamma, l, beta), **kw)
        tb = simulate_window(lambda w, alpha=alpha, k=k: alpha * w**k,
                             lambda w, gamma=gamma, l=l: gamma * w**l,
                             lambda w, beta=beta: beta * w, 30_000, **kw)
        assert tb.mean_window.mean == pytest.approx(ex.mean_window.mean, rel=1e-8)
        assert tb.mean_square_window.mean == pytest.approx(ex.mean_square_window.mean, rel=1e-8)
        np.testing.assert_allclose(tb.pre_loss_sample, ex.pre_loss_sample, rtol=1e-8)


# ------------------------------------------------------------------------------ NewReno

def newreno_mean_series(p, beta=0.5, alpha=1.0, terms=80):
    """E[W] = sqrt(2 alpha/(pi p)) / ((1-beta) sum_j c_j beta^j), q = beta^2 (q-series)."""
    with mpmath.workdps(30):  # the global precision is restored: other tests check it
        q = mpmath.mpf(beta) ** 2
        qinf = mpmath.qp(q, q)
        total = mpmath.mpf(0)
        for j in range(terms):
            c = (-1) ** j * q ** (j * (j + 1) // 2) / (mpmath.qp(q, q, j) * qinf)
            total += c * mpmath.mpf(beta) ** j
        return float(mpmath.sqrt(2 * alpha / (mpmath.pi * p)) / ((1 - beta) * total))


def test_newreno_moments_and_loss_identity():
    p = 1e-3
    est = simulate_window(None, None, None, 1_000_000, power_law=(1.0, 0, p, 1, 0.5), rng=5)
    close(est.mean_square_window, 2 / p)                       # E[W^2] = alpha/(gamma(1-beta))
    ref = newreno_mean_series(p)
    assert ref * math.sqrt(p) == pytest.approx(1.31, abs=0.01)   # Ott-Kemperman-Mathis
    close(est.mean_window, ref)
    # E[lam(W)] = p E[W] = loss rate (1/E_0[T])
    gap = abs(est.loss_rate.mean - p * est.mean_window.mean)
    assert gap <= 1.5 * (est.loss_rate.half_width + p * est.mean_window.half_width)


def test_newreno_tabulated_with_observables():
    p = 2e-3
    est = simulate_window(ones, lambda w: p * w, lambda w: 0.5 * w, 300_000, rng=6,
                          time_averages={"lam": lambda w: p * w, "w2": lambda w: w * w})
    assert est.method == "tabulated" and est.quadrature_error < 1e-8
    close(est.mean_square_window, 2 / p)
    close(est.mean_window, newreno_mean_series(p))
    # observables computed through the tables agree with the built-in moments
    assert est.time_averages["w2"].mean == pytest.approx(est.mean_square_window.mean, rel=1e-9)
    assert est.time_averages["lam"].mean == pytest.approx(p * est.mean_window.mean, rel=1e-9)


def test_power_law_path_observables_and_protocol_object():
    class PowerLaw:  # duck-typed like WindowProtocol.power_law()
        alpha, k, gamma, l, beta = 1.0, 0.0, 2e-3, 1.0, 0.5

    p = PowerLaw.gamma
    est = simulate_window(None, None, None, 100_000, power_law=PowerLaw(), rng=4,
                          time_averages={"lam": lambda w: p * w, "a": ones})
    assert est.method == "power_law"
    assert est.time_averages["lam"].mean == pytest.approx(p * est.mean_window.mean, rel=1e-9)
    assert est.time_averages["a"].mean == pytest.approx(1.0, rel=1e-12)


# ------------------------------------------------------------------------------ Scalable (MIMD)

@pytest.mark.parametrize("path", ["power_law", "tabulated"])
def test_scalable_mean(path):
    a, p, beta = 0.01, 1e-4, 0.875
    if path == "power_law":
        est = simulate_window(None, None, None, 400_000, power_law=(a, 1, p, 1, beta), rng=7)
    else:
        est = simulate_window(lambda w: a * w, lambda w: p * w, lambda w: beta * w, 400_000, rng=7)
    close(est.mean_window, a / (p * math.log(1 / beta)))
    close(est.mean_square_window, a**2 / (p**2 * (1 - beta) * math.log(1 / beta)))


# ------------------------------------------------------------------------- MIMD, const lam, floor

@pytest.mark.parametrize("path", ["power_law", "tabulated"])
def test_mimd_constant_rate_with_floor(path):
    a, lam, beta, w_min = 0.01, 0.05, 0.5, 2.0
    theta = brentq(lambda t: a * t - lam * (1 - beta**t), 1e-6, 100.0)
    assert theta > 2
    if path == "power_law":
        est = simulate_window(None, None, None, 400_000, power_law=(a, 1, lam, 0, beta),
                              w_min=w_min, rng=8)
    else:
        est = simulate_window(lambda w: a * w, lambda w: lam * ones(w), lambda w: beta * w,
                              400_000, w_min=w_min, rng=8)
    close(est.mean_window, w_min * theta / (theta - 1))
    close(est.mean_square_window, w_min**2 * theta / (theta - 2))
    # PASTA (constant loss rate): pre-loss windows have the time-stationary law
    # P(W > x) = (x/w_min)^-theta
    x = 1.5 * w_min
    ci = batch_means((est.pre_loss_sample > x).astype(float), n_batches=30)
    close(ci, (x / w_min) ** (-theta))


# ------------------------------------------------------------------------------ HighSpeed TCP

def hs_b(w):
    w = np.asarray(w, dtype=float)
    b = (0.1 - 0.5) * (np.log(np.maximum(w, 38.0)) - math.log(38)) / (
        math.log(83000) - math.log(38)) + 0.5
    return np.maximum(b, 0.1)


def hs_a(w):
    w = np.asarray(w, dtype=float)
    b = hs_b(w)
    big = 2 * w**2 * (0.078 / w**1.2) * b / (2 - b)
    return np.where(w > 38, big, 1.0)


def hs_d(w):
    return (1 - hs_b(w)) * w


def test_highspeed_rate_conservation():
    p_loss = 1e-5

    def lam(w):
        return p_loss * w

    est = simulate_window(hs_a, lam, hs_d, 400_000, rng=9,
                          time_averages={"a": hs_a, "lam": lam,
                                         "loss_drift": lambda w: lam(w) * (w - hs_d(w))})
    ea, eb = est.time_averages["a"], est.time_averages["loss_drift"]
    # E[a(W)] = E[lam(W)(W - d(W))]  (mean drift balance)
    assert abs(ea.mean - eb.mean) <= 1.5 * (ea.half_width + eb.half_width)
    # E[lam(W)] = loss rate
    el = est.time_averages["lam"]
    assert abs(el.mean - est.loss_rate.mean) <= 1.5 * (el.half_width + est.loss_rate.half_width)
    assert est.quadrature_error < 1e-6


# ------------------------------------------------------------------------------ cap

def python_newreno_with_cap(p, w_max, n, seed, batches=30):
    """Independent pure-python exact simulation of NewReno (beta=1/2) with a cap."""
    rng = np.random.default_rng(seed)
    e1 = rng.exponential(size=n)
    e2 = rng.exponential(size=n)
    T = np.empty(n)
    A = np.empty(n)
    C = np.empty(n)
    y = 1.0
    for i in range(n):
        # hazard from y: p (w^2 - y^2)/2; reach cap if E > p(w_max^2 - y^2)/2
        need = p * (w_max * w_max - y * y) / 2
        if e1[i] < need:
            w = math.sqrt(y * y + 2 * e1[i] / p)
            hold = 0.0
        else:
            w = w_max
            hold = e2[i] / (p * w_max)
        T[i] = (w - y) + hold
        A[i] = (w * w - y * y) / 2 + w_max * hold
        C[i] = hold
        y = w / 2
    warm = n // 10
    m = (n - warm) // batches * batches
    T, A, C = T[-m:], A[-m:], C[-m:]
    return ratio_batch_means(A, T, batches), ratio_batch_means(C, T, batches)


@pytest.mark.parametrize("path", ["power_law", "tabulated"])
def test_cap_against_independent_simulation(path):
    p, w_max = 0.01, 14.0
    if path == "power_law":
        est = simulate_window(None, None, None, 300_000, power_law=(1, 0, p, 1, 0.5),
                              w_max=w_max, rng=10)
    else:
        est = simulate_window(ones, lambda w: p * w, lambda w: 0.5 * w, 300_000, w_max=w_max,
                              rng=10)
    ref_mean, ref_cap = python_newreno_with_cap(p, w_max, 200_000, seed=99)
    assert 0.05 < ref_cap.mean < 0.9            # the cap matters
    agree(est.mean_window, ref_mean)
    agree(est.time_fraction_at_cap, ref_cap)
    assert est.pre_loss_sample.max() == w_max


# ------------------------------------------------------------------------------ unstable

def test_mimd_constant_rate_below_threshold_escapes():
    a, beta = 0.01, 0.875
    lam = 0.5 * a / math.log(1 / beta)
    est = simulate_window(None, None, None, 100_000, power_law=(a, 1, lam, 0, beta), rng=1)
    assert est.escaped and est.mean_window is None and "escaped" in est.escape_reason
    est = simulate_window(lambda w: a * w, lambda w: lam * ones(w), lambda w: beta * w, 100_000,
                          rng=1)
    assert est.escaped and est.mean_window is None
    # above the threshold and without a floor the window collapses to 0
    est = simulate_window(None, None, None, 100_000, power_law=(a, 1, 3 * lam * 2, 0, beta), rng=1)
    assert est.escaped and "collapsed" in est.escape_reason


def test_negative_m_escapes():
    # a = w^2, lam = w^0.5: m = -0.5 < 0, Lambda(inf) < inf
    est = simulate_window(None, None, None, 100_000, power_law=(1.0, 2, 1.0, 0.5, 0.5), rng=2)
    assert est.escaped and est.n_losses < 100_000
    est = simulate_window(lambda w: w**2, lambda w: w**0.5, lambda w: 0.5 * w, 100_000, rng=2)
    assert est.escaped and est.loss_rate is None


# ------------------------------------------------------------------------------ reproducibility

def test_same_seed_same_result_and_progress():
    kw = dict(power_law=(1.0, 0, 1e-3, 1, 0.5), rng=123)
    r1 = simulate_window(None, None, None, 50_000, **kw)
    r2 = simulate_window(None, None, None, 50_000, **kw)
    r3 = simulate_window(None, None, None, 50_000, progress=True, **kw)
    assert r1.mean_window == r2.mean_window == r3.mean_window
    np.testing.assert_array_equal(r1.pre_loss_sample, r3.pre_loss_sample)
    t1 = simulate_window(hs_a, lambda w: 1e-5 * w, hs_d, 20_000, rng=4)
    t2 = simulate_window(hs_a, lambda w: 1e-5 * w, hs_d, 20_000, rng=4, progress=True)
    assert t1.mean_window == t2.mean_window and t1.mean_square_window == t2.mean_square_window
    r4 = simulate_window(None, None, None, 50_000, power_law=(1.0, 0, 1e-3, 1, 0.5), rng=124)
    assert r4.mean_window != r1.mean_window


def test_pre_loss_sample_memory_bounded():
    est = simulate_window(None, None, None, 50_000, power_law=(1.0, 0, 1e-3, 1, 0.5), rng=1,
                          keep_pre_loss=500)
    assert est.pre_loss_sample.shape == (500,)
    est = simulate_window(None, None, None, 50_000, power_law=(1.0, 0, 1e-3, 1, 0.5), rng=1,
                          keep_pre_loss=0)
    assert est.pre_loss_sample is None


# ------------------------------------------------------------------------------ bad input

NR = dict(power_law=(1.0, 0, 1e-3, 1, 0.5))


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_losses=0, **NR), "n_losses"),
    (dict(n_losses=100, **NR), "n_losses"),
    (dict(n_losses=1.5, **NR), "n_losses"),
    (dict(n_batches=1, **NR), "n_batches"),
    (dict(level=1.5, **NR), "level"),
    (dict(warmup=1.0, **NR), "warmup"),
    (dict(w_min=-1.0, **NR), "w_min"),
    (dict(w_min=5.0, w_max=2.0, **NR), "w_max"),
    (dict(w0=-1.0, **NR), "w0"),
    (dict(rng="seed", **NR), "rng"),
    (dict(power_law=(1.0, 0, 1e-3, 1, 1.5)), "power_law.beta"),
    (dict(power_law=(0.0, 0, 1e-3, 1, 0.5)), "power_law.alpha"),
    (dict(power_law=(1.0, 0, 1e-3, 1)), "power_law"),
    (dict(grid=(10.0, 1.0), **NR), "grid"),
    (dict(time_averages={"x": 3}, **NR), "time_averages['x']"),
    (dict(keep_pre_loss=-1, **NR), "keep_pre_loss"),
])
def test_bad_input_names_parameter(kwargs, name):
    kwargs.setdefault("n_losses", 10_000)
    with pytest.raises(InvalidParameter) as info:
        simulate_window(None, None, None, **kwargs)
    assert info.value.name == name
    assert name in str(info.value)


def test_bad_callables_name_parameter():
    lam = lambda w: 1e-3 * w  # noqa: E731
    with pytest.raises(InvalidParameter, match="parameter a="):
        simulate_window(None, lam, lambda w: 0.5 * w, 10_000)
    with pytest.raises(InvalidParameter, match="parameter lam="):
        simulate_window(ones, lambda w: -ones(w), lambda w: 0.5 * w, 10_000)
    with pytest.raises(InvalidParameter, match="parameter d="):
        simulate_window(ones, lam, lambda w: 2 * w, 10_000)
    with pytest.raises(InvalidParameter, match="parameter a="):
        simulate_window(lambda w: w - 1.0, lam, lambda w: 0.5 * w, 10_000)
