"""Attained-service load balancing (Hellemans & Van Houdt, IEEE/ACM ToN 2021, arXiv 2011.08250).

* :mod:`~symq.meanfield.attained.policies`: dispatching policies as ranking scores
  ``xi(k, l)`` of (age layer, queue length); the built-ins SQ, SQ-RTB, SQ-RE, SQ-RTB-RE, LAS,
  LAS-QTB, RE, LEW and user-defined scores; the mean residual life of a phase-type law.
* :mod:`~symq.meanfield.attained.cavity`: the mean-field fixed point (cavity queue with age
  layers, the paper's analysis; authors' code ``simple_kl_PH.m``) and its metrics.
* :mod:`~symq.meanfield.attained.simulation`: the finite-N simulator (numba, exact event
  simulation) taking a policy's score table.
* :mod:`~symq.meanfield.attained.model`: the registered ``attained`` model and
  :func:`simulate_policy` (policy -> score table -> simulator);
* :mod:`~symq.meanfield.attained.plots`: E[W] of the policies against the load, data and
  (optional) matplotlib plot.
"""

from .cavity import (
    TRUNCATION_RTOL,
    AttainedFixedPoint,
    TruncationWarning,
    solve_attained,
)
from .model import (
    ATTAINED,
    SIMULATION_QUEUE_CAP,
    AttainedPolicyMeans,
    simulate_policy,
    solve_attained_model,
)
from .plots import attained_policies_data, plot_attained_policies
from .policies import (
    POLICY_NAMES,
    SCORE_VARIABLES,
    TIE_RTOL,
    Policy,
    get_policy,
    mean_residual_life,
)
from .simulation import AttainedEstimate, simulate_attained

__all__ = [
    "Policy", "get_policy", "POLICY_NAMES", "SCORE_VARIABLES", "TIE_RTOL", "mean_residual_life",
    "solve_attained", "AttainedFixedPoint", "TruncationWarning", "TRUNCATION_RTOL",
    "simulate_attained", "AttainedEstimate", "simulate_policy", "solve_attained_model",
    "AttainedPolicyMeans",
    "ATTAINED", "SIMULATION_QUEUE_CAP", "attained_policies_data", "plot_attained_policies",
]
