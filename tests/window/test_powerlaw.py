"""Tests of symq.window.powerlaw against independent computations.

Oracles: closed-form moments from the drift balances (exact formulas written out here), the
level-crossing equation integrated by scipy quad, rate-conservation identities, mpmath at
50 digits, an exact event-sampling Monte Carlo and Ott-Kemperman-Mathis' 1.31.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import signal
from scipy.integrate import quad

from symq.core.errors import InvalidParameter, StabilityError
from symq.window.powerlaw import (
    OKM_CONSTANT,
    PowerLawWindow,
    mean_window,
    mean_window_newreno,
)

AIMD_CONST = {"alpha": 1.3, "k": 0, "gamma": 0.7, "l": 0, "beta": 0.6}
NEWRENO = {"alpha": 1.0, "k": 0, "gamma": 0.01, "l": 1, "beta": 0.5}
SCALABLE = {"alpha": 0.01, "k": 1, "gamma": 1e-4, "l": 1, "beta": 0.875}
HSTCP_LIKE = {"alpha": 0.156, "k": 0.8, "gamma": 1e-6, "l": 1, "beta": 0.9}
SUPERLINEAR = {"alpha": 1.0, "k": 1.5, "gamma": 0.01, "l": 1, "beta": 0.7}


def _quad_inf(fun, scale, lower=0.0):
    """int_lower^inf fun with breakpoints around the scale of the law."""
    pts = [lower] + [scale * 2.0 ** i for i in range(-8, 9) if scale * 2.0 ** i > lower]
    total = sum(quad(fun, a, b, limit=200, epsabs=0, epsrel=1e-12)[0]
                for a, b in itertools.pairwise(pts))
    return total + quad(fun, pts[-1], np.inf, limit=200)[0]


# ---------------------------------------------------------------- closed forms (drift balances)
@pytest.mark.parametrize("alpha,lam,beta", [(1.3, 0.7, 0.6), (1.0, 0.5, 0.5), (2.0, 0.1, 0.875)])
def test_aimd_constant_rate_all_moments(alpha, lam, beta):
    w = PowerLawWindow(alpha, 0, lam, 0, beta)
    assert w.mean() == pytest.approx(alpha / (lam * (1 - beta)), rel=1e-13)
    for n in range(1, 6):
        exact = math.factorial(n) * (alpha / lam) ** n / math.prod(1 - beta ** j
                                                                    for j in range(1, n + 1))
        assert w.moment(n) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("alpha,gamma,beta", [(1.0, 0.01, 0.5), (2.0, 3e-4, 0.7), (0.5, 1.0, 0.2)])
def test_aimd_proportional_second_moment(alpha, gamma, beta):
    w = PowerLawWindow(alpha, 0, gamma, 1, beta)
    assert w.second_moment() == pytest.approx(alpha / (gamma * (1 - beta)), rel=1e-12)


@pytest.mark.parametrize("a,gamma,beta", [(0.01, 1e-4, 0.875), (0.5, 0.02, 0.5)])
def test_mimd_proportional_moments(a, gamma, beta):
    w = PowerLawWindow(a, 1, gamma, 1, beta)
    L = math.log(1 / beta)
    assert w.mean() == pytest.approx(a / (gamma * L), rel=1e-12)
    assert w.second_moment() == pytest.approx(a ** 2 / (gamma ** 2 * (1 - beta) * L), rel=1e-12)


@pytest.mark.parametrize("case", [AIMD_CONST, NEWRENO, SCALABLE, HSTCP_LIKE, SUPERLINEAR])
def test_rate_conservation_identities(case):
    w = PowerLawWindow(**case)
    al, k, g, l, b = case["alpha"], case["k"], case["gamma"], case["l"], case["beta"]
    # mean drift balance E[a(W)] = (1-beta) E[lam(W) W]
    assert al * w.moment(k) == pytest.approx((1 - b) * g * w.moment(l + 1), rel=1e-12)
    # log drift balance E[a(W)/W] = ln(1/beta) E[lam(W)]
    assert al * w.moment(k - 1) == pytest.approx(math.log(1 / b) * g * w.moment(l), rel=1e-12)
    # loss rate E[lam(W)] = 1/E0[T]
    assert w.loss_rate() == pytest.approx(g * w.moment(l), rel=1e-12)
    assert w.mean_cycle() * w.loss_rate() == pytest.approx(1.0, rel=1e-14)
    assert w.throughput(rtt=0.1) == pytest.approx(10 * w.mean(), rel=1e-14)


# ---------------------------------------------------------------- density and distribution
@pytest.mark.parametrize("case", [AIMD_CONST, NEWRENO, SCALABLE, HSTCP_LIKE, SUPERLINEAR])
def test_pdf_integrates_to_one_and_moments_by_quadrature(case):
    w = PowerLawWindow(**case)
    mu = w.mean()

    def f(x):
        return float(w.pdf(x))

    # the far left, where the density is super-exponentially small (and every evaluation needs
    # mpmath), carries negligible mass: start there (checked with the cdf and the moment 1/2)
    lo = mu / 64
    while float(w.cdf(lo)) > 1e-14:
        lo /= 2
    assert _quad_inf(f, mu, lo) == pytest.approx(1.0, abs=1e-9)
    assert _quad_inf(lambda x: x * f(x), mu, lo) == pytest.approx(mu, rel=1e-9)
    assert _quad_inf(lambda x: x ** 0.5 * f(x), mu, lo) == pytest.approx(w.moment(0.5), rel=1e-9)
    assert w.cdf(np.inf) == 1.0 and w.cdf(0.0) == 0.0 and w.ccdf(0.0) == 1.0
    for x in (0.3 * mu, mu, 2.5 * mu):
        below = quad(f, 0, x, limit=200, epsabs=0, epsrel=1e-12)[0]
        assert float(w.cdf(x)) == pytest.approx(below, rel=1e-9)
        assert float(w.ccdf(x)) == pytest.approx(1 - below, rel=1e-9)


def test_negative_moments_including_gamma_poles():
    # NewReno: s = -3 gives e = s+1 = -2, e/m = -1 (a pole of Gamma(1+e/m), removed by the sum)
    for case, s in ((NEWRENO, -3.0), (NEWRENO, -1.0), (AIMD_CONST, -2.0), (AIMD_CONST, -1.0),
                    (SCALABLE, -0.5)):
        w = PowerLawWindow(**case)
        ref = _quad_inf(lambda x, w=w, s=s: x ** s * float(w.pdf(x)), w.mean())
        assert w.moment(s) == pytest.approx(ref, rel=1e-8)
    w = PowerLawWindow(**AIMD_CONST)
    assert w.moment(0.0) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("case", [NEWRENO, SCALABLE, HSTCP_LIKE, SUPERLINEAR])
def test_pdf_matches_mpmath_50_digits(case):
    w = PowerLawWindow(**case)
    xs = w.mean() * np.logspace(-2, 1, 19)
    got = w.pdf(xs)
    with mp.workdps(50):
        ref = np.array([float(w.pdf_mp(x, dps=50)) for x in xs])
    assert np.all(ref > 0)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=0)


def test_pdf_mpmath_fallback_q_close_to_one():
    # beta = 0.99, m = 1: 70 digits cancel in the q-series; float alone is hopeless
    w = PowerLawWindow(1.0, 0, 0.01, 0, 0.99)
    assert w.mean() == pytest.approx(1.0 / (0.01 * 0.01), rel=1e-12)
    xs = np.array([0.7e4, 1.2e4])
    ref = np.array([float(w.pdf_mp(x, dps=30)) for x in xs])
    np.testing.assert_allclose(w.pdf(xs), ref, rtol=1e-10)
    # level crossing at one point (constant rate: a f(w) = lam P(w < W <= w/beta))
    x = 1.0e4
    assert float(w.pdf(x)) == pytest.approx(0.01 * float(w.cdf(x / 0.99) - w.cdf(x)), rel=1e-8)


@pytest.mark.parametrize("case", [AIMD_CONST, NEWRENO, SCALABLE])
def test_level_crossing_equation_pointwise(case):
    """a(w) f(w) = int_w^{w/beta} lam(u) f(u) du (level crossing), quad on the float pdf."""
    w = PowerLawWindow(**case)
    al, k, g, l, b = case["alpha"], case["k"], case["gamma"], case["l"], case["beta"]
    for x in w.mean() * np.array([0.1, 0.4, 1.0, 1.7, 3.0]):
        lhs = al * x ** k * float(w.pdf(x))
        rhs = quad(lambda u: g * u ** l * float(w.pdf(u)), x, x / b, epsabs=0, epsrel=1e-12,
                   limit=200)[0]
        assert lhs == pytest.approx(rhs, rel=1e-9)


def test_pdf_edges_and_shapes():
    w = PowerLawWindow(**NEWRENO)
    assert w.pdf([-1.0, 0.0, np.inf]).tolist() == [0.0, 0.0, 0.0]
    assert w.pdf(np.ones((2, 3))).shape == (2, 3)
    assert w.pdf(1e-12) == 0.0  # provably < 1e-320
    assert w.pre_loss_cdf([0.0, np.inf]).tolist() == [0.0, 1.0]
    assert w.cdf(1e-12) == 0.0


# ---------------------------------------------------------------- pre-loss (Palm) law
def test_pre_loss_law_against_monte_carlo_and_exact_mean():
    case = NEWRENO
    w = PowerLawWindow(**case)
    al, g, b, m = case["alpha"], case["gamma"], case["beta"], 2.0
    q = b ** m
    # E[W_pre^m] = (alpha m/gamma) / (1 - q)  (mean of the hypoexponential series)
    assert w.pre_loss_moment(m) == pytest.approx(al * m / g / (1 - q), rel=1e-13)
    rng = np.random.default_rng(12345)
    n = 200_000
    E = rng.exponential(size=(n, 30))
    V = (al * m / g) * (E * q ** np.arange(30)).sum(axis=1)
    Wpre = np.sqrt(V)
    assert w.pre_loss_moment(1.0) == pytest.approx(Wpre.mean(), abs=5 * Wpre.std() / math.sqrt(n))
    for x in (5.0, 12.0, 20.0, 30.0):
        p_emp = float(np.mean(Wpre <= x))
        p = float(w.pre_loss_cdf(x))
        assert abs(p - p_emp) < 5 * math.sqrt(p * (1 - p) / n) + 1e-4
        assert p == pytest.approx(float(w.pre_loss_cdf_mp(x, dps=30)), rel=1e-10)


# ---------------------------------------------------------------- NewReno constant
def test_okm_constant_three_ways():
    # 1) Ott-Kemperman-Mathis (1996) report E[W] ~ 1.31/sqrt(p)
    assert round(OKM_CONSTANT, 2) == 1.31
    # 2) numerical integration of w f(w) for p = 1 (the fluid model is exact for every p)
    w = PowerLawWindow(1.0, 0, 1.0, 1, 0.5)

    def f(x):
        return float(w.pdf(x))

    assert _quad_inf(lambda x: x * f(x), 1.3) == pytest.approx(OKM_CONSTANT, rel=1e-10)
    # 3) the q-series formula in mpmath with (q;q)_j from mpmath.qp (written independently)
    with mp.workdps(40):
        q = mp.mpf(1) / 4
        s = mp.nsum(lambda j: (-1) ** int(j) * q ** (j * (j + 1) / 2)
                    / (mp.qp(q, q, int(j)) * mp.qp(q)) * mp.mpf(2) ** (-j), [0, mp.inf])
        ref = mp.sqrt(2 / mp.pi) / (s / 2)
    assert OKM_CONSTANT == pytest.approx(float(ref), rel=1e-14)


def test_random_losses_give_larger_window_than_periodic():
    # Periodic losses (Mathis et al.): E[W] = sqrt((1+beta)/(2p(1-beta))) = sqrt(3/(2p)).
    # Poisson losses: OKM_CONSTANT/sqrt(p) = 1.3098/sqrt(p) > 1.2247/sqrt(p), about 7 % larger:
    # the window-proportional loss hazard lets long loss-free excursions reach large windows.
    periodic = math.sqrt(3 / 2)
    assert OKM_CONSTANT > periodic
    assert 1.06 < OKM_CONSTANT / periodic < 1.08
    p = np.array([1e-2, 1e-4])
    assert np.all(mean_window_newreno(p) > np.sqrt(3 / (2 * p)))


def test_newreno_mean_against_exact_event_simulation():
    """Exact PDMP sampling per loss cycle: W_pre = sqrt(y^2 + 2 alpha E/gamma),
    T = (W_pre - y)/alpha, int W dt = E/gamma; post-loss y^2 -> beta^2 (y^2 + 2 alpha E/gamma)."""
    al, g, b = 1.0, 0.01, 0.5
    rng = np.random.default_rng(2024)
    n = 400_000
    E = rng.exponential(size=n)
    drive = b * b * 2 * al * E / g
    y2_next = signal.lfilter([1.0], [1.0, -b * b], drive)     # y_{n+1}^2
    y2 = np.concatenate([[0.0], y2_next[:-1]])
    wpre = np.sqrt(y2 + 2 * al * E / g)
    T = (wpre - np.sqrt(y2)) / al
    area = E / g
    burn = 1000
    A = area[burn:].reshape(40, -1).sum(axis=1)
    Tb = T[burn:].reshape(40, -1).sum(axis=1)
    est = A.sum() / Tb.sum()
    se = np.std(A / Tb, ddof=1) / math.sqrt(40)
    exact = PowerLawWindow(al, 0, g, 1, b).mean()
    assert abs(est - exact) < 4 * se + 1e-3
    assert mean_window_newreno(g) == pytest.approx(exact, rel=1e-13)


# ---------------------------------------------------------------- vectorised mean window
def test_mean_window_vectorised_matches_objects():
    p = np.array([1e-6, 3e-4, 0.02, 0.5])
    got = mean_window_newreno(p)
    ref = np.array([PowerLawWindow(1.0, 0, pi, 1, 0.5).mean() for pi in p])
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    np.testing.assert_allclose(got * np.sqrt(p), OKM_CONSTANT, rtol=1e-14)
    g = np.array([1e-5, 1e-3])
    np.testing.assert_allclose(mean_window(0.01, 1, g, 1, 0.875),
                               0.01 / (g * math.log(1 / 0.875)), rtol=1e-12)
    np.testing.assert_allclose(mean_window(np.array([0.5, 2.0]), 0.8, 1e-6, 1, 0.9),
                               [PowerLawWindow(a, 0.8, 1e-6, 1, 0.9).mean() for a in (0.5, 2.0)],
                               rtol=1e-12)
    big = mean_window_newreno(np.full(10 ** 6, 1e-4))
    assert big.shape == (10 ** 6,) and np.all(big == big[0])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,name", [
    ({"alpha": 0.0, "k": 0, "gamma": 0.01, "l": 1, "beta": 0.5}, "alpha"),
    ({"alpha": 1.0, "k": 0, "gamma": -1.0, "l": 1, "beta": 0.5}, "gamma"),
    ({"alpha": 1.0, "k": 0, "gamma": 0.01, "l": 1, "beta": 1.0}, "beta"),
    ({"alpha": 1.0, "k": 0, "gamma": 0.01, "l": 1, "beta": 0.0}, "beta"),
    ({"alpha": 1.0, "k": float("nan"), "gamma": 0.01, "l": 1, "beta": 0.5}, "k"),
    ({"alpha": 1.0, "k": 0, "gamma": 0.01, "l": "1", "beta": 0.5}, "l"),
    ({"alpha": 1.0, "k": 0, "gamma": 0.01, "l": 1, "beta": 0.5, "terms": 0}, "terms"),
])
def test_bad_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(InvalidParameter, match=f"parameter {name}="):
        PowerLawWindow(**kwargs)


def test_nonpositive_m_is_a_stability_error():
    with pytest.raises(StabilityError, match="m = l - k \\+ 1 = 0.*floor"):
        PowerLawWindow(0.01, 1, 0.1, 0, 0.875)     # MIMD with constant loss rate
    with pytest.raises(StabilityError, match="transient"):
        PowerLawWindow(1.0, 2, 0.1, 0, 0.5)
    with pytest.raises(StabilityError):
        mean_window(1.0, 2, 0.1, 0, 0.5)


def test_bad_arguments_of_methods():
    w = PowerLawWindow(**NEWRENO)
    with pytest.raises(InvalidParameter, match="parameter order="):
        w.moment(np.inf)
    with pytest.raises(InvalidParameter, match="parameter r="):
        w.pre_loss_moment(float("nan"))
    with pytest.raises(InvalidParameter, match="parameter w="):
        w.pdf([1.0, float("nan")])
    with pytest.raises(InvalidParameter, match="parameter rtt="):
        w.throughput(0.0)
    with pytest.raises(InvalidParameter, match="parameter p=-1.0.*index 1"):
        mean_window_newreno([0.1, -1.0])
    with pytest.raises(InvalidParameter, match="parameter gamma="):
        mean_window(1.0, 0, np.array([0.0]), 1, 0.5)


def test_pdf_against_saddle_point_laplace_inversion():
    """Independent representation: Laplace transform prod_j 1/(1 + s q^j) inverted on the
    saddle-point line (no cancellation), far into the left tail where the q-series cancels."""
    for case in (SCALABLE, HSTCP_LIKE, {**AIMD_CONST, "beta": 0.8}):
        w = PowerLawWindow(**case)
        xs = w.mean() * np.array([0.01, 0.05, 0.2, 0.5])
        ref = w.pdf_laplace(xs)
        ok = np.isfinite(ref)          # nan = the inversion's own error estimate is too large
        assert ok[:3].all() and np.all(ref[ok] > 0)
        np.testing.assert_allclose(w.pdf(xs)[ok], ref[ok], rtol=1e-10)
