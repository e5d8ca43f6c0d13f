"""Tests of symq.markov.level_reduction: LevelDependentQBD (linear level reduction of a
level-dependent QBD given by numeric blocks) and its one core, reduce_levels, shared with
symq.markov.level_dependent.

The references are computed here independently: the Poisson law of M/M/infinity, the geometric
law of M/M/1, a birth-death product form, the Pollaczek-Khinchine mean of M/H2/1, the mean of an
M/M/infinity queue in a random environment (rate balance), and a large finite truncation of that
chain solved densely here (numpy) and as a declared chain by symq.markov.stationary.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, NotConverged, TruncationError
from symq.laws import hyperexponential2
from symq.markov import LevelDependentQBD as MarkovLevelDependentQBD
from symq.markov import QBDSolution as MarkovQBDSolution
from symq.markov.chain import Jump, MarkovChain, StateVariable
from symq.markov.level_dependent import level_dependent_stationary
from symq.markov.level_reduction import LevelDependentQBD, QBDSolution, reduce_levels
from symq.markov.stationary import stationary


def birth_death(lam_of, mu_of):
    return LevelDependentQBD(1, 1, up=lambda k: [[lam_of(k)]],
                             local=lambda k: [[-lam_of(k) - (mu_of(k) if k else 0.0)]],
                             down=lambda k: [[mu_of(k)]])


def poisson(a: float, k: np.ndarray) -> np.ndarray:
    return np.exp(k * math.log(a) - a - np.array([math.lgamma(x + 1.0) for x in k]))


def test_the_old_homes_are_the_same_objects():
    import symq.meanfield
    import symq.meanfield.nonlinear as nonlinear

    assert MarkovLevelDependentQBD is LevelDependentQBD is nonlinear.LevelDependentQBD
    assert symq.meanfield.LevelDependentQBD is LevelDependentQBD
    assert MarkovQBDSolution is QBDSolution is nonlinear.QBDSolution


@pytest.mark.parametrize("a", [3.0, 40.0])
def test_mm_infinity_is_poisson(a):
    sol = birth_death(lambda k: a, lambda k: float(k)).stationary(1e-16)
    k = np.arange(sol.K + 1, dtype=float)
    assert np.max(np.abs(sol.flat - poisson(a, k))) < 1e-13
    assert float(k @ sol.level_mass) == pytest.approx(a, rel=1e-12)
    assert sol.residual < 1e-12 and sol.top_mass < 1e-16


@pytest.mark.parametrize("a", [60.0, 100.0, 200.0])
def test_mm_infinity_far_above_its_truncation_start_keeps_relative_accuracy(a):
    """Up rates far above the down rates below the mean (a = 200 against n): with the diagonal
    of each censored block computed as A1 + R A2, the recursion cancelled -(a + n) + a and
    amplified the round-off by about a/n per level (E[N] came out 3.49 at a = 60, silently);
    from the row sums it is exact.  E[N] = a and P(N = 0) = e^-a to relative accuracy, from
    LevelDependentQBD and from the declared chain alike."""
    sol = birth_death(lambda k: a, lambda k: float(k)).stationary(1e-16)
    k = np.arange(sol.K + 1, dtype=float)
    assert float(k @ sol.level_mass) == pytest.approx(a, rel=1e-12)
    assert sol.levels[0][0] == pytest.approx(math.exp(-a), rel=1e-10)
    chain = MarkovChain([StateVariable("n", 0, None)],
                        [Jump("lam", {"n": "n + 1"}), Jump("n", {"n": "n - 1"}, guard="n > 0")],
                        parameters=("lam",), outputs={"EN": "n", "P0": "n == 0"})
    law = level_dependent_stationary(chain, {"lam": a})
    assert law["EN"] == pytest.approx(a, rel=1e-12)
    assert law["P0"] == pytest.approx(math.exp(-a), rel=1e-10)


def test_an_r_matrix_below_zero_is_refused():
    # a negative up rate (not a generator: reduce_levels is the core, it does not validate)
    # makes R(n) < 0, which strict mode refuses instead of clipping into a law
    blocks = [np.array([[-1.0]])] * 4
    up, down = [np.array([[-0.5]])] * 4, [np.array([[1.0]])] * 4
    with pytest.raises(NotConverged, match=r"R\(\d+\) has the entry"):
        reduce_levels(np.array([[0.5]]), np.array([[-0.5]]), np.array([[1.0]]), up, blocks,
                      down)


@pytest.mark.parametrize("lam,mu", [(0.3, 1.0), (0.8, 2.0), (0.9, 1.0)])
def test_mm1_geometric(lam, mu):
    sol = birth_death(lambda k: lam, lambda k: mu).stationary(1e-16)
    rho = lam / mu
    expected = (1 - rho) * rho ** np.arange(sol.K + 1)
    assert np.max(np.abs(sol.flat - expected)) < 1e-13
    assert sol.residual < 1e-12
    assert sol.top_mass < 1e-16


def test_birth_death_product_formula():
    def lam_of(k):
        return 2.0 / (k + 1) + 0.1 * math.sin(k)

    def mu_of(k):
        return 1.0 + 0.5 * k

    sol = birth_death(lam_of, mu_of).stationary(1e-16)
    weights = np.ones(sol.K + 1)
    for k in range(1, sol.K + 1):
        weights[k] = weights[k - 1] * lam_of(k - 1) / mu_of(k)
    expected = weights / weights.sum()
    assert np.max(np.abs(sol.flat - expected)) < 1e-14
    assert sol.residual < 1e-12


@pytest.mark.parametrize("lam,scv", [(0.5, 4.0), (0.7, 2.0)])
def test_m_h2_1_pollaczek_khinchine(lam, scv):
    alpha, A = hyperexponential2(1.0, scv, 0.5)
    a = -A.sum(axis=1)
    qbd = LevelDependentQBD(
        1, 2, up=lambda k: lam * alpha[None, :] if k == 0 else lam * np.eye(2),
        local=lambda k: np.array([[-lam]]) if k == 0 else A - lam * np.eye(2),
        down=lambda k: a[:, None] if k == 1 else np.outer(a, alpha))
    sol = qbd.stationary(1e-16)
    EQ = float(np.sum(np.arange(sol.K + 1) * sol.level_mass))
    pk = lam + lam ** 2 * (1 + scv) / (2 * (1 - lam))   # E[L] of M/G/1, E[X] = 1
    assert EQ == pytest.approx(pk, rel=1e-10)
    assert sol.residual < 1e-12


# M/M/infinity in a random environment: phase e in {0, 1} switches 0 -> 1 at rate sa, 1 -> 0
# at rate sb; arrivals at rate lam_e, each job served at rate mu (level n: n * mu).
ENV = {"lam0": 2.0, "lam1": 6.0, "mu": 1.0, "sa": 0.5, "sb": 1.5}


def _env_qbd() -> LevelDependentQBD:
    p = ENV
    switch = np.array([[-p["sa"], p["sa"]], [p["sb"], -p["sb"]]])
    arrivals = np.diag([p["lam0"], p["lam1"]])
    return LevelDependentQBD(
        2, 2, up=lambda k: arrivals,
        local=lambda k: switch - arrivals - k * p["mu"] * np.eye(2),
        down=lambda k: k * p["mu"] * np.eye(2))


def _env_chain(high: int | None) -> MarkovChain:
    cap = "" if high is None else f" and n < {high}"
    outputs = {"EN": "n", "E1": "e == 1"}
    outputs.update({f"P{k}": f"n == {k}" for k in range(16)})
    return MarkovChain(
        [StateVariable("n", 0, high), StateVariable("e", 0, 1)],
        [Jump("lam0", {"n": "n + 1"}, guard="e == 0" + cap),
         Jump("lam1", {"n": "n + 1"}, guard="e == 1" + cap),
         Jump("n*mu", {"n": "n - 1"}, guard="n > 0"),
         Jump("sa", {"e": "1"}, guard="e == 0"),
         Jump("sb", {"e": "0"}, guard="e == 1")],
        parameters=tuple(ENV), outputs=outputs)


def _dense_truncation(L: int) -> np.ndarray:
    """The generator of the environment chain on the levels 0 .. L, state (n, e) at 2 n + e,
    written entry by entry, and its stationary law by a dense solve (one balance equation
    replaced by the normalisation)."""
    p = ENV
    size = 2 * (L + 1)
    Q = np.zeros((size, size))
    for n in range(L + 1):
        for e in (0, 1):
            i = 2 * n + e
            if n < L:
                Q[i, i + 2] = p["lam1"] if e else p["lam0"]
            if n > 0:
                Q[i, i - 2] = n * p["mu"]
            Q[i, 2 * n + 1 - e] = p["sb"] if e else p["sa"]
    np.fill_diagonal(Q, -Q.sum(axis=1))
    system = Q.T.copy()
    system[-1, :] = 1.0
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    return np.linalg.solve(system, rhs)


def test_two_phase_level_dependent_against_a_large_finite_truncation():
    sol = _env_qbd().stationary(1e-16)
    L = 120
    dense = _dense_truncation(L)
    flat = np.zeros(2 * (L + 1))
    flat[:sol.flat.size] = sol.flat
    assert np.max(np.abs(flat - dense)) < 1e-13
    # the same truncation declared and solved by symq.markov.stationary
    declared = stationary(_env_chain(L), ENV)
    for k in range(16):
        assert float(sol.level_mass[k]) == pytest.approx(declared[f"P{k}"], rel=1e-10,
                                                           abs=1e-15)
    # rate balance: E[N] mu = E[lam_e], P(e = 1) = sa / (sa + sb)
    pi1 = ENV["sa"] / (ENV["sa"] + ENV["sb"])
    mean = ((1 - pi1) * ENV["lam0"] + pi1 * ENV["lam1"]) / ENV["mu"]
    assert float(np.arange(sol.K + 1) @ sol.level_mass) == pytest.approx(mean, rel=1e-12)
    assert float(sum(p[1] for p in sol.levels)) == pytest.approx(pi1, rel=1e-12)
    assert sol.residual < 1e-12


def test_declared_chain_and_numeric_blocks_give_the_same_law():
    """Two entry points, one core: level_dependent_stationary (a declared chain) and
    LevelDependentQBD (blocks as callables) on the same chain."""
    sol = _env_qbd().stationary(1e-16)
    law = level_dependent_stationary(_env_chain(None), ENV)
    for k in range(16):
        assert law[f"P{k}"] == pytest.approx(float(sol.level_mass[k]), rel=1e-12, abs=1e-15)
    assert law["EN"] == pytest.approx(float(np.arange(sol.K + 1) @ sol.level_mass), rel=1e-12)
    assert law.mean_level == pytest.approx(law["EN"], rel=1e-12)
    assert law["E1"] == pytest.approx(float(sum(p[1] for p in sol.levels)), rel=1e-12)


def test_invalid_generator():
    bad_rows = birth_death(lambda k: 1.0, lambda k: 1.0)
    bad_rows._local = lambda k: [[-0.5]]
    with pytest.raises(InvalidParameter):
        bad_rows.stationary()
    negative = LevelDependentQBD(1, 1, up=lambda k: [[-1.0]], local=lambda k: [[1.0]],
                                 down=lambda k: [[0.0]])
    with pytest.raises(InvalidParameter):
        negative.stationary()
    with pytest.raises(InvalidParameter):
        LevelDependentQBD(0, 1, up=None, local=None, down=None)
    with pytest.raises(InvalidParameter):
        LevelDependentQBD(1, 2, up=lambda k: [[1.0]], local=lambda k: [[-1.0]],
                          down=lambda k: [[1.0]]).stationary()


def test_truncation_cap():
    with pytest.raises(TruncationError, match="K=64 leaves out"):
        birth_death(lambda k: 0.999, lambda k: 1.0).stationary(1e-16, max_levels=64)


def test_a_law_that_does_not_balance_is_refused(monkeypatch):
    """The declared path checks max |pi Q| of its answer on the blocked chain, apart from the
    recursion: a law perturbed after the recursion is refused with its residual."""
    import symq.markov.level_dependent as ld

    solve = ld.reduce_levels

    def perturbed(*args, **kwargs):
        pi0, levels = solve(*args, **kwargs)
        return pi0, [levels[0] * 1.01, *levels[1:]]

    monkeypatch.setattr(ld, "reduce_levels", perturbed)
    chain = MarkovChain([StateVariable("n", 0, None)],
                        [Jump("lam", {"n": "n + 1"}), Jump("n", {"n": "n - 1"}, guard="n > 0")],
                        parameters=("lam",), outputs={"EN": "n"})
    with pytest.raises(NotConverged, match="max \\|pi Q\\|"):
        level_dependent_stationary(chain, {"lam": 3.0})
