"""The slope of the look-up tail: beyond U the value is v(U) + c_M((U+s)^2 - U^2) + b s.

Expected values are written out here by hand from a table whose grid values are known (no
interpolation needed at grid points), independently of the interpolation code.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.core.simrun import kernel_seed
from symq.dispatch.policies import get_policy, lookup_value
from symq.dispatch.simplex import binomial_table, colex_states, simplex_value
from symq.dispatch.simulation.kernel import run_policy
from symq.laws import Exponential

N, DELTA, C, B = 8, 0.5, 0.3, 1.7
U = N * DELTA
RNG = np.random.default_rng(0)
V = RNG.normal(size=(N + 1, N + 1))


def test_lookup_value_beyond_u_adds_the_slope():
    a, b = U + 1.25, 2 * DELTA                          # b on the grid, a beyond U
    want = V[N, 2] + C * ((U + 1.25) ** 2 - U ** 2) + B * 1.25
    assert lookup_value(V, DELTA, C, a, b, B) == pytest.approx(want, rel=1e-13)
    both = V[N, N] + C * (2 * (U + 2.0) ** 2 - 2 * U ** 2) + B * 4.0   # s = 2 in each
    assert lookup_value(V, DELTA, C, U + 2.0, U + 2.0, B) == pytest.approx(both, rel=1e-13)
    # the default slope is 0, positional five-argument calls keep their meaning
    assert lookup_value(V, DELTA, C, a, b) == lookup_value(V, DELTA, C, a, b, 0.0)
    assert lookup_value(V, DELTA, C, a, b) == pytest.approx(want - B * 1.25, rel=1e-13)
    # inside the grid the slope plays no part
    assert lookup_value(V, DELTA, C, 1.0, 1.5, B) == V[2, 3]


def test_simplex_value_beyond_u_adds_the_slope():
    m, n = 3, 6
    states = colex_states(m, n)
    vp = (states * DELTA).sum(axis=1) * 2.0               # v(u) = 2 sum(u) on the grid
    u = np.array([0.5, 1.0, n * DELTA + 0.75])
    top = n * DELTA
    want = 2.0 * (0.5 + 1.0 + top) + C * ((top + 0.75) ** 2 - top ** 2) + B * 0.75
    got = simplex_value(vp, binomial_table(m, n), n, DELTA, C, u, B)
    assert got == pytest.approx(want, rel=1e-13)


def test_policy_takes_the_slope_and_decides_by_it():
    pol0 = get_policy("lookup", v=np.zeros((N + 1, N + 1)), delta=DELTA, c_M=0.0)
    pol1 = get_policy("lookup", v=np.zeros((N + 1, N + 1)), delta=DELTA, c_M=0.0,
                      tail_slope=5.0)
    assert pol0.params["tail_slope"] == 0.0 and pol1.params["tail_slope"] == 5.0
    # a zero table: backlogs (U, U - 3) and a job of size 2 cost u_i + x + slope * (beyond U)
    u, x = [[U, U - 3.0]], [2.0]
    cost0 = U + 2.0 + 5.0 * 2.0                           # a = U + 2 beyond U by 2
    cost1 = (U - 3.0) + 2.0                               # b = U - 1 inside
    assert cost1 < cost0
    assert pol1.bind(2, 0.5, Exponential(1.0)).decide(u, x).tolist() == [1]
    assert pol0.bind(2, 0.5, Exponential(1.0)).decide(u, x).tolist() == [1]
    # with a negative slope that outweighs the wait the far server wins
    neg = get_policy("lookup", v=np.zeros((N + 1, N + 1)), delta=DELTA, c_M=0.0,
                     tail_slope=-4.0)
    assert U + 2.0 - 4.0 * 2.0 < cost1
    assert neg.bind(2, 0.5, Exponential(1.0)).decide(u, x).tolist() == [0]


def test_result_carries_its_slope_and_bad_slopes_are_refused():
    res = SimpleNamespace(m=2, export_table=lambda: (V, DELTA, C), tail_slope=B)
    assert get_policy("lookup", result=res).params["tail_slope"] == B
    old = SimpleNamespace(m=2, export_table=lambda: (V, DELTA, C))
    assert get_policy("lookup", result=old).params["tail_slope"] == 0.0
    for bad in (math.nan, math.inf, "1", True):
        with pytest.raises(InvalidParameter) as info:
            get_policy("lookup", v=V, delta=DELTA, c_M=C, tail_slope=bad)
        assert info.value.name == "tail_slope"


def test_kernel_uses_the_slope():
    """A small table whose tail is visited often: the simulated runs with and without the
    slope differ, and each equals a replay of the policy's own decisions."""
    X = Exponential(1.0)
    v = -1.5 * np.arange(5.0)[:, None] * 0.5 + np.zeros((5, 5))   # server 0 looks cheap
    runs = []
    for slope in (0.0, 3.0):
        pol = get_policy("lookup", v=v, delta=0.5, c_M=0.0, tail_slope=slope).bind(2, 0.8, X)
        got = run_policy(pol, X, 3000, 0, 10, np.random.default_rng(4), False, "", 64,
                         np.empty(0)).T
        draws = np.random.RandomState(kernel_seed(np.random.default_rng(4)))
        u, sums = np.zeros(2), np.zeros(10)
        for j in range(3000):
            a = -math.log(1.0 - draws.random_sample()) / pol.lam
            u = np.maximum(u - a, 0.0)
            xj = -math.log(1.0 - draws.random_sample())
            s = int(pol.decide(u[None, :], [xj])[0])
            sums[j // 300] += u[s] + xj
            u[s] += xj
        assert np.allclose(got, sums / 300, rtol=1e-12, atol=0)
        runs.append(got)
    assert not np.array_equal(runs[0], runs[1])
