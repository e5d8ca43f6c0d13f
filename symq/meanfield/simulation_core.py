r"""The core the JSQ-family simulators share: probing, time slices, argument checks, estimates.

Two simulators of :math:`N` FCFS servers with Poisson arrivals of total rate :math:`\lambda N`,
each arrival probing :math:`d` servers uniformly at random, are built on this module:
:func:`symq.meanfield.simulation.simulate_jsq` (JSQ(d), the supermarket model of Vvedenskaya,
Dobrushin and Karpelevich 1996 and Mitzenmacher 2001: a Gillespie kernel of queue lengths and
phases) and :func:`symq.meanfield.attained.simulation.simulate_attained` (the attained-service
policies of Hellemans and Van Houdt, ToN 2021: an exact event kernel with a heap of
departures).  What they share lives here, once:

* in their numba kernels, :func:`probe` (one probed server, with or without replacement),
  :func:`keep_smallest` (the running minimum over the probes with a uniform tie-break) and
  :func:`record_slice` (the time-slice integrals of the output analysis); the phase-type draws
  are :mod:`symq.laws.kernels`;
* before the run, :func:`probing_arguments`, :func:`require_stable`,
  :func:`require_buffers` (memory) and :func:`require_idle_time` (floating point of the clock);
* the run itself, :func:`run_seeded` (seed numba's stream once, run in chunks);
* after the run, :func:`departure_interval` and :func:`slice_intervals`
  (:mod:`symq.core.simoutput`).

The kernel helpers draw the same uniforms in the same order as the loops they replaced, so the
random streams, and every simulated value, are unchanged; numba inlines them into the kernels
(``inline="always"``), which run as fast as with the loops written in place.

Examples
--------
>>> probing_arguments(10, 2, True)
(10, 2, True)
>>> probing_arguments(3, 4, False)
Traceback (most recent call last):
...
symq.core.errors.InvalidParameter: parameter d=4 must be <= N=3 when probing without
replacement (replace=False)
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numba
import numpy as np

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import IntegerAtLeast
from symq.core.resources import require_memory
from symq.core.simoutput import analyse_ratio, analyse_series
from symq.core.simrun import RunPlan, require_time_range, run_chunked, seed_numba
from symq.core.simstats import ConfidenceInterval

__all__ = [
    "departure_interval",
    "keep_smallest",
    "probe",
    "probing_arguments",
    "record_slice",
    "require_buffers",
    "require_idle_time",
    "require_stable",
    "run_seeded",
    "slice_intervals",
]


# --------------------------------------------------------------------------------------------
# numba helpers of the kernels
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def probe(N: int, j: int, replace: bool, perm: np.ndarray) -> int:
    """The ``j``-th probed server (``j = 0..d-1``) of one arrival.

    With replacement a uniform server of ``0..N-1``; without, a partial Fisher-Yates shuffle
    of ``perm`` (a permutation of the servers, kept between arrivals): position ``j`` swaps
    with a uniform position of ``j..N-1``, so that the ``d`` probes are distinct.  One
    ``randint`` either way.
    """
    if replace:
        return np.random.randint(0, N)
    k = j + np.random.randint(0, N - j)
    s = perm[k]
    perm[k] = perm[j]
    perm[j] = s
    return s


@numba.njit(cache=True, inline="always")
def keep_smallest(best, best_value, ties, s, value):  # type: ignore[no-untyped-def]
    """One step of the running minimum over the probes, ties broken uniformly at random.

    ``best < 0`` means no probe yet.  A smaller ``value`` makes ``s`` the best with one tie; an
    equal one counts one more tie and takes ``s`` with probability ``1 / ties`` (one uniform),
    so that each probe slot of the minimum wins with equal probability (reservoir sampling).
    Returns the new ``(best, best_value, ties)``.
    """
    if best < 0 or value < best_value:
        return s, value, 1
    if value == best_value:
        ties += 1
        if np.random.random() * ties < 1.0:
            best = s
    return best, best_value, ties


@numba.njit(cache=True, inline="always")
def record_slice(slice_time: np.ndarray, slice_area: np.ndarray, slice_busy: np.ndarray,
                 n_dep: int, per_slice: int, dt: float, total: int, n_busy: int) -> None:
    """Add the interval ``dt`` to the time slice of the ``n_dep`` departures done so far.

    Slice ``min(n_dep // per_slice, n_slices - 1)`` receives its length, the integral of the
    jobs present (``total``) and of the busy servers (``n_busy``) over it; the slices, of equal
    numbers of departures from the start of the run, are what
    :func:`symq.core.simoutput.analyse_ratio` chooses the warm-up from.
    """
    n_slices = slice_time.shape[0]
    s_idx = n_dep // per_slice
    if s_idx >= n_slices:
        s_idx = n_slices - 1
    slice_time[s_idx] += dt
    slice_area[s_idx] += total * dt
    slice_busy[s_idx] += n_busy * dt


# --------------------------------------------------------------------------------------------
# before the run
# --------------------------------------------------------------------------------------------


def probing_arguments(N: object, d: object, replace: object
                      ) -> tuple[int, int, bool]:
    """Check the servers ``N >= 1``, the probes ``d >= 1`` and ``replace`` (a bool; ``d <= N``
    without replacement) and return them as ``(int, int, bool)``.

    Raises
    ------
    InvalidParameter
        Naming ``N``, ``d`` or ``replace``.
    """
    n = IntegerAtLeast(1).coerce("N", N)
    probes = IntegerAtLeast(1).coerce("d", d)
    if not isinstance(replace, (bool, np.bool_)):
        raise InvalidParameter("replace", replace, "True or False")
    if not replace and probes > n:
        raise InvalidParameter("d", probes, f"<= N={n} when probing without replacement "
                                            "(replace=False)")
    return n, probes, bool(replace)


def require_stable(lam: float, mean: float, symbol: str, system: str) -> float:
    """The per-server load ``lam * mean``; :class:`StabilityError` unless it is ``< 1``.

    ``symbol`` names the size in the message (``S`` or ``X``), ``system`` the system and why
    (``"for JSQ(d=2) with N=10 servers: ..."``).
    """
    load = lam * mean
    if load >= 1.0:
        raise StabilityError(
            f"load lam*E[{symbol}]={load:.6g} (lam={lam!r}, E[{symbol}]={mean:.6g}) must be < 1 "
            f"{system}")
    return load


def require_buffers(N: int, per_server: float, n_jobs: int, per_job: float,
                    what: str) -> None:
    """Refuse, before allocating, a run whose buffers do not fit the memory budget
    (:func:`symq.core.resources.require_memory`).

    ``per_server`` bytes for each of the ``N`` servers and ``per_job`` bytes for each of the
    ``n_jobs`` jobs; the message names ``N`` or ``n_jobs``, whichever needs more (``N`` on a
    tie), with the largest value that fits beside the other.
    """
    servers, jobs = per_server * N, per_job * n_jobs
    if servers >= jobs:
        require_memory("N", N, servers + jobs, what=what,
                       limit=lambda b: f"at most {max(int((b - jobs) // per_server), 0)}")
    else:
        require_memory("n_jobs", n_jobs, servers + jobs, what=what,
                       limit=lambda b: f"at most {max(int((b - servers) // per_job), 0)}")


def require_idle_time(lam: float, N: int, n_jobs: int, mean: float,
                      symbol: str) -> None:
    """Refuse a load whose idle time leaves floating point
    (:func:`symq.core.simrun.require_time_range`), giving the light-traffic answer instead:
    ``ET = E[symbol]`` and ``EW = 0`` up to terms of order ``lam * E[symbol]``."""
    require_time_range("lam", lam, lam * N, n_jobs, answer=(
        f"ET = E[{symbol}] = {mean:.6g} and EW = 0, up to terms of order lam*E[{symbol}] = "
        f"{lam * mean:.3g} relative to E[{symbol}]"))


# --------------------------------------------------------------------------------------------
# the run and its estimates
# --------------------------------------------------------------------------------------------


def run_seeded(step: Callable[[int], tuple[int, bool]], n_jobs: int, seed: int,
               progress: bool, desc: str) -> float:
    """Seed numba's stream with ``seed`` (:func:`symq.core.simrun.seed_numba`), run ``step``
    to ``n_jobs`` departures (:func:`symq.core.simrun.run_chunked`: chunks and a tqdm bar when
    ``progress``, the same result either way) and return the wall-clock seconds of the run."""
    seed_numba(seed)
    tic = time.perf_counter()
    run_chunked(step, n_jobs, progress=progress, desc=desc, unit="job")
    return time.perf_counter() - tic


def departure_interval(series: np.ndarray, plan: RunPlan) -> ConfidenceInterval:
    """The interval of the mean of a per-job series in departure order
    (:func:`symq.core.simoutput.analyse_series`, the batches and level of ``plan``)."""
    return analyse_series(series, plan.n_batches, plan.level, run_length=plan.n_jobs,
                          unit="departures")


def slice_intervals(N: int, plan: RunPlan, slice_time: np.ndarray, slice_area: np.ndarray,
                    slice_busy: np.ndarray) -> tuple[ConfidenceInterval, ConfidenceInterval]:
    """The intervals of the time-average jobs per server :math:`E[Q]` and busy fraction, from
    the time slices (:func:`record_slice`; :func:`symq.core.simoutput.analyse_ratio`).

    Slices past the last departure of a run shorter than the number of slices are empty and
    left out.
    """
    kept = slice_time > 0
    s_time = slice_time[kept]
    runs = {"run_length": plan.n_jobs, "unit": "departures"}
    eq = analyse_ratio(slice_area[kept] / N, s_time, plan.n_batches, plan.level, **runs)
    busy = analyse_ratio(slice_busy[kept] / N, s_time, plan.n_batches, plan.level, **runs)
    return eq, busy
