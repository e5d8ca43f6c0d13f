"""The ``ps-routing`` model (optimum, equilibrium and price of anarchy of a PS server farm) and
the ``ps-sim`` model (one M/G/1 processor-sharing queue by simulation).

:data:`MODEL` and :data:`PS_SIM` are plain :class:`~symq.core.registry.ModelSpec` objects,
named for the registry in :mod:`symq.routing.registration` (importing this module registers
nothing), so that ``symq solve ps-routing C=4,2,1 w=1,2,4 rho=5``, ``symq sweep ps-routing
rho=1:6:11`` and ``symq solve ps-sim lam=0.7 sizes=h2 scv=4`` work without any edit of the CLI.

Examples
--------
>>> routing = solve([4, 2, 1], [1, 2, 4], 5.0)
>>> routing.optimal.active, routing.equilibrium.active
([0, 1, 2], [0, 1])
>>> result = MODEL.run({"C": [4, 2, 1], "w": [1, 2, 4], "rho": 5.0})
>>> sorted(result.values), sorted(scalar_outputs(result))
(['equilibrium', 'optimal', 'poa'], ['J_ne', 'J_opt', 'n_ne', 'n_opt', 'poa'])
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

from numpy.typing import ArrayLike

from symq.core.parameters import Parameter, PositiveReal
from symq.core.randomness import RngLike
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result, ResultBase
from symq.core.simrun import run_parameters
from symq.core.simstats import ConfidenceInterval
from symq.laws import size_law, size_parameters

from .farm import C, ServerFarm, rho, w
from .simulation import PSQueueEstimate, simulate_ps_queue
from .solve import Allocation, kernels, poa_of, social_optimum, wardrop_equilibrium

__all__ = ["MODEL", "PS_SIM", "FarmRouting", "PSSimComparison", "solve", "scalar_outputs",
           "solve_ps_sim"]

NAME = "ps-routing"


@dataclass(frozen=True)
class FarmRouting(ResultBase):
    """Social optimum, Wardrop equilibrium and price of anarchy of one farm (the result of
    the ``ps-routing`` model).

    Attributes
    ----------
    optimal, equilibrium : Allocation
        The two allocations; each prints (``to_dict``, ``symq solve ps-routing --json``) as
        ``{"loads", "cost", "active", "multiplier"}``, loads in input order.
    poa : float
        Price of anarchy ``J_ne / J_opt``.
    method : str
        ``"closed form (prefix scan)"``.
    exactness : Exactness
        ``numeric``: the closed forms evaluated in floating point.
    seconds : float
        Wall time, the compilation of the closed forms (first call only) included.
    """

    summary: ClassVar[tuple[str, ...]] = ("poa",)

    optimal: Allocation
    equilibrium: Allocation
    poa: float
    method: str = "closed form (prefix scan)"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


def solve(C: ArrayLike, w: ArrayLike, rho: float) -> FarmRouting:
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
    FarmRouting
        ``optimal``, ``equilibrium`` (each an :class:`~symq.routing.solve.Allocation`, loads in
        input order) and ``poa``.

    Raises
    ------
    InvalidParameter, StabilityError
        For bad input (see :class:`~symq.routing.farm.ServerFarm`).
    """
    farm = ServerFarm(C, w)
    load = farm.check_load(rho)
    begin = time.perf_counter()
    kernels()   # derives and compiles the closed forms on the first call only
    optimum = social_optimum(farm, load)
    equilibrium = wardrop_equilibrium(farm, load)
    return FarmRouting(optimal=optimum, equilibrium=equilibrium,
                       poa=poa_of(equilibrium, optimum, load),
                       seconds=time.perf_counter() - begin)


def scalar_outputs(result: Result) -> dict[str, float]:
    """Flat summary for sweeps: ``J_opt``, ``J_ne``, ``poa``, ``n_opt``, ``n_ne``."""
    values = result.values
    optimal, equilibrium = values["optimal"], values["equilibrium"]
    return {
        "J_opt": float(optimal.cost),
        "J_ne": float(equilibrium.cost),
        "poa": float(values["poa"]),
        "n_opt": float(len(optimal.active)),
        "n_ne": float(len(equilibrium.active)),
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


@dataclass(frozen=True)
class PSSimComparison(ResultBase):
    r"""Simulation estimates of one M/G/1-PS queue beside its insensitive exact means (the
    result of the ``ps-sim`` model).

    Attributes
    ----------
    ET, EQ, mean_slowdown : ConfidenceInterval
        The estimates of :class:`~symq.routing.simulation.queue.PSQueueEstimate`.
    ET_exact, EQ_exact : float
        :math:`E[X]/(C - x)` and :math:`x/(C - x)`, :math:`x = \lambda E[X]`, whatever the law.
    rho : float
        Utilisation :math:`x / C`.
    method : str
        ``"event-by-event PS simulation, batch means; insensitive exact means"``.
    exactness : Exactness
        ``simulated``.
    seconds : float
        Wall time of the run.
    estimate : PSQueueEstimate
        The simulator's full estimate (not among the model's values).
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "ET_exact", "EQ", "EQ_exact")

    ET: ConfidenceInterval
    EQ: ConfidenceInterval
    mean_slowdown: ConfidenceInterval
    ET_exact: float
    EQ_exact: float
    rho: float
    method: str = "event-by-event PS simulation, batch means; insensitive exact means"
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0
    estimate: PSQueueEstimate | None = field(default=None, repr=False)


def solve_ps_sim(lam: float, C: float = 1.0, sizes: str = "exp",
                 mean: float = 1.0, scv: float | None = None, n_jobs: int = PS_SIM_JOBS,
                 n_batches: int = 30, level: float = 0.95, rng: RngLike = None,
                 progress: bool = False) -> PSSimComparison:
    r"""Simulate one M/G/1 processor-sharing queue
    (:func:`~symq.routing.simulation.queue.simulate_ps_queue`) with a named job-size law of
    :mod:`symq.laws`.

    Beside the estimates, the insensitive exact values (Kleinrock 1976, Chapter 4; Altman,
    Ayesta, Prabhu 2011, model section), :math:`E[T] = E[X]/(C - x)` and
    :math:`E[N] = \rho/(1-\rho)` with :math:`x = \lambda E[X]`, :math:`\rho = x/C`, are given as
    ``ET_exact`` and ``EQ_exact``: computed from ``lam``, ``C`` and ``mean`` only, whatever the
    law, they are the claim of insensitivity that the simulation checks.

    Returns
    -------
    PSSimComparison
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
    return PSSimComparison(ET=est.ET, EQ=est.EQ, mean_slowdown=est.mean_slowdown,
                           ET_exact=mean / (C - x), EQ_exact=x / (C - x), rho=x / C,
                           seconds=time.perf_counter() - start, estimate=est)


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
