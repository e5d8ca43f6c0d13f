"""The packed sorted simplex of m servers and its passes, against brute-force computations.

Ranks against an enumeration of the sorted tuples, the E_X pass against a plain-Python
evaluation of min_i {c_i delta + v(sort(c + k e_i))} (with the analytic tail beyond U), the
E_A recursion against its definition, and value iteration for 4 and 5 servers against the
exact mean response times of the equal random split (M/M/1 per server) and LWL (Erlang C).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.dispatch import exact_mean_response
from symq.dispatch.simplex import binomial_table, colex_states, predecessors, rank_of, simplex_value
from symq.dispatch.sizes import named_sizes
from symq.dispatch.vi import solvers as vi
from symq.dispatch.vi.grid import DispatchGrid
from symq.dispatch.vi.multigrid import richardson
from symq.dispatch.vi.passes import MODE_OPT, MODE_RND, MODE_TABLE, _KernelChoice
from symq.dispatch.vi.simplex_passes import MODE_JIQ, ea_pass, ex_pass
from symq.laws import Exponential

EXP = Exponential(1.0)
UNIFORM = named_sizes("uniform")        # sizes on [0, 2]: few size atoms, quick grids


@pytest.mark.parametrize("m", [3, 4, 6])
def test_ranks_enumerate_the_sorted_tuples(m):
    N = 5
    states = colex_states(m, N)
    # independent: every multiset of size m from 0..N, ordered by its largest component first
    expected = sorted(itertools.combinations_with_replacement(range(N + 1), m),
                      key=lambda c: tuple(reversed(c)))
    assert [tuple(s) for s in states] == expected
    B = binomial_table(m, N)
    assert [rank_of(s, B) for s in states] == list(range(math.comb(N + m, m)))
    pred = predecessors(m, N, B)
    lookup = {tuple(s): r for r, s in enumerate(expected)}
    for r, s in enumerate(expected):
        down = tuple(max(x - 1, 0) for x in s)
        assert pred[r] == (-1 if r == 0 else lookup[down])


def _brute_force(V, states, N, p, tail, delta, mode, table):
    """h(c) - E[X] by direct evaluation of every server and atom (plain Python)."""
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
                    extra = tail[new[i] - N]
                    new[i] = N
                costs.append(c[i] * delta + V[index[tuple(sorted(new))]] + extra)
            if mode == MODE_OPT:
                choice = min(costs)
            elif mode == MODE_RND or (mode == MODE_JIQ and c[0] > 0):
                choice = sum(costs) / m
            elif mode == MODE_JIQ:
                choice = costs[0]
            else:
                choice = costs[table[r, k]]
            total += p[k] * choice
        out[r] = total
    return out


@pytest.mark.parametrize("m", [3, 4])
@pytest.mark.parametrize("mode", [MODE_OPT, MODE_RND, MODE_JIQ, MODE_TABLE])
def test_ex_pass_equals_brute_force(m, mode):
    grid = DispatchGrid.build(m, 0.4, UNIFORM, 0.5, 5.0)          # N = 10, 5 atoms
    states = colex_states(m, grid.N)
    rng = np.random.default_rng(7)
    V = rng.random(len(states)) * 5
    B = binomial_table(m, grid.N)
    table = rng.integers(0, m, size=(len(states), grid.K + 1)).astype(np.int8)
    if mode == MODE_TABLE:                  # a sorted position inside a run of ties picks the
        table = np.maximum(table, 0)        # same sorted state as any other in the run
    out = np.empty(len(states))
    for parallel in (False, True):
        ex_pass(V, B, grid.N, grid.p, grid.tail_increments(), grid.delta, mode,
                table if mode == MODE_TABLE else np.zeros((1, 1), np.int8), out,
                parallel=parallel)
        expected = _brute_force(V, states, grid.N, grid.p, grid.tail_increments(), grid.delta,
                                mode, table)
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_recorded_decisions_are_the_argmin():
    m = 4
    grid = DispatchGrid.build(m, 0.4, UNIFORM, 0.5, 5.0)
    states = colex_states(m, grid.N)
    V = np.random.default_rng(3).random(len(states)) * 5
    B = binomial_table(m, grid.N)
    table = np.zeros((len(states), grid.K + 1), dtype=np.int8)
    out = np.empty(len(states))
    ex_pass(V, B, grid.N, grid.p, grid.tail_increments(), grid.delta, MODE_OPT, table, out,
            record=True)
    again = np.empty(len(states))   # evaluating the recorded table reproduces the min
    ex_pass(V, B, grid.N, grid.p, grid.tail_increments(), grid.delta, MODE_TABLE, table, again)
    np.testing.assert_allclose(again, out, rtol=1e-13)


def test_ea_pass_is_the_diagonal_recursion():
    m, N = 3, 4
    states = colex_states(m, N)
    B = binomial_table(m, N)
    h = np.random.default_rng(1).random(len(states))
    a, b, q = 0.3, 0.2, 0.5
    f = ea_pass(h, predecessors(m, N, B), a, b, q)
    index = {tuple(s): r for r, s in enumerate(states)}
    memo = {}

    def ref(c):                      # f(c) = a h(c) + b h(c-) + q f(c-), f(0) = h(0)
        if c in memo:
            return memo[c]
        if max(c) == 0:
            val = h[index[c]]
        else:
            down = tuple(max(x - 1, 0) for x in c)
            val = a * h[index[c]] + b * h[index[down]] + q * ref(down)
        memo[c] = val
        return val

    np.testing.assert_allclose(f, [ref(tuple(s)) for s in states], rtol=1e-14)


def test_simplex_value_interpolates_a_symmetric_quadratic():
    m, N, delta, c_M = 4, 10, 0.5, 0.3
    states = colex_states(m, N)
    V = (states * delta).sum(axis=1) * 1.5 + 2.0      # linear: interpolation is exact
    B = binomial_table(m, N)
    u = np.array([0.3, 4.9, 2.25, 1.0])
    assert simplex_value(V, B, N, delta, c_M, u) == pytest.approx(u.sum() * 1.5 + 2.0, rel=1e-13)
    far = np.array([0.3, 7.0, 2.25, 1.0])             # U = 5: analytic tail beyond it
    expected = (far.clip(max=5.0).sum() * 1.5 + 2.0) + c_M * (7.0 ** 2 - 25.0)
    assert simplex_value(V, B, N, delta, c_M, far) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("m, policy, rho, sizes", [(4, "lwl", 0.25, EXP),
                                                   (5, "rnd", 0.4, UNIFORM)])
def test_value_iteration_with_many_servers_matches_exact_values(m, policy, rho, sizes):
    top = 8.0 if m == 4 else 6.0
    rr = richardson(functools.partial(vi.evaluate_policy, policy), m, rho, sizes, delta=0.5,
                    U=top, tol=1e-9)
    # Erlang C for LWL with exponential sizes; Pollaczek-Khinchine per server for the split
    exact = exact_mean_response(policy, m, rho, sizes).ET
    assert rr.ET == pytest.approx(exact, rel=2e-3)       # U truncates: about 1e-3


def test_policy_and_value_iteration_agree():
    for m in (2, 3):
        a = vi.solve_optimal(m, 0.4, EXP, delta=0.25, U=8.0, tol=1e-10)
        b = vi.solve_optimal(m, 0.4, EXP, delta=0.25, U=8.0, tol=1e-10, method="pi")
        # both Odoni brackets hold the optimal g of the same discrete MDP: they intersect
        assert max(a.ET_low, b.ET_low) <= min(a.ET_high, b.ET_high)
        assert abs(a.ET - b.ET) < 1e-9
        assert b.method.startswith("policy iteration")


def test_optimal_beats_lwl_with_four_servers():
    opt = vi.solve_optimal(4, 0.4, EXP, delta=0.5, U=8.0, tol=1e-9)
    lwl = vi.evaluate_policy("lwl", 4, 0.4, EXP, delta=0.5, U=8.0, tol=1e-9)
    assert opt.ET_high < lwl.ET_low
    # the decision of a VI result with 4 servers: a tiny job joins the shortest queue
    assert int(opt.decision(np.array([2.0, 0.5, 3.0, 1.0]), 0.05)) == 1


def test_kernel_choice_keeps_the_faster_build_and_rechecks_when_the_load_changes():
    calls = []
    slow = {True: True}            # which build is slow: the "parallel" one, on shared cores
    cost = {True: 300_000}

    def call(parallel):
        calls.append(parallel)
        if parallel == slow[True]:
            sum(range(cost[True]))

    choice = _KernelChoice(big=True)
    n = 1 + _KernelChoice.TRIALS
    for _ in range(n + 5):
        choice.run(call)
    assert sorted(calls[1:n]) == [False] * 3 + [True] * 3      # both builds timed
    assert calls[n:] == [False] * 5                              # then the serial one kept
    slow[True] = False              # now the serial build is the slow one (the load moved):
    for _ in range(_KernelChoice.RECHECK + _KernelChoice.TRIALS):  # found by the re-check
        choice.run(call)
    assert calls[-5:] == [True] * 5
    slow[True] = True               # parallel much slower than serial was: seen at once
    cost[True] = 1_500_000
    for _ in range(3 + _KernelChoice.TRIALS + 5):
        choice.run(call)
    assert calls[-5:] == [False] * 5
    small = _KernelChoice(big=False)
    small.run(call)
    assert calls[-1] is False


def test_bad_server_counts_and_grids_are_refused():
    with pytest.raises(InvalidParameter, match=r"parameter m=7 must be 1\.\.6"):
        vi.solve_optimal(7, 0.4, EXP, delta=0.5, U=8.0)
    with pytest.raises(ResourceLimit, match=r"delta=0\.1 must be >= .*sorted states"):
        vi.solve_optimal(6, 0.4, EXP, delta=0.1, U=24.0)


@pytest.mark.parametrize("m, U, cap, target_cap",
                         [(3, 24.0, 8.0, 8.0), (3, 24.0, 8.0, 12.0), (3, 24.0, 8.0, None),
                          (4, 12.0, None, None)])
def test_block_interpolation_matches_the_numpy_value(monkeypatch, m, U, cap, target_cap):
    """The warm start (compiled, block by block, parallel) against VIResult.value (numpy),
    onto the stored states of a grid of the same cap, a larger one and none (the cap check's
    starts: the lower components clamped to the source's cap)."""
    from symq.dispatch.vi import planning
    from symq.dispatch.vi.grid import DispatchGrid
    from symq.dispatch.vi.multigrid import _interpolate_to
    from symq.dispatch.vi.solvers import solve_optimal
    from symq.laws import Exponential

    monkeypatch.setattr(planning, "INTERPOLATION_BLOCK", 1000)
    rho = 0.4 if cap is None else 0.7
    coarse = solve_optimal(m, rho, Exponential(1.0), delta=0.5, U=U, U2=cap, tol=1e-4)
    grid = DispatchGrid.build(m, rho, Exponential(1.0), 0.25, U, U2=target_cap)
    pts = colex_states(m, grid.N, grid.N2) * grid.delta
    assert pts.shape[0] == grid.n_states
    if cap is not None:
        pts[:, :-1] = np.minimum(pts[:, :-1], cap)
    reference = coarse.value(pts)
    blocked = _interpolate_to(coarse, grid)
    assert blocked.shape == reference.shape and np.all(np.abs(reference) < 1e3)
    np.testing.assert_allclose(blocked, reference, rtol=1e-13, atol=1e-12)
