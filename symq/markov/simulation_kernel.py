r"""The numba kernels of the Gillespie simulators: of a CTMC given by its CSR generator
(:func:`ctmc_kernel`) and of a chain given by its declared rates (:func:`declared_kernel`).

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

:func:`declared_kernel` runs the same direct method on the state vector itself, with no state
space: at each state it calls the declaration's compiled functions (:mod:`symq.core.compiler`,
numba backend) for the guarded rates of the ``J`` jumps and the ``K`` rewards, draws the jump,
and applies its update (a constant shift of the variables, or the compiled update formulas),
checking the rates (finite, ``>= 0``) and the new state (integers within the bounds) at every
state it visits.  So it runs chains with an unbounded level as well as finite ones, and its
evidence shares no code with the state-space builder.  Both kernels integrate the rewards over
the slices by :func:`hold`.

References
----------
D. T. Gillespie, Exact stochastic simulation of coupled chemical reactions, *J. Phys. Chem.*
81(25), 2340-2361, 1977.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

__all__ = ["ABSORBED", "BAD_RATE", "BAD_UPDATE", "CAPPED", "OK", "ctmc_kernel",
           "declared_kernel", "hold", "slice_at"]

#: The run reached its stop (time or events).
OK = 0
#: The chain reached a state with no outgoing rate before the stop.
ABSORBED = 1
#: The run reached its cap on events (the work limit) before its time horizon.
CAPPED = 2
#: A declared rate was negative or not finite at the state reached (declared kernel only).
BAD_RATE = 3
#: A declared update left the bounds or gave a non-integer (declared kernel only).
BAD_UPDATE = 4


@numba.njit(cache=True, inline="always")
def slice_at(t: float, events: int, by_time: bool, width: float, per_slice: int,
             n_slices: int) -> tuple[int, float, int, int]:  # pragma: no cover - compiled
    """Where a resumed run stands: its slice, the time the slice ends (slices by time; else
    ``inf``), the event count at which it ends (slices by events; else ``never``) and
    ``never``, a count no run reaches."""
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
    return s, boundary, next_slice_at, never


@numba.njit(cache=True, inline="always")
def hold(start: float, end: float, values: np.ndarray, s: int, boundary: float, width: float,
         slice_time: np.ndarray, slice_reward: np.ndarray
         ) -> tuple[int, float]:  # pragma: no cover - compiled
    """Add the holding interval ``[start, end)`` with the state rewards ``values`` to the time
    slices it crosses (slices of equal ``width``; the last one is open); return the slice
    of ``end`` and that slice's upper boundary (``inf`` for the last one, and always when the
    slices are cut by events)."""
    n_slices = slice_time.shape[0]
    n_rewards = values.shape[0]
    while end > boundary:
        piece = boundary - start
        slice_time[s] += piece
        for k in range(n_rewards):
            slice_reward[s, k] += values[k] * piece
        start = boundary
        s += 1
        boundary = (s + 1) * width if s < n_slices - 1 else math.inf
    piece = end - start
    slice_time[s] += piece
    for k in range(n_rewards):
        slice_reward[s, k] += values[k] * piece
    return s, boundary


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
    n_impulses = weight.shape[1]
    i = position[0]
    events = position[1]
    t = clock[0]
    t_next = clock[1]
    status = OK
    # the current slice and where it ends (by time or by events), tracked without a division
    # per event
    s, boundary, next_slice_at, never = slice_at(t, events, by_time, width, per_slice,
                                                 n_slices)
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
        s, boundary = hold(t, end, reward[i], s, boundary, width, slice_time, slice_reward)
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


@numba.njit(inline="always")
def _move(update_fn: Any, jump: int, x: np.ndarray, p: np.ndarray, shift: np.ndarray,
          delta: np.ndarray, target: np.ndarray) -> None:  # pragma: no cover - compiled
    """The state ``jump`` leads to from ``x``, into ``target`` (not checked)."""
    if shift[jump]:
        for k in range(x.shape[0]):
            target[k] = x[k] + delta[jump, k]
    else:
        new = update_fn(jump, x, p)
        for k in range(x.shape[0]):
            target[k] = new[k]


@numba.njit
def declared_kernel(rates_fn: Any, update_fn: Any, reward_fn: Any, p: np.ndarray,
                    shift: np.ndarray, delta: np.ndarray, counted: np.ndarray, lows: np.ndarray,
                    highs: np.ndarray, by_time: bool, width: float, per_slice: int,
                    t_stop: float, e_stop: int, e_cap: int, x: np.ndarray,
                    position: np.ndarray, clock: np.ndarray, slice_time: np.ndarray,
                    slice_reward: np.ndarray) -> int:  # pragma: no cover - compiled
    """Advance a declared chain until the clock reaches ``t_stop`` or ``e_stop`` events are done.

    Parameters
    ----------
    rates_fn : njit function ``(x, p) -> tuple of J floats``
        The rate of each jump at the state ``x`` (0 where its guard fails).
    update_fn : njit function ``(j, x, p) -> tuple of K floats``
        The state jump ``j`` leads to (used for the jumps that are not constant shifts).
    reward_fn : njit function ``(x, p) -> tuple of R floats``
        The state rewards at ``x`` (indicators for events).
    p : float64 array
        The parameters' values, in the declared order.
    shift : bool array (J,), delta : float64 array (J, K)
        Whether jump ``j`` adds the constant ``delta[j]`` to the state.
    counted : float64 array (J, M)
        ``counted[j, m] = 1`` when jump ``j`` counts towards throughput ``m``: the run
        integrates ``sum_j rate_j counted[j, m]`` at the states where jump ``j`` moves the
        chain (the conditional expectation of the firings).
    lows, highs : float64 arrays (K,)
        The variables' bounds (``inf`` for the level).
    by_time, width, per_slice, t_stop, e_stop, e_cap
        As for :func:`ctmc_kernel`.
    x : float64 array (K,)
        The current state, updated.
    position : int64 array (2,)
        ``[events done, the jump at fault]``, updated.
    clock, slice_time : float64 arrays
        As for :func:`ctmc_kernel`.
    slice_reward : float64 array (S, R + M)
        The slices' integrals of the ``R`` rewards, then of the ``M`` throughputs.

    Returns
    -------
    int
        :data:`OK`, :data:`ABSORBED`, :data:`CAPPED`, :data:`BAD_RATE` or
        :data:`BAD_UPDATE` (``position[1]`` is the jump, ``x`` the state where it happened;
        for :data:`BAD_UPDATE` ``slice_reward`` is left as it was and ``clock[1]`` unchanged).
    """
    n_slices = slice_time.shape[0]
    n_jumps = counted.shape[0]
    n_counted = counted.shape[1]
    n_vars = x.shape[0]
    events = position[0]
    t = clock[0]
    t_next = clock[1]
    status = OK
    # the current slice and where it ends (by time or by events), tracked without a division
    # per event
    s, boundary, next_slice_at, never = slice_at(t, events, by_time, width, per_slice,
                                                 n_slices)
    limit = min(e_stop, e_cap)
    timed = False
    rates = np.empty(n_jumps)
    target = np.empty(n_vars)
    values = np.empty(slice_reward.shape[1])
    n_rewards = values.shape[0] - n_counted
    general = not np.all(shift)
    while events < limit:
        q = 0.0
        j = -1
        for r in rates_fn(x, p):   # (iterating the tuple: no indexing by a runtime value)
            j += 1
            if not (r >= 0.0 and r < math.inf):
                position[1] = j
                status = BAD_RATE
                break
            if general and r > 0.0 and not shift[j]:   # a jump leaving the state as it is
                _move(update_fn, j, x, p, shift, delta, target)
                same = True
                for k in range(n_vars):
                    if target[k] != x[k]:
                        same = False
                if same:
                    r = 0.0
            rates[j] = r
            q += r
        if status != OK:
            break
        if q <= 0.0:
            status = ABSORBED
            break
        k = 0
        for value in reward_fn(x, p):
            if k < n_rewards:
                values[k] = value
            k += 1
        for m in range(n_counted):
            acc = 0.0
            for j in range(n_jumps):
                acc += rates[j] * counted[j, m]
            values[n_rewards + m] = acc
        if t_next < 0.0:
            t_next = t - math.log(1.0 - np.random.random()) / q
        end = t_next if t_next < t_stop else t_stop
        s, boundary = hold(t, end, values, s, boundary, width, slice_time, slice_reward)
        t = end
        if t_next > t_stop:
            timed = True
            break
        u = np.random.random() * q
        e = 0
        acc = rates[0]
        while acc <= u and e < n_jumps - 1:
            e += 1
            acc += rates[e]
        while rates[e] <= 0.0:
            e -= 1
        if shift[e]:   # a constant shift: check the variables it moves, then move them
            for k in range(n_vars):
                d = delta[e, k]
                if d != 0.0 and not (lows[k] <= x[k] + d <= highs[k]):
                    position[1] = e
                    status = BAD_UPDATE
                    break
            if status != OK:
                break
            for k in range(n_vars):
                x[k] += delta[e, k]
        else:
            _move(update_fn, e, x, p, shift, delta, target)
            for k in range(n_vars):
                v = target[k]
                whole = math.floor(v + 0.5)
                if not (abs(v - whole) <= 1e-9 and lows[k] <= whole <= highs[k]):
                    position[1] = e
                    status = BAD_UPDATE
                    break
                target[k] = whole
            if status != OK:
                break
            for k in range(n_vars):
                x[k] = target[k]
        events += 1
        t_next = -1.0
        if events >= next_slice_at:
            s += 1
            next_slice_at = (s + 1) * per_slice if s < n_slices - 1 else never
    if status == OK and not timed and events >= e_cap:
        status = CAPPED
    position[0] = events
    clock[0] = t
    clock[1] = t_next
    return status
