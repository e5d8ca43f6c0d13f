r"""The numba kernel of the Gillespie simulator of a CTMC given by its CSR generator.

The chain is the CSR structure ``(indptr, indices, rates)`` of its generator :math:`Q` with the
diagonal entries' rates set to 0 and ``exit[i]`` :math:`= q_i = \sum_{j \ne i} q_{ij}`.  From
state :math:`i` the kernel draws the holding time :math:`\mathrm{Exp}(q_i)` and, at the jump,
the next state :math:`j` with probability :math:`q_{ij}/q_i` by a cumulative search over the
row (Gillespie 1977, the direct method): two uniforms per event, no Python-level work.

It accumulates, per time slice of the run, the slice's length, the integral over it of each of
the ``K`` state rewards ``reward[i, k]`` and the sum of the ``M`` impulse weights
``weight[e, m]`` of the transitions (CSR entries ``e``) taken in it.  The slices cover the
whole run (warm-up included) and are cut either by time (equal lengths ``width``: a holding
interval that straddles a boundary is split between slices) or by events (``per_slice`` events
each); :func:`symq.core.simoutput.analyse_ratio` picks the warm-up and the batches from them.

The kernel is resumable: the current state, the events done, the clock and the time of the
pending jump live in the arrays passed in, so that a run split into chunks (a progress bar)
draws the same numbers as one call.

References
----------
D. T. Gillespie, Exact stochastic simulation of coupled chemical reactions, *J. Phys. Chem.*
81(25), 2340-2361, 1977.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["ABSORBED", "CAPPED", "OK", "ctmc_kernel"]

#: The run reached its stop (time or events).
OK = 0
#: The chain reached a state with no outgoing rate before the stop.
ABSORBED = 1
#: The run reached its cap on events (the work limit) before its time horizon.
CAPPED = 2


@numba.njit(cache=True)
def ctmc_kernel(indptr: np.ndarray, indices: np.ndarray, rates: np.ndarray, exit: np.ndarray,
                reward: np.ndarray, weight: np.ndarray, weighted: np.ndarray, by_time: bool,
                width: float, per_slice: int, t_stop: float, e_stop: int, e_cap: int,
                position: np.ndarray, clock: np.ndarray, slice_time: np.ndarray,
                slice_reward: np.ndarray, slice_impulse: np.ndarray
                ) -> int:  # pragma: no cover - compiled
    """Advance the chain until the clock reaches ``t_stop`` or ``e_stop`` events are done.

    Parameters
    ----------
    indptr, indices : int64 arrays
        The CSR structure of the generator.
    rates : float64 array (nnz,)
        Rate of each CSR entry, 0 on the diagonal.
    exit : float64 array (n,)
        Exit rate of each state (sum of its row of ``rates``).
    reward : float64 array (n, K)
        State rewards.
    weight : float64 array (nnz, M)
        Impulse weights of the transitions.
    weighted : bool array (nnz,)
        Whether an entry has a nonzero impulse weight.
    by_time : bool
        Slices of equal time ``width`` (else of ``per_slice`` events).
    t_stop, e_stop : float, int
        Where this call stops (``inf`` / a large count when unused).
    e_cap : int
        Events at which the run stops whatever its horizon (status :data:`CAPPED`).
    position : int64 array (2,)
        ``[state, events done]``, updated.
    clock : float64 array (2,)
        ``[t, time of the pending jump (-1 when none is drawn)]``, updated.
    slice_time, slice_reward, slice_impulse : float64 arrays (S,), (S, K), (S, M)
        The slices' lengths and sums, updated.

    Returns
    -------
    int
        :data:`OK`, :data:`ABSORBED` (``position[0]`` is the absorbing state) or
        :data:`CAPPED`.
    """
    n_slices = slice_time.shape[0]
    n_rewards = reward.shape[1]
    n_impulses = weight.shape[1]
    i = position[0]
    events = position[1]
    t = clock[0]
    t_next = clock[1]
    status = OK
    # the current slice and where it ends (by time or by events), tracked without a division
    # per event
    never = np.int64(2) ** 62
    boundary = math.inf
    next_slice_at = never
    if by_time:
        s = min(int(t / width), n_slices - 1)
        if s < n_slices - 1:
            boundary = (s + 1) * width
    else:
        s = min(events // per_slice, n_slices - 1)
        if s < n_slices - 1:
            next_slice_at = (s + 1) * per_slice
    limit = min(e_stop, e_cap)
    timed = False
    while events < limit:
        q = exit[i]
        if t_next < 0.0:
            if q <= 0.0:
                status = ABSORBED
                break
            t_next = t - math.log(1.0 - np.random.random()) / q
        end = t_next if t_next < t_stop else t_stop
        # the holding interval [t, end) in state i, over the slices it crosses
        start = t
        while end > boundary:
            piece = boundary - start
            slice_time[s] += piece
            for k in range(n_rewards):
                slice_reward[s, k] += reward[i, k] * piece
            start = boundary
            s += 1
            boundary = (s + 1) * width if s < n_slices - 1 else math.inf
        piece = end - start
        slice_time[s] += piece
        for k in range(n_rewards):
            slice_reward[s, k] += reward[i, k] * piece
        t = end
        if t_next > t_stop:
            timed = True
            break  # the stop comes first: the jump stays pending
        # the jump at t_next: the next state by a cumulative search over row i
        u = np.random.random() * q
        e = indptr[i]
        last = indptr[i + 1] - 1
        acc = rates[e]
        while acc <= u and e < last:
            e += 1
            acc += rates[e]
        while rates[e] <= 0.0:  # u rounded past the row's last positive rate
            e -= 1
        if weighted[e]:
            for m in range(n_impulses):
                slice_impulse[s, m] += weight[e, m]
        i = indices[e]
        events += 1
        t_next = -1.0
        if events >= next_slice_at:  # (by events only: by time it is never reached)
            s += 1
            next_slice_at = (s + 1) * per_slice if s < n_slices - 1 else never
    if status == OK and not timed and events >= e_cap:
        status = CAPPED
    position[0] = i
    position[1] = events
    clock[0] = t
    clock[1] = t_next
    return status
