r"""Policy iteration for optimal dispatching: Krylov policy evaluation on the reduced grid.

The average-cost policy iteration of Howard, on the discretised model of Hyytiä & Righter
(arXiv 2402.08142, Part 1) and on the same operator as value iteration
(:mod:`symq.dispatch.vi.passes`):

1. *Improvement*: one sweep of the optimality operator :math:`T` at the current value
   :math:`v` gives the greedy decision table :math:`\pi(u, k) = \arg\min_i \{u_i + k\delta +
   v(u + k\delta e_i)\}` (sorted positions, ties to the shortest backlog) and the Odoni bounds
   :math:`\min(Tv - v) \le g^* \le \max(Tv - v)`, which hold for any :math:`v`: the stopping
   rule and the bracket are certified exactly as in value iteration.
2. *Evaluation*: the fixed-policy operator :math:`T_\pi v = c_\pi + P_\pi v` is affine, so the
   relative values of :math:`\pi` solve the linear system

   .. math::

       v - P_\pi v + g\mathbf 1 = c_\pi, \qquad v(0) = 0,

   whose unknowns are :math:`g` (in the slot of :math:`v(0)`) and :math:`v` on the other
   stored states.  It is solved by restarted GMRES (scipy) with matrix-vector products
   :math:`P_\pi v = T_\pi v - T_\pi 0`, one table-mode sweep each: no transition matrix is
   formed.  The eigenvalues of :math:`I - P_\pi` near zero (the slow modes that make value
   iteration take about :math:`1/(1-\sqrt\rho)^2` sweeps) cost GMRES roughly their square
   root in iterations.

The policy usually stops changing after two or three improvements when warm-started from a
coarser grid's value.  The GMRES tolerance only affects efficiency: the bracket of the result
comes from the last optimality sweep.

Examples
--------
>>> from symq.dispatch.vi.grid import DispatchGrid
>>> from symq.laws import Exponential
>>> grid = DispatchGrid.build(2, 0.4, Exponential(1.0), 0.25, 16.0)
>>> v, g, lo, hi, sweeps, span = policy_iteration(grid, None, 1e-9)
>>> bool(lo <= g <= hi and hi - lo < 1e-9)
True
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import NotConverged

from .grid import DispatchGrid
from .iteration import _iterate, _Layout, _unconverged
from .passes import MODE_OPT, MODE_TABLE, _Operator

__all__ = ["policy_iteration"]

#: Krylov dimension of the restarted GMRES of the policy evaluation.
RESTART = 60


def _gmres(matvec, b: NDArray[np.float64], x0: NDArray[np.float64], atol: float,
           restart: int, max_products: int) -> tuple[NDArray[np.float64], int, float]:
    """Restarted GMRES with classical Gram-Schmidt (twice) on BLAS; stops at ``|r|_2 <= atol``.

    Returns ``(x, products, |r|_2)``.  The Krylov basis is one ``(restart + 1, n)`` array, so
    each orthogonalisation is two matrix-vector products instead of a Python loop.
    """
    n = b.size
    x = np.array(x0, dtype=float)
    V = np.empty((restart + 1, n))
    used = 0
    r = b - matvec(x)
    used += 1
    beta = float(np.linalg.norm(r))
    while beta > atol and used < max_products:
        V[0] = r / beta
        H = np.zeros((restart + 1, restart))
        k = 0
        for k in range(restart):
            w = matvec(V[k])
            used += 1
            for _ in range(2):                      # CGS2: re-orthogonalise once
                h = V[:k + 1] @ w
                w -= h @ V[:k + 1]
                H[:k + 1, k] += h
            H[k + 1, k] = np.linalg.norm(w)
            e1 = np.zeros(k + 2)
            e1[0] = beta
            y, *_ = np.linalg.lstsq(H[:k + 2, :k + 1], e1, rcond=None)
            est = float(np.linalg.norm(H[:k + 2, :k + 1] @ y - e1))
            if H[k + 1, k] > 1e-300:
                V[k + 1] = w / H[k + 1, k]
            if est <= atol or H[k + 1, k] <= 1e-300 or used >= max_products:
                break
        x += y @ V[:k + 1]
        r = b - matvec(x)
        used += 1
        beta = float(np.linalg.norm(r))
    return x, used, beta


def _evaluate(grid: DispatchGrid, table: NDArray[np.int8], lay: _Layout,
              v: NDArray[np.float64], g0: float, atol: float, max_sweeps: int
              ) -> tuple[NDArray[np.float64], int]:
    """Relative values of the decision ``table`` by GMRES; returns (packed v, sweeps)."""
    op = _Operator(grid, MODE_TABLE, table)
    full = np.zeros(grid.shape())
    out = np.empty(grid.shape())
    tmp = np.empty(lay.size)
    op(full, out)
    c = lay.pack(out)                       # T_pi 0

    def matvec(x: NDArray[np.float64]) -> NDArray[np.float64]:
        vp = np.array(x, dtype=float)
        g = vp[0]
        vp[0] = 0.0
        lay.unpack(vp, full)
        op(full, out)
        lay.pack(out, tmp)
        return vp - (tmp - c) + g

    x0 = lay.pack(v)
    x0[0] = g0
    x, used, _ = _gmres(matvec, c, x0, atol, RESTART, max_sweeps)
    x[0] = 0.0
    return x, used + 1


def policy_iteration(grid: DispatchGrid, v0: NDArray[np.float64] | None, tol: float,
                     span_rtol: float | None = None, max_policies: int = 30,
                     max_sweeps: int = 20000, label: str = "PI[optimal]"
                     ) -> tuple[NDArray[np.float64], float, float, float, int, float]:
    """Optimal relative values by policy iteration; the return value is that of VI.

    Returns ``(v, g, g_low, g_high, sweeps, span)``: the value after the last optimality
    sweep (``Tv - g``), ``g = (Tv)(0)``, the Odoni bounds of that sweep, the number of operator
    applications (optimality sweeps and GMRES products) and the span.  One server has no
    decision: it is solved by value iteration.

    Raises
    ------
    NotConverged
        When ``max_policies`` improvements or ``max_sweeps`` operator applications did not
        bring the span below the tolerance (the message gives the last Odoni bounds).
    """
    if grid.m == 1:
        return _iterate(grid, MODE_OPT, None, v0, tol, None, None, max_sweeps, False, label,
                        span_rtol=span_rtol)
    opt = _Operator(grid, MODE_OPT, None, record=True)
    lay = _Layout(grid, MODE_OPT)
    v = np.zeros(grid.shape()) if v0 is None else np.array(v0, dtype=float, copy=True)
    tv = np.empty_like(v)
    f = np.empty(lay.size)
    r = np.empty(lay.size)
    sweeps = 0
    g_low = g_high = span = math.nan
    for _ in range(max_policies):
        opt(v, tv)
        sweeps += 1
        gn, g_low, g_high = lay.step(v, tv, f, r)
        span = g_high - g_low
        if not math.isfinite(span):
            raise NotConverged(f"{label} (non-finite iterate)", span, tol, sweeps)
        target = tol if span_rtol is None else max(tol, span_rtol * abs(gn))
        if span < target:
            lay.unpack(f, v)
            return v, gn, g_low, g_high, sweeps, span
        if sweeps >= max_sweeps:
            break
        # inexact evaluation: accurate to a fraction of the current span (the last ones
        # to the target); a 2-norm over the stored states
        atol = max(0.05 * target, 0.01 * span) * math.sqrt(lay.size) * 0.1
        x, used = _evaluate(grid, opt.table.copy(), lay, v, gn, atol, max_sweeps - sweeps)
        sweeps += used
        lay.unpack(x, v)
    raise _unconverged(label, span, tol, sweeps, g_low, g_high)
