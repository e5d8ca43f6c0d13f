"""Shared fixtures of the dispatching tests: a small exact CTMC on two servers' job counts."""

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg


def _two_server_ctmc(lam, mu, route, n_max):
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


@pytest.fixture
def two_server_ctmc():
    """The solver ``(lam, mu, route, n_max) -> (E[T], boundary mass)`` of a two-server CTMC
    on the job counts (exponential sizes), for policies that decide from the counts."""
    return _two_server_ctmc
