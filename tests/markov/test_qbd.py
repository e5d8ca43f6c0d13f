"""Level-independent QBDs: solve_qbd on blocks and qbd_stationary on declared chains, against
closed forms written here (M/M/1, Pollaczek-Khinchine, Erlang C) and a large truncated chain
solved by the finite solver."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.markov.chain import Jump, MarkovChain, StateVariable
from symq.markov.levels import qbd_stationary
from symq.markov.qbd import polynomial_tail, solve_qbd
from symq.markov.statespace import build_state_space
from symq.markov.stationary import stationary


def one(x: float) -> np.ndarray:
    return np.array([[x]])


def mm1_blocks(lam: float, mu: float) -> tuple[np.ndarray, ...]:
    return one(-lam), one(lam), one(mu), one(lam), one(-lam - mu), one(mu)


# ------------------------------------------------------------------ blocks
@pytest.mark.parametrize("lam, mu", [(1.0, 2.0), (3.0, 4.0), (0.2, 5.0)])
def test_mm1_as_a_one_phase_qbd(lam, mu):
    rho = lam / mu
    sol = solve_qbd(*mm1_blocks(lam, mu))
    assert sol.R[0, 0] == pytest.approx(rho, rel=1e-13)
    assert sol.eta == pytest.approx(rho, rel=1e-13)      # the caudal characteristic
    assert sol.G[0, 0] == pytest.approx(1.0, abs=1e-13)  # recurrent: G stochastic
    assert sol.drift == pytest.approx(lam - mu, rel=1e-13)
    for n in range(6):
        assert sol.level_probability(n) == pytest.approx((1 - rho) * rho ** n, rel=1e-12)
        assert sol.tail(n) == pytest.approx(rho ** n, rel=1e-12)
    assert sol.mean_level == pytest.approx(rho / (1 - rho), rel=1e-12)
    # E[N^2] of the geometric law: rho (1 + rho) / (1 - rho)^2
    assert sol.level_moment(2) == pytest.approx(rho * (1 + rho) / (1 - rho) ** 2, rel=1e-12)
    assert sol.level_variance == pytest.approx(rho / (1 - rho) ** 2, rel=1e-11)
    assert sol.residual < 1e-13


def test_m_e2_1_against_pollaczek_khinchine():
    lam, mu, k = 1.3, 2.0, 2                   # Erlang-2 service of mean 1/mu
    S = np.array([[-k * mu, k * mu], [0.0, -k * mu]])
    s = -S.sum(axis=1)
    alpha = np.array([1.0, 0.0])
    sol = solve_qbd(one(-lam), lam * alpha[None, :], s[:, None], lam * np.eye(2),
                    S - lam * np.eye(2), np.outer(s, alpha))
    ES, ES2 = 1 / mu, (k + 1) / (k * mu ** 2)  # Erlang-k: E S^2 = (k+1)/(k mu^2)
    rho = lam * ES
    L = rho + lam ** 2 * ES2 / (2 * (1 - rho))
    assert sol.mean_level == pytest.approx(L, rel=1e-12)
    assert sol.pi0[0] == pytest.approx(1 - rho, rel=1e-12)
    np.testing.assert_allclose(sol.G.sum(axis=1), 1.0, atol=1e-13)
    assert sol.iterations <= 10                # quadratic convergence


def _mmpp(a=0.3, b=0.7, l0=0.5, l1=2.0, mu=1.6):
    D0 = np.array([[-a - l0, a], [b, -b - l1]])
    D1 = np.diag([l0, l1])
    M = mu * np.eye(2)
    return D0, D1, M


def test_mmpp_m1_against_a_large_truncated_chain():
    a, b, l0, l1, mu = 0.3, 0.7, 0.5, 2.0, 1.6
    D0, D1, M = _mmpp(a, b, l0, l1, mu)
    sol = solve_qbd(D0, D1, M, D1, D0 - M, M)
    K = 400
    finite = MarkovChain(
        [StateVariable("n", 0, K), StateVariable("e", 0, 1)],
        [Jump("a", {"e": "1"}, guard="e == 0"), Jump("b", {"e": "0"}, guard="e == 1"),
         Jump("l0", {"n": "n + 1"}, guard="e == 0 and n < K"),
         Jump("l1", {"n": "n + 1"}, guard="e == 1 and n < K"),
         Jump("mu", {"n": "n - 1"}, guard="n > 0")],
        parameters=("a", "b", "l0", "l1", "mu", "K"), outputs={"EN": "n", "P0": "n == 0"})
    params = {"a": a, "b": b, "l0": l0, "l1": l1, "mu": mu, "K": K}
    law = stationary(finite, params)
    assert sol.tail(K) < 1e-12                 # the truncation mass is negligible
    pi = law.pi.reshape(K + 1, 2)               # lexicographic: n, then e
    for n in range(0, 30):
        np.testing.assert_allclose(sol.level_law(n), pi[n], rtol=1e-8, atol=1e-14)
    assert sol.mean_level == pytest.approx(law["EN"], rel=1e-8)
    assert sol.eta < 1 and sol.eta == pytest.approx(
        max(abs(np.linalg.eigvals(sol.R))), rel=1e-14)
    # the declared chain with an unbounded level agrees too
    unbounded = MarkovChain(
        [StateVariable("n", 0, None), StateVariable("e", 0, 1)],
        [Jump("a", {"e": "1"}, guard="e == 0"), Jump("b", {"e": "0"}, guard="e == 1"),
         Jump("l0", {"n": "n + 1"}, guard="e == 0"),
         Jump("l1", {"n": "n + 1"}, guard="e == 1"),
         Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
        parameters=("a", "b", "l0", "l1", "mu"),
        outputs={"EN": "n", "P0": "n == 0", "X": "throughput:serve", "busy_high": "n*e"})
    q = qbd_stationary(unbounded, {k: v for k, v in params.items() if k != "K"})
    assert q["EN"] == pytest.approx(law["EN"], rel=1e-8)
    assert q["P0"] == pytest.approx(law["P0"], rel=1e-8)
    lam = (b * l0 + a * l1) / (a + b)           # the mean arrival rate: throughput
    assert q["X"] == pytest.approx(lam, rel=1e-10)
    assert q["busy_high"] == pytest.approx(float(pi[:, 1] @ np.arange(K + 1)), rel=1e-8)
    assert q.truncation_bound == 0.0


@pytest.mark.parametrize("lam, mu", [(2.0, 2.0), (3.0, 2.0)])
def test_unstable_qbds_raise_with_the_drift(lam, mu):
    with pytest.raises(StabilityError, match="drift") as info:
        solve_qbd(*mm1_blocks(lam, mu))
    assert info.value.drift == pytest.approx(lam - mu, abs=1e-12)


def test_bad_blocks_are_named():
    B1, B0, B2, A0, A1, A2 = mm1_blocks(1.0, 2.0)
    with pytest.raises(InvalidParameter, match=r"A0 \+ A1 \+ A2=.*rows summing to 0"):
        solve_qbd(B1, B0, B2, A0, one(-2.0), A2)
    with pytest.raises(InvalidParameter, match=r"A0=.*rates >= 0"):
        solve_qbd(B1, B0, B2, one(-1.0), A1, A2)
    with pytest.raises(InvalidParameter, match=r"B0=.*1 x 2"):
        solve_qbd(B1, B0, B2, np.eye(2), -3 * np.eye(2), 2 * np.eye(2))


def test_polynomial_tail_against_geometric_sums():
    # sum_j j^2 x^j = x (1 + x) / (1 - x)^3
    x = 0.3
    samples = [[0.0], [1.0], [4.0]]
    assert polynomial_tail([1.0], [[x]], samples) == pytest.approx(x * (1 + x) / (1 - x) ** 3,
                                                                   rel=1e-13)


# ------------------------------------------------------------------ declared chains
def mm1(outputs=None):
    return MarkovChain([StateVariable("n", 0, None)],
                       [Jump("lam", {"n": "n + 1"}, label="arrive"),
                        Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
                       parameters=("lam", "mu"), outputs=outputs or {})


def test_declared_mm1_against_closed_forms():
    lam, mu = 0.8, 1.0
    rho = lam / mu
    law = qbd_stationary(mm1({"EN": "n", "P0": "n == 0", "X": "throughput:serve",
                              "EN2": "n**2", "Q": "Max(n - 2, 0)", "big": "n > 5"}),
                         {"lam": lam, "mu": mu})
    assert law["EN"] == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert law["P0"] == pytest.approx(1 - rho, rel=1e-12)
    assert law["X"] == pytest.approx(lam, rel=1e-12)
    assert law["EN2"] == pytest.approx(rho * (1 + rho) / (1 - rho) ** 2, rel=1e-11)
    assert law["Q"] == pytest.approx(rho ** 3 / (1 - rho), rel=1e-10)   # E[(N - 2)^+]
    assert law["big"] == pytest.approx(rho ** 6, rel=1e-10)
    assert law.eta == pytest.approx(rho, rel=1e-12)
    assert law.mean_level == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert law.truncation_bound == 0.0
    assert law.levels_summed > 0           # Max(n - 2, 0) was summed, then closed form


def test_a_condition_left_open_is_bounded_by_the_tail_mass():
    # sin(n) > 0 is not decided for every large n: summed, with the tail mass as its bound
    lam, mu = 1.0, 2.0
    rho = lam / mu
    law = qbd_stationary(mm1({"up": "sin(n) > 0"}), {"lam": lam, "mu": mu}, eps=1e-13)
    expected = sum((1 - rho) * rho ** n for n in range(200) if math.sin(n) > 0)
    assert law["up"] == pytest.approx(expected, abs=2e-13)
    assert 0 < law.bounds["up"] < 1e-13 and law.truncation_bound == law.bounds["up"]


def erlang_c(c: int, a: float) -> float:
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def test_declared_mmc_waiting_probability_is_erlang_c():
    c, lam, mu = 3, 2.4, 1.0
    chain = MarkovChain(
        [StateVariable("b", 0, c), StateVariable("q", 0, None)],
        [Jump("lam", {"b": "b + 1"}, guard="b < c"),
         Jump("lam", {"q": "q + 1"}, guard="b == c"),
         Jump("b*mu", {"b": "b - 1"}, guard="q == 0 and b > 0"),
         Jump("c*mu", {"q": "q - 1"}, guard="q > 0")],
        parameters=("lam", "mu", "c"), outputs={"Pwait": "b == c", "Lq": "q"})
    law = qbd_stationary(chain, {"lam": lam, "mu": mu, "c": c})
    a, rho = lam / mu, lam / (c * mu)
    C = erlang_c(c, a)
    assert law["Pwait"] == pytest.approx(C, rel=1e-12)
    assert law["Lq"] == pytest.approx(C * rho / (1 - rho), rel=1e-11)
    assert law.phases0.shape == (c + 1, 1) and law.phases.shape == (1, 1)


def test_declaration_errors_name_the_jump():
    with pytest.raises(InvalidParameter, match=r"n and m are unbounded"):
        MarkovChain([StateVariable("n", 0, None), StateVariable("m", 0, None)],
                    [Jump(1, {"n": "n + 1"})])
    with pytest.raises(InvalidParameter, match=r"qbd_stationary"):
        build_state_space(mm1(), {"lam": 1.0, "mu": 2.0})
    batch = MarkovChain([StateVariable("n", 0, None)],
                        [Jump("lam", {"n": "n + 2"}, label="pair"),
                         Jump("mu", {"n": "n - 1"}, guard="n > 0")], parameters=("lam", "mu"))
    with pytest.raises(InvalidParameter, match=r"pair\.update\.n=.*at most one"):
        qbd_stationary(batch, {"lam": 1.0, "mu": 3.0})
    with pytest.raises(InvalidParameter, match=r"outputs\.E=.*polynomial"):
        qbd_stationary(mm1({"E": "exp(n/100)"}), {"lam": 1.0, "mu": 2.0})
    with pytest.raises(StabilityError, match="drift"):
        qbd_stationary(mm1(), {"lam": 2.0, "mu": 1.0})
    finite = MarkovChain([StateVariable("n", 0, 3)], [Jump(1, {"n": "n + 1"}, "n < 3")])
    with pytest.raises(InvalidParameter, match="stationary"):
        qbd_stationary(finite, {})


def _me21(boundary_rate: str = "2"):
    """M/E2/1 (mean size 1) with the phase as a variable: a departure at level 1 empties the
    server (phase 0), above it starts the next job in phase 1 (level 1's down move differs)."""
    return MarkovChain(
        [StateVariable("n", 0, None), StateVariable("p", 0, 2)],
        [Jump("lam", {"n": "1", "p": "1"}, guard="n == 0"),
         Jump("lam", {"n": "n + 1"}, guard="n > 0"),
         Jump("2", {"p": "2"}, guard="p == 1"),
         Jump("2", {"n": "n - 1", "p": "1"}, guard="p == 2 and n > 1", label="dep"),
         Jump(boundary_rate, {"n": "0", "p": "0"}, guard="p == 2 and n == 1", label="dep")],
        parameters=("lam",), outputs={"EN": "n", "X": "throughput:dep"})


@pytest.mark.parametrize("lam", [0.3, 0.8])
def test_declared_boundary_down_move_against_pollaczek_khinchine(lam):
    r = qbd_stationary(_me21(), {"lam": lam})
    # P-K mean number for Erlang-2 sizes of mean 1 (scv 1/2): rho + rho^2 (1 + 1/2)/(2 (1 - rho))
    assert r["EN"] == pytest.approx(lam + 0.75 * lam**2 / (1 - lam), rel=1e-12)
    assert r["X"] == pytest.approx(lam, rel=1e-12)          # every arrival departs


def test_level_dependent_chains_go_to_linear_level_reduction():
    """M/M/3 written with one level variable (rate min(n, 3) mu: level-dependent) against
    Erlang C, and an M/E2/1 whose level-1 departure rate differs from the levels above against
    the same chain truncated at 400 levels and solved by stationary()."""
    from math import factorial

    servers = MarkovChain([StateVariable("n", 0, None)],
                          [Jump("lam", {"n": "n + 1"}),
                           Jump("min(n, 3)*mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
                          parameters=("lam", "mu"),
                          outputs={"P_wait": "n >= 3", "X": "throughput:serve"})
    law = qbd_stationary(servers, {"lam": 2.0, "mu": 1.0})
    a, c = 2.0, 3
    b = (a**c / factorial(c)) / sum(a**k / factorial(k) for k in range(c + 1))
    assert law.method.startswith("linear level reduction")
    assert law["P_wait"] == pytest.approx(b / (1 - (a / c) * (1 - b)), rel=1e-10)
    assert law["X"] == pytest.approx(2.0, rel=1e-10)
    odd = qbd_stationary(_me21(boundary_rate="3"), {"lam": 0.5})
    bounded = MarkovChain(
        [StateVariable("n", 0, 400), StateVariable("p", 0, 2)],
        [Jump("lam", {"n": "1", "p": "1"}, guard="n == 0"),
         Jump("lam", {"n": "n + 1"}, guard="n > 0 and n < 400"),
         Jump("2", {"p": "2"}, guard="p == 1"),
         Jump("2", {"n": "n - 1", "p": "1"}, guard="p == 2 and n > 1"),
         Jump("3", {"n": "0", "p": "0"}, guard="p == 2 and n == 1")],
        parameters=("lam",), outputs={"EN": "n"})
    assert odd["EN"] == pytest.approx(stationary(bounded, {"lam": 0.5})["EN"], rel=1e-9)
