"""Integrals in a claim's formulas: ``integral(f, x, a, b)``, by two quadratures that must agree.

A formula of a claims file may integrate over a real variable ``x`` (bound: a name inside ``f``
only), from ``a`` to ``b`` (``-oo``/``oo`` allowed; the bounds may use the claim's parameters):
``integral(exp(-mu*x)*(1 + mu*x), x, 0, oo)``, the tail integral of an Erlang distribution, or the
integrals of a service-time tail in the mean-field fixed points of JIQ and LL(d) load balancing.
:func:`symq.core.formula.parse_formula` builds it (an unevaluated :class:`sympy.Integral`); a sum
or an integral inside an integral is refused (its cost could not be bounded).

At each point the integral is computed twice, by tanh-sinh quadrature at 50 digits and by
Gauss-Legendre quadrature at :data:`GAUSS_DIGITS` digits (:func:`mpmath.quad`, in the calling
thread's private context; mpmath maps an infinite interval to a finite one), each method's
degree bounded so that one integral costs at most :data:`MAX_EVALUATIONS` evaluations of ``f``
(:data:`INTEGRAL_COST` counts towards a claim's budget in
:func:`symq.core.claimsfile.quantities.sum_cost`).  The error bar is the larger of their
difference and their own error estimates (Takahasi and Mori 1974; Bailey, Jeyabalan and Li,
Experimental Mathematics 14, 2005).  A bar above :data:`MAX_RELATIVE_ERROR` of the value (a
divergent integral, ``integral(1/x, x, 1, oo)``; a singularity inside the interval; an
oscillating tail) leaves the point undecided with both estimates; a smaller one goes with the value
(:class:`~symq.core.approximate.Approximate`) unless it is negligible, and the comparison
decides only what the bar allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy as sp

from ..approximate import settle
from ..claims import Inconclusive
from ..compiler import compile as compile_expr
from ..precision import local_mp

__all__ = [
    "GAUSS_DIGITS",
    "INTEGRAL_COST",
    "MAX_EVALUATIONS",
    "MAX_RELATIVE_ERROR",
    "evaluate_integral",
    "mp_ready",
]

#: Digits of the Gauss-Legendre estimate (its nodes cost seconds to compute at 50 digits).
GAUSS_DIGITS = 30
#: Most evaluations of the integrand one integral may use (both quadratures together).
MAX_EVALUATIONS = 6_000
#: What one integral at one point counts in a claim's evaluation budget.
INTEGRAL_COST = MAX_EVALUATIONS
#: Largest relative error bar of an integral reported as a value.
MAX_RELATIVE_ERROR = 1e-4
#: Highest degree of each quadrature (tanh-sinh: about 2^(degree+1) nodes per interval end).
_MAX_DEGREE = 8


class _OverBudget(Exception):
    pass


def mp_ready(expr: sp.Expr) -> sp.Expr:
    """``expr`` with the functions sympy's mpmath printer does not translate renamed to
    mpmath's (``LambertW`` would run as a 15-digit sympy call: ``lambertw``, the principal
    branch)."""
    if not expr.has(sp.LambertW):
        return expr
    return expr.replace(sp.LambertW, sp.Function("lambertw"))


def evaluate_integral(node: sp.Integral, inputs: Mapping[sp.Symbol, Any], label: str) -> Any:
    """The integral ``node`` at the point: a 50-digit number, or ``value ± error``.

    Parameters
    ----------
    node : sympy.Integral
        ``Integral(f, (x, a, b))`` as parsed.
    inputs : mapping
        The mpmath numbers of its parameters (the symbols of ``f``, ``a``, ``b`` but ``x``).
    label : str
        What is evaluated (for messages).

    Raises
    ------
    Inconclusive
        When the integrand or a bound is not a finite real number, the evaluation budget is
        spent, or the two quadratures disagree by more than :data:`MAX_RELATIVE_ERROR`.
    """
    ctx = local_mp()
    (x, low, high), = node.limits
    symbols = sorted(inputs, key=lambda s: s.name)
    fixed = [inputs[s] for s in symbols]
    bounds = []
    for bound in (low, high):
        if bound in (sp.oo, -sp.oo):
            bounds.append(ctx.inf if bound is sp.oo else -ctx.inf)
            continue
        value = compile_expr(mp_ready(bound), symbols, backend="mpmath")(*fixed)
        if isinstance(value, ctx.mpc) or not ctx.isfinite(value):
            raise Inconclusive(f"{label}: the bound {bound} of {node} is {value} here, not a "
                               "finite real number")
        bounds.append(value)
    if bounds[0] > bounds[1]:
        raise Inconclusive(f"{label}: the bounds of {node} are in decreasing order here "
                           f"({ctx.nstr(bounds[0], 10)} > {ctx.nstr(bounds[1], 10)})")
    if bounds[0] == bounds[1]:
        return ctx.mpf(0)
    integrand = compile_expr(mp_ready(node.function), [x] + symbols, backend="mpmath")
    count = [0]

    def f(t: Any) -> Any:
        count[0] += 1
        if count[0] > MAX_EVALUATIONS:
            raise _OverBudget
        value = integrand(t, *fixed)
        if isinstance(value, ctx.mpc) or not ctx.isfinite(value):
            raise ValueError(f"the integrand is {value} at {x} = {ctx.nstr(t, 10)}")
        return value

    try:
        first, own1 = ctx.quad(f, bounds, method="tanh-sinh", error=True,
                               maxdegree=_MAX_DEGREE)
        with ctx.workdps(GAUSS_DIGITS):
            second, own2 = ctx.quad(f, bounds, method="gauss-legendre", error=True,
                                    maxdegree=_MAX_DEGREE)
    except _OverBudget:
        raise Inconclusive(f"{label}: {node} needs more than {MAX_EVALUATIONS} evaluations of "
                           "its integrand here (a singularity, or a slowly decaying tail: split "
                           "the interval or write a closed form)") from None
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        raise Inconclusive(f"{label}: {node} cannot be computed here: {exc}") from None
    error = max(abs(first - second), abs(own1), abs(own2))
    scale = max(abs(first), abs(second), ctx.mpf(10) ** -300)
    if not error <= MAX_RELATIVE_ERROR * scale:
        raise Inconclusive(f"{label}: {node} does not converge here: tanh-sinh gives "
                           f"{ctx.nstr(first, 12)} ± {ctx.nstr(own1, 2)}, Gauss-Legendre "
                           f"{ctx.nstr(second, 12)} ± {ctx.nstr(own2, 2)} (a divergent integral, "
                           "or a singularity inside the interval: split it there)")
    return settle(+first, error, f"{node} by tanh-sinh and Gauss-Legendre quadrature")
