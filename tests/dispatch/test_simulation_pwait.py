"""P(wait) of the dispatching simulator against closed forms, and its coverage over seeds.

Independent values: RND sends each job to a uniformly random server, so each server is an
M/G/1 queue of load ``rho`` and an arrival waits with probability ``rho`` (PASTA), whatever the
size law; LWL with exponential sizes is M/M/m, whose probability of waiting is Erlang C,
computed here in exact rationals from its defining sum.
"""

import math
from fractions import Fraction

import numpy as np
from scipy import stats

from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.laws import Exponential, Uniform


def erlang_c(m: int, rho: Fraction) -> Fraction:
    """Erlang C from its sum: a^m/m! / (1 - rho) over sum_{k<m} a^k/k! + a^m/m! / (1 - rho)."""
    a = m * rho
    top = a ** m / math.factorial(m) / (1 - rho)
    return top / (sum(a ** k / math.factorial(k) for k in range(m)) + top)


def test_rnd_waits_with_probability_rho_for_any_size_law():
    est = simulate_dispatch("rnd", 2, 0.7, Uniform(0.0, 2.0), n_jobs=400_000, rng=3, level=0.99)
    assert est.P_wait.contains(0.7), est.P_wait
    assert not est.P_wait.doubt
    low, high = est.P_wait_bounds
    assert 0.0 <= low <= est.P_wait.mean <= high <= 1.0


def test_lwl_exponential_waits_with_erlang_c():
    rho = Fraction(7, 10)
    want = float(erlang_c(3, rho))
    assert abs(want - 0.49234449760765553) < 1e-15
    est = simulate_dispatch("lwl", 3, 0.7, Exponential(1.0), n_jobs=600_000, rng=5, level=0.99)
    assert est.P_wait.contains(want), (est.P_wait, want)


def test_replications_give_p_wait_too():
    est = simulate_dispatch("rnd", 3, 0.6, Exponential(1.0), n_jobs=300_000, rng=2,
                            replications=10, level=0.99)
    assert est.P_wait.method == "replications" and est.P_wait.contains(0.6), est.P_wait


def test_p_wait_intervals_cover_at_their_level_over_seeds():
    """100 short runs (RND, m=2, rho=0.5): the number of 90% intervals that hold rho must be a
    plausible Binomial(100, 0.9) draw (two-sided, 0.1% each side)."""
    level, runs = 0.9, 100
    covered = sum(
        simulate_dispatch("rnd", 2, 0.5, Exponential(1.0), n_jobs=40_000, rng=seed,
                          level=level).P_wait.contains(0.5)
        for seed in range(runs))
    low, high = stats.binom.ppf([0.001, 0.999], runs, level)
    assert low <= covered <= high, covered


def test_p_wait_is_a_fraction_of_jobs():
    est = simulate_dispatch("jiq", 4, 0.3, Exponential(1.0), n_jobs=50_000, rng=1)
    assert 0.0 <= est.P_wait.mean <= 1.0
    assert np.all(np.isfinite(est.P_wait_bounds))
