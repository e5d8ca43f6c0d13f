r"""Fit an ME distribution to a target: classical and extended Padé over orders, keep certified fits.

Angius, Horváth et al. (2014): classical Padé may return a function that is not a density, and
prescribing the behaviour around zero (f(0), f'(0), ...) can avoid that and fit the shape better.
:func:`fit` tries, for every order n up to ``order_max`` and every number J of prescribed values
at zero (J = 0 is classical Padé), the two-point Padé fit that uses 2n-1-J moments and J zero
values; each candidate is certified (:func:`symq.me.certification.certify`); the best certified
nonnegative candidate is returned together with a report of every candidate and why it was
rejected.  "Best" is the smallest L1 distance between densities when the target has a density,
otherwise the candidate that matches the most moments (then the highest order).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import sympy as sp
from scipy import integrate

from symq.core.errors import InvalidParameter, SymqError

from .certification import Nonnegativity, certify
from .distribution import ME
from .pade import pade_fit

__all__ = ["Target", "Candidate", "FitReport", "fit", "NoCertifiedFit"]


class NoCertifiedFit(SymqError):
    """No candidate of :func:`fit` was certified nonnegative; the report lists them all."""

    def __init__(self, report: "FitReport") -> None:
        self.report = report
        super().__init__("no certified nonnegative ME fit was found:\n" + report.table())


@dataclass(frozen=True)
class Target:
    """What to fit: moments, optional derivatives of the density at zero, optional density.

    Parameters
    ----------
    moments : sequence
        Raw moments m_1, m_2, ... (exact or float).
    zero : sequence
        f(0), f'(0), ... (may be shorter than needed; only the given values are used).
    pdf : callable, optional
        The target density (vectorised), used to rank candidates by L1 distance.
    name : str
        For reports.
    """

    moments: tuple[Any, ...]
    zero: tuple[Any, ...] = ()
    pdf: Callable[[np.ndarray], np.ndarray] | None = None
    name: str = "target"

    @classmethod
    def from_scipy(cls, dist: Any, n_moments: int, zero: Sequence[Any] = (),
                   name: str | None = None) -> "Target":
        """From a scipy distribution (frozen ``rv_continuous`` or the new infrastructure).

        Moments come from ``dist.moment``; values at zero are not guessed: pass them
        (e.g. ``zero=(0, 0, 0)`` for a lognormal, whose density is flat at 0).
        """
        moments = []
        for k in range(1, n_moments + 1):
            try:
                value = dist.moment(k, kind="raw")
            except TypeError:
                value = dist.moment(k)
            moments.append(float(value))
        return cls(tuple(moments), tuple(zero), pdf=dist.pdf, name=name or repr(dist))

    @classmethod
    def from_sympy(cls, variable: Any, n_moments: int, n_zero: int = 0,
                   name: str | None = None) -> "Target":
        """From a sympy.stats continuous random variable: exact moments and values at zero."""
        from sympy import stats

        moments = tuple(sp.nsimplify(stats.E(variable**k)) for k in range(1, n_moments + 1))
        t = sp.Symbol("t", positive=True)
        density = stats.density(variable)(t)
        zero = tuple(sp.limit(sp.diff(density, t, j), t, 0, "+") for j in range(n_zero))
        pdf = sp.lambdify(t, density, "numpy")
        return cls(moments, zero, pdf=pdf, name=name or str(variable))


@dataclass
class Candidate:
    """One fit tried by :func:`fit`."""

    order: int
    zero_used: int
    status: str
    reason: str = ""
    me: ME | None = None
    distance: float | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "zero_used": self.zero_used, "status": self.status,
                "reason": self.reason, "l1_distance": self.distance,
                "seconds": round(self.seconds, 4)}


@dataclass
class FitReport:
    """Every candidate tried, and the chosen one."""

    target: Target
    candidates: list[Candidate] = field(default_factory=list)
    best: Candidate | None = None

    def table(self) -> str:
        lines = [f"{'order':>5} {'J':>3} {'status':<13} {'L1':>10}  reason"]
        for c in self.candidates:
            distance = "" if c.distance is None else f"{c.distance:.4g}"
            mark = " <- chosen" if c is self.best else ""
            lines.append(f"{c.order:>5} {c.zero_used:>3} {c.status:<13} {distance:>10}  "
                         f"{c.reason}{mark}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target.name,
                "candidates": [c.to_dict() for c in self.candidates],
                "best": None if self.best is None else self.best.to_dict()}


def _is_sympy_variable(obj: Any) -> bool:
    from sympy.stats.rv import RandomSymbol

    return isinstance(obj, RandomSymbol)


def l1_distance(me: ME, pdf: Callable[[np.ndarray], np.ndarray], upper: float) -> float:
    """:math:`\\int_0^{upper} |f_{ME}(t) - f(t)| dt` by adaptive quadrature."""
    value, _ = integrate.quad(lambda t: abs(float(me.pdf(t)) - float(pdf(np.asarray(t)))),
                              0.0, upper, limit=400)
    return float(value)


def fit(target: Target | Sequence[Any], order_max: int = 6, method: str = "auto", *,
        zero: Sequence[Any] = (), dps: int = 50, horizon: float | None = None,
        raise_if_none: bool = True) -> tuple[ME | None, FitReport]:
    """Fit an ME distribution and return the best certified nonnegative one.

    Parameters
    ----------
    target : Target, sequence of moments, scipy distribution or sympy.stats variable
        The target.  A scipy distribution gives its moments and density (values at zero from
        ``zero``); a sympy.stats continuous variable gives exact moments, exact derivatives of
        its density at zero and its density.
    order_max : int
        Largest order tried.
    method : {"auto", "classical", "extended"}
        ``"classical"``: J = 0 only; ``"extended"``: J >= 1 only; ``"auto"``: both.
    zero : sequence
        Values at zero when ``target`` is a plain moment sequence.
    dps : int
        Working precision of float fits.
    horizon : float, optional
        Upper limit of the L1 distance (default: mean + 12 standard deviations).
    raise_if_none : bool
        Raise :class:`NoCertifiedFit` when no candidate certifies (default); otherwise return
        ``(None, report)``.

    Returns
    -------
    (ME, FitReport)
        The chosen fit and the report of every candidate.
    """
    n_needed = 2 * order_max - 1 if isinstance(order_max, int) else 1
    if isinstance(target, Target):
        pass
    elif _is_sympy_variable(target):
        target = Target.from_sympy(target, n_needed, n_zero=max(order_max - 1, 0))
    elif hasattr(target, "pdf") and hasattr(target, "moment"):
        target = Target.from_scipy(target, n_needed, zero=zero)
    else:
        target = Target(tuple(target), tuple(zero))
    if method not in ("auto", "classical", "extended"):
        raise InvalidParameter("method", method, "one of auto, classical, extended")
    if not (isinstance(order_max, int) and order_max >= 1):
        raise InvalidParameter("order_max", order_max, "an integer >= 1")
    n_moments, n_zero = len(target.moments), len(target.zero)
    report = FitReport(target)
    if horizon is None:
        m1 = float(target.moments[0])
        sd = math.sqrt(max(float(target.moments[1]) - m1**2, 0.0)) if n_moments > 1 else m1
        horizon = m1 + 12 * sd
    for n in range(1, order_max + 1):
        for J in range(0, min(n_zero, n - 1) + 1):  # J >= n would leave no numerator
            if (method == "classical" and J > 0) or (method == "extended" and J == 0):
                continue
            K = 2 * n - 1 - J
            if K < 1 or K > n_moments:
                continue
            start = time.perf_counter()
            candidate = Candidate(n, J, "")
            try:
                result = pade_fit(target.moments[:K], order=n, zero=target.zero[:J], dps=dps)
                me = ME(result.lst)
                certificate = certify(me)
            except SymqError as exc:
                candidate.status, candidate.reason = "FAILED", f"{type(exc).__name__}: {exc}"
            else:
                candidate.me = me
                candidate.status = certificate.status.value
                if me.order < n:
                    candidate.reason = f"reduced to order {me.order}; "
                if certificate.status is Nonnegativity.NONNEGATIVE:
                    candidate.reason += f"certified ({certificate.method})"
                    if target.pdf is not None:
                        candidate.distance = l1_distance(me, target.pdf, horizon)
                else:
                    candidate.reason += certificate.reason or certificate.method
            candidate.seconds = time.perf_counter() - start
            report.candidates.append(candidate)
    certified = [c for c in report.candidates if c.status == Nonnegativity.NONNEGATIVE.value]
    if certified:
        if target.pdf is not None:
            report.best = min(certified, key=lambda c: (c.distance, -(2 * c.order - 1 - c.zero_used)))
        else:
            report.best = max(certified, key=lambda c: (2 * c.order - 1 - c.zero_used, c.order))
    if report.best is None:
        if raise_if_none:
            raise NoCertifiedFit(report)
        return None, report
    return report.best.me, report
