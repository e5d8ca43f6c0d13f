"""One front door for the stationary law of a window protocol: closed form or numerical solver.

:func:`solve_protocol` checks stability first (:func:`~symq.window.symbolic.stability`) and
raises :class:`~symq.core.errors.StabilityError` for a protocol without a stationary law; then
it uses, in this order,

* the q-series closed form of the power-law class (:mod:`symq.window.powerlaw`) when
  ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w`` with ``m = l - k + 1 > 0`` and no bounds;
* the exact law of multiplicative increase with constant loss rate and a floor
  (:mod:`symq.window.mimd`);
* the general numerical solver (:mod:`symq.window.numeric`: embedded post-loss chain with
  Palm inversion and error control) otherwise, or when ``method="numeric"`` is asked.

Examples
--------
>>> from symq.window.protocol import newreno
>>> law = solve_protocol(newreno(1e-4))
>>> law.method, round(law.mean() * 1e-2, 4)   # E[W] sqrt(p): Ott-Kemperman-Mathis
('closed form (power-law q-series)', 1.3098)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.result import Exactness, ResultBase
from symq.laws import Distribution

from .protocol import WindowProtocol
from .symbolic import WindowStability, stability

__all__ = ["METHODS", "WindowLaw", "solve_protocol"]

#: Accepted values of ``method``.
METHODS = ("auto", "closed form", "numeric")


@dataclass(frozen=True)
class WindowLaw(ResultBase, Distribution):
    """Stationary (time-average) law of the window of a protocol (from :func:`solve_protocol`).

    A result (:class:`~symq.core.result.ResultBase`: ``to_dict()``, a short ``str``) and a
    :class:`~symq.laws.Distribution` of the window: ``pdf``, ``cdf``, ``ccdf``,
    ``icdf``, ``moment(order, kind)``, ``mean()``, ``variance()``, ``sample(shape, rng=)``,
    ``to_scipy()``, all from the solver's law (``law``); ``pre_loss_cdf`` is the cdf of the
    window just before a loss (Palm).

    Attributes
    ----------
    protocol : WindowProtocol
    method : str
        Which solver produced it.
    exactness : Exactness
        ``exact`` for the closed forms, ``numeric`` for the numerical solver.
    mean_window, mean_square_window : float
        ``E[W]``, ``E[W^2]`` (in packets); ``mean()`` returns ``mean_window``.
    throughput : float
        ``E[W]/rtt`` (packets per unit time).
    loss_rate : float
        ``E[lam(W)]``: losses per round-trip time.
    drift_balance : float
        ``E[a(W)] - E[lam(W) b(W) W]`` relative to ``E[a(W)]`` (0 for an exact stationary law;
        ``derivations/awp.md``, step "Mean drift balance").
    error_estimate : float
        Relative error estimate of ``mean_window`` (0 for closed forms).
    stability : WindowStability
    atom_at_cap : float
        Probability that the window sits at ``w_max``.
    law : PowerLawWindow, MIMDFloor or WindowSolution
        The solver's own law (not part of ``to_dict()``).
    """

    summary: ClassVar[tuple[str, ...]] = ("mean_window", "throughput", "loss_rate", "method")
    uncertainty: ClassVar[Mapping[str, str]] = {"mean_window": "relative error_estimate"}

    protocol: WindowProtocol
    method: str
    exactness: Exactness
    mean_window: float
    mean_square_window: float
    throughput: float
    loss_rate: float
    drift_balance: float
    error_estimate: float
    stability: WindowStability
    law: Distribution = field(repr=False)
    atom_at_cap: float = 0.0

    def pdf(self, x: Any) -> Any:
        """Density of the time-stationary window (atom at a cap excluded)."""
        return self.law.pdf(x)

    def cdf(self, x: Any) -> Any:
        """``P(W <= x)``."""
        return self.law.cdf(x)

    def ccdf(self, x: Any) -> Any:
        """``P(W > x)``."""
        return self.law.ccdf(x)

    def icdf(self, p: Any) -> Any:
        """Quantiles of the window."""
        return self.law.icdf(p)

    def support(self) -> tuple[float, float]:
        return self.law.support()

    def moment(self, order: Any = 1, kind: str = "raw") -> Any:
        """``E[W^s]`` for a real ``s = order`` (``raw``), or a central/standardized moment."""
        return self.law.moment(order, kind)

    def _raw_moment(self, order: int) -> Any:
        return self.mean_window if order == 1 else self.law.moment(float(order))

    def mean(self) -> float:
        """``E[W]`` (the field ``mean_window``)."""
        return self.mean_window

    def pre_loss_cdf(self, w: Any) -> Any:
        """Palm cdf of the window just before a loss.

        Raises
        ------
        InvalidParameter
            For the MIMD closed form, which does not provide it (use ``method="numeric"``).
        """
        pre_loss = getattr(self.law, "pre_loss_cdf", None)
        if pre_loss is None:
            raise InvalidParameter("pre_loss_cdf", w, "a protocol solved numerically",
                                   "not provided by the MIMD closed form; use method='numeric'")
        return pre_loss(w)


def _mimd_floor_balance(exact: Any, a: float, lam: float, beta: float, w_min: float) -> float:
    """Relative ``E[a W] - E[lam (W - max(beta W, w_min))]`` for the MIMD floor law (mean drift
    balance with a floor).

    With a floor the window after a loss is ``max(d(W), w_min)``; the expectation of that
    maximum is integrated with :func:`scipy.integrate.quad`, split at the kink ``w_min/beta``.
    """
    from scipy.integrate import quad

    # in units of the floor, u = W/w_min has the scale-free density theta u^-(theta+1) on
    # u > 1 (no overflow or round-off for a floor near the ends of the double range)
    theta = float(exact.theta)

    def density(u: float) -> float:
        return theta * u ** -(theta + 1.0)

    kink = 1.0 / beta
    low = w_min * quad(density, 1.0, kink, limit=200)[0]
    high = beta * w_min * quad(lambda u: u * density(u), kink, np.inf, limit=200)[0]
    mean = float(exact.mean())
    gain = a * mean
    return float((gain - lam * (mean - low - high)) / gain)


#: The method of the MIMD closed form with a floor, whose E[W^2] is exactly infinite when the
#: tail exponent theta is at most 2 (an infinite value there is the answer, not an overflow).
MIMD_FLOOR_METHOD = "closed form (MIMD, constant rate, floor)"


def _closed_form(protocol: WindowProtocol, verdict: WindowStability
                 ) -> WindowLaw | None:
    law = protocol.power_law()
    if law is None:
        return None
    if not protocol.bounded and law.m > 0:
        from .powerlaw import PowerLawWindow

        exact = PowerLawWindow(law.alpha, law.k, law.gamma, law.l, law.beta)
        mean = float(exact.mean())
        # mean drift balance: E[a(W)] = alpha E[W^k] = E[lam(W) b W] = gamma (1 - beta) E[W^(l+1)]
        alpha_side = law.alpha * float(exact.moment(law.k))
        gamma_side = law.gamma * (1 - law.beta) * float(exact.moment(law.l + 1))
        return WindowLaw(protocol=protocol, method="closed form (power-law q-series)",
                         exactness=Exactness.EXACT, mean_window=mean,
                         mean_square_window=float(exact.second_moment()),
                         throughput=mean / protocol.rtt, loss_rate=float(exact.loss_rate()),
                         drift_balance=float(1.0 - gamma_side / alpha_side),
                         error_estimate=0.0, stability=verdict, law=exact)
    if law.k == 1 and law.l == 0 and protocol.w_min > 0 and not math.isfinite(protocol.w_max):
        from .mimd import MIMDFloor

        exact = MIMDFloor(law.alpha, law.gamma, law.beta, protocol.w_min)
        try:
            mean = float(exact.mean())
        except StabilityError as exc:   # E[W] is infinite
            raise StabilityError(f"{protocol.name}: {exc}") from None
        second = float(exact.moment(2)) if exact.theta > 2 else math.inf
        return WindowLaw(protocol=protocol, method=MIMD_FLOOR_METHOD,
                         exactness=Exactness.EXACT, mean_window=mean, mean_square_window=second,
                         throughput=mean / protocol.rtt, loss_rate=law.gamma,
                         drift_balance=_mimd_floor_balance(exact, law.alpha, law.gamma,
                                                           law.beta, protocol.w_min),
                         error_estimate=0.0, stability=verdict, law=exact)
    return None


def solve_protocol(protocol: WindowProtocol, method: str = "auto", rtol: float = 1e-8,
                   verdict: WindowStability | None = None) -> WindowLaw:
    """Stationary law of the window of ``protocol`` (see the module notes for the dispatch).

    Parameters
    ----------
    protocol : WindowProtocol
    method : {"auto", "closed form", "numeric"}
        ``"closed form"`` raises if none applies; ``"numeric"`` forces the general solver.
    rtol : float
        Target relative accuracy of the numerical solver.
    verdict : WindowStability, optional
        :func:`~symq.window.symbolic.stability` of ``protocol`` if the caller has it already
        (its sympy limits are the slow part of small solves).

    Raises
    ------
    StabilityError
        The protocol has no stationary law (transient, collapsing or borderline), or its mean
        window is infinite.
    InvalidParameter
        Unknown ``method``, or ``"closed form"`` for a protocol outside the closed-form classes.
    NotConverged
        The numerical solution breaks the rate-conservation identity ``E[a(W)] =
        E[lam(W) (W - max(d(W), w_min))]`` (mean drift balance) by more than ``max(1e-5, 1e3 rtol)``
        relative (at most ``1e-2``), or the solver's own refinement did not converge.
    """
    if not isinstance(protocol, WindowProtocol):
        raise InvalidParameter("protocol", protocol, "a WindowProtocol")
    if method not in METHODS:
        raise InvalidParameter("method", method, "one of " + ", ".join(METHODS))
    if verdict is None:
        verdict = stability(protocol)
    if not verdict.stable:
        raise StabilityError(f"{protocol.name} has no stationary window law: {verdict.status} "
                             f"({verdict.reason}); moments are not defined")
    if method in ("auto", "closed form"):
        exact = _closed_form(protocol, verdict)
        if exact is not None:
            return exact
        if method == "closed form":
            raise InvalidParameter("method", method, "'auto' or 'numeric' for this protocol",
                                   "no closed form: not a power-law profile without bounds, "
                                   "nor multiplicative increase with constant losses and a floor")
    from .numeric import solve_window

    a, lam, d = protocol.numeric()
    try:
        sol = solve_window(a, lam, d, w_min=protocol.w_min, w_max=protocol.w_max, rtol=rtol)
    except InvalidParameter as exc:
        # the solver's own sample checks name its callables a, lam, d: show the protocol's names
        field_name = {"a": "increase", "lam": "loss", "d": "after_loss"}.get(exc.name)
        if field_name is None:
            raise
        raise InvalidParameter(protocol._label(field_name), protocol._shown(field_name),
                               exc.domain, f"numerical solver: {exc.value!r} is not valid; "
                               f"{exc.args[0].split(' (', 1)[-1].rstrip(')')}") from None
    atom = float(sol.atom_at_cap)
    gain = float(sol.expect(lambda w: a(w) * (w < protocol.w_max)))
    # the rate-conservation identity E[a(W)] = E[lam(W) (W - max(d(W), w_min))] holds
    # for the exact stationary law: a solution that breaks it is wrong whatever its own error
    # estimate says (seen for a floor or a cap far from the bulk of the law)
    drift = float(sol.drift_balance)
    if gain > 0:
        drift /= gain
    elif drift == 0:
        drift = 0.0
    else:
        drift = math.inf
    tol = min(1e-2, max(1e-5, 1e3 * rtol))
    if not abs(drift) <= tol:
        raise NotConverged("window solver (rate-conservation check E[a(W)] = E[lam(W) b(W) W])",
                           abs(drift), tol, len(sol.history),
                           "the numerical solver cannot resolve this law (a floor w_min or a "
                           "cap w_max far from the bulk of the window law?); move w_min/w_max "
                           "closer to the unbounded mean window, or drop them")
    return WindowLaw(protocol=protocol, method="numeric (embedded post-loss chain)",
                     exactness=Exactness.NUMERIC, mean_window=float(sol.mean_window),
                     mean_square_window=float(sol.mean_square_window),
                     throughput=float(sol.mean_window) / protocol.rtt,
                     loss_rate=float(sol.loss_rate), drift_balance=drift,
                     error_estimate=float(sol.error_estimate), stability=verdict,
                     law=sol, atom_at_cap=atom)
