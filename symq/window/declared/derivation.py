"""What can be derived symbolically from a declared window protocol (``symq derive FILE``).

:func:`protocol_derivation` applies the window layer's derivation machinery
(:mod:`symq.window.symbolic`) to the profiles of one protocol, whose coefficients may still be
symbolic parameters (a model a claims file declares, :mod:`symq.window.declared`):

* the stationary Kolmogorov (level-crossing) equation of Altman, Avrachenkov, Kherani, Prabhu
  (IEEE INFOCOM 2005, Section II), its delay-differential form, and the mean and log drift
  balances ``E[a(W)] = E[lam(W) (W - d(W))]``, ``E[a(W)/W] = E[lam(W) ln(W/d(W))]``;
* the stability limits of ``a/(w lam)`` and ``ln(w/d)`` at the unbounded ends
  (``derivations/awp.md``, section "Stability");
* for the power-law class ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w``: its
  parameters in the declared ones, the exact next pre-loss window, the moment identities the
  drift balances give in closed form (``E[W^2] = 2/p`` for NewReno, ``E[W] = alpha/(gamma
  ln(1/beta))`` for multiplicative increase with per-packet losses), and, for ``m > 0``
  without bounds, the mean window by Palm inversion in terms of the q-series moments of
  ``U = sum_j q^j E_j`` (Dumas, Guillemin, Robert, Adv. Appl. Prob. 34, 2002);
* for multiplicative increase with a constant loss rate and a floor: the exponent ``theta``
  of the Pareto law.

Every symbolic step runs within a time budget; a step sympy cannot finish is reported as such.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import sympy as sp

from symq.core.budget import time_budget
from symq.core.derivation import Derivation
from symq.core.errors import DerivationTimeout
from symq.core.printing import latex

from ..protocol import ALPHA, BETA, GAMMA, K_EXP, W
from ..symbolic import (
    E_DRAW,
    M_EXP,
    Profiles,
    Y,
    delay_equation,
    kolmogorov_equation,
    mimd_floor_law,
    power_law_cycle,
    power_law_series,
)

__all__ = ["protocol_derivation", "power_form"]

#: Seconds one symbolic step may take.
STEP_BUDGET = 10.0

_E = sp.Function("E")
#: The stability index a/(w lambda) (printed as a fraction).
_INDEX = sp.Symbol("a") / (W * sp.Symbol("lambda"))
_A, _LAM, _D, _B = (sp.Function(n) for n in ("a", "lambda", "d", "b"))


def _within(what: str, step: Callable[[], Any]) -> Any:
    """``step()``, or None when sympy cannot do it within :data:`STEP_BUDGET` seconds."""
    try:
        with time_budget(STEP_BUDGET, what):
            return step()
    except (DerivationTimeout, NotImplementedError, TypeError, ValueError):
        return None


def power_form(expr: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """``(c, e)`` with ``expr = c w^e`` and ``c``, ``e`` free of ``w`` (symbolic), else None."""
    if expr.has(sp.Piecewise, sp.Min, sp.Max):
        return None

    def split() -> tuple[sp.Expr, sp.Expr] | None:
        exponent = sp.simplify(W * sp.diff(expr, W) / expr)
        if exponent.has(W):
            return None
        if exponent.is_Float:   # 1.0 -> 1, 1.2 -> 6/5: exact exponents in the identities
            exponent = sp.nsimplify(exponent, rational=True, tolerance=1e-12)
        coefficient = sp.simplify(sp.powsimp(expr * W ** (-exponent)))
        if coefficient.has(W) or coefficient.is_zero:
            return None
        return coefficient, exponent

    return _within("the power-law form of a profile", split)


def _expect(expr: sp.Expr) -> sp.Expr:
    """``E[expr]`` with the factors free of ``w`` taken out (a constant is its own mean)."""
    constant, rest = sp.factor_terms(sp.expand(expr)).as_independent(W, as_Add=False)
    return constant if rest == 1 else constant * _E(rest)


def _moment(s: sp.Expr) -> sp.Expr:
    """``E[W^s]`` as a symbol of the record (1 for ``s = 0``)."""
    return sp.Integer(1) if s == 0 else _E(W ** s)


def _closed_moment(equation: sp.Eq) -> sp.Eq | None:
    """The one unknown moment of ``equation`` in closed form, if only one appears."""
    unknown = sorted(equation.atoms(sp.core.function.AppliedUndef), key=str)
    if len(unknown) != 1:
        return None
    roots = _within("a moment identity", lambda: sp.solve(equation, unknown[0]))
    return sp.Eq(unknown[0], sp.simplify(roots[0])) if roots and len(roots) == 1 else None


def _model(der: Derivation, tcp: Profiles, w_min: Any, w_max: Any) -> None:
    floor, cap = w_min != 0, w_max != sp.oo
    der.section("Declared protocol and its stationary Kolmogorov equation")
    bounds = (f"Floor $w_{{min}} = {latex(w_min)}$" if floor else "No floor") + ", " + (
        f"cap $w_{{max}} = {latex(w_max)}$." if cap else "no cap.")
    der.add("Profiles", [sp.Eq(_A(W), tcp.increase), sp.Eq(_LAM(W), tcp.loss),
                         sp.Eq(_D(W), tcp.after_loss),
                         sp.Eq(_B(W), sp.simplify(1 - tcp.after_loss / W))],
            "Increase per round-trip time, loss rate per round-trip time, window after a loss "
            f"and the fraction lost, $b = 1 - d/w$. {bounds}")
    der.add("Stationary Kolmogorov equation (level crossing)", kolmogorov_equation(tcp),
            "Up-crossings of level $w$ (drift times density) equal the losses from windows "
            "$u > w$ that land at or below $w$ (Altman et al., Section II); with a floor it holds "
            "for $w > w_{min}$, with a cap the atom at $w_{max}$ joins the integral.")
    der.add("Delay-differential form", delay_equation(tcp), "Differentiate in $w$.")
    after = sp.Max(tcp.after_loss, w_min) if floor else tcp.after_loss
    balances = _within("the drift balances", lambda: [
        sp.Eq(_expect(tcp.increase), _expect(tcp.loss * (W - after))),
        sp.Eq(_expect(tcp.increase / W), _expect(tcp.loss * sp.log(W / after)))])
    der.add("Drift balances", balances or [
        sp.Eq(_E(tcp.increase), _E(tcp.loss * (W - after))),
        sp.Eq(_E(tcp.increase / W), _E(tcp.loss * sp.log(W / after)))],
            r"The generator $L g = a g' + \lambda (g(d) - g)$ has mean 0 under the stationary "
            r"law: $g(w) = w$ gives the mean drift balance, $g(w) = \ln w$ the log drift "
            "balance.")


def _stability(der: Derivation, tcp: Profiles, w_min: Any, w_max: Any) -> None:
    der.section("Stability: the drift of ln W")
    index = _within("the stability index", lambda: sp.simplify(tcp.increase / (W * tcp.loss)))
    threshold = _within("the stability threshold", lambda: sp.simplify(sp.log(W / tcp.after_loss)))
    if index is None or threshold is None:
        der.add("Stability index", sp.Eq(_INDEX, tcp.increase / (W * tcp.loss), evaluate=False),
                "sympy could not simplify the index within the time budget.")
        return
    ends = [end for end, bounded in ((sp.oo, w_max != sp.oo), (0, w_min != 0)) if not bounded]
    limits = []
    for end in ends:
        for expr in (index, threshold):
            value = _within("a stability limit", lambda e=expr, x=end: sp.limit(e, W, x))
            limits.append(sp.Eq(sp.Limit(expr, W, end), value if value is not None
                                else sp.Symbol("undecided")))
    prose = (r"Without a cap the window escapes when $\lim a/(w \lambda) > \lim \ln(w/d)$ as "
             r"$w \to \infty$; without a floor it collapses when "
             r"$\lim a/(w \lambda) < \lim \ln(w/d)$ as $w \to 0$; the solver decides at each "
             "point of a claim's region (stable: false otherwise).")
    if not ends:
        prose = r"Floor and cap bound $\ln W$: no limit to take (stable for every parameter)."
    der.add("Stability index and threshold",
            [sp.Eq(_INDEX, index, evaluate=False),
             sp.Eq(sp.log(W / sp.Symbol("d")), threshold, evaluate=False),
             *limits], prose)


def _power_law(der: Derivation, tcp: Profiles, w_min: Any, w_max: Any) -> None:
    a, lam = power_form(tcp.increase), power_form(tcp.loss)
    beta = _within("the decrease factor", lambda: sp.simplify(tcp.after_loss / W))
    if a is None or lam is None or beta is None or beta.has(W):
        return
    (alpha, k), (gamma, l_exp) = a, lam
    m = sp.simplify(l_exp - k + 1)
    der.section("Power-law class: a = α w^k, λ = γ w^l, d = β w")
    names = sp.symbols("alpha k gamma l beta m")
    der.add("Power-law parameters",
            [sp.Eq(n, v) for n, v in zip(names, (alpha, k, gamma, l_exp, beta, m))],
            "The declared profiles in the power-law class; $m = l - k + 1$.")
    cycle = power_law_cycle()
    values = {ALPHA: alpha, GAMMA: gamma, M_EXP: m, K_EXP: k}
    root = cycle["pre_loss_m0" if m.is_zero else "pre_loss"].subs(values)
    der.add("Next pre-loss window", sp.Eq(sp.Symbol("W_pre"), root),
            f"From the post-loss window ${latex(Y)}$ with an Exp(1) draw ${latex(E_DRAW)}$: the "
            r"root of $\Lambda(W_{pre}) - \Lambda(y) = E$ (exact event sampling of the "
            "simulator).")
    if w_min != 0 or w_max != sp.oo:
        return
    identities = [sp.Eq(alpha * _moment(k), gamma * (1 - beta) * _moment(l_exp + 1)),
                  sp.Eq(alpha * _moment(k - 1), gamma * sp.log(1 / beta) * _moment(l_exp))]
    closed = [c for c in map(_closed_moment, identities) if c is not None]
    der.add("Moment identities", [*identities, *closed],
            "The drift balances of the power-law class without bounds: the mean drift "
            r"$\alpha E[W^k] = \gamma (1 - \beta) E[W^{l+1}]$ and the log drift "
            r"$\alpha E[W^{k-1}] = \gamma \ln(1/\beta) E[W^l]$; a moment of order 0 is 1, "
            "which leaves a closed form where one side has it.")
    if m.is_positive:
        _palm_mean(der, alpha, k, gamma, beta, m)
    elif m.is_positive is False:
        der.add("No stationary law without bounds", sp.Le(sp.Symbol("m"), 0),
                r"$m \le 0$: the window escapes ($m < 0$) or needs a floor ($m = 0$; see "
                "Stability).")


def _palm_mean(der: Derivation, alpha: sp.Expr, k: sp.Expr, gamma: sp.Expr, beta: sp.Expr,
               m: sp.Expr) -> None:
    """``E[W]`` by Palm inversion, in the q-series moments ``E[U^x]``."""
    q, mu0 = beta ** m, gamma / (alpha * m)
    moment_u = sp.Function("E_U")

    def palm(e: sp.Expr) -> sp.Expr:   # E_0[int over a cycle of W^(e+k-1) dt] times alpha
        if e == 0:
            return sp.log(1 / beta)
        x = sp.simplify(e / m)
        eu = sp.Integer(1) if x == 0 else (1 / (1 - q) if x == 1 else moment_u(x))
        return (1 - beta ** e) / e * mu0 ** (-x) * eu

    mean = _within("the mean window", lambda: sp.simplify(palm(2 - k) / palm(1 - k)))
    if mean is None:
        return
    series = power_law_series()
    x = sp.Symbol("x", positive=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    c = sp.Function("c")
    der.add("Mean window by Palm inversion",
            [sp.Eq(sp.Symbol("q"), q), sp.Eq(sp.Symbol("mu_0"), mu0), sp.Eq(_E(W), mean),
             sp.Eq(moment_u(x), sp.gamma(1 + x) * sp.Sum(c(j) * sp.Symbol("q") ** (j * x),
                                                         (j, 0, sp.oo))),
             series["coefficients"]],
            r"$E[W] = I(2-k)/I(1-k)$ with $I(e) = (1 - \beta^e)/e \, E_0[W_{pre}^e]$ "
            r"($I(0) = \ln(1/\beta)$) and $W_{pre} = (U/\mu_0)^{1/m}$, where "
            r"$U = \sum_j q^j E_j$ ($E_U(1) = 1/(1-q)$); $E_U(x) = E[U^x]$ integrates the "
            "hypoexponential survival function of $U$.  symq evaluates this q-series closed form "
            "(power-law class, $m > 0$, no bounds).")


def _mimd_floor(der: Derivation, tcp: Profiles, w_min: Any) -> None:
    a, lam = power_form(tcp.increase), power_form(tcp.loss)
    beta = _within("the decrease factor", lambda: sp.simplify(tcp.after_loss / W))
    if w_min == 0 or a is None or lam is None or beta is None or beta.has(W):
        return
    if a[1] != 1 or lam[1] != 0:
        return
    law = mimd_floor_law()
    values = {sp.Symbol("a", positive=True): a[0], sp.Symbol("lambda", positive=True): lam[0],
              BETA: beta, sp.Symbol("w_min", positive=True): w_min}
    der.section("Multiplicative increase, constant losses and a floor")
    der.add("Exponent and moments of the Pareto law",
            [law["theta"].subs(values), law["moment"].subs(values)],
            r"$Z = \ln(W/w_{min})$ is exponential with rate $\theta$, the positive root of the "
            r"first equation (it exists iff $\lambda \ln(1/\beta) > a$); the moments are finite "
            r"for $s < \theta$.")


def protocol_derivation(protocol: Profiles, name: str, w_min: Any = 0.0, w_max: Any = math.inf,
                        source: str = "") -> Derivation:
    """The derivation of one (declared) window protocol.

    Parameters
    ----------
    protocol : Profiles
        ``increase``, ``loss``, ``after_loss`` as sympy expressions in ``w`` and parameters.
    name : str
        The model's name (the derivation's title).
    w_min, w_max : float or sympy.Expr
        Floor (0: none) and cap (``inf``: none), numbers or expressions in the parameters.
    source : str
        Where the model comes from.

    Examples
    --------
    >>> from symq.window.protocol import newreno
    >>> der = protocol_derivation(newreno(1e-2), "NewReno")
    >>> der["Moment identities"].formulas()[-1]
    Eq(E(w**2), 200.0)
    """
    def bound(value: Any) -> sp.Expr:
        if isinstance(value, sp.Expr):
            return value
        return sp.oo if math.isinf(float(value)) else sp.Float(value) if value else sp.Integer(0)

    lo, hi = bound(w_min), bound(w_max)
    der = Derivation(title=f"Window protocol {name}", source=source,
                     summary=r"$dW/dt = a(W)$ between losses; losses at rate $\lambda(W)$; a "
                             r"loss takes $W$ to $d(W)$ (to $\max(d(W), w_{min})$ with a floor); "
                             "time in round-trip times.")
    _model(der, protocol, lo, hi)
    _stability(der, protocol, lo, hi)
    _power_law(der, protocol, lo, hi)
    _mimd_floor(der, protocol, lo)
    return der
