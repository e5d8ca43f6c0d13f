"""The tail's cross term (symq.dispatch.vi.boundary.Tail): fitted, accelerated, and used alike
by the E_X kernels, :meth:`VIResult.value` and the compiled look-up policy.

Independent references: a value function built here with a known cross term (the fit must
recover it), a geometric sequence built around a known fixed point (the acceleration must
return it), plain-Python sums over atoms and servers with the tail written out (the kernels),
and values written out by hand on a linear table (the look-ups).
"""

from __future__ import annotations

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.dispatch.policies import get_policy, lookup_value
from symq.dispatch.simplex import binomial_table, colex_states, simplex_value
from symq.dispatch.sizes import named_sizes
from symq.dispatch.vi import boundary
from symq.dispatch.vi.boundary import Tail, accelerated, as_tail, fit_boundary
from symq.dispatch.vi.grid import DispatchGrid
from symq.dispatch.vi.passes import MODE_OPT, _Operator
from symq.dispatch.vi.simplex_passes import ex_pass
from symq.dispatch.vi.solvers import solve_optimal
from symq.laws import Exponential

EXP = Exponential(1.0)
UNIFORM = named_sizes("uniform")        # sizes on [0, 2]: few size atoms, quick grids


class _KnownValue:
    """A sorted-state value ``v(o, u) = c u^2 + (b + phi(sum o)) u + psi(sum o)`` (u the
    largest component), read through ``_lookup`` as a solver's result is."""

    symmetric = True
    N2 = None

    def __init__(self, m: int, N: int, delta: float, c: float, b: float, phi, psi) -> None:
        self.m, self.N, self.delta, self.U = m, N, delta, N * delta
        self.c_M = 10.0
        self.c, self.b, self.phi, self.psi = c, b, phi, psi

    def _lookup(self, s: np.ndarray) -> np.ndarray:
        x = np.asarray(s) * self.delta
        u = x[..., -1]
        sigma = x[..., :-1].sum(axis=-1)
        return self.c * u ** 2 + (self.b + self.phi(sigma)) * u + self.psi(sigma)


@pytest.mark.parametrize("m", [2, 3, 4])
def test_the_fit_recovers_a_known_cross_term(m):
    def phi(s):
        return 0.3 * s + 0.02 * s ** 2            # convex, as the optimal value's

    def psi(s):
        return s ** 2 + 1.0

    known = _KnownValue(m, 40, 0.5, 0.45, 2.5, phi, psi)
    tail = fit_boundary(known)
    assert tail.curvature == pytest.approx(0.45, rel=1e-9)
    assert tail.slope == pytest.approx(2.5, rel=1e-9)
    top = 20                                      # the window starts at 0.5 U = 20 steps
    sigma = 0.5 * np.arange((m - 1) * top + 1)
    assert tail.cross_step == 0.5
    np.testing.assert_allclose(tail.cross, phi(sigma), rtol=1e-9, atol=1e-9)


def test_a_sampled_fit_interpolates_the_sums_it_missed(monkeypatch):
    monkeypatch.setattr(boundary, "CROSS_FIT_LOOKUPS", 3000)      # samples, not all vectors
    known = _KnownValue(4, 40, 0.5, 0.2, 1.0, lambda s: 0.7 * s, lambda s: 0.0 * s)
    tail = fit_boundary(known)
    sigma = 0.5 * np.arange(3 * 20 + 1)
    np.testing.assert_allclose(tail.cross, 0.7 * sigma, rtol=1e-9, atol=1e-9)


def test_the_acceleration_returns_the_fixed_point_of_a_geometric_sequence():
    fixed = Tail(0.5, 3.0, 0.5, (0.0, 1.0, 2.5, 4.0))
    error = Tail(0.2, -4.0, 0.5, (0.0, 3.0, 1.0, 2.0))

    def term(k: int, r: float) -> Tail:
        w = r ** k
        return Tail(fixed.curvature + w * error.curvature, fixed.slope + w * error.slope, 0.5,
                    tuple(f + w * e for f, e in zip(fixed.cross, error.cross)))

    got = accelerated([term(k, 0.4) for k in (1, 2, 3)], U=20.0)
    assert got.curvature == pytest.approx(fixed.curvature, rel=1e-12)
    assert got.slope == pytest.approx(fixed.slope, rel=1e-12)
    np.testing.assert_allclose(got.cross, fixed.cross, rtol=1e-12, atol=1e-12)
    # an alternating or too slow sequence is not extrapolated: the last tail is kept
    for r in (-0.5, 0.9):
        seq = [term(k, r) for k in (1, 2, 3)]
        assert accelerated(seq, U=20.0) == seq[-1]
    assert accelerated([fixed], U=20.0) == fixed


def test_tails_are_checked_and_the_cross_term_interpolates():
    for bad in ((-1.0, 0.0), (np.nan, 0.0), (1.0, np.inf)):
        with pytest.raises(InvalidParameter) as info:
            as_tail(bad)
        assert info.value.name == "tail"
    with pytest.raises(InvalidParameter):
        Tail(1.0, 0.0, 0.0, (0.0, 1.0))              # knots without a spacing
    with pytest.raises(InvalidParameter):
        as_tail((1.0, 2.0, 3.0))
    t = Tail(1.0, 0.0, 2.0, (0.0, 4.0, 6.0, 8.0, 10.0))
    # between knots linear; beyond the last, the line through the last four knots
    # (least squares through (2, 4), (4, 6), (6, 8), (8, 10): slope 1, exact here)
    np.testing.assert_allclose(t.cross_at(np.array([1.0, 3.0, 8.0, 11.0])),
                               [2.0, 5.0, 10.0, 13.0], rtol=1e-13)
    assert as_tail((0.5, 1.5)) == Tail(0.5, 1.5)


def _brute_force_h(V, states, N, p, delta, tail_inc, cross_inc):
    """min_i {c_i delta + v(sort(c + k e_i))} summed over atoms, beyond U the tail of the
    value at U with the cross term of the others' sum (plain Python)."""
    index = {tuple(s): r for r, s in enumerate(states)}
    m = states.shape[1]
    out = np.empty(len(states))
    for r, c in enumerate(states):
        total = 0.0
        for k in range(p.size):
            costs = []
            for i in range(m):
                new = list(c)
                new[i] += k
                extra = 0.0
                if new[i] > N:
                    s = new[i] - N
                    others = sum(c) - c[i]
                    extra = tail_inc[s] + cross_inc[others] * s
                    new[i] = N
                costs.append(c[i] * delta + V[index[tuple(sorted(new))]] + extra)
            total += p[k] * min(costs)
        out[r] = total
    return out


CROSS = Tail(0.3, 1.2, 0.25, tuple(0.4 * np.arange(41) ** 1.5 / 10))


@pytest.mark.parametrize("m", [3, 4])
def test_the_simplex_kernel_adds_the_cross_term(m):
    grid = DispatchGrid.build(m, 0.4, UNIFORM, 0.5, 5.0, tail=CROSS)   # N = 10
    states = colex_states(m, grid.N)
    V = np.random.default_rng(5).random(len(states)) * 5
    B = binomial_table(m, grid.N)
    out = np.empty(len(states))
    expected = _brute_force_h(V, states, grid.N, grid.p, grid.delta, grid.tail_increments(),
                              CROSS.cross_at(grid.delta * np.arange((m - 1) * grid.N + 1))
                              * grid.delta)
    for parallel in (False, True):
        ex_pass(V, B, grid.N, grid.p, grid.tail_increments(), grid.delta, MODE_OPT,
                np.zeros((1, 1), np.int8), out, parallel=parallel,
                cross=grid.cross_increments())
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    # the cross term changes the result (the test would see it missing)
    ex_pass(V, B, grid.N, grid.p, grid.tail_increments(), grid.delta, MODE_OPT,
            np.zeros((1, 1), np.int8), out)
    assert np.abs(out - expected).max() > 1e-3


def test_the_two_server_kernel_adds_the_cross_term():
    grid = DispatchGrid.build(2, 0.4, UNIFORM, 0.5, 5.0, tail=CROSS)
    N = grid.N
    rng = np.random.default_rng(9)
    W = rng.random((N + 1, N + 1)) * 5
    V = np.triu(W) + np.triu(W, 1).T                  # symmetric
    states = colex_states(2, N)
    packed = np.array([V[i, j] for i, j in states])
    expected = _brute_force_h(packed, states, N, grid.p, grid.delta, grid.tail_increments(),
                              CROSS.cross_at(grid.delta * np.arange(N + 1)) * grid.delta)
    op = _Operator(grid, MODE_OPT, None)
    op(V, np.empty_like(V))
    h = op.h - grid.lattice_mean
    np.testing.assert_allclose([h[i, j] for i, j in states], expected, rtol=1e-12, atol=1e-12)


def test_look_ups_beyond_u_add_the_cross_term():
    delta, N, c, b = 0.5, 8, 0.3, 1.7
    U = N * delta
    phi = np.array([0.0, 0.5, 1.5, 3.0] + [3.0 + 2.0 * i for i in range(1, 14)])  # per step
    V = np.add.outer(np.arange(N + 1), np.arange(N + 1)) * delta * 2.0   # v = 2 (a + b)
    # m = 2: the other coordinate 1.25 is 2.5 steps: phi = 1.5 + 0.5 (3.0 - 1.5) = 2.25
    want = 2.0 * (U + 1.25) + c * ((U + 1.5) ** 2 - U ** 2) + (b + 2.25) * 1.5
    assert lookup_value(V, delta, c, U + 1.5, 1.25, b, phi) == pytest.approx(want, rel=1e-13)
    # both beyond U: each sees the other clamped to U (8 steps: 3 + 2 * 5 = 13)
    both = 2.0 * 2 * U + 2 * (c * ((U + 1.0) ** 2 - U ** 2) + (b + 13.0) * 1.0)
    assert lookup_value(V, delta, c, U + 1.0, U + 1.0, b, phi) == pytest.approx(both, rel=1e-13)
    m, n = 3, 6
    states = colex_states(m, n)
    vp = (states * delta).sum(axis=1) * 2.0
    top = n * delta
    u = np.array([0.5, 1.0, top + 0.75])             # others sum 1.5: 3 steps, phi = 3.0
    want3 = 2.0 * (1.5 + top) + c * ((top + 0.75) ** 2 - top ** 2) + (b + 3.0) * 0.75
    assert simplex_value(vp, binomial_table(m, n), n, delta, c, u, b, phi) == pytest.approx(
        want3, rel=1e-13)


@pytest.mark.parametrize("m, U", [(2, 20.0), (3, 16.0)])
def test_the_look_up_policy_of_a_cross_tail_result_decides_as_the_result(m, U):
    rho = 0.7
    first = solve_optimal(m, rho, EXP, delta=0.5, U=U, tol=1e-8)
    r = solve_optimal(m, rho, EXP, delta=0.5, U=U, tol=1e-8, tail=fit_boundary(first),
                      warm_start=first)
    assert r.tail_cross is not None and np.ptp(r.tail_cross) > 1.0
    rng = np.random.default_rng(2)
    u = rng.uniform(0.0, 1.4 * U, size=(3000, m))    # many states beyond U
    x = rng.exponential(3.0, size=3000)
    bound = get_policy("lookup", result=r).bind(m, rho, EXP)
    ours = bound.decide(u, x)
    theirs = r.decision(u, x)
    costs = r.costs(u, x)
    near_tie = np.abs(np.take_along_axis(costs, ours[:, None], 1)[:, 0] - costs.min(axis=1))
    assert np.all((ours == theirs) | (near_tie < 1e-9))
    # a policy that ignores the cross term decides otherwise somewhere beyond U
    if m == 2:
        blind = get_policy("lookup", v=r.v, delta=r.delta, c_M=r.c_M, tail_slope=r.tail_slope)
        assert np.any(blind.bind(m, rho, EXP).decide(u, x) != ours)


def test_the_cross_tail_cuts_the_truncation_error_at_high_load():
    """m = 2, rho = 0.9, step 0.5: at U = 48 the refits' fixed point with the cross term is
    within 2.5e-3 of the U = 128 value (itself 8e-5 from U = 192), the plain quadratic's fixed
    point 1.3e-2 away."""
    m, rho, delta = 2, 0.9, 0.5
    reference = solve_optimal(m, rho, EXP, delta=delta, U=128.0, tol=1e-9).ET

    def fixed_point(fit):
        r = solve_optimal(m, rho, EXP, delta=delta, U=48.0, tol=1e-9, span_rtol=1e-3)
        fits = []
        for _ in range(3):
            fits.append(fit(r))
            r = solve_optimal(m, rho, EXP, delta=delta, U=48.0, tol=1e-9, span_rtol=1e-3,
                              tail=fits[-1], warm_start=r)
        return solve_optimal(m, rho, EXP, delta=delta, U=48.0, tol=1e-9, warm_start=r,
                             tail=accelerated(fits, 48.0)).ET

    cross = fixed_point(fit_boundary)
    plain = fixed_point(lambda r: Tail(*boundary.fit_tail(r)))
    assert abs(cross - reference) < 2.5e-3
    assert abs(cross - reference) < abs(plain - reference) / 3


def test_the_stated_truncation_covers_the_far_truncation(monkeypatch):
    """From U = 20 at rho = 0.8 the truncation grows twice (to 34, the tail fitted again at each
    U tried); the coarse grid's value at the final U is within the stated truncation error of
    its value at U = 128 (2.5289357, within 3e-10 of U = 160)."""
    from symq.dispatch.vi import accuracy

    monkeypatch.setattr(accuracy, "default_truncation", lambda m, rho: 20.0)
    est = accuracy.solve_accurate(2, 0.8, EXP, coarse=0.5)
    fitted = [g for g in est.grids if g["role"] == "coarse, fitted tail"]
    assert len(fitted) >= 2 and fitted[-1]["U"] == est.U > 20.0     # enlarged and refitted
    far = solve_optimal(2, 0.8, EXP, delta=0.5, U=128.0, tol=1e-9).ET
    assert abs(fitted[-1]["g"] - far) <= est.truncation
