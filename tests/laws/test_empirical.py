"""The empirical law of a trace: exact moments, distribution function, bootstrap sampling.

References: exact rational arithmetic on the trace (``fractions.Fraction``), the definition of
the empirical distribution function counted by hand, and Pollaczek-Khinchine with the trace's own
moments for an M/G/1 queue fed by the bootstrap of the trace (the simulator replays the sizes).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.laws import Empirical, as_sampler

TRACE = [0.5, 2.0, 0.25, 4.0, 0.25, 1.0]


def test_moments_are_the_exact_sample_moments():
    law = Empirical(TRACE)
    exact = [Fraction(x) for x in TRACE]
    for k in (1, 2, 3):
        assert law.moment(k) == pytest.approx(float(sum(x**k for x in exact) / len(exact)),
                                              rel=1e-15)


def test_cdf_counts_the_sizes_and_icdf_inverts_it():
    law = Empirical(TRACE)
    for x in (0.0, 0.25, 0.3, 1.0, 3.9, 4.0, 5.0):
        assert law.cdf(x) == sum(v <= x for v in TRACE) / len(TRACE)
    for p in (0.0, 0.1, 1 / 3, 0.5, 0.9, 1.0):
        x = law.icdf(p)
        assert x in TRACE and law.cdf(x) >= p - 1e-15
        assert all(law.cdf(v) < p for v in TRACE if v < x)      # the smallest such size
    assert np.isinf(law.pdf(2.0)) and law.pdf(3.0) == 0.0
    assert law.support() == (0.25, 4.0)


def test_sample_draws_from_the_trace_with_its_frequencies():
    law = Empirical(TRACE)
    draws = law.sample(60_000, rng=3)
    assert set(np.unique(draws)) <= set(TRACE)
    share = np.mean(draws == 0.25)                   # 2 of the 6 sizes
    assert abs(share - 1 / 3) < 4 * np.sqrt((1 / 3) * (2 / 3) / draws.size)
    assert law.sample(rng=4) in TRACE
    assert np.array_equal(law.sample(10, rng=5), law.sample(10, rng=5))
    assert as_sampler(law) is law


def test_a_trace_feeds_the_simulator_and_pollaczek_khinchine_holds():
    from symq.meanfield.attained.simulation import simulate_attained

    trace = np.random.default_rng(11).gamma(0.5, 2.0, size=5_000)
    trace /= trace.mean()                            # mean exactly 1 (up to rounding)
    law = Empirical(trace)
    lam = 0.5
    est = simulate_attained(20, 1, lam, law, [[1.0]], 1.0, n_jobs=500_000, rng=6, level=0.999)
    m1, m2 = float(np.mean(trace)), float(np.mean(trace**2))
    assert est.mean_size == pytest.approx(m1, rel=1e-12)
    assert est.EW.contains(lam * m2 / (2 * (1 - lam * m1))), est.EW


@pytest.mark.parametrize("sizes", [[1.0], [[1.0, 2.0]], [1.0, -1.0], [1.0, np.nan],
                                   [0.0, 0.0], "abc"])
def test_bad_traces_are_refused_naming_sizes(sizes):
    with pytest.raises(InvalidParameter, match="parameter sizes="):
        Empirical(sizes)
