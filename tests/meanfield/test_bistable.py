"""Schlogl's bistable model: exact passage times against simulation and a hand-written sum, the
quasi-potential against the slope of log T, the stationary law against a linear solve."""

import math

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter, NotConverged
from symq.meanfield import bistable

PARAMS = bistable.schlogl_parameters()


def test_declared_rates_give_the_cubic_drift():
    process = bistable.schlogl_process()
    x, = process.variables
    drift = sp.expand(process.drift[0].subs(PARAMS))
    assert sp.expand(drift + (x - sp.Rational(1, 5)) * (x - 1) * (x - 3)) == 0


def _generator(N, n_max):
    k1, k2, k3, k4 = (float(PARAMS[k]) for k in (bistable.K1, bistable.K2, bistable.K3,
                                                 bistable.K4))
    Q = np.zeros((n_max + 1, n_max + 1))
    for n in range(n_max + 1):
        x = n / N
        if n < n_max:
            Q[n, n + 1] = N * (k4 + k1 * x * x)
        if n > 0:
            Q[n, n - 1] = N * (k3 * x + k2 * x**3)
        Q[n, n] = -Q[n].sum()
    return Q


def test_passage_time_equals_a_linear_solve_of_the_generator():
    # E_n[tau_j] solves Q h = -1 on the states below j, with h_j = 0
    N, j = 10, 30
    Q = _generator(N, j)[:j, :j]
    h = np.linalg.solve(Q, -np.ones(j))
    assert math.exp(bistable.switching_time(N, PARAMS, 0.2, 3.0)) == pytest.approx(h[2], rel=1e-10)


def test_stationary_law_solves_the_balance_equations():
    N = 15
    law = bistable.stationary_law(N, PARAMS)
    Q = _generator(N, law.size - 1)
    assert np.max(np.abs(law @ Q)) < 1e-10 * np.max(np.abs(Q))
    assert law.sum() == pytest.approx(1.0, abs=1e-12)


def test_simulated_switching_time_covers_the_exact_one():
    ci = bistable.simulate_switching(20, PARAMS, 0.2, 3.0, n_switches=400, rng=5, level=0.999)
    exact = math.exp(bistable.switching_time(20, PARAMS, 0.2, 3.0))
    assert ci.low <= exact <= ci.high


def test_growth_rate_is_the_quasi_potential():
    logs = [bistable.switching_time(N, PARAMS, 0.2, 3.0) for N in (400, 800)]
    rate = (logs[1] - logs[0]) / 400
    # Delta V by a 2000-point midpoint rule written here
    x = 0.2 + (np.arange(2000) + 0.5) * 0.8 / 2000
    midpoint = float(np.sum(np.log((3.8 * x + x**3) / (0.6 + 4.2 * x * x))) * 0.8 / 2000)
    assert bistable.quasi_potential(PARAMS, 0.2, 1.0) == pytest.approx(midpoint, rel=1e-6)
    assert rate == pytest.approx(midpoint, rel=1e-3)


def test_a_simulation_beyond_its_event_budget_says_so():
    with pytest.raises(NotConverged, match="max_events"):
        bistable.simulate_switching(60, PARAMS, 0.2, 3.0, n_switches=10, rng=1, max_events=1000)


def test_bad_levels_and_roots_are_refused():
    with pytest.raises(InvalidParameter, match="target"):
        bistable.switching_time(10, PARAMS, 3.0, 0.2)
    with pytest.raises(InvalidParameter):
        bistable.schlogl_parameters(1, 0.5, 3)
