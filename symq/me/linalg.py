r"""Dense linear algebra in exact rationals or mpmath, for the Padé and moment computations.

LU factorisation with partial pivoting, solves, inverses and determinants on lists of lists of
:class:`fractions.Fraction` (exact) or mpmath numbers (at the calling thread's working
precision); :func:`solve_equilibrated` equilibrates a floating system first and reports the
relative rank measure :math:`1/\operatorname{cond}_F` that :mod:`symq.me.moments` and
:mod:`symq.me.pade` use as a scale-invariant singularity test; :func:`is_positive_semidefinite`
tests positive semidefiniteness by a pivoted :math:`LDL^T`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mpmath

from ._context import mp

__all__: list[str] = []


def _lu(matrix: list[list[Any]]) -> tuple[list[list[Any]], list[int]] | None:
    """LU with partial pivoting (Fractions or mpf); None if a pivot column is exactly zero."""
    size = len(matrix)
    M = [list(row) for row in matrix]
    perm = list(range(size))
    for k in range(size):
        p = max(range(k, size), key=lambda i: abs(M[i][k]))
        if M[p][k] == 0:
            return None
        if p != k:
            M[k], M[p] = M[p], M[k]
            perm[k], perm[p] = perm[p], perm[k]
        rowk = M[k]
        pivot = rowk[k]
        for i in range(k + 1, size):
            rowi = M[i]
            if rowi[k] == 0:
                continue
            f = rowi[k] / pivot
            rowi[k] = f
            for j in range(k + 1, size):
                rowi[j] -= f * rowk[j]
    return M, perm


def _lu_solve(lu: tuple[list[list[Any]], list[int]], b: Sequence[Any]) -> list[Any]:
    M, perm = lu
    size = len(M)
    y = [b[p] for p in perm]
    for i in range(size):
        row = M[i]
        acc = y[i]
        for j in range(i):
            if row[j]:
                acc -= row[j] * y[j]
        y[i] = acc
    for i in range(size - 1, -1, -1):
        row = M[i]
        acc = y[i]
        for j in range(i + 1, size):
            if row[j]:
                acc -= row[j] * y[j]
        y[i] = acc / row[i]
    return y


def _inverse(lu: tuple[list[list[Any]], list[int]], zero: Any, one: Any) -> list[list[Any]]:
    size = len(lu[0])
    columns = [_lu_solve(lu, [one if i == j else zero for i in range(size)]) for j in range(size)]
    return [[columns[j][i] for j in range(size)] for i in range(size)]


def _frobenius(matrix: list[list[Any]]) -> mpmath.mpf:
    return mp.sqrt(mp.fsum(x * x for row in matrix for x in row))


def determinant(matrix: list[list[Any]]) -> Any:
    """The determinant by LU with partial pivoting (exact for Fractions; 0 when a pivot column
    is exactly zero)."""
    lu = _lu(matrix)
    if lu is None:
        return 0
    M, perm = lu
    det = 1
    for i in range(len(M)):
        det *= M[i][i]
    # sign of the permutation
    seen, sign = [False] * len(perm), 1
    for i in range(len(perm)):
        if not seen[i]:
            j, length = i, 0
            while not seen[j]:
                seen[j], j, length = True, perm[j], length + 1
            sign *= -1 if length % 2 == 0 else 1
    return sign * det


# ====================================================================== equilibrated solves
@dataclass
class SolvedSystem:
    """A solved system, or the reason it is singular."""

    x: list[Any] | None
    rho: float | None            # 1/cond_F of the equilibrated matrix (None: exact mode)
    condition: float | None      # Frobenius condition of the matrix solved (None: exact mode)


def _scalings(matrix: list[list[Any]], hankel: bool) -> tuple[list[Any], list[Any]]:
    r"""Row and column scalings ``R``, ``C`` that equilibrate the system.

    Hankel: Jacobi scaling :math:`R = C = \Delta^{-1/2}`, Δ = diag H, so that ``R H C`` has unit
    diagonal; it is invariant under time scaling (``H -> T H T``, ``T = diag(c^i)``) and a relative
    perturbation ε of the moments moves it by at most ``n ε``.  Two-point system: rows, then
    columns, scaled to unit max-norm.
    """
    size = len(matrix)
    if hankel:
        root = [1 / mp.sqrt(abs(matrix[i][i])) for i in range(size)]
        return root, root
    rows = [1 / max(abs(x) for x in row) for row in matrix]
    cols = [1 / max(abs(matrix[i][j]) * rows[i] for i in range(size)) for j in range(size)]
    return rows, cols


def solve_equilibrated(matrix: list[list[Any]], rhs: list[Any], exact: bool, hankel: bool,
           stats: bool = True) -> SolvedSystem:
    r"""Solve ``A x = y``: exactly, or in mpmath after equilibration (``(R A C)(C^-1 x) = R y``).

    Floating mode also returns ``rho = 1/cond_F(R A C)`` (the relative rank measure:
    :math:`\sigma_{min}/\sigma_{max}/N \le \rho \le \sigma_{min}/\sigma_{max}`) and the
    Frobenius condition number of ``A`` itself.
    """
    if exact:
        lu = _lu(matrix)
        if lu is None:
            return SolvedSystem(None, None, None)
        return SolvedSystem(_lu_solve(lu, rhs), None, None)
    size = len(matrix)
    if any(all(x == 0 for x in row) for row in matrix) or \
            any(all(row[j] == 0 for row in matrix) for j in range(size)):
        return SolvedSystem(None, 0.0, math.inf)          # a zero row or column: singular
    R, C = _scalings(matrix, hankel)
    scaled = [[matrix[i][j] * R[i] * C[j] for j in range(size)] for i in range(size)]
    lu = _lu(scaled)
    if lu is None:
        return SolvedSystem(None, 0.0, math.inf)
    y = _lu_solve(lu, [rhs[i] * R[i] for i in range(size)])
    x = [y[j] * C[j] for j in range(size)]
    if not stats:
        return SolvedSystem(x, None, None)
    scaled_inv = _inverse(lu, mp.mpf(0), mp.mpf(1))
    inverse = [[scaled_inv[i][j] * C[i] * R[j] for j in range(size)] for i in range(size)]
    rho = float(1 / (_frobenius(scaled) * _frobenius(scaled_inv)))
    condition = float(_frobenius(matrix) * _frobenius(inverse))
    return SolvedSystem(x, rho, condition)


# ====================================================================== semidefiniteness
def is_positive_semidefinite(matrix: list[list[Any]], tol: float | None) -> bool:
    """Positive semidefinite? Exact (tol None) or within a relative tolerance (Jacobi-scaled)."""
    size = len(matrix)
    if tol is None:
        S = [list(row) for row in matrix]
    else:
        root = [mp.sqrt(matrix[i][i]) if matrix[i][i] > 0 else mp.mpf(1) for i in range(size)]
        S = [[matrix[i][j] / (root[i] * root[j]) for j in range(size)] for i in range(size)]
    slack = 0 if tol is None else tol
    left = list(range(size))
    while left:
        p = max(left, key=lambda i: S[i][i])
        d = S[p][p]
        if d < -slack:
            return False
        if d <= slack:         # the remaining block must vanish (within the tolerance)
            for i in left:
                for j in left:
                    if i != j and (S[i][i] + S[j][j]) / 2 - abs(S[i][j]) < -slack:
                        return False
            return True
        left.remove(p)
        for i in left:
            f = S[i][p] / d
            for j in left:
                S[i][j] -= f * S[p][j]
    return True
