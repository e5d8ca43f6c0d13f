"""Where the window solver's grid lies: extent, break points, a-posteriori extent check.

The grid of :func:`symq.window.numeric.solve_window` must hold the stationary law and resolve
the profiles' kinks.  :func:`_initial_extent` finds a first window range from the deterministic
loss cycle (``Lambda(x) - Lambda(d(x)) = 1``) and the cumulative hazard; :func:`_psi_map`
tabulates the grid coordinate ``ln w + Lambda(w)``; :func:`_detect_breaks` and
:func:`_breakpoints` place nodes where ``a``, ``lam`` or ``d`` jump or have a kink, and at their
images under ``d``; :class:`_ExtentCheck` checks a solved level (mass beyond the ends, Pareto
extrapolation of the tail) and widens the range or reports an escaping window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import StabilityError

from .grid import _RW, _RX, _Grid, _Profiles
from .level import _G_at, _Level, _S_at

_PROBE_HALF_WIDTH = 35.0         # probe range anchor * exp(+-35)
_PROBE_STEP = 0.05


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
                f"w = {float(wp[-1]):.3g}: either with positive probability there is no "
                "further loss and the window escapes to infinity, or its law lies beyond "
                "these windows (at a higher loss rate)")
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
                f"w = {float(wp[finite][-1]):.3g}): either with positive probability there is "
                "no further loss and the window escapes to infinity, or its law lies beyond "
                "these windows (at a higher loss rate)")
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
                        f"E[W] is infinite: tail exponent theta = {theta:.3g} <= 1 "
                        f"(P(W > w) ~ w^-theta, measured near w = {top:.3g}); the stationary "
                        "law has no finite mean window")
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

