r"""Independent numeric cross-check: the optimum and the equilibrium by convex optimisation.

Minimises the social cost :math:`J(x) = \sum_j w_j x_j/(C_j - x_j)` and the Beckmann potential
:math:`\Phi(x) = \sum_j w_j \ln(C_j/(C_j - x_j))` subject to :math:`\sum_j x_j = \rho`,
:math:`0 \le x_j < C_j` with :func:`scipy.optimize.minimize` (SLSQP, analytic gradients) in the
utilisations :math:`u_j = x_j/C_j \in [0, 1)`.  Nothing here uses the closed forms of
:mod:`symq.routing.symbolic`: this module is the reference the closed forms are checked against
(Altman, Ayesta, Prabhu 2011, Sections 3-4; note A7).  Suitable for K up to about 1000.

Examples
--------
>>> res = minimize_social_cost([4, 2, 1], [1, 2, 4], 5)
>>> bool(abs(res.cost - 11.0) < 1e-9)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize

from symq.core.errors import NotConverged

from .farm import ServerFarm, as_farm

__all__ = ["NumericSolution", "minimize_social_cost", "minimize_potential", "social_cost",
           "potential"]

_U_MAX = 1.0 - 1e-13


@dataclass(frozen=True, eq=False)
class NumericSolution:
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
    """

    loads: np.ndarray
    cost: float
    objective: float
    iterations: int
    residual: float


def social_cost(C: ArrayLike, w: ArrayLike, loads: ArrayLike) -> float:
    r"""Social cost :math:`\sum_j w_j x_j/(C_j - x_j)` of a load vector (paper Section 2)."""
    C, w, x = (np.asarray(v, dtype=float) for v in (C, w, loads))
    return float(np.sum(w * x / (C - x)))


def potential(C: ArrayLike, w: ArrayLike, loads: ArrayLike) -> float:
    r"""Beckmann potential :math:`\sum_j w_j \ln(C_j/(C_j - x_j))` (paper Section 4)."""
    C, w, x = (np.asarray(v, dtype=float) for v in (C, w, loads))
    return float(np.sum(-w * np.log1p(-x / C)))


def _kkt_residual(C: np.ndarray, gradient_u: np.ndarray, loads: np.ndarray, rho: float) -> float:
    r"""Relative violation of the KKT conditions, from the objective's gradient only.

    With :math:`g_j = \partial f/\partial x_j` and :math:`\lambda` the load-weighted mean of
    :math:`g` over the used servers: :math:`|g_j - \lambda|/\lambda` on used servers and
    :math:`\max(0, \lambda - g_j)/\lambda` on unused ones.
    """
    g = gradient_u / C
    used = loads > 1e-9 * rho
    lam = float(np.sum(g[used] * loads[used]) / np.sum(loads[used]))
    stationarity = np.abs(g[used] - lam) / lam
    dual = np.maximum(0.0, lam - g[~used]) / lam
    return float(max(np.max(stationarity, initial=0.0), np.max(dual, initial=0.0)))


def _minimize(farm: ServerFarm, rho: float, value: Callable[[np.ndarray], np.ndarray],
              slope: Callable[[np.ndarray], np.ndarray], name: str, tol: float,
              maxiter: int, rounds: int = 8, kkt_tol: float = 1e-6) -> NumericSolution:
    C = farm.C
    u = np.full(farm.K, rho / farm.capacity)
    constraint = {"type": "eq", "fun": lambda v: (C @ v - rho) / rho, "jac": lambda v: C / rho}
    best = float(np.sum(value(u)))
    iterations, kkt, message = 0, np.inf, ""
    for _ in range(rounds):   # restart from the last point, rescaling the objective
        scale = best if best > 0 else 1.0

        def fun(v: np.ndarray) -> float:
            return float(np.sum(value(np.minimum(v, _U_MAX)))) / scale

        def jac(v: np.ndarray) -> np.ndarray:
            return slope(np.minimum(v, _U_MAX)) / scale

        result = minimize(fun, u, jac=jac, method="SLSQP", bounds=[(0.0, _U_MAX)] * farm.K,
                          constraints=[constraint], options={"ftol": tol, "maxiter": maxiter})
        iterations += int(result.nit)
        message = str(result.message)
        candidate = np.clip(result.x, 0.0, _U_MAX)
        candidate *= rho / float(C @ candidate)      # restore work conservation exactly
        if np.any(candidate >= 1.0) or not np.all(np.isfinite(candidate)):
            continue
        value_new = float(np.sum(value(candidate)))
        improved = value_new < best * (1.0 - 1e-14)
        if value_new <= best:
            u, best = candidate, value_new
        kkt = _kkt_residual(C, slope(u), C * u, rho)
        if kkt <= kkt_tol and not improved:
            break
    loads = C * u
    residual = abs(float(np.sum(loads)) - rho) / rho
    if not (kkt <= kkt_tol) or residual > 1e-10:
        raise NotConverged(f"SLSQP ({name}: {message})", max(kkt, residual), kkt_tol, iterations)
    return NumericSolution(loads=loads, cost=social_cost(C, farm.w, loads), objective=best,
                           iterations=iterations, residual=kkt)


def minimize_social_cost(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                         rho: float | None = None, *, tol: float = 1e-15,
                         maxiter: int = 500) -> NumericSolution:
    r"""Minimise :math:`J` numerically (social optimum, paper Section 3).

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
        Iteration limit.

    Returns
    -------
    NumericSolution

    Raises
    ------
    NotConverged
        If SLSQP fails or violates work conservation by more than 1e-8 (relative).
    InvalidParameter, StabilityError
        For bad input (see :class:`ServerFarm`).
    """
    if rho is None and isinstance(C, ServerFarm):
        rho, w = w, None
    farm = as_farm(C, w)
    rho = farm.check_load(rho)
    ww = farm.w
    return _minimize(farm, rho, lambda u: ww * u / (1.0 - u), lambda u: ww / (1.0 - u) ** 2,
                     "social cost", tol, maxiter)


def minimize_potential(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                       rho: float | None = None, *, tol: float = 1e-15,
                       maxiter: int = 500) -> NumericSolution:
    r"""Minimise the Beckmann potential :math:`\Phi` numerically (Wardrop equilibrium, Section 4).

    In utilisations: :math:`\Phi = -\sum_j w_j \ln(1 - u_j)`, gradient :math:`w_j/(1-u_j)`.

    Parameters, returns and raises as :func:`minimize_social_cost`.
    """
    if rho is None and isinstance(C, ServerFarm):
        rho, w = w, None
    farm = as_farm(C, w)
    rho = farm.check_load(rho)
    ww = farm.w
    return _minimize(farm, rho, lambda u: -ww * np.log1p(-u), lambda u: ww / (1.0 - u),
                     "potential", tol, maxiter)
