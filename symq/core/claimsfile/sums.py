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

import threading
from collections.abc import Callable
from typing import Any

import sympy as sp

from ..approximate import NEGLIGIBLE, settle
from ..budget import time_budget
from ..claims import Inconclusive
from ..errors import DerivationTimeout
from ..precision import local_mp

__all__ = [
    "CLOSED_FORM_SECONDS",
    "DIRECT_TERMS",
    "LEVIN_TERMS",
    "MAX_RELATIVE_ERROR",
    "MAX_ROOT_DEGREE",
    "METHOD_SECONDS",
    "ROOT_MARGIN",
    "acceleration_obstacle",
    "closed_form",
    "infinite_sum",
]

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


# ----------------------------------------------------------------------------- evaluation

#: Terms of an infinite sum summed directly before acceleration is tried (also the split of
#: the Euler-Maclaurin estimate; a second estimate splits after half as many).
DIRECT_TERMS = 2_000
#: Seconds sympy may spend finding the closed form of one infinite sum (main thread only).
CLOSED_FORM_SECONDS = 2.0
#: Seconds one numerical acceleration method may spend on one sum (main thread only).
METHOD_SECONDS = 1.5
#: Largest relative error bar of a sum that is reported as a value (with its bar); beyond it
#: the sum is undecided at the point ("does not converge").
MAX_RELATIVE_ERROR = 1e-4
#: Partial sums the Levin transformation is given at most.
LEVIN_TERMS = 240
_CLOSED_FORMS: dict[sp.Sum, sp.Expr | None] = {}
_CACHE_SIZE = 512
#: Priority of the estimates (the better method's value is reported).
_ORDER = ("sympy's closed form", "Euler-Maclaurin", "Levin-u", "Richardson/Shanks")


def closed_form(node: sp.Sum) -> sp.Expr | None:
    """sympy's closed form of the infinite sum ``node`` in its parameters, or None (none found
    within :data:`CLOSED_FORM_SECONDS`, or the time budget cannot be enforced: not the main
    thread).  Remembered per sum (the symbolic work is done once per claim, not per point)."""
    if node in _CLOSED_FORMS:
        return _CLOSED_FORMS[node]
    if threading.current_thread() is not threading.main_thread():
        return None
    result: sp.Expr | None = None
    try:
        with time_budget(CLOSED_FORM_SECONDS, "the closed form of a sum"):
            found = sp.summation(node.function, node.limits[0])
        if not found.has(sp.Sum) or found.has(sp.Piecewise):
            result = found
    except DerivationTimeout:
        result = None
    except Exception:  # noqa: BLE001 - sympy's summation raises many kinds; no closed form
        result = None
    if len(_CLOSED_FORMS) >= _CACHE_SIZE:
        _CLOSED_FORMS.pop(next(iter(_CLOSED_FORMS)))
    _CLOSED_FORMS[node] = result
    return result


def _closed_value(node: sp.Sum, outer: dict[sp.Symbol, sp.Expr]) -> tuple[Any, str]:
    """The closed form at the point (a 50-digit mpf), or (None, why not)."""
    ctx = local_mp()
    form = closed_form(node)
    if form is None:
        return None, "no closed form"
    try:
        at = form.xreplace(outer)
        if at in (sp.oo, -sp.oo):
            return "diverges", "sympy finds that it diverges"
        if at.has(sp.Sum) or not at.is_number or at.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
            return None, "no closed form here"
        with time_budget(CLOSED_FORM_SECONDS, "the value of a closed form"):
            value = sp.N(at, ctx.dps + 10)
        if not (value.is_Float or value.is_Rational):
            return None, f"its closed form is not a finite real number here ({value})"
        return ctx.mpf(sp.Float(value, ctx.dps + 10)._mpf_), ""
    except (DerivationTimeout, TypeError, ValueError, ZeroDivisionError) as exc:
        return None, f"its closed form cannot be evaluated here ({exc})"


def infinite_sum(term: Callable[[Any], Any], start: int, node: sp.Sum, summand: sp.Expr,
                 outer: dict[sp.Symbol, sp.Expr], label: str) -> Any:
    """``sum(term(i), i >= start)``: a 50-digit value, or an
    :class:`~symq.core.approximate.Approximate` ``value ± error``.

    Summed directly while the terms fall below 10^-55 of the partial sum for 20 terms in a row
    (up to :data:`DIRECT_TERMS` terms).  Otherwise up to four methods: sympy's closed form
    (:func:`closed_form`, at the point), Euler-Maclaurin summation of the tail after
    :data:`DIRECT_TERMS` terms (:func:`mpmath.sumem`; only for terms whose form proves them
    smooth, :func:`acceleration_obstacle`; its error estimate and a second split after half as
    many terms are its own error), the Levin u-transformation of the partial sums (Levin 1973;
    Weniger, Comput. Phys. Rep. 10, 1989, sec. 7) and the Richardson and Shanks extrapolations
    of :func:`mpmath.nsum` (two step sizes); each method is bounded by :data:`METHOD_SECONDS`.
    An estimate counts when it is finite and its own error is below :data:`MAX_RELATIVE_ERROR`
    of it.  The two estimates of different methods that agree best give the value (the better
    method's, in the order above) and the error bar (their difference, or their own errors if
    larger); a closed form alone is accepted as it is.  A sum whose estimates do not agree within
    :data:`MAX_RELATIVE_ERROR` (divergent, or too slow for every method) is undecided at the point
    (:class:`Inconclusive`, naming the estimates), as is one sympy finds divergent.

    Parameters
    ----------
    term : callable
        The term at an mpf index, in the calling thread's mpmath context.
    start : int
        The first index.
    node : sympy.Sum
        The sum as parsed (for its closed form and messages).
    summand : sympy.Expr
        Its term with every symbol but the index replaced by its number (for the smoothness
        test of Euler-Maclaurin summation).
    outer : dict
        The numbers of the sum's parameters (exact rationals where the inputs are), for its
        closed form.
    label : str
        What is evaluated (for messages).
    """
    ctx = local_mp()
    total, small, partial, signs = ctx.mpf(0), 0, {}, set()
    half, head = start + DIRECT_TERMS // 2, start + DIRECT_TERMS
    for i in range(start, head):
        t = term(ctx.mpf(i))
        if isinstance(t, ctx.mpc) or not ctx.isfinite(t):
            raise Inconclusive(f"{label}: the term of the infinite sum {node} is not a finite "
                               f"real number at {node.limits[0][0]} = {i}")
        total += t
        small = small + 1 if abs(t) <= ctx.mpf(10) ** -55 * max(abs(total), ctx.mpf(10) ** -300) \
            else 0
        if small >= 20:
            return total
        if i + 1 == half:
            partial["half"] = total
            first_tail = t
        if i >= half:
            signs.add(ctx.sign(t))
    partial["head"] = total
    estimates: list[tuple[str, Any, Any]] = []
    notes: list[str] = []
    closed, why = _closed_value(node, outer)
    if closed == "diverges":
        raise Inconclusive(f"{label}: the infinite sum {node} does not converge here ({why})")
    if closed is not None:
        estimates.append((_ORDER[0], closed, ctx.mpf(0)))
    if abs(t) > abs(first_tail):
        if closed is not None:
            return closed
        raise Inconclusive(f"{label}: the terms of the infinite sum {node} still grow in "
                           f"magnitude at {node.limits[0][0]} = {head - 1} (a divergent series, "
                           "or one whose terms peak later; acceleration would give a value to a "
                           "divergent series): write it in closed form")
    tail_sign = next(iter(signs)) if len(signs) == 1 else 0  # the terms after half: one sign?
    methods = [(_ORDER[1], lambda: _euler_maclaurin(term, half, head, partial, summand, node)),
               (_ORDER[2], lambda: _levin(term, start)),
               (_ORDER[3], lambda: _richardson_shanks(term, start))]
    for name, method in methods:
        chosen = _choose(estimates)
        if chosen is not None and chosen[2] <= NEGLIGIBLE * max(abs(chosen[1]), ctx.mpf(1e-300)):
            break
        try:
            if threading.current_thread() is threading.main_thread():
                with time_budget(METHOD_SECONDS, name):
                    found = method()
            else:
                found = method()
        except DerivationTimeout:
            notes.append(f"{name}: over {METHOD_SECONDS:g} s")
            continue
        except (ZeroDivisionError, ValueError, OverflowError, TypeError) as exc:
            notes.append(f"{name}: {exc}")
            continue
        if isinstance(found, str):
            notes.append(f"{name}: {found}")
            continue
        value, own = found
        if isinstance(value, ctx.mpc) or not ctx.isfinite(value) or not ctx.isfinite(own):
            notes.append(f"{name}: not a finite real number")
        elif abs(own) > MAX_RELATIVE_ERROR * abs(value):
            notes.append(f"{name}: {ctx.nstr(value, 8)} ± {ctx.nstr(own, 2)}")
        elif tail_sign and ctx.sign(value - partial["head"]) == -tail_sign:
            notes.append(f"{name}: {ctx.nstr(value, 12)}, on the wrong side of the partial sum "
                         f"{ctx.nstr(partial['head'], 12)} (the terms have one sign: a "
                         "divergent series summed by analytic continuation?)")
        else:
            estimates.append((name, value, abs(own)))
    chosen = _choose(estimates)
    if chosen is None and len(estimates) == 1 and estimates[0][0] == _ORDER[0]:
        return closed
    shown = "; ".join([f"{n}: {ctx.nstr(v, 12)}" for n, v, _ in estimates] + notes + [why] * (
        closed is None))
    if chosen is None or chosen[2] > MAX_RELATIVE_ERROR * abs(chosen[1]):
        raise Inconclusive(f"{label}: the infinite sum {node} does not converge to a value two "
                           f"methods agree on here (divergent, or too slow near a singularity; "
                           f"{shown}); write it in closed form")
    methods_used, value, error = chosen
    return settle(value, error, f"the infinite sum {node} by {methods_used}")


def _choose(estimates: list[tuple[str, Any, Any]]) -> tuple[str, Any, Any] | None:
    """(methods, value, error bar) from the two estimates that agree best, or None."""
    best = None
    for i, (n1, v1, e1) in enumerate(estimates):
        for n2, v2, e2 in estimates[i + 1:]:
            error = max(abs(v1 - v2), e1, e2)
            if best is None or error < best[2]:
                first, second = sorted((n1, n2), key=_ORDER.index)
                value = v1 if _ORDER.index(n1) <= _ORDER.index(n2) else v2
                best = (f"{first} and {second}", value, error)
    return best


def _euler_maclaurin(term: Callable[[Any], Any], half: int, head: int, partial: dict[str, Any],
                     summand: sp.Expr, node: sp.Sum) -> tuple[Any, Any] | str:
    k = node.limits[0][0]
    obstacle = acceleration_obstacle(summand, k, half, 10**30)
    if obstacle:
        return f"not smooth enough ({obstacle})"
    ctx = local_mp()
    tail, error = ctx.sumem(term, [head, ctx.inf], error=True)
    other = ctx.sumem(term, [half, ctx.inf])
    value = partial["head"] + tail
    return value, max(abs(error), abs(value - (partial["half"] + other)))


def _levin(term: Callable[[Any], Any], start: int) -> tuple[Any, Any]:
    ctx = local_mp()
    with ctx.extraprec(ctx.prec):
        transform = ctx.levin(method="levin", variant="u")
        sums, total, best = [], ctx.mpf(0), None
        for i in range(LEVIN_TERMS):
            total += term(ctx.mpf(start + i))
            sums.append(total)
            if i >= 9 and i % 10 == 9:
                value, error = transform.update_psum(sums)
                if best is None or error < best[1]:
                    best = (value, error)
                if error <= ctx.mpf(10) ** (-ctx.dps - 5) * abs(value):
                    break
    if best is None:  # LEVIN_TERMS >= 1: the loop ran
        raise AssertionError("Levin summation took no term")
    return +best[0], +best[1]


def _richardson_shanks(term: Callable[[Any], Any], start: int) -> tuple[Any, Any]:
    ctx = local_mp()
    first = ctx.nsum(term, [start, ctx.inf], method="richardson+shanks")
    second = ctx.nsum(term, [start, ctx.inf], method="richardson+shanks", steps=[50])
    return first, abs(first - second)
