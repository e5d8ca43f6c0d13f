"""The ``ps-routing`` model: optimum, equilibrium and price of anarchy of a PS server farm.

Registered with :func:`symq.core.registry.register_model` on import, so that
``symq solve ps-routing C=4,2,1 w=1,2,4 rho=5`` and ``symq sweep ps-routing rho=1:6:11`` work
without any edit of the CLI.

Examples
--------
>>> result = solve([4, 2, 1], [1, 2, 4], 5.0)
>>> result["optimal"]["active"], result["equilibrium"]["active"]
([0, 1, 2], [0, 1])
>>> sorted(scalar_outputs(result))
['J_ne', 'J_opt', 'n_ne', 'n_opt', 'poa']
"""

from __future__ import annotations

import time
from typing import Any

from numpy.typing import ArrayLike

from symq.core.registry import ModelSpec, register_model
from symq.core.result import Exactness, Result

from .farm import C, ServerFarm, rho, w
from .solve import Allocation, kernels, social_optimum, wardrop_equilibrium

__all__ = ["MODEL", "solve", "scalar_outputs"]

NAME = "ps-routing"


def solve(C: ArrayLike, w: ArrayLike, rho: float) -> Result:  # noqa: N803 - paper notation
    """Social optimum, Wardrop equilibrium and price of anarchy of a farm (Altman, Ayesta, Prabhu
    2011, centralised-routing, decentralised-routing and price-of-anarchy sections).

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs.
    rho : float
        Total work rate, ``0 < rho < sum(C)``.

    Returns
    -------
    Result
        ``values = {"optimal": {...}, "equilibrium": {...}, "poa": float}``, each allocation
        as ``{"loads", "cost", "active", "multiplier"}`` (loads in input order).

    Raises
    ------
    InvalidParameter, StabilityError
        For bad input (see :class:`~symq.routing.farm.ServerFarm`).
    """
    farm = ServerFarm(C, w)
    load = farm.check_load(rho)
    begin = time.perf_counter()
    kernels()   # derives and compiles the closed forms on the first call only
    start = time.perf_counter()
    optimum = social_optimum(farm, load)
    middle = time.perf_counter()
    equilibrium = wardrop_equilibrium(farm, load)
    end = time.perf_counter()
    return Result(
        model=NAME,
        params={"C": farm.C.tolist(), "w": farm.w.tolist(), "rho": load},
        values={"optimal": _allocation_json(optimum), "equilibrium": _allocation_json(equilibrium),
                "poa": equilibrium.cost / optimum.cost},
        method="closed form (prefix scan)",
        exactness=Exactness.NUMERIC,
        timings={"compile": start - begin, "optimal": middle - start,
                 "equilibrium": end - middle},
    )


def _allocation_json(allocation: Allocation) -> dict[str, Any]:
    """The CLI's JSON form of an allocation: ``loads`` (input order), ``cost``, ``active``,
    ``multiplier`` (the keys of ``symq solve ps-routing --json``)."""
    return {"loads": allocation.loads.tolist(), "cost": float(allocation.cost),
            "active": list(allocation.active), "multiplier": float(allocation.multiplier)}


def scalar_outputs(result: Result) -> dict[str, float]:
    """Flat summary for sweeps: ``J_opt``, ``J_ne``, ``poa``, ``n_opt``, ``n_ne``."""
    values = result.values
    return {
        "J_opt": float(values["optimal"]["cost"]),
        "J_ne": float(values["equilibrium"]["cost"]),
        "poa": float(values["poa"]),
        "n_opt": float(len(values["optimal"]["active"])),
        "n_ne": float(len(values["equilibrium"]["active"])),
    }


MODEL = register_model(ModelSpec(
    name=NAME,
    summary=("routing Poisson traffic to heterogeneous processor-sharing servers: social optimum, "
             "Wardrop equilibrium, price of anarchy (Altman, Ayesta, Prabhu 2011)"),
    parameters=(C, w, rho),
    solve=solve,
    scalar_outputs=scalar_outputs,
    paper="ps-routing",
))
