"""The coarse-grid correction of value iteration changes the iterate, never the fixed point.

Each test solves the same grid by plain relative value iteration (an independent run of the
Odoni-certified iteration) and with the correction of
:mod:`symq.dispatch.vi.coarse_correction`: the two certified brackets must overlap, and both
must be as narrow as asked.  The transfer operators are checked on functions they must
reproduce exactly (multilinear interpolation of a multilinear function).
"""

from __future__ import annotations

import numpy as np
import pytest

from symq.dispatch import score_policy
from symq.dispatch.simplex import colex_states
from symq.dispatch.sizes import named_sizes
from symq.dispatch.vi.coarse_correction import (
    _Transfer,
    corrected_iteration,
    correction_grid,
)
from symq.dispatch.vi.grid import DispatchGrid
from symq.dispatch.vi.iteration import _iterate
from symq.dispatch.vi.passes import MODE_OPT, MODE_RND, MODE_TABLE
from symq.dispatch.vi.solvers import evaluate_policy, lwl_table
from symq.laws import Exponential

EXP = Exponential(1.0)
H2 = named_sizes("h2", scv=4.0)


def _plain(grid, mode, table_fn, tol):
    return _iterate(grid, mode, table_fn(grid), None, tol, None, None, 50_000, False, "plain")


@pytest.mark.parametrize(("m", "rho", "sizes", "delta", "U", "mode"), [
    (1, 0.9, EXP, 0.25, 64.0, MODE_RND),
    (2, 0.9, EXP, 0.4, 64.0, MODE_OPT),
    (2, 0.6, H2, 0.25, 24.0, MODE_OPT),
    (2, 0.7, EXP, 0.25, 24.0, MODE_TABLE),
    (3, 0.6, EXP, 0.4, 16.0, MODE_OPT),
    (3, 0.8, EXP, 0.5, 24.0, MODE_RND),
])
def test_same_certified_value_as_plain_iteration(m, rho, sizes, delta, U, mode):
    grid = DispatchGrid.build(m, rho, sizes, delta, U)
    table_fn = (lambda g: lwl_table(g)) if mode == MODE_TABLE else (lambda g: None)
    coarse = DispatchGrid.build(m, rho, sizes, 2 * delta, U, correction_level=True)
    tol = 1e-9
    _, g0, lo0, hi0, it0, span0 = _plain(grid, mode, table_fn, tol)
    v, g1, lo1, hi1, it1, span1, coarse_it = corrected_iteration(
        grid, mode, table_fn, None, tol, coarse=coarse)
    assert hi0 - lo0 < tol and hi1 - lo1 < tol
    assert lo1 <= g1 <= hi1
    assert max(lo0, lo1) <= min(hi0, hi1)            # both brackets hold the fixed point
    assert coarse_it > 0
    assert v.shape == grid.shape() and abs(v.reshape(-1)[0]) < 1e-12


def test_a_misleading_coarse_grid_still_converges_to_the_fixed_point():
    # the correction grid of another load carries the wrong smooth error: the cycles stall
    # and the iteration finishes as plain VI, to the same certified bracket
    grid = DispatchGrid.build(2, 0.8, EXP, 0.25, 32.0)
    wrong = DispatchGrid.build(2, 0.3, EXP, 0.5, 32.0, correction_level=True)
    tol = 1e-8
    _, g0, lo0, hi0, *_ = _plain(grid, MODE_OPT, lambda g: None, tol)
    _, g1, lo1, hi1, *_ = corrected_iteration(grid, MODE_OPT, lambda g: None, None, tol,
                                              coarse=wrong)
    assert hi1 - lo1 < tol and max(lo0, lo1) <= min(hi0, hi1)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_transfer_reproduces_multilinear_functions(m):
    """Prolongation of the restriction of f is f for f linear in each backlog; the
    restriction reads f at the even lattice points."""
    N = 12
    grid = DispatchGrid.build(m, 0.5, EXP, 0.5, N * 0.5)
    transfer = _Transfer(grid)
    if m <= 2:
        axes = np.meshgrid(*[np.arange(N + 1.0)] * m, indexing="ij")
    else:
        states = colex_states(m, N).astype(float)
        axes = [states[:, i] for i in range(m)]
    # symmetric and multilinear: the sum and the elementary symmetric polynomial of degree 2
    f = sum(axes) + sum(axes[i] * axes[j] for i in range(m) for j in range(i + 1, m)) + 1.0
    coarse_values = transfer.restrict(f)
    if m <= 2:
        half = np.meshgrid(*[2 * np.arange(N // 2 + 1.0)] * m, indexing="ij")
    else:
        cs = 2 * colex_states(m, N // 2).astype(float)
        half = [cs[:, i] for i in range(m)]
    expected = sum(half) + sum(half[i] * half[j] for i in range(m)
                               for j in range(i + 1, m)) + 1.0
    np.testing.assert_array_equal(coarse_values, expected)
    np.testing.assert_allclose(transfer.prolong(coarse_values), f, rtol=0, atol=1e-12)


def test_correction_grid_only_where_it_pays():
    small = DispatchGrid.build(2, 0.5, EXP, 0.25, 16.0)          # 2,145 states
    assert correction_grid(small, EXP) is None
    odd = DispatchGrid.build(2, 0.9, EXP, 0.5, 64.5)              # an odd number of steps
    assert correction_grid(odd, EXP) is None
    big = DispatchGrid.build(2, 0.9, EXP, 0.4, 64.0)
    coarse = correction_grid(big, EXP)
    assert coarse is not None and coarse.delta == pytest.approx(0.8) and coarse.N == 80


def test_policy_on_the_full_lattice_through_the_public_api():
    # a policy that need not be symmetric in the servers (the full-lattice table of m = 2),
    # evaluated with and without the correction by evaluate_policy
    kw = dict(delta=0.25, U=32.0, tol=1e-8, multigrid=False)
    plain = evaluate_policy(score_policy("u", "u"), 2, 0.7, EXP, coarse_correction=False, **kw)
    corrected = evaluate_policy(score_policy("u", "u"), 2, 0.7, EXP, **kw)
    assert [level[0] for level in corrected.levels] == [0.5, 0.25]   # the correction ran
    assert plain.levels == [(0.25, plain.iterations, plain.ET)]
    assert max(plain.ET_low, corrected.ET_low) <= min(plain.ET_high, corrected.ET_high)
    assert corrected.ET_high - corrected.ET_low < 1e-8


def test_progress_bar_run_gives_the_same_bracket(capsys):
    grid = DispatchGrid.build(2, 0.7, EXP, 0.25, 24.0)
    coarse = DispatchGrid.build(2, 0.7, EXP, 0.5, 24.0, correction_level=True)
    _, _, lo0, hi0, *_ = _plain(grid, MODE_OPT, lambda g: None, 1e-9)
    _, _, lo1, hi1, *_ = corrected_iteration(grid, MODE_OPT, lambda g: None, None, 1e-9,
                                             coarse=coarse, progress=True)
    assert hi1 - lo1 < 1e-9 and max(lo0, lo1) <= min(hi0, hi1)
    assert "corrected" in capsys.readouterr().err


def test_no_correction_without_room_for_it(monkeypatch):
    big = DispatchGrid.build(2, 0.9, EXP, 0.4, 64.0)
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(2 * 8 * big.n_states * 4))
    assert correction_grid(big, EXP) is None
