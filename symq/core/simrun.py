"""The simulation-run core shared by every symq simulator.

Every finite-N simulator (JSQ(d), attained service, dispatching, processor-sharing farms, window
protocols, the M/ME/1 Lindley recursion) runs the same way:

1. a :class:`RunPlan` checks the run length against the batch-means rule (one rule for all: at
   least :data:`MIN_JOBS_PER_BATCH` post-warm-up jobs per batch), and
   :func:`symq.core.simoutput.require_run_length` refuses, before the run, one too short for
   its load (:class:`~symq.core.errors.RunTooShort`, naming the run length needed);
2. :func:`kernel_seed` draws the seed of the numba kernel from the caller's ``rng`` and
   :func:`seed_numba` seeds numba's own random stream with it (numba's stream is separate from
   numpy's), so the same ``rng`` gives the same run;
3. :func:`run_chunked` calls the kernel once, or in chunks with a tqdm bar when ``progress`` is
   asked for; the kernel keeps its state between chunks, so the result is the same either way;
4. the estimates come from :mod:`symq.core.simoutput`: the warm-up (MSER-5) and the batch
   length (lag-1 test) are chosen from the run's own output, per job or over
   :data:`RUN_SLICES` time slices of the whole run, and each interval carries its run length
   and, when its diagnostics fail, a ``doubt``; :func:`run_sequential` sizes a run for a
   requested half-width.

Before allocating or running, each simulator estimates its work in kernel steps (a probe, an
event, a draw) and calls :func:`require_work`: a run over :data:`SIM_WORK_LIMIT` steps (about
a minute at the kernels' tens of millions of steps a second) is refused as bad input, naming
the parameter that drives the work (``d``, ``N``, ``m``, ``n_jobs``) and the largest value that
fits; memory is guarded the same way by :func:`symq.core.resources.require_memory`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from .errors import InvalidParameter
from .parameters import IntegerAtLeast, Interval, Parameter
from .randomness import RngLike, as_generator
from .simstats import ConfidenceInterval

__all__ = [
    "MIN_JOBS_PER_BATCH",
    "RUN_SLICES",
    "SIM_WORK_LIMIT",
    "SLICES_PER_BATCH",
    "RunPlan",
    "kernel_seed",
    "require_work",
    "run_chunked",
    "run_parameters",
    "run_sequential",
    "seed_numba",
]

#: Post-warm-up jobs (or events) per batch that a batch-means interval needs.
MIN_JOBS_PER_BATCH = 100
#: Time slices per batch of a plan (:attr:`RunPlan.n_slices`; the simulators now slice the whole
#: run into :data:`RUN_SLICES` instead).
SLICES_PER_BATCH = 20
#: Time slices over the whole run (warm-up included) of the time-average statistics analysed by
#: :func:`symq.core.simoutput.analyse_ratio` (which picks the warm-up and batches from them).
RUN_SLICES = 7680
#: Chunks of a run with a progress bar.
PROGRESS_CHUNKS = 100
#: Kernel steps (probes, events, draws) one simulation run may take: about a minute.
SIM_WORK_LIMIT = 4e9


def require_time_range(name: str, value: float, rate: float, n_jobs: int, *, answer: str,
                       unit: str = "time units") -> None:
    """Refuse an arrival rate so small that the run's idle time leaves the floating-point range.

    ``n_jobs`` arrivals at total rate ``rate`` take about ``n_jobs / rate`` time units, which
    the run's time averages sum: ``rate`` must be at least ``n_jobs * 1e-300`` (eight orders of
    magnitude below overflow, whatever the random idle periods).

    Parameters
    ----------
    name, value : str, float
        The parameter as the user typed it (the arrival rate, or what sets it).
    rate : float
        Total arrival rate in the run's time unit, proportional to ``value``.
    n_jobs : int
        Jobs of the run.
    answer : str
        The answer at that load, e.g. ``"ET = E[S] = 1 and EW = 0, up to terms of order lam"``.
    unit : str
        The run's time unit, for the message.

    Raises
    ------
    InvalidParameter
        ``parameter lam=1e-320 must be >= 1e-294 ... (too small to simulate: ...; at this load
        ET = ...)``.
    """
    smallest_rate = n_jobs * 1e-300
    if rate >= smallest_rate:
        return
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        span = n_jobs / rate if rate > 0 else math.inf
        smallest = smallest_rate * (value / rate) if rate > 0 else math.nan
    span_text = f"about {span:.3g}" if math.isfinite(span) else "more than 1e308"
    domain = (f">= {smallest:.3g} to simulate {n_jobs} jobs" if math.isfinite(smallest)
              else f"larger, to simulate {n_jobs} jobs")
    raise InvalidParameter(
        name, value, domain,
        f"too small to simulate: the run would last {span_text} {unit}, beyond the 1e300 its "
        f"time sums can hold; at this load {answer}")


def require_work(steps: float, blame: list[tuple[str, object, float]], *, what: str) -> None:
    """Refuse a run of more than :data:`SIM_WORK_LIMIT` kernel steps, before it starts.

    Parameters
    ----------
    steps : float
        Estimated kernel steps of the run.
    blame : list of (name, value, largest)
        Parameters that drive the work, as the user typed them, with the largest value that
        keeps the run within the limit (the others unchanged); the first whose largest value
        is at least 1 is named (the last one otherwise).
    what : str
        What the steps are, e.g. ``"1000000 departures x (d probes + 3 events)"``.

    Raises
    ------
    InvalidParameter
        ``parameter d=100000 must be <= 3997 for a run within the work limit (...)``.

    Examples
    --------
    >>> require_work(1e6, [("n_jobs", 10**6, 4e9)], what="1 step a job")
    """
    if math.isfinite(steps) and steps <= SIM_WORK_LIMIT:
        return
    name, value, largest = next((b for b in blame if b[2] >= 1), blame[-1])
    largest = max(int(largest), 1)
    raise InvalidParameter(name, value, f"<= {largest} for a run within the work limit",
                           f"the run would take about {steps:.3g} steps ({what}), over the "
                           f"limit of {SIM_WORK_LIMIT:.0e} steps of one simulation (about a "
                           f"minute)")


@dataclass(frozen=True)
class RunPlan:
    """A validated run length: jobs, warm-up, batches and confidence level.

    Attributes
    ----------
    n_jobs : int
        Jobs (departures, or the simulator's events) to simulate in all.
    n_batches : int
        Batches of the batch-means intervals.
    warmup : float
        Fraction of ``n_jobs`` discarded before estimating.
    level : float
        Confidence level of the intervals.
    n_warm : int
        Jobs discarded: ``floor(warmup * n_jobs)``.
    n_slices : int
        Time slices of the time averages: ``SLICES_PER_BATCH * n_batches``.
    """

    n_jobs: int
    n_batches: int
    warmup: float
    level: float
    n_warm: int
    n_slices: int

    @classmethod
    def make(cls, n_jobs: Any, n_batches: Any = 30, warmup: Any = 0.1, level: Any = 0.95, *,
             min_per_batch: int = MIN_JOBS_PER_BATCH, jobs_name: str = "n_jobs",
             unit: str = "jobs") -> RunPlan:
        """Check a run length and plan its warm-up and batches.

        Parameters
        ----------
        n_jobs : int
            Number of jobs to simulate; at least ``min_per_batch * n_batches`` of them must come
            after the warm-up.
        n_batches : int, default 30
            Batches, ``>= 2``.
        warmup : float, default 0.1
            Fraction discarded, in ``[0, 1)``.
        level : float, default 0.95
            Confidence level, in ``(0, 1)``.
        min_per_batch : int
            The batch-means rule (post-warm-up jobs per batch).
        jobs_name : str
            The caller's name of ``n_jobs`` (for messages): ``"n_jobs"``, ``"n_losses"``, ...
        unit : str
            What is counted, for messages ("jobs", "losses", ...).

        Raises
        ------
        InvalidParameter
            Naming the argument and the smallest run that satisfies the rule.

        Examples
        --------
        >>> RunPlan.make(n_jobs=10_000, n_batches=20).n_warm
        1000
        """
        n_batches = int(IntegerAtLeast(2).coerce("n_batches", n_batches))
        warmup = float(Interval(0.0, 1.0, right_open=True).coerce("warmup", warmup))
        level = float(Interval(0.0, 1.0, left_open=True, right_open=True).coerce("level", level))
        needed = min_per_batch * n_batches
        smallest = math.ceil(needed / (1.0 - warmup))  # n - floor(w n) >= needed from here
        while smallest > needed and (smallest - 1) - math.floor(warmup * (smallest - 1)) >= needed:
            smallest -= 1
        while smallest - math.floor(warmup * smallest) < needed:
            smallest += 1
        domain = f"an integer >= {smallest}"
        why = (f"{min_per_batch} post-warm-up {unit} per batch for n_batches={n_batches} and "
               f"warmup={warmup:g}")
        if (isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral)
                or n_jobs < 1):
            raise InvalidParameter(jobs_name, n_jobs, domain, why)
        n_jobs = int(n_jobs)
        n_warm = math.floor(warmup * n_jobs)
        if n_jobs - n_warm < needed:
            most = (n_jobs - n_warm) // min_per_batch
            if most >= 2 and smallest > SIM_WORK_LIMIT:
                # a run that long cannot be simulated: the batches are what to change
                raise InvalidParameter(
                    "n_batches", n_batches, f"an integer in [2, {most}] for {jobs_name}={n_jobs}",
                    f"{min_per_batch} post-warm-up {unit} per batch; {n_batches} batches would "
                    f"need {jobs_name} >= {smallest}")
            raise InvalidParameter(jobs_name, n_jobs, domain, why)
        return cls(n_jobs=n_jobs, n_batches=n_batches, warmup=warmup, level=level,
                   n_warm=n_warm, n_slices=SLICES_PER_BATCH * n_batches)


def kernel_seed(rng: RngLike) -> int:
    """The seed of a numba kernel, drawn from ``rng`` (the same ``rng`` gives the same seed).

    Examples
    --------
    >>> kernel_seed(1) == kernel_seed(1)
    True
    """
    return int(as_generator(rng).integers(0, 2**32 - 1))


@numba.njit(cache=True)
def seed_numba(seed: int) -> None:  # pragma: no cover - compiled
    """Seed numba's random stream (the one every njit kernel of this thread draws from)."""
    np.random.seed(seed)


def run_chunked(step: Callable[[int], tuple[int, bool]], total: int, *, progress: bool = False,
                desc: str = "", unit: str = "job", chunks: int = PROGRESS_CHUNKS) -> int:
    """Run a resumable kernel to ``total``, in one call or in chunks with a progress bar.

    Parameters
    ----------
    step : callable(stop) -> (done, finished)
        Advances the kernel until ``stop`` units are done (keeping its state between calls) and
        returns the units done so far and whether the run must end now (an overflow, an early
        stop).
    total : int
        Units of the whole run.
    progress : bool
        Show a tqdm bar and split the run into ``chunks`` calls (same result as one call).
    desc, unit : str
        The bar's label and unit.

    Returns
    -------
    int
        Units done.
    """
    stops = [total] if not progress else \
        [int(s) for s in np.unique(np.linspace(0, total, chunks + 1).astype(np.int64))[1:]]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit=unit, desc=desc)
    done = 0
    try:
        for stop in stops:
            before = done
            done, finished = step(stop)
            if bar is not None:
                bar.update(done - before)
            if finished:
                break
    finally:
        if bar is not None:
            bar.close()
    return done


def run_parameters(n_jobs: int, *, n_batches: int = 30, level: float = 0.95,
                   minimum_jobs: int = 1, jobs: str = "jobs simulated (warm-up included)"
                   ) -> tuple[Parameter, Parameter, Parameter]:
    """The run-length parameters every registered simulation model declares: ``n_jobs``,
    ``n_batches`` and ``level`` (the confidence level of its intervals), with their defaults.

    Parameters
    ----------
    n_jobs : int
        Default run length.
    n_batches : int
        Default number of batches of the batch-means intervals.
    level : float
        Default confidence level.
    minimum_jobs : int
        Smallest run length accepted.
    jobs : str
        What ``n_jobs`` counts (the description shown by ``symq list``).
    """
    return (
        Parameter("n_jobs", IntegerAtLeast(minimum_jobs), typical=n_jobs, required=False,
                  default=n_jobs, description=jobs),
        Parameter("n_batches", IntegerAtLeast(2), typical=n_batches, required=False,
                  default=n_batches, description="batches of the batch-means intervals"),
        Parameter("level", Interval(0.0, 1.0, left_open=True, right_open=True), typical=level,
                  required=False, default=level, description="confidence level of the intervals"),
    )


def run_sequential(simulate: Callable[[int, np.random.Generator], ConfidenceInterval], *,
                   half_width: float, relative: bool = True, pilot: int, budget: int,
                   rng: RngLike = None, max_rounds: int = 2, jobs_name: str = "n_jobs",
                   safety: float = 1.2) -> ConfidenceInterval:
    r"""Run a simulation sized to reach a requested half-width: Stein's two-stage procedure.

    A pilot run of ``pilot`` jobs estimates the half-width; since it shrinks as
    :math:`1/\sqrt{n}`, the final run is sized ``n = safety * pilot * (h_pilot / h)^2`` (at
    least ``pilot``, at most what is left of the budget) and run **independently** (a fresh
    stream of ``rng``).  The answer is the final run's interval, returned whatever its own
    half-width: its length was fixed by the pilot alone, so it covers at its nominal level
    (Stein, *Ann. Math. Statist.* 16, 1945; Law 2015, Section 9.5.2).  Stopping at a run
    *because* its own interval came out narrow would select runs whose variance was
    underestimated and under-cover; this procedure never does.  The final run usually reaches
    the target (``safety`` absorbs the pilot's error); when it does not, or the budget could
    not pay for it, the interval is valid but wider than asked: compare its half-width.

    Parameters
    ----------
    simulate : callable(n_jobs, rng) -> ConfidenceInterval
        One run of ``n_jobs`` jobs with its own generator, e.g.
        ``lambda n, g: simulate_jsq(10, 2, 0.8, n_jobs=n, rng=g).ET``.  It may refuse a run too
        short for its load (:class:`~symq.core.errors.InvalidParameter`): the pilot must be
        long enough.
    half_width : float
        The target: relative (``half_width / |mean|``) if ``relative``, else absolute; ``> 0``.
    relative : bool, default True
    pilot : int
        Jobs of the pilot run.
    budget : int
        Jobs of both runs together (pilot included), ``>= pilot``.
    rng : seed or Generator
        Randomness; each run gets an independent child stream.
    max_rounds : int, default 2
        ``1``: the pilot alone is returned (no second run); ``>= 2``: pilot and final run.
    jobs_name : str
        The name of the run-length parameter in messages.
    safety : float, default 1.2
        Factor on the size estimated from the pilot.

    Returns
    -------
    ConfidenceInterval
        The final run's interval; its ``run_length`` is that run's length (the pilot is not
        part of it).  When the budget cannot pay for a final run at least as long as the
        pilot, the pilot's interval (the decision did not look at its width).

    Raises
    ------
    InvalidParameter
        A non-positive target, a pilot over the budget, or ``max_rounds < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from symq.core.simstats import replication_ci
    >>> sim = lambda n, g: replication_ci(g.normal(1.0, 1.0, size=n))
    >>> ci = run_sequential(sim, half_width=0.01, pilot=1000, budget=10**6, rng=1)
    >>> ci.relative_half_width <= 0.011 and ci.contains(1.0)
    True
    """
    try:
        target = float(half_width)
    except (TypeError, ValueError):
        raise InvalidParameter("half_width", half_width, "a real number > 0") from None
    if not (target > 0 and math.isfinite(target)):
        raise InvalidParameter("half_width", half_width, "a real number > 0")
    pilot = int(IntegerAtLeast(1).coerce(jobs_name, pilot))
    budget = int(IntegerAtLeast(1).coerce("budget", budget))
    max_rounds = int(IntegerAtLeast(1).coerce("max_rounds", max_rounds))
    if pilot > budget:
        raise InvalidParameter(jobs_name, pilot, f"<= budget={budget}",
                               "the pilot run is part of the budget")
    streams = np.random.SeedSequence(int(as_generator(rng).integers(0, 2**63 - 1)))
    first, second = streams.spawn(2)
    ci = simulate(pilot, np.random.default_rng(first))
    if max_rounds < 2:
        return ci
    width = ci.relative_half_width if relative else ci.half_width
    wanted = 4 * pilot if not math.isfinite(width) else \
        math.ceil(safety * pilot * (width / target) ** 2)
    final = min(max(wanted, pilot), budget - pilot)
    if final < pilot:  # the budget cannot pay for a second run as long as the pilot
        return ci
    return simulate(final, np.random.default_rng(second))
