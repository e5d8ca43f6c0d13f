"""The exact rational solve: checked by substitution written here, and against the float solve
on chains that are not reversible."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.markov import Jump, MarkovChain, StateVariable, exact_stationary, stationary, tandem
from symq.markov.exact import MAX_EXACT_STATES


def _cycle():
    """0 -> 1 -> 2 -> 0 at rates a, b, c, and 0 -> 2 at rate d: not reversible."""
    return MarkovChain([StateVariable("s", 0, 2)],
                       [Jump("a", {"s": "1"}, "s == 0"), Jump("b", {"s": "2"}, "s == 1"),
                        Jump("c", {"s": "0"}, "s == 2"), Jump("d", {"s": "2"}, "s == 0")],
                       parameters=("a", "b", "c", "d"), outputs={"P0": "s == 0", "Es": "s"})


def test_three_state_cycle_exact_law_satisfies_the_balance_equations():
    a, b, c, d = Fraction(1), Fraction(2), Fraction(3, 2), Fraction(1, 3)
    law = exact_stationary(_cycle(), {"a": a, "b": b, "c": c, "d": d})
    pi = [Fraction(int(p.p), int(p.q)) for p in law.pi]
    # the generator written out by hand
    Q = [[-(a + d), a, d], [0, -b, b], [c, 0, -c]]
    assert all(sum(pi[i] * Q[i][j] for i in range(3)) == 0 for j in range(3))
    assert sum(pi) == 1
    assert law["P0"] == sp.Rational(pi[0].numerator, pi[0].denominator)
    assert law["Es"] == sp.nsimplify(pi[1] + 2 * pi[2])
    numeric = stationary(_cycle(), {"a": 1.0, "b": 2.0, "c": 1.5, "d": 1 / 3})
    np.testing.assert_allclose(numeric.pi, [float(p) for p in pi], rtol=1e-12)


def _tandem_generator(B1, B2, lam, mu1, mu2):
    """The blocking tandem's generator, written independently of the declaration."""
    states = [(i, j) for i in range(B1 + 1) for j in range(B2 + 1)]
    at = {s: k for k, s in enumerate(states)}
    Q = [[Fraction(0)] * len(states) for _ in states]
    for (i, j), k in at.items():
        moves = []
        if i < B1:
            moves.append(((i + 1, j), lam))
        if i > 0 and j < B2:
            moves.append(((i - 1, j + 1), mu1))
        if j > 0:
            moves.append(((i, j - 1), mu2))
        for target, rate in moves:
            Q[k][at[target]] += rate
            Q[k][k] -= rate
    return states, Q


def test_tandem_exact_law_solves_pi_q_equal_zero_and_matches_the_float_solve():
    B1, B2 = 3, 2
    lam, mu1, mu2 = Fraction(1), Fraction(3, 2), Fraction(4, 5)
    law = exact_stationary(tandem(B1, B2), {"lam": lam, "mu1": mu1, "mu2": mu2})
    states, Q = _tandem_generator(B1, B2, lam, mu1, mu2)
    assert [tuple(s) for s in law.states.tolist()] == states
    pi = [Fraction(int(p.p), int(p.q)) for p in law.pi]
    n = len(pi)
    assert all(sum(pi[i] * Q[i][j] for i in range(n)) == 0 for j in range(n))
    assert sum(pi) == 1
    numeric = stationary(tandem(B1, B2), {"lam": 1.0, "mu1": 1.5, "mu2": 0.8})
    np.testing.assert_allclose(numeric.pi, [float(p) for p in pi], rtol=1e-12, atol=0)
    for key, value in law.values.items():
        assert numeric[key] == pytest.approx(float(value), rel=1e-12)
    # throughput = accepted arrivals = lam * (1 - P(n1 == B1)), exactly
    assert law["X"] == law["X_in"] == 1 - law["P_block"]


def test_the_exact_solve_refuses_floats_and_large_chains():
    with pytest.raises(InvalidParameter, match="lam=0.5 .*exact rational.*Fraction"):
        exact_stationary(tandem(2, 2), {"lam": 0.5, "mu1": 1, "mu2": 1})
    big = MarkovChain([StateVariable("n", 0, 10 * MAX_EXACT_STATES)],
                      [Jump(1, {"n": "n + 1"}, "n < 4000"), Jump(1, {"n": "n - 1"}, "n > 0")])
    with pytest.raises(InvalidParameter, match=f"at most {MAX_EXACT_STATES} reachable states"):
        exact_stationary(big)


def test_the_exact_result_follows_the_protocol():
    law = exact_stationary(_cycle(), {"a": 1, "b": 1, "c": 1, "d": 0})
    assert law.pi == (sp.Rational(1, 3),) * 3
    assert law.to_dict()["exactness"] == "exact"
    assert "ExactStationaryLaw(n_states=3" in str(law)
