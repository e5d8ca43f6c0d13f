r"""Polynomials, power series, poles and Hermite partial fractions: the numeric engine of symq.me.

Every part of :mod:`symq.me` that needs the poles of a rational transform :math:`N(s)/D(s)` or its
partial fractions uses the functions here: the float and mpmath evaluation of an ME function
(:mod:`symq.me.evaluation`), the density check and sampling (:mod:`symq.me.sampling`) and the
certifier (:mod:`symq.me.certification`).  Polynomials are lists of ascending coefficients.

The arithmetic helpers (:func:`horner`, :func:`taylor_coefficients`, :func:`series_mul`,
:func:`series_div`, :func:`hermite_coefficients`, ...) use only ``+ - * /``, so the same code runs
on exact :class:`fractions.Fraction` values, on mpmath numbers and on mpmath intervals; with an
interval box around a pole the result encloses the value at the true pole.

Hermite form
------------
A pole :math:`p` of multiplicity :math:`\mu` contributes
:math:`\sum_{j<\mu} c_j (s - p)^{-(j+1)}` to :math:`f^*(s)`, i.e.
:math:`\sum_j c_j t^j e^{pt}/j!` to the density.  With :math:`D = (s - p)^\mu R` near :math:`p`,
:math:`c_j` is the coefficient of :math:`h^{\mu-1-j}` of the power series
:math:`N(p + h)/R(p + h)` (:func:`hermite_coefficients`).

Examples
--------
>>> from fractions import Fraction
>>> taylor_coefficients([1, 2, 1], 1, 3)      # (s + 1)^2 at s = 1 + h: 4 + 4h + h^2
[4, 4, 1]
>>> one = Fraction(1)
>>> hermite_coefficients(-one, 2, [one], [([one, 2 * one, one], 1, 2)])  # 1/(s+1)^2: t e^{-t}
[Fraction(0, 1), Fraction(1, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from symq.core.errors import NotConverged

from ._context import is_mpc, is_mpf, mp, rebind, to_mp, working_dps
from .transform import RationalLST, s

__all__ = [
    "horner", "poly_mul", "synthetic_division", "taylor_coefficients", "series_mul", "series_pow",
    "series_div",
    "hermite_coefficients", "polyroots", "newton_roots", "square_free_factors", "pole_data",
    "hermite_form",
]


# ====================================================================== polynomial arithmetic
def horner(coefficients: Sequence[Any], x: Any) -> Any:
    """Value at ``x`` of the polynomial with ascending ``coefficients`` (any arithmetic)."""
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x + c
    return acc


def poly_mul(p: Sequence[Any], q: Sequence[Any]) -> list[Any]:
    """Product of two polynomials (ascending coefficients)."""
    out: list[Any] = [0] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            out[i + j] = out[i + j] + x * y
    return out


def taylor_coefficients(p: Sequence[Any], z: Any, count: int, zero: Any = 0) -> list[Any]:
    r"""The first ``count`` Taylor coefficients :math:`p^{(j)}(z)/j!` of ``p`` at ``z``.

    These are the ascending coefficients of :math:`p(z + h)` in :math:`h`, computed by repeated
    synthetic division by :math:`(s - z)` (each remainder is the next coefficient); beyond the
    degree the coefficients are ``zero``.
    """
    work = list(p)
    out: list[Any] = []
    for _ in range(count):
        if not work:
            out.append(zero)
            continue
        work, remainder = synthetic_division(work, z)
        out.append(remainder)
    return out


def synthetic_division(p: Sequence[Any], z: Any) -> tuple[list[Any], Any]:
    """Quotient and remainder of ``p`` (ascending, non-empty) divided by :math:`(s - z)`.

    Horner's scheme: the remainder is :math:`p(z)`, the quotient's coefficients are the partial
    sums of the scheme.
    """
    n = len(p) - 1
    acc = p[n]
    quotient: list[Any] = [None] * n
    for i in range(n - 1, -1, -1):
        quotient[i] = acc
        acc = acc * z + p[i]
    return quotient, acc


# ====================================================================== truncated power series
def series_mul(a: Sequence[Any], b: Sequence[Any], count: int, zero: Any = 0) -> list[Any]:
    """The first ``count`` coefficients of the product of two power series."""
    out = [zero] * count
    for i in range(min(count, len(a))):
        for j in range(min(count - i, len(b))):
            out[i + j] += a[i] * b[j]
    return out


def series_pow(a: Sequence[Any], m: int, count: int, zero: Any = 0, one: Any = 1) -> list[Any]:
    """The first ``count`` coefficients of the ``m``-th power of a power series."""
    out: list[Any] = [one] + [zero] * (count - 1)
    for _ in range(m):
        out = series_mul(out, a, count, zero)
    return out


def series_div(a: Sequence[Any], b: Sequence[Any], count: int) -> list[Any]:
    r"""The first ``count`` coefficients of the quotient :math:`a/b` of two power series.

    :math:`q_j = (a_j - \sum_{i=1}^{j} b_i q_{j-i}) / b_0`; ``b[0]`` must not vanish.
    """
    q: list[Any] = []
    for j in range(count):
        acc = a[j]
        for i in range(1, j + 1):
            acc = acc - b[i] * q[j - i]
        q.append(acc / b[0])
    return q


def hermite_coefficients(z: Any, m: int, numerator: Sequence[Any],
                         denominator: Sequence[tuple[Sequence[Any], int, int]],
                         zero: Any = 0, one: Any = 1) -> list[Any]:
    r"""Hermite coefficients :math:`c_0, \dots, c_{m-1}` of the pole ``z`` of multiplicity ``m``.

    :math:`N/D = \sum_{j<m} c_j (s - z)^{-(j+1)} + (\text{terms regular at } z)`, so the density
    holds :math:`\sum_j c_j t^j e^{zt}/j!`.

    Parameters
    ----------
    z : number or interval
        The pole (an approximation, an exact rational, or an interval box enclosing it).
    m : int
        Its multiplicity.
    numerator : sequence
        Ascending coefficients of :math:`N`.
    denominator : sequence of (coefficients, power, drop)
        :math:`D` as a product of factors ``coefficients ** power``.  ``drop`` leading Taylor
        coefficients of a factor at ``z`` are removed (they vanish at the true pole), so that the
        product of the remaining series is :math:`D(z + h)/h^m`: ``[(D, 1, m)]`` for the whole
        denominator, or ``[(P, m, 1), (Q, k, 0), ...]`` for its square-free factorisation
        :math:`D = P^m Q^k \cdots` with :math:`P(z) = 0`.
    zero, one : number
        The zero and one of the arithmetic (for exact types and contexts).
    """
    den: list[Any] | None = None
    for coefficients, power, drop in denominator:
        part = taylor_coefficients(coefficients, z, m + drop, zero)[drop:]
        if power != 1:
            part = series_pow(part, power, m, zero, one)
        den = part if den is None else series_mul(den, part, m, zero)
    assert den is not None
    q = series_div(taylor_coefficients(numerator, z, m, zero), den, m)
    return [q[m - 1 - j] for j in range(m)]


# ====================================================================== roots
def polyroots(descending: Sequence[Any], maxsteps: int, extraprec: int, attempts: int = 1
              ) -> list[Any]:
    """Roots by ``mpmath.polyroots`` (Durand-Kerner) in the calling thread's context.

    On non-convergence the attempt is repeated with ``maxsteps`` doubled and ``extraprec``
    increased by its first value, at most ``attempts`` times in all; the last failure raises
    ``mpmath.NoConvergence``.
    """
    for attempt in range(attempts):
        try:
            return list(mp.polyroots(descending, maxsteps=maxsteps * 2**attempt,
                                     extraprec=extraprec * (attempt + 1)))
        except mp.NoConvergence:
            if attempt == attempts - 1:
                raise
    raise ValueError("attempts must be >= 1")


def newton_roots(p: Sequence[Any], dps: int) -> list[Any] | None:
    """Roots of a monic polynomial: numpy's eigenvalue roots polished by Newton in mpmath.

    ``p`` holds exact ascending coefficients.  Returns None when the float starting values are not
    finite (then use :func:`polyroots`).  Each root is polished until the Newton step is below
    :math:`10^{-dps}` relative (at most 100 steps).
    """
    d = len(p) - 1
    try:
        start = np.roots([float(c) for c in reversed(p)])
        if not np.all(np.isfinite(start)):
            return None
    except (ValueError, OverflowError, np.linalg.LinAlgError):
        return None
    coeffs_mp = [to_mp(c) for c in reversed(p)]
    dcoeffs_mp = [c * (d - k) for k, c in enumerate(coeffs_mp[:-1])]
    eps = mp.mpf(10) ** (-dps)
    roots = []
    for r in start:
        z = mp.mpc(float(r.real), float(r.imag)) if r.imag != 0 else mp.mpf(float(r.real))
        for _ in range(100):
            dp = mp.polyval(dcoeffs_mp, z)
            if dp == 0:
                break
            step = mp.polyval(coeffs_mp, z) / dp
            z -= step
            if abs(step) <= eps * (1 + abs(z)):
                break
        roots.append(z)
    return roots


# ====================================================================== poles of a transform
def square_free_factors(lst: RationalLST, cache: dict[Any, Any]
                        ) -> list[tuple[tuple[sp.Rational, ...], int, int]]:
    """Square-free factors of :math:`D` over the rationals: (ascending monic coefficients,
    multiplicity, number of real roots by Sturm counting).  Cached in ``cache``."""
    if "factors" not in cache:
        _, factors = sp.sqf_list(lst.D)
        out = []
        for poly, mult in factors:
            poly = sp.Poly(poly, s, domain=sp.QQ)
            poly = poly.monic()
            coeffs = tuple(sp.Rational(c) for c in reversed(poly.all_coeffs()))
            out.append((coeffs, int(mult), int(poly.count_roots())))
        cache["factors"] = out
    return cache["factors"]


def pole_data(lst: RationalLST, cache: dict[Any, Any], dps: int) -> list[tuple[Any, int, int]]:
    """Poles at ``dps`` working digits: (pole, multiplicity, factor index), dominant first.

    Multiplicities come from the square-free factorisation of :math:`D`, never from numerical
    clustering; each factor is solved with ``mpmath.polyroots``.  Real roots (their number known
    exactly by Sturm counting) are returned as mpf, complex ones as exact conjugate pairs of mpc.
    Sorted by decreasing real part, then increasing :math:`|\\operatorname{Im}|`, upper half
    plane first.
    """
    key = ("poles", dps)
    if key in cache:
        return rebind(cache[key])
    out: list[tuple[Any, int, int]] = []
    with working_dps(dps):
        for index, (coeffs, mult, n_real) in enumerate(square_free_factors(lst, cache)):
            desc = [to_mp(c) for c in reversed(coeffs)]
            try:
                roots = polyroots(desc, 100, dps + 20, attempts=5)
            except mp.NoConvergence:
                raise NotConverged("mpmath.polyroots", float("nan"), 10.0**-dps, 1600) from None
            roots = [mp.mpc(r) for r in roots]
            roots.sort(key=lambda z: abs(z.imag))
            real = [mp.mpf(r.real) for r in roots[:n_real]]
            rest = sorted(roots[n_real:], key=lambda z: -z.imag)[: (len(roots) - n_real) // 2]
            for r in real:
                out.append((r, mult, index))
            for r in rest:
                z = mp.mpc(r.real, abs(r.imag))
                out.append((z, mult, index))
                out.append((mp.conj(z), mult, index))
    out.sort(key=lambda e: (-mp.re(e[0]), abs(mp.im(e[0])), -mp.im(e[0])))
    cache[key] = out
    return out


def hermite_form(lst: RationalLST, cache: dict[Any, Any], dps: int
                 ) -> list[tuple[Any, int, list[Any], list[Any]]]:
    r"""(pole, multiplicity, pdf coefficients :math:`c_j`, ccdf coefficients :math:`e_i`) at
    ``dps`` working digits, in the order of :func:`pole_data`.

    The density is :math:`f(t) = \sum_k \sum_j c_{k,j} t^j e^{p_k t}/j!` and the tail
    :math:`\bar F(t) = \sum_k \sum_i e_{k,i} t^i e^{p_k t}/i!` with
    :math:`e_{k,i} = \sum_{j \ge i} c_{k,j} (-p_k)^{-(j-i+1)}`.  The :math:`c_{k,j}` of a pole on
    the square-free factor :math:`P` (:math:`D = P^\mu R`) come from :func:`hermite_coefficients`
    on that factorisation; conjugate poles get conjugate coefficients.
    """
    key = ("hermite", dps)
    if key in cache:
        return rebind(cache[key])
    factors = square_free_factors(lst, cache)
    out = []
    with working_dps(dps):
        zero, one = mp.mpf(0), mp.mpf(1)
        num = [to_mp(c) for c in lst.numerator]
        facs = [[to_mp(c) for c in coeffs] for coeffs, _, _ in factors]
        done: dict[Any, list[Any]] = {}
        for p, mult, index in pole_data(lst, cache, dps):
            if is_mpc(p) and p.imag < 0:
                c = [mp.conj(x) for x in done[(index, mp.conj(p))]]
            else:
                parts = [(facs[index], mult, 1)] + [
                    (facs[other], m_other, 0)
                    for other, (_, m_other, _) in enumerate(factors) if other != index]
                c = hermite_coefficients(p, mult, num, parts, zero, one)
                if is_mpf(p):
                    c = [mp.re(x) for x in c]
                done[(index, p)] = c
            q = -p
            e = [sum((c[j] / q ** (j - i + 1) for j in range(i, mult)), mp.mpf(0))
                 for i in range(mult)]
            if is_mpf(p):
                e = [mp.re(x) for x in e]
            out.append((p, mult, c, e))
    cache[key] = out
    return out
