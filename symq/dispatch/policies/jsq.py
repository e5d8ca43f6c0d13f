r"""Exact mean response time of join-the-shortest-queue with exponential sizes: its CTMC.

JSQ (fewest jobs, size-blind) has no elementary formula.  With exponential sizes the job counts
:math:`(n_1, \dots, n_m)` form a CTMC; truncated at ``n_max`` jobs per server it is solved from
its sparse generator, and ``n_max`` grows until the answer stops changing and the truncated mass
is negligible (the exact JSQ baseline of Hyytiä & Righter, arXiv 2402.08142, Part 2).  The memory
and the time of the sparse LU are estimated before each solve (:func:`jsq_bytes`,
:func:`jsq_state_cap`).

Examples
--------
>>> from symq.laws import Exponential
>>> et = exact_jsq(2, 0.5, Exponential(1.0))
>>> 1 / (1 - 0.5 ** 2) < et < 1 / (1 - 0.5)     # between LWL (M/M/2) and RND (two M/M/1)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from symq.core.errors import InvalidParameter, TruncationError
from symq.core.resources import require_memory

from .checks import check_model, require_exponential

__all__ = ["exact_jsq", "jsq_bytes", "jsq_state_cap"]


def _jsq_ctmc(m: int, lam: float, mu: float, n_max: int) -> tuple[float, float, float]:
    """Solve the JSQ CTMC truncated at ``n_max`` jobs per server.

    Returns ``(E[T], boundary mass, blocking probability)``; E[T] by Little's law with the
    accepted arrival rate.
    """
    n1 = n_max + 1
    shape = (n1,) * m
    size = n1 ** m
    states = np.indices(shape).reshape(m, -1).T  # (size, m)
    idx = np.arange(size)
    strides = np.array([n1 ** (m - 1 - k) for k in range(m)])
    rows, cols, vals = [], [], []
    # departures
    for k in range(m):
        ok = states[:, k] > 0
        rows.append(idx[ok])
        cols.append(idx[ok] - strides[k])
        vals.append(np.full(int(ok.sum()), mu))
    # arrivals to the shortest queue(s), uniform among ties; none when all are at n_max
    mins = states.min(axis=1)
    ties = (states == mins[:, None])
    n_ties = ties.sum(axis=1)
    for k in range(m):
        ok = ties[:, k] & (states[:, k] < n_max)
        rows.append(idx[ok])
        cols.append(idx[ok] + strides[k])
        vals.append(lam / n_ties[ok])
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    v = np.concatenate(vals)
    out = np.bincount(r, weights=v, minlength=size)
    # balance equations pi Q = 0, i.e. Q^T pi = 0: entry (col, row) of Q^T, diagonal -out;
    # equation 0 is replaced by the normalisation sum(pi) = 1
    tr = np.concatenate([c, idx])
    tc = np.concatenate([r, idx])
    tv = np.concatenate([v, -out])
    keep = tr != 0
    tr = np.concatenate([tr[keep], np.zeros(size, dtype=tr.dtype)])
    tc = np.concatenate([tc[keep], idx])
    tv = np.concatenate([tv[keep], np.ones(size)])
    A = sparse.csc_matrix((tv, (tr, tc)), shape=(size, size))
    b = np.zeros(size)
    b[0] = 1.0
    pi = sparse_linalg.spsolve(A, b)
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    total = states.sum(axis=1)
    EN = float(pi @ total)
    blocked = float(pi[mins == n_max].sum())
    boundary = float(pi[states.max(axis=1) == n_max].sum())
    lam_eff = lam * (1.0 - blocked)
    return EN / lam_eff, boundary, blocked


def jsq_bytes(m: int, states: int) -> float:
    """Peak bytes of solving the JSQ CTMC with ``states`` states by sparse LU (measured fill-in:
    about 9 KB per state for ``m = 2`` and 24 KB at 3e5 states for ``m = 3``, growing with the
    size; fitted with a margin)."""
    grow = {2: 0.25, 3: 0.55}.get(m, 0.75)
    per = {1: 2e3, 2: 9e3, 3: 1.3e4}.get(m, 2e4 * (m - 2))
    return float(states) * per * max(1.0, (states / 1e5) ** grow)


def jsq_state_cap(m: int) -> int:
    """Largest JSQ CTMC solved: about two minutes of sparse LU on two cores (measured 116 s at
    3e5 states for ``m = 2``, 375 s at 3e5 states for ``m = 3``)."""
    return {1: 10_000_000, 2: 300_000, 3: 150_000}.get(m, 100_000)


def exact_jsq(m: int, rho: float, sizes: Any, *, tol: float = 1e-12, n_start: int = 16,
              max_states: int = 300_000) -> float:
    """Mean response time under join-the-shortest-queue with exponential sizes.

    The CTMC on the job counts :math:`(n_1, \\dots, n_m)`, truncated at ``n_max`` jobs per
    server (an arrival finding every queue at ``n_max`` is lost), is solved from its sparse
    generator (one balance equation replaced by the normalisation).  ``n_max`` grows by 1.5x
    until :math:`E[T]` changes by less than ``tol`` (relative to max(1, E[T])) and the mass on
    the truncation boundary is below ``tol``; E[T] follows from Little's law.

    Raises
    ------
    InvalidParameter
        For non-exponential sizes.
    NotConverged
        (:class:`~symq.core.errors.TruncationError`) if ``max_states`` states (at most
        :func:`jsq_state_cap`) are not enough at this load.
    InvalidParameter
        If ``m`` is so large that even ``n_start`` jobs per server do not fit.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> round(exact_jsq(1, 0.5, Exponential(1.0)), 10)   # one server: M/M/1
    2.0
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    require_exponential("jsq", sizes)
    mu = 1.0 / float(sizes.mean())
    n_max = int(n_start)
    cap = min(int(max_states), jsq_state_cap(m))
    if m * math.log(n_max + 1) > math.log(cap):
        m_max = max(1, int(math.log(cap) / math.log(n_max + 1)))
        raise InvalidParameter("m", m, f"<= {m_max} for the exact JSQ value",
                               f"the CTMC with {n_max} jobs per server already has "
                               f"{n_max + 1}^{m} states, more than the {cap} that can be solved "
                               "in memory and in minutes")
    # the total queue of JSQ is close to M/M/m: the boundary mass decays about like rho^(m n);
    # refuse at once when even half the n_max this predicts does not fit
    n_pred = 0.5 * math.log(tol) / (m * math.log(rho))
    if m * math.log(n_pred + 1) > math.log(cap):
        raise TruncationError(
            "exact_jsq", "jobs per server n_max (predicted boundary mass rho^(m n_max))",
            rho ** (m * (cap ** (1 / m) - 1)), tol, f"about {cap ** (1 / m) - 1:.0f} at most",
            f"rho={rho!r} is too close to 1 for the exact JSQ CTMC with m={m} (at most {cap} "
            "states); lower rho")
    history: list[tuple[int, float, float]] = []
    change = math.inf
    while True:
        if m * math.log(n_max + 1) > math.log(cap):
            raise TruncationError(
                "exact_jsq", "jobs per server n_max (boundary mass)",
                history[-1][2] if history else math.inf, tol, history[-1][0] if history else 0,
                f"rho={rho!r} is too close to 1 for the exact JSQ CTMC with m={m} (at most "
                f"{cap} states); lower rho")
        require_memory("rho", rho, jsq_bytes(m, (n_max + 1) ** m),
                       what=f"the JSQ CTMC with {(n_max + 1) ** m} states",
                       limit="smaller (fewer jobs per server needed)")
        value, boundary, _ = _jsq_ctmc(m, lam, mu, n_max)
        if history:
            change = abs(value - history[-1][1])
            if change < tol * max(1.0, abs(value)) and boundary < tol:
                return value
        history.append((n_max, value, boundary))
        grown = int(math.ceil(1.5 * n_max))
        if len(history) >= 2 and boundary < 1e-4 and history[-2][2] > boundary > 0.0:
            # the boundary mass decays geometrically in n_max: jump to the n_max where it is
            # predicted below tol * 1e-3, then confirm with a 15% larger truncation
            (n_a, _, b_a), (n_b, _, b_b) = history[-2], history[-1]
            rate = math.log(b_b / b_a) / (n_b - n_a)
            target = n_b + math.log(tol * 1e-3 / b_b) / rate
            if history[-2][2] > 1e-4 or target > n_b * 1.15:
                grown = max(n_b + 1, int(math.ceil(target)))
            else:
                grown = int(math.ceil(1.15 * n_b)) + 2
        n_max = grown
