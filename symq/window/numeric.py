"""General numerical solver for the stationary law of an adaptive window protocol.

The model is the piecewise-deterministic process of Altman, Avrachenkov, Kherani and Prabhu
(*Performance analysis and stochastic stability of congestion control protocols*, IEEE INFOCOM
2005; reference note part B, sections B2-B4): between losses ``dW/dt = a(W)``, losses are
Poisson with rate ``lam(W)``, and at a loss ``W -> max(d(W), w_min)``; an optional cap ``w_max``
stops the growth, the window then waits at ``w_max`` for the next loss (rate ``lam(w_max)``).

Method (reference note B4)
--------------------------
Let ``Lambda(w) = int^w lam(u)/a(u) du`` be the cumulative loss hazard in window units.  The
window just before a loss, ``X = W_pre``, and just after it, ``Y``, form embedded chains with
``P(X > u | Y = y) = exp(-(Lambda(u) - Lambda(y)))`` for ``u >= y`` and ``Y' = max(d(X), w_min)``.
Writing ``F`` for the Palm cdf of ``X`` and ``G`` for that of ``Y``, an integration by parts
turns the transition into a *smooth* Volterra-type equation

.. math::  F(u) = \\int_{w_{\\min}}^{u} G(y)\\, \\Lambda'(y)\\, e^{-(\\Lambda(u) - \\Lambda(y))}\\, dy,
           \\qquad G(y) = F(d^{-1}(y)) \\quad (y \\ge w_{\\min}),

with ``G = 1`` above ``d(w_max)`` (the atom of ``X`` at the cap) or above ``d`` of the top of
the grid.  It is discretised on a logarithmic grid (uniform in ``ln w + Lambda(w)``, so that
no cell carries a large hazard increment): node-to-node recursion with Gauss-Legendre
quadrature in every cell, ``F(d^{-1}(y))`` by piecewise-cubic Lagrange interpolation in
``ln w`` (``d^{-1}`` by bisection on ``d`` itself), one sparse LU factorisation, and two solves:
one for ``F`` and one for the survival ``S = 1 - F`` (same matrix), both sums of nonnegative
terms, so that the lower and the upper tails keep their relative accuracy.  Palm inversion (B4) gives the time-stationary law:

.. math::  f(w) = \\frac{G(w) - F(w)}{a(w)\\, E_0[T]}, \\qquad
           E[g(W)] = \\frac{\\int g(u) (G(u) - F(u))/a(u)\\, du
           + P_0(X = w_{\\max})\\, g(w_{\\max})/\\lambda(w_{\\max})}{E_0[T]},

``E_0[T]`` being the same expression with ``g = 1``; the time spent at the cap is the atom
``atom_at_cap``.  The loss rate is ``1/E_0[T]`` (rate conservation, B3).

Error control: the grid extent is chosen from the deterministic loss cycle
(``Lambda(x) - Lambda(d(x)) = 1``) and checked a posteriori: the mass beyond the ends must be
below ``rtol/100`` and, at the top, the share of ``E[W]`` carried by a Pareto extrapolation of
the tail below ``rtol/10`` (a local tail exponent ``<= 1`` means ``E[W] = inf``).  The grid is then
refined by doubling until the a-posteriori (Richardson-type) error estimate of ``E[W]`` and of
the loss rate is below ``rtol``.  The discretisation is of fourth order for smooth profiles;
points where ``a``, ``lam`` or ``d`` jump or have a kink (HighSpeed TCP at ``w = 38``) are
placed on the grid, with their images under ``d``: given as ``breakpoints`` or detected
numerically.  Only ``E[W]`` and the loss rate are controlled; other moments, the cdfs and
(less accurately) the density come from the same finest grid.

Examples
--------
NewReno (``a = 1``, ``lam = p w``, ``d = w/2``): ``E[W^2] = 2/p`` exactly (reference note B3) and
``E[W] sqrt(p)`` is the Ott-Kemperman-Mathis constant.

>>> import numpy as np
>>> sol = solve_window(lambda w: np.ones_like(w), lambda w: 1e-2 * w, lambda w: 0.5 * w)
>>> round(sol.second_moment * 1e-2 / 2, 6), round(sol.mean * 0.1, 4)
(1.0, 1.3098)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged, StabilityError

__all__ = ["solve_window", "WindowSolution"]

Profile = Callable[[NDArray[np.float64]], Any]

_GX, _GW = np.polynomial.legendre.leggauss(4)
_GX = (_GX + 1.0) / 2.0          # nodes on [0, 1]
_GW = _GW / 2.0                  # weights on [0, 1]
_RX, _RW = np.polynomial.legendre.leggauss(6)
_RX = (_RX + 1.0) / 2.0
_RW = _RW / 2.0

_SAFETY = 2.0                    # safety factor of the a-posteriori error estimate
_PROBE_HALF_WIDTH = 35.0         # probe range anchor * exp(+-35)
_PROBE_STEP = 0.05


# --------------------------------------------------------------------------------------------
# input handling
# --------------------------------------------------------------------------------------------

def _real(name: str, value: Any, domain: str) -> float:
    """``float(value)`` for a real number (also sympy numbers such as ``oo``), else an error."""
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
        raise InvalidParameter(name, value, domain)
    if isinstance(value, (numbers.Real, np.floating, np.integer)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, domain) from None


class _Profiles:
    """Safe vectorised evaluation and validation of ``a``, ``lam``, ``d``."""

    def __init__(self, a: Profile, lam: Profile, d: Profile, w_min: float, w_max: float) -> None:
        for name, fn in (("a", a), ("lam", lam), ("d", d)):
            if not callable(fn):
                raise InvalidParameter(name, fn, "a vectorised callable of w")
        self.fa, self.flam, self.fd = a, lam, d
        self.w_min, self.w_max = w_min, w_max

    @staticmethod
    def _eval(fn: Profile, w: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(all="ignore"):
            v = np.asarray(fn(w), dtype=float)
        return np.array(np.broadcast_to(v, w.shape), dtype=float)

    def a(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._eval(self.fa, w)

    def lam(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._eval(self.flam, w)

    def d(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._eval(self.fd, w)

    @staticmethod
    def _first_bad(w: NDArray[np.float64], bad: NDArray[np.bool_]) -> int | None:
        hits = np.flatnonzero(bad.ravel())
        return None if hits.size == 0 else int(hits[np.argmin(w.ravel()[hits])])

    def validate(self, w: NDArray[np.float64], av: NDArray[np.float64] | None = None,
                 lv: NDArray[np.float64] | None = None, dv: NDArray[np.float64] | None = None
                 ) -> None:
        """Raise :class:`InvalidParameter` at the smallest sample ``w`` where a profile is bad."""
        w = np.asarray(w, dtype=float)
        checks = (
            ("a", self.a, av, lambda v: ~(np.isfinite(v) & (v > 0)),
             "a positive finite function of w (window growth per RTT)"),
            ("lam", self.lam, lv, lambda v: ~(np.isfinite(v) & (v > 0)),
             "a positive finite function of w (loss intensity)"),
            ("d", self.d, dv, lambda v: ~(np.isfinite(v) & (v < w) & (v >= 0)),
             "a function of w with 0 <= d(w) < w (window after a loss)"),
        )
        for name, fn, vals, is_bad, domain in checks:
            v = fn(w) if vals is None else vals
            k = self._first_bad(w, is_bad(v))
            if k is not None:
                raise InvalidParameter(name, float(v.ravel()[k]), domain,
                                       f"{name}(w) = {float(v.ravel()[k])!r} at w = {float(w.ravel()[k])!r}")
        if self.w_min == 0.0:
            v = self.d(w) if dv is None else dv
            k = self._first_bad(w, ~(v > 0))
            if k is not None:
                raise InvalidParameter("d", float(v.ravel()[k]), "positive when there is no floor w_min",
                                       f"d(w) = 0 at w = {float(w.ravel()[k])!r}")
        ws = np.sort(np.unique(w.ravel()))
        ds = np.maximum(self.d(ws), self.w_min)
        inc = np.diff(ds)
        above = ds[1:] > self.w_min
        k = self._first_bad(ws[1:], above & ~(inc > 0))
        if k is not None:
            raise InvalidParameter("d", float(ds[k + 1]), "an increasing function of w",
                                   f"d is not increasing near w = {float(ws[k + 1])!r}")


# --------------------------------------------------------------------------------------------
# grid, interpolation, inverse of d
# --------------------------------------------------------------------------------------------

class _Grid:
    """Logarithmic grid, uniform in ``psi = ln w + Lambda(w)`` within segments between breaks.

    The ``Lambda`` term keeps the hazard increment of a cell below ``h`` where the loss hazard
    varies quickly (the tail of the law).
    """

    def __init__(self, t_lo: float, t_hi: float, breaks: Sequence[float], h: float,
                 psi_t: NDArray[np.float64], psi_v: NDArray[np.float64], refine: int = 1) -> None:
        pts = [t_lo] + sorted(b for b in breaks if t_lo + 1e-9 < b < t_hi - 1e-9) + [t_hi]
        merged = [pts[0]]
        for b in pts[1:]:
            if b - merged[-1] > 1e-9:
                merged.append(b)
            else:
                merged[-1] = b if b == t_hi else merged[-1]
        merged[-1] = t_hi
        nodes, cell_seg, seg_lo, seg_hi = [], [], [], []
        start = 0
        for k, (s, e) in enumerate(zip(merged[:-1], merged[1:])):
            ps, pe = np.interp([s, e], psi_t, psi_v)
            n = max(4, int(math.ceil((pe - ps) / h - 1e-9))) * refine  # nested refinements
            seg = np.interp(np.linspace(ps, pe, n + 1), psi_v, psi_t)
            seg[0] = s
            nodes.append(seg[:-1])
            cell_seg.append(np.full(n, k))
            seg_lo.append(start)
            seg_hi.append(start + n)
            start += n
        nodes.append(np.array([t_hi]))
        self.t = np.concatenate(nodes)
        self.u = np.exp(self.t)
        self.u[0], self.u[-1] = math.exp(t_lo), math.exp(t_hi)
        self.cell_seg = np.concatenate(cell_seg)
        self.seg_lo = np.array(seg_lo)
        self.seg_hi = np.array(seg_hi)
        self.n_cells = self.t.size - 1
        self.h = np.diff(self.t)

    def stencil(self, tq: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Indices and weights of 4-point Lagrange interpolation (in ``ln w``) at ``tq``."""
        tq = np.clip(np.asarray(tq, dtype=float), self.t[0], self.t[-1])
        j = np.clip(np.searchsorted(self.t, tq, side="right") - 1, 0, self.n_cells - 1)
        s = self.cell_seg[j]
        start = np.clip(j - 1, self.seg_lo[s], self.seg_hi[s] - 3)
        idx = start[..., None] + np.arange(4)
        tn = self.t[idx]
        wts = np.ones(idx.shape)
        for m in range(4):
            for k in range(4):
                if k != m:
                    wts[..., m] *= (tq - tn[..., k]) / (tn[..., m] - tn[..., k])
        return idx, wts


def _dinv_log(prof: _Profiles, y: NDArray[np.float64], t_hi: float) -> NDArray[np.float64]:
    """``ln d^{-1}(y)`` by bisection in ``ln w`` on ``[ln y, t_hi]`` (requires ``d(e^t_hi) > y``)."""
    lo = np.log(y)
    hi = np.full_like(lo, t_hi)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        below = prof.d(np.exp(mid)) < y
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
        if np.max(hi - lo, initial=0.0) < 1e-15:
            break
    return 0.5 * (lo + hi)


# --------------------------------------------------------------------------------------------
# one discretisation level
# --------------------------------------------------------------------------------------------

@dataclass
class _Level:
    grid: _Grid
    S: NDArray[np.float64]          # Palm survival P0(W_pre > u) at the nodes
    F: NDArray[np.float64]          # Palm cdf P0(W_pre <= u) at the nodes (accurate when small)
    yq: NDArray[np.float64]         # quadrature points (cells x Q)
    wq: NDArray[np.float64]         # quadrature weights in w (cells x Q)
    aq: NDArray[np.float64]
    lq: NDArray[np.float64]
    dq: NDArray[np.float64]
    Dq: NDArray[np.float64]         # time weights (S - S_post)/a * wq
    atom_pre: float                 # P0(W_pre = w_max)
    E0T: float
    d_top: float                    # d(top of grid)
    capped: bool
    lam_cap: float

    def expect_raw(self, gq: NDArray[np.float64], g_cap: float) -> float:
        total = float(np.sum(self.Dq * gq))
        if self.capped:
            total += self.atom_pre * g_cap / self.lam_cap
        return total / self.E0T

    @property
    def mean(self) -> float:
        return self.expect_raw(self.yq, self.grid.u[-1])

    @property
    def loss_rate(self) -> float:
        return 1.0 / self.E0T


def _solve_level(prof: _Profiles, grid: _Grid, capped: bool) -> _Level:
    # exact end points (exp(log(x)) may differ from x in the last bit)
    if capped:
        grid.u[-1] = prof.w_max
    if prof.w_min > 0 and grid.t[0] == math.log(prof.w_min):
        grid.u[0] = prof.w_min
    t, h, u = grid.t, grid.h, grid.u
    nc = grid.n_cells
    # quadrature points of each cell and nested points for the hazard integrals
    tq = t[:-1, None] + h[:, None] * _GX[None, :]                       # (nc, Q)
    yq = np.exp(tq)
    # hazard: Lambda(y_ik) - Lambda(u_i) and Delta Lambda_i, with phi(t) = lam/a * e^t
    frac = np.concatenate([_GX, [1.0]])                                 # (Q+1,)
    tr = t[:-1, None, None] + h[:, None, None] * frac[None, :, None] * _RX[None, None, :]
    wr = np.exp(tr)
    ar, lr = prof.a(wr), prof.lam(wr)
    aq, lq, dq = prof.a(yq), prof.lam(yq), prof.d(yq)
    prof.validate(np.concatenate([wr.ravel(), yq.ravel(), u]),
                  dv=None, av=np.concatenate([ar.ravel(), aq.ravel(), prof.a(u)]),
                  lv=np.concatenate([lr.ravel(), lq.ravel(), prof.lam(u)]))
    phi_r = lr / ar * wr
    partial = h[:, None] * frac[None, :] * np.sum(phi_r * _RW[None, None, :], axis=2)  # (nc, Q+1)
    dLam = partial[:, -1]
    Lq = partial[:, :-1]
    phi_q = lq / aq * yq
    omega = _GW[None, :] * h[:, None] * phi_q * np.exp(-(dLam[:, None] - Lq))
    # G at the quadrature points: F(d^{-1}(y)) or 1 beyond d(top)
    d_top = float(prof.d(np.array([u[-1]]))[0])
    beyond = yq >= d_top
    inside = ~beyond
    xq_t = np.full(yq.shape, t[-1])
    if np.any(inside):
        xq_t[inside] = _dinv_log(prof, yq[inside], t[-1])
    idx, wts = grid.stencil(xq_t)                                     # (nc, Q, 4)
    # sparse system for the Palm survival S = 1 - F of W_pre at nodes 1..N (S_0 = 1):
    # S_{i+1} = e^{-dLam_i} S_i + sum_k omega_ik S(d^{-1}(y_ik)), S(d^{-1}(y)) = 0 beyond the top.
    # All terms are nonnegative, so small tail values keep their relative accuracy.
    rows = [np.arange(nc)]
    cols = [np.arange(nc)]
    vals = [np.ones(nc)]
    if nc > 1:
        rows.append(np.arange(1, nc))
        cols.append(np.arange(0, nc - 1))
        vals.append(-np.exp(-dLam[1:]))
    coef = -(omega * inside)[:, :, None] * wts                         # (nc, Q, 4)
    r = np.broadcast_to(np.arange(nc)[:, None, None], idx.shape)
    keep = idx > 0
    rows.append(r[keep])
    cols.append(idx[keep] - 1)
    vals.append(coef[keep])
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(nc, nc))
    rhs = -np.sum(np.where(idx == 0, coef, 0.0), axis=(1, 2))
    rhs[0] += math.exp(-dLam[0])
    # ... and the cdf F (F_0 = 0, F(d^{-1}(y)) = 1 beyond the top): same matrix, positive terms,
    # accurate where F is small (F + S = 1 up to the quadrature error of sum_k omega_ik)
    rhs_f = np.sum(omega * beyond, axis=1)
    lu = spla.splu(A)
    S = np.concatenate([[1.0], lu.solve(rhs)])
    F = np.concatenate([[0.0], lu.solve(rhs_f)])
    if not (np.all(np.isfinite(S)) and np.all(np.isfinite(F))):
        raise NotConverged("solve_window (embedded chain linear solve)", float("inf"), 0.0, 1)
    SGq = np.where(beyond, 0.0, np.sum(S[idx] * wts, axis=-1))
    Gq = np.where(beyond, 1.0, np.sum(F[idx] * wts, axis=-1))
    fi, fw = grid.stencil(tq)
    Sq = np.sum(S[fi] * fw, axis=-1)
    Fq = np.sum(F[fi] * fw, axis=-1)
    # G - F = S - S_post; use the form without cancellation
    diff = np.where(Fq < 0.5, Gq - Fq, Sq - SGq)
    wq = _GW[None, :] * h[:, None] * yq
    Dq = wq * diff / aq
    atom_pre = max(float(S[-1]), 0.0) if capped else 0.0
    lam_cap = float(prof.lam(np.array([u[-1]]))[0])
    E0T = float(np.sum(Dq)) + (atom_pre / lam_cap if capped else 0.0)
    return _Level(grid=grid, S=S, F=F, yq=yq, wq=wq, aq=aq, lq=lq, dq=dq, Dq=Dq,
                  atom_pre=atom_pre, E0T=E0T, d_top=d_top, capped=capped, lam_cap=lam_cap)


def _S_at(lev: _Level, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm survival ``P0(W_pre > w)`` at window values inside the grid (cubic interpolation)."""
    idx, wts = lev.grid.stencil(np.log(w))
    return np.clip(np.sum(lev.S[idx] * wts, axis=-1), 0.0, 1.0)


def _F_at(lev: _Level, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm cdf ``P0(W_pre <= w)`` at window values inside the grid (cubic interpolation)."""
    idx, wts = lev.grid.stencil(np.log(w))
    return np.clip(np.sum(lev.F[idx] * wts, axis=-1), 0.0, 1.0)


def _G_at(lev: _Level, prof: _Profiles, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm cdf of the post-loss window, ``F(d^{-1}(w))``, at ``w >=`` the grid bottom."""
    out = np.ones(w.shape)
    inside = w < lev.d_top
    if np.any(inside):
        out[inside] = _F_at(lev, np.exp(_dinv_log(prof, w[inside], lev.grid.t[-1])))
    return out


def _time_gap(lev: _Level, prof: _Profiles, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``G(w) - F(w) = P0(Y <= w < W_pre)``, from whichever of F or S avoids cancellation."""
    out = np.empty(w.shape)
    F = _F_at(lev, w)
    low = F < 0.5
    if np.any(low):
        out[low] = _G_at(lev, prof, w[low]) - F[low]
    if np.any(~low):
        out[~low] = _S_at(lev, w[~low]) - _SG_at(lev, prof, w[~low])
    return out


def _SG_at(lev: _Level, prof: _Profiles, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm survival of the post-loss window, ``S(d^{-1}(w))``, at ``w >=`` the grid bottom."""
    out = np.zeros(w.shape)
    inside = w < lev.d_top
    if np.any(inside):
        out[inside] = _S_at(lev, np.exp(_dinv_log(prof, w[inside], lev.grid.t[-1])))
    return out


# --------------------------------------------------------------------------------------------
# public result
# --------------------------------------------------------------------------------------------

@dataclass
class WindowSolution:
    """Stationary law of an adaptive window protocol computed by :func:`solve_window`.

    Time-stationary quantities (``pdf``, ``cdf``, moments, ``atom_at_cap``) come from the Palm
    inversion of the embedded post-loss chain (reference note B4); ``pre_loss_cdf`` and
    ``post_loss_cdf`` are the Palm laws of the window just before and just after a loss.

    Attributes
    ----------
    grid : ndarray
        Nodes (window values) of the finest logarithmic grid.
    mean, second_moment : float
        ``E[W]``, ``E[W^2]`` (time averages; throughput is ``E[W]/RTT``).
    loss_rate : float
        ``E[lam(W)] = 1/E0[T]``, losses per RTT.
    atom_at_cap : float
        Fraction of time spent at ``w_max`` (0 without a cap).
    error_estimate : float
        Estimated relative error of ``mean`` and ``loss_rate`` (a posteriori, from the
        successive grid refinements).
    grid_size : int
        Number of grid nodes of the finest level.
    drift_balance : float
        ``E[a(W) 1{W < w_max}] - E[lam(W) (W - max(d(W), w_min))]``, the mean-drift identity of
        rate conservation (B3: ``E[a(W)] = E[lam(W) b(W) W]`` without bounds); about 0.
    mass_outside : float
        Estimated probability mass beyond the ends of the grid.
    w_min, w_max : float
        The floor and the cap.
    history : list of tuple
        ``(grid_size, mean, loss_rate)`` of every refinement level.
    """

    grid: NDArray[np.float64] = field(repr=False)
    mean: float
    second_moment: float
    loss_rate: float
    atom_at_cap: float
    error_estimate: float
    grid_size: int
    drift_balance: float
    mass_outside: float
    w_min: float
    w_max: float
    history: list[tuple[int, float, float]] = field(default_factory=list, repr=False)
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
        """Time-stationary density ``f(w) = (G(w) - F(w)) / (a(w) E0[T])`` (B4), atom excluded.

        ``F`` and ``G`` are the Palm cdfs of the window just before and just after a loss.  The
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
            j = np.clip(np.searchsorted(grid.t, tx, side="right") - 1, 0, grid.n_cells - 1)
            span = tx - grid.t[j]
            tp = grid.t[j][:, None] + span[:, None] * _GX[None, :]
            wp = np.exp(tp)
            dens = _time_gap(lev, self._prof, wp.ravel()).reshape(wp.shape) \
                / (self._prof.a(wp) * lev.E0T)
            part = np.sum(dens * wp * _GW[None, :], axis=1) * span
            out[inside] = np.clip(cum[j] + part, 0.0, 1.0)
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
            j = np.clip(np.searchsorted(grid.t, tx, side="right") - 1, 0, grid.n_cells - 1)
            span = grid.t[j + 1] - tx
            tp = tx[:, None] + span[:, None] * _GX[None, :]
            wp = np.exp(tp)
            dens = _time_gap(lev, self._prof, wp.ravel()).reshape(wp.shape) \
                / (self._prof.a(wp) * lev.E0T)
            part = np.sum(dens * wp * _GW[None, :], axis=1) * span
            out[inside] = np.clip(suffix[j + 1] + part, 0.0, 1.0)
        return float(out) if out.ndim == 0 else out

    def expect(self, g: Callable[[NDArray[np.float64]], Any]) -> float:
        """Time average ``E[g(W)]`` by Palm inversion (B4); ``g`` is vectorised."""
        lev = self._level
        gq = _Profiles._eval(g, lev.yq)
        g_cap = float(_Profiles._eval(g, np.array([lev.grid.u[-1]]))[0]) if lev.capped else 0.0
        return lev.expect_raw(gq, g_cap)

    def moment(self, s: float) -> float:
        """Time-average moment ``E[W^s]`` (any real ``s``)."""
        s = _real("s", s, "a real number")
        return self.expect(lambda w: w ** s)


# --------------------------------------------------------------------------------------------
# extent selection
# --------------------------------------------------------------------------------------------

def _cumulative_hazard(prof: _Profiles, t: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Lambda(e^t) - Lambda(e^t[0])`` on a sorted probe grid (nan after a bad value)."""
    h = np.diff(t)
    tr = t[:-1, None] + h[:, None] * _RX[None, :]
    wr = np.exp(tr)
    ar, lr = prof.a(wr), prof.lam(wr)
    phi = lr / ar * wr
    bad = ~(np.isfinite(phi) & (ar > 0) & (lr > 0))
    inc = h * np.sum(np.where(bad, np.nan, phi) * _RW[None, :], axis=1)
    return np.concatenate([[0.0], np.cumsum(inc)])


def _psi_map(prof: _Profiles, t_lo: float, t_hi: float
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Tabulated ``psi(t) = t + Lambda(e^t) - Lambda(e^t_lo)`` for :class:`_Grid`."""
    n = max(int(math.ceil((t_hi - t_lo) / _PROBE_STEP)), 8)
    tp = np.linspace(t_lo, t_hi, n + 1)
    inc = np.diff(_cumulative_hazard(prof, tp))
    inc = np.where(np.isfinite(inc) & (inc > 0), inc, 0.0)
    return tp, tp + np.concatenate([[0.0], np.cumsum(inc)])


def _initial_extent(prof: _Profiles, tol_mass: float) -> tuple[float, float, float]:
    """Return ``(t_lo, t_ref, t_hi)`` in ``ln w``."""
    w_min, w_max = prof.w_min, prof.w_max
    if w_min > 0:
        anchor = max(w_min, 1.0)   # a tiny floor must not push the probe below the law
    elif math.isfinite(w_max):
        anchor = w_max
    else:
        anchor = 1.0
    t0 = math.log(anchor) - _PROBE_HALF_WIDTH
    t1 = math.log(anchor) + _PROBE_HALF_WIDTH
    if w_min > 0:
        t0 = math.log(w_min)
    if math.isfinite(w_max):
        t1 = math.log(w_max)
    n = max(int(math.ceil((t1 - t0) / _PROBE_STEP)), 8)
    tp = np.linspace(t0, t1, n + 1)
    wp = np.exp(tp)
    prof.validate(wp)
    Lam = _cumulative_hazard(prof, tp)
    finite = np.isfinite(Lam)
    dp = prof.d(wp)
    if not math.isfinite(w_max):
        k10 = int(np.searchsorted(tp, t1 - 10.0))
        if Lam[-1] - Lam[k10] < 1.0:
            raise StabilityError(
                "the cumulative loss hazard Lambda(w) = int lam/a dw stays bounded: it grows by "
                f"only {float(Lam[-1] - Lam[k10]):.3g} between w = {float(wp[k10]):.3g} and "
                f"w = {float(wp[-1]):.3g}, so with positive probability there is no further "
                "loss and the window escapes to infinity")
    with np.errstate(all="ignore"):
        yp = np.maximum(dp, w_min)
        ty = np.log(np.where(yp > 0, yp, np.nan))
    Lam_y = np.interp(ty, tp[finite], Lam[finite], left=np.nan, right=np.nan)
    phi = Lam - Lam_y                   # hazard of the deterministic cycle from d(x) to x
    cross = np.flatnonzero(np.isfinite(phi) & (phi >= 1.0))
    if cross.size == 0:
        if math.isfinite(w_max):
            t_ref = t1
        else:
            raise StabilityError(
                "the deterministic loss cycle escapes: the loss hazard per cycle "
                "Lambda(w) - Lambda(d(w)) stays below 1 for w up to "
                f"{float(wp[finite][-1]):.3g}; the window grows without bound (unstable protocol "
                "or no floor w_min)")
    else:
        t_ref = float(tp[cross[0]])
        if w_min == 0 and cross[0] == int(np.argmax(np.isfinite(phi))):
            raise StabilityError(
                "the loss hazard per deterministic cycle, Lambda(w) - Lambda(d(w)), exceeds 1 "
                f"down to w = {float(wp[0]):.3g}: the window collapses to 0 (a floor w_min > 0 "
                "is needed)")
    k_ref = int(np.searchsorted(tp, t_ref))
    # top: enough hazard above the reference scale
    L_top = math.log(1.0 / tol_mass) + 3.0
    if math.isfinite(w_max):
        t_hi = t1
    else:
        above = np.flatnonzero(finite & (Lam - Lam[k_ref] >= L_top) & (tp > t_ref))
        if above.size == 0:
            raise StabilityError(
                "the cumulative loss hazard Lambda(w) = int lam/a dw stays bounded above "
                f"w = {math.exp(t_ref):.3g} (it grows by less than {L_top:.3g} up to "
                f"w = {float(wp[finite][-1]):.3g}): with positive probability there is no further "
                "loss and the window escapes to infinity")
        t_hi = float(tp[above[0]])
    # bottom
    if w_min > 0:
        t_lo = t0
    else:
        eps_lo = min(1e-3, 0.1 * math.sqrt(tol_mass))
        # hazard from the probe bottom to d^{-1}(w) bounds P0(W_pre <= d^{-1}(w)) = G(w)
        with np.errstate(all="ignore"):
            td = np.log(dp)
        ok = finite & np.isfinite(td)
        if np.count_nonzero(ok) >= 2:
            Lam_dinv = np.interp(tp, td[ok], Lam[ok], left=0.0, right=np.inf)
        else:
            Lam_dinv = Lam
        good = np.flatnonzero((Lam_dinv <= eps_lo) & (tp < t_ref))
        t_lo = float(tp[good[-1]]) if good.size else float(tp[0])
        t_lo = min(t_lo, t_ref - 1.0)
    return t_lo, t_ref, t_hi


def _detect_breaks(prof: _Profiles, t_lo: float, t_hi: float, step: float = 0.02,
                   max_breaks: int = 20) -> list[float]:
    """Window values where ``a``, ``lam`` or ``d`` jump or have a kink, found numerically.

    Second differences of ``ln a``, ``ln lam`` and ``d(w)/w`` over a grid uniform in ``ln w``
    are of order ``step^2`` where the profile is smooth, ``step`` at a kink and 1 at a jump: an
    isolated spike (100 times the local median) marks a break point, which is then located to
    about ``1e-11`` in ``ln w`` by repeated zooming.
    """
    def phis(t: NDArray[np.float64]) -> list[NDArray[np.float64]]:
        w = np.exp(t)
        with np.errstate(all="ignore"):
            return [np.log(prof.a(w)), np.log(prof.lam(w)), prof.d(w) / w]

    n = max(int(math.ceil((t_hi - t_lo) / step)), 8)
    t = np.linspace(t_lo, t_hi, n + 1)
    found: list[tuple[float, float]] = []
    for c, phi in enumerate(phis(t)):
        if not np.all(np.isfinite(phi)):
            continue
        d2 = np.abs(np.diff(phi, 2))
        if d2.size < 25:
            continue
        pad = np.pad(d2, 10, mode="edge")
        bg = np.median(np.lib.stride_tricks.sliding_window_view(pad, 21), axis=1)
        spike = (d2 > 100.0 * bg) & (d2 > 1e-9 * (1.0 + np.abs(phi[1:-1])))
        hits = np.flatnonzero(spike)
        groups = np.split(hits, np.flatnonzero(np.diff(hits) > 2) + 1) if hits.size else []
        for grp in groups:
            m = int(grp[np.argmax(d2[grp])])
            a_, b_ = t[m], t[min(m + 2, n)]
            for _ in range(10):
                tz = np.linspace(a_, b_, 41)
                fz = phis(tz)[c]
                if not np.all(np.isfinite(fz)):
                    break
                dz = np.abs(np.diff(fz, 2))
                k = int(np.argmax(dz))
                a_, b_ = tz[k], tz[k + 2]
                if b_ - a_ < 1e-11:
                    break
            found.append((float(np.max(d2[grp])), 0.5 * (a_ + b_)))
    found.sort(reverse=True)
    return sorted(math.exp(tb) for _, tb in found[:max_breaks])


def _breakpoints(prof: _Profiles, points: Sequence[float], t_lo: float, t_hi: float) -> list[float]:
    """ln of the break points and of their images under ``d`` inside the grid."""
    out: list[float] = []
    seeds = [float(p) for p in points]
    if math.isfinite(prof.w_max):
        seeds.append(prof.w_max)
    for p in seeds:
        x = p
        for _ in range(4):   # a singularity is smoothed by one order at every image
            if not (x > 0 and math.isfinite(x)):
                break
            tx = math.log(x)
            if tx <= t_lo:
                break
            if tx < t_hi and x != prof.w_max:
                out.append(tx)
            nx = float(prof.d(np.array([x]))[0])
            if prof.w_min > 0 and nx <= prof.w_min:
                break
            if not nx < x:
                break
            x = nx
    return sorted(set(out))


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------

def _tail_exponent(grid: _Grid, S: NDArray[np.float64], dist: float) -> float | None:
    """Local Pareto exponent ``-d ln S / d ln w`` over ``[t_top - dist - 1, t_top - dist]``."""
    k1 = int(np.searchsorted(grid.t, grid.t[-1] - dist - 1.0))
    k2 = int(np.searchsorted(grid.t, grid.t[-1] - dist))
    k1, k2 = max(k1, 0), min(k2, grid.n_cells)
    if k2 <= k1 or S[k1] <= 1e-11 or S[k2] <= 0:
        return None           # the tail is below rounding there: nothing to measure
    return -math.log(S[k2] / S[k1]) / (grid.t[k2] - grid.t[k1])


class _ExtentCheck:
    """A-posteriori check of the grid extent; returns a new ``(t_lo, t_hi)`` or raises.

    Top (no cap): the Palm mass above the grid, its time-average counterpart and the share of
    ``E[W]`` carried by a Pareto extrapolation of the tail (local exponent ``theta`` over the
    last e-fold) must be below ``tol_mass`` and ``rtol/10``.  Bottom (no floor): the post-loss
    mass below the grid and its time counterpart must be below ``tol_mass``.  Thresholds are
    multiplied by ``loose`` for the rough check made before the refinement.
    """

    def __init__(self, prof: _Profiles, capped: bool, rtol: float, tol_mass: float,
                 t_ref: float) -> None:
        self.prof, self.capped, self.rtol, self.tol_mass, self.t_ref = \
            prof, capped, rtol, tol_mass, t_ref
        self.prev_tail = self.prev_mean_tail = math.inf
        self.theta_low = False

    def __call__(self, lev: _Level, t_lo: float, t_hi: float, loose: float
                 ) -> tuple[float, float, float]:
        prof, grid = self.prof, lev.grid
        tol_mass, rtol = self.tol_mass * loose, self.rtol * loose
        outside = 0.0
        if not self.capped:
            top = float(grid.u[-1])
            tail_pre = max(float(lev.S[-1]), 0.0)
            tail = max(tail_pre, tail_pre * top / (float(prof.a(np.array([top]))[0]) * lev.E0T))
            theta = _tail_exponent(grid, lev.S, 0.0)
            deep = None
            if grid.t[-1] - 3.0 > self.t_ref and _S_at(lev, np.exp([grid.t[-1] - 3.0]))[0] < 1e-2:
                # the law is already in its tail three e-folds below the top: the exponent
                # measured there is not inflated by the truncation (mass above the top is
                # sent back to d(top), which depletes the survival just below the top)
                deep = _tail_exponent(grid, lev.S, 2.0)
                if deep is not None and (theta is None or deep < theta):
                    k2 = int(np.searchsorted(grid.t, grid.t[-1] - 2.0))
                    theta = deep
                    extrap = float(lev.S[k2]) * math.exp(-deep * (grid.t[-1] - grid.t[k2]))
                    tail = max(tail, extrap)
            outside = tail
            if theta is not None:
                if theta <= 1.0 and deep is not None and self.theta_low:
                    raise StabilityError(
                        f"the stationary law has a heavy tail P(W > w) ~ w^-{theta:.3g} with "
                        f"exponent <= 1 (at w = {top:.3g}): the mean window E[W] is infinite")
                self.theta_low = theta <= 1.0 and deep is not None
                mean_tail = top * tail * theta / (theta - 1.0) if theta > 1.0 else math.inf
                if tail > tol_mass or mean_tail > 0.1 * rtol * lev.mean:
                    if tail > 0.5 * self.prev_tail and mean_tail > 0.5 * self.prev_mean_tail:
                        raise StabilityError(
                            f"the probability mass above the grid ({tail:.3g} at w = {top:.3g}) "
                            "does not decrease when the grid is extended: the window escapes to "
                            "infinity")
                    self.prev_tail, self.prev_mean_tail = tail, mean_tail
                    if theta > 1.0:
                        need = max(math.log(tail / (0.1 * tol_mass)) / theta,
                                   math.log(mean_tail / (0.01 * rtol * lev.mean)) / (theta - 1.0))
                        dt = min(max(1.3 * need, 0.5), 30.0)
                    else:
                        dt = 5.0
                    t_hi += dt
                    if t_hi - self.t_ref > 80:
                        raise StabilityError("the stationary law would extend beyond "
                                             f"w = {math.exp(t_hi):.3g}: the window escapes")
        if prof.w_min == 0:
            lo = float(grid.u[0])
            g0 = float(_G_at(lev, prof, np.array([lo]))[0])
            low_mass = max(g0, g0 * lo / (float(prof.a(np.array([lo]))[0]) * lev.E0T))
            outside = max(outside, low_mass)
            if low_mass > tol_mass:
                if self.t_ref - t_lo > 80:
                    raise StabilityError(
                        f"mass {low_mass:.3g} remains below w = {lo:.3g}: the window collapses "
                        "to 0 (a floor w_min is needed)")
                t_lo -= max(0.5 * (self.t_ref - t_lo), 1.0)
        return t_lo, t_hi, outside


def _refine(prof: _Profiles, capped: bool, t_lo: float, t_hi: float, breaks: list[float],
            psi_t: NDArray[np.float64], psi_v: NDArray[np.float64], h: float, rtol: float,
            max_grid: int) -> tuple[list[_Level], float]:
    """Solve on grids halved until the a-posteriori relative error is below ``rtol``.

    The estimate uses the last three levels: with the observed order ``p`` (clipped to
    ``[1, 4]``; the scheme is of order 4 for smooth profiles) the error of the finest level is
    estimated as ``2 |q_h - q_2h| / (2^p - 1)`` (safety factor 2) for ``q`` = mean and loss rate.
    """
    levels: list[_Level] = []
    err = math.inf
    refine = 1
    while True:
        grid = _Grid(t_lo, t_hi, breaks, h, psi_t, psi_v, refine)
        levels.append(_solve_level(prof, grid, capped))
        if len(levels) >= 3:
            qs = [(lv.mean, lv.loss_rate) for lv in levels[-3:]]
            errs = []
            for c in range(2):
                d1 = abs(qs[1][c] - qs[0][c])
                d2 = abs(qs[2][c] - qs[1][c])
                if d2 == 0.0:
                    errs.append(0.0)
                    continue
                order = math.log2(d1 / d2) if d1 > 0 else 4.0
                order = min(max(order, 1.0), 4.0)
                errs.append(_SAFETY * d2 / (2.0 ** order - 1.0) / abs(qs[2][c]))
            err = max(errs)
            if err <= rtol:
                return levels, err
        if 2 * levels[-1].grid.n_cells > max_grid:
            raise NotConverged("solve_window (grid refinement)", err, rtol, len(levels))
        refine *= 2


def solve_window(a: Profile, lam: Profile, d: Profile, *, w_min: float = 0.0,
                 w_max: float = math.inf, rtol: float = 1e-6,
                 breakpoints: Sequence[float] = (), detect_breaks: bool = True,
                 initial_grid: int = 64, max_grid: int = 2 ** 15) -> WindowSolution:
    """Stationary law of the window process ``dW/dt = a(W)``, losses at rate ``lam(W)``.

    Solves the embedded post-loss chain (reference note B4) on a logarithmic grid and inverts
    it to time averages by the Palm formula; see the module notes for the method.

    Parameters
    ----------
    a : callable
        Growth per RTT ``a(w) > 0``, vectorised over a numpy array (a scalar result is
        broadcast).
    lam : callable
        Loss intensity ``lam(w) > 0`` per RTT, vectorised.
    d : callable
        Window after a loss, increasing with ``0 <= d(w) < w`` (``d(w) > 0`` without a floor),
        vectorised.
    w_min : float, default 0
        Floor: after a loss ``W = max(d(W), w_min)``.
    w_max : float, default inf
        Cap: the growth stops at ``w_max``; ``w_min < w_max``.
    rtol : float, default 1e-6
        Target relative accuracy of ``E[W]`` and of the loss rate, in ``[1e-12, 0.1]``.
    breakpoints : sequence of float
        Window values where ``a``, ``lam`` or ``d`` are not smooth (e.g. 38 for HighSpeed TCP);
        grid nodes are placed there and at their images under ``d``.
    detect_breaks : bool, default True
        Also look for jumps and kinks of the profiles numerically (isolated spikes of second
        differences on a fine probe grid, located by zooming) and add them to ``breakpoints``.
        Without break points on the grid a non-smooth profile converges slowly and erratically,
        which can fool the error estimate.
    initial_grid : int, default 64
        Number of cells of the coarsest grid (at least 16).
    max_grid : int, default 32768
        Largest number of grid cells before giving up.

    Returns
    -------
    WindowSolution

    Raises
    ------
    InvalidParameter
        A non-callable profile; ``a`` or ``lam`` not positive and finite, ``d(w) >= w``,
        ``d(w) < 0`` or ``d`` not increasing at a sample point of the grid; bad ``w_min``,
        ``w_max``, ``rtol``, ``initial_grid`` or ``max_grid``.
    StabilityError
        Numerically obvious escape: the loss hazard stays bounded, the deterministic loss cycle
        escapes, or the mass beyond the grid does not decrease when the grid is extended (the
        window drifts to infinity, or to 0 without a floor).  Stability proper is decided
        symbolically by the model (reference note B5).
    NotConverged
        The error estimate is still above ``rtol`` at ``max_grid`` cells; the residual is the
        last relative error estimate.

    Examples
    --------
    AIMD with a constant loss rate: ``E[W] = alpha/(lam (1 - beta))`` (reference note B3).

    >>> import numpy as np
    >>> sol = solve_window(lambda w: 1.0, lambda w: 0.1, lambda w: 0.5 * w)
    >>> round(sol.mean, 4), sol.atom_at_cap, sol.error_estimate < 1e-6
    (20.0, 0.0, True)
    """
    w_min = _real("w_min", w_min, "a finite real number >= 0")
    if not (math.isfinite(w_min) and w_min >= 0):
        raise InvalidParameter("w_min", w_min, "a finite real number >= 0")
    w_max = _real("w_max", w_max, "a real number > w_min, or inf")
    if math.isnan(w_max) or w_max <= 0:
        raise InvalidParameter("w_max", w_max, "a real number > w_min, or inf")
    if w_min >= w_max:
        raise InvalidParameter("w_min", w_min, f"< w_max = {w_max!r}",
                               "the floor must lie below the cap")
    rtol = _real("rtol", rtol, "a real number in [1e-12, 0.1]")
    if not 1e-12 <= rtol <= 0.1:
        raise InvalidParameter("rtol", rtol, "a real number in [1e-12, 0.1]")
    for name, value, low in (("initial_grid", initial_grid, 16), ("max_grid", max_grid, 64)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
                or value < low:
            raise InvalidParameter(name, value, f"an integer >= {low}")
    for p in breakpoints:
        pv = _real("breakpoints", p, "positive window values")
        if not (math.isfinite(pv) and pv > 0):
            raise InvalidParameter("breakpoints", p, "positive finite window values")
    prof = _Profiles(a, lam, d, w_min, w_max)
    capped = math.isfinite(w_max)
    tol_mass = rtol * 1e-2

    t_lo, t_ref, t_hi = _initial_extent(prof, tol_mass)
    checker = _ExtentCheck(prof, capped, rtol, tol_mass, t_ref)
    for _ in range(16):
        points = list(breakpoints) + (_detect_breaks(prof, t_lo, t_hi) if detect_breaks else [])
        breaks = _breakpoints(prof, points, t_lo, t_hi)
        psi_t, psi_v = _psi_map(prof, t_lo, t_hi)
        h0 = (psi_v[-1] - psi_v[0]) / initial_grid
        # rough check of the extent on a moderately fine grid, before the refinement
        rough = _solve_level(prof, _Grid(t_lo, t_hi, breaks, h0, psi_t, psi_v, 4), capped)
        new_lo, new_hi, _ = checker(rough, t_lo, t_hi, loose=1e3)
        if (new_lo, new_hi) != (t_lo, t_hi):
            t_lo, t_hi = new_lo, new_hi
            continue
        levels, err = _refine(prof, capped, t_lo, t_hi, breaks, psi_t, psi_v, h0, rtol, max_grid)
        lev = levels[-1]
        new_lo, new_hi, mass_outside = checker(lev, t_lo, t_hi, loose=1.0)
        if (new_lo, new_hi) == (t_lo, t_hi):
            break
        t_lo, t_hi = new_lo, new_hi
    else:
        raise StabilityError("could not find a grid extent holding the stationary law "
                             "(escape to infinity or collapse to 0)")
    lev = levels[-1]
    ucap = float(lev.grid.u[-1])
    atom = lev.atom_pre / lev.lam_cap / lev.E0T if capped else 0.0
    mean = lev.mean
    second = lev.expect_raw(lev.yq ** 2, ucap ** 2)
    keep = np.maximum(lev.dq, w_min)
    drift = lev.expect_raw(lev.aq, 0.0) - lev.expect_raw(
        lev.lq * (lev.yq - keep),
        lev.lam_cap * (ucap - max(float(prof.d(np.array([ucap]))[0]), w_min)))
    sol = WindowSolution(
        grid=lev.grid.u.copy(), mean=mean, second_moment=second, loss_rate=lev.loss_rate,
        atom_at_cap=float(atom), error_estimate=float(err), grid_size=int(lev.grid.u.size),
        drift_balance=float(drift), mass_outside=float(mass_outside), w_min=w_min, w_max=w_max,
        history=[(int(lv.grid.u.size), lv.mean, lv.loss_rate) for lv in levels],
        _level=lev, _prof=prof)
    return sol

