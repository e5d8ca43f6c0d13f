"""The numeric code of dispatching evaluates the symbolic formulas of symq.dispatch.symbolic.

Each formula derived symbolically (the FPI index, the tail curvature, Pollaczek-Khinchine) is
evaluated by its compiled form; where a hand-typed fast path remains (inside numba kernels),
hypothesis checks it against the compiled symbolic form at random points, and the compiled
forms are checked against exact rational evaluation of the sympy expressions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.core.compiler import compile
from symq.dispatch import symbolic
from symq.dispatch.policies import choose_server, get_policy, lookup_value
from symq.dispatch.policies.decisions import FPI, fpi_cost
from symq.dispatch.policies.exact import exact_rnd, exact_sita, sita_class_stats
from symq.dispatch.sizes import named_sizes
from symq.dispatch.vi.grid import DispatchGrid
from symq.dispatch.vi.planning import min_truncation
from symq.laws import Exponential

SETTINGS = settings(max_examples=60, deadline=None)
NUMBA_FPI = compile(symbolic.fpi_index(symbolic.LAM_I, symbolic.RHO_I),
                    (symbolic.U, symbolic.X, symbolic.LAM_I, symbolic.RHO_I), backend="numba")
loads = st.floats(0.01, 0.99)
rates = st.floats(1e-3, 50.0)
backlogs = st.floats(0.0, 100.0)
sizes = st.floats(1e-6, 50.0)


@SETTINGS
@given(backlogs, sizes, rates, loads)
def test_numba_fpi_cost_equals_the_compiled_index(u, x, lam_i, rho_i) -> None:
    """The kernels' fast path (cached with the simulator) against the compiled symbolic index,
    numpy and numba backends of symq.core.compile."""
    compiled = float(symbolic.fpi_index_fn()(u, x, lam_i, rho_i))
    assert fpi_cost(u, x, lam_i, rho_i) == pytest.approx(compiled, rel=1e-13)
    assert fpi_cost(u, x, lam_i, rho_i) == pytest.approx(
        NUMBA_FPI.function(u, x, lam_i, rho_i), rel=1e-13)


@SETTINGS
@given(st.lists(backlogs, min_size=2, max_size=4), sizes, st.data())
def test_fpi_decision_is_the_argmin_of_the_compiled_index(u, x, data) -> None:
    m = len(u)
    lam_i = np.array(data.draw(st.lists(rates, min_size=m, max_size=m)))
    rho_i = np.array(data.draw(st.lists(loads, min_size=m, max_size=m)))
    costs = symbolic.fpi_index_fn()(np.array(u), x, lam_i, rho_i)
    chosen = choose_server(FPI, np.array(u), np.zeros(m, dtype=np.int64), x, 0, np.empty(0),
                           lam_i, rho_i, np.zeros((2, 2)), 1.0, 0.0)
    assert costs[chosen] <= costs.min() * (1 + 1e-12)


def test_fpi_costs_of_a_bound_policy_are_the_compiled_index() -> None:
    pol = get_policy("fpi-sita", h=1.0).bind(2, 0.5, Exponential(1.0))
    u = np.array([2.0, 0.5])
    direct = [float(symbolic.fpi_index(sp.Float(l), sp.Float(r)).subs(
        {symbolic.U: ui, symbolic.X: 3.0})) for ui, l, r in zip(u, pol.lam_i, pol.rho_i)]
    assert pol.fpi_costs(u, 3.0) == pytest.approx(direct, rel=1e-14)


@SETTINGS
@given(st.fractions(Fraction(1, 100), Fraction(99, 100)), st.fractions(Fraction(1, 10), 20),
       st.fractions(Fraction(1, 10), 100))
def test_compiled_forms_equal_the_expressions_exactly(rho, lam, m2) -> None:
    r, la, s = sp.Rational(rho), sp.Rational(lam), sp.Rational(m2)
    m1 = r / la
    exact_pk = symbolic.pollaczek_khinchine(la, m1, s, r)
    assert float(symbolic.mean_response_fn()(float(m1), float(la), float(s), float(r))) \
        == pytest.approx(float(exact_pk), rel=1e-14)
    # the constant g of the one-server Bellman equation (derived by sympy) is the same number
    g = symbolic.verify_mg1_value()["g"].subs({symbolic.RHO: r, symbolic.LAM: la,
                                               symbolic.M2: s})
    assert sp.simplify(g - exact_pk) == 0
    assert float(symbolic.wait_fn()(float(la), float(s), float(r))) \
        == pytest.approx(float(exact_pk - m1), rel=1e-14)
    assert float(symbolic.tail_curvature_fn()(float(la), float(r))) \
        == pytest.approx(float(la / (2 * (1 - r))), rel=1e-14)


@SETTINGS
@given(st.floats(0.05, 0.95), st.integers(1, 3), st.sampled_from(["exp", "h2", "uniform"]))
def test_exact_rnd_and_min_truncation_use_pollaczek_khinchine(rho, m, name) -> None:
    law = named_sizes(name)
    lam_i = rho / law.mean()                          # per server: lam/m
    wait = lam_i * law.moment(2) / (2 * (1 - rho))
    assert exact_rnd(m, rho, law) == pytest.approx(law.mean() + wait, rel=1e-13)
    assert min_truncation(m, rho, law) == pytest.approx(5 * max(law.mean(), wait), rel=1e-13)


@SETTINGS
@given(st.floats(0.05, 0.9), st.floats(0.2, 4.0))
def test_exact_sita_is_a_sum_of_class_waits(rho, h) -> None:
    law = Exponential(1.0)
    p, lam_j, rho_j, second = sita_class_stats(2, rho, law, [h])
    if np.any(rho_j >= 1):
        return
    # server j: M/G/1 with rate lam_j, conditional second moment second_j/p_j
    waits = [l * (s / q) / (2 * (1 - r)) for q, l, r, s in zip(p, lam_j, rho_j, second)]
    assert exact_sita(2, rho, law, h) == pytest.approx(1.0 + float(np.dot(p, waits)), rel=1e-12)


@SETTINGS
@given(st.floats(0.05, 0.9), st.integers(1, 3), st.integers(8, 40), st.floats(0.0, 30.0))
def test_the_analytic_tail_is_the_mg1_value_of_an_equal_split(rho, m, n, beyond) -> None:
    """Beyond U the grid (VIResult, DispatchGrid.tail) and the lookup policy add
    v_i(u) - v_i(U) with the compiled M/G/1 value v_i of one server under RND."""
    delta = 0.5
    lam = rho * m
    c_M = float(symbolic.tail_curvature_fn()(lam / m, rho))
    value = symbolic.mg1_value(sp.Float(lam / m), sp.Float(rho))
    grid = DispatchGrid(m=m, rho=rho, lam=lam, delta=delta, U=n * delta, N=n, K=4,
                        p=np.full(5, 0.2), a=0.0, b=0.0, q=0.0, c_M=c_M, size_name="exp",
                        mean_size=1.0)
    U = n * delta
    increments = [float(value.subs(symbolic.U, U + s * delta) - value.subs(symbolic.U, U))
                  for s in range(5)]
    assert np.allclose(grid.tail_increments(), increments, rtol=1e-12, atol=1e-12)
    a = U + beyond
    v = np.zeros((n + 1, n + 1))
    expected = float(value.subs(symbolic.U, a) - value.subs(symbolic.U, U))
    assert lookup_value(v, delta, c_M, a, 1.0) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert math.isfinite(expected)


def test_grid_tail_curvature_is_the_compiled_form() -> None:
    grid = DispatchGrid.build(2, 0.4, Exponential(1.0), 0.2, 16.0)
    assert grid.c_M == symbolic.tail_curvature_fn()(grid.lam / 2, 0.4)
    assert grid.c_M == pytest.approx((0.8 / 2) / (2 * 0.6), rel=1e-15)
