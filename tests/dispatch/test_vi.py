"""Relative value iteration for size-aware dispatching (symq.dispatch.vi.solvers and its grid,
passes, iteration and multigrid modules).

Every check is against an independent computation: closed forms (Pollaczek-Khinchine, the
M/G/1 value lam u^2/(2(1-rho)), Erlang C for LWL = M/M/2), direct numerical integration of
the E_A pass, a brute-force evaluation of the operator, or an ordering that holds exactly in
the discretised MDP (the optimum beats every fixed policy on the same grid).
"""

import functools
import math

import numpy as np
import pytest
import scipy.integrate
import scipy.stats

from symq.core.errors import InvalidParameter, NotConverged, ResourceLimit, StabilityError
from symq.dispatch.sizes import as_sizes
from symq.dispatch.vi import solvers as vi
from symq.dispatch.vi.grid import DispatchGrid, hat_atoms
from symq.dispatch.vi.multigrid import richardson
from symq.dispatch.vi.passes import MODE_OPT, MODE_RND, _Operator, diagonal_expectation
from symq.laws import Exponential

EXP = Exponential(1.0)


# ---------------------------------------------------------------- discretisation

@pytest.mark.parametrize("law", [EXP, as_sizes(scipy.stats.uniform(0, 2)),
                                 Exponential(2.5)])
def test_hat_atoms_preserve_mass_and_mean(law):
    for delta in (0.1, 0.05):
        p = hat_atoms(law, delta)
        k = np.arange(p.size)
        assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-14
        assert abs((p * k * delta).sum() - law.mean()) < 1e-6 * law.mean()
        # second moment: hat kernel adds delta^2/6 of variance, nothing else (O(delta^2))
        m2 = (p * (k * delta) ** 2).sum()
        assert abs(m2 - law.moment(2) - delta ** 2 / 6) < 1e-3 * delta ** 2 + 1e-6


def test_hat_atoms_exponential_closed_form():
    # for Exp(1), p_k (k >= 1) = e^{-k d} (e^{d} + e^{-d} - 2)/d  (integrate the hat kernel)
    d = 0.2
    p = hat_atoms(EXP, d)
    k = np.arange(1, 40)
    exact = np.exp(-k * d) * (np.exp(d) + np.exp(-d) - 2) / d
    p0 = 1 - (1 - np.exp(-d)) / d
    assert np.allclose(p[1:40] * p.sum(), exact, rtol=1e-9)
    assert abs(p[0] - p0) < 1e-9


# ---------------------------------------------------------------- E_A recursion

def test_diagonal_expectation_matches_quadrature():
    lam, delta, N = 0.9, 0.05, 80

    def h0(x, y):
        return np.sin(x) + 0.3 * x * y + np.cos(0.5 * y) ** 2 + x * x

    def h(x, y):  # symmetric, as the values of identical servers are
        return h0(x, y) + h0(y, x)

    def exact(u1, u2):
        top = max(u1, u2)
        # E[h((u - A)^+)] = int_0^top lam e^{-lam t} h((u-t)^+) dt + e^{-lam top} h(0, 0)
        return scipy.integrate.quad(
            lambda t: lam * np.exp(-lam * t) * h(max(u1 - t, 0), max(u2 - t, 0)), 0, top,
            points=[min(u1, u2)], limit=200, epsabs=1e-12)[0] + np.exp(-lam * top) * h(0.0, 0.0)

    errors = {}
    for dd in (2 * delta, delta):
        n = int(round(N * delta / dd))
        grid = np.arange(n + 1) * dd
        f = diagonal_expectation(h(grid[:, None], grid[None, :]), lam, dd)
        for (x1, x2) in [(0, 0), (0, 0.8), (0.3, 0.3), (0.6, 2.0), (2.0, 0.6), (4.0, 4.0),
                         (1.7, 3.5)]:
            i, j = int(round(x1 / dd)), int(round(x2 / dd))
            errors[dd, x1, x2] = abs(f[i, j] - exact(x1, x2))
            assert errors[dd, x1, x2] < dd ** 2, (dd, x1, x2, errors[dd, x1, x2])
    # the error is O(delta^2): halving the step divides it by about 4
    assert 3.0 < errors[2 * delta, 4.0, 4.0] / errors[delta, 4.0, 4.0] < 5.0
    assert errors[delta, 0, 0] < 1e-14
    # the 1-d pass: E[(u - A)^+^2] = u^2 - 2u/lam + 2(1 - e^{-lam u})/lam^2
    grid = np.arange(N + 1) * delta
    g1 = diagonal_expectation(grid ** 2, lam, delta)
    exact = grid ** 2 - 2 * grid / lam + 2 * (1 - np.exp(-lam * grid)) / lam ** 2
    assert np.max(np.abs(g1 - exact)) < delta ** 2


def test_diagonal_expectation_exact_for_linear_h():
    # h linear along diagonals: the exponential weights integrate it exactly
    lam, delta, N = 0.7, 0.25, 30
    grid = np.arange(N + 1) * delta
    H = grid[:, None] + grid[None, :]
    f = diagonal_expectation(H, lam, delta)
    u1, u2 = grid[6], grid[20]

    def e_plus(u):  # E[(u - A)^+] = u - (1 - e^{-lam u})/lam
        return u - (1 - np.exp(-lam * u)) / lam
    assert abs(f[6, 20] - (e_plus(u1) + e_plus(u2))) < 1e-12


# ---------------------------------------------------------------- operator vs brute force

def _brute_operator(v, grid, mode):
    """Direct evaluation of T v on the m = 2 lattice (no symmetry, no numba)."""
    N, K, d = grid.N, grid.K, grid.delta
    tail = grid.tail_increments()

    def V(a, b):
        extra = 0.0
        if a > N:
            extra += tail[a - N]
            a = N
        if b > N:
            extra += tail[b - N]
            b = N
        return v[a, b] + extra

    h = np.zeros((N + 1, N + 1))
    for i in range(N + 1):
        for j in range(N + 1):
            s = 0.0
            for k in range(K + 1):
                c1 = i * d + k * d + V(i + k, j)
                c2 = j * d + k * d + V(i, j + k)
                s += grid.p[k] * (min(c1, c2) if mode == "opt" else 0.5 * (c1 + c2))
            h[i, j] = s
    f = np.zeros_like(h)
    for i in range(N + 1):
        for j in range(N + 1):
            top = max(i, j)
            # E_A via the exact recursion written out along the diagonal from the face
            path = [(max(i - t, 0), max(j - t, 0)) for t in range(top + 1)]
            acc = h[0, 0]
            for t in range(top - 1, -1, -1):
                a_, b_ = path[t]
                pa, pb = path[t + 1]
                acc = grid.a * h[a_, b_] + grid.b * h[pa, pb] + grid.q * acc
            f[i, j] = acc if top > 0 else h[0, 0]
    return f


@pytest.mark.parametrize("mode", ["opt", "rnd"])
def test_operator_matches_brute_force(mode):
    grid = DispatchGrid.build(2, 0.4, EXP, 0.5, 12.0)
    rng = np.random.default_rng(3)
    v = rng.random((grid.N + 1, grid.N + 1)) * 5
    v = v + v.T
    op = _Operator(grid, MODE_OPT if mode == "opt" else MODE_RND, None)
    out = np.empty_like(v)
    op(v, out)
    assert np.allclose(out, _brute_operator(v, grid, mode), rtol=1e-12, atol=1e-11)


# ---------------------------------------------------------------- one server: P-K

@pytest.mark.parametrize("law", [EXP, as_sizes(scipy.stats.uniform(0, 2))])
def test_one_server_pollaczek_khinchine(law):
    rho = 0.5
    rr = richardson(vi.solve_optimal, 1, rho, law, delta=0.1, U=20.0, tol=1e-11)
    lam = rho / law.mean()
    pk = law.mean() + lam * law.moment(2) / (2 * (1 - rho))
    assert abs(rr.ET - pk) < 2e-5
    assert rr.ET_low - 1e-9 <= rr.ET <= rr.ET_high + 1e-9
    fine = rr.results[-1]
    u = np.linspace(0.5, 12, 24)
    exact = lam * u ** 2 / (2 * (1 - rho))
    assert np.max(np.abs(fine.value(u[:, None]) - exact) / exact) < 5e-3


# ---------------------------------------------------------------- RND and LWL calibration

def test_rnd_matches_closed_forms():
    rho = 0.4
    rr = richardson(functools.partial(vi.evaluate_policy, "rnd"), 2, rho, EXP,
                       delta=0.2, U=24.0, tol=1e-10)
    assert abs(rr.ET - 1 / (1 - rho)) < 1e-4
    assert abs(rr.results[-1].ET - 1 / (1 - rho)) < 3e-3        # unextrapolated, delta = 0.1
    fine = rr.results[-1]
    lam = fine.lam
    u = np.array([[0, 0.5], [1, 1], [2, 5], [4, 0], [6, 8], [10, 3]], dtype=float)
    exact = ((lam / 2) * u ** 2 / (2 * (1 - rho))).sum(axis=1)
    got = fine.value(u)
    assert np.all(np.abs(got - exact) <= 0.01 * exact + 2e-3)
    # additivity on the lattice (exact value is a sum of one-server values)
    N = fine.N
    i = np.arange(0, N + 1, 12)
    V = fine.v[np.ix_(i, i)]
    sep = V[:, :1] + V[:1, :]
    assert np.max(np.abs(V - sep)[:8, :8] / (1 + np.abs(sep[:8, :8]))) < 5e-3


def test_lwl_matches_mm2_with_delta_squared_error():
    rho = 0.5
    exact = 1 / (1 - rho ** 2)
    rr = richardson(functools.partial(vi.evaluate_policy, "lwl"), 2, rho, EXP,
                       delta=0.2, U=20.0, levels=3, tol=1e-10)
    errs = [r.ET - exact for r in rr.results]
    assert all(e > 0 for e in errs)
    assert 3.0 < errs[0] / errs[1] < 5.0 and 3.0 < errs[1] / errs[2] < 5.0   # O(delta^2)
    assert 3.0 < rr.ratio < 5.0
    assert abs(rr.ET - exact) < 0.1 * errs[-1]


def test_callable_policy_equals_builtin_lwl():
    kw = dict(delta=0.4, U=16.0, tol=1e-10)
    a = vi.evaluate_policy("lwl", 2, 0.4, EXP, **kw)

    def choose(u, x):
        return np.broadcast_to(np.argmin(u, axis=-1), np.broadcast_shapes(u.shape[:-1],
                                                                          x.shape))
    b = vi.evaluate_policy(choose, 2, 0.4, EXP, **kw)
    assert abs(a.ET - b.ET) < 1e-9
    grid = DispatchGrid.build(2, 0.4, EXP, 0.4, 16.0)
    c = vi.evaluate_policy(vi.lwl_table(grid), 2, 0.4, EXP, **kw)
    assert abs(a.ET - c.ET) < 1e-9 and np.allclose(a.v, c.v, atol=1e-8)


# ---------------------------------------------------------------- the optimal policy

@pytest.fixture(scope="module")
def opt04():
    return vi.solve_optimal(2, 0.4, EXP, delta=0.1, U=24.0, tol=1e-10)


def test_optimum_beats_fixed_policies_on_same_grid(opt04):
    kw = dict(delta=0.1, U=24.0, tol=1e-10)
    lwl = vi.evaluate_policy("lwl", 2, 0.4, EXP, **kw)
    rnd = vi.evaluate_policy("rnd", 2, 0.4, EXP, **kw)
    assert opt04.ET_low <= opt04.ET <= opt04.ET_high and opt04.residual < 1e-10
    assert opt04.ET_high <= lwl.ET_low + 1e-9
    assert opt04.ET_high <= rnd.ET_low + 1e-9
    assert lwl.ET < rnd.ET
    # the optimum is close to LWL at moderate load (Hyytiä & Righter, arXiv 2402.08142, Part 2),
    # below M/M/2
    assert 0 < 1 / (1 - 0.16) - opt04.ET < 0.02


def test_value_symmetric_and_decision(opt04):
    assert np.array_equal(opt04.v, opt04.v.T) and opt04.v[0, 0] == 0
    u = np.array([[1.3, 4.7], [4.7, 1.3], [30.0, 2.0], [2.0, 30.0]])
    val = opt04.value(u)
    assert val[0] == val[1] and val[2] == val[3]
    # short jobs join the shorter queue whatever its position in u
    assert opt04.decision(u[:2], 0.05).tolist() == [0, 1]


def test_threshold_structure(opt04):
    # everything to the shorter queue near the origin (Hyytiä & Righter, arXiv 2402.08142,
    # Part 2, on the structure of the optimal rules)
    for u in [(0.0, 0.1), (0.0, 0.5), (0.2, 0.6), (0.5, 1.0)]:
        assert opt04.threshold(*u) == math.inf
    # moderate backlogs: short jobs to the shorter queue, long ones to the longer queue,
    # a single switch in x
    for u1, u2 in [(1.0, 3.0), (2.0, 4.0), (3.0, 6.0)]:
        xstar = opt04.threshold(u1, u2)
        assert 0.2 < xstar < 5.0
        xs = np.linspace(0.02, 8.0, 200)
        d = opt04.decision(np.array([u1, u2]), xs)
        assert d[0] == 0 and d[-1] == 1
        assert np.all(np.diff(d) >= 0)                   # 0...0 1...1
        assert np.all(d[xs < xstar - 0.05] == 0) and np.all(d[xs > xstar + 0.05] == 1)


def test_diagonal_constant(opt04):
    # Hyytiä-Righter: v(u, u) ~ 0.56 u^2 at rho = 0.4; RND would give 2 lam/(2(1-rho)) = 1.33
    c = opt04.diagonal_constant(2.0, 12.0)
    assert 0.45 < c < 0.7


def test_export_table(opt04):
    table, delta, c_M = opt04.export_table()
    assert table.shape == (opt04.N + 1, opt04.N + 1) and table.dtype == np.float64
    assert delta == 0.1 and abs(c_M - (0.8 / 2) / (2 * 0.6)) < 1e-15
    # the tail beyond U is the fixed analytic one
    U = opt04.U
    assert abs(opt04.value([[3.0, U + 2]])[0] - opt04.value([[3.0, U]])[0]
               - c_M * ((U + 2) ** 2 - U ** 2)) < 1e-9


def test_warm_start_reaches_same_fixed_point():
    kw = dict(delta=0.2, U=16.0, tol=1e-11)
    cold = vi.solve_optimal(2, 0.4, EXP, multigrid=False, **kw)
    coarse = vi.solve_optimal(2, 0.4, EXP, delta=0.4, U=16.0, tol=1e-6)
    warm = vi.solve_optimal(2, 0.4, EXP, warm_start=coarse, **kw)
    assert abs(cold.ET - warm.ET) < 1e-10
    assert np.max(np.abs(cold.v - warm.v)) < 1e-8
    assert warm.iterations < cold.iterations


def test_g_stopping_rule_and_progress():
    kw = {"delta": 0.2, "U": 16.0}
    tight = vi.solve_optimal(2, 0.4, EXP, tol=1e-11, **kw)
    loose = vi.solve_optimal(2, 0.4, EXP, tol=1e-14, tol_g=1e-9, span_cap=1e-5,
                             progress=True, **kw)
    assert loose.iterations < tight.iterations
    assert loose.residual < 1e-5 and abs(loose.ET - tight.ET) < 1e-7
    assert loose.ET_low - 1e-12 <= tight.ET <= loose.ET_high + 1e-12


def test_three_servers_reduced_grid():
    kw = dict(delta=0.4, U=16.0, tol=1e-9)
    rnd = vi.evaluate_policy("rnd", 3, 0.4, EXP, **kw)
    lwl = vi.evaluate_policy("lwl", 3, 0.4, EXP, **kw)
    opt = vi.solve_optimal(3, 0.4, EXP, **kw)
    assert abs(rnd.ET - 1 / 0.6) < 0.03                    # O(delta^2) on a coarse grid
    lam = rnd.lam
    u = np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [0.0, 0.0, 5.0]])
    exact = ((lam / 3) * u ** 2 / (2 * 0.6)).sum(axis=1)
    assert np.all(np.abs(rnd.value(u) - exact) < 0.05 * exact)
    # M/M/3 (Erlang C) for LWL
    a = 3 * 0.4
    tail = a ** 3 / 6 / 0.6
    erlang_c = tail / (1 + a + a * a / 2 + tail)
    assert abs(lwl.ET - (1 + erlang_c / (3 * 0.6))) < 0.02
    assert opt.ET_high <= lwl.ET_low + 1e-9 and opt.ET_high <= rnd.ET_low + 1e-9
    v = opt.value(u[:2])
    assert v[0] == v[1]


# ---------------------------------------------------------------- bad input

def test_bad_input():
    with pytest.raises(StabilityError, match="rho=1.0"):
        vi.solve_optimal(2, 1.0, EXP)
    with pytest.raises(InvalidParameter, match="rho"):
        vi.solve_optimal(2, -0.1, EXP)
    with pytest.raises(InvalidParameter, match="parameter m=0"):
        vi.solve_optimal(0, 0.4, EXP)
    with pytest.raises(InvalidParameter, match=r"parameter m=7 must be 1\.\.6"):
        vi.solve_optimal(7, 0.4, EXP)
    with pytest.raises(ResourceLimit, match=r"delta=0\.05 must be >= 0\.1.*sorted states"):
        vi.solve_optimal(4, 0.4, EXP)           # m = 4 runs, but not on the m = 2 default grid
    with pytest.raises(InvalidParameter, match="delta.*too coarse relative to U"):
        vi.solve_optimal(2, 0.4, EXP, delta=0.5, U=3.0)
    with pytest.raises(InvalidParameter, match="U=0.3.*multiple of delta"):
        vi.solve_optimal(2, 0.4, EXP, delta=0.2, U=0.3)
    with pytest.raises(InvalidParameter, match="parameter U=24.*increase U"):
        vi.solve_optimal(2, 0.95, EXP, delta=0.2, U=24.0)
    with pytest.raises(InvalidParameter, match="policy"):
        vi.evaluate_policy("jsq", 2, 0.4, EXP, delta=0.4, U=16.0)
    with pytest.raises(InvalidParameter, match="policy"):
        vi.evaluate_policy(np.zeros((3, 3), dtype=np.int8), 2, 0.4, EXP, delta=0.4, U=16.0)
    with pytest.raises(InvalidParameter, match="sizes"):
        vi.solve_optimal(2, 0.4, object(), delta=0.4, U=16.0)


def test_not_converged_reports_bounds():
    with pytest.raises(NotConverged, match=r"residual .* Odoni bounds .* <= g <= ") as info:
        vi.solve_optimal(2, 0.4, EXP, delta=0.4, U=16.0, max_iter=3, multigrid=False)
    assert info.value.iterations == 3 and info.value.residual > 1e-10
