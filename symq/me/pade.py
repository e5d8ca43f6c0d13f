r"""Moment matching of ME distributions by Padé approximation, with behaviour around zero.

An order-``n`` ME distribution without an atom has the Laplace-Stieltjes transform (LST)

.. math::

    f^*(s) = \frac{N(s)}{D(s)}
           = \frac{b_0 + \dots + b_{n-1}s^{n-1}}{a_0 + \dots + a_{n-1}s^{n-1} + s^n},
    \qquad b_0 = a_0,

with ``2n - 1`` free parameters (derivations/me-pade.md, step 1).  This module determines them
from data (Angius, Horváth et al., Math. Probl. Eng. 2014, ID 610907):

* **classical Padé** (derivations/me-pade.md, steps 4-7): the ``2n - 1`` moments
  :math:`m_1..m_{2n-1}` fix the ``[n-1/n]`` Padé approximant of the moment series
  :math:`\sum_k r_k u^k`, ``u = -s``, :math:`r_k = m_k/k!`.  The denominator solves the Hankel
  system :math:`H_n (Q_n, \dots, Q_1)^T = -(r_n, \dots, r_{2n-1})^T`,
  :math:`H_n = [r_{i+j}]_{i,j<n}` (:func:`hankel_system`); the numerator is
  :math:`P_k = \sum_{j \le k} Q_j r_{k-j}`.
* **two-point Padé** (the paper's extension; derivations/me-pade.md, steps 8-10): ``J`` values
  :math:`d_j = f^{(j)}(0)` of the density at zero, i.e. coefficients of the expansion at
  :math:`s = \infty`, replace ``J`` moments, ``K + J = 2n - 1``.  Moment and zero equations form one
  square linear system in :math:`(a_0..a_{n-1}, b_0..b_{n-1})` (:func:`two_point_system`).

Arithmetic is exact (python :class:`fractions.Fraction`) when every input is exact, and mpmath at
``dps`` digits otherwise, in time normalised to :math:`m_1 = 1` (the condition number of
:math:`H_n` grows roughly like :math:`10^n`-:math:`10^{4n}`, and normalising time keeps it
independent of the time unit).  Floating-point results are rounded to rationals, so the returned
:class:`~symq.me.transform.RationalLST` is always an exactly known function (the one a certificate
of :mod:`symq.me.certification` refers to); its moments equal the inputs to about ``dps`` digits
(:attr:`PadeResult.residual` reports the achieved relative error).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import sympy as sp

from symq.core.errors import InvalidMoments, InvalidParameter
from symq.core.result import Exactness, ResultBase

from ._context import is_mpf, mp, to_mp, working_dps
from .linalg import SolvedSystem, solve_equilibrated
from .moments import (
    MomentData,
    check_dps,
    check_zero_signs,
    default_tolerance,
    exact_fraction,
    hankel_entries,
    mismatches,
    moment_order,
    parse_data,
    reduce_moments,
    require_stieltjes,
    stieltjes_check,
)
from .transform import RationalLST

__all__ = [
    "PadeResult",
    "pade_fit",
    "moment_order",
    "hankel_system",
    "two_point_system",
    "stieltjes_check",
]

#: Largest order accepted (exact Hankel elimination is O(n^3) operations on rationals whose size
#: grows with n).
MAX_ORDER = 200
#: :attr:`PadeResult.method` of a fit without values at zero, and of one with them.
CLASSICAL = "classical Padé (Hankel system)"
TWO_POINT = "two-point Padé"


# ====================================================================== results
@dataclass(frozen=True)
class PadeResult(ResultBase):
    """The outcome of :func:`pade_fit`.

    A frozen :class:`~symq.core.result.ResultBase`: ``to_dict()`` gives every field as JSON (the
    transform as exact coefficient text, :meth:`RationalLST.to_dict`), ``str()`` one line, and
    Jupyter shows a table with the fitted transform.

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
    exactness : Exactness
        ``exact`` if the linear system was solved in exact rational arithmetic, ``numeric`` if in
        mpmath (the transform is then the rational rounding of the mpmath solution).
    dps : int or None
        Working digits of the mpmath solve (None in exact mode).
    hankel_condition : float or None
        Frobenius condition number :math:`\\|A\\|_F \\|A^{-1}\\|_F` of the linear system solved (the
        Hankel matrix for ``J = 0``, the two-point matrix otherwise) in time normalised to
        :math:`m_1 = 1`; None in exact mode.
    notes : tuple of str
        What was done beyond the plain solve (order reduction, cancellation, normalisation).
    seconds : float
        Wall-clock time of the fit.
    reduced_from : int or None
        The order implied by the number of data when a lower moment order was detected and used
        (``order=None`` only), else None.
    residual : float
        Largest relative error of the fitted moments :math:`m_1..m_K` and values at zero
        (relative to the time scale) against the inputs, computed exactly from :attr:`lst`; 0 in
        exact mode.
    method : str
        ``"classical Padé (Hankel system)"`` (``J = 0``) or ``"two-point Padé"`` (``J > 0``).
    """

    summary: ClassVar[tuple[str, ...]] = ("order", "moments_used", "zero_used", "exactness",
                                          "residual")
    labels: ClassVar[Mapping[str, str]] = {"lst": "$f^*(s)$"}

    lst: RationalLST
    order: int
    moments_used: int
    zero_used: int
    exactness: Exactness
    dps: int | None
    hankel_condition: float | None
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    reduced_from: int | None = None
    residual: float = 0.0
    method: str = CLASSICAL



# ====================================================================== the linear systems
def _c(r: Sequence[Any], k: int) -> Any:
    """Coefficient of s^k of the LST at 0: c_k = (-1)^k r_k."""
    return r[k] if k % 2 == 0 else -r[k]


def _two_point_entries(r: Sequence[Any], d: Sequence[Any], n: int
                       ) -> tuple[list[list[Any]], list[Any]]:
    """The s-form system (derivations/me-pade.md, steps 4 and 8-9) in unknowns
    (a_0..a_{n-1}, b_0..b_{n-1}).

    Rows ``k = 0..K`` (``K = 2n-1-J``):
    :math:`b_k - \\sum_{i \\le \\min(k, n-1)} a_i c_{k-i} = c_{k-n}` (``b_k = 0`` for
    ``k >= n``, right side 0 for ``k < n``); rows ``j = 0..J-1``:
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
        raise InvalidParameter("reduced_moments", str(reduced_moments)[:80],
                               "a sequence of numbers")
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
    r"""The Hankel system of classical Padé moment matching of order ``n``.

    :math:`H_n x = y` with :math:`H_n = [r_{i+j}]_{i,j=0..n-1}`,
    :math:`y = -(r_n, \dots, r_{2n-1})^T` and unknowns :math:`x = (Q_n, Q_{n-1}, \dots, Q_1)^T`,
    the denominator of the ``[n-1/n]`` Padé approximant :math:`P(u)/Q(u)`, :math:`Q(0) = 1`, of
    :math:`\sum_k r_k u^k`, ``u = -s`` (Angius, Horváth et al. 2014).  :func:`pade_fit` solves
    exactly this system (in floating mode built from the moments normalised to :math:`m_1 = 1`
    and equilibrated before elimination).

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
    matrix, rhs = hankel_entries(r, n)
    return sp.Matrix(matrix), sp.Matrix(rhs)


def two_point_system(reduced_moments: Sequence[Any], zero: Sequence[Any], n: int
                     ) -> tuple[sp.Matrix, sp.Matrix]:
    r"""The linear system of two-point Padé matching (moments and behaviour at zero).

    With ``J = len(zero)`` prescribed values :math:`d_j = f^{(j)}(0)` and ``K = 2n - 1 - J``
    moments, the unknowns are :math:`x = (a_0, \dots, a_{n-1}, b_0, \dots, b_{n-1})^T` (``a_n = 1``)
    and the ``2n`` equations are, with :math:`c_k = (-1)^k r_k`,

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


# ====================================================================== the fit
def _resolve_order(k: int, J: int, order: Any) -> tuple[int, int]:
    """(n, K) from the numbers of moments k and of values at zero J."""
    if order is None:
        if k + J == 0:
            raise InvalidParameter("moments", [], "at least one moment (or value at zero)")
        if (k + J) % 2 == 0:
            raise InvalidParameter(
                "moments", f"{k} values", f"2n - 1 - J values for some order n (with J = {J} "
                f"values at zero, k + J = {k + J} must be odd)",
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


def _problem(mom: MomentData, zer: MomentData, exact: bool, eps: float, dps: int, tol: float | None
             ) -> _Problem:
    """Working data at the current mpmath precision (normalised to m1 = 1 in floating mode)."""
    r, scale = reduce_moments(mom.values, exact)
    if exact:
        return _Problem(r, list(zer.values), scale, True, eps, dps, tol)
    if not mom.values:      # no mean: take the time unit from the first nonzero value at zero
        j0 = next((j for j, x in enumerate(zer.values) if x != 0), None)
        if j0 is not None:
            scale = mp.root(1 / abs(to_mp(zer.values[j0])), j0 + 1)
    d = [to_mp(x) * scale ** (j + 1) for j, x in enumerate(zer.values)]
    return _Problem(r, d, scale, False, eps, dps, tol)


def _system(prob: _Problem, n: int, K: int, J: int) -> tuple[list[list[Any]], list[Any]]:
    if J == 0:
        return hankel_entries(prob.r, n)
    return _two_point_entries(prob.r[:K + 1], prob.d[:J], n)


def _solve_only(prob: _Problem, n: int, K: int, J: int) -> SolvedSystem | None:
    matrix, rhs = _system(prob, n, K, J)
    sol = solve_equilibrated(matrix, rhs, prob.exact, hankel=(J == 0), stats=False)
    return sol if sol.x is not None else None


def _attempt(prob: _Problem, n: int, K: int, J: int) -> tuple[SolvedSystem, bool]:
    """Solve the order-n system with K moments and J values at zero; (solution, singular?)."""
    matrix, rhs = _system(prob, n, K, J)
    sol = solve_equilibrated(matrix, rhs, prob.exact, hankel=(J == 0))
    if sol.x is None:
        return sol, True
    if not prob.exact:
        tol = prob.tol if prob.tol is not None else default_tolerance(len(matrix), prob.eps,
                                                                       prob.dps)
        if sol.rho < tol:
            return sol, True
    return sol, False


def _coefficients(prob: _Problem, sol: SolvedSystem, n: int, J: int) -> tuple[list[Any], list[Any]]:
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
        A = [_sympy_rational(exact_fraction(a[k] * inv ** (n - k), "a")) for k in range(n)]
        A.append(sp.Integer(1))
        B = [_sympy_rational(exact_fraction(b[k] * inv ** (n - k), "b")) for k in range(n)]
        # Restore exactly what the equations impose exactly: mass 1 (b_0 = a_0) and the prescribed
        # values at zero, b_{n-1-j} = sum_{i=0..j} a_{n-i} d_{j-i}, for n-1-j >= 1
        # (derivations/me-pade.md, steps 8-9).
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


def _singular_text(prob: _Problem, sol: SolvedSystem, n: int, J: int) -> str:
    what = f"the Hankel matrix H_{n} of reduced moments" if J == 0 else \
        f"the order-{n} two-point system (J = {J})"
    if prob.exact or sol.x is None:
        return f"{what} is singular"
    tol = prob.tol if prob.tol is not None else default_tolerance(2 * n if J else n, prob.eps,
                                                                   prob.dps)
    return (f"{what} is singular to the precision of the data (relative rank measure "
            f"{sol.rho:.2g} < tol {tol:.2g}; give the data with more digits or pass tol=)")


def pade_fit(moments: Sequence[Any], order: int | None = None, zero: Sequence[Any] = (), *,
             dps: int = 50, exact: bool | None = None, tol: float | None = None) -> PadeResult:
    r"""Fit an ME distribution to moments (and values of the density at zero) by Padé approximation.

    Method of A. Angius, A. Horváth, S. M. Halawani, O. Barukab, A. R. Ahmad, G. Balbo,
    "Constructing Matrix Exponential Distributions by Moments and Behavior around Zero",
    Math. Probl. Eng. 2014, 610907.  Classical Padé (``zero=()``, derivations/me-pade.md, steps
    4-7) solves the Hankel system :func:`hankel_system` from :math:`m_1..m_{2n-1}`; two-point Padé
    (``J = len(zero) > 0``, the paper's extension, steps 8-10) solves :func:`two_point_system` from
    ``K = 2n - 1 - J`` moments and :math:`f(0), \dots, f^{(J-1)}(0)`.

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
        Working decimal digits of the mpmath solve (floating mode).  mpf inputs are taken as
        accurate to ``dps`` digits.  The moments of the rounded rational transform can be far
        more sensitive than its coefficients (slow poles with tiny weights); when they would
        match the inputs to fewer than ``0.8 dps`` digits, the solve is repeated with more
        working digits (up to ``8 dps``; ``PadeResult.dps`` is the precision finally used).
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
        the right half plane, complex dominant pole, negative values, as the paper warns); check
        it with the certifier (:func:`symq.me.certify`).

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
    >>> pade_fit([1, "3/2"], zero=[0]).lst.expr   # f(0) = 0: constant numerator (step 10)
    4/(s**2 + 4*s + 4)
    """
    start = time.perf_counter()
    dps = check_dps(dps)
    mom = parse_data(moments, "moments", dps)
    zer = parse_data(zero, "zero", dps)
    check_zero_signs(zer, list(zero))
    k, J = len(mom.values), len(zer.values)
    n, K = _resolve_order(k, J, order)
    is_exact = (mom.exact and zer.exact) if exact is None else bool(exact)
    eps = max(mom.eps, zer.eps)
    notes: list[str] = []
    with working_dps(dps):
        if k:
            m0 = [Fraction(1)] + mom.values
            require_stieltjes(m0 if is_exact else [to_mp(x) for x in m0], is_exact, tol, dps, eps)
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
        tol if tol is not None else default_tolerance(2 * n, eps, dps))
    if reduced_from is not None:
        bad, _ = mismatches(lst, mom.values, zer.values, is_exact, prob.scale, vtol)
        if bad:
            raise InvalidMoments(
                f"{_singular_text(prob, first_sol, reduced_from, J)}"
                f"; the largest nonsingular order is {used_n}, but its fit does not reproduce "
                f"{', '.join(bad[:3])}{' ...' if len(bad) > 3 else ''}: no ME of order <= "
                f"{reduced_from} has these data")
        notes.append(f"moment order {used_n} < {reduced_from} detected (order-{reduced_from} "
                     f"system singular); the order-{used_n} fit from {used_K} moments and "
                     f"{used_J} values at zero reproduces all {k} moments and {J} values at zero")
    used_m, used_d = mom.values[:used_K], zer.values[:used_J]
    _, residual = mismatches(lst, used_m, used_d, is_exact, prob.scale, vtol)
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
            _, retry_residual = mismatches(retry_lst, used_m, used_d, False, prob.scale, vtol)
            if retry_residual >= residual:
                break
            lst, residual = retry_lst, retry_residual
        raised = "" if working == dps else f" (raised from dps={dps}: ill-conditioned)"
        notes.append(f"solved in mpmath at {working} digits{raised}, in "
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
        lst=lst, order=lst.order, moments_used=used_K, zero_used=used_J,
        exactness=Exactness.EXACT if is_exact else Exactness.NUMERIC,
        dps=None if is_exact else working, hankel_condition=sol.condition, notes=tuple(notes),
        seconds=time.perf_counter() - start, reduced_from=reduced_from, residual=residual,
        method=TWO_POINT if used_J else CLASSICAL)
