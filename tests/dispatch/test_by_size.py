"""Response time by size from the stationary backlog law on the VI lattice
(symq.dispatch.vi.by_size):
the drain kernel is the adjoint of the E_A recursion of the value iteration; size-blind policies
give x + E[W] with the exact waits (Erlang C, Pollaczek-Khinchine) after Richardson in delta;
the chain's mean is the value iteration's g on the same grid; the optimal policy's E[T | bin]
agrees with the simulation of the same exported policy."""

import functools

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, NotConverged
from symq.dispatch.policies import get_policy
from symq.dispatch.policies.exact import exact_lwl
from symq.dispatch.simulation.fairness import response_by_size_data
from symq.dispatch.sizebins import bin_means, bin_probabilities, size_edges
from symq.dispatch.sizes import named_sizes
from symq.dispatch.vi.by_size import bin_atom_weights, drain_distribution, response_by_size_vi
from symq.dispatch.vi.grid import hat_atoms
from symq.dispatch.vi.passes import diagonal_expectation
from symq.dispatch.vi.solvers import evaluate_policy, solve_optimal
from symq.laws import Exponential

X = Exponential(1.0)


@functools.cache
def _optimal(delta):
    return solve_optimal(2, 0.4, X, delta=delta, U=16.0)


def test_drain_is_the_adjoint_of_the_diagonal_expectation():
    rng = np.random.default_rng(3)
    N, lam, delta = 25, 1.3, 0.15
    mu = np.triu(rng.random((N + 1, N + 1)))
    h = rng.random((N + 1, N + 1))
    h = np.triu(h) + np.triu(h, 1).T                      # symmetric, as the VI stores it
    nu = drain_distribution(mu, lam, delta)
    f = diagonal_expectation(h, lam, delta)
    assert float((nu * h).sum()) == pytest.approx(float((mu * f).sum()), rel=1e-13)
    assert float(nu.sum()) == pytest.approx(float(mu.sum()), rel=1e-13)
    assert np.all(nu >= 0) and np.all(np.tril(nu, -1) == 0)
    # a point mass on the face u_1 = 0 stays on the face and only moves towards the origin
    point = np.zeros((N + 1, N + 1))
    point[0, 10] = 1.0
    out = drain_distribution(point, lam, delta)
    assert np.count_nonzero(out[1:]) == 0 and out[0, 11:].sum() == 0


@pytest.mark.parametrize("law", [X, named_sizes("h2", scv=4.0)], ids=["exp", "h2"])
def test_bin_atom_weights_partition_the_hat_atoms(law):
    delta = 0.1
    p = hat_atoms(law, delta)
    K = p.size - 1
    edges = size_edges(law, 5)
    w = bin_atom_weights(law, edges, delta, K)
    probs = bin_probabilities(law, edges)
    assert np.allclose(w.sum(axis=1), 1.0)
    # the bins split each atom's hat mass: sum_B P(B) w_{B,k} = p_k
    assert np.allclose(probs @ w, p, atol=1e-9)
    # the hat kernel interpolates x exactly: the atoms' mean in a bin is E[X | bin]
    lattice = np.arange(K + 1) * delta
    assert np.allclose(w @ lattice, bin_means(law, edges), rtol=1e-7)


def _richardson(policy, rho, U):
    coarse = response_by_size_vi(policy, 2, rho, X, bins=4, delta=0.2, U=U)
    fine = response_by_size_vi(policy, 2, rho, X, bins=4, delta=0.1, U=U)
    return coarse, fine, (4 * fine.means - coarse.means) / 3


@pytest.mark.parametrize("policy, rho, wait", [
    ("lwl", 0.5, exact_lwl(2, 0.5, X) - 1.0),           # M/M/2, Erlang C
    ("rnd", 0.3, 0.3 / (1 - 0.3)),                      # two M/M/1: Pollaczek-Khinchine
])
def test_size_blind_policies_wait_the_exact_wait_whatever_the_size(policy, rho, wait):
    coarse, fine, extrapolated = _richardson(policy, rho, 16.0)
    exact = fine.centres + wait
    assert np.allclose(extrapolated, exact, atol=2e-4), (extrapolated, exact)
    # the lattice error is O(delta^2): a quarter at half the step
    err_c, err_f = coarse.means - exact, fine.means - exact
    assert np.all((3.0 < err_c / err_f) & (err_c / err_f < 5.0))
    assert fine.clipped < 1e-5 and fine.residual < 1e-12
    assert np.allclose(fine.slowdown, fine.means / fine.centres)


def test_the_chains_mean_is_the_value_iterations_g():
    # two independent computations on one discretised model: the stationary law's mean cost
    # and the relative value iteration's average cost
    lwl = evaluate_policy("lwl", 2, 0.5, X, delta=0.2, U=16.0)
    chain = response_by_size_vi("lwl", 2, 0.5, X, bins=3, delta=0.2, U=16.0)
    assert chain.ET == pytest.approx(lwl.ET, abs=3e-5)
    opt = _optimal(0.2)
    chain = response_by_size_vi(opt, 2, 0.4, X, bins=3)
    assert chain.ET_value_iteration == opt.ET
    assert chain.ET == pytest.approx(opt.ET, abs=1e-4)
    assert chain.delta == 0.2 and chain.U == 16.0 and chain.policy == "optimal"


def test_optimal_by_size_agrees_with_the_simulated_policy_and_favours_short_jobs():
    opt = _optimal(0.1)
    edges = size_edges(X, 6)
    vi = response_by_size_vi(opt, 2, 0.4, X, bins=edges)
    sim = response_by_size_data(get_policy("lookup", result=opt), 2, 0.4, X, bins=edges,
                                n_jobs=1_500_000, rng=11, level=0.999)
    for q in range(6):
        assert sim.interval("lookup", q).contains(vi.means[q]), (q, sim.means[0, q],
                                                                 vi.means[q])
    lwl = vi.centres + exact_lwl(2, 0.4, X) - 1.0
    assert vi.means[0] < lwl[0] - 0.02 and vi.means[-1] > lwl[-1] + 0.05
    # the size function: E[T | x] at the atoms, and at a size between two atoms
    assert np.allclose(vi.at(vi.atoms[:5]), vi.atoms[:5] + vi.wait[:5])
    mid = vi.at(0.15)
    assert min(vi.at(0.1), vi.at(0.2)) - 0.1 < mid < max(vi.at(0.1), vi.at(0.2))


def test_refusals():
    opt = _optimal(0.2)
    with pytest.raises(InvalidParameter, match="parameter m=3"):
        response_by_size_vi("lwl", 3, 0.4, X)
    with pytest.raises(InvalidParameter, match="parameter policy='jsq'"):
        response_by_size_vi("jsq", 2, 0.4, X)
    lwl = evaluate_policy("lwl", 2, 0.4, X, delta=0.2, U=8.0)
    with pytest.raises(InvalidParameter, match="parameter policy=.*optimal policy"):
        response_by_size_vi(lwl, 2, 0.4, X)
    with pytest.raises(InvalidParameter, match="parameter rho=0.5"):
        response_by_size_vi(opt, 2, 0.5, X)
    with pytest.raises(InvalidParameter, match="parameter delta=0.1.*own delta=0.2"):
        response_by_size_vi(opt, 2, 0.4, X, delta=0.1)
    with pytest.raises(InvalidParameter, match="parameter sizes="):
        response_by_size_vi(opt, 2, 0.4, Exponential(2.0))
    with pytest.raises(NotConverged, match="after 3 iterations"):
        response_by_size_vi("lwl", 2, 0.4, X, delta=0.2, U=8.0, max_iter=3)
    with pytest.raises(InvalidParameter, match="parameter tol="):
        response_by_size_vi("lwl", 2, 0.4, X, tol=0.0)
    r = response_by_size_vi("lwl", 2, 0.4, X, bins=2, delta=0.2, U=8.0)
    with pytest.raises(InvalidParameter, match="parameter x="):
        r.at(r.atoms[-1] + 1.0)
    with pytest.raises(InvalidParameter, match="parameter x="):
        r.at(-0.1)
    assert "distribution" not in r.to_dict() and len(r.to_dict()["means"]) == 2
