r"""Independent numeric cross-check: the optimum and the equilibrium by convex optimisation.

Minimises the social cost :math:`J(x) = \sum_j w_j x_j/(C_j - x_j)` and the Beckmann potential
:math:`\Phi(x) = \sum_j w_j \ln(C_j/(C_j - x_j))` subject to :math:`\sum_j x_j = \rho`,
:math:`0 \le x_j < C_j` with :func:`scipy.optimize.minimize` (SLSQP, analytic gradients) in the
utilisations :math:`u_j = x_j/C_j \in [0, 1)`, restarted from its last point with a rescaled
objective until it stops improving, then polished by Newton's method on the KKT system of the
support SLSQP found (with active-set corrections).  The answer is accepted only if the KKT
conditions, evaluated from the objective's gradient, hold to 1e-10 relative (1e-6 without
polish); otherwise :class:`~symq.core.errors.NotConverged` is raised.

The same solver takes any separable convex objective :math:`\sum_j F_j(x_j)` with
:func:`minimize_separable`: the ``routing-cost`` models of :mod:`symq.routing.declared` (a cost
declared in a claims file, and its Beckmann potential) are solved by it.

Nothing here uses the closed forms of :mod:`symq.routing.symbolic`: this module is the
reference the closed forms of the paper's centralised- and decentralised-routing sections
(Altman, Ayesta, Prabhu 2011) are checked against.  Cost: about 0.01 s for K = 50, 0.3 s for
K = 200, 10 s for K = 1000 (SLSQP's dense subproblems dominate).

Examples
--------
>>> res = minimize_social_cost([4, 2, 1], [1, 2, 4], 5)
>>> bool(abs(res.cost - 11.0) < 1e-9)
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize

from symq.core.errors import NotConverged
from symq.core.result import Exactness, ResultBase

from .farm import ServerFarm, as_farm

__all__ = ["NumericSolution", "minimize_social_cost", "minimize_potential", "minimize_separable",
           "social_cost", "potential"]

_U_MAX = 1.0 - 1e-13


@dataclass(frozen=True, eq=False)
class NumericSolution(ResultBase):
    """Result of a numeric minimisation.

    Attributes
    ----------
    loads : numpy.ndarray
        Minimising loads (input server order).
    cost : float
        Social cost :math:`J` at those loads (for both objectives).
    objective : float
        Value of the minimised objective (J or Phi).
    iterations : int
        Optimiser iterations.
    residual : float
        Relative violation of the KKT conditions computed from the objective's gradient.
    method : str
        ``"SLSQP"``, or ``"SLSQP + KKT Newton polish"`` when the Newton polish of the KKT
        conditions refined the optimiser's point.
    exactness : Exactness
        ``numeric``.
    """

    summary: ClassVar[tuple[str, ...]] = ("cost", "objective", "iterations", "residual")

    loads: np.ndarray
    cost: float
    objective: float
    iterations: int
    residual: float
    method: str = "SLSQP"
    exactness: Exactness = Exactness.NUMERIC


def social_cost(C: ArrayLike, w: ArrayLike, loads: ArrayLike) -> float:
    r"""Social cost :math:`\sum_j w_j x_j/(C_j - x_j)` of a load vector (paper, model section)."""
    C, w, x = (np.asarray(v, dtype=float) for v in (C, w, loads))
    return float(np.sum(w * x / (C - x)))


def potential(C: ArrayLike, w: ArrayLike, loads: ArrayLike) -> float:
    r"""Beckmann potential :math:`\sum_j w_j \ln(C_j/(C_j - x_j))` (paper,
    decentralised-routing section)."""
    C, w, x = (np.asarray(v, dtype=float) for v in (C, w, loads))
    return float(np.sum(-w * np.log1p(-x / C)))


def _kkt_residual(C: np.ndarray, gradient_u: np.ndarray, u: np.ndarray) -> float:
    r"""Relative violation of the KKT conditions, from the objective's gradient only.

    With :math:`g_j = \partial f/\partial x_j` and :math:`\lambda` the load-weighted mean of
    :math:`g` over the used servers (:math:`u_j > 0`): :math:`|g_j - \lambda|/\lambda` on used
    servers and :math:`\max(0, \lambda - g_j)/\lambda` on unused ones (loads below
    :math:`10^{-9}` times the largest utilisation count as unused).
    """
    g = gradient_u / C
    used = u > 1e-9 * np.max(u)
    if not np.any(used):
        return float("inf")
    loads = C[used] * u[used]
    lam = float(np.sum(g[used] * loads) / np.sum(loads))
    stationarity = np.abs(g[used] - lam) / lam
    dual = np.maximum(0.0, lam - g[~used]) / lam
    return float(max(np.max(stationarity, initial=0.0), np.max(dual, initial=0.0)))


def _polish(C: np.ndarray, rho: float, u: np.ndarray, slope: Callable[[np.ndarray], np.ndarray],
            curvature: Callable[[np.ndarray], np.ndarray], support_tol: float = 1e-7
            ) -> np.ndarray | None:
    r"""Newton's method on the KKT system, on the support found by the optimiser.

    Solves :math:`f_j'(u_j) = \lambda C_j` (j in the support S),
    :math:`\sum_j C_j u_j = \rho` with the exact diagonal Hessian (equality-constrained
    Newton, Boyd & Vandenberghe, *Convex Optimization*, Section 10.2); servers outside S keep
    :math:`u_j = 0`.  If a load of S turns non-positive the server leaves S; if a server
    outside S has :math:`f_j'(0) < \lambda C_j` it joins S (a primal active-set update).
    Returns ``None`` if no consistent support is found.
    """
    support = u > support_tol * np.max(u)
    zero = np.zeros_like(u)
    for _ in range(2 * u.size + 2):
        if not np.any(support):
            return None
        v = np.where(support, np.maximum(u, 0.0), 0.0)
        if not np.any(v[support] > 0):
            v[support] = rho / float(np.sum(C[support]))
        a = C[support]
        lam = np.nan
        for _ in range(80):
            x = v[support]
            g, H = slope(v)[support], curvature(v)[support]
            lam = (rho - a @ x + np.sum(a * g / H)) / np.sum(a * a / H)
            step = (lam * a - g) / H
            scale = 1.0
            while np.any(x + scale * step >= 1.0) and scale > 1e-12:
                scale /= 2
            v[support] = x + scale * step
            if np.max(np.abs(scale * step)) <= 1e-15:
                break
        if not np.all(np.isfinite(v)):
            return None
        negative = support & (v <= 0)
        if np.any(negative):
            support[np.argmin(np.where(negative, v, np.inf))] = False
            continue
        violation = np.where(support, 0.0, lam * C - slope(zero))
        if np.max(violation) > 1e-12 * lam * np.max(C):
            support[int(np.argmax(violation))] = True
            u = v
            continue
        return v
    return None


def _minimize(C: np.ndarray, rho: float, value: Callable[[np.ndarray], np.ndarray],
              slope: Callable[[np.ndarray], np.ndarray],
              curvature: Callable[[np.ndarray], np.ndarray], name: str, tol: float,
              maxiter: int, polish: bool, cost: Callable[[np.ndarray], float],
              rounds: int = 8) -> NumericSolution:
    """Minimise ``sum(value(u))`` over utilisations ``u = x/C`` in ``[0, 1)`` with
    ``C @ u = rho``; ``slope`` and ``curvature`` are the first two derivatives in ``u``, ``cost``
    the social cost of the loads ``x`` (reported as :attr:`NumericSolution.cost`)."""
    K = C.size
    u = np.full(K, rho / float(np.sum(C)))
    constraint = {"type": "eq", "fun": lambda v: (C @ v - rho) / rho, "jac": lambda v: C / rho}
    best = float(np.sum(value(u)))
    iterations, message = 0, ""
    coarse_tol = 1e-6
    for _ in range(rounds):   # restart from the last point, rescaling the objective
        scale = best if best > 0 else 1.0

        def fun(v: np.ndarray, scale: float = scale) -> float:
            return float(np.sum(value(np.minimum(v, _U_MAX)))) / scale

        def jac(v: np.ndarray, scale: float = scale) -> np.ndarray:
            return slope(np.minimum(v, _U_MAX)) / scale

        if iterations >= maxiter:
            break
        result = minimize(fun, u, jac=jac, method="SLSQP", bounds=[(0.0, _U_MAX)] * K,
                          constraints=[constraint],
                          options={"ftol": tol, "maxiter": maxiter - iterations})
        iterations += int(result.nit)
        message = str(result.message)
        candidate = np.clip(result.x, 0.0, _U_MAX)
        candidate *= rho / float(C @ candidate)      # restore work conservation exactly
        if np.any(candidate >= 1.0) or not np.all(np.isfinite(candidate)):
            continue
        value_new = float(np.sum(value(candidate)))
        improved = value_new < best * (1.0 - 1e-13)
        if value_new <= best:
            u, best = candidate, value_new
        if not improved and _kkt_residual(C, slope(u), u) <= coarse_tol:
            break
    kkt = _kkt_residual(C, slope(u), u)
    tolerance = coarse_tol
    how = "SLSQP"
    if polish and np.isfinite(kkt):
        polished = _polish(C, rho, u, slope, curvature)
        if polished is not None and _kkt_residual(C, slope(polished), polished) <= 1e-10:
            u, tolerance, how = polished, 1e-10, "SLSQP + KKT Newton polish"
            best = float(np.sum(value(u)))
            kkt = _kkt_residual(C, slope(u), u)
    if not kkt <= tolerance:
        raise NotConverged(f"SLSQP ({name}: {message})", kkt, tolerance, iterations)
    loads = C * u
    return NumericSolution(loads=loads, cost=cost(loads), objective=best,
                           iterations=iterations, residual=kkt, method=how)


def minimize_social_cost(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                         rho: float | None = None, *, tol: float = 1e-14,
                         maxiter: int = 100, polish: bool = True) -> NumericSolution:
    r"""Minimise :math:`J` numerically (social optimum, paper, centralised-routing section).

    In utilisations :math:`u_j = x_j/C_j`: :math:`J = \sum_j w_j u_j/(1 - u_j)`, gradient
    :math:`w_j/(1-u_j)^2`.

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs (or a :class:`ServerFarm` as ``C`` and ``w=None``).
    rho : float
        Total work rate, ``0 < rho < sum(C)``.
    tol : float
        SLSQP ``ftol`` on the normalised objective.
    maxiter : int
        Limit on the total number of SLSQP iterations (over all restarts).
    polish : bool
        Finish with Newton's method on the KKT system (default); without it the accuracy is
        about 1e-7 relative.

    Returns
    -------
    NumericSolution

    Raises
    ------
    NotConverged
        If the KKT residual (see :class:`NumericSolution`) exceeds 1e-10 (1e-6 without
        polish); the error carries the residual reached.
    InvalidParameter, StabilityError
        For bad input (see :class:`ServerFarm`).
    """
    if rho is None and isinstance(C, ServerFarm):
        rho, w = w, None
    farm = as_farm(C, w)
    rho = farm.check_load(rho)
    ww = farm.w
    return _minimize(farm.C, rho, lambda u: ww * u / (1.0 - u), lambda u: ww / (1.0 - u) ** 2,
                     lambda u: 2.0 * ww / (1.0 - u) ** 3, "social cost", tol, maxiter, polish,
                     lambda x: social_cost(farm.C, ww, x))


def minimize_potential(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                       rho: float | None = None, *, tol: float = 1e-14,
                       maxiter: int = 100, polish: bool = True) -> NumericSolution:
    r"""Minimise the Beckmann potential :math:`\Phi` numerically (Wardrop equilibrium).

    The equilibrium is the minimiser of :math:`\Phi` (paper, decentralised-routing section).

    In utilisations: :math:`\Phi = -\sum_j w_j \ln(1 - u_j)`, gradient :math:`w_j/(1-u_j)`.

    Parameters, returns and raises as :func:`minimize_social_cost`.
    """
    if rho is None and isinstance(C, ServerFarm):
        rho, w = w, None
    farm = as_farm(C, w)
    rho = farm.check_load(rho)
    ww = farm.w
    return _minimize(farm.C, rho, lambda u: -ww * np.log1p(-u), lambda u: ww / (1.0 - u),
                     lambda u: ww / (1.0 - u) ** 2, "potential", tol, maxiter, polish,
                     lambda x: social_cost(farm.C, ww, x))


def minimize_separable(capacity: ArrayLike, rho: float, value: Callable[[np.ndarray], np.ndarray],
                       slope: Callable[[np.ndarray], np.ndarray],
                       curvature: Callable[[np.ndarray], np.ndarray], *,
                       cost: Callable[[np.ndarray], float] | None = None,
                       name: str = "objective", tol: float = 1e-14, maxiter: int = 100,
                       polish: bool = True) -> NumericSolution:
    r"""Minimise a separable convex objective :math:`\sum_j F_j(x_j)` subject to
    :math:`\sum_j x_j = \rho`, :math:`0 \le x_j < \text{capacity}_j` (the solver of
    :func:`minimize_social_cost` and :func:`minimize_potential`, for any per-server objective).

    Parameters
    ----------
    capacity : array_like
        Upper bounds of the loads, :math:`> 0`; :math:`\rho < \sum_j \text{capacity}_j`.
    rho : float
        Total load.
    value, slope, curvature : callable(x) -> array
        :math:`F_j(x_j)`, :math:`F_j'(x_j)` and :math:`F_j''(x_j)` for a vector of loads (one
        entry per server).  :math:`F_j` must be convex and increasing for :math:`x > 0`, so that
        the multiplier of the KKT conditions is positive.
    cost : callable(x) -> float, optional
        The social cost reported as :attr:`NumericSolution.cost` (default
        :math:`\sum_j F_j(x_j)`).
    name, tol, maxiter, polish
        The objective's name in messages, and as in :func:`minimize_social_cost`.

    Returns
    -------
    NumericSolution

    Raises
    ------
    NotConverged
        If the KKT residual exceeds 1e-10 (1e-6 without polish), e.g. when the minimiser would
        put a load at its capacity.

    Examples
    --------
    >>> res = minimize_separable([1.0, 2.0], 1.5, lambda x: x ** 2, lambda x: 2 * x,
    ...                          lambda x: 2 + 0 * x)
    >>> np.round(res.loads, 12).tolist()
    [0.75, 0.75]
    """
    C = np.asarray(capacity, dtype=float)
    if cost is None:
        def cost(x: np.ndarray) -> float:
            return float(np.sum(value(x)))
    return _minimize(C, float(rho), lambda u: value(C * u), lambda u: C * slope(C * u),
                     lambda u: C * C * curvature(C * u), name, tol, maxiter, polish, cost)
