"""GTH elimination: every entry to relative accuracy, checked against exact rationals and closed
forms where a sparse LU solve with one equation replaced loses the tiny probabilities."""

from fractions import Fraction
from math import factorial

import numpy as np
import pytest

from symq.markov import exact_stationary, stationary
from symq.markov.gth import GTH_MAX_STATES, gth_stationary
from symq.markov.library import erlang_loss


def _erlang_b(a: Fraction, c: int) -> Fraction:
    """Erlang's loss formula in exact rationals: (a^c/c!) / sum_k a^k/k!."""
    return (a**c / factorial(c)) / sum(a**k / factorial(k) for k in range(c + 1))


@pytest.mark.parametrize("a, c", [(Fraction(1, 20), 10), (Fraction(1, 2), 10), (Fraction(8), 3)])
def test_tiny_blocking_probabilities_to_relative_accuracy(a, c):
    chain = erlang_loss(c)
    params = {name: (a if name in ("lam", "a") else 1) for name in chain.parameters}
    law = stationary(chain, {k: float(v) for k, v in params.items()})
    exact = exact_stationary(chain, params)
    blocked = law.pi[-1]
    assert float(exact.pi[-1]) == pytest.approx(float(_erlang_b(a, c)), rel=1e-15)
    assert blocked == pytest.approx(float(_erlang_b(a, c)), rel=1e-12)   # 2.6e-20 at a=1/20
    assert law.method.startswith("GTH")


def test_gth_agrees_with_a_dense_solve_on_a_random_irreducible_chain():
    rng = np.random.default_rng(7)
    n = 40
    Q = rng.uniform(0.0, 1.0, (n, n)) * (rng.uniform(size=(n, n)) < 0.2)
    Q += np.diag(np.ones(n - 1), 1) + np.diag([1.0], -(n - 1))      # a cycle: irreducible
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(Q, -Q.sum(axis=1))
    A = np.vstack([Q.T[:-1], np.ones(n)])
    reference = np.linalg.solve(A, np.eye(n)[-1])
    assert gth_stationary(Q) == pytest.approx(reference, rel=1e-10)


def test_above_the_gth_size_the_sparse_solve_says_so():
    from symq.markov.library import mm1k

    law = stationary(mm1k(GTH_MAX_STATES + 10), {"lam": 0.5, "mu": 1.0})
    assert law.method.startswith("sparse LU") and law.n_states == GTH_MAX_STATES + 11
    rho = 0.5
    assert law.pi[:5] == pytest.approx([(1 - rho) * rho**k for k in range(5)], rel=1e-12)


def test_the_pinned_sparse_and_gmres_solves_agree_with_the_product_form(monkeypatch):
    """Above the GTH size: two independent M/M/1/K queues (a product form written here), by
    the pinned sparse LU and, forced, by ILU-GMRES."""
    import importlib

    from symq.markov import Jump, MarkovChain, StateVariable, stationary
    from symq.markov.statespace import build_state_space

    module = importlib.import_module("symq.markov.stationary")

    K = 60
    chain = MarkovChain([StateVariable("a", 0, K), StateVariable("b", 0, K)],
                        [Jump("0.6", {"a": "a + 1"}, "a < 60"), Jump("1", {"a": "a - 1"}, "a > 0"),
                         Jump("0.3", {"b": "b + 1"}, "b < 60"), Jump("1", {"b": "b - 1"}, "b > 0")],
                        outputs={"EA": "a"})
    law = stationary(chain, {})
    assert law.method.startswith("sparse LU") and law.n_states == (K + 1) ** 2

    def marginal(rho):
        w = rho ** np.arange(K + 1)
        return w / w.sum()

    expected = np.outer(marginal(0.6), marginal(0.3)).ravel()   # states in lexicographic order
    assert np.abs(law.pi - expected).max() < 1e-14
    generator = build_state_space(chain, {}).generator
    monkeypatch.setattr(module, "LU_MAX_STATES", 10)     # force the GMRES path on this chain
    pi, method = module._solve(generator, 1e-10)
    assert method.startswith("ILU-preconditioned GMRES")
    assert np.abs(pi - expected).max() < 1e-12
