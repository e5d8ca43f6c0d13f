"""Routing of Poisson traffic to heterogeneous processor-sharing servers.

Altman, Ayesta, Prabhu, "Load balancing in processor sharing systems", Telecommunication
Systems 47(1-2):35-48, 2011.  Server j has capacity ``C_j`` and holding cost ``w_j``; the total
work rate is ``rho``; the social cost is ``J = sum_j w_j x_j / (C_j - x_j)``.

* :mod:`~symq.routing.farm`: the farm, its validation and its declared parameters;
* :mod:`~symq.routing.symbolic`: sympy derivation of the closed forms (optimum, equilibrium,
  PoA); :mod:`~symq.routing.exact`: exact piecewise loads and exact KKT residuals of a farm;
* :mod:`~symq.routing.solve`: fast O(K log K) solvers on the compiled closed forms;
* :mod:`~symq.routing.numeric`: an independent scipy.optimize cross-check;
* :mod:`~symq.routing.simulation`: event-by-event simulation of M/G/1-PS servers
  (:mod:`~symq.routing.simulation.queue`) and farms (:mod:`~symq.routing.simulation.farm`) on
  the numba kernel of :mod:`~symq.routing.kernel`, with job-size laws of :mod:`symq.laws`:
  evidence of PS insensitivity with confidence intervals;
* :mod:`~symq.routing.model`: the registered ``ps-routing`` and ``ps-sim`` models;
  :mod:`~symq.routing.declared`: the ``routing-cost`` model kind, a farm whose per-server cost a
  claims file declares as a formula (solved by :func:`~symq.routing.numeric.minimize_separable`).

Examples
--------
>>> from symq.routing import social_optimum, wardrop_equilibrium, price_of_anarchy
>>> social_optimum([4, 2, 1], [1, 2, 4], 5).active
[0, 1, 2]
>>> wardrop_equilibrium([4, 2, 1], [1, 2, 4], 5).active
[0, 1]
>>> est = simulate_farm([4, 2, 1], [1, 2, 4], social_optimum([4, 2, 1], [1, 2, 4], 5).loads,
...                     sizes="h2", scv=4, n_jobs_per_server=400_000, rng=1)
>>> est.social_cost.distance(11.0) < 3          # J* = 11, insensitive to the size law
True
"""

from .derive import derivation
from .exact import PiecewiseLoads, kkt_holds_exactly, kkt_residuals, piecewise_loads
from .farm import ServerFarm
from .model import MODEL
from .numeric import (
    NumericSolution,
    minimize_potential,
    minimize_separable,
    minimize_social_cost,
    potential,
    social_cost,
)
from .simulation import FarmEstimate, PSQueueEstimate, simulate_farm, simulate_ps_queue
from .solve import (
    Allocation,
    UnboundedFamily,
    heavy_traffic_poa,
    poa_bound_equal_costs,
    price_of_anarchy,
    social_optimum,
    thresholds,
    unbounded_family,
    wardrop_equilibrium,
)
from .symbolic import ClosedForms, closed_forms

__all__ = [
    "ServerFarm", "MODEL",
    "Allocation", "social_optimum", "wardrop_equilibrium", "thresholds", "price_of_anarchy",
    "heavy_traffic_poa", "poa_bound_equal_costs", "unbounded_family", "UnboundedFamily",
    "NumericSolution", "minimize_social_cost", "minimize_potential", "minimize_separable",
    "social_cost", "potential",
    "ClosedForms", "PiecewiseLoads", "closed_forms", "derivation", "piecewise_loads",
    "kkt_residuals", "kkt_holds_exactly",
    "simulate_ps_queue", "simulate_farm", "PSQueueEstimate", "FarmEstimate",
]
