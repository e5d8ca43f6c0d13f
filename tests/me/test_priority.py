"""Priority classes of the M/G/1 queue (symq.me.transforms.priority) against Cobham's means,
Pollaczek-Khinchine, and a discrete-event simulation written here (independent of the code)."""

from __future__ import annotations

from collections import deque
from fractions import Fraction

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.me.transforms import Transform, invert, moments, pollaczek_khinchine
from symq.me.transforms.priority import priority_class_time

E2 = Transform("(2*mu1/(2*mu1 + s))^2", parameters=("mu1",))
DET = Transform("exp(-d*s)", parameters=("d",))
EXP = Transform("mu3/(mu3 + s)", parameters=("mu3",))
VALUES = {"mu1": 2, "d": 0.5, "mu3": 1, "l1": 0.3, "l2": 0.4, "l3": 0.2}
# E S and E S^2 of the three laws at VALUES, and the rates, as exact fractions
ES = [Fraction(1, 2), Fraction(1, 2), Fraction(1)]
ES2 = [Fraction(3, 8), Fraction(1, 4), Fraction(2)]
LAM = [Fraction(3, 10), Fraction(2, 5), Fraction(1, 5)]


def _sigma(k: int) -> Fraction:
    return sum((lam * m for lam, m in zip(LAM[:k], ES[:k], strict=True)), Fraction(0))


@pytest.mark.parametrize("p", [1, 2, 3])
def test_non_preemptive_means_are_cobhams(p):
    w0 = sum(lam * m2 / 2 for lam, m2 in zip(LAM, ES2, strict=True))
    cobham = w0 / ((1 - _sigma(p - 1)) * (1 - _sigma(p)))
    got = priority_class_time([E2, DET, EXP], ["l1", "l2", "l3"], p).moments(2, VALUES)
    assert got.moments[0] == pytest.approx(float(cobham), rel=1e-14)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_preemptive_resume_sojourn_means(p):
    r = sum(lam * m2 / 2 for lam, m2 in zip(LAM[:p], ES2[:p], strict=True))
    s1, s2 = _sigma(p - 1), _sigma(p)
    expected = ES[p - 1] / (1 - s1) + r / ((1 - s1) * (1 - s2))
    got = priority_class_time([E2, DET, EXP], ["l1", "l2", "l3"], p, "preemptive-resume",
                              "sojourn-time").moments(1, VALUES)
    assert got.moments[0] == pytest.approx(float(expected), rel=1e-14)


def test_one_class_is_pollaczek_khinchine():
    values = {"mu1": 2, "l1": 0.7}
    one = priority_class_time([E2], ["l1"], 1).moments(5, values).moments
    pk = moments(pollaczek_khinchine(E2, "l1"), 5, values).moments
    assert one == pytest.approx(pk, rel=1e-14)


def test_preemptive_top_class_ignores_the_others():
    """Its wait is its own M/G/1 wait: moments exactly, the tail by both inversions."""
    top = priority_class_time([E2, EXP], ["l1", "l3"], 1, "preemptive-resume")
    values = {"mu1": 2, "mu3": 1, "l1": 0.8, "l3": 0.5}
    alone = pollaczek_khinchine(E2, "l1")
    assert top.moments(4, values).moments == pytest.approx(
        moments(alone, 4, {"mu1": 2, "l1": 0.8}).moments, rel=1e-14)
    mine = top.invert([0.5, 2.0], values, "ccdf", 10)
    ref = invert(alone, [0.5, 2.0], {"mu1": 2, "l1": 0.8}, "ccdf", 12)
    assert np.all(np.abs(mine.value - ref.value) <= 10 * mine.error + 1e-11)
    assert mine.atom == pytest.approx(0.6, abs=1e-15)


def _simulate_non_preemptive(n: int, seed: int) -> np.ndarray:
    """Waits of class 2 of a two-class non-preemptive M/G/1 queue: Erlang-2 (mean 1/2) class 1
    at rate 0.6, exponential (mean 1) class 2 at rate 0.4."""
    rng = np.random.default_rng(seed)
    lam = np.array([0.6, 0.4])
    gaps = rng.exponential(1 / lam.sum(), n)
    times = np.cumsum(gaps)
    cls = (rng.random(n) >= lam[0] / lam.sum()).astype(int)
    service = np.where(cls == 0, rng.gamma(2.0, 0.25, n), rng.exponential(1.0, n))
    queues: list[deque[int]] = [deque(), deque()]
    free, i, waits = 0.0, 0, []
    while i < n or queues[0] or queues[1]:
        while i < n and times[i] <= free:
            queues[cls[i]].append(i)
            i += 1
        if queues[0]:
            j = queues[0].popleft()
        elif queues[1]:
            j = queues[1].popleft()
        else:
            j, i = i, i + 1
            free = times[j]
        if cls[j] == 1:
            waits.append(free - times[j])
        free += service[j]
    return np.array(waits)


def test_non_preemptive_law_against_simulation():
    """E W_2, E W_2^2 and P(W_2 > t) inside 99.9% batch-means intervals (one seed)."""
    waits = _simulate_non_preemptive(300_000, 20261207)[5_000:]
    batches = np.array_split(waits, 30)
    low = priority_class_time([Transform("(2*mu1/(2*mu1 + s))^2", parameters=("mu1",)),
                               Transform("mu2/(mu2 + s)", parameters=("mu2",))],
                              ["l1", "l2"], 2)
    values = {"mu1": 2, "mu2": 1, "l1": 0.6, "l2": 0.4}
    m = low.moments(2, values).moments
    tails = low.invert([1.0, 4.0], values, "ccdf", 8)
    assert np.all(tails.error < 1e-6)
    checks = [(lambda x: x, m[0]), (lambda x: x * x, m[1]),
              (lambda x: x > 1.0, tails.value[0]), (lambda x: x > 4.0, tails.value[1])]
    for statistic, exact in checks:
        means = np.array([np.mean(statistic(b)) for b in batches])
        half = 3.66 * means.std(ddof=1) / np.sqrt(means.size)    # t_{29}, 99.9%
        assert abs(means.mean() - exact) <= half, (means.mean(), exact, half)


def test_bad_input_is_named():
    with pytest.raises(InvalidParameter, match="arrival_rates"):
        priority_class_time([E2, EXP], ["l1", "l1"], 1)
    with pytest.raises(InvalidParameter, match="priority_class"):
        priority_class_time([E2, EXP], ["l1", "l3"], 3)
    with pytest.raises(InvalidParameter, match="discipline"):
        priority_class_time([E2, EXP], ["l1", "l3"], 1, "preemptive-repeat")
    with pytest.raises(InvalidParameter, match="arrival_rates"):
        priority_class_time([E2, EXP], ["mu1", "l3"], 1)
    np2 = priority_class_time([E2, EXP], ["l1", "l3"], 2)
    with pytest.raises(StabilityError, match="rho"):
        np2.moments(1, {"mu1": 2, "mu3": 1, "l1": 1.0, "l3": 0.6})
    # preemptive-resume: class 1 needs only its own load below 1
    pr1 = priority_class_time([E2, EXP], ["l1", "l3"], 1, "preemptive-resume")
    assert pr1.moments(1, {"mu1": 2, "mu3": 1, "l1": 1.0, "l3": 0.6}).moments[0] > 0
    with pytest.raises(InvalidParameter, match="l3"):
        np2.moments(1, {"mu1": 2, "mu3": 1, "l1": 1.0})
