"""A formula parser that cannot run code.

User text (a window profile ``0.5*w``, a rate ``lam*(1-x)``, a claimed closed form) is parsed by
Python's :mod:`ast` into a syntax tree, every node of which must be of a whitelisted kind:
numbers, the declared variables, ``+ - * / **`` (``^`` is read as ``**``), unary minus, calls
of a fixed list of elementary functions and, where the caller allows it (``sums=True``, claims
files), finite or infinite sums ``sum(term, k, low, high)`` over an integer index ``k`` (``high``
may be ``oo``; a long finite sum is accelerated or bounded when it is evaluated, see
:mod:`symq.core.claimsfile.quantities`) and integrals ``integral(f, x, a, b)`` over a real
variable ``x`` (``a`` may be ``-oo``, ``b`` may be ``oo``; evaluated by two quadratures that must
agree, see :mod:`symq.core.claimsfile.integrals`).  The index of a sum and the variable of an
integral are bound: they are names inside the term only.  A sum or an integral inside a sum or an
integral is refused (its cost could not be bounded).

Functions (:data:`FUNCTIONS`): ``exp log sqrt abs sin cos tan atan sinh cosh tanh min max gamma
erf erfc`` and the special functions of papers (:data:`SPECIAL_FUNCTIONS`, real domains in
brackets): ``atanh(x)`` (-1 < x < 1), ``asinh(x)``, ``acosh(x)`` (x >= 1), ``polylog(s, z)``
(Li_s(z), z <= 1), ``hyp2f1(a, b, c, z)`` (Gauss's 2F1, z < 1), ``lambertw(z)`` (the principal
branch W_0, z >= -1/e), ``beta(a, b)`` and ``zeta(s)`` (Riemann's, s != 1).  A special function
of numbers is folded at :data:`FOLD_DIGITS` digits when the formula is parsed and refused, with
its domain, when it is not a finite real number (``atanh(2)``); of variables, it is evaluated at
50 digits at each point and the point is undecided outside the domain.  :func:`parse_relation`
reads a claim ``lhs == rhs`` (or ``<=``, ``>=``, ``<``, ``>``, ``->`` for a limit) into its two
sides.  The sympy expression is built from the tree by this
module; the text is never given to ``eval``, ``exec``, ``sympify`` or ``parse_expr``.  The size of
the text, the number of nodes, the nesting depth and the height of exponent towers are bounded,
and constant powers are folded only when their result is small, so no formula can hang the parser
or exhaust memory.

The cost model applied while parsing (the evaluation side is in
:mod:`symq.core.claimsfile.quantities`):

* :data:`MAX_EXPONENT`: the largest integer exponent of a non-constant power, checked on the
  expression *after* sympy's automatic simplification (``(k^1000000)^1000000`` becomes
  ``k^(10^12)`` and is refused);
* :data:`MAX_DEGREE`: a power of a sum whose polynomial degree would exceed this is kept as
  written (unevaluated), since sympy's automatic sign queries would expand it;
* :data:`MAX_EXACT_POWER_BITS`: a power of numbers is kept exact only when its result has at most
  this many bits; larger ones are folded in a private mpmath context at
  :data:`FOLD_DIGITS` significant digits (``(1 + 1/10^20)^(10^20)`` is ``e`` to 40 digits, not
  the double ``1.0``);
* :data:`MAX_EXACT_GAMMA`: ``gamma`` of a rational argument larger than this is left
  unevaluated (sympy would compute the factorial exactly) and evaluated numerically later;
* :data:`MAX_MINMAX_ARGUMENTS`: ``min``/``max`` compare at most this many non-constant
  arguments (sympy compares them pairwise while simplifying);
* :data:`MAX_MAGNITUDE_BITS`: a constant (a power or a function of numbers) whose value exceeds
  ``2^MAX_MAGNITUDE_BITS``, the floating-point range, is refused (``gamma(10^7)``), at once.
* :data:`MAX_SPECIAL_PARAMETER`: the largest numeric order or parameter of ``polylog``,
  ``hyp2f1`` and ``zeta`` (``polylog(-10^6, x)`` would expand a polynomial of that degree).

Examples
--------
>>> parse_formula("a", "0.01*w^2 + exp(-w)/2", ("w",))
0.01*w**2 + exp(-w)/2
>>> parse_formula("a", "().__class__", ("w",))
Traceback (most recent call last):
...
symq.core.errors.InvalidParameter: parameter a='().__class__' must be an expression in w
(attribute access (.__class__) is not allowed)
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import sympy as sp

from .errors import InvalidParameter
from .formula_special import (
    MAX_SPECIAL_PARAMETER,
    PARAMETER_ARGUMENTS,
    SPECIAL_FUNCTIONS,
    SPECIAL_SYMPY,
    fold_special,
    function_domains,
)
from .precision import working_dps

__all__ = ["parse_formula", "parse_relation", "Relation", "RELATIONS", "FUNCTIONS", "CONSTANTS",
           "MAX_LENGTH", "MAX_NODES", "MAX_DEPTH", "MAX_TOWER", "MAX_EXPONENT",
           "MAX_DEGREE", "degree_estimate", "MAX_EXACT_POWER_BITS", "FOLD_DIGITS",
           "MAX_EXACT_GAMMA", "MAX_MINMAX_ARGUMENTS",
           "MAX_MAGNITUDE_BITS", "SPECIAL_FUNCTIONS", "MAX_SPECIAL_PARAMETER",
           "function_domains"]

#: Longest formula accepted, in characters.
MAX_LENGTH = 2000
#: Most syntax-tree nodes accepted.
MAX_NODES = 400
#: Deepest nesting of operations accepted.
MAX_DEPTH = 40
#: Highest exponent tower accepted (``w**w**w`` has height 3).
MAX_TOWER = 3
#: Largest integer exponent of a power of a non-constant, after sympy's simplification.
MAX_EXPONENT = 10**6
#: Largest polynomial degree of a power of a sum that sympy is asked to simplify (larger powers
#: are kept as written: sympy's sign queries would expand them).
MAX_DEGREE = 1000
#: Most bits of an exact power of numbers (numerator and denominator each); larger: folded.
MAX_EXACT_POWER_BITS = 4096
#: Significant digits at which larger constant powers are folded (mpmath, private context).
FOLD_DIGITS = 60
#: Largest rational argument for which ``gamma`` is evaluated exactly while parsing.
MAX_EXACT_GAMMA = 1000
#: Most non-constant arguments of ``min``/``max``.
MAX_MINMAX_ARGUMENTS = 20
#: Largest binary exponent of a constant's value: the floating-point range (below 2^1024).
MAX_MAGNITUDE_BITS = 1024
#: Largest number of digits of an integer literal.
_MAX_DIGITS = 60

#: Functions a formula may call, with their number of arguments (None: one or more).
FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int | None]] = {
    "exp": (sp.exp, 1), "log": (sp.log, 1), "sqrt": (sp.sqrt, 1), "Abs": (sp.Abs, 1),
    "abs": (sp.Abs, 1), "sin": (sp.sin, 1), "cos": (sp.cos, 1), "tanh": (sp.tanh, 1),
    "Min": (sp.Min, None), "Max": (sp.Max, None), "min": (sp.Min, None), "max": (sp.Max, None),
    "tan": (sp.tan, 1), "atan": (sp.atan, 1), "sinh": (sp.sinh, 1), "cosh": (sp.cosh, 1),
    "gamma": (sp.gamma, 1), "erf": (sp.erf, 1), "erfc": (sp.erfc, 1),
    **SPECIAL_SYMPY,
}
#: Named constants a formula may use besides its declared variables.
CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "E": sp.E}

_BINARY: dict[type, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}

_FORBIDDEN_NAMES = {
    ast.Attribute: "attribute access", ast.Subscript: "indexing", ast.Lambda: "lambda",
    ast.ListComp: "a comprehension", ast.SetComp: "a comprehension", ast.DictComp:
    "a comprehension", ast.GeneratorExp: "a comprehension", ast.JoinedStr: "an f-string",
    ast.Compare: "a comparison", ast.BoolOp: "a logical operator", ast.IfExp:
    "a conditional", ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a dict", ast.Set:
    "a set", ast.Starred: "unpacking", ast.NamedExpr: "an assignment", ast.Await: "await",
    ast.Yield: "yield", ast.YieldFrom: "yield", ast.Slice: "a slice",
}


class _Reject(Exception):
    """Why the text is not an allowed formula (turned into InvalidParameter by parse_formula)."""


def _describe_node(node: ast.AST) -> str:
    kind = _FORBIDDEN_NAMES.get(type(node))
    if kind is None:
        operators: dict[type, str] = {ast.BitXor: "^", ast.FloorDiv: "//", ast.Mod: "%",
                                      ast.MatMult: "@"}
        kind = operators.get(type(getattr(node, "op", None)), type(node).__name__)
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            kind = f"the operator {kind}"
    if isinstance(node, ast.Attribute):
        kind += f" (.{node.attr})"
    return kind


class _Builder:
    """Builds a sympy expression from a checked syntax tree."""

    def __init__(self, symbols: dict[str, sp.Symbol], sums: bool = False,
                 inside: str = "") -> None:
        self.symbols = symbols
        self.sums = sums
        self.inside = inside  # "sum" or "integral" in the body of one
        self.nodes = 0

    def build(self, node: ast.AST, depth: int = 0) -> sp.Expr:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Reject(f"more than {MAX_NODES} terms")
        if depth > MAX_DEPTH:
            raise _Reject(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            return self._constant(node.value)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.build(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return self._power(node, depth)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            chained = isinstance(node.left, ast.BinOp) and type(node.left.op) in _BINARY
            left = self.build(node.left, depth if chained else depth + 1)  # a+b+c+... is flat
            right = self.build(node.right, depth + 1)
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise _Reject(f"{_describe_node(node)} is not allowed")

    def _constant(self, value: Any) -> sp.Expr:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Reject(f"the literal {value!r} is not a real number")
        if isinstance(value, int):
            if abs(value) >= 10**_MAX_DIGITS:
                raise _Reject(f"an integer with more than {_MAX_DIGITS} digits")
            return sp.Integer(value)
        if not math.isfinite(value):
            raise _Reject("a number that overflows to infinity")
        return sp.Float(value)

    def _name(self, name: str) -> sp.Expr:
        if name in self.symbols:
            return self.symbols[name]
        if name in CONSTANTS:
            return CONSTANTS[name]
        allowed = ", ".join([*self.symbols, *CONSTANTS])
        hint = " (a function: call it with parentheses)" if name in FUNCTIONS else ""
        raise _Reject(f"unknown name {name}{hint}; names allowed: {allowed}")

    def _power(self, node: ast.BinOp, depth: int) -> sp.Expr:
        height, probe = 1, cast(ast.AST, node)
        while isinstance(probe, ast.BinOp) and isinstance(probe.op, ast.Pow):
            height += 1
            probe = probe.right
            while isinstance(probe, ast.UnaryOp):
                probe = probe.operand
        if height > MAX_TOWER:
            raise _Reject(f"an exponent tower of height {height} (at most {MAX_TOWER})")
        base = self.build(node.left, depth + 1)
        exponent = self.build(node.right, depth + 1)
        if base.is_number and exponent.is_number:
            return _constant_power(base, exponent)
        _check_exponents(exponent)
        if base.is_Add and exponent.is_Rational \
                and degree_estimate(base) * abs(exponent) > MAX_DEGREE:
            # sympy's sign queries on ((x+1)^256+1)^256 expand a polynomial of degree 65536
            result = sp.Pow(base, exponent, evaluate=False)
        else:
            result = sp.Pow(base, exponent)
        _check_exponents(result)  # sympy merges (k^a)^b into k^(a*b)
        return result

    def _call(self, node: ast.Call, depth: int) -> sp.Expr:
        if not isinstance(node.func, ast.Name):
            raise _Reject(f"{_describe_node(node.func)} is not allowed")
        name = node.func.id
        if name in ("sum", "integral") and self.sums:
            return self._sum(node, depth) if name == "sum" else self._integral(node, depth)
        if name in ("sum", "integral") and self.inside:
            a = "an" if name == "integral" else "a"
            hint = ("write the inner sum in closed form, or the double sum as one sum over a "
                    "single index" if name == self.inside == "sum" else
                    f"its cost cannot be bounded: write the inner {name} in closed form")
            raise _Reject(f"{a} {name} inside {'an' if self.inside == 'integral' else 'a'} "
                          f"{self.inside} is not supported ({hint})")
        if name not in FUNCTIONS:
            raise _Reject(f"the function {name} is not allowed; functions allowed: "
                          + ", ".join(sorted(FUNCTIONS)))
        if node.keywords:
            raise _Reject(f"{name}() takes no keyword arguments")
        function, arity = FUNCTIONS[name]
        if (arity is not None and len(node.args) != arity) or not node.args:
            wanted = f"{arity} argument" if arity else "one or more arguments"
            raise _Reject(f"{name}() takes {wanted}, got {len(node.args)}")
        args = [self.build(a, depth + 1) for a in node.args]
        if name in SPECIAL_FUNCTIONS:
            for i in PARAMETER_ARGUMENTS.get(name, ()):
                if args[i].is_number and not abs(_float_value(args[i])) <= MAX_SPECIAL_PARAMETER:
                    raise _Reject(f"the order or parameter {args[i]} of {name}() is too large "
                                  f"(at most {MAX_SPECIAL_PARAMETER} in magnitude)")
            if not all(a.is_number for a in args):
                return function(*args)
            try:
                return fold_special(name, args, FOLD_DIGITS, MAX_MAGNITUDE_BITS)
            except ValueError as exc:
                raise _Reject(str(exc)) from None
        if function is sp.gamma and args[0].is_Rational and abs(args[0]) > MAX_EXACT_GAMMA:
            call = sp.gamma(args[0], evaluate=False)  # no exact factorial of 10^7
            if not math.isfinite(_float_value(call)):
                raise _Reject(f"gamma({args[0]}) exceeds the floating-point range "
                              f"(2^{MAX_MAGNITUDE_BITS}); gamma of a number is evaluated for "
                              f"arguments up to about 171")
            return call
        if function in (sp.Min, sp.Max):
            # sympy flattens max(max(a, b), c) into one call and compares its arguments pairwise
            symbolic = sum(len(a.args) if isinstance(a, cast(type[sp.Basic], function)) else 1
                           for a in args if not a.is_number)
            if symbolic > MAX_MINMAX_ARGUMENTS:
                raise _Reject(f"{name}() of {symbolic} non-constant arguments (at most "
                              f"{MAX_MINMAX_ARGUMENTS}, nested {name}() calls counted together)")
        return function(*args)


    def _sum(self, node: ast.Call, depth: int) -> sp.Expr:
        """``sum(term, k, low, high)``: k a new integer index; high may be ``oo``."""
        if node.keywords or len(node.args) != 4:
            raise _Reject("sum() is written sum(term, k, low, high), e.g. sum(x^k, k, 0, oo)")
        term, index, low, high = node.args
        if not isinstance(index, ast.Name):
            raise _Reject("the index of sum() (its second argument) must be a name, e.g. k")
        name = index.id
        if name in self.symbols or name in CONSTANTS or name in FUNCTIONS:
            raise _Reject(f"the index {name} of sum() is already a name of the formula; "
                          "choose another letter")
        k = sp.Symbol(name, integer=True)
        bounds = []
        for bound, label in ((low, "lower"), (high, "upper")):
            if isinstance(bound, ast.Name) and bound.id in ("oo", "inf"):
                if label == "lower":
                    raise _Reject("the lower bound of sum() must be finite")
                bounds.append(sp.oo)
                continue
            value = self.build(bound, depth + 1)
            if value.is_number and not value.is_Integer:
                raise _Reject(f"the {label} bound {value} of sum() is not an integer")
            bounds.append(value)
        inner = _Builder({**self.symbols, name: k}, sums=False, inside="sum")
        inner.nodes = self.nodes
        body = inner.build(term, depth + 1)
        self.nodes = inner.nodes
        return sp.Sum(body, (k, bounds[0], bounds[1]))

    def _integral(self, node: ast.Call, depth: int) -> sp.Expr:
        """``integral(f, x, a, b)``: x a new real variable; a may be ``-oo``, b ``oo``."""
        if node.keywords or len(node.args) != 4:
            raise _Reject("integral() is written integral(f, x, a, b), e.g. "
                          "integral(exp(-x), x, 0, oo)")
        body, variable, low, high = node.args
        if not isinstance(variable, ast.Name):
            raise _Reject("the variable of integral() (its second argument) must be a name, "
                          "e.g. x")
        name = variable.id
        if name in self.symbols or name in CONSTANTS or name in FUNCTIONS \
                or name in ("oo", "inf", "sum", "integral"):
            raise _Reject(f"the variable {name} of integral() is already a name of the "
                          "formula; choose another letter")
        x = sp.Symbol(name, real=True)
        bounds = []
        for bound, label in ((low, "lower"), (high, "upper")):
            probe, sign = bound, 1
            while isinstance(probe, ast.UnaryOp) and isinstance(probe.op, (ast.USub, ast.UAdd)):
                sign = -sign if isinstance(probe.op, ast.USub) else sign
                probe = probe.operand
            if isinstance(probe, ast.Name) and probe.id in ("oo", "inf"):
                bounds.append(sp.oo if sign > 0 else -sp.oo)
                continue
            value = self.build(bound, depth + 1)
            if value.is_number and not math.isfinite(_float_value(value)):
                raise _Reject(f"the {label} bound {value} of integral() is not a finite real "
                              "number (write oo or -oo for an infinite bound)")
            bounds.append(value)
        if bounds[0] == sp.oo or bounds[1] == -sp.oo:
            raise _Reject("integral() from oo or to -oo: write the bounds in increasing order, "
                          "-oo <= a, b <= oo")
        inner = _Builder({**self.symbols, name: x}, sums=False, inside="integral")
        inner.nodes = self.nodes
        body_expr = inner.build(body, depth + 1)
        self.nodes = inner.nodes
        return sp.Integral(body_expr, (x, bounds[0], bounds[1]))


def degree_estimate(expr: sp.Expr) -> float:
    """An upper estimate of the polynomial degree of ``expr`` in its symbols (a function of a
    non-constant counts as degree 1)."""
    if expr.is_number:
        return 0.0
    if expr.is_Symbol:
        return 1.0
    if expr.is_Add:
        return max(degree_estimate(a) for a in expr.args)
    if expr.is_Mul:
        return sum(degree_estimate(a) for a in expr.args)
    if expr.is_Pow and expr.exp.is_number:
        return degree_estimate(expr.base) * abs(float(expr.exp))
    return 1.0


def _check_exponents(expr: sp.Expr) -> None:
    """Refuse a power of a non-constant whose numeric exponent exceeds :data:`MAX_EXPONENT`."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow) and node.exp.is_Rational and not node.base.is_number \
                and max(abs(int(node.exp.p)), int(node.exp.q)) > MAX_EXPONENT:
            raise _Reject(f"the exponent {node.exp} of {node.base} is too large (at most "
                          f"10^{round(math.log10(MAX_EXPONENT))}, after simplification)")


def _constant_power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    """``base**exponent`` for numbers: exact when its result is small (at most
    :data:`MAX_EXACT_POWER_BITS` bits), kept symbolic when the base or the exponent is not
    rational (``pi**2``), else folded in mpmath at :data:`FOLD_DIGITS` digits (never huge)."""
    if base.is_Rational and exponent.is_Rational:
        if base == 0 and exponent < 0:
            raise _Reject("0 raised to a negative power (division by zero)")
        size = abs(exponent) * max(abs(int(base.p)).bit_length(), int(base.q).bit_length())
        if size <= MAX_EXACT_POWER_BITS and abs(exponent.p) <= 10**6 and exponent.q <= 64:
            if exponent.is_Integer:
                return sp.Pow(base, exponent)
            if not exponent.is_Integer and base > 0:
                return sp.Pow(base, exponent)  # 2**(1/2): kept exact
    else:
        b, e = _float_value(base), _float_value(exponent)
        if b < 0 and not float(e).is_integer():
            raise _Reject(f"({base})**({exponent}) is not a real number")
        if b == 0 and e < 0:
            raise _Reject("0 raised to a negative power (division by zero)")
        if b != 0 and e * math.log2(abs(b)) > MAX_MAGNITUDE_BITS:  # tiny values are fine
            raise _Reject(f"({base})**({exponent}) is not a finite real number (its "
                          f"magnitude exceeds 2^{MAX_MAGNITUDE_BITS})")
        return sp.Pow(base, exponent)  # pi**2, E**(1/2): kept exact
    folded = _fold_power(base, exponent)
    if folded is None and base < 0 and not exponent.is_Integer:
        raise _Reject(f"({base})**({exponent}) is not a real number")
    if folded is None:
        raise _Reject(f"({base})**({exponent}) is not a finite real number (its magnitude "
                      f"exceeds 2^{MAX_MAGNITUDE_BITS}, the floating-point range)")
    return folded


def _fold_power(base: sp.Rational, exponent: sp.Rational) -> sp.Expr | None:
    """``base**exponent`` for rationals as a :data:`FOLD_DIGITS`-digit sympy Float, or None when
    it is not a real number of magnitude below ``2^MAX_MAGNITUDE_BITS``."""
    if base < 0 and not exponent.is_Integer:
        return None
    if base == 0:
        return sp.Integer(0)
    log2 = float(exponent) * (math.log2(abs(int(base.p))) - math.log2(int(base.q)))
    if log2 > MAX_MAGNITUDE_BITS:  # a tiny value (2^-10^6) is fine: mpmath holds it
        return None
    with working_dps(FOLD_DIGITS + 10) as ctx:
        b = ctx.mpf(int(base.p)) / int(base.q)
        e = ctx.mpf(int(exponent.p)) / int(exponent.q)
        value = ctx.power(abs(b), e)
        if base < 0 and int(exponent) % 2:
            value = -value
        if not ctx.isfinite(value):
            return None
        return sp.Float(ctx.nstr(value, FOLD_DIGITS, strip_zeros=False), FOLD_DIGITS)


def parse_formula(name: str, text: str, symbols: tuple[str, ...], *, sums: bool = False,
                  assumptions: dict[str, dict[str, bool]] | None = None) -> sp.Expr:
    """Parse ``text`` into a sympy expression in ``symbols`` only (``^`` means power).

    Parameters
    ----------
    name : str
        The parameter as the user typed it (named in error messages).
    text : str
        The formula.
    symbols : tuple of str
        The variables it may use; they become positive real sympy symbols (unless
        ``assumptions`` says otherwise).
    sums : bool
        Allow ``sum(term, k, low, high)`` (an unevaluated :class:`sympy.Sum`; ``high`` may be
        ``oo``), nested at most once.
    assumptions : dict, optional
        sympy assumptions per symbol name (default ``{"positive": True}``).

    Returns
    -------
    sympy.Expr
        A finite expression (no ``zoo``, ``oo`` or ``nan``).

    Raises
    ------
    InvalidParameter
        Empty or too long text, a syntax error, a construct outside the whitelist (attributes,
        indexing, lambda, comprehensions, strings, keyword arguments, unknown names or functions),
        too many terms, too deep nesting, an exponent tower higher than :data:`MAX_TOWER`, or a
        value that is not finite (``1/0``).

    Examples
    --------
    >>> parse_formula("a", "0.01*w", ("w",))
    0.01*w
    >>> parse_formula("a", "x*w", ("w",))
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidParameter: parameter a='x*w' must be an expression in w
    (unknown name x; names allowed: w, pi, E)
    """
    domain = "an expression in " + ", ".join(symbols) if symbols else "a constant expression"
    if not isinstance(text, str):
        raise InvalidParameter(name, text, domain, "not a string")
    shown = text if len(text) <= 80 else text[:60] + f"... ({len(text)} characters)"
    if not text.strip():
        raise InvalidParameter(name, shown, domain, "empty formula")
    if len(text) > MAX_LENGTH:
        raise InvalidParameter(name, shown, domain, f"longer than {MAX_LENGTH} characters")
    text = " ".join(text.split()) if any(c in text for c in "\n\r\t") else text  # wrapped lines
    if not text.isprintable():
        raise InvalidParameter(name, shown, domain, "contains a control character")
    try:
        tree = ast.parse(text.replace("^", "**").strip(), mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        hint = _latex_hint(text) or "write products with * (2*w, not 2w)"
        raise InvalidParameter(name, shown, domain, f"syntax error{where}: {exc.msg}; {hint}"
                               ) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise InvalidParameter(name, shown, domain, f"cannot parse it: {exc}") from None
    assumptions = assumptions or {}
    allowed = {s: sp.Symbol(s, **assumptions.get(s, {"positive": True})) for s in symbols}
    try:
        expr = _Builder(allowed, sums=sums).build(tree.body)
    except _Reject as exc:
        raise InvalidParameter(name, shown, domain, str(exc)) from None
    except RecursionError:
        raise InvalidParameter(name, shown, domain, f"nested deeper than {MAX_DEPTH} levels"
                               ) from None
    if not isinstance(expr, sp.Expr):
        raise InvalidParameter(name, shown, domain, "not an expression")
    outside_sums = expr.replace(lambda e: isinstance(e, (sp.Sum, sp.Integral)),
                                lambda e: sp.Integer(1))
    if outside_sums.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise InvalidParameter(name, shown, domain, "not finite (a division by zero?)")
    try:
        _check_exponents(expr)
    except _Reject as exc:
        raise InvalidParameter(name, shown, domain, str(exc)) from None
    if expr.is_number and not expr.has(sp.Sum, sp.Integral) \
            and not math.isfinite(_float_value(expr)):
        raise InvalidParameter(name, shown, domain, "its value is not a finite real number "
                               "(within the floating-point range)")
    return expr


_FLOAT_FUNCTIONS: dict[type, Callable[[float], float]] = {
    sp.exp: math.exp, sp.log: math.log, sp.sin: math.sin, sp.cos: math.cos,
    sp.tanh: math.tanh, sp.Abs: abs, sp.tan: math.tan, sp.atan: math.atan, sp.sinh: math.sinh,
    sp.cosh: math.cosh, sp.gamma: math.gamma, sp.erf: math.erf, sp.erfc: math.erfc,
}


#: Relations a claim may state, by the operator written.
RELATIONS = ("==", "<=", ">=", "<", ">", "->")


@dataclass(frozen=True)
class Relation:
    """A parsed claim ``lhs OP rhs``: two sympy expressions and the operator (one of
    :data:`RELATIONS`; ``=`` is read as ``==``)."""

    lhs: sp.Expr
    op: str
    rhs: sp.Expr
    text: str


def _split_relation(text: str) -> tuple[str, str, str] | None:
    """Split ``text`` at its one top-level relation operator (outside parentheses)."""
    depth, found = 0, []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0:
            two = text[i:i + 2]
            if two in ("==", "<=", ">=", "->", "!="):
                found.append((i, two))
                i += 2
                continue
            if c in "<>=":
                found.append((i, "==" if c == "=" else c))
        i += 1
    if len(found) != 1:
        return None
    at, op = found[0]
    width = 2 if text[at:at + 2] in ("==", "<=", ">=", "->", "!=") else 1
    return text[:at], op, text[at + width:]


def parse_relation(name: str, text: str, symbols: tuple[str, ...], *, sums: bool = True,
                   assumptions: dict[str, dict[str, bool]] | None = None) -> Relation:
    """Parse a claim ``lhs OP rhs`` (OP one of ``==``, ``=``, ``<=``, ``>=``, ``<``, ``>``,
    ``->``), each side a formula for :func:`parse_formula`.

    Examples
    --------
    >>> r = parse_relation("statement", "ET == 1/(1 - lam)", ("ET", "lam"))
    >>> r.op, r.rhs
    ('==', 1/(1 - lam))
    >>> parse_relation("statement", "x < 1 < y", ("x", "y"))
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidParameter: parameter statement='x < 1 < y' must be a relation lhs OP rhs
    with OP one of ==, <=, >=, <, >, -> (one relation, not 2)
    """
    domain = "a relation lhs OP rhs with OP one of " + ", ".join(RELATIONS)
    if not isinstance(text, str):
        raise InvalidParameter(name, text, domain, "not a string")
    shown = text if len(text) <= 80 else text[:60] + f"... ({len(text)} characters)"
    parts = _split_relation(text)
    if parts is None:
        count = sum(text.count(op) for op in ("==", "<=", ">=", "->", "!="))
        count += sum(text.replace("==", "").replace("<=", "").replace(">=", "")
                     .replace("->", "").replace("!=", "").count(c) for c in "<>=")
        reason = "no relation operator" if count == 0 else f"one relation, not {count}"
        reason += f"; {_latex_hint(text)}" if _latex_hint(text) else ""
        raise InvalidParameter(name, shown, domain, reason)
    left, op, right = parts
    if op == "!=":
        raise InvalidParameter(name, shown, domain, "!= is not a claim symq can check")
    lhs = parse_formula(f"{name} (left side)", left, symbols, sums=sums,
                        assumptions=assumptions)
    rhs = parse_formula(f"{name} (right side)", right, symbols, sums=sums,
                        assumptions=assumptions)
    return Relation(lhs, op, rhs, text)


def _latex_hint(text: str) -> str:
    """What to write instead of LaTeX pasted into a text formula ("" when it is none)."""
    match = re.search(r"\\(?:[A-Za-z]+|[,;!])", text)
    return "" if match is None else (
        f"this looks like LaTeX ({match.group()}): in a claims file write it as tex = '...' "
        "(a claim's formula or statement) or NAME = { tex = '...' } (a let quantity or a "
        "constant); see 'Formulas in LaTeX' in the claims reference")


def _float_value(expr: sp.Expr) -> float:
    """The value of a constant expression in floating point (``nan`` if not a finite real).

    Evaluated node by node with :mod:`math`, so a huge intermediate (``exp(exp(exp(100)))``)
    overflows to ``nan`` at once instead of being carried at arbitrary size.
    """
    try:
        return _float_node(expr)
    except (OverflowError, ValueError, ZeroDivisionError, TypeError):
        return math.nan


def _float_node(expr: sp.Expr) -> float:
    if expr.is_Rational or expr.is_Float:
        return float(expr)
    if expr is sp.pi or expr is sp.E:
        return float(expr)
    if expr.is_Add:
        out = math.fsum(_float_node(a) for a in expr.args)
    elif expr.is_Mul:
        out = 1.0
        for a in expr.args:
            out *= _float_node(a)
    elif expr.is_Pow:
        out = math.pow(_float_node(expr.base), _float_node(expr.exp))
    elif isinstance(expr, (sp.Min, sp.Max)):
        values = [_float_node(a) for a in expr.args]
        out = min(values) if isinstance(expr, sp.Min) else max(values)
    elif type(expr) in _FLOAT_FUNCTIONS:
        out = _FLOAT_FUNCTIONS[type(expr)](_float_node(expr.args[0]))
    else:
        raise TypeError(f"cannot evaluate {type(expr).__name__}")
    if not math.isfinite(out):
        raise OverflowError
    return out

