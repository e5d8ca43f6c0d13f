"""Convergence of the JSQ(d) mean-field ODE to its fixed point, and the fixed point vs M/PH/1.

The references are written out here: the spectrum of the truncated M/M/1 birth-death generator
(a tridiagonal Toeplitz matrix), eigenvalues of finite-difference Jacobians of the drift written
in the test (exponential) or of :func:`symq.meanfield.jsq_ph.jsq_ph_drift`, the M/M/1 tail
``lam^k``, and the M/PH/1 queue-length law from a truncated CTMC solved with numpy.
"""

import math

import numpy as np
import pytest

from symq.core.claims import Status
from symq.core.errors import InvalidParameter, StabilityError, TruncationError
from symq.laws import as_phase_type, erlang, hyperexponential2
from symq.meanfield.convergence import (
    convergence_rate,
    deviation_drift,
    drift,
    jacobian,
    mg1_comparison,
    mph1_tail,
)
from symq.meanfield.jsq_ph import jsq_ph_drift, solve_jsq_ph
from symq.papers.li_supermarket_convergence import convergence_claims


def _exp_drift(u, d, lam):
    """du_k/dt = lam (u_{k-1}^d - u_k^d) - (u_k - u_{k+1}), u_0 = 1, u_{K+1} = 0."""
    full = np.concatenate([[1.0], u, [0.0]])
    return lam * (full[:-2] ** d - full[1:-1] ** d) - (full[1:-1] - full[2:])


def _fd_abscissa(f, x, h=1e-7):
    """Largest real part of the eigenvalues of a central-difference Jacobian of f at x."""
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        J[:, j] = (np.ravel(f(x + e)) - np.ravel(f(x - e))) / (2 * h)
    return float(np.max(np.linalg.eigvals(J).real))


def _mph1_ctmc_tail(lam, law, levels, N=400):
    """P(Q >= k) of M/PH/1 from its CTMC truncated at N jobs (arrivals lost at N)."""
    alpha, A = law.alpha, law.A
    m = alpha.size
    exit_ = -A.sum(axis=1)
    size = 1 + N * m
    Q = np.zeros((size, size))

    def idx(n, j):
        return 1 + (n - 1) * m + j

    Q[0, 1:1 + m] = lam * alpha
    for n in range(1, N + 1):
        for j in range(m):
            s = idx(n, j)
            for i in range(m):
                if i != j:
                    Q[s, idx(n, i)] += A[j, i]
            if n < N:
                Q[s, idx(n + 1, j)] += lam
            if n == 1:
                Q[s, 0] += exit_[j]
            else:
                for i in range(m):
                    Q[s, idx(n - 1, i)] += exit_[j] * alpha[i]
    np.fill_diagonal(Q, Q.diagonal() - Q.sum(axis=1))
    M = Q.T.copy()
    M[0] = 1.0  # one balance equation replaced by the normalisation
    rhs = np.zeros(size)
    rhs[0] = 1.0
    p = np.linalg.solve(M, rhs)
    by_level = np.concatenate([[p[0]], p[1:].reshape(N, m).sum(axis=1)])
    tail = by_level[::-1].cumsum()[::-1]
    return tail[1:levels + 1]


# ----------------------------------------------------------------------------- d = 1

def test_d1_exponential_is_the_truncated_birth_death_spectrum():
    lam = 0.5
    r = convergence_rate(1, lam, starts=("empty", "heavy"))
    K = r.K
    # truncated M/M/1 generator: tridiagonal Toeplitz (lam below, -(1+lam) on, 1 above)
    top = -(1 + lam) + 2 * math.sqrt(lam) * math.cos(math.pi / (K + 1))
    assert r.abscissa == pytest.approx(top, rel=1e-10)
    assert r.tail_at_K < 1e-14
    edge = (1 - math.sqrt(lam)) ** 2  # the infinite chain's spectral bottom (Kendall)
    # the truncated abscissa approaches the continuum edge from above like 1/K^2: not converged
    assert not r.abscissa_converged
    assert "NOT CONVERGED" in r.method
    assert edge < r.rate_predicted < edge * (1 + 1.5 * (math.pi / (K + 1)) ** 2 / edge)
    extra_top = -(1 + lam) + 2 * math.sqrt(lam) * math.cos(math.pi / (K + 11))
    assert r.abscissa_extra == pytest.approx(extra_top, rel=1e-10)
    # near-degenerate modes at the edge: the measured decay is faster than the slowest mode
    # and has not settled within the window
    for rate in r.rates.values():
        assert r.rate_predicted < rate < 1.2 * r.rate_predicted


@pytest.mark.parametrize("lam", [0.3, 0.9])
def test_d1_exponential_tail_is_mm1(lam):
    c = mg1_comparison(1, lam, levels=10)
    k = np.arange(1, 11)
    np.testing.assert_allclose(c.mg1_tail, lam ** k, rtol=1e-12)
    np.testing.assert_allclose(c.u, lam ** k, rtol=1e-9)
    assert c.max_relative_difference < 1e-9


@pytest.mark.parametrize("law", [hyperexponential2(1.0, 4.0), erlang(2, 1.0), erlang(3, 2.0)],
                         ids=["H2", "E2", "E3"])
def test_d1_ph_tail_is_mph1_ctmc(law):
    lam = 0.6 / law.mean()
    ctmc = _mph1_ctmc_tail(lam, law, 8)
    np.testing.assert_allclose(mph1_tail(lam, law, 8), ctmc, rtol=1e-9)
    c = mg1_comparison(1, lam, law, levels=8)
    np.testing.assert_allclose(c.u, ctmc, rtol=1e-9)
    assert c.mg1_tail[0] == pytest.approx(0.6, rel=1e-12)  # P(Q >= 1) = rho


# ----------------------------------------------------------------------------- d >= 2

@pytest.mark.parametrize("d,lam", [(2, 0.9), (3, 0.5)])
def test_exponential_rate_matches_eigenvalue(d, lam):
    r = convergence_rate(d, lam, starts=("empty", "heavy", "random"), n_random=1)
    u = lam ** ((d ** np.arange(1, r.K + 1) - 1) / (d - 1))
    s = _fd_abscissa(lambda v: _exp_drift(v, d, lam), u)
    assert r.abscissa == pytest.approx(s, rel=1e-6)
    assert r.abscissa_converged and r.abscissa_extra == pytest.approx(r.abscissa, rel=1e-8)
    assert r.max_relative_difference < 0.02
    assert set(r.rates) == {"empty", "heavy", "random-0"}
    for label, (t0, t1, n) in r.fit_window.items():
        assert 0 < t0 < t1 and n >= 10
        assert r.fit_residual[label] < 0.1
    assert r.tail_at_K < 1e-14 and r.fixed_point_residual < 1e-12


def test_ph_rate_matches_eigenvalue_of_library_drift():
    law = hyperexponential2(1.0, 4.0)
    d, lam = 2, 0.9
    r = convergence_rate(d, lam, law, starts=("empty", "heavy"))
    fp = solve_jsq_ph(d, lam, law, K=r.K)
    s = _fd_abscissa(lambda v: jsq_ph_drift(v.reshape(fp.x.shape), d, lam, law), fp.x, h=1e-6)
    assert r.abscissa == pytest.approx(s, rel=1e-5)
    assert r.abscissa_converged
    assert r.max_relative_difference < 0.01
    assert 0 < r.rate_predicted < 0.075  # slower than exponential service at the same load


def test_drift_and_jacobian_agree_with_library_drift():
    law = as_phase_type(erlang(2, 1.0), "sizes")
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 0.3, (6, 2))
    np.testing.assert_allclose(drift(X, 2, 0.8, law), jsq_ph_drift(X, 2, 0.8, law), atol=1e-15)
    J = jacobian(X, 2, 0.8, law)
    h = 1e-6
    for j in range(X.size):
        e = np.zeros(X.size)
        e[j] = h
        col = (jsq_ph_drift((X.ravel() + e).reshape(X.shape), 2, 0.8, law)
               - jsq_ph_drift((X.ravel() - e).reshape(X.shape), 2, 0.8, law)).ravel() / (2 * h)
        np.testing.assert_allclose(J[:, j], col, atol=1e-8)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_deviation_drift_is_the_increment_without_cancellation(d):
    law = as_phase_type(hyperexponential2(1.0, 4.0), "sizes")
    rng = np.random.default_rng(5)
    P = rng.uniform(0, 0.4, (6, 2))
    Y = rng.uniform(-0.1, 0.1, P.shape)
    np.testing.assert_allclose(deviation_drift(Y, P, d, 0.7, law),
                               drift(P + Y, d, 0.7, law) - drift(P, d, 0.7, law), atol=1e-15)
    tiny = 1e-20 * Y  # far below eps |P|: the increment is J Y to relative rounding
    J = jacobian(P, d, 0.7, law)
    np.testing.assert_allclose(deviation_drift(tiny, P, d, 0.7, law).ravel(), J @ tiny.ravel(),
                               rtol=1e-9, atol=1e-35)


@pytest.mark.parametrize("law", [None, hyperexponential2(1.0, 4.0), erlang(2, 1.0)],
                         ids=["exp", "H2", "E2"])
def test_d2_fixed_point_falls_faster_than_mg1(law):
    c = mg1_comparison(2, 0.9, law, levels=6)
    assert c.ratio[0] == pytest.approx(1.0, rel=1e-9)  # u_1 = P(Q >= 1) = rho
    assert np.all(np.diff(c.ratio[1:5]) < 0) and np.all(c.ratio[1:5] < 1)
    if law is None:
        k = np.arange(1, 7)
        np.testing.assert_allclose(c.u, 0.9 ** (2.0 ** k - 1), rtol=1e-9)


# ----------------------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("kwargs,name", [
    ({"d": 0}, "d"), ({"lam": -1.0}, "lam"), ({"starts": ("bogus",)}, "starts"),
    ({"window": (1e-9, 1e-3)}, "window"), ({"heavy": 50, "K": 8}, "heavy"),
    ({"method": "RK45"}, "method"), ({"rtol": 1e-3}, "rtol"), ({"tail_tol": 2.0}, "tail_tol"),
    ({"n_random": -1}, "n_random"), ({"sizes": "nonsense"}, "sizes"),
])
def test_bad_inputs_name_the_parameter(kwargs, name):
    args = {"d": 2, "lam": 0.5, **kwargs}
    with pytest.raises(InvalidParameter) as info:
        convergence_rate(**args)
    assert info.value.name == name


def test_unstable_and_truncated():
    with pytest.raises(StabilityError):
        convergence_rate(2, 1.2)
    with pytest.raises(StabilityError):
        mg1_comparison(1, 0.6, erlang(2, 2.0))
    with pytest.raises(TruncationError):
        convergence_rate(2, 0.9, K=4, heavy=2)
    with pytest.raises(InvalidParameter) as info:
        mg1_comparison(2, 0.5, levels=0)
    assert info.value.name == "levels"


def test_quick_claims_hold():
    verdicts = [claim.check() for claim in convergence_claims(quick=True)]
    assert len(verdicts) == 3
    assert all(v.status is Status.HOLDS for v in verdicts), [v.detail for v in verdicts]
