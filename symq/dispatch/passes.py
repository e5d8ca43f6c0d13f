r"""The numba passes of the value-iteration operator :math:`T = E_A \circ \min E_X`.

One application of the relative value-iteration operator of Hyytiä & Righter (arXiv 2402.08142,
Part 1) on a :class:`~symq.dispatch.grid.DispatchGrid` is two passes:

* the :math:`E_X` pass over (sorted state, size atom): :math:`h(u) = \sum_k p_k
  \min_i\{u_i + k\delta + v(u + k\delta e_i)\}` (or the expectation over an equal random
  split, or the choice of a decision table on the sorted states or, for a policy that is not
  symmetric in the servers, on the full lattice), with the fixed analytic tail beyond ``U``; exact
  brute force, for ``m = 2`` reading both candidates from contiguous rows of the symmetric
  value so that the inner loop vectorises;
* the :math:`E_A` pass, :math:`f(u) = E[h((u - A\mathbf 1)^+)]`, :math:`A \sim
  \mathrm{Exp}(\lambda)`, by the :math:`O(1)`-per-state recursion along diagonals
  :math:`f(u) = a h(u) + b h(u - \delta\mathbf 1) + q f(u - \delta\mathbf 1)` with the exact
  exponential weights of the grid (the derivation is in the docstring of
  :mod:`symq.dispatch.vi`); on a face it runs along the positive components and
  :math:`f(0) = h(0)`.

:class:`_Operator` chains them; :func:`diagonal_expectation` exposes the :math:`E_A` pass alone.
Large grids run the parallel builds of the :math:`E_X` kernels, small ones the serial builds (a
parallel region costs a thread rendezvous per iteration).

Examples
--------
>>> h = np.zeros(5); h[0] = 1.0
>>> f = diagonal_expectation(h, 1.0, 0.5)
>>> bool(f[0] == 1.0 and np.all(np.diff(f) < 0))    # P(A >= u) decreases in u
True
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter

from .grid import DispatchGrid, _simplex_base

__all__ = ["diagonal_expectation", "MODE_OPT", "MODE_RND", "MODE_TABLE", "MODE_FULL"]

_NCHUNK = 64          # interleaved work chunks for the parallel E_X pass (load balance)
#: Modes of the E_X pass: the min over servers, the equal random split, a decision table on
#: the sorted states, a decision table on the full lattice (m = 2; a policy that is not
#: symmetric in the servers, e.g. a score of the server index, or ties to the lowest index).
MODE_OPT, MODE_RND, MODE_TABLE, MODE_FULL = 0, 1, 2, 3


@numba.njit(cache=True, fastmath=True)
def _ex_pass_1(V, tail, p, delta, mode, table, out):  # pragma: no cover - numba
    N = V.shape[0] - 1
    K = p.size - 1
    ext = np.empty(N + 1 + K)
    ext[:N + 1] = V
    for s in range(1, K + 1):
        ext[N + s] = V[N] + tail[s]
    for i in range(N + 1):
        s = 0.0
        for k in range(K + 1):
            s += p[k] * ext[i + k]
        out[i] = i * delta + s


def _ex_pass_2_py(V, tail, p, delta, mode, table, out):  # pragma: no cover - numba
    """h(i, j) - E[X] for i <= j: sum_k p_k min(i d + V(i+k, j), j d + V(i, j+k))."""
    N = V.shape[0] - 1
    K = p.size - 1
    W = N + 1 + K
    ext = np.empty((N + 1, W))
    for r in numba.prange(N + 1):
        for c in range(N + 1):
            ext[r, c] = V[r, c]
        for s in range(1, K + 1):
            ext[r, N + s] = V[r, N] + tail[s]
    for chunk in numba.prange(_NCHUNK):
        for i in range(chunk, N + 1, _NCHUNK):
            off = i * (2 * N + 3 - i) // 2 - i      # packed index of (i, j) is off + j
            for j in range(i, N + 1):
                # contiguous views (V symmetric: V(i+k, j) = V(j, i+k)); slicing lets LLVM
                # vectorise the reduction
                x1 = ext[j, i:i + K + 1]
                x2 = ext[i, j:j + K + 1]
                d = (j - i) * delta
                s = 0.0
                if mode == 0:
                    for k in range(K + 1):
                        x = x1[k]
                        y = x2[k] + d
                        s += p[k] * min(x, y)
                elif mode == 1:
                    for k in range(K + 1):
                        s += p[k] * (x1[k] + x2[k])
                    s = 0.5 * (s + d)
                else:
                    row = table[off + j]
                    for k in range(K + 1):
                        s += p[k] * (x1[k] if row[k] == 0 else x2[k] + d)
                out[i, j] = i * delta + s


def _ex_pass_full_py(V, tail, p, delta, table, out):  # pragma: no cover - numba
    """h(i, j) - E[X] on the full lattice (m = 2, no symmetry): ``table[i (N+1) + j, k]`` is
    the server (0 or 1) that takes a job of size ``k delta`` at backlogs ``(i, j) delta``."""
    N = V.shape[0] - 1
    K = p.size - 1
    W = N + 1 + K
    ext = np.empty((N + 1, W))       # ext[r, c] = v(r, c), c beyond N by the tail
    ext_t = np.empty((N + 1, W))     # ext_t[r, c] = v(c, r)
    for r in numba.prange(N + 1):
        for c in range(N + 1):
            ext[r, c] = V[r, c]
            ext_t[r, c] = V[c, r]
        for s in range(1, K + 1):
            ext[r, N + s] = V[r, N] + tail[s]
            ext_t[r, N + s] = V[N, r] + tail[s]
    for chunk in numba.prange(_NCHUNK):
        for i in range(chunk, N + 1, _NCHUNK):
            for j in range(N + 1):
                x1 = ext_t[j, i:i + K + 1]       # v(i + k, j): the job to server 0
                x2 = ext[i, j:j + K + 1]         # v(i, j + k): the job to server 1
                d = (j - i) * delta
                row = table[i * (N + 1) + j]
                s = 0.0
                for k in range(K + 1):
                    s += p[k] * (x1[k] if row[k] == 0 else x2[k] + d)
                out[i, j] = i * delta + s


@numba.njit(cache=True, inline="always")
def _v3(Vp, base, tail, x, y, z, N):  # pragma: no cover - numba
    """v at the sorted triple x <= y <= z, z possibly beyond N (tail)."""
    if z > N:
        return Vp[base[x, y] + N - y] + tail[z - N]
    return Vp[base[x, y] + z - y]


def _ex_pass_3_py(Vp, base, pairs, tail, p, delta, mode, table, out):  # pragma: no cover - numba
    """h(a, b, c) - E[X] on the packed sorted simplex."""
    N = base.shape[0] - 1
    K = p.size - 1
    npairs = pairs.shape[0]
    for chunk in numba.prange(_NCHUNK):
        for t in range(chunk, npairs, _NCHUNK):
            a = pairs[t, 0]
            b = pairs[t, 1]
            for c in range(b, N + 1):
                idx = base[a, b] + c - b
                s = 0.0
                for k in range(K + 1):
                    # server 3 (largest backlog): (a, b, c + k)
                    v3 = c * delta + _v3(Vp, base, tail, a, b, c + k, N)
                    # server 2: (a, b + k, c) sorted
                    bk = b + k
                    if bk <= c:
                        v2 = b * delta + _v3(Vp, base, tail, a, bk, c, N)
                    else:
                        v2 = b * delta + _v3(Vp, base, tail, a, c, bk, N)
                    # server 1: (a + k, b, c) sorted
                    ak = a + k
                    if ak <= b:
                        v1 = a * delta + _v3(Vp, base, tail, ak, b, c, N)
                    elif ak <= c:
                        v1 = a * delta + _v3(Vp, base, tail, b, ak, c, N)
                    else:
                        v1 = a * delta + _v3(Vp, base, tail, b, c, ak, N)
                    if mode == 0:
                        best = v1
                        best = min(best, v2)
                        best = min(best, v3)
                    elif mode == 1:
                        best = (v1 + v2 + v3) / 3.0
                    else:
                        ch = table[idx, k]
                        best = v1 if ch == 0 else (v2 if ch == 1 else v3)
                    s += p[k] * best
                out[idx] = s


# parallel and serial builds of the same kernels: small grids run serially, since a
# parallel region costs a thread rendezvous per iteration (expensive on a loaded machine)
def _renamed(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A copy of ``func`` under another name (distinct numba cache files per build)."""
    out = types.FunctionType(func.__code__, func.__globals__, name, func.__defaults__,
                             func.__closure__)
    out.__qualname__ = name
    out.__doc__ = func.__doc__
    return out


_ex_pass_2 = numba.njit(cache=True, parallel=True, fastmath=True)(
    _renamed(_ex_pass_2_py, "_ex_pass_2"))
_ex_pass_2_serial = numba.njit(cache=True, fastmath=True)(
    _renamed(_ex_pass_2_py, "_ex_pass_2_serial"))
_ex_pass_3 = numba.njit(cache=True, parallel=True, fastmath=True)(
    _renamed(_ex_pass_3_py, "_ex_pass_3"))
_ex_pass_3_serial = numba.njit(cache=True, fastmath=True)(
    _renamed(_ex_pass_3_py, "_ex_pass_3_serial"))
_ex_pass_full = numba.njit(cache=True, parallel=True, fastmath=True)(
    _renamed(_ex_pass_full_py, "_ex_pass_full"))
_ex_pass_full_serial = numba.njit(cache=True, fastmath=True)(
    _renamed(_ex_pass_full_py, "_ex_pass_full_serial"))
_PARALLEL_WORK = 4_000_000     # (state, atom) pairs per pass above which threads pay off


@numba.njit(cache=True)
def _ea_pass_1(h, a, b, q, out):  # pragma: no cover - numba
    out[0] = h[0]
    for i in range(1, h.size):
        out[i] = a * h[i] + b * h[i - 1] + q * out[i - 1]


@numba.njit(cache=True)
def _ea_pass_2(h, a, b, q, out):  # pragma: no cover - numba
    """E_A on the triangle i <= j; the face i = 0 recurses along j.  Mirrors the result."""
    N = h.shape[0] - 1
    out[0, 0] = h[0, 0]
    for j in range(1, N + 1):
        out[0, j] = a * h[0, j] + b * h[0, j - 1] + q * out[0, j - 1]
    for i in range(1, N + 1):
        for j in range(i, N + 1):
            out[i, j] = a * h[i, j] + b * h[i - 1, j - 1] + q * out[i - 1, j - 1]
    for i in range(N + 1):
        for j in range(i + 1, N + 1):
            out[j, i] = out[i, j]


@numba.njit(cache=True)
def _ea_pass_full(h, a, b, q, out):  # pragma: no cover - numba
    """E_A on the full lattice (m = 2, no symmetry); each face recurses along its axis."""
    N = h.shape[0] - 1
    out[0, 0] = h[0, 0]
    for j in range(1, N + 1):
        out[0, j] = a * h[0, j] + b * h[0, j - 1] + q * out[0, j - 1]
        out[j, 0] = a * h[j, 0] + b * h[j - 1, 0] + q * out[j - 1, 0]
    for i in range(1, N + 1):
        for j in range(1, N + 1):
            out[i, j] = a * h[i, j] + b * h[i - 1, j - 1] + q * out[i - 1, j - 1]


@numba.njit(cache=True)
def _ea_pass_3(h, base, a, b, q, out):  # pragma: no cover - numba
    """E_A on the packed simplex, lexicographic sweep (predecessors come first)."""
    N = base.shape[0] - 1
    for x in range(N + 1):
        for y in range(x, N + 1):
            for z in range(y, N + 1):
                idx = base[x, y] + z - y
                if x >= 1:
                    prev = base[x - 1, y - 1] + z - y
                elif y >= 1:
                    prev = base[0, y - 1] + z - y
                elif z >= 1:
                    prev = base[0, 0] + z - 1
                else:
                    out[idx] = h[idx]
                    continue
                out[idx] = a * h[idx] + b * h[prev] + q * out[prev]


class _Operator:
    """T v = E_A[min E_X ...] on one grid, for one mode (optimal, RND, table, full table)."""

    def __init__(self, grid: DispatchGrid, mode: int, table: NDArray[np.int8] | None) -> None:
        self.grid = grid
        self.mode = mode
        self.table = table if table is not None else np.zeros((1, 1), dtype=np.int8)
        self.tail = grid.tail()
        self.EX = grid.lattice_mean
        self.h = np.zeros(grid.shape())
        if grid.m == 3:
            self.base = _simplex_base(grid.N)
            iu = np.triu_indices(grid.N + 1)
            self.pairs = np.stack(iu, axis=1).astype(np.int64)

    def __call__(self, v: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        g = self.grid
        big = g.n_states * (g.K + 1) * g.m >= _PARALLEL_WORK
        if g.m == 1:
            _ex_pass_1(v, self.tail, g.p, g.delta, self.mode, self.table, self.h)
            self.h += self.EX
            _ea_pass_1(self.h, g.a, g.b, g.q, out)
        elif g.m == 2 and self.mode == MODE_FULL:
            kernel = _ex_pass_full if big else _ex_pass_full_serial
            kernel(v, self.tail, g.p, g.delta, self.table, self.h)
            self.h += self.EX
            _ea_pass_full(self.h, g.a, g.b, g.q, out)
        elif g.m == 2:
            kernel = _ex_pass_2 if big else _ex_pass_2_serial
            kernel(v, self.tail, g.p, g.delta, self.mode, self.table, self.h)
            self.h += self.EX
            _ea_pass_2(self.h, g.a, g.b, g.q, out)
        else:
            kernel = _ex_pass_3 if big else _ex_pass_3_serial
            kernel(v, self.base, self.pairs, self.tail, g.p, g.delta, self.mode, self.table,
                   self.h)
            self.h += self.EX
            _ea_pass_3(self.h, self.base, g.a, g.b, g.q, out)


def diagonal_expectation(h: NDArray[np.float64], lam: float, delta: float) -> NDArray[np.float64]:
    r"""The :math:`E_A` pass alone: :math:`f(u) = E[h((u - A\mathbf 1)^+)]`, ``A ~ Exp(lam)``.

    ``h`` is given on the full lattice (``m = 1``: ``(N+1,)``; ``m = 2``: symmetric
    ``(N+1, N+1)``); the recursion along diagonals with exact exponential weights is applied.
    Exposed for testing and for reuse.
    """
    h = np.ascontiguousarray(h, dtype=float)
    x = lam * delta
    q = math.exp(-x)
    b = -math.expm1(-x) / x - q
    a = -math.expm1(-x) - b
    out = np.empty_like(h)
    if h.ndim == 1:
        _ea_pass_1(h, a, b, q, out)
    elif h.ndim == 2:
        _ea_pass_2(h, a, b, q, out)
    else:
        raise InvalidParameter("h", h.shape, "a 1-d or 2-d array")
    return out
