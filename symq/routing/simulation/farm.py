r"""Simulation of a farm of independent M/G/1 processor-sharing servers under Bernoulli routing.

A Poisson stream routed to server :math:`j` with probability :math:`q_j` (size-blind Bernoulli
routing) gives server :math:`j` a Poisson stream of rate :math:`\lambda q_j`, independent of the
other servers (thinning).  Each used server is therefore simulated on its own, as one queue of
:mod:`symq.routing.simulation.queue`, from an independent child stream of ``rng``, and the
social cost :math:`J = \sum_j w_j E[N_j]` (exact PS value :math:`\sum_j w_j x_j / (C_j - x_j)`
for every size law) is estimated from the servers' time-average numbers in system.

References
----------
E. Altman, U. Ayesta, B. J. Prabhu, "Load balancing in processor sharing systems",
*Telecommunication Systems* 47(1-2):35-48, 2011, DOI 10.1007/s11235-010-9300-8 (model
section: Bernoulli routing, :math:`q_j = x_j/\rho`; social cost :math:`\sum_j w_j E[N_j]`).

Examples
--------
>>> est = simulate_farm([1.0, 1.0], [1.0, 2.0], [0.5, 0.0], n_jobs_per_server=20_000, rng=2)
>>> exact = 0.5 / (1.0 - 0.5)          # the unused server adds 0 exactly
>>> est.social_cost.distance(exact) < 3, est.EQ[1].half_width
(True, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter
from symq.core.parameters import NonNegativeReal, PositiveReal
from symq.core.randomness import RngLike, as_generator
from symq.core.renamed import former_attribute, renamed_keywords
from symq.core.result import Exactness, ResultBase
from symq.core.simstats import ConfidenceInterval

from .queue import PSQueueEstimate, _check_stable, _guard_scale, _plan, _run_queue
from .sizes import _job_sizes

__all__ = ["FarmEstimate", "simulate_farm"]


@dataclass(frozen=True)
class FarmEstimate(ResultBase):
    r"""Simulation estimates for a farm of independent PS servers.

    Attributes
    ----------
    social_cost : ConfidenceInterval
        :math:`J = \sum_j w_j E[N_j]` (exact PS value :math:`\sum_j w_j x_j/(C_j - x_j)`).
        Mean :math:`\sum_j w_j \hat N_j`, half-width :math:`\sqrt{\sum_j (w_j h_j)^2}` with
        :math:`h_j` the half-width of server j's interval; see :func:`simulate_farm`.
    EQ : tuple of ConfidenceInterval
        :math:`E[N_j]`, the mean number in system of each server (time average).  For an
        unused server (load 0) it is the exact value 0 with half-width 0 and ``method="exact"``.
    servers : tuple of PSQueueEstimate or None
        Full estimate of each used server; ``None`` for unused servers.
    C, w, loads : tuple of float
        Capacities, holding costs and work rates :math:`x_j` of the servers.
    sizes : str
        Job-size law: its name, or a short description of the law object (formerly ``law``,
        read for one release with a warning).
    method : str
        ``"event-by-event PS simulation of each server, batch means"``.
    exactness : Exactness
        ``simulated``.
    """

    summary: ClassVar[tuple[str, ...]] = ("social_cost", "sizes")

    social_cost: ConfidenceInterval
    EQ: tuple[ConfidenceInterval, ...]
    servers: tuple[PSQueueEstimate | None, ...]
    C: tuple[float, ...]
    w: tuple[float, ...]
    loads: tuple[float, ...]
    sizes: str
    method: str = "event-by-event PS simulation of each server, batch means"
    exactness: Exactness = Exactness.SIMULATED

    law = former_attribute("law", "sizes")


def _vector(name: str, values: ArrayLike,
            domain: PositiveReal | NonNegativeReal) -> tuple[float, ...]:
    array = np.asarray(values, dtype=object)
    if array.ndim != 1 or array.size == 0:
        raise InvalidParameter(name, values,
                               f"a nonempty one-dimensional sequence of {domain.describe()}s")
    return tuple(float(domain.coerce(f"{name}[{j}]", v)) for j, v in enumerate(array.tolist()))


@renamed_keywords(law="sizes")
def simulate_farm(
    C: Sequence[float] | ArrayLike,
    w: Sequence[float] | ArrayLike,
    loads: Sequence[float] | ArrayLike,
    sizes: object = "exp",
    n_jobs_per_server: int = 200_000,
    rng: RngLike = None,
    mean: float | None = None,
    *,
    warmup: float = 0.1,
    scv: float | None = None,
    level: float = 0.95,
    n_batches: int = 30,
    progress: bool = False,
) -> FarmEstimate:
    r"""Simulate a farm of PS servers under Bernoulli routing and estimate the social cost.

    With a Poisson stream routed to server j with probability :math:`q_j` (size-blind
    Bernoulli routing), server j sees a Poisson stream of rate :math:`\lambda q_j`
    (thinning), independent of the other servers.  Its work rate is
    :math:`x_j = \lambda q_j E[X]`; any load vector :math:`x` with :math:`\sum_j x_j = \rho`
    is attained by :math:`q_j = x_j/\rho` (Altman, Ayesta, Prabhu 2011, model section).  Each
    used server is therefore simulated independently, as by
    :func:`~symq.routing.simulation.queue.simulate_ps_queue`, with arrival rate
    ``loads[j] / E[X]``, and the social cost

    .. math::

        J = \sum_j w_j E[N_j] = \sum_j \frac{w_j x_j}{C_j - x_j}

    is estimated from the time-average numbers in system.

    Parameters
    ----------
    C : sequence of float
        Capacities :math:`C_j > 0`.
    w : sequence of float
        Holding costs :math:`w_j > 0` (per job per unit time).
    loads : sequence of float
        Work rates :math:`x_j \ge 0` sent to each server, with :math:`x_j < C_j`;
        servers with :math:`x_j = 0` are not simulated (:math:`E[N_j] = 0` exactly).
    sizes : str or job-size law, default "exp"
        Job-size law shared by all servers, as in
        :func:`~symq.routing.simulation.queue.simulate_ps_queue` (formerly ``law=``).
    n_jobs_per_server : int, default 200_000
        Jobs simulated at each used server.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness.  One independent child stream per server is spawned from it
        (``Generator.spawn``), so the same seed gives the same result.
    mean : float, optional
        Mean job size of a named law (default 1), as in
        :func:`~symq.routing.simulation.queue.simulate_ps_queue`.
    warmup, scv, level, n_batches
        As in :func:`~symq.routing.simulation.queue.simulate_ps_queue`.
    progress : bool, default False
        Show a tqdm bar for each used server.

    Returns
    -------
    FarmEstimate
        The interval for :math:`J` combines the per-server batch-means intervals of
        :math:`E[N_j]`: mean :math:`\sum_j w_j \hat N_j`, half-width
        :math:`\sqrt{\sum_j w_j^2 h_j^2}`.  Since the servers are simulated independently, the
        variance of the sum is the sum of the variances, so this is the usual normal-theory
        combination (approximate: each :math:`h_j` uses a Student quantile with
        ``n_batches - 1`` degrees of freedom; ``method="sum_of_independent"``, ``n`` = total
        number of batches).

    Raises
    ------
    InvalidParameter
        If the three sequences do not have the same nonempty length, a capacity or holding
        cost is not positive, a load is negative, or a scalar argument is invalid.
    StabilityError
        If some ``loads[j] >= C[j]`` (the message names the server).
    ResourceLimit
        If ``n_jobs_per_server`` jobs do not fit in memory.

    Examples
    --------
    >>> est = simulate_farm([1.0, 2.0], [1.0, 1.0], [0.3, 1.0], n_jobs_per_server=50_000, rng=3)
    >>> exact = 0.3 / 0.7 + 1.0 / 1.0
    >>> est.social_cost.distance(exact) < 3
    True
    """
    caps = _vector("C", C, PositiveReal())
    costs = _vector("w", w, PositiveReal())
    xs = _vector("loads", loads, NonNegativeReal())
    if not len(caps) == len(costs) == len(xs):
        raise InvalidParameter(
            "loads",
            list(xs),
            f"a sequence of the same length as C ({len(caps)}) and w ({len(costs)})",
            f"got {len(xs)} loads",
        )
    sizes_law = _job_sizes(sizes, mean, scv, "simulate_farm")
    for j, (x, c) in enumerate(zip(xs, caps)):
        _check_stable(x, c, f"loads[{j}]")
    plan = _plan(n_jobs_per_server, n_batches, warmup, level, "n_jobs_per_server")
    children = as_generator(rng).spawn(len(caps))

    numbers_ci: list[ConfidenceInterval] = []
    servers: list[PSQueueEstimate | None] = []
    for j, (x, c, child) in enumerate(zip(xs, caps, children)):
        if x == 0.0:
            servers.append(None)
            numbers_ci.append(ConfidenceInterval(0.0, 0.0, plan.level, 1, "exact"))
            continue
        lam = x / sizes_law.mean
        _check_stable(lam * sizes_law.mean, c, f"loads[{j}]")
        _guard_scale(lam, c, sizes_law, plan, f"loads[{j}]", x, "n_jobs_per_server")
        est = _run_queue(lam, c, sizes_law, plan, child, bool(progress), f"PS server {j}")
        servers.append(est)
        numbers_ci.append(est.EQ)

    total = sum(wj * ci.mean for wj, ci in zip(costs, numbers_ci))
    half = math.sqrt(sum((wj * ci.half_width) ** 2 for wj, ci in zip(costs, numbers_ci)))
    n_total = sum(ci.n for ci, s in zip(numbers_ci, servers) if s is not None) or 1
    social = ConfidenceInterval(total, half, plan.level, n_total, "sum_of_independent")
    return FarmEstimate(social_cost=social, EQ=tuple(numbers_ci), servers=tuple(servers),
                        C=caps, w=costs, loads=xs, sizes=sizes_law.label)
