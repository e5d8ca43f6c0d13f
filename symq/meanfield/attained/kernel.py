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

__all__: list[str] = []  # private to symq.meanfield.attained.simulation

# kernel status codes
_OK = 0
_POOL_FULL = 1

# indices into the integer state vector
_I_NDEP = 0  # departures so far
_I_NBUSY = 1  # busy servers = heap size
_I_TOTAL = 2  # jobs in the system
_I_NFREE = 3  # free pool slots
_I_PEAK = 4  # largest number of jobs in the system seen
_I_NARR = 5  # arrivals so far
_I_NSIZE = 6  # sizes taken from the drawn stream (general laws)
_I_SIZE = 7

# indices into the float state vector
_F_T = 0  # current time
_F_TARR = 1  # time of the next arrival
_F_ELAPSED = 2  # simulated time in all
_F_SIZE = 3


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _sample_size(alpha_cum, rates, jump_cum):
    """One phase-type job size by walking the chain (holding times + embedded jumps)."""
    m = alpha_cum.shape[0]
    v = np.random.random()
    ph = 0
    while ph < m - 1 and v >= alpha_cum[ph]:
        ph += 1
    x = 0.0
    while True:
        x += -math.log(1.0 - np.random.random()) / rates[ph]
        if jump_cum[ph, m - 1] <= 0.0:  # absorption is certain from this phase
            return x
        v = np.random.random()
        nxt = 0
        while nxt < m and v >= jump_cum[ph, nxt]:
            nxt += 1
        if nxt >= m:
            return x
        ph = nxt


@numba.njit(cache=True)
def _next_size(sizes, n_size, alpha_cum, rates, jump_cum):
    """The next job size and the new stream position: from ``sizes`` (drawn beforehand from a
    general law) when it is not empty, else by walking the phase-type chain."""
    if sizes.shape[0] > 0:
        return sizes[n_size], n_size + 1
    return _sample_size(alpha_cum, rates, jump_cum), n_size


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
def _attained_kernel(
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
        fst[_F_TARR] = -math.log(1.0 - np.random.random()) / (lam * N)
    n_rows = scores.shape[0]
    n_cols = scores.shape[1]
    n_slices = slice_time.shape[0]
    lam_n = lam * N
    t = fst[_F_T]
    t_arr = fst[_F_TARR]
    n_dep = ist[_I_NDEP]
    n_b = ist[_I_NBUSY]
    total = ist[_I_TOTAL]
    n_free = ist[_I_NFREE]
    peak = ist[_I_PEAK]
    n_arr = ist[_I_NARR]
    n_size = ist[_I_NSIZE]
    status = _OK
    while n_dep < target:
        is_arrival = n_b == 0 or t_arr <= depart[heap[0]]
        if is_arrival:
            if n_free == 0:
                status = _POOL_FULL
                break
            t_new = t_arr
        else:
            t_new = depart[heap[0]]
        dt = t_new - t
        fst[_F_ELAPSED] += dt
        s_idx = n_dep // per_slice
        if s_idx >= n_slices:
            s_idx = n_slices - 1
        slice_time[s_idx] += dt
        slice_area[s_idx] += total * dt
        slice_busy[s_idx] += n_b * dt
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
                if replace:
                    s = np.random.randint(0, N)
                else:
                    kk = j + np.random.randint(0, N - j)
                    s = perm[kk]
                    perm[kk] = perm[j]
                    perm[j] = s
                ql = qlen[s]
                if ql == 0:
                    sc = -np.inf
                else:
                    x = (t - start[s]) / delta
                    if x > n_rows - 1:
                        k = n_rows - 1
                    else:
                        k = int(math.ceil(x)) - 1  # noqa: RUF046 - an int under numba
                        k = max(k, 0)
                    col = ql - 1
                    if col >= n_cols:
                        col = n_cols - 1
                    sc = scores[k, col]
                if best < 0 or sc < best_score:
                    best = s
                    best_score = sc
                    ties = 1
                elif sc == best_score:
                    ties += 1
                    if np.random.random() * ties < 1.0:
                        best = s
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
                x, n_size = _next_size(sizes, n_size, alpha_cum, rates, jump_cum)
                depart[s] = t + x
                heap[n_b] = s
                hpos[s] = n_b
                n_b += 1
                _sift_up(heap, hpos, depart, n_b - 1)
            t_arr = t - math.log(1.0 - np.random.random()) / lam_n
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
                x, n_size = _next_size(sizes, n_size, alpha_cum, rates, jump_cum)
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
    fst[_F_T] = t
    fst[_F_TARR] = t_arr
    ist[_I_NDEP] = n_dep
    ist[_I_NBUSY] = n_b
    ist[_I_TOTAL] = total
    ist[_I_NFREE] = n_free
    ist[_I_PEAK] = peak
    ist[_I_NARR] = n_arr
    ist[_I_NSIZE] = n_size
    return status
