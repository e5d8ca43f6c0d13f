"""PopulationProcess: ODE, fixed point, stability and the refined mean field.

Independent evidence: an explicit ODE solution, the exact stationary law of the finite-N
birth-death chain of an SIS epidemic with external infection (Gast & Van Houdt 2018,
Theorem 1: E[X^N] = pi + V/N + O(1/N^2)), and the Lyapunov equation itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy.special import logsumexp

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, SymqError
from symq.meanfield import PopulationProcess

X = sp.Symbol("x")
BETA, GAMMA, EPS = sp.symbols("beta gamma epsilon", positive=True)
SIS_PARAMS = {"beta": 2.0, "gamma": 1.0, "epsilon": 0.1}


def sis() -> PopulationProcess:
    """SIS with external infection: x -> x+1/N at N(eps + beta x)(1-x), x -> x-1/N at N gamma x."""
    process = PopulationProcess([X], [BETA, GAMMA, EPS], name="SIS epidemic")
    process.add_transition([1], (EPS + BETA * X) * (1 - X))
    process.add_transition([-1], GAMMA * X)
    return process


def sis_pi(beta: float, gamma: float, eps: float) -> float:
    """Root in [0, 1] of (eps + beta x)(1 - x) - gamma x = 0, by the quadratic formula."""
    a, b, c = -beta, beta - eps - gamma, eps
    return (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)


def exact_mean(N: int, beta: float, gamma: float, eps: float) -> float:
    """E[X^N] under the exact stationary law of the birth-death chain on {0, ..., N}."""
    k = np.arange(1, N + 1)
    birth = N * (eps + beta * (k - 1) / N) * (1 - (k - 1) / N)  # rate from k-1 to k
    death = gamma * k                                          # rate from k to k-1
    log_p = np.concatenate([[0.0], np.cumsum(np.log(birth) - np.log(death))])
    weights = np.exp(log_p - logsumexp(log_p))
    return float(np.sum(weights * np.arange(N + 1) / N))


def test_symbolic_drift_and_derivatives():
    process = sis()
    F = (EPS + BETA * X) * (1 - X) - GAMMA * X
    assert sp.simplify(process.drift[0] - F) == 0
    assert sp.simplify(process.jacobian[0, 0] - sp.diff(F, X)) == 0
    assert sp.simplify(process.hessian[(0, 0, 0)] - sp.diff(F, X, 2)) == 0
    assert sp.simplify(process.diffusion[0, 0] - ((EPS + BETA * X) * (1 - X) + GAMMA * X)) == 0
    der = process.derivation()
    assert [s.title for s in der] == ["Drift", "Jacobian", "Diffusion matrix"]
    assert "$$" in der.to_markdown()


def test_ode_matches_explicit_solution():
    # beta = 0: dx/dt = eps (1 - x) - gamma x, solved by x* + (x0 - x*) exp(-(eps + gamma) t)
    process = sis()
    params = {"beta": 0.0, "gamma": 1.0, "epsilon": 0.5}
    times = np.linspace(0.0, 5.0, 11)
    for method in ("LSODA", "Radau"):
        traj = process.ode([0.9], times, params, method=method, rtol=1e-10, atol=1e-12)
        star = 0.5 / 1.5
        exact = star + (0.9 - star) * np.exp(-1.5 * times)
        np.testing.assert_allclose(traj.x[:, 0], exact, rtol=0, atol=1e-8)


def test_fixed_point_matches_quadratic_root():
    process = sis()
    for beta in (0.5, 2.0, 5.0):
        params = {**SIS_PARAMS, "beta": beta}
        fp = process.fixed_point([0.0], params)
        assert fp.residual <= 1e-12
        assert abs(fp.x[0] - sis_pi(beta, 1.0, 0.1)) < 1e-12
        assert process.stability(fp.x, params).stable


def test_refined_term_against_exact_finite_n_chain():
    process = sis()
    beta, gamma, eps = SIS_PARAMS["beta"], SIS_PARAMS["gamma"], SIS_PARAMS["epsilon"]
    pi = process.fixed_point([0.0], SIS_PARAMS).x
    V = process.refined(pi, SIS_PARAMS).V[0]
    errors = {}
    for N in (25, 50, 100, 200, 400):
        exact = exact_mean(N, beta, gamma, eps)
        errors[N] = abs(exact - pi[0] - V / N)
        # N (E[X^N] - pi) -> V with an O(1/N) gap
        assert N * abs(N * (exact - pi[0]) - V) < 3.0
    for N in (50, 100, 200):
        ratio = errors[N] / errors[2 * N]
        assert 3.7 < ratio < 4.4, (N, ratio)  # the remainder is O(1/N^2)
    assert errors[400] < errors[25] / 200


def test_lyapunov_equation_and_refined_formula():
    process = sis()
    pi = process.fixed_point([0.0], SIS_PARAMS).x
    terms = process.refined_terms(pi, SIS_PARAMS)
    assert terms.lyapunov_residual < 1e-12
    A, Q = terms.A[0, 0], terms.Q[0, 0]
    W = -Q / (2 * A)
    B = -2 * SIS_PARAMS["beta"]
    assert abs(terms.W[0, 0] - W) < 1e-14
    assert abs(terms.V[0] - (-(0.5 * B * W) / A)) < 1e-13


def test_linear_drift_has_no_refined_term():
    # A linear drift (independent particles) has B = 0, so V = 0 (Gast & Van Houdt 2018).
    x1, x2 = sp.symbols("x_1 x_2")
    a = sp.Symbol("a", positive=True)
    process = PopulationProcess([x1, x2], [a])
    process.add_transition([1, 0], a * (1 - x1 - x2))
    process.add_transition([-1, 1], 2 * x1)
    process.add_transition([0, -1], x2)
    fp = process.fixed_point([0.0, 0.0], {"a": 1.0})
    # 1 - x1 - x2 = 2 x1 and 2 x1 = x2  =>  x1 = 1/5, x2 = 2/5
    np.testing.assert_allclose(fp.x, [0.2, 0.4], atol=1e-13)
    terms = process.refined_terms(fp.x, {"a": 1.0})
    assert np.all(terms.V == 0.0)
    assert terms.lyapunov_residual < 1e-12


def test_unstable_fixed_point_is_reported():
    # F(x) = x^2 - x/4: fixed points 0 (stable) and 1/4 (unstable)
    process = PopulationProcess([X])
    process.add_transition([1], X ** 2)
    process.add_transition([-1], X / 4)
    assert process.stability([0.0]).stable
    unstable = process.stability([0.25])
    assert not unstable.stable and abs(unstable.max_real - 0.25) < 1e-14
    with pytest.raises(StabilityError, match="not exponentially stable"):
        process.refined([0.25])


def test_fixed_point_not_converged():
    process = PopulationProcess([X])
    process.add_transition([1], sp.Integer(1))  # drift 1 everywhere: no fixed point
    with pytest.raises(NotConverged, match="residual"):
        process.fixed_point([0.5], t_max=10.0)


def test_bad_declarations():
    process = PopulationProcess(2)
    assert [str(v) for v in process.variables] == ["x_1", "x_2"]
    with pytest.raises(InvalidParameter, match="jump"):
        process.add_transition([1], sp.Integer(1))
    with pytest.raises(InvalidParameter, match="jump"):
        process.add_transition([0.5, 0], sp.Integer(1))
    with pytest.raises(SymqError, match="undeclared symbols y"):
        process.add_transition([1, 0], sp.Symbol("y"))
    with pytest.raises(SymqError, match="no transition"):
        process.drift  # noqa: B018
    with pytest.raises(InvalidParameter, match="beta"):
        sis().fixed_point([0.1], {"gamma": 1.0, "epsilon": 0.1})
    with pytest.raises(InvalidParameter, match="x0"):
        sis().fixed_point([1.5], SIS_PARAMS)
    with pytest.raises(InvalidParameter, match="delta"):
        sis().fixed_point([0.1], {**SIS_PARAMS, "delta": 1.0})
