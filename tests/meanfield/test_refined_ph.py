"""Refined mean field of JSQ(d) with PH service, against independent computations."""

from __future__ import annotations

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.laws import erlang, hyperexponential2
from symq.meanfield.jsq_ph import jsq_ph_drift
from symq.meanfield.refined_ph import jsq_ph_process, refined_jsq_ph
from symq.meanfield.simulation import simulate_jsq
from symq.meanfield.supermarket import refined_jsq


@pytest.mark.parametrize("law", [hyperexponential2(1.0, 5.0, 0.3), erlang(3, 1.0),
                                 ([0.6, 0.4], [[-3.0, 1.0], [0.5, -1.0]])])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_population_drift_is_the_mean_field_ode(law, d: int) -> None:
    # the transitions (jumps of whole columns x_{1..l, j}) must sum to the mean-field ODE,
    # implemented independently in jsq_ph_drift
    alpha, A = law
    K, m = 6, len(alpha)
    process = jsq_ph_process(d, K, (alpha, A))
    rng = np.random.default_rng(d)
    for _ in range(3):
        x = np.sort(rng.uniform(0, 0.3, size=(K, m)), axis=0)[::-1]
        F = process.F(x.ravel(), process.parameter_values({"lam": 0.7}))
        np.testing.assert_allclose(F.reshape(K, m), jsq_ph_drift(x, d, 0.7, (alpha, A)),
                                   atol=1e-13)


@pytest.mark.parametrize("d, lam", [(2, 0.8), (3, 0.9)])
def test_one_phase_is_the_exponential_refined_mean_field(d: int, lam: float) -> None:
    # independent construction: the exponential JSQ(d) process in the tails u_k
    ph = refined_jsq_ph(d, lam, ([1.0], [[-1.0]]), N=50)
    exp = refined_jsq(d, lam, 50)
    assert ph.ET == pytest.approx(exp.ET, rel=1e-10)
    assert ph.ET_N == pytest.approx(exp.ET_N, rel=1e-9)


def test_refined_term_explains_the_finite_n_gap_h2() -> None:
    # N = 40 servers, H2 (SCV 4): the O(1/N) gap is several CI widths, pi + V/N closes it
    alpha, A = hyperexponential2(1.0, 4.0)
    refined = refined_jsq_ph(2, 0.8, (alpha, A), N=40)
    sim = simulate_jsq(40, 2, 0.8, (alpha, A), n_jobs=4_000_000, rng=100, level=0.99)
    ci = sim.ET
    assert ci.low > refined.ET                 # the mean field alone is outside
    assert ci.low <= refined.ET_N <= ci.high   # the refined value is inside
    assert refined.drift_residual < 1e-10


def test_bad_input() -> None:
    alpha, A = hyperexponential2(1.0, 4.0)
    with pytest.raises(StabilityError):
        refined_jsq_ph(2, 1.0, (alpha, A), N=10)
    with pytest.raises(InvalidParameter, match="parameter K"):
        refined_jsq_ph(2, 0.5, (alpha, A), N=10, K=1000)
    with pytest.raises(InvalidParameter, match="parameter N"):
        refined_jsq_ph(2, 0.5, (alpha, A), N=0)
    with pytest.raises(InvalidParameter, match="alpha"):
        refined_jsq_ph(2, 0.5, ([0.5, 0.6], A), N=10)
