"""The general window solver against closed forms, series in mpmath and exact-event Monte Carlo.

References are computed here, independently of the solver: closed-form moments (drift
balances, derivations/awp.md), the q-series of Ott-Kemperman-Mathis / Dumas-Guillemin-
Robert evaluated with mpmath, the D/M/1-in-log-scale law of MIMD with a floor (theta root found
with brentq) and Monte Carlo with exact event sampling, renewal-reward averages over
independent chains with a confidence interval.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import brentq

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.window.numeric import WindowSolution, solve_window

ONE = lambda w: np.ones_like(w)  # noqa: E731


# ------------------------------------------------------------------------------------------
# independent references
# ------------------------------------------------------------------------------------------

def _c_coefficients(q, terms=80):
    """c_j = (-1)^j q^{j(j+1)/2} / ((q;q)_j (q;q)_inf), mpmath (Dumas, Guillemin, Robert 2002)."""
    qinf = mp.qp(q, q)
    return [(-1) ** j * q ** (j * (j + 1) // 2) / (mp.qp(q, q, j) * qinf) for j in range(terms)]


def newreno_mean(p, beta=0.5, alpha=1.0):
    """E[W] = sqrt(2 alpha/(pi gamma)) / ((1-beta) sum_j c_j beta^j), q = beta^2."""
    with mp.workdps(40):
        b = mp.mpf(beta)
        c = _c_coefficients(b ** 2)
        s = mp.fsum(cj * b ** j for j, cj in enumerate(c))
        return float(mp.sqrt(2 * mp.mpf(alpha) / (mp.pi * p)) / ((1 - b) * s))


def newreno_pre_loss_ccdf(x, p, beta=0.5, alpha=1.0):
    """P0(W_pre > x) = sum_j c_j exp(-mu_j x^2), mu_j = gamma/(2 alpha q^j)."""
    with mp.workdps(40):
        q = mp.mpf(beta) ** 2
        c = _c_coefficients(q)
        v = mp.mpf(x) ** 2
        return float(mp.fsum(cj * mp.exp(-p / (2 * alpha * q ** j) * v) for j, cj in enumerate(c)))


def gauss_integral(f, lo, hi, breaks=(), panels=400, order=8):
    """Composite Gauss-Legendre integral of a vectorised f over [lo, hi] (split at breaks)."""
    x, wts = np.polynomial.legendre.leggauss(order)
    edges = np.unique(np.concatenate([[lo, hi], [b for b in breaks if lo < b < hi]]))
    total = 0.0
    for a_, b_ in zip(edges[:-1], edges[1:]):
        e = np.linspace(a_, b_, panels + 1)
        mid, half = (e[1:] + e[:-1]) / 2, (e[1:] - e[:-1]) / 2
        pts = mid[:, None] + half[:, None] * x[None, :]
        total += float(np.sum(f(pts.ravel()).reshape(pts.shape) * wts[None, :] * half[:, None]))
    return total


def _ratio_ci(num, den):
    """Renewal-reward ratio over independent chains and its standard error (delta method)."""
    r = num.sum() / den.sum()
    res = num - r * den
    se = res.std(ddof=1) / math.sqrt(num.size) / den.mean()
    return r, se


def hstcp_profiles():
    """RFC 3649 HighSpeed TCP: a(w), b(w), with b capped at High_Decrease = 0.1."""
    lw, hw = math.log(38.0), math.log(83000.0)

    def b(w):
        w = np.asarray(w, dtype=float)
        high = (0.1 - 0.5) * (np.log(w) - lw) / (hw - lw) + 0.5
        return np.where(w > 38.0, np.maximum(high, 0.1), 0.5)

    def a(w):
        w = np.asarray(w, dtype=float)
        bw = b(w)
        pw = 0.078 / w ** 1.2
        return np.where(w > 38.0, 2.0 * w ** 2 * pw * bw / (2.0 - bw), 1.0)

    def d(w):
        return (1.0 - b(w)) * np.asarray(w, dtype=float)

    return a, b, d


# ------------------------------------------------------------------------------------------
# closed forms
# ------------------------------------------------------------------------------------------

def test_aimd_constant_rate_moments_and_pasta():
    alpha, lam, beta = 2.0, 0.05, 0.7
    sol = solve_window(lambda w: alpha, lambda w: lam, lambda w: beta * w, rtol=1e-7)
    assert isinstance(sol, WindowSolution)
    m1 = alpha / (lam * (1 - beta))
    m2 = 2 * (alpha / lam) ** 2 / ((1 - beta) * (1 - beta ** 2))
    assert sol.mean() == pytest.approx(m1, rel=1e-7)
    assert sol.mean_square_window == pytest.approx(m2, rel=1e-6)
    assert sol.moment(2) == pytest.approx(sol.mean_square_window, rel=1e-12)
    assert sol.loss_rate == pytest.approx(lam, rel=1e-7)
    assert sol.atom_at_cap == 0.0
    # PASTA: the window before a loss has the time-stationary law; after it, that law scaled
    x = np.array([0.3, 1.0, 2.0]) * m1
    np.testing.assert_allclose(sol.pre_loss_cdf(x), sol.cdf(x), atol=1e-6)
    np.testing.assert_allclose(sol.post_loss_cdf(beta * x), sol.pre_loss_cdf(x), atol=1e-6)
    # E[W^n] = n! (alpha/lam)^n / prod_k (1 - beta^k) for n = 3
    m3 = 6 * (alpha / lam) ** 3 / ((1 - beta) * (1 - beta ** 2) * (1 - beta ** 3))
    assert sol.moment(3) == pytest.approx(m3, rel=1e-5)


@pytest.mark.parametrize("p", [1e-4, 1e-2])
def test_newreno_against_q_series(p):
    sol = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w, rtol=1e-6)
    exact = newreno_mean(p)
    assert abs(sol.mean() / exact - 1) < 1e-6
    assert abs(sol.mean() / exact - 1) <= 2 * sol.error_estimate + 1e-12
    assert sol.error_estimate <= 1e-6
    assert sol.mean() * math.sqrt(p) == pytest.approx(1.31, abs=5e-3)   # published rounding
    assert sol.mean_square_window == pytest.approx(2 / p, rel=1e-6)         # alpha/(gamma(1-beta))
    assert sol.loss_rate == pytest.approx(p * sol.mean(), rel=1e-7)      # E[lam(W)] = 1/E0[T]
    assert abs(sol.drift_balance) < 1e-6                               # E[a] = 1
    # Palm law of the window before a loss: q-series in mpmath
    m = 1.31 / math.sqrt(p)
    for x in (0.4 * m, m, 2.0 * m):
        assert float(sol.pre_loss_cdf(x)) == pytest.approx(
            1 - newreno_pre_loss_ccdf(x, p), abs=1e-6)


def test_newreno_density_normalised_and_level_crossing():
    p = 1e-2
    sol = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w)
    total = gauss_integral(sol.pdf, sol.grid[0], sol.grid[-1])
    assert total == pytest.approx(1.0, abs=1e-6)
    peak = float(np.max(sol.pdf(sol.grid)))
    for w in (1.0, 3.0, 10.0, 20.0, 40.0):
        # a(w) f(w) = int_w^{2w} lam(u) f(u) du; pointwise error small against the peak
        rhs = gauss_integral(lambda u: p * u * sol.pdf(u), w, 2 * w)
        assert abs(float(sol.pdf(w)) - rhs) < 1e-6 * peak
        cdf_q = gauss_integral(sol.pdf, sol.grid[0], w)
        assert float(sol.cdf(w)) == pytest.approx(cdf_q, abs=1e-7)
        assert float(sol.ccdf(w)) == pytest.approx(1 - cdf_q, abs=1e-7)


def test_mimd_proportional_losses_scalable():
    a, gamma, beta = 0.01, 1e-3, 0.875
    sol = solve_window(lambda w: a * w, lambda w: gamma * w, lambda w: beta * w)
    d = math.log(1 / beta)
    assert sol.mean() == pytest.approx(a / (gamma * d), rel=1e-6)
    assert sol.mean_square_window == pytest.approx(a ** 2 / (gamma ** 2 * (1 - beta) * d), rel=1e-5)
    assert abs(sol.drift_balance) < 1e-6 * sol.expect(lambda w: a * w)


@pytest.mark.parametrize("lam", [0.1, 0.085])
def test_mimd_constant_rate_with_floor(lam):
    a, beta, w_min = 0.01, 0.875, 2.0
    theta = brentq(lambda x: a * x - lam * (1 - beta ** x), 1e-6, 1e3)
    assert theta > 1
    sol = solve_window(lambda w: a * w, lambda w: lam, lambda w: beta * w, w_min=w_min)
    assert sol.mean() == pytest.approx(w_min * theta / (theta - 1), rel=2e-6)
    x = w_min * np.array([1.1, 1.5, 3.0, 10.0])
    np.testing.assert_allclose(sol.cdf(x), 1 - (x / w_min) ** -theta, atol=1e-6)
    np.testing.assert_allclose(sol.ccdf(x), (x / w_min) ** -theta, rtol=1e-4)
    # the post-loss law has an atom at the floor: P0(Y = w_min) = P0(W_pre <= w_min/beta)
    assert float(sol.post_loss_cdf(w_min)) == pytest.approx(
        float(sol.pre_loss_cdf(w_min / beta)), abs=1e-9)
    assert float(sol.post_loss_cdf(0.99 * w_min)) == 0.0


def test_mimd_constant_rate_infinite_mean_is_reported():
    # stable (lam > a/ln(1/beta)) but theta < 1: E[W] is infinite
    pattern = r"E\[W\] is infinite: tail exponent theta = 0\.\d+ <= 1"
    with pytest.raises(StabilityError, match=pattern):
        solve_window(lambda w: 0.01 * w, lambda w: 0.078, lambda w: 0.875 * w, w_min=1.0)


# ------------------------------------------------------------------------------------------
# cap: Monte Carlo with exact event sampling
# ------------------------------------------------------------------------------------------

def test_newreno_with_cap_against_monte_carlo():
    p, w_max = 1e-4, 150.0
    sol = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w, w_max=w_max)
    rng = np.random.default_rng(20261129)
    chains, cycles, burn = 2000, 300, 20
    y = np.full(chains, 50.0)
    area = np.zeros(chains)
    time = np.zeros(chains)
    at_cap = np.zeros(chains)
    for n in range(cycles + burn):
        e = rng.exponential(size=chains)
        x2 = y ** 2 + 2 * e / p
        capped = x2 > w_max ** 2
        v = rng.exponential(size=chains) / (p * w_max)        # wait at the cap
        x = np.where(capped, w_max, np.sqrt(x2))
        t = np.where(capped, w_max - y + v, x - y)
        s = np.where(capped, (w_max ** 2 - y ** 2) / 2 + w_max * v, e / p)
        if n >= burn:
            area += s
            time += t
            at_cap += np.where(capped, v, 0.0)
        y = 0.5 * x
    mean, se_mean = _ratio_ci(area, time)
    atom, se_atom = _ratio_ci(at_cap, time)
    assert abs(sol.mean() - mean) < 4 * se_mean
    assert abs(sol.atom_at_cap - atom) < 4 * se_atom
    assert 0.2 < sol.atom_at_cap < 0.4
    assert float(sol.cdf(w_max)) == 1.0
    assert float(sol.cdf(np.nextafter(w_max, 0))) == pytest.approx(1 - sol.atom_at_cap, abs=1e-6)
    assert float(sol.ccdf(np.nextafter(w_max, 0))) == pytest.approx(sol.atom_at_cap, abs=1e-6)
    assert abs(sol.drift_balance) < 1e-6


def test_cap_far_above_the_law_changes_nothing():
    p = 1e-2
    free = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w)
    capped = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w, w_max=200.0)
    assert capped.atom_at_cap < 1e-12
    assert capped.mean() == pytest.approx(free.mean(), rel=2e-6)


# ------------------------------------------------------------------------------------------
# HighSpeed TCP: general profile
# ------------------------------------------------------------------------------------------

def _hstcp_monte_carlo(p, rng, chains=2000, cycles=250, burn=25):
    a, b, _ = hstcp_profiles()
    # G(w) = int u/a du (hazard / p) and H(w) = int du/a on a fine grid with a node at 38
    w = np.unique(np.concatenate([np.geomspace(0.05, 38.0, 60001),
                                  np.geomspace(38.0, 2e6, 200001)]))
    inv_a = 1.0 / a(w)
    inv_a[w == 38.0] = 1.0
    # exact integrals on each side of 38 (the jump of a sits on a node): trapezoid
    left = np.concatenate([[1.0], 1.0 / a(w[1:])])
    right = np.concatenate([1.0 / a(w[:-1]), [0.0]])
    seg_h = 0.5 * (left[1:] + right[:-1]) * np.diff(w)
    seg_g = 0.5 * (left[1:] * w[1:] + right[:-1] * w[:-1]) * np.diff(w)
    G = np.concatenate([[0.0], np.cumsum(seg_g)])
    H = np.concatenate([[0.0], np.cumsum(seg_h)])
    y = np.full(chains, 300.0)
    num = np.zeros(chains)
    den = np.zeros(chains)
    for n in range(cycles + burn):
        e = rng.exponential(size=chains)
        gx = np.interp(y, w, G) + e / p
        x = np.interp(gx, G, w)
        t = np.interp(x, w, H) - np.interp(y, w, H)
        if n >= burn:
            num += e / p            # int W dt over a cycle = E/p when lam = p w
            den += t
        y = (1.0 - b(x)) * x
    return _ratio_ci(num, den)


def test_highspeed_tcp_general_profile():
    p = 1e-5
    a, b, d = hstcp_profiles()
    lam = lambda w: p * w  # noqa: E731
    sol = solve_window(a, lam, d)
    assert sol.error_estimate < 1e-6
    mean = sol.mean()
    # rate conservation: E[a(W)] = E[lam(W) b(W) W]
    ea = sol.expect(a)
    assert abs(sol.drift_balance) < 1e-5 * ea
    assert sol.expect(lambda w: lam(w) * b(w) * w) == pytest.approx(ea, rel=1e-5)
    assert sol.loss_rate == pytest.approx(p * sol.mean(), rel=1e-6)

    # level-crossing equation a(w) f(w) = int_{w}^{d^-1(w)} lam(u) f(u) du, pointwise
    def d_inv(w):
        return brentq(lambda x: float(d(x)) - w, w, 20 * w, xtol=1e-13, rtol=1e-15)

    # pointwise accuracy of the density needs a finer grid than the mean
    sol = solve_window(a, lam, d, rtol=1e-8)
    peak = float(np.max(a(sol.grid) * sol.pdf(sol.grid)))
    for w in (30.0, 200.0, 1000.0, 1800.0, 2500.0, 4000.0):
        hi = d_inv(w)
        rhs = gauss_integral(lambda u: lam(u) * sol.pdf(u), w, hi, breaks=[38.0])
        lhs = float(a(w)) * float(sol.pdf(w))
        assert abs(lhs - rhs) < 1e-5 * peak
        if lhs > 0.1 * peak:
            assert lhs == pytest.approx(rhs, rel=1e-5)
    # independent Monte Carlo with exact event sampling
    assert sol.mean() == pytest.approx(mean, rel=2e-6)
    mc, se = _hstcp_monte_carlo(p, np.random.default_rng(7))
    assert se < 5e-3 * mc
    assert abs(sol.mean() - mc) < 4 * se


def test_breakpoints_given_or_detected_agree():
    p = 1e-5
    a, _, d = hstcp_profiles()
    lam = lambda w: p * w  # noqa: E731
    given = solve_window(a, lam, d, breakpoints=[38.0], detect_breaks=False, rtol=1e-8)
    detected = solve_window(a, lam, d, rtol=1e-8)
    assert detected.mean() == pytest.approx(given.mean(), rel=1e-8)


# ------------------------------------------------------------------------------------------
# error control
# ------------------------------------------------------------------------------------------

def test_error_estimate_decreases_and_is_honest():
    p = 1e-4
    exact = newreno_mean(p)
    coarse = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w, rtol=1e-4)
    fine = solve_window(ONE, lambda w: p * w, lambda w: 0.5 * w, rtol=1e-9)
    assert fine.error_estimate < coarse.error_estimate
    assert fine.grid_size > coarse.grid_size
    assert coarse.error_estimate <= 1e-4 and fine.error_estimate <= 1e-9
    for sol in (coarse, fine):
        assert abs(sol.mean() / exact - 1) <= 2 * sol.error_estimate + 1e-12
    errors = [abs(m / exact - 1) for _, m, _ in fine.history]
    assert all(e2 < e1 for e1, e2 in zip(errors, errors[1:]))
    assert fine.grid.size == fine.grid_size and np.all(np.diff(fine.grid) > 0)


def test_not_converged_reports_residual():
    with pytest.raises(NotConverged) as info:
        solve_window(ONE, lambda w: 1e-4 * w, lambda w: 0.5 * w, rtol=1e-12, max_grid=256)
    assert info.value.residual > 1e-12 and info.value.tolerance == 1e-12


# ------------------------------------------------------------------------------------------
# instability and bad input
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("a, lam, d, kwargs", [
    # MIMD with constant losses and a floor, lam < a/ln(1/beta): escape to infinity
    (lambda w: 0.01 * w, lambda w: 0.05, lambda w: 0.875 * w, {"w_min": 1.0}),
    # MIMD with constant losses, lam > a/ln(1/beta) but no floor: collapse to 0
    (lambda w: 0.01 * w, lambda w: 0.2, lambda w: 0.875 * w, {}),
    # bounded cumulative hazard (m < 0): with positive probability no further loss
    (ONE, lambda w: 1.0 / w ** 2, lambda w: 0.5 * w, {}),
])
def test_unstable_protocols_raise(a, lam, d, kwargs):
    with pytest.raises(StabilityError):
        solve_window(a, lam, d, **kwargs)


@pytest.mark.parametrize("kwargs, name", [
    ({"a": lambda w: 1 - w / 100}, "a"),
    ({"a": lambda w: np.where(w > 5, np.nan, 1.0)}, "a"),
    ({"lam": lambda w: 0 * w}, "lam"),
    ({"lam": lambda w: -1e-3 * w}, "lam"),
    ({"d": lambda w: w}, "d"),
    ({"d": lambda w: 1.2 * w}, "d"),
    ({"d": "half"}, "d"),
    ({"w_min": 5.0, "w_max": 5.0}, "w_min"),
    ({"w_min": -1.0}, "w_min"),
    ({"w_max": float("nan")}, "w_max"),
    ({"rtol": 0.0}, "rtol"),
    ({"max_grid": 10}, "max_grid"),
    ({"breakpoints": [-3.0]}, "breakpoints"),
])
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"a": ONE, "lam": lambda w: 1e-2 * w, "d": lambda w: 0.5 * w}
    args.update(kwargs)
    with pytest.raises(InvalidParameter) as info:
        solve_window(args.pop("a"), args.pop("lam"), args.pop("d"), **args)
    assert info.value.name == name
    assert name in str(info.value)


@pytest.mark.parametrize("kwargs, name, shown", [
    ({"w_min": True}, "w_min", "w_min=True"),
    ({"w_max": "inf"}, "w_max", "w_max='inf'"),
    ({"rtol": float("nan")}, "rtol", "rtol=nan"),
    ({"initial_grid": 8}, "initial_grid", "an integer >= 16"),
    ({"breakpoints": [float("inf")]}, "breakpoints", "positive finite window values"),
])
def test_bad_numbers_are_refused_with_their_domain(kwargs, name, shown):
    with pytest.raises(InvalidParameter) as info:
        solve_window(ONE, lambda w: 1e-2 * w, lambda w: 0.5 * w, **kwargs)
    assert info.value.name == name and shown in str(info.value)


def test_moment_order_must_be_finite():
    sol = solve_window(ONE, lambda w: 0.1 + 0 * w, lambda w: 0.5 * w, rtol=1e-4)
    with pytest.raises(InvalidParameter, match="order=nan must be a finite real number"):
        sol.moment(float("nan"))
