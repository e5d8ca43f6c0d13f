r"""The numba kernel of the M/G/1 processor-sharing simulator (virtual-time algorithm).

With :math:`n` jobs present each receives service at rate :math:`C/n`.  A *virtual clock*
:math:`V` that advances at rate :math:`C/n` per unit of real time measures the service any
job present has received since its arrival: a job that arrives at virtual time :math:`V_0`
with size :math:`s` leaves when the virtual clock reaches :math:`V_0 + s`.  The pending
virtual finish times never change once a job has arrived, so they are kept in an array-based
binary min-heap; each job costs one push and one pop, :math:`O(\log n)`.  When the system
empties, the virtual clock is reset to 0 (no pending finish time refers to it), which keeps
the floating-point magnitudes of :math:`V` bounded.

:func:`ps_advance` is resumable: it runs the queue until a given number of arrivals and keeps
its state (clock, heap, counters) in arrays, so that :func:`symq.core.simrun.run_chunked` can
show progress between calls; the events, and so the results, are the same as in one call.
:func:`ps_kernel` runs a whole queue in one call.

References
----------
L. Kleinrock, *Queueing Systems, Vol. II: Computer Applications*, Wiley, 1976, Chapter 4
(processor sharing).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["PSState", "ps_advance", "ps_kernel"]


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
def ps_advance(
    arrivals: np.ndarray,
    sizes: np.ndarray,
    capacity: float,
    t_start: float,
    t_stop: float,
    width: float,
    stop: int,
    clock: np.ndarray,
    counters: np.ndarray,
    keys: np.ndarray,
    ids: np.ndarray,
    sojourn: np.ndarray,
    departures: np.ndarray,
    area: np.ndarray,
) -> int:
    """Advance the queue until ``stop`` jobs have arrived (and, at ``stop = n_jobs``, drained).

    Parameters
    ----------
    arrivals, sizes : float64 arrays
        Arrival epochs (nondecreasing) and sizes of the jobs, in arrival order.
    capacity : float
        Service capacity C, shared equally by the jobs present.
    t_start, t_stop, width : float
        The number in system is integrated over the window ``[t_start, t_stop]``, cut into
        ``area.shape[0]`` equal slices of length ``width``.
    stop : int
        Arrivals to process; with ``stop == n_jobs`` the queue then drains with no further
        arrivals.
    clock : float64 array (2,)
        State: real time ``t`` and virtual time ``v``.
    counters : int64 array (2,)
        State: next arrival ``i`` and number of jobs present (heap size).
    keys, ids : arrays (n_jobs,)
        State: the heap of virtual finish times and job indices.
    sojourn, departures, area : float64 arrays
        Outputs, filled as jobs leave (sojourn and departure epoch in arrival order) and as time
        passes (``area[k]``: integral of the number in system over slice ``k``).

    Returns
    -------
    int
        Arrivals processed so far.
    """
    n_jobs = arrivals.shape[0]
    n_slices = area.shape[0]
    t = clock[0]  # real time
    v = clock[1]  # virtual time: service received by any job present since the last reset
    i = counters[0]  # next arrival
    size = counters[1]  # number of jobs present = heap size
    while i < stop or (stop == n_jobs and size > 0):
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
    clock[0] = t
    clock[1] = v
    counters[0] = i
    counters[1] = size
    return i


class PSState:
    """The arrays of one resumable run of :func:`ps_advance` (inputs, state and outputs).

    Parameters
    ----------
    arrivals, sizes : float64 arrays
        The jobs, in arrival order.
    capacity : float
        Service capacity.
    t_start, t_stop : float
        Window over which the number in system is integrated.
    n_slices : int
        Equal slices of the window (0: no integration).
    """

    def __init__(self, arrivals: np.ndarray, sizes: np.ndarray, capacity: float,
                 t_start: float, t_stop: float, n_slices: int) -> None:
        n_jobs = arrivals.shape[0]
        self.arrivals, self.sizes, self.capacity = arrivals, sizes, float(capacity)
        self.t_start, self.t_stop = float(t_start), float(t_stop)
        self.width = (t_stop - t_start) / n_slices if n_slices > 0 else 1.0
        self.clock = np.zeros(2)
        self.counters = np.zeros(2, dtype=np.int64)
        self.keys = np.empty(n_jobs)
        self.ids = np.empty(n_jobs, dtype=np.int64)
        self.sojourn = np.empty(n_jobs)
        self.departures = np.empty(n_jobs)
        self.area = np.zeros(n_slices)

    def advance(self, stop: int) -> tuple[int, bool]:
        """Run to ``stop`` arrivals (the ``step`` of :func:`symq.core.simrun.run_chunked`)."""
        done = ps_advance(self.arrivals, self.sizes, self.capacity, self.t_start, self.t_stop,
                          self.width, stop,
                          self.clock, self.counters, self.keys, self.ids, self.sojourn,
                          self.departures, self.area)
        return int(done), False


@numba.njit(cache=True)
def ps_kernel(
    arrivals: np.ndarray,
    sizes: np.ndarray,
    capacity: float,
    t_start: float,
    t_stop: float,
    n_slices: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate one PS queue exactly, event by event, in one call.

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
    width = (t_stop - t_start) / n_slices if n_slices > 0 else 1.0
    sojourn = np.empty(n_jobs)
    departures = np.empty(n_jobs)
    area = np.zeros(n_slices)
    keys = np.empty(n_jobs)
    ids = np.empty(n_jobs, dtype=np.int64)
    clock = np.zeros(2)
    counters = np.zeros(2, dtype=np.int64)
    ps_advance(arrivals, sizes, capacity, t_start, t_stop, width, n_jobs, clock, counters, keys,
               ids, sojourn, departures, area)
    return sojourn, departures, area
