"""Declared MDPs: symq's solvers side by side with pymdptoolbox on the same discretised model.

The model is :func:`symq.markov.mdp.library.routing` (arrivals routed to one of two
exponential servers) on a truncation ``N`` per queue, uniformised at rate ``Lambda``: the
discrete-time model pymdptoolbox takes (one sparse ``P_a`` per action, rewards ``-cost``).
pymdptoolbox has no action guards, so where symq offers one action only (at the truncation) the
other action's row repeats it: the same optimum.

* relative value iteration, average cost: symq's numba sweep (:func:`value_iteration`, stopped
  when the Odoni bracket's half-width is ``eps/2`` per step, the same rule as pymdptoolbox's
  span test ``span(v_n - v_{n-1}) < eps``) against ``mdptoolbox.mdp.RelativeValueIteration``;
* average cost with each tool's own method: symq's default policy iteration against
  pymdptoolbox's relative value iteration (its only average-cost solver);
* policy iteration, discounted (pymdptoolbox's only PI): symq's sparse LU evaluation against
  ``mdptoolbox.mdp.PolicyIteration`` (its evaluation solves the dense system);
* the discretised two-server dispatching problem (Hyytiä & Righter, Part 1) on the generic
  solvers (:func:`symq.dispatch.vi.solve_generic`) beside the dedicated passes
  (:func:`symq.dispatch.vi.solve_optimal`) on the same lattice, ``U`` growing: the relative
  difference in ``E[T]`` (the truncations differ: a clip against the analytic tail) and times;
* ``--big``: symq alone on about 10^6 state-action pairs (VI to a relative bracket of 1e-6) and
  policy iteration on about 10^5 states (the figures issue 34 names).

Each pair is run in the same session, ours first then theirs, and the policies compared state by
state (they must agree wherever the optimal action is unique).  pymdptoolbox is not a
dependency: ``pip install pymdptoolbox`` (it is skipped when missing).

Run: ``python benchmarks/bench_mdp.py [--big]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sps

from symq.markov.mdp import build_decision_space, solve_mdp
from symq.markov.mdp.library import routing
from symq.markov.mdp.solvers import (
    UNIFORMISATION_MARGIN,
    policy_iteration,
    value_iteration,
)

PARAMS = {"lam": 1.2, "mu1": 2.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0}


def discretised(space, alpha=None):
    """One sparse transition matrix per action and the reward table, uniformised."""
    n, n_actions = space.n_states, len(space.mdp.actions)
    fastest = float(space.pair_out.max())
    uniform = (1.0 + UNIFORMISATION_MARGIN) * fastest
    table = np.full((n, n_actions), -1)
    table[space.pair_state, space.pair_action] = np.arange(space.n_pairs)
    for a in range(n_actions):              # no guard in pymdptoolbox: repeat an allowed pair
        missing = table[:, a] < 0
        table[missing, a] = table[missing, :].max(axis=1)
    matrices, rewards = [], np.empty((n, n_actions))
    for a in range(n_actions):
        pairs = table[:, a]
        off = space.generator(pairs) / uniform
        matrices.append((sps.identity(n, format="csr") + off).tocsr())
        rewards[:, a] = -space.pair_cost[pairs] / (uniform + (alpha or 0.0))
    return matrices, rewards, uniform, table


def timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def versus_vi(n_trunc, eps):
    import mdptoolbox.mdp as toolbox

    space = build_decision_space(routing(), PARAMS, {"n1": n_trunc, "n2": n_trunc})
    matrices, rewards, uniform, table = discretised(space)
    ours, t_ours = timed(lambda: value_iteration(space, atol=0.5 * eps * uniform, rtol=1e-300,
                                                 max_iterations=10**7))
    theirs_solver = toolbox.RelativeValueIteration(matrices, rewards, epsilon=eps,
                                                   max_iter=10**7)
    _, t_theirs = timed(theirs_solver.run)
    g_theirs = -uniform * theirs_solver.average_reward
    policy = np.asarray(theirs_solver.policy)
    ours_policy = space.pair_action[ours.pairs]
    theirs_action = space.pair_action[table[np.arange(space.n_states), policy]]
    same = np.mean(ours_policy == theirs_action)
    print(f"RVI  N={n_trunc:4d} states={space.n_states:7d} pairs={space.n_pairs:8d} "
          f"eps={eps:g}: symq {t_ours:7.2f} s ({ours.iterations} sweeps, gain "
          f"{ours.value:.8f} in [{ours.low:.8f}, {ours.high:.8f}]) | pymdptoolbox "
          f"{t_theirs:7.2f} s ({theirs_solver.iter} sweeps, gain {g_theirs:.8f}) | ratio "
          f"{t_theirs / t_ours:5.1f}x | same action at {same:.1%} of states")


def versus_default(n_trunc, eps):
    """Average cost, each tool's own method: symq's default (policy iteration with sparse LU,
    a bracket of round-off width) against pymdptoolbox's only average-cost solver (relative
    value iteration to ``eps``)."""
    import mdptoolbox.mdp as toolbox

    space = build_decision_space(routing(), PARAMS, {"n1": n_trunc, "n2": n_trunc})
    matrices, rewards, uniform, table = discretised(space)
    ours, t_ours = timed(lambda: policy_iteration(space))
    solver = toolbox.RelativeValueIteration(matrices, rewards, epsilon=eps, max_iter=10**7)
    _, t_theirs = timed(solver.run)
    g_theirs = -uniform * solver.average_reward
    theirs_action = space.pair_action[table[np.arange(space.n_states), np.asarray(solver.policy)]]
    same = np.mean(space.pair_action[ours.pairs] == theirs_action)
    print(f"AVG  N={n_trunc:4d} states={space.n_states:7d}: symq PI {t_ours:6.2f} s (gain "
          f"{ours.value:.10f} +- {ours.error:.1g}) | pymdptoolbox RVI eps={eps:g} "
          f"{t_theirs:6.2f} s (gain {g_theirs:.8f}) | ratio {t_theirs / t_ours:5.1f}x | same "
          f"action at {same:.1%} of states")


def versus_pi(n_trunc, alpha):
    import mdptoolbox.mdp as toolbox

    space = build_decision_space(routing(), PARAMS, {"n1": n_trunc, "n2": n_trunc})
    matrices, rewards, uniform, table = discretised(space, alpha)
    ours, t_ours = timed(lambda: policy_iteration(space, alpha))
    solver = toolbox.PolicyIteration(matrices, rewards, uniform / (uniform + alpha),
                                     eval_type="matrix", max_iter=1000)
    _, t_theirs = timed(solver.run)
    v_theirs = -float(np.asarray(solver.V)[space.initial])
    policy = np.asarray(solver.policy)
    theirs_action = space.pair_action[table[np.arange(space.n_states), policy]]
    same = np.mean(space.pair_action[ours.pairs] == theirs_action)
    print(f"PI   N={n_trunc:4d} states={space.n_states:7d} alpha={alpha:g}: symq {t_ours:6.2f} s "
          f"({ours.iterations} policies, value {ours.value:.10f}) | pymdptoolbox "
          f"{t_theirs:6.2f} s ({solver.iter} policies, value {v_theirs:.10f}) | ratio "
          f"{t_theirs / t_ours:5.1f}x | same action at {same:.1%} of states")


def big():
    n_trunc = 706                                  # 2 actions x 707^2 states: ~10^6 pairs
    space, t_build = timed(lambda: build_decision_space(
        routing(), PARAMS, {"n1": n_trunc, "n2": n_trunc}))
    out, t = timed(lambda: value_iteration(space, rtol=1e-6, max_iterations=10**6))
    print(f"RVI  {space.n_pairs} pairs ({space.n_states} states, built in {t_build:.1f} s): "
          f"{t:.1f} s, {out.iterations} sweeps, gain {out.value:.8f} +- {out.error:.2g}")
    n_trunc = 315                                  # 316^2 = 99,856 states
    space = build_decision_space(routing(), PARAMS, {"n1": n_trunc, "n2": n_trunc})
    out, t = timed(lambda: policy_iteration(space))
    print(f"PI   {space.n_states} states: {t:.1f} s, {out.iterations} policies, gain "
          f"{out.value:.10f} +- {out.error:.2g}")
    solved, t = timed(lambda: solve_mdp(routing(), PARAMS))
    print(f"solve_mdp (truncations doubled to {solved.truncation}): {t:.1f} s")


def dispatch_lattice():
    from symq.dispatch.vi import solve_generic, solve_optimal
    from symq.laws import Exponential

    sizes, rho, delta = Exponential(1.0), 0.4, 0.5
    for U in (16.0, 24.0, 32.0):
        dedicated, t_ded = timed(lambda U=U: solve_optimal(2, rho, sizes, delta=delta, U=U,
                                                           tol=1e-11))
        generic, t_gen = timed(lambda U=U: solve_generic(rho, sizes, delta, U, "vi"))
        print(f"dispatch m=2 rho={rho} delta={delta} U={U:g}: generic VI {t_gen:6.2f} s "
              f"({generic.n_states} states, {generic.n_transitions} transitions, ET "
              f"{generic.ET:.10f}) | dedicated {t_ded:5.2f} s (ET {dedicated.ET:.10f}) | "
              f"relative difference {generic.ET / dedicated.ET - 1:+.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", action="store_true")
    args = parser.parse_args()
    small = build_decision_space(routing(), PARAMS, {"n1": 8, "n2": 8})
    value_iteration(small)                              # compile the numba sweeps first
    try:
        import mdptoolbox.mdp  # noqa: F401
    except ImportError:
        print("pymdptoolbox is not installed (pip install pymdptoolbox): symq alone")
    else:
        for n_trunc in (30, 60, 120):
            versus_vi(n_trunc, 1e-6)
        for n_trunc in (30, 60, 120):
            versus_default(n_trunc, 1e-6)
        for n_trunc in (20, 40):
            versus_pi(n_trunc, 0.1)
    dispatch_lattice()
    if args.big:
        big()


if __name__ == "__main__":
    main()
