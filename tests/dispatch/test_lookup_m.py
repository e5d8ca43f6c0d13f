"""The look-up policy of a packed sorted-simplex value for any m, without value iteration: the
value of the equal random split, v(u) = c sum_i u_i^2, must make the look-up decide as FPI(RND)
= LWL (Hyytiä 2013) and simulate as M/M/m (Erlang C)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.dispatch.policies import get_policy, rnd_value_table
from symq.dispatch.policies.exact import exact_lwl
from symq.dispatch.simplex import colex_states, n_sorted_states
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.laws import Exponential

X = Exponential(1.0)
LEVEL = 0.999


def rnd_result(m, rho, N, delta):
    """A VIResult-like object holding the packed RND value (what the look-up reads)."""
    lam = rho * m / X.mean()
    c = (lam / m) / (2 * (1 - rho))
    states = colex_states(m, N) * delta
    v = c * (states ** 2).sum(axis=1)
    return SimpleNamespace(m=m, v=v, N=N, delta=delta, c_M=c, symmetric=True), c


@pytest.mark.parametrize("m", [3, 4, 5])
@pytest.mark.parametrize("rho", [0.4, 0.9])
def test_decisions_equal_lwl_away_from_ties(m, rho):
    """Cost of server i: u_i + x + c((u_i + x)^2 - u_i^2) + const, so two servers differ by
    (u_i - u_j)(1 + 2cx); the multilinear interpolation of an additive quadratic errs by at most
    c delta^2 / 4 per coordinate, c delta^2 / 2 in a cost difference."""
    N, delta = 24, 0.25                      # U = 6: many states use the analytic tail
    res, c = rnd_result(m, rho, N, delta)
    pol = get_policy("lookup", result=res).bind(m, rho, X)
    rng = np.random.default_rng(m)
    k = 20_000
    U = rng.exponential(4.0, (k, m)) * (rng.random((k, m)) < 0.9)
    x = rng.exponential(1.0, k)
    order = np.sort(U, axis=1)
    margin = (order[:, 1] - order[:, 0]) * (1 + 2 * c * x) > c * delta ** 2 / 2
    assert margin.mean() > 0.8
    assert (U.max(axis=1) > N * delta).mean() > 0.2
    look = pol.decide(U, x)
    assert np.array_equal(look[margin], np.argmin(U, axis=1)[margin])
    fpi = get_policy("fpi-rnd").bind(m, rho, X).decide(U, x)
    assert np.array_equal(look[margin], fpi[margin])


@pytest.mark.parametrize("m, n", [(3, 600_000), (4, 400_000)])
def test_simulated_like_mmm(m, n):
    rho = 0.6
    res, _ = rnd_result(m, rho, 40, 0.25)
    est = simulate_dispatch(get_policy("lookup", result=res), m, rho, X, n_jobs=n, rng=m,
                            level=LEVEL)
    assert est.ET.contains(exact_lwl(m, rho, X)), (est.ET, exact_lwl(m, rho, X))
    assert est.ET.relative_half_width < 0.03
    lwl = simulate_dispatch("lwl", m, rho, X, n_jobs=n, rng=m, level=LEVEL)
    # the same random stream and (up to interpolation near ties) the same decisions
    assert est.ET.mean == pytest.approx(lwl.ET.mean, rel=2e-3)


def test_two_servers_packed_equals_the_full_table():
    v2, c = rnd_value_table(2, 0.6, X, 30, 0.2)
    packed = v2[tuple(colex_states(2, 30).T)]
    a = get_policy("lookup", v=packed, delta=0.2, c_M=c).bind(2, 0.6, X)
    b = get_policy("lookup", v=v2, delta=0.2, c_M=c).bind(2, 0.6, X)
    rng = np.random.default_rng(1)
    U, x = rng.exponential(3.0, (5_000, 2)), rng.exponential(1.0, 5_000)
    assert np.array_equal(a.decide(U, x), b.decide(U, x))


def test_bad_packed_values():
    res, c = rnd_result(3, 0.5, 6, 0.5)
    pol = get_policy("lookup", result=res)
    with pytest.raises(InvalidParameter, match="parameter m=4"):
        pol.bind(4, 0.5, X)
    # a packed value without its m: the length fixes N for the m it is bound with
    bare = get_policy("lookup", v=res.v, delta=0.5, c_M=c)
    assert bare.bind(3, 0.5, X).B.shape[0] - 3 - 1 == 6
    with pytest.raises(InvalidParameter, match="parameter v=.*C\\(N\\+m, m\\)"):
        bare.bind(4, 0.5, X)             # C(6+3, 3) = 84 is no C(N+4, 4)
    assert n_sorted_states(3, 6) == math.comb(9, 3) == res.v.size
    wrong = SimpleNamespace(m=3, v=res.v, N=7, delta=0.5, c_M=c, symmetric=True)
    with pytest.raises(InvalidParameter, match="parameter v="):
        get_policy("lookup", result=wrong).bind(3, 0.5, X)
    asym = SimpleNamespace(m=3, v=res.v, N=6, delta=0.5, c_M=c, symmetric=False)
    with pytest.raises(InvalidParameter, match="parameter result="):
        get_policy("lookup", result=asym)
    with pytest.raises(InvalidParameter, match="parameter result="):
        get_policy("lookup", result=SimpleNamespace(m=3, v=res.v, delta=0.5, c_M=c))
    with pytest.raises(InvalidParameter, match="parameter v="):
        get_policy("lookup", v=np.zeros((2, 3, 4)), delta=0.5, c_M=c)
