"""Tests of symq.core.simstats against independent computations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import signal, stats

from symq.core.errors import InvalidParameter
from symq.core.simstats import (
    ConfidenceInterval,
    batch_means,
    lag1_autocorrelation,
    replication_ci,
)


def _hand_t_interval(x: np.ndarray, level: float) -> tuple[float, float]:
    """mean and half-width of the Student-t interval, written out independently."""
    n = len(x)
    mean = sum(x) / n
    var = sum((v - mean) ** 2 for v in x) / (n - 1)
    return mean, stats.t.ppf((1 + level) / 2, n - 1) * math.sqrt(var / n)


def _ar1(rng: np.random.Generator, mu: float, phi: float, size: tuple[int, int]) -> np.ndarray:
    """Stationary AR(1) paths x_t - mu = phi (x_{t-1} - mu) + eps_t, eps ~ N(0, 1), row-wise."""
    eps = rng.standard_normal(size)
    x0 = rng.standard_normal(size[0]) / math.sqrt(1 - phi**2)  # stationary start
    eps[:, 0] = x0
    return mu + signal.lfilter([1.0], [1.0, -phi], eps, axis=1)


# ---------------------------------------------------------------- ConfidenceInterval


def test_interval_accessors() -> None:
    ci = ConfidenceInterval(mean=2.0, half_width=0.5, level=0.9, n=10, method="replications")
    assert (ci.low, ci.high) == (1.5, 2.5)
    assert ci.contains(1.5) and ci.contains(2.5) and ci.contains(2.2)
    assert not ci.contains(1.49) and not ci.contains(2.51)
    assert ci.distance(2.25) == pytest.approx(0.5)
    assert ci.distance(0.5) == pytest.approx(3.0)
    assert ci.relative_half_width == pytest.approx(0.25)


def test_distance_with_zero_half_width() -> None:
    ci = ConfidenceInterval(1.0, 0.0, 0.95, 5, "replications")
    assert ci.distance(1.0) == 0.0
    assert ci.distance(1.1) == math.inf
    assert ci.contains(1.0) and not ci.contains(1.0 + 1e-12)


def test_str_and_to_dict() -> None:
    ci = ConfidenceInterval(1.23412, 0.0121, 0.95, 30, "batch_means")
    assert str(ci) == "1.234 ± 0.012 (95%, 30 batches)"
    ci2 = ConfidenceInterval(1234.5, 56.0, 0.99, 8, "replications")
    assert str(ci2) == "1234 ± 56 (99%, 8 replications)"
    d = json.loads(json.dumps(ci.to_dict()))
    assert d == {
        "mean": 1.23412,
        "half_width": 0.0121,
        "low": pytest.approx(1.22202),
        "high": pytest.approx(1.24622),
        "level": 0.95,
        "n": 30,
        "method": "batch_means",
        "run_length": None,
        "doubt": "",
    }


def test_interval_is_frozen() -> None:
    ci = ConfidenceInterval(1.0, 0.1, 0.95, 5, "replications")
    with pytest.raises(AttributeError):
        ci.mean = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"half_width": -0.1}, "half_width"),
        ({"half_width": math.nan}, "half_width"),
        ({"mean": math.inf}, "mean"),
        ({"level": 1.0}, "level"),
        ({"n": 0}, "n"),
    ],
)
def test_interval_rejects_bad_fields(kwargs: dict, name: str) -> None:
    fields = {"mean": 1.0, "half_width": 0.1, "level": 0.95, "n": 5, "method": "replications"}
    fields.update(kwargs)
    with pytest.raises(InvalidParameter, match=f"parameter {name}=") as info:
        ConfidenceInterval(**fields)
    assert info.value.name == name


# ---------------------------------------------------------------- replication_ci


def test_replication_ci_equals_hand_formula() -> None:
    x = np.array([2.1, 1.7, 2.9, 2.4, 1.8, 2.2, 2.6])
    for level in (0.9, 0.95, 0.99):
        ci = replication_ci(x, level=level)
        mean, hw = _hand_t_interval(x, level)
        assert ci.mean == pytest.approx(mean, rel=1e-14)
        assert ci.half_width == pytest.approx(hw, rel=1e-12)
        assert (ci.n, ci.level, ci.method) == (7, level, "replications")


def test_replication_ci_three_points_closed_form() -> None:
    # s = 1, n = 3; Student t with 2 degrees of freedom has the closed-form quantile
    # t_2(p) = (2p - 1) / sqrt(2 p (1 - p))
    for level in (0.8, 0.95, 0.99):
        p = (1 + level) / 2
        t2 = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
        ci = replication_ci([1.0, 2.0, 3.0], level=level)
        assert ci.mean == 2.0
        assert ci.half_width == pytest.approx(t2 / math.sqrt(3), rel=1e-12)


def test_replication_ci_coverage_iid_normal() -> None:
    rng = np.random.default_rng(20240601)
    mu, reps, n = 3.0, 400, 10
    data = rng.normal(mu, 2.0, size=(reps, n))
    covered = sum(replication_ci(row).contains(mu) for row in data)
    assert 0.90 <= covered / reps <= 0.99
    # a 50% interval covers about half of the time: the level is really used
    covered50 = sum(replication_ci(row, level=0.5).contains(mu) for row in data)
    assert 0.40 <= covered50 / reps <= 0.60


# ---------------------------------------------------------------- batch_means


def test_batch_means_equals_hand_computation_with_remainder() -> None:
    rng = np.random.default_rng(3)
    x = rng.exponential(size=103)
    ci = batch_means(x, n_batches=5)
    # 103 = 5 * 20 + 3: the first 3 samples are dropped
    hand_means = [x[3 + 20 * k : 3 + 20 * (k + 1)].mean() for k in range(5)]
    mean, hw = _hand_t_interval(np.array(hand_means), 0.95)
    assert ci.mean == pytest.approx(mean, rel=1e-13)
    assert ci.half_width == pytest.approx(hw, rel=1e-12)
    assert (ci.n, ci.method) == (5, "batch_means")


def test_batch_means_warmup_fraction_and_count() -> None:
    x = np.arange(1000, dtype=float) ** 0.5
    # fraction 0.1 drops 100 samples; 900 = 10 * 90
    by_fraction = batch_means(x, n_batches=10, warmup=0.1)
    by_count = batch_means(x, n_batches=10, warmup=100)
    tail = x[100:].reshape(10, 90).mean(axis=1)
    mean, hw = _hand_t_interval(tail, 0.95)
    for ci in (by_fraction, by_count):
        assert ci.mean == pytest.approx(mean, rel=1e-13)
        assert ci.half_width == pytest.approx(hw, rel=1e-12)
    # the warm-up really changes the estimate of this increasing series
    assert batch_means(x, n_batches=10).mean < by_count.mean


def test_batch_means_coverage_iid() -> None:
    rng = np.random.default_rng(11)
    mu, reps = 1.0, 400
    data = rng.exponential(mu, size=(reps, 2000))
    covered = sum(batch_means(row, n_batches=20).contains(mu) for row in data)
    assert 0.90 <= covered / reps <= 0.99


def test_batch_means_coverage_ar1_and_naive_interval_undercovers() -> None:
    rng = np.random.default_rng(7)
    mu, phi, reps = 2.0, 0.5, 400
    paths = _ar1(rng, mu, phi, (reps, 20_000))
    covered = sum(batch_means(row, n_batches=20).contains(mu) for row in paths)
    assert 0.90 <= covered / reps <= 0.99
    # independent check that the correlation matters: the iid interval on the raw samples is
    # too narrow by sqrt((1 + phi) / (1 - phi)) = sqrt(3) and covers about P(|Z| < 1.13) = 0.74
    naive = sum(replication_ci(row).contains(mu) for row in paths)
    assert naive / reps < 0.85


def test_batch_means_half_width_matches_ar1_asymptotic_variance() -> None:
    # sigma^2_inf = 1 / (1 - phi)^2 for unit innovations; hw ~ t * sqrt(sigma^2_inf / m)
    rng = np.random.default_rng(5)
    phi, m = 0.8, 200_000
    x = _ar1(rng, 0.0, phi, (1, m))[0]
    ci = batch_means(x, n_batches=40)
    expected = stats.t.ppf(0.975, 39) * math.sqrt(1.0 / (1 - phi) ** 2 / m)
    # sample std of 40 batch means has relative error about 1/sqrt(2 * 39) = 11%
    assert ci.half_width == pytest.approx(expected, rel=0.35)


# ---------------------------------------------------------------- lag1_autocorrelation


def test_lag1_autocorrelation_hand_formula() -> None:
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    m = x.mean()
    num = sum((x[i] - m) * (x[i + 1] - m) for i in range(4))
    den = sum((v - m) ** 2 for v in x)
    assert lag1_autocorrelation(x) == pytest.approx(num / den, rel=1e-14)
    assert lag1_autocorrelation([1.0, -1.0, 1.0, -1.0]) == pytest.approx(-0.75)


def test_lag1_autocorrelation_detects_short_batches() -> None:
    rng = np.random.default_rng(9)
    x = _ar1(rng, 0.0, 0.95, (1, 100_000))[0]
    short = x.reshape(-1, 5).mean(axis=1)  # batches of 5 << correlation time ~ 39
    long_ = x.reshape(40, -1).mean(axis=1)  # batches of 2500
    assert lag1_autocorrelation(short) > 0.7
    assert abs(lag1_autocorrelation(long_)) < 0.4


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, name, fragment",
    [
        (lambda: batch_means(np.ones(100), n_batches=1), "n_batches", "an integer >= 2"),
        (lambda: batch_means(np.ones(100), n_batches=2.5), "n_batches", "an integer >= 2"),
        (lambda: batch_means(np.ones(59), n_batches=30), "samples", "at least 2 * n_batches = 60"),
        (lambda: batch_means(np.ones(100), n_batches=30, warmup=50), "samples", "50 remain"),
        (lambda: batch_means([1.0, np.nan] * 50, n_batches=5), "samples", "finite"),
        (lambda: batch_means(np.ones((10, 10)), n_batches=5), "samples", "one-dimensional"),
        (lambda: batch_means(np.ones(100), level=1.0), "level", "in (0, 1)"),
        (lambda: batch_means(np.ones(100), level=0.0), "level", "in (0, 1)"),
        (lambda: batch_means(np.ones(100), warmup=1.5), "warmup", "a fraction in [0, 1)"),
        (lambda: batch_means(np.ones(100), warmup=-3), "warmup", "integer count >= 0"),
        (lambda: replication_ci([1.0]), "values", "at least 2 independent replications"),
        (lambda: replication_ci([1.0, np.inf, 2.0]), "values", "finite"),
        (lambda: replication_ci([1.0, 2.0], level=95), "level", "in (0, 1)"),
        (lambda: lag1_autocorrelation([1.0, 2.0]), "batch_means", "at least 3"),
        (lambda: lag1_autocorrelation([2.0, 2.0, 2.0]), "batch_means", "not constant"),
    ],
)
def test_bad_input_raises_readable_error(call, name: str, fragment: str) -> None:
    with pytest.raises(InvalidParameter) as info:
        call()
    assert info.value.name == name
    message = str(info.value)
    assert message.startswith(f"parameter {name}=")
    assert fragment in message


def test_ratio_batch_means_matches_a_hand_computation():
    from symq.core.simstats import ratio_batch_means

    rng = np.random.default_rng(3)
    durations = rng.uniform(0.5, 2.0, 60)
    areas = durations * rng.normal(2.0, 0.3, 60)
    ci = ratio_batch_means(areas, durations, n_batches=6, level=0.9)
    # independent: batch ratios by explicit loops, t interval from scipy
    ratios = [areas[10 * b:10 * b + 10].sum() / durations[10 * b:10 * b + 10].sum()
              for b in range(6)]
    half = stats.t.ppf(0.95, 5) * np.std(ratios, ddof=1) / np.sqrt(6)
    assert ci.mean == pytest.approx(areas.sum() / durations.sum())
    assert ci.half_width == pytest.approx(half)
    assert ci.n == 6 and ci.level == 0.9


@pytest.mark.parametrize("num, den, n_batches, word", [
    ([1.0, 2.0], [1.0], 2, "same length"),
    ([1.0, 2.0], [1.0, 0.0], 2, "positive durations"),
    ([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], 2, "multiple of n_batches"),
    ([1.0, 2.0], [1.0, 1.0], 1, "n_batches"),
])
def test_ratio_batch_means_errors(num, den, n_batches, word):
    from symq.core.simstats import ratio_batch_means

    with pytest.raises(InvalidParameter, match=word):
        ratio_batch_means(num, den, n_batches=n_batches)
