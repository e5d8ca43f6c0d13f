"""How the two sides of a claim are compared at one point: tolerances, inequalities, intervals.

A claim ``lhs OP rhs`` is checked at each point of its region with a :class:`Tolerance`:

* ``relative = r``: ``|lhs - rhs| <= r |rhs|`` (for ``==``); ``lhs <= rhs + r |rhs|`` (for ``<=``);
* ``absolute = a``: the same with ``a`` in place of ``r |rhs|``; with both, the error is
  ``|lhs - rhs| / max(|rhs|, a/r)``, compared with ``r`` (relative for large values, absolute
  near zero);
* ``ci = L`` ("within the confidence interval"): a side that is a simulation estimate (a
  :class:`~symq.core.simstats.ConfidenceInterval`) is compared at the *family* confidence ``L``
  over the claim's ``n`` points: every interval is widened to the Bonferroni level
  ``1 - (1 - L)/n`` (Student t with the interval's own degrees of freedom), so that a claim that
  is true fails with probability at most ``1 - L`` however many points it has.  ``==`` holds at a
  point when the other side lies in the widened interval (two estimates: when their difference's
  interval, half-widths added in quadrature, contains 0), and the error is the distance in
  widened half-widths.  Given with ``relative`` or ``absolute``, the interval's half-width is
  granted on top of the numeric tolerance.

An inequality with a simulation side has three outcomes at a point: it holds when the whole
interval of ``lhs - rhs`` satisfies it, fails when the whole interval violates it (the error is
the violation in half-widths beyond the interval), and is undecided otherwise (the simulation is
too short to separate the two sides: run it longer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import sympy as sp
from scipy import stats

from ..claims import Inconclusive
from ..errors import InvalidParameter
from ..precision import local_mp, working_dps
from ..simstats import ConfidenceInterval

__all__ = ["Tolerance", "parse_tolerance", "point_error", "widen"]

_KEYS = ("relative", "absolute", "ci")


@dataclass(frozen=True)
class Tolerance:
    """The accuracy a claim asks for (see the module docstring)."""

    relative: float | None = None
    absolute: float | None = None
    ci: float | None = None

    @property
    def interval_only(self) -> bool:
        return self.ci is not None and self.relative is None and self.absolute is None

    def bound(self, op: str) -> float:
        """The largest error that holds, in the units :func:`point_error` returns."""
        if self.interval_only:
            return 1.0 if op in ("==", "->") else 0.0
        return self.relative if self.relative is not None else float(self.absolute or 0.0)

    def describe(self) -> str:
        parts = []
        if self.relative is not None:
            parts.append(f"relative {self.relative:g}")
        if self.absolute is not None:
            parts.append(f"absolute {self.absolute:g}")
        if self.ci is not None:
            parts.append(f"within the {100 * self.ci:g}% (family) confidence intervals")
        return ", ".join(parts)


def parse_tolerance(where: str, spec: Any) -> Tolerance:
    """A tolerance as written: a number (relative), or a table with ``relative``,
    ``absolute`` and/or ``ci`` (the family confidence level, e.g. 0.95), or the word
    ``"ci"`` (95%)."""
    if spec is None:
        return Tolerance(relative=1e-9)
    if spec == "ci":
        return Tolerance(ci=0.95)
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        spec = {"relative": spec}
    if not isinstance(spec, Mapping) or not spec:
        raise InvalidParameter(where, spec, "a number (relative tolerance), \"ci\", or a table "
                               "with relative, absolute and/or ci")
    unknown = [k for k in spec if k not in _KEYS]
    if unknown:
        raise InvalidParameter(f"{where}.{unknown[0]}", spec[unknown[0]],
                               "one of the keys " + ", ".join(_KEYS), "unknown key")
    values: dict[str, float] = {}
    for key in _KEYS:
        if key not in spec:
            continue
        value = spec[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            raise InvalidParameter(f"{where}.{key}", value, "a nonnegative real number")
        if key == "ci" and not 0 < value < 1:
            raise InvalidParameter(f"{where}.ci", value, "a confidence level in (0, 1), e.g. 0.95")
        values[key] = float(value)
    return Tolerance(**values)


def widen(ci: ConfidenceInterval, level: float) -> float:
    """The half-width of ``ci`` at confidence ``level`` (Student t, ``ci.n - 1`` degrees of
    freedom; a normal quantile when ``n`` is unknown)."""
    if ci.half_width == 0:
        return 0.0
    if ci.n and ci.n > 1:
        ratio = stats.t.ppf((1 + level) / 2, ci.n - 1) / stats.t.ppf((1 + ci.level) / 2, ci.n - 1)
    else:
        ratio = stats.norm.ppf((1 + level) / 2) / stats.norm.ppf((1 + ci.level) / 2)
    return float(ci.half_width * ratio)


def _difference(a: Any, b: Any) -> Any:
    """``a - b`` exactly when both are rationals, at 50 digits otherwise."""
    if isinstance(a, sp.Rational) and isinstance(b, sp.Rational):
        return a - b
    with working_dps(50):
        ctx = local_mp()
        return ctx.mpf(_exact_text(a)) - ctx.mpf(_exact_text(b))


def _exact_text(value: Any) -> Any:
    if isinstance(value, sp.Rational):
        return value.evalf(60)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return value


def _scale(b: float, tolerance: Tolerance) -> float:
    if tolerance.relative is not None and tolerance.absolute is not None:
        return max(abs(b), tolerance.absolute / tolerance.relative) if tolerance.relative else 1.0
    if tolerance.relative is not None:
        return abs(b) if b != 0 else 1.0
    return 1.0


def point_error(lhs: Any, op: str, rhs: Any, tolerance: Tolerance, n_points: int) -> float:
    """The error of ``lhs OP rhs`` at one point, in the units of ``tolerance.bound(op)``.

    Raises
    ------
    Inconclusive
        When a simulation estimate cannot decide an inequality, when the tolerance is "within
        the CI" and neither side is an estimate, or when the sides have different shapes.
    """
    if op in (">=", ">"):
        lhs, rhs, op = rhs, lhs, {">=": "<=", ">": "<"}[op]
    arrays = [isinstance(v, np.ndarray) for v in (lhs, rhs)]
    if any(arrays):
        a = np.asarray(lhs if arrays[0] else [lhs], dtype=float).ravel()
        b = np.asarray(rhs if arrays[1] else [rhs], dtype=float).ravel()
        if a.size != b.size and min(a.size, b.size) != 1:
            raise Inconclusive(f"the sides have {a.size} and {b.size} entries")
        a, b = np.broadcast_arrays(a, b)
        return max(point_error(float(x), op, float(y), tolerance, n_points)
                   for x, y in zip(a, b))
    intervals = [v for v in (lhs, rhs) if isinstance(v, ConfidenceInterval)]
    if intervals:
        return _interval_error(lhs, op, rhs, tolerance, n_points)
    if tolerance.interval_only:
        raise Inconclusive("the tolerance is 'within the confidence interval' but neither side "
                           "is a simulation estimate; give a relative or absolute tolerance")
    gap = _difference(lhs, rhs)
    scale = _scale(float(rhs), tolerance)
    if op in ("==", "->"):
        return float(abs(gap)) / scale
    if op == "<=":
        return max(0.0, float(gap)) / scale
    # strict: equality violates it
    return max(float(gap) / scale, 5e-324) if gap >= 0 else 0.0


def _interval_error(lhs: Any, op: str, rhs: Any, tolerance: Tolerance, n_points: int) -> float:
    level = tolerance.ci if tolerance.ci is not None else 0.95
    per_point = 1 - (1 - level) / max(n_points, 1)
    means, halves = [], []
    for side in (lhs, rhs):
        if isinstance(side, ConfidenceInterval):
            means.append(float(side.mean))
            halves.append(widen(side, per_point))
        else:
            means.append(float(side))
            halves.append(0.0)
    gap = means[0] - means[1]
    half = math.hypot(*halves)
    numeric = not tolerance.interval_only
    scale = _scale(means[1], tolerance)
    slack = tolerance.bound(op) * scale if numeric else 0.0
    if op in ("==", "->"):
        if numeric:
            return max(0.0, abs(gap) - half) / scale
        if half == 0:
            return 0.0 if gap == 0 else math.inf
        return abs(gap) / half
    if gap + half <= slack and not (op == "<" and gap + half == slack):
        return 0.0
    if gap - half > slack or (op == "<" and gap - half >= slack):
        if numeric:  # the violation beyond the interval, relative: above the bound
            return max((gap - half) / scale, math.nextafter(tolerance.bound(op), math.inf))
        return (gap - half) / half if half > 0 else math.inf
    raise Inconclusive(f"the simulation cannot decide: lhs - rhs = {gap:.4g} ± {half:.2g} "
                       f"({100 * per_point:.3g}% per point); run it longer (more n_jobs)")
