r"""Moments of the M/G/1 busy period from Takács' functional equation, exactly.

The busy period :math:`B` of an M/G/1 queue with Poisson (:math:`\lambda`) arrivals and service
LST :math:`S^*` has the LST :math:`\Theta` that solves Takács' equation (Takács 1962,
*Introduction to the Theory of Queues*; Kleinrock 1975, *Queueing Systems* I,
ch. 5)

.. math::

    \Theta(s) = S^*\big(s + \lambda - \lambda\Theta(s)\big),

which has no closed form in general.  Its Taylor coefficients at 0 do: with :math:`u(s) = s +
\lambda(1 - \Theta(s))` (so :math:`u(0) = 0`) and :math:`S^*(u) = \sum_j b_j u^j`, the
coefficient of :math:`s^n` on the right involves :math:`\theta_n` only through the term
:math:`b_1 u`, so

.. math::

    \theta_n (1 - \rho) = b_1 [n = 1] + [s^n] \sum_{j \ge 2} b_j u(s)^j,
    \qquad \rho = -\lambda b_1 = \lambda E[S],

a recursion in the truncated power series of :math:`u`, computed in the field of rational
functions of the parameters (exact); :math:`E[B^n] = (-1)^n n!\, \theta_n`.  The first two are
Takács' :math:`E[B] = E[S]/(1-\rho)` and :math:`E[B^2] = E[S^2]/(1-\rho)^3`.

Examples
--------
>>> from symq.me.transforms import Transform
>>> m = busy_period_moments(Transform("mu/(mu + s)", parameters=("mu",)), "lam", 2,
...                         {"mu": 1, "lam": 0.5})
>>> m.moments           # E S/(1 - rho) = 1/0.5, E S^2/(1 - rho)^3 = 2/0.125
(2.0, 16.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp
from sympy.polys.constructor import construct_domain

from symq.core.compiler import compile as compile_exprs
from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.precision import local_mp

from .inversion import Inversion, checked_request, multiple_euler
from .model import Transform, exact_value
from .moments import (
    MAX_ORDER,
    TransformMoments,
    cumulants_from_moments,
    moment_expressions,
    rounded,
)

__all__ = ["busy_period_moments", "busy_period_expressions", "invert_busy_period",
           "takacs_series", "takacs_fixed_point", "multiply_series"]

_CACHE: dict[tuple[str, tuple[str, ...], str, int], tuple[sp.Expr, ...]] = {}


def busy_period_expressions(service: Transform, arrival_rate: str, n: int
                            ) -> tuple[sp.Expr, ...]:
    """The exact moments ``E[B^k]``, ``k = 1..n``, in the parameters and the arrival rate.

    Raises
    ------
    InvalidParameter
        Not an LST, a used arrival-rate name, ``n`` out of range, a service law whose moments
        up to ``n`` do not all exist.
    """
    if service.kind != "lst":
        raise InvalidParameter("service", service.kind, "an LST (kind='lst')")
    if not isinstance(arrival_rate, str) or not arrival_rate.isidentifier() \
            or arrival_rate in service.parameters or arrival_rate == "s":
        raise InvalidParameter("arrival_rate", arrival_rate, "a new parameter name")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ORDER:
        raise InvalidParameter("n", n, f"an integer in 1..{MAX_ORDER}")
    key = (sp.srepr(service.expr), service.parameters, arrival_rate, n)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    raw, bad = moment_expressions(service, n)
    if bad is not None:
        raise InvalidParameter("service", str(service.expr), f"a service law with {n} finite "
                               f"moments (the expansion has the term {bad[1]})")
    lam = sp.Symbol(arrival_rate, positive=True)
    # b_j = (-1)^j E[S^j] / j!, the Taylor coefficients of S* at 0
    b = [sp.Integer(1)] + [(-1) ** j * raw[j - 1] / sp.factorial(j) for j in range(1, n + 1)]
    domain, elements = construct_domain([*b, lam], field=True)
    theta = takacs_series(elements[:-1], elements[-1], n, domain)
    out = tuple((-1) ** k * sp.factorial(k) * domain.to_sympy(theta[k])
                for k in range(1, n + 1))
    _CACHE[key] = out
    return out


def takacs_series(b: list[Any], lam: Any, n: int, domain: Any) -> list[Any]:
    """The Taylor coefficients ``theta_0..theta_n`` of the busy-period LST from the service
    LST's ``b_0..b_n`` and the arrival rate, elements of ``domain`` (module docstring)."""
    zero, one = domain.zero, domain.one
    theta = [one] + [zero] * n                  # theta_0 = 1
    u = [zero] * (n + 1)                        # u = s + lam (1 - Theta), u_0 = 0
    one_minus_rho = one + lam * b[1]
    for order in range(1, n + 1):
        # [s^order] sum_{j>=2} b_j u^j with u known below this order (u's coefficient at
        # `order` enters only through j = 1)
        rest = zero
        power = u[:]                            # u^1 (its coefficient at `order` still 0)
        for j in range(2, order + 1):
            power = multiply_series(power, u, n, zero)
            rest += b[j] * power[order]
        theta[order] = ((b[1] if order == 1 else zero) + rest) / one_minus_rho
        u[order] = (one if order == 1 else zero) - lam * theta[order]
    return theta


def takacs_fixed_point(laplace: Any, lam: Any, z: Any) -> Any:
    """The busy-period LST at ``z`` (``Re z > 0``) by the iteration ``Theta <- S*(z + lam -
    lam Theta)`` from 0, in the thread's mpmath context at its precision.

    Raises
    ------
    NotConverged
        The iteration does not settle in 100 000 steps (its last change named).
    """
    mp = local_mp()
    value = mp.mpc(0)
    tol = mp.mpf(10) ** (-mp.dps + 5)
    new = value
    for _ in range(100_000):
        new = laplace(z + lam - lam * value)
        if abs(new - value) <= tol * max(abs(new), 1):
            return new
        value = new
    raise NotConverged("Takacs' fixed-point iteration", float(abs(new - value)), float(tol),
                       100_000)


def multiply_series(a: list[Any], b: list[Any], n: int, zero: Any) -> list[Any]:
    """The product of two power series truncated after ``s^n``."""
    out = [zero] * (n + 1)
    for i, x in enumerate(a):
        if x == zero:
            continue
        for j in range(n + 1 - i):
            out[i + j] += x * b[j]
    return out


def busy_period_moments(service: Transform, arrival_rate: str = "lam", n: int = 4,
                        values: Mapping[str, Any] | None = None) -> TransformMoments:
    """Moments ``1..n`` of the M/G/1 busy period (module docstring), exact at the values.

    Raises
    ------
    InvalidParameter
        As :func:`busy_period_expressions`; a missing or undeclared parameter value.
    StabilityError
        :math:`\\rho = \\lambda E[S] \\ge 1` (the busy period is not finite).
    """
    exprs = busy_period_expressions(service, arrival_rate, n)
    values = dict(values or {})
    if arrival_rate not in values:
        raise InvalidParameter(arrival_rate, None, "a value (the arrival rate)")
    service.check({k: v for k, v in values.items() if k != arrival_rate})
    exact = {sp.Symbol(k, positive=True): exact_value(k, v) for k, v in values.items()}
    mean = moment_expressions(service, 1)[0][0]
    rho = rounded(exact[sp.Symbol(arrival_rate, positive=True)]
                  * mean.xreplace({x: exact[sp.Symbol(x.name, positive=True)]
                                   for x in mean.free_symbols}))
    if rho >= 1.0:
        raise StabilityError(f"load rho = {arrival_rate} E[S] = {rho:.6g} must be < 1 for a "
                             "finite busy period")
    numbers = [rounded(e.xreplace({x: exact[sp.Symbol(x.name, positive=True)]
                                   for x in e.free_symbols})) for e in exprs]
    return TransformMoments(tuple(numbers), cumulants_from_moments(numbers), (),
                            tuple(str(e) for e in exprs), None, "", "lst",
                            "Takacs' equation: power series to order n (exact)")


def invert_busy_period(service: Transform, arrival_rate: str, t: Any,
                       values: Mapping[str, Any], what: str = "density",
                       digits: int = 10) -> Inversion:
    r"""The busy period's density, distribution function or tail at the points ``t``.

    :math:`\Theta(s)` is evaluated at each node of the unified Euler contour (which stays in
    :math:`\mathrm{Re}\,s > 0`, where the iteration :math:`\Theta \leftarrow S^*(s + \lambda -
    \lambda\Theta)` from 0 converges: Abate & Whitt 1992, Oper. Res. Lett. 12:275-281) at
    :math:`M + 15` digits; the second method is Euler with :math:`\lceil 3M/2 \rceil` terms
    (the Talbot contour enters :math:`\mathrm{Re}\,s < 0`, where the iteration need not
    converge).  Their difference is the stated error.

    Raises
    ------
    InvalidParameter
        As :func:`busy_period_moments`; ``what`` or ``digits`` or a point out of range.
    StabilityError
        :math:`\rho \ge 1`.
    NotConverged
        The iteration does not settle at a node (its residual named).
    """
    points = checked_request(t, what, digits, 30)
    busy_period_moments(service, arrival_rate, 1, values)      # the checks and rho < 1
    own = {k: v for k, v in values.items() if k in service.parameters}
    lam_value = float(values[arrival_rate])
    expr = service.expr.xreplace({service.symbols[k]: exact_value(k, v)
                                  for k, v in own.items() if k in service.symbols})
    laplace = compile_exprs(expr, (service.variable,), "mpmath")

    def theta(z: Any) -> Any:
        value = takacs_fixed_point(laplace, local_mp().mpf(lam_value), z)
        if what == "density":
            return value
        return value / z if what == "cdf" else (1 - value) / z

    M = math.ceil(digits / 0.6) + 2
    more = math.ceil(1.5 * M)
    euler = multiple_euler(theta, points, [], M)
    second = multiple_euler(theta, points, [], more)
    return Inversion(points, euler, np.abs(euler - second), second, what, 0.0, M, M + 15,
                     f"unified Euler at M = {M} vs M = {more} on Takacs' fixed point")

