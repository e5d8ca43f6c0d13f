r"""M/ME/1 waiting times: the exact Pollaczek-Khinchine transform of a fitted ME service law, and
an M/G/1 Lindley simulator that checks it independently.

Angius, Horváth et al. (2014) use the fitted ME distributions inside stochastic models.  For the
M/G/1 queue with Poisson(:math:`\lambda`) arrivals, service transform :math:`B^*(s) = N(s)/D(s)` and
load :math:`\rho = \lambda m_1 < 1`, the Pollaczek-Khinchine formula for the FCFS waiting time is

.. math::

    W^*(s) = \frac{(1-\rho)\, s}{s - \lambda (1 - B^*(s))}
           = \frac{(1-\rho)\, D(s)}{D(s) - \lambda E(s)}, \qquad D(s) - N(s) = s E(s),

a rational function again: :math:`W` has an atom :math:`1-\rho` at zero and, given :math:`W > 0`, an
ME distribution of the same order (Kleinrock, Queueing Systems I, §5.7; Asmussen, Applied
Probability and Queues, §VIII.5).  :func:`mg1_waiting_time` returns it exactly
(:class:`WaitingTime`).

The simulator :func:`simulate_mg1_waiting` is the Lindley recursion
:math:`W_{k+1} = \max(0, W_k + S_k - A_{k+1})`, an independent check that needs only samples of the
service time.  It runs on the simulation-run core of :mod:`symq.core.simrun` (run-length rule,
chunked progress) and returns batch-means confidence intervals (:class:`WaitingTimeEstimate`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numba
import numpy as np
import sympy as sp
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import real_value
from symq.core.randomness import RngLike, as_generator
from symq.core.renamed import renamed_keywords
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import analyse_series, require_run_length
from symq.core.simrun import SIM_WORK_LIMIT, RunPlan, require_work, run_chunked
from symq.core.simstats import ConfidenceInterval
from symq.laws import Distribution, as_sampler

from .transform import RationalLST, s, to_rational

if TYPE_CHECKING:
    from .distribution import ME

#: A function ``(n, generator) -> n service times`` (what :func:`simulate_mg1_waiting` also takes).
ServiceDraw = Callable[[int, np.random.Generator], Any]

__all__ = ["WaitingTime", "WaitingTimeEstimate", "mg1_waiting_time", "simulate_mg1_waiting",
           "lindley_waiting"]


@dataclass(frozen=True)
class WaitingTime(ResultBase):
    r"""The M/ME/1 FCFS waiting time: an atom :math:`1-\rho` at 0 plus :math:`\rho` times an ME law.

    Attributes
    ----------
    lam : sympy.Rational
        The arrival rate :math:`\lambda`.
    rho : sympy.Rational
        The load :math:`\lambda m_1`.
    EW : sympy.Rational
        The mean waiting time :math:`E[W] = \rho\, E[W \mid W > 0] = \lambda m_2 / (2(1 - \rho))`
        (exact).
    positive_part : RationalLST
        Transform of :math:`W` given :math:`W > 0`.
    method : str
    exactness : Exactness
        ``exact``: every number is an exact rational.
    """

    summary: ClassVar[tuple[str, ...]] = ("lam", "rho", "EW")
    labels: ClassVar[Mapping[str, str]] = {"positive_part": r"$W^*(s \mid W > 0)$"}

    lam: sp.Rational
    rho: sp.Rational
    EW: sp.Rational
    positive_part: RationalLST
    method: str = "Pollaczek-Khinchine transform"
    exactness: Exactness = Exactness.EXACT

    def mean(self) -> sp.Rational:
        """:math:`E[W]`, the same exact value as :attr:`EW`."""
        return self.EW



@renamed_keywords(service="sizes")
def mg1_waiting_time(sizes: RationalLST | ME, lam: Any) -> WaitingTime:
    r"""The Pollaczek-Khinchine waiting time of the M/ME/1 queue, exactly.

    Parameters
    ----------
    sizes : RationalLST or ME
        The service-time (job-size) law: its transform :math:`N/D`, or an
        :class:`~symq.me.ME` law (its ``.lst``).  Formerly ``service=`` (accepted for one
        release, with a warning).
    lam : number
        Arrival rate (converted exactly to a rational).

    Returns
    -------
    WaitingTime
        The load, the exact mean waiting time ``EW`` and the transform of :math:`W \mid W > 0`.

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for anything but a transform or an ME law, ``lam`` for a rate that is not
        positive.
    StabilityError
        If :math:`\rho = \lambda m_1 \ge 1`.

    Examples
    --------
    >>> from symq.me import ME
    >>> waiting = mg1_waiting_time(ME.erlang(2, 2), "1/2")     # mean service 1, rho = 1/2
    >>> waiting.rho, waiting.EW
    (1/2, 3/4)
    """
    lst = getattr(sizes, "lst", sizes)
    if not isinstance(lst, RationalLST):
        raise InvalidParameter("sizes", sizes, "a RationalLST or an ME distribution")
    lam_q = to_rational(lam, "lam")
    if not lam_q > 0:
        raise InvalidParameter("lam", lam, "a positive arrival rate")
    m1 = lst.moments(1)[0]
    rho = lam_q * m1
    if rho >= 1:
        raise StabilityError(f"load rho = lam*E[S] = {float(lam_q):g}*{float(m1):g} = "
                             f"{float(rho):g} must be < 1 for a stationary M/G/1 queue")
    N, D = lst.N, lst.D
    E = sp.div(D - N, sp.Poly(s, s, domain=sp.QQ))[0]   # D - N = s E(s), exact since N(0) = D(0)
    denominator = D - E * lam_q                          # W*(s) = (1 - rho) D / (D - lam E)
    # W | W > 0 : (W* - (1 - rho)) / rho = (1 - rho) lam E / (rho (D - lam E))
    numerator = E * (lam_q * (1 - rho) / rho)
    positive = RationalLST.from_coefficients(reversed(numerator.all_coeffs()),
                                             reversed(denominator.all_coeffs()))
    return WaitingTime(lam=lam_q, rho=rho, EW=rho * positive.moments(1)[0],
                       positive_part=positive)


@dataclass(frozen=True)
class WaitingTimeEstimate(ResultBase):
    """Estimates of an M/G/1 FCFS waiting time from :func:`simulate_mg1_waiting`.

    Attributes
    ----------
    lam : float
        Arrival rate.
    EW : ConfidenceInterval
        Mean waiting time :math:`E[W]`.
    ccdf : tuple of ConfidenceInterval
        :math:`P(W > t)` at each of :attr:`thresholds`.
    thresholds : ndarray
        The values ``t``.
    n_jobs : int
        Customers simulated (the first ``n_warm`` are discarded as warm-up).
    n_warm : int
        Customers discarded.
    n_batches : int
        Batches of the batch-means intervals.
    level : float
        Confidence level of the intervals.
    method : str
    exactness : Exactness
        ``simulated``.
    """

    summary: ClassVar[tuple[str, ...]] = ("lam", "EW", "n_jobs")

    lam: float
    EW: ConfidenceInterval
    ccdf: tuple[ConfidenceInterval, ...]
    thresholds: NDArray[np.float64]
    n_jobs: int
    n_warm: int
    n_batches: int
    level: float
    method: str = "Lindley recursion, batch means"
    exactness: Exactness = Exactness.SIMULATED

    def to_markdown(self) -> str:
        """The estimate as Markdown (Jupyter's display): the fields' table, with the tail
        probabilities listed threshold by threshold."""
        lines = [line for line in super().to_markdown().split("\n")
                 if not line.startswith("| `ccdf` |")]  # listed threshold by threshold
        lines += [f"| `P(W > {t:g})` | {ci} |" for t, ci in zip(self.thresholds, self.ccdf)]
        return "\n".join(lines)


@numba.njit(cache=True)
def _lindley(services: np.ndarray, interarrivals: np.ndarray, thresholds: np.ndarray,
             indicators: np.ndarray, waits: np.ndarray, state: np.ndarray, start: int,
             stop: int) -> None:  # pragma: no cover - compiled
    """Customers ``start..stop-1`` of the Lindley recursion; ``state[0]`` carries ``W_start``."""
    w = state[0]
    for k in range(start, stop):
        waits[k] = w
        for i in range(thresholds.size):
            indicators[i, k] = 1 if w > thresholds[i] else 0
        w = w + services[k] - interarrivals[k]
        w = max(w, 0.0)
    state[0] = w


_SERVICE_DOMAIN = ("a job-size law (an ME, a PhaseType, a pair (alpha, A), a scipy distribution) "
                   "or a function (n, rng) -> n service times")


def _as_service(sizes: object) -> Distribution | ServiceDraw:
    """The one conversion of :func:`simulate_mg1_waiting`'s ``sizes``: a function drawing service
    times is kept, anything else converted by :func:`symq.laws.as_sampler`."""
    if callable(sizes) and not (hasattr(sizes, "sample") or hasattr(sizes, "rvs")):
        return sizes
    try:
        return as_sampler(sizes, "sizes")
    except InvalidParameter:
        raise InvalidParameter("sizes", type(sizes).__name__, _SERVICE_DOMAIN) from None


def _service_draw(law: Distribution | ServiceDraw) -> tuple[ServiceDraw, float | None]:
    """A function ``(n, generator) -> n service times`` and the law's mean (None if unknown)."""
    if not isinstance(law, Distribution):
        return law, None
    return (lambda n, generator: law.sample(n, rng=generator)), float(law.mean())


#: Float arrays of ``n_jobs`` entries a run holds at once (service and interarrival times,
#: waiting times, and one temporary of the size law's sampler).
_ARRAYS_PER_JOB = 4
#: Kernel steps per customer (two draws and a Lindley step).
_STEPS_PER_JOB = 3


def _scv(law: Distribution | ServiceDraw, services: np.ndarray) -> float:
    """The size law's squared coefficient of variation: exact for a law with moments, else that
    of the drawn times."""
    try:
        if not isinstance(law, Distribution):
            raise TypeError("a function drawing service times has no moments")
        m1, m2 = float(law._raw_moment(1)), float(law._raw_moment(2))
        if m1 > 0 and np.isfinite(m2):
            return max(m2 / (m1 * m1) - 1.0, 0.0)
    except Exception:  # noqa: BLE001 - a law without moments: use the samples
        pass
    m = float(services.mean())
    return float(services.var() / (m * m)) if m > 0 else 0.0


@renamed_keywords(service="sizes")
def simulate_mg1_waiting(sizes: object, lam: float, thresholds: Sequence[float] = (), *,
                         n_jobs: int = 1_000_000, rng: RngLike = None, n_batches: int = 40,
                         warmup: float = 0.05, level: float = 0.99,
                         progress: bool = False) -> WaitingTimeEstimate:
    """Simulate an M/G/1 FCFS queue by the Lindley recursion and estimate its waiting time.

    The run length is checked by :class:`symq.core.simrun.RunPlan` (at least 100 customers per
    batch) and against the relaxation time at the load
    (:func:`symq.core.simoutput.require_run_length`, with the size law's squared coefficient of
    variation, of the drawn times for a function); the service times are drawn first, then the
    interarrival times, from one generator; the estimates are batch means with the warm-up and
    the batches chosen from the data (:func:`symq.core.simoutput.analyse_series`: MSER-5, lag-1
    test), each interval with its ``run_length`` and ``doubt``.

    Parameters
    ----------
    sizes : job-size law or callable(n, rng) -> array
        The service-time (job-size) law: an :class:`~symq.me.ME`, a phase-type law, a scipy
        distribution (converted by :func:`symq.laws.as_sampler`), or a function drawing ``n``
        service times from a numpy Generator.  Formerly ``service=`` (accepted for one release,
        with a warning).
    lam : float
        Arrival rate.
    thresholds : sequence of float
        Values ``t`` at which :math:`P(W > t)` is estimated.
    n_jobs : int
        Customers simulated.
    rng : seed, SeedSequence or numpy.random.Generator
        Randomness (same seed, same result).
    n_batches : int
        Batches of the batch-means intervals.
    warmup : float
        Kept for compatibility: validated, but the warm-up is chosen from the data (MSER-5).
    level : float
        Confidence level of the intervals.
    progress : bool
        Show a tqdm bar.

    Returns
    -------
    WaitingTimeEstimate
        ``EW`` and ``ccdf`` (one per threshold) as batch-means confidence intervals.

    Raises
    ------
    InvalidParameter
        A non-positive ``lam``, non-finite thresholds, a run too short for the batch-means rule
        or for the relaxation time at the load (the message gives the smallest ``n_jobs``), a
        run over
        :data:`~symq.core.simrun.SIM_WORK_LIMIT` steps, or service times that are not ``n``
        finite nonnegative numbers.
    ResourceLimit
        If the run's arrays (``32 + len(thresholds)`` bytes a customer) do not fit the memory
        budget, naming ``n_jobs`` and the largest value that fits.
    StabilityError
        If the load ``lam * E[S]`` is ``>= 1`` (the law's mean, or the mean of the drawn times
        for a function).

    Examples
    --------
    >>> from symq.me import ME
    >>> sim = simulate_mg1_waiting(ME.erlang(2, 2), 0.5, [1.0], n_jobs=100_000, rng=1)
    >>> sim.EW.contains(0.75), sim.ccdf[0].n
    (True, 40)
    """
    lam = real_value("lam", lam, "a positive arrival rate", lambda x: x > 0)
    return lindley_waiting(_as_service(sizes),
                           lambda n, generator: generator.exponential(1.0 / lam, n),
                           1.0 / lam, 1.0, thresholds, n_jobs=n_jobs, rng=rng,
                           n_batches=n_batches, warmup=warmup, level=level, progress=progress,
                           queue="M/G/1")


def lindley_waiting(law: Distribution | ServiceDraw, draw_interarrivals: ServiceDraw,
                    mean_interarrival: float, scv_interarrival: float,
                    thresholds: Sequence[float], *, n_jobs: int, rng: RngLike,
                    n_batches: int, warmup: float, level: float, progress: bool,
                    queue: str) -> WaitingTimeEstimate:
    """The Lindley recursion of a GI/G/1 FCFS queue on the run core (the checks of
    :func:`simulate_mg1_waiting`); the run-length rule uses the M/G/1 size scv with the same
    variability ``(c_a^2 + c_s^2)/2``, i.e. ``c_a^2 + c_s^2 - 1``."""
    try:
        grid = np.array(thresholds, dtype=float, ndmin=1)
    except (TypeError, ValueError):
        grid = np.full((1, 1), np.nan)
    if grid.ndim != 1 or not np.all(np.isfinite(grid)):
        raise InvalidParameter("thresholds", thresholds, "a sequence of finite numbers")
    plan = RunPlan.make(n_jobs=n_jobs, n_batches=n_batches, warmup=warmup, level=level)
    n = plan.n_jobs
    per_job = 8.0 * _ARRAYS_PER_JOB + grid.size  # services, interarrivals, waits, a draw's temp
    require_memory("n_jobs", n, per_job * n, what=f"{n} customers x {per_job:g} bytes",
                   limit=lambda budget: f"at most {int(budget // per_job)}")
    require_work(_STEPS_PER_JOB * n, [("n_jobs", n, SIM_WORK_LIMIT / _STEPS_PER_JOB)],
                 what=f"{n} customers x {_STEPS_PER_JOB} steps")
    draw, mean = _service_draw(law)
    generator = as_generator(rng)
    services = np.asarray(draw(n, generator), dtype=float)
    if services.shape != (n,) or not np.all(np.isfinite(services)) or np.any(services < 0):
        raise InvalidParameter("sizes", "its samples", f"{n} finite nonnegative times")
    lam = 1.0 / mean_interarrival
    load = lam * (float(services.mean()) if mean is None else mean)
    if load >= 1.0:
        raise StabilityError(f"load rho = E[S]/E[A] = {load:g} must be < 1 for a stationary "
                             f"{queue} queue (arrival rate {lam:g})")
    scv = max(_scv(law, services) + scv_interarrival - 1.0, 0.0)
    require_run_length(n, load, scv, plan.n_batches,
                       what=f"the {queue} queue (variability (c_a^2 + c_s^2)/2 = "
                            f"{(scv + 1) / 2:.3g})")
    interarrivals = np.asarray(draw_interarrivals(n, generator), dtype=float)
    if interarrivals.shape != (n,) or not np.all(np.isfinite(interarrivals)) \
            or np.any(interarrivals < 0):
        raise InvalidParameter("interarrivals", "its samples", f"{n} finite nonnegative times")
    indicators = np.empty((grid.size, n), dtype=np.uint8)
    waits = np.empty(n)
    state = np.zeros(1)
    position = [0]

    def step(stop: int) -> tuple[int, bool]:
        _lindley(services, interarrivals, grid, indicators, waits, state, position[0], stop)
        position[0] = stop
        return stop, False

    run_chunked(step, n, progress=progress, desc=f"{queue} Lindley", unit="job")

    def estimate(samples: np.ndarray) -> ConfidenceInterval:
        return analyse_series(samples, plan.n_batches, plan.level, run_length=n, unit="customers")

    return WaitingTimeEstimate(lam=lam, EW=estimate(waits),
                               ccdf=tuple(estimate(row) for row in indicators), thresholds=grid,
                               n_jobs=n, n_warm=plan.n_warm, n_batches=plan.n_batches,
                               level=plan.level)
