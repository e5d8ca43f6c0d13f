"""The numba event kernel of the attained-service load-balancing simulator.

One event loop over arrivals and departures of ``N`` FCFS servers, the dispatcher probing
``d`` of them and ranking them by a score table of (attained-service layer, queue length)
(Hellemans & Van Houdt, ToN 2021, Section III); busy servers sit in a binary heap keyed by
their next departure.  :func:`symq.meanfield.attained.simulation.simulate_attained` drives it
and turns its counters into batch-means estimates.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from symq.laws.kernels import exponential, ph_absorption_time

from ..simulation_core import keep_smallest, probe, record_slice

__all__ = [
    "F_ELAPSED",
    "F_SIZE",
    "F_T",
    "F_TARR",
    "I_NARR",
    "I_NBUSY",
    "I_NDEP",
    "I_NFREE",
    "I_NSIZE",
    "I_PEAK",
    "I_SIZE",
    "I_TOTAL",
    "OK",
    "POOL_FULL",
    "attained_kernel",
    "next_size",
]

#: Kernel status: ``target`` departures reached.
OK = 0
#: Kernel status: an arrival found the pool of job slots full (grow it and call again).
POOL_FULL = 1

# indices into the integer state vector ``ist`` (the driver reads and sets them)
I_NDEP = 0  # departures so far
I_NBUSY = 1  # busy servers = heap size
I_TOTAL = 2  # jobs in the system
I_NFREE = 3  # free pool slots
I_PEAK = 4  # largest number of jobs in the system seen
I_NARR = 5  # arrivals so far
I_NSIZE = 6  # sizes taken from the drawn stream (general laws)
I_SIZE = 7

# indices into the float state vector ``fst``
F_T = 0  # current time
F_TARR = 1  # time of the next arrival
F_ELAPSED = 2  # simulated time in all
F_SIZE = 3


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def next_size(sizes, n_size, alpha_cum, rates, jump_cum):  # type: ignore[no-untyped-def]
    """The next job size and the new stream position: from ``sizes`` (drawn beforehand from a
    general law) when it is not empty, else by walking the phase-type chain
    (:func:`symq.laws.kernels.ph_absorption_time`)."""
    if sizes.shape[0] > 0:
        return sizes[n_size], n_size + 1
    return ph_absorption_time(alpha_cum, rates, jump_cum), n_size


@numba.njit(cache=True)
def _sift_up(heap, hpos, key, p):
    s = heap[p]
    ks = key[s]
    while p > 0:
        parent = (p - 1) >> 1
        o = heap[parent]
        if key[o] <= ks:
            break
        heap[p] = o
        hpos[o] = p
        p = parent
    heap[p] = s
    hpos[s] = p


@numba.njit(cache=True)
def _sift_down(heap, hpos, key, p, n):
    s = heap[p]
    ks = key[s]
    while True:
        c = 2 * p + 1
        if c >= n:
            break
        o = heap[c]
        ko = key[o]
        if c + 1 < n:
            o2 = heap[c + 1]
            if key[o2] < ko:
                c += 1
                o = o2
                ko = key[o2]
        if ko >= ks:
            break
        heap[p] = o
        hpos[o] = p
        p = c
    heap[p] = s
    hpos[s] = p


@numba.njit(cache=True)
def attained_kernel(
    N, d, lam, replace, scores, delta, alpha_cum, rates, jump_cum,
    target, per_slice,
    qlen, qhead, qtail, start, depart, heap, hpos, pool_arr, pool_next, free, perm,
    response, wait, slice_time, slice_area, slice_busy,
    ist, fst, first, sizes,
):
    """Advance the simulation until ``target`` departures (or until the job pool is full).

    All state lives in the arrays passed in (modified in place), so that the run can be cut
    into several calls (progress bar, pool growth) with the same random stream; numba's stream
    is seeded once per run by :func:`symq.core.simrun.seed_numba` (``first`` draws the first
    arrival epoch).

    ``sizes`` is the stream of job sizes drawn beforehand from a general law (one per service
    start, in order); when it is empty, sizes are drawn by walking the phase-type chain.

    The time slices ``slice_time``, ``slice_area`` (jobs present x time) and ``slice_busy``
    (busy servers x time) are recorded over the whole run from its start, slice
    ``min(n_dep // per_slice, n_slices - 1)`` while ``n_dep`` departures are done, so that
    :func:`symq.core.simoutput.analyse_ratio` chooses the warm-up from the data.

    Returns the status: 0 when ``target`` departures are reached, 1 when an arrival finds the
    pool of job slots full (nothing of that arrival has been drawn yet; grow the pool and call
    again).
    """
    if first:
        fst[F_TARR] = exponential(lam * N)
    n_rows = scores.shape[0]
    n_cols = scores.shape[1]
    lam_n = lam * N
    t = fst[F_T]
    t_arr = fst[F_TARR]
    n_dep = ist[I_NDEP]
    n_b = ist[I_NBUSY]
    total = ist[I_TOTAL]
    n_free = ist[I_NFREE]
    peak = ist[I_PEAK]
    n_arr = ist[I_NARR]
    n_size = ist[I_NSIZE]
    status = OK
    while n_dep < target:
        is_arrival = n_b == 0 or t_arr <= depart[heap[0]]
        if is_arrival:
            if n_free == 0:
                status = POOL_FULL
                break
            t_new = t_arr
        else:
            t_new = depart[heap[0]]
        dt = t_new - t
        fst[F_ELAPSED] += dt
        record_slice(slice_time, slice_area, slice_busy, n_dep, per_slice, dt, total, n_b)
        t = t_new
        if is_arrival and total == 0:
            # restart the clock at 0 when a job arrives to an empty system (nothing refers to
            # the old origin): response times stay exact whatever the idle time before
            t = 0.0
        if is_arrival:
            # ---- probe d servers, join the smallest score (idle wins, uniform tie-break)
            best = -1
            best_score = 0.0
            ties = 0
            for j in range(d):
                s = probe(N, j, replace, perm)
                ql = qlen[s]
                if ql == 0:
                    sc = -np.inf
                else:
                    x = (t - start[s]) / delta
                    if x > n_rows - 1:
                        k = n_rows - 1
                    else:
                        k = int(math.ceil(x)) - 1
                        k = max(k, 0)
                    col = ql - 1
                    if col >= n_cols:
                        col = n_cols - 1
                    sc = scores[k, col]
                best, best_score, ties = keep_smallest(best, best_score, ties, s, sc)
            s = best
            # ---- enqueue the arrival epoch in the FCFS list of server s
            n_free -= 1
            f = free[n_free]
            pool_arr[f] = t
            pool_next[f] = -1
            if qtail[s] >= 0:
                pool_next[qtail[s]] = f
            else:
                qhead[s] = f
            qtail[s] = f
            ql = qlen[s]
            qlen[s] = ql + 1
            total += 1
            n_arr += 1
            peak = max(peak, total)
            if ql == 0:
                start[s] = t
                x, n_size = next_size(sizes, n_size, alpha_cum, rates, jump_cum)
                depart[s] = t + x
                heap[n_b] = s
                hpos[s] = n_b
                n_b += 1
                _sift_up(heap, hpos, depart, n_b - 1)
            t_arr = t + exponential(lam_n)
        else:
            # ---- departure from the server at the top of the heap
            s = heap[0]
            f = qhead[s]
            a = pool_arr[f]
            response[n_dep] = t - a
            wait[n_dep] = start[s] - a
            qhead[s] = pool_next[f]
            if qhead[s] < 0:
                qtail[s] = -1
            free[n_free] = f
            n_free += 1
            qlen[s] -= 1
            total -= 1
            if qlen[s] > 0:
                start[s] = t
                x, n_size = next_size(sizes, n_size, alpha_cum, rates, jump_cum)
                depart[s] = t + x
                _sift_down(heap, hpos, depart, 0, n_b)
            else:
                hpos[s] = -1
                n_b -= 1
                if n_b > 0:
                    last = heap[n_b]
                    heap[0] = last
                    hpos[last] = 0
                    _sift_down(heap, hpos, depart, 0, n_b)
            n_dep += 1
    fst[F_T] = t
    fst[F_TARR] = t_arr
    ist[I_NDEP] = n_dep
    ist[I_NBUSY] = n_b
    ist[I_TOTAL] = total
    ist[I_NFREE] = n_free
    ist[I_PEAK] = peak
    ist[I_NARR] = n_arr
    ist[I_NSIZE] = n_size
    return status
