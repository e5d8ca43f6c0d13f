"""Nonlinear level-dependent QBDs: UL-type RG-factorization, the fixed point ``pi = stat(Q(pi))``.

Q.-L. Li, "Nonlinear Markov processes in big networks", Special Matrices 4 (2016)
(arXiv 1504.07974), models the mean-field limit of many weakly interacting block-structured
Markov processes as a *nonlinear* block-structured Markov process: the occupancy vector ``x``
(a probability row vector partitioned by levels) solves ``dx/dt = x Q(x)``, where ``Q(x)`` is a
block-tridiagonal generator whose blocks depend on ``x``.  Its fixed points solve
``pi Q(pi) = 0``, ``pi 1 = 1`` (Li 2016; ``derivations/li-nonlinear.md`` §5).

This module provides

* :class:`LevelDependentQBD`: a (linear) level-dependent QBD given by callables of the level,
  solved by the backward R-recursion, i.e. the UL-type RG-factorization
  ``Q = (I - R_U) U_D (I - G_L)`` of the truncated chain (``derivations/li-nonlinear.md`` §2-§4);
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

from symq.core.errors import InvalidParameter, NotConverged, TruncationError
from symq.core.parameters import integer_value, real_value
from symq.core.renamed import renamed_keywords
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase
from symq.laws import as_phase_type

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

Block = Callable[[int], ArrayLike]
#: row-sum tolerance of the generator (absolute, scaled by ``max(1, largest |entry| of the row)``).
ROW_TOL = 1e-12


@dataclass(frozen=True)
class QBDSolution(ResultBase):
    """Stationary vector of a truncated level-dependent QBD.

    From :meth:`LevelDependentQBD.stationary`.

    Attributes
    ----------
    levels : list of ndarray
        ``p_0, ..., p_K`` (``p_0`` of size ``m0``, the others of size ``m``), summing to 1.
    K : int
        The truncation level (highest level kept).
    top_mass : float
        ``p_K 1``, the mass of the top level (the truncation criterion).
    residual : float
        ``||p Q_K||_inf`` for the truncated generator ``Q_K``, computed from the blocks
        (independently of the recursion).
    method : str
    exactness : Exactness
        ``numeric``.
    """

    levels: list[NDArray[np.float64]]
    K: int
    top_mass: float
    residual: float
    method: str = "UL-type RG-factorization of the truncated QBD (Li 2016), adaptive truncation"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def level_mass(self) -> NDArray[np.float64]:
        """``p_k 1`` for ``k = 0..K``."""
        return np.array([float(p.sum()) for p in self.levels])

    @property
    def flat(self) -> NDArray[np.float64]:
        """The stationary vector as one row vector ``(p_0, p_1, ..., p_K)``."""
        return np.concatenate(self.levels)


class LevelDependentQBD:
    """A level-dependent quasi-birth-death process (levels ``0, 1, 2, ...``).

    Parameters
    ----------
    m0 : int
        Size of level 0.
    m : int
        Size of every level ``k >= 1``.
    up : callable
        ``up(k)``: the block ``A_0^{(k)}`` from level ``k`` to ``k + 1`` (``m0 x m`` for
        ``k = 0``, ``m x m`` otherwise).
    local : callable
        ``local(k)``: the diagonal block ``A_1^{(k)}`` (``m0 x m0`` for ``k = 0``).
    down : callable
        ``down(k)``: the block ``A_2^{(k)}`` from level ``k >= 1`` to ``k - 1`` (``m x m0`` for
        ``k = 1``).

    Notes
    -----
    Truncated at level ``K``, the jumps up from level ``K`` are suppressed and their rates
    moved to the diagonal (``U_K = A_1^{(K)} + diag(A_0^{(K)} 1)``).  The UL-type
    RG-factorization (Li 2016; Li, *Constructive Computation in Stochastic Models*, 2010) is
    the backward recursion::

        R_k = A_0^{(k)} (-U_{k+1})^{-1},   U_k = A_1^{(k)} + R_k A_2^{(k+1)},   k = K-1, ..., 0

    then ``p_0 U_0 = 0`` (the censored chain on level 0), ``p_{k+1} = p_k R_k`` and the
    normalisation ``sum_k p_k 1 = 1``.
    """

    def __init__(self, m0: int, m: int, up: Block, local: Block, down: Block) -> None:
        self.m0, self.m = integer_value("m0", m0, 1), integer_value("m", m, 1)
        self._up, self._local, self._down = up, local, down
        self._cache: dict[tuple[str, int], NDArray[np.float64]] = {}

    # ------------------------------------------------------------------ blocks
    def size(self, k: int) -> int:
        """Number of phases of level ``k``."""
        return self.m0 if k == 0 else self.m

    def _block(self, kind: str, k: int) -> NDArray[np.float64]:
        key = (kind, k)
        if key not in self._cache:
            func = {"up": self._up, "local": self._local, "down": self._down}[kind]
            rows = self.size(k)
            cols = {"up": self.size(k + 1), "local": rows, "down": self.size(k - 1)}[kind]
            block = np.asarray(func(k), dtype=float)
            if block.shape != (rows, cols) or not np.all(np.isfinite(block)):
                raise InvalidParameter(f"{kind}({k})", block.tolist(),
                                       f"a finite {rows} x {cols} matrix")
            self._cache[key] = block
        return self._cache[key]

    def up(self, k: int) -> NDArray[np.float64]:
        """``A_0^{(k)}`` (level ``k`` to ``k + 1``)."""
        return self._block("up", k)

    def local(self, k: int) -> NDArray[np.float64]:
        """``A_1^{(k)}`` (within level ``k``)."""
        return self._block("local", k)

    def down(self, k: int) -> NDArray[np.float64]:
        """``A_2^{(k)}`` (level ``k`` to ``k - 1``), ``k >= 1``."""
        return self._block("down", k)

    def validate(self, K: int) -> None:
        """Check levels ``0..K``: off-diagonal entries ``>= 0``, row sums ``0`` (within 1e-12).

        Raises
        ------
        InvalidParameter
            At the first level that violates a generator property.
        """
        for k in range(K + 1):
            up, local = self.up(k), self.local(k)
            parts = [up, local] if k == 0 else [self.down(k), up, local]
            off = local - np.diag(np.diag(local))
            if np.any(up < 0) or np.any(off < 0) or (k > 0 and np.any(self.down(k) < 0)):
                raise InvalidParameter(f"blocks of level {k}", [p.tolist() for p in parts],
                                       "generator blocks with off-diagonal entries >= 0")
            rows = sum(p.sum(axis=1) for p in parts)
            scale = np.maximum(1.0, np.max(np.abs(np.hstack(parts)), axis=1))
            if np.any(np.abs(rows) > ROW_TOL * scale):
                raise InvalidParameter(f"row sums of level {k}", rows.tolist(),
                                       "generator rows summing to 0 (within 1e-12)")

    # ------------------------------------------------------------------ solve
    def _top(self, K: int) -> NDArray[np.float64]:
        return self.local(K) + np.diag(self.up(K).sum(axis=1))

    def solve_truncated(self, K: int) -> QBDSolution:
        """Stationary vector of the chain truncated at level ``K`` (backward R-recursion)."""
        K = integer_value("K", K, 1)
        m = max(self.m, self.m0)
        require_memory("K", K, 8.0 * (K + 1) * (4 * m * m + 6 * m),
                       what=f"{K + 1} levels of {m} phases",
                       limit=lambda budget: f"at most {int(budget // (8 * (4 * m * m + 6 * m)))}")
        self.validate(K)
        U = self._top(K)
        R: list[NDArray[np.float64]] = [np.empty(0)] * K
        for k in range(K - 1, -1, -1):
            R[k] = np.linalg.solve((-U).T, self.up(k).T).T   # A_0^{(k)} (-U_{k+1})^{-1}
            U = self.local(k) + R[k] @ self.down(k + 1)
        # p_0 U_0 = 0, p_0 1 = 1 (U_0 is the generator of the chain censored on level 0)
        system = U.T.copy()
        system[-1, :] = 1.0
        rhs = np.zeros(self.m0)
        rhs[-1] = 1.0
        p0 = np.linalg.solve(system, rhs)
        levels = [p0]
        for k in range(K):
            levels.append(levels[-1] @ R[k])
        total = sum(float(p.sum()) for p in levels)
        if not (math.isfinite(total) and total > 0):
            raise NotConverged(f"level-dependent QBD at K={K} (non-finite normalisation)",
                               float("inf"), 0.0, 1)
        levels = [np.maximum(p / total, 0.0) for p in levels]
        return QBDSolution(levels=levels, K=K, top_mass=float(levels[-1].sum()),
                           residual=self.residual(levels))

    def residual(self, levels: Sequence[ArrayLike]) -> float:
        """``||p Q_K||_inf`` of the generator truncated at ``K = len(levels) - 1``, from the
        blocks."""
        p = [np.asarray(v, dtype=float) for v in levels]
        K = len(p) - 1
        worst = 0.0
        for k in range(K + 1):
            diag = self._top(k) if k == K else self.local(k)
            flow = p[k] @ diag
            if k > 0:
                flow = flow + p[k - 1] @ self.up(k - 1)
            if k < K:
                flow = flow + p[k + 1] @ self.down(k + 1)
            worst = max(worst, float(np.max(np.abs(flow))))
        return worst

    def stationary(self, tol: float = 1e-16, K0: int = 16, max_levels: int = 2 ** 14
                   ) -> QBDSolution:
        """Stationary vector with adaptive truncation (Li 2016, UL-type RG-factorization).

        Parameters
        ----------
        tol : float, default 1e-16
            The truncation level ``K`` is doubled (from ``K0``) until the top-level mass
            ``p_K 1`` is below ``tol``.
        K0 : int, default 16
            First truncation level.
        max_levels : int, default 16384
            Cap on ``K``.

        Returns
        -------
        QBDSolution

        Raises
        ------
        TruncationError
            If the cap is reached with the top-level mass still ``>= tol`` (the mass left out
            is reported).
        InvalidParameter
            Invalid blocks (see :meth:`validate`) or ``tol``.
        """
        tol = real_value("tol", tol, "a finite real number > 0", lambda v: v > 0)
        K = max(1, int(K0))
        while True:
            sol = self.solve_truncated(min(K, max_levels))
            if sol.top_mass < tol:
                return sol
            if K >= max_levels:
                raise TruncationError("level-dependent QBD (UL-type RG-factorization)",
                                      "levels (top-level mass)", sol.top_mass, tol,
                                      f"K={sol.K}", "raise max_levels or lower the load")
            K *= 2


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
        ``blocks_of_state(pi)`` returns the :class:`LevelDependentQBD` ``Q(pi)``; ``pi`` is a
        list of level vectors ``pi_0, pi_1, ...`` (levels beyond its length have mass 0).

    Notes
    -----
    Fixed points solve ``pi Q(pi) = 0``, ``pi 1 = 1`` (Li 2016, section on fixed points;
    ``derivations/li-nonlinear.md`` §5).  :meth:`fixed_point` iterates ``pi <- stat(Q(pi))``,
    each stationary vector computed by the UL-type RG-factorization of
    :meth:`LevelDependentQBD.stationary`.
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
