r"""Moment sequences: parsing, the Stieltjes conditions and the moment order.

The input side of Padé moment matching (:mod:`symq.me.pade`):

* :func:`parse_data` converts moments and values at zero to exact fractions and records the
  precision they carry (exact, binary floats, mpmath numbers);
* :func:`stieltjes_check` rejects moment sequences that no distribution on :math:`[0, \infty)`
  has (the Hankel matrices :math:`[m_{i+j}]` and :math:`[m_{i+j+1}]` must be positive
  semidefinite);
* :func:`moment_order` finds the largest :math:`p` whose Hankel matrix :math:`H_p = [r_{i+j}]` of
  reduced moments :math:`r_k = m_k/k!` is nonsingular (derivations/me-pade.md, step 6), exactly
  for exact data and by a relative, time-scale-invariant rank test for floats;
* :func:`mismatches` lists the given moments and values at zero that a fitted transform does not
  reproduce (exactly, or to a relative tolerance).

Floating data are normalised to :math:`m_1 = 1` first: scaling time by :math:`c` multiplies
:math:`\det H_n` by :math:`c^{n(n-1)}`, so an absolute determinant threshold (BuTools
``MEOrderFromMoments``, ``|det| < 1e-12``) under-reports the order of a law on a small time scale.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from symq.core.errors import InvalidMoments, InvalidParameter

from ._context import is_mpf, mp, to_mp, working_dps
from .linalg import determinant, is_positive_semidefinite, solve_equilibrated
from .transform import RationalLST, to_rational

__all__ = ["moment_order", "stieltjes_check", "MAX_DPS"]

#: Safety factor of the default relative rank / semidefiniteness tolerance
#: (see :func:`moment_order`).
_TOL_FACTOR = 1000

#: Largest working precision accepted (mpmath at d digits costs about d^1.6 per operation).
MAX_DPS = 2000


@dataclass
class MomentData:
    """Parsed numeric input: exact values and the relative precision they carry."""

    values: list[Fraction]
    eps: float            # 0 for exact and mpf inputs (mpf: accurate to dps digits); 2**-53 doubles
    exact: bool           # every value is exact (int, Fraction, Rational, decimal string)


def exact_fraction(value: Any, name: str) -> Fraction:
    """Exact rational value of a number (binary floats exactly), as a Fraction."""
    q = to_rational(value, name)
    return Fraction(int(q.p), int(q.q))


def _label(kind: str, i: int) -> str:
    return f"moments[{i}] (m{i + 1})" if kind == "moments" else f"zero[{i}] (f^({i})(0))"


def parse_data(values: Any, kind: str, dps: int) -> MomentData:
    """Convert inputs to exact Fractions; classify exactness; check finite (and positive for
    moments)."""
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
            q = exact_fraction(v, name)
        except InvalidParameter:
            raise InvalidParameter(name, v, domain) from None
        if kind == "moments" and q <= 0:
            raise InvalidParameter(name, v, domain,
                                   "moments of a distribution on [0, inf) without an atom at 0 "
                                   "are positive")
        out.append(q)
    return MomentData(out, eps, exact)


def check_zero_signs(zero: MomentData, raw: Sequence[Any]) -> None:
    """A density is >= 0 near 0+, so its first nonzero derivative at 0 must be positive."""
    for j, d in enumerate(zero.values):
        if d != 0:
            if d < 0:
                raise InvalidParameter(
                    _label("zero", j), raw[j], "> 0 when the lower derivatives at 0 vanish",
                    "a density is nonnegative near t = 0+, so its first nonzero derivative at 0 "
                    "is positive")
            return


def check_dps(dps: Any) -> int:
    """``dps`` as an int in 10..:data:`MAX_DPS` (working decimal digits), else
    :class:`~symq.core.errors.InvalidParameter` naming ``dps``."""
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or not 10 <= dps <= MAX_DPS:
        raise InvalidParameter("dps", dps, f"an integer in 10..{MAX_DPS} (working decimal digits)")
    return int(dps)


def default_tolerance(size: int, data_eps: float, dps: int) -> float:
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


def hankel_entries(r: Sequence[Any], n: int) -> tuple[list[list[Any]], list[Any]]:
    """H_n = [r_{i+j}]_{i,j<n} and rhs -(r_n..r_{2n-1}); unknowns (Q_n, ..., Q_1).

    The denominator system of the classical Padé approximant (:func:`symq.me.pade.hankel_system`).
    """
    matrix = [[r[i + j] for j in range(n)] for i in range(n)]
    rhs = [-r[n + i] for i in range(n)]
    return matrix, rhs


def _hankel_nonsingular(r: Sequence[Any], p: int, exact: bool, tol: float
                        ) -> tuple[bool, float | None]:
    matrix, _ = hankel_entries(list(r) + [0] * (2 * p - len(r)), p)
    if exact:
        return determinant(matrix) != 0, None
    sol = solve_equilibrated(matrix, [mp.mpf(0)] * p, False, hankel=True)
    return sol.rho >= tol, sol.rho


# ====================================================================== Stieltjes conditions
def require_stieltjes(m: Sequence[Any], exact: bool, tol: float | None, dps: int,
                      eps: float) -> None:
    """Raise InvalidMoments if [m_{i+j}] or [m_{i+j+1}] (m_0 = 1) is not positive semidefinite."""
    k = len(m) - 1
    for shift, largest in ((0, k // 2 + 1), (1, (k + 1) // 2)):
        full = [[m[i + j + shift] for j in range(largest)] for i in range(largest)]
        t = None if exact else (tol if tol is not None else default_tolerance(largest, eps, dps))
        if largest < 2 or is_positive_semidefinite(full, t):
            continue
        for size in range(2, largest + 1):
            sub = [row[:size] for row in full[:size]]
            if not is_positive_semidefinite(sub, t):
                break
        det = determinant([row[:size] for row in full[:size]])
        if shift == 0 and size == 2:
            what = f"m2 - m1^2 = {_fmt(det)} < 0 (a negative variance)"
        elif shift == 1 and size == 2:
            what = f"m1*m3 - m2^2 = {_fmt(det)} < 0"
        else:
            top = 2 * size - 2 + shift
            entries = "m_(i+j)" if shift == 0 else "m_(i+j+1)"
            what = (f"the Hankel matrix [{entries}]_(i,j=0..{size - 1}) (m0 = 1, uses "
                    f"m{shift}..m{top}) is not positive semidefinite (determinant {_fmt(det)})")
        raise InvalidMoments(
            f"no distribution on [0, inf) has these moments: Stieltjes condition fails: {what}"
            + ("" if exact else f" (relative tolerance {t:.2g})"))


def stieltjes_check(moments: Sequence[Any], *, tol: float | None = None, dps: int = 50,
                    exact: bool | None = None) -> None:
    r"""Check that some distribution on :math:`[0, \infty)` could have the moments :math:`m_1..m_k`.

    The Stieltjes conditions: with :math:`m_0 = 1`, the Hankel matrices :math:`[m_{i+j}]` and
    :math:`[m_{i+j+1}]` (as large as the moments allow) are positive semidefinite.  For exact input
    the test is exact (pivoted :math:`LDL^T` in rationals); for floats it is applied to the
    Jacobi-scaled matrices (unit diagonal) with a relative tolerance ``tol`` (default
    ``1000 * size`` times the input precision, i.e. ``2**-53`` for python floats,
    :math:`10^{-dps}` for mpf).

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
    symq.core.errors.InvalidMoments: no distribution on [0, inf) has these moments: Stieltjes
    condition fails: m2 - m1^2 = -1/2 < 0 (a negative variance)
    """
    dps = check_dps(dps)
    data = parse_data(moments, "moments", dps)
    is_exact = data.exact if exact is None else bool(exact)
    with working_dps(dps):
        m: list[Any] = [Fraction(1)] + data.values
        if not is_exact:
            m = [to_mp(x) for x in m]
        require_stieltjes(m, is_exact, tol, dps, data.eps)


# ====================================================================== moment order
def moment_order(moments: Sequence[Any], *, tol: float | None = None, dps: int = 50,
                 exact: bool | None = None) -> int:
    r"""The moment order: the largest ``p <= (k+1)/2`` whose Hankel matrix :math:`H_p` is
    nonsingular.

    :math:`H_p = [r_{i+j}]_{i,j<p}`, :math:`r_k = m_k / k!` (Bodrog, Horváth, Telek 2008).
    For the moments of an order-``p`` ME :math:`H_p` is nonsingular and every larger one singular
    (Kronecker), so ``p`` is the order of the ME the moments determine; ``p`` is also the largest
    order for which :func:`pade_fit` has a unique classical solution from these moments.

    Exact input (ints, fractions, rationals, decimal strings): exact rank.  Floating input: the
    relative, time-scale-invariant test ``rho_p >= tol`` where ``rho_p = 1/cond_F(S_p)`` and
    :math:`S_p` is the Jacobi-scaled :math:`H_p` (unit diagonal) of the moments normalised to
    :math:`m_1 = 1`.  Unlike an absolute determinant test (BuTools ``MEOrderFromMoments``,
    ``|det| < 1e-12``, whose determinant scales as :math:`c^{p(p-1)}` when time is scaled by
    :math:`c`), the answer does not change when time is scaled.

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
        Force exact (floats converted exactly) or mpmath arithmetic; default: exact iff all
        inputs are.

    Examples
    --------
    >>> moment_order([1, 2, 6, 24, 120])          # exponential
    1
    >>> moment_order([0.01, 2e-4, 6e-6, 2.4e-7, 1.2e-8])   # the same, time scaled by 1/100
    1
    """
    dps = check_dps(dps)
    data = parse_data(moments, "moments", dps)
    k = len(data.values)
    if k == 0:
        raise InvalidParameter("moments", [], "at least one moment")
    is_exact = data.exact if exact is None else bool(exact)
    with working_dps(dps):
        r, _ = reduce_moments(data.values, is_exact)
        for p in range((k + 1) // 2, 1, -1):
            t = tol if tol is not None else default_tolerance(p, data.eps, dps)
            if _hankel_nonsingular(r, p, is_exact, t)[0]:
                return p
    return 1


def reduce_moments(m: Sequence[Fraction], exact: bool) -> tuple[list[Any], Any]:
    """Reduced moments r_0..r_k (normalised to m1 = 1 in floating mode) and the time scale."""
    if exact:
        r = [Fraction(1)]
        fact = 1
        for k, mk in enumerate(m, start=1):
            fact *= k
            r.append(mk / fact)
        return r, Fraction(1)
    scale = to_mp(m[0]) if m else mp.mpf(1)
    r = [mp.mpf(1)]
    fact = mp.mpf(1)
    power = mp.mpf(1)
    for k, mk in enumerate(m, start=1):
        fact *= k
        power *= scale
        r.append(to_mp(mk) / (power * fact))
    return r, scale


def mismatches(lst: RationalLST, m: Sequence[Fraction], d: Sequence[Fraction], exact: bool,
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
