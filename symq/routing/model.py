"""The ``ps-routing`` model (optimum, equilibrium and price of anarchy of a PS server farm) and
the ``ps-sim`` model (one M/G/1 processor-sharing queue by simulation).

:data:`MODEL` and :data:`PS_SIM` are plain :class:`~symq.core.registry.ModelSpec` objects,
named for the registry in :mod:`symq.routing.registration` (importing this module registers
nothing), so that ``symq solve ps-routing C=4,2,1 w=1,2,4 rho=5``, ``symq sweep ps-routing
rho=1:6:11`` and ``symq solve ps-sim lam=0.7 sizes=h2 scv=4`` work without any edit of the CLI.

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

from symq.core.parameters import Parameter, PositiveReal
from symq.core.randomness import RngLike
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result
from symq.core.simrun import run_parameters
from symq.laws import size_law, size_parameters

from .farm import C, ServerFarm, rho, w
from .simulation import simulate_ps_queue
from .solve import Allocation, kernels, poa_of, social_optimum, wardrop_equilibrium

__all__ = ["MODEL", "PS_SIM", "solve", "scalar_outputs", "solve_ps_sim"]

NAME = "ps-routing"


def solve(C: ArrayLike, w: ArrayLike, rho: float) -> Result:
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
                "poa": poa_of(equilibrium, optimum, load)},
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


MODEL = ModelSpec(
    name=NAME,
    summary=("routing Poisson traffic to heterogeneous processor-sharing servers: social optimum, "
             "Wardrop equilibrium, price of anarchy (Altman, Ayesta, Prabhu 2011)"),
    parameters=(C, w, rho),
    solve=solve,
    scalar_outputs=scalar_outputs,
    paper="ps-routing",
    outputs=("optimal", "equilibrium", "poa"),
)


#: Jobs simulated by ``ps-sim`` by default (about 0.1 s).
PS_SIM_JOBS = 500_000


def solve_ps_sim(lam: float, C: float = 1.0, sizes: str = "exp",
                 mean: float = 1.0, scv: float | None = None, n_jobs: int = PS_SIM_JOBS,
                 n_batches: int = 30, level: float = 0.95, rng: RngLike = None,
                 progress: bool = False) -> Result:
    r"""Simulate one M/G/1 processor-sharing queue
    (:func:`~symq.routing.simulation.simulate_ps_queue`) with a named job-size law of :mod:`symq.laws`.

    Beside the estimates, the insensitive exact values (Kleinrock 1976, Chapter 4; Altman,
    Ayesta, Prabhu 2011, model section), :math:`E[T] = E[X]/(C - x)` and
    :math:`E[N] = \rho/(1-\rho)` with :math:`x = \lambda E[X]`, :math:`\rho = x/C`, are given as
    ``ET_exact`` and ``EQ_exact``: computed from ``lam``, ``C`` and ``mean`` only, whatever the
    law, they are the claim of insensitivity that the simulation checks.

    Returns
    -------
    Result
        ``ET``, ``EQ``, ``mean_slowdown`` (ConfidenceInterval), ``ET_exact``, ``EQ_exact``,
        ``rho``.

    Raises
    ------
    InvalidParameter
        Naming ``lam``, ``C``, ``sizes``, ``mean``, ``scv``, ``n_jobs``, ``n_batches``, ``level``.
    StabilityError
        If ``lam * mean >= C``.
    """
    start = time.perf_counter()
    law = size_law(sizes, mean, scv)
    est = simulate_ps_queue(lam, C, law, n_jobs=n_jobs, rng=rng, level=level,
                            n_batches=n_batches, progress=progress)
    x = lam * mean
    return Result(
        model="ps-sim",
        params={"lam": lam, "C": C, "sizes": sizes, "mean": mean, "scv": scv,
                "n_jobs": est.n_jobs, "n_batches": n_batches, "level": level},
        values={"ET": est.ET, "EQ": est.EQ, "mean_slowdown": est.mean_slowdown,
                "ET_exact": mean / (C - x), "EQ_exact": x / (C - x), "rho": x / C},
        method="event-by-event PS simulation, batch means; insensitive exact means",
        exactness=Exactness.SIMULATED,
        timings={"simulate": time.perf_counter() - start},
    )


PS_SIM = ModelSpec(
    name="ps-sim",
    summary=("M/G/1 processor-sharing queue by simulation: ET, EQ with confidence intervals, and "
             "the insensitive exact E[X]/(C - lam E[X]) (Altman, Ayesta, Prabhu 2011)"),
    parameters=(
        Parameter("lam", PositiveReal(), typical=0.5,
                  description="arrival rate; lam*mean must be < C"),
        Parameter("C", PositiveReal(), typical=1.0, required=False, default=1.0,
                  description="capacity (service rate) of the server"),
        *size_parameters("exp"),
        *run_parameters(PS_SIM_JOBS, jobs="jobs simulated (the first 10% are warm-up)"),
    ),
    solve=solve_ps_sim,
    scalar_outputs=lambda r: {k: (v.mean if hasattr(v, "half_width") else float(v))
                              for k, v in r.values.items()},
    paper="ps-routing",
    outputs=("ET", "EQ", "mean_slowdown", "ET_exact", "EQ_exact", "rho"),
)
