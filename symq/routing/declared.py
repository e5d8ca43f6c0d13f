r"""The ``routing-cost`` model kind: a server farm with a cost per server declared in a claims file.

A claims file declares a routing problem by the cost rate of one server as a formula in the work
rate ``x`` routed to it, its capacity ``C``, its weight ``w`` and the file's declared parameters::

    [models.quadratic]
    kind = "routing-cost"
    parameters = { a = "positive" }
    cost = "w*x + a*x^2/C"          # default: w*x/(C - x), the M/G/1-PS holding cost
    capacity = "C"                  # default: C; every load must stay below it

The declared model (:func:`declare`) takes the vectors ``C`` (and ``w`` when a formula uses it), the
total load ``rho`` and the declared parameters (a scalar, or a vector with one entry per server),
and computes, with the one numeric solver of :mod:`symq.routing.numeric`
(:func:`~symq.routing.numeric.minimize_separable`: SLSQP, then Newton's method on the KKT
system, accepted only when the KKT conditions hold to 1e-10):

* the **social optimum**: :math:`\min \sum_j f_j(x_j)` subject to :math:`\sum_j x_j = \rho`,
  :math:`0 \le x_j < \text{capacity}_j`; its KKT conditions are :math:`f_j'(x_j) = \mu` on the
  used servers and :math:`f_j'(0) \ge \mu` on the others (Altman, Ayesta, Prabhu 2011,
  centralised-routing section, for :math:`f_j = w_j x/(C_j - x)`);
* the **Wardrop equilibrium** of size-blind selfish jobs.  The cost :math:`f_j(x)` is a rate (cost
  per unit time at server j, e.g. :math:`w_j E[N_j]`); by Little's law a job at server j pays
  :math:`f_j(x_j)/\lambda_j`, that is :math:`E[X] f_j(x_j)/x_j`, so the cost *per unit of work*
  is :math:`g_j(x) = f_j(x)/x` (for PS, :math:`w_j/(C_j - x)`: the sojourn time of a job of size
  s is :math:`s/(C_j - x)`, paper, model section).  At equilibrium every used server has the same
  :math:`g_j(x_j) = c` and the others :math:`g_j(0^+) = f_j'(0) \ge c`; these are the KKT
  conditions of the minimisation of the Beckmann potential
  :math:`\Phi(x) = \sum_j \int_0^{x_j} f_j(y)/y \, dy` (Beckmann, McGuire, Winsten 1956; Altman,
  Ayesta, Prabhu 2011, decentralised-routing section), which is how it is computed;
* the **price of anarchy** :math:`J^{NE}/J^*` with :math:`J = \sum_j f_j(x_j)`.

Both minimisations need convexity: the solve checks on a grid of each server's domain that
:math:`f_j(0) = 0`, :math:`f_j` is finite, increasing (:math:`f_j' > 0` for :math:`x > 0`) and
convex (:math:`f_j'' \ge 0`); a convex :math:`f_j` with :math:`f_j(0) = 0` has a nondecreasing
:math:`f_j(x)/x`, so the potential is convex too.  A cost that fails is refused with an
:class:`~symq.core.errors.InvalidParameter` naming ``models.NAME.cost`` and the point.

The potential is integrated by sympy when it finds a closed form (checked numerically against
adaptive quadrature on each server before use) and by adaptive quadrature otherwise.

Examples
--------
>>> spec = declare("ps", {}, (), "models.ps")
>>> r = spec.run({"C": [4, 2, 1], "w": [1, 2, 4], "rho": 5})
>>> round(r["J_opt"], 9), r["active_ne"]
(11.0, [0, 1])
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from symq.core.budget import time_budget
from symq.core.claimsfile.declarations import check_keys
from symq.core.compiler import CompiledFunction, compile
from symq.core.derivation import Derivation
from symq.core.display import MarkdownDisplay
from symq.core.errors import DerivationTimeout, InvalidParameter, NotConverged
from symq.core.formula import parse_formula
from symq.core.parameters import Parameter
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import Exactness, ResultBase

from . import farm as _farm
from .farm import ServerFarm
from .numeric import minimize_separable

__all__ = ["KIND", "ROUTING_COST", "DeclaredCost", "DeclaredRouting", "declare", "DEFAULT_COST"]

KIND = "routing-cost"
#: The cost of ps-routing: the holding-cost rate w E[N] of an M/G/1-PS server.
DEFAULT_COST = "w*x/(C - x)"
#: The load bound of ps-routing: the capacity (stability of the queue).
DEFAULT_CAPACITY = "C"
#: Names a formula may use besides the declared parameters.
RESERVED = ("x", "C", "w", "rho")
#: Points per server of the convexity check (plus points approaching the capacity).
GRID_POINTS = 256
#: Seconds sympy may spend integrating the potential before quadrature is used.
POTENTIAL_BUDGET = 5.0
#: Gauss-Legendre nodes per piece of the potential's quadrature.
NODES = 24
_GAUSS = np.polynomial.legendre.leggauss(NODES)

SOURCE = ("E. Altman, U. Ayesta, B. J. Prabhu, Load balancing in processor sharing systems, "
          "Telecommunication Systems 47(1-2):35-48, 2011 (centralised- and decentralised-"
          "routing sections); M. Beckmann, C. B. McGuire, C. B. Winsten, Studies in the "
          "Economics of Transportation, 1956 (the potential)")

KEYS = {
    "cost": ("cost rate of one server (cost per unit time, e.g. w E[N]) as a formula in x (the "
             "work rate routed to it), C (its capacity), w (its weight) and the declared "
             f"parameters; default {DEFAULT_COST}, the M/G/1-PS holding cost of ps-routing. It "
             "must vanish at x = 0 and be increasing and convex in x below the capacity"),
    "capacity": ("bound on each server's load as a formula in C, w and the declared parameters: "
                 "every x must stay below it, and rho below their sum; default "
                 f"{DEFAULT_CAPACITY}"),
}
OUTPUTS = ("x_opt", "x_ne", "J_opt", "J_ne", "poa", "mu", "c", "active_opt", "active_ne",
           "capacity", "residual")

EXAMPLE = """[models.affine]
kind = "routing-cost"
parameters = { a = "positive" }
cost = "w*x + a*x^2/C"      # cost rate of a server; default w*x/(C - x)
capacity = "C"              # loads stay below it; default C
"""

_x = sp.Symbol("x", positive=True)
_y = sp.Symbol("y", positive=True)


def _symbol(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True)   # the symbols parse_formula builds


def _formula(key: str, value: Any, symbols: tuple[str, ...]) -> sp.Expr:
    """A formula given as text (parsed, never evaluated), a sympy expression or a number."""
    domain = "a formula in " + ", ".join(symbols)
    if isinstance(value, str):
        return parse_formula(key, value, symbols)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return sp.nsimplify(value) if isinstance(value, int) else sp.Float(value)
    if isinstance(value, sp.Expr):
        unknown = sorted(s.name for s in value.free_symbols if s.name not in symbols)
        if unknown:
            raise InvalidParameter(key, value, domain, "unknown name " + ", ".join(unknown))
        if value.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
            raise InvalidParameter(key, value, domain, "not finite")
        return value.xreplace({s: _symbol(s.name) for s in value.free_symbols})
    raise InvalidParameter(key, type(value).__name__, domain + " (text, or a sympy expression "
                           "in a Python claims file)", "the solver needs the formula itself, to "
                           "differentiate and integrate it")


@dataclass(frozen=True)
class DeclaredCost(MarkdownDisplay):
    """The symbolic data of a declared routing cost and its compiled forms.

    Attributes
    ----------
    cost, capacity : sympy.Expr
        :math:`f(x; C, w, \\theta)` and the load bound.
    marginal, curvature : sympy.Expr
        :math:`f'` and :math:`f''` in ``x``.
    per_unit, per_unit_slope : sympy.Expr
        :math:`g = f/x` (cancelled) and :math:`g'`.
    potential : sympy.Expr or None
        :math:`\\int_0^x g(y)\\,dy` when sympy found it within :data:`POTENTIAL_BUDGET` seconds.
    names : tuple of str
        Arguments of the compiled functions after ``x``: ``C``, ``w`` (when used), the declared
        parameters.
    """

    cost: sp.Expr
    capacity: sp.Expr
    marginal: sp.Expr
    curvature: sp.Expr
    per_unit: sp.Expr
    per_unit_slope: sp.Expr
    potential: sp.Expr | None
    names: tuple[str, ...]

    def compiled(self, expr: sp.Expr) -> CompiledFunction:
        """``expr`` compiled (numpy backend) with arguments ``(x, *names)``."""
        return compile(expr, (_x, *(_symbol(n) for n in self.names)))

    def to_markdown(self) -> str:
        """The cost as Markdown: capacity, arguments and the derived forms in LaTeX."""
        from symq.core.display import markdown

        shown = [("cost", self.cost), ("marginal", self.marginal), ("curvature", self.curvature),
                 ("cost per unit of work", self.per_unit), ("potential", self.potential)]
        return markdown("**DeclaredCost**: a server's cost rate $f(x)$ at load $x$ and its "
                        "derived forms", [("capacity", self.capacity), ("arguments", self.names)],
                        [(label, expr) for label, expr in shown if expr is not None])


def _potential(per_unit: sp.Expr) -> sp.Expr | None:
    """:math:`\\int_0^x g(y) dy` by sympy within the budget; None when it has no closed form."""
    try:
        with time_budget(POTENTIAL_BUDGET, "the integral of the routing cost per unit of work"):
            result = sp.integrate(per_unit.subs(_x, _y), (_y, 0, _x))
    except (DerivationTimeout, NotImplementedError, ValueError, TypeError):
        return None
    if result.has(sp.Integral, sp.Piecewise, sp.zoo, sp.oo, sp.nan):
        return None
    return _real_logs(result)


def _real_logs(expr: sp.Expr) -> sp.Expr:
    """``expr`` with ``log(-u)`` for each ``log(u)`` whose argument is negative-looking
    (``log(-C + x)``), when the flipped logarithms enter linearly with coefficients summing to
    zero: their ``i pi`` parts then cancel, so the result equals ``expr`` and is real
    (sympy's antiderivative of ``w/(C - x)`` is ``w log(-C) - w log(-C + x)``)."""
    expr = expr.xreplace({L: sp.log(sp.factor(L.args[0])) for L in expr.atoms(sp.log)})
    flips = [L for L in expr.atoms(sp.log) if L.args[0].could_extract_minus_sign()]
    if not flips:
        return expr
    dummies = {L: sp.Dummy() for L in flips}
    linear = expr.xreplace(dummies)
    coefficients = [sp.diff(linear, d) for d in dummies.values()]
    if any(sp.diff(c, d) != 0 for c in coefficients for d in dummies.values()) \
            or sp.simplify(sum(coefficients)) != 0:
        return expr
    return expr.xreplace({L: sp.log(-L.args[0]) for L in flips})


def _analyse(cost: sp.Expr, capacity: sp.Expr, names: tuple[str, ...]) -> DeclaredCost:
    marginal = sp.diff(cost, _x)
    per_unit = sp.cancel(cost / _x)
    if per_unit.is_rational_function(_x):
        per_unit = sp.factor(per_unit)   # (C - x)^2, not C^2 - 2Cx + x^2 (cancellation near C)
    return DeclaredCost(cost=cost, capacity=capacity, marginal=marginal,
                        curvature=sp.diff(marginal, _x), per_unit=per_unit,
                        per_unit_slope=sp.diff(per_unit, _x), potential=_potential(per_unit),
                        names=names)


class _Farm:
    """The compiled cost on one farm: every function takes loads ``x`` of shape (..., K)."""

    def __init__(self, model: DeclaredCost, args: list[np.ndarray], capacity: np.ndarray,
                 where: str, text: str) -> None:
        self.model, self.args, self.cap, self.where, self.text = model, args, capacity, where, text
        self._f = model.compiled(model.cost)
        self._df = model.compiled(model.marginal)
        self._d2f = model.compiled(model.curvature)
        self._g = model.compiled(model.per_unit)
        self._dg = model.compiled(model.per_unit_slope)
        self.quadrature = True
        if model.potential is not None:
            self._phi = model.compiled(model.potential)
            self.quadrature = not self._potential_agrees()

    def _call(self, function: CompiledFunction, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(function(np.asarray(x, dtype=float), *self.args), dtype=float)

    def f(self, x: Any) -> np.ndarray:
        return self._call(self._f, x)

    def df(self, x: Any) -> np.ndarray:
        return self._call(self._df, x)

    def d2f(self, x: Any) -> np.ndarray:
        return self._call(self._d2f, x)

    def g(self, x: Any) -> np.ndarray:
        """Cost per unit of work :math:`f(x)/x`, with its limit :math:`f'(0)` at 0."""
        out = self._call(self._g, x)
        zero = np.asarray(x) == 0
        return np.where(zero & ~np.isfinite(out), self.df(x), out)

    def dg(self, x: Any) -> np.ndarray:
        """:math:`g'(x)`, with its limit :math:`f''(0)/2` at 0."""
        out = self._call(self._dg, x)
        zero = np.asarray(x) == 0
        return np.where(zero & ~np.isfinite(out), 0.5 * self.d2f(x), out)

    def _quad(self, j: int, x: float) -> float:
        r""":math:`\int_0^x g_j(y) dy` by composite Gauss-Legendre quadrature (:data:`NODES`
        nodes per piece) on pieces that shrink geometrically towards ``x`` at the scale of its
        distance to the capacity, where a cost may blow up: each piece is at most three times as
        long as its distance to the capacity, so the rule converges geometrically for a cost
        analytic below the capacity."""
        if x <= 0:
            return 0.0
        gap = float(self.cap[j]) - x
        cuts = [x - gap * 4.0 ** k for k in range(60) if x - gap * 4.0 ** k > 0]
        edges = np.array([0.0, *sorted(cuts), x])
        nodes, weights = _GAUSS
        half = 0.5 * np.diff(edges)[:, None]
        y = (0.5 * (edges[1:] + edges[:-1]))[:, None] + half * nodes
        args = [a[j] for a in self.args]
        with np.errstate(all="ignore"):
            values = np.broadcast_to(np.asarray(self._g(y, *args), dtype=float), y.shape)
        return float(np.sum(half * weights * values))

    def _phi_closed(self, x: np.ndarray) -> np.ndarray:
        """The closed-form potential at complex arguments (sympy's antiderivative may go through
        logarithms of negative numbers), real part, minus its value at 0."""
        args = [np.asarray(a, dtype=complex) for a in self.args]
        with np.errstate(all="ignore"):
            top = np.asarray(self._phi(np.asarray(x, dtype=complex), *args))
            bottom = np.asarray(self._phi(np.zeros_like(np.asarray(x, dtype=complex)), *args))
        value = top - bottom
        return np.where(np.abs(value.imag) <= 1e-9 * (1 + np.abs(value.real)), value.real, np.nan)

    def _potential_agrees(self) -> bool:
        points = np.outer([0.3, 0.9, 1 - 1e-6], self.cap)
        closed = self._phi_closed(points)
        for row, point in zip(closed, points):
            for j, (value, x) in enumerate(zip(row, point)):
                reference = self._quad(j, float(x))
                if not (math.isfinite(value) and
                        abs(value - reference) <= 1e-8 * max(1.0, abs(reference))):
                    return False
        return True

    def phi(self, x: Any) -> np.ndarray:
        """The potential of each server, :math:`\\int_0^{x_j} g_j(y) dy`."""
        x = np.asarray(x, dtype=float)
        if not self.quadrature:
            return self._phi_closed(x)
        return np.array([self._quad(j, float(v)) for j, v in enumerate(x)])

    # -- the checks the two minimisations need ----------------------------------------------
    def _refuse(self, domain: str, reason: str) -> InvalidParameter:
        return InvalidParameter(f"{self.where}.cost", self.text, domain, reason)

    def check(self) -> None:
        """Refuse a cost that is not finite, zero at 0, increasing and convex on the grid."""
        u = np.concatenate([np.linspace(0.0, 1.0, GRID_POINTS, endpoint=False),
                            1.0 - np.logspace(-3, -12, 10)])
        x = np.outer(u, self.cap)                       # shape (points, K)
        f, df, d2f = self.f(x), self.df(x), self.d2f(x)
        for name, values in (("the cost", f), ("its derivative", df),
                             ("its second derivative", d2f)):
            bad = ~np.isfinite(values)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise self._refuse("a cost finite (in floating point) below the capacity",
                                   f"{name} is {values[i, j]} at x = {x[i, j]:.6g} on server {j} "
                                   f"(capacity {self.cap[j]:.6g})")
        scale = np.max(np.abs(f[:GRID_POINTS]), axis=0) + 1e-300
        if np.any(np.abs(f[0]) > 1e-12 * scale):
            j = int(np.argmax(np.abs(f[0]) / scale))
            raise self._refuse("a cost that vanishes at x = 0 (no load, no cost)",
                               f"cost(0) = {f[0, j]:.6g} on server {j}; the cost per unit of work "
                               "f(x)/x of the equilibrium needs f(0) = 0")
        increasing = np.vstack([df[:1] >= 0, df[1:] > 0])
        if not increasing.all():
            i, j = np.argwhere(~increasing)[0]
            raise self._refuse("a cost increasing in x", f"d cost/dx = {df[i, j]:.6g} at x = "
                               f"{x[i, j]:.6g} on server {j}: the KKT multipliers must be positive")
        slack = 1e-9 * np.maximum(np.abs(d2f).max(axis=0), np.abs(df).max(axis=0) / self.cap)
        if np.any(d2f < -slack):
            i, j = np.argwhere(d2f < -slack)[0]
            raise self._refuse("a cost convex in x on [0, capacity) (the social optimum and the "
                               "equilibrium minimise convex functions)",
                               f"d2 cost/dx2 = {d2f[i, j]:.6g} < 0 at x = {x[i, j]:.6g} on "
                               f"server {j} (capacity {self.cap[j]:.6g})")


def _vector(name: str, value: Any, K: int) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return np.full(K, float(array))
    if array.shape != (K,):
        raise InvalidParameter(name, value, f"a number or a vector of {K} entries, one per "
                               f"server (C has {K})", f"has shape {array.shape}")
    return array


def _used(loads: np.ndarray, cap: np.ndarray) -> np.ndarray:
    u = loads / cap
    return u > 1e-9 * np.max(u)


def _common(values: np.ndarray, loads: np.ndarray, used: np.ndarray) -> float:
    """The load-weighted mean of ``values`` over the used servers (the KKT multiplier)."""
    return float(np.sum(values[used] * loads[used]) / np.sum(loads[used]))


def declare(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
            where: str) -> ModelSpec:
    """Build the model a claims file declares with ``kind = "routing-cost"``.

    Parameters
    ----------
    name : str
        The model's name in the file.
    table : mapping
        ``cost`` and ``capacity`` (both optional, see :data:`KEYS`): text, or sympy expressions
        in a Python claims file.
    parameters : tuple of Parameter
        The file's declared parameters (scalars, or vectors with one entry per server).
    where : str
        The declaration's key path (``models.NAME``), for messages.

    Returns
    -------
    ModelSpec
        Parameters: the declared ones, then ``C``, ``w`` (when a formula uses it) and ``rho`` as
        ps-routing declares them; outputs :data:`OUTPUTS`; a derivation of the KKT conditions.

    Raises
    ------
    InvalidParameter
        Naming ``where.KEY`` for an unknown key or a formula with an undeclared symbol (or no
        ``x`` in the cost), ``where.parameters`` for a declared name that is reserved.
    """
    table = check_keys(where, table, KEYS, f"a {KIND} model")
    declared = tuple(p.name for p in parameters)
    for p in declared:
        if p in RESERVED:
            raise InvalidParameter(f"{where}.parameters", p, "names other than "
                                   + ", ".join(RESERVED), f"{p} is a parameter of every {KIND} "
                                   "model (x the load, C and w the server vectors, rho the total)")
    text = table.get("cost", DEFAULT_COST)
    cost = _formula(f"{where}.cost", text, ("x", "C", "w", *declared))
    if _x not in cost.free_symbols:
        raise InvalidParameter(f"{where}.cost", text, "a formula in x, the load of a server",
                               "the cost does not depend on x")
    capacity_text = table.get("capacity", DEFAULT_CAPACITY)
    capacity = _formula(f"{where}.capacity", capacity_text, ("C", "w", *declared))
    at_zero = cost.subs(_x, 0)
    if at_zero.is_number and at_zero.is_finite and at_zero != 0:
        raise InvalidParameter(f"{where}.cost", text, "a cost that vanishes at x = 0 (no load, "
                               "no cost)", f"cost(0) = {at_zero}")
    used = {s.name for s in (cost.free_symbols | capacity.free_symbols)}
    names = ("C", *(("w",) if "w" in used else ()), *declared)
    model = _analyse(cost, capacity, names)
    kinks = (sp.DiracDelta, sp.Heaviside, sp.sign, sp.Derivative, sp.Subs)
    if any(model.curvature.has(k) or model.per_unit_slope.has(k) for k in kinks):
        raise InvalidParameter(f"{where}.cost", text, "a cost twice differentiable in x below "
                               "the capacity", "its derivatives have jumps or are not known in "
                               "closed form (Max, Min or Abs of an expression in x makes a "
                               "kink); the solver's Newton step needs the second derivative")
    shown = text if isinstance(text, str) else str(text)

    def solve(**values: Any) -> DeclaredRouting:
        return _solve(model, values, where, shown)

    def derivation() -> Derivation:
        return _derivation(name, model)

    farm_parameters = (_farm.C, *((_farm.w,) if "w" in used else ()), _farm.rho)
    return ModelSpec(
        name=name, summary=f"routing with the declared cost {shown} per server: social optimum, "
        "Wardrop equilibrium, price of anarchy", parameters=(*parameters, *farm_parameters),
        solve=solve, outputs=OUTPUTS, derivation=derivation,
        scalar_outputs=lambda r: {k: float(r.values[k]) for k in ("J_opt", "J_ne", "poa", "mu",
                                                                   "c")})


@dataclass(frozen=True)
class DeclaredRouting(ResultBase):
    r"""Social optimum, Wardrop equilibrium and price of anarchy of a farm with a declared cost
    (the result of a ``routing-cost`` model; its fields are :data:`OUTPUTS`).

    Attributes
    ----------
    x_opt, x_ne : numpy.ndarray
        Loads of the social optimum and of the Wardrop equilibrium (input server order).
    J_opt, J_ne : float
        Social cost :math:`J = \sum_j f_j(x_j)` at each.
    poa : float
        Price of anarchy ``J_ne / J_opt``.
    mu, c : float
        Common marginal cost of the used servers at the optimum, common cost per unit of work at
        the equilibrium (load-weighted means over the used servers).
    active_opt, active_ne : list of int
        Indices of the used servers.
    capacity : numpy.ndarray
        Each server's load bound.
    residual : float
        The larger KKT residual of the two minimisations.
    method : str
        ``"SLSQP + KKT Newton polish (potential: closed form)"``, or ``quadrature`` when the
        potential has no closed form.
    exactness : Exactness
        ``numeric``.
    seconds : float
        Wall time: the convexity check and both minimisations.
    """

    summary: ClassVar[tuple[str, ...]] = ("J_opt", "J_ne", "poa")

    x_opt: np.ndarray
    x_ne: np.ndarray
    J_opt: float
    J_ne: float
    poa: float
    mu: float
    c: float
    active_opt: list[int]
    active_ne: list[int]
    capacity: np.ndarray
    residual: float
    method: str
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


def _solve(model: DeclaredCost, values: Mapping[str, Any], where: str,
           text: str) -> DeclaredRouting:
    start = time.perf_counter()
    C = np.asarray(values["C"], dtype=float)
    if "w" in model.names:
        C = ServerFarm(C, values["w"]).C
    K = C.size
    args = [C] + [_vector(n, values[n], K) for n in model.names[1:]]
    capfun = compile(model.capacity, tuple(_symbol(n) for n in model.names))
    with np.errstate(all="ignore"):
        cap = np.broadcast_to(np.asarray(capfun(*args), dtype=float), (K,)).copy()
    if not (np.all(np.isfinite(cap)) and np.all(cap > 0)):
        j = int(np.argmin(np.where(np.isfinite(cap), cap, -np.inf)))
        raise InvalidParameter(f"{where}.capacity", str(model.capacity), "a positive finite "
                               "bound on each server's load", f"it is {cap[j]} on server {j}")
    rho = float(values["rho"])
    if not rho < float(np.sum(cap)):
        raise InvalidParameter("rho", values["rho"], f"a total load < the sum of the capacities "
                               f"{float(np.sum(cap)):.12g}", "no routing keeps every server "
                               "below its capacity")
    farm = _Farm(model, args, cap, where, text)
    farm.check()

    def social(x: np.ndarray) -> float:
        return float(np.sum(farm.f(x)))

    try:
        optimum = minimize_separable(cap, rho, farm.f, farm.df, farm.d2f, cost=social,
                                     name="social cost")
        equilibrium = minimize_separable(cap, rho, farm.phi, farm.g, farm.dg, cost=social,
                                         name="potential")
    except NotConverged as exc:
        at_capacity = np.isfinite(farm.f(cap * (1 - 1e-12)))
        if at_capacity.any():
            j = int(np.argmax(at_capacity))
            raise InvalidParameter(
                f"{where}.capacity", str(model.capacity), "a bound the minimisers stay below",
                f"no minimiser with every load below its capacity was found (KKT residual "
                f"{exc.residual:.3g}), and the cost stays finite at the capacity of server {j}: "
                "the bound x < capacity probably binds; give a cost that grows without bound "
                "there, or a larger capacity") from None
        raise
    used_opt, used_ne = _used(optimum.loads, cap), _used(equilibrium.loads, cap)
    potential = "quadrature" if farm.quadrature else "closed form"
    return DeclaredRouting(
        x_opt=optimum.loads, x_ne=equilibrium.loads, J_opt=optimum.cost, J_ne=equilibrium.cost,
        poa=equilibrium.cost / optimum.cost,
        mu=_common(farm.df(optimum.loads), optimum.loads, used_opt),
        c=_common(farm.g(equilibrium.loads), equilibrium.loads, used_ne),
        active_opt=np.flatnonzero(used_opt).tolist(), active_ne=np.flatnonzero(used_ne).tolist(),
        capacity=cap, residual=max(optimum.residual, equilibrium.residual),
        method=f"SLSQP + KKT Newton polish (potential: {potential})",
        seconds=time.perf_counter() - start)


def _tidy(expr: sp.Expr) -> sp.Expr:
    """``sympy.simplify`` within a second (for display), else the expression as it is (also
    when it has logarithms, which simplify merges into powers)."""
    if expr.has(sp.log):
        return expr
    try:
        with time_budget(1.0, "simplifying a formula for display"):
            return sp.simplify(expr, ratio=1)
    except DerivationTimeout:
        return expr


def _derivation(name: str, model: DeclaredCost) -> Derivation:
    """KKT conditions of the declared cost (sympy), in the paper's notation with index j."""
    j = {_x: sp.Symbol("x_j", nonnegative=True)}
    j.update({_symbol(n): sp.Symbol(f"{n}_j", positive=True) for n in ("C", "w")})
    mu, c = sp.symbols("mu c", positive=True)
    x0 = sp.Symbol("x_j", nonnegative=True)

    def at(expr: sp.Expr) -> sp.Expr:
        return _tidy(expr).xreplace(j)

    d = Derivation(f"Routing model {name}: social optimum and Wardrop equilibrium", SOURCE,
                   "KKT conditions of the declared cost rate $f_j(x)$ of a server, for the "
                   "optimum and for the equilibrium of selfish jobs.")
    d.section("Social optimum")
    f = sp.Function("f_j")
    d.add("Declared cost", sp.Eq(f(x0), at(model.cost), evaluate=False),
          r"The cost rate of server $j$ at load $x_j$; $J = \sum_j f_j(x_j)$.")
    d.add("Marginal cost", sp.Eq(sp.Derivative(f(x0), x0), at(model.marginal),
                                 evaluate=False), "Differentiate the declared cost.")
    d.add("Curvature", sp.Eq(sp.Derivative(f(x0), (x0, 2)), at(model.curvature),
                             evaluate=False),
          "Nonnegative on $[0, C_j)$: $J$ is convex (checked numerically by each solve).")
    d.add("KKT conditions", [sp.Eq(at(model.marginal), mu, evaluate=False),
                             sp.GreaterThan(at(model.marginal.subs(_x, 0)), mu, evaluate=False)],
          r"$\min J$ subject to $\sum_j x_j = \rho$, $x_j \ge 0$: equal marginal costs $\mu$ "
          r"on used servers, a marginal cost at zero load of at least $\mu$ on unused ones "
          "(paper, centralised-routing section).")
    d.section("Wardrop equilibrium")
    d.add("Cost per unit of work", sp.Eq(sp.Symbol("g_j"), at(model.per_unit), evaluate=False),
          r"By Little's law a job pays $f_j/\lambda_j = E[X] f_j(x_j)/x_j$ at server $j$.")
    if model.potential is not None:
        potential = at(model.potential)
    else:
        potential = sp.Integral(at(model.per_unit).subs(j[_x], sp.Symbol("y")),
                                (sp.Symbol("y"), 0, j[_x]))
    d.add("Beckmann potential", sp.Eq(sp.Symbol("Phi_j"), potential, evaluate=False),
          r"$\Phi = \sum_j \int_0^{x_j} f_j(y)/y \, dy$; its gradient is the cost per unit of "
          "work.")
    d.add("Wardrop conditions", [sp.Eq(at(model.per_unit), c, evaluate=False),
                                 sp.GreaterThan(at(model.marginal.subs(_x, 0)), c,
                                                evaluate=False)],
          r"The KKT conditions of $\min \Phi$ subject to $\sum_j x_j = \rho$: every used "
          r"server costs $c$ per unit of work, unused ones at least $f_j'(0) \ge c$ (paper, "
          "decentralised-routing section).")
    d.add("Price of anarchy", sp.Eq(sp.Symbol("PoA"), sp.Symbol("J^NE") / sp.Symbol("J^*"),
                                    evaluate=False), "The cost of selfishness.")
    return d


#: The model kind ``routing-cost`` (listed in :mod:`symq.routing.registration`).
ROUTING_COST: ModelKind = ModelKind(
    kind=KIND,
    summary=("routing to servers with a declared cost rate per server: social optimum, Wardrop "
             "equilibrium (potential minimiser), price of anarchy"),
    declare=declare,
    keys=KEYS,
    outputs=OUTPUTS,
    example=EXAMPLE,
)
