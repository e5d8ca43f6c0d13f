"""The cap on the second-largest backlog (m >= 3): the restricted problem, checked independently.

A capped grid computes the optimal policy among those that never make the second-largest
backlog exceed ``U2``, on the states within the cap only.  The tests compare it with

* a plain implementation of the same restricted Bellman operator over ALL sorted states
  (every decision enumerated and re-sorted in numpy, a forbidden one costing ``inf``), which
  shares only the diagonal E_A recursion and the size atoms with the solver;
* the uncapped problem, whose value it may not beat and which it equals at ``U2 = U``;
* through :func:`solve_accurate`, the uncapped answer within the two stated errors.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.dispatch.simplex import (
    FORBIDDEN,
    binomial_table,
    colex_block,
    colex_states,
    n_sorted_states,
    predecessors,
    rank_of,
    table_cap,
)
from symq.dispatch.vi.accuracy import default_cap, solve_accurate
from symq.dispatch.vi.grid import DispatchGrid
from symq.dispatch.vi.simplex_passes import ea_pass
from symq.dispatch.vi.solvers import solve_optimal
from symq.laws import Exponential

EXP = Exponential(1.0)


def _restricted_gain(grid: DispatchGrid, tol: float) -> tuple[float, float]:
    """Odoni bounds of the capped problem by plain VI on all sorted states (m = 3)."""
    m, N, K, d = grid.m, grid.N, grid.K, grid.delta
    states = colex_states(m, N)
    index = {tuple(s): r for r, s in enumerate(states.tolist())}
    tail = grid.tail_increments()
    n = len(states)
    # target[s, j, k]: rank of sort(c + k e_j) (clamped at N), extra tail, or -1 if forbidden
    target = np.zeros((n, m, K + 1), dtype=np.int64)
    extra = np.zeros((n, m, K + 1))
    for r, c in enumerate(states.tolist()):
        for j, k in itertools.product(range(m), range(K + 1)):
            w = list(c)
            w[j] += k
            w.sort()
            if w[m - 2] > grid.N2:
                target[r, j, k] = -1
                continue
            over = max(0, w[m - 1] - N)
            w[m - 1] -= over
            target[r, j, k] = index[tuple(w)]
            extra[r, j, k] = tail[over] + c[j] * d
    inside = states[:, m - 2] <= grid.N2
    B = binomial_table(m, N)
    pred = predecessors(m, N, B)
    v = np.zeros(n)
    lo = hi = math.nan
    for _ in range(20_000):
        cost = np.where(target >= 0, v[np.maximum(target, 0)] + extra, np.inf)
        h = (grid.p * cost.min(axis=1)).sum(axis=1) + grid.lattice_mean
        h[~inside] = 0.0                   # never read from inside the cap
        tv = ea_pass(h, pred, grid.a, grid.b, grid.q)
        diff = (tv - v)[inside]
        lo, hi = float(diff.min()), float(diff.max())
        v = tv - tv[0]
        if hi - lo < tol:
            return lo, hi
    raise AssertionError("the reference iteration did not converge")


@pytest.mark.parametrize(("rho", "U", "U2"), [(0.5, 6.0, 2.0), (0.7, 12.0, 4.0)])
def test_capped_grid_against_a_plain_restricted_iteration(rho, U, U2):
    kw = dict(delta=0.5, U=U, tol=1e-10, multigrid=False)
    capped = solve_optimal(3, rho, EXP, U2=U2, **kw)
    grid = DispatchGrid.build(3, rho, EXP, 0.5, U, U2=U2)
    lo, hi = _restricted_gain(grid, 1e-10)
    assert max(lo, capped.ET_low) <= min(hi, capped.ET_high)     # the same fixed point
    uncapped = solve_optimal(3, rho, EXP, **kw)
    assert capped.ET_high >= uncapped.ET_low         # a restriction cannot do better


def test_cap_at_U_is_no_cap_and_values_beyond_the_cap_are_forbidden():
    kw = dict(delta=0.5, U=16.0, tol=1e-9)
    free = solve_optimal(3, 0.7, EXP, **kw)
    same = solve_optimal(3, 0.7, EXP, U2=16.0, **kw)
    assert same.ET == free.ET and same.U2 is None
    capped = solve_optimal(3, 0.7, EXP, U2=8.0, **kw)
    assert capped.U2 == 8.0 and capped.ET_high >= free.ET_low
    assert capped.value(np.array([0.0, 9.0, 12.0])) >= FORBIDDEN / 2
    inside = capped.value(np.array([0.0, 7.5, 12.0]))
    assert abs(inside) < 1e3
    # a job that would make the second-largest backlog exceed the cap is never sent there:
    # 3 more on the backlog 7 gives (1, 10, 12); on 1 or 12 the second-largest stays 7
    u = np.array([1.0, 7.0, 12.0])
    costs = capped.costs(u, 3.0)
    assert costs[1] >= FORBIDDEN / 2 and max(costs[0], costs[2]) < 1e3
    assert capped.decision(u, 3.0) != 1 and free.costs(u, 3.0).max() < 1e3


def test_cap_errors():
    with pytest.raises(InvalidParameter, match="U2"):
        solve_optimal(2, 0.7, EXP, delta=0.5, U=16.0, U2=8.0)       # m < 3
    with pytest.raises(InvalidParameter, match="U2"):
        solve_optimal(3, 0.7, EXP, delta=0.5, U=16.0, U2=7.25)      # not on the lattice
    with pytest.raises(InvalidParameter, match="U2"):
        solve_optimal(3, 0.7, EXP, delta=0.5, U=16.0, U2=20.0)      # beyond U
    with pytest.raises(InvalidParameter, match="U2"):
        solve_accurate(3, 0.7, EXP, policy="lwl", U2=8.0)


def test_default_cap_is_a_third_of_U_at_least_16_mean_sizes_on_the_lattice():
    assert default_cap(48.0, 1.0, 0.5) == 16.0
    assert default_cap(60.0, 1.0, 0.5) == 20.0
    assert default_cap(64.0, 1.0, 0.5) == 22.0           # 21.33 rounded up to 4 steps = 2
    assert default_cap(32.0, 1.0, 0.5) == 16.0           # the floor
    assert default_cap(16.0, 1.0, 0.5) is None           # the floor reaches U: no cap
    assert default_cap(48.0, 2.0, 1.0) == 32.0           # in units of E[X] = 2


def test_accurate_capped_agrees_with_uncapped_within_stated_errors():
    options = dict(coarse=0.5, U=24.0, rtol=1e-2)
    capped = solve_accurate(3, 0.75, EXP, **options)
    assert capped.U2 == 16.0                                 # the default at high load
    assert "cap check" in [g["role"] for g in capped.grids]
    assert capped.error_parts["cap"] == capped.cap >= 0
    free = solve_accurate(3, 0.75, EXP, U2=24.0, **options)
    assert free.U2 is None and free.cap == 0.0
    assert abs(capped.ET - free.ET) <= capped.error_estimate + free.error_estimate


@pytest.mark.parametrize(("m", "N", "N2"), [(3, 12, 4), (3, 12, 12), (4, 10, 3), (5, 10, 0)])
def test_capped_simplex_ranks_the_states_within_the_cap_densely(m, N, N2):
    """Against an enumeration of all sorted tuples (itertools): the capped states in colex
    order, their count, ranks 0..n-1 from the capped table, unranking, the predecessors and
    the grid's state count."""
    everything = sorted(itertools.combinations_with_replacement(range(N + 1), m),
                        key=lambda c: c[::-1])                     # colex order
    expected = np.array([c for c in everything if c[m - 2] <= N2], dtype=np.int64)
    states = colex_states(m, N, N2)
    np.testing.assert_array_equal(states, expected)
    assert n_sorted_states(m, N, N2) == len(expected)
    B = binomial_table(m, N, N2=N2)
    assert table_cap(B) == (N2 if N2 < N else -1)
    ranks = [rank_of(c, B) for c in expected]
    assert ranks == list(range(len(expected)))
    np.testing.assert_array_equal(colex_block(m, N, 3, 9, N2), expected[3:9])
    index = {tuple(c): r for r, c in enumerate(expected.tolist())}
    pred = predecessors(m, N, B, N2)
    for r, c in enumerate(expected.tolist()):
        below = tuple(max(x - 1, 0) for x in c)
        assert pred[r] == (-1 if not any(c) else index[below])
    grid = DispatchGrid.build(m, 0.5, EXP, 0.5, N * 0.5)
    grid = DispatchGrid(**{**grid.__dict__, "N2": N2})
    assert grid.n_states == len(expected)
    starts, ends = grid.rank_chunks(7)
    assert starts[0] == 0 and ends[-1] == len(expected) and np.all(starts[1:] == ends[:-1])


def test_the_time_plan_counts_the_states_within_the_cap(monkeypatch):
    """A limit between the capped and the uncapped plan (1.6 s and 19 s estimated at m = 3,
    rho = 0.9, step 0.5, U = 48): the capped grid runs, the uncapped one is refused."""
    monkeypatch.setenv("SYMQ_VI_TIME_LIMIT", "5")
    with pytest.raises(ResourceLimit, match="value iteration"):
        solve_optimal(3, 0.9, EXP, delta=0.5, U=48.0, tol=1e-3)
    capped = solve_optimal(3, 0.9, EXP, delta=0.5, U=48.0, U2=8.0, tol=1e-3)
    assert capped.U2 == 8.0 and capped.v.size == n_sorted_states(3, 96, 16)


def test_lookup_policy_of_a_capped_result_decides_as_the_value_does():
    """The simulator's compiled look-up (simplex_value on the capped table) against
    VIResult.decision (numpy): the same server on states within the cap, and never a server
    that would make the second-largest backlog exceed it."""
    from symq.dispatch.policies.named import get_policy

    r = solve_optimal(3, 0.7, EXP, delta=0.5, U=16.0, U2=4.0, tol=1e-8)
    bound = get_policy("lookup", result=r).bind(3, 0.7, EXP)
    rng = np.random.default_rng(5)
    u = np.sort(rng.uniform(0.0, 20.0, size=(3000, 3)), axis=1)
    u[:, :2] = np.minimum(u[:, :2], rng.uniform(0.0, 4.0, size=(3000, 1)))   # within the cap
    u = rng.permuted(u, axis=1)
    x = rng.exponential(1.0, size=3000)
    chosen = np.asarray(bound.decide(u, x))
    np.testing.assert_array_equal(chosen, r.decision(u, x))
    after = u.copy()
    after[np.arange(3000), chosen] += x
    assert np.all(np.sort(after, axis=1)[:, 1] <= 4.0 + 1e-12)
