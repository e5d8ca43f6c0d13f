"""Join-idle-queue: decisions, and simulation against M/M/1, a CTMC solved here, LWL and RND."""

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from symq.dispatch.exact import exact_lwl, exact_rnd
from symq.dispatch.jsq import exact_jsq
from symq.dispatch.policies import POLICY_NAMES, get_policy
from symq.dispatch.simulation import simulate_dispatch
from symq.dispatch.sizes import exponential

X = exponential(1.0)
LEVEL = 0.999


def two_server_ctmc(lam, mu, route, n_max):
    """E[T] of a two-server CTMC on the job counts (n1, n2), truncated at n_max per server.

    ``route(n1, n2)`` gives the probabilities (p1, p2) that an arrival joins server 1 or 2;
    server k completes at rate mu[k] when busy.  Arrivals to a full server are lost; E[T] by
    Little's law with the accepted rate.  Returns (E[T], probability mass at the boundary).
    """
    n1 = n_max + 1
    idx = lambda a, b: a * n1 + b  # noqa: E731
    rows, cols, vals = [], [], []
    for a in range(n1):
        for b in range(n1):
            s = idx(a, b)
            p1, p2 = route(a, b)
            if p1 > 0 and a < n_max:
                rows.append(s), cols.append(idx(a + 1, b)), vals.append(lam * p1)
            if p2 > 0 and b < n_max:
                rows.append(s), cols.append(idx(a, b + 1)), vals.append(lam * p2)
            if a > 0:
                rows.append(s), cols.append(idx(a - 1, b)), vals.append(mu[0])
            if b > 0:
                rows.append(s), cols.append(idx(a, b - 1)), vals.append(mu[1])
    size = n1 * n1
    Q = sparse.coo_matrix((vals, (rows, cols)), shape=(size, size)).tocsr()
    Q = Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    A = Q.T.tolil()
    A[0, :] = 1.0                      # normalisation replaces one balance equation
    rhs = np.zeros(size)
    rhs[0] = 1.0
    pi = sparse_linalg.spsolve(A.tocsc(), rhs).reshape(n1, n1)
    a, b = np.indices((n1, n1))
    jobs = float((pi * (a + b)).sum())
    accepted = 0.0
    for i in range(n1):
        for j in range(n1):
            p1, p2 = route(i, j)
            accepted += pi[i, j] * lam * (p1 * (i < n_max) + p2 * (j < n_max))
    boundary = float(pi[n_max, :].sum() + pi[:, n_max].sum())
    return jobs / accepted, boundary


def jiq_route(a, b):
    """JIQ-random with two identical servers: an idle one (uniform on ties), else uniform."""
    if a == 0 and b == 0:
        return 0.5, 0.5
    if a == 0:
        return 1.0, 0.0
    if b == 0:
        return 0.0, 1.0
    return 0.5, 0.5


def test_names():
    assert "jiq" in POLICY_NAMES and "jiq-jsq" in POLICY_NAMES
    assert get_policy("JIQ").bind(2, 0.5, X).tracks_counts is False
    assert get_policy("jiq-jsq").bind(2, 0.5, X).tracks_counts is True


def test_jiq_decisions():
    k = 30_000
    pol = get_policy("jiq").bind(4, 0.5, X)
    # servers 1 and 3 idle: uniform between them
    picks = pol.decide(np.tile([2.0, 0.0, 5.0, 0.0], (k, 1)), np.ones(k), rng=1)
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == 0 and counts[2] == 0
    assert abs(counts[1] / k - 0.5) < 0.015
    # nobody idle: uniform over all four, whatever the backlogs
    picks = pol.decide(np.tile([9.0, 0.1, 5.0, 3.0], (k, 1)), np.ones(k), rng=2)
    assert np.all(np.abs(np.bincount(picks, minlength=4) / k - 0.25) < 0.015)
    # jiq-jsq: an idle server if any, else fewest jobs
    both = get_policy("jiq-jsq").bind(3, 0.5, X)
    assert both.decide([[1.0, 0.0, 2.0]], [1.0], n=[[1, 0, 1]]).tolist() == [1]
    assert both.decide([[1.0, 0.5, 2.0]], [1.0], n=[[3, 2, 1]]).tolist() == [2]


@pytest.mark.parametrize("policy", ["jiq", "jiq-jsq"])
def test_one_server_is_mm1(policy):
    est = simulate_dispatch(policy, 1, 0.5, X, n_jobs=1_000_000, rng=1, level=LEVEL)
    assert est.ET.contains(1 / (1 - 0.5)), est.ET
    assert est.ET.relative_half_width < 0.05


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_jiq_two_servers_against_its_ctmc(rho):
    lam = 2 * rho
    et, boundary = two_server_ctmc(lam, (1.0, 1.0), jiq_route, 80)
    assert boundary < 1e-9
    # the CTMC's value lies strictly between LWL (M/M/2) and RND (two M/M/1), as JIQ should
    assert exact_lwl(2, rho, X) < et < exact_rnd(2, rho, X)
    n = 1_500_000 if rho < 0.7 else 3_000_000
    est = simulate_dispatch("jiq", 2, rho, X, n_jobs=n, rng=3, level=LEVEL)
    assert est.ET.contains(et), (est.ET, et)
    assert est.ET.relative_half_width < 0.03


def test_jiq_jsq_is_jsq_in_law():
    """An idle server is one with the fewest (zero) jobs, so JIQ-JSQ is JSQ: the exact JSQ
    value (its CTMC, symq.dispatch.jsq) must lie in the simulated interval."""
    est = simulate_dispatch("jiq-jsq", 2, 0.8, X, n_jobs=2_000_000, rng=4, level=LEVEL)
    assert est.ET.contains(exact_jsq(2, 0.8, X)), est.ET


def test_low_load_jiq_is_close_to_lwl():
    """At rho = 0.05 a job almost always finds an idle server (LWL would send it there too):
    JIQ's E[T] is LWL's (Erlang C, 1.0000...) up to far less than RND's extra 0.05."""
    rho, m = 0.05, 3
    lwl, rnd = exact_lwl(m, rho, X), exact_rnd(m, rho, X)
    assert rnd - lwl > 0.04
    est = simulate_dispatch("jiq", m, rho, X, n_jobs=1_000_000, rng=5, level=LEVEL)
    assert est.ET.low <= lwl + 2e-3 and est.ET.high >= lwl, (est.ET, lwl)
    assert est.ET.high < rnd


def test_many_servers_jiq_beats_rnd():
    rho, m = 0.8, 20
    est = simulate_dispatch("jiq", m, rho, X, n_jobs=1_000_000, rng=6, level=LEVEL)
    assert est.ET.high < 0.5 * exact_rnd(m, rho, X)      # RND: 1/(1 - rho) = 5
    assert est.ET.low > exact_lwl(m, rho, X) - 0.05      # not better than the central queue
