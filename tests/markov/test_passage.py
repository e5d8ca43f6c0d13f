"""Mean first-passage times against independent references: the birth-death recursion written
here, n/(mu - lam) for a large buffer, Kac's mean return time 1/(pi_i q_i) from the stationary
law, and targets that may be avoided (inf) or never hold (an error)."""

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.markov import Jump, MarkovChain, StateVariable, build_state_space, mm1k, stationary
from symq.markov.passage import UnreachableTarget, passage_time


def _down_to_zero(n, K, lam, mu):
    """Birth-death chain: T_j (j -> j-1) = 1/mu + (lam/mu) T_{j+1}, T_K = 1/mu."""
    T = [0.0] * (K + 2)
    T[K] = 1 / mu
    for j in range(K - 1, 0, -1):
        T[j] = 1 / mu + lam / mu * T[j + 1]
    return sum(T[1:n + 1])


@pytest.mark.parametrize("n, K, lam, mu", [(3, 10, 1.0, 2.0), (5, 5, 2.0, 1.0),
                                           (1, 4, 0.5, 0.5), (7, 20, 3.0, 2.5)])
def test_mm1k_down_to_zero_is_the_birth_death_sum(n, K, lam, mu):
    result = passage_time(mm1k(K), {"lam": lam, "mu": mu}, "n == 0", initial={"n": n})
    assert result.mean == pytest.approx(_down_to_zero(n, K, lam, mu), rel=1e-12)
    assert result.means[0] == 0.0 and result.n_target == 1 and result.n_avoiding == 0
    for j in range(1, K + 1):
        assert result.means[j] == pytest.approx(_down_to_zero(j, K, lam, mu), rel=1e-12)


def test_a_large_buffer_gives_n_over_mu_minus_lam():
    result = passage_time(mm1k(200), {"lam": 1.0, "mu": 1.5}, "n == 0", initial=[6])
    assert result.mean == pytest.approx(6 / (1.5 - 1.0), rel=1e-12)


@pytest.mark.parametrize("i", [0, 2, 5])
def test_kac_mean_return_time_is_one_over_pi_q(i):
    params = {"lam": 1.3, "mu": 1.0}
    chain = mm1k(5)
    pi = stationary(chain, params).pi
    Q = build_state_space(chain, params).generator.toarray()
    q = -Q[i, i]
    means = passage_time(chain, params, f"n == {i}").means
    out = np.delete(np.arange(6), i)
    back = 1 / q + Q[i, out] @ means[out] / q  # leave i, then first passage back to i
    assert back == pytest.approx(1 / (pi[i] * q), rel=1e-12)


def test_a_sympy_target_and_a_target_by_parameter():
    lam, mu = 1.0, 2.0
    n, K = sp.Symbol("n"), sp.Symbol("lam")
    by_sympy = passage_time(mm1k(6), {"lam": lam, "mu": mu}, sp.Eq(n, 0), initial={"n": 2})
    by_text = passage_time(mm1k(6), {"lam": lam, "mu": mu}, "n <= lam - 1", initial={"n": 2})
    assert by_sympy.mean == pytest.approx(_down_to_zero(2, 6, lam, mu), rel=1e-12)
    assert by_text.mean == by_sympy.mean
    assert K.name == "lam"


def _with_a_trap():
    """0 <- 1 <-> 2 -> 3: state 0 is a trap, 3 the target; from 1 or 2 the trap may win."""
    return MarkovChain([StateVariable("x", 0, 3)],
                       [Jump("1", {"x": "x - 1"}, "x == 1 or x == 2"),
                        Jump("2", {"x": "x + 1"}, "x == 1 or x == 2")], initial={"x": 2})


def test_states_that_may_avoid_the_target_have_an_infinite_mean():
    result = passage_time(_with_a_trap(), {}, "x == 3")
    assert np.isinf(result.means[:3]).all() and result.means[3] == 0.0
    assert result.mean == float("inf") and result.n_avoiding == 3
    # to the trap-or-target set every state arrives (down at rate 1, up at rate 2):
    # m1 = 1/3 + 2 m2/3, m2 = 1/3 + m1/3 -> m1 = 5/7, m2 = 4/7
    both = passage_time(_with_a_trap(), {}, "x == 0 or x == 3")
    np.testing.assert_allclose(both.means, [0.0, 5 / 7, 4 / 7, 0.0], rtol=1e-14)


def test_a_target_that_holds_nowhere_is_an_error():
    with pytest.raises(UnreachableTarget, match="target='n == 9'"):
        passage_time(mm1k(4), {"lam": 1.0, "mu": 1.0}, "n == 9")
    with pytest.raises(UnreachableTarget):
        passage_time(_with_a_trap(), {}, "x == 3 and x == 2")


@pytest.mark.parametrize("target", ["m == 0", "n ==", "n + 1", 3.5])
def test_a_bad_target_is_refused_by_name(target):
    with pytest.raises(InvalidParameter, match="parameter target="):
        passage_time(mm1k(4), {"lam": 1.0, "mu": 1.0}, target)


def test_the_result_is_json_ready_and_prints():
    result = passage_time(mm1k(3), {"lam": 1.0, "mu": 2.0}, "n == 3")
    # up from 0 to 3: T(0->1) = 1, T(1->2) = 1 + 2*1 = 3, T(2->3) = 1 + 2*3 = 7
    assert result.mean == pytest.approx(11.0, rel=1e-13)
    assert result.to_dict()["means"] == pytest.approx([11.0, 10.0, 7.0, 0.0], rel=1e-13)
    assert "PassageTime(target=n == 3, mean=11" in str(result)
