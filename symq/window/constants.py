"""Numeric constants of window profiles, kept away from mpmath's global context.

sympy answers sign and reality queries about numeric subexpressions such as ``log(83000) -
log(38)`` by evaluating them with mpmath *in mpmath's global context* (``mpmath.workprec``):
during :func:`sympy.simplify`, :func:`sympy.limit`, an assumption query or even printing,
another thread of the user's sees its own mpmath numbers at sympy's precision.  symq never
changes the global context (README, "State"), so the symbolic steps of the window domain run
on expressions in which every such constant is a sign-known symbol, and every Float an exact
rational: sympy then has nothing to evaluate numerically.

:func:`abstract` does the replacement, with the constants' values computed in symq's private
context (:func:`symq.core.precision.working_dps`); :func:`restore` puts those values back as
Floats (plain floating-point arithmetic, which sympy does without mpmath's context).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from symq.core.precision import working_dps

__all__ = ["abstract", "restore"]

#: Digits of the private evaluation of a constant; a constant below ``10**-TINY`` keeps its form.
DIGITS, TINY = 30, 25


def _value(expr: sp.Expr, ctx: Any) -> Any:
    """``expr`` (a number) in the private mpmath context ``ctx``; ValueError when unknown."""
    if expr.is_Rational:
        return ctx.mpf(int(expr.p)) / int(expr.q)
    if expr.is_Float:
        return ctx.mpf(expr._mpf_)
    if expr is sp.pi:
        return +ctx.pi
    if expr is sp.E:
        return +ctx.e
    args = [_value(a, ctx) for a in expr.args]
    if expr.is_Add:
        return ctx.fsum(args)
    if expr.is_Mul:
        return ctx.fprod(args)
    if expr.is_Pow:
        return ctx.power(args[0], args[1])
    func = getattr(ctx, type(expr).__name__, None) if isinstance(expr, sp.Function) else None
    if func is None:
        raise ValueError(f"no private evaluation of {type(expr).__name__}")
    return func(*args)


def abstract(*exprs: sp.Expr, table: dict | None = None) -> tuple[list[sp.Expr], dict]:
    """``exprs`` with exact rationals for Floats and sign-known symbols for numeric functions.

    Parameters
    ----------
    *exprs : sympy.Expr
    table : dict, optional
        ``{symbol: (constant, value)}`` of an earlier call, extended and re-used so that one
        constant gets one symbol.

    Returns
    -------
    (list of sympy.Expr, dict)
        The rewritten expressions and the table ``{symbol: (constant, value)}``: ``value`` is
        a sympy Float of the constant at 30 digits, computed in symq's private context.
    """
    table = {} if table is None else table
    known = {constant: symbol for symbol, (constant, _) in table.items()}
    replace: dict[sp.Expr, sp.Expr] = {}
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if node.is_Float and node not in replace:
                # sympy's own limit turns Floats into the rationals of their decimal digits
                replace[node] = sp.Rational(str(node))
            elif (isinstance(node, sp.Function) and not node.free_symbols
                  and node not in replace):
                if node in known:
                    replace[node] = known[node]
                    continue
                try:
                    with working_dps(DIGITS) as ctx:
                        value = _value(node, ctx)
                        if not (ctx.isfinite(value) and abs(value) > ctx.mpf(10) ** -TINY
                                and ctx.im(value) == 0):
                            continue
                        value = ctx.re(value)
                        float_value = sp.Float(ctx.nstr(value, DIGITS), DIGITS)
                except (ValueError, TypeError, ZeroDivisionError, ArithmeticError):
                    continue
                symbol = sp.Dummy(positive=True, finite=True) if value > 0 else \
                    sp.Dummy(negative=True, finite=True)
                table[symbol] = (node, float_value)
                known[node] = replace[node] = symbol
    return [expr.xreplace(replace) for expr in exprs], table


def restore(expr: sp.Expr, table: dict) -> sp.Expr:
    """``expr`` with the symbols of :func:`abstract` replaced by their 30-digit Floats."""
    return expr.xreplace({symbol: value for symbol, (_, value) in table.items()})
