"""Window protocols declared in a claims file: the model kind ``window``.

A claims file declares a new adaptive window protocol by its three profiles, as formulas in the
window ``w`` and the parameters it declares (Altman, Avrachenkov, Kherani, Prabhu, IEEE INFOCOM
2005, Section II: growth ``dW/dt = a(W)`` per round-trip time, Poisson losses of rate
``lam(W)`` per round-trip time, ``W -> d(W)`` at a loss)::

    [models.my-tcp]
    kind = "window"
    parameters = { c = "positive" }
    increase = "1"          # a(w), window increase per RTT
    loss = "p*w"            # lam(w), losses per RTT: each packet lost with probability p
    after_loss = "c*w"      # d(w), the window right after a loss

and refers to it in claims as ``my-tcp:EW``.  :func:`declare_window` validates the whole
declaration up front (unknown and missing keys, formulas outside the whitelist or with
undeclared symbols: one :class:`~symq.core.errors.InvalidParameter` naming
``models.my-tcp.KEY``) and returns a :class:`~symq.core.registry.ModelSpec` whose solve
substitutes the parameter values, builds the protocol with
:func:`~symq.window.protocol.general` and solves it on the ``awp`` model's path
(:func:`~symq.window.model.protocol_result`): the same outputs as ``awp`` (``EW`` the mean
window, ``EW2``, ``throughput``, ``loss_rate``, ``stable``, ...).  Its derivation is the
Kolmogorov equation of the declared protocol and the closed forms symq derives for its class
(:func:`~symq.window.declared.derivation.protocol_derivation`).

The symbol ``p`` (a loss probability per packet, in (0, 1)) is the kind's own parameter: a
formula may use it without declaring it.

Examples
--------
>>> spec = declare_window("aimd", {"increase": "1", "loss": "p*w", "after_loss": "w/2"}, (),
...                       "models.aimd")
>>> [q.name for q in spec.parameters]
['p', 'method']
>>> round(spec.run({"p": 1e-4})["EW"], 2)     # NewReno: 1.3098/sqrt(p)
130.98
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from symq.core.claimsfile.declarations import check_keys
from symq.core.derivation import Derivation
from symq.core.display import MarkdownDisplay
from symq.core.errors import MISSING, InvalidParameter
from symq.core.formula import parse_formula
from symq.core.parameters import Choice, Interval, Parameter
from symq.core.registry import ModelKind, ModelSpec

from ..model import OUTPUTS, ProtocolSolution, awp_scalars, protocol_result
from ..protocol import W, WindowProtocol, general, profile_equations
from ..solve import METHODS
from .derivation import protocol_derivation

__all__ = ["DeclaredWindow", "declare_window", "parse_window", "WINDOW_KIND", "KEYS",
           "LOSS_PROBABILITY", "WINDOW_MODEL_KIND"]

#: The profiles, as the claims file names them.
FORMULA_KEYS = ("increase", "loss", "after_loss")
#: Optional numbers (or formulas in the parameters, without ``w``) with their defaults.
BOUND_KEYS = {"w_min": 0.0, "w_max": math.inf, "rtt": 1.0}

#: Keys of a ``window`` declaration and their meaning.
KEYS: dict[str, str] = {
    "increase": "a(w): window increase per round-trip time, a formula in w and the parameters "
                "(\"1\" for NewReno, \"0.01*w\" for Scalable TCP)",
    "loss": "lam(w): loss rate per round-trip time, a formula in w and the parameters (\"p*w\": "
            "each packet is lost with probability p; \"p\": p losses per round-trip time)",
    "after_loss": "d(w): the window right after a loss, a formula in w and the parameters, "
                  "0 < d(w) < w and nondecreasing (\"0.5*w\")",
    "w_min": "optional window floor: after a loss W = max(d(W), w_min) (a number or a formula "
             "in the parameters; default 0, no floor)",
    "w_max": "optional window cap: growth stops there (a number or a formula in the "
             "parameters; default none)",
    "rtt": "optional round-trip time (throughput = E[W]/rtt; default 1)",
    "method": "optional solver: auto (default: a closed form where one applies, else the "
              "numerical solver), closed form, or numeric",
}

#: The kind's own parameter: a formula may use ``p`` without declaring it.
LOSS_PROBABILITY = Parameter("p", Interval(0.0, 1.0, left_open=True, right_open=True),
                             typical=1e-4, description="loss probability per packet")

_EXAMPLE = '''\
[models.my-tcp]
kind = "window"
parameters = { c = "positive" }   # c: the fraction of the window kept after a loss
increase = "1"                    # a(w): one packet more per round-trip time
loss = "p*w"                      # lam(w): each packet lost with probability p
after_loss = "c*w"                # d(w): the window right after a loss
w_min = 1                         # optional floor (also w_max, rtt, method)
'''


def _number(value: Any) -> bool:
    return isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, (bool,
                                                                                    np.bool_))


def _expression(label: str, value: Any, symbols: Mapping[str, sp.Symbol], what: str) -> sp.Expr:
    """``value`` (text, a sympy expression or a number) as an expression in ``symbols``."""
    domain = f"{what} in " + (", ".join(symbols) or "no symbol (a number)")
    if isinstance(value, str):
        parsed = parse_formula(label, value, tuple(symbols))
        return parsed.xreplace({s: symbols[str(s)] for s in parsed.free_symbols})
    if _number(value):
        if not math.isfinite(float(value)):
            raise InvalidParameter(label, value, domain, "not finite")
        return sp.Integer(int(value)) if float(value).is_integer() else sp.Float(float(value))
    if isinstance(value, sp.Expr):
        unknown = sorted(str(s) for s in value.free_symbols if str(s) not in symbols)
        if unknown:
            raise InvalidParameter(label, str(value), domain,
                                   "undeclared symbol " + ", ".join(unknown))
        if value.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
            raise InvalidParameter(label, str(value), domain, "not finite")
        return value.xreplace({s: symbols[str(s)] for s in value.free_symbols})
    if callable(value):
        raise InvalidParameter(label, value, f"{domain} (text or a sympy expression)",
                               "a window profile must be symbolic: the stability test, the "
                               "closed forms and the derivation need its formula, not code")
    raise InvalidParameter(label, value, domain)


@dataclass(frozen=True)
class DeclaredWindow(MarkdownDisplay):
    """A window protocol declared with symbolic parameters (validated, solved per point).

    Attributes
    ----------
    name, where : str
        The model's name and its key path in the claims file (``models.my-tcp``).
    increase, loss, after_loss : sympy.Expr
        ``a(w)``, ``lam(w)`` and ``d(w)`` in ``w`` (:data:`~symq.window.protocol.W`) and the
        parameters.
    bounds : mapping
        ``w_min``, ``w_max``, ``rtt``: floats or expressions in the parameters.
    method : str
        Default solver.
    parameters : tuple of Parameter
        The declared parameters, then ``p`` if a formula uses it undeclared.
    """

    name: str
    where: str
    increase: sp.Expr
    loss: sp.Expr
    after_loss: sp.Expr
    bounds: Mapping[str, Any]
    method: str
    parameters: tuple[Parameter, ...]

    def used(self) -> list[str]:
        """Names of the parameters the formulas and bounds use."""
        exprs = [self.increase, self.loss, self.after_loss,
                 *[b for b in self.bounds.values() if isinstance(b, sp.Expr)]]
        names = {str(s) for e in exprs for s in e.free_symbols}
        return [q.name for q in self.parameters if q.name in names]

    def protocol(self, values: Mapping[str, Any]) -> WindowProtocol:
        """The protocol at parameter ``values`` (by name).

        Raises
        ------
        InvalidParameter
            A profile or a bound that is not valid at these values, named as in the claims
            file (``models.my-tcp.after_loss``), with the values in the message.
        """
        point = {name: values[name] for name in self.used()}
        labels = {key: f"{self.where}.{key}" for key in (*FORMULA_KEYS, *BOUND_KEYS)}
        try:
            bounds = {key: self._bound(key, point) for key in BOUND_KEYS}
            return general(self.increase, self.loss, self.after_loss, parameters=point,
                           name=self.name, labels=labels, **bounds)
        except InvalidParameter as exc:
            raise _at(exc, point) from None

    def _bound(self, key: str, point: Mapping[str, Any]) -> float:
        bound = self.bounds[key]
        if not isinstance(bound, sp.Expr):
            return float(bound)
        value = bound.subs({s: point[str(s)] for s in bound.free_symbols})
        try:
            return float(value)
        except TypeError:
            raise InvalidParameter(f"{self.where}.{key}", str(bound), "a real number",
                                   f"it is {value}") from None

    def solve(self, **values: Any) -> ProtocolSolution:
        """Solve at ``values`` of the parameters (and ``method``) on the ``awp`` path."""
        start = time.perf_counter()
        method = values.pop("method", None) or self.method
        tcp = self.protocol(values)
        return protocol_result(tcp, method, start=start)

    def derivation(self) -> Derivation:
        """The Kolmogorov equation of the declared protocol and its class's closed forms."""
        return protocol_derivation(self, self.name, w_min=self.bounds["w_min"],
                                   w_max=self.bounds["w_max"],
                                   source=f"declared in {self.where}; model of E. Altman, K. "
                                          "Avrachenkov, A. Kherani, B. Prabhu, IEEE INFOCOM "
                                          "2005, Section II")

    def to_markdown(self) -> str:
        """The declared protocol as Markdown: bounds, method, profiles in LaTeX, parameters."""
        from symq.core.display import markdown, parameters_table

        return markdown(f"**DeclaredWindow** {self.name} (declared in `{self.where}`)",
                        [*self.bounds.items(), ("method", self.method)],
                        [("", eq) for eq in profile_equations(self.increase, self.loss,
                                                              self.after_loss)],
                        parameters_table(self.parameters))

    def spec(self) -> ModelSpec:
        """The registered-model form: parameters, solve, derivation, outputs."""
        method = Parameter("method", Choice(METHODS), required=False, default=self.method,
                           description="solver: " + ", ".join(METHODS))
        return ModelSpec(
            name=self.name,
            summary=(f"window protocol declared in {self.where}: a(w) = {self.increase}, "
                     f"lam(w) = {self.loss}, d(w) = {self.after_loss}"),
            parameters=(*self.parameters, method), solve=self.solve, scalar_outputs=awp_scalars,
            allow_infinite=("EW2",), derivation=self.derivation, outputs=OUTPUTS)


def _at(exc: InvalidParameter, point: Mapping[str, Any]) -> InvalidParameter:
    """``exc`` with the parameter values appended to its reason."""
    if not point:
        return exc
    prefix = f"parameter {exc.name}={exc.value!r} must be {exc.domain}"
    message = str(exc)
    reason = message[len(prefix):].strip() if message.startswith(prefix) else ""
    if reason.startswith("(") and reason.endswith(")"):
        reason = reason[1:-1]
    values = ", ".join(f"{k}={v!r}" for k, v in point.items())
    return InvalidParameter(exc.name, exc.value, exc.domain,
                            f"{reason}; at {values}" if reason else f"at {values}")


def declare_window(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                   where: str) -> ModelSpec:
    """Build the model declared by a ``[models.NAME] kind = "window"`` table.

    Parameters
    ----------
    name : str
        The model's name in the claims file (claims refer to ``NAME:EW``).
    table : mapping
        The declaration's keys (:data:`KEYS`; without ``kind`` and ``parameters``): formulas as
        text (or, in a Python claims file, sympy expressions or numbers).
    parameters : tuple of Parameter
        The parameters the file declared; their values come from each claim's region.
    where : str
        The declaration's key path as typed (``models.my-tcp``), for messages.

    Returns
    -------
    ModelSpec
        Parameters: the declared ones, ``p`` (:data:`LOSS_PROBABILITY`) if a formula uses it
        without declaring it, and ``method``; outputs those of the ``awp`` model
        (:meth:`DeclaredWindow.spec` of :func:`parse_window`).

    Raises
    ------
    InvalidParameter
        Naming ``f"{where}.{key}"``: an unknown key, a missing profile, a formula that is not
        text in ``w`` and the parameters (unknown symbol, syntax outside the whitelist of
        :func:`symq.core.formula.parse_formula`), a bound that is not a number or a formula in
        the parameters, an unknown method; or ``f"{where}.parameters.NAME"`` for a parameter
        named ``w`` or ``method``.
    """
    return parse_window(name, table, parameters, where).spec()


def parse_window(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                 where: str, keys: Mapping[str, str] = KEYS,
                 reserved: tuple[str, ...] = ("method",)) -> DeclaredWindow:
    """Validate a window declaration (see :func:`declare_window`) into a
    :class:`DeclaredWindow`: ``keys`` are the keys accepted (:data:`KEYS` or a subset),
    ``reserved`` the names of the model's own parameters besides ``p`` (no declared parameter
    may take them)."""
    check_keys(where, table, keys)
    for key in FORMULA_KEYS:
        if key not in table:
            raise InvalidParameter(f"{where}.{key}", MISSING, KEYS[key])
    declared = tuple(parameters)
    for q in declared:
        if q.name == "w" or q.name in reserved:
            raise InvalidParameter(f"{where}.parameters.{q.name}", q.name,
                                   "a name other than w (the window) and "
                                   + ", ".join(reserved) + " (the model's own parameters)")
    names = {q.name: sp.Symbol(q.name, **q.domain.assumptions) for q in declared}
    if "p" not in names:
        names["p"] = LOSS_PROBABILITY.symbol
    symbols = {"w": W, **names}
    formulas = {key: _expression(f"{where}.{key}", table[key], symbols, "a formula")
                for key in FORMULA_KEYS}
    bounds: dict[str, Any] = {}
    for key, default in BOUND_KEYS.items():
        value = table.get(key, default)
        if key == "w_max" and _number(value) and math.isinf(float(value)) and value > 0:
            bounds[key] = math.inf
            continue
        expr = _expression(f"{where}.{key}", value, names, "a number or a formula")
        bounds[key] = float(expr) if expr.is_number else expr
    if all(not isinstance(b, sp.Expr) for b in bounds.values()):
        # numeric bounds are checked now, by the protocol class itself (on trial profiles)
        general(1, W, W / 2, name=name, labels={k: f"{where}.{k}" for k in BOUND_KEYS},
                **bounds)
    method = Choice(METHODS).coerce(f"{where}.method", table.get("method", "auto"))
    used = {str(s) for e in (*formulas.values(), *bounds.values()) if isinstance(e, sp.Expr)
            for s in e.free_symbols}
    own = (LOSS_PROBABILITY,) if "p" in used and all(q.name != "p" for q in declared) else ()
    return DeclaredWindow(name=name, where=where, bounds=bounds, method=method,
                          parameters=(*declared, *own), **formulas)


#: The registered kind.
WINDOW_KIND = "window"

#: The model kind ``window`` (listed in :mod:`symq.window.registration`).
WINDOW_MODEL_KIND: ModelKind = ModelKind(
    kind=WINDOW_KIND,
    summary=("an adaptive window protocol (a TCP variant) from its increase a(w), loss rate "
             "lam(w) and window after a loss d(w): stationary window law, moments and "
             "stability as the awp model gives them (Altman et al., INFOCOM 2005)"),
    declare=declare_window,
    keys=KEYS,
    outputs=OUTPUTS,
    example=_EXAMPLE,
)
