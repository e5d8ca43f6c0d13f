r"""Event-by-event simulation of one M/G/1 processor-sharing queue.

The routing model of Altman, Ayesta and Prabhu (2011) rests on the *insensitivity* of the
M/G/1 processor-sharing (PS) queue: with Poisson arrivals of rate :math:`\lambda`, i.i.d. job
sizes :math:`X` of any law and capacity :math:`C`, write :math:`x = \lambda E[X]` for the work
rate and :math:`\rho = x / C < 1` for the utilisation.  Then

.. math::

    E[T \mid X = s] = \frac{s}{C - x}, \qquad
    E[T] = \frac{E[X]}{C - x}, \qquad
    E[T/X] = \frac{1}{C - x}, \qquad
    E[N] = \frac{\rho}{1 - \rho} = \frac{x}{C - x},

which depend on the size law only through its mean (Kleinrock 1976, Chapter 4;
Altman, Ayesta, Prabhu 2011, model section, "PS insensitivity").  The social cost of a farm with
loads :math:`x_j` and holding costs :math:`w_j` is therefore
:math:`J = \sum_j w_j E[N_j] = \sum_j w_j x_j / (C_j - x_j)`.

This module gives independent evidence of those formulas by exact discrete-event simulation
of one queue, :func:`simulate_ps_queue` (the virtual-time kernel of :mod:`symq.routing.kernel`,
in units of the mean size and of the mean service time, with idle periods longer than
:data:`IDLE_CAP` cut before it runs); the farm simulator (:mod:`symq.routing.simulation.farm`)
runs one such queue per used server.  Job sizes come from one job-size law ``sizes``, converted
once by :mod:`symq.routing.simulation.sizes`.  Run length, warm-up and batches follow the rule
of :class:`symq.core.simrun.RunPlan`, after a guard on the memory the run needs;
with ``progress=True`` the kernel runs in chunks under a tqdm bar
(:func:`symq.core.simrun.run_chunked`), with the same result.  The kernel itself draws no random
numbers (arrivals and sizes come from ``rng`` through numpy before it runs), so it needs no
seeding of numba's stream.

References
----------
E. Altman, U. Ayesta, B. J. Prabhu, "Load balancing in processor sharing systems",
*Telecommunication Systems* 47(1-2):35-48, 2011, DOI 10.1007/s11235-010-9300-8 (model
section, M/G/1-PS insensitivity: :math:`E[N_j] = \rho_j/(1-\rho_j)`, sojourn :math:`s/(C_j-x_j)`).

L. Kleinrock, *Queueing Systems, Vol. II: Computer Applications*, Wiley, 1976, Chapter 4
(processor sharing).

Examples
--------
>>> est = simulate_ps_queue(lam=0.5, C=1.0, sizes="det", n_jobs=50_000, rng=1)
>>> exact = 1.0 / (1.0 - 0.5)          # E[T] = E[X]/(C - x)
>>> abs(est.ET.mean - exact) < 0.1
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numba
import numpy as np

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import IntegerAtLeast, PositiveReal
from symq.core.randomness import RngLike, as_generator
from symq.core.renamed import former_attribute, renamed_keywords
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import analyse_ratio, analyse_series, require_run_length
from symq.core.simrun import (
    RUN_SLICES,
    RunPlan,
    require_time_range,
    run_chunked,
)
from symq.core.simstats import ConfidenceInterval

from ..kernel import PSState
from .sizes import _job_sizes, _JobSizes

__all__ = ["PSQueueEstimate", "simulate_ps_queue", "IDLE_CAP"]


# --------------------------------------------------------------------------------------------
# checks and run plan of one queue (the farm applies them to each server)
# --------------------------------------------------------------------------------------------


def _positive(name: str, value: object) -> float:
    return float(PositiveReal().coerce(name, value))


def _check_stable(x: float, C: float, detail: str) -> None:
    if not x < C:
        raise StabilityError(
            f"work rate x = {detail} = {x:g} must be < capacity C={C:g} for a stable PS queue "
            f"(utilisation rho = x/C = {x / C:g} >= 1)"
        )


def _plan(n_jobs: Any, n_batches: Any, warmup: Any, level: Any, name: str) -> RunPlan:
    """The run plan of one queue, after the memory guard (about 10 float arrays per job)."""
    n_jobs = IntegerAtLeast(1).coerce(name, n_jobs)
    plan = RunPlan.make(n_jobs, n_batches, warmup, level, jobs_name=name)
    # sizes, arrivals, sojourn, departures, heap keys and ids, slowdowns, draw temporaries:
    # about 10 float arrays of n_jobs entries alive at once, and the area slices
    require_memory(name, n_jobs, 8.0 * (10 * n_jobs + RUN_SLICES),
                   what=f"{n_jobs:.3g} simulated jobs",
                   limit=lambda budget: f"at most {int(budget // 80):.3g} jobs")
    return plan


# --------------------------------------------------------------------------------------------
# the queue: its estimate, the idle cut, the run and the public simulator
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PSQueueEstimate(ResultBase):
    r"""Simulation estimates for one M/G/1-PS queue.

    Attributes
    ----------
    ET : ConfidenceInterval
        :math:`E[T]`, the mean sojourn time: batch means over the per-job sojourn times in
        arrival order (exact PS value :math:`E[X]/(C - x)`).
    EQ : ConfidenceInterval
        :math:`E[N]`, time average of the number in system, batch means over equal time
        batches (exact PS value :math:`\rho/(1-\rho)`).  Independent of ``ET`` as an estimator;
        Little's law :math:`E[N] = \lambda E[T]` links the two.
    mean_slowdown : ConfidenceInterval
        :math:`E[T/X]`, batch means over the per-job ratios (exact PS value :math:`1/(C-x)`
        for every size law).
    lam, C, mean_size : float
        Arrival rate, capacity and mean job size :math:`E[X]` of the simulated queue
        (``mean_size`` formerly ``mean``, read for one release with a warning).
    sizes : str
        Job-size law: its name, or a short description of the law object (formerly ``law``,
        read for one release with a warning).
    n_jobs : int
        Number of simulated jobs (warm-up included).
    n_warmup : int
        Number of leading jobs discarded as warm-up.
    method : str
        ``"event-by-event PS simulation, batch means"``.
    exactness : Exactness
        ``simulated``.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "EQ", "mean_slowdown", "sizes")

    ET: ConfidenceInterval
    EQ: ConfidenceInterval
    mean_slowdown: ConfidenceInterval
    lam: float
    C: float
    mean_size: float
    sizes: str
    n_jobs: int
    n_warmup: int
    method: str = "event-by-event PS simulation, batch means"
    exactness: Exactness = Exactness.SIMULATED

    mean = former_attribute("mean", "mean_size")
    law = former_attribute("law", "sizes")

    @property
    def load(self) -> float:
        """Work rate :math:`x = \\lambda E[X]`."""
        return self.lam * self.mean_size

    @property
    def utilisation(self) -> float:
        """:math:`\\rho = x / C`."""
        return self.lam * self.mean_size / self.C


#: Idle periods are cut to at most this many mean service times before the kernel runs.
IDLE_CAP = 8.0


@numba.njit(cache=True)
def _idle_cut(gaps: np.ndarray, work: np.ndarray, cap: float) -> np.ndarray:  # pragma: no cover
    """Cut each idle period to at most ``cap``: ``gaps`` (interarrival times, in place) lose
    what exceeds ``cap`` of the idle time before their arrival; the removed times are returned.

    The idle time before arrival ``k`` is ``gap_k - V_{k-1} - X_{k-1}`` when positive, with
    ``V`` the work found by each arrival (Lindley's recursion at unit capacity): the PS queue
    is work-conserving, so its busy periods are those of any such queue.
    """
    removed = np.zeros(gaps.shape[0])
    v = 0.0
    for k in range(1, gaps.shape[0]):
        left = v + work[k - 1]
        idle = gaps[k] - left
        if idle > cap:
            removed[k] = idle - cap
            gaps[k] = left + cap
        v = left - gaps[k]
        v = max(v, 0.0)
    return removed


def _scaled(ci: ConfidenceInterval, factor: float) -> ConfidenceInterval:
    return ConfidenceInterval(ci.mean * factor, ci.half_width * factor, ci.level, ci.n, ci.method,
                              run_length=ci.run_length, doubt=ci.doubt)


def _run_queue(lam: float, C: float, sizes_law: _JobSizes, plan: RunPlan,
               gen: np.random.Generator, progress: bool, desc: str) -> PSQueueEstimate:
    """Simulate one validated queue: draw the jobs, run the kernel, form the intervals.

    The kernel runs in units of the mean size (work) and of the mean service time ``mean/C``
    (time), at arrival rate ``rho``, with every idle period longer than :data:`IDLE_CAP` cut
    to it (sojourn times do not depend on idle lengths; the time average of the number in
    system adds the removed idle time back to the durations of its slices): results do not
    depend on the scale of ``lam``, ``C`` and ``mean``, and at a small load the clock keeps
    the precision of the sojourn times.
    """
    n_jobs, skip = plan.n_jobs, plan.n_warm
    mean = sizes_law.mean
    rho = lam * mean / C
    time_unit = mean / C
    sizes = sizes_law.draw(n_jobs, gen)
    gaps = gen.exponential(1.0, size=n_jobs) / rho
    gaps[0] = min(gaps[0], IDLE_CAP)  # the run starts empty: its first idle period too
    work = sizes / mean
    removed = _idle_cut(gaps, work, IDLE_CAP)
    arrivals = np.cumsum(gaps)
    # slices of equal time over the whole run, warm-up included: the estimators choose the
    # warm-up (MSER) and the batches from the data (symq.core.simoutput)
    t_start = float(arrivals[0])
    t_stop = float(arrivals[-1])
    n_slices = RUN_SLICES if t_stop > t_start else 0
    if n_slices == 0:  # pragma: no cover - needs all arrivals at one instant
        raise InvalidParameter("n_jobs", n_jobs,
                               "large enough for a time window of positive length")
    state = PSState(arrivals, work, 1.0, t_start, t_stop, n_slices)
    run_chunked(state.advance, n_jobs, progress=progress, desc=desc, unit="job")
    sojourn, area = state.sojourn, state.area
    width = (t_stop - t_start) / n_slices
    durations = np.full(n_slices, width)
    inside = np.arange(n_jobs) > 0
    where = np.minimum(((arrivals[inside] - t_start) / width).astype(np.int64), n_slices - 1)
    np.add.at(durations, where, removed[inside])

    level, n_batches = plan.level, plan.n_batches
    runs = {"run_length": n_jobs, "unit": "jobs"}
    sojourn_ci = _scaled(analyse_series(sojourn, n_batches, level, **runs), time_unit)
    slowdown_ci = _scaled(analyse_series(sojourn / work, n_batches, level, **runs), 1.0 / C)
    number_ci = analyse_ratio(area, durations, n_batches, level, **runs)
    return PSQueueEstimate(ET=sojourn_ci, EQ=number_ci, mean_slowdown=slowdown_ci, lam=lam, C=C,
                           mean_size=sizes_law.mean, sizes=sizes_law.label, n_jobs=n_jobs,
                           n_warmup=skip)


def _guard_scale(lam: float, C: float, sizes_law: _JobSizes, plan: RunPlan,
                 name: str = "lam", value: float | None = None,
                 jobs_name: str = "n_jobs") -> None:
    """Refuse loads and scales beyond floating point, and loads the run cannot resolve."""
    mean = sizes_law.mean
    rho = lam * mean / C
    value = lam if value is None else value
    with np.errstate(over="ignore", divide="ignore"):
        et = mean / (C - lam * mean)
    if not (math.isfinite(et) and et < 1e300 and 1.0 / C < 1e300):
        raise InvalidParameter("C", C, f"large enough that E[T] = mean/(C - lam*mean) = {et:.3g} "
                               "and 1/C stay below 1e300", "the estimates would overflow")
    require_time_range(name, value, rho, plan.n_jobs, answer=(
        f"E[T] = mean/(C - lam*mean) = {et:.6g} (PS is insensitive), E[N] = {rho:.3g}"),
                       unit="mean service times")
    scv = _scv(sizes_law)
    require_run_length(plan.n_jobs, rho, scv, plan.n_batches, jobs_name=jobs_name,
                       what=f"the PS queue at {name}={value:.10g}" if name != "lam" else "")


def _scv(sizes_law: _JobSizes) -> float:
    """The law's squared coefficient of variation (0 when its second moment is not known)."""
    try:
        m2 = float(sizes_law.law.moment(2))
    except Exception:  # noqa: BLE001 - any law's moment() may fail; 0 only skips the run-length guard
        return 0.0
    if not (m2 > 0 and math.isfinite(m2)):  # e.g. underflow at a mean of 1e-300
        return 0.0
    value = m2 / sizes_law.mean / sizes_law.mean - 1.0
    return value if math.isfinite(value) and value > 0 else 0.0


@renamed_keywords(law="sizes")
def simulate_ps_queue(
    lam: float,
    C: float,
    sizes: object = "exp",
    mean: float | None = None,
    n_jobs: int = 200_000,
    rng: RngLike = None,
    warmup: float = 0.1,
    scv: float | None = None,
    *,
    level: float = 0.95,
    n_batches: int = 30,
    progress: bool = False,
) -> PSQueueEstimate:
    r"""Simulate an M/G/1 processor-sharing queue and estimate :math:`E[T]`, :math:`E[N]`,
    :math:`E[T/X]`.

    Poisson(``lam``) arrivals, i.i.d. sizes from ``sizes``, capacity ``C`` shared equally among
    the jobs present.  The simulation is exact (event by event, see :mod:`symq.routing.kernel`),
    starts empty, and the first ``warmup`` fraction of the jobs is discarded.  Insensitivity
    (Altman, Ayesta, Prabhu 2011, model section; Kleinrock 1976, Chapter 4) predicts, with
    :math:`x = \lambda E[X]` and :math:`\rho = x/C`,

    .. math::

        E[T] = \frac{E[X]}{C - x}, \quad E[T/X] = \frac{1}{C - x}, \quad
        E[N] = \frac{\rho}{1-\rho},

    whatever the size law.

    Parameters
    ----------
    lam : float
        Arrival rate :math:`\lambda > 0`.
    C : float
        Capacity :math:`C > 0`.
    sizes : str or job-size law, default "exp"
        A name of :data:`symq.laws.SIZE_LAWS` (see :func:`symq.laws.size_law`) or a law object:
        a :class:`~symq.laws.PhaseType`, a pair ``(alpha, A)``, an :class:`~symq.me.ME`, a
        frozen scipy distribution (``scipy.stats.lognorm(0.8)``) or any symq distribution,
        converted by :func:`symq.laws.as_law`.  Formerly ``law=``, and the names
        ``"exponential"``, ``"deterministic"``, ``"hyperexponential"`` (SCV 4 by default): both
        accepted for one release, with a warning.
    mean : float, optional
        Mean job size :math:`E[X] > 0` of a named law (default 1).  A law object has its own
        mean: omit ``mean`` (or give the same value).
    n_jobs : int, default 200_000
        Number of jobs simulated, warm-up included; at least 100 retained jobs per batch
        (:class:`symq.core.simrun.RunPlan`).
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness; the same seed gives the same result.
    warmup : float, default 0.1
        Fraction in ``[0, 1)`` of the jobs (in arrival order) discarded before estimating;
        the time average of :math:`N` starts at the arrival of the first retained job.
    scv : float, optional
        SCV of a named law (:func:`symq.laws.size_law`: omitted for ``exp`` and ``det``,
        required for the others); refused with a law object.
    level : float, default 0.95
        Confidence level of the intervals.
    n_batches : int, default 30
        Number of batches of the batch-means intervals.
    progress : bool, default False
        Show a tqdm bar (the kernel then runs in chunks; same result).

    Returns
    -------
    PSQueueEstimate
        ``ET`` and ``mean_slowdown`` are batch means over the retained jobs in arrival order;
        ``EQ`` is batch means over ``n_batches`` equal time batches of the window from the
        first retained arrival to the last arrival.  After the last arrival the queue drains
        without new arrivals, which shortens the sojourns of the last few jobs (a bias of
        order ``1/n_jobs``).

    Raises
    ------
    InvalidParameter
        If ``lam``, ``C`` or ``mean`` is not a positive finite number, ``warmup`` is not in
        ``[0, 1)``, ``level`` not in ``(0, 1)``, ``scv`` is not an SCV of the named law,
        ``sizes`` is an unknown name or not a job-size law, or there are fewer than 100
        retained jobs per batch.
    StabilityError
        If ``lam * E[X] >= C``.
    ResourceLimit
        If ``n_jobs`` jobs do not fit in memory.

    Examples
    --------
    >>> est = simulate_ps_queue(lam=0.8, C=2.0, sizes="h2", scv=4, n_jobs=100_000, rng=7)
    >>> exact = 1.0 / (2.0 - 0.8)
    >>> est.ET.distance(exact) < 3
    True
    """
    lam = _positive("lam", lam)
    C = _positive("C", C)
    sizes_law = _job_sizes(sizes, mean, scv, "simulate_ps_queue")
    _check_stable(lam * sizes_law.mean, C, f"lam*mean = {lam:g}*{sizes_law.mean:g}")
    plan = _plan(n_jobs, n_batches, warmup, level, "n_jobs")
    _guard_scale(lam, C, sizes_law, plan)
    return _run_queue(lam, C, sizes_law, plan, as_generator(rng), bool(progress), "M/G/1-PS")
