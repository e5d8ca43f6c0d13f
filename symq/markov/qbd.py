"""Level-independent quasi-birth-death processes: G and R by logarithmic reduction, the law.

A QBD has states ``(n, j)``: a level ``n >= 0`` and a phase ``j``.  The convention of this
module (books differ; it is fixed here and everywhere in symq):

* ``A0``: level ``n -> n + 1`` (up), for ``n >= 1``;
* ``A1``: within level ``n >= 1`` (its diagonal carries minus the total exit rates);
* ``A2``: level ``n -> n - 1`` (down), for ``n >= 2``;
* ``B1``: within level 0 (``m0`` phases, possibly not ``m``); ``B0``: level 0 -> 1
  (``m0 x m``); ``B2``: level 1 -> 0 (``m x m0``).

So the rows of ``[B1 B0]`` and of ``[B2 A1 A0]`` and ``A0 + A1 + A2`` sum to zero.

Stability (Neuts 1981, *Matrix-Geometric Solutions in Stochastic Models*, Johns Hopkins,
Thm. 3.1.1): with ``alpha`` the stationary law of the phase generator ``A = A0 + A1 + A2``, the
chain is positive recurrent iff the *drift* ``alpha A0 1 - alpha A2 1`` is negative; otherwise
:class:`~symq.core.errors.StabilityError` is raised with the drift.

``G`` (the minimal non-negative solution of ``A2 + A1 G + A0 G^2 = 0``; stochastic for a
recurrent chain) is computed by the logarithmic reduction of Latouche & Ramaswami (1993,
J. Appl. Prob. 30:650-674; also their 1999 book *Introduction to Matrix Analytic Methods in
Stochastic Modeling*, SIAM, ch. 8), which converges quadratically: iteration ``k`` accounts for
the paths that climb up to ``2^k`` levels.  It stops when ``||1 - G 1||_inf <= tol``, when that
distance stops decreasing (squaring nearly stochastic matrices only amplifies round-off past
that point), or after :data:`MAX_ITERATIONS`.  Then ``R = A0 (-(A1 + A0 G))^{-1}`` (the
minimal solution of ``A0 + R A1 + R^2 A2 = 0``).

The boundary ``[pi0 pi1]`` is the stationary law of the chain censored on levels 0 and 1,
``[[B1, B0], [B2, A1 + R A2]]`` (a generator since ``R A2 1 = A0 G 1 = A0 1``), solved by GTH
elimination (:mod:`symq.markov.gth`) and scaled so that ``pi0 1 + pi1 (I - R)^{-1} 1 = 1``.
Then ``pi_n = pi1 R^(n-1)`` for ``n >= 1``, ``P(level >= n) = pi1 R^(n-1) (I - R)^{-1} 1`` and
``E[level] = pi1 (I - R)^{-2} 1``.  The *caudal characteristic* ``eta`` (the spectral radius of
``R``) is the geometric decay rate of the level's tail.

Every answer is accepted only when its residual (the largest of the relative residuals of the
equations of ``G`` and ``R`` and of the balance equations of levels 0 and 1) is at most
:data:`ACCEPT`; otherwise :class:`~symq.core.errors.NotConverged`.

Examples
--------
M/M/1 at ``lambda = 1``, ``mu = 2`` (one phase): ``R = rho = 1/2``, ``pi_n = (1 - rho) rho^n``.

>>> import numpy as np
>>> one = lambda x: np.array([[x]])
>>> sol = solve_qbd(one(-1.0), one(1.0), one(2.0), one(1.0), one(-3.0), one(2.0))
>>> round(float(sol.R[0, 0]), 12), round(sol.eta, 12), round(sol.mean_level, 12)
(0.5, 0.5, 1.0)
>>> round(sol.level_probability(3), 12), round(sol.tail(3), 12)
(0.0625, 0.125)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import scipy.sparse as sps
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.result import Exactness, ResultBase

from .gth import gth_stationary
from .stationary import closed_classes, one_closed_class

__all__ = ["MatrixGeometricLaw", "solve_qbd", "polynomial_tail", "ACCEPT", "MAX_ITERATIONS"]

#: Largest residual accepted (relative; see the module's docstring).
ACCEPT = 1e-9
#: Most iterations of the logarithmic reduction (each doubles the levels accounted for).
MAX_ITERATIONS = 60
#: A drift within this fraction of the larger of the up and down rates counts as zero.
DRIFT_TOL = 1e-12
#: Relative tolerance on the zero row sums of the blocks.
ROW_TOL = 1e-10

METHOD = ("logarithmic reduction for G (Latouche & Ramaswami 1993), R = A0 (-(A1 + A0 G))^-1, "
          "boundary by GTH on the chain censored on levels 0 and 1")


@dataclass(frozen=True)
class MatrixGeometricLaw(ResultBase):
    """The stationary law of a level-independent QBD in matrix-geometric form.

    Attributes
    ----------
    G : numpy.ndarray
        ``m x m``: ``G[i, j]`` is the probability that the first visit to level ``n - 1`` from
        ``(n, i)`` is in phase ``j`` (stochastic: the chain is recurrent).
    R : numpy.ndarray
        ``m x m``: the rate matrix, ``pi_(n+1) = pi_n R`` for ``n >= 1``.
    pi0, pi1 : numpy.ndarray
        The stationary probabilities of the phases of levels 0 (``m0``) and 1 (``m``).
    eta : float
        The caudal characteristic, the spectral radius of ``R`` (< 1): ``P(level >= n)``
        decays like ``eta^n``.
    drift : float
        ``alpha A0 1 - alpha A2 1`` (< 0), ``alpha`` the stationary law of ``A0 + A1 + A2``.
    mean_level : float
        ``E[level] = pi1 (I - R)^{-2} 1``.
    iterations : int
        Iterations of the logarithmic reduction.
    residual : float
        The largest of the relative residuals of ``A2 + A1 G + A0 G^2 = 0`` and
        ``A0 + R A1 + R^2 A2 = 0`` (infinity norm over the largest block norm) and of the
        balance of levels 0 and 1 (1-norm over the largest exit rate).
    method, exactness, seconds
        How it was obtained and its wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("eta", "drift", "mean_level", "residual")

    G: NDArray[np.float64]
    R: NDArray[np.float64]
    pi0: NDArray[np.float64]
    pi1: NDArray[np.float64]
    eta: float
    drift: float
    mean_level: float
    iterations: int
    residual: float
    method: str = METHOD
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0
    _inverse: NDArray[np.float64] = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    @property
    def m0(self) -> int:
        """Number of phases of level 0."""
        return int(self.pi0.size)

    @property
    def m(self) -> int:
        """Number of phases of the levels ``n >= 1``."""
        return int(self.pi1.size)

    def _level(self, where: str, n: object) -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InvalidParameter(where, n, "an integer level >= 0")
        return int(n)

    def level_law(self, n: int) -> NDArray[np.float64]:
        """``pi_n``: the stationary probabilities of the phases of level ``n``."""
        n = self._level("n", n)
        if n == 0:
            return self.pi0.copy()
        return self.pi1 @ np.linalg.matrix_power(self.R, n - 1)

    def level_probability(self, n: int) -> float:
        """``P(level = n) = pi_n 1``."""
        return float(self.level_law(n).sum())

    def tail(self, n: int) -> float:
        """``P(level >= n)``: 1 for ``n = 0``, else ``pi1 R^(n-1) (I - R)^{-1} 1``."""
        n = self._level("n", n)
        if n == 0:
            return 1.0
        return float(self.level_law(n) @ self._inverse.sum(axis=1))

    def level_moment(self, k: int) -> float:
        """``E[level^k]`` (``k >= 0``), in closed form from the matrix-geometric law."""
        k = self._level("k", k)
        if k == 0:
            return 1.0
        samples = np.array([[(1.0 + j) ** k] * self.m for j in range(k + 1)])
        return polynomial_tail(self.pi1, self.R, samples, inverse=self._inverse)

    @property
    def level_variance(self) -> float:
        """``Var[level]``."""
        return max(self.level_moment(2) - self.mean_level ** 2, 0.0)


def polynomial_tail(start: ArrayLike, R: ArrayLike, samples: ArrayLike, *,
                    inverse: ArrayLike | None = None) -> float:
    """``sum_{j >= 0} start R^j p(j)`` for a polynomial ``p`` of degree ``d`` per phase.

    Parameters
    ----------
    start : array_like
        The row vector ``v`` (``m``), e.g. ``pi_(L+1)``.
    R : array_like
        ``m x m`` with spectral radius < 1.
    samples : array_like
        ``(d + 1, m)``: ``p(0), ..., p(d)`` (one column per phase) of a polynomial of degree at
        most ``d`` in ``j``.
    inverse : array_like, optional
        ``(I - R)^{-1}`` if already known.

    Returns
    -------
    float
        The sum, in closed form: with ``p(j) = sum_i b_i C(j, i)`` (``b_i`` the forward
        differences of the samples at 0) and ``sum_j C(j, i) R^j = R^i (I - R)^{-(i+1)}``.

    Examples
    --------
    >>> round(polynomial_tail([1.0], [[0.5]], [[0.0], [1.0]]), 12)   # sum_j j 2^-j
    2.0
    """
    v = np.asarray(start, dtype=float)
    R = np.asarray(R, dtype=float)
    p = np.asarray(samples, dtype=float)
    N = np.linalg.inv(np.eye(R.shape[0]) - R) if inverse is None else np.asarray(inverse)
    w = v @ N                                   # v R^i (I - R)^{-(i+1)}, i = 0
    total = 0.0
    for i in range(p.shape[0]):
        b = sum((-1) ** (i - l) * math.comb(i, l) * p[l] for l in range(i + 1))
        total += float(w @ b)
        w = (w @ R) @ N
    return total


def _block(name: str, value: ArrayLike, shape: tuple[int, int] | None) -> np.ndarray:
    try:
        a = np.array(value, dtype=float, ndmin=2)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, "a matrix of real numbers") from None
    if a.ndim != 2 or (shape is not None and a.shape != shape) or 0 in a.shape:
        want = f"a {shape[0]} x {shape[1]} matrix" if shape else "a square matrix"
        raise InvalidParameter(name, a, want)
    if shape is None and a.shape[0] != a.shape[1]:
        raise InvalidParameter(name, a, "a square matrix")
    if not np.all(np.isfinite(a)):
        raise InvalidParameter(name, a, "a matrix of finite rates")
    return a


def _nonnegative(name: str, a: np.ndarray, off_diagonal: bool = False) -> None:
    b = a.copy()
    if off_diagonal:
        np.fill_diagonal(b, 0.0)
    if (b < 0).any():
        i, j = np.argwhere(b < 0)[0]
        raise InvalidParameter(name, a, "a matrix of rates >= 0" + (" off the diagonal"
                                                                    if off_diagonal else ""),
                               f"entry [{i}, {j}] is {b[i, j]:g}")


def _rows_sum_to_zero(name: str, row_sums: np.ndarray, scale: float) -> None:
    bad = np.abs(row_sums) > ROW_TOL * max(scale, 1e-300)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameter(name, row_sums, "rows summing to 0 (a generator)",
                               f"row {i} sums to {row_sums[i]:.6g}; the diagonal of the "
                               "within-level block carries minus the exit rates")


def _validate(B1: ArrayLike, B0: ArrayLike, B2: ArrayLike, A0: ArrayLike, A1: ArrayLike,
              A2: ArrayLike) -> tuple[np.ndarray, ...]:
    A1_ = _block("A1", A1, None)
    m = A1_.shape[0]
    A0_ = _block("A0", A0, (m, m))
    A2_ = _block("A2", A2, (m, m))
    B1_ = _block("B1", B1, None)
    m0 = B1_.shape[0]
    B0_ = _block("B0", B0, (m0, m))
    B2_ = _block("B2", B2, (m, m0))
    for name, a in (("A0", A0_), ("A2", A2_), ("B0", B0_), ("B2", B2_)):
        _nonnegative(name, a)
    _nonnegative("A1", A1_, off_diagonal=True)
    _nonnegative("B1", B1_, off_diagonal=True)
    scale = max(np.abs(a).max() for a in (A0_, A1_, A2_, B0_, B1_, B2_))
    _rows_sum_to_zero("A0 + A1 + A2", (A0_ + A1_ + A2_).sum(axis=1), scale)
    _rows_sum_to_zero("B1 + B0 (level 0)", B1_.sum(axis=1) + B0_.sum(axis=1), scale)
    _rows_sum_to_zero("B2 + A1 + A0 (level 1)", B2_.sum(axis=1) + A1_.sum(axis=1)
                      + A0_.sum(axis=1), scale)
    if not A0_.any():
        raise InvalidParameter("A0", A0_, "a non-zero up block",
                               "without up moves the levels above 1 are never reached")
    return B1_, B0_, B2_, A0_, A1_, A2_


def _drift(A0: np.ndarray, A1: np.ndarray, A2: np.ndarray) -> tuple[float, float, float]:
    """``(alpha A0 1 - alpha A2 1, alpha A0 1, alpha A2 1)``."""
    A = A0 + A1 + A2
    labels, closed = closed_classes(sps.csr_matrix(A))
    if len(closed) > 1:
        raise InvalidParameter("A0 + A1 + A2", A, "a phase generator with one closed class",
                               f"it has {len(closed)}: the stability condition then applies "
                               "class by class (Latouche & Ramaswami 1999, ch. 7); solve each "
                               "class as its own QBD")
    inside = np.flatnonzero(labels == closed[0])
    alpha = np.zeros(A.shape[0])
    alpha[inside] = gth_stationary(A[np.ix_(inside, inside)])
    up = float(alpha @ A0.sum(axis=1))
    down = float(alpha @ A2.sum(axis=1))
    return up - down, up, down


def _logarithmic_reduction(A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, tol: float
                           ) -> tuple[np.ndarray, int]:
    """``G`` by the logarithmic reduction (Latouche & Ramaswami 1993) and its iterations."""
    m = A1.shape[0]
    eye = np.eye(m)
    minus = -A1
    H = np.linalg.solve(minus, A0)    # up, then down, watched at the levels 2^k apart
    L = np.linalg.solve(minus, A2)
    G = L.copy()
    T = H.copy()
    best = math.inf
    for k in range(1, MAX_ITERATIONS + 1):
        U = H @ L + L @ H
        M = eye - U
        H = np.linalg.solve(M, H @ H)
        L = np.linalg.solve(M, L @ L)
        G = G + T @ L
        T = T @ H
        gap = float(np.abs(1.0 - G.sum(axis=1)).max())
        if not np.isfinite(gap):
            break
        if gap <= tol or (gap >= best and gap < 1e-8):
            return G, k
        best = min(best, gap)
    return G, k


def solve_qbd(B1: ArrayLike, B0: ArrayLike, B2: ArrayLike, A0: ArrayLike, A1: ArrayLike,
              A2: ArrayLike, *, tol: float = 1e-14) -> MatrixGeometricLaw:
    """The stationary law of a level-independent QBD, by logarithmic reduction.

    Parameters
    ----------
    B1, B0, B2 : array_like
        The boundary blocks: within level 0 (``m0 x m0``), level 0 -> 1 (``m0 x m``), level
        1 -> 0 (``m x m0``).
    A0, A1, A2 : array_like
        The repeating blocks (``m x m``): up ``n -> n + 1``, within level ``n``, down
        ``n -> n - 1``.  The rows of ``[B1 B0]``, ``[B2 A1 A0]`` and ``A0 + A1 + A2`` sum to 0.
    tol : float
        Stopping tolerance of the reduction on ``||1 - G 1||_inf``.

    Returns
    -------
    MatrixGeometricLaw

    Raises
    ------
    InvalidParameter
        A block of the wrong shape, a negative rate, rows not summing to zero, no up moves, or
        a phase generator ``A0 + A1 + A2`` with several closed classes.
    StabilityError
        The drift ``alpha A0 1 - alpha A2 1`` is ``>= 0``: the chain is not positive recurrent
        (the error's ``drift`` attribute holds it).
    NotConverged
        The residual exceeds :data:`ACCEPT`.
    ReducibleChain
        The chain censored on levels 0 and 1 has several closed classes.
    """
    started = time.perf_counter()
    if not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise InvalidParameter("tol", tol, "a tolerance in (0, 1)")
    B1, B0, B2, A0, A1, A2 = _validate(B1, B0, B2, A0, A1, A2)
    m, m0 = A1.shape[0], B1.shape[0]
    drift, up, down = _drift(A0, A1, A2)
    if drift >= -DRIFT_TOL * max(up, down):
        kind = "null recurrent" if abs(drift) <= DRIFT_TOL * max(up, down) else "transient"
        error = StabilityError(
            f"the QBD is not positive recurrent ({kind}): its drift alpha A0 1 - alpha A2 1 = "
            f"{drift:.6g} >= 0 (mean up rate {up:.6g}, mean down rate {down:.6g}, alpha the "
            "stationary law of A0 + A1 + A2); it needs a negative drift")
        error.drift = drift  # type: ignore[attr-defined]
        raise error
    G, iterations = _logarithmic_reduction(A0, A1, A2, tol)
    R = np.linalg.solve(-(A1 + A0 @ G).T, A0.T).T
    R = np.clip(R, 0.0, None)
    eye = np.eye(m)
    inverse = np.linalg.inv(eye - R)
    censored = np.block([[B1, B0], [B2, A1 + R @ A2]])

    def describe(i: int) -> str:
        return f"level 0, phase {i}" if i < m0 else f"level 1, phase {i - m0}"

    inside = one_closed_class(sps.csr_matrix(censored - np.diag(np.diag(censored))), describe,
                              "the QBD")
    x = np.zeros(m0 + m)
    x[inside] = gth_stationary(censored[np.ix_(inside, inside)])
    x /= x[:m0].sum() + x[m0:] @ inverse.sum(axis=1)
    pi0, pi1 = x[:m0], x[m0:]
    scale = max(np.abs(a).sum(axis=1).max() for a in (A0, A1, A2))
    rG = np.abs(A2 + A1 @ G + A0 @ G @ G).sum(axis=1).max() / scale
    rR = np.abs(A0 + R @ A1 + R @ R @ A2).sum(axis=1).max() / scale
    exits = max(float(np.max(-np.diag(B1))), float(np.max(-np.diag(A1))))
    balance = (np.abs(pi0 @ B1 + pi1 @ B2).sum() + np.abs(pi0 @ B0 + pi1 @ (A1 + R @ A2)).sum()
               ) / exits
    residual = float(max(rG, rR, balance))
    if not np.isfinite(residual) or residual > ACCEPT:
        raise NotConverged("logarithmic reduction (QBD)", residual, ACCEPT, iterations,
                           "the drift may be too close to 0 for double precision")
    eta = float(np.max(np.abs(np.linalg.eigvals(R))))
    mean_level = float(pi1 @ inverse @ inverse.sum(axis=1))
    return MatrixGeometricLaw(G=G, R=R, pi0=pi0, pi1=pi1, eta=eta, drift=drift,
                              mean_level=mean_level, iterations=iterations, residual=residual,
                              seconds=time.perf_counter() - started, _inverse=inverse)
