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

This module gives independent evidence of those formulas by exact discrete-event simulation.
The kernel is law-agnostic: job sizes are drawn in Python (:func:`draw_sizes`) and passed in.

Algorithm (virtual time)
------------------------
With :math:`n` jobs present each receives service at rate :math:`C/n`.  A *virtual clock*
:math:`V` that advances at rate :math:`C/n` per unit of real time measures the service any
job present has received since its arrival: a job that arrives at virtual time :math:`V_0`
with size :math:`s` leaves when the virtual clock reaches :math:`V_0 + s`.  The pending
virtual finish times never change once a job has arrived, so they are kept in an array-based
binary min-heap; each job costs one push and one pop, :math:`O(\log n)`.  When the system
empties, the virtual clock is reset to 0 (no pending finish time refers to it), which keeps
the floating-point magnitudes of :math:`V` bounded.

References
----------
E. Altman, U. Ayesta, B. J. Prabhu, "Load balancing in processor sharing systems",
*Telecommunication Systems* 47(1-2):35-48, 2011, DOI 10.1007/s11235-010-9300-8 (model
section, M/G/1-PS insensitivity: :math:`E[N_j] = \rho_j/(1-\rho_j)`, sojourn :math:`s/(C_j-x_j)`).

L. Kleinrock, *Queueing Systems, Vol. II: Computer Applications*, Wiley, 1976, Chapter 4 (processor sharing).

Examples
--------
>>> est = simulate_ps_queue(lam=0.5, C=1.0, law="deterministic", n_jobs=50_000, rng=1)
>>> exact = 1.0 / (1.0 - 0.5)          # E[T] = E[X]/(C - x)
>>> abs(est.mean_sojourn.mean - exact) < 0.1
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numba
import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, StabilityError, UnknownName
from symq.core.parameters import IntegerAtLeast, Interval, NonNegativeReal, PositiveReal
from symq.core.simstats import ConfidenceInterval, batch_means
from symq.core.randomness import RngLike
from symq.core.randomness import as_generator as _generator
from symq.core.resources import require_memory

__all__ = [
    "SIZE_LAWS",
    "PSQueueEstimate",
    "FarmEstimate",
    "draw_sizes",
    "simulate_ps_queue",
    "simulate_farm",
]

#: Names of the job-size laws understood by :func:`draw_sizes`.
SIZE_LAWS: tuple[str, ...] = ("exponential", "deterministic", "hyperexponential")

#: Time slices per batch used for the time-average number in system.
_SLICES_PER_BATCH = 20


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _heap_push(keys: np.ndarray, ids: np.ndarray, size: int, key: float, ident: int) -> int:
    """Insert ``(key, ident)`` into the binary min-heap ``keys[:size]``; return the new size."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] <= key:
            break
        keys[i] = keys[parent]
        ids[i] = ids[parent]
        i = parent
    keys[i] = key
    ids[i] = ident
    return size + 1


@numba.njit(cache=True)
def _heap_pop(keys: np.ndarray, ids: np.ndarray, size: int) -> int:
    """Remove the root of the min-heap ``keys[:size]`` (read it before calling); return new size."""
    size -= 1
    if size == 0:
        return 0
    key = keys[size]
    ident = ids[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[i] = keys[child]
        ids[i] = ids[child]
        i = child
    keys[i] = key
    ids[i] = ident
    return size


@numba.njit(cache=True)
def _add_area(
    area: np.ndarray, t0: float, t1: float, n: int, t_start: float, t_stop: float, width: float
) -> None:
    """Add ``n * |[t0, t1] ∩ slice_k|`` to ``area[k]`` for the equal slices of [t_start, t_stop]."""
    if n == 0:
        return
    lo = max(t0, t_start)
    hi = min(t1, t_stop)
    if hi <= lo:
        return
    n_slices = area.shape[0]
    k = int((lo - t_start) / width)
    if k >= n_slices:
        k = n_slices - 1
    while lo < hi and k < n_slices:
        edge = hi if k == n_slices - 1 else min(hi, t_start + (k + 1) * width)
        if edge > lo:
            area[k] += n * (edge - lo)
            lo = edge
        k += 1


@numba.njit(cache=True)
def _ps_kernel(
    arrivals: np.ndarray,
    sizes: np.ndarray,
    capacity: float,
    t_start: float,
    t_stop: float,
    n_slices: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate one PS queue exactly, event by event (virtual-time algorithm).

    Parameters
    ----------
    arrivals : float64 array, nondecreasing
        Arrival epochs of the jobs, in arrival order.
    sizes : float64 array
        Job sizes (work), same order.
    capacity : float
        Service capacity C, shared equally by the jobs present.
    t_start, t_stop : float
        Window ``[t_start, t_stop]`` over which the number in system is integrated.
    n_slices : int
        Number of equal time slices of the window.

    Returns
    -------
    sojourn : float64 array
        Sojourn time of each job, **in arrival order** (``sojourn[i]`` belongs to ``arrivals[i]``).
    departures : float64 array
        Departure epoch of each job, in arrival order.
    area : float64 array
        ``area[k]`` is the integral of the number in system over time slice ``k``.

    After the last arrival the queue drains with no further arrivals.
    """
    n_jobs = arrivals.shape[0]
    sojourn = np.empty(n_jobs)
    departures = np.empty(n_jobs)
    area = np.zeros(n_slices)
    width = (t_stop - t_start) / n_slices if n_slices > 0 else 1.0
    keys = np.empty(n_jobs)
    ids = np.empty(n_jobs, dtype=np.int64)
    size = 0  # number of jobs present = heap size
    t = 0.0  # real time
    v = 0.0  # virtual time: service received by any job present since the last reset
    i = 0  # next arrival
    while i < n_jobs or size > 0:
        if size > 0:
            t_dep = t + (keys[0] - v) * size / capacity
        else:
            t_dep = np.inf
        if i < n_jobs and arrivals[i] < t_dep:
            # arrival (strictly before the next departure)
            t_next = arrivals[i]
            if n_slices > 0:
                _add_area(area, t, t_next, size, t_start, t_stop, width)
            if size > 0:
                v += (t_next - t) * capacity / size
            else:
                v = 0.0
            t = t_next
            size = _heap_push(keys, ids, size, v + sizes[i], i)
            i += 1
        else:
            # departure of the job with the smallest virtual finish time
            if n_slices > 0:
                _add_area(area, t, t_dep, size, t_start, t_stop, width)
            t = t_dep
            v = keys[0]
            j = ids[0]
            size = _heap_pop(keys, ids, size)
            departures[j] = t
            sojourn[j] = t - arrivals[j]
            if size == 0:
                v = 0.0
    return sojourn, departures, area


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _positive(name: str, value: object) -> float:
    return float(PositiveReal().coerce(name, value))


def _law(law: object) -> str:
    if not isinstance(law, str) or law.strip().lower() not in SIZE_LAWS:
        raise UnknownName("job-size law", str(law), SIZE_LAWS)
    return law.strip().lower()


def _warmup(warmup: object) -> float:
    return float(Interval(0.0, 1.0, right_open=True).coerce("warmup", warmup))


def _level(level: object) -> float:
    return float(Interval(0.0, 1.0, left_open=True, right_open=True).coerce("level", level))


def _check_stable(x: float, C: float, detail: str) -> None:
    if not x < C:
        raise StabilityError(
            f"work rate x = {detail} = {x:g} must be < capacity C={C:g} for a stable PS queue "
            f"(utilisation rho = x/C = {x / C:g} >= 1)"
        )


# --------------------------------------------------------------------------------------------
# job sizes
# --------------------------------------------------------------------------------------------


def _h2_parameters(mean: float, scv: float) -> tuple[float, float, float]:
    """Balanced-means H2: probability ``p1`` and rates ``mu1, mu2`` with ``p1/mu1 = p2/mu2``."""
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    p2 = 1.0 - p1
    return p1, 2.0 * p1 / mean, 2.0 * p2 / mean


def draw_sizes(
    law: str, mean: float, n: int, rng: RngLike = None, scv: float = 4.0
) -> np.ndarray:
    r"""Draw ``n`` i.i.d. job sizes with the given law and mean.

    Parameters
    ----------
    law : {"exponential", "deterministic", "hyperexponential"}
        ``"exponential"``: rate ``1/mean`` (SCV 1).  ``"deterministic"``: every size equals
        ``mean`` (SCV 0).  ``"hyperexponential"``: two-phase H2 with *balanced means*,
        :math:`p_1/\mu_1 = p_2/\mu_2 = \text{mean}/2`, and squared coefficient of variation
        ``scv``: :math:`p_{1,2} = \tfrac12\big(1 \pm \sqrt{(c^2-1)/(c^2+1)}\big)`,
        :math:`\mu_i = 2 p_i / \text{mean}`.
    mean : float
        Mean size ``E[X] > 0``.
    n : int
        Number of sizes, ``>= 1``.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness; the same seed gives the same sizes.
    scv : float, default 4.0
        Squared coefficient of variation :math:`c^2 = Var[X]/E[X]^2 \ge 1` of the
        hyperexponential law; ignored by the other laws.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of shape ``(n,)``, all entries ``> 0``.

    Raises
    ------
    UnknownName
        If ``law`` is not one of :data:`SIZE_LAWS` (the message lists them).
    InvalidParameter
        If ``mean <= 0``, ``n < 1`` or (hyperexponential) ``scv < 1``.

    Examples
    --------
    >>> x = draw_sizes("hyperexponential", mean=2.0, n=200_000, rng=0, scv=4.0)
    >>> round(float(x.mean()), 1)
    2.0
    """
    law = _law(law)
    mean = _positive("mean", mean)
    n = IntegerAtLeast(1).coerce("n", n)
    gen = _generator(rng)
    if law == "exponential":
        sizes = gen.exponential(mean, size=n)
    elif law == "deterministic":
        sizes = np.full(n, mean)
    else:
        scv = float(Interval(1.0, math.inf).coerce("scv", scv))
        p1, mu1, mu2 = _h2_parameters(mean, scv)
        phase1 = gen.random(n) < p1
        sizes = gen.exponential(1.0, size=n) / np.where(phase1, mu1, mu2)
    # an exponential draw of exactly 0 has probability ~0 but would give T/s = 0/0
    return np.maximum(sizes, np.finfo(float).tiny)


# --------------------------------------------------------------------------------------------
# one PS queue
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PSQueueEstimate:
    r"""Simulation estimates for one M/G/1-PS queue.

    Attributes
    ----------
    mean_sojourn : ConfidenceInterval
        :math:`E[T]`, batch means over the per-job sojourn times in arrival order
        (exact PS value :math:`E[X]/(C - x)`).
    mean_number : ConfidenceInterval
        :math:`E[N]`, time average of the number in system, batch means over equal time
        batches (exact PS value :math:`\rho/(1-\rho)`).  Independent of ``mean_sojourn``
        as an estimator; Little's law :math:`E[N] = \lambda E[T]` links the two.
    mean_slowdown : ConfidenceInterval
        :math:`E[T/X]`, batch means over the per-job ratios (exact PS value :math:`1/(C-x)`
        for every size law).
    lam, C, mean : float
        Arrival rate, capacity and mean job size of the simulated queue.
    law : str
        Job-size law.
    n_jobs : int
        Number of simulated jobs (warm-up included).
    n_warmup : int
        Number of leading jobs discarded as warm-up.
    """

    mean_sojourn: ConfidenceInterval
    mean_number: ConfidenceInterval
    mean_slowdown: ConfidenceInterval
    lam: float
    C: float
    mean: float
    law: str
    n_jobs: int
    n_warmup: int

    @property
    def load(self) -> float:
        """Work rate :math:`x = \\lambda E[X]`."""
        return self.lam * self.mean

    @property
    def utilisation(self) -> float:
        """:math:`\\rho = x / C`."""
        return self.lam * self.mean / self.C


def simulate_ps_queue(
    lam: float,
    C: float,
    law: str = "exponential",
    mean: float = 1.0,
    n_jobs: int = 200_000,
    rng: RngLike = None,
    warmup: float = 0.1,
    scv: float = 4.0,
    *,
    level: float = 0.95,
    n_batches: int = 30,
) -> PSQueueEstimate:
    r"""Simulate an M/G/1 processor-sharing queue and estimate :math:`E[T]`, :math:`E[N]`, :math:`E[T/X]`.

    Poisson(``lam``) arrivals, i.i.d. sizes from ``law`` with mean ``mean``, capacity ``C``
    shared equally among the jobs present.  The simulation is exact (event by event, see the
    module docstring), starts empty, and the first ``warmup`` fraction of the jobs is
    discarded.  Insensitivity (Altman, Ayesta, Prabhu 2011, model section; Kleinrock
    1976, Chapter 4) predicts, with :math:`x = \lambda\,\text{mean}` and :math:`\rho = x/C`,

    .. math::

        E[T] = \frac{\text{mean}}{C - x}, \quad E[T/X] = \frac{1}{C - x}, \quad
        E[N] = \frac{\rho}{1-\rho},

    whatever the size law.

    Parameters
    ----------
    lam : float
        Arrival rate :math:`\lambda > 0`.
    C : float
        Capacity :math:`C > 0`.
    law : {"exponential", "deterministic", "hyperexponential"}, default "exponential"
        Job-size law, see :func:`draw_sizes`.
    mean : float, default 1.0
        Mean job size :math:`E[X] > 0`.
    n_jobs : int, default 200_000
        Number of jobs simulated, warm-up included.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness; the same seed gives the same result.
    warmup : float, default 0.1
        Fraction in ``[0, 1)`` of the jobs (in arrival order) discarded before estimating;
        the time average of :math:`N` starts at the arrival of the first retained job.
    scv : float, default 4.0
        SCV of the hyperexponential law (ignored by the others).
    level : float, default 0.95
        Confidence level of the intervals.
    n_batches : int, default 30
        Number of batches of the batch-means intervals.

    Returns
    -------
    PSQueueEstimate
        ``mean_sojourn`` and ``mean_slowdown`` are batch means over the retained jobs in
        arrival order; ``mean_number`` is batch means over ``n_batches`` equal time batches of
        the window from the first retained arrival to the last arrival.  After the last
        arrival the queue drains without new arrivals, which shortens the sojourns of the
        last few jobs (a bias of order ``1/n_jobs``).

    Raises
    ------
    InvalidParameter
        If ``lam``, ``C`` or ``mean`` is not a positive finite number, ``warmup`` is not in
        ``[0, 1)``, ``level`` not in ``(0, 1)``, ``scv < 1`` (hyperexponential), or there are
        fewer than ``2 * n_batches`` retained jobs.
    UnknownName
        If ``law`` is unknown.
    StabilityError
        If ``lam * mean >= C``.

    Examples
    --------
    >>> est = simulate_ps_queue(lam=0.8, C=2.0, law="hyperexponential", n_jobs=100_000, rng=7)
    >>> exact = 1.0 / (2.0 - 0.8)
    >>> est.mean_sojourn.distance(exact) < 3
    True
    """
    lam = _positive("lam", lam)
    C = _positive("C", C)
    law = _law(law)
    mean = _positive("mean", mean)
    _check_stable(lam * mean, C, f"lam*mean = {lam:g}*{mean:g}")
    n_jobs = IntegerAtLeast(1).coerce("n_jobs", n_jobs)
    warmup = _warmup(warmup)
    level = _level(level)
    n_batches = IntegerAtLeast(2).coerce("n_batches", n_batches)
    skip = int(math.floor(warmup * n_jobs))
    if n_jobs - skip < 2 * n_batches:
        raise InvalidParameter(
            "n_jobs",
            n_jobs,
            f"large enough to leave at least 2 * n_batches = {2 * n_batches} jobs after the warm-up",
            f"warmup={warmup:g} drops {skip} jobs",
        )
    # sizes, arrivals, sojourn, departures, heap keys and ids, slowdowns, draw temporaries:
    # about 10 float arrays of n_jobs entries alive at once, and the area slices
    require_memory("n_jobs", n_jobs, 8.0 * (10 * n_jobs + n_batches * _SLICES_PER_BATCH),
                   what=f"{n_jobs:.3g} simulated jobs",
                   limit=lambda budget: f"at most {int(budget // 80):.3g} jobs")
    gen = _generator(rng)

    sizes = draw_sizes(law, mean, n_jobs, gen, scv=scv)
    arrivals = np.cumsum(gen.exponential(1.0 / lam, size=n_jobs))
    t_start = float(arrivals[skip])
    t_stop = float(arrivals[-1])
    n_slices = n_batches * _SLICES_PER_BATCH if t_stop > t_start else 0
    sojourn, _, area = _ps_kernel(arrivals, sizes, C, t_start, t_stop, n_slices)

    sojourn_ci = batch_means(sojourn[skip:], n_batches=n_batches, level=level)
    slowdown_ci = batch_means(sojourn[skip:] / sizes[skip:], n_batches=n_batches, level=level)
    if n_slices == 0:  # pragma: no cover - needs all retained arrivals at one instant
        raise InvalidParameter("n_jobs", n_jobs, "large enough for a time window of positive length")
    slice_means = area / ((t_stop - t_start) / n_slices)
    number_ci = batch_means(slice_means, n_batches=n_batches, level=level)
    return PSQueueEstimate(
        mean_sojourn=sojourn_ci,
        mean_number=number_ci,
        mean_slowdown=slowdown_ci,
        lam=lam,
        C=C,
        mean=mean,
        law=law,
        n_jobs=n_jobs,
        n_warmup=skip,
    )


# --------------------------------------------------------------------------------------------
# server farm
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FarmEstimate:
    r"""Simulation estimates for a farm of independent PS servers.

    Attributes
    ----------
    social_cost : ConfidenceInterval
        :math:`J = \sum_j w_j E[N_j]` (exact PS value :math:`\sum_j w_j x_j/(C_j - x_j)`).
        Mean :math:`\sum_j w_j \hat N_j`, half-width :math:`\sqrt{\sum_j (w_j h_j)^2}` with
        :math:`h_j` the half-width of server j's interval; see :func:`simulate_farm`.
    mean_number : tuple of ConfidenceInterval
        :math:`E[N_j]` per server (time average).  For an unused server (load 0) it is the
        exact value 0 with half-width 0 and ``method="exact"``.
    servers : tuple of PSQueueEstimate or None
        Full estimate of each used server; ``None`` for unused servers.
    C, w, loads : tuple of float
        Capacities, holding costs and work rates :math:`x_j` of the servers.
    law : str
        Job-size law.
    """

    social_cost: ConfidenceInterval
    mean_number: tuple[ConfidenceInterval, ...]
    servers: tuple[PSQueueEstimate | None, ...]
    C: tuple[float, ...]
    w: tuple[float, ...]
    loads: tuple[float, ...]
    law: str


def _vector(name: str, values: ArrayLike, domain: PositiveReal | NonNegativeReal) -> tuple[float, ...]:
    array = np.asarray(values, dtype=object)
    if array.ndim != 1 or array.size == 0:
        raise InvalidParameter(name, values, f"a nonempty one-dimensional sequence of {domain.describe()}s")
    return tuple(float(domain.coerce(f"{name}[{j}]", v)) for j, v in enumerate(array.tolist()))


def simulate_farm(
    C: Sequence[float] | ArrayLike,
    w: Sequence[float] | ArrayLike,
    loads: Sequence[float] | ArrayLike,
    law: str = "exponential",
    n_jobs_per_server: int = 200_000,
    rng: RngLike = None,
    mean: float = 1.0,
    *,
    warmup: float = 0.1,
    scv: float = 4.0,
    level: float = 0.95,
    n_batches: int = 30,
) -> FarmEstimate:
    r"""Simulate a farm of PS servers under Bernoulli routing and estimate the social cost.

    With a Poisson stream routed to server j with probability :math:`q_j` (size-blind
    Bernoulli routing), server j sees a Poisson stream of rate :math:`\lambda q_j`
    (thinning), independent of the other servers.  Its work rate is
    :math:`x_j = \lambda q_j E[X]`; any load vector :math:`x` with :math:`\sum_j x_j = \rho`
    is attained by :math:`q_j = x_j/\rho` (Altman, Ayesta, Prabhu 2011, model section).  Each
    used server is therefore simulated independently by :func:`simulate_ps_queue` with arrival
    rate ``loads[j] / mean``, and the social cost

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
    law : {"exponential", "deterministic", "hyperexponential"}, default "exponential"
        Job-size law, shared by all servers.
    n_jobs_per_server : int, default 200_000
        Jobs simulated at each used server.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness.  One independent child stream per server is spawned from it
        (``Generator.spawn``), so the same seed gives the same result.
    mean : float, default 1.0
        Mean job size.
    warmup, scv, level, n_batches
        As in :func:`simulate_ps_queue`.

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
    UnknownName
        If ``law`` is unknown.

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
    law = _law(law)
    mean = _positive("mean", mean)
    level = _level(level)
    for j, (x, c) in enumerate(zip(xs, caps)):
        _check_stable(x, c, f"loads[{j}]")
    n_jobs_per_server = IntegerAtLeast(1).coerce("n_jobs_per_server", n_jobs_per_server)
    require_memory("n_jobs_per_server", n_jobs_per_server, 80.0 * n_jobs_per_server,
                   what=f"{n_jobs_per_server:.3g} simulated jobs per server",
                   limit=lambda budget: f"at most {int(budget // 80):.3g}")
    gen = _generator(rng)
    children = gen.spawn(len(caps))

    numbers_ci: list[ConfidenceInterval] = []
    servers: list[PSQueueEstimate | None] = []
    for x, c, child in zip(xs, caps, children):
        if x == 0.0:
            servers.append(None)
            numbers_ci.append(ConfidenceInterval(0.0, 0.0, level, 1, "exact"))
            continue
        est = simulate_ps_queue(
            x / mean, c, law=law, mean=mean, n_jobs=n_jobs_per_server, rng=child,
            warmup=warmup, scv=scv, level=level, n_batches=n_batches,
        )
        servers.append(est)
        numbers_ci.append(est.mean_number)

    total = sum(wj * ci.mean for wj, ci in zip(costs, numbers_ci))
    half = math.sqrt(sum((wj * ci.half_width) ** 2 for wj, ci in zip(costs, numbers_ci)))
    n_total = sum(ci.n for ci, s in zip(numbers_ci, servers) if s is not None) or 1
    social = ConfidenceInterval(total, half, level, n_total, "sum_of_independent")
    return FarmEstimate(
        social_cost=social,
        mean_number=tuple(numbers_ci),
        servers=tuple(servers),
        C=caps,
        w=costs,
        loads=xs,
        law=law,
    )
