"""Stationary laws of the classic library against textbook closed forms (independent formulas
written here), and the generator's construction."""

import json
import math

import numpy as np
import pytest
import sympy as sp

from symq.markov import (
    Jump,
    MarkovChain,
    StateVariable,
    build_state_space,
    engset,
    erlang_loss,
    mm1k,
    mmck,
    stationary,
    tandem,
)


@pytest.mark.parametrize("lam, mu, K", [(1.0, 2.0, 5), (3.0, 2.0, 8), (1.0, 1.0, 4),
                                        (0.3, 7.0, 30)])
def test_mm1k_is_the_truncated_geometric_law(lam, mu, K):
    rho = lam / mu
    weights = np.array([rho**n for n in range(K + 1)])
    expected = weights / weights.sum()
    law = stationary(mm1k(K), {"lam": lam, "mu": mu})
    assert law.n_states == K + 1
    np.testing.assert_allclose(law.pi, expected, rtol=1e-12, atol=1e-15)
    assert law["P_block"] == pytest.approx(expected[-1], rel=1e-12)
    assert law["EN"] == pytest.approx(float(np.arange(K + 1) @ expected), rel=1e-12)
    assert law.residual <= 1e-10


def _erlang_b(c, a):
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@pytest.mark.parametrize("c, lam, mu", [(1, 1.0, 1.0), (5, 4.0, 1.0), (20, 15.0, 1.2),
                                        (50, 60.0, 1.0)])
def test_erlang_loss_blocking_is_erlang_b(c, lam, mu):
    law = stationary(erlang_loss(c), {"lam": lam, "mu": mu})
    assert law["P_block"] == pytest.approx(_erlang_b(c, lam / mu), rel=1e-11)


@pytest.mark.parametrize("N, c, lam, mu", [(5, 2, 0.5, 1.0), (10, 4, 0.3, 0.7), (3, 3, 2.0, 1.0)])
def test_engset_time_congestion(N, c, lam, mu):
    a = lam / mu
    weights = [math.comb(N, n) * a**n for n in range(c + 1)]
    law = stationary(engset(N, c), {"lam": lam, "mu": mu})
    np.testing.assert_allclose(law.pi, np.array(weights) / sum(weights), rtol=1e-12)
    assert law["P_block"] == pytest.approx(weights[-1] / sum(weights), rel=1e-12)


def _mmck_textbook(c, K, lam, mu):
    """Gross & Harris, Fundamentals of Queueing Theory, section 2.5: p0, Lq and L."""
    a, rho = lam / mu, lam / (c * mu)
    tail = sum(rho**k for k in range(K - c + 1))
    p0 = 1.0 / (sum(a**n / math.factorial(n) for n in range(c)) + a**c / math.factorial(c)
                * tail)
    pK = a**K / (math.factorial(c) * c**(K - c)) * p0
    if abs(rho - 1) < 1e-12:
        lq = p0 * a**c / math.factorial(c) * (K - c) * (K - c + 1) / 2
    else:
        lq = (p0 * a**c * rho / (math.factorial(c) * (1 - rho)**2)
              * (1 - rho**(K - c + 1) - (1 - rho) * (K - c + 1) * rho**(K - c)))
    return lq, lq + lam * (1 - pK) / mu, pK


@pytest.mark.parametrize("c, K, lam, mu", [(2, 6, 1.5, 1.0), (3, 10, 5.0, 1.0),
                                           (4, 12, 2.0, 0.5), (1, 7, 0.8, 1.0)])
def test_mmck_mean_numbers_are_the_textbook_ones(c, K, lam, mu):
    lq, ln, pK = _mmck_textbook(c, K, lam, mu)
    law = stationary(mmck(c, K), {"lam": lam, "mu": mu})
    assert law["EN_queue"] == pytest.approx(lq, rel=1e-11)
    assert law["EN"] == pytest.approx(ln, rel=1e-11)
    assert law["P_block"] == pytest.approx(pK, rel=1e-11)


@pytest.mark.parametrize("chain, params, service", [
    (mmck(3, 9), {"lam": 2.5, "mu": 1.0}, 1.0),
    (erlang_loss(4), {"lam": 3.0, "mu": 2.0}, 0.5),
    (engset(6, 3), {"lam": 0.4, "mu": 0.8}, 1.25),
])
def test_throughput_obeys_littles_law_and_flow_balance(chain, params, service):
    law = stationary(chain, params)
    # Little's law on the servers: mean number in service = throughput * mean service time
    assert law["EN"] - law.values.get("EN_queue", 0.0) == pytest.approx(law["X"] * service,
                                                                        rel=1e-11)
    assert law["X"] == pytest.approx(law["X_in"], rel=1e-11)
    if chain.name.startswith("M/M"):
        assert law["X_in"] == pytest.approx(params["lam"] * (1 - law["P_block"]), rel=1e-11)


def test_tandem_flow_balance_and_state_count():
    B1, B2 = 4, 3
    law = stationary(tandem(B1, B2), {"lam": 1.0, "mu1": 1.3, "mu2": 0.9})
    assert law.n_states == (B1 + 1) * (B2 + 1)
    assert law["X_in"] == pytest.approx(1.0 * (1 - law["P_block"]), rel=1e-11)
    assert law["X"] == pytest.approx(law["X_in"], rel=1e-11)
    # Little's law on node 2's server: P(n2 > 0) = X / mu2
    busy2 = law.pi[law.states[:, 1] > 0].sum()
    assert busy2 == pytest.approx(law["X"] / 0.9, rel=1e-11)


def test_generator_rates_add_and_self_loops_are_dropped():
    chain = MarkovChain([StateVariable("n", 0, 2)],
                        [Jump("a", {"n": "n + 1"}, "n < 2"),
                         Jump("b", {"n": "min(n + 1, 2)"}),  # a self-loop at n = 2
                         Jump(sp.Symbol("d") * 2, {"n": "n - 1"}, "n > 0")],
                        parameters=("a", "b", "d"))
    Q = build_state_space(chain, {"a": 1.0, "b": 0.5, "d": 3.0}).generator.toarray()
    expected = np.array([[-1.5, 1.5, 0.0], [6.0, -7.5, 1.5], [0.0, 6.0, -6.0]])
    np.testing.assert_array_equal(Q, expected)


def test_only_reachable_states_are_built_in_lexicographic_order():
    chain = MarkovChain([StateVariable("x", 0, 5), StateVariable("y", 0, 5)],
                        [Jump(1, {"x": "x + 1", "y": "y + 1"}, "x < 3"),
                         Jump(1, {"x": "x - 1", "y": "y - 1"}, "x > 0")])
    space = build_state_space(chain)
    np.testing.assert_array_equal(space.states, [[0, 0], [1, 1], [2, 2], [3, 3]])
    law = stationary(chain)
    np.testing.assert_allclose(law.pi, [0.25] * 4, rtol=1e-12)


def test_an_absorbing_state_takes_all_the_mass_and_is_reported():
    chain = MarkovChain([StateVariable("n", 0, 3)],
                        [Jump(1, {"n": "n + 1"}, "n < 3"), Jump(2, {"n": "n - 1"}, "0 < n < 3")],
                        initial={"n": 1})
    law = stationary(chain)
    np.testing.assert_allclose(law.pi, [0, 0, 0, 1], atol=0)
    assert law.absorbing == ("n=3",) and law.n_transient == 3
    assert "transient" in law.method


def test_the_result_follows_the_protocol():
    law = stationary(mm1k(3), {"lam": 1.0, "mu": 2.0})
    data = json.loads(json.dumps(law.to_dict()))
    assert data["exactness"] == "numeric" and len(data["pi"]) == 4
    assert "StationaryLaw(n_states=4" in str(law)
    assert "StationaryLaw" in law._repr_markdown_()
    assert np.all((law.pi >= 0) & (law.pi <= 1)) and law.pi.sum() == pytest.approx(1, abs=1e-15)


def test_a_guard_mixing_a_parameter_clause_and_a_state_clause():
    # "lam > 5 or n < 3": numpy's logical_or.reduce of a scalar and a vector once failed to
    # broadcast; with lam = 1 the chain is M/M/1/3 at rho = 1: uniform on 0..3
    from symq.markov import Jump, MarkovChain, StateVariable, stationary

    chain = MarkovChain([StateVariable("n", 0, 3)],
                        [Jump("lam", {"n": "n + 1"}, "lam > 5 or n < 3"),
                         Jump("1", {"n": "n - 1"}, "n > 0")],
                        parameters=("lam",), outputs={"P_full": "lam > 5 or n == 3"})
    assert stationary(chain, {"lam": 1.0})["P_full"] == pytest.approx(0.25, rel=1e-14)
