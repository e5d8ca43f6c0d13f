"""The recorded derivation of the routing paper (``symq derive ps-routing``).

The closed forms of :mod:`symq.routing.symbolic` (the model, the social optimum, the Wardrop
equilibrium and the price of anarchy, derived with sympy and recorded step by step), followed by a
worked example on the typical farm evaluated exactly by :mod:`symq.routing.exact`: this module sits
above both.
"""

from __future__ import annotations

import sympy as sp

from symq.core.derivation import Derivation
from symq.core.printing import latex

from .exact import piecewise_loads
from .symbolic import SOURCE, equation, record_closed_forms

__all__ = ["derivation"]


def derivation() -> Derivation:
    """The recorded derivation printed by ``symq derive ps-routing``.

    Returns
    -------
    Derivation
        The model, the social optimum, the Wardrop equilibrium and the price of anarchy
        (one section each, following the paper's sections) plus a worked example on the typical farm
        ``C = (4, 2, 1)``, ``w = (1, 2, 4)``.  Deterministic: the same text on every run.
    """
    d = Derivation(
        "Load balancing in processor sharing systems",
        source=SOURCE,
        summary=(r"Routing of Poisson traffic (total work rate $\rho$) to $K$ processor-sharing "
                 "servers with capacities $C_j$ and holding costs $w_j$: the social optimum (a "
                 "square-root "
                 "water-filling), the Wardrop equilibrium (minimiser of a Beckmann potential) and "
                 "the price of anarchy, derived with sympy; each closed form is checked against "
                 "the expected form during the derivation."),
    )
    record_closed_forms(d)
    d.section("Example: the typical farm C = (4, 2, 1), w = (1, 2, 4)")
    example = piecewise_loads((4, 2, 1), (1, 2, 4))
    x = [sp.Symbol(f"x_{k + 1}") for k in range(3)]
    d.add("Optimal loads as functions of rho",
          [equation(x[k], example.optimal[k]) for k in range(3)],
          r"One piece per active set between the thresholds $\theta^{OPT} = "
          f"{latex(sp.Tuple(*example.thresholds_optimal))}$: loads are linear in "
          r"$\rho$ on each piece and adjacent pieces agree at the thresholds.")
    d.add("Equilibrium loads as functions of rho",
          [equation(x[k], example.equilibrium[k]) for k in range(3)],
          rf"Thresholds $\theta^{{NE}} = {latex(sp.Tuple(*example.thresholds_equilibrium))}$: "
          "each server opens later than at the optimum.")
    return d
