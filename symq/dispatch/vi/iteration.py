r"""Relative value iteration with Odoni bounds and Anderson mixing, and its result.

The iteration of Hyytiä & Righter (arXiv 2402.08142, Part 1) on one grid:
:math:`g_n = (Tv_n)(0)`, :math:`v_{n+1} = Tv_n - g_n`, with the Odoni bounds
:math:`\min(Tv_n - v_n) \le g \le \max(Tv_n - v_n)` at every step, which hold for any iterate:
the iterate may therefore be accelerated by Anderson mixing (memory 3) of the relative-VI steps
without changing the fixed point or the certified stopping rule.  :class:`VIResult` holds the
value on the stored grid and answers the questions asked of it: the interpolated value
:math:`v(u)` with the fixed analytic tail, the costs and decision
:math:`\arg\min_i\{u_i + x + v(u + x e_i)\}`, the size threshold :math:`x^*(u_1, u_2)`, the
diagonal constant of :math:`v(u, u) \approx c u^2`, and the table a simulator needs.

Examples
--------
>>> from symq.laws import Exponential
>>> from symq.dispatch.vi.solvers import evaluate_policy
>>> r = evaluate_policy("rnd", 1, 0.5, Exponential(1.0), delta=0.25, U=20.0)
>>> r.ET_low <= r.ET <= r.ET_high
True
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.result import Exactness, ResultBase

from ..simplex import FORBIDDEN, binomial_table
from .boundary import Tail
from .grid import DispatchGrid
from .passes import MODE_FULL, _Operator
from .planning import _time_limit

__all__ = ["VIResult", "FORBIDDEN"]


@numba.njit(cache=True)
def _anderson_gram(R, order, n, gram, rhs):  # pragma: no cover - numba
    """Gram matrix of the residual differences R[o[k+1]] - R[o[k]] (k < n, ``o = order``: the
    ring buffer's slots oldest first) and their products with the newest residual R[o[n]],
    in one pass without BLAS (no thread oversubscription)."""
    L = R.shape[1]
    for l in range(L):
        last = R[order[n], l]
        for a in range(n):
            da = R[order[a + 1], l] - R[order[a], l]
            rhs[a] += da * last
            for b in range(a, n):
                gram[a, b] += da * (R[order[b + 1], l] - R[order[b], l])
    for a in range(n):
        for b in range(a):
            gram[a, b] = gram[b, a]


@numba.njit(cache=True)
def _anderson_mix(x, F, order, n, gam):  # pragma: no cover - numba
    """x = F[o[n]] - sum_k gam_k (F[o[k+1]] - F[o[k]]), then x -= x[0] (v(0) = 0)."""
    for l in range(x.size):
        acc = F[order[n], l]
        for k in range(n):
            acc -= gam[k] * (F[order[k + 1], l] - F[order[k], l])
        x[l] = acc
    x0 = x[0]
    for l in range(x.size):
        x[l] -= x0


@numba.njit(cache=True)
def _step_flat(v, tv, f, r):  # pragma: no cover - numba
    """Fused relative step on a flat layout: f = Tv - g, r = (Tv - v) - g, Odoni bounds."""
    g = tv[0]
    lo = np.inf
    hi = -np.inf
    for l in range(v.size):
        d = tv[l] - v[l]
        lo = min(lo, d)
        hi = max(hi, d)
        f[l] = tv[l] - g
        r[l] = d - g
    return g, lo, hi


@numba.njit(cache=True)
def _step_triangle(v, tv, f, r):  # pragma: no cover - numba
    """The same on the triangle i <= j of a symmetric (N+1, N+1) array (packed row by row)."""
    n = v.shape[0]
    g = tv[0, 0]
    lo = np.inf
    hi = -np.inf
    idx = 0
    for i in range(n):
        for j in range(i, n):
            d = tv[i, j] - v[i, j]
            lo = min(lo, d)
            hi = max(hi, d)
            f[idx] = tv[i, j] - g
            r[idx] = d - g
            idx += 1
    return g, lo, hi


@numba.njit(cache=True)
def _unpack_triangle(x, v):  # pragma: no cover - numba
    """Write the packed triangle ``x`` into both halves of the symmetric array ``v``."""
    n = v.shape[0]
    idx = 0
    for i in range(n):
        for j in range(i, n):
            v[i, j] = x[idx]
            v[j, i] = x[idx]
            idx += 1


@numba.njit(cache=True)
def _pack_triangle(v, x):  # pragma: no cover - numba
    """The triangle i <= j of ``v`` into ``x``, row by row."""
    n = v.shape[0]
    idx = 0
    for i in range(n):
        for j in range(i, n):
            x[idx] = v[i, j]
            idx += 1


class _FlatLayout:
    """A flat layout: every entry of the iterate (of shape ``shape``) is stored.

    The layout protocol of :func:`_relative_iteration`: ``shape`` (of the iterate the
    operator reads and writes), ``size`` (stored entries, the length of the Anderson rows),
    ``step(v, tv, f, r)`` (the fused relative step and Odoni bounds, returning
    ``(g, g_low, g_high)``) and ``unpack(x, v)`` (a stored vector back into the iterate).
    Used as is for the full time lattice of servers of different speeds
    (:mod:`symq.dispatch.vi.speed_solvers`).
    """

    triangle = False

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.size = int(np.prod(self.shape))

    def step(self, v: NDArray[np.float64], tv: NDArray[np.float64], f: NDArray[np.float64],
             r: NDArray[np.float64]) -> tuple[float, float, float]:
        """``f = Tv - g``, ``r = (Tv - v) - g`` on the stored entries; ``(g, g_low, g_high)``."""
        return _step_flat(v.reshape(-1), tv.reshape(-1), f, r)

    def unpack(self, x: NDArray[np.float64], v: NDArray[np.float64]) -> None:
        """Write the stored entries ``x`` into the iterate ``v``."""
        v.reshape(-1)[:] = x

    def pack(self, v: NDArray[np.float64],
             out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """The stored entries of ``v`` (into ``out`` if given)."""
        if out is None:
            out = np.empty(self.size)
        out[:] = v.reshape(-1)
        return out


class _Layout(_FlatLayout):
    """The stored entries of an iterate: packed (Anderson, bounds) vs the array the passes use.

    ``m = 2`` with symmetry stores the full symmetric array for the kernels and packs its
    triangle; every other case is flat already (``m = 1``, the packed simplex, the full
    lattice of a non-symmetric policy).
    """

    def __init__(self, grid: DispatchGrid, mode: int) -> None:
        super().__init__(grid.shape())
        self.triangle = grid.m == 2 and mode != MODE_FULL
        if self.triangle:
            self.size = grid.n_states

    def step(self, v: NDArray[np.float64], tv: NDArray[np.float64], f: NDArray[np.float64],
             r: NDArray[np.float64]) -> tuple[float, float, float]:
        if self.triangle:
            return _step_triangle(v, tv, f, r)
        return super().step(v, tv, f, r)

    def unpack(self, x: NDArray[np.float64], v: NDArray[np.float64]) -> None:
        if self.triangle:
            _unpack_triangle(x, v)
        else:
            super().unpack(x, v)

    def pack(self, v: NDArray[np.float64],
             out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        if not self.triangle:
            return super().pack(v, out)
        if out is None:
            out = np.empty(self.size)
        _pack_triangle(v, out)
        return out


def _iterate(grid: DispatchGrid, mode: int, table: NDArray[np.int8] | None,
             v0: NDArray[np.float64] | None, tol: float, tol_g: float | None,
             span_cap: float | None, max_iter: int, progress: bool, label: str,
             anderson: int = 3, span_rtol: float | None = None
             ) -> tuple[NDArray[np.float64], float, float, float, int, float]:
    """Relative VI on one :class:`DispatchGrid`; returns (v, g, g_low, g_high, iterations, span).

    :func:`_relative_iteration` with the operator :class:`~symq.dispatch.vi.passes._Operator`
    of ``mode`` (and decision ``table``) and the layout :class:`_Layout` of the grid.
    """
    return _relative_iteration(_Operator(grid, mode, table), _Layout(grid, mode), v0, tol,
                               tol_g, span_cap, max_iter, progress, label, anderson=anderson,
                               span_rtol=span_rtol, delta=grid.delta)


def _relative_iteration(op: Callable[[NDArray[np.float64], NDArray[np.float64]], None],
                        lay: _FlatLayout, v0: NDArray[np.float64] | None, tol: float,
                        tol_g: float | None, span_cap: float | None, max_iter: int,
                        progress: bool, label: str, anderson: int = 3,
                        span_rtol: float | None = None, delta: float = math.nan
                        ) -> tuple[NDArray[np.float64], float, float, float, int, float]:
    r"""Relative VI of any operator; returns (v, g, g_low, g_high, iterations, span).

    ``op(v, tv)`` writes :math:`Tv` into ``tv`` (arrays of shape ``lay.shape``); ``lay``
    follows the layout protocol of :class:`_FlatLayout` (the stored entries, the fused step
    with the Odoni bounds, the unpacking of a mixed iterate).  The iteration of Hyytiä &
    Righter (arXiv 2402.08142, Part 1): :math:`g_n = (Tv_n)(0)`, :math:`v_{n+1} = Tv_n - g_n`.

    Stops when the Odoni span is below ``tol`` (or below ``span_rtol * g``), or on
    ``|g_n - g_{n-1}| < tol_g`` with ``span < span_cap``.  The iterate is updated by Anderson
    mixing (memory ``anderson``) of the last relative-VI steps ``F(v) = Tv - (Tv)(0)``, kept
    in ring buffers over the stored (packed) entries only; it is reset to a plain VI step
    whenever the span grows tenfold.  Acceleration only changes the iterate: the Odoni bounds
    ``min(Tv - v) <= g <= max(Tv - v)`` hold for any ``v``, so the stopping rule and the
    bracket stay certified and the fixed point is unchanged.  ``delta`` only labels the
    progress bar.

    Raises
    ------
    NotConverged
        A non-finite iterate, or ``max_iter`` reached (the message and the attributes
        ``g_low``, ``g_high`` give the last Odoni bounds).
    """
    v = np.zeros(lay.shape) if v0 is None else np.array(v0, dtype=float).reshape(lay.shape)
    tv = np.empty_like(v)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=max_iter, desc=f"{label} delta={delta:g}", leave=False)
    g_prev = math.nan
    g_low = g_high = span = math.nan
    slots = max(anderson, 0) + 1
    hist_f = np.empty((slots, lay.size))
    hist_r = np.empty((slots, lay.size))
    x = np.empty(lay.size)
    filled = 0
    newest = -1
    best_span = math.inf
    # the up-front estimate cannot see slow mixing (a server 1000 times slower): a deadline of
    # twice the value-iteration time limit ends the run with its residual instead of a hang
    limit = _time_limit()
    deadline = time.perf_counter() + 2.0 * limit
    try:
        for it in range(1, max_iter + 1):
            if it > 1 and time.perf_counter() > deadline:
                raise NotConverged(f"{label} (stopped at twice the value-iteration time limit, "
                                   f"{2.0 * limit:g} s)", span, tol, it - 1,
                                   advice="the servers' speeds or the load make it mix slowly; "
                                   "coarsen delta, or raise SYMQ_VI_TIME_LIMIT")
            op(v, tv)
            newest = (newest + 1) % slots
            gn, g_low, g_high = lay.step(v, tv, hist_f[newest], hist_r[newest])
            span = g_high - g_low
            if bar is not None:
                bar.update(1)
                bar.set_postfix(span=f"{span:.2e}", g=f"{gn:.8f}")
            if not math.isfinite(span):
                raise NotConverged(f"{label} (non-finite iterate)", span, tol, it)
            done = span < tol or (span_rtol is not None and span < span_rtol * abs(gn))
            if tol_g is not None and abs(gn - g_prev) < tol_g \
                    and (span_cap is None or span < span_cap):
                done = True
            g_prev = gn
            if span > 10 * best_span:
                filled = 0
            best_span = min(best_span, span)
            filled = min(filled + 1, slots)
            if done or anderson <= 0 or filled < 2:
                np.subtract(tv, gn, out=v)            # the plain relative-VI step
                if done:
                    return v, gn, g_low, g_high, it, span
                continue
            n = filled - 1
            order = np.array([(newest - n + k) % slots for k in range(n + 1)], dtype=np.int64)
            gram = np.zeros((n, n))
            rhs = np.zeros(n)
            _anderson_gram(hist_r, order, n, gram, rhs)
            try:
                gam = np.linalg.solve(gram + 1e-14 * np.trace(gram) * np.eye(n), rhs)
            except np.linalg.LinAlgError:
                gam = np.zeros(n)
            if not np.all(np.isfinite(gam)):
                gam = np.zeros(n)
            _anderson_mix(x, hist_f, order, n, gam)
            lay.unpack(x, v)
    finally:
        if bar is not None:
            bar.close()
    raise _unconverged(label, span, tol, max_iter, g_low, g_high)


def _unconverged(label: str, span: float, tol: float, iterations: int, g_low: float,
                 g_high: float) -> NotConverged:
    """The :class:`NotConverged` of an iteration that ran out of budget: its message gives the
    last Odoni bounds, also kept as the attributes ``g_low``, ``g_high``."""
    err = NotConverged(label, span, tol, iterations)
    err.args = (f"{err.args[0]}; Odoni bounds {g_low:.10g} <= g <= {g_high:.10g}",)
    err.g_low, err.g_high = g_low, g_high  # type: ignore[attr-defined]
    return err


@dataclass(frozen=True)
class VIResult(ResultBase):
    r"""Outcome of relative value iteration on one grid.

    The average cost per job of the Bellman equations is the mean response time, so it is
    :attr:`ET` here (the ``g`` of Hyytiä & Righter, arXiv 2402.08142).

    Attributes
    ----------
    ET : float
        Mean response time estimate :math:`g = (Tv)(0)` at the last iterate.
    ET_low, ET_high : float
        Odoni bounds :math:`\min(Tv - v) \le g \le \max(Tv - v)` for the discretised,
        truncated MDP (not for the continuous model: see
        :func:`~symq.dispatch.vi.multigrid.richardson`).
    v : numpy.ndarray
        Relative values on the stored grid (:math:`v(0) = 0`; layout in the docstring of
        :mod:`symq.dispatch.vi.solvers`).
    delta, U : float
    m : int
    lam, rho : float
    iterations : int
        Iterations on this grid (:attr:`total_iterations` adds the warm-start levels and the
        sweeps of the correction grid).
    residual : float
        The final Odoni span ``ET_high - ET_low`` (the stopping rule is ``residual < tol``).
    policy : str
        ``"optimal"``, ``"rnd"``, ``"lwl"`` or ``"table"``.
    c_M : float
        Tail curvature used beyond ``U``.
    tail_slope : float
        Linear coefficient of the tail: a coordinate ``U + s`` adds
        ``c_M((U + s)^2 - U^2) + tail_slope s`` (0 for the equal split's tail), plus the
        cross term's share.
    tail_cross : numpy.ndarray, optional
        The tail's cross term :math:`\varphi` at the other coordinates' sums ``0, delta,
        2 delta, ...`` (:class:`~symq.dispatch.vi.boundary.Tail`): a coordinate ``U + s``
        adds ``phi(sigma) s`` more, ``sigma`` the sum of the others clamped to ``U``.  None:
        no cross term.
    curvatures : numpy.ndarray, optional
        Per-server tail curvatures (servers of different speeds, :attr:`symmetric` false);
        when given they replace :attr:`c_M` component by component.
    symmetric : bool
        Whether ``v`` is symmetric in the servers (stored on sorted states); ``False`` for a
        fixed policy evaluated on the full lattice (``m = 2``), whose ``v[i, j]`` is the value
        at backlogs ``(i delta, j delta)`` in server order.
    seconds : float
        Wall time including warm-start levels.
    U2 : float, optional
        The cap on the second-largest backlog (``m >= 3``,
        :meth:`~symq.dispatch.vi.grid.DispatchGrid.build`): ``v`` and :attr:`ET` are those
        of the optimal policy among those that never make the second-largest backlog exceed
        ``U2``.  Only the states within the cap are stored (the capped simplex of
        :mod:`symq.dispatch.simplex`); :meth:`value` is :data:`FORBIDDEN` beyond it (a
        decision into them is never chosen).  None: no cap.
    levels : list of (delta, iterations, ET)
        One entry per grid solved, coarse first; the grid of step ``2 delta`` that corrected
        this one (:mod:`~symq.dispatch.vi.coarse_correction`) is listed with its sweeps and
        this grid's ``ET``.
    method : str
    exactness : Exactness
        ``numeric``: the value of the discretised problem.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "ET_low", "ET_high", "policy", "delta", "U")
    uncertainty: ClassVar[Mapping[str, tuple[str, str]]] = {"ET": ("ET_low", "ET_high")}

    ET: float
    ET_low: float
    ET_high: float
    v: NDArray[np.float64] = field(repr=False)
    delta: float
    U: float
    m: int
    lam: float
    rho: float
    iterations: int
    residual: float
    policy: str = "optimal"
    c_M: float = 0.0
    symmetric: bool = True
    total_iterations: int = 0
    seconds: float = 0.0
    levels: list[tuple[float, int, float]] = field(default_factory=list, repr=False)
    method: str = "relative value iteration (Odoni bounds, Anderson mixing)"
    curvatures: NDArray[np.float64] | None = field(default=None, repr=False)
    tail_slope: float = 0.0
    U2: float | None = None
    exactness: Exactness = Exactness.NUMERIC
    tail_cross: NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def N(self) -> int:
        """Number of grid steps."""
        return int(round(self.U / self.delta))

    def full(self) -> NDArray[np.float64]:
        """The value on the full (unsorted) lattice ``{0..N}^m`` (``m <= 3``)."""
        N = self.N
        if self.m in (1, 2):
            return np.array(self.v, dtype=np.float64)
        if self.m > 3:
            raise InvalidParameter("m", self.m, "at most 3 for full() (the full lattice of "
                                   f"{self.m} servers has {(N + 1) ** self.m:.3g} points)")
        idx = np.indices((N + 1,) * 3).reshape(3, -1).T
        return self._lookup(np.sort(idx, axis=1)).reshape((N + 1,) * 3)

    def _lookup(self, s: NDArray[np.int64]) -> NDArray[np.float64]:
        """v at sorted lattice points ``s`` (shape (..., m)), components within ``0..N``."""
        if self.m == 1:
            return self.v[s[..., 0]]
        if self.m == 2 or not self.symmetric:          # a full lattice in server order
            return self.v[tuple(s[..., r] for r in range(self.m))]
        B = self.binomials
        N2 = self.N2
        if N2 is None:
            return self.v[sum(B[s[..., r] + r, r + 1] for r in range(self.m))]
        inside = s[..., self.m - 2] <= N2
        t = np.where(inside[..., None], s, 0)
        return np.where(inside, self.v[sum(B[t[..., r] + r, r + 1] for r in range(self.m))],
                        FORBIDDEN)

    @property
    def tail(self) -> Tail:
        """The tail beyond :attr:`U` (:class:`~symq.dispatch.vi.boundary.Tail`): the one this
        grid was solved with."""
        if self.tail_cross is None:
            return Tail(self.c_M, self.tail_slope)
        return Tail(self.c_M, self.tail_slope, self.delta,
                    tuple(float(x) for x in self.tail_cross))

    @property
    def N2(self) -> int | None:
        """The cap :attr:`U2` in steps (None without a cap)."""
        return None if self.U2 is None else int(round(self.U2 / self.delta))

    @functools.cached_property
    def binomials(self) -> NDArray[np.int64]:
        """The rank table of the packed (capped) simplex (``m >= 3``,
        :mod:`symq.dispatch.simplex`)."""
        return binomial_table(self.m, self.N, N2=self.N2)

    def value(self, u: ArrayLike) -> NDArray[np.float64]:
        r"""Interpolated relative value :math:`v(u)` at arbitrary backlog vectors.

        Multilinear interpolation on the lattice, symmetric in the components (unless
        :attr:`symmetric` is false); a component
        beyond ``U`` gets the fixed analytic tail
        :math:`c_M(u_i^2 - U^2) + (b + \varphi(\sigma_i))(u_i - U)` (``b`` =
        :attr:`tail_slope`, :math:`\varphi` = :attr:`tail_cross` at the sum :math:`\sigma_i`
        of the other components clamped to ``U``).

        Parameters
        ----------
        u : array_like, shape (..., m)

        Returns
        -------
        numpy.ndarray, shape (...)
        """
        u = np.asarray(u, dtype=float)
        if u.shape[-1:] != (self.m,):
            raise InvalidParameter("u", u, f"an array of backlog vectors with last axis {self.m}")
        if np.any(u < 0) or not np.all(np.isfinite(u)):
            raise InvalidParameter("u", u, "finite backlogs >= 0")
        U = self.U
        curv = self.c_M if self.curvatures is None else np.asarray(self.curvatures)
        slope = self.tail_slope
        if self.tail_cross is not None:
            clamped = np.minimum(u, U)
            others = clamped.sum(axis=-1, keepdims=True) - clamped
            slope = slope + self.tail.cross_at(others)
        extra = np.where(u > U, curv * (u * u - U * U) + slope * (u - U), 0.0).sum(axis=-1)
        x = np.minimum(u, U) / self.delta
        i0 = np.minimum(np.floor(x).astype(np.int64), self.N - 1)
        t = x - i0
        out = np.zeros(u.shape[:-1])
        for corner in range(2 ** self.m):
            bits = np.array([(corner >> d) & 1 for d in range(self.m)])
            idx = i0 + bits
            w = np.prod(np.where(bits == 1, t, 1.0 - t), axis=-1)
            out += w * self._lookup(np.sort(idx, axis=-1) if self.symmetric else idx)
        return out + extra

    def costs(self, u: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        r"""Cost :math:`u_i + x + v(u + x e_i)` of each server, shape ``(..., m)``."""
        u = np.asarray(u, dtype=float)
        x = np.asarray(x, dtype=float)[..., None]
        u, x = np.broadcast_arrays(u, x)
        eye = np.eye(self.m)
        cand = u[..., None, :] + x[..., None, :] * eye           # (..., m servers, m comps)
        return u + x + self.value(cand)

    def decision(self, u: ArrayLike, x: ArrayLike) -> NDArray[np.int64]:
        r"""Optimal server :math:`\arg\min_i\{u_i + x + v(u + x e_i)\}` (vectorised).

        ``u`` has shape ``(..., m)`` in any order, ``x`` broadcasts against ``u[..., 0]``;
        the index refers to the order of ``u``; ties go to the lowest index.
        """
        return np.argmin(self.costs(u, x), axis=-1)

    def threshold(self, u1: float, u2: float, x_max: float | None = None,
                  step: float | None = None) -> float:
        r"""Size :math:`x^*(u_1, u_2)` above which a job goes to the longer queue (``m = 2``).

        Scans ``x`` on ``(0, x_max]`` (default ``U``) with step ``delta/4`` and refines the
        first sign change of the cost difference linearly; ``inf`` if the shorter queue is
        preferred for every scanned size.
        """
        if self.m != 2:
            raise InvalidParameter("m", self.m, "2 for threshold()")
        lo_u, hi_u = sorted((float(u1), float(u2)))
        if hi_u == lo_u:
            return math.inf
        x_max = self.U if x_max is None else float(x_max)
        step = self.delta / 4 if step is None else float(step)
        xs = np.arange(step, x_max + 0.5 * step, step)
        c = self.costs(np.array([lo_u, hi_u]), xs)
        d = c[:, 0] - c[:, 1]               # > 0: the longer queue is cheaper
        pos = np.nonzero(d > 0)[0]
        if pos.size == 0:
            return math.inf
        k = int(pos[0])
        if k == 0:
            return float(xs[0])
        x0, x1, d0, d1 = xs[k - 1], xs[k], d[k - 1], d[k]
        return float(x0 + (x1 - x0) * (-d0) / (d1 - d0))

    def diagonal_constant(self, u_min: float = 2.0, u_max: float | None = None) -> float:
        r"""Least-squares ``c`` in :math:`v(u, \dots, u) \approx c u^2` on ``[u_min, u_max]``."""
        u_max = self.U / 2 if u_max is None else float(u_max)
        us = np.arange(0, self.N + 1) * self.delta
        us = us[(us >= u_min) & (us <= u_max)]
        vals = self.value(np.repeat(us[:, None], self.m, axis=1))
        return float((vals * us ** 2).sum() / (us ** 4).sum())

    def export_table(self) -> tuple[NDArray[np.float64], float, float]:
        """``(v on the full (N+1, N+1) grid, delta, c_M)`` for a simulator (``m = 2``)."""
        if self.m != 2:
            raise InvalidParameter("m", self.m, "2 for export_table()")
        return np.ascontiguousarray(self.v, dtype=np.float64), self.delta, self.c_M
