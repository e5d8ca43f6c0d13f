r"""Fit an ME distribution to a target: classical and extended Padé over orders, keep certified
fits.

Angius, Horváth et al. (2014): classical Padé may return a function that is not a density, and
prescribing the behaviour around zero (f(0), f'(0), ...) can avoid that and fit the shape better.
:func:`fit` tries, for every order n up to ``order_max`` and every number J of prescribed values
at zero (J = 0 is classical Padé), the two-point Padé fit that uses 2n-1-J moments and J zero
values; each candidate is certified (:func:`symq.me.certification.certify`); the best certified
nonnegative candidate is returned together with a report of every candidate and why it was
rejected.  "Best" is the smallest L1 distance between densities when the target has a density,
otherwise the candidate that reproduces the most of the given moments (then the highest order).

Data checks and honesty about the moments:

* the given moments are checked first (:func:`symq.me.pade.stieltjes_check`): a sequence that no
  distribution on :math:`[0, \infty)` has (e.g. ``m2 < m1^2``) raises :class:`InvalidMoments`
  naming the failing condition; for a target without a density, the data must also determine an
  ME of the order they imply (the check of :meth:`ME.from_moments`), otherwise InvalidMoments;
* a candidate of order n uses only 2n-1-J moments; every candidate records which of the *given*
  moments and values at zero it does not reproduce (:attr:`Candidate.unmatched`: exactly for
  exact data, to :data:`MATCH_RTOL` relative for floating data), the table shows them, and
  :attr:`FitReport.unmatched` lists those of the chosen fit (empty: the fit reproduces every given
  value);
* a target whose moments are not finite (a heavy-tailed scipy or sympy law) raises
  InvalidMoments saying how many moments are finite and which ``order_max`` they allow.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from symq.core.compiler import compile
from symq.core.display import MarkdownDisplay
from symq.core.errors import InvalidMoments, InvalidParameter, SymqError
from symq.core.result import Exactness, ResultBase

from ._context import mp, to_global, working_dps
from .certification import Nonnegativity, certify
from .distribution import ME
from .moments import mismatches, parse_data, stieltjes_check
from .pade import CLASSICAL, TWO_POINT, pade_fit

__all__ = ["Target", "Candidate", "FitReport", "fit", "NoCertifiedFit", "MATCH_RTOL"]

#: Relative tolerance under which a floating-point target value counts as reproduced.
MATCH_RTOL = 1e-9
#: Largest order_max accepted (each order costs an exact or high-precision solve and a certificate).
MAX_ORDER = 30


#: scipy families whose raw moments have a closed form, E[X^k] at loc = 0 and scale 1 as a
#: function of k and the shape parameters (evaluated in mpmath).
_CLOSED_FORM_MOMENTS: dict[str, Callable[..., Any]] = {
    "lognorm": lambda k, s: mp.exp(k * k * s * s / 2),
    "weibull_min": lambda k, c: mp.gamma(1 + mp.mpf(k) / c),
    "gamma": lambda k, a: mp.gamma(a + k) / mp.gamma(a),
    "expon": lambda k: mp.factorial(k),
}


def _closed_form_moments(dist: Any, n: int, dps: int) -> list[Any] | None:
    r"""Raw moments ``m_1..m_n`` of a frozen scipy law of a family with closed-form moments.

    Computed in mpmath with ``dps + 10`` digits from the law's exact float parameters (a
    lognormal's :math:`e^{k\mu + k^2\sigma^2/2}`, a Weibull's :math:`\lambda^k \Gamma(1 + k/c)`,
    a gamma's :math:`\theta^k \Gamma(a + k)/\Gamma(a)`): scipy's double-precision moments
    lose the positive definiteness of the Hankel matrices of a lognormal already at order 4
    (seven moments), and the fit then refuses data that a distribution has.  ``None`` for any
    other law (or a shifted one): its moments come from ``dist.moment``.
    """
    inner = getattr(dist, "dist", None)
    family = _CLOSED_FORM_MOMENTS.get(getattr(inner, "name", None))
    if family is None:
        return None
    try:
        shapes, loc, scale = inner._parse_args(*dist.args, **dist.kwds)
    except Exception:  # noqa: BLE001 - not a frozen rv_continuous after all
        return None
    if loc != 0:
        return None
    with working_dps(dps + 10):
        parameters = [mp.mpf(float(x)) for x in shapes]
        factor = mp.mpf(float(scale))
        return [to_global(factor**k * family(k, *parameters)) for k in range(1, n + 1)]


def _tail_index(dist: Any) -> float | None:
    r"""Estimated tail index :math:`\alpha` of :math:`P(X > x) \sim x^{-\alpha}` (None: unknown).

    From the quantiles at :math:`10^{-10}` and :math:`10^{-14}`:
    :math:`\alpha \approx \log(10^4) / \log(x_{14}/x_{10})`; exact for a Pareto tail and
    large (growing) for light tails, so moments of order :math:`k \ge \alpha` are infinite.
    scipy's ``moment`` integrates numerically and can return a finite garbage value for them.
    """
    inverse = getattr(dist, "isf", None) or getattr(dist, "iccdf", None)
    if inverse is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x10, x14 = float(inverse(1e-10)), float(inverse(1e-14))
    except Exception:  # noqa: BLE001 - an exotic distribution object: no estimate
        return None
    if not (math.isfinite(x10) and math.isfinite(x14) and x14 > x10 > 0):
        return None if math.isfinite(x14) else 0.0
    return math.log(1e4) / math.log(x14 / x10)


def _finite_moments(values: Sequence[Any], source: str, n_needed: int, why: str = "") -> None:
    """Raise InvalidMoments if a moment of a scipy/sympy target is infinite or undefined."""
    for k, value in enumerate(values, start=1):
        try:
            finite = bool(math.isfinite(float(value)))
        except (TypeError, ValueError, OverflowError):
            finite = False
        if not finite:
            usable = (k - 1 + 1) // 2
            advice = (f"use order_max <= {usable} (2*order_max - 1 <= {k - 1} moments)"
                      if usable >= 1 else "the law has no finite mean: no ME fits it")
            raise InvalidMoments(
                f"moment m{k} of the target {source} is {value} (not finite){why}: fit needs "
                f"{n_needed} moments (2*order_max - 1) but only the first {k - 1} are finite; "
                f"{advice}")


class NoCertifiedFit(SymqError):
    """No candidate of :func:`fit` was certified nonnegative; the report lists them all."""

    def __init__(self, report: FitReport) -> None:
        self.report = report
        super().__init__("no certified nonnegative ME fit was found:\n" + report.table())


@dataclass(frozen=True)
class Target(MarkdownDisplay):
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

    def to_markdown(self) -> str:
        """The target as Markdown: its moments, values at zero and density."""
        from symq.core.display import markdown

        return markdown(f"**Target** {self.name}: what `fit` matches",
                        [("moments", self.moments), ("zero", self.zero or "none"),
                         ("density", "given" if self.pdf is not None else "none")])

    @classmethod
    def from_scipy(cls, dist: Any, n_moments: int, zero: Sequence[Any] = (),
                   name: str | None = None) -> Target:
        """From a scipy distribution (frozen ``rv_continuous`` or the new infrastructure).

        Moments come from their closed forms in mpmath for the lognormal, Weibull, gamma and
        exponential families (scipy's float moments are too coarse for the moment matrices of
        a lognormal), from ``dist.moment`` otherwise; values at zero are not guessed: pass them
        (e.g. ``zero=(0, 0, 0)`` for a lognormal, whose density is flat at 0).
        """
        inner = getattr(dist, "dist", None)
        label = name or (f"scipy.stats.{inner.name}{tuple(getattr(dist, 'args', ()))}"
                         if getattr(inner, "name", None) else repr(dist))
        closed = _closed_form_moments(dist, n_moments, 50)
        if closed is not None:
            return cls(tuple(closed), tuple(zero), pdf=dist.pdf, name=label)
        index = _tail_index(dist)
        moments = []
        for k in range(1, n_moments + 1):
            if index is not None and index <= k * (1 + 1e-6):
                _finite_moments([*moments, math.inf], label, n_moments,
                                f" (its tail P(X > x) ~ x^-{index:.4g})")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    value = dist.moment(k, kind="raw")
                except TypeError:
                    value = dist.moment(k)
            try:
                value = float(value)
            except (TypeError, ValueError, OverflowError):
                value = math.nan
            if not (math.isfinite(value) and value > 0):
                _finite_moments([*moments, math.inf if value > 0 else math.nan], label, n_moments)
            moments.append(value)
        return cls(tuple(moments), tuple(zero), pdf=dist.pdf, name=label)

    @classmethod
    def from_sympy(cls, variable: Any, n_moments: int, n_zero: int = 0,
                   name: str | None = None) -> Target:
        """From a sympy.stats continuous random variable: exact moments and values at zero."""
        from sympy import stats

        moments = []
        for k in range(1, n_moments + 1):
            value = stats.E(variable**k)
            if not (value.is_finite and value.is_real):
                _finite_moments([*moments, value], name or str(variable), n_moments)
            moments.append(sp.nsimplify(value))
        moments = tuple(moments)
        t = sp.Symbol("t", positive=True)
        density = stats.density(variable)(t)
        zero = tuple(sp.limit(sp.diff(density, t, j), t, 0, "+") for j in range(n_zero))
        pdf = compile(density, (t,))
        return cls(moments, zero, pdf=pdf, name=name or str(variable))


@dataclass(frozen=True)
class Candidate(ResultBase):
    """One fit tried by :func:`fit`.

    Attributes
    ----------
    order : int
        The order ``n`` tried.
    zero_used : int
        ``J``: values at zero prescribed (0: classical Padé).
    status : str
        The certificate's verdict (``NONNEGATIVE``, ``NEGATIVE``, ``INVALID``, ``INCONCLUSIVE``),
        or ``FAILED`` when the Padé system has no admissible solution.
    reason : str
        Why: the rule that certified it, or what went wrong.
    me : ME or None
        The fitted distribution (None when ``FAILED``).
    distance : float or None
        L1 distance to the target density (certified candidates of a target with a density).
    seconds : float
        Time spent on the fit and its certificate.
    unmatched : tuple of str
        Given moments / values at zero the fit does not reproduce, e.g. ``"m3 = 5 (fit gives 6)"``.
    matched : int
        Number of given moments and values at zero it reproduces.
    method : str
        The Padé fit tried (classical for ``J = 0``, two-point otherwise) and its certificate.
    exactness : Exactness
        ``exact`` for exact data (the fit in rational arithmetic), ``numeric`` for float data.
    """

    summary: ClassVar[tuple[str, ...]] = ("order", "zero_used", "status", "distance")

    order: int
    zero_used: int
    status: str
    reason: str = ""
    me: ME | None = None
    distance: float | None = None
    seconds: float = 0.0
    unmatched: tuple[str, ...] = ()
    matched: int = 0
    method: str = f"{CLASSICAL} + certified nonnegativity"
    exactness: Exactness = Exactness.EXACT

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields, the fitted transform as exact text, ``distance`` as
        ``l1_distance``."""
        return {"order": self.order, "zero_used": self.zero_used, "status": self.status,
                "reason": self.reason, "l1_distance": self.distance,
                "unmatched": list(self.unmatched), "matched": self.matched,
                "transform": None if self.me is None else self.me.lst.to_dict(),
                "seconds": round(self.seconds, 4)}


@dataclass(frozen=True)
class FitReport(ResultBase):
    """Every candidate tried by :func:`fit`, and the chosen one.

    Attributes
    ----------
    target : Target
        What was fitted.
    candidates : tuple of Candidate
        Every (order, J) tried, in order.
    best : Candidate or None
        The chosen certified candidate (one of ``candidates``), None if none certified.
    method : str
        How the candidates were made and the best one chosen.
    exactness : Exactness
        ``exact`` for exact data, ``numeric`` for float data (as each candidate).
    """

    target: Target
    candidates: tuple[Candidate, ...] = ()
    best: Candidate | None = None
    method: str = ("Padé fits over orders and values at zero, certified nonnegativity; the "
                   "certified candidate closest in L1 (or matching most data) is chosen")
    exactness: Exactness = Exactness.EXACT

    def table(self) -> str:
        """The candidates as a text table, the chosen one marked."""
        lines = [f"{'order':>5} {'J':>3} {'status':<13} {'L1':>10}  reason"]
        for c in self.candidates:
            distance = "" if c.distance is None else f"{c.distance:.4g}"
            mark = " <- chosen" if c is self.best else ""
            lines.append(f"{c.order:>5} {c.zero_used:>3} {c.status:<13} {distance:>10}  "
                         f"{c.reason}{mark}")
        if self.best is not None and self.best.unmatched:
            lines.append("the chosen fit does NOT reproduce: " + "; ".join(self.best.unmatched))
        return "\n".join(lines)

    @property
    def unmatched(self) -> list[str]:
        """Given moments / values at zero that the chosen fit does not reproduce (empty: all)."""
        return [] if self.best is None else list(self.best.unmatched)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: target name, every candidate, the chosen one and what it misses."""
        return {"target": self.target.name,
                "candidates": [c.to_dict() for c in self.candidates],
                "best": None if self.best is None else self.best.to_dict(),
                "unmatched": self.unmatched}

    def __str__(self) -> str:
        best = "none certified" if self.best is None else \
            f"best order {self.best.order}, J = {self.best.zero_used}"
        return f"FitReport({self.target.name}: {len(self.candidates)} candidates, {best})"

    def _repr_markdown_(self) -> str:
        lines = [f"**FitReport** ({self.target.name})", "",
                 "| order | J | status | L1 | reason |", "|---|---|---|---|---|"]
        for c in self.candidates:
            distance = "" if c.distance is None else f"{c.distance:.4g}"
            chosen = " **(chosen)**" if c is self.best else ""
            reason = c.reason.replace("|", "\\|")
            lines.append(f"| {c.order} | {c.zero_used} | {c.status} | {distance} | "
                         f"{reason}{chosen} |")
        return "\n".join(lines)


def _is_sympy_variable(obj: Any) -> bool:
    from sympy.stats.rv import RandomSymbol

    return isinstance(obj, RandomSymbol)


def l1_distance(me: ME, pdf: Callable[[np.ndarray], np.ndarray], upper: float) -> float:
    """:math:`\\int_0^{upper} |f_{ME}(t) - f(t)| dt`, the L1 distance between the densities.

    Composite 16-point Gauss-Legendre on 200 equal panels of ``[0, upper]`` plus 40 geometric
    panels on ``[1e-8 upper, 1e-2 upper]`` (densities may be singular at 0; no node sits at 0),
    both densities evaluated once, vectorised.  The integrand has kinks where the densities
    cross; on panels of width ``upper/200`` this costs about 1e-6 of absolute accuracy, which is
    what ranking fits needs (about 1e-5 next to a density singular at 0, such as a gamma
    law of shape 1/2).
    """
    edges = np.unique(np.concatenate([[0.0], upper * np.geomspace(1e-8, 1e-2, 41),
                                      np.linspace(0.0, upper, 201)]))
    nodes, weights = np.polynomial.legendre.leggauss(16)
    left, width = edges[:-1, None], np.diff(edges)[:, None]
    t = (left + width * (nodes[None, :] + 1.0) / 2.0).ravel()
    w = (width * weights[None, :] / 2.0).ravel()
    gap = np.abs(np.asarray(me.pdf(t), dtype=float) - np.asarray(pdf(t), dtype=float))
    return float(np.dot(w, gap))


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
        The chosen fit and the report of every candidate; ``report.unmatched`` lists the given
        moments and values at zero that the chosen fit does not reproduce (a candidate of order
        n uses 2n-1-J of them).

    Raises
    ------
    InvalidMoments
        The moments are those of no distribution (Stieltjes conditions, the failing one named);
        a target without a density whose data determine no ME of the implied order; a scipy or
        sympy target with infinite moments.
    InvalidParameter
        Bad options (``order_max`` in 1..30, ``method``) or non-numeric / non-finite data.
    NoCertifiedFit
        No candidate is certified nonnegative (unless ``raise_if_none=False``).

    Examples
    --------
    >>> me, report = fit([1, 2, 6])          # Exp(1): reproduced exactly
    >>> me.lst.expr, report.unmatched
    (1/(s + 1), [])
    >>> fit([1, "0.5", 3])
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidMoments: no distribution on [0, inf) has these moments: Stieltjes
    condition fails: m2 - m1^2 = -1/2 < 0 (a negative variance)
    """
    if isinstance(order_max, bool) or not isinstance(order_max, int) \
            or not 1 <= order_max <= MAX_ORDER:
        raise InvalidParameter("order_max", order_max, f"an integer in 1..{MAX_ORDER}")
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
    n_moments, n_zero = len(target.moments), len(target.zero)
    if n_moments == 0:
        raise InvalidParameter("moments", [], "at least one moment")
    # the data first: values (finite, positive moments), Stieltjes conditions, and for a target
    # without a density the order its data imply (as ME.from_moments)
    mom = parse_data(target.moments, "moments", dps)
    zer = parse_data(target.zero, "zero", dps)
    stieltjes_check(target.moments, dps=dps)
    if target.pdf is None and (n_moments + n_zero) % 2 == 1:
        pade_fit(target.moments, zero=target.zero, dps=dps)   # raises InvalidMoments if none
    exact_data = mom.exact and zer.exact
    if horizon is None:
        m1 = float(mom.values[0])
        sd = math.sqrt(max(float(mom.values[1]) - m1**2, 0.0)) if n_moments > 1 else m1
        horizon = m1 + 12 * sd
    candidates: list[Candidate] = []
    for n in range(1, order_max + 1):
        for J in range(0, min(n_zero, n - 1) + 1):  # J >= n would leave no numerator
            if (method == "classical" and J > 0) or (method == "extended" and J == 0):
                continue
            K = 2 * n - 1 - J
            if K < 1 or K > n_moments:
                continue
            candidates.append(_candidate(target, n, J, K, dps, mom, zer, exact_data, horizon))
    certified = [c for c in candidates if c.status == Nonnegativity.NONNEGATIVE.value]
    best = None
    if certified:
        if target.pdf is not None:
            best = min(certified, key=lambda c: (c.distance, -(2 * c.order - 1 - c.zero_used)))
        else:
            best = max(certified, key=lambda c: (c.matched, c.order))
    report = FitReport(target, tuple(candidates), best, exactness=_exactness(exact_data))
    if best is None:
        if raise_if_none:
            raise NoCertifiedFit(report)
        return None, report
    return best.me, report


def _candidate(target: Target, n: int, J: int, K: int, dps: int, mom: Any, zer: Any,
               exact_data: bool, horizon: float) -> Candidate:
    """Fit order ``n`` from ``K`` moments and ``J`` values at zero, certify it, and describe it."""
    start = time.perf_counter()
    method = f"{TWO_POINT if J else CLASSICAL} + certified nonnegativity"
    exactness = _exactness(exact_data)
    try:
        result = pade_fit(target.moments[:K], order=n, zero=target.zero[:J], dps=dps)
        me = ME(result.lst)
        certificate = certify(me)
    except SymqError as exc:
        return Candidate(n, J, "FAILED", f"{type(exc).__name__}: {exc}",
                         seconds=time.perf_counter() - start, method=method,
                         exactness=exactness)
    unmatched, _ = mismatches(me.lst, mom.values, zer.values, exact_data, 1, MATCH_RTOL)
    reason = f"reduced to order {me.order}; " if me.order < n else ""
    distance = None
    if certificate.status is Nonnegativity.NONNEGATIVE:
        reason += f"certified ({certificate.method})"
        if target.pdf is not None:
            distance = l1_distance(me, target.pdf, horizon)
    else:
        reason += certificate.reason or certificate.method
    if unmatched:
        reason += "; does not reproduce " + ", ".join(unmatched)
    return Candidate(n, J, certificate.status.value, reason, me=me, distance=distance,
                     seconds=time.perf_counter() - start, unmatched=tuple(unmatched),
                     matched=len(mom.values) + len(zer.values) - len(unmatched), method=method,
                     exactness=exactness)


def _exactness(exact_data: bool) -> Exactness:
    """Exact arithmetic for exact data (:func:`~symq.me.pade.pade_fit` solves them exactly)."""
    return Exactness.EXACT if exact_data else Exactness.NUMERIC
