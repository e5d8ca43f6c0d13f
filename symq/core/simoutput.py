r"""Output analysis of one simulation run: warm-up from the data, batches from the correlation.

Every symq simulator runs once from an empty (or otherwise non-stationary) state and estimates
a stationary mean.  Two things decide whether the interval covers: the initial transient must be
dropped, and the batches must be long compared with the correlation time of the output.  A fixed
warm-up fraction and a fixed batch count do neither reliably.  This module does both from the
data, and says so (``ConfidenceInterval.doubt``) when the run is too short for either:

* :func:`mser_truncation`: the warm-up is the MSER-5 truncation point (White 1997; Franklin &
  White 2008; Law 2015, Section 9.5.1), searched in the first half of the run; a minimum of the
  MSER statistic in the second half (up to three quarters of the run) means that the transient
  is not over;
* :func:`analyse_series` (per-job outputs) and :func:`analyse_ratio` (time averages from fine
  slices): after the truncation, the batch means of ``n_batches * 2**j`` batches are tested for
  lag-1 autocorrelation, coarser and coarser (batch size doubled, count halved), until the test
  passes (Law & Carson 1979; Law 2015, Section 9.5.3; Fishman's LBATCH, *Discrete-Event
  Simulation*, 2001, Section 6.6).  The interval is the Student-t interval of ``n_batches``
  batches, each :data:`BATCH_MARGIN` times longer than the shortest uncorrelated batch; if the
  run cannot afford that margin, the interval carries a doubt with the run length that would;
* :func:`relaxation_jobs` and :func:`require_run_length`: the up-front rule.  A queue at load
  :math:`\rho` relaxes in about :math:`(1 + c_s^2)/(1-\rho)^2` jobs (Whitt, *Stochastic-Process
  Limits*, 2002, Section 5.7); a run shorter than :data:`RELAXATION_RUNS` of those per batch is
  refused before it starts, naming ``n_jobs`` and the run length needed.

Sequential runs to a requested half-width are in :func:`symq.core.simrun.run_sequential`.

References
----------
K. P. White Jr., An effective truncation heuristic for bias reduction in simulation output,
*Simulation* 69(6), 1997.  W. W. Franklin, K. P. White Jr., Stationarity tests and MSER-5:
exploring the intuition behind mean-squared-error-reduction in detecting and correcting
initialization bias, *Proc. Winter Simulation Conference* 2008.  A. M. Law, W. D. Kelton/J. S.
Carson, A sequential procedure for determining the length of a steady-state simulation,
*Operations Research* 27(5), 1979.  A. M. Law, *Simulation Modeling and Analysis*, 5th ed., 2015.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> x = np.concatenate([np.linspace(10.0, 0.0, 2000), rng.normal(0.0, 1.0, 100_000)])
>>> ci = analyse_series(x)
>>> ci.contains(0.0), ci.doubt == "", ci.run_length
(True, True, 102000)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .errors import InvalidParameter, RunTooShort
from .simstats import ConfidenceInterval, as_finite_1d, check_level, lag1, t_interval

__all__ = [
    "BATCH_MARGIN",
    "FINEST_BATCHES",
    "MSER_BATCH",
    "RELAXATION_RUNS",
    "Truncation",
    "analyse_ratio",
    "analyse_series",
    "mser_truncation",
    "relaxation_jobs",
    "require_probing_run_length",
    "require_run_length",
    "required_run_length",
]

#: Observations per batch of the MSER statistic (MSER-5).
MSER_BATCH = 5
#: Final batches are this many times longer than the shortest batch size whose batch means pass
#: the lag-1 test (a factor 4 makes the remaining lag-1 correlation of the final batch means
#: about 4 times smaller than the test's threshold).
BATCH_MARGIN = 4
#: Most batches of the finest level tested.
FINEST_BATCHES = 4096
#: Significance of the one-sided lag-1 test of the batch means (more sensitive than 1%: a false
#: alarm at one level only delays the pass by one doubling).
LAG1_ALPHA = 0.05
#: Relaxation times (:func:`relaxation_jobs`) a batch must span for a run to be accepted: with
#: 64, the intervals of M/M/1 waiting times covered 954/1000 (load 0.5), 953/1000 (0.8) and
#: 295/300 (0.95) at the shortest accepted run; with 32, 936/1000 at load 0.5.
RELAXATION_RUNS = 64.0


@dataclass(frozen=True)
class Truncation:
    """Where the warm-up ends, by MSER-5.

    Attributes
    ----------
    drop : int
        Observations to discard at the start.
    settled : bool
        Whether the MSER minimum lies in the first half of the run (the warm-up is over).
    needed : int
        A run length (in observations) whose first half would contain the minimum found: the
        length of the run when ``settled``.
    """

    drop: int
    settled: bool
    needed: int


def mser_truncation(samples: ArrayLike, batch: int = MSER_BATCH) -> Truncation:
    r"""The MSER truncation point of a series (MSER-5 by default).

    The series is averaged in consecutive batches of ``batch`` observations :math:`y_1..y_K`;
    the statistic :math:`\mathrm{MSER}(d) = \sum_{i>d} (y_i - \bar y_d)^2 / (K-d)^2` estimates
    the squared standard error of the mean of what remains after dropping ``d`` batches, and
    the truncation is its minimiser (White 1997).  It is searched over
    :math:`0 \le d \le 3K/4` (at least a quarter of the run remains, so that a quiet end of
    the run cannot win by chance); a minimiser past :math:`K/2` means that the run is too short
    for its transient (Franklin & White 2008): ``settled`` is then false and the truncation is
    kept at that point.

    Parameters
    ----------
    samples : array_like
        The output series in simulation order, finite.
    batch : int, default 5
        Observations per MSER batch (1 for series that are already averages, e.g. time slices).

    Returns
    -------
    Truncation

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.full(500, 5.0), np.random.default_rng(0).normal(size=20_000)]
    >>> t = mser_truncation(x)
    >>> 450 <= t.drop <= 600, t.settled
    (True, True)
    """
    data = as_finite_1d("samples", samples)
    if isinstance(batch, bool) or not isinstance(batch, numbers.Integral) or batch < 1:
        raise InvalidParameter("batch", batch, "an integer >= 1")
    k = data.size // batch
    if k < 8:
        return Truncation(0, True, data.size)
    y = data[: k * batch].reshape(k, batch).mean(axis=1)
    y = y - y.mean()
    scale = float(np.max(np.abs(y)))
    if scale > 0:
        y = y / scale
    s1 = np.cumsum(y[::-1])[::-1]
    s2 = np.cumsum((y * y)[::-1])[::-1]
    count = np.arange(k, 0, -1, dtype=float)
    last = (3 * k) // 4
    spread = np.maximum(s2[: last + 1] - s1[: last + 1] ** 2 / count[: last + 1], 0.0)
    statistic = spread / count[: last + 1] ** 2
    d = int(np.argmin(statistic))
    settled = d <= k // 2
    needed = data.size if settled else math.ceil(2.2 * d * batch)
    return Truncation(d * batch, settled, needed)


def _passes(means: np.ndarray) -> bool:
    """One-sided test of independence by the lag-1 autocorrelation: under independence it is
    about normal with mean ``-1/c`` and variance ``1/c`` for ``c`` batch means."""
    c = means.size
    threshold = -1.0 / c + float(stats.norm.ppf(1.0 - LAG1_ALPHA)) / math.sqrt(c)
    return lag1(means) <= threshold


def _levels(n_batches: int, fine: int) -> int:
    """The finest doubling level ``J``: ``n_batches * 2**J <= fine``, or -1 if none."""
    if fine < n_batches:
        return -1
    return math.floor(math.log2(fine / n_batches) + 1e-12)


def _diagnose(fine_num: np.ndarray, fine_den: np.ndarray | None, n_batches: int,
              levels: int) -> tuple[int, float]:
    """The coarsest doubling level that passes, searched from the finest: returns ``(j, r1)``
    with ``j`` the number of doublings left between the passing level and the final batches
    (``-1`` if even the final batches fail), and the last lag-1 autocorrelation seen."""
    num, den = fine_num, fine_den
    r1 = 0.0
    for j in range(levels, -1, -1):
        means = num if den is None else num / den
        r1 = lag1(means)
        if means.size >= 8 and _passes(means):
            return j, r1
        if j > 0:
            num = num.reshape(-1, 2).sum(axis=1) if den is not None else \
                num.reshape(-1, 2).mean(axis=1)
            den = None if den is None else den.reshape(-1, 2).sum(axis=1)
    return -1, r1


#: Relative resolution of a simulated mean: the round-off of sums of up to ~1e9 terms stays
#: below it.  A half-width is never reported below it, and batch means that agree to within it
#: are a constant (a reward that does not vary along the run), not a correlated series.
ROUNDOFF = 1e-11


def _constant(means: np.ndarray) -> bool:
    """Whether the batch means agree up to round-off (:data:`ROUNDOFF`)."""
    scale = float(np.max(np.abs(means), initial=0.0))
    return float(np.ptp(means)) <= ROUNDOFF * scale if means.size else True


def _floored(half: float, mean: float) -> float:
    """The half-width, at least the round-off resolution of the mean."""
    return max(half, ROUNDOFF * abs(mean))


def _margin_doubt(j: int, levels: int, r1: float, run_length: int, unit: str) -> tuple[str, int]:
    margin = round(math.log2(BATCH_MARGIN))
    if j >= margin:
        return "", run_length
    if levels < margin:
        factor = 2 ** (margin - levels)
        return (f"the run is too short to measure its correlation at {BATCH_MARGIN} times "
                f"finer batches; a run of about {factor * run_length:.3g} {unit} would "
                f"allow it"), factor * run_length
    if j < 0:
        factor = 2 ** (margin + 1) * max(1.0, (1.0 + r1) / max(1.0 - r1, 1e-3))
        return (f"batch means still correlated at the coarsest batching (lag-1 "
                f"autocorrelation {r1:.2f}): the run is shorter than its correlation time; a run "
                f"of at least {factor * run_length:.3g} {unit} would do"), int(factor * run_length)
    factor = 2 ** (margin - j)
    where = (f"at batches {2 ** j} times shorter than the final ones" if j > 0
             else "only at the final batch length")
    return (f"batch means uncorrelated {where}, not at {BATCH_MARGIN} times shorter: the "
            f"correlation time is too close to the batch length; a run of about "
            f"{factor * run_length:.3g} {unit} would do"), factor * run_length


def _skew_widened(means: np.ndarray, half: float, level: float) -> float:
    r"""The Student-t half-width widened for the skewness of the batch means.

    The studentised mean of ``k`` values of skewness :math:`\gamma` has the Edgeworth quantile
    :math:`t_p - \gamma (2 t_p^2 + 1)/(6\sqrt{k})` (Johnson 1978, *JASA* 73; Hall 1992,
    *The Bootstrap and Edgeworth Expansion*, Section 2.6): the interval shifts towards the long
    tail by :math:`|\gamma| (2t^2+1)/(6\sqrt k)` standard errors.  The symmetric interval is
    widened by that amount on both sides (conservative), so that a run whose batch means are
    skewed (a queue near saturation) still covers on its short side.
    """
    k = means.size
    if k < 3 or half == 0.0:
        return half
    centred = means - means.mean()
    m2 = float(centred @ centred) / k
    if m2 == 0.0:
        return half
    gamma = float(np.mean(centred ** 3)) / m2 ** 1.5 * math.sqrt(k * (k - 1)) / (k - 2)
    t = float(stats.t.ppf(0.5 + level / 2.0, df=k - 1))
    return half * (1.0 + abs(gamma) * (2.0 * t * t + 1.0) / (6.0 * math.sqrt(k) * t))


def _check_batches(n_batches: object) -> int:
    if isinstance(n_batches, bool) or not isinstance(n_batches, numbers.Integral) or n_batches < 2:
        raise InvalidParameter("n_batches", n_batches, "an integer >= 2")
    return int(n_batches)


def _run_length(run_length: object, default: int) -> int:
    if run_length is None:
        return default
    if isinstance(run_length, bool) or not isinstance(run_length, numbers.Integral) \
            or run_length < 1:
        raise InvalidParameter("run_length", run_length, "an integer >= 1 or None")
    return int(run_length)


def _combine(doubts: list[str]) -> str:
    return "; ".join(d for d in doubts if d)


def analyse_series(samples: ArrayLike, n_batches: int = 30, level: float = 0.95, *,
                   run_length: int | None = None, unit: str = "jobs",
                   method: str = "batch_means") -> ConfidenceInterval:
    """Confidence interval for the stationary mean of one run's per-job series.

    1. The warm-up is the MSER-5 truncation (:func:`mser_truncation`).
    2. What remains is cut into ``n_batches * 2**J`` fine batches (at most
       :data:`FINEST_BATCHES`, at least 16 observations each; the leftover at the start is
       dropped with the warm-up).  Coarser and coarser (batch size doubled) batch means are
       tested for lag-1 autocorrelation until one passes (one-sided, level
       :data:`LAG1_ALPHA`).
    3. The interval is the Student-t interval of the ``n_batches`` final batch means.  If the
       passing batches are not :data:`BATCH_MARGIN` times shorter than the final ones, or the
       MSER minimum lies in the second half of the run, ``doubt`` says so, with the run length
       that would do.

    Parameters
    ----------
    samples : array_like
        Per-job outputs in simulation order (warm-up included), finite.
    n_batches : int, default 30
        Batches of the final interval, ``>= 2``.
    level : float, default 0.95
        Confidence level.
    run_length : int, optional
        The run length to report (jobs or events simulated, warm-up included); the number of
        samples by default.  Doubts scale it.
    unit : str
        What ``run_length`` counts, for the doubt's text.
    method : str
        The interval's ``method``.

    Returns
    -------
    ConfidenceInterval
        With ``n = n_batches``, ``run_length`` and ``doubt`` set.

    Raises
    ------
    InvalidParameter
        If fewer than ``16 * n_batches`` observations remain after the warm-up, or a sample
        is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> ci = analyse_series(np.random.default_rng(2).exponential(2.0, 50_000))
    >>> ci.contains(2.0), ci.n, ci.doubt
    (True, 30, '')
    """
    data = as_finite_1d("samples", samples)
    n_batches = _check_batches(n_batches)
    level = check_level(level)
    total = _run_length(run_length, data.size)
    cut = mser_truncation(data)
    rest = data[cut.drop:]
    levels = _levels(n_batches, min(FINEST_BATCHES, rest.size // 16))
    if levels < 0:
        raise InvalidParameter("samples", f"<{data.size} samples>",
                               f"at least 16 * n_batches = {16 * n_batches} observations after "
                               f"the warm-up", f"{rest.size} remain after the MSER warm-up of "
                               f"{cut.drop}")
    count = n_batches * 2 ** levels
    size = rest.size // count
    used = rest[rest.size - count * size:]
    fine = used.reshape(count, size).mean(axis=1)
    j, r1 = _diagnose(fine, None, n_batches, levels)
    scale = total / data.size
    doubt, need = _margin_doubt(j, levels, r1, total, unit) if not _constant(fine) \
        else ("", total)
    doubts = [doubt]
    if not cut.settled:
        doubts.insert(0, "warm-up not over: the MSER truncation falls at "
                         f"{cut.drop / data.size:.0%} of the run; a run of about "
                         f"{cut.needed * scale:.3g} {unit} would do")
        need = max(need, int(cut.needed * scale))
    final = fine.reshape(n_batches, -1).mean(axis=1)
    ci = t_interval(final, level, method)
    return ConfidenceInterval(ci.mean, _floored(_skew_widened(final, ci.half_width, level),
                                                ci.mean),
                              level, n_batches, method, run_length=total,
                              doubt=_combine(doubts))


def analyse_ratio(numerators: ArrayLike, denominators: ArrayLike, n_batches: int = 30,
                  level: float = 0.95, *, run_length: int | None = None, unit: str = "jobs",
                  method: str = "batch_means") -> ConfidenceInterval:
    """Confidence interval for a ratio of long-run sums (a time average) from fine slices.

    The simulator records per-slice sums (``numerators``: areas, counts; ``denominators``:
    durations) over the whole run, warm-up included, in many slices (a few thousand).  The
    warm-up is the MSER truncation of the slice ratios (MSER-1: a slice is already an average);
    the batches are chosen as in :func:`analyse_series`, each batch's ratio being the ratio of
    its sums (Law 2015, Section 9.5.3), and the interval is centred on the ratio of all the sums
    after the warm-up.

    Parameters
    ----------
    numerators, denominators : array_like
        Per-slice sums in simulation order, same length; denominators positive.
    n_batches, level, run_length, unit, method
        As in :func:`analyse_series`.

    Raises
    ------
    InvalidParameter
        Mismatched lengths, non-positive denominators, or fewer than ``n_batches`` slices
        after the warm-up.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> dt = rng.exponential(1.0, 3000)
    >>> ci = analyse_ratio(dt * rng.normal(4.0, 1.0, 3000), dt)
    >>> ci.contains(4.0)
    True
    """
    num = as_finite_1d("numerators", numerators)
    den = as_finite_1d("denominators", denominators)
    if num.size != den.size:
        raise InvalidParameter("denominators", f"<{den.size} values>",
                               f"an array of the same length as numerators ({num.size})")
    if np.any(den <= 0):
        raise InvalidParameter("denominators", f"<{den.size} values>", "positive durations")
    n_batches = _check_batches(n_batches)
    level = check_level(level)
    total = _run_length(run_length, num.size)
    cut = mser_truncation(num / den, batch=1)
    levels = _levels(n_batches, min(FINEST_BATCHES, num.size - cut.drop))
    if levels < 0:
        raise InvalidParameter("numerators", f"<{num.size} slices>",
                               f"at least n_batches = {n_batches} slices after the warm-up",
                               f"{num.size - cut.drop} remain after the MSER warm-up")
    count = n_batches * 2 ** levels
    rest = num.size - cut.drop
    size = rest // count
    start = num.size - count * size
    fine_num = num[start:].reshape(count, size).sum(axis=1)
    fine_den = den[start:].reshape(count, size).sum(axis=1)
    j, r1 = _diagnose(fine_num, fine_den, n_batches, levels)
    doubt, _need = _margin_doubt(j, levels, r1, total, unit) \
        if not _constant(fine_num / fine_den) else ("", total)
    doubts = [doubt]
    if not cut.settled:
        share = cut.drop / num.size
        doubts.insert(0, f"warm-up not over: the MSER truncation falls at {share:.0%} of the "
                         f"run; a run of about {2.2 * share * total:.3g} {unit} would do")
    final_num = fine_num.reshape(n_batches, -1).sum(axis=1)
    final_den = fine_den.reshape(n_batches, -1).sum(axis=1)
    ratios = final_num / final_den
    mean = float(final_num.sum() / final_den.sum())
    half = _floored(_skew_widened(ratios, t_interval(ratios, level, method).half_width, level),
                    mean)
    return ConfidenceInterval(mean, half, level, n_batches, method, run_length=total,
                              doubt=_combine(doubts))


def relaxation_jobs(load: float, scv: float) -> float:
    r"""Jobs a queue at ``load`` takes to relax: :math:`(1 + c_s^2)/(1 - \rho)^2`.

    The heavy-traffic time scale of the workload of a GI/G/1 queue with Poisson arrivals,
    counted in arrivals (Whitt, *Stochastic-Process Limits*, 2002, Section 5.7); ``inf`` at
    ``load >= 1``.

    Examples
    --------
    >>> round(relaxation_jobs(0.9, 1.0), 6)
    200.0
    """
    if not load < 1.0:
        return math.inf
    return (1.0 + max(float(scv), 0.0)) / (1.0 - float(load)) ** 2


def required_run_length(load: float, scv: float, n_batches: int, *,
                        per_queue: float = 1.0) -> float:
    r"""Shortest run accepted at ``load``: :data:`RELAXATION_RUNS` relaxation times per batch.

    :math:`n \ge R \cdot k \cdot m \cdot (1 + c_s^2)/(1-\rho)^2` with ``R`` =
    :data:`RELAXATION_RUNS`, ``k = n_batches`` and ``m = per_queue`` the number of the run's
    units (departures of all queues) per unit of the queue that relaxes (``N`` for ``N``
    independent queues, as JSQ(1) is; 1 for one queue or a pooled system).

    Examples
    --------
    >>> round(required_run_length(0.9, 1.0, 30))
    384000
    """
    return RELAXATION_RUNS * n_batches * per_queue * relaxation_jobs(load, scv)


def require_run_length(n_jobs: int, load: float, scv: float, n_batches: int, *,
                       per_queue: float = 1.0, jobs_name: str = "n_jobs", unit: str = "jobs",
                       what: str = "") -> None:
    r"""Refuse, before it starts, a run too short for the relaxation time at ``load``.

    Parameters
    ----------
    n_jobs : int
        The run length as the user gave it.
    load, scv : float
        The load :math:`\rho` and squared coefficient of variation of the job size of the
        queue that relaxes.
    n_batches : int
        Batches of the run's intervals.
    per_queue : float, default 1
        Units of the run per unit of that queue (:func:`required_run_length`).
    jobs_name, unit : str
        The parameter's name as the user typed it and what it counts.
    what : str
        The queue that relaxes, for the message (e.g. ``"each of the N=10 queues"``; ``"the
        queue"`` by default).

    Raises
    ------
    RunTooShort
        An :class:`~symq.core.errors.InvalidParameter` (exit status 2 on the command line; an
        inconclusive point in a claim) with ``jobs_needed``:
        ``parameter n_jobs=1000000 must be >= 1.536e+09 at load 0.995 (...)``.

    Examples
    --------
    >>> require_run_length(10**6, 0.9, 1.0, 30)
    """
    need = required_run_length(load, scv, n_batches, per_queue=per_queue)
    if n_jobs >= need:
        return
    who = what or "the queue"
    if math.isfinite(need):  # exact up to a million, then 4 digits rounded up
        shown = math.ceil(need * (1 - 1e-12))
        if shown >= 10**6:
            scale = 10 ** (len(str(shown)) - 4)
            shown = -(-shown // scale) * scale
        need_text = f"{shown}" if shown < 10**6 else f"{shown:.4g}"
    else:
        need_text = "inf"
    raise RunTooShort(
        jobs_name, n_jobs, f">= {need_text} at load {load:.10g}",
        f"{who} relaxes in about (1 + scv)/(1 - load)^2 = "
        f"{relaxation_jobs(load, scv):.3g} {unit}; each of the n_batches={n_batches} batches "
        f"must span {RELAXATION_RUNS:g} relaxation times for its interval to cover the mean",
        jobs_needed=need)


def require_probing_run_length(n_jobs: int, N: int, d: int, load: float, scv: float,
                               n_batches: int) -> None:
    """:func:`require_run_length` for ``N`` servers where each arrival probes ``d`` of them
    (the JSQ(d) family: jsq-sim, the attained-service simulator).

    With ``d = 1`` every arrival joins a uniformly chosen server, so each server is an
    independent M/G/1 queue at ``load`` that relaxes in its own departures, ``N`` times fewer
    than the run's (``per_queue = N``); with ``d >= 2`` the servers pool and the system is held
    to the relaxation time of one queue at the same load and size law.  The run is counted in
    departures.

    Raises
    ------
    RunTooShort
        Naming ``n_jobs`` with the departures needed.
    """
    independent = d == 1 and N > 1
    require_run_length(n_jobs, load, scv, n_batches, per_queue=N if d == 1 else 1,
                       unit="departures",
                       what=(f"each of the N={N} independent M/G/1 queues (d=1, size scv "
                             f"{scv:.3g})" if independent else
                             f"the system (size scv {scv:.3g})"))
