"""Profiles and logarithmic grid of the embedded-chain window solver.

Building blocks of :func:`symq.window.numeric.solve_window`: safe vectorised evaluation and
sample validation of the profiles ``a``, ``lam``, ``d`` (:class:`_Profiles`), the grid uniform in
``psi = ln w + Lambda(w)`` with its 4-point Lagrange stencil in ``ln w`` (:class:`_Grid`), the
inverse of the decrease map by bisection, and the Gauss-Legendre rules every part of the solver
uses (4 points per cell for the chain, 6 for the hazard integrals).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter

Profile = Callable[[NDArray[np.float64]], Any]

_GX, _GW = np.polynomial.legendre.leggauss(4)
_GX = (_GX + 1.0) / 2.0          # nodes on [0, 1]
_GW = _GW / 2.0                  # weights on [0, 1]
_RX, _RW = np.polynomial.legendre.leggauss(6)
_RX = (_RX + 1.0) / 2.0
_RW = _RW / 2.0


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
                                       f"{name}(w) = {float(v.ravel()[k])!r} at "
                                       f"w = {float(w.ravel()[k])!r}")
        if self.w_min == 0.0:
            v = self.d(w) if dv is None else dv
            k = self._first_bad(w, ~(v > 0))
            if k is not None:
                raise InvalidParameter("d", float(v.ravel()[k]),
                                       "positive when there is no floor w_min",
                                       f"d(w) = 0 at w = {float(w.ravel()[k])!r}")
        ws = np.sort(np.unique(w.ravel()))
        ds = np.maximum(self.d(ws), self.w_min)
        inc = np.diff(ds)
        above = ds[1:] > self.w_min
        k = self._first_bad(ws[1:], above & ~(inc > 0))
        if k is not None:
            raise InvalidParameter("d", float(ds[k + 1]), "an increasing function of w",
                                   f"d is not increasing near w = {float(ws[k + 1])!r}")


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
    """``ln d^{-1}(y)`` by bisection in ``ln w`` on ``[ln y, t_hi]`` (requires
    ``d(e^t_hi) > y``)."""
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
