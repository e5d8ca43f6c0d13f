"""The quantities a claim in a claims file compares: formulas, model references, functions.

A claim's statement (``ET == 1/(1 - lam)``) uses names.  Each name is a parameter of the claim's
region, or a quantity defined in the claim's ``let`` table (or the file's ``[constants]``):

* a **formula** (text, parsed by :func:`symq.core.formula.parse_formula`, never evaluated as
  code), in the parameters and the other quantities: ``rho = "lam/m"``;
* a **reference** to a model (its floating-point results are used as the doubles they are,
  never read as exact decimals), ``"MODEL:KEY"`` (``"supermarket:ET"``, ``"supermarket:tail[k]"``
  with ``k`` a parameter or an integer): the model is solved at the point (parameters of the
  model that the region gives are passed on), and ``result.values[KEY]`` is the value.  A table
  ``{ ref = "dispatch:ET", policy = "lwl", rho = "lam/2" }`` fixes or maps model parameters: a
  number is a value, text is a word for a parameter that takes words (a policy, a protocol) and a
  formula in the claim's names otherwise.  The model is a registered one (``symq list``) or one
  the file declares in its ``[models]`` table;
* in a Python claims file, also a **function** ``f(point) -> value`` of the parameters.

Formulas are evaluated exactly (sympy rationals) when every input is rational, the formula is
a rational function and its result is estimated to have at most :data:`MAX_EXACT_BITS` bits
(sizes of the inputs, exponent times base bits: ``((lam+1)^256+1)^256`` ...), and with 50
significant digits (mpmath, in the calling thread's private context) otherwise, the evidence then
saying "50-digit" instead of "exact".  A finite sum of at most :data:`DIRECT_SUM_TERMS` terms is
summed directly; a longer one (``sum(1/k^2, k, 1, n)`` at ``n = 10^9``) is summed by
Euler-Maclaurin acceleration (:func:`mpmath.sumem`) after its first terms, when its term is smooth
there, with two estimates from different splits that must agree to 30 digits; otherwise the point
is undecided (the limit is named).  An infinite sum is summed directly while its terms become
negligible, else by sympy's closed form (found once per sum within a time budget) and by
convergence acceleration (Euler-Maclaurin, Levin, Richardson/Shanks): two methods must agree, and
their disagreement is the sum's error bar (:func:`symq.core.claimsfile.sums.infinite_sum`).  An
integral ``integral(f, x, a, b)`` is computed by tanh-sinh and Gauss-Legendre quadrature, their
disagreement its error bar (:mod:`symq.core.claimsfile.integrals`).  A value whose error bar is
not negligible is an :class:`~symq.core.approximate.Approximate` ``value ± error``; a
formula of it carries the bar on, and the comparison decides only what the bar allows.  A claim
whose sums and integrals would need more than :data:`SUM_TERM_BUDGET` evaluations over its region
is refused before it is evaluated (:func:`sum_cost`).  A reference's value is what the model
returns (a float, a :class:`~symq.core.simstats.ConfidenceInterval` for simulations, an
array).  A simulation estimate may enter a formula linearly (``EW*sqrt(p)``): the formula then
maps the interval.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import numbers
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from ..approximate import Approximate, settle
from ..claims import Evidence, Inconclusive
from ..compiler import compile as compile_expr
from ..errors import InvalidParameter, RunTooShort, SymqError, UnknownName
from ..formula import function_domains, parse_formula
from ..parameters import Choice, Expression, IntegerAtLeast
from ..precision import local_mp, working_dps
from ..registry import ModelSpec, get_model
from ..result import Exactness
from ..simstats import ConfidenceInterval
from .integrals import INTEGRAL_COST, evaluate_integral, mp_ready
from .sums import acceleration_obstacle, infinite_sum

__all__ = [
    "DIGITS",
    "DIRECT_SUM_TERMS",
    "MAX_EXACT_BITS",
    "REFERENCE_PATTERN",
    "SUM_TERM_BUDGET",
    "Environment",
    "FileContext",
    "Formula",
    "Function",
    "Quantity",
    "Reference",
    "evaluate_expression",
    "override_value",
    "sum_cost",
]

#: Significant digits of formula evaluation.
DIGITS = 50
#: ``MODEL:KEY`` or ``MODEL:KEY[index]``.
REFERENCE_PATTERN = re.compile(r"^\s*([A-Za-z][\w.\-]*)\s*:\s*([A-Za-z_]\w*)\s*"
                               r"(?:\[([^\[\]]+)\])?\s*$")
_SUM_ERROR = 1e-30
#: Most bits (estimated) of a formula's exact value; larger ones are evaluated at 50 digits.
MAX_EXACT_BITS = 100_000
#: Most terms of a finite sum summed directly; longer sums are accelerated (Euler-Maclaurin).
DIRECT_SUM_TERMS = 2_000
#: Term evaluations one accelerated finite sum costs (in :func:`sum_cost`'s units).
_ACCELERATED_COST = DIRECT_SUM_TERMS + 8_000
#: Most term evaluations the finite sums of one claim may need over its region.
SUM_TERM_BUDGET = 500_000
_EVIDENCE = {Exactness.EXACT: Evidence.CLOSED_FORM, Exactness.NUMERIC: Evidence.NUMERIC,
             Exactness.CERTIFIED: Evidence.CERTIFIED, Exactness.SIMULATED: Evidence.SIMULATION}


@dataclass
class FileContext:
    """What the claims of one file share: the models it declares, its TeX symbol map
    (:mod:`~symq.core.claimsfile.tex`) and a cache of model solves."""

    path: str = ""
    models: dict[str, ModelSpec] = field(default_factory=dict)
    cache: dict[Any, Any] = field(default_factory=dict)
    tex_symbols: dict[str, str] = field(default_factory=dict)

    def model(self, name: str, where: str) -> ModelSpec:
        """The model ``name``: one the file declares, else a registered one."""
        if name in self.models:
            return self.models[name]
        try:
            return get_model(name)
        except UnknownName as exc:
            declared = f"; declared in this file: {', '.join(self.models)}" if self.models else ""
            raise InvalidParameter(where, name, "a model of `symq list` or of the file's "
                                   "[models] table", f"{exc}{declared}") from None


class Quantity(abc.ABC):
    """A named value of a claim at a parameter point (``name``; ``depends``: the names its
    value depends on).  Subclasses: :class:`Formula`, :class:`Reference`, :class:`Function`."""

    name: str
    depends: tuple[str, ...]

    @abc.abstractmethod
    def evaluate(self, env: Environment) -> Any:
        """The value at the environment's point."""

    @abc.abstractmethod
    def describe(self) -> str:
        """How the quantity was written (for verdicts)."""


@dataclass
class Environment:
    """The values of a claim's names at one point (quantities evaluated once, on demand)."""

    point: Mapping[str, Any]
    quantities: Mapping[str, Quantity]
    seed: int = 0
    evidence: set[Evidence] = field(default_factory=set)
    _values: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        if name in self.point:
            return self.point[name]
        if name not in self._values:
            self._values[name] = self.quantities[name].evaluate(self)
        return self._values[name]


# ----------------------------------------------------------------------------- formulas

def _rational(value: Any) -> sp.Rational | None:
    """``value`` as an exact rational, reading a float as the decimal the user typed."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (numbers.Integral, np.integer)):
        return sp.Integer(int(value))
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        return sp.Rational(repr(float(value)))
    if isinstance(value, sp.Rational):
        return value
    return None


def _exact_capable(expr: sp.Expr) -> bool:
    return not expr.atoms(sp.Float) and not expr.has(sp.Sum) and all(
        isinstance(node, (sp.Add, sp.Mul, sp.Symbol, sp.Rational))
        or (isinstance(node, sp.Pow) and node.exp.is_Integer and abs(int(node.exp)) <= 256)
        for node in sp.preorder_traversal(expr))


@dataclass
class Formula(Quantity):
    """A quantity given by a formula in the claim's names."""

    name: str
    expr: sp.Expr
    text: str = ""

    def __post_init__(self) -> None:
        self.depends = tuple(sorted(s.name for s in self.expr.free_symbols))
        self.exact = _exact_capable(self.expr)

    def describe(self) -> str:
        return self.text or str(self.expr)

    def evaluate(self, env: Environment) -> Any:
        values = {name: env.value(name) for name in self.depends}
        return evaluate_expression(self.expr, values, env.evidence, self.name)


def evaluate_expression(expr: sp.Expr, values: Mapping[str, Any], evidence: set[Evidence],
                        label: str) -> Any:
    """``expr`` at ``values``: exact, 50-digit, or a mapped confidence interval."""
    intervals = [n for n, v in values.items() if isinstance(v, ConfidenceInterval)]
    if intervals:
        return _map_interval(expr, values, intervals, evidence, label)
    for name, value in values.items():
        if isinstance(value, str):
            raise Inconclusive(f"{label} uses {name} = {value!r}, a word, in arithmetic")
        if isinstance(value, (np.ndarray, list, tuple)):
            raise Inconclusive(f"{label} uses {name}, an array of {len(value)} values, in "
                               "arithmetic; index it (MODEL:KEY[k]) or compare it whole")
    if _exact_capable(expr) and not any(isinstance(v, Approximate) for v in values.values()):
        exact = {sym: _rational(values[sym.name]) for sym in expr.free_symbols}
        if all(v is not None for v in exact.values()) and _bits(expr, exact) <= MAX_EXACT_BITS:
            try:
                result = expr.xreplace(exact)
            except ZeroDivisionError:
                raise Inconclusive(f"{label} divides by zero") from None
            if result.is_Rational:
                evidence.add(Evidence.EXACT)
                return result
            if result.has(sp.zoo, sp.nan, sp.oo):
                raise Inconclusive(f"{label} is not finite here (a division by zero)")
    evidence.add(Evidence.HIGH_PRECISION)
    return _evaluate_mp(expr, values, label)


def _bits(expr: sp.Expr, values: Mapping[sp.Symbol, sp.Rational]) -> float:
    """An upper estimate of the bits of the numerator or denominator of ``expr`` at ``values``
    (rational inputs, a rational function): ``a + b`` and ``a b`` add their operands' bits,
    ``a^e`` multiplies them by ``|e|``."""
    if isinstance(expr, sp.Symbol):
        v = values[expr]
        return float(max(abs(int(v.p)).bit_length(), int(v.q).bit_length()))
    if expr.is_Rational:
        return float(max(abs(int(expr.p)).bit_length(), int(expr.q).bit_length()))
    if isinstance(expr, sp.Pow):
        return _bits(expr.base, values) * abs(int(expr.exp))
    if isinstance(expr, (sp.Add, sp.Mul)):
        return sum(_bits(a, values) for a in expr.args) + len(expr.args)
    return math.inf


def _map_interval(expr: sp.Expr, values: Mapping[str, Any], intervals: list[str],
                  evidence: set[Evidence], label: str) -> ConfidenceInterval:
    if len(intervals) > 1:
        raise Inconclusive(f"{label} combines several simulation estimates "
                           f"({', '.join(intervals)}); compare each on its own side")
    name = intervals[0]
    ci: ConfidenceInterval = values[name]
    symbol = _symbol(expr, name)
    slope = sp.diff(expr, symbol)
    if slope.has(symbol):
        raise Inconclusive(f"{label} is not linear in the simulation estimate {name}; a "
                           "confidence interval is mapped only by a linear formula")
    others = {n: v for n, v in values.items() if n != name}
    b_expr = expr.subs(symbol, 0)
    a = float(evaluate_expression(slope, {s.name: others[s.name] for s in slope.free_symbols},
                                  set(), label))
    b = float(evaluate_expression(b_expr, {s.name: others[s.name] for s in b_expr.free_symbols},
                                  set(), label))
    evidence.add(Evidence.SIMULATION)
    # the run length and the run's own doubt travel with the mapped interval
    return dataclasses.replace(ci, mean=a * ci.mean + b, half_width=abs(a) * ci.half_width)


def _evaluate_mp(expr: sp.Expr, values: Mapping[str, Any], label: str) -> Any:
    """``expr`` at 50 digits; its sums and integrals evaluated first (each a number or an
    :class:`Approximate`), and the error bars of approximate inputs carried to the result (first
    order: each moved by its bar in both directions, the largest changes added)."""
    with working_dps(DIGITS):
        ctx = local_mp()
        parts = {}
        for node in sorted(expr.atoms(sp.Sum, sp.Integral), key=sp.default_sort_key):
            dummy = sp.Dummy("part")
            value = _evaluate_sum(node, values, label) if isinstance(node, sp.Sum) \
                else evaluate_integral(node, _part_inputs(node, values, label), label)
            parts[node] = (dummy, value)
        reduced = mp_ready(expr.xreplace({node: d for node, (d, _) in parts.items()}))
        symbols = sorted((s for s in reduced.free_symbols if not isinstance(s, sp.Dummy)),
                         key=lambda s: s.name)
        args = symbols + [d for d, _ in parts.values()]
        function = compile_expr(reduced, args, backend="mpmath")
        inputs = [values[s.name] for s in symbols] + [v for _, v in parts.values()]
        centre = [v.value if isinstance(v, Approximate) else
                  _mp_value(v, s.name, label) if i < len(symbols) else v
                  for i, (v, s) in enumerate(zip(inputs, symbols + [None] * len(parts)))]
        out = _call(function, centre, expr, label)
        bars = [(i, v) for i, v in enumerate(inputs) if isinstance(v, Approximate)]
        if not bars:
            return out
        error = ctx.mpf(0)
        for i, v in bars:
            moved = [_call(function, centre[:i] + [centre[i] + sign * v.error] + centre[i + 1:],
                           expr, f"{label} (moved by the error bar of {v.how})")
                     for sign in (1, -1)]
            error += max(abs(m - out) for m in moved)
        return settle(out, error, "; ".join(v.how for _, v in bars))


def _call(function: Any, inputs: list[Any], expr: sp.Expr, label: str) -> Any:
    ctx = local_mp()
    try:
        out = function(*inputs)
    except (ZeroDivisionError, ValueError, OverflowError) as exc:
        raise Inconclusive(f"{label} cannot be evaluated here: {exc}{_domains(expr)}") from None
    if isinstance(out, ctx.mpc) or not ctx.isfinite(out):
        raise Inconclusive(f"{label} = {out} is not a finite real number here{_domains(expr)}")
    return out


def _domains(expr: sp.Expr) -> str:
    domains = function_domains(expr)
    return f" (real domains: {domains})" if domains else ""


def _part_inputs(node: sp.Basic, values: Mapping[str, Any], label: str) -> dict[sp.Symbol, Any]:
    """The numbers of the parameters of a sum or an integral (an error bar is refused there)."""
    inputs = {}
    for sym in node.free_symbols:
        value = values[sym.name]
        if isinstance(value, Approximate):
            raise Inconclusive(f"{label}: {sym.name} = {value} ({value.how}) carries an error "
                               f"bar, which {node} cannot take into account")
        inputs[sym] = _mp_value(value, sym.name, label)
    return inputs


def _symbol(expr: sp.Expr, name: str) -> sp.Symbol:
    """The free symbol of ``expr`` called ``name`` (whatever its assumptions)."""
    for sym in expr.free_symbols:
        if sym.name == name:
            return sym
    return sp.Symbol(name)


def _mp_value(value: Any, name: str, label: str) -> Any:
    """``value`` as a number of the thread's mpmath context; a float is read as the shortest
    decimal that prints it (the number the user typed)."""
    ctx = local_mp()
    if isinstance(value, (bool, np.bool_)):
        raise Inconclusive(f"{label}: {name} = {value} is a truth value, not a number")
    if isinstance(value, (numbers.Integral, np.integer)):
        return ctx.mpf(int(value))
    if isinstance(value, (float, np.floating)):
        return ctx.mpf(repr(float(value)))
    if isinstance(value, sp.Rational):
        return ctx.mpf(int(value.p)) / int(value.q)
    if isinstance(value, sp.Float):
        return ctx.mpf(str(value))
    if hasattr(value, "_mpf_"):
        return ctx.mpf(value)
    try:
        return ctx.mpf(float(value))
    except (TypeError, ValueError):
        raise Inconclusive(f"{label}: {name} = {value!r} is not a number") from None


def _evaluate_sum(node: sp.Sum, values: Mapping[str, Any], label: str) -> Any:
    ctx = local_mp()
    (k, low, high), = node.limits
    outer = {n: v for n, v in values.items()}
    bounds: list[int | None] = []
    for bound in (low, high):
        if bound is sp.oo:
            bounds.append(None)
            continue
        b = bound.xreplace({sym: _rational(outer[sym.name]) or outer[sym.name]
                            for sym in bound.free_symbols})
        if not b.is_number or not float(b).is_integer():
            raise Inconclusive(f"{label}: the sum's bound {bound} = {b} is not an integer")
        bounds.append(int(b))
    first, last = bounds
    if first is None:
        raise Inconclusive(f"{label}: the sum {node} starts at infinity")
    symbols = sorted((s for s in node.function.free_symbols if s != k), key=lambda s: s.name)
    function = compile_expr(mp_ready(node.function), [k] + symbols, backend="mpmath")
    fixed = [_mp_value(outer[s.name], s.name, label) for s in symbols]
    if last is not None:
        if last - first + 1 > DIRECT_SUM_TERMS:
            summand = node.function.xreplace({s: _rational(outer[s.name]) or
                                              sp.Float(str(fixed[i]), 20)
                                              for i, s in enumerate(symbols)})
            obstacle = acceleration_obstacle(summand, k, first + DIRECT_SUM_TERMS // 2,
                                             last)
            if obstacle:
                raise Inconclusive(f"{label}: the finite sum {node} has "
                                   f"{last - first + 1} terms, more than the "
                                   f"{DIRECT_SUM_TERMS} summed directly, and Euler-Maclaurin "
                                   f"acceleration cannot be trusted on it: {obstacle}; write "
                                   "the sum in closed form")
            return _long_sum(lambda i: function(i, *fixed), first, last, node, label)
        return ctx.fsum(function(ctx.mpf(i), *fixed)
                        for i in range(first, last + 1))
    outer_numbers = {s: _rational(outer[s.name]) or sp.Float(str(fixed[i]), DIGITS)
                     for i, s in enumerate(symbols)}
    return infinite_sum(lambda i: function(ctx.mpf(i), *fixed), first, node,
                        node.function.xreplace(outer_numbers), outer_numbers, label)


def _long_sum(term: Callable[[Any], Any], low: int, high: int, node: sp.Sum, label: str) -> Any:
    """``sum(term(i), low <= i <= high)`` with more than :data:`DIRECT_SUM_TERMS` terms: the first
    :data:`DIRECT_SUM_TERMS` terms directly, the rest by Euler-Maclaurin summation
    (:func:`mpmath.sumem`), accepted when the term is smooth at the split (its eighth difference
    is below 10^-6 of its size), the Euler-Maclaurin error estimate is below 10^-30 of the sum and
    a second split (after half as many direct terms) agrees to 30 digits."""
    ctx = local_mp()
    half, head = low + DIRECT_SUM_TERMS // 2, low + DIRECT_SUM_TERMS
    count = high - low + 1
    refused = (f"{label}: the finite sum {node} has {count} terms, more than the "
               f"{DIRECT_SUM_TERMS} summed directly, and ")
    try:
        first = ctx.fsum(term(ctx.mpf(i)) for i in range(low, half))
        second = ctx.fsum(term(ctx.mpf(i)) for i in range(half, head))
        window = [term(ctx.mpf(head + j)) for j in range(9)]
        if any(isinstance(v, ctx.mpc) or not ctx.isfinite(v) for v in window):
            raise Inconclusive(refused + "its term is not a finite real number there")
        difference = ctx.fsum(ctx.binomial(8, j) * (-1) ** j * v for j, v in enumerate(window))
        size = max(abs(v) for v in window)
        if abs(difference) > ctx.mpf(10) ** -6 * size:
            raise Inconclusive(refused + "its term is not smooth enough to accelerate "
                               "(Euler-Maclaurin); write a closed form")
        tail, error = ctx.sumem(term, [head, high], error=True)
        other = ctx.sumem(term, [half, high])
    except (ZeroDivisionError, ValueError, OverflowError, TypeError) as exc:
        raise Inconclusive(refused + f"it cannot be accelerated here: {exc}") from None
    value = first + second + tail
    alternative = first + other
    scale = max(abs(value), ctx.mpf(10) ** -30)
    if any(isinstance(v, ctx.mpc) or not ctx.isfinite(v) for v in (value, alternative, error)) \
            or abs(error) > _SUM_ERROR * scale or abs(value - alternative) > _SUM_ERROR * scale:
        raise Inconclusive(refused + "its Euler-Maclaurin acceleration does not converge to 30 "
                           "digits here; write a closed form")
    return value


def sum_cost(exprs: list[sp.Expr], points: list[Mapping[str, Any]],
             resolve: Callable[[sp.Expr], sp.Expr | None] | None = None) -> int:
    """The term evaluations the finite sums and the integrals in ``exprs`` need over ``points``.

    A sum of at most :data:`DIRECT_SUM_TERMS` terms costs its terms, a longer one a fixed amount
    (it is accelerated); ``resolve`` rewrites a bound in the points' names (the claim's formula
    quantities substituted), and a bound it cannot rewrite counts as a long sum.  An integral
    costs :data:`~symq.core.claimsfile.integrals.INTEGRAL_COST` per point (the most evaluations
    of its integrand).  Infinite sums are not counted (they stop when their terms become
    negligible, or are accelerated within a few seconds).
    """
    sums = {node for e in exprs for node in e.atoms(sp.Sum)}
    total = INTEGRAL_COST * len(points) * len({n for e in exprs for n in e.atoms(sp.Integral)})
    for node in sums:
        (_, low, high), = node.limits
        if high is sp.oo:
            continue
        if resolve is not None:
            low, high = resolve(low), resolve(high)
            if low is None or high is None:
                total += _ACCELERATED_COST * len(points)
                continue
        bound_symbols = low.free_symbols | high.free_symbols
        names = {s.name for s in bound_symbols}
        for point in points if names else points[:1]:
            values = {sym: _rational(point.get(sym.name)) for sym in bound_symbols}
            count = _ACCELERATED_COST
            if all(v is not None for v in values.values()):
                try:
                    count = int(high.xreplace(values)) - int(low.xreplace(values)) + 1
                except (TypeError, ValueError):
                    pass
            cost = count if count <= DIRECT_SUM_TERMS else _ACCELERATED_COST
            total += cost if names else cost * len(points)
    return total


# ----------------------------------------------------------------------------- references

def override_value(model: ModelSpec, name: str, value: Any, where: str,
                    names: tuple[str, ...]) -> Any:
    """An override as written: a number, a word, or a formula in the claim's names."""
    parameter = model.parameter(name, value)
    if isinstance(value, str) and not isinstance(parameter.domain, (Choice, Expression)):
        return parse_formula(f"{where}.{name}", value, names)
    return value


#: Jobs a sequential reference (``half_width = ...``) may spend on its pilot and final run
#: together, unless its table says ``max_jobs``.
SEQUENTIAL_BUDGET = 10**8


@dataclass
class Reference(Quantity):
    """A result key of a (registered or declared) model, solved at the claim's point."""

    name: str
    model: ModelSpec
    key: str
    index: sp.Expr | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    context: FileContext = field(default_factory=FileContext)
    text: str = ""
    #: Sequential mode: the relative half-width asked of the key's interval, the jobs budget
    #: and the model's run-length parameter (``half_width = 0.01`` in the reference's table).
    half_width: float | None = None
    max_jobs: int = SEQUENTIAL_BUDGET
    jobs_parameter: str = "n_jobs"

    def __post_init__(self) -> None:
        deps = set()
        for value in self.overrides.values():
            if isinstance(value, sp.Basic):
                deps |= {s.name for s in value.free_symbols}
        if self.index is not None:
            deps |= {s.name for s in self.index.free_symbols}
        self.depends = tuple(sorted(deps))

    def describe(self) -> str:
        text = self.text or f"{self.model.name}:{self.key}"
        extra = [f"{k}={v}" for k, v in self.overrides.items()]
        if self.half_width is not None:
            extra.append(f"sequential to a relative half-width {self.half_width:g}, at most "
                         f"{self.max_jobs:.3g} jobs")
        if extra:
            text += " (" + ", ".join(extra) + ")"
        return text

    def current_point(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """``point`` with the values of region axes named by a former parameter name of the
        model (its ``renamed``) also given under the current name, with a
        :class:`~symq.core.renamed.RenamedKeywordWarning` (the axis stays, for formulas)."""
        renamed = getattr(self.model, "renamed", None) or {}
        old = {k: point[k] for k in renamed if k in point and renamed[k] not in point}
        if not old:
            return dict(point)
        return {**point, **self.model.current_names(old, self.name)}

    def parameters_at(self, env: Environment) -> dict[str, Any]:
        """The model's parameter values at the environment's point.  A region axis named by a
        parameter's former name (the model's ``renamed``) gives that parameter, with a
        :class:`~symq.core.renamed.RenamedKeywordWarning`, rather than being left unused."""
        params: dict[str, Any] = {}
        point = self.current_point(env.point)
        for p in self.model.parameters:
            if p.name in self.overrides:
                value = self.overrides[p.name]
                if isinstance(value, sp.Basic):
                    value = evaluate_expression(value, {s.name: env.value(s.name)
                                                        for s in value.free_symbols},
                                                set(), f"{self.name}.{p.name}")
                    value = float(value)
                    if isinstance(p.domain, IntegerAtLeast) and value.is_integer():
                        value = int(value)
                params[p.name] = value
            elif p.name in point:
                params[p.name] = point[p.name]
        return params

    def _sequential(self, params: dict[str, Any], seed: int) -> ConfidenceInterval:
        """The key's interval from Stein's two-stage procedure (:func:`~symq.core.simrun.
        run_sequential`): a pilot of the reference's run length (or of the length the model's
        run-length rule asks), then an independent run sized for :attr:`half_width`."""
        from ..simrun import run_sequential

        def simulate(n: int, gen: np.random.Generator) -> ConfidenceInterval:
            value = self.model.run({**params, self.jobs_parameter: n}, rng=gen).values[self.key]
            if not isinstance(value, ConfidenceInterval):
                raise Inconclusive(f"{self.describe()}: half_width asks for an interval, and "
                                   f"the model gave {value!r}")
            return value

        pilot = params.get(self.jobs_parameter)
        if pilot is None:
            pilot = next(p.default for p in self.model.parameters if p.name == self.jobs_parameter)

        def run(length: int) -> ConfidenceInterval:
            return run_sequential(simulate, half_width=float(self.half_width or 0),
                                  pilot=length, budget=self.max_jobs,
                                  rng=np.random.default_rng(seed), jobs_name=self.jobs_parameter)

        try:
            return run(int(pilot))
        except RunTooShort as exc:  # a pilot too short for its load: the length the rule asks
            needed = exc.jobs_needed
            if needed is None or not needed <= self.max_jobs / 2 or needed <= int(pilot):
                raise
            return run(math.ceil(needed))

    def evaluate(self, env: Environment) -> Any:
        params = self.parameters_at(env)
        frozen = tuple(sorted((k, repr(v)) for k, v in params.items()))
        seed = zlib.crc32(repr((self.model.name, frozen)).encode()) ^ env.seed
        if self.half_width is not None:
            key: tuple[Any, ...] = (self.model.name, frozen, seed, "sequential", self.key,
                                    self.half_width, self.max_jobs)
            if key not in self.context.cache:
                self.context.cache[key] = self._sequential(params, seed)
            env.evidence.add(Evidence.SIMULATION)
            return self.context.cache[key]
        key = (self.model.name, frozen, seed if self.model.accepts_rng else None)
        result = self.context.cache.get(key)
        if result is None:
            result = self.model.run(params, rng=np.random.default_rng(seed))
            self.context.cache[key] = result
        env.evidence.add(_EVIDENCE.get(result.exactness, Evidence.NUMERIC))
        if self.key not in result.values:
            raise SymqError(f"{self.describe()}: model {self.model.name} has no result "
                            f"{self.key!r}; its results are " + ", ".join(result.values))
        value = result.values[self.key]
        if isinstance(value, ConfidenceInterval):
            env.evidence.add(Evidence.SIMULATION)
        if self.index is not None:
            i = evaluate_expression(self.index, {s.name: env.value(s.name)
                                                 for s in self.index.free_symbols}, set(),
                                    f"the index of {self.describe()}")
            array = np.asarray(value)
            if array.ndim != 1 or not float(i).is_integer() or not 0 <= int(i) < array.size:
                raise Inconclusive(f"{self.describe()}[{i}] is out of range (it has "
                                   f"{array.size} entries)")
            return local_mp().mpf(float(array[int(i)]))
        if isinstance(value, (list, tuple)):
            return np.asarray(value, dtype=float)
        if isinstance(value, (float, np.floating)):
            # a solver's double is that double, not the decimal it prints: never read exactly
            return local_mp().mpf(float(value))
        return value


@dataclass
class Function(Quantity):
    """A quantity computed by a Python function of the point (Python claims files only)."""

    name: str
    function: Callable[[Mapping[str, Any]], Any]

    def __post_init__(self) -> None:
        self.depends = ()

    def describe(self) -> str:
        return f"{getattr(self.function, '__name__', 'function')}(point)"

    def evaluate(self, env: Environment) -> Any:
        env.evidence.add(Evidence.NUMERIC)
        return self.function(dict(env.point))
