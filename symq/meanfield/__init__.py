"""Mean-field engine: symbolic population processes, refined mean field, supermarket JSQ(d).

* :mod:`~symq.meanfield.population`: :class:`PopulationProcess`, a density-dependent
  population process declared with sympy rates; drift, Jacobian, Hessian and diffusion matrix
  derived once and compiled once; ODE, fixed point (ODE + guarded Newton), local stability
  and the refined ``1/N`` term (Gast & Van Houdt, SIGMETRICS 2018, Theorem 1).
* :mod:`~symq.meanfield.supermarket`: JSQ(d) with exponential service (Vvedenskaya,
  Dobrushin, Karpelevich 1996; Mitzenmacher 2001): closed form checked symbolically,
  numeric fixed point, metrics, refined mean field.
* :mod:`~symq.meanfield.models`: the registered ``supermarket`` and ``refined-jsq`` models.

Examples
--------
>>> from symq.meanfield import solve_supermarket
>>> round(solve_supermarket(1, 0.5)["ET"], 12)  # d = 1: M/M/1, E[T] = 1/(1 - lam)
2.0
"""

from .models import REFINED_JSQ, SUPERMARKET
from .population import FixedPoint, PopulationProcess, RefinedTerms, Stability, Trajectory
from .supermarket import (
    closed_form_symbolic,
    closed_form_tail,
    derivation,
    heavy_traffic_ET,
    jsq_process,
    refined_jsq,
    solve_supermarket,
    truncation_level,
    verify_closed_form,
)

__all__ = [
    "PopulationProcess", "FixedPoint", "Stability", "RefinedTerms", "Trajectory",
    "solve_supermarket", "refined_jsq", "jsq_process", "closed_form_tail", "closed_form_symbolic",
    "truncation_level", "verify_closed_form", "derivation", "heavy_traffic_ET",
    "SUPERMARKET", "REFINED_JSQ",
]
