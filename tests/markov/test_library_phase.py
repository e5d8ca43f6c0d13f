"""The library's phase-type, MAP and closed-network models against computations written here:
Pollaczek-Khinchine with the PH law's moments by matrix formulas (M/PH/1), the GI/M/1 geometric
law with its root found by brentq (PH/M/1), the MAP's rate from its stationary phase law
(MAP/M/1), Buzen's convolution and the product form by enumeration (closed cyclic network)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq

from symq.core.errors import InvalidParameter
from symq.markov.chain import MarkovChain
from symq.markov.exact import exact_stationary
from symq.markov.levels import qbd_stationary
from symq.markov.library import closed_cyclic, mapm1, mph1, phm1
from symq.markov.stationary import stationary

# PH laws: (alpha, T)
ERLANG3 = ([1, 0, 0], [[-3, 3, 0], [0, -3, 3], [0, 0, -3]])          # mean 1, scv 1/3
HYPER2 = ([0.4, 0.6], [[-0.5, 0], [0, -3.0]])                         # mean 1, scv 7/3
COXIAN = ([0.7, 0.3], [[-2.0, 1.5], [0.25, -1.0]])                    # a general T
PH_LAWS = {"erlang3": ERLANG3, "hyper2": HYPER2, "coxian": COXIAN}


def ph_moments(alpha, T) -> tuple[float, float]:
    """E[S] = alpha (-T)^-1 1, E[S^2] = 2 alpha (-T)^-2 1."""
    a, t = np.array(alpha, dtype=float), np.array(T, dtype=float)
    inv = np.linalg.inv(-t)
    one = np.ones(len(a))
    return float(a @ inv @ one), float(2 * a @ inv @ inv @ one)


def with_outputs(chain: MarkovChain, outputs: dict[str, str]) -> MarkovChain:
    return MarkovChain(chain.variables, chain.declared, chain.parameters, chain.initial,
                       outputs, chain.name)


# ------------------------------------------------------------------ M/PH/1
@pytest.mark.parametrize("law", sorted(PH_LAWS))
@pytest.mark.parametrize("rho", [0.2, 0.6, 0.9])
def test_mph1_mean_number_is_pollaczek_khinchine(law, rho):
    alpha, T = PH_LAWS[law]
    m1, m2 = ph_moments(alpha, T)
    lam = rho / m1
    en = rho + lam ** 2 * m2 / (2 * (1 - rho))
    r = qbd_stationary(mph1(alpha, T), {"lam": lam})
    assert r["EN"] == pytest.approx(en, rel=1e-9)
    assert r["P_busy"] == pytest.approx(rho, rel=1e-10)
    assert r["EN_queue"] == pytest.approx(en - rho, rel=1e-9)
    assert r["X"] == pytest.approx(lam, rel=1e-10)
    assert r["X_in"] == pytest.approx(lam, rel=1e-10)


def test_mph1_takes_exact_entries_as_written():
    exact = mph1([Fraction(2, 5), Fraction(3, 5)], [[Fraction(-1, 2), 0], [0, -3]])
    floats = mph1(*HYPER2)
    assert qbd_stationary(exact, {"lam": 0.7})["EN"] == pytest.approx(
        qbd_stationary(floats, {"lam": 0.7})["EN"], rel=1e-12)


# ------------------------------------------------------------------ PH/M/1
def lst(alpha, T, s: float) -> float:
    """The interarrival law's Laplace-Stieltjes transform alpha (sI - T)^-1 t."""
    a, t = np.array(alpha, dtype=float), np.array(T, dtype=float)
    exit_rates = -t.sum(axis=1)
    return float(a @ np.linalg.solve(s * np.eye(len(a)) - t, exit_rates))


@pytest.mark.parametrize("law", sorted(PH_LAWS))
@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_phm1_is_geometric_with_the_gim1_root(law, rho):
    alpha, T = PH_LAWS[law]
    mean_gap, _ = ph_moments(alpha, T)
    lam = 1 / mean_gap
    mu = lam / rho
    # sigma in (0, 1) solves sigma = A*(mu (1 - sigma)); time-stationary P(N >= n) = rho sigma^(n-1)
    sigma = brentq(lambda s: s - lst(alpha, T, mu * (1 - s)), 1e-12, 1 - 1e-12, xtol=1e-15)
    chain = with_outputs(phm1(alpha, T), {f"P{n}": f"n >= {n}" for n in range(1, 6)}
                         | {"EN": "n"})
    r = qbd_stationary(chain, {"mu": mu})
    for n in range(1, 6):
        assert r[f"P{n}"] == pytest.approx(rho * sigma ** (n - 1), rel=1e-8)
    assert r["EN"] == pytest.approx(rho / (1 - sigma), rel=1e-8)


def test_phm1_outputs():
    r = qbd_stationary(phm1(*ERLANG3), {"mu": 2.0})
    assert r["P_busy"] == pytest.approx(0.5, rel=1e-10)
    assert r["X"] == pytest.approx(1.0, rel=1e-10) and r["X_in"] == pytest.approx(1.0, rel=1e-10)


def test_phm1_with_exponential_gaps_is_mm1():
    r = qbd_stationary(phm1([1.0], [[-1.0]]), {"mu": 4.0})
    assert r["EN"] == pytest.approx(0.25 / 0.75, rel=1e-12)


# ------------------------------------------------------------------ MAP/M/1
MAP2 = ([[-3.0, 1.0], [0.5, -1.0]], [[1.5, 0.5], [0.2, 0.3]])
MMPP2 = ([[-2.2, 1.0], [2.0, -2.1]], [[1.2, 0.0], [0.0, 0.1]])


def map_rate(D0, D1) -> float:
    """lam = theta D1 1 with theta the stationary law of D0 + D1."""
    q = np.array(D0, dtype=float) + np.array(D1, dtype=float)
    m = len(q)
    a = np.vstack([q.T, np.ones(m)])
    theta = np.linalg.lstsq(a, np.r_[np.zeros(m), 1.0], rcond=None)[0]
    return float(theta @ np.array(D1, dtype=float) @ np.ones(m))


@pytest.mark.parametrize("D0, D1", [MAP2, MMPP2])
@pytest.mark.parametrize("mu", [1.5, 4.0])
def test_mapm1_utilisation_is_the_map_rate_over_mu(D0, D1, mu):
    lam = map_rate(D0, D1)
    r = qbd_stationary(mapm1(D0, D1), {"mu": mu})
    assert r["P_busy"] == pytest.approx(lam / mu, rel=1e-10)
    assert r["X"] == pytest.approx(lam, rel=1e-10)
    assert r["X_in"] == pytest.approx(lam, rel=1e-10)


@pytest.mark.parametrize("lam, mu", [(1.0, 2.0), (0.9, 1.0)])
def test_a_poisson_map_gives_mm1(lam, mu):
    rho = lam / mu
    chain = with_outputs(mapm1([[-lam]], [[lam]]),
                         {"EN": "n", **{f"P{n}": f"n >= {n}" for n in range(4)}})
    r = qbd_stationary(chain, {"mu": mu})
    assert r["EN"] == pytest.approx(rho / (1 - rho), rel=1e-10)
    for n in range(4):
        assert r[f"P{n}"] == pytest.approx(rho ** n, rel=1e-9)


def test_phm1_is_the_map_of_its_renewal_process():
    alpha, T = COXIAN
    t = np.array(T)
    D1 = np.outer(-t.sum(axis=1), alpha)
    a = qbd_stationary(phm1(alpha, T), {"mu": 1.5})
    b = qbd_stationary(mapm1(T, D1.tolist()), {"mu": 1.5})
    assert a["EN"] == pytest.approx(b["EN"], rel=1e-10)


# ------------------------------------------------------------------ closed cyclic network
def buzen(x: list[float], N: int) -> list[float]:
    """G(0..N) of a closed network of single-server stations with relative loads x_i."""
    g = [1.0] + [0.0] * N
    for xi in x:
        for n in range(1, N + 1):
            g[n] += xi * g[n - 1]
    return g


def product_form(mus: list[float], N: int) -> dict[tuple[int, ...], float]:
    M = len(mus)
    weights = {}
    for head in itertools.product(range(N + 1), repeat=M - 1):
        if sum(head) <= N:
            state = (*head, N - sum(head))
            weights[state] = math.prod((1 / mu) ** k for mu, k in zip(mus, state))
    total = sum(weights.values())
    return {s: w / total for s, w in weights.items()}


@pytest.mark.parametrize("mus, N", [([1.0, 2.0, 3.0], 4), ([2.0, 1.0, 1.5, 0.7], 5),
                                    ([1.0, 1.0], 6), ([3.0, 0.5], 1)])
def test_closed_cyclic_is_product_form_with_buzen_throughput(mus, N):
    M = len(mus)
    chain = closed_cyclic(N, M)
    r = stationary(chain, {f"mu{i + 1}": mu for i, mu in enumerate(mus)})
    g = buzen([1 / mu for mu in mus], N)
    assert r["X"] == pytest.approx(g[N - 1] / g[N], rel=1e-10)
    law = product_form(mus, N)
    assert r.n_states == len(law) == math.comb(N + M - 1, M - 1)
    for i in range(M):
        assert r[f"EN{i + 1}"] == pytest.approx(sum(p * s[i] for s, p in law.items()),
                                                rel=1e-10)
        assert r[f"U{i + 1}"] == pytest.approx(r["X"] / mus[i], rel=1e-10)


@pytest.mark.parametrize("mu1, mu2", [(1.0, 2.0), (3.0, 1.2)])
@pytest.mark.parametrize("N", [1, 2, 7])
def test_two_station_cycle_closed_form(mu1, mu2, N):
    # p(n1) ~ (mu2/mu1)^n1 on 0..N; X = mu2 P(n2 > 0) = mu1 (1 - r^N)/(1 - r^(N+1)), r = mu1/mu2
    r = mu1 / mu2
    result = stationary(closed_cyclic(N, 2), {"mu1": mu1, "mu2": mu2})
    assert result["X"] == pytest.approx(mu1 * (1 - r ** N) / (1 - r ** (N + 1)), rel=1e-12)


def test_closed_cyclic_exact_solve():
    law = exact_stationary(closed_cyclic(1, 2), {"mu1": 1, "mu2": 2})
    assert law["X"] == Fraction(2, 3)          # one customer: X = 1/(1/mu1 + 1/mu2)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("alpha, T, match", [
    ([0.5, 0.6], HYPER2[1], r"alpha=.*probability vector.*sums to 1\.1"),
    ([-0.5, 1.5], HYPER2[1], r"alpha=.*probability vector.*negative"),
    ("0.5", HYPER2[1], r"alpha=.*a vector"),
    ([[1.0]], [[-1.0]], r"alpha=.*a vector.*shape"),
    ([1.0], [[-1.0, 0.0]], r"T=.*square matrix"),
    ([0.5, 0.5], [[-1.0]], r"T=.*2 x 2 matrix"),
    ([1.0, 0.0], [[-1.0, -0.5], [0.0, -1.0]], r"T=.*sub-generator.*\(1, 2\).*negative"),
    ([1.0, 0.0], [[-1.0, 2.0], [0.0, -1.0]], r"T=.*sub-generator.*row 1 sums to 1"),
    ([1.0, 0.0], [[-1.0, 1.0], [1.0, -1.0]], r"T=.*sub-generator.*singular"),
    ([1.0], [[float("nan")]], r"T=.*finite"),
    ([1.0] + [0.0] * 25, np.diag([-1.0] * 26).tolist(), r"alpha=.*at most 20 phases"),
])
def test_bad_phase_type_laws(alpha, T, match):
    for builder in (mph1, phm1):
        with pytest.raises(InvalidParameter, match=match):
            builder(alpha, T)


@pytest.mark.parametrize("D0, D1, match", [
    ([[-1.0]], [[-1.0]], r"D1=.*entries >= 0.*negative"),
    ([[-1.0]], [[0.0]], r"D1=.*not all zero.*no arrival"),
    ([[-1.0]], [[1.0, 0.0], [0.0, 0.0]], r"D1=.*1 x 1 matrix"),
    ([[-2.0, -1.0], [1.0, -1.0]], [[1.0, 0.0], [0.0, 0.0]], r"D0=.*\(1, 2\).*negative"),
    ([[-2.0, 1.0], [0.0, -1.0]], [[0.5, 0.0], [0.0, 1.0]], r"D1=.*generator.*row 1 sums"),
    ([[-1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]], r"D0=.*nonsingular.*no arrival"),
])
def test_bad_maps(D0, D1, match):
    with pytest.raises(InvalidParameter, match=match):
        mapm1(D0, D1)


def test_bad_network_sizes():
    with pytest.raises(InvalidParameter, match=r"N=0 must be an integer >= 1"):
        closed_cyclic(0, 3)
    with pytest.raises(InvalidParameter, match=r"M=1 must be an integer >= 2"):
        closed_cyclic(3, 1)
