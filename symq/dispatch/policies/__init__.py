"""Dispatching policies to m parallel FCFS servers and their exact mean response times.

The policies of Hyytiä & Righter (arXiv 2402.08142): RND, RR, JSQ, LWL, JIQ, SITA (-E, -opt),
the first policy iteration FPI (Section 4), a look-up of a value-iteration value, and
user-defined index (score) policies.

* :mod:`~symq.dispatch.policies.named`: the policies by name (:func:`get_policy`) and what each
  means, with and without server speeds;
* :mod:`~symq.dispatch.policies.policy`: :class:`DispatchPolicy`, :class:`ScorePolicy`
  (:func:`score_policy`) and how each binds to a model;
* :mod:`~symq.dispatch.policies.bound`: :class:`BoundPolicy`, the runnable form the kernels take;
* :mod:`~symq.dispatch.policies.decisions`: the numba decision functions and policy codes;
* :mod:`~symq.dispatch.policies.score`: a score's signature, compilation and decision kernels;
* :mod:`~symq.dispatch.policies.speeds`: per-server speeds (checks, rates, loads);
* :mod:`~symq.dispatch.policies.exact`: exact mean response times (Pollaczek-Khinchine, E_m/M/1,
  M/M/m, SITA thresholds) and :mod:`~symq.dispatch.policies.jsq` (the JSQ chain, Part 2);
* :mod:`~symq.dispatch.policies.checks`: the checks of ``m``, ``rho``, sizes and thresholds.

Examples
--------
>>> from symq.laws import Exponential
>>> get_policy("lwl").bind(2, 0.5, Exponential(1.0)).decide([[3.0, 1.0]], [1.0]).tolist()
[1]
"""

from .bound import BoundPolicy
from .decisions import choose_server, lookup_value
from .exact import (
    EXACT_POLICIES,
    ExactResult,
    exact_mean_response,
    sita_e_thresholds,
    sita_opt_thresholds,
)
from .named import POLICY_NAMES, get_policy, rnd_value_table
from .policy import DispatchPolicy, ScorePolicy, bind_policy, score_policy

__all__ = ["POLICY_NAMES", "get_policy", "DispatchPolicy", "BoundPolicy", "ScorePolicy",
           "score_policy", "bind_policy", "rnd_value_table", "choose_server", "lookup_value",
           "exact_mean_response", "ExactResult", "EXACT_POLICIES", "sita_e_thresholds",
           "sita_opt_thresholds"]
