"""General numerical solver for the stationary law of an adaptive window protocol.

The model is the piecewise-deterministic process of Altman, Avrachenkov, Kherani and Prabhu
(*Performance analysis and stochastic stability of congestion control protocols*, IEEE INFOCOM
2005, Section II): between losses ``dW/dt = a(W)``, losses are
Poisson with rate ``lam(W)``, and at a loss ``W -> max(d(W), w_min)``; an optional cap ``w_max``
stops the growth, the window then waits at ``w_max`` for the next loss (rate ``lam(w_max)``).

Method (``derivations/awp.md``, section "General profiles")
-----------------------------------------------------------
Let ``Lambda(w) = int^w lam(u)/a(u) du`` be the cumulative loss hazard in window units.  The
window just before a loss, ``X = W_pre``, and just after it, ``Y``, form embedded chains with
``P(X > u | Y = y) = exp(-(Lambda(u) - Lambda(y)))`` for ``u >= y`` and ``Y' = max(d(X), w_min)``.
Writing ``F`` for the Palm cdf of ``X`` and ``G`` for that of ``Y``, an integration by parts
turns the transition into a *smooth* Volterra-type equation

.. math::

    F(u) = \\int_{w_{\\min}}^{u} G(y)\\, \\Lambda'(y)\\, e^{-(\\Lambda(u) - \\Lambda(y))}\\, dy,
    \\qquad G(y) = F(d^{-1}(y)) \\quad (y \\ge w_{\\min}),

with ``G = 1`` above ``d(w_max)`` (the atom of ``X`` at the cap) or above ``d`` of the top of
the grid.  It is discretised on a logarithmic grid (uniform in ``ln w + Lambda(w)``, so that
no cell carries a large hazard increment): node-to-node recursion with Gauss-Legendre
quadrature in every cell, ``F(d^{-1}(y))`` by piecewise-cubic Lagrange interpolation in
``ln w`` (``d^{-1}`` by bisection on ``d`` itself), one sparse LU factorisation, and two solves:
one for ``F`` and one for the survival ``S = 1 - F`` (same matrix), both sums of nonnegative
terms, so that the lower and the upper tails keep their relative accuracy.  Palm inversion gives
the time-stationary law:

.. math::  f(w) = \\frac{G(w) - F(w)}{a(w)\\, E_0[T]}, \\qquad
           E[g(W)] = \\frac{\\int g(u) (G(u) - F(u))/a(u)\\, du
           + P_0(X = w_{\\max})\\, g(w_{\\max})/\\lambda(w_{\\max})}{E_0[T]},

``E_0[T]`` being the same expression with ``g = 1``; the time spent at the cap is the atom
``atom_at_cap``.  The loss rate is ``1/E_0[T]`` (rate conservation: one loss per cycle).

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
NewReno (``a = 1``, ``lam = p w``, ``d = w/2``): ``E[W^2] = 2/p`` exactly (mean drift balance,
``derivations/awp.md``) and ``E[W] sqrt(p)`` is the Ott-Kemperman-Mathis constant.

>>> import numpy as np
>>> sol = solve_window(lambda w: np.ones_like(w), lambda w: 1e-2 * w, lambda w: 0.5 * w)
>>> round(sol.mean_square_window * 1e-2 / 2, 6), round(sol.mean() * 0.1, 4)
(1.0, 1.3098)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.parameters import integer_value, real_value

from .extent import (
    _breakpoints,
    _detect_breaks,
    _ExtentCheck,
    _initial_extent,
    _psi_map,
)
from .grid import Profile, _Grid, _Profiles
from .level import _Level, _solve_level
from .solution import WindowSolution

__all__ = ["solve_window", "WindowSolution"]

_SAFETY = 2.0                    # safety factor of the a-posteriori error estimate


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

    Solves the embedded post-loss chain (``derivations/awp.md``, section "General profiles") on a
    logarithmic grid and inverts
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
        symbolically by the model (:func:`~symq.window.symbolic.stability`).
    NotConverged
        The error estimate is still above ``rtol`` at ``max_grid`` cells; the residual is the
        last relative error estimate.

    Examples
    --------
    AIMD with a constant loss rate: ``E[W] = alpha/(lam (1 - beta))`` (mean drift balance).

    >>> import numpy as np
    >>> sol = solve_window(lambda w: 1.0, lambda w: 0.1, lambda w: 0.5 * w)
    >>> round(sol.mean(), 4), sol.atom_at_cap, sol.error_estimate < 1e-6
    (20.0, 0.0, True)
    """
    w_min = real_value("w_min", w_min, "a finite real number >= 0", lambda v: v >= 0)
    w_max = real_value("w_max", w_max, "a real number > w_min, or inf", lambda v: v > 0,
                       allow_inf=True)
    if w_min >= w_max:
        raise InvalidParameter("w_min", w_min, f"< w_max = {w_max!r}",
                               "the floor must lie below the cap")
    rtol = real_value("rtol", rtol, "a real number in [1e-12, 0.1]", lambda v: 1e-12 <= v <= 0.1)
    initial_grid = integer_value("initial_grid", initial_grid, 16)
    max_grid = integer_value("max_grid", max_grid, 64)
    for p in breakpoints:
        real_value("breakpoints", p, "positive finite window values", lambda v: v > 0)
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
        grid=lev.grid.u.copy(), mean_window=mean, mean_square_window=second,
        loss_rate=lev.loss_rate,
        atom_at_cap=float(atom), error_estimate=float(err), grid_size=int(lev.grid.u.size),
        drift_balance=float(drift), mass_outside=float(mass_outside), w_min=w_min, w_max=w_max,
        history=[(int(lv.grid.u.size), lv.mean, lv.loss_rate) for lv in levels],
        _level=lev, _prof=prof)
    return sol

