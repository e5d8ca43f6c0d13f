"""Optimal size-aware dispatching to parallel FCFS servers (Hyytiä & Righter, arXiv 2402.08142).

* :mod:`~symq.dispatch.sizes`: the one job-size conversion :func:`as_size_law` (a
  :class:`~symq.laws.PhaseType` or ``(alpha, A)``, an ME law, a frozen scipy distribution, a
  name) into the internal :class:`SizeLaw`;
* :mod:`~symq.dispatch.symbolic`: Bellman equations, the M/G/1 value of the backlog (checked to
  give Pollaczek-Khinchine), the FPI index and FPI(RND) = LWL;
* :mod:`~symq.dispatch.accuracy`: :func:`solve_accurate`, value iteration at the accuracy asked
  for (three grids, a checked truncation, the three errors stated separately);
* :mod:`~symq.dispatch.vi`: the value-iteration solvers (optimal policy, fixed policies) for
  1 to 6 identical servers (:mod:`~symq.dispatch.simplex` for ``m >= 3``), policy iteration
  (:mod:`~symq.dispatch.policy_iteration`), servers of different speeds
  (:mod:`~symq.dispatch.speeds_vi`); on
  :mod:`~symq.dispatch.grid` (lattice, hat-kernel sizes, sorted states, analytic tail),
  :mod:`~symq.dispatch.passes` (the numba E_X pass and diagonal E_A recursion),
  :mod:`~symq.dispatch.iteration` (relative VI with Odoni bounds, :class:`VIResult`),
  :mod:`~symq.dispatch.multigrid` (warm starts, Richardson extrapolation) and
  :mod:`~symq.dispatch.planning` (grid checks, memory and time estimates);
* :mod:`~symq.dispatch.policies`: RND, RR, JSQ, LWL, SITA (-E, -opt), FPI, lookup of a VI value;
* :mod:`~symq.dispatch.score`: user-defined index policies, :func:`score_policy` (a score
  formula or a numba function, run inside the simulator's and the VI tables' kernels);
* :mod:`~symq.dispatch.exact`: exact mean response times where they exist;
* :mod:`~symq.dispatch.simulation`: the numba simulator of every policy (with server speeds);
* :mod:`~symq.dispatch.fairness`: mean response time by job size, data and plot;
* :mod:`~symq.dispatch.plots`: decision regions and value function of a two-server policy,
  data and (optional) matplotlib plots;
* :mod:`~symq.dispatch.model`: the registered ``dispatch`` model;
* :mod:`~symq.dispatch.declared`: the registered ``dispatch-sim`` model (simulated ET of a
  built-in policy) and the claims-file model kind ``dispatch-score``.

Examples
--------
>>> from symq.dispatch import exact_mean_response, exponential
>>> round(exact_mean_response("lwl", 2, 0.4, exponential()).ET, 6)    # M/M/2
1.190476
"""

from .exact import (
    EXACT_POLICIES,
    ExactResult,
    exact_mean_response,
    sita_e_thresholds,
    sita_opt_thresholds,
)
from .model import DISPATCH, solve_dispatch
from .policies import POLICY_NAMES, DispatchPolicy, get_policy
from .score import ScorePolicy, score_policy
from .simulation import DispatchEstimate, simulate_dispatch
from .sizes import (
    SIZE_NAMES,
    SizeLaw,
    as_size_law,
    exponential,
    from_me,
    from_phase_type,
    from_scipy,
    get_sizes,
    hyperexponential2,
)
from .iteration import VIResult
from .multigrid import RichardsonResult, richardson
from .planning import plan_optimal
from .vi import evaluate_policy, solve_optimal
from .accuracy import DispatchVIEstimate, solve_accurate
from .fairness import ResponseBySize, plot_response_by_size, response_by_size_data
from .plots import (
    decision_regions_data,
    plot_decision_regions,
    plot_value_diagonal,
    value_diagonal_data,
)
from .speeds_vi import evaluate_policy_speeds, solve_optimal_speeds
from .declared import DISPATCH_SCORE, DISPATCH_SIM, solve_dispatch_sim

__all__ = [
    "SizeLaw", "as_size_law", "exponential", "from_scipy", "from_phase_type", "from_me",
    "get_sizes", "hyperexponential2", "SIZE_NAMES",
    "exact_mean_response", "ExactResult", "EXACT_POLICIES", "sita_e_thresholds", "sita_opt_thresholds",
    "get_policy", "DispatchPolicy", "POLICY_NAMES", "simulate_dispatch",
    "DispatchEstimate",
    "solve_optimal", "evaluate_policy", "richardson", "plan_optimal", "VIResult",
    "RichardsonResult",
    "solve_dispatch", "DISPATCH", "ScorePolicy", "score_policy", "solve_dispatch_sim",
    "DISPATCH_SIM", "DISPATCH_SCORE", "solve_accurate", "DispatchVIEstimate",
    "response_by_size_data", "plot_response_by_size", "ResponseBySize",
    "solve_optimal_speeds", "evaluate_policy_speeds",
    "decision_regions_data", "plot_decision_regions", "value_diagonal_data",
    "plot_value_diagonal",
]
