"""Dispatching policies: names, errors and decisions against independent computations."""

import math

import numpy as np
import pytest
from scipy import integrate

from symq.core.errors import InvalidParameter, StabilityError, UnknownName
from symq.dispatch.policies import (
    POLICY_NAMES,
    DispatchPolicy,
    get_policy,
    lookup_value,
    rnd_value_table,
)
from symq.dispatch.sizes import named_sizes
from symq.laws import Exponential

X = Exponential(1.0)


def random_states(m, k, seed, scale=3.0):
    rng = np.random.default_rng(seed)
    U = rng.exponential(scale, (k, m)) * (rng.random((k, m)) < 0.8)  # some idle servers
    x = rng.exponential(1.0, k)
    return U, x


def test_unknown_policy_lists_choices():
    with pytest.raises(UnknownName) as info:
        get_policy("shortest-first")
    text = str(info.value)
    assert "shortest-first" in text
    for name in POLICY_NAMES:
        assert name in text


def test_names_case_insensitive():
    assert get_policy(" FPI-Rnd ") == DispatchPolicy("fpi-rnd", {})


def test_bad_parameters_named():
    with pytest.raises(InvalidParameter, match="parameter h="):
        get_policy("lwl", h=1.0)
    with pytest.raises(InvalidParameter, match="parameter thresholds=None"):
        get_policy("sita").bind(2, 0.5, X)
    with pytest.raises(InvalidParameter, match="thresholds"):
        get_policy("sita", thresholds=[2.0, 1.0]).bind(3, 0.5, X)
    with pytest.raises(InvalidParameter, match="parameter v="):
        get_policy("lookup", v=np.zeros((3, 4)), delta=0.1, c_M=1.0)
    with pytest.raises(InvalidParameter, match="parameter delta="):
        get_policy("lookup", v=np.zeros((3, 3)), delta=0.0, c_M=1.0)
    with pytest.raises(InvalidParameter, match="parameter c_M=None"):
        get_policy("lookup", v=np.zeros((3, 3)), delta=0.1)
    with pytest.raises(InvalidParameter, match="parameter m=3"):
        get_policy("lookup", v=np.zeros((3, 3)), delta=0.1, c_M=0.0).bind(3, 0.5, X)
    with pytest.raises(StabilityError):
        get_policy("lwl").bind(2, 1.2, X)
    with pytest.raises(StabilityError, match="fpi-sita"):
        get_policy("fpi-sita", h=0.05).bind(2, 0.8, X)


@pytest.mark.parametrize("m", [2, 3, 5])
@pytest.mark.parametrize("rho", [0.3, 0.9])
def test_fpi_rnd_equals_lwl(m, rho):
    """Hyytiä 2013: one policy iteration from the equal random split is LWL."""
    U, x = random_states(m, 100_000, seed=m)
    fpi = get_policy("fpi-rnd").bind(m, rho, X).decide(U, x)
    lwl = get_policy("lwl").bind(m, rho, X).decide(U, x)
    direct = np.argmin(U, axis=1)  # least backlog, first index on ties
    assert np.array_equal(fpi, lwl)
    assert np.array_equal(lwl, direct)


def test_fpi_sita_hand_computed():
    """FPI from SITA(h=1), Exp(1), m=2, lam=1: the class rates by quadrature and the quadratic
    switching size x*(u) solved by hand."""
    rho, h = 0.5, 1.0
    lam = 2 * rho
    lam1 = lam * integrate.quad(lambda t: math.exp(-t), 0, h)[0]
    lam2 = lam * integrate.quad(lambda t: math.exp(-t), h, np.inf)[0]
    rho1 = lam * integrate.quad(lambda t: t * math.exp(-t), 0, h)[0]
    rho2 = lam * integrate.quad(lambda t: t * math.exp(-t), h, np.inf)[0]
    c1, c2 = lam1 / (2 * (1 - rho1)), lam2 / (2 * (1 - rho2))
    pol = get_policy("fpi-sita", h=h).bind(2, rho, X)
    assert np.allclose(pol.lam_i, [lam1, lam2]) and np.allclose(pol.rho_i, [rho1, rho2])
    # empty system: a_1 = x + c1 x^2 < a_2 = x + c2 x^2 since c1 < c2, every job to server 1
    assert c1 < c2
    assert pol.decide(np.zeros((3, 2)), [0.1, 1.0, 30.0]).tolist() == [0, 0, 0]
    # u = (2, 0): a_1 - a_2 = 2 + (4 c1 + 1 - 1) x ... = 2 + 4 c1 x + (c1 - c2) x^2
    # short jobs join the idle server 2, long ones (x > x*) the busy server 1
    A, B, C = c1 - c2, 4 * c1, 2.0
    x_star = (-B - math.sqrt(B * B - 4 * A * C)) / (2 * A)
    assert 7.0 < x_star < 8.0
    xs = [0.5, 3.0, x_star * (1 - 1e-6), x_star * (1 + 1e-6), 20.0]
    assert pol.decide(np.tile([2.0, 0.0], (5, 1)), xs).tolist() == [1, 1, 1, 0, 0]
    # the same from the cost formula a_i = u_i + x + lam_i x (2 u_i + x) / (2 (1 - rho_i))
    a = pol.fpi_costs([2.0, 0.0], 3.0)
    assert a == pytest.approx([2 + 3 + c1 * 3 * (4 + 3), 3 + c2 * 9])


def test_sita_decisions():
    pol = get_policy("sita", thresholds=[1.0, 2.5]).bind(3, 0.5, X)
    xs = [0.2, 1.0 - 1e-12, 1.0, 2.4, 2.5, 40.0]
    assert pol.decide(np.zeros((6, 3)), xs).tolist() == [0, 0, 1, 1, 2, 2]
    sizes = named_sizes("h2", scv=4.0)
    e = get_policy("sita-e").bind(2, 0.5, sizes)
    h = float(e.thresholds[0])
    assert e.decide(np.zeros((2, 2)), [h * 0.999, h * 1.001]).tolist() == [0, 1]


def test_rr_and_rnd_and_jsq_decisions():
    assert get_policy("rr").bind(3, 0.5, X).decide(np.zeros((7, 3)), np.ones(7)).tolist() == \
        [0, 1, 2, 0, 1, 2, 0]
    k = 30_000
    picks = get_policy("rnd").bind(3, 0.5, X).decide(np.zeros((k, 3)), np.ones(k), rng=1)
    assert np.all(np.abs(np.bincount(picks, minlength=3) / k - 1 / 3) < 0.015)
    # JSQ: fewest jobs, backlogs ignored; ties uniform
    n = np.tile([3, 1, 1, 4], (k, 1))
    U = np.tile([0.0, 9.0, 9.0, 0.0], (k, 1))
    jsq = get_policy("jsq").bind(4, 0.5, X).decide(U, np.ones(k), n=n, rng=2)
    counts = np.bincount(jsq, minlength=4)
    assert counts[0] == 0 and counts[3] == 0
    assert abs(counts[1] / k - 0.5) < 0.015
    # same seed, same decisions
    again = get_policy("jsq").bind(4, 0.5, X).decide(U, np.ones(k), n=n, rng=2)
    assert np.array_equal(jsq, again)


def test_lookup_value_interpolation_and_tail():
    rng = np.random.default_rng(3)
    v = rng.random((6, 6))
    delta, c = 0.5, 0.7
    assert lookup_value(v, delta, c, 1.0, 1.5) == v[2, 3]
    assert lookup_value(v, delta, c, 1.25, 1.5) == pytest.approx(0.5 * (v[2, 3] + v[3, 3]))
    assert lookup_value(v, delta, c, 1.25, 1.75) == pytest.approx(0.25 * v[2:4, 3:5].sum())
    U = 2.5
    assert lookup_value(v, delta, c, U + 1.0, 1.5) == pytest.approx(
        v[5, 3] + c * ((U + 1.0) ** 2 - U ** 2))
    assert lookup_value(v, delta, c, U + 1.0, U + 2.0) == pytest.approx(
        v[5, 5] + c * ((U + 1.0) ** 2 - U ** 2) + c * ((U + 2.0) ** 2 - U ** 2))


@pytest.mark.parametrize("rho", [0.4, 0.9])
def test_lookup_with_rnd_value_chooses_like_lwl(rho):
    """v = sum_i (lam/m) u_i^2 / (2(1 - rho)) on a grid: argmin_i {u_i + x + v(u + x e_i)} is the
    FPI-RND = LWL decision wherever the bilinear interpolation error (<= c delta^2 / 2 in the
    cost difference) cannot flip it."""
    N, delta = 40, 0.25  # U = 10; many states lie beyond U (analytic tail)
    v, c = rnd_value_table(2, rho, X, N, delta)
    assert c == pytest.approx(2 * rho / 2 / (2 * (1 - rho)))
    g = np.arange(N + 1) * delta
    assert np.allclose(v, c * (g[:, None] ** 2 + g[None, :] ** 2))
    pol = get_policy("lookup", v=v, delta=delta, c_M=c).bind(2, rho, X)
    U, x = random_states(2, 200_000, seed=5, scale=6.0)
    margin = np.abs(U[:, 0] - U[:, 1]) * (1 + 2 * c * x) > c * delta ** 2 / 2
    assert margin.mean() > 0.95
    look = pol.decide(U, x)
    lwl = np.argmin(U, axis=1)
    assert np.array_equal(look[margin], lwl[margin])
    assert (U.max(axis=1) > N * delta).mean() > 0.2


def test_lookup_from_result_object():
    v, c = rnd_value_table(2, 0.6, X, 50, 0.2)

    class Result:  # stands for symq.dispatch.vi.iteration.VIResult (m = 2)
        def export_table(self):
            return v, 0.2, c

    a = get_policy("lookup", result=Result()).bind(2, 0.6, X)
    b = get_policy("lookup", v=v, delta=0.2, c_M=c).bind(2, 0.6, X)
    U, x = random_states(2, 10_000, seed=9)
    assert np.array_equal(a.decide(U, x), b.decide(U, x))
    with pytest.raises(InvalidParameter, match="parameter result="):
        get_policy("lookup", result=Result(), delta=0.2)
