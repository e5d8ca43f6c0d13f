r"""The value-iteration passes on the packed sorted simplex, for any number of servers.

One application of :math:`T = E_A \circ \min E_X` (Hyytiä & Righter, arXiv 2402.08142, Part 1;
the derivation is in the docstring of :mod:`symq.dispatch.vi.solvers`) on the colex-ranked sorted
states of :mod:`symq.dispatch.simplex`:

* :func:`ex_pass`: :math:`h(c) = \sum_k p_k \,\mathrm{choice}_i \{c_i\delta + v(c + k e_i)\}`
  (the common :math:`k\delta` is added afterwards as the lattice mean).  Only one server of
  each run of equal backlogs is evaluated (they give the same sorted state).  For that server
  the other components' rank contributions are two prefix/suffix sums, and the position of
  the grown component moves at most ``m - 1`` times as ``k`` grows, so each
  :math:`v(c + k e_i)` costs one table look-up and one addition; beyond :math:`U` the fixed
  analytic tail is added to the value at :math:`U`.  The choice is the min (the optimality
  operator, optionally recording the argmin: the greedy policy of policy iteration), the
  equal random split, a decision table of sorted positions, or join-idle-queue (an idle
  server if any, else the random split);
* :func:`ea_pass`: :math:`f(c) = a h(c) + b h(c^-) + q f(c^-)` with :math:`c^-` the diagonal
  predecessor (every positive component minus one), in storage order, so the predecessor is
  always done first.

The :math:`E_X` kernel exists in a parallel and a serial build (the caller picks by size and
measured speed: :class:`symq.dispatch.vi.passes._Operator`).

Examples
--------
>>> from symq.dispatch.simplex import binomial_table, predecessors
>>> B = binomial_table(2, 3)
>>> h = np.zeros(10); h[0] = 1.0
>>> f = ea_pass(h, predecessors(2, 3, B), 0.5, 0.2, 0.3)
>>> float(f[0]), round(float(f[1]), 12)     # (0, 1): b h(0, 0) + q f(0, 0)
(1.0, 0.5)
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from ..simplex import next_colex, unrank

__all__ = ["ex_pass", "ea_pass", "chunk_starts", "MODE_JIQ"]

#: Join-idle-queue mode of the E_X pass (an idle server if any, else the equal random split);
#: the other modes are those of :mod:`symq.dispatch.vi.passes`.
MODE_JIQ = 4


@numba.njit(cache=True, inline="always")
def _server_costs(V, BT, N, K, m, tail, cross, delta, o, base, j, cj, cap, cost
                  ):  # pragma: no cover
    """cost[k] = c_j delta + v(c + k e_j) for k = 0..K: segments of constant position.

    With ``cap < N`` a job that would make the second-largest backlog exceed ``cap`` steps is
    not allowed: its cost is ``inf`` (the grown component second-largest beyond ``cap``, or
    largest while the largest of the others is beyond ``cap``)."""
    k = 0
    pp = j
    while pp < m:
        wend = N if pp == m - 1 else min(N, o[pp] - 1)
        b0 = base[pp]
        col = BT[pp + 1]
        kend = min(K, wend - cj)
        if pp == m - 1 and o[m - 2] > cap:
            while k <= kend:
                cost[k] = np.inf
                k += 1
        elif pp == m - 2 and kend > cap - cj:
            while k <= min(kend, cap - cj):
                cost[k] = V[b0 + col[cj + k + pp]]
                k += 1
            while k <= kend:
                cost[k] = np.inf
                k += 1
        else:
            while k <= kend:
                cost[k] = V[b0 + col[cj + k + pp]]
                k += 1
        pp += 1
    if k <= K:                       # beyond U: the value at U plus the analytic tail
        if o[m - 2] > cap:
            while k <= K:
                cost[k] = np.inf
                k += 1
        else:
            top = V[base[m - 1] + BT[m, N + m - 1]]
            so = 0
            for r in range(m - 1):
                so += o[r]
            lin = cross[so]
            while k <= K:
                cost[k] = top + tail[cj + k - N] + lin * (cj + k - N)
                k += 1
    off = cj * delta
    for k in range(K + 1):
        cost[k] += off


def _ex_pass_py(V, BT, N, p, tail, cross, delta, mode, table, record, starts, ends, cap,
                out):  # pragma: no cover
    """h(c) - E[X] on the packed simplex; ``record``: write the argmin positions to ``table``.

    Chunk ``ch`` covers the ranks ``starts[ch] <= s < ends[ch]``; ``cap`` (steps) is the
    largest second-largest backlog a decision may create (``N``: no cap)."""
    m = BT.shape[0] - 2
    K = p.size - 1
    B = BT.T
    for ch in numba.prange(starts.size):
        c = np.empty(m, dtype=np.int64)
        unrank(starts[ch], B, c)
        o = np.zeros(max(m - 1, 1), dtype=np.int64)
        base = np.empty(m, dtype=np.int64)
        best = np.empty(K + 1)
        cost = np.empty(K + 1)
        for s in range(starts[ch], ends[ch]):
            random = mode == 1 or (mode == 4 and c[0] > 0)
            first = True
            i = 0
            while i < m:
                j = i
                while j + 1 < m and c[j + 1] == c[i]:
                    j += 1
                mult = j - i + 1
                q = 0
                for r in range(m):
                    if r != j:
                        o[q] = c[r]
                        q += 1
                acc = 0
                for r in range(m - 1):          # prefix part into base, suffix added below
                    base[r] = acc
                    acc += BT[r + 1, o[r] + r]
                base[m - 1] = acc
                suf = 0
                for r in range(m - 2, -1, -1):
                    suf += BT[r + 2, o[r] + r + 1]
                    base[r] += suf
                _server_costs(V, BT, N, K, m, tail, cross, delta, o, base, j, c[j], cap, cost)
                if random:
                    if first:
                        for k in range(K + 1):
                            best[k] = mult * cost[k]
                    else:
                        for k in range(K + 1):
                            best[k] += mult * cost[k]
                elif mode == 2:
                    for k in range(K + 1):
                        if i <= table[s, k] <= j:
                            best[k] = cost[k]
                elif first:
                    for k in range(K + 1):
                        best[k] = cost[k]
                    if record:
                        for k in range(K + 1):
                            table[s, k] = j
                elif record:
                    for k in range(K + 1):
                        if cost[k] < best[k]:
                            best[k] = cost[k]
                            table[s, k] = j
                else:
                    for k in range(K + 1):
                        best[k] = min(best[k], cost[k])
                first = False
                if mode == 4 and not random:     # an idle server exists: it takes the job
                    break
                i = j + 1
            acc_s = 0.0
            for k in range(K + 1):
                acc_s += p[k] * best[k]
            out[s] = acc_s / m if random else acc_s
            next_colex(c, N, cap)


def _renamed(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A copy of ``func`` under another name (distinct numba cache files per build)."""
    out = types.FunctionType(func.__code__, func.__globals__, name, func.__defaults__,
                             func.__closure__)
    out.__qualname__ = name
    out.__doc__ = func.__doc__
    return out


_ex_parallel = numba.njit(cache=True, parallel=True, fastmath=True)(
    _renamed(_ex_pass_py, "_ex_simplex_parallel"))
_ex_serial = numba.njit(cache=True, fastmath=True)(_renamed(_ex_pass_py, "_ex_simplex_serial"))


def chunk_starts(n_states: int, chunks: int) -> NDArray[np.int64]:
    """Rank boundaries of ``chunks`` contiguous work chunks (``chunks + 1`` entries)."""
    chunks = max(1, min(int(chunks), n_states))
    return np.linspace(0, n_states, chunks + 1).round().astype(np.int64)


def ex_pass(V: NDArray[np.float64], B: NDArray[np.int64], N: int, p: NDArray[np.float64],
            tail: NDArray[np.float64], delta: float, mode: int, table: NDArray[np.int8],
            out: NDArray[np.float64], *, record: bool = False, parallel: bool = False,
            starts: NDArray[np.int64] | None = None, ends: NDArray[np.int64] | None = None,
            cap: int | None = None, cross: NDArray[np.float64] | None = None) -> None:
    """The :math:`E_X` pass (minus the lattice mean) into ``out``; see the module docstring.

    ``table`` has shape ``(n_states, K + 1)`` in modes 2 (read) and with ``record`` (written);
    any ``(1, 1)`` array otherwise.  ``starts``/``ends``: the rank ranges to compute (default
    all, in chunks: ``starts`` of :func:`chunk_starts` alone gives consecutive chunks);
    ``cap``: see :func:`_server_costs` (mode 0 only; default none).
    """
    if starts is None:
        starts = chunk_starts(V.size, 256 if parallel else 1)
    if ends is None:
        starts, ends = starts[:-1], starts[1:]
    kernel = _ex_parallel if parallel else _ex_serial
    if cross is None:
        cross = np.zeros((B.shape[1] - 3) * N + 1)
    kernel(V, np.ascontiguousarray(B.T), N, p, tail, cross, delta, mode, table, record,
           np.ascontiguousarray(starts), np.ascontiguousarray(ends), N if cap is None else cap,
           out)


@numba.njit(cache=True)
def _ea_pass(h, pred, a, b, q, out):  # pragma: no cover - numba
    out[0] = h[0]
    for s in range(1, h.size):
        r = pred[s]
        out[s] = a * h[s] + b * h[r] + q * out[r]


def ea_pass(h: NDArray[np.float64], pred: NDArray[np.int64], a: float, b: float, q: float,
            out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    r"""The diagonal :math:`E_A` recursion on the packed simplex (see the module docstring)."""
    if out is None:
        out = np.empty_like(h)
    _ea_pass(h, pred, float(a), float(b), float(q), out)
    return out
