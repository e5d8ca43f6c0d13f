r"""Rational Laplace transforms of ME distributions, in exact rational arithmetic.

An order-n matrix-exponential (ME) distribution without an atom at zero is determined by its
Laplace-Stieltjes transform

.. math::

    f^*(s) = E[e^{-sX}] = \frac{N(s)}{D(s)}
           = \frac{b_0 + b_1 s + \dots + b_{n-1} s^{n-1}}
                  {a_0 + a_1 s + \dots + a_{n-1} s^{n-1} + s^n},
    \qquad N(0) = D(0),

(Angius, Horváth et al. 2014; derivations/me-pade.md, step 1).  :class:`RationalLST` holds the
coefficients as exact sympy rationals, so that moments, derivatives at zero and certificates
refer to one exactly known function.  Floating-point input is converted exactly (every binary
float is a rational); results of high-precision numerical fits are rounded to rationals at their
working precision before they become an ME.

Two expansions carry the information used by moment matching:

* at :math:`s = 0`: :math:`f^*(s) = \sum_k (-1)^k r_k s^k` with reduced moments
  :math:`r_k = m_k / k!`;
* at :math:`s = \infty`: :math:`f^*(s) = \sum_j f^{(j)}(0)\, s^{-(j+1)}` (the behaviour of the
  density around zero).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from symq.core import printing
from symq.core.errors import InvalidParameter
from symq.core.precision import is_mpf

__all__ = ["s", "to_rational", "to_mpf", "exact_text", "RationalLST"]

#: The transform variable.
s = sp.Symbol("s")


def to_rational(value: Any, name: str = "coefficient") -> sp.Rational:
    """Convert a number to an exact sympy rational.

    Integers, fractions, sympy rationals and strings such as ``"2/3"`` or ``"0.1"`` are taken
    at their exact decimal value; binary floats (python, numpy, mpmath, sympy ``Float``) are
    converted exactly (each is a dyadic rational).

    Raises
    ------
    InvalidParameter
        For non-numbers and non-finite values.
    """
    if isinstance(value, bool):
        raise InvalidParameter(name, value, "a finite real number")
    if isinstance(value, sp.Rational):
        return value
    if isinstance(value, (int, Fraction)):
        return sp.Rational(value)
    if isinstance(value, np.integer):
        return sp.Integer(int(value))
    if isinstance(value, str):
        try:
            return sp.Rational(Fraction(value.strip()))
        except (ValueError, ZeroDivisionError):
            raise InvalidParameter(name, value, "a finite real number such as 0.5 or 2/3") from None
    if is_mpf(value):
        if not mpmath.isfinite(value):
            raise InvalidParameter(name, value, "a finite real number")
        sign, man, exp, _ = value._mpf_
        if not man:
            return sp.Integer(0)
        magnitude = sp.Rational(int(man)) * sp.Rational(2) ** int(exp)
        return -magnitude if sign else magnitude
    if isinstance(value, sp.Float):
        return to_rational(value._to_mpmath(value._prec), name)
    if isinstance(value, sp.Basic):
        if value.is_number and value.is_real:
            return to_rational(sp.N(value, 60), name) if not value.is_Rational else value
        raise InvalidParameter(name, value, "a finite real number")
    try:
        as_float = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, "a finite real number") from None
    if not math.isfinite(as_float):
        raise InvalidParameter(name, value, "a finite real number")
    return sp.Rational(Fraction(as_float))


def _int_text(n: int) -> str:
    """Decimal text of an integer of any size (python refuses str() beyond 4300 digits)."""
    if n < 0:
        return "-" + _int_text(-n)
    if n < 10**4000:
        return str(n)
    digits = int(n.bit_length() * 0.30103) // 2
    high, low = divmod(n, 10**digits)
    return _int_text(high) + _int_text(low).rjust(digits, "0")


def exact_text(q: Any) -> str:
    """An exact rational as text, ``"p"`` or ``"p/q"``, for integers of any size.

    Examples
    --------
    >>> exact_text(sp.Rational(-3, 4)), exact_text(5)
    ('-3/4', '5')
    """
    q = sp.Rational(q)
    p, d = int(q.p), int(q.q)
    return _int_text(p) if d == 1 else f"{_int_text(p)}/{_int_text(d)}"


def _strip(coefficients: list[sp.Rational]) -> list[sp.Rational]:
    while len(coefficients) > 1 and coefficients[-1] == 0:
        coefficients.pop()
    return coefficients


@dataclass(frozen=True)
class RationalLST:
    r"""An exact rational Laplace-Stieltjes transform :math:`N(s)/D(s)` of a distribution.

    Use :meth:`from_coefficients` or :meth:`from_expr`; the constructor expects normalised
    data (ascending coefficients, ``D`` monic, ``gcd(N, D) = 1``, ``N(0) = D(0)``).

    Attributes
    ----------
    numerator : tuple of sympy.Rational
        :math:`b_0, \dots, b_{k}` (ascending powers of s), :math:`k \le n - 1`.
    denominator : tuple of sympy.Rational
        :math:`a_0, \dots, a_{n-1}, 1` (ascending powers of s, monic).
    """

    numerator: tuple[sp.Rational, ...]
    denominator: tuple[sp.Rational, ...]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_coefficients(cls, numerator: Iterable[Any], denominator: Iterable[Any]
                          ) -> RationalLST:
        """Build from ascending coefficient lists (any exact or float numbers).

        The fraction is reduced (common factors cancelled exactly) and ``D`` made monic.

        Raises
        ------
        InvalidParameter
            Empty or zero polynomials, ``deg N >= deg D`` (an atom or a non-proper transform),
            ``D(0) = 0`` (a pole at zero) or ``N(0) != D(0)`` (total mass not 1).
        """
        num = _strip([to_rational(c, "numerator") for c in numerator])
        den = _strip([to_rational(c, "denominator") for c in denominator])
        if not num or all(c == 0 for c in num):
            raise InvalidParameter("numerator", list(numerator), "a nonzero polynomial")
        if not den or all(c == 0 for c in den):
            raise InvalidParameter("denominator", list(denominator), "a nonzero polynomial")
        N = sp.Poly(list(reversed(num)), s, domain=sp.QQ)
        D = sp.Poly(list(reversed(den)), s, domain=sp.QQ)
        g = sp.gcd(N, D)
        if g.degree() > 0:
            N, D = sp.div(N, g)[0], sp.div(D, g)[0]
        lead = D.LC()
        N, D = N * (1 / lead), D * (1 / lead)
        if N.degree() >= D.degree():
            raise InvalidParameter(
                "numerator", num, f"a polynomial of degree < deg D = {D.degree()}",
                "an ME density without an atom at zero needs a strictly proper transform")
        a = [D.nth(k) for k in range(D.degree() + 1)]
        b = [N.nth(k) for k in range(max(N.degree(), 0) + 1)]
        if a[0] == 0:
            raise InvalidParameter("denominator", den, "a polynomial with D(0) != 0",
                                   "a pole at s = 0 is not a distribution")
        if b[0] != a[0]:
            raise InvalidParameter("numerator", num, f"such that N(0) = D(0) = {a[0]}",
                                   f"total mass N(0)/D(0) = {b[0] / a[0]} is not 1")
        return cls(tuple(sp.Rational(x) for x in b), tuple(sp.Rational(x) for x in a))

    @classmethod
    def from_expr(cls, expr: Any, variable: sp.Symbol | None = None) -> RationalLST:
        """Build from a sympy rational function of ``s`` (or of ``variable``).

        Text (e.g. ``"1/(s + 1)"``) is parsed by :func:`symq.core.parameters.parse_formula`
        (a whitelisted syntax tree in the variable ``s``), never by ``sympify``.
        """
        if isinstance(expr, str):
            from symq.core.parameters import parse_formula

            name = str(variable) if variable is not None else "s"
            expr = parse_formula("expr", expr, (name,))
        elif isinstance(expr, (int, Fraction)) and not isinstance(expr, bool):
            expr = sp.Rational(expr)
        elif not isinstance(expr, sp.Basic):
            raise InvalidParameter("expr", repr(expr)[:80], "a sympy rational function of s or "
                                   "its text, e.g. 1/(s + 1)")
        var = variable if variable is not None else s
        if variable is None:
            free = expr.free_symbols
            if len(free) > 1:
                raise InvalidParameter("expr", expr, "a rational function of one variable s")
            if free:
                var = next(iter(free))
        num, den = sp.fraction(sp.cancel(sp.together(expr)))
        try:
            N = sp.Poly(num, var, domain=sp.QQ)
            D = sp.Poly(den, var, domain=sp.QQ)
        except (sp.PolynomialError, sp.CoercionFailed):
            raise InvalidParameter(
                "expr", expr, "a rational function of s with rational coefficients") from None
        return cls.from_coefficients(reversed(N.all_coeffs()), reversed(D.all_coeffs()))

    # ------------------------------------------------------------------ basic properties
    @property
    def order(self) -> int:
        """The order n = deg D."""
        return len(self.denominator) - 1

    @property
    def N(self) -> sp.Poly:
        return sp.Poly(list(reversed(self.numerator)), s, domain=sp.QQ)

    @property
    def D(self) -> sp.Poly:
        return sp.Poly(list(reversed(self.denominator)), s, domain=sp.QQ)

    @property
    def expr(self) -> sp.Expr:
        """:math:`N(s)/D(s)` as a sympy expression in :data:`s`."""
        return self.N.as_expr() / self.D.as_expr()

    def _coefficient(self, poly: tuple[sp.Rational, ...], k: int) -> sp.Rational:
        return poly[k] if 0 <= k < len(poly) else sp.Integer(0)

    # ------------------------------------------------------------------ expansions
    def series_at_zero(self, K: int) -> list[sp.Rational]:
        """Coefficients :math:`c_0..c_K` of :math:`f^*(s) = \\sum c_k s^k` (exact)."""
        a, b = self.denominator, self.numerator
        n = self.order
        c: list[sp.Rational] = []
        for k in range(K + 1):
            acc = self._coefficient(b, k)
            for i in range(1, min(k, n) + 1):
                acc -= a[i] * c[k - i]
            c.append(acc / a[0])
        return c

    def reduced_moments(self, K: int) -> list[sp.Rational]:
        """Reduced moments :math:`r_0 = 1, r_1, \\dots, r_K` with :math:`r_k = m_k/k!`."""
        return [(-1) ** k * c for k, c in enumerate(self.series_at_zero(K))]

    def moments(self, K: int) -> list[sp.Rational]:
        """Raw moments :math:`m_1, \\dots, m_K` (exact)."""
        r = self.reduced_moments(K)
        return [sp.factorial(k) * r[k] for k in range(1, K + 1)]

    def derivatives_at_zero(self, J: int) -> list[sp.Rational]:
        r"""Exact :math:`f(0), f'(0), \dots, f^{(J-1)}(0)` from the expansion at infinity.

        From :math:`N = D \sum_j d_j s^{-(j+1)}`:
        :math:`d_j = b_{n-1-j} - \sum_{i=1}^{j} a_{n-i} d_{j-i}` (derivations/me-pade.md, step 3).
        """
        a, b = self.denominator, self.numerator
        n = self.order
        d: list[sp.Rational] = []
        for j in range(J):
            acc = self._coefficient(b, n - 1 - j)
            for i in range(1, j + 1):
                acc -= self._coefficient(a, n - i) * d[j - i]
            d.append(acc)
        return d

    # ------------------------------------------------------------------ transformations
    def scaled(self, c: Any) -> RationalLST:
        r"""The transform of :math:`cX`: :math:`f^*_{cX}(s) = f^*(cs)` (time scaled by c > 0)."""
        c = to_rational(c, "scale")
        if not c > 0:
            raise InvalidParameter("scale", c, "a positive number")
        num = [bk * c**k for k, bk in enumerate(self.numerator)]
        den = [ak * c**k for k, ak in enumerate(self.denominator)]
        return RationalLST.from_coefficients(num, den)

    def __call__(self, value: Any) -> Any:
        """Evaluate :math:`f^*` at a number (exactly for rationals, else in mpmath)."""
        if isinstance(value, (int, Fraction, sp.Rational)):
            v = sp.Rational(value)
            return self.N.eval(v) / self.D.eval(v)
        z = mpmath.mpmathify(value)
        num = mpmath.polyval([to_mpf(x) for x in reversed(self.numerator)], z)
        den = mpmath.polyval([to_mpf(x) for x in reversed(self.denominator)], z)
        return num / den

    def to_dict(self) -> dict[str, list[str]]:
        """The exact coefficients as text (JSON-ready), ascending powers of s.

        Examples
        --------
        >>> RationalLST.from_expr(4 / (s + 2)**2).to_dict()
        {'numerator': ['4'], 'denominator': ['4', '4', '1']}
        """
        return {"numerator": [exact_text(c) for c in self.numerator],
                "denominator": [exact_text(c) for c in self.denominator]}

    def __str__(self) -> str:
        return str(self.expr)

    def _repr_latex_(self) -> str:
        """The transform in LaTeX, long coefficients shortened to 6 significant digits (the
        exact ones are :attr:`numerator`, :attr:`denominator` and :meth:`to_dict`)."""
        return f"${printing.latex(self.expr, digits=printing.DIGITS)}$"

    def _repr_html_(self) -> str:
        """The LaTeX display as HTML, the transform as MathML
        (:func:`symq.core.display.html_display`): Jupyter prefers it, and it needs no MathJax."""
        from symq.core.display import html_display

        return html_display(self._repr_latex_())


def to_mpf(value: sp.Rational | Fraction | int, ctx: Any = None) -> mpmath.mpf:
    """An exact rational as an mpmath number, correctly rounded to the precision of ``ctx``.

    ``ctx`` is an mpmath context (default: mpmath's global context at its current precision);
    symq's own code passes the calling thread's private context (:mod:`symq.core.precision`).
    """
    if ctx is None:
        ctx = mpmath.mp
    if isinstance(value, Fraction):
        numerator, denominator = value.numerator, value.denominator
    else:
        value = sp.Rational(value)
        numerator, denominator = int(value.p), int(value.q)
    if denominator == 1:
        return ctx.mpf(numerator)
    return ctx.mpf(numerator) / denominator
