"""The special functions a formula may call besides the elementary ones (papers use them).

``atanh``, ``asinh``, ``acosh``, ``polylog(s, z)`` (Li_s(z), DLMF 25.12), ``hyp2f1(a, b, c, z)``
(Gauss's hypergeometric function, DLMF 15.2), ``lambertw(z)`` (the principal branch W_0 of
Lambert's W, real for z >= -1/e with W_0 >= -1, DLMF 4.13; the other branches are not
available), ``beta(a, b) = gamma(a) gamma(b)/gamma(a + b)`` (DLMF 5.12) and ``zeta(s)``
(Riemann's zeta function, DLMF 25.2).  :mod:`symq.core.formula` puts them in its whitelist; a call
of numbers is folded here by mpmath (a private context, :mod:`symq.core.precision`) and refused
outside the function's real domain (:data:`SPECIAL_FUNCTIONS`), a call of variables is kept as a
sympy expression and evaluated at each point.

Examples
--------
>>> import sympy as sp
>>> fold_special("lambertw", [sp.Integer(1)], 20, 1024)   # the omega constant
0.56714329040978387300
>>> fold_special("atanh", [sp.Integer(2)], 20, 1024)
Traceback (most recent call last):
...
ValueError: atanh(2) is not a real number; atanh is real for -1 < x < 1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy as sp

from .precision import working_dps

__all__ = [
    "MAX_SPECIAL_PARAMETER",
    "PARAMETER_ARGUMENTS",
    "SPECIAL_FUNCTIONS",
    "SPECIAL_SYMPY",
    "fold_special",
    "function_domains",
]

#: Digits within which an argument of ``lambertw`` counts as the branch point -1/e.
_BRANCH_DIGITS = 60

#: The special functions of papers (besides gamma, erf): the real domain of each, as stated in
#: error messages; a call of numbers is folded by :func:`fold_special` and refused outside it.
#: ``lambertw`` is the principal branch W_0 (real for z >= -1/e, W_0 >= -1; DLMF 4.13);
#: ``hyp2f1(a, b, c, z)`` is Gauss's function (DLMF 15.2), ``polylog(s, z)`` Li_s(z) (DLMF 25.12),
#: ``beta(a, b) = gamma(a) gamma(b)/gamma(a + b)`` (DLMF 5.12), ``zeta(s)``
#: Riemann's (DLMF 25.2).
SPECIAL_FUNCTIONS: dict[str, str] = {
    "atanh": "-1 < x < 1", "asinh": "every real x", "acosh": "x >= 1",
    "polylog": "real s and z <= 1 (z < 1 when s <= 1)",
    "hyp2f1": "z < 1 (z = 1 when c - a - b > 0), c not 0, -1, -2, ...",
    "lambertw": "z >= -1/e (the principal branch W_0)",
    "beta": "a, b not 0, -1, -2, ...", "zeta": "s != 1",
}
#: Largest magnitude of a numeric order or parameter of ``polylog``, ``hyp2f1`` and ``zeta``
#: (``polylog(-10^6, x)`` expands a polynomial of that degree).
MAX_SPECIAL_PARAMETER = 1000
#: Which arguments of a special function are orders or parameters (bounded by
#: :data:`MAX_SPECIAL_PARAMETER` when they are numbers).
PARAMETER_ARGUMENTS = {"polylog": (0,), "hyp2f1": (0, 1, 2), "zeta": (0,)}
_NAMES = {sp.atanh: "atanh", sp.asinh: "asinh", sp.acosh: "acosh", sp.polylog: "polylog",
                sp.hyper: "hyp2f1", sp.LambertW: "lambertw", sp.beta: "beta", sp.zeta: "zeta"}


def function_domains(expr: sp.Expr) -> str:
    """The real domains of the special functions ``expr`` calls, for an error message
    ("" when it calls none): ``"atanh: -1 < x < 1"``."""
    found = sorted({_NAMES.get(type(node), "") for node in sp.preorder_traversal(expr)}
                   - {""})
    return "; ".join(f"{name}: {SPECIAL_FUNCTIONS[name]}" for name in found)

#: The sympy function of each special function.
SPECIAL_SYMPY: dict[str, tuple[Callable[..., sp.Expr], int]] = {
    "atanh": (sp.atanh, 1), "asinh": (sp.asinh, 1), "acosh": (sp.acosh, 1),
    "polylog": (sp.polylog, 2), "hyp2f1": (lambda a, b, c, z: sp.hyper((a, b), (c,), z), 4),
    "lambertw": (sp.LambertW, 1), "beta": (sp.beta, 2), "zeta": (sp.zeta, 1),
}


def fold_special(name: str, args: list[Any], digits: int, max_bits: int) -> sp.Float:
    """``name(*args)`` for numbers (sympy numbers), as a sympy Float of ``digits`` digits.

    Evaluated by mpmath in the calling thread's private context at ``digits + 10`` digits.

    Raises
    ------
    ValueError
        When the value is not a finite real number (outside the function's real domain,
        :data:`SPECIAL_FUNCTIONS`) or its magnitude exceeds ``2^max_bits``; the message says so.
    """
    shown = f"{name}({', '.join(str(a) for a in args)})"
    domain = f"{name} is real for {SPECIAL_FUNCTIONS[name]}"
    with working_dps(digits + 10) as ctx:
        try:
            values = [ctx.mpf(sp.Float(a.evalf(digits + 10), digits + 10)._mpf_) for a in args]
            value = _MP_SPECIAL[name](ctx, *values)
        except (ValueError, ZeroDivisionError, TypeError, OverflowError) as exc:
            raise ValueError(f"{shown} is not a real number ({exc}); {domain}") from None
        if isinstance(value, ctx.mpc):
            if value.imag != 0:
                raise ValueError(f"{shown} is not a real number; {domain}")
            value = value.real
        if not ctx.isfinite(value):
            raise ValueError(f"{shown} is not a finite real number; {domain}")
        if value != 0 and abs(ctx.log(abs(value), 2)) > max_bits:
            raise ValueError(f"{shown} exceeds the floating-point range (2^{max_bits})")
        return sp.Float(ctx.nstr(value, digits, strip_zeros=False), digits)


def _mp_hyp2f1(ctx: Any, a: Any, b: Any, c: Any, z: Any) -> Any:
    if c <= 0 and ctx.isint(c):
        raise ValueError("c is a nonpositive integer")
    if z > 1 or (z == 1 and not c - a - b > 0):
        raise ValueError("outside the disc of convergence on the real line")
    return ctx.hyp2f1(a, b, c, z)


def _mp_polylog(ctx: Any, s: Any, z: Any) -> Any:
    if z > 1 or (z == 1 and not s > 1):
        raise ValueError("z > 1, or z = 1 with s <= 1")
    return ctx.polylog(s, z)


def _mp_beta(ctx: Any, a: Any, b: Any) -> Any:
    if any(v <= 0 and ctx.isint(v) for v in (a, b)):
        raise ValueError("an argument is a nonpositive integer")
    return ctx.beta(a, b)


def _mp_lambertw(ctx: Any, z: Any) -> Any:
    branch = -ctx.exp(-1)
    if abs(z - branch) <= ctx.mpf(10) ** -_BRANCH_DIGITS:
        return ctx.mpf(-1)  # W_0(-1/e) = -1, the branch point
    if z < branch:
        raise ValueError("z < -1/e")
    return ctx.lambertw(z)  # the principal branch W_0


_MP_SPECIAL: dict[str, Callable[..., Any]] = {
    "atanh": lambda ctx, x: ctx.atanh(x) if -1 < x < 1 else ctx.mpc(0, 1),
    "asinh": lambda ctx, x: ctx.asinh(x),
    "acosh": lambda ctx, x: ctx.acosh(x) if x >= 1 else ctx.mpc(0, 1),
    "polylog": _mp_polylog, "hyp2f1": _mp_hyp2f1, "lambertw": _mp_lambertw,
    "beta": _mp_beta, "zeta": lambda ctx, s: ctx.zeta(s) if s != 1 else ctx.inf,
}
