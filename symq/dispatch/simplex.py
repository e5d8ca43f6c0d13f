r"""The packed sorted simplex of ``m`` identical servers: ranks, predecessors, interpolation.

With identical servers the relative value is symmetric, :math:`v(u) = v(\mathrm{sort}(u))`
(Hyytiä & Righter, arXiv 2402.08142, Part 1, state-space reduction), so value iteration stores
only the sorted lattice states :math:`c_0 \le c_1 \le \dots \le c_{m-1}`, :math:`c_r \in
\{0..N\}`: :math:`\binom{N+m}{m}` of them instead of :math:`(N+1)^m` (720 times fewer for
``m = 6``).  They are stored in *colexicographic* order, ranked by the combinatorial number
system of the strictly increasing sequence :math:`c_r + r`:

.. math::

    \mathrm{rank}(c) = \sum_{r=0}^{m-1} \binom{c_r + r}{r + 1},

a bijection onto :math:`0, \dots, \binom{N+m}{m} - 1` that grows with every component.  So the
predecessor of the diagonal :math:`E_A` recursion (every positive component minus one) has a
smaller rank, and one sweep in storage order meets it first.  For a job added to one
component the other ranks' contributions are fixed, and the new component's position moves at
most ``m - 1`` times as the size grows: :mod:`symq.dispatch.vi.simplex_passes` reads
:math:`v(u + k\delta e_i)` for all size atoms ``k`` with one table look-up and one addition
each.

A *capped* simplex keeps only the states whose second-largest component is at most
:math:`N_2` (the optimal policy at high load keeps one long queue:
:meth:`~symq.dispatch.vi.grid.DispatchGrid.build`).  In colex order the states of largest
component :math:`t > N_2` form a block of :math:`P = \binom{N_2+m-1}{m-1}` (their lower
components, any sorted tuple within :math:`N_2`, come first in their block), so replacing the
largest component's term :math:`\binom{t+m-1}{m}` by :math:`\binom{N_2+m}{m} + (t - N_2 - 1)P`
ranks the capped states densely, :math:`0, \dots, \binom{N_2+m}{m} + (N - N_2)P - 1`, with
every other property kept: :func:`binomial_table` with ``N2`` holds that column (and the cap
itself, :func:`table_cap`), and the functions below take ``N2`` (``N``, or None, for the full
simplex).

This module holds the index arithmetic (numba functions for the kernels, numpy wrappers for
the rest) and :func:`simplex_value`, the multilinear interpolation of a packed value with the
fixed analytic tail, which the simulator's look-up policy and :class:`~symq.dispatch.vi.iteration.
VIResult` use.

Examples
--------
>>> B = binomial_table(2, 2)
>>> [int(rank_of(np.array(c), B)) for c in ([0, 0], [0, 1], [1, 1], [0, 2], [1, 2], [2, 2])]
[0, 1, 2, 3, 4, 5]
>>> colex_states(2, 2).tolist()
[[0, 0], [0, 1], [1, 1], [0, 2], [1, 2], [2, 2]]
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter

__all__ = ["binomial_table", "colex_block", "colex_states", "predecessors", "rank_of",
           "n_sorted_states", "simplex_value", "M_MAX", "unrank", "next_colex",
           "values_at_states", "FORBIDDEN", "cap_steps", "table_cap", "cross_slope",
           "NO_CROSS"]

#: Largest number of servers of the sorted-simplex value iteration.
M_MAX = 6
#: The value of a state outside a cap (not stored): a decision that would reach it is never
#: taken, and an interpolation that reads it says so by its size.
FORBIDDEN = 1e300


def cap_steps(m: int, N: int, N2: int | None) -> int:
    """The cap in steps as the kernels take it: ``N`` (no cap) unless ``m >= 2`` and
    ``0 <= N2 < N``."""
    return N if N2 is None or m < 2 or not 0 <= N2 < N else int(N2)


def n_sorted_states(m: int, N: int, N2: int | None = None) -> int:
    """Number of sorted lattice states, :math:`\\binom{N+m}{m}`, or with the second-largest
    component capped at ``N2``, :math:`\\binom{N_2+m}{m} + (N - N_2)\\binom{N_2+m-1}{m-1}`."""
    N2 = cap_steps(m, N, N2)
    if N2 == N:
        return math.comb(N + m, m)
    return math.comb(N2 + m, m) + (N - N2) * math.comb(N2 + m - 1, m - 1)


def binomial_table(m: int, N: int, extra: int = 0, N2: int | None = None
                   ) -> NDArray[np.int64]:
    """``B[n, r] = C(n, r)`` for ``n <= N + m + extra``, ``r <= m + 1`` (int64, exact); with a
    cap ``N2 < N`` the largest component's column ``r = m`` is the dense one of the module
    docstring from ``n = N2 + m`` on, and ``B[0, m + 1]`` (:math:`\\binom{0}{m+1} = 0`, never
    read by a rank) holds ``N2 + 1``: the table describes the storage it ranks
    (:func:`table_cap`).

    Raises :class:`~symq.core.errors.InvalidParameter` when a rank would not fit in int64.
    """
    top = N + m + extra
    if math.comb(top + 1, m + 1) >= 2 ** 62:
        raise InvalidParameter("N", N, f"a grid with fewer than 2^62 sorted states for m={m}")
    B = np.zeros((top + 1, m + 2), dtype=np.int64)
    for n in range(top + 1):
        for r in range(min(n, m + 1) + 1):
            B[n, r] = math.comb(n, r)
    N2 = cap_steps(m, N, N2)
    if N2 < N:
        block, first = math.comb(N2 + m - 1, m - 1), math.comb(N2 + m, m)
        for n in range(N2 + m, top + 1):
            B[n, m] = first + (n - N2 - m) * block
        B[0, m + 1] = N2 + 1
    return B


@numba.njit(cache=True)
def table_cap(B):  # pragma: no cover - numba
    """The cap ``N2`` of a table of :func:`binomial_table` (``-1``: the full simplex)."""
    return B[0, B.shape[1] - 1] - 1


@numba.njit(cache=True)
def _rank(c, B):  # pragma: no cover - numba
    """Colex rank of the sorted tuple ``c`` (components within the table)."""
    s = 0
    for r in range(c.size):
        s += B[c[r] + r, r + 1]
    return s


@numba.njit(cache=True)
def unrank(rank, B, c):  # pragma: no cover - numba
    """Write the sorted tuple of colex rank ``rank`` into ``c`` (greedy, largest first)."""
    m = c.size
    rest = rank
    hi = B.shape[0] - 1
    for r in range(m - 1, -1, -1):
        n = hi
        while B[n, r + 1] > rest:
            n -= 1
        c[r] = n - r
        rest -= B[n, r + 1]
        hi = n - 1


@numba.njit(cache=True)
def next_colex(c, N, N2):  # pragma: no cover - numba
    """Advance ``c`` to the next sorted tuple in colex order (within ``0..N``, the
    second-largest component within ``N2``; ``N2 = N``: no cap)."""
    m = c.size
    for r in range(m):
        top = c[r + 1] if r + 1 < m else N
        if r == m - 2 and top > N2:
            top = N2
        if c[r] < top:
            c[r] += 1
            for s in range(r):
                c[s] = 0
            return


@numba.njit(cache=True)
def _predecessors(m, N, N2, B, out):  # pragma: no cover - numba
    """Rank of ``c - 1`` on the positive components, -1 at the origin."""
    c = np.zeros(m, dtype=np.int64)
    d = np.empty(m, dtype=np.int64)
    for s in range(out.size):
        pos = False
        for r in range(m):
            if c[r] > 0:
                d[r] = c[r] - 1
                pos = True
            else:
                d[r] = 0
        out[s] = _rank(d, B) if pos else -1
        next_colex(c, N, N2)


def rank_of(c: NDArray[np.int64], B: NDArray[np.int64]) -> int:
    """Colex rank of one sorted tuple (a numpy wrapper of the kernels' function)."""
    return int(_rank(np.ascontiguousarray(c, dtype=np.int64), B))


def colex_states(m: int, N: int, N2: int | None = None) -> NDArray[np.int64]:
    """The sorted states in storage (colex) order, shape ``(n_sorted_states(m, N, N2), m)``
    (those within the cap ``N2``, if given).

    Examples
    --------
    >>> colex_states(3, 1).tolist()
    [[0, 0, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]]
    """
    n = n_sorted_states(m, N, N2)
    out = np.empty((n, m), dtype=np.int64)
    _fill_states(N, cap_steps(m, N, N2), out)
    return out


@numba.njit(cache=True)
def _fill_states(N, N2, out):  # pragma: no cover - numba
    c = np.zeros(out.shape[1], dtype=np.int64)
    for s in range(out.shape[0]):
        out[s] = c
        next_colex(c, N, N2)


@numba.njit(cache=True)
def _fill_block(N, N2, start, B, out):  # pragma: no cover - numba
    c = np.empty(out.shape[1], dtype=np.int64)
    unrank(start, B, c)
    for s in range(out.shape[0]):
        out[s] = c
        next_colex(c, N, N2)


def colex_block(m: int, N: int, start: int, stop: int, N2: int | None = None
                ) -> NDArray[np.int64]:
    """The sorted states of colex ranks ``start <= rank < stop`` (a slice of
    :func:`colex_states` without the whole array).

    Examples
    --------
    >>> colex_block(3, 2, 2, 5).tolist() == colex_states(3, 2)[2:5].tolist()
    True
    """
    stop = min(stop, n_sorted_states(m, N, N2))
    out = np.empty((max(stop - start, 0), m), dtype=np.int64)
    if out.shape[0]:
        _fill_block(N, cap_steps(m, N, N2), start, binomial_table(m, N, N2=N2), out)
    return out


def predecessors(m: int, N: int, B: NDArray[np.int64], N2: int | None = None
                 ) -> NDArray[np.int64]:
    """Rank of the diagonal predecessor of every stored state (``-1`` for the origin); ``B``
    is the table of the same cap ``N2``."""
    out = np.empty(n_sorted_states(m, N, N2), dtype=np.int64)
    _predecessors(m, N, cap_steps(m, N, N2), B, out)
    return out


@numba.njit(cache=True)
def _sorted_rank(idx, tmp, B):  # pragma: no cover - numba
    """Rank of the multiset ``idx`` (any order): insertion sort into ``tmp``, then rank."""
    m = idx.size
    for r in range(m):
        x = idx[r]
        j = r
        while j > 0 and tmp[j - 1] > x:
            tmp[j] = tmp[j - 1]
            j -= 1
        tmp[j] = x
    return _rank(tmp, B)


#: No cross term of the tail (:func:`cross_slope`): the slope beyond ``U`` is ``tail_slope``.
NO_CROSS = np.zeros(0)


@numba.njit(cache=True, inline="always")
def cross_slope(tail_cross, f):  # pragma: no cover - numba
    r"""The tail's cross term :math:`\varphi` at ``f`` steps of the other components' sum:
    linear interpolation in ``tail_cross`` (:math:`\varphi` at ``0, 1, 2, ...`` steps; the
    last segment continued beyond its end), 0 for an empty table."""
    n = tail_cross.size
    if n == 0:
        return 0.0
    if n == 1:
        return tail_cross[0]
    i = int(f)
    if i > n - 2:
        i = n - 2
    t = f - i
    return (1.0 - t) * tail_cross[i] + t * tail_cross[i + 1]


@numba.njit(cache=True)
def simplex_value(V, B, N, delta, c_M, u, tail_slope=0.0, tail_cross=NO_CROSS
                  ):  # pragma: no cover - numba
    r"""Multilinear interpolation of the packed value ``V`` at backlogs ``u`` (any order).

    Components beyond :math:`U = N\delta` are clamped to ``U`` and add the analytic tail
    :math:`c_M(u_i^2 - U^2) + (\beta + \varphi(\sigma_i))(u_i - U)` with :math:`\beta` =
    ``tail_slope`` (default 0: the quadratic tail alone, as
    :func:`~symq.dispatch.policies.decisions.lookup_value`) and :math:`\varphi` the cross term
    ``tail_cross`` (:func:`cross_slope`) at the sum :math:`\sigma_i` of the other components
    clamped to ``U`` (:class:`~symq.dispatch.vi.boundary.Tail`; default none); each of the
    :math:`2^m` corners is sorted and ranked.  With the table ``B`` of a capped simplex
    (:func:`table_cap`) a corner beyond the cap counts :data:`FORBIDDEN`.
    """
    m = u.size
    U = N * delta
    extra = 0.0
    i0 = np.empty(m, dtype=np.int64)
    t = np.empty(m)
    for r in range(m):
        x = u[r]
        if x > U:
            slope = tail_slope
            if tail_cross.size > 0:
                sig = 0.0
                for q in range(m):
                    if q != r:
                        sig += min(u[q], U)
                slope += cross_slope(tail_cross, sig / delta)
            extra += c_M * (x * x - U * U) + slope * (x - U)
            x = U
        f = x / delta
        i = int(f)
        if i >= N:
            i = N - 1
        i0[r] = i
        t[r] = f - i
    idx = np.empty(m, dtype=np.int64)
    tmp = np.empty(m, dtype=np.int64)
    N2 = table_cap(B)
    out = 0.0
    for corner in range(1 << m):
        w = 1.0
        for r in range(m):
            if (corner >> r) & 1:
                idx[r] = i0[r] + 1
                w *= t[r]
            else:
                idx[r] = i0[r]
                w *= 1.0 - t[r]
        if w != 0.0:
            rank = _sorted_rank(idx, tmp, B)
            if m >= 2 and 0 <= N2 < tmp[m - 2]:
                out += w * FORBIDDEN
            else:
                out += w * V[rank]
    return out + extra


@numba.njit(cache=True, parallel=True)
def _values_at_states(V, B, N, delta, c_M, tail_slope, tail_cross, states, step, cap, out
                      ):  # pragma: no cover - numba
    n, m = states.shape
    chunks = (n + 4095) // 4096
    for ch in numba.prange(chunks):
        u = np.empty(m)
        for s in range(ch * 4096, min(n, (ch + 1) * 4096)):
            for r in range(m):
                x = states[s, r] * step
                if r < m - 1 and x > cap:
                    x = cap
                u[r] = x
            out[s] = simplex_value(V, B, N, delta, c_M, u, tail_slope, tail_cross)


def values_at_states(V: NDArray[np.float64], N: int, delta: float, c_M: float,
                     tail_slope: float, states: NDArray[np.int64], step: float,
                     N2: int | None = None, tail_cross: NDArray[np.float64] | None = None
                     ) -> NDArray[np.float64]:
    """:func:`simplex_value` of the packed value ``V`` (``N`` steps of ``delta``, the capped
    simplex of ``N2`` if given, the tail's cross term ``tail_cross`` if given) at the sorted
    lattice states ``states`` of another step ``step`` (rows of lattice indices), the lower
    components clamped to the cap ``N2 delta``: the warm start of a grid from another one,
    compiled and parallel over the states.

    Examples
    --------
    >>> B = binomial_table(3, 2)
    >>> V = colex_states(3, 2).sum(axis=1).astype(float)      # v(c) = c_0 + c_1 + c_2 (linear)
    >>> values_at_states(V, 2, 1.0, 0.0, 0.0, np.array([[0, 1, 3]]), 0.5).tolist()
    [2.0]
    """
    states = np.ascontiguousarray(states, dtype=np.int64)
    out = np.empty(states.shape[0])
    m = states.shape[1]
    N2 = cap_steps(m, N, N2)
    _values_at_states(np.ascontiguousarray(V, dtype=np.float64), binomial_table(m, N, N2=N2),
                      N, float(delta), float(c_M), float(tail_slope),
                      NO_CROSS if tail_cross is None else np.ascontiguousarray(
                          tail_cross, dtype=np.float64), states, float(step),
                      N2 * float(delta) if N2 < N else math.inf, out)
    return out
