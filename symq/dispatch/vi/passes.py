r"""The numba passes of the value-iteration operator :math:`T = E_A \circ \min E_X`.

One application of the relative value-iteration operator of Hyytiä & Righter (arXiv 2402.08142,
Part 1) on a :class:`~symq.dispatch.vi.grid.DispatchGrid` is two passes:

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
  :mod:`symq.dispatch.vi.solvers`); on a face it runs along the positive components and
  :math:`f(0) = h(0)`.

:class:`_Operator` chains them; :func:`diagonal_expectation` exposes the :math:`E_A` pass alone.
This module holds the kernels of ``m = 1`` and ``m = 2`` (the symmetric full array, whose rows
are contiguous so that the inner loop vectorises); ``m >= 3`` runs the packed sorted simplex of
:mod:`symq.dispatch.vi.simplex_passes`.  Small grids run the serial builds of the :math:`E_X`
kernels; on large ones :class:`_Operator` times the parallel and the serial build on the first
sweeps and keeps the faster (a parallel region costs a thread rendezvous per sweep, which on
shared cores can cost more than it saves).

Examples
--------
>>> h = np.zeros(5); h[0] = 1.0
>>> f = diagonal_expectation(h, 1.0, 0.5)
>>> bool(f[0] == 1.0 and np.all(np.diff(f) < 0))    # P(A >= u) decreases in u
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter

from ..simplex import binomial_table, predecessors
from .grid import DispatchGrid, diagonal_weights
from .simplex_passes import MODE_JIQ, _renamed, ea_pass, ex_pass

__all__ = ["diagonal_expectation", "MODE_OPT", "MODE_RND", "MODE_TABLE", "MODE_FULL",
           "MODE_JIQ"]

_NCHUNK = 64          # interleaved work chunks for the parallel E_X pass (load balance)
#: Side of the square tiles of states of the m = 2 E_X pass: the rows ``ext[j, i:i+K+1]`` of the
#: states of a tile overlap, so they are read from cache once per tile instead of once per state.
_TILE = 16
#: Modes of the E_X pass: the min over servers, the equal random split, a decision table on
#: the sorted states, a decision table on the full lattice (m = 2; a policy that is not
#: symmetric in the servers, e.g. a score of the server index, or ties to the lowest index),
#: join-idle-queue (an idle server if any, else the equal random split).
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


def _ex_pass_2_py(V, tail, cross, p, delta, mode, table, record, out, tile
                  ):  # pragma: no cover
    """h(i, j) - E[X] for i <= j: sum_k p_k min(i d + V(i+k, j), j d + V(i, j+k)).

    Beyond ``U`` a coordinate whose other coordinate is ``r`` steps adds ``tail[s] +
    cross[r] s`` to the value at ``U`` (:meth:`DispatchGrid.tail_increments`,
    :meth:`DispatchGrid.cross_increments`).

    ``record`` (mode 0): write the argmin (0: the shorter queue, ties included; 1: the longer)
    to ``table``; mode 4 (JIQ): the shorter queue if it is idle (``i = 0``), else the split.
    The states run in square tiles of side ``tile`` (:data:`_TILE`; ``tile > N`` is the plain
    row order); the sum over atoms of each state is the same whatever the tile."""
    N = V.shape[0] - 1
    K = p.size - 1
    W = N + 1 + K
    ext = np.empty((N + 1, W))
    for r in numba.prange(N + 1):
        for c in range(N + 1):
            ext[r, c] = V[r, c]
        for s in range(1, K + 1):
            ext[r, N + s] = V[r, N] + tail[s] + cross[r] * s
    nb = (N + tile) // tile                     # tiles of tile x tile states, bi <= bj
    n_tiles = nb * (nb + 1) // 2
    for chunk in numba.prange(_NCHUNK):
        for t in range(chunk, n_tiles, _NCHUNK):
            bi = 0                                  # tile t -> (bi, bj), row-major, bj >= bi
            rest = t
            while rest >= nb - bi:
                rest -= nb - bi
                bi += 1
            bj = bi + rest
            for i in range(bi * tile, min(bi * tile + tile, N + 1)):
                _ex_cell_row(ext, p, delta, mode, table, record, out, N, K, i,
                             max(i, bj * tile), min(bj * tile + tile, N + 1))


@numba.njit(cache=True, fastmath=True, inline="always")
def _ex_cell_row(ext, p, delta, mode, table, record, out, N, K, i, j0, j1
                 ):  # pragma: no cover - numba
    """The states (i, j), j0 <= j < j1, of the m = 2 E_X pass (see :func:`_ex_pass_2_py`)."""
    off = i * (2 * N + 3 - i) // 2 - i              # packed index of (i, j) is off + j
    for j in range(j0, j1):
        # contiguous views (V symmetric: V(i+k, j) = V(j, i+k)); slicing lets LLVM
        # vectorise the reduction
        x1 = ext[j, i:i + K + 1]
        x2 = ext[i, j:j + K + 1]
        d = (j - i) * delta
        s = 0.0
        if mode == 0 and record:
            row = table[off + j]
            for k in range(K + 1):
                x = x1[k]
                y = x2[k] + d
                if x <= y:
                    row[k] = 0
                    s += p[k] * x
                else:
                    row[k] = 1
                    s += p[k] * y
        elif mode == 0:
            for k in range(K + 1):
                x = x1[k]
                y = x2[k] + d
                s += p[k] * min(x, y)
        elif mode == 4 and i == 0:
            for k in range(K + 1):
                s += p[k] * x1[k]
        elif mode == 1 or mode == 4:
            for k in range(K + 1):
                s += p[k] * (x1[k] + x2[k])
            s = 0.5 * (s + d)
        else:
            row = table[off + j]
            for k in range(K + 1):
                s += p[k] * (x1[k] if row[k] == 0 else x2[k] + d)
        out[i, j] = i * delta + s


def _ex_pass_full_py(V, tail, cross, p, delta, table, out):  # pragma: no cover - numba
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
            ext[r, N + s] = V[r, N] + tail[s] + cross[r] * s
            ext_t[r, N + s] = V[N, r] + tail[s] + cross[r] * s
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


# parallel and serial builds of the same kernels: small grids run serially, since a
# parallel region costs a thread rendezvous per iteration (expensive on a loaded machine)
_ex_pass_2 = numba.njit(cache=True, parallel=True, fastmath=True)(
    _renamed(_ex_pass_2_py, "_ex_pass_2"))
_ex_pass_2_serial = numba.njit(cache=True, fastmath=True)(
    _renamed(_ex_pass_2_py, "_ex_pass_2_serial"))
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


class _Operator:
    """T v = E_A[choice E_X ...] on one grid, for one mode (optimal, RND, table, full, JIQ).

    ``record`` (mode optimal): each call also writes the argmin decisions to :attr:`table`
    (sorted positions, shape ``(n_states, K + 1)``): the greedy policy of policy iteration.
    """

    def __init__(self, grid: DispatchGrid, mode: int, table: NDArray[np.int8] | None,
                 record: bool = False) -> None:
        self.grid = grid
        self.mode = mode
        self.record = bool(record)
        if record and table is None:
            table = np.zeros((grid.n_states, grid.K + 1), dtype=np.int8)
        self.table = table if table is not None else np.zeros((1, 1), dtype=np.int8)
        self.tail = grid.tail_increments()
        self.cross = grid.cross_increments()
        self.EX = grid.lattice_mean
        self.h = np.zeros(grid.shape())
        work = grid.n_states * (grid.K + 1) * grid.m
        self._builds = _KernelChoice(work >= _PARALLEL_WORK)
        if grid.m >= 3:
            self.B = binomial_table(grid.m, grid.N, N2=grid.N2)
            self.pred = predecessors(grid.m, grid.N, self.B, grid.N2)
            self.ranges = {True: grid.rank_chunks(256), False: grid.rank_chunks(1)}

    def __call__(self, v: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        g = self.grid
        if g.m == 1:
            _ex_pass_1(v, self.tail, g.p, g.delta, self.mode, self.table, self.h)
            self.h += self.EX
            _ea_pass_1(self.h, g.a, g.b, g.q, out)
            return
        if g.m == 2 and self.mode == MODE_FULL:
            self._builds.run(lambda par: (_ex_pass_full if par else _ex_pass_full_serial)(
                v, self.tail, self.cross, g.p, g.delta, self.table, self.h))
            self.h += self.EX
            _ea_pass_full(self.h, g.a, g.b, g.q, out)
        elif g.m == 2:
            self._builds.run(lambda par: (_ex_pass_2 if par else _ex_pass_2_serial)(
                v, self.tail, self.cross, g.p, g.delta, self.mode, self.table, self.record,
                self.h, _TILE))
            self.h += self.EX
            _ea_pass_2(self.h, g.a, g.b, g.q, out)
        else:
            self._builds.run(lambda par: ex_pass(
                v, self.B, g.N, g.p, self.tail, g.delta, self.mode, self.table, self.h,
                record=self.record, parallel=par, starts=self.ranges[par][0],
                ends=self.ranges[par][1], cap=g.N2, cross=self.cross))
            self.h += self.EX
            ea_pass(self.h, self.pred, g.a, g.b, g.q, out)


class _KernelChoice:
    """Serial or parallel build of a kernel, chosen by size and then by measured speed.

    Below the work threshold the serial build always runs.  Above it, after one call that may
    load the compiled code, :attr:`TRIALS` calls alternate the two builds and the one with the
    smaller median time is kept, so a parallel build is not kept when it is slower on cores
    shared with other work.  Every later call is timed too: when the kept build's moving
    average exceeds :attr:`SLACK` times the other's median (the load changed), or after
    :attr:`RECHECK` calls, the trial is repeated.
    """

    TRIALS = 6
    RECHECK = 200
    SLACK = 1.3

    def __init__(self, big: bool) -> None:
        self.big = big
        self.parallel = big
        self._trial: dict[bool, list[float]] = {True: [], False: []}
        self._pending = self.TRIALS       # trial calls still to make (after the first call)
        self._first = True
        self._since = 0
        self._average = 0.0
        self._other = math.inf

    def run(self, call: Callable[[bool], Any]) -> None:
        if not self.big:
            call(False)
            return
        if self._first:
            self._first = False
            call(self.parallel)
            return
        if self._pending > 0:
            par = self._pending % 2 == 0
            t0 = time.perf_counter()
            call(par)
            self._trial[par].append(time.perf_counter() - t0)
            self._pending -= 1
            if self._pending == 0:
                med = {k: float(np.median(t)) for k, t in self._trial.items()}
                self.parallel = med[True] < med[False]
                self._other = med[not self.parallel]
                self._average = med[self.parallel]
                self._since = 0
            return
        t0 = time.perf_counter()
        call(self.parallel)
        self._average = 0.8 * self._average + 0.2 * (time.perf_counter() - t0)
        self._since += 1
        if self._since >= self.RECHECK or self._average > self.SLACK * self._other:
            self._trial = {True: [], False: []}
            self._pending = self.TRIALS


def diagonal_expectation(h: NDArray[np.float64], lam: float, delta: float) -> NDArray[np.float64]:
    r"""The :math:`E_A` pass alone: :math:`f(u) = E[h((u - A\mathbf 1)^+)]`, ``A ~ Exp(lam)``.

    ``h`` is given on the full lattice (``m = 1``: ``(N+1,)``; ``m = 2``: symmetric
    ``(N+1, N+1)``); the recursion along diagonals with exact exponential weights is applied.
    Exposed for testing and for reuse.
    """
    h = np.ascontiguousarray(h, dtype=float)
    a, b, q = diagonal_weights(lam, delta)
    out = np.empty_like(h)
    if h.ndim == 1:
        _ea_pass_1(h, a, b, q, out)
    elif h.ndim == 2:
        _ea_pass_2(h, a, b, q, out)
    else:
        raise InvalidParameter("h", h.shape, "a 1-d or 2-d array")
    return out
