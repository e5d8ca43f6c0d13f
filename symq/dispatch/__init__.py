"""Optimal size-aware dispatching to parallel FCFS servers (Hyytiä & Righter, arXiv 2402.08142).

The package is laid out by concept:

* :mod:`~symq.dispatch.vi`: value iteration (Part 1 of the paper): the optimal policy and fixed
  policies for 1 to 6 identical servers or servers of different speeds, policy iteration,
  value iteration at a stated accuracy (:func:`solve_accurate`), grids, passes, planning;
* :mod:`~symq.dispatch.policies`: the dispatching policies (RND, RR, JSQ, LWL, JIQ, SITA,
  FPI, lookup of a value, user-defined scores), the exact mean response times where they exist
  and server speeds;
* :mod:`~symq.dispatch.simulation`: the numba simulator of every policy and the mean response
  time by job size (fairness);
* at the top, what they share and the front door: :mod:`~symq.dispatch.sizes` (the one
  conversion :func:`as_sizes` of a job-size law into a :class:`symq.laws.Distribution`),
  :mod:`~symq.dispatch.symbolic` (Bellman equations, the M/G/1 value of the backlog, the FPI
  index), :mod:`~symq.dispatch.simplex` (the packed sorted states of identical servers),
  :mod:`~symq.dispatch.sizebins` (size bins), :mod:`~symq.dispatch.plots` (decision regions
  and value function of a two-server policy), the registered models
  :mod:`~symq.dispatch.model` (``dispatch``) and :mod:`~symq.dispatch.declared`
  (``dispatch-sim`` and the claims-file kind ``dispatch-score``), listed for the registry by
  :mod:`~symq.dispatch.registration`.

Examples
--------
>>> from symq.dispatch import exact_mean_response
>>> from symq.laws import Exponential
>>> round(exact_mean_response("lwl", 2, 0.4, Exponential(1.0)).ET, 6)    # M/M/2
1.190476
"""

from .declared import DISPATCH_SCORE, DISPATCH_SIM, solve_dispatch_sim
from .model import DISPATCH, DispatchSolution, solve_dispatch
from .plots import (
    decision_regions_data,
    plot_decision_regions,
    plot_value_diagonal,
    value_diagonal_data,
)
from .policies import (
    EXACT_POLICIES,
    POLICY_NAMES,
    DispatchPolicy,
    ExactResult,
    ScorePolicy,
    exact_mean_response,
    get_policy,
    score_policy,
    sita_e_thresholds,
    sita_opt_thresholds,
)
from .simulation import (
    DispatchEstimate,
    ResponseBySize,
    plot_response_by_size,
    response_by_size_data,
    simulate_dispatch,
)
from .sizes import as_sizes, named_sizes
from .vi import (
    DispatchVIEstimate,
    RichardsonResult,
    VIResult,
    evaluate_policy,
    evaluate_policy_speeds,
    plan_optimal,
    richardson,
    solve_accurate,
    solve_optimal,
    solve_optimal_speeds,
)

__all__ = [
    "as_sizes", "named_sizes", "DispatchSolution",
    "exact_mean_response", "ExactResult", "EXACT_POLICIES", "sita_e_thresholds",
    "sita_opt_thresholds",
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


def __getattr__(attr: str) -> object:
    """The retired size-law names of :mod:`symq.dispatch.sizes` (one release, with a warning)."""
    from . import sizes

    if attr in sizes._RETIRED:
        return sizes.__getattr__(attr)
    raise AttributeError(f"module 'symq.dispatch' has no attribute {attr!r}")
