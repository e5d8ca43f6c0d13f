"""The result of the general window solver: the stationary law as a :class:`WindowSolution`.

:func:`symq.window.numeric.solve_window` returns it.  Its distribution functions and moments
come from the finest discretisation level of the embedded post-loss chain, by Palm inversion
(the time-stationary law from the laws of the window just before and just after a loss).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.parameters import real_value
from symq.core.result import Exactness, ResultBase
from symq.laws import Distribution, probabilities_in_unit_interval

from .grid import _GW, _GX, _Profiles
from .level import _F_at, _G_at, _Level, _S_at, _SG_at, _time_gap

__all__ = ["WindowSolution"]


@dataclass(frozen=True)
class WindowSolution(ResultBase, Distribution):
    """Stationary law of an adaptive window protocol computed by :func:`solve_window`.

    Time-stationary quantities (``pdf``, ``cdf``, moments, ``atom_at_cap``) come from the Palm
    inversion of the embedded post-loss chain (``derivations/awp.md``, section "General
    profiles"); ``pre_loss_cdf`` and ``post_loss_cdf`` are the Palm laws of the window just before
    and just after a loss.  A result (:class:`~symq.core.result.ResultBase`: ``to_dict()``, a
    short ``str``) and a :class:`~symq.laws.Distribution` of the window (``pdf``,
    ``cdf``, ``ccdf``, ``icdf``, ``moment(order, kind)``, ``mean()``, ``variance()``,
    ``sample``, ``to_scipy()``).

    Attributes
    ----------
    grid : ndarray
        Nodes (window values) of the finest logarithmic grid.
    mean_window, mean_square_window : float
        ``E[W]``, ``E[W^2]`` (time averages; throughput is ``E[W]/RTT``); ``mean()`` returns
        ``mean_window``.
    loss_rate : float
        ``E[lam(W)] = 1/E0[T]``, losses per RTT.
    atom_at_cap : float
        Fraction of time spent at ``w_max`` (0 without a cap).
    error_estimate : float
        Estimated relative error of ``mean_window`` and ``loss_rate`` (a posteriori, from the
        successive grid refinements).
    grid_size : int
        Number of grid nodes of the finest level.
    drift_balance : float
        ``E[a(W) 1{W < w_max}] - E[lam(W) (W - max(d(W), w_min))]``, the mean-drift identity of
        rate conservation (``E[a(W)] = E[lam(W) b(W) W]`` without bounds, ``derivations/awp.md``,
        step "Mean drift balance"); about 0.
    mass_outside : float
        Estimated probability mass beyond the ends of the grid.
    w_min, w_max : float
        The floor and the cap.
    history : list of tuple
        ``(grid_size, mean, loss_rate)`` of every refinement level.
    method : str
        ``"numeric (embedded post-loss chain)"``.
    exactness : Exactness
        ``numeric``.
    """

    summary: ClassVar[tuple[str, ...]] = ("mean_window", "loss_rate", "error_estimate")
    uncertainty: ClassVar[Mapping[str, str]] = {"mean_window": "relative error_estimate"}

    grid: NDArray[np.float64] = field(repr=False)
    mean_window: float
    mean_square_window: float
    loss_rate: float
    atom_at_cap: float
    error_estimate: float
    grid_size: int
    drift_balance: float
    mass_outside: float
    w_min: float
    w_max: float
    history: list[tuple[int, float, float]] = field(default_factory=list, repr=False)
    method: str = "numeric (embedded post-loss chain)"
    exactness: Exactness = Exactness.NUMERIC
    _level: _Level | None = field(default=None, repr=False)
    _prof: _Profiles | None = field(default=None, repr=False)

    # -- internal helpers ---------------------------------------------------------------
    def _S(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return _S_at(self._level, w)

    def _SG(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return _SG_at(self._level, self._prof, w)

    def _bounds(self) -> tuple[float, float]:
        u = self._level.grid.u
        return float(u[0]), float(u[-1])

    # -- public API ---------------------------------------------------------------------
    def pre_loss_cdf(self, w: ArrayLike) -> NDArray[np.float64] | float:
        """Palm cdf ``P0(W_pre <= w)`` of the window just before a loss (atom at ``w_max``)."""
        x = np.asarray(w, dtype=float)
        lo, hi = self._bounds()
        out = np.where(x >= hi, 1.0, 0.0)
        inside = (x >= lo) & (x < hi)
        if np.any(inside):
            xi = x[inside]
            F = _F_at(self._level, xi)
            out[inside] = np.where(F < 0.5, F, 1.0 - self._S(xi))
        return float(out) if out.ndim == 0 else out

    def post_loss_cdf(self, w: ArrayLike) -> NDArray[np.float64] | float:
        """Palm cdf ``P0(Y <= w)`` of the window just after a loss (atom at ``w_min`` if any)."""
        x = np.asarray(w, dtype=float)
        lo, _ = self._bounds()
        out = np.zeros(x.shape)
        inside = x >= lo
        if np.any(inside):
            xi = x[inside]
            G = _G_at(self._level, self._prof, xi)
            out[inside] = np.where(G < 0.5, G, 1.0 - self._SG(xi))
        return float(out) if out.ndim == 0 else out

    def pdf(self, w: ArrayLike) -> NDArray[np.float64] | float:
        """Time-stationary density ``f(w) = (G(w) - F(w)) / (a(w) E0[T])``, atom excluded.

        Palm inversion: ``F`` and ``G`` are the Palm cdfs of the window just before and just
        after a loss.  The
        density is a difference of interpolated cdfs: its pointwise error is larger than that
        of the moments (about ``10 rtol`` of the maximum of ``a f`` in the examples of the
        test suite); ask a smaller ``rtol`` for accurate pointwise values.
        """
        x = np.asarray(w, dtype=float)
        lo, hi = self._bounds()
        out = np.zeros(x.shape)
        inside = (x >= lo) & (x < hi)
        if np.any(inside):
            xi = x[inside]
            val = _time_gap(self._level, self._prof, xi) / (self._prof.a(xi) * self._level.E0T)
            out[inside] = np.maximum(val, 0.0)
        return float(out) if out.ndim == 0 else out

    def _cell(self, t: NDArray[np.float64]) -> NDArray[np.intp]:
        """The grid cell holding each ``t = ln w`` (clipped to the cells of the grid)."""
        grid = self._level.grid
        return np.clip(np.searchsorted(grid.t, t, side="right") - 1, 0, grid.n_cells - 1)

    def _mass(self, t_from: NDArray[np.float64], span: NDArray[np.float64]
              ) -> NDArray[np.float64]:
        """Time-stationary ``P(t_from < ln W < t_from + span)`` for intervals inside one grid
        cell: Gauss-Legendre in ``ln w`` of ``w f(w)``, ``f`` the density by Palm inversion."""
        lev = self._level
        wp = np.exp(t_from[:, None] + span[:, None] * _GX[None, :])
        dens = _time_gap(lev, self._prof, wp.ravel()).reshape(wp.shape) \
            / (self._prof.a(wp) * lev.E0T)
        return np.sum(dens * wp * _GW[None, :], axis=1) * span

    def cdf(self, w: ArrayLike) -> NDArray[np.float64] | float:
        """Time-stationary cdf ``P(W <= w)`` (including the atom at ``w_max``)."""
        x = np.asarray(w, dtype=float)
        lev = self._level
        grid = lev.grid
        lo, hi = self._bounds()
        cum = np.concatenate([[0.0], np.cumsum(np.sum(lev.Dq, axis=1))]) / lev.E0T
        out = np.where(x >= hi, 1.0, 0.0)
        inside = (x >= lo) & (x < hi)
        if np.any(inside):
            tx = np.log(x[inside])
            j = self._cell(tx)
            span = tx - grid.t[j]
            out[inside] = np.clip(cum[j] + self._mass(grid.t[j], span), 0.0, 1.0)
        if lev.capped:
            out = np.where(x >= hi, 1.0, np.minimum(out, 1.0 - self.atom_at_cap))
        return float(out) if out.ndim == 0 else out

    def ccdf(self, w: ArrayLike) -> NDArray[np.float64] | float:
        """Time-stationary survival ``P(W > w)``, summed from the top (accurate in the tail)."""
        x = np.asarray(w, dtype=float)
        lev = self._level
        grid = lev.grid
        lo, hi = self._bounds()
        cells = np.sum(lev.Dq, axis=1) / lev.E0T
        suffix = np.concatenate([np.cumsum(cells[::-1])[::-1], [0.0]]) + self.atom_at_cap
        out = np.where(x >= hi, 0.0, 1.0)
        inside = (x >= lo) & (x < hi)
        if np.any(inside):
            tx = np.log(x[inside])
            j = self._cell(tx)
            span = grid.t[j + 1] - tx
            out[inside] = np.clip(suffix[j + 1] + self._mass(tx, span), 0.0, 1.0)
        return float(out) if out.ndim == 0 else out

    def expect(self, g: Callable[[NDArray[np.float64]], Any]) -> float:
        """Time average ``E[g(W)]`` by Palm inversion; ``g`` is vectorised."""
        lev = self._level
        gq = _Profiles._eval(g, lev.yq)
        g_cap = float(_Profiles._eval(g, np.array([lev.grid.u[-1]]))[0]) if lev.capped else 0.0
        return lev.expect_raw(gq, g_cap)

    def moment(self, order: float = 1, kind: str = "raw") -> float:
        """Time-average moment: ``raw`` ``E[W^s]`` for any finite real ``s = order`` (Palm
        inversion); ``central``/``standardized`` of an integer order as in
        :meth:`symq.laws.Distribution.moment`."""
        if kind != "raw":
            return Distribution.moment(self, order, kind)
        s = real_value("order", order, "a finite real number")
        return self.expect(lambda w: w ** s)

    def _raw_moment(self, order: int) -> float:
        return self.mean_window if order == 1 else self.moment(float(order))

    def mean(self) -> float:
        """``E[W]`` (the field ``mean_window``)."""
        return self.mean_window

    def support(self) -> tuple[float, float]:
        """The window range of the grid (the cap ``w_max`` when there is one)."""
        return self._bounds()

    def icdf(self, p: ArrayLike) -> NDArray[np.float64] | float:
        """Quantiles: the smallest window with ``cdf >= p``, by bisection in ``ln w``.

        All probabilities are bisected together (64 vectorised :meth:`cdf` calls), to the
        resolution of the doubles; ``p`` above ``1 - atom_at_cap`` gives the cap.

        Raises
        ------
        InvalidParameter
            A ``p`` outside [0, 1].
        """
        q = probabilities_in_unit_interval(p)
        lo, hi = self._bounds()
        t_lo = np.full(q.shape, np.log(lo))
        t_hi = np.full(q.shape, np.log(hi))
        for _ in range(64):
            mid = 0.5 * (t_lo + t_hi)
            below = np.asarray(self.cdf(np.exp(mid)), dtype=float) < q
            t_lo = np.where(below, mid, t_lo)
            t_hi = np.where(below, t_hi, mid)
        out = np.where(q <= 0, lo, np.where(q >= 1, hi, np.exp(t_hi)))
        return float(out) if out.ndim == 0 else out
