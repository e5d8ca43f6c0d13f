"""Symbolic side of adaptive window protocols: Kolmogorov equation, stability, identities.

Altman, Avrachenkov, Kherani, Prabhu (IEEE INFOCOM 2005, Section II: the model and its
Kolmogorov equation) and symq's own derivations (``derivations/awp.md``):

* the stationary Kolmogorov equation in level-crossing form,
  ``a(w) f(w) = int_{w < u, d(u) <= w} lam(u) f(u) du`` (for ``d(u) = beta u`` the upper limit
  is ``w/beta``), and its delay-differential form;
* the rate-conservation identity ``E[a(W)] = E[lam(W) b(W) W]``;
* stability from the drift of ``ln W``: ``L ln w = lam(w) [a(w)/(w lam(w)) - ln(w/d(w))]``.
  Without a cap the window escapes to infinity when ``lim_{w->oo} a/(w lam) > lim ln(w/d)``
  and is pulled back when it is smaller; without a floor it collapses to 0 when
  ``lim_{w->0} a/(w lam) < lim ln(w/d)``.  The limits are taken by sympy
  (:func:`sympy.limit`, with a time budget), numerically when sympy cannot decide.

Examples
--------
>>> from symq.window.protocol import newreno, scalable
>>> stability(newreno(1e-4)).status
'stable'
>>> stability(scalable(0.1, loss_model="time")).status   # W -> 0: needs a floor
'collapse'
>>> stability(scalable(1e-3, loss_model="time", w_min=1.0)).status   # too few losses
'transient'
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
import sympy as sp

from symq.core.budget import time_budget
from symq.core.compiler import compile as symq_compile
from symq.core.errors import DerivationTimeout, NumericalFailure
from symq.core.result import Exactness, ResultBase

from .constants import abstract, restore
from .protocol import ALPHA, BETA, GAMMA, K_EXP, L_EXP, W, WindowProtocol

__all__ = ["Profiles", "kolmogorov_equation", "delay_equation", "drift_identity",
           "WindowStability", "stability", "log_drift", "power_law_stability", "power_law_cycle",
           "power_law_palm", "power_law_series", "mimd_floor_law"]

F = sp.Function("f")
U = sp.Symbol("u", positive=True)

#: Seconds sympy may spend on one limit before the numeric fallback.
LIMIT_BUDGET = 5.0


class Profiles(Protocol):
    """The three profiles of a protocol as sympy expressions in ``w`` (a
    :class:`~symq.window.protocol.WindowProtocol`, or a declared protocol whose profiles still
    hold symbolic parameters, :class:`~symq.window.declared.DeclaredWindow`)."""

    increase: sp.Expr
    loss: sp.Expr
    after_loss: sp.Expr


def _inverse_after_loss(protocol: Profiles) -> sp.Expr | None:
    """``d^{-1}(w)`` when sympy finds a unique positive solution of ``d(u) = w``."""
    if protocol.after_loss.has(sp.Piecewise):
        return None
    try:
        with time_budget(LIMIT_BUDGET, "inverting the decrease profile"):
            roots = sp.solve(sp.Eq(protocol.after_loss.subs(W, U), W), U)
    except (DerivationTimeout, NotImplementedError):
        return None
    roots = [r for r in roots if r.is_positive is not False]
    return roots[0] if len(roots) == 1 else None


def kolmogorov_equation(protocol: Profiles) -> sp.Eq:
    """Stationary level-crossing equation: up-crossings of ``w`` = down-crossings (Section II).

    ``a(w) f(w) = int_w^{d^{-1}(w)} lam(u) f(u) du``; if sympy cannot invert ``d`` the upper
    limit is written ``d^{-1}(w)``.
    """
    upper = _inverse_after_loss(protocol)
    if upper is None:
        upper = sp.Function("d^{-1}")(W)
    return sp.Eq(protocol.increase * F(W),
                 sp.Integral(protocol.loss.subs(W, U) * F(U), (U, W, upper)))


def delay_equation(protocol: Profiles) -> sp.Eq:
    """The differentiated form ``(a f)' = -lam f + lam(d^{-1}) f(d^{-1}) (d^{-1})'``."""
    upper = _inverse_after_loss(protocol)
    if upper is None:
        upper = sp.Function("d^{-1}")(W)
    rhs = (-protocol.loss * F(W)
           + protocol.loss.subs(W, upper) * F(upper) * sp.diff(upper, W))
    return sp.Eq(sp.Derivative(protocol.increase * F(W), W), rhs)


def drift_identity(protocol: Profiles) -> sp.Eq:
    """``E[a(W)] = E[lam(W) b(W) W]``: mean drift balance, for any stationary law.

    The generator ``L g = a g' + lam (g(d) - g)`` applied to ``g(w) = w`` has mean 0 under a
    stationary law (``derivations/awp.md``, step "Mean drift balance")."""
    expect = sp.Function("E")
    return sp.Eq(expect(protocol.increase), expect(protocol.loss * (W - protocol.after_loss)))


@dataclass(frozen=True)
class WindowStability(ResultBase):
    """Stability verdict of a protocol (from :func:`stability`; a
    :class:`~symq.core.result.ResultBase`).

    Attributes
    ----------
    status : str
        ``"stable"``, ``"transient"`` (the window escapes to infinity), ``"collapse"`` (it goes
        to 0) or ``"borderline"`` (a limit equals the threshold: undecided by this test).
    upper_index, upper_threshold : float
        ``lim_{w->oo} a(w)/(w lam(w))`` and ``lim ln(w/d(w))`` (``nan`` with a cap).
    lower_index, lower_threshold : float
        The same limits at ``w -> 0`` (``nan`` with a floor).
    method : str
        ``"symbolic"`` if sympy took every limit, else ``"numeric"`` for those it could not.
    reason : str
        One sentence.
    exactness : Exactness
        ``exact`` when every limit is symbolic, else ``numeric``.
    """

    status: str
    upper_index: float
    upper_threshold: float
    lower_index: float
    lower_threshold: float
    method: str
    reason: str
    exactness: Exactness

    summary: ClassVar[tuple[str, ...]] = ("status", "method")

    @property
    def stable(self) -> bool:
        return self.status == "stable"


def _branch_at(expr: sp.Expr, point: Any, table: dict | None = None) -> sp.Expr:
    """Replace each Piecewise by its branch that holds near ``point`` (``0`` or ``oo``).

    ``table``: the constants of :func:`~symq.window.constants.abstract` in ``expr``.
    """
    probe = sp.Float(1e300) if point == sp.oo else sp.Float(1e-300)

    def pick(*args: Any) -> sp.Expr:
        for value, condition in args:
            if bool(restore(condition, table or {}).subs(W, probe)):
                return value
        return sp.nan

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: pick(*e.args))


def _limit(expr: sp.Expr, point: Any, table: dict | None = None) -> tuple[float, bool]:
    """``(value, symbolic)``: sympy's limit, or a numeric estimate on a geometric sequence.

    ``expr`` holds exact rationals and the sign-known constants of ``table``
    (:func:`~symq.window.constants.abstract`): sympy's limit then never evaluates a number
    in mpmath's global context.
    """
    table = {} if table is None else table
    # the branch first (it may turn log(w/d(w)) into the log of a number), then its constants
    # abstracted too, and only then simplify
    (expr,), table = abstract(_branch_at(expr, point, table), table=table)
    expr = _simplified(expr)
    try:
        with time_budget(LIMIT_BUDGET, "a stability limit"):
            value = sp.limit(expr, W, point)
        if value.is_finite or value in (sp.oo, -sp.oo):
            return float(restore(value, table)), True
    except (DerivationTimeout, NotImplementedError, TypeError, ValueError):
        pass
    expr = restore(expr, table)
    where = "w -> oo" if point == sp.oo else "w -> 0"
    try:
        if expr.has(sp.zoo, sp.nan):
            raise ValueError("not finite")
        func = symq_compile(expr, [W], backend="mpmath")
        points = [10.0 ** e for e in ((12, 15, 18) if point == sp.oo else (-12, -15, -18))]
        values = [float(func(w)) for w in points]
    except (ArithmeticError, TypeError, ValueError, KeyError, NameError) as exc:
        raise NumericalFailure(
            f"stability test inconclusive: neither sympy nor a numeric estimate gives the limit "
            f"of {expr} as {where} ({type(exc).__name__}); no stationary law is claimed") from None
    if not all(math.isfinite(v) or math.isinf(v) for v in values):
        raise NumericalFailure(f"stability test inconclusive: the limit of {expr} as {where} "
                               "evaluates to NaN; no stationary law is claimed")
    if abs(values[-1] - values[-2]) <= 1e-6 * max(1.0, abs(values[-1])):
        return values[-1], False
    growing = abs(values[-1]) > abs(values[-2]) > abs(values[-3])
    return (math.copysign(math.inf, values[-1]) if growing else values[-1]), False


def _simplified(expr: sp.Expr) -> sp.Expr:
    """``sympy.simplify`` within the limit time budget (the expression as it is otherwise)."""
    try:
        with time_budget(LIMIT_BUDGET, "simplifying a stability index"):
            return sp.simplify(expr)
    except DerivationTimeout:
        return expr


def stability(protocol: WindowProtocol) -> WindowStability:
    """Stability of the window process from the drift of ``ln W``.

    ``derivations/awp.md``, section "Stability" (:func:`log_drift`).

    With a cap the top is safe; with a floor the bottom is safe.  Otherwise compare
    ``lim a(w)/(w lam(w))`` with ``lim ln(w/d(w))`` at ``w -> oo`` (escape when larger) and at
    ``w -> 0`` (collapse when smaller).  Equal limits give ``"borderline"``.  With a floor
    ``w_min`` and ``d(w) <= w_min`` everywhere the window after a loss is ``w_min``.

    Raises
    ------
    NumericalFailure
        A limit that neither sympy (within its time budget) nor a numeric estimate can give:
        the test is inconclusive and no verdict is returned.
    """
    after = protocol.after_loss
    if protocol.w_min > 0:
        d_top = protocol.numeric()[2](np.array([1e15]))[0]
        if not d_top > protocol.w_min:   # d(w) <= w_min on the whole domain: W -> w_min
            after = sp.Float(protocol.w_min)
    # constants as sign-known symbols: sympy's simplify and limit then never evaluate a
    # number in mpmath's global context, which a user's thread may be using
    (increase, loss, after), table = abstract(protocol.increase, protocol.loss, after)
    index = increase / (W * loss)
    threshold = sp.log(W / after)
    symbolic = True
    upper = lower = (math.nan, math.nan)
    status, reason = "stable", ""
    if not math.isfinite(protocol.w_max):
        (ui, s1), (ut, s2) = _limit(index, sp.oo, table), _limit(threshold, sp.oo, table)
        symbolic &= s1 and s2
        upper = (ui, ut)
        if math.isclose(ui, ut, rel_tol=1e-12, abs_tol=1e-15):
            status, reason = "borderline", (f"lim a/(w lam) = lim ln(w/d) = {ui:.6g} as w -> oo: "
                                            "the drift of ln W vanishes (null case)")
        elif ui > ut:
            status, reason = "transient", (f"lim a/(w lam) = {ui:.6g} > lim ln(w/d) = {ut:.6g} as "
                                           "w -> oo: ln W drifts to infinity")
    if status == "stable" and protocol.w_min <= 0:
        (li, s1), (lt, s2) = _limit(index, 0, table), _limit(threshold, 0, table)
        symbolic &= s1 and s2
        lower = (li, lt)
        if math.isclose(li, lt, rel_tol=1e-12, abs_tol=1e-15):
            status, reason = "borderline", (f"lim a/(w lam) = lim ln(w/d) = {li:.6g} as w -> 0: "
                                            "null case at the bottom")
        elif li < lt:
            status, reason = "collapse", (f"lim a/(w lam) = {li:.6g} < lim ln(w/d) = {lt:.6g} as "
                                          "w -> 0: ln W drifts to -infinity (a floor w_min helps)")
    if status == "stable":
        reason = "ln W is pulled back from both ends" + (
            " (bounded by the cap)" if math.isfinite(protocol.w_max) else "") + (
            " (floor w_min)" if protocol.w_min > 0 else "")
    return WindowStability(status=status, upper_index=upper[0], upper_threshold=upper[1],
                           lower_index=lower[0], lower_threshold=lower[1],
                           method="symbolic" if symbolic else "numeric", reason=reason,
                           exactness=Exactness.EXACT if symbolic else Exactness.NUMERIC)


#: ``m = l - k + 1`` of the power-law class (nonzero in :func:`power_law_cycle`).
M_EXP = sp.Symbol("m", real=True, nonzero=True)
#: Post-loss window, an ``Exp(1)`` draw and an exponent of a cycle integral.
Y, E_DRAW = sp.symbols("y E", positive=True)
E_POW = sp.Symbol("e", real=True, nonzero=True)

#: Seconds sympy may spend on the symbolic integrals and inversions of a derivation.
DERIVE_BUDGET = 30.0


def log_drift() -> sp.Expr:
    """The generator of the window process applied to ``ln w``.

    ``L g(w) = a(w) g'(w) + lam(w) (g(d(w)) - g(w))`` gives
    ``L ln w = a(w)/w - lam(w) ln(w/d(w))``: its sign at the ends decides stability
    (:func:`stability`), and ``E[L ln W] = 0`` is the log-drift balance
    ``E[a(W)/W] = E[lam(W) ln(W/d(W))]`` of a stationary law.
    """
    a, lam, d = sp.Function("a")(W), sp.Function("lambda")(W), sp.Function("d")(W)
    g = sp.log(W)
    return sp.expand(a * sp.diff(g, W) + lam * (g.subs(W, d) - g))


def power_law_stability() -> dict[str, sp.Expr]:
    """The power-law class ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w``.

    Returns the index ``a/(w lam) = (alpha/gamma) w^(-m)`` with ``m = l - k + 1`` and the
    threshold ``ln(1/beta)`` (``derivations/awp.md``, section "Stability"); sympy's limits at
    ``w -> oo`` for ``m = 1, 0, -1`` give ``0`` (stable), ``alpha/gamma`` (stable iff
    ``alpha < gamma ln(1/beta)``, with a floor) and ``oo`` (transient).
    """
    index = sp.powsimp(sp.simplify(ALPHA * W ** K_EXP / (W * GAMMA * W ** L_EXP)))
    m = sp.Symbol("m", real=True)
    out = {"index": index, "threshold": sp.log(1 / BETA)}
    for label, value in (("m = 1", 1), ("m = 0", 0), ("m = -1", -1)):
        out[label] = sp.limit((ALPHA / GAMMA) * W ** (-m).subs(m, value), W, sp.oo)
    return out


@functools.lru_cache(maxsize=1)
def power_law_cycle() -> dict[str, sp.Expr]:
    """One loss cycle of the power-law class, derived by sympy (exact event sampling).

    With ``a = alpha w^k`` and ``lam = gamma w^(m+k-1)`` (``m = l - k + 1``), from the
    post-loss window ``y`` and a draw ``E ~ Exp(1)``:

    * ``"hazard"``: ``Lambda(w) - Lambda(y) = int_y^w lam/a du`` for ``m != 0``;
    * ``"pre_loss"``: the next pre-loss window, the root of ``Lambda(W_pre) - Lambda(y) = E``:
      ``(y^m + alpha m E/gamma)^(1/m)``;
    * ``"pre_loss_m0"``: the same for ``m = 0``: ``y exp(alpha E/gamma)``;
    * ``"integral"``: ``int_y^w u^(e-1)/alpha du = (w^e - y^e)/(alpha e)``, the cycle's time
      (``e = 1 - k``), area of ``W`` (``e = 2 - k``) and of ``W^2`` (``e = 3 - k``).

    The simulator's kernel (:mod:`symq.window.simulation_kernels`) evaluates these closed
    forms; a test checks it against their compiled form at random points.

    Raises
    ------
    DerivationTimeout
        sympy's integration or inversion takes more than :data:`DERIVE_BUDGET` seconds.
    """
    w = W
    u = sp.Dummy("u", positive=True)
    with time_budget(DERIVE_BUDGET, "the power-law loss cycle"):
        ratio = sp.powsimp(GAMMA * u ** (M_EXP + K_EXP - 1) / (ALPHA * u ** K_EXP))
        hazard = sp.integrate(ratio, (u, Y, w), conds="none")
        roots = sp.solve(sp.Eq(hazard, E_DRAW), w)
        ratio0 = sp.powsimp(GAMMA * u ** (K_EXP - 1) / (ALPHA * u ** K_EXP))
        roots0 = sp.solve(sp.Eq(sp.integrate(ratio0, (u, Y, w)), E_DRAW), w)
        integral = sp.integrate(u ** (E_POW - 1) / ALPHA, (u, Y, w), conds="none")
    if len(roots) != 1 or len(roots0) != 1:  # pragma: no cover - sympy finds the unique root
        raise NumericalFailure("sympy did not find the unique pre-loss window of the cycle")
    return {"hazard": sp.factor(hazard), "pre_loss": roots[0], "pre_loss_m0": roots0[0],
            "integral": sp.factor(integral)}


def power_law_palm() -> dict[str, sp.Expr]:
    """Time averages of the power-law class by Palm inversion over a loss cycle.

    Over a cycle from ``Y`` to ``W_pre`` the window spends ``du/a(u)`` near ``u``, so
    ``int_cycle W^s dt = (W_pre^e - Y^e)/(alpha e)`` with ``e = s - k + 1``; in the stationary
    regime ``Y = beta W_pre`` in law, so ``E_0[int_cycle W^s dt] = I(e)/alpha`` with
    ``I(e) = (1 - beta^e)/e E_0[W_pre^e]``, and the time average is the ratio to the mean cycle
    length: ``E[W^s] = I(s - k + 1)/I(1 - k)`` (``I(0) = ln(1/beta)``, the limit ``e -> 0``).
    """
    s = sp.Symbol("s", real=True)
    u, x = sp.Dummy("u", positive=True), sp.Symbol("W_pre", positive=True)
    palm = sp.Function("E_0")
    cycle = sp.integrate(u ** (E_POW - 1) / ALPHA, (u, BETA * x, x), conds="none")
    integral = sp.Function("I")
    return {"cycle": sp.Eq(sp.Integral(u ** (E_POW - 1) / ALPHA, (u, BETA * x, x)),
                           sp.factor(sp.expand_power_base(cycle, force=True))),
            "I": sp.Eq(integral(E_POW), (1 - BETA ** E_POW) / E_POW * palm(x ** E_POW)),
            "moment": sp.Eq(sp.Function("E")(W ** s),
                            integral(s - K_EXP + 1) / integral(1 - K_EXP))}


def power_law_series() -> dict[str, sp.Expr]:
    """The q-series law of ``U = mu_0 W_pre^m = sum_j q^j E_j`` (``q = beta^m``).

    The pre-loss windows satisfy ``W_pre'^m = (beta W_pre)^m + alpha m E/gamma``
    (:func:`power_law_cycle`), so ``U`` is a sum of independent exponentials of rates
    ``q^-j`` (Dumas, Guillemin, Robert, Adv. Appl. Prob. 34, 2002): a hypoexponential law
    whose survival function is ``sum_j c_j exp(-u q^-j)`` with the coefficients below.
    """
    q, u = sp.Symbol("q", positive=True), sp.Symbol("u", positive=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    n = sp.Symbol("n", integer=True, positive=True)
    c = sp.Function("c")
    mu0 = sp.Symbol("mu_0", positive=True)
    x = sp.Symbol("W_pre", positive=True)
    coefficient = ((-1) ** j * q ** (j * (j + 1) / 2)
                   / (sp.Product(1 - q ** n, (n, 1, j)) * sp.Product(1 - q ** n, (n, 1, sp.oo))))
    return {"recursion": sp.Eq(sp.Symbol("U'"), q * sp.Symbol("U") + E_DRAW),
            "scale": sp.Eq(mu0, GAMMA / (ALPHA * M_EXP)),
            "U": sp.Eq(sp.Symbol("U"), mu0 * x ** M_EXP),
            "survival": sp.Eq(sp.Function("P")(sp.Symbol("U") > u),
                              sp.Sum(c(j) * sp.exp(-u * q ** (-j)), (j, 0, sp.oo))),
            "coefficients": sp.Eq(c(j), coefficient)}


def mimd_floor_law() -> dict[str, sp.Expr]:
    """Multiplicative increase ``a w``, constant loss rate ``lam``, a floor ``w_min``.

    ``Z = ln(W/w_min)`` grows at speed ``a`` and a loss subtracts ``delta = ln(1/beta)``,
    reflected at 0; level crossing ``a f(z) = lam P(z < Z <= z + delta)`` holds for
    ``f(z) = theta e^(-theta z)`` iff ``a theta = lam (1 - beta^theta)`` (sympy integrates the
    right side and divides out ``e^(-theta z)``); then ``E[W^s] = w_min^s theta/(theta - s)``
    for ``s < theta``.
    """
    theta, z, u = sp.symbols("theta z u", positive=True)
    a, lam, w_min = sp.Symbol("a", positive=True), sp.Symbol("lambda", positive=True), \
        sp.Symbol("w_min", positive=True)
    s = sp.Symbol("s", real=True)
    density = theta * sp.exp(-theta * u)
    delta = -sp.log(BETA)
    up = a * density.subs(u, z)
    down = lam * sp.integrate(density, (u, z, z + delta))
    equation = sp.Eq(sp.simplify(up * sp.exp(theta * z)),
                     sp.powsimp(sp.expand(sp.simplify(down * sp.exp(theta * z)))))
    moment = sp.integrate(w_min ** s * sp.exp(s * z) * density.subs(u, z), (z, 0, sp.oo),
                          conds="none")
    return {"level_crossing": sp.Eq(up, down), "theta": equation,
            "moment": sp.Eq(sp.Function("E")(W ** s), sp.factor(sp.simplify(moment)))}
