"""Linear level reduction of a level-dependent QBD given by numeric blocks.

A level-dependent quasi-birth-death process has levels ``0, 1, 2, ...``; level 0 has ``m0``
phases, every level ``n >= 1`` has ``m``; the generator is block-tridiagonal with the blocks
``A0(n)`` (level ``n`` to ``n + 1``), ``A1(n)`` (within level ``n``) and ``A2(n)`` (level ``n``
to ``n - 1``).  Truncated at level ``K`` (the up moves of level ``K`` left out), its stationary
law follows from the backward recursion of Gaver, Jacobs & Latouche (1984), "Finite
birth-and-death models in randomly changing environments", Adv. Appl. Prob. 16:715-731 -- the
UL-type RG-factorization ``Q = (I - R_U) U_D (I - G_L)`` of Li, *Constructive Computation in
Stochastic Models with Applications* (2010)::

    T(K) = A1(K),   R(n) = A0(n) (-T(n+1))^{-1},   T(n) = A1(n) + R(n) A2(n+1),   n = K-1 .. 0

then ``pi_0`` is the stationary law of the censored generator ``T(0)`` (GTH,
:func:`symq.markov.gth.gth_stationary`), ``pi_(n+1) = pi_n R(n)``, normalized over the levels.
Each ``T(n)`` is the within-level block of the chain censored on the levels ``0 .. n``: its
off-diagonal entries are sums of nonnegative terms, and its diagonal is taken from the rows
(``T(n) 1 + A2(n) 1 = 0``) rather than from the sum above, which would cancel large rates where
the up rates exceed the down ones; so each probability keeps its relative accuracy
(``P(N = 0) = e^-200`` of M/M/infinity to 1e-15), as in the GTH elimination.

This module holds that recursion once (:func:`reduce_levels`) and its two entry points for blocks
known as numbers: :class:`LevelDependentQBD` (blocks given as callables of the level, adaptive
truncation on the top-level mass) with its result :class:`QBDSolution`.  A *declared* chain with
a level-dependent level is solved by
:func:`symq.markov.level_dependent.level_dependent_stationary`, which builds its blocks and calls
the same :func:`reduce_levels`.

Examples
--------
M/M/1 at ``rho = 1/2``: ``P(level 0) = 1/2``.

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

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged, TruncationError
from symq.core.parameters import integer_value, real_value
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase

from .gth import gth_stationary

__all__ = ["LevelDependentQBD", "QBDSolution", "reduce_levels"]

Block = Callable[[int], ArrayLike]
#: row-sum tolerance of the generator (absolute, scaled by ``max(1, largest |entry| of the row)``).
ROW_TOL = 1e-12
#: A running level law is rescaled when an entry exceeds this (no overflow when it grows).
_RESCALE = 1e200
#: ``R(n) >= 0`` in exact arithmetic; an entry below ``-_SIGN_TOL * max |R(n)|`` means the
#: blocks are not those of a generator.
_SIGN_TOL = 1e-8


def _check_sign(R: NDArray[np.float64], n: int, top: int) -> None:
    """Refuse ``R(n)`` when an entry is negative beyond round-off."""
    low = float(R.min(initial=0.0))
    if low < -_SIGN_TOL * float(np.abs(R).max(initial=0.0)):
        raise NotConverged(
            f"level-dependent QBD at K={top} (linear level reduction: R({n}) has the entry "
            f"{low:.3g} < 0, impossible for the blocks of a generator)", float("inf"), 0.0, 1,
            "check the blocks' signs and row sums (LevelDependentQBD.validate)")


def _diagonal_from_rows(T: NDArray[np.float64], down: NDArray[np.float64]
                       ) -> NDArray[np.float64]:
    """``T`` with its diagonal set from the rows: ``T(n)`` is the within-level block of the
    chain censored on the levels ``0 .. n``, whose rows with the down block ``A2(n)`` sum to 0.
    Its off-diagonal entries are sums of nonnegative terms; its diagonal computed as
    ``A1(n) + R(n) A2(n+1)`` would be a difference of large rates where the up rates exceed the
    down ones (``-(lam + n) + lam`` for M/M/infinity), whose cancellation the recursion then
    amplifies level after level.  The diagonal from the row sums has no subtraction (the idea
    of the GTH elimination, Grassmann, Taksar & Heyman 1985)."""
    T = T.copy()
    idx = np.arange(T.shape[0])
    T[idx, idx] = 0.0
    T[idx, idx] = -(T.sum(axis=1) + down.sum(axis=1))
    return T


def reduce_levels(up0: NDArray[np.float64], local0: NDArray[np.float64],
                  down1: NDArray[np.float64], up: Sequence[NDArray[np.float64]],
                  local: Sequence[NDArray[np.float64]], down: Sequence[NDArray[np.float64]],
                  *, strict: bool = True
                  ) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
    """The stationary law of a level-dependent QBD truncated at ``K``, by linear level reduction.

    Gaver, Jacobs & Latouche (1984), Adv. Appl. Prob. 16:715-731; the UL-type RG-factorization
    of Li (2010): see the module's docstring for the recursion.

    Parameters
    ----------
    up0, local0, down1 : ndarray
        ``A0(0)`` (``m0 x m``), ``A1(0)`` (``m0 x m0``) and ``A2(1)`` (``m x m0``).
    up, local, down : sequence of ndarray
        Indexed by the level ``n`` (``K = len(local) - 1``): ``up[n]`` for ``1 <= n <= K - 1``,
        ``local[n]`` for ``1 <= n <= K`` and ``down[n]`` for ``2 <= n <= K`` (each ``m x m``;
        the other entries are not read).  ``local[K]`` is the diagonal block of the truncated
        chain: its diagonal holds the rates of the up moves left out, if they are.
    strict : bool, default True
        Refuse an ``R(n)`` with an entry negative beyond round-off (``R(n) >= 0`` in exact
        arithmetic).  With ``False`` such entries pass and the level laws are clipped at 0 (what
        :func:`~symq.markov.level_dependent.level_dependent_stationary` does: it checks the
        solve by its change between truncations instead).

    Returns
    -------
    pi0 : ndarray
        The law of level 0 (size ``m0``).
    levels : list of ndarray
        ``pi_1 .. pi_K``; with ``pi0`` they sum to 1.  Each entry is clipped at 0 (a round-off
        below 0), and a running law whose entries exceed ``1e200`` is rescaled on the way.

    Raises
    ------
    NotConverged
        ``strict`` and an entry of ``R(n)`` is negative beyond round-off (blocks that are not
        those of a generator; ``R(n) >= 0`` in exact arithmetic); or the normalization is not
        finite and positive.
    """
    top = len(local) - 1
    R: list[NDArray[np.float64]] = [np.empty((0, 0))] * top     # R[n], n = 1 .. top - 1
    T = _diagonal_from_rows(local[top], down1 if top == 1 else down[top])
    for n in range(top - 1, 0, -1):
        R[n] = np.linalg.solve(-T.T, up[n].T).T
        if strict:
            _check_sign(R[n], n, top)
        T = _diagonal_from_rows(local[n] + R[n] @ down[n + 1], down1 if n == 1 else down[n])
    R0 = np.linalg.solve(-T.T, up0.T).T
    if strict:
        _check_sign(R0, 0, top)
    censored = np.clip(local0 + R0 @ down1, 0.0, None)
    pi0 = gth_stationary(censored)
    levels = [np.clip(pi0 @ R0, 0.0, None)]
    for n in range(1, top):
        v = np.clip(levels[-1] @ R[n], 0.0, None)
        levels.append(v)
        peak = v.max(initial=0.0)
        if peak > _RESCALE:
            pi0 = pi0 / peak
            levels = [x / peak for x in levels]
    total = float(pi0.sum()) + sum(float(x.sum()) for x in levels)
    if not (math.isfinite(total) and total > 0):
        raise NotConverged(f"level-dependent QBD at K={top} (non-finite normalisation)",
                           float("inf"), 0.0, 1)
    return pi0 / total, [x / total for x in levels]


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
    moved to the diagonal (``U_K = A_1^{(K)} + diag(A_0^{(K)} 1)``).  The linear level
    reduction of Gaver, Jacobs & Latouche (1984, Adv. Appl. Prob. 16:715-731), i.e. the UL-type
    RG-factorization (Li 2016; Li, *Constructive Computation in Stochastic Models*, 2010), is
    the backward recursion::

        R_k = A_0^{(k)} (-U_{k+1})^{-1},   U_k = A_1^{(k)} + R_k A_2^{(k+1)},   k = K-1, ..., 0

    then ``p_0 U_0 = 0`` (the censored chain on level 0, solved by GTH), ``p_{k+1} = p_k R_k``
    and the normalisation ``sum_k p_k 1 = 1`` (:func:`reduce_levels`).
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
        """Stationary vector of the chain truncated at level ``K`` (backward R-recursion,
        :func:`reduce_levels`)."""
        K = integer_value("K", K, 1)
        m = max(self.m, self.m0)
        require_memory("K", K, 8.0 * (K + 1) * (4 * m * m + 6 * m),
                       what=f"{K + 1} levels of {m} phases",
                       limit=lambda budget: f"at most {int(budget // (8 * (4 * m * m + 6 * m)))}")
        self.validate(K)
        none = np.empty((0, 0))
        up = [none] + [self.up(k) for k in range(1, K)]
        local = [none] + [self.local(k) for k in range(1, K)] + [self._top(K)]
        down = [none, none] + [self.down(k) for k in range(2, K + 1)]
        p0, rest = reduce_levels(self.up(0), self.local(0), self.down(1), up, local, down)
        levels = [p0, *rest]
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
        """Stationary vector with adaptive truncation (linear level reduction: Gaver, Jacobs &
        Latouche 1984; the UL-type RG-factorization of Li 2010, 2016).

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

