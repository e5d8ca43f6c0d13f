"""Finite-N JSQ(d) simulator against independent evidence.

Exact references: M/M/1 (N = 1, or d = 1 which splits the system into N independent M/M/1
queues), Pollaczek-Khinchine for d = 1 with H2 service, the closed-form mean-field fixed point
u_k = lam^(2^k - 1) for d = 2 (Vvedenskaya et al. 1996; Mitzenmacher 2001), work conservation
(busy fraction = lam E[S]).
"""

import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.meanfield.simulation import JSQEstimate, simulate_jsq, validate_ph


def h2(mean: float = 1.0, scv: float = 4.0):
    """Balanced-means hyperexponential H2 as a PH (alpha, A), built by hand."""
    p = (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0))) / 2.0
    mu1, mu2 = 2.0 * p / mean, 2.0 * (1.0 - p) / mean
    return np.array([p, 1.0 - p]), np.diag([-mu1, -mu2])


def mean_field_response_d2(lam: float, kmax: int = 60) -> float:
    """E[T] = sum_k u_k / lam with u_k = lam^(2^k - 1) (d = 2, exponential service)."""
    return sum(lam ** (2.0**k - 1.0) for k in range(1, kmax + 1)) / lam


def test_h2_helper_moments():
    alpha, A = h2()
    _, _, mean = validate_ph(alpha, A)
    inv = np.linalg.inv(-A)
    second = 2.0 * alpha @ inv @ inv @ np.ones(2)
    assert mean == pytest.approx(1.0)
    assert second / mean**2 - 1.0 == pytest.approx(4.0)


@pytest.mark.parametrize("lam", [0.5, 0.8])
def test_single_server_is_mm1(lam):
    est = simulate_jsq(N=1, d=2, lam=lam, n_jobs=2_000_000, rng=11, level=0.99)
    assert isinstance(est, JSQEstimate)
    assert est.ET.contains(1.0 / (1.0 - lam))
    assert est.EQ.contains(lam / (1.0 - lam))
    # M/M/1: P(Q >= k) = lam^k
    assert np.allclose(est.tail[:3], lam ** np.arange(1, 4), rtol=0.03)


@pytest.mark.parametrize("lam", [0.5, 0.8])
def test_d1_is_independent_mm1_queues(lam):
    # 10 batches: JSQ(1) relaxes per queue, 64 * 10 * 50 * 2/(1 - 0.8)^2 = 1.6e6 departures
    est = simulate_jsq(N=50, d=1, lam=lam, n_jobs=2_000_000, rng=12, level=0.99, n_batches=10)
    assert est.ET.contains(1.0 / (1.0 - lam))
    assert est.utilisation.contains(lam)


def test_d1_h2_matches_pollaczek_khinchine():
    lam = 0.5
    est = simulate_jsq(N=50, d=1, lam=lam, n_jobs=3_000_000, sizes=h2(), rng=13, level=0.99)
    es, es2 = 1.0, 5.0  # E[S] = 1, E[S^2] = (1 + SCV) E[S]^2
    pk = es + lam * es2 / (2.0 * (1.0 - lam))
    assert est.ET.contains(pk)
    assert est.utilisation.contains(lam * es)
    assert est.mean_size == pytest.approx(1.0)


def test_large_n_close_to_mean_field_and_work_conserving():
    lam = 0.9
    mf = mean_field_response_d2(lam)
    est = simulate_jsq(N=1000, d=2, lam=lam, n_jobs=8_000_000, rng=14, level=0.99)
    ci = est.ET
    # mean-field error is positive and O(1/N): consistent with >= mf, and within a few percent
    assert ci.high >= mf
    assert ci.mean <= 1.03 * mf
    assert est.utilisation.contains(lam)
    assert abs(est.tail[0] - lam) <= est.utilisation.half_width + 1e-3
    # Little's law between the two independent estimators
    assert est.EQ.mean / lam == pytest.approx(ci.mean, rel=0.01)
    # tail close to the doubly exponential fixed point
    u = lam ** (2.0 ** np.arange(1, 5) - 1.0)
    assert np.allclose(est.tail[:4], u, atol=0.01)


def test_small_n_mean_field_error_is_positive():
    lam = 0.9
    est = simulate_jsq(N=20, d=2, lam=lam, n_jobs=4_000_000, rng=15, level=0.99)
    assert est.ET.low > mean_field_response_d2(lam)


def test_without_replacement_is_faster_at_small_n():
    kw = dict(N=10, d=2, lam=0.9, n_jobs=6_000_000, level=0.99)
    with_r = simulate_jsq(replace=True, rng=16, **kw).ET
    without = simulate_jsq(replace=False, rng=17, **kw).ET
    assert without.high < with_r.low


def test_same_seed_same_result():
    kw = dict(N=20, d=3, lam=0.7, n_jobs=30_000, sizes=h2(), n_batches=5)
    a = simulate_jsq(rng=5, **kw)
    b = simulate_jsq(rng=5, **kw)
    c = simulate_jsq(rng=6, **kw)
    assert a.ET == b.ET and a.EQ == b.EQ
    assert np.array_equal(a.tail, b.tail)
    assert a.ET != c.ET
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert simulate_jsq(rng=g1, **kw).EQ == simulate_jsq(rng=g2, **kw).EQ


def test_without_replacement_d_equals_n_is_jsq():
    # d = N without replacement probes every server: the queue lengths never differ by more
    # than one when starting empty, so P(Q >= 2) <= P(all busy) and u_3 is tiny.
    est = simulate_jsq(N=4, d=4, lam=0.5, n_jobs=200_000, replace=False, rng=3)
    assert est.utilisation.contains(0.5) or abs(est.utilisation.mean - 0.5) < 0.01
    assert est.tail[2] < est.tail[1] < est.tail[0]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(N=0), "N"),
        (dict(N=2.5), "N"),
        (dict(d=0), "d"),
        (dict(N=3, d=4, replace=False), "d"),
        (dict(n_jobs=100), "n_jobs"),
        (dict(lam=-0.1), "lam"),
        (dict(warmup=1.0), "warmup"),
        (dict(level=1.5), "level"),
        (dict(rng=-1), "rng"),
        (dict(sizes=([0.5, 0.6], np.diag([-1.0, -2.0]))), "alpha"),
        (dict(sizes=([1.0], [[1.0]])), "A"),
        (dict(sizes=([0.5, 0.5], [[-1.0, -0.5], [0.0, -1.0]])), "A"),
        (dict(sizes=([0.5, 0.5], [[-1.0, 2.0], [0.0, -1.0]])), "A"),
        (dict(sizes=([0.5, 0.5], [[-1.0, 1.0], [1.0, -1.0]])), "A"),
        (dict(sizes=([1.0], [[-1.0, 0.0]])), "A"),
    ],
)
def test_invalid_parameters(kwargs, name):
    args = dict(N=10, d=2, lam=0.5, n_jobs=20_000)
    args.update(kwargs)
    with pytest.raises(InvalidParameter) as info:
        simulate_jsq(**args)
    assert info.value.name == name
    assert f"parameter {name}=" in str(info.value) and "must be" in str(info.value)


def test_unstable_load_raises():
    with pytest.raises(StabilityError, match=r"lam\*E\[S\]=1 .*must be < 1"):
        simulate_jsq(N=10, d=2, lam=1.0, n_jobs=10_000)
    # load depends on E[S]: lam = 0.6 with E[S] = 2 is unstable
    with pytest.raises(StabilityError, match="E\\[S\\]=2"):
        simulate_jsq(N=10, d=2, lam=0.6, n_jobs=10_000, sizes=h2(mean=2.0))


def test_buffer_overflow_is_reported():
    with pytest.raises(InvalidParameter, match="max_queue"):
        simulate_jsq(N=1, d=1, lam=0.9, n_jobs=200_000, rng=1, max_queue=3, n_batches=10)


def test_progress_bar_run_gives_the_same_result(capsys) -> None:
    # the chunked run (progress bar) continues the same random stream and state exactly
    plain = simulate_jsq(50, 2, 0.7, n_jobs=60_000, rng=11)
    chunked = simulate_jsq(50, 2, 0.7, n_jobs=60_000, rng=11, progress=True)
    assert chunked.ET.mean == plain.ET.mean
    assert np.array_equal(chunked.tail, plain.tail)
    assert chunked.EQ.mean == plain.EQ.mean
