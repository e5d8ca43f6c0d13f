"""Transient laws by uniformisation against independent references: the two-state closed form,
scipy.linalg.expm of the dense generator (with the truncation bound respected), and the
cumulative reward by numerical quadrature of the expm solution."""

import math

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
from scipy.stats import poisson

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.markov import Jump, MarkovChain, StateVariable, build_state_space, mm1k
from symq.markov.transient import poisson_window, transient


def _two_state():
    return MarkovChain([StateVariable("x", 0, 1)],
                       [Jump("a", {"x": "1"}, "x == 0"), Jump("b", {"x": "0"}, "x == 1")],
                       parameters=("a", "b"), outputs={"up": "x == 1", "r": "3*x + 1"})


@pytest.mark.parametrize("a, b, t, start", [(1.0, 2.0, 0.3, 0), (0.5, 0.1, 7.0, 1),
                                            (4.0, 4.0, 2.5, 0), (2.0, 1.0, 0.0, 1)])
def test_two_state_chain_is_the_closed_form(a, b, t, start):
    pi = np.array([b, a]) / (a + b)
    p0 = np.eye(2)[start]
    expected = pi + (p0 - pi) * math.exp(-(a + b) * t)
    law = transient(_two_state(), {"a": a, "b": b}, t, initial={"x": start})
    np.testing.assert_allclose(law.pi, expected, atol=1e-10 + 1e-14)
    assert law["up"] == pytest.approx(expected[1], abs=1e-10)
    assert law["r"] == pytest.approx(1 + 3 * expected[1], abs=4e-10)
    # cumulative time "up" over [0, t]: pi_1 t + (p0_1 - pi_1)(1 - e^{-(a+b)t})/(a+b)
    up = pi[1] * t + (p0[1] - pi[1]) * (1 - math.exp(-(a + b) * t)) / (a + b)
    assert law.cumulative["up"] == pytest.approx(up, abs=1e-9)
    assert abs(law.cumulative["up"] - up) <= law.cumulative_error["up"] + 1e-13


@pytest.mark.parametrize("K, lam, mu, t, eps", [(30, 1.0, 1.2, 20.0, 1e-12),
                                                (10, 3.0, 1.0, 0.7, 1e-10),
                                                (25, 0.4, 2.0, 5.0, 1e-6)])
def test_mm1k_against_expm_and_the_bound_holds(K, lam, mu, t, eps):
    params = {"lam": lam, "mu": mu}
    Q = build_state_space(mm1k(K), params).generator.toarray()
    p0 = np.zeros(K + 1)
    p0[0] = 1.0
    exact = p0 @ scipy.linalg.expm(Q * t)
    law = transient(mm1k(K), params, t, eps=eps)
    assert law.error_bound <= eps
    assert np.abs(law.pi - exact).sum() <= law.error_bound + 1e-14
    n = np.arange(K + 1)
    assert abs(law["EN"] - exact @ n) <= law.value_error["EN"] + 1e-13
    assert law["P_block"] == pytest.approx(exact[-1], abs=eps + 1e-14)
    # departures fire at rate mu at n >= 1
    assert law["X"] == pytest.approx(mu * (1 - exact[0]), abs=mu * eps + 1e-13)
    assert law.error_bound == pytest.approx(
        poisson.cdf(int(poisson.ppf(eps / 2, law.uniformisation_rate * t)) - 1,
                    law.uniformisation_rate * t)
        + poisson.sf(law.terms, law.uniformisation_rate * t), rel=1e-9, abs=1e-300)


def test_cumulative_reward_against_quadrature_of_expm():
    K, params, t = 8, {"lam": 1.5, "mu": 1.0}, 3.0
    Q = build_state_space(mm1k(K), params).generator.toarray()
    p0 = np.zeros(K + 1)
    p0[2] = 1.0
    n = np.arange(K + 1)
    integral, _ = scipy.integrate.quad(lambda s: p0 @ scipy.linalg.expm(Q * s) @ n, 0, t,
                                       epsabs=1e-12, epsrel=1e-12)
    law = transient(mm1k(K), params, t, initial={"n": 2}, eps=1e-12)
    assert law.cumulative["EN"] == pytest.approx(integral, rel=1e-9)
    # expected arrivals accepted over [0, t]: lam times the time not full
    full, _ = scipy.integrate.quad(lambda s: (p0 @ scipy.linalg.expm(Q * s))[-1], 0, t,
                                   epsabs=1e-13)
    assert law.cumulative["X_in"] == pytest.approx(1.5 * (t - full), rel=1e-9)


def test_several_times_in_one_pass_match_one_at_a_time():
    params = {"lam": 1.0, "mu": 1.3}
    times = [0.0, 0.5, 4.0, 12.0]
    many = transient(mm1k(12), params, times)
    assert many.pi.shape == (4, 13) and many.values["EN"].shape == (4,)
    for j, s in enumerate(times):
        one = transient(mm1k(12), params, s)
        np.testing.assert_allclose(many.pi[j], one.pi, atol=1e-15)
        assert many.values["EN"][j] == pytest.approx(one["EN"], abs=1e-13)
        assert many.cumulative["EN"][j] == pytest.approx(one.cumulative["EN"], abs=1e-12)
    assert many.values["EN"][0] == 0.0 and many.cumulative["EN"][0] == 0.0
    assert "4 times" in str(many)


def test_an_initial_distribution_and_the_json_form():
    params = {"lam": 1.0, "mu": 2.0}
    start = np.full(5, 0.2)
    Q = build_state_space(mm1k(4), params).generator.toarray()
    law = transient(mm1k(4), params, 1.0, initial=start)
    np.testing.assert_allclose(law.pi, start @ scipy.linalg.expm(Q), atol=1e-10)
    out = law.outputs()
    assert set(out) == {"EN", "EN_queue", "P_block", "X", "X_in", "error_bound"}
    assert law.to_dict()["t"] == 1.0


def test_the_poisson_window_leaves_out_at_most_eps():
    for mean, eps in [(0.01, 1e-10), (43.4, 1e-12), (1e4, 1e-8), (2.0, 0.5)]:
        low, high, weights, outside = poisson_window(mean, eps)
        assert poisson.cdf(low - 1, mean) <= eps / 2 and poisson.sf(high, mean) <= eps / 2
        assert outside <= eps
        np.testing.assert_allclose(weights, poisson.pmf(np.arange(low, high + 1), mean),
                                   rtol=1e-9)
    assert poisson_window(0.0, 1e-10) == (0, 0, pytest.approx([1.0]), 0.0)


@pytest.mark.parametrize("t", [-1.0, float("inf"), float("nan"), "1", True, [1.0, -2.0], []])
def test_bad_times_are_refused_by_name(t):
    with pytest.raises(InvalidParameter, match=r"parameter t(\[1\])?="):
        transient(mm1k(3), {"lam": 1.0, "mu": 1.0}, t)


@pytest.mark.parametrize("eps", [0.0, 1.0, -1e-3, 2.0, float("nan")])
def test_eps_outside_the_open_unit_interval_is_refused(eps):
    with pytest.raises(InvalidParameter, match="parameter eps="):
        transient(mm1k(3), {"lam": 1.0, "mu": 1.0}, 1.0, eps=eps)


def test_bad_initial_laws_are_refused():
    chain = MarkovChain([StateVariable("n", 0, 4)], [Jump("1", {"n": "n - 1"}, "n > 0")],
                        initial={"n": 2})
    with pytest.raises(InvalidParameter, match="reachable"):
        transient(chain, {}, 1.0, initial={"n": 4})  # n=4 is not reachable from n=2
    with pytest.raises(InvalidParameter, match="probability vector"):
        transient(chain, {}, 1.0, initial=np.array([0.5, 0.2, 0.2]))
    with pytest.raises(InvalidParameter, match="parameter initial="):
        transient(chain, {}, 1.0, initial={"m": 1})


def test_a_time_too_long_for_the_budget_names_the_largest_that_fits():
    with pytest.raises(ResourceLimit, match=r"parameter t=1000000000000.0 must be at most") as info:
        transient(mm1k(20), {"lam": 1.0, "mu": 1.0}, 1e12)
    fits = float(str(info.value).split("at most ")[1].split()[0])
    assert 0 < fits < 1e12


def test_a_chain_without_moves_stays_put():
    chain = MarkovChain([StateVariable("n", 0, 2)], [Jump("0", {"n": "n + 1"}, "n < 2")],
                        initial={"n": 1}, outputs={"N": "n"})
    law = transient(chain, {}, 5.0)
    assert law["N"] == 1.0 and law.cumulative["N"] == 5.0 and law.error_bound == 0.0
