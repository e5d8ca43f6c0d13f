"""Nonlinear level-dependent QBDs: UL-type RG-factorization, the fixed point ``pi = stat(Q(pi))``.

Q.-L. Li, "Nonlinear Markov processes in big networks", Special Matrices 4 (2016)
(arXiv 1504.07974), models the mean-field limit of many weakly interacting block-structured
Markov processes as a *nonlinear* block-structured Markov process: the occupancy vector ``x``
(a probability row vector partitioned by levels) solves ``dx/dt = x Q(x)``, where ``Q(x)`` is a
block-tridiagonal generator whose blocks depend on ``x``.  Its fixed points solve
``pi Q(pi) = 0``, ``pi 1 = 1`` (Li 2016; ``derivations/li-nonlinear.md`` §5).

This module provides

* :class:`~symq.markov.level_reduction.LevelDependentQBD` (imported from
  :mod:`symq.markov.level_reduction`, its home): a (linear) level-dependent QBD given by
  callables of the level, solved by the backward R-recursion, i.e. the UL-type
  RG-factorization ``Q = (I - R_U) U_D (I - G_L)`` of the truncated chain
  (``derivations/li-nonlinear.md`` §2-§4);
* :class:`NonlinearQBD`: blocks that depend on the stationary vector itself; the fixed point
  is found by iterating ``pi <- stat(Q(pi))`` (optionally damped);
* :func:`jsq_exponential_qbd` and :func:`jsq_ph_qbd`: the supermarket model JSQ(d) seen from a
  tagged server (level = queue length, phase = service phase, arrival rate
  ``lam h_d(u_k, u_{k+1})``);
* :func:`relative_entropy_trajectory`: Lyapunov functions along the mean-field ODE of JSQ(d).

Examples
--------
>>> qbd = LevelDependentQBD(1, 1, up=lambda k: [[0.5]],
...                         local=lambda k: [[-0.5 if k == 0 else -1.5]],
...                         down=lambda k: [[1.0]])
>>> sol = qbd.stationary(1e-16)
>>> round(float(sol.levels[0][0]), 12), sol.residual < 1e-15
(0.5, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.parameters import integer_value, real_value
from symq.core.renamed import renamed_keywords
from symq.core.result import Exactness, ResultBase
from symq.laws import as_phase_type
from symq.markov.level_reduction import LevelDependentQBD, QBDSolution

from .probes import probe_polynomial as _hd
from .sizes import PhaseTypeLaw

__all__ = [
    "LevelDependentQBD",
    "LyapunovCheck",
    "NonlinearFixedPoint",
    "NonlinearQBD",
    "QBDSolution",
    "jsq_exponential_qbd",
    "jsq_ph_qbd",
    "relative_entropy_trajectory",
    "tails",
]


# ---------------------------------------------------------------------- nonlinear QBD

def tails(levels: Sequence[ArrayLike]) -> NDArray[np.float64]:
    """``u_k = sum_{i >= k} p_i 1`` for ``k = 0..K`` (``u_0 = 1``)."""
    mass = np.array([float(np.sum(p)) for p in levels])
    return np.cumsum(mass[::-1])[::-1]


def _distance(a: Sequence[NDArray[np.float64]], b: Sequence[NDArray[np.float64]]) -> float:
    """``max |a - b|`` over all entries, the shorter vector padded with zeros."""
    worst = 0.0
    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else np.zeros_like(b[k])
        y = b[k] if k < len(b) else np.zeros_like(a[k])
        worst = max(worst, float(np.max(np.abs(x - y))))
    return worst


@dataclass(frozen=True)
class NonlinearFixedPoint(ResultBase):
    """A fixed point ``pi = stat(Q(pi))`` of a :class:`NonlinearQBD`.

    Attributes
    ----------
    levels : list of ndarray
        ``pi_0, ..., pi_K``.
    iterations : int
        Number of maps ``pi <- stat(Q(pi))`` applied.
    residual : float
        ``||pi - stat(Q(pi))||_inf`` (one extra, independent evaluation of the map).
    generator_residual : float
        ``||pi Q_K(pi)||_inf`` (the nonlinear stationary equation, truncated generator).
    method : str
    exactness : Exactness
        ``numeric``.
    """

    levels: list[NDArray[np.float64]]
    iterations: int
    residual: float
    generator_residual: float
    method: str = "fixed-point iteration pi <- stat(Q(pi)) (Li 2016)"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def tail(self) -> NDArray[np.float64]:
        """``u_1, ..., u_K`` (``u_k = sum_{i >= k} pi_i 1``)."""
        return tails(self.levels)[1:]

    @property
    def mean_level(self) -> float:
        """``E[level] = sum_k k pi_k 1 = sum_{k >= 1} u_k``."""
        return float(np.sum(self.tail))


class NonlinearQBD:
    """A nonlinear level-dependent QBD: generator blocks that depend on the occupancy vector.

    Parameters
    ----------
    blocks_of_state : callable
        ``blocks_of_state(pi)`` returns the
        :class:`~symq.markov.level_reduction.LevelDependentQBD` ``Q(pi)``; ``pi`` is a
        list of level vectors ``pi_0, pi_1, ...`` (levels beyond its length have mass 0).

    Notes
    -----
    Fixed points solve ``pi Q(pi) = 0``, ``pi 1 = 1`` (Li 2016, section on fixed points;
    ``derivations/li-nonlinear.md`` §5).  :meth:`fixed_point` iterates ``pi <- stat(Q(pi))``,
    each stationary vector computed by the UL-type RG-factorization of
    :meth:`symq.markov.level_reduction.LevelDependentQBD.stationary`.
    Existence follows from Brouwer's theorem; uniqueness is not guaranteed in general.
    """

    def __init__(self, blocks_of_state: Callable[[list[NDArray[np.float64]]], LevelDependentQBD]
                 ) -> None:
        if not callable(blocks_of_state):
            raise InvalidParameter("blocks_of_state", blocks_of_state, "a callable pi -> QBD")
        self.blocks_of_state = blocks_of_state

    def stat(self, pi: Sequence[ArrayLike], tol: float = 1e-16) -> QBDSolution:
        """``stat(Q(pi))``: the stationary vector of the linear QBD frozen at ``pi``."""
        levels = [np.asarray(p, dtype=float).ravel() for p in pi]
        return self.blocks_of_state(levels).stationary(tol)

    def fixed_point(self, pi0: Sequence[ArrayLike], tol: float = 1e-12, max_iter: int = 10_000,
                    damping: float = 0.0, truncation_tol: float = 1e-16) -> NonlinearFixedPoint:
        """Iterate ``pi <- (1 - damping) stat(Q(pi)) + damping pi`` until the change is ``< tol``.

        Parameters
        ----------
        pi0 : sequence of array_like
            Initial level vectors.
        tol : float, default 1e-12
            Stopping tolerance on ``max |pi_new - pi|``.
        max_iter : int, default 10000
            Iterations allowed.
        damping : float, default 0
            Weight of the old iterate, in ``[0, 1)``.
        truncation_tol : float, default 1e-16
            Top-level mass allowed in every stationary solve.

        Raises
        ------
        NotConverged
            After ``max_iter`` iterations, with the last change as residual.
        """
        if not 0.0 <= damping < 1.0:
            raise InvalidParameter("damping", damping, "a number in [0, 1)")
        pi = [np.asarray(p, dtype=float).ravel() for p in pi0]
        change = math.inf
        for it in range(1, max_iter + 1):
            new = self.stat(pi, truncation_tol).levels
            if damping:
                n = max(len(new), len(pi))
                pad = [pi[k] if k < len(pi) else np.zeros_like(new[k]) for k in range(n)]
                new = [(1 - damping) * (new[k] if k < len(new) else np.zeros_like(pad[k]))
                       + damping * pad[k] for k in range(n)]
            change = _distance(new, pi)
            pi = new
            if change < tol:
                check = self.stat(pi, truncation_tol)
                qbd = self.blocks_of_state(pi)
                padded = pi + [np.zeros(qbd.size(k)) for k in range(len(pi), check.K + 1)]
                return NonlinearFixedPoint(levels=pi, iterations=it,
                                           residual=_distance(pi, check.levels),
                                           generator_residual=qbd.residual(padded))
        raise NotConverged("nonlinear QBD fixed point pi = stat(Q(pi))", change, tol, max_iter)


# ---------------------------------------------------------------------- JSQ(d) instances

def _check_jsq(d: Any, lam: Any) -> tuple[int, float]:
    d = integer_value("d", d, 1)
    lam = real_value("lam", lam, "a real number in (0, 1)", lambda v: 0 < v < 1)
    return d, lam


def _arrival_rates(pi: Sequence[NDArray[np.float64]], d: int, lam: float) -> Callable[[int], float]:
    u = tails(pi)

    def rate(k: int) -> float:
        uk = u[k] if k < u.size else 0.0
        uk1 = u[k + 1] if k + 1 < u.size else 0.0
        return lam * _hd(float(uk), float(uk1), d)
    return rate


def jsq_exponential_qbd(d: int, lam: float) -> NonlinearQBD:
    """JSQ(d), exponential unit-rate service, as a nonlinear birth-death process (``m = 1``).

    A tagged server at level ``k`` (queue length) receives arrivals at rate
    ``lam_k = lam h_d(u_k, u_{k+1})``, ``u_k = sum_{i >= k} pi_i``, and serves at rate 1
    (Bramson, Lu, Prabhakar 2010; ``derivations/li-nonlinear.md`` §6).  Its fixed point is
    ``u_k = lam^((d^k - 1)/(d - 1))`` (Vvedenskaya, Dobrushin, Karpelevich 1996).
    """
    d, lam = _check_jsq(d, lam)

    def blocks(pi: list[NDArray[np.float64]]) -> LevelDependentQBD:
        rate = _arrival_rates(pi, d, lam)
        return LevelDependentQBD(
            1, 1, up=lambda k: [[rate(k)]],
            local=lambda k: [[-rate(k) - (1.0 if k > 0 else 0.0)]],
            down=lambda k: [[1.0]])
    return NonlinearQBD(blocks)


@renamed_keywords(service="sizes")
def jsq_ph_qbd(d: int, lam: float, sizes: PhaseTypeLaw) -> NonlinearQBD:
    """JSQ(d) with phase-type service ``PH(alpha, A)`` (FCFS) as a nonlinear level-dependent QBD.

    ``sizes`` is a job-size law with a phase-type form (:func:`symq.laws.as_phase_type`).

    Level 0 (empty, ``m0 = 1``), levels ``k >= 1`` with ``m`` service phases:
    ``A_0^{(0)} = lam_0 alpha``, ``A_0^{(k)} = lam_k I``, ``A_1^{(k)} = A - lam_k I``,
    ``A_2^{(1)} = a``, ``A_2^{(k)} = a alpha`` with ``a = -A 1`` and
    ``lam_k = lam h_d(u_k, u_{k+1})`` (``derivations/li-nonlinear.md`` §6).
    """
    d, _ = _check_jsq(d, 0.5)
    lam = real_value("lam", lam, "a finite real number > 0", lambda v: v > 0)
    law = as_phase_type(sizes, "sizes")
    alpha, A, m = law.alpha, law.A, law.order
    exit_rates = law.exit_rates

    def blocks(pi: list[NDArray[np.float64]]) -> LevelDependentQBD:
        rate = _arrival_rates(pi, d, lam)
        return LevelDependentQBD(
            1, m,
            up=lambda k: rate(0) * alpha[None, :] if k == 0 else rate(k) * np.eye(m),
            local=lambda k: np.array([[-rate(0)]]) if k == 0 else A - rate(k) * np.eye(m),
            down=lambda k: exit_rates[:, None] if k == 1 else np.outer(exit_rates, alpha))
    return NonlinearQBD(blocks)


# ---------------------------------------------------------------------- Lyapunov functions

@dataclass(frozen=True)
class LyapunovCheck(ResultBase):
    """Lyapunov functions along mean-field ODE trajectories (:func:`relative_entropy_trajectory`).

    Attributes
    ----------
    t : ndarray
        Output times.
    l1 : list of ndarray
        ``V(t) = sum_k |u_k(t) - u_k*|`` per initial state.
    relative_entropy : list of ndarray
        ``D(p(t) || pi*) = sum_k p_k log(p_k / pi*_k)`` of the queue-length law
        ``p_k = u_k - u_{k+1}`` (monotone for ``d = 1`` only; see
        :func:`relative_entropy_trajectory`).
    max_increase : float
        Largest increase of ``V`` between consecutive output times, over all trajectories.
    nonincreasing : bool
        ``max_increase <= tol``.
    fixed_point : ndarray
        The fixed point ``u*`` of the truncated ODE both functions are measured against.
    method : str
    exactness : Exactness
        ``numeric``.
    """

    t: NDArray[np.float64]
    l1: list[NDArray[np.float64]]
    relative_entropy: list[NDArray[np.float64]]
    max_increase: float
    nonincreasing: bool
    fixed_point: NDArray[np.float64] | None = None
    method: str = "mean-field ODE (Radau) from each initial state, Lyapunov functions sampled"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def entropy_increase(self) -> tuple[float, int, float]:
        """The largest increase of the relative entropy between consecutive output times:
        ``(increase, index of the initial state, time at which it starts)``."""
        steps = [np.diff(r) for r in self.relative_entropy]
        which = int(np.argmax([float(np.max(s)) for s in steps]))
        at = int(np.argmax(steps[which]))
        return float(steps[which][at]), which, float(self.t[at])


def _queue_law(u: NDArray[np.float64]) -> NDArray[np.float64]:
    full = np.concatenate([[1.0], u, [0.0]])
    return np.maximum(full[:-1] - full[1:], 0.0)


def relative_entropy_trajectory(d: int, lam: float,
                                initial_states: Sequence[ArrayLike] | None = None,
                                K: int = 30, t_final: float = 40.0, n_times: int = 400,
                                tol: float = 1e-9) -> LyapunovCheck:
    """Lyapunov functions along the JSQ(d) mean-field ODE (Li 2016, stability by Lyapunov
    functions).

    The truncated ODE ``du_k/dt = lam (u_{k-1}^d - u_k^d) - (u_k - u_{k+1})``
    (:func:`symq.meanfield.supermarket.jsq_process`) is integrated from each initial state.
    Its Jacobian has non-negative off-diagonal entries and column sums ``<= 0`` on the
    monotone domain, so its logarithmic 1-norm is ``<= 0`` and the L1 distance between two
    trajectories (in particular to the fixed point ``u*``, here the closed form) never
    increases -- the unweighted version of Mitzenmacher's potential (2001).  The relative
    entropy of the queue-length law w.r.t. the fixed point is reported too.

    The fixed point ``u*`` is that of the truncated ODE (Newton from the closed form; for
    ``d = 1`` it is the M/M/1/K law ``u_k = (lam^k - lam^(K+1)) / (1 - lam^(K+1))``), so that
    both functions are measured against the point the integrated system converges to.  For
    ``d = 1`` the ODE is the forward equation of a linear Markov chain (the M/M/1/K queue), and
    the relative entropy to its stationary law never increases (Cover and Thomas 2006, Section
    4.4); for ``d >= 2`` no such theorem holds, and from heavy initial states it increases.

    Parameters
    ----------
    d, lam : int, float
        JSQ(d) at per-server load ``lam < 1``.
    initial_states : sequence of array_like, optional
        Tails ``u_1..u_K``; default: empty system, all servers with 3 jobs, ``u_k = 0.95^k``.
    K : int, default 30
        Truncation of the ODE.
    t_final, n_times : float, int
        Output grid ``linspace(0, t_final, n_times)``.
    tol : float, default 1e-9
        Allowed increase between consecutive times (integration error).
    """
    from symq.meanfield.supermarket import LAM, closed_form_tail, jsq_process

    d, lam = _check_jsq(d, lam)
    if initial_states is None:
        initial_states = [np.zeros(K), np.where(np.arange(1, K + 1) <= 3, 1.0, 0.0),
                          0.95 ** np.arange(1, K + 1)]
    times = np.linspace(0.0, t_final, n_times)
    process = jsq_process(d, K)
    star = process.fixed_point(closed_form_tail(d, lam, K), {LAM: lam}, tol=1e-14).x
    law_star = _queue_law(star)
    l1, entropy, worst = [], [], -math.inf
    for x0 in initial_states:
        traj = process.ode(np.asarray(x0, dtype=float), times, {LAM: lam}, method="Radau",
                           rtol=1e-11, atol=1e-14)
        v = np.sum(np.abs(traj.x - star), axis=1)
        rel = []
        for u in traj.x:
            law = _queue_law(u)
            mask = law > 0
            rel.append(float(np.sum(law[mask] * np.log(law[mask] / np.maximum(law_star[mask],
                                                                              1e-300)))))
        l1.append(v)
        entropy.append(np.array(rel))
        worst = max(worst, float(np.max(np.diff(v))))
    return LyapunovCheck(t=times, l1=l1, relative_entropy=entropy, max_increase=worst,
                         nonincreasing=worst <= tol, fixed_point=star)
