"""How a claim measures its error at one point: absolute, relative, mixed, symbolic, and
the two measures for simulation evidence (``ci_error``, the distance in half-widths, and
``equivalence_error``, the equivalence test of :mod:`symq.core.tolerance`).

A :class:`~symq.core.claims.Claim` holds at a point when its error function returns at most
the claim's ``tolerance``; a measure that cannot decide raises
:class:`~symq.core.errors.Inconclusive`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from .errors import Inconclusive, InvalidParameter
from .tolerance import Tolerance, point_error

__all__ = [
    "absolute_error",
    "ci_error",
    "equivalence_error",
    "mixed_error",
    "relative_error",
    "symbolic_error",
]


def _arrays(claimed: Any, reference: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(claimed, dtype=float)
    b = np.asarray(reference, dtype=float)
    if a.shape != b.shape:
        raise Inconclusive(f"claimed shape {a.shape} differs from reference shape {b.shape}")
    return a, b


def absolute_error(claimed: Any, reference: Any) -> float:
    """Largest absolute difference between claimed and reference values."""
    a, b = _arrays(claimed, reference)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)))


def relative_error(claimed: Any, reference: Any) -> float:
    """Largest ``|claimed - reference| / |reference|`` (exact zeros compare absolutely)."""
    a, b = _arrays(claimed, reference)
    if a.size == 0:
        return 0.0
    scale = np.where(b == 0, 1.0, np.abs(b))
    return float(np.max(np.abs(a - b) / scale))


def mixed_error(scale: float = 1.0) -> Callable[[Any, Any], float]:
    """Error ``|a - b| / max(|b|, scale)``: relative for large values, absolute near zero."""

    def error(claimed: Any, reference: Any) -> float:
        a, b = _arrays(claimed, reference)
        if a.size == 0:
            return 0.0
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), scale)))

    error.__name__ = f"mixed_error(scale={scale:g})"
    return error


def symbolic_error(claimed: Any, reference: Any) -> float:
    """0 when sympy proves ``claimed == reference``; otherwise the numeric gap or inf.

    Both sides are sympy expressions or numbers; text is refused (parse it first with
    :func:`symq.core.formula.parse_formula`, which never evaluates it).
    """
    for side in (claimed, reference):
        if isinstance(side, str):
            raise TypeError("symbolic_error compares sympy expressions, not text; parse text "
                            "with symq.core.formula.parse_formula")
    difference = sp.simplify(sp.sympify(claimed) - sp.sympify(reference))
    if difference == 0:
        return 0.0
    if difference.is_number:
        return float(abs(difference))
    raise Inconclusive(f"sympy could not reduce the difference to zero: {difference}")


def ci_error(estimate: Any, value: Any) -> float:
    """Distance of ``value`` from a confidence interval's mean, in half-widths.

    ``estimate`` is a :class:`symq.core.simstats.ConfidenceInterval` (anything with
    ``mean`` and ``half_width``).  An error <= 1 means the value lies inside the interval.

    This was the built-in papers' test of a simulation against a closed form (tolerance 1: "the
    value lies in the 95% interval"), a significance test that a true claim fails with
    probability about 5% per point and that a false claim passes whenever the run is short
    enough (issue 30: an underpowered "holds").  It is kept for code that reports distances in
    half-widths; a claim of a simulation against a value should use
    :func:`equivalence_error`, the equivalence test of :mod:`symq.core.tolerance`,
    whose "holds" also bounds the difference.
    """
    mean = float(estimate.mean)
    half = float(estimate.half_width)
    gap = abs(float(value) - mean)
    if half <= 0:
        return 0.0 if gap == 0 else math.inf
    return gap / half


def equivalence_error(relative: float | None = None, absolute: float | None = None, *,
                      n_points: int = 1, level: float = 0.95) -> Callable[[Any, Any], float]:
    """Error measure of a claim "a simulation estimates this value" by equivalence testing.

    Returns ``error(value, estimate)``: ``value`` is the claimed number, ``estimate`` a
    :class:`symq.core.simstats.ConfidenceInterval` (the sides may also come the other way
    round: the test is symmetric).  It is
    :func:`symq.core.tolerance.point_error` ``(estimate, "==", value, tolerance,
    n_points)`` with ``tolerance = Tolerance(relative, absolute, ci=level)``, the rule claims
    files use (Wellek, *Testing Statistical Hypotheses of Equivalence and Noninferiority*, 2nd
    ed., CRC 2010, Section 1.6; Schuirmann, J. Pharmacokinet. Biopharm. 15 (1987) 657-680):
    the interval, widened to the Bonferroni level ``1 - (1 - level)/n_points``, must lie
    wholly inside the band ``|s - value| <= max(absolute, relative max(|s|, |value|))`` for
    the claim to hold at the point, and wholly outside it to fail; otherwise
    :class:`Inconclusive` is raised with the run length that would decide (so is a doubtful
    interval, ``ConfidenceInterval.doubt``).

    The error is in the tolerance's units (relative when ``relative`` is given, else
    absolute), so the :class:`Claim`'s ``tolerance`` is the same number as ``relative`` (or
    ``absolute``); it is also the returned function's ``tolerance`` attribute.  The error
    carries the run's resolution (a :class:`~symq.core.tolerance.PointError`), which
    the verdict states ("this run detects differences >= 0.8%").

    Parameters
    ----------
    relative : float, optional
        Relative tolerance ``r`` (symmetric: ``|a - b| <= r max(|a|, |b|)``).
    absolute : float, optional
        Absolute tolerance ``t`` (with ``relative``: ``max(t, r max(|a|, |b|))``).
    n_points : int
        Number of points of the claim: the family over which ``level`` holds.
    level : float
        Family confidence level in (0, 1): the probability that a verdict is wrong because
        some interval misses its true value is at most ``1 - level``.

    Raises
    ------
    InvalidParameter
        Neither tolerance given, a tolerance that is negative or not finite, ``n_points < 1``
        or ``level`` outside (0, 1).
    """
    if relative is None and absolute is None:
        raise InvalidParameter("relative", None, "a nonnegative real number (or give absolute)",
                               "a simulation cannot prove equality, only equivalence within a "
                               "stated tolerance")
    for name, value in (("relative", relative), ("absolute", absolute)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value < 0):
            raise InvalidParameter(name, value, "a nonnegative real number")
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 1:
        raise InvalidParameter("n_points", n_points, "an integer >= 1")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise InvalidParameter("level", level, "a confidence level in (0, 1), e.g. 0.95")
    tolerance = Tolerance(relative=None if relative is None else float(relative),
                          absolute=None if absolute is None else float(absolute),
                          ci=float(level), where="equivalence_error")
    count = int(n_points)

    def error(value: Any, estimate: Any) -> float:
        if hasattr(value, "half_width") and not hasattr(estimate, "half_width"):
            value, estimate = estimate, value
        return point_error(estimate, "==", value, tolerance, count)

    error.__name__ = f"equivalence_error({tolerance.describe()}, n_points={count})"
    error.tolerance = tolerance.bound("==")  # type: ignore[attr-defined]
    error.units = tolerance.units()  # type: ignore[attr-defined]
    return error
