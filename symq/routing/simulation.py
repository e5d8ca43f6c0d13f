r"""Event-by-event simulation of M/G/1 processor-sharing servers and of PS server farms.

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
(the virtual-time kernel of :mod:`symq.routing.kernel`).  Job sizes come from one job-size law
``sizes`` (a name of :data:`symq.laws.SIZE_LAWS`, a :class:`~symq.laws.PhaseType`, an
:class:`~symq.me.ME`, a frozen scipy distribution, ...), converted once at the public boundary by
:func:`symq.laws.as_law` and :func:`symq.laws.as_sampler` and drawn in Python.  The names of
the laws before issue 31 (``"exponential"``, ``"deterministic"``, ``"hyperexponential"``, the
last with SCV 4 by default) are accepted for one release with a
:class:`~symq.core.renamed.RenamedKeywordWarning` that names the new name.  Run length, warm-up
and batches follow the rule of :class:`symq.core.simrun.RunPlan`;
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
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numba
import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import IntegerAtLeast, NonNegativeReal, PositiveReal
from symq.core.randomness import RngLike, as_generator
from symq.core.renamed import RenamedKeywordWarning, former_attribute, renamed_keywords
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
from symq.laws import Distribution, as_law, as_sampler, describe_law

from .kernel import PSState

__all__ = [
    "PSQueueEstimate",
    "FarmEstimate",
    "draw_sizes",
    "simulate_ps_queue",
    "simulate_farm",
]


# --------------------------------------------------------------------------------------------
# validation helpers
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


#: The job-size law names of the simulators before issue 31 -> their names in
#: :data:`symq.laws.SIZE_LAWS`; accepted for one release with a
#: :class:`~symq.core.renamed.RenamedKeywordWarning`.
RENAMED_LAWS: dict[str, str] = {"exponential": "exp", "deterministic": "det",
                                "hyperexponential": "h2"}

#: SCV of the former name ``"hyperexponential"`` when none is given (its default before issue 31).
FORMER_H2_SCV = 4.0


@dataclass(frozen=True)
class _JobSizes:
    """A converted job-size law: what the simulator draws from.

    Attributes
    ----------
    law : Distribution
        The law, as returned by :func:`symq.laws.as_sampler`.
    mean : float
        Its mean :math:`E[X] > 0` (for a name, the ``mean`` as given).
    label : str
        The name given (``"h2"``) or a short description of the law object.
    """

    law: Distribution
    mean: float
    label: str

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` sizes from ``rng``: a float64 array, every entry ``> 0``.

        Raises
        ------
        InvalidParameter
            Naming ``sizes`` if the law produced a negative or non-finite size.
        """
        sizes = np.asarray(self.law.sample(n, rng=rng), dtype=float).reshape(n)
        if not np.all(np.isfinite(sizes)) or np.any(sizes < 0):
            raise InvalidParameter("sizes", self.label, "a law of nonnegative finite job sizes",
                                   "a sampled size is negative or not finite")
        # a size of exactly 0 (probability ~0 for a continuous law) would give T/s = 0/0
        return np.maximum(sizes, np.finfo(float).tiny)


def _job_sizes(sizes: object, mean: float | None, scv: float | None,
               caller: str) -> _JobSizes:
    """The one conversion of the simulators' ``sizes`` argument (:func:`symq.laws.as_law`).

    A name (with ``mean``, default 1, and ``scv``) keeps its ``mean`` exactly as given; a former
    name of :data:`RENAMED_LAWS` is mapped to its new name with a warning (``"hyperexponential"``
    without ``scv``: SCV :data:`FORMER_H2_SCV`).  A law object fixes its own mean (``mean``
    omitted or equal to it) and variability (``scv`` refused).

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` (an unknown name or object, a law without a finite positive mean),
        ``mean`` or ``scv``.
    """
    if isinstance(sizes, str):
        key = sizes.strip().lower()
        if key in RENAMED_LAWS:
            warnings.warn(f"{caller}(sizes={sizes!r}) is renamed {caller}(sizes="
                          f"{RENAMED_LAWS[key]!r}); {sizes!r} will be removed in the next release",
                          RenamedKeywordWarning, stacklevel=4)
            if key == "hyperexponential" and scv is None:
                scv = FORMER_H2_SCV
            key = RENAMED_LAWS[key]
        given = 1.0 if mean is None else float(PositiveReal().coerce("mean", mean))
        law = as_sampler(as_law(key, "sizes", mean=given, scv=scv), "sizes")
        return _JobSizes(law, given, sizes.strip().lower())   # the mean as given, exactly
    law = as_sampler(as_law(sizes, "sizes", mean=mean, scv=scv), "sizes")
    try:
        law_mean = float(law.moment(1))
    except (TypeError, ValueError):
        law_mean = math.nan
    if not (math.isfinite(law_mean) and law_mean > 0):
        raise InvalidParameter("sizes", describe_law(sizes), "a law of job sizes with a finite "
                               "positive mean", f"E[X] = {law_mean}")
    return _JobSizes(law, law_mean, str(describe_law(sizes)))


@renamed_keywords(law="sizes")
def draw_sizes(sizes: object, mean: float | None, n: int, rng: RngLike = None,
               scv: float | None = None) -> np.ndarray:
    r"""Draw ``n`` i.i.d. job sizes from a job-size law.

    Parameters
    ----------
    sizes : str or job-size law
        A name of :data:`symq.laws.SIZE_LAWS` or a law object (what :func:`symq.laws.as_law`
        accepts).  Formerly ``law=`` (accepted for one release, with a warning).
    mean : float or None
        Mean size of a named law (``None``: 1); omitted (``None``) or equal to the law's mean for
        a law object.
    n : int
        Number of sizes, ``>= 1``.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness; the same seed gives the same sizes.
    scv : float, optional
        Squared coefficient of variation of a named law (:func:`symq.laws.size_law`).

    Returns
    -------
    numpy.ndarray
        ``float64`` array of shape ``(n,)``, all entries ``> 0``.

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for an unknown name (the message lists :data:`symq.laws.SIZE_LAWS`) or
        object, ``mean`` for ``mean <= 0``, ``n`` for ``n < 1``, ``scv`` for an SCV the law
        cannot have.

    Examples
    --------
    >>> x = draw_sizes("h2", mean=2.0, n=200_000, rng=0, scv=4.0)
    >>> round(float(x.mean()), 1)
    2.0
    """
    sampler = _job_sizes(sizes, mean, scv, "draw_sizes")
    n = IntegerAtLeast(1).coerce("n", n)
    return sampler.draw(n, as_generator(rng))


# --------------------------------------------------------------------------------------------
# one PS queue
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


# --------------------------------------------------------------------------------------------
# server farm
# --------------------------------------------------------------------------------------------


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
    used server is therefore simulated independently, as by :func:`simulate_ps_queue`, with
    arrival rate ``loads[j] / E[X]``, and the social cost

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
        Job-size law shared by all servers, as in :func:`simulate_ps_queue` (formerly ``law=``).
    n_jobs_per_server : int, default 200_000
        Jobs simulated at each used server.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness.  One independent child stream per server is spawned from it
        (``Generator.spawn``), so the same seed gives the same result.
    mean : float, optional
        Mean job size of a named law (default 1), as in :func:`simulate_ps_queue`.
    warmup, scv, level, n_batches
        As in :func:`simulate_ps_queue`.
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
