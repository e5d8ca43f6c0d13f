"""Value iteration for size-aware dispatching: the optimal policy and fixed policies.

The average-cost Bellman equations on the backlogs of Hyytiä & Righter (arXiv 2402.08142,
Part 1: truncation, discretisation, state-space reduction), solved by relative value iteration
with Odoni bounds.

* :mod:`~symq.dispatch.vi.solvers`: :func:`solve_optimal`, :func:`evaluate_policy` (1 to 6
  identical servers);
* :mod:`~symq.dispatch.vi.accuracy`: :func:`solve_accurate`, value iteration at the accuracy
  asked for (three or four grids, a checked truncation, the errors stated separately);
* :mod:`~symq.dispatch.vi.planning`: grid checks, memory and time estimates (:func:`plan_optimal`);
* :mod:`~symq.dispatch.vi.grid`: the lattice, hat-kernel size atoms, sorted states, analytic tail;
* :mod:`~symq.dispatch.vi.passes` and :mod:`~symq.dispatch.vi.simplex_passes`: the numba passes
  of the operator :math:`T = E_A \\circ \\min E_X` (``m <= 2``; the packed simplex for ``m >= 3``);
* :mod:`~symq.dispatch.vi.iteration`: relative VI with Odoni bounds, :class:`VIResult`;
* :mod:`~symq.dispatch.vi.multigrid`: warm starts and Richardson extrapolation (:func:`richardson`);
* :mod:`~symq.dispatch.vi.policy_iteration`: policy iteration with Krylov policy evaluation;
* :mod:`~symq.dispatch.vi.speed_solvers` and :mod:`~symq.dispatch.vi.speed_passes`: servers of
  different speeds;
* :mod:`~symq.dispatch.vi.by_size`: mean response time by job size from a value (two servers);
* :mod:`~symq.dispatch.vi.decision_space`: the two-server lattice as a generic MDP of
  :mod:`symq.markov.mdp`, solved by its value iteration, policy iteration or linear program
  (:func:`solve_generic`), an independent check of the passes above.

Examples
--------
>>> from symq.laws import Exponential
>>> res = solve_optimal(1, 0.5, Exponential(1.0), delta=0.1, U=12.0)
>>> abs(res.ET - 2.0) < 0.01     # M/M/1: E[T] = 1/(1 - rho)
True
"""

from .accuracy import DispatchVIEstimate, solve_accurate
from .decision_space import GenericDispatchSolution, solve_generic
from .iteration import VIResult
from .multigrid import RichardsonResult, richardson
from .planning import plan_optimal
from .solvers import evaluate_policy, solve_optimal
from .speed_solvers import evaluate_policy_speeds, solve_optimal_speeds

__all__ = ["solve_optimal", "evaluate_policy", "solve_accurate", "DispatchVIEstimate",
           "VIResult", "richardson", "RichardsonResult", "plan_optimal", "solve_optimal_speeds",
           "evaluate_policy_speeds", "solve_generic", "GenericDispatchSolution"]
