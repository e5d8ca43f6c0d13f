r"""The value beyond the truncation: a quadratic tail with a cross term, fitted to the solution.

Value iteration for dispatching (Hyytiä & Righter, arXiv 2402.08142, Part 1) needs the relative
value of states with a backlog beyond the truncation :math:`U`.  The default tail is the equal
random split's M/G/1 value :math:`c_M u^2`, :math:`c_M = (\lambda/m)/(2(1-\rho))` (Hyytiä,
Penttinen & Aalto, EJOR 2012): exact for that policy, but the optimal policy keeps one long
queue and sends it few jobs, so along a long backlog its value grows far more slowly.  At
:math:`m = 2`, :math:`\rho = 0.9` the computed optimal value (``U = 192``) has curvature 0.77
and slope about :math:`2 \cdot 0.77 u + 19` along the axis, against :math:`c_M = 4.5`: the
default tail over-penalises the long queue and :math:`g(U)` converges slowly in :math:`U`
(its error 8.1e-2 at ``U = 48``, 1.0e-3 at ``U = 96``).

:func:`fit_tail` fits :math:`v(0, \dots, 0, u) \approx \alpha + b u + c u^2` by least squares on
:math:`u \in [0.5 U, 0.9 U]` (away from the origin, where the policy's decisions still depend
on every backlog, and from the boundary, which the tail itself distorts).  Along the long
backlog the slope also grows with the other backlogs, and with their sum :math:`\sigma` alone
(at :math:`m = 3`, :math:`\rho = 0.9`, ``U = 96``: the slope at ``u = 24`` is 36.7 at the other
backlogs (4, 4) and 37.4 at (0, 8), 46.6 at (4, 12) and 46.7 at (8, 8)), so
:func:`fit_boundary` adds a cross term :math:`\varphi(\sigma)`, the mean slope of
:math:`v - cu^2` over the other backlogs of each sum, less ``b``: the :class:`Tail`

.. math::

    v(\dots, U + s, \dots) = v(\dots, U, \dots) + c\bigl((U + s)^2 - U^2\bigr)
    + \bigl(b + \varphi(\sigma)\bigr) s.

The tail is fitted to the solve with the tail before it, :data:`TAIL_REFITS` times; the refits
approach their fixed point geometrically (a ratio of 0.40-0.52 per refit at :math:`\rho = 0.9`),
so :func:`accelerated` extrapolates them to it (Aitken's :math:`\Delta^2`).  Measured at
:math:`\rho = 0.9`, step 0.5, ``U = 48``, against ``U = 192`` (:math:`m = 2`) and ``U = 128``
(:math:`m = 3`, cap 24; the cap 16 used here moves it by 5e-5):

* :math:`m = 2`: the quadratic alone converges to 1.26e-2 below (after two refits it passes
  2.8e-3 above on the way); with the cross term, accelerated, 1.8e-3 above.
* :math:`m = 3`: the quadratic after two refits 7e-3 below; with the cross term, accelerated,
  2.2e-3 above (its fixed point 1.6e-3 above).  At ``U = 76`` the cross term's fixed point is
  6e-5 above, the quadratic's 9e-4 below.

The tail is a modelling choice, not a bound: :func:`~symq.dispatch.vi.accuracy.solve_accurate`
states the truncation error from the change of :math:`g` between ``U``, ``U + D`` and ``U + 2D``,
all solved with the same fitted tail, so the error of the fitted model is what is measured.

Examples
--------
>>> from symq.laws import Exponential
>>> from symq.dispatch.vi.solvers import solve_optimal
>>> r = solve_optimal(2, 0.4, Exponential(1.0), delta=0.25, U=16.0, tol=1e-8)
>>> c, b = fit_tail(r)
>>> bool(0 <= c < r.c_M)        # the optimal policy's value grows more slowly than RND's
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter

from ..simplex import colex_states

if TYPE_CHECKING:                   # iteration imports the grid, which imports this module
    from .iteration import VIResult

__all__ = ["Tail", "fit_tail", "fit_boundary", "accelerated", "as_tail", "TAIL_WINDOW",
           "TAIL_REFITS", "MAX_REFIT_RATIO", "FIT_SPAN_RTOL", "CROSS_EXTRAPOLATION_KNOTS",
           "CROSS_FIT_LOOKUPS"]

#: The part of ``[0, U]`` of the long backlog that :func:`fit_tail` fits.
TAIL_WINDOW = (0.5, 0.9)
#: Tails fitted in turn (each to the solve with the one before; the first to the default-tail
#: solve) before :func:`accelerated` extrapolates them to their fixed point.
TAIL_REFITS = 3
#: The largest ratio of successive refit changes :func:`accelerated` extrapolates (a slower
#: or irregular sequence is left as it is).
MAX_REFIT_RATIO = 0.8
#: Relative Odoni span at which the solves that only feed a fit stop (the last solve stops at
#: the accuracy asked for): at m = 2, rho = 0.9 the fitted (c, b) agree with those of solves
#: stopped at 1e-5 to 1e-4, in 40% fewer iterations.
FIT_SPAN_RTOL = 1e-3


#: Knots of the cross term whose least-squares line continues it beyond the last knot.
CROSS_EXTRAPOLATION_KNOTS = 4
#: Look-ups :func:`fit_boundary` spends on the cross term at most (a random, seeded sample of
#: the other components' sorted vectors beyond that).
CROSS_FIT_LOOKUPS = 4_000_000


@dataclass(frozen=True)
class Tail:
    r"""The relative value beyond the truncation :math:`U`.

    A component at :math:`U + s` (:math:`s > 0`) whose other components sum to
    :math:`\sigma` adds

    .. math::

        v(\dots, U + s, \dots) - v(\dots, U, \dots) = c\bigl((U + s)^2 - U^2\bigr)
        + \bigl(b + \varphi(\sigma)\bigr) s,

    the quadratic of :func:`fit_tail` whose slope grows with the other backlogs (the cross
    term :math:`\varphi` of :func:`fit_boundary`, 0 without it).

    Parameters
    ----------
    curvature : float
        ``c >= 0``.
    slope : float
        ``b``.
    cross_step : float
        Spacing ``h > 0`` of the knots of :math:`\varphi` (unused without knots).
    cross : tuple of float
        :math:`\varphi(0), \varphi(h), \varphi(2h), \dots`; piecewise linear between them,
        continued beyond the last by the least-squares line through the last
        :data:`CROSS_EXTRAPOLATION_KNOTS`; empty: :math:`\varphi = 0`.
    """

    curvature: float
    slope: float = 0.0
    cross_step: float = 0.0
    cross: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        values = (self.curvature, self.slope, *self.cross)
        if not all(math.isfinite(float(x)) for x in values) or self.curvature < 0:
            raise InvalidParameter("tail", self, "finite coefficients with curvature >= 0")
        if self.cross and not (math.isfinite(self.cross_step) and self.cross_step > 0):
            raise InvalidParameter("tail", self, "a knot spacing cross_step > 0 with cross knots")

    def cross_at(self, sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\varphi(\sigma)` (zeros without a cross term)."""
        sigma = np.asarray(sigma, dtype=float)
        if not self.cross:
            return np.zeros(sigma.shape)
        phi = np.asarray(self.cross, dtype=float)
        knots = self.cross_step * np.arange(phi.size)
        out = np.interp(sigma, knots, phi)
        if phi.size >= 2:
            last = min(CROSS_EXTRAPOLATION_KNOTS, phi.size)
            rise = np.polyfit(knots[-last:], phi[-last:], 1)[0]
            far = sigma > knots[-1]
            out[far] = phi[-1] + rise * (sigma[far] - knots[-1])
        return out

    def cross_slopes(self, delta: float, n: int) -> NDArray[np.float64] | None:
        r""":math:`\varphi(i\delta)`, ``i = 0..n-1``, for a grid of step ``delta`` (None without
        a cross term)."""
        if not self.cross:
            return None
        return self.cross_at(delta * np.arange(n))


TailLike = Tail | Sequence[float] | None


def as_tail(tail: TailLike) -> Tail | None:
    """``tail`` as a :class:`Tail`: a Tail, a pair ``(curvature, slope)``, or None (the equal
    split's tail, decided by the grid)."""
    if tail is None or isinstance(tail, Tail):
        return tail
    try:
        values = tuple(float(t) for t in tail)
    except (TypeError, ValueError):
        raise InvalidParameter("tail", tail, "a Tail or a pair (curvature, slope)") from None
    if len(values) != 2:
        raise InvalidParameter("tail", tail, "a Tail or a pair (curvature, slope)")
    return Tail(values[0], values[1])


def fit_tail(result: VIResult, window: tuple[float, float] = TAIL_WINDOW
             ) -> tuple[float, float]:
    r"""``(c, b)`` of the least-squares fit :math:`v(0, \dots, 0, u) \approx \alpha + b u +
    c u^2` on ``u`` in ``[window[0] U, window[1] U]``.

    Parameters
    ----------
    result : VIResult
        A solution on sorted states (:attr:`~VIResult.symmetric`), any ``m``.
    window : (float, float)
        Fractions of ``U``; at least three lattice points must lie in it.

    Returns
    -------
    (float, float)
        The curvature ``c >= 0`` (a fitted negative curvature is set to 0) and the slope ``b``,
        raised if needed so that the tail's slope at ``U``, ``2 c U + b``, is not negative (a
        longer backlog never costs less).  ``(result.c_M, 0)`` when the fit is not finite.
    """
    lo, hi = window
    N, m = result.N, result.m
    k = np.arange(N + 1)
    k = k[(k * result.delta >= lo * result.U - 1e-12) & (k * result.delta <= hi * result.U + 1e-12)]
    if k.size < 3:
        return result.c_M, 0.0
    points = np.zeros((k.size, m), dtype=np.int64)
    points[:, -1] = k
    values = result._lookup(points) - result._lookup(np.zeros((1, m), dtype=np.int64))[0]
    u = k * result.delta
    c, b, _ = np.polyfit(u, values, 2)
    c, b = float(c), float(b)
    if not (math.isfinite(c) and math.isfinite(b)):
        return result.c_M, 0.0
    c = max(c, 0.0)
    b = max(b, -2.0 * c * result.U)
    return c, b


def fit_boundary(result: VIResult, window: tuple[float, float] = TAIL_WINDOW) -> Tail:
    r"""The :class:`Tail` fitted to ``result``: :func:`fit_tail`'s ``(c, b)`` and the cross term.

    Along the long backlog :math:`u \in [\text{window}]\,U` with the other components
    :math:`o` (sorted, each at most the window's start and the cap), the slope of
    :math:`v(o, u) - c u^2` (least squares in :math:`u`) is averaged over the :math:`o` of
    each sum :math:`\sigma`; :math:`\varphi(\sigma)` is that mean less ``b`` (so
    :math:`\varphi(0) = 0` up to the clamp of ``b``), on the knots :math:`\sigma = i\delta`,
    raised where needed so that the tail's slope at ``U``, :math:`2cU + b + \varphi`, is not
    negative.  With one server, or where the fit is not finite, the tail has no cross term.
    """
    c, b = fit_tail(result, window)
    m, N, delta = result.m, result.N, result.delta
    lo, hi = window
    k = np.arange(N + 1)
    k = k[(k * delta >= lo * result.U - 1e-12) & (k * delta <= hi * result.U + 1e-12)]
    if m == 1 or k.size < 3 or not getattr(result, "symmetric", True):
        return Tail(c, b)
    N2 = result.N2 if result.N2 is not None else N
    top = int(min(N2, k[0]))
    others = _sorted_vectors(m - 1, top, max(1, CROSS_FIT_LOOKUPS // k.size))
    u = k * delta
    uc = u - u.mean()
    slopes = np.empty(len(others))
    rows_per_chunk = max(1, 500_000 // k.size)
    for start in range(0, len(others), rows_per_chunk):
        part = others[start:start + rows_per_chunk]
        pts = np.empty((len(part), k.size, m), dtype=np.int64)
        pts[:, :, :m - 1] = part[:, None, :]
        pts[:, :, m - 1] = k[None, :]
        y = result._lookup(pts) - c * u ** 2
        slopes[start:start + len(part)] = (y @ uc) / (uc @ uc)
    sigma = others.sum(axis=1)
    n_knots = (m - 1) * top + 1
    sums = np.bincount(sigma, weights=slopes, minlength=n_knots)
    counts = np.bincount(sigma, minlength=n_knots)
    seen = counts > 0
    if not np.all(np.isfinite(sums)) or seen.sum() < 2:
        return Tail(c, b)
    idx = np.arange(n_knots)
    phi = np.interp(idx, idx[seen], sums[seen] / counts[seen]) - b
    phi = np.maximum(phi, -(2.0 * c * result.U + b))
    return Tail(c, b, float(delta), tuple(float(x) for x in phi))


def accelerated(tails: Sequence[Tail], U: float) -> Tail:
    r"""The fixed point of the refits ``tails`` (each fitted to the solve with the one before)
    by Aitken's :math:`\Delta^2`.

    The refits approach their fixed point geometrically (at :math:`\rho = 0.9`, ``U = 48``,
    step 0.5: a ratio of 0.40-0.43 per refit at :math:`m = 3`, 0.50-0.52 at :math:`m = 2`).
    The ratio :math:`r` is measured on the tail's slope at ``U`` over the knots,
    :math:`w = 2cU + b + \varphi`, of the last three tails,
    :math:`r = \langle \Delta_2, \Delta_1\rangle / \langle \Delta_1, \Delta_1\rangle`, and
    every coefficient of the last tail is moved by :math:`r/(1 - r)` times its last change
    (the slope at ``U`` kept nonnegative, as in :func:`fit_boundary`).  With fewer
    than three tails, tails of different knots, or :math:`r` outside :math:`(0,`
    :data:`MAX_REFIT_RATIO` :math:`)`, the last tail is returned as it is.
    """
    last = tails[-1]
    if len(tails) < 3:
        return last
    first, second, third = tails[-3:]
    if not (len(first.cross) == len(second.cross) == len(third.cross)
            and first.cross_step == second.cross_step == third.cross_step):
        return last

    def w(t: Tail) -> NDArray[np.float64]:
        return 2.0 * t.curvature * U + t.slope + np.asarray(t.cross or (0.0,), dtype=float)

    d1, d2 = w(second) - w(first), w(third) - w(second)
    norm = float(d1 @ d1)
    ratio = float(d2 @ d1) / norm if norm > 0 else math.nan
    if not 0.0 < ratio < MAX_REFIT_RATIO:
        return last
    f = ratio / (1.0 - ratio)
    curvature = max(third.curvature + f * (third.curvature - second.curvature), 0.0)
    slope = max(third.slope + f * (third.slope - second.slope), -2.0 * curvature * U)
    floor = -(2.0 * curvature * U + slope)
    cross = tuple(max(float(z + f * (z - y)), floor) for y, z in zip(second.cross, third.cross))
    return Tail(curvature, slope, third.cross_step, cross)


def _sorted_vectors(n: int, top: int, limit: int) -> NDArray[np.int64]:
    """The sorted vectors of ``n`` integers in ``0..top`` (ascending), or a seeded random
    sample of ``limit`` of them when there are more (each drawn as sorted uniform integers,
    with the two ends, all 0 and all ``top``, always in it: sums in between that no sample
    has are interpolated)."""
    if math.comb(top + n, n) <= limit:
        return np.asarray(colex_states(n, top), dtype=np.int64)
    rng = np.random.default_rng(0)
    sample = np.sort(rng.integers(0, top + 1, size=(limit, n)), axis=1)
    ends = np.array([[0] * n, [top] * n], dtype=np.int64)
    return np.unique(np.vstack([ends, sample]), axis=0)
