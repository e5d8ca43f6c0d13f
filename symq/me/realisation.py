r"""Exact :math:`(\alpha, A)` realisations of an ME law and the transform of a realisation.

An order-n ME law has representations :math:`(\alpha, A)` with
:math:`f(t) = \alpha e^{At}(-A)\mathbf 1` and
:math:`f^*(s) = \alpha (sI - A)^{-1}(-A)\mathbf 1 = N(s)/D(s)` (derivations/me-pade.md, step 1).
Both directions are computed in exact rational arithmetic:

* :func:`transform_of_matrix`: :math:`D(s) = \det(sI - A)` and
  :math:`N(s) = \alpha\,\mathrm{adj}(sI - A)(-A)\mathbf 1`, the adjugate from the
  Faddeev-LeVerrier recursion;
* :func:`matrix_of_transform`: a companion realisation, transformed so that
  :math:`\alpha \mathbf 1 = 1`.

Representations are not unique: compare transforms, moments or densities, never matrices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.precision import is_mpf

from .transform import RationalLST, s, to_rational

__all__ = ["transform_of_matrix", "matrix_of_transform", "is_float_like", "MASS_TOL"]

#: Mass tolerance for float input of probability vectors.
MASS_TOL = 1e-12


def is_float_like(x: Any) -> bool:
    """Is ``x`` a binary floating-point number (python, numpy, sympy or mpmath)?"""
    return isinstance(x, (float, np.floating, sp.Float)) or is_mpf(x)


def transform_of_matrix(alpha: Any, A: Any) -> RationalLST:
    r"""The exact transform of a representation :math:`(\alpha, A)`, cancelled to minimal form.

    :math:`D(s) = \det(sI - A) = \sum_k a_k s^k` and, with the Faddeev-LeVerrier recursion
    :math:`M_{n-1} = I`, :math:`M_{k-1} = A M_k + a_k I` for the adjugate
    :math:`\mathrm{adj}(sI - A) = \sum_k M_k s^k`, the numerator coefficients
    :math:`b_k = \alpha M_k (-A)\mathbf 1`.  The fraction is then cancelled, so the order may be
    lower than the size of ``A``.  See :meth:`symq.me.ME.from_matrix` for the parameters.
    """
    alpha_entries = list(alpha) if isinstance(alpha, sp.MatrixBase) else None
    if alpha_entries is None:
        arr = np.asarray(alpha, dtype=object)
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1 or arr.size == 0:
            raise InvalidParameter("alpha", alpha,
                                   "a non-empty row vector of shape (n,) or (1, n)")
        alpha_entries = list(arr)
    elif not (alpha.rows == 1 or alpha.cols == 1):
        raise InvalidParameter("alpha", alpha, "a row vector of shape (1, n)")
    n = len(alpha_entries)
    if isinstance(A, sp.MatrixBase):
        shape, A_entries = A.shape, [[A[i, j] for j in range(A.cols)] for i in range(A.rows)]
    else:
        A_arr = np.asarray(A, dtype=object)
        if A_arr.ndim != 2:
            raise InvalidParameter("A", A, f"a square matrix of shape ({n}, {n})")
        shape, A_entries = A_arr.shape, [list(row) for row in A_arr]
    if tuple(shape) != (n, n):
        raise InvalidParameter("A", A, f"a square matrix of shape ({n}, {n}) matching alpha",
                               f"got shape {tuple(shape)}")
    floats = any(is_float_like(x) for x in alpha_entries) or any(
        is_float_like(x) for row in A_entries for x in row)
    a_vec = [to_rational(x, "alpha") for x in alpha_entries]
    A_q = [[to_rational(x, "A") for x in row] for row in A_entries]
    total = sum(a_vec, sp.Integer(0))
    if total != 1:
        scale = max(sum((abs(x) for x in a_vec), sp.Integer(0)), sp.Integer(1))
        if floats and abs(total - 1) <= MASS_TOL * scale:
            a_vec = [x / total for x in a_vec]
        else:
            raise InvalidParameter(
                "alpha", alpha, "a row vector whose entries sum to 1",
                f"sum(alpha) = {total}: an atom at zero of mass 1 - sum(alpha) = {1 - total} "
                "is not supported by ME (no atom)")
    M = sp.Matrix(A_q)
    charpoly = M.charpoly(s)
    a = [sp.Rational(charpoly.nth(k)) for k in range(n + 1)]  # ascending, a[n] = 1
    if a[0] == 0:
        raise InvalidParameter("A", A, "an invertible matrix", "det A = 0")
    w = [-sum(A_q[i], sp.Integer(0)) for i in range(n)]  # (-A) 1
    row = list(a_vec)  # r_{n-1} = alpha M_{n-1} = alpha
    b = [sp.Integer(0)] * n
    b[n - 1] = sum((row[i] * w[i] for i in range(n)), sp.Integer(0))
    for k in range(n - 1, 0, -1):
        # r_{k-1} = r_k A + a_k alpha
        row = [sum((row[i] * A_q[i][j] for i in range(n)), sp.Integer(0)) + a[k] * a_vec[j]
               for j in range(n)]
        b[k - 1] = sum((row[i] * w[i] for i in range(n)), sp.Integer(0))
    return RationalLST.from_coefficients(b, a)


def matrix_of_transform(lst: RationalLST) -> tuple[sp.Matrix, sp.Matrix]:
    r"""An exact representation :math:`(\alpha, A)` of the transform ``lst``.

    The controllable companion form :math:`A_c` (ones on the superdiagonal, last row
    :math:`(-a_0, \dots, -a_{n-1})`) with :math:`\beta = (b_0, \dots, b_{n-1})` realises
    :math:`\beta (sI - A_c)^{-1} e_n = N(s)/D(s)`.  To reach the form
    :math:`\alpha e^{At}(-A)\mathbf 1`: :math:`v = (-A_c)^{-1} e_n = e_1/a_0`,
    :math:`T = I + (v - \mathbf 1) e_1^T` (so :math:`T\mathbf 1 = v`), :math:`A = T^{-1} A_c T`
    and :math:`\alpha = \beta T`, hence :math:`\alpha\mathbf 1 = 1`.

    Returns
    -------
    (sympy.Matrix, sympy.Matrix)
        ``alpha`` of shape (1, n) and ``A`` of shape (n, n), exact rationals.
    """
    n = lst.order
    a = lst.denominator
    beta = sp.Matrix([[lst.numerator[k] if k < len(lst.numerator) else 0
                       for k in range(n)]])
    Ac = sp.zeros(n, n)
    for i in range(n - 1):
        Ac[i, i + 1] = 1
    for k in range(n):
        Ac[n - 1, k] = -a[k]
    v = sp.zeros(n, 1)
    v[0] = 1 / a[0]
    e1 = sp.zeros(1, n)
    e1[0] = 1
    T = sp.eye(n) + (v - sp.ones(n, 1)) * e1
    A = T.inv() * Ac * T
    alpha = beta * T
    return alpha, A
