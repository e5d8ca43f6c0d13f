r"""The value beyond the truncation: a quadratic tail fitted to the solution itself.

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
on every backlog, and from the boundary, which the tail itself distorts), and the solver is run
again with the tail :math:`v(\dots, U + s, \dots) = v(\dots, U, \dots) + c((U + s)^2 - U^2) +
b s`, the quadratic continued with its own slope and curvature, fitted again after each solve
(:data:`TAIL_REFITS` times).  The refits do not converge in two steps (at ``U = 64`` the
curvature goes 1.38, 0.93, 0.81, 0.78 towards the 0.77 of ``U = 192``), and the converged
tail is not better: it ignores that the slope along the long backlog grows with the short one
(by about 1.7 per unit at :math:`\rho = 0.9`), and :math:`g(64)` moves from 4e-4 below the
``U = 192`` value after two refits to 2e-3 below after four.  The tail
is a modelling choice, not a bound: :func:`~symq.dispatch.vi.accuracy.solve_accurate` still
states the truncation error from the change of :math:`g` between ``U``, ``U + D`` and ``U + 2D``,
all solved with the same fitted tail, so the error of the fitted model is what is measured.
At :math:`m = 2`, :math:`\rho = 0.9`, :math:`\delta = 0.4` the fitted tail's error of :math:`g`
is 2.4e-3 at ``U = 48``, 3.7e-4 at 64 and 6.8e-5 at 96 (``benchmarks/bench_dispatch_many.py``).

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

import numpy as np

from .iteration import VIResult

__all__ = ["fit_tail", "TAIL_WINDOW", "TAIL_REFITS", "FIT_SPAN_RTOL"]

#: The part of ``[0, U]`` of the long backlog that :func:`fit_tail` fits.
TAIL_WINDOW = (0.5, 0.9)
#: Solves with a refitted tail after the first (default-tail) solve.
TAIL_REFITS = 2
#: Relative Odoni span at which the solves that only feed a fit stop (the last solve stops at
#: the accuracy asked for): at m = 2, rho = 0.9 the fitted (c, b) agree with those of solves
#: stopped at 1e-5 to 1e-4, in 40% fewer iterations.
FIT_SPAN_RTOL = 1e-3


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
