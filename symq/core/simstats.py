"""Simulation output statistics shared by every simulator in symq.

A simulator returns its estimates as :class:`ConfidenceInterval` objects, so that a claim can
compare a closed form with a simulation in units of half-widths
(:meth:`ConfidenceInterval.distance`).

Two classical interval estimators are provided:

* :func:`batch_means` for one long, autocorrelated run (non-overlapping batch means after a
  warm-up period, Student-t interval on the batch means);
* :func:`replication_ci` for independent replications (Student-t interval).

:func:`lag1_autocorrelation` reports how far the batch means are from independent.

References
----------
A. M. Law, *Simulation Modeling and Analysis*, 5th ed., McGraw-Hill, 2015, Sections 9.4.1
(independent replications) and 9.5.3 (batch means).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> ci = replication_ci(rng.normal(1.0, 0.1, size=20))
>>> ci.contains(1.0)
True
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .display import MarkdownDisplay
from .errors import InvalidParameter, NumericalFailure

__all__ = [
    "ConfidenceInterval",
    "as_finite_1d",
    "batch_means",
    "check_level",
    "lag1",
    "lag1_autocorrelation",
    "ratio_batch_means",
    "replication_ci",
    "t_interval",
]

#: Plural noun used by ``str(ci)`` for the ``n`` of each method.
_UNITS = {"batch_means": "batches", "replications": "replications"}


@dataclass(frozen=True)
class ConfidenceInterval(MarkdownDisplay):
    """A two-sided confidence interval ``mean ± half_width`` for an expectation.

    Parameters
    ----------
    mean : float
        Point estimate.
    half_width : float
        Half-width of the interval, ``>= 0``.
    level : float
        Confidence level in ``(0, 1)``, e.g. ``0.95``.
    n : int
        Number of batches or of independent replications the interval is based on.
    method : str
        How the interval was computed: ``"batch_means"``, ``"replications"`` or a name chosen by
        the simulator that built it.
    run_length : int or None, default None
        Observations (jobs, losses, events) the run simulated, warm-up included, when the
        interval comes from a simulation run: a verdict that the run cannot decide states the
        run length that would (the half-width shrinks as ``1/sqrt(run_length)``).
    doubt : str, default ""
        Empty when the run's own diagnostics support the interval; otherwise why it may not
        cover (batch means still correlated at the coarsest batching, warm-up not over, a run
        shorter than the relaxation time), with the run length that would fix it.  A verdict
        built on a doubtful interval is inconclusive.

    Examples
    --------
    >>> ci = ConfidenceInterval(mean=1.234, half_width=0.012, level=0.95, n=30,
    ...                         method="batch_means")
    >>> str(ci)
    '1.234 ± 0.012 (95%, 30 batches)'
    >>> ci.contains(1.24), round(ci.distance(1.24), 3)
    (True, 0.5)
    """

    mean: float
    half_width: float
    level: float
    n: int
    method: str
    run_length: int | None = None
    doubt: str = ""

    def __post_init__(self) -> None:
        if not math.isfinite(self.mean):
            raise InvalidParameter("mean", self.mean, "a finite real number")
        if not (self.half_width >= 0.0 and math.isfinite(self.half_width)):
            raise InvalidParameter("half_width", self.half_width, "a finite real number >= 0")
        check_level(self.level)
        if isinstance(self.n, bool) or not isinstance(self.n, numbers.Integral) or self.n < 1:
            raise InvalidParameter("n", self.n, "an integer >= 1")

    @property
    def low(self) -> float:
        """Lower end ``mean - half_width``."""
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        """Upper end ``mean + half_width``."""
        return self.mean + self.half_width

    @property
    def relative_half_width(self) -> float:
        """``half_width / |mean|`` (``inf`` if the mean is 0 and the half-width is not)."""
        if self.mean == 0.0:
            return 0.0 if self.half_width == 0.0 else math.inf
        return self.half_width / abs(self.mean)

    def contains(self, x: float) -> bool:
        """Whether ``low <= x <= high``."""
        return self.low <= float(x) <= self.high

    def distance(self, x: float) -> float:
        """Distance from the estimate to ``x`` in units of half-widths, ``|x - mean| / half_width``.

        A value ``<= 1`` means that ``x`` lies inside the interval.  If the half-width is 0 the
        distance is 0 when ``x == mean`` and ``inf`` otherwise.
        """
        gap = abs(float(x) - self.mean)
        if self.half_width == 0.0:
            return 0.0 if gap == 0.0 else math.inf
        return gap / self.half_width

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dictionary of the fields, with ``low`` and ``high``."""
        return {
            "mean": float(self.mean),
            "half_width": float(self.half_width),
            "low": float(self.low),
            "high": float(self.high),
            "level": float(self.level),
            "n": int(self.n),
            "method": str(self.method),
            "run_length": None if self.run_length is None else int(self.run_length),
            "doubt": str(self.doubt),
        }

    def to_markdown(self) -> str:
        """``mean ± half_width (level, n): [low, high]``, the ends with the same decimals
        (Jupyter's display)."""
        text = str(self)
        if self.half_width > 0 and math.isfinite(self.half_width):
            decimals = min(15, max(0, 1 - math.floor(math.log10(self.half_width))))
            return f"{text}: [{self.low:.{decimals}f}, {self.high:.{decimals}f}]"
        return f"{text}: [{self.low:.6g}, {self.high:.6g}]"

    def __str__(self) -> str:
        if self.half_width > 0.0:
            # two significant digits of the half-width fix the number of decimals
            decimals = min(15, max(0, 1 - math.floor(math.log10(self.half_width))))
            body = f"{self.mean:.{decimals}f} ± {self.half_width:.{decimals}f}"
        else:
            body = f"{self.mean:.6g} ± 0"
        unit = _UNITS.get(self.method)
        count = f"{self.n} {unit}" if unit else f"n={self.n}, {self.method}"
        return f"{body} ({self.level * 100:g}%, {count})"


def check_level(level: float) -> float:
    """``level`` as a float in (0, 1), else :class:`~symq.core.errors.InvalidParameter` naming
    ``level``."""
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise InvalidParameter("level", level, "a real number in (0, 1)") from None
    if not 0.0 < value < 1.0:
        raise InvalidParameter("level", level, "a real number in (0, 1)", "e.g. 0.95")
    return value


def as_finite_1d(name: str, values: ArrayLike) -> np.ndarray:
    """``values`` as a one-dimensional float array of finite numbers, else
    :class:`~symq.core.errors.InvalidParameter` naming ``name`` (and the first non-finite
    entry)."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter(name, _short(values),
                               "a one-dimensional array of real numbers") from None
    if array.ndim != 1:
        raise InvalidParameter(
            name, f"<array of shape {array.shape}>", "a one-dimensional array of real numbers"
        )
    bad = ~np.isfinite(array)
    if bad.any():
        index = int(np.argmax(bad))
        raise InvalidParameter(
            name,
            f"<array with {name}[{index}]={array[index]!r}>",
            "an array of finite real numbers",
            f"{int(bad.sum())} non-finite value(s)",
        )
    return array


def _short(values: object) -> object:
    text = repr(values)
    return values if len(text) <= 60 else f"<{type(values).__name__}>"


def t_interval(means: np.ndarray, level: float, method: str) -> ConfidenceInterval:
    """The Student-t interval of the mean of ``means`` (independent, normal) at ``level``
    (Law 2015, Section 9.4.1), labelled ``method``; computed in units of the largest
    ``|mean|`` so that squares stay finite.

    Raises
    ------
    NumericalFailure
        When the mean or half-width leaves the floating-point range.
    """
    n = means.size
    # in units of the largest |mean|: the squares of means near 1e160 and beyond stay finite
    scale = float(np.max(np.abs(means))) if n else 0.0
    if not math.isfinite(scale) or scale == 0.0:
        scale = 1.0
    unit = means / scale
    mean = float(unit.mean()) * scale
    # lazy: scipy.stats takes 0.5 s to import (import symq stays fast)
    from scipy import stats

    quantile = float(stats.t.ppf(0.5 + level / 2.0, df=n - 1))
    half = quantile * float(unit.std(ddof=1)) / math.sqrt(n) * scale
    if not (math.isfinite(mean) and math.isfinite(half)):
        raise NumericalFailure(
            f"the simulated means (up to {scale:.3g}) and their confidence interval leave the "
            f"floating-point range: the model's times or counts are too large to estimate")
    return ConfidenceInterval(mean, half, level, n, method)


def batch_means(
    samples: ArrayLike,
    n_batches: int = 30,
    level: float = 0.95,
    warmup: float | int = 0.0,
) -> ConfidenceInterval:
    """Confidence interval for the stationary mean of one long run by non-overlapping batch means.

    The first ``warmup`` samples are dropped; the rest is cut into ``n_batches`` consecutive
    batches of equal size ``b = m // n_batches`` (the ``m mod n_batches`` leftover samples are
    dropped at the start, i.e. they are treated as extra warm-up).  The interval is the
    Student-t interval with ``n_batches - 1`` degrees of freedom on the batch means
    (Law 2015, Section 9.5.3).  It is valid when the batches are long compared with the
    correlation time of the output; :func:`lag1_autocorrelation` of the batch means is a check.

    Parameters
    ----------
    samples : array_like
        One-dimensional sequence of finite observations, in simulation order.
    n_batches : int, default 30
        Number of batches, ``>= 2``.
    level : float, default 0.95
        Confidence level in ``(0, 1)``.
    warmup : float or int, default 0.0
        Warm-up to discard: a fraction of the samples if a float in ``[0, 1)``, a number of
        samples if an integer ``>= 0``.

    Returns
    -------
    ConfidenceInterval
        With ``method="batch_means"`` and ``n=n_batches``.

    Raises
    ------
    InvalidParameter
        If a sample is not finite, ``n_batches < 2``, ``level`` is not in ``(0, 1)``, the
        warm-up is out of range, or fewer than 2 samples per batch remain after the warm-up.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).exponential(2.0, size=30_000)
    >>> ci = batch_means(x, n_batches=30, warmup=0.1)
    >>> ci.n, ci.method, ci.contains(2.0)
    (30, 'batch_means', True)
    """
    data = as_finite_1d("samples", samples)
    if isinstance(n_batches, bool) or not isinstance(n_batches, numbers.Integral) or n_batches < 2:
        raise InvalidParameter("n_batches", n_batches, "an integer >= 2")
    n_batches = int(n_batches)
    level = check_level(level)

    if isinstance(warmup, bool):
        raise InvalidParameter("warmup", warmup, "a fraction in [0, 1) or an integer count >= 0")
    if isinstance(warmup, numbers.Integral):
        if warmup < 0:
            raise InvalidParameter("warmup", warmup,
                                   "a fraction in [0, 1) or an integer count >= 0")
        skip = int(warmup)
    elif isinstance(warmup, numbers.Real) and 0.0 <= float(warmup) < 1.0:
        skip = int(math.floor(float(warmup) * data.size))
    else:
        raise InvalidParameter(
            "warmup",
            warmup,
            "a fraction in [0, 1) or an integer count >= 0",
            "pass an int to drop a number of samples",
        )

    remaining = data.size - skip
    batch_size = remaining // n_batches if remaining > 0 else 0
    if batch_size < 2:
        raise InvalidParameter(
            "samples",
            f"<{data.size} samples>",
            f"at least 2 * n_batches = {2 * n_batches} samples after the warm-up",
            f"{max(remaining, 0)} remain after dropping warmup={warmup!r}",
        )
    used = data[data.size - n_batches * batch_size :]
    means = used.reshape(n_batches, batch_size).mean(axis=1)
    return t_interval(means, level, "batch_means")


def replication_ci(values: ArrayLike, level: float = 0.95) -> ConfidenceInterval:
    """Student-t confidence interval from independent replications.

    ``mean ± t_{n-1, (1+level)/2} * s / sqrt(n)`` with ``s`` the sample standard deviation
    (Law 2015, Section 9.4.1).

    Parameters
    ----------
    values : array_like
        One estimate per independent replication, at least 2, all finite.
    level : float, default 0.95
        Confidence level in ``(0, 1)``.

    Returns
    -------
    ConfidenceInterval
        With ``method="replications"`` and ``n=len(values)``.

    Raises
    ------
    InvalidParameter
        If fewer than 2 values are given, a value is not finite, or ``level`` is not in ``(0, 1)``.

    Examples
    --------
    >>> ci = replication_ci([1.0, 2.0, 3.0])
    >>> ci.mean, round(ci.half_width, 4)
    (2.0, 2.4841)
    """
    data = as_finite_1d("values", values)
    if data.size < 2:
        raise InvalidParameter(
            "values", _short(values), "at least 2 independent replications", f"got {data.size}"
        )
    return t_interval(data, check_level(level), "replications")


def ratio_batch_means(numerators: ArrayLike, denominators: ArrayLike, n_batches: int = 30,
                      level: float = 0.95) -> ConfidenceInterval:
    """Batch-means interval for a ratio estimator such as a time average.

    A time average is ``sum(area_i) / sum(duration_i)`` over consecutive slices whose durations
    differ.  The slices are grouped into ``n_batches`` equal consecutive batches; each batch gives
    the ratio of its sums, and the Student-t interval of those batch ratios is centred on the
    overall ratio (Law 2015, Section 9.5.3, batch means for a ratio of sums).

    Parameters
    ----------
    numerators, denominators : array_like
        Per-slice numerators (areas) and positive denominators (durations), same length, a
        multiple of ``n_batches``.
    n_batches : int
        Number of batches, at least 2.
    level : float
        Confidence level in ``(0, 1)``.

    Raises
    ------
    InvalidParameter
        Mismatched or non-finite inputs, non-positive denominators, a length that is not a
        positive multiple of ``n_batches``, or a bad ``level``.

    Examples
    --------
    >>> ci = ratio_batch_means([1.0, 3.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], n_batches=2)
    >>> ci.mean, ci.n
    (1.3333333333333333, 2)
    """
    num = as_finite_1d("numerators", numerators)
    den = as_finite_1d("denominators", denominators)
    if num.size != den.size:
        raise InvalidParameter("denominators", _short(denominators),
                               f"an array of the same length as numerators ({num.size})")
    if np.any(den <= 0):
        raise InvalidParameter("denominators", _short(denominators), "positive durations")
    if isinstance(n_batches, bool) or not isinstance(n_batches, (int, np.integer)) or n_batches < 2:
        raise InvalidParameter("n_batches", n_batches, "an integer >= 2")
    if num.size == 0 or num.size % n_batches:
        raise InvalidParameter("numerators", _short(numerators),
                               f"a positive multiple of n_batches={n_batches} slices",
                               f"got {num.size}")
    level = check_level(level)
    ratios = num.reshape(n_batches, -1).sum(axis=1) / den.reshape(n_batches, -1).sum(axis=1)
    half = t_interval(ratios, level, "batch_means").half_width
    return ConfidenceInterval(float(num.sum() / den.sum()), half, level, int(n_batches),
                              "batch_means")


def lag1_autocorrelation(batch_means: ArrayLike) -> float:
    """Lag-1 sample autocorrelation of a sequence, e.g. of batch means.

    ``r1 = sum_{i<n} (x_i - m)(x_{i+1} - m) / sum_i (x_i - m)^2`` with ``m`` the sample mean.
    Batch means of batches much longer than the correlation time have ``r1`` near 0 (within about
    ``±2/sqrt(n)``); a clearly positive ``r1`` means the batches are too short.

    Parameters
    ----------
    batch_means : array_like
        One-dimensional sequence of at least 3 finite values, not all equal.

    Returns
    -------
    float
        The estimate, in ``[-1, 1]``.

    Raises
    ------
    InvalidParameter
        If fewer than 3 values are given, a value is not finite, or all values are equal
        (the autocorrelation is then undefined).
    """
    data = as_finite_1d("batch_means", batch_means)
    if data.size < 3:
        raise InvalidParameter(
            "batch_means", _short(batch_means), "a sequence of at least 3 values",
            f"got {data.size}"
        )
    centred = data - data.mean()
    if not np.any(centred):
        raise InvalidParameter(
            "batch_means",
            f"<{data.size} values all equal to {data[0]!r}>",
            "a sequence that is not constant",
            "the autocorrelation of a constant sequence is undefined",
        )
    return min(1.0, max(-1.0, lag1(data)))


def lag1(values: np.ndarray) -> float:
    """The lag-1 sample autocorrelation of a finite 1-d array, unchecked (0 for a constant
    one): the statistic of :func:`lag1_autocorrelation` and of the batch-length test of
    :mod:`symq.core.simoutput`."""
    centred = values - values.mean()
    denominator = float(centred @ centred)
    if denominator == 0.0:
        return 0.0
    return float(centred[:-1] @ centred[1:]) / denominator

