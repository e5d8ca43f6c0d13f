"""Job-size laws: PhaseType against closed forms (hyperexponential, Erlang = gamma), and the one
conversion (as_phase_type / as_sampler) with its refusals."""

import math

import numpy as np
import pytest
import scipy.stats as st
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.laws import PhaseType, as_phase_type, as_sampler
from symq.me import ME

P, MU = np.array([0.3, 0.7]), np.array([0.5, 3.0])
H2 = PhaseType(P, np.diag(-MU))


def test_hyperexponential_against_its_closed_form():
    x = np.array([0.0, 0.3, 1.0, 4.0])
    assert np.allclose(H2.pdf(x), (P * MU * np.exp(-np.outer(x, MU))).sum(axis=1), rtol=1e-12)
    assert np.allclose(H2.ccdf(x), (P * np.exp(-np.outer(x, MU))).sum(axis=1), rtol=1e-12)
    for k in range(1, 5):
        assert H2.moment(k) == pytest.approx(math.factorial(k) * float((P / MU ** k).sum()),
                                             rel=1e-12)
    assert H2.pdf(-1.0) == 0.0 and H2.cdf(-1.0) == 0.0


def test_erlang_is_the_gamma_law():
    k, rate = 3, 2.0
    A = -rate * np.eye(k) + rate * np.eye(k, k=1)
    law = PhaseType(np.eye(k)[0], A)
    x = np.linspace(0.0, 5.0, 11)
    assert np.allclose(law.cdf(x), st.gamma(k, scale=1 / rate).cdf(x), atol=1e-13)
    assert law.icdf(0.5) == pytest.approx(st.gamma(k, scale=1 / rate).median(), rel=1e-10)
    assert law.variance() == pytest.approx(k / rate ** 2, rel=1e-12)


def test_sampling_mean_within_a_confidence_interval_and_reproducible():
    draws = H2.sample(100_000, rng=2)
    half = 4.0 * draws.std() / math.sqrt(draws.size)
    assert abs(draws.mean() - float((P / MU).sum())) < half
    assert np.array_equal(draws, H2.sample(100_000, rng=2))
    assert H2.sample((2, 3), rng=1).shape == (2, 3)


def test_tables_are_probability_laws():
    alpha_cum, trans_cum, q = H2.uniformised_tables()
    assert q == 3.0 and alpha_cum[-1] == 1.0 and np.all(trans_cum[:, -1] == 1.0)
    assert np.all(np.diff(trans_cum, axis=1) >= 0)
    alpha_cum, rates, jump_cum = H2.jump_tables()
    assert rates.tolist() == [0.5, 3.0]
    assert np.all(jump_cum[:, :2] == 0.0)  # each phase of an H2 exits surely


def test_unpacks_as_a_pair_and_converts_pairs_and_me_laws():
    alpha, A = H2
    assert as_phase_type((alpha, A)) == H2
    s = sp.Symbol("s")
    erlang = as_phase_type(ME.erlang(2, 4), "sizes")
    assert erlang.mean() == pytest.approx(0.5) and erlang.variance() == pytest.approx(0.125)
    assert as_phase_type(H2) is H2
    assert float(as_phase_type(ME.from_expr(2 / (s + 2))).cdf(1.0)) == pytest.approx(
        1 - math.exp(-2.0), rel=1e-12)


def test_refusals_name_the_parameter_and_say_why():
    with pytest.raises(InvalidParameter, match=r"sizes=scipy.stats.lognorm\(0.8\).*has none"):
        as_phase_type(st.lognorm(0.8), "sizes")
    s = sp.Symbol("s")
    damped = ME.from_expr((s**2 + 2*s + 3) / ((s + 1) * ((s + 1)**2 + 1)) * sp.Rational(2, 3))
    with pytest.raises(InvalidParameter, match="no phase-type form"):
        as_phase_type(damped)
    with pytest.raises(InvalidParameter, match="alpha"):
        as_phase_type(([0.5, 0.6], np.diag([-1.0, -2.0])))
    with pytest.raises(InvalidParameter, match="not a job-size law"):
        as_phase_type("exp")


def test_sampler_accepts_scipy_laws():
    law = as_sampler(st.lognorm(0.5), "sizes")
    draws = law.sample(50_000, rng=3)
    assert abs(draws.mean() - st.lognorm(0.5).mean()) < 4.0 * draws.std() / math.sqrt(50_000)
    assert law.mean() == pytest.approx(st.lognorm(0.5).mean())
    with pytest.raises(InvalidParameter, match="finite moment"):
        as_sampler(st.pareto(0.9), "sizes")
