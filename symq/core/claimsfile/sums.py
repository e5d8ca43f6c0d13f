"""Which long finite sums Euler-Maclaurin acceleration may be trusted on.

A claim's finite sum of more than a few thousand terms is summed directly at its head and by
Euler-Maclaurin summation over the rest (:mod:`symq.core.claimsfile.quantities`).  That tail
replaces the sum by an integral plus end corrections, which is exact up to a small remainder
only when the term is smooth on the *whole* range: a narrow bump between integers
(``exp(-100 (k - 5000.5)^2)``) or a pole near the real axis (``1/((k - 5000.5)^2 + 10^-6)``)
changes the integral but not the sum, and no error estimate at the ends sees it.  Sampling the
term cannot rule such features out, so acceleration is accepted only for terms whose form
proves them smooth: built from ``k``, numbers, ``+``, ``*``, powers ``p(k)^c`` of polynomials
``p`` whose complex roots all lie at least :data:`ROOT_MARGIN` from the summed range, and
exponentials ``b^(a k + c)``, ``exp(a k + c)`` of linear functions of ``k``.  Any other term
makes the point inconclusive with the reason (write the sum in closed form).

Examples
--------
>>> import sympy as sp
>>> k = sp.Symbol("k")
>>> acceleration_obstacle(1 / k**2 + sp.Rational(1, 2)**k, k, 2001, 10**9) is None
True
>>> acceleration_obstacle(sp.exp(-100 * (k - sp.Rational(10001, 2))**2), k, 2001, 10**4)
'exp(-100*(k - 10001/2)**2) is not an exponential of a linear function of k'
"""

from __future__ import annotations

import sympy as sp

__all__ = ["acceleration_obstacle", "ROOT_MARGIN", "MAX_ROOT_DEGREE"]

#: Least distance (in the complex plane) from a root of a base polynomial to the summed range.
ROOT_MARGIN = 10.0
#: Highest degree of a base polynomial whose roots are located (numerically, by sympy's nroots).
MAX_ROOT_DEGREE = 40


def acceleration_obstacle(term: sp.Expr, k: sp.Symbol, low: int, high: int) -> str | None:
    """Why Euler-Maclaurin summation of ``term`` over ``low <= k <= high`` may not be trusted,
    or None when the term's form proves it smooth there (see the module notes).

    Parameters
    ----------
    term : sympy.Expr
        The summand, with every symbol but ``k`` replaced by its number.
    k : sympy.Symbol
        The summation index.
    low, high : int
        The range summed by acceleration.
    """
    if not term.has(k):
        return None
    if term == k:
        return None
    if term.is_Add or term.is_Mul:
        for arg in term.args:
            reason = acceleration_obstacle(arg, k, low, high)
            if reason:
                return reason
        return None
    if term.is_Pow:
        base, exponent = term.args
        if not exponent.has(k):
            if exponent.is_Integer and exponent >= 0:
                return acceleration_obstacle(base, k, low, high)
            return _roots_away(base, k, low, high, term)
        if not base.has(k):
            if base.is_positive and _is_linear(exponent, k):
                return None
            return f"{term} is not an exponential of a linear function of k"
        return f"{term} has k in both its base and its exponent"
    if isinstance(term, sp.exp):
        return None if _is_linear(term.args[0], k) else \
            f"{term} is not an exponential of a linear function of k"
    return f"{term} is not a form whose smoothness symq can prove (the function " \
           f"{type(term).__name__})"


def _is_linear(expr: sp.Expr, k: sp.Symbol) -> bool:
    return expr.is_polynomial(k) and sp.degree(expr, k) <= 1


def _roots_away(base: sp.Expr, k: sp.Symbol, low: int, high: int, term: sp.Expr) -> str | None:
    """``base`` is a polynomial in ``k`` whose roots keep :data:`ROOT_MARGIN` from the range."""
    if not base.is_polynomial(k):
        return f"the base of {term} is not a polynomial in k"
    poly = sp.Poly(base, k)
    if poly.degree() > MAX_ROOT_DEGREE:
        return f"the base of {term} has degree {poly.degree()} (at most {MAX_ROOT_DEGREE})"
    try:
        roots = poly.nroots(n=15, maxsteps=200)
    except (sp.polys.polyerrors.PolynomialError, ValueError, ZeroDivisionError):
        return f"the roots of the base of {term} could not be located"
    for root in roots:
        re_part, im_part = (float(v) for v in sp.Tuple(*root.as_real_imag()))
        nearest = min(max(re_part, float(low)), float(high))
        if abs(complex(re_part - nearest, im_part)) < ROOT_MARGIN:
            return (f"{term} has a pole or zero near k = {complex(re_part, im_part):.6g}, "
                    f"within {ROOT_MARGIN:g} of the summed range [{low}, {high}]")
    return None
