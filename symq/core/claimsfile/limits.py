"""Limits in claims files: ``lhs -> rhs`` as a parameter approaches a value, by extrapolation.

A limit claim (``statement = "lhs -> rhs"``, ``limit = { k = value }``) is never judged at its
last point: along each sequence of the region's points (the other parameters fixed) the left
side is extrapolated to the limit, with an error bar, and the extrapolated limit is compared with
the right side.

The approach variable
    ``t = |k - k0|`` for a finite limit ``k0`` (each side of ``k0`` is its own sequence), and
    ``t = 1/|k|`` for ``k -> oo`` or ``k -> -oo`` (written ``"oo"``, ``"inf"``, ``"+oo"``,
    ``"-oo"``, ``"-inf"``).
The model
    ``y(t) = L + c t^p + o(t^p)``, a power law in ``t``; when no power law fits and every
    ``t < 1``, the logarithmic rate ``y = L + c s^p`` in ``s = 1/log(1/t)`` is tried (as in
    ``E[T]/log(1/(1 - lam)) -> 1/log d``).
The extrapolation
    The points are thinned from the nearest outward so that successive ``t`` differ by a factor
    of at least :data:`THIN_RATIO`.  Each three successive points give an exponent ``p_j``
    (solving ``(y_j - y_{j+1}) / (y_{j+1} - y_{j+2}) = (t_j^p - t_{j+1}^p) / (t_{j+1}^p -
    t_{j+2}^p)``) and a limit ``L_j = y_{j+2} - (y_{j+1} - y_{j+2}) t_{j+2}^p / (t_{j+1}^p -
    t_{j+2}^p)``: Aitken's Delta^2 process where the ``t`` are geometric, Richardson's
    extrapolation with a fitted exponent otherwise (Brezinski & Redivo-Zaglia, *Extrapolation
    Methods*, North-Holland 1991, Sec. 2.1-2.3; Sidi, *Practical Extrapolation Methods*,
    Cambridge 2003, Ch. 1 and 15).
The check of the fit
    The three triples nearest the limit must give exponents that agree (within
    :data:`EXPONENT_SPREAD`), and their limits must approach each other: with ``D1 = |L_n -
    L_{n-1}|`` and ``D0 = |L_{n-1} - L_{n-2}|``, the ratio ``rho = D1/D0`` must be at most
    :data:`RHO_MAX`.  The error bar is ``SAFETY (D1 max(1, rho/(1 - rho)) + S)`` (the
    geometric tail of the extrapolations' own sequence, and ``S`` the change of the last
    extrapolation when redone with each of the three exponents; :data:`SAFETY` = 2) plus the
    rounding noise of the values amplified by the extrapolation.  Otherwise the limit is
    inconclusive with the reason: too few points, the sequence oscillates, the exponent drifts
    ("not yet in the asymptotic regime: add points
    nearer the limit, e.g. k = ...").

The verdict
    ``holds`` when the whole interval ``L +- error`` lies within the claim's tolerance of the
    right side, ``fails`` when the whole interval lies outside it, else ``inconclusive`` with the
    reason.  The tolerance is applied by :func:`~symq.core.tolerance.point_error`, as
    for an equality.  A right side that varies along a sequence is handled by extrapolating
    ``lhs - rhs`` and comparing ``rhs_n + (lhs - rhs)_oo`` with ``rhs_n`` at the nearest point.

Values are extrapolated at 50 significant digits (exact rationals are converted there, never
through floats); values computed from floating-point model results are taken to carry a relative
rounding noise of :data:`FLOAT_NOISE`.
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import sympy as sp

from ..claims import Evidence, Inconclusive, PointOutcome, Status, Verdict, displayable
from ..errors import InvalidParameter
from ..formula import Relation
from ..precision import local_mp, working_dps
from ..simstats import ConfidenceInterval
from ..tolerance import Tolerance, point_error
from .quantities import Function, Reference

if TYPE_CHECKING:
    from .region import Region

__all__ = [
    "EXPONENT_SPREAD",
    "FLOAT_NOISE",
    "INFINITY_WORDS",
    "MIN_POINTS",
    "RHO_MAX",
    "SAFETY",
    "THIN_RATIO",
    "Extrapolation",
    "LimitClaim",
    "approach",
    "check_limit_axis",
    "extrapolate",
    "limit_verdict",
    "parse_limit_target",
    "show_target",
]

#: Words read as an infinite limit (with an optional sign).
INFINITY_WORDS = ("oo", "inf", "infinity")
#: Successive approach variables used in one extrapolation differ by at least this factor.
THIN_RATIO = 2.0
#: Largest ratio of successive extrapolation differences accepted as converging.
RHO_MAX = 0.8
#: Largest relative spread of the three exponents nearest the limit.
EXPONENT_SPREAD = 0.1
#: Relative rounding noise of values computed from floating-point model results.
FLOAT_NOISE = 1e-12
#: Factor applied to the error bar's estimate (the extrapolations' tail and the exponent's
#: spread): the sum of ``lam^(d^i)`` behind ``E[T] -> log(1/(1-lam))/log d`` has a small
#: log-periodic term that no power law models, and needs it.
SAFETY = 2
#: Points (after thinning) an extrapolation with an error bar needs: three triples.
MIN_POINTS = 5
_P_MIN, _P_MAX = 0.05, 40.0
_DPS = 50


class LimitClaim(Protocol):
    """What :func:`limit_verdict` reads of a claim: its relation ``lhs -> rhs``, the limit
    ``{name: target}``, the region's points, both sides at a point, and the fields a
    :class:`~symq.core.claims.Verdict` reports (a
    :class:`~symq.core.claimsfile.claim.FileClaim` is one)."""

    paper: str
    name: str
    source: str
    expected: Status
    tolerance: float
    relation: Relation | None
    limit: dict[str, float]
    quantities: dict[str, Any]
    tolerance_spec: Tolerance

    @property
    def evidences(self) -> tuple[Evidence, ...]:
        """The kinds of evidence behind the verdict."""

    def points(self) -> list[Mapping[str, Any]]:
        """The region's points."""

    def evaluate_sides(self, point: Mapping[str, Any]) -> tuple[PointOutcome, Any, Any]:
        """The outcome at ``point`` and both sides as computed."""

    def compared_text(self) -> str:
        """What is compared, as a verdict shows it."""


def show_target(target: float) -> str:
    """The limit as written in a verdict: ``oo``, ``-oo`` or the number (``%g``)."""
    if math.isinf(target):
        return "oo" if target > 0 else "-oo"
    return f"{target:g}"


def parse_limit_target(where: str, value: Any) -> float:
    """The limit value as written: a finite number, or ``"oo"``/``"inf"`` (``+``/``-``)."""
    if isinstance(value, str):
        word = value.strip().lower()
        sign = -1.0 if word.startswith("-") else 1.0
        if word.lstrip("+-") in INFINITY_WORDS and word.count("-") + word.count("+") <= 1:
            return sign * math.inf
        raise InvalidParameter(where, value, "a number, or \"oo\" / \"-oo\" for a limit at "
                               "infinity")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameter(where, value, "a number, or \"oo\" / \"-oo\" for a limit at "
                               "infinity")
    value = float(value)
    if math.isnan(value):
        raise InvalidParameter(where, value, "a number, or \"oo\" / \"-oo\"")
    return value


def check_limit_axis(where: str, region: Region, name: str, target: float) -> None:
    """Refuse a region axis that cannot approach ``target``: random or word-valued, fewer than
    three values, a value at the limit itself, or (for ``+-oo``) a value of the wrong sign."""
    axis = region.axis(name)
    key = f"{where}.region.{name}"
    if axis.random or not axis.numeric or (axis.values and isinstance(axis.values[0], tuple)):
        raise InvalidParameter(key, axis.describe(), "a grid of numbers approaching the limit "
                               f"{name} -> {show_target(target)}")
    values = sorted({float(v) for v in axis.values})
    if len(values) < 3:
        raise InvalidParameter(key, list(axis.values), "at least three grid values "
                               "approaching the limit (an extrapolation fits three; "
                               f"{MIN_POINTS} give it an error bar)")
    if math.isinf(target):
        wrong = [v for v in values if (v <= 0 if target > 0 else v >= 0)]
        if wrong:
            raise InvalidParameter(key, wrong[0], f"values {'> 0' if target > 0 else '< 0'} "
                                   f"growing toward {name} -> {show_target(target)} (a log "
                                   "grid such as \"10:1e6\")")
    elif target in values:
        raise InvalidParameter(key, target, f"values other than the limit {name} = "
                               f"{target:g} itself", "the limit is approached, not evaluated")


def approach(value: Any, target: float) -> Any:
    """The approach variable at the parameter value ``value`` (an mpf at the context's
    precision): ``|value - target|``, or ``1/|value|`` for an infinite target."""
    ctx = local_mp()
    v = ctx.mpf(int(value)) if isinstance(value, numbers.Integral) else ctx.mpf(repr(float(value)))
    if math.isinf(target):
        return 1 / abs(v)
    return abs(v - ctx.mpf(repr(target)))


# ----------------------------------------------------------------------------- extrapolation

@dataclass
class Extrapolation:
    """The extrapolated limit of one sequence, or why there is none.

    Attributes
    ----------
    value : mpf or None
        The extrapolated limit (None when it could not be extrapolated).
    error : mpf or None
        Its error bar (half-width).
    order : float or None
        The fitted exponent ``p`` of ``c t^p`` (of ``c s^p`` when ``variable`` is logarithmic).
    variable : str
        ``"t"`` or ``"1/log(1/t)"``.
    reason : str
        Why no limit was extrapolated (empty when ``value`` is given).
    estimates : list of mpf
        The extrapolations ``L_j`` of the three triples nearest the limit (farthest first).
    exponents : list
        Their exponents ``p_j`` (mpf; nan where a triple fits no power law, inf
        where it has settled).
    used : int
        The points used after thinning.
    """

    value: Any = None
    error: Any = None
    order: float | None = None
    variable: str = "t"
    reason: str = ""
    estimates: list[Any] = field(default_factory=list)
    exponents: list[Any] = field(default_factory=list)
    used: int = 0

    @property
    def ok(self) -> bool:
        return self.value is not None


def _thin(ts: Sequence[Any], ys: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """From the nearest point outward, keep points whose ``t`` is at least :data:`THIN_RATIO`
    times the last kept one; returned farthest first."""
    order = sorted(range(len(ts)), key=lambda i: ts[i])
    kept = [order[0]]
    for i in order[1:]:
        if ts[i] >= THIN_RATIO * ts[kept[-1]]:
            kept.append(i)
    kept.reverse()
    return [ts[i] for i in kept], [ys[i] for i in kept]


def _exponent(t0: Any, t1: Any, t2: Any, q: Any) -> Any:
    """The ``p`` in ``[_P_MIN, _P_MAX]`` with ``(t0^p - t1^p)/(t1^p - t2^p) = q`` (bisection;
    the ratio grows with ``p``), or None."""
    def g(p: float) -> Any:
        return (t0 ** p - t1 ** p) / (t1 ** p - t2 ** p)

    ctx = local_mp()
    lo, hi = ctx.mpf(_P_MIN), ctx.mpf(_P_MAX)
    if not g(lo) <= q <= g(hi):
        return None
    for _ in range(ctx.prec + 8):  # to the working precision (the ratio is exact at 50 digits)
        mid = (lo + hi) / 2
        if g(mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _power_law(ts: list[Any], ys: list[Any], noise: Any) -> Extrapolation:
    """Extrapolate ``ys`` (at ``ts``, farthest first, thinned) to ``t = 0``."""
    ctx = local_mp()
    n = len(ts)
    out = Extrapolation(used=n)
    if n < 3:
        out.reason = f"{n} points after thinning; an extrapolation needs at least 3"
        return out
    diffs = [ys[i] - ys[i + 1] for i in range(n - 1)]
    floor = [noise * (abs(ys[i]) + abs(ys[i + 1])) * 4 for i in range(n - 1)]
    settled = [abs(d) <= f for d, f in zip(diffs, floor)]
    for j in range(max(0, n - 5), n - 2):  # the three triples nearest the limit
        d1, d2 = diffs[j], diffs[j + 1]
        if settled[j] and settled[j + 1]:
            out.exponents.append(math.inf)
            out.estimates.append(ys[j + 2])
            continue
        if settled[j + 1] or d1 == 0 or (d1 > 0) != (d2 > 0):
            out.exponents.append(math.nan)
            out.estimates.append(None)
            continue
        p = _exponent(ts[j], ts[j + 1], ts[j + 2], d1 / d2)
        if p is None:
            out.exponents.append(math.nan)
            out.estimates.append(None)
            continue
        w = ts[j + 2] ** p / (ts[j + 1] ** p - ts[j + 2] ** p)
        out.exponents.append(p)
        out.estimates.append(ys[j + 2] - d2 * w)
    last = out.estimates[-3:]
    exps = out.exponents[-3:]
    near = list(zip(diffs, settled))[-4:]  # the differences the last three triples use
    signs = [d > 0 for d, s in near if not s]
    flips = sum(a != b for a, b in itertools.pairwise(signs))
    if flips:
        out.reason = (f"the sequence oscillates (its differences change sign {flips} times); a "
                      "power law does not describe it")
        return out
    if any(e is None for e in last):
        bad = [p for p in exps if not math.isinf(p)]
        out.reason = ("no power law c t^p with p in "
                      f"[{_P_MIN:g}, {_P_MAX:g}] fits the points nearest the limit"
                      + (" (it converges more slowly)" if bad else ""))
        return out
    if n < MIN_POINTS:
        out.value = None
        out.order = float(exps[-1])
        out.reason = (f"{n} usable points (successive t at least {THIN_RATIO:g}x apart); an "
                      f"extrapolation with an error bar needs {MIN_POINTS}")
        return out
    finite = [p for p in exps if math.isfinite(p)]
    if finite and max(finite) - min(finite) > EXPONENT_SPREAD * max(finite):
        out.order = float(finite[-1])
        out.reason = ("the fitted exponent drifts over the points nearest the limit ("
                      + ", ".join(f"{float(p):.3g}" for p in finite)
                      + "): not yet in the asymptotic regime")
        return out
    d1 = abs(last[2] - last[1])
    d0 = abs(last[1] - last[0])
    amplify = 1
    if finite:
        p = finite[-1]
        amplify = 1 + 2 * abs(ts[-1] ** p / (ts[-2] ** p - ts[-1] ** p))
    rounding = noise * abs(ys[-1]) * 4 * amplify
    if d1 <= rounding:
        rho = ctx.mpf(0)
    elif d0 <= rounding:
        out.order = float(finite[-1]) if finite else None
        out.reason = "the extrapolations do not settle (the last one moved after two agreed)"
        return out
    else:
        rho = d1 / d0
    if rho > RHO_MAX:
        out.order = float(finite[-1]) if finite else None
        out.reason = (f"the extrapolations converge too slowly (successive differences "
                      f"{ctx.nstr(d0, 2)}, {ctx.nstr(d1, 2)}): not yet in the asymptotic regime")
        return out
    # the exponent's own uncertainty: the last extrapolation redone with each recent exponent
    spread = ctx.mpf(0)
    for q in finite:
        w = ts[-1] ** q / (ts[-2] ** q - ts[-1] ** q)
        spread = max(spread, abs(ys[-1] - diffs[-1] * w - last[2]))
    out.value = last[2]
    out.error = SAFETY * (d1 * max(1, rho / (1 - rho)) + spread) + rounding
    out.order = float(finite[-1]) if finite else math.inf
    return out


def extrapolate(ts: Sequence[Any], ys: Sequence[Any], noise: float = 0.0) -> Extrapolation:
    """The limit of ``ys`` as ``ts -> 0`` with an error bar (see the module docstring).

    Parameters
    ----------
    ts : sequence of numbers
        The approach variable at each point (positive, distinct).
    ys : sequence of numbers
        The values (sympy Rationals, mpf or floats), converted to 50-digit mpf.
    noise : float
        The relative rounding noise of the values (0 for exact or 50-digit values).

    Returns
    -------
    Extrapolation
        With ``value`` and ``error``, or with ``reason`` when no limit can be extrapolated.
    """
    with working_dps(_DPS) as ctx:
        t = [ctx.mpf(x) if not isinstance(x, sp.Rational) else ctx.mpf(x.p) / x.q for x in ts]
        y = [_mpf(ctx, v) for v in ys]
        eps = ctx.mpf(noise) + ctx.mpf(10) ** (-_DPS + 5)
        tt, yy = _thin(t, y)
        result = _power_law(tt, yy, eps)
        if result.ok or not all(x < 1 for x in t) or "oscillates" in result.reason:
            return result
        s = [1 / ctx.log(1 / x) for x in tt]
        slow = _power_law(s, yy, eps)
        if slow.ok:
            slow.variable = "1/log(1/t)"
            return slow
        return result


def _mpf(ctx: Any, value: Any) -> Any:
    if isinstance(value, sp.Rational):
        return ctx.mpf(int(value.p)) / int(value.q)
    if isinstance(value, sp.Float):
        return ctx.mpf(value._mpf_) if hasattr(value, "_mpf_") else ctx.mpf(str(value))
    if isinstance(value, (float, np.floating)):
        return ctx.mpf(float(value))
    if isinstance(value, numbers.Integral):
        return ctx.mpf(int(value))
    return ctx.mpf(value)


# ----------------------------------------------------------------------------- verdicts

@dataclass
class _Sequence:
    """The outcome of one sequence toward the limit."""

    status: Status
    error: float | None  # the extrapolated limit's error, in the tolerance's units
    detail: str
    nearest: Mapping[str, Any]
    limit: Any = None
    reference: Any = None
    values: str = ""


def _nearer(name: str, target: float, values: Sequence[Any]) -> str:
    """Two points nearer the limit than any of ``values``, as advice."""
    if math.isinf(target):
        far = max(abs(float(v)) for v in values) * (1 if target > 0 else -1)
        return f"{name} = {far * 10:g}, {far * 100:g}"
    near = min(values, key=lambda v: abs(float(v) - target))
    gap = float(near) - target
    return f"{name} = {target + gap / 10:g}, {target + gap / 100:g}"


def _number(value: Any) -> bool:
    return isinstance(value, (numbers.Real, sp.Rational, sp.Float)) and \
        not isinstance(value, bool) or hasattr(value, "_mpf_")


def _short(value: Any, digits: int = 10) -> str:
    with working_dps(_DPS) as ctx:
        return ctx.nstr(_mpf(ctx, value), digits)


def _sequence(claim: LimitClaim, name: str, target: float, members: list[Mapping[str, Any]],
              noise: float) -> tuple[_Sequence, list[PointOutcome]]:
    assert claim.relation is not None
    members = sorted(members, key=lambda p: -abs(float(p[name]) - target)
                     if math.isfinite(target) else abs(float(p[name])))
    nearest = members[-1]
    evaluated = [claim.evaluate_sides(p) for p in members]
    outcomes = [o for o, _, _ in evaluated]
    shown = " | ".join(f"{name}={float(o.point[name]):.12g}: "
                       + (_short(lhs, 6) if o.error is not None else "?")
                       for o, lhs, _ in evaluated[-12:])
    for o, lhs, rhs in evaluated:
        if o.error is None:
            return _Sequence(Status.INCONCLUSIVE, None, f"at {dict(o.point)}: {o.reason}",
                             o.point, values=shown), outcomes
        for side, value in (("left", lhs), ("right", rhs)):
            if not _number(value):
                what = ("a simulation estimate" if isinstance(value, ConfidenceInterval)
                        else type(value).__name__)
                return _Sequence(Status.INCONCLUSIVE, None, f"the {side} side is {what} at "
                                 f"{dict(o.point)}; a limit is extrapolated from numbers",
                                 o.point, values=shown), outcomes
    with working_dps(_DPS) as ctx:
        ts = [approach(p[name], target) for p in members]
        rhs_values = [r for _, _, r in evaluated]
        constant = all(r == rhs_values[-1] for r in rhs_values)
        if constant:
            ys = [lhs for _, lhs, _ in evaluated]
        else:
            ys = [_mpf(ctx, lhs) - _mpf(ctx, rhs) for _, lhs, rhs in evaluated]
    ex = extrapolate(ts, ys, noise)
    variable = ("1/k" if target > 0 else "-1/k") if math.isinf(target) else \
        f"|{name} - {target:g}|"
    variable = variable.replace("k", name)
    letter = "t"
    if ex.variable != "t":
        letter, variable = "s", f"1/log(1/t), t = {variable}"
    if not ex.ok:
        return _Sequence(Status.INCONCLUSIVE, None, f"no extrapolation toward {name} -> "
                         f"{show_target(target)}: {ex.reason}; add points nearer the limit, "
                         f"e.g. {_nearer(name, target, [p[name] for p in members])}",
                         nearest, values=shown), outcomes
    reference = rhs_values[-1]
    with working_dps(_DPS) as ctx:
        value = ex.value if constant else _mpf(ctx, reference) + ex.value
        low, high = value - ex.error, value + ex.error
        try:
            errors = [point_error(v, "->", reference, claim.tolerance_spec, 1)
                      for v in (value, low, high)]
        except Inconclusive as exc:
            return _Sequence(Status.INCONCLUSIVE, None, str(exc), nearest,
                             values=shown), outcomes
        inside = low <= _mpf(ctx, reference) <= high
    bound = claim.tolerance
    worst = max(errors[1:])
    best = 0.0 if inside else min(errors[1:])
    fit = (f"{claim.relation.lhs} -> {_short(value)} ± {_short(ex.error, 2)} as {name} -> "
           f"{show_target(target)} (error ~ c {letter}^{ex.order:.3g} with {letter} = {variable}, "
           f"{len(ex.estimates)} extrapolations from {ex.used} points)"
           if ex.order is not None and math.isfinite(ex.order) else
           f"{claim.relation.lhs} -> {_short(value)} ± {_short(ex.error, 2)} as {name} -> "
           f"{show_target(target)} (the values settled)")
    if worst <= bound:
        status, why = Status.HOLDS, (f"within the tolerance of {_short(reference)} over the "
                                     f"whole error bar (error {worst:.3g} <= {bound:.3g})")
    elif best > bound:
        status, why = Status.FAILS, (f"outside the tolerance of {_short(reference)} over the "
                                     f"whole error bar (error >= {best:.3g} > {bound:.3g})")
    else:
        status, why = Status.INCONCLUSIVE, (
            f"the error bar straddles the tolerance of {_short(reference)} (error "
            f"{best:.3g} to {worst:.3g}, tolerance {bound:.3g}); add points nearer the limit, "
            f"e.g. {_nearer(name, target, [p[name] for p in members])}")
    return _Sequence(status, errors[0], f"{fit}: {why}", nearest, displayable(value),
                     displayable(reference), shown), outcomes


def limit_verdict(claim: LimitClaim) -> Verdict:
    """The verdict of a limit claim (see the module docstring): each sequence toward the limit
    (the other parameters fixed, each side of a finite limit apart) is extrapolated; the claim
    fails when a sequence fails, is inconclusive when one is and none fails, else holds."""
    start = time.perf_counter()
    (name, target), = claim.limit.items()
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for p in claim.points():
        side = 0 if math.isinf(target) else (float(p[name]) > target)
        key = (tuple((k, repr(v)) for k, v in p.items() if k != name), side)
        groups.setdefault(key, []).append(p)
    floats = any(isinstance(q, (Reference, Function)) for q in claim.quantities.values())
    noise = FLOAT_NOISE if floats else 0.0
    sequences, outcomes = [], []
    for members in groups.values():
        seq, outs = _sequence(claim, name, target, members, noise)
        sequences.append(seq)
        outcomes += outs
    fails = [s for s in sequences if s.status is Status.FAILS]
    undecided = [s for s in sequences if s.status is Status.INCONCLUSIVE]
    if fails:
        status, chosen = Status.FAILS, max(fails, key=lambda s: s.error or 0.0)
    elif undecided:
        status, chosen = Status.INCONCLUSIVE, undecided[0]
    else:
        status, chosen = Status.HOLDS, max(sequences, key=lambda s: s.error or 0.0)
    detail = chosen.detail
    if len(sequences) > 1:
        detail += (f" ({len(sequences)} sequences: {len(fails)} fail, {len(undecided)} "
                   "inconclusive)")
    detail += f"; values along {name} -> {show_target(target)}: {chosen.values}"
    verdict = Verdict(claim.paper, claim.name, status, chosen.error, claim.evidences, detail,
                      time.perf_counter() - start, dict(chosen.nearest), claim.tolerance,
                      len(outcomes), claim.source, claim.expected, claim.compared_text(),
                      claimed_value=chosen.limit, reference_value=chosen.reference,
                      n_inconclusive=sum(o.error is None for o in outcomes),
                      side_names=("extrapolated limit", "right side"))
    verdict.points = outcomes  # the per-point table (both sides and the error at each point)
    return verdict
