r"""Moment matching of ME distributions by Padé approximation, with behaviour around zero.

An order-``n`` ME distribution without an atom has the Laplace-Stieltjes transform (LST)

.. math::

    f^*(s) = \frac{N(s)}{D(s)} = \frac{b_0 + \dots + b_{n-1}s^{n-1}}{a_0 + \dots + a_{n-1}s^{n-1} + s^n},
    \qquad b_0 = a_0,

with ``2n - 1`` free parameters (note me_pade.md §1.2).  This module determines them from data:

* **classical Padé** (Angius, Horváth et al. 2014; note §1.3): the ``2n - 1`` moments
  :math:`m_1..m_{2n-1}` fix the ``[n-1/n]`` Padé approximant of the moment series
  :math:`\sum_k r_k u^k`, ``u = -s``, :math:`r_k = m_k/k!`.  The denominator solves the Hankel system
  :math:`H_n (Q_n, \dots, Q_1)^T = -(r_n, \dots, r_{2n-1})^T`, :math:`H_n = [r_{i+j}]_{i,j<n}`
  (:func:`hankel_system`); the numerator is :math:`P_k = \sum_{j \le k} Q_j r_{k-j}`.
* **two-point Padé** (the paper's extension; note §1.4): ``J`` values
  :math:`d_j = f^{(j)}(0)` of the density at zero, i.e. coefficients of the expansion at
  :math:`s = \infty`, replace ``J`` moments, ``K + J = 2n - 1``.  Moment and zero equations form one
  square linear system in :math:`(a_0..a_{n-1}, b_0..b_{n-1})` (:func:`two_point_system`).

Arithmetic is exact (python :class:`fractions.Fraction`) when every input is exact, and mpmath at
``dps`` digits otherwise, in time normalised to :math:`m_1 = 1` (note §4).  Floating-point results
are rounded to rationals, so the returned :class:`~symq.me.transform.RationalLST` is always an exactly
known function (the one a certificate refers to, note §3.2); its moments equal the inputs to about
``dps`` digits (:attr:`PadeResult.residual` reports the achieved relative error).

Degenerate data are detected, never returned as garbage: the moment order (largest nonsingular
Hankel matrix, exact rank for exact data, a relative scale-invariant rank test for floats,
:func:`moment_order`) decides whether an order is determined by the data, and moment sequences
that no distribution on :math:`[0, \infty)` has are rejected by the Stieltjes conditions
(:func:`stieltjes_check`).

Examples
--------
>>> from symq.me.pade import pade_fit
>>> fit = pade_fit([1, 2, 6])                # exponential moments: moment order 1 is detected
>>> fit.lst.expr, fit.order, fit.reduced_from
(1/(s + 1), 1, 2)
>>> pade_fit([1, "3/2", 3]).lst.expr         # Erlang-2 with rate 2: the double pole is recovered
4/(s**2 + 4*s + 4)
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import mpmath
import sympy as sp

from symq.core.errors import InvalidMoments, InvalidParameter
from symq.me._context import is_mpf, mp, working_dps
from symq.me.transform import RationalLST, to_mpf, to_rational

__all__ = [
    "PadeResult",
    "pade_fit",
    "moment_order",
    "hankel_system",
    "two_point_system",
    "stieltjes_check",
]

#: Safety factor of the default relative rank / semidefiniteness tolerance (see :func:`moment_order`).
_TOL_FACTOR = 1000


# ====================================================================== results
@dataclass
class PadeResult:
    """The outcome of :func:`pade_fit`.

    Attributes
    ----------
    lst : RationalLST
        The fitted transform :math:`N(s)/D(s)`, exact rationals, common factors cancelled.
    order : int
        Its effective order ``deg D`` (after exact cancellation of common factors).
    moments_used : int
        ``K``: the fit matches :math:`m_1..m_K`.
    zero_used : int
        ``J``: the fit matches :math:`f(0), \\dots, f^{(J-1)}(0)`.
    exact : bool
        True if the linear system was solved in exact rational arithmetic.
    dps : int or None
        Working digits of the mpmath solve (None in exact mode).
    hankel_condition : float or None
        Frobenius condition number :math:`\\|A\\|_F \\|A^{-1}\\|_F` of the linear system solved (the
        Hankel matrix for ``J = 0``, the two-point matrix otherwise) in time normalised to
        :math:`m_1 = 1`; None in exact mode.
    notes : list of str
        What was done beyond the plain solve (order reduction, cancellation, normalisation).
    seconds : float
        Wall-clock time of the fit.
    reduced_from : int or None
        The order implied by the number of data when a lower moment order was detected and used
        (``order=None`` only), else None.
    residual : float
        Largest relative error of the fitted moments :math:`m_1..m_K` and values at zero (relative to
        the time scale) against the inputs, computed exactly from :attr:`lst`; 0 in exact mode.
    """

    lst: RationalLST
    order: int
    moments_used: int
    zero_used: int
    exact: bool
    dps: int | None
    hankel_condition: float | None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    reduced_from: int | None = None
    residual: float = 0.0


# ====================================================================== input handling
@dataclass
class _Data:
    """Parsed numeric input: exact values and the relative precision they carry."""

    values: list[Fraction]
    eps: float            # 0 for exact and mpf inputs (mpf: accurate to dps digits); 2**-53 doubles
    exact: bool           # every value is exact (int, Fraction, Rational, decimal string)


def _rational(value: Any, name: str) -> Fraction:
    """Exact rational value of a number (binary floats exactly), as a Fraction."""
    q = to_rational(value, name)
    return Fraction(int(q.p), int(q.q))


def _label(kind: str, i: int) -> str:
    return f"moments[{i}] (m{i + 1})" if kind == "moments" else f"zero[{i}] (f^({i})(0))"


def _parse(values: Any, kind: str, dps: int) -> _Data:
    """Convert inputs to exact Fractions; classify exactness; check finite (and positive for moments)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InvalidParameter(kind, values, "a sequence of numbers")
    domain = "a finite positive number" if kind == "moments" else "a finite real number"
    out: list[Fraction] = []
    eps = 0.0
    exact = True
    for i, v in enumerate(values):
        name = _label(kind, i)
        if isinstance(v, bool):
            raise InvalidParameter(name, v, domain)
        if isinstance(v, (numbers.Integral, Fraction, sp.Rational, str)):
            pass
        elif isinstance(v, float):                       # python float, numpy float64
            exact, eps = False, max(eps, 2.0**-53)
        elif isinstance(v, sp.Float):
            exact, eps = False, max(eps, 2.0 ** -v._prec)
        elif is_mpf(v):
            exact = False
        elif isinstance(v, sp.Basic) and v.is_number and v.is_real:   # sqrt(2), pi, ...
            exact = False
            v = sp.N(v, dps + 10)
        elif isinstance(v, numbers.Real):                 # numpy float32, longdouble, ...
            exact = False
            try:
                import numpy as np
                eps = max(eps, float(np.finfo(type(v)).eps) / 2)
            except (TypeError, ValueError):  # pragma: no cover - exotic real types
                eps = max(eps, 2.0**-53)
        try:
            q = _rational(v, name)
        except InvalidParameter:
            raise InvalidParameter(name, v, domain) from None
        if kind == "moments" and q <= 0:
            raise InvalidParameter(name, v, domain,
                                   "moments of a distribution on [0, inf) without an atom at 0 "
                                   "are positive")
        out.append(q)
    return _Data(out, eps, exact)


def _check_zero_signs(zero: _Data, raw: Sequence[Any]) -> None:
    """A density is >= 0 near 0+, so its first nonzero derivative at 0 must be positive."""
    for j, d in enumerate(zero.values):
        if d != 0:
            if d < 0:
                raise InvalidParameter(
                    _label("zero", j), raw[j], "> 0 when the lower derivatives at 0 vanish",
                    "a density is nonnegative near t = 0+, so its first nonzero derivative at 0 "
                    "is positive")
            return


#: Bounds on the work of one fit, checked before it starts (exact Hankel elimination is
#: O(n^3) operations on rationals whose size grows with n; mpmath at d digits costs ~d^1.6).
MAX_DPS = 2000
MAX_ORDER = 200


def _check_dps(dps: Any) -> int:
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or not 10 <= dps <= MAX_DPS:
        raise InvalidParameter("dps", dps, f"an integer in 10..{MAX_DPS} (working decimal digits)")
    return int(dps)


def _default_tol(size: int, data_eps: float, dps: int) -> float:
    """Relative rank / semidefiniteness tolerance: safety factor x size x input precision."""
    return _TOL_FACTOR * size * max(data_eps, 10.0 ** (-dps))


def _fmt(x: Any) -> str:
    """Short text of a number for messages (huge exact values in scientific notation)."""
    if isinstance(x, Fraction):
        if abs(x.numerator) < 10**12 and x.denominator < 10**6:
            return str(x)
        with working_dps(15):   # no int->str conversion of huge integers, no float overflow
            return mp.nstr(mp.mpf(x.numerator) / x.denominator, 6)
    if is_mpf(x):
        return mp.nstr(x, 6)
    return f"{x:.3g}" if isinstance(x, float) else str(x)


# ====================================================================== the linear systems
def _c(r: Sequence[Any], k: int) -> Any:
    """Coefficient of s^k of the LST at 0: c_k = (-1)^k r_k."""
    return r[k] if k % 2 == 0 else -r[k]


def _hankel_entries(r: Sequence[Any], n: int) -> tuple[list[list[Any]], list[Any]]:
    """H_n = [r_{i+j}]_{i,j<n} and rhs -(r_n..r_{2n-1}) (note §1.3); unknowns (Q_n, ..., Q_1)."""
    matrix = [[r[i + j] for j in range(n)] for i in range(n)]
    rhs = [-r[n + i] for i in range(n)]
    return matrix, rhs


def _two_point_entries(r: Sequence[Any], d: Sequence[Any], n: int
                       ) -> tuple[list[list[Any]], list[Any]]:
    """The s-form system of note §1.3-1.4 in unknowns (a_0..a_{n-1}, b_0..b_{n-1}).

    Rows ``k = 0..K`` (``K = 2n-1-J``): :math:`b_k - \\sum_{i \\le \\min(k, n-1)} a_i c_{k-i} = c_{k-n}`
    (``b_k = 0`` for ``k >= n``, right side 0 for ``k < n``); rows ``j = 0..J-1``:
    :math:`b_{n-1-j} - \\sum_{i=1}^{\\min(j, n)} a_{n-i} d_{j-i} = d_j` (``b_m = 0`` for ``m < 0``).
    """
    J = len(d)
    K = 2 * n - 1 - J
    size = 2 * n
    matrix: list[list[Any]] = []
    rhs: list[Any] = []
    for k in range(K + 1):
        row: list[Any] = [0] * size
        if k < n:
            row[n + k] = 1
        for i in range(min(k, n - 1) + 1):
            row[i] = -_c(r, k - i)
        matrix.append(row)
        rhs.append(_c(r, k - n) if k >= n else 0)
    for j in range(J):
        row = [0] * size
        if n - 1 - j >= 0:
            row[n + n - 1 - j] = 1
        for i in range(1, min(j, n) + 1):
            row[n - i] = -d[j - i]
        matrix.append(row)
        rhs.append(d[j])
    return matrix, rhs


def _to_mp(value: Any) -> Any:
    """An exact rational in the calling thread's private context, at its current precision."""
    return to_mpf(value, mp)


def _check_order_arg(n: Any, name: str = "n") -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise InvalidParameter(name, n, "an integer >= 1")
    return int(n)


def _as_sympy(value: Any, name: str) -> sp.Expr:
    """A value of the symbolic systems as a sympy object, never by parsing text.

    sympy objects (numbers, symbols, expressions) are kept; python/numpy/mpmath numbers are
    converted; strings must be numbers (decimal or ``p/q``, parsed by :class:`fractions.Fraction`)
    and anything else is refused, so that user text never reaches ``sympify``.
    """
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, str):
        try:
            return sp.Rational(Fraction(value.strip()))
        except (ValueError, ZeroDivisionError):
            raise InvalidParameter(name, value, "a number such as 0.5 or 2/3, or a sympy "
                                   "expression") from None
    if isinstance(value, bool) or not isinstance(value, (numbers.Number, Fraction)) \
            and not is_mpf(value):
        raise InvalidParameter(name, repr(value)[:80], "a number or a sympy expression")
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if is_mpf(value):
        return sp.Float(value._mpf_, precision=value.context.prec)
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        raise InvalidParameter(name, value, "a real number or a sympy expression")
    return sp.Float(float(value))


def _sympify_reduced(reduced_moments: Sequence[Any], needed: int, n: int) -> list[sp.Expr]:
    if isinstance(reduced_moments, (str, bytes)) or not hasattr(reduced_moments, "__iter__"):
        raise InvalidParameter("reduced_moments", str(reduced_moments)[:80], "a sequence of numbers")
    r = [_as_sympy(x, f"reduced_moments[{i}]") for i, x in enumerate(reduced_moments)]
    if len(r) < needed:
        raise InvalidParameter("reduced_moments", f"{len(r)} values", f"at least {needed} values "
                               f"r_0 = 1, r_1, ..., r_{needed - 1} for order n = {n}")
    if (r[0] - 1).is_zero is False:
        raise InvalidParameter("reduced_moments[0]", r[0], "r_0 = 1",
                               "pass r_0 = 1, r_1 = m_1, r_2 = m_2/2, ... as returned by "
                               "RationalLST.reduced_moments")
    return r


def hankel_system(reduced_moments: Sequence[Any], n: int) -> tuple[sp.Matrix, sp.Matrix]:
    r"""The Hankel system of classical Padé moment matching of order ``n`` (note §1.3).

    :math:`H_n x = y` with :math:`H_n = [r_{i+j}]_{i,j=0..n-1}`, :math:`y = -(r_n, \dots, r_{2n-1})^T`
    and unknowns :math:`x = (Q_n, Q_{n-1}, \dots, Q_1)^T`, the denominator of the ``[n-1/n]`` Padé
    approximant :math:`P(u)/Q(u)`, :math:`Q(0) = 1`, of :math:`\sum_k r_k u^k`, ``u = -s``
    (Angius, Horváth et al. 2014).  :func:`pade_fit` solves exactly this system (in floating mode
    built from the moments normalised to :math:`m_1 = 1` and equilibrated before elimination).

    Parameters
    ----------
    reduced_moments : sequence
        :math:`r_0 = 1, r_1, \dots` with :math:`r_k = m_k/k!` (numbers or sympy expressions, e.g.
        symbols); at least ``2n`` values, :math:`r_0 .. r_{2n-1}` are used.
    n : int
        The order.

    Returns
    -------
    (sympy.Matrix, sympy.Matrix)
        The ``n x n`` matrix and the ``n x 1`` right-hand side.

    Examples
    --------
    >>> H, y = hankel_system([1, 1, 1, 1], 2)
    >>> H, y
    (Matrix([
    [1, 1],
    [1, 1]]), Matrix([
    [-1],
    [-1]]))
    """
    n = _check_order_arg(n)
    r = _sympify_reduced(reduced_moments, 2 * n, n)
    matrix, rhs = _hankel_entries(r, n)
    return sp.Matrix(matrix), sp.Matrix(rhs)


def two_point_system(reduced_moments: Sequence[Any], zero: Sequence[Any], n: int
                     ) -> tuple[sp.Matrix, sp.Matrix]:
    r"""The linear system of two-point Padé matching (moments and behaviour at zero, note §1.4).

    With ``J = len(zero)`` prescribed values :math:`d_j = f^{(j)}(0)` and ``K = 2n - 1 - J`` moments,
    the unknowns are :math:`x = (a_0, \dots, a_{n-1}, b_0, \dots, b_{n-1})^T` (``a_n = 1``) and the
    ``2n`` equations are, with :math:`c_k = (-1)^k r_k`,

    * ``k = 0..K`` (expansion at :math:`s = 0`):
      :math:`b_k - \sum_{i=0}^{\min(k,n)} a_i c_{k-i} = 0` (``b_k = 0`` for ``k >= n``);
    * ``j = 0..J-1`` (expansion at :math:`s = \infty`, i.e. the behaviour around zero):
      :math:`b_{n-1-j} - \sum_{i=0}^{j} a_{n-i} d_{j-i} = 0` (``b_m = 0`` for ``m < 0``),

    with the known ``a_n`` terms moved to the right-hand side.  For ``J = 0`` it is the s-form of
    :func:`hankel_system` (same solution); :func:`pade_fit` solves exactly this system when
    ``J > 0`` (in floating mode in normalised time, :math:`d_j \to d_j m_1^{j+1}`, equilibrated).

    Parameters
    ----------
    reduced_moments : sequence
        :math:`r_0 = 1, r_1, \dots` (numbers or sympy expressions); :math:`r_0..r_K` are used.
    zero : sequence
        :math:`d_0 = f(0), d_1 = f'(0), \dots, d_{J-1}`; ``J <= 2n - 1``.
    n : int
        The order.

    Returns
    -------
    (sympy.Matrix, sympy.Matrix)
        The ``2n x 2n`` matrix and the ``2n x 1`` right-hand side.
    """
    n = _check_order_arg(n)
    if isinstance(zero, (str, bytes)) or not hasattr(zero, "__iter__"):
        raise InvalidParameter("zero", str(zero)[:80], "a sequence of numbers")
    d = [_as_sympy(x, f"zero[{j}]") for j, x in enumerate(zero)]
    J = len(d)
    if J > 2 * n - 1:
        raise InvalidParameter("zero", f"{J} values", f"at most 2n - 1 = {2 * n - 1} values for "
                               f"order n = {n}", "an order-n ME has 2n - 1 free parameters")
    r = _sympify_reduced(reduced_moments, 2 * n - J, n)
    matrix, rhs = _two_point_entries(r, d, n)
    return sp.Matrix(matrix), sp.Matrix(rhs)


# ====================================================================== dense linear algebra
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


def _determinant(matrix: list[list[Any]]) -> Any:
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


# ====================================================================== rank / singularity
@dataclass
class _Solve:
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


def _solve(matrix: list[list[Any]], rhs: list[Any], exact: bool, hankel: bool,
           stats: bool = True) -> _Solve:
    r"""Solve ``A x = y``: exactly, or in mpmath after equilibration (``(R A C)(C^-1 x) = R y``).

    Floating mode also returns ``rho = 1/cond_F(R A C)`` (the relative rank measure:
    :math:`\sigma_{min}/\sigma_{max}/N \le \rho \le \sigma_{min}/\sigma_{max}`) and the
    Frobenius condition number of ``A`` itself.
    """
    if exact:
        lu = _lu(matrix)
        if lu is None:
            return _Solve(None, None, None)
        return _Solve(_lu_solve(lu, rhs), None, None)
    size = len(matrix)
    if any(all(x == 0 for x in row) for row in matrix) or \
            any(all(row[j] == 0 for row in matrix) for j in range(size)):
        return _Solve(None, 0.0, math.inf)          # a zero row or column: singular
    R, C = _scalings(matrix, hankel)
    scaled = [[matrix[i][j] * R[i] * C[j] for j in range(size)] for i in range(size)]
    lu = _lu(scaled)
    if lu is None:
        return _Solve(None, 0.0, math.inf)
    y = _lu_solve(lu, [rhs[i] * R[i] for i in range(size)])
    x = [y[j] * C[j] for j in range(size)]
    if not stats:
        return _Solve(x, None, None)
    scaled_inv = _inverse(lu, mp.mpf(0), mp.mpf(1))
    inverse = [[scaled_inv[i][j] * C[i] * R[j] for j in range(size)] for i in range(size)]
    rho = float(1 / (_frobenius(scaled) * _frobenius(scaled_inv)))
    condition = float(_frobenius(matrix) * _frobenius(inverse))
    return _Solve(x, rho, condition)


def _hankel_nonsingular(r: Sequence[Any], p: int, exact: bool, tol: float) -> tuple[bool, float | None]:
    matrix, _ = _hankel_entries(list(r) + [0] * (2 * p - len(r)), p)
    if exact:
        return _determinant(matrix) != 0, None
    sol = _solve(matrix, [mp.mpf(0)] * p, False, hankel=True)
    return sol.rho >= tol, sol.rho


# ====================================================================== Stieltjes conditions
def _psd(matrix: list[list[Any]], tol: float | None) -> bool:
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


def _stieltjes(m: Sequence[Any], exact: bool, tol: float | None, dps: int, eps: float) -> None:
    """Raise InvalidMoments if [m_{i+j}] or [m_{i+j+1}] (m_0 = 1) is not positive semidefinite."""
    k = len(m) - 1
    for shift, largest in ((0, k // 2 + 1), (1, (k + 1) // 2)):
        full = [[m[i + j + shift] for j in range(largest)] for i in range(largest)]
        t = None if exact else (tol if tol is not None else _default_tol(largest, eps, dps))
        if largest < 2 or _psd(full, t):
            continue
        for size in range(2, largest + 1):
            sub = [row[:size] for row in full[:size]]
            if not _psd(sub, t):
                break
        det = _determinant([row[:size] for row in full[:size]])
        if shift == 0 and size == 2:
            what = f"m2 - m1^2 = {_fmt(det)} < 0 (a negative variance)"
        elif shift == 1 and size == 2:
            what = f"m1*m3 - m2^2 = {_fmt(det)} < 0"
        else:
            top = 2 * size - 2 + shift
            entries = "m_(i+j)" if shift == 0 else "m_(i+j+1)"
            what = (f"the Hankel matrix [{entries}]_(i,j=0..{size - 1}) (m0 = 1, uses m{shift}..m{top})"
                    f" is not positive semidefinite (determinant {_fmt(det)})")
        raise InvalidMoments(
            f"no distribution on [0, inf) has these moments: Stieltjes condition fails: {what}"
            + ("" if exact else f" (relative tolerance {t:.2g})"))


def stieltjes_check(moments: Sequence[Any], *, tol: float | None = None, dps: int = 50,
                    exact: bool | None = None) -> None:
    r"""Check that some distribution on :math:`[0, \infty)` could have the moments :math:`m_1..m_k`.

    The Stieltjes conditions: with :math:`m_0 = 1`, the Hankel matrices :math:`[m_{i+j}]` and
    :math:`[m_{i+j+1}]` (as large as the moments allow) are positive semidefinite.  For exact input
    the test is exact (pivoted :math:`LDL^T` in rationals); for floats it is applied to the
    Jacobi-scaled matrices (unit diagonal) with a relative tolerance ``tol`` (default ``1000 * size``
    times the input precision, i.e. ``2**-53`` for python floats, :math:`10^{-dps}` for mpf).

    Raises
    ------
    InvalidParameter
        A moment that is not a finite positive number (the message names its index).
    InvalidMoments
        A failing Stieltjes condition; the message names it (e.g. ``m2 - m1^2 < 0``).

    Examples
    --------
    >>> stieltjes_check([1, 2, 6])
    >>> stieltjes_check([1, "0.5"])
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidMoments: no distribution on [0, inf) has these moments: Stieltjes condition fails: m2 - m1^2 = -1/2 < 0 (a negative variance)
    """
    dps = _check_dps(dps)
    data = _parse(moments, "moments", dps)
    is_exact = data.exact if exact is None else bool(exact)
    with working_dps(dps):
        m: list[Any] = [Fraction(1)] + data.values
        if not is_exact:
            m = [_to_mp(x) for x in m]
        _stieltjes(m, is_exact, tol, dps, data.eps)


# ====================================================================== moment order
def moment_order(moments: Sequence[Any], *, tol: float | None = None, dps: int = 50,
                 exact: bool | None = None) -> int:
    r"""The moment order: the largest ``p <= (k+1)/2`` whose Hankel matrix :math:`H_p` is nonsingular.

    :math:`H_p = [r_{i+j}]_{i,j<p}`, :math:`r_k = m_k / k!` (note §1.3; Bodrog, Horváth, Telek 2008).
    For the moments of an order-``p`` ME :math:`H_p` is nonsingular and every larger one singular
    (Kronecker), so ``p`` is the order of the ME the moments determine; ``p`` is also the largest
    order for which :func:`pade_fit` has a unique classical solution from these moments.

    Exact input (ints, fractions, rationals, decimal strings): exact rank.  Floating input: the
    relative, time-scale-invariant test ``rho_p >= tol`` where ``rho_p = 1/cond_F(S_p)`` and
    :math:`S_p` is the Jacobi-scaled :math:`H_p` (unit diagonal) of the moments normalised to
    :math:`m_1 = 1`.  Unlike an absolute determinant test (BuTools ``MEOrderFromMoments``,
    ``|det| < 1e-12``, note §4), the answer does not change when time is scaled.

    Parameters
    ----------
    moments : sequence
        :math:`m_1, \dots, m_k`.
    tol : float, optional
        Threshold on ``rho_p`` (floating mode).  Default ``1000 * p * eps`` with ``eps`` the input
        precision: ``2**-53`` for python floats, :math:`10^{-dps}` for mpf and exact values.
    dps : int
        Working digits for floating input.
    exact : bool, optional
        Force exact (floats converted exactly) or mpmath arithmetic; default: exact iff all inputs are.

    Examples
    --------
    >>> moment_order([1, 2, 6, 24, 120])          # exponential
    1
    >>> moment_order([0.01, 2e-4, 6e-6, 2.4e-7, 1.2e-8])   # the same, time scaled by 1/100
    1
    """
    dps = _check_dps(dps)
    data = _parse(moments, "moments", dps)
    k = len(data.values)
    if k == 0:
        raise InvalidParameter("moments", [], "at least one moment")
    is_exact = data.exact if exact is None else bool(exact)
    with working_dps(dps):
        r, _ = _reduced(data.values, is_exact)
        for p in range((k + 1) // 2, 1, -1):
            t = tol if tol is not None else _default_tol(p, data.eps, dps)
            if _hankel_nonsingular(r, p, is_exact, t)[0]:
                return p
    return 1


def _reduced(m: Sequence[Fraction], exact: bool) -> tuple[list[Any], Any]:
    """Reduced moments r_0..r_k (normalised to m1 = 1 in floating mode) and the time scale."""
    if exact:
        r = [Fraction(1)]
        fact = 1
        for k, mk in enumerate(m, start=1):
            fact *= k
            r.append(mk / fact)
        return r, Fraction(1)
    scale = _to_mp(m[0]) if m else mp.mpf(1)
    r = [mp.mpf(1)]
    fact = mp.mpf(1)
    power = mp.mpf(1)
    for k, mk in enumerate(m, start=1):
        fact *= k
        power *= scale
        r.append(_to_mp(mk) / (power * fact))
    return r, scale


# ====================================================================== the fit
def _resolve_order(k: int, J: int, order: Any) -> tuple[int, int]:
    """(n, K) from the numbers of moments k and of values at zero J."""
    if order is None:
        if k + J == 0:
            raise InvalidParameter("moments", [], "at least one moment (or value at zero)")
        if (k + J) % 2 == 0:
            raise InvalidParameter(
                "moments", f"{k} values", f"2n - 1 - J values for some order n (with J = {J} values "
                f"at zero, k + J = {k + J} must be odd)",
                f"give {k - 1 if k > 0 else 1} or {k + 1} moments, or pass order=")
        if (k + J + 1) // 2 > MAX_ORDER:
            raise InvalidParameter("moments", f"{k} values", f"at most {2 * MAX_ORDER - 1 - J} "
                                   f"values (order <= {MAX_ORDER}) with J = {J} values at zero")
        return (k + J + 1) // 2, k
    n = _check_order_arg(order, "order")
    if n > MAX_ORDER:
        raise InvalidParameter("order", n, f"an integer in 1..{MAX_ORDER}")
    if J > 2 * n - 1:
        raise InvalidParameter("zero", f"{J} values", f"at most 2n - 1 = {2 * n - 1} values for "
                               f"order={n}", "an order-n ME has 2n - 1 free parameters")
    K = 2 * n - 1 - J
    if k < K:
        raise InvalidParameter("moments", f"{k} values", f"at least 2n - 1 - J = {K} moments for "
                               f"order={n} with J = {J} values at zero")
    return n, K


@dataclass
class _Problem:
    """Data of one fit in working numbers (Fractions, or normalised mpf)."""

    r: list[Any]            # reduced moments r_0..r_k (normalised in floating mode)
    d: list[Any]            # values at zero d_0..d_{J-1} (normalised in floating mode)
    scale: Any              # time unit c: X' = X / c
    exact: bool
    eps: float
    dps: int
    tol: float | None


def _problem(mom: _Data, zer: _Data, exact: bool, eps: float, dps: int, tol: float | None
             ) -> _Problem:
    """Working data at the current mpmath precision (normalised to m1 = 1 in floating mode)."""
    r, scale = _reduced(mom.values, exact)
    if exact:
        return _Problem(r, list(zer.values), scale, True, eps, dps, tol)
    if not mom.values:      # no mean: take the time unit from the first nonzero value at zero
        j0 = next((j for j, x in enumerate(zer.values) if x != 0), None)
        if j0 is not None:
            scale = mp.root(1 / abs(_to_mp(zer.values[j0])), j0 + 1)
    d = [_to_mp(x) * scale ** (j + 1) for j, x in enumerate(zer.values)]
    return _Problem(r, d, scale, False, eps, dps, tol)


def _system(prob: _Problem, n: int, K: int, J: int) -> tuple[list[list[Any]], list[Any]]:
    if J == 0:
        return _hankel_entries(prob.r, n)
    return _two_point_entries(prob.r[:K + 1], prob.d[:J], n)


def _solve_only(prob: _Problem, n: int, K: int, J: int) -> _Solve | None:
    matrix, rhs = _system(prob, n, K, J)
    sol = _solve(matrix, rhs, prob.exact, hankel=(J == 0), stats=False)
    return sol if sol.x is not None else None


def _attempt(prob: _Problem, n: int, K: int, J: int) -> tuple[_Solve, bool]:
    """Solve the order-n system with K moments and J values at zero; (solution, singular?)."""
    matrix, rhs = _system(prob, n, K, J)
    sol = _solve(matrix, rhs, prob.exact, hankel=(J == 0))
    if sol.x is None:
        return sol, True
    if not prob.exact:
        tol = prob.tol if prob.tol is not None else _default_tol(len(matrix), prob.eps, prob.dps)
        if sol.rho < tol:
            return sol, True
    return sol, False


def _coefficients(prob: _Problem, sol: _Solve, n: int, J: int) -> tuple[list[Any], list[Any]]:
    """(a_0..a_n, b_0..b_{n-1}) of the normalised-time transform from the solution vector."""
    x = sol.x
    if J == 0:
        Q = [1] + [x[n - j] for j in range(1, n + 1)]
        if Q[n] == 0:
            raise InvalidMoments(
                f"the order-{n} Padé approximant of these moments degenerates (Q_n = 0: the "
                f"denominator has degree < {n}); no order-{n} ME without an atom matches them")
        P = [sum(Q[j] * prob.r[k - j] for j in range(k + 1)) for k in range(n)]
        lead = Q[n] if n % 2 == 0 else -Q[n]
        a = [(Q[k] if k % 2 == 0 else -Q[k]) / lead for k in range(n)] + [1]
        b = [(P[k] if k % 2 == 0 else -P[k]) / lead for k in range(n)]
        return a, b
    return list(x[:n]) + [1], list(x[n:])


def _sympy_rational(q: Fraction) -> sp.Rational:
    return sp.Rational(q.numerator, q.denominator)


def _to_lst(prob: _Problem, a: list[Any], b: list[Any], d_exact: list[Fraction], n: int
            ) -> RationalLST:
    """Build the exact transform; in floating mode scale time back and round to rationals."""
    if prob.exact:
        A = [_sympy_rational(Fraction(x)) for x in a]
        B = [_sympy_rational(Fraction(x)) for x in b]
    else:
        c = prob.scale
        inv = 1 / c
        A = [_sympy_rational(_rational(a[k] * inv ** (n - k), "a")) for k in range(n)]
        A.append(sp.Integer(1))
        B = [_sympy_rational(_rational(b[k] * inv ** (n - k), "b")) for k in range(n)]
        # Restore exactly what the equations impose exactly: mass 1 (b_0 = a_0) and the prescribed
        # values at zero, b_{n-1-j} = sum_{i=0..j} a_{n-i} d_{j-i}, for n-1-j >= 1 (note §1.4).
        D = [_sympy_rational(q) for q in d_exact]
        for j in range(len(D)):
            m = n - 1 - j
            if m < 1:
                break
            B[m] = sum(A[n - i] * D[j - i] for i in range(j + 1))
        B[0] = A[0]
    try:
        return RationalLST.from_coefficients(B, A)
    except InvalidParameter as error:
        raise InvalidMoments(f"the order-{n} Padé solution is not the transform of a "
                             f"distribution: {error}") from None


def _mismatches(lst: RationalLST, m: Sequence[Fraction], d: Sequence[Fraction], exact: bool,
                scale: Any, vtol: float) -> tuple[list[str], float]:
    """Data the transform does not reproduce (exactly, or to vtol relative) and the max error."""
    fitted_m = lst.moments(len(m)) if m else []
    fitted_d = lst.derivatives_at_zero(len(d)) if d else []
    bad: list[str] = []
    worst = 0.0
    unit = float(scale) if not exact else 1.0
    for i, (given, got) in enumerate(zip(m, fitted_m)):
        got = Fraction(int(got.p), int(got.q))
        err = 0.0 if got == given else float(abs(got - given) / given)
        worst = max(worst, err)
        if (exact and got != given) or (not exact and err > vtol):
            bad.append(f"m{i + 1} = {_fmt(given)} (fit gives {_fmt(got)})")
    for j, (given, got) in enumerate(zip(d, fitted_d)):
        got = Fraction(int(got.p), int(got.q))
        ref = max(abs(float(given)), unit ** -(j + 1))
        err = 0.0 if got == given else float(abs(got - given)) / ref
        worst = max(worst, err)
        if (exact and got != given) or (not exact and err > vtol):
            bad.append(f"f^({j})(0) = {_fmt(given)} (fit gives {_fmt(got)})")
    return bad, worst


def _split(k: int, J: int, p: int) -> tuple[int, int]:
    """Data used at a reduced order p: moments first, then values at zero."""
    K = min(k, 2 * p - 1)
    return K, 2 * p - 1 - K


def _detect_below(prob: _Problem, n: int, k: int, J: int) -> int:
    """The largest order p < n whose system (split of _split) is nonsingular."""
    for p in range(n - 1, 0, -1):
        Kp, Jp = _split(k, J, p)
        if not _attempt(prob, p, Kp, Jp)[1]:
            return p
    return 0


def _singular_text(prob: _Problem, sol: _Solve, n: int, J: int) -> str:
    what = f"the Hankel matrix H_{n} of reduced moments" if J == 0 else \
        f"the order-{n} two-point system (J = {J})"
    if prob.exact or sol.x is None:
        return f"{what} is singular"
    tol = prob.tol if prob.tol is not None else _default_tol(2 * n if J else n, prob.eps, prob.dps)
    return (f"{what} is singular to the precision of the data (relative rank measure "
            f"{sol.rho:.2g} < tol {tol:.2g}; give the data with more digits or pass tol=)")


def pade_fit(moments: Sequence[Any], order: int | None = None, zero: Sequence[Any] = (), *,
             dps: int = 50, exact: bool | None = None, tol: float | None = None) -> PadeResult:
    r"""Fit an ME distribution to moments (and values of the density at zero) by Padé approximation.

    Method of A. Angius, A. Horváth, S. M. Halawani, O. Barukab, A. R. Ahmad, G. Balbo,
    "Constructing Matrix Exponential Distributions by Moments and Behavior around Zero",
    Math. Probl. Eng. 2014, 610907.  Classical Padé (``zero=()``, note §1.3) solves the Hankel
    system :func:`hankel_system` from :math:`m_1..m_{2n-1}`; two-point Padé (``J = len(zero) > 0``,
    the paper's extension, note §1.4) solves :func:`two_point_system` from ``K = 2n - 1 - J``
    moments and :math:`f(0), \dots, f^{(J-1)}(0)`.

    Parameters
    ----------
    moments : sequence
        Raw moments :math:`m_1, m_2, \dots`: ints, fractions, sympy rationals, strings such as
        ``"2/3"`` or ``"0.1"`` (exact), python/numpy floats, mpmath ``mpf`` (floating).
    order : int, optional
        The order ``n``; the first ``2n - 1 - J`` moments are used (more may be given).  Default:
        ``n = (k + J + 1)/2`` from all ``k`` moments, lowered automatically to the detected moment
        order when the data are degenerate (see ``reduced_from``), provided the lower-order fit
        reproduces all the data.
    zero : sequence
        Prescribed :math:`d_j = f^{(j)}(0)`, ``j = 0..J-1``.  Zeros lower the numerator degree
        (lognormal, Weibull-like targets).
    dps : int
        Working decimal digits of the mpmath solve (floating mode).  mpf inputs are taken as accurate
        to ``dps`` digits.  The moments of the rounded rational transform can be far more sensitive
        than its coefficients (slow poles with tiny weights); when they would match the inputs to
        fewer than ``0.8 dps`` digits, the solve is repeated with more working digits (up to
        ``8 dps``; ``PadeResult.dps`` is the precision finally used).
    exact : bool, optional
        None (default): exact rational arithmetic iff every input is exact; True converts floats
        exactly (every float is a dyadic rational) and solves exactly; False forces mpmath.
    tol : float, optional
        Relative rank tolerance of the singularity test in floating mode (see :func:`moment_order`),
        also used as the relative tolerance of the Stieltjes test; default ``1000 * size * eps``,
        ``eps`` the input precision (``2**-53`` for floats, :math:`10^{-dps}` for mpf).

    Returns
    -------
    PadeResult
        ``lst`` is an exact :class:`~symq.me.transform.RationalLST`.  In floating mode the mpmath
        coefficients (normalised time :math:`m_1 = 1`, scaled back) are converted exactly to
        rationals; the returned transform is exactly that rational function, with total mass exactly
        1, the prescribed values :math:`f^{(j)}(0)` exactly for ``j <= n - 2``, and moments equal to
        the inputs to about ``dps`` digits (``residual``).  The fit need not be a density (poles in
        the right half plane, complex dominant pole, negative values: note §1.3); check it with the
        certifier.

    Raises
    ------
    InvalidParameter
        A moment that is not finite and positive, a non-finite value at zero, a first nonzero
        value at zero that is negative, a number of values that fits no order, too few moments for
        ``order``, or ``J > 2n - 1``.
    InvalidMoments
        Moments that violate a Stieltjes condition; an explicit ``order`` above the moment order
        (the message names the detected order); degenerate data with no lower-order fit.

    Examples
    --------
    >>> fit = pade_fit([1, 3, 15])      # H2: weights 1/2, rates 2 -+ sqrt(2)
    >>> fit.order, fit.lst.expr
    (2, (2*s + 2)/(s**2 + 4*s + 2))
    >>> pade_fit([1, "3/2"], zero=[0]).lst.expr   # f(0) = 0: constant numerator (note §1.4)
    4/(s**2 + 4*s + 4)
    """
    start = time.perf_counter()
    dps = _check_dps(dps)
    mom = _parse(moments, "moments", dps)
    zer = _parse(zero, "zero", dps)
    _check_zero_signs(zer, list(zero))
    k, J = len(mom.values), len(zer.values)
    n, K = _resolve_order(k, J, order)
    is_exact = (mom.exact and zer.exact) if exact is None else bool(exact)
    eps = max(mom.eps, zer.eps)
    notes: list[str] = []
    with working_dps(dps):
        if k:
            m0 = [Fraction(1)] + mom.values
            _stieltjes(m0 if is_exact else [_to_mp(x) for x in m0], is_exact, tol, dps, eps)
        prob = _problem(mom, zer, is_exact, eps, dps, tol)
        sol, singular = _attempt(prob, n, K, J)
        first_sol = sol
        used_n, used_K, used_J, reduced_from = n, K, J, None
        if singular:
            p = _detect_below(prob, n, K, J)
            if order is not None:
                raise InvalidMoments(
                    f"order={n} exceeds the moment order {p} of the data: "
                    f"{_singular_text(prob, sol, n, J)}; the detected order is {p} (the largest "
                    f"order with a nonsingular system), so the data determine no order-{n} ME. "
                    f"Use order={p} or order=None")
            used_K, used_J = _split(k, J, p)
            sol, singular = _attempt(prob, p, used_K, used_J)
            used_n, reduced_from = p, n
        a, b = _coefficients(prob, sol, used_n, used_J)
        lst = _to_lst(prob, a, b, zer.values[:used_J], used_n)

    vtol = 0.0 if is_exact else math.sqrt(
        tol if tol is not None else _default_tol(2 * n, eps, dps))
    if reduced_from is not None:
        bad, _ = _mismatches(lst, mom.values, zer.values, is_exact, prob.scale, vtol)
        if bad:
            raise InvalidMoments(
                f"{_singular_text(prob, first_sol, reduced_from, J)}"
                f"; the largest nonsingular order is {used_n}, but its fit does not reproduce "
                f"{', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''}: no ME of order <= "
                f"{reduced_from} has these data")
        notes.append(f"moment order {used_n} < {reduced_from} detected (order-{reduced_from} system "
                     f"singular); the order-{used_n} fit from {used_K} moments and {used_J} values "
                     f"at zero reproduces all {k} moments and {J} values at zero")
    used_m, used_d = mom.values[:used_K], zer.values[:used_J]
    _, residual = _mismatches(lst, used_m, used_d, is_exact, prob.scale, vtol)
    working = dps
    if not is_exact:
        # The moments of the rounded rational transform can be far more sensitive than its
        # coefficients (slow poles with tiny weights).  Re-solve with more digits until they match
        # the inputs to 0.8 dps digits (the documented promise), within 8 dps working digits.
        target = 10.0 ** (-0.8 * dps)
        while residual > target and working < 8 * dps:
            lost = working + (math.log10(residual) if residual > 0 else -working)
            working = min(8 * dps, int(lost + 0.8 * dps + 10))
            with working_dps(working):
                retry = _problem(mom, zer, is_exact, eps, dps, tol)
                retry_sol = _solve_only(retry, used_n, used_K, used_J)
                if retry_sol is None:
                    break
                a, b = _coefficients(retry, retry_sol, used_n, used_J)
                retry_lst = _to_lst(retry, a, b, used_d, used_n)
            _, retry_residual = _mismatches(retry_lst, used_m, used_d, False, prob.scale, vtol)
            if retry_residual >= residual:
                break
            lst, residual = retry_lst, retry_residual
        notes.append(f"solved in mpmath at {working} digits"
                     f"{'' if working == dps else f' (raised from dps={dps}: ill-conditioned)'}, in "
                     f"time normalised to {'m1' if k else 'the scale of the values at 0'} = 1; "
                     f"coefficients rounded to rationals")
        if residual > target:
            notes.append(f"moments reproduced only to relative {residual:.2g}: the system is "
                         f"too badly conditioned for {working} digits")
    if lst.order < used_n:
        notes.append(f"common factor of N and D cancelled: effective order {lst.order} < {used_n}")
    if order is not None and k > K:
        notes.append(f"m{K + 1}..m{k} given but not used (order={n} uses {K} moments)")
    return PadeResult(
        lst=lst, order=lst.order, moments_used=used_K, zero_used=used_J, exact=is_exact,
        dps=None if is_exact else working, hankel_condition=sol.condition, notes=notes,
        seconds=time.perf_counter() - start, reduced_from=reduced_from, residual=residual)
