"""The discretised two-server dispatching problem solved by the Markov domain's generic MDP
solvers (:mod:`symq.dispatch.vi.decision_space`) against the dedicated passes of
:mod:`symq.dispatch.vi`.

The two share only the discretisation (the grid's size atoms and exponential weights): the
generic side builds a transition list and sweeps it (value iteration), solves it by sparse LU
(policy iteration, policy evaluation) or by HiGHS (linear program); the dedicated side runs
the diagonal recursion and the min over two rows of the value array.  Their truncations
differ (a clip at ``U`` against the analytic tail beyond ``U``), so the comparisons are made
where the load leaves the backlog below ``U`` with a probability far under the tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.dispatch.vi import evaluate_policy, solve_optimal
from symq.dispatch.vi.decision_space import dispatch_decision_space, solve_generic
from symq.dispatch.vi.grid import sorted_states
from symq.laws import Exponential, Uniform

EXP = Exponential(1.0)
#: Sizes of bounded support (five atoms at step 0.5): a small lattice for the slower solvers.
UNIFORM = Uniform(0.0, 2.0)


@pytest.fixture(scope="module")
def uniform_sizes():
    rho, delta, U = 0.4, 0.5, 16.0
    dedicated = solve_optimal(2, rho, UNIFORM, delta=delta, U=U, tol=1e-12)
    generic = {m: solve_generic(rho, UNIFORM, delta, U, m) for m in ("vi", "pi")}
    return dedicated, generic


def test_generic_value_and_policy_iteration_give_the_dedicated_figure(uniform_sizes):
    dedicated, generic = uniform_sizes
    for method, g in generic.items():
        assert g.ET_low <= g.ET <= g.ET_high
        # measured: 1.5e-9 (vi) and 2.0e-9 (pi) relative; 2.6e-7 at U = 12 (the truncations)
        assert abs(g.ET - dedicated.ET) <= 1e-8 * dedicated.ET, (method, g.ET, dedicated.ET)
    vi, pi = generic["vi"], generic["pi"]
    assert vi.ET_low - 1e-12 <= pi.ET <= vi.ET_high + 1e-12


def test_generic_linear_program_brackets_the_other_solvers_and_the_dedicated_figure():
    rho, delta, U = 0.4, 0.5, 12.0
    lp = solve_generic(rho, UNIFORM, delta, U, "lp")
    dedicated = solve_optimal(2, rho, UNIFORM, delta=delta, U=U, tol=1e-12)
    for method in ("vi", "pi"):
        other = solve_generic(rho, UNIFORM, delta, U, method)
        assert lp.ET_low <= other.ET <= lp.ET_high, method
    assert abs(lp.ET - dedicated.ET) <= 1e-6 * dedicated.ET         # measured 3.4e-7


def test_generic_decisions_are_the_dedicated_ones_away_from_ties_and_the_truncation():
    rho, delta, U = 0.3, 0.5, 20.0
    dedicated = solve_optimal(2, rho, EXP, delta=delta, U=U, tol=1e-12)
    generic = solve_generic(rho, EXP, delta, U, "vi")
    # the truncations differ (a clip against the analytic tail): measured 9.9e-7 relative,
    # 8.9e-7 at U = 24 and 5.2e-9 at U = 32 (rho = 0.4)
    assert abs(generic.ET - dedicated.ET) <= 2e-6 * dedicated.ET
    v, d, N = dedicated.v, dedicated.delta, dedicated.N
    longer = generic.longer
    compared = differ = 0
    for r, (i, j) in enumerate(sorted_states(2, N)):
        for k in range(longer.shape[1]):
            if j + k > N // 2:        # relative values near U differ with the truncation
                break
            to_short = i * d + v[min(i + k, j), max(i + k, j)]
            to_long = j * d + v[i, j + k]
            if abs(to_short - to_long) < 1e-6:
                continue
            compared += 1
            differ += bool(longer[r, k]) != bool(to_long < to_short)
    assert compared > 1000 and differ == 0
    assert longer.any()              # the optimal policy is not least-work-left


def test_least_work_left_evaluated_by_sparse_lu_is_the_dedicated_evaluation():
    rho, delta, U = 0.5, 0.5, 20.0
    generic = solve_generic(rho, UNIFORM, delta, U, policy="lwl")
    dedicated = evaluate_policy("lwl", 2, rho, UNIFORM, delta=delta, U=U, tol=1e-12)
    assert not generic.longer.any()
    assert abs(generic.ET - dedicated.ET) <= 1e-8 * dedicated.ET


def test_the_layout_holds_one_probability_law_per_pair():
    space = dispatch_decision_space(0.5, UNIFORM, 0.5, 5.0)
    assert np.allclose(space.pair_out, 1.0, atol=1e-12)
    assert space.trans_rate.min() >= 0.0
    assert space.describe(space.n_lattice + 3) == "backlogs (0, 0), a job of size 1.5"


def test_bad_input_names_the_parameter():
    with pytest.raises(InvalidParameter, match="method"):
        solve_generic(0.3, EXP, 0.5, 8.0, "newton")
    with pytest.raises(InvalidParameter, match="policy"):
        solve_generic(0.3, EXP, 0.5, 8.0, policy="jsq")
    with pytest.raises(ResourceLimit, match="delta"):
        dispatch_decision_space(0.3, EXP, 0.01, 40.0)
