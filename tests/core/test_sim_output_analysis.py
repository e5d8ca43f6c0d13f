"""Output analysis that covers (issue 30): MSER-5 warm-up, batch size from the lag-1 test, doubts
for runs too short, the relaxation run-length rule, and sequential runs to a half-width.

Independent references: a known initial transient, the AR(1) process with its exact mean and
asymptotic variance sigma^2/(1 - phi)^2 (coverage checked by a binomial test over seeds), the
M/M/1 relaxation count (1 + scv)/(1 - rho)^2 recomputed by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal, stats

from symq.core.errors import InvalidParameter
from symq.core.registry import get_model
from symq.core.simoutput import (
    RELAXATION_RUNS,
    analyse_ratio,
    analyse_series,
    mser_truncation,
)
from symq.core.simrun import run_sequential
from symq.core.simstats import replication_ci
from symq.meanfield.simulation import simulate_jsq


def _ar1(phi: float, n: int, rng: np.random.Generator, start: float | None = None) -> np.ndarray:
    """AR(1) x_t = phi x_{t-1} + e_t, e ~ N(0, 1); a stationary start unless ``start``."""
    x0 = rng.normal(0.0, 1.0 / math.sqrt(1.0 - phi * phi)) if start is None else start
    e = rng.normal(size=n)
    x, _ = signal.lfilter([1.0], [1.0, -phi], e, zi=[phi * x0])
    return x


def test_mser_finds_a_known_initial_transient() -> None:
    rng = np.random.default_rng(5)
    transient = np.linspace(20.0, 0.0, 1000)
    x = np.concatenate([transient + rng.normal(size=1000), rng.normal(size=50_000)])
    cut = mser_truncation(x)
    assert cut.settled and 600 <= cut.drop <= 1500
    ci = analyse_series(x)
    assert ci.contains(0.0) and ci.doubt == "" and ci.run_length == x.size


def test_mser_says_when_the_warm_up_is_not_over() -> None:
    # a drift over 90% of the run: the minimum lies in the second half
    rng = np.random.default_rng(6)
    x = np.concatenate([np.linspace(50.0, 0.0, 45_000), np.zeros(5000)]) + rng.normal(size=50_000)
    cut = mser_truncation(x)
    assert not cut.settled and cut.needed > x.size
    ci = analyse_series(x, run_length=50_000)
    assert ci.doubt.startswith("warm-up not over") and "would do" in ci.doubt


def test_ar1_coverage_is_nominal_by_a_binomial_test() -> None:
    # phi = 0.9: correlation time 19 samples; 20000 samples, stationary start, 300 seeds
    phi, n, seeds = 0.9, 20_000, 300
    hits, widths = 0, []
    for seed in range(seeds):
        ci = analyse_series(_ar1(phi, n, np.random.default_rng(1000 + seed)))
        hits += ci.contains(0.0)
        widths.append(ci.half_width)
    # not significantly below 95% at the 1% level
    assert stats.binomtest(hits, seeds, 0.95, alternative="less").pvalue > 0.01, hits
    # the half-width estimates the asymptotic variance sigma^2/(1 - phi)^2 (t_29 quantile)
    expected = stats.t.ppf(0.975, 29) * math.sqrt(1.0 / (1.0 - phi) ** 2 / n)
    assert 0.85 < np.mean(widths) / expected < 1.35


def test_a_run_shorter_than_its_correlation_time_is_doubted() -> None:
    # phi = 0.9995: correlation time about 4000 samples, 20000 samples in all
    x = _ar1(0.9995, 20_000, np.random.default_rng(7))
    ci = analyse_series(x, run_length=20_000)
    assert ci.doubt and "would do" in ci.doubt
    needed = float(ci.doubt.split("about ")[-1].split()[0]) if "about" in ci.doubt else math.inf
    assert needed > 20_000


def test_ratio_estimator_covers_a_time_average() -> None:
    rng = np.random.default_rng(8)
    hits = 0
    for _ in range(200):
        dt = rng.exponential(1.0, 4000)
        level = 3.0 + _ar1(0.8, 4000, rng)
        hits += analyse_ratio(level * dt, dt).contains(3.0)
    assert stats.binomtest(hits, 200, 0.95, alternative="less").pvalue > 0.01, hits


def test_sequential_mode_reaches_its_half_width() -> None:
    calls = []

    def simulate(n: int, g: np.random.Generator):
        calls.append(n)
        return analyse_series(2.0 + _ar1(0.5, n, g), run_length=n)

    ci = run_sequential(simulate, half_width=0.005, pilot=5000, budget=10**7, rng=3)
    # the final run is sized from the pilot (with a 1.2 margin) and returned whatever its own
    # width: about the target, not a guaranteed bound
    assert ci.relative_half_width <= 0.005 * 1.2 and ci.distance(2.0) < 3
    # the answer is the last run alone, sized before it started
    assert ci.run_length == calls[-1] and len(calls) == 2 and sum(calls) <= 10**7
    # a budget too small: the widest run it affords, wider than asked
    short = run_sequential(lambda n, g: replication_ci(g.normal(1.0, 1.0, n)),
                           half_width=1e-4, pilot=100, budget=1000, rng=1)
    assert short.relative_half_width > 1e-4
    with pytest.raises(InvalidParameter, match="half_width"):
        run_sequential(simulate, half_width=0.0, pilot=10, budget=100)


def test_sequential_mode_covers_at_its_nominal_level() -> None:
    # Stein's two-stage procedure: the final run's length depends on the pilot only, so its
    # t interval covers the exact mean 1 at 95% even with a target near the pilot's own width
    # (a pilot of 30 normal draws has a relative half-width about 2.05/sqrt(30) = 0.37)
    from scipy import stats

    covered = sum(run_sequential(lambda n, g: replication_ci(g.normal(1.0, 1.0, n)),
                                 half_width=0.37, pilot=30, budget=10**6, rng=seed).contains(1.0)
                  for seed in range(1000))
    assert stats.binomtest(covered, 1000, 0.95, alternative="less").pvalue > 0.01, covered


def _needed(caught: pytest.ExceptionInfo) -> float:
    return float(caught.value.domain.split()[1])


def test_issue_30_high_load_runs_are_refused_with_the_n_jobs_needed() -> None:
    # jsq-sim N=10 d=1 lam=0.995: ten M/M/1 queues, each relaxing in 2/(1 - 0.995)^2 = 8e4 of
    # its own departures, a tenth of the run's
    with pytest.raises(InvalidParameter, match=r"parameter n_jobs=1000000 must be >= ") as c:
        simulate_jsq(10, 1, 0.995, n_jobs=10**6, rng=1)
    assert _needed(c) == pytest.approx(RELAXATION_RUNS * 30 * 10 * 2 / 0.005**2, rel=1e-3)
    with pytest.raises(InvalidParameter, match=r"parameter n_jobs=1000000 must be >= ") as c:
        get_model("mg1-sim").run({"lam": 0.999}, rng=1)
    assert _needed(c) == pytest.approx(RELAXATION_RUNS * 40 * 2 / 0.001**2, rel=1e-3)
    with pytest.raises(InvalidParameter, match=r"parameter n_jobs=20000 must be >= ") as c:
        get_model("ps-sim").run({"lam": 0.9999999, "n_jobs": 20_000}, rng=1)
    assert _needed(c) == pytest.approx(RELAXATION_RUNS * 30 * 2 / 1e-7**2, rel=1e-3)


def test_a_reward_constant_along_the_run_is_reported_at_its_resolution():
    """A time average of a constant (a rate enabled at every state: M/M/1's arrivals) has batch
    means equal up to round-off: the interval holds the constant (its half-width is the
    round-off resolution, not 1e-17 that misses by an ulp) and no correlation doubt is raised
    about round-off noise; a varying quantity keeps its statistical half-width."""
    rng = np.random.default_rng(5)
    dt = rng.exponential(1.0, 3000)
    for rate in (0.8, 0.1, 7.3):
        ci = analyse_ratio(rate * dt, dt)
        assert ci.contains(rate) and not ci.doubt
        assert ci.half_width <= 1e-10 * rate
        series = analyse_series(np.full(6000, rate) * (1 + 1e-16 * rng.standard_normal(6000)))
        assert series.contains(rate) and not series.doubt
    varying = analyse_ratio(dt * rng.normal(4.0, 1.0, 3000), dt)
    assert varying.half_width > 1e-3
