"""Symbolic side of adaptive window protocols: Kolmogorov equation, stability, identities.

Altman, Avrachenkov, Kherani, Prabhu (IEEE INFOCOM 2005), reference note B3 and B5:

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

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from symq.core.budget import time_budget
from symq.core.derivation import Derivation
from symq.core.errors import DerivationTimeout, NumericalFailure

from .protocol import W, WindowProtocol

__all__ = ["kolmogorov_equation", "delay_equation", "drift_identity", "Stability", "stability",
           "power_law_stability", "derivation"]

F = sp.Function("f")
U = sp.Symbol("u", positive=True)

#: Seconds sympy may spend on one limit before the numeric fallback.
LIMIT_BUDGET = 5.0


def _inverse_after_loss(protocol: WindowProtocol) -> sp.Expr | None:
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


def kolmogorov_equation(protocol: WindowProtocol) -> sp.Eq:
    """Stationary level-crossing equation (note B3): up-crossings of ``w`` = down-crossings.

    ``a(w) f(w) = int_w^{d^{-1}(w)} lam(u) f(u) du``; if sympy cannot invert ``d`` the upper
    limit is written ``d^{-1}(w)``.
    """
    upper = _inverse_after_loss(protocol)
    if upper is None:
        upper = sp.Function("d^{-1}")(W)
    return sp.Eq(protocol.increase * F(W),
                 sp.Integral(protocol.loss.subs(W, U) * F(U), (U, W, upper)))


def delay_equation(protocol: WindowProtocol) -> sp.Eq:
    """The differentiated form ``(a f)' = -lam f + lam(d^{-1}) f(d^{-1}) (d^{-1})'`` (note B3)."""
    upper = _inverse_after_loss(protocol)
    if upper is None:
        upper = sp.Function("d^{-1}")(W)
    rhs = (-protocol.loss * F(W)
           + protocol.loss.subs(W, upper) * F(upper) * sp.diff(upper, W))
    return sp.Eq(sp.Derivative(protocol.increase * F(W), W), rhs)


def drift_identity(protocol: WindowProtocol) -> sp.Eq:
    """``E[a(W)] = E[lam(W) b(W) W]``: mean drift balance (note B3), for any stationary law."""
    expect = sp.Function("E")
    return sp.Eq(expect(protocol.increase), expect(protocol.loss * (W - protocol.after_loss)))


@dataclass(frozen=True)
class Stability:
    """Stability verdict of a protocol (from :func:`stability`).

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
    """

    status: str
    upper_index: float
    upper_threshold: float
    lower_index: float
    lower_threshold: float
    method: str
    reason: str

    @property
    def stable(self) -> bool:
        return self.status == "stable"


def _branch_at(expr: sp.Expr, point: Any) -> sp.Expr:
    """Replace each Piecewise by its branch that holds near ``point`` (``0`` or ``oo``)."""
    probe = sp.Float(1e300) if point == sp.oo else sp.Float(1e-300)

    def pick(*args: Any) -> sp.Expr:
        for value, condition in args:
            if bool(condition.subs(W, probe)):
                return value
        return sp.nan

    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: pick(*e.args))


def _limit(expr: sp.Expr, point: Any) -> tuple[float, bool]:
    """``(value, symbolic)``: sympy's limit, or a numeric estimate on a geometric sequence."""
    expr = _branch_at(expr, point)
    try:
        with time_budget(LIMIT_BUDGET, "a stability limit"):
            value = sp.limit(expr, W, point)
        if value.is_finite or value in (sp.oo, -sp.oo):
            return float(value), True
    except (DerivationTimeout, NotImplementedError, TypeError, ValueError):
        pass
    where = "w -> oo" if point == sp.oo else "w -> 0"
    try:
        if expr.has(sp.zoo, sp.nan):
            raise ValueError("not finite")
        func = sp.lambdify(W, expr, "mpmath")
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


def stability(protocol: WindowProtocol) -> Stability:
    """Stability of the window process from the drift of ``ln W`` (note B5).

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
    index = _simplified(protocol.increase / (W * protocol.loss))
    threshold = _simplified(sp.log(W / after))
    symbolic = True
    upper = lower = (math.nan, math.nan)
    status, reason = "stable", ""
    if not math.isfinite(protocol.w_max):
        (ui, s1), (ut, s2) = _limit(index, sp.oo), _limit(threshold, sp.oo)
        symbolic &= s1 and s2
        upper = (ui, ut)
        if math.isclose(ui, ut, rel_tol=1e-12, abs_tol=1e-15):
            status, reason = "borderline", (f"lim a/(w lam) = lim ln(w/d) = {ui:.6g} as w -> oo: "
                                            "the drift of ln W vanishes (null case)")
        elif ui > ut:
            status, reason = "transient", (f"lim a/(w lam) = {ui:.6g} > lim ln(w/d) = {ut:.6g} as "
                                           "w -> oo: ln W drifts to infinity")
    if status == "stable" and protocol.w_min <= 0:
        (li, s1), (lt, s2) = _limit(index, 0), _limit(threshold, 0)
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
    return Stability(status=status, upper_index=upper[0], upper_threshold=upper[1],
                     lower_index=lower[0], lower_threshold=lower[1],
                     method="symbolic" if symbolic else "numeric", reason=reason)


ALPHA, GAMMA, BETA = sp.symbols("alpha gamma beta", positive=True)
K_EXP, L_EXP = sp.symbols("k l", real=True)


def power_law_stability() -> dict[str, sp.Expr]:
    """The power-law class ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w`` (note B5).

    Returns the index ``a/(w lam) = (alpha/gamma) w^(-m)`` with ``m = l - k + 1`` and the
    threshold ``ln(1/beta)``; sympy's limits at ``w -> oo`` for ``m = 1, 0, -1`` give
    ``0`` (stable), ``alpha/gamma`` (stable iff ``alpha < gamma ln(1/beta)``, with a floor) and
    ``oo`` (transient).
    """
    index = sp.powsimp(sp.simplify(ALPHA * W ** K_EXP / (W * GAMMA * W ** L_EXP)))
    m = sp.Symbol("m", real=True)
    out = {"index": index, "threshold": sp.log(1 / BETA)}
    for label, value in (("m = 1", 1), ("m = 0", 0), ("m = -1", -1)):
        out[label] = sp.limit((ALPHA / GAMMA) * W ** (-m).subs(m, value), W, sp.oo)
    return out


def derivation() -> Derivation:
    """The derivation printed by ``symq derive awp``."""
    der = Derivation(
        title="Adaptive window protocols under window-dependent losses",
        source="E. Altman, K. Avrachenkov, A. Kherani, B. Prabhu, IEEE INFOCOM 2005",
        summary="dW/dt = a(W) between losses; losses at rate lam(W); a loss takes W to "
                "d(W) = (1 - b(W)) W; time in round-trip times.",
    )
    a, lam = sp.Function("a"), sp.Function("lambda")
    generic = sp.Eq(a(W) * F(W), sp.Integral(lam(U) * F(U), (U, W, sp.Function("d^{-1}")(W))))
    der.add("Stationary Kolmogorov equation (level crossing)", generic,
            "The rate of up-crossings of level w (the drift a(w) times the density) equals the "
            "rate of losses from windows u > w that land at or below w.")
    from .protocol import newreno

    tcp = newreno(sp.Rational(1, 10 ** 4))
    der.add("NewReno (a = 1, lam = p w, d = w/2), p = 1e-4", kolmogorov_equation(tcp),
            "The upper limit w/beta = 2w comes from sympy's inversion of d.")
    der.add("Delay-differential form", delay_equation(tcp), "Differentiate in w.")
    der.add("Mean drift balance", sp.Eq(sp.Function("E")(a(W)),
                                        sp.Function("E")(lam(W) * sp.Function("b")(W) * W)),
            "Taking expectations of the generator applied to g(w) = w.")
    law = power_law_stability()
    der.add("Stability index of the power-law class", sp.Eq(sp.Symbol("a/(w lambda)"),
                                                             law["index"]),
            "a = alpha w^k, lam = gamma w^l, d = beta w; the window is pulled back at infinity "
            "iff this limit is below ln(1/beta) = " + sp.sstr(law["threshold"]) + ".")
    der.add("Limits for m = l - k + 1 = 1, 0, -1",
            sp.Tuple(law["m = 1"], law["m = 0"], law["m = -1"]),
            "m > 0: stable (NewReno, Scalable with per-packet losses); m = 0: stable iff "
            "alpha < gamma ln(1/beta) and a floor exists (Scalable with time-based losses); "
            "m < 0: transient.")
    return der
