r"""Mean response time by job size from the value-iteration model (two servers).

Under a dispatching policy :math:`a(u, x)` a job of size :math:`x` that arrives to the
backlogs :math:`u` has the response time :math:`u_{a(u, x)} + x` (FCFS), and by PASTA

.. math::

    E[T \mid X = x] = x + E_\pi\bigl[u_{a(u, x)}\bigr],

with :math:`\pi` the stationary law of the backlogs seen by arrivals.  Hyytiä & Righter
(arXiv 2402.08142, Part 1) discretise the model for the value iteration: backlogs on the
lattice :math:`\{0, \delta, \dots, U\}^2`, sizes on the same lattice by the mean-preserving hat
kernel (:func:`~symq.dispatch.vi.grid.hat_atoms`), and between arrivals the drain
:math:`u \mapsto (u - A\mathbf 1)^+`, :math:`A \sim \mathrm{Exp}(\lambda)`, by the recursion
along diagonals with the exact exponential weights :math:`(a, b, q)` of
:func:`~symq.dispatch.vi.grid.diagonal_weights`.  The value iteration uses the transposed kernel
(expectations of functions); this module iterates the kernel itself on distributions: the
embedded chain at arrival instants on the lattice of sorted backlogs

.. math::

    \pi_{n+1} = \pi_n P_X P_A, \qquad
    (\pi P_X)(u') = \sum_{u, k:\ \mathrm{sort}(u + k\delta e_{a(u, k\delta)}) = u'} \pi(u) p_k,

where :math:`P_A` is the adjoint of the :math:`E_A` recursion (:math:`M(u) = \mu(u) + q\sum_{z:
z^- = u} M(z)`, :math:`\nu(u) = a M(u) + b \sum_{z: z^- = u} M(z)`, :math:`z^-` the diagonal
predecessor, along the face ``u_1 = 0`` the predecessor in ``u_2``, and the origin keeps
:math:`M(0)`).  A post-arrival backlog beyond ``U`` is put at ``U``; the stationary
probability of that event is reported (:attr:`VIResponseBySize.clipped`) and should be
negligible.

On the lattice a job of size :math:`k\delta` waits :math:`c_k = E_\pi[u_{a(u, k\delta)}]` on
average, and a size :math:`x` is spread over the two neighbouring atoms by the hat kernel, so

.. math::

    E[T \mid X \in B] = E[X \mid B] + \sum_k w_{B,k}\, c_k, \qquad
    w_{B,k} = \frac{1}{P(X \in B)}\int_B f(x)\max\Bigl(0, 1 - \frac{|x - k\delta|}{\delta}
    \Bigr)dx,

(:math:`\sum_k w_{B,k} k\delta = E[X \mid B]` exactly), and the mean response time of the
discretised chain, :math:`\sum_k p_k (k\delta + c_k)`, is the :math:`g` of the value
iteration of the same policy on the same grid.  For size-blind policies
:math:`c_k = E[W]` for every ``k`` (Pollaczek-Khinchine for RND, Erlang C for LWL with
exponential sizes); tests/dispatch/test_by_size.py checks both, the value iteration's
:math:`g` and a simulation of the optimal policy by size bin.

Examples
--------
>>> from symq.laws import Exponential
>>> r = response_by_size_vi("lwl", 2, 0.5, Exponential(1.0), bins=3, delta=0.1, U=16.0)
>>> exact_wait = 1 / (1 - 0.25) - 1                 # M/M/2 (Erlang C)
>>> bool(abs(r.wait - exact_wait).max() < 2e-3)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.parameters import integer_value, real_value
from symq.core.result import Exactness, ResultBase

from ..policies.decisions import lookup_value
from ..sizebins import DEFAULT_BINS, bin_means, bin_probabilities, size_edges
from ..sizes import as_sizes, size_cdf, size_name
from .grid import DispatchGrid, diagonal_weights
from .iteration import VIResult

__all__ = ["VIResponseBySize", "response_by_size_vi", "bin_atom_weights", "drain_distribution"]

#: Policies of :func:`response_by_size_vi` besides a value-iteration result: the equal random
#: split and least work left (ties, u_1 = u_2, are symmetric on sorted states).
_RND, _TABLE = 0, 1
NAMED = ("rnd", "lwl")


@numba.njit(cache=True, inline="always")
def _to_shorter(table, mode, t, k):  # pragma: no cover - numba
    """Share of a job of size ``k delta`` at sorted state ``t`` sent to the shorter queue:
    one half (RND) or the decision of the table (0: the shorter queue, 1: the longer)."""
    if mode == _RND:
        return 0.5
    return 1.0 if table[t, k] == 0 else 0.0


@numba.njit(cache=True)
def _arrive(pi, p, table, mode, out):  # pragma: no cover - numba
    """``out = pi P_X`` on sorted states ``i <= j`` (upper triangle); returns the mass whose
    post-arrival backlog was put at ``U``.  ``table[t, k]``: 0 the shorter queue, 1 the
    longer (``t`` the packed index of ``(i, j)``); mode RND: half to each."""
    N = pi.shape[0] - 1
    K = p.size - 1
    out[:, :] = 0.0
    clipped = 0.0
    for i in range(N + 1):
        off = i * (2 * N + 3 - i) // 2 - i
        for j in range(i, N + 1):
            w = pi[i, j]
            if w == 0.0:
                continue
            for k in range(K + 1):
                pk = w * p[k]
                s0 = _to_shorter(table, mode, off + j, k)
                if s0 > 0.0:
                    x = i + k
                    if x > N:
                        x = N
                        clipped += s0 * pk
                    if x <= j:
                        out[x, j] += s0 * pk
                    else:
                        out[j, x] += s0 * pk
                if s0 < 1.0:
                    y = j + k
                    if y > N:
                        y = N
                        clipped += (1.0 - s0) * pk
                    out[i, y] += (1.0 - s0) * pk
    return clipped


@numba.njit(cache=True)
def _drain(mu, a, b, q, M, out):  # pragma: no cover - numba
    """``out = mu P_A``: the adjoint of the diagonal E_A recursion on sorted states
    (the forward pass is ``_ea_pass_2`` of :mod:`symq.dispatch.vi.passes`)."""
    N = mu.shape[0] - 1
    for j in range(N, -1, -1):
        for i in range(j, -1, -1):
            up = 0.0
            if j < N:
                up = M[i + 1, j + 1]
                if i == 0:
                    up += M[0, j + 1]
            M[i, j] = mu[i, j] + q * up
            if i == 0 and j == 0:
                out[0, 0] = M[0, 0] + b * up
            else:
                out[i, j] = a * M[i, j] + b * up


@numba.njit(cache=True)
def _wait_by_atom(pi, table, mode, delta, K, out):  # pragma: no cover - numba
    """``out[k] = E_pi[u_{a(u, k delta)}]`` (sorted states, the same decisions as _arrive)."""
    N = pi.shape[0] - 1
    out[:] = 0.0
    for i in range(N + 1):
        off = i * (2 * N + 3 - i) // 2 - i
        for j in range(i, N + 1):
            w = pi[i, j]
            if w == 0.0:
                continue
            for k in range(K + 1):
                s0 = _to_shorter(table, mode, off + j, k)
                out[k] += w * (s0 * i + (1.0 - s0) * j) * delta


def drain_distribution(mu: NDArray[np.float64], lam: float, delta: float
                       ) -> NDArray[np.float64]:
    r"""The law of :math:`(u - A\mathbf 1)^+` on the lattice, :math:`A \sim \mathrm{Exp}(\lambda)`,
    for ``u ~ mu`` on sorted states (upper triangle of an ``(N+1, N+1)`` array): the adjoint
    of :func:`~symq.dispatch.vi.passes.diagonal_expectation`."""
    mu = np.ascontiguousarray(np.triu(mu), dtype=float)
    a, b, q = diagonal_weights(lam, delta)
    out = np.zeros_like(mu)
    _drain(mu, a, b, q, np.empty_like(mu), out)
    return out


def bin_atom_weights(sizes: Any, edges: ArrayLike, delta: float, K: int) -> NDArray[np.float64]:
    r"""Hat-kernel weights :math:`w_{B,k}` of the size atoms ``k delta`` (``k = 0..K``) in each
    bin :math:`B = [e_j, e_{j+1})`, from the cdf and the partial mean only.

    Row ``j`` is :math:`\int_B f(x)\max(0, 1 - |x - k\delta|/\delta)dx / P(X \in B)`,
    normalised over ``k = 0..K`` (the atoms beyond ``K delta`` carry the truncated tail of
    :func:`~symq.dispatch.vi.grid.hat_atoms`).
    """
    law = as_sizes(sizes)
    e = np.asarray(edges, dtype=float)
    k = np.arange(K + 1, dtype=float)

    def F(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(x <= 0, 0.0, size_cdf(law, np.maximum(x, 0.0)))

    def Mp(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(x <= 0, 0.0, np.asarray(law.partial_moment(1, np.maximum(x, 0.0)),
                                                dtype=float))

    rows = []
    for lo, hi in zip(e[:-1], e[1:]):
        w = np.zeros(K + 1)
        for seg_lo, seg_hi, sign, centre in (((k - 1) * delta, k * delta, 1.0, k - 1),
                                             (k * delta, (k + 1) * delta, -1.0, k + 1)):
            alpha = np.maximum(seg_lo, lo)
            beta = np.minimum(seg_hi, hi)
            ok = beta > alpha
            alpha, beta = np.where(ok, alpha, 0.0), np.where(ok, beta, 0.0)
            dF, dM = F(beta) - F(alpha), Mp(beta) - Mp(alpha)
            w += np.where(ok, sign * (dM - centre * delta * dF) / delta, 0.0)
        w = np.maximum(w, 0.0)
        total = w.sum()
        rows.append(w / total if total > 0 else np.full(K + 1, np.nan))
    return np.array(rows)


@dataclass(frozen=True)
class VIResponseBySize(ResultBase):
    r"""Mean response time by job size of a policy on the value-iteration lattice (``m = 2``).

    Attributes
    ----------
    policy : str
        ``"optimal"`` (a :class:`~symq.dispatch.vi.iteration.VIResult`), ``"rnd"`` or ``"lwl"``.
    m : int
    rho, lam, delta, U : float
    sizes : str
    atoms : numpy.ndarray (K+1,)
        Lattice sizes ``k delta``.
    wait : numpy.ndarray (K+1,)
        :math:`c_k = E_\pi[u_{a(u, k\delta)}]`, the mean wait of a job of size ``k delta``.
    edges, centres, probabilities : numpy.ndarray
        Bins, :math:`E[X \mid B]` and :math:`P(X \in B)` (as
        :class:`~symq.dispatch.simulation.fairness. ResponseBySize`).
    means, slowdown : numpy.ndarray (k,)
        :math:`E[T \mid X \in B]` and ``means / centres``.
    ET, EW : float
        :math:`\sum_k p_k (k\delta + c_k)` and :math:`\sum_k p_k c_k` of the discretised chain.
    ET_value_iteration : float or None
        ``g`` of the value-iteration result the policy came from.
    clipped : float
        Stationary probability per arrival that a backlog was put back at ``U``.
    residual : float
        L1 change of :math:`\pi` in the last iteration (the stopping rule is ``< tol``).
    iterations : int
    distribution : numpy.ndarray (N+1, N+1)
        :math:`\pi` on sorted states (upper triangle), not in :meth:`to_dict`.
    method : str
    exactness : Exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("policy", "rho", "delta", "U", "ET", "clipped")

    policy: str
    m: int
    rho: float
    lam: float
    delta: float
    U: float
    sizes: str
    atoms: NDArray[np.float64]
    wait: NDArray[np.float64]
    edges: NDArray[np.float64]
    centres: NDArray[np.float64]
    probabilities: NDArray[np.float64]
    means: NDArray[np.float64]
    slowdown: NDArray[np.float64]
    ET: float
    EW: float
    ET_value_iteration: float | None
    clipped: float
    residual: float
    iterations: int
    distribution: NDArray[np.float64] = field(repr=False)
    method: str = ("stationary law of the backlogs at arrivals on the value-iteration lattice "
                   "(power iteration of the discretised kernel)")
    exactness: Exactness = Exactness.NUMERIC

    def at(self, x: ArrayLike) -> NDArray[np.float64]:
        r""":math:`E[T \mid X = x] = x + c(x)`, ``c`` the hat interpolation of :attr:`wait`."""
        x = np.asarray(x, dtype=float)
        top = float(self.atoms[-1])
        if np.any(~np.isfinite(x)) or np.any(x < 0) or np.any(x > top):
            raise InvalidParameter("x", x.tolist() if x.size <= 8 else f"array{x.shape}",
                                   f"sizes in [0, {top:g}] (the size lattice)")
        return x + np.interp(x, self.atoms, self.wait)


@numba.njit(cache=True)
def _lookup_table(v, delta, c_M, K, table, slope, cross):  # pragma: no cover - numba
    """``table[t, k]``: the server (0 shorter, 1 longer) of the VI policy at sorted lattice
    backlogs ``(i, j) delta`` (packed index ``t``) and size ``k delta``: the comparison of the
    simulated ``lookup`` policy (:func:`~symq.dispatch.policies.decisions.lookup_value`, ties to the
    shorter queue)."""
    N = v.shape[0] - 1
    for i in range(N + 1):
        off = i * (2 * N + 3 - i) // 2 - i
        for j in range(i, N + 1):
            a, b = i * delta, j * delta
            for k in range(K + 1):
                x = k * delta
                c0 = a + x + lookup_value(v, delta, c_M, a + x, b, slope, cross)
                c1 = b + x + lookup_value(v, delta, c_M, a, b + x, slope, cross)
                table[off + j, k] = 0 if c0 <= c1 else 1


def response_by_size_vi(policy: str | VIResult, m: int, rho: float, sizes: Any,
                        bins: int | ArrayLike = DEFAULT_BINS, *, delta: float | None = None,
                        U: float | None = None, tol: float = 1e-12,
                        max_iter: int = 200_000) -> VIResponseBySize:
    r""":math:`E[T \mid X \in \text{bin}]` of a two-server policy from the stationary backlog law
    on the value-iteration lattice (Hyytiä & Righter, arXiv 2402.08142, Part 1).

    Parameters
    ----------
    policy : VIResult, "rnd" or "lwl"
        A value-iteration result of the optimal policy (:func:`~symq.dispatch.vi.solvers.
        solve_optimal`, or the ``fine`` grid of :func:`~symq.dispatch.vi.accuracy.solve_accurate`):
        its decisions :math:`\arg\min_i\{u_i + x + v(u + x e_i)\}` at the lattice sizes, ties
        to the shorter queue; or the equal random split or least work left.
    m : int
        Number of servers: 2.
    rho : float
        Per-server load (a result's own ``rho``).
    sizes : job-size law
        The law the policy was computed for (:func:`~symq.dispatch.sizes.as_size_law`).
    bins : int or array_like
        Equiprobable bins or edges (:func:`~symq.dispatch.sizebins.size_edges`).
    delta, U : float, optional
        Lattice step and truncation: a result's own (the default), or ``0.1`` and ``24`` for a
        named policy.
    tol : float
        Stop when the L1 change of :math:`\pi` in one iteration is below ``tol``.
    max_iter : int
        Iteration budget.

    Returns
    -------
    VIResponseBySize

    Raises
    ------
    InvalidParameter
        ``m`` other than 2, an unknown policy, a result that is not the optimal policy of
        ``rho`` and ``sizes`` with unit speeds, a ``delta`` or ``U`` other than the result's,
        bad ``tol``, ``max_iter``, bins or grid (as
        :func:`~symq.dispatch.vi.solvers.solve_optimal`).
    NotConverged
        ``max_iter`` iterations without the change falling below ``tol``.
    """
    m = integer_value("m", m, 1)
    if m != 2:
        raise InvalidParameter("m", m, "2 (the backlog law is computed on the two-server "
                               "lattice)")
    tol = real_value("tol", tol, "a real number > 0", lambda t: t > 0)
    max_iter = integer_value("max_iter", max_iter, 1)
    law = as_sizes(sizes)
    if isinstance(policy, VIResult):
        if policy.m != 2 or policy.policy != "optimal" or not policy.symmetric \
                or policy.curvatures is not None:
            raise InvalidParameter("policy", f"VIResult(policy={policy.policy!r}, m={policy.m})",
                                   "the value-iteration result of the optimal policy of two "
                                   "identical servers")
        for name, given, own in (("delta", delta, policy.delta), ("U", U, policy.U)):
            if given is not None and abs(float(given) - own) > 1e-12 * max(1.0, own):
                raise InvalidParameter(name, given, f"the result's own {name}={own:g} (or "
                                       "None)")
        if abs(float(rho) - policy.rho) > 1e-12:
            raise InvalidParameter("rho", rho, f"the result's own rho={policy.rho:g}")
        grid = DispatchGrid.build(2, rho, law, policy.delta, policy.U,
                                  tail=policy.tail)
        if abs(grid.lam - policy.lam) > 1e-9 * policy.lam:
            raise InvalidParameter("sizes", size_name(law), "the size law the result was computed "
                                   f"for (its arrival rate is {policy.lam:g}, this law gives "
                                   f"{grid.lam:g})")
        name, mode = "optimal", _TABLE
        table = np.empty((grid.n_states, grid.K + 1), dtype=np.int8)
        _lookup_table(np.ascontiguousarray(policy.v, dtype=float), policy.delta, policy.c_M,
                      grid.K, table, float(policy.tail_slope),
                      np.zeros(0) if policy.tail_cross is None else policy.tail_cross)
        g_vi: float | None = float(policy.ET)
    elif isinstance(policy, str) and policy.lower() in NAMED:
        grid = DispatchGrid.build(2, rho, law, 0.1 if delta is None else delta,
                                  24.0 if U is None else U)
        name = policy.lower()
        mode = _RND if name == "rnd" else _TABLE
        table = np.zeros((grid.n_states if name == "lwl" else 1, grid.K + 1), dtype=np.int8)
        g_vi = None
    else:
        raise InvalidParameter("policy", policy, "a VIResult of the optimal policy, 'rnd' or "
                               "'lwl'")
    edges = size_edges(law, bins)
    N, K = grid.N, grid.K
    # start from independent geometric backlogs (any law converges; this one is close)
    idx = np.arange(N + 1) * grid.delta
    pi = np.triu(np.exp(-(1 - grid.rho) * (idx[:, None] + idx[None, :])))
    pi /= pi.sum()
    after, nxt, scratch = np.empty_like(pi), np.zeros_like(pi), np.empty_like(pi)  # i > j: 0
    change, clipped = np.inf, 0.0
    for it in range(1, max_iter + 1):  # noqa: B007 (reported after the loop)
        clipped = _arrive(pi, grid.p, table, mode, after)
        _drain(after, grid.a, grid.b, grid.q, scratch, nxt)
        change = float(np.abs(nxt - pi).sum())
        pi, nxt = nxt, pi
        if change < tol:
            break
    else:
        raise NotConverged(f"the stationary backlog law of {name} (rho={grid.rho:g}, "
                           f"delta={grid.delta:g}, U={grid.U:g}; L1 change per iteration)",
                           change, tol, max_iter, "raise max_iter or tol")
    pi /= pi.sum()
    wait = np.empty(K + 1)
    _wait_by_atom(pi, table, mode, grid.delta, K, wait)
    atoms = np.arange(K + 1) * grid.delta
    weights = bin_atom_weights(law, edges, grid.delta, K)
    centres = bin_means(law, edges)
    means = centres + weights @ wait
    EW = float(grid.p @ wait)
    return VIResponseBySize(
        policy=name, m=2, rho=grid.rho, lam=grid.lam, delta=grid.delta, U=grid.U,
        sizes=size_name(law), atoms=atoms, wait=wait, edges=edges, centres=centres,
        probabilities=bin_probabilities(law, edges), means=means, slowdown=means / centres,
        ET=float(grid.p @ atoms) + EW, EW=EW, ET_value_iteration=g_vi, clipped=float(clipped),
        residual=change, iterations=it, distribution=pi)
