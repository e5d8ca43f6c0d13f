"""How the two sides of a claim are compared at one point: tolerances, inequalities, intervals.

A claim ``a OP b`` is checked at each point of its region with a :class:`Tolerance`.  The rule
is symmetric in the two sides (``a == b`` and ``b == a`` get the same verdict):

* ``relative = r``: ``|a - b| <= r max(|a|, |b|)``;
* ``absolute = t``: ``|a - b| <= t``;
* both: ``|a - b| <= max(t, r max(|a|, |b|))`` (relative for large values, absolute near zero);
* an inequality ``a <= b`` holds when ``a - b <= max(t, r max(|a|, |b|))`` (the tolerance shifts
  the bound; ``>=`` swaps the sides); a strict ``<`` also refuses equality.

The error a verdict reports is in the claim's own units: ``|a - b| / max(|a|, |b|)`` (with both
keys, ``|a - b| / max(|a|, |b|, t/r)``), compared with ``r``; ``|a - b|`` compared with ``t`` when
only ``absolute`` is given.  Without a ``tolerance`` key the tolerance is relative ``1e-9``.

**Simulation evidence** (a side that is a :class:`~symq.core.simstats.ConfidenceInterval`) is
judged by *equivalence testing* (Wellek, *Testing Statistical Hypotheses of Equivalence and
Noninferiority*, 2nd ed., CRC 2010, Section 1.6; Schuirmann's two one-sided tests, J.
Pharmacokinet. Biopharm. 15 (1987) 657-680): the interval of ``a - b`` at the per-point level
(below) is compared with the *tolerance band*, the set of values of ``a - b`` the tolerance
accepts.  The claim

* **holds** at a point when the whole interval lies inside the band,
* **fails** when the whole interval lies outside it,
* is **inconclusive** otherwise: the run is too short to resolve the tolerance; the reason gives
  the run length that would decide (the half-width shrinks as ``1/sqrt(n_jobs)``, so about
  ``run_length (half_width / needed)^2`` with a margin of :data:`RUN_MARGIN`), and an interval
  whose own run diagnostics doubt it (``ConfidenceInterval.doubt``) is inconclusive with that
  doubt as the reason.

Every equality (``==``, ``->``) against a simulation must state a numeric tolerance
(``relative`` and/or ``absolute``): a simulation never proves equality, only equivalence within
a band, so ``ci`` alone is an input error (:class:`ToleranceRequired`).  ``ci = L`` sets the
*family* confidence level (default 0.95) over the claim's ``n`` points: every interval is widened
to the Bonferroni level ``1 - (1 - L)/n`` (Student t with the interval's own degrees of freedom),
so that the probability that any interval of the claim misses its true value is at most
``1 - L`` (Bonferroni's inequality), and a verdict built from intervals that all cover is right:
a true claim fails, and a false claim holds, with probability at most ``1 - L`` whatever the
number of points.  With two simulated sides the difference's half-width adds the two in
quadrature (independent runs), and the band is taken at the smallest plausible
``max(|a|, |b|)`` for "holds" and the largest for "fails".  Each such verdict states its
*resolution*: the family-level half-width relative to the compared value ("this run detects
differences >= 0.8%").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import sympy as sp

from .approximate import Approximate, approximate_point_error
from .errors import Inconclusive, InvalidParameter
from .precision import local_mp, working_dps
from .simstats import ConfidenceInterval

__all__ = [
    "DEFAULT_RELATIVE",
    "RUN_MARGIN",
    "PointError",
    "Tolerance",
    "ToleranceRequired",
    "exact_difference",
    "parse_tolerance",
    "point_error",
    "widen",
]

_KEYS = ("relative", "absolute", "ci")
#: The relative tolerance of a claim without a ``tolerance`` key.
DEFAULT_RELATIVE = 1e-9
#: Factor on the run length predicted to decide an inconclusive simulation claim (the estimate
#: itself moves when the run is longer).
RUN_MARGIN = 1.5
_EXAMPLE = "tolerance = { relative = 0.02, ci = 0.95 }"


class ToleranceRequired(InvalidParameter):
    """An equality against a simulation without a relative or absolute tolerance (``ci``
    alone, or no tolerance): bad input, reported when the claim is checked."""


class PointError(float):
    """The error at a point (a float, in the units of :meth:`Tolerance.bound`), with what the
    simulation evidence could resolve there.

    Attributes
    ----------
    resolution : float or None
        Family-level half-width of ``a - b`` relative to the compared value (None: no
        simulation side, or a compared value of 0 with ``absolute_resolution`` set).
    absolute_resolution : float or None
        The family-level half-width of ``a - b`` itself (None: no simulation side).
    """

    resolution: float | None
    absolute_resolution: float | None

    def __new__(cls, value: float, resolution: float | None = None,
                absolute_resolution: float | None = None) -> PointError:
        self = super().__new__(cls, value)
        self.resolution = resolution
        self.absolute_resolution = absolute_resolution
        return self


@dataclass(frozen=True)
class Tolerance:
    """The accuracy a claim asks for (see the module docstring).

    ``stated`` is False for the default tolerance of a claim without a ``tolerance`` key;
    ``where`` is the key as the user wrote it (``claims[2].tolerance``), for error messages.
    """

    relative: float | None = None
    absolute: float | None = None
    ci: float | None = None
    stated: bool = True
    where: str = field(default="tolerance", compare=False)

    @property
    def numeric(self) -> bool:
        """Whether a relative or absolute tolerance is given."""
        return self.relative is not None or self.absolute is not None

    @property
    def interval_only(self) -> bool:
        return self.ci is not None and not self.numeric

    @property
    def level(self) -> float:
        """The family confidence level of simulation evidence (0.95 unless ``ci`` is given)."""
        return self.ci if self.ci is not None else 0.95

    @property
    def _mixed(self) -> bool:
        return bool(self.relative) and self.absolute is not None

    def bound(self, op: str) -> float:
        """The largest error that holds, in the units :func:`point_error` returns: the relative
        tolerance when one is given (and nonzero with an absolute one), else the absolute one,
        else 0 (``ci`` alone: an inequality must hold for the whole interval)."""
        if self.relative is not None and (self.absolute is None or self.relative > 0):
            return self.relative
        return float(self.absolute) if self.absolute is not None else 0.0

    def units(self) -> str:
        """``"relative"`` or ``"absolute"``: how the error and :meth:`bound` are measured."""
        return "relative" if self.relative is not None and (
            self.absolute is None or self.relative > 0) else "absolute"

    def scale(self, magnitude: float) -> float:
        """The divisor of ``|a - b|`` when ``max(|a|, |b|) = magnitude``."""
        if self.units() == "relative":  # both sides 0 (and t = 0): the gap is 0 too
            scale = max(magnitude, self.floor())
            return scale if scale > 0 else 1.0
        return 1.0

    def floor(self) -> float:
        """``t/r``: below this ``max(|a|, |b|)`` the absolute tolerance decides (0 without
        one)."""
        if not self._mixed:
            return 0.0
        try:
            return float(self.absolute) / float(self.relative)  # type: ignore
        except OverflowError:  # pragma: no cover - a subnormal relative tolerance
            return math.inf

    def allowed(self, magnitude: float) -> float:
        """The largest ``|a - b|`` accepted when ``max(|a|, |b|) = magnitude``:
        ``max(t, r magnitude)``."""
        if self.units() == "relative":
            return max(float(self.absolute or 0.0), float(self.relative) * magnitude)  # type: ignore
        return float(self.absolute or 0.0)

    def written(self) -> str:
        """The tolerance as a claims file writes it (``{ ci = 0.95 }``; ``none`` for the
        default)."""
        if not self.stated:
            return "none"
        keys = [f"{k} = {v:g}" for k, v in (("relative", self.relative),
                                             ("absolute", self.absolute), ("ci", self.ci))
                if v is not None]
        return "{ " + ", ".join(keys) + " }"

    def describe(self) -> str:
        parts = []
        if self.relative is not None:
            parts.append(f"relative {self.relative:g}" + ("" if self.stated else " (default)"))
        if self.absolute is not None:
            parts.append(f"absolute {self.absolute:g}")
        if self.ci is not None:
            parts.append(f"simulations at the {100 * self.ci:g}% family confidence level")
        return ", ".join(parts)


def parse_tolerance(where: str, spec: Any) -> Tolerance:
    """A tolerance as written: a number (relative), or a table with ``relative``,
    ``absolute`` and/or ``ci`` (the family confidence level, e.g. 0.95), or the word
    ``"ci"`` (95%)."""
    if spec is None:
        return Tolerance(relative=DEFAULT_RELATIVE, stated=False, where=where)
    if spec == "ci":
        return Tolerance(ci=0.95, where=where)
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        spec = {"relative": spec}
    if not isinstance(spec, Mapping) or not spec:
        raise InvalidParameter(where, spec, "a number (relative tolerance), \"ci\", or a table "
                               "with relative, absolute and/or ci")
    unknown = [k for k in spec if k not in _KEYS]
    if unknown:
        raise InvalidParameter(f"{where}.{unknown[0]}", spec[unknown[0]],
                               "one of the keys " + ", ".join(_KEYS), "unknown key")
    values: dict[str, Any] = {}
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
    return Tolerance(**values, where=where)


def widen(ci: ConfidenceInterval, level: float) -> float:
    """The half-width of ``ci`` at confidence ``level`` (Student t, ``ci.n - 1`` degrees of
    freedom; a normal quantile when ``n`` is unknown)."""
    if ci.half_width == 0:
        return 0.0
    # lazy: scipy.stats takes 0.5 s to import (import symq stays fast)
    from scipy import stats

    if ci.n and ci.n > 1:
        ratio = stats.t.ppf((1 + level) / 2, ci.n - 1) / stats.t.ppf((1 + ci.level) / 2, ci.n - 1)
    else:
        ratio = stats.norm.ppf((1 + level) / 2) / stats.norm.ppf((1 + ci.level) / 2)
    return float(ci.half_width * ratio)


def exact_difference(a: Any, b: Any) -> Any:
    """``a - b`` exactly when both are rationals, at 50 digits otherwise (an mpmath number): the
    difference every comparison of a claim's sides starts from, and the region's ``where``
    constraints too."""
    if isinstance(a, sp.Rational) and isinstance(b, sp.Rational):
        return a - b
    with working_dps(50):
        return _mp(a) - _mp(b)


def _mp(value: Any) -> Any:
    """``value`` as a 50-digit mpf (exact rationals and float reprs are read digit by digit)."""
    ctx = local_mp()
    if isinstance(value, sp.Rational):
        return ctx.mpf(int(value.p)) / int(value.q)
    if isinstance(value, (float, np.floating)):
        return ctx.mpf(repr(float(value)))
    if isinstance(value, sp.Basic):
        return ctx.mpf(str(value.evalf(60)))
    return ctx.mpf(value)


def point_error(lhs: Any, op: str, rhs: Any, tolerance: Tolerance, n_points: int) -> float:
    """The error of ``lhs OP rhs`` at one point, in the units of ``tolerance.bound(op)``:
    the claim holds there when the error is at most the bound (see the module docstring).

    Returns a :class:`PointError` (a float) carrying the resolution when a side is a simulation
    estimate.

    Raises
    ------
    Inconclusive
        When a simulation estimate cannot decide (with the run length that would), when its
        interval is doubtful, when the tolerance is "within the CI" and neither side is an
        estimate, or when the sides have different shapes.
    ToleranceRequired
        An equality against a simulation estimate without a relative or absolute tolerance.
    """
    if isinstance(lhs, Approximate) or isinstance(rhs, Approximate):
        # a sum or an integral with an error bar: decided only when the bar cannot change it
        return approximate_point_error(lhs, op, rhs, tolerance, n_points, point_error)
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
    if isinstance(lhs, ConfidenceInterval) or isinstance(rhs, ConfidenceInterval):
        return _interval_error(lhs, op, rhs, tolerance, n_points)
    if tolerance.interval_only:
        raise Inconclusive("the tolerance is 'within the confidence interval' but neither side "
                           "is a simulation estimate; give a relative or absolute tolerance")
    with working_dps(50):
        a, b = _mp(lhs), _mp(rhs)
        gap = a - b
        magnitude = max(abs(a), abs(b))
        scale = _scale_mp(tolerance, magnitude)
        if op in ("==", "->"):
            return float(abs(gap) / scale)
        if op == "<=":
            return float(max(gap, 0) / scale)
        # strict: equality violates it
        return max(float(gap / scale), 5e-324) if gap >= 0 else 0.0


def _scale_mp(tolerance: Tolerance, magnitude: Any) -> Any:
    if tolerance.units() == "relative":  # both sides 0 (and t = 0): the gap is 0 too
        floor = _mp(float(cast(float, tolerance.absolute))) \
            / _mp(float(cast(float, tolerance.relative))) \
            if tolerance._mixed else 0  # t/r at 50 digits: no overflow for a tiny r
        scale = max(magnitude, floor)
        return scale if scale > 0 else 1
    return 1


# ----------------------------------------------------------------------------- simulation

def _band(c: float, tolerance: Tolerance) -> tuple[float, float]:
    """The values ``s`` with ``|s - c| <= max(t, r max(|s|, |c|))`` around ``c``: an interval
    ``[low, high]`` (for ``r >= 1`` the set is unbounded on the side of ``c``'s sign; its
    component that contains ``c`` is returned)."""
    if tolerance.units() == "relative":
        r, t = float(tolerance.relative), float(tolerance.absolute or 0.0)  # type: ignore
    else:
        r, t = 0.0, float(tolerance.absolute or 0.0)
    if r >= 1 and c == 0:
        return -math.inf, math.inf
    near = max(t, r * abs(c))  # toward zero: max(|s|, |c|) = |c|
    far = math.inf if r >= 1 else max(t, abs(c) * r / (1 - r))  # away from zero: |s| > |c|
    return (c - near, c + far) if c > 0 else (c - far, c + near)


def _interval_error(lhs: Any, op: str, rhs: Any, tolerance: Tolerance, n_points: int) -> float:
    """Equivalence (or inequality) test of a simulation estimate (module docstring)."""
    sims = [v for v in (lhs, rhs) if isinstance(v, ConfidenceInterval)]
    for ci in sims:
        if ci.doubt:
            raise Inconclusive(f"the simulation's own diagnostics doubt its interval "
                               f"({ci}): {ci.doubt}")
    equality = op in ("==", "->")
    if equality and not (tolerance.numeric and tolerance.stated):
        raise ToleranceRequired(
            tolerance.where, tolerance.written(),
            f"a relative and/or absolute tolerance for an equality against a simulation, "
            f"e.g. {_EXAMPLE}",
            "a simulation cannot prove equality, only that its interval lies within a band; "
            "ci alone sets the family confidence level")
    per_point = 1 - (1 - tolerance.level) / max(n_points, 1)
    means = [float(v.mean) if isinstance(v, ConfidenceInterval) else float(v) for v in (lhs, rhs)]
    halves = [widen(v, per_point) if isinstance(v, ConfidenceInterval) else 0.0
              for v in (lhs, rhs)]
    d, h = means[0] - means[1], math.hypot(*halves)
    lo, hi = d - h, d + h
    bound = tolerance.bound(op)
    if len(sims) == 1:
        exact = means[1] if isinstance(lhs, ConfidenceInterval) else means[0]
        low, high = _band(exact, tolerance)
        band = (low - exact, high - exact) if isinstance(lhs, ConfidenceInterval) \
            else (exact - high, exact - low)
        hold_band = fail_band = band
        compared = abs(exact)

        def magnitude(gap: float) -> float:  # max(|a|, |b|) when a - b = gap
            other = exact + gap if isinstance(lhs, ConfidenceInterval) else exact - gap
            return max(abs(other), abs(exact))
        small = large = None
    else:
        spans = [(abs(m) - hw if abs(m) > hw else 0.0, abs(m) + hw) for m, hw in zip(means, halves)]
        small = max(s[0] for s in spans)
        large = max(s[1] for s in spans)
        hold_band = (-tolerance.allowed(small), tolerance.allowed(small))
        fail_band = (-tolerance.allowed(large), tolerance.allowed(large))
        compared = max(abs(m) for m in means)
        magnitude = None  # type: ignore[assignment]
    if not equality:
        hold_band, fail_band = (-math.inf, hold_band[1]), (-math.inf, fail_band[1])
    resolution = h / compared if compared > 0 else None
    strict = op == "<"

    def error(gap: float, size: float | None) -> float:
        m = magnitude(gap) if size is None else size
        return (abs(gap) if equality else max(gap, 0.0)) / tolerance.scale(m)

    inside = hold_band[0] <= lo and (hi < hold_band[1] if strict else hi <= hold_band[1])
    if inside:
        worst = max(error(lo, small), error(hi, small))
        return PointError(min(worst, bound), resolution, h)
    outside = hi < fail_band[0] or (lo >= fail_band[1] if strict else lo > fail_band[1])
    if outside:
        nearest = lo if lo > fail_band[1] or (strict and lo >= fail_band[1]) else hi
        value = max(error(nearest, large), math.nextafter(bound, math.inf))
        return PointError(value, resolution, h)
    raise Inconclusive(_undecided(d, h, hold_band, fail_band, per_point, sims, resolution,
                                  equality))


def _undecided(d: float, h: float, hold_band: tuple[float, float],
               fail_band: tuple[float, float], per_point: float,
               sims: list[ConfidenceInterval], resolution: float | None, equality: bool) -> str:
    """Why the simulation cannot decide, and the run that would."""
    low, high = hold_band
    if low <= d <= high:  # the estimate lies in the band: shrink the interval into it
        needed = min(d - low, high - d)
    else:  # outside: shrink it until it no longer reaches the band
        needed = fail_band[0] - d if d < fail_band[0] else d - fail_band[1]
    band = f"[{low:.4g}, {high:.4g}]" if equality else f"<= {high:.4g}"
    text = (f"the simulation cannot decide: lhs - rhs = {d:.4g} ± {h:.2g} "
            f"({100 * per_point:.4g}% per point) is neither inside nor outside the tolerance "
            f"band {band}")
    if resolution is not None:
        text += f"; this run detects differences >= {_percent(resolution)}"
    if not needed > 0 or not math.isfinite(needed):
        return text + ("; the estimate lies on the edge of the band, so no run length can be "
                       "predicted: the claim is at its tolerance")
    factor = RUN_MARGIN * (h / needed) ** 2
    lengths = [ci.run_length for ci in sims]
    if all(n is not None for n in lengths):
        wanted = " and ".join(f"{_round_up(n * factor):,}" for n in lengths)  # type: ignore
        return text + (f"; a run of about n_jobs = {wanted} (now "
                       f"{' and '.join(f'{n:,}' for n in lengths)}) would decide")
    return text + f"; a run about {_round_up(factor):,} times longer would decide"


def _round_up(x: float) -> int:
    """``x`` rounded up to two significant digits."""
    if x <= 1:
        return 1
    step = 10 ** max(0, math.floor(math.log10(x)) - 1)
    return int(math.ceil(x / step) * step)


def _percent(x: float) -> str:
    return f"{100 * x:.2g}%"
