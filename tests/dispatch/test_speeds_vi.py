"""Value iteration with per-server speeds (symq.dispatch.vi.speed_solvers and speeds_passes).

Each check is against an independent computation: the symmetric unit-speed solver of
symq.dispatch.vi.solvers (another implementation of the same MDP), the exact time-scaling identity
of
equal speeds, Pollaczek-Khinchine per server for the split in proportion to speeds, M/M/1 of
rate s, the simulator's LWL with speeds (99.9% interval), a numpy evaluation of the operator
through VIResult.value, quadrature of the E_A expectation, and orderings that hold exactly in
the discretised MDP (the optimum beats every fixed policy on the same grid).
"""

import functools
import math

import numpy as np
import pytest
import scipy.integrate

from symq.core.errors import InvalidParameter, NotConverged, ResourceLimit, StabilityError
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.dispatch.vi import solvers as vi
from symq.dispatch.vi.iteration import VIResult
from symq.dispatch.vi.multigrid import richardson
from symq.dispatch.vi.speed_passes import (
    MODE_LWL,
    MODE_OPT,
    MODE_RND,
    SpeedGrid,
    _ea_pass,
    _SpeedOperator,
)
from symq.dispatch.vi.speed_solvers import (
    costs_speeds,
    decisions_speeds,
    evaluate_policy_speeds,
    solve_optimal_speeds,
)
from symq.laws import Exponential

X = Exponential(1.0)


def pk_split(speeds, rho, mean=1.0, second=2.0):
    """E[T] of the split in proportion to speeds: server i is M/G/1 with rate lam s_i / sum(s),
    service X / s_i, load rho (Pollaczek-Khinchine), weighted by lam_i / lam = s_i / sum(s)."""
    s = np.asarray(speeds, dtype=float)
    lam = rho * s.sum() / mean
    lam_i = lam * s / s.sum()
    per_server = mean / s + lam_i * second / s ** 2 / (2 * (1 - rho))
    return float((lam_i / lam * per_server).sum())


# ---------------------------------------------------------------- unit speeds = symmetric VI

@pytest.mark.parametrize("policy", ["optimal", "lwl", "rnd"])
def test_unit_speeds_two_servers_equal_the_symmetric_solver(policy):
    kw = dict(delta=0.2, U=12.0, tol=1e-11)
    if policy == "optimal":
        r = solve_optimal_speeds([1.0, 1.0], 0.5, X, **kw)
        ref = vi.solve_optimal(2, 0.5, X, **kw)
    else:
        r = evaluate_policy_speeds(policy, [1.0, 1.0], 0.5, X, **kw)
        ref = vi.evaluate_policy(policy, 2, 0.5, X, **kw)
    assert abs(r.ET - ref.ET) < 1e-9
    assert r.v.shape == (61, 61) and not r.symmetric
    assert np.abs(r.v - ref.v).max() < 1e-7                # the same relative value


@pytest.mark.parametrize("policy", ["optimal", "lwl"])
def test_unit_speeds_three_servers_equal_the_packed_simplex_solver(policy):
    kw = dict(delta=0.5, U=12.0, tol=1e-10)
    if policy == "optimal":
        r = solve_optimal_speeds([1.0, 1.0, 1.0], 0.5, X, **kw)
        ref = vi.solve_optimal(3, 0.5, X, **kw)
    else:
        r = evaluate_policy_speeds(policy, [1.0, 1.0, 1.0], 0.5, X, **kw)
        ref = vi.evaluate_policy(policy, 3, 0.5, X, **kw)
    assert abs(r.ET - ref.ET) < 1e-9
    assert r.v.shape == (25, 25, 25)
    pts = np.array([[0.5, 3.0, 7.5], [7.5, 0.5, 3.0], [2.0, 2.0, 11.0], [1.25, 4.75, 0.0]])
    assert np.abs(r.value(pts) - ref.value(pts)).max() < 1e-7    # symmetric value, any order


# ---------------------------------------------------------------- equal speeds c: time scaling

@pytest.mark.parametrize("c, delta, U", [(2.0, 0.1, 8.0), (0.5, 0.4, 32.0)])
def test_equal_speeds_are_unit_speeds_with_time_scaled(c, delta, U):
    # speeds c, load rho, sizes X: lam = rho m c / E[X]; time t' = c t turns it into the
    # unit-speed system with the same X and rho, so every response time is c times shorter:
    # g_c = g_1 / c.  The discrete scheme at step delta is the unit scheme at step c delta
    # (the same hat atoms on the size lattice c delta, q = exp(-lam delta)), values / c.
    r = solve_optimal_speeds([c, c], 0.6, X, delta=delta, U=U, tol=1e-11)
    ref = vi.solve_optimal(2, 0.6, X, delta=c * delta, U=c * U, tol=1e-11)
    assert abs(r.ET - ref.ET / c) < 1e-9
    assert np.abs(r.v - ref.v / c).max() < 1e-7
    assert np.allclose(r.curvatures, c * ref.c_M)         # lam_i/(2(1-rho)) = c (lam/c)/(...)


# ---------------------------------------------------------------- exact values

@pytest.mark.parametrize("speeds, rho, delta, U", [((2.0, 1.0), 0.6, 0.2, 8.0),
                                                   ((3.0, 1.0, 1.0), 0.5, 0.5, 8.0)])
def test_split_in_proportion_to_speeds_is_pollaczek_khinchine_per_server(speeds, rho, delta, U):
    rr = richardson(functools.partial(evaluate_policy_speeds, "rnd"), speeds, rho, X,
                    delta=delta, U=U)
    exact = pk_split(speeds, rho)
    assert abs(rr.ET / exact - 1) < 1e-3
    # the error of each grid is O(delta^2): halving delta divides it by about 4
    e1, e2 = (r.ET - exact for r in rr.results)
    assert 3.5 < e1 / e2 < 4.5


@pytest.mark.parametrize("s", [2.5, 0.4])
def test_one_server_of_speed_s_is_mm1_of_rate_s(s):
    rho = 0.5
    exact = 1 / (s - rho * s)                         # lam = rho s, M/M/1 of service rate s
    delta = 0.05 / s                                  # the same relative resolution
    rr = richardson(functools.partial(evaluate_policy_speeds, "rnd"), [s], rho, X,
                    delta=delta, U=200 * delta)
    assert abs(rr.ET / exact - 1) < 1e-4
    # one server: every policy is the same MDP
    opt = solve_optimal_speeds([s], rho, X, delta=delta, U=200 * delta, tol=1e-11)
    assert abs(opt.ET - rr.results[0].ET) < 1e-9
    # the value is the M/G/1 value in time units, lam u^2 / (2 (1 - rho)), up to O(delta)
    u = np.array([[2.0 / s], [5.0 / s]])
    assert np.allclose(opt.value(u), rho * s * u[:, 0] ** 2 / (2 * (1 - rho)), rtol=2e-2)


# ---------------------------------------------------------------- LWL and the optimum, (2, 1)

def test_lwl_with_speeds_matches_simulation():
    speeds, rho = (2.0, 1.0), 0.6
    lwl = richardson(functools.partial(evaluate_policy_speeds, "lwl"), speeds, rho, X,
                     delta=0.2, U=12.0)
    est = simulate_dispatch("lwl", 2, rho, X, speeds=speeds, n_jobs=3_000_000, rng=2024,
                            level=0.999)
    assert est.ET.half_width < 0.01
    assert est.ET.contains(lwl.ET), (est.ET, lwl.ET)
    # O(delta^2): the size threshold of LWL falls on the lattice and its atom is split
    e = [r.ET - lwl.ET for r in lwl.results]
    assert 3.5 < e[0] / e[1] < 4.5


def test_the_optimum_beats_lwl_and_rnd_and_sends_tiny_jobs_to_the_fast_idle_server():
    speeds, rho = (2.0, 1.0), 0.6
    kw = dict(delta=0.2, U=12.0)
    opt = solve_optimal_speeds(speeds, rho, X, **kw)
    lwl = evaluate_policy_speeds("lwl", speeds, rho, X, **kw)
    rnd = evaluate_policy_speeds("rnd", speeds, rho, X, **kw)
    # the same discretised MDP: the optimum's bracket lies below both fixed policies'
    assert opt.ET_low <= opt.ET <= opt.ET_high < lwl.ET_low < rnd.ET_low
    assert lwl.ET - opt.ET > 0.04                 # a clear gain (about 4.5 % at rho = 0.6)
    # a tiny job goes to the fast idle server; with the fast one busy, to the idle slow one
    assert decisions_speeds(opt, speeds, [0.0, 0.0], 0.01) == 0
    assert decisions_speeds(opt, speeds, [3.0, 0.0], 0.01) == 1
    # decisions_speeds minimises the costs in time units, u_i + x/s_i + v(u + (x/s_i) e_i)
    u, x = np.array([[1.0, 2.5], [4.0, 0.3]]), np.array([0.7, 2.0])
    c = costs_speeds(opt, speeds, u, x)
    by_hand = np.array([[u[n, 0] + x[n] / 2 + opt.value([u[n, 0] + x[n] / 2, u[n, 1]]),
                         u[n, 1] + x[n] + opt.value([u[n, 0], u[n, 1] + x[n]])] for n in (0, 1)])
    assert np.allclose(c, by_hand, rtol=1e-14)
    assert decisions_speeds(opt, speeds, u, x).tolist() == np.argmin(by_hand, axis=1).tolist()


# ---------------------------------------------------------------- the operator, independently

def _numpy_ex(grid, result, states, mode):
    """h(u) = sum_k p_k choice_i {u_i + x_k/s_i + v(u + (x_k/s_i) e_i)} by VIResult.value."""
    xs = np.arange(grid.K + 1) * grid.eta
    out = []
    for u in states:
        c = costs_speeds(result, grid.speeds, np.broadcast_to(u, (xs.size, grid.m)), xs)
        if mode == MODE_OPT:
            ch = c.min(axis=1)
        elif mode == MODE_RND:
            ch = c @ (grid.speeds / grid.speeds.sum())
        else:
            # least finishing time (lattice steps); an atom k > 0 on which finishing times
            # tie is split between the slowest and the fastest tied server, k = 0 the fastest
            k = np.arange(xs.size, dtype=float)
            fin = u[None, :] / grid.delta + k[:, None] * grid.speeds.min() / grid.speeds
            tied = fin == fin.min(axis=1, keepdims=True)
            order = np.argsort(-grid.speeds, kind="stable")        # fastest first
            fastest = order[np.argmax(tied[:, order], axis=1)]
            rev = order[::-1]                                       # slowest first
            slowest = np.where(tied[:, rev].any(axis=1), rev[np.argmax(tied[:, rev], axis=1)], 0)
            rows = np.arange(xs.size)
            ch = 0.5 * (c[rows, fastest] + c[rows, slowest])
            ch[0] = c[0, fastest[0]]
        out.append(float(grid.p @ ch))
    return np.array(out)


@pytest.mark.parametrize("speeds, delta, U", [((2.0, 1.0), 0.25, 6.0),
                                              ((1.0, 3.0, 1.5), 0.5, 7.0)])
@pytest.mark.parametrize("mode", [MODE_OPT, MODE_RND, MODE_LWL])
def test_ex_pass_equals_a_numpy_evaluation_through_the_interpolated_value(speeds, delta, U,
                                                                          mode):
    grid = SpeedGrid.build(speeds, 0.4, X, delta, U)
    rng = np.random.default_rng(5)
    shape = (grid.N + 1,) * grid.m
    v = rng.normal(size=shape) + 0.3 * np.indices(shape).sum(axis=0) ** 2 * delta ** 2
    res = VIResult(ET=0.0, ET_low=0.0, ET_high=0.0, v=v, delta=grid.delta, U=grid.U, m=grid.m,
                   lam=grid.lam, rho=grid.rho, iterations=0, residual=0.0, symmetric=False,
                   curvatures=grid.curvatures)
    op = _SpeedOperator(grid, mode)
    op(v.reshape(grid.shape3()), np.empty(grid.shape3()))
    idx = rng.integers(0, grid.N + 1, size=(25, grid.m))
    idx[:3] = [[grid.N] * grid.m, [0] * grid.m, [grid.N - 1] + [0] * (grid.m - 1)]
    states = idx * grid.delta
    expect = _numpy_ex(grid, res, states, mode)
    got = op.h.reshape(shape)[tuple(idx.T)]
    assert np.allclose(got, expect, rtol=1e-12, atol=1e-10)


def test_ea_pass_equals_quadrature_along_the_drain_path():
    # f(u) = E[h~((u - A 1)^+)], A ~ Exp(lam), h~ linear between the lattice points
    # (u - n delta 1)^+ of the path: a direct integral, not the recursion
    lam, delta, N = 1.3, 0.25, 10
    rng = np.random.default_rng(3)
    h = rng.normal(size=(N + 1, N + 1, N + 1))
    x = lam * delta
    q = math.exp(-x)
    b = -math.expm1(-x) / x - q
    out = np.empty_like(h)
    _ea_pass(h, -math.expm1(-x) - b, b, q, out)
    for u in [(3, 7, 0), (10, 10, 10), (0, 0, 5), (2, 9, 4), (0, 0, 0)]:
        u = np.array(u)
        n_max = int(u.max())
        path = [h[tuple(np.maximum(u - n, 0))] for n in range(n_max + 1)]

        def f(t, path=path, n_max=n_max):
            n = min(int(t / delta), n_max - 1)
            a = t / delta - n
            return lam * math.exp(-lam * t) * ((1 - a) * path[n] + a * path[n + 1])

        tot = math.exp(-lam * n_max * delta) * path[-1]
        for n in range(n_max):
            tot += scipy.integrate.quad(f, n * delta, (n + 1) * delta, epsabs=1e-13)[0]
        assert abs(out[tuple(u)] - tot) < 1e-10


# ---------------------------------------------------------------- warm starts, results

def test_warm_start_changes_the_iterate_not_the_fixed_point():
    kw = dict(delta=0.2, U=8.0, tol=1e-11)
    cold = solve_optimal_speeds([2.0, 1.0], 0.5, X, multigrid=False, **kw)
    coarse = solve_optimal_speeds([2.0, 1.0], 0.5, X, delta=0.4, U=8.0)
    warm = solve_optimal_speeds([2.0, 1.0], 0.5, X, warm_start=coarse, **kw)
    assert abs(cold.ET - warm.ET) < 1e-9 and np.abs(cold.v - warm.v).max() < 1e-8
    assert warm.levels == [(0.2, warm.iterations, warm.ET)]
    assert cold.ET_low <= cold.ET <= cold.ET_high and cold.residual < 1e-11
    assert cold.curvatures.tolist() == pytest.approx([1.0, 0.5])  # lam_i/(2(1-rho))


def test_the_shared_loop_solves_a_small_average_cost_chain_exactly():
    """The loop speeds_vi shares with the unit-speed solvers (iteration._relative_iteration),
    on an operator T v = c + P v of a 6-state chain: g = pi c and the relative value solve
    (I - P) v = c - g with v(0) = 0, computed here by numpy linear algebra."""
    from symq.dispatch.vi.iteration import _FlatLayout, _relative_iteration

    rng = np.random.default_rng(5)
    P = rng.random((2, 3, 2, 3)).reshape(6, 6)
    P /= P.sum(axis=1, keepdims=True)
    c = rng.random(6) * 3.0
    A = np.vstack([(np.eye(6) - P).T, np.ones(6)])
    pi = np.linalg.lstsq(A, np.r_[np.zeros(6), 1.0], rcond=None)[0]
    g = float(pi @ c)
    M = np.eye(6) - P
    M[:, 0] = 1.0                                 # unknowns (g, v_1..v_5), v_0 = 0
    sol = np.linalg.solve(M, c)
    v_ref = np.r_[0.0, sol[1:]].reshape(2, 3)

    def op(v, out):
        out[...] = (c + P @ v.reshape(-1)).reshape(2, 3)

    for anderson in (0, 3):
        v, gn, lo, hi, it, span = _relative_iteration(op, _FlatLayout((2, 3)), None, 1e-12,
                                                      None, None, 500, False, "chain",
                                                      anderson=anderson)
        assert lo <= g <= hi and span < 1e-12 and abs(gn - g) < 1e-11
        assert np.abs(v - v_ref).max() < 1e-10
    with pytest.raises(NotConverged, match="Odoni bounds"):
        _relative_iteration(op, _FlatLayout((2, 3)), None, 1e-12, None, None, 2, False, "chain")


# ---------------------------------------------------------------- refusals

@pytest.mark.parametrize("speeds, text", [
    ([], "1 to 3 positive"), ([1, 1, 1, 1], "implemented for m <= 3"),
    ([1.0, -1.0], "m positive finite reals"), ([1.0, math.nan], "m positive finite reals"),
    ("fast", "m positive finite reals"), ([2.0, 0.0], "m positive finite reals")])
def test_bad_speeds_are_refused_by_name(speeds, text):
    with pytest.raises(InvalidParameter, match=r"parameter speeds=.*" + text):
        solve_optimal_speeds(speeds, 0.5, X, delta=0.2, U=8.0)


@pytest.mark.parametrize("kw, exc, text", [
    (dict(rho=0.0), InvalidParameter, r"parameter rho=0\.0 must be a real number in \(0, 1\)"),
    (dict(rho=True), InvalidParameter, r"parameter rho=True"),
    (dict(rho=1.0), StabilityError, r"load rho=1\.0 must be < 1"),
    (dict(delta=0.0), InvalidParameter, r"parameter delta=0\.0 must be a finite real"),
    (dict(delta=0.6), InvalidParameter, r"parameter delta=0\.6 must be <= E\[X\]/\(2 min"),
    (dict(delta=0.2, U=1.0), InvalidParameter, r"parameter delta=0\.2 must be <= U/8"),
    (dict(U=8.1), InvalidParameter, r"parameter U=8\.1 must be an integer multiple of delta"),
    (dict(U=4.0), InvalidParameter, r"parameter U=4\.0 must be >= 7\.5 .*increase U"),
    (dict(U=math.inf), InvalidParameter, r"parameter U=inf must be a finite real"),
    (dict(tol=0.0), InvalidParameter, r"parameter tol=0\.0"),
    (dict(max_iter=0), InvalidParameter, r"max_iter"),
])
def test_bad_parameters_are_refused_by_name(kw, exc, text):
    args = dict(rho=0.6, delta=0.2, U=8.0) | kw
    with pytest.raises(exc, match=text):
        solve_optimal_speeds([2.0, 1.0], args.pop("rho"), X, **args)


def test_other_refusals():
    with pytest.raises(InvalidParameter, match=r"parameter policy='jsq' must be 'rnd'"):
        evaluate_policy_speeds("jsq", [2.0, 1.0], 0.5, X, delta=0.2, U=8.0)
    one = evaluate_policy_speeds("rnd", [2.0], 0.5, X, delta=0.2, U=8.0)
    with pytest.raises(InvalidParameter, match=r"parameter warm_start='<VIResult of m=1>' must "
                                               r"be a VIResult of the same 2 server"):
        solve_optimal_speeds([2.0, 1.0], 0.5, X, delta=0.2, U=8.0, warm_start=one)
    with pytest.raises(InvalidParameter, match=r"parameter result='<VIResult of m=1>' must be "
                                               r"a VIResult of 2 server"):
        decisions_speeds(one, [2.0, 1.0], [0.0, 0.0], 1.0)
    with pytest.raises(InvalidParameter, match=r"parameter u=.*last axis 1"):
        costs_speeds(one, [2.0], [0.0, 0.0], 1.0)
    with pytest.raises(InvalidParameter, match=r"parameter x=.*sizes >= 0"):
        costs_speeds(one, [2.0], [0.0], -1.0)
    with pytest.raises(NotConverged, match=r"Odoni bounds"):
        solve_optimal_speeds([2.0, 1.0], 0.5, X, delta=0.2, U=8.0, max_iter=3,
                             multigrid=False)


def test_memory_is_checked_before_allocating(monkeypatch):
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", "1e6")
    with pytest.raises(ResourceLimit, match=r"parameter delta=0\.05 must be coarse enough to "
                                            r"fit: lower U=8 or raise delta \(it needs "
                                            r"4\.17e\+06 lattice states x \d+ size atoms"):
        solve_optimal_speeds([2.0, 1.0, 1.0], 0.5, X, delta=0.05, U=8.0)
