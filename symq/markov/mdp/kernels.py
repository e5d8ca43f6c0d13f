"""The compiled Bellman sweep of :mod:`symq.markov.mdp.solvers`: one pass over every
state-action pair of a uniformised continuous-time MDP (Puterman 1994, *Markov Decision
Processes*, sec. 11.5; Lippman 1975, Oper. Res. 23:687-710).

For each state ``s`` the sweep returns

    (T v)(s) = min_a [c(s, a) + sum_t q_t v(target_t) + (Lambda - q(s, a)) v(s)] / (Lambda + alpha)

with ``Lambda`` the uniformisation rate (at least every pair's total rate), ``alpha`` the
discount rate (0 for the average-cost problem) and the minimising pair (the first in
declaration order on exact ties).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bellman_sweep", "pair_values", "span_and_shift"]


@numba.njit(parallel=True, cache=True)
def bellman_sweep(v: np.ndarray, state_ptr: np.ndarray, pair_cost: np.ndarray,
                  pair_out: np.ndarray, trans_ptr: np.ndarray, trans_target: np.ndarray,
                  trans_rate: np.ndarray, uniform: float, alpha: float, out: np.ndarray,
                  best: np.ndarray) -> None:  # pragma: no cover - compiled
    n = state_ptr.size - 1
    scale = 1.0 / (uniform + alpha)
    for s in numba.prange(n):
        low = np.inf
        arg = -1
        vs = v[s]
        for k in range(state_ptr[s], state_ptr[s + 1]):
            acc = pair_cost[k] + (uniform - pair_out[k]) * vs
            for t in range(trans_ptr[k], trans_ptr[k + 1]):
                acc += trans_rate[t] * v[trans_target[t]]
            if acc < low:
                low = acc
                arg = k
        out[s] = low * scale
        best[s] = arg


@numba.njit(parallel=True, cache=True)
def pair_values(h: np.ndarray, state_ptr: np.ndarray, pair_cost: np.ndarray,
                pair_out: np.ndarray, trans_ptr: np.ndarray, trans_target: np.ndarray,
                trans_rate: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[k] = c(s, a) + sum_t q_t (h(target_t) - h(s))`` for every pair ``k = (s, a)``:
    the continuous-time Bellman operator's argument (no uniformisation)."""
    n = state_ptr.size - 1
    for s in numba.prange(n):
        hs = h[s]
        for k in range(state_ptr[s], state_ptr[s + 1]):
            acc = pair_cost[k] - pair_out[k] * hs
            for t in range(trans_ptr[k], trans_ptr[k + 1]):
                acc += trans_rate[t] * h[trans_target[t]]
            out[k] = acc


@numba.njit(cache=True)
def span_and_shift(w: np.ndarray, v: np.ndarray, shift: float
                   ) -> tuple[float, float]:  # pragma: no cover - compiled
    """``min`` and ``max`` of ``w - v`` in one pass, subtracting ``shift`` from ``w``."""
    low = np.inf
    high = -np.inf
    for s in range(w.size):
        d = w[s] - v[s]
        if d < low:
            low = d
        if d > high:
            high = d
        w[s] -= shift
    return low, high
