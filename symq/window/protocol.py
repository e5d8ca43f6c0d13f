"""Adaptive window protocols declared symbolically: increase, loss rate, decrease, bounds.

Altman, Avrachenkov, Kherani and Prabhu (IEEE INFOCOM 2005, Section II): the
window ``W(t)`` grows at ``dW/dt = a(W)`` per round-trip time, losses form a Poisson process
of rate ``lam(W)`` per round-trip time, and a loss takes the window to ``d(W) = (1 - b(W)) W``.
Optional bounds: a floor ``w_min`` (after a loss ``W = max(d(W), w_min)``) and a cap ``w_max``
(growth stops there).  Time is measured in round-trip times; the throughput is ``E[W]/rtt``.

Presets: :func:`newreno`, :func:`scalable`, :func:`highspeed` (RFC 3649, decrease factor kept
at or above its High_Decrease 0.1) and the one-parameter family :func:`highspeed_family`.

Examples
--------
>>> tcp = newreno(1e-4)
>>> tcp.increase, tcp.loss, tcp.after_loss
(1, 0.0001*w, 0.5*w)
>>> tcp.power_law()
PowerLawParameters(alpha=1.0, k=0.0, gamma=0.0001, l=1.0, beta=0.5)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from symq.core.compiler import compile as symq_compile
from symq.core.display import MarkdownDisplay
from symq.core.errors import InvalidParameter
from symq.core.parameters import parse_formula

from .constants import abstract, restore

__all__ = ["W", "WindowProtocol", "PowerLawParameters", "newreno", "scalable", "highspeed",
           "highspeed_family", "general", "PRESETS"]

#: The window variable of every profile.
W = sp.Symbol("w", positive=True)

#: Windows at which profiles are checked numerically (positivity, decrease, monotonicity),
#: restricted to the window domain ``[w_min, w_max]`` (whose ends are added).
_CHECK_GRID = np.geomspace(1e-6, 1e15, 421)

#: Largest floor or cap accepted (packets): beyond it the numerical solver's grid in ``ln w``
#: cannot resolve the law (the relative width of the law near a floor ``w_min`` falls below the
#: double-precision resolution) and its own drift check fails.
MAX_WINDOW = 1e15

#: Default names of the fields in messages; a caller with other names passes ``labels``
#: (the ``awp`` model shows ``a`` for ``increase``, as typed on the command line).
_FIELDS = ("increase", "loss", "after_loss", "w_min", "w_max", "rtt")


#: Symbols of the power-law class: coefficients and exponents of ``a``, ``lam``, ``d``.
ALPHA, GAMMA, BETA = sp.symbols("alpha gamma beta", positive=True)
K_EXP, L_EXP = sp.symbols("k l", real=True)

#: The power-law class as declared: increase ``alpha w^k``, loss rate ``gamma w^l`` and window
#: after a loss ``beta w``, functions of ``(w, alpha, k, gamma, l, beta)``.
POWER_LAW_PROFILES = (ALPHA * W ** K_EXP, GAMMA * W ** L_EXP, BETA * W)
POWER_LAW_ARGS = (W, ALPHA, K_EXP, GAMMA, L_EXP, BETA)


@dataclass(frozen=True)
class PowerLawParameters(MarkdownDisplay):
    """``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w``; ``m = l-k+1``."""

    alpha: float
    k: float
    gamma: float
    l: float
    beta: float

    def to_markdown(self) -> str:
        """The parameters as Markdown, with the power-law profiles in LaTeX."""
        from symq.core.display import markdown

        return markdown("**PowerLawParameters** of the power-law class", [
            ("alpha", self.alpha), ("k", self.k), ("gamma", self.gamma), ("l", self.l),
            ("beta", self.beta), ("m = l - k + 1", self.m)], [("", eq) for eq in profile_equations(
                sp.Symbol("alpha") * W ** sp.Symbol("k"), sp.Symbol("gamma") * W ** sp.Symbol("l"),
                sp.Symbol("beta") * W)])

    def numeric(self) -> tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[Any], Any]]:
        """Vectorised ``(a, lam, d)``: :data:`POWER_LAW_PROFILES` compiled once
        (:func:`symq.core.compile`) and evaluated at these parameters.

        Examples
        --------
        >>> a, lam, d = PowerLawParameters(1.0, 0.0, 1e-2, 1.0, 0.5).numeric()
        >>> float(a(4.0)), float(lam(4.0)), float(d(4.0))
        (1.0, 0.04, 2.0)
        """
        values = (self.alpha, self.k, self.gamma, self.l, self.beta)
        funcs = []
        for expr in POWER_LAW_PROFILES:
            compiled = symq_compile(expr, POWER_LAW_ARGS)

            def call(w: Any, _f: Any = compiled) -> Any:
                return _f(np.asarray(w, dtype=float), *values)

            funcs.append(call)
        return tuple(funcs)  # type: ignore[return-value]

    @property
    def m(self) -> float:
        """``m = l - k + 1``: stable without bounds iff ``m > 0``.

        ``derivations/awp.md``, section "Stability".
        """
        return self.l - self.k + 1.0


def _as_expr(name: str, value: Any, symbols: Mapping[str, sp.Symbol]) -> sp.Expr:
    if isinstance(value, str):
        return parse_formula(name, value, ("w", *[s for s in symbols if s != "w"]))
    if isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, bool):
        return sp.Float(float(value)) if not float(value).is_integer() else sp.Integer(int(value))
    if isinstance(value, sp.Expr):
        return value
    raise InvalidParameter(name, value, "a sympy expression or a formula in w")


def _power(expr: sp.Expr) -> tuple[float, float] | None:
    """``(c, e)`` if ``expr == c w^e`` with constants ``c > 0`` and real ``e``, else None."""
    if expr.has(sp.Piecewise, sp.Min, sp.Max):
        return None
    # numeric constants as sign-known symbols: simplify evaluates nothing in mpmath's global
    # context (symq.window.constants)
    (exact,), table = abstract(expr)
    exponent = sp.simplify(W * sp.diff(exact, W) / exact)
    if exponent.free_symbols - set(table):
        return None
    expr, exponent = restore(exact, table), restore(exponent, table)
    try:
        c, e = float(expr.subs(W, 1)), float(exponent)
        samples = [(float(expr.subs(W, w)), c * w ** e) for w in (0.37, 5.3, 1234.5)]
    except TypeError:
        return None
    if not (math.isfinite(c) and math.isfinite(e) and c > 0):
        return None
    if any(not math.isclose(x, y, rel_tol=1e-12) for x, y in samples):
        return None
    return c, e


@dataclass(frozen=True)
class WindowProtocol(MarkdownDisplay):
    """An adaptive window protocol ``(a(w), lam(w), d(w), w_min, w_max)``.

    Parameters
    ----------
    increase : sympy expression or str
        ``a(w)``: window increase per round-trip time, ``> 0`` for ``w > 0``.
    loss : sympy expression or str
        ``lam(w)``: loss rate per round-trip time, ``> 0`` for ``w > 0`` (``p w`` for a
        per-packet loss probability ``p``).
    after_loss : sympy expression or str
        ``d(w) = (1 - b(w)) w``: the window right after a loss, ``0 < d(w) < w``, nondecreasing.
    parameters : mapping, optional
        Values of the other symbols used in the expressions (name or symbol -> number); any
        symbol other than ``w`` must be given here.
    w_min, w_max : float
        Floor after a loss (``0``: none) and cap (``inf``: none), ``0 <= w_min < w_max``.
    rtt : float
        Round-trip time, ``> 0`` (only the throughput ``E[W]/rtt`` uses it).
    name : str
        Display name.
    labels : mapping, optional
        Names of the fields shown in error messages (field -> name), e.g.
        ``{"increase": "a"}`` for a caller whose users type ``a=``.

    Raises
    ------
    InvalidParameter
        Unknown symbols, an increase that is not positive and finite, a loss rate that is
        negative, not finite or zero everywhere, a window after a loss outside ``[0, w)``
        (``(0, w)`` without a floor) or not monotone, or bad bounds (``0 <= w_min < w_max``,
        both at most :data:`MAX_WINDOW`).  The profiles are checked at 421 windows from 1e-6
        to 1e15 inside ``[w_min, w_max]`` and at the bounds themselves.
    """

    increase: sp.Expr
    loss: sp.Expr
    after_loss: sp.Expr
    parameters: Mapping[Any, float] = field(default_factory=dict)
    w_min: float = 0.0
    w_max: float = math.inf
    rtt: float = 1.0
    name: str = "protocol"
    labels: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def _label(self, name: str) -> str:
        """The name of a field as the caller's user knows it."""
        return dict(self.labels).get(name, name)

    def _shown(self, name: str) -> Any:
        """The value of a profile as given (text as typed, an expression as a string)."""
        value = self._given.get(name, getattr(self, name))
        return value if isinstance(value, (str, numbers.Real)) else str(value)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_given", {n: getattr(self, n) for n in _FIELDS[:3]})
        values = {}
        for key, value in dict(self.parameters).items():
            name = str(key)
            if name == "w":
                raise InvalidParameter("parameters", key, "symbols other than the window w")
            if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating)) \
                    or not math.isfinite(float(value)):
                raise InvalidParameter(name, value, "a finite real number")
            values[name] = float(value)
        symbols = {"w": W, **{n: sp.Symbol(n) for n in values}}
        exprs = {}
        for label in ("increase", "loss", "after_loss"):
            expr = _as_expr(self._label(label), getattr(self, label), symbols)
            subs = {s: values[str(s)] for s in expr.free_symbols if str(s) in values}
            expr = expr.subs(subs)
            expr = expr.subs({s: W for s in expr.free_symbols if str(s) == "w" and s != W})
            unknown = sorted(str(s) for s in expr.free_symbols if s != W)
            if unknown:
                raise InvalidParameter(self._label(label), self._shown(label),
                                       "an expression in w and the declared parameters "
                                       f"({', '.join(values) or 'none'})",
                                       "undeclared symbol " + ", ".join(unknown))
            exprs[label] = expr
        object.__setattr__(self, "increase", exprs["increase"])
        object.__setattr__(self, "loss", exprs["loss"])
        object.__setattr__(self, "after_loss", exprs["after_loss"])
        object.__setattr__(self, "parameters", values)
        for label in ("w_min", "w_max", "rtt"):
            value = getattr(self, label)
            if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating)) \
                    or math.isnan(float(value)):
                raise InvalidParameter(self._label(label), value, "a real number")
            object.__setattr__(self, label, float(value))
        if not (0.0 <= self.w_min <= MAX_WINDOW):
            raise InvalidParameter(self._label("w_min"), self.w_min,
                                   f"a window floor in [0, {MAX_WINDOW:g}] packets")
        if not (0.0 < self.w_max and (self.w_max <= MAX_WINDOW or self.w_max == math.inf)):
            raise InvalidParameter(self._label("w_max"), self.w_max,
                                   f"a window cap in (0, {MAX_WINDOW:g}] packets, or inf (none)")
        if not self.w_min < self.w_max:
            raise InvalidParameter(self._label("w_min"), self.w_min,
                                   f"a number in [0, {self._label('w_max')}={self.w_max:g})",
                                   "the floor must lie below the cap")
        if not (math.isfinite(self.rtt) and self.rtt > 0):
            raise InvalidParameter(self._label("rtt"), self.rtt, "a finite real number > 0")
        self._check_profiles()

    # ------------------------------------------------------------------ checks
    def _check_profiles(self) -> None:
        """Sample-check the profiles on the window domain ``[w_min, w_max]`` (see Raises)."""
        a, lam, d = self.numeric()
        lo = self.w_min if self.w_min > 0 else float(_CHECK_GRID[0])
        inside = _CHECK_GRID[(_CHECK_GRID > lo) & (_CHECK_GRID < self.w_max)]
        ends = [lo] + ([self.w_max] if math.isfinite(self.w_max) else [])
        grid = np.unique(np.concatenate([inside, ends]))
        if math.isfinite(self.w_max):
            domain = f"for every window w in [{self.w_min:g}, {self.w_max:g}]"
        else:
            domain = (f"for every window w >= {self.w_min:g}" if self.w_min > 0
                      else "for every window w > 0")
        with np.errstate(all="ignore"):
            av, lv, dv = a(grid), lam(grid), d(grid)
        for label, vals, what, bad in (
                ("increase", av, "a(w) > 0", ~(np.isfinite(av) & (av > 0))),
                ("loss", lv, "lam(w) >= 0", ~(np.isfinite(lv) & (lv >= 0)))):
            if np.any(bad):
                k = int(np.argmax(bad))
                raise InvalidParameter(self._label(label), self._shown(label),
                                       f"a finite rate with {what} {domain}",
                                       f"at w = {float(grid[k]):.3g} it is {float(vals[k]):.3g}")
        if not np.any(lv > 0):
            raise InvalidParameter(self._label("loss"), self._shown("loss"),
                                   "a loss rate lam(w) >= 0 that is positive for some window "
                                   f"w in [{self.w_min:g}, {self.w_max:g}]",
                                   "without losses the window grows without bound")
        floor = self.w_min > 0
        bad = ~(np.isfinite(dv) & ((dv >= 0) if floor else (dv > 0)) & (dv < grid))
        if np.any(bad):
            k = int(np.argmax(bad))
            raise InvalidParameter(self._label("after_loss"), self._shown("after_loss"),
                                   f"a window {'0 <=' if floor else '0 <'} d(w) < w {domain}: "
                                   "a loss must reduce the window"
                                   + ("" if floor else " (and keep it positive without a floor "
                                      "w_min)"),
                                   f"at w = {float(grid[k]):.3g}, d(w) = {float(dv[k]):.3g}")
        if np.any(np.diff(dv) < -1e-12 * np.abs(dv[1:])):
            raise InvalidParameter(self._label("after_loss"), self._shown("after_loss"),
                                   "a nondecreasing function of the window",
                                   "a larger window must not end smaller after a loss")

    # ------------------------------------------------------------------ views
    @property
    def decrease(self) -> sp.Expr:
        """``b(w) = 1 - d(w)/w``: the fraction of the window lost at a loss."""
        return sp.simplify(1 - self.after_loss / W)

    def numeric(self) -> tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[Any], Any]]:
        """Vectorised numpy callables ``(a, lam, d)`` compiled once by :func:`symq.core.compile`."""
        funcs = []
        for expr in (self.increase, self.loss, self.after_loss):
            compiled = symq_compile(expr, [W])

            def call(w: Any, _f: Any = compiled, _e: sp.Expr = expr) -> Any:
                arr = np.asarray(w, dtype=float)
                out = np.asarray(_f(arr), dtype=float)
                return np.broadcast_to(out, arr.shape).copy() if out.shape != arr.shape else out

            funcs.append(call)
        return tuple(funcs)  # type: ignore[return-value]

    def power_law(self) -> PowerLawParameters | None:
        """The parameters if ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w``, else None."""
        a, lam = _power(self.increase), _power(self.loss)
        if a is None or lam is None:
            return None
        (ratio,), table = abstract(self.after_loss / W)
        beta = sp.simplify(ratio)
        if beta.free_symbols - set(table):
            return None
        return PowerLawParameters(alpha=a[0], k=a[1], gamma=lam[0], l=lam[1],
                                  beta=float(restore(beta, table)))

    @property
    def bounded(self) -> bool:
        """Whether a floor or a cap is set."""
        return self.w_min > 0 or math.isfinite(self.w_max)

    def with_bounds(self, w_min: float | None = None, w_max: float | None = None) -> WindowProtocol:
        """The same profiles with other bounds."""
        return WindowProtocol(self.increase, self.loss, self.after_loss,
                              w_min=self.w_min if w_min is None else w_min,
                              w_max=self.w_max if w_max is None else w_max, rtt=self.rtt,
                              name=self.name, labels=self.labels)

    def to_markdown(self) -> str:
        """The protocol as Markdown: its bounds and its three profiles in LaTeX."""
        from symq.core.display import markdown

        return markdown(f"**WindowProtocol** {self.name}: window increase per round-trip time, "
                        "loss rate and window after a loss",
                        [("w_min", self.w_min), ("w_max", self.w_max), ("rtt", self.rtt)],
                        [("", eq) for eq in profile_equations(self.increase, self.loss,
                                                              self.after_loss)])

    def __repr__(self) -> str:
        bounds = ""
        if self.bounded:
            bounds = f", w_min={self.w_min:g}, w_max={self.w_max:g}"
        return (f"WindowProtocol({self.name!r}: a(w)={self.increase}, lam(w)={self.loss}, "
                f"d(w)={self.after_loss}{bounds})")


def profile_equations(increase: Any, loss: Any, after_loss: Any) -> list[sp.Eq]:
    """``a(w) = ...``, ``lambda(w) = ...``, ``d(w) = ...`` as unevaluated equations (for the
    displays of protocols and declared models)."""
    names = ("a", "lambda", "d")
    return [sp.Eq(sp.Function(n)(W), e, evaluate=False)
            for n, e in zip(names, (increase, loss, after_loss))]


# ------------------------------------------------------------------------ presets

def _probability(p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, (numbers.Real, np.floating)) \
            or not (math.isfinite(float(p)) and 0 < float(p) < 1):
        raise InvalidParameter("p", p, "a loss probability in (0, 1)")
    return float(p)


def _loss(p: float, loss_model: str) -> sp.Expr:
    if loss_model == "packet":
        return sp.Float(p) * W
    if loss_model == "time":
        return sp.Float(p)
    raise InvalidParameter("loss_model", loss_model, "one of packet, time",
                           "packet: lam(w) = p w per RTT; time: lam(w) = p per RTT")


def newreno(p: float, beta: float = 0.5, loss_model: str = "packet", **bounds: float
            ) -> WindowProtocol:
    """TCP NewReno congestion avoidance: ``a = 1`` packet per RTT, halving.

    Altman et al. (INFOCOM 2005) apply their results to NewReno, Scalable TCP and HighSpeed TCP.

    ``loss_model="packet"``: each packet is lost with probability ``p``, ``lam(w) = p w``;
    ``"time"``: losses at rate ``p`` per RTT.  ``bounds``: ``w_min``, ``w_max``, ``rtt``.
    """
    p = _probability(p)
    return WindowProtocol(sp.Integer(1), _loss(p, loss_model), sp.Float(beta) * W,
                          name="NewReno", **bounds)


def scalable(p: float, increase: float = 0.01, beta: float = 0.875, loss_model: str = "packet",
             **bounds: float) -> WindowProtocol:
    """Scalable TCP (Kelly 2003): ``a(w) = 0.01 w`` per RTT, ``d(w) = 7/8 w``."""
    p = _probability(p)
    return WindowProtocol(sp.Float(increase) * W, _loss(p, loss_model), sp.Float(beta) * W,
                          name="Scalable TCP", **bounds)


#: RFC 3649 constants.
LOW_WINDOW, HIGH_WINDOW, HIGH_DECREASE = 38, 83000, sp.Rational(1, 10)


def _highspeed_decrease() -> sp.Expr:
    # log(83000/38) and log(w/38): one log of a rational, whose sign sympy knows exactly (a
    # difference of two logs would be evaluated numerically in mpmath's global context)
    slope = (HIGH_DECREASE - sp.Rational(1, 2)) / sp.log(sp.Rational(HIGH_WINDOW, LOW_WINDOW))
    middle = slope * sp.log(W / LOW_WINDOW) + sp.Rational(1, 2)
    return sp.Piecewise((sp.Rational(1, 2), W <= LOW_WINDOW), (middle, W <= HIGH_WINDOW),
                        (HIGH_DECREASE, True))


def _highspeed_increase(b: sp.Expr) -> sp.Expr:
    p_w = sp.Float(0.078) / W ** sp.Float(1.2)
    return sp.Piecewise((sp.Integer(1), W <= LOW_WINDOW),
                        (2 * W ** 2 * p_w * b / (2 - b), True))


# Built once, when the module is imported: sympy's assumption queries while these are built
# evaluate their log constants in mpmath's global context, which must not happen while a
# user's thread may be computing (README, "State"); sympy expressions are immutable.
_HS_DECREASE = _highspeed_decrease()
_HS_INCREASE = _highspeed_increase(_HS_DECREASE)
_HS_AFTER_LOSS = (1 - _HS_DECREASE) * W


def highspeed_decrease() -> sp.Expr:
    """RFC 3649 ``b(w)``: 1/2 up to Low_Window, then log-linear to 0.1 at High_Window, capped.

    Beyond High_Window the RFC's formula would keep falling (and turn negative beyond
    ``38 (83000/38)^1.25``); it is kept at High_Decrease = 0.1 there, as the RFC's table and
    the Linux implementation do.
    """
    return _HS_DECREASE


def highspeed_increase() -> sp.Expr:
    """RFC 3649 ``a(w) = 2 w^2 p(w) b(w)/(2 - b(w))``, ``p(w) = 0.078/w^1.2``; 1 up to
    Low_Window."""
    return _HS_INCREASE


def highspeed(p: float, loss_model: str = "packet", **bounds: float) -> WindowProtocol:
    """HighSpeed TCP (RFC 3649): window-dependent increase ``a(w)`` and decrease ``b(w)``."""
    p = _probability(p)
    return WindowProtocol(_HS_INCREASE, _loss(p, loss_model), _HS_AFTER_LOSS,
                          name="HighSpeed TCP", **bounds)


def highspeed_family(S: float, p: float, b: float = 0.5, C: float = math.sqrt(1.5),
                     loss_model: str = "packet", **bounds: float) -> WindowProtocol:
    """One-parameter HighSpeed family: response ``w = C p^-S``.

    symq's reading of the paper's remark that HighSpeed TCP approximates almost any window
    behaviour by varying one design parameter (abstract); the paper's own parametrisation may
    differ.

    Inverting the local AIMD response ``w = sqrt(a (2 - b)/(2 b p))`` at ``p = (C/w)^(1/S)``
    gives ``a(w) = 2b/(2-b) C^(1/S) w^(2 - 1/S)`` with a constant decrease ``b``.  ``S = 1/2``
    with the defaults is NewReno exactly (``a = 1``), ``S = 1`` is multiplicative increase
    (Scalable-like), RFC 3649's response has ``S = 0.835``.
    """
    p = _probability(p)
    if isinstance(S, bool) or not isinstance(S, (numbers.Real, np.floating)) \
            or not (math.isfinite(float(S)) and float(S) > 0):
        raise InvalidParameter("S", S, "a finite real number > 0", "the response exponent")
    if not 0 < b < 1:
        raise InvalidParameter("b", b, "a decrease fraction in (0, 1)")
    S = float(S)
    log_coefficient = math.log(2 * b / (2 - b)) + math.log(C) / S
    if not log_coefficient < 700.0:   # exp(700) ~ 1e304: a(w) would overflow at w = 1
        least = math.log(C) / (700.0 - math.log(2 * b / (2 - b)))
        raise InvalidParameter("S", S, f"a real number >= {least:.3g}",
                               "the increase a(w) = 2b/(2-b) C^(1/S) w^(2-1/S) overflows")
    coefficient = sp.Float(math.exp(log_coefficient))
    exponent = sp.nsimplify(2 - 1 / S, rational=True, tolerance=1e-12)
    return WindowProtocol(coefficient * W ** exponent, _loss(p, loss_model),
                          sp.Float(1 - b) * W, name=f"HighSpeed family S={S:g}", **bounds)


def general(increase: Any, loss: Any, after_loss: Any, **options: Any) -> WindowProtocol:
    """A protocol from three formulas in ``w`` (text or sympy), e.g.
    ``general("1", "1e-4*w", "0.5*w")``."""
    return WindowProtocol(increase, loss, after_loss, name=options.pop("name", "general"),
                          **options)


#: Presets by name (the ``protocol=`` choices of the ``awp`` model).
PRESETS: dict[str, Callable[..., WindowProtocol]] = {
    "newreno": newreno, "scalable": scalable, "highspeed": highspeed,
}
