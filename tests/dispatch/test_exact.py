"""Exact mean response times of the dispatching baselines against independent computations."""

import math

import numpy as np
import pytest
from scipy import integrate

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, UnknownName
from symq.dispatch.policies.exact import (
    exact_lwl,
    exact_mean_response,
    exact_rnd,
    exact_rr,
    exact_sita,
    sita_e_thresholds,
    sita_opt_thresholds,
)
from symq.dispatch.policies.jsq import exact_jsq
from symq.dispatch.sizes import named_sizes
from symq.laws import Exponential

X = Exponential(1.0)


def h2_pdf(scv):
    """Density of the balanced-means H2 law of named_sizes('h2', scv), written out by hand."""
    p = 0.5 * (1 + math.sqrt((scv - 1) / (scv + 1)))
    r1, r2 = 2 * p, 2 * (1 - p)
    return lambda x: p * r1 * math.exp(-r1 * x) + (1 - p) * r2 * math.exp(-r2 * x)


@pytest.mark.parametrize("rho", [0.1, 0.4, 0.9])
def test_rnd_exponential_is_mm1(rho):
    assert exact_rnd(2, rho, X) == pytest.approx(1 / (1 - rho), rel=1e-14)
    assert exact_rnd(5, rho, Exponential(2.0)) == pytest.approx(2 / (1 - rho), rel=1e-14)


def test_rnd_general_sizes_pollaczek_khinchine():
    sizes = named_sizes("h2", scv=4.0)
    m, rho = 3, 0.6
    lam_server = rho  # E[X] = 1: each server gets rate lam/m = rho
    second = integrate.quad(lambda x: x * x * h2_pdf(4.0)(x), 0, np.inf)[0]
    assert second == pytest.approx(5.0, rel=1e-8)
    expected = 1.0 + lam_server * second / (2 * (1 - rho))
    assert exact_rnd(m, rho, sizes) == pytest.approx(expected, rel=1e-8)


def _sita_by_quad(pdf, lam, h):
    """E[T] of SITA from numerical integrals of the density (independent of partial moments)."""
    edges = [0.0, *h, np.inf]
    total_mean = integrate.quad(lambda x: x * pdf(x), 0, np.inf)[0]
    ew = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        p = integrate.quad(pdf, a, b)[0]
        e1 = integrate.quad(lambda x: x * pdf(x), a, b)[0]
        e2 = integrate.quad(lambda x: x * x * pdf(x), a, b)[0]
        lam_j, rho_j = lam * p, lam * e1
        ew += p * lam_j * (e2 / p) / (2 * (1 - rho_j))  # p_j * E[W_j], E[W_j] from P-K
    return total_mean + ew


@pytest.mark.parametrize("m, rho, h", [(2, 0.5, [1.0]), (2, 0.9, [1.7]), (3, 0.7, [0.6, 1.8])])
def test_sita_formula_exponential(m, rho, h):
    lam = rho * m
    expected = _sita_by_quad(lambda x: math.exp(-x), lam, h)
    assert exact_sita(m, rho, X, h) == pytest.approx(expected, rel=1e-9)


def test_sita_formula_h2():
    sizes = named_sizes("h2", scv=4.0)
    expected = _sita_by_quad(h2_pdf(4.0), 2 * 0.6, [1.3])
    assert exact_sita(2, 0.6, sizes, 1.3) == pytest.approx(expected, rel=1e-8)


def test_sita_unstable():
    # h tiny: server 2 gets almost all the load 2 * rho > 1
    with pytest.raises(StabilityError, match="unstable"):
        exact_sita(2, 0.8, X, 0.01)
    assert exact_sita(2, 0.8, X, 0.01, unstable="inf") == math.inf


@pytest.mark.parametrize("m, sizes, pdf", [(2, X, lambda x: math.exp(-x)),
                                           (3, X, lambda x: math.exp(-x)),
                                           (2, named_sizes("h2", scv=4.0), h2_pdf(4.0)),
                                           (4, named_sizes("h2", scv=4.0), h2_pdf(4.0))])
def test_sita_e_equal_loads(m, sizes, pdf):
    h = sita_e_thresholds(m, 0.7, sizes)
    edges = [0.0, *h, np.inf]
    loads = [integrate.quad(lambda x: x * pdf(x), a, b, epsabs=1e-13)[0]
             for a, b in zip(edges[:-1], edges[1:])]
    assert np.allclose(loads, 1.0 / m, atol=1e-8)


def test_sita_e_exponential_two_servers():
    h = sita_e_thresholds(2, 0.5, X)[0]
    assert 1 - math.exp(-h) * (1 + h) == pytest.approx(0.5, abs=1e-13)


@pytest.mark.parametrize("rho", [0.4, 0.9])
def test_sita_opt_is_no_worse(rho):
    h_opt = sita_opt_thresholds(2, rho, X)
    best = exact_sita(2, rho, X, h_opt)
    assert best <= exact_sita(2, rho, X, sita_e_thresholds(2, rho, X)) + 1e-12
    for h in np.linspace(0.2, 6.0, 300):
        assert best <= exact_sita(2, rho, X, h, unstable="inf") + 1e-12
    # stationary point: a small step either way does not help
    for step in (1e-4, -1e-4):
        assert best <= exact_sita(2, rho, X, h_opt + step) + 1e-12


def test_sita_opt_three_servers():
    sizes = named_sizes("h2", scv=4.0)
    h_opt = sita_opt_thresholds(3, 0.6, sizes)
    best = exact_sita(3, 0.6, sizes, h_opt)
    assert best <= exact_sita(3, 0.6, sizes, sita_e_thresholds(3, 0.6, sizes)) + 1e-12
    rng = np.random.default_rng(0)
    for _ in range(100):
        h = np.sort(h_opt * np.exp(rng.normal(0, 0.2, 2)))
        assert best <= exact_sita(3, 0.6, sizes, h, unstable="inf") + 1e-12


@pytest.mark.parametrize("rho", [0.2, 0.4, 0.9, 0.99])
def test_lwl_two_servers(rho):
    assert exact_lwl(2, rho, X) == pytest.approx(1 / (1 - rho ** 2), rel=1e-13)


@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_lwl_erlang_c_three_servers(rho):
    m, mu = 3, 0.5  # E[X] = 2
    lam = rho * m * mu
    a = lam / mu
    top = a ** m / math.factorial(m) / (1 - rho)
    C = top / (sum(a ** k / math.factorial(k) for k in range(m)) + top)
    assert exact_lwl(m, rho, Exponential(2.0)) == pytest.approx(2.0 + C / (m * mu - lam), rel=1e-12)


def test_rr_one_server_is_mm1_and_two_servers_root():
    assert exact_rr(1, 0.7, X) == pytest.approx(1 / 0.3, rel=1e-12)
    rho = 0.6
    lam = 2 * rho
    T = exact_rr(2, rho, X)
    sigma = 1 - 1 / T
    # for m = 2 the fixed point is a cubic: sigma (lam + 1 - sigma)^2 = lam^2
    assert sigma * (lam + 1 - sigma) ** 2 == pytest.approx(lam ** 2, rel=1e-12)
    assert 0 < sigma < 1


def test_jsq_one_server_and_ordering():
    assert exact_jsq(1, 0.5, X) == pytest.approx(2.0, rel=1e-10)
    for rho in (0.4, 0.9):
        jsq = exact_jsq(2, rho, X)
        # JSQ is optimal among size-blind policies for identical exponential servers
        # (Winston 1977), and size-aware LWL (M/M/2) beats it
        assert exact_lwl(2, rho, X) < jsq < exact_rr(2, rho, X) < exact_rnd(2, rho, X)


def test_jsq_three_servers_low_load():
    value = exact_jsq(3, 0.4, X)
    assert exact_lwl(3, 0.4, X) < value < exact_rr(3, 0.4, X)


def test_jsq_state_cap():
    with pytest.raises(NotConverged):
        exact_jsq(2, 0.99, X, max_states=5000)


def test_exact_by_name():
    assert exact_mean_response("LWL", 2, 0.5, X).ET == exact_lwl(2, 0.5, X)
    assert exact_mean_response("sita", 2, 0.5, X, thresholds=1.0).ET == exact_sita(2, 0.5, X, 1.0)
    with pytest.raises(UnknownName, match="valid choices: rnd, rr"):
        exact_mean_response("fastest", 2, 0.5, X)


def test_bad_input():
    with pytest.raises(StabilityError, match="rho=1.0"):
        exact_rnd(2, 1.0, X)
    with pytest.raises(InvalidParameter, match="parameter m=0"):
        exact_rnd(0, 0.5, X)
    with pytest.raises(InvalidParameter, match="parameter rho=-0.1"):
        exact_rnd(2, -0.1, X)
    with pytest.raises(InvalidParameter, match="no closed form"):
        exact_lwl(2, 0.5, named_sizes("h2", scv=4.0))
    with pytest.raises(InvalidParameter, match="sizes"):
        exact_rr(2, 0.5, named_sizes("uniform"))
    with pytest.raises(InvalidParameter, match="thresholds"):
        exact_sita(3, 0.5, X, [1.0])
    with pytest.raises(InvalidParameter, match="thresholds"):
        exact_sita(3, 0.5, X, [2.0, 1.0])


def test_exact_result_gives_the_mean_waiting_time():
    """EW against closed forms: RND on m servers is m independent M/M/1 queues at load rho
    (EW = rho/(1 - rho) E[X]); LWL with exponential sizes is M/M/m, Erlang C / (m mu - lam)."""
    from symq.dispatch.policies.exact import exact_mean_response
    from symq.laws import Exponential

    rho = 0.4
    r = exact_mean_response("rnd", 2, rho, Exponential(1.0))
    assert r.EW == pytest.approx(rho / (1 - rho), rel=1e-12)
    r = exact_mean_response("lwl", 2, rho, Exponential(2.0))   # mean size 2: mu = 1/2
    erlang_c = 2 * rho ** 2 / (1 + rho)
    assert r.EW == pytest.approx(erlang_c / (2 * 0.5 - 2 * rho * 0.5), rel=1e-12)
