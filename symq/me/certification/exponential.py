r"""Exact exponential polynomials: the time-domain form of an ME density with rational poles.

When every pole of :math:`N/D` is rational (:math:`-a`) or Gaussian rational (:math:`-a \pm ib`,
:math:`a, b \in \mathbb{Q}`), the density is

.. math:: f(t) = \sum_z \sum_j c_{z,j}\, t^j e^{z t}

with Gaussian-rational :math:`c_{z,j}` (Hermite coefficients, computed exactly).  With
:math:`q` the common denominator of the decay rates :math:`a`, :math:`\omega` the rational gcd of
the frequencies :math:`b` and

.. math:: x = e^{-t/q} \in (0, 1), \qquad u = \tan(\omega t / 2) \in \mathbb{R},

:math:`e^{-at} = x^{aq}` and :math:`e^{i n \omega t} = (1 + iu)^{2n} / (1 + u^2)^n`, so that

.. math:: f(t) = \frac{G(t, x, u)}{(1 + u^2)^{N}}, \qquad G \in \mathbb{Q}[t, x, u],

an identity for every :math:`t > 0` with :math:`\omega t \not\equiv \pi \pmod{2\pi}` (and, by
continuity, f there is the limit).  :func:`substitute` builds G; :func:`lst_of_polynomial` goes
back (a polynomial in :math:`(t, x, u)` over :math:`(1 + u^2)^e` to its exact Laplace transform),
which is how a proof is re-checked and how a factor of G becomes a function the numeric stages can
certify.  This is the substitution of the ME paper's exponential-polynomial view
(Angius, Horváth et al. 2014, Sec. 2) made exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp
from sympy import QQ, QQ_I

from symq.core.errors import InvalidParameter

from .._context import iv
from ..transform import RationalLST
from .base import iv_rational

__all__: list[str] = []

T, X, U = sp.symbols("t x u")
_S = sp.Symbol("s")
#: the time variable of densities written by hand (:func:`laplace_of`, the corpus)
TIME = sp.Symbol("t", positive=True)


@dataclass(frozen=True)
class ExpTerms:
    """The exact time-domain form of f: ``coefficients[z][j]`` multiplies :math:`t^j e^{z t}`.

    Complex poles are listed once, with :math:`\\operatorname{Im} z > 0`; the conjugate term is
    implied (f is real).
    """

    coefficients: dict[Any, list[Any]]  # QQ_I pole -> [c_0, ..., c_{m-1}] in QQ_I

    def rates(self) -> list[sp.Rational]:
        return [sp.Rational(-z.x) for z in self.coefficients]

    def frequencies(self) -> list[sp.Rational]:
        return [sp.Rational(z.y) for z in self.coefficients]


def _rational_sqrt(q: Fraction) -> Fraction | None:
    if q < 0:
        return None
    num, den = math.isqrt(q.numerator), math.isqrt(q.denominator)
    if num * num == q.numerator and den * den == q.denominator:
        return Fraction(num, den)
    return None


def gaussian_poles(factors: list[tuple[list[Fraction], int]]) -> list[tuple[Any, int]] | None:
    """Poles as QQ_I numbers with multiplicities, or None if one is not (Gaussian) rational.

    ``factors`` are the monic irreducible factors of D over Q (ascending coefficients).  A
    Gaussian-rational root has degree at most 2 over Q, so only linear factors and quadratics
    :math:`s^2 + ps + r` with :math:`r - p^2/4` a rational square qualify.
    """
    poles = []
    for coefficients, multiplicity in factors:
        if len(coefficients) == 2:
            poles.append((QQ_I.convert(sp.Rational(-coefficients[0])), multiplicity))
        elif len(coefficients) == 3:
            r, p = coefficients[0], coefficients[1]
            b = _rational_sqrt(r - p * p / 4)
            if b is None or b == 0:
                return None
            poles.append((QQ_I(sp.Rational(-p / 2), sp.Rational(b)), multiplicity))
        else:
            return None
    return poles


def hermite_terms(numerator: list[Fraction], denominator: list[Fraction],
                  poles: list[tuple[Any, int]]) -> ExpTerms:
    r"""Exact Hermite coefficients: :math:`c_{z,j} = \varphi_{m-1-j}(z) / j!`, where
    :math:`\varphi(s) = N(s)(s - z)^m / D(s) = \sum_k \varphi_k (s - z)^k` near the pole."""
    N = sp.Poly([sp.Rational(c) for c in reversed(numerator)], _S, domain=QQ_I)
    D = sp.Poly([sp.Rational(c) for c in reversed(denominator)], _S, domain=QQ_I)
    out: dict[Any, list[Any]] = {}
    for z, m in poles:
        rest = D.exquo(sp.Poly([1, -z], _S, domain=QQ_I) ** m)
        n_shift = [QQ_I.convert(c) for c in reversed(N.shift(z).all_coeffs())]
        r_shift = [QQ_I.convert(c) for c in reversed(rest.shift(z).all_coeffs())]
        phi: list[Any] = []  # power-series quotient n_shift / r_shift to order m - 1
        for k in range(m):
            acc = n_shift[k] if k < len(n_shift) else QQ_I.zero
            for i in range(1, k + 1):
                if i < len(r_shift):
                    acc -= r_shift[i] * phi[k - i]
            phi.append(acc / r_shift[0])
        out[z] = [phi[m - 1 - j] / QQ_I.convert(sp.factorial(j)) for j in range(m)]
    return ExpTerms(out)


@dataclass(frozen=True)
class Substitution:
    """The variables :math:`x = e^{-t/q}` and :math:`u = \\tan(\\omega t/2)` (omega 0: no u)."""

    q: int
    omega: sp.Rational

    def describe(self) -> str:
        parts = [f"x = exp(-t/{self.q})" if self.q != 1 else "x = exp(-t)"]
        if self.omega:
            parts.append(f"u = tan({self.omega} t/2)")
        return ", ".join(parts)


def _rational_gcd(values: list[sp.Rational]) -> sp.Rational:
    den = math.lcm(*[int(v.q) for v in values])
    return sp.Rational(math.gcd(*[int(v * den) for v in values]), den)


def substitution_for(terms: ExpTerms) -> Substitution:
    q = math.lcm(*[int(a.q) for a in terms.rates()])
    frequencies = [b for b in terms.frequencies() if b != 0]
    return Substitution(q, _rational_gcd(frequencies) if frequencies else sp.Integer(0))


def _poly(expr: Any) -> sp.Poly:
    return sp.Poly(expr, T, X, U, domain=QQ_I)


def substitute(terms: ExpTerms, sub: Substitution) -> tuple[sp.Poly, int]:
    """G in Q[t, x, u] and N with :math:`f(t) = G(t, x, u)/(1 + u^2)^N` exactly."""
    harmonics = {z: int(sp.Rational(z.y) / sub.omega) if sub.omega else 0
                 for z in terms.coefficients}
    N = max(harmonics.values(), default=0)
    one_plus = _poly(1 + U ** 2)
    G = _poly(0)
    for z, coefficients in terms.coefficients.items():
        k = int(sp.Rational(-z.x) * sub.q)
        n = harmonics[z]
        if n == 0:
            wave = one_plus ** N
        else:
            wave = _poly(1 + sp.I * U) ** (2 * n) * one_plus ** (N - n)
        for j, c in enumerate(coefficients):
            if c == 0:
                continue
            term = (_poly(T ** j * X ** k) * wave).mul_ground(c)
            G += term if n == 0 else term + _conjugate(term)
    return _real(G), N


def _conjugate(p: sp.Poly) -> sp.Poly:
    return sp.Poly.from_dict({m: QQ_I(c.x, -c.y) for m, c in p.rep.to_dict().items()},
                             T, X, U, domain=QQ_I)


def _real(p: sp.Poly) -> sp.Poly:
    coefficients = {}
    for monomial, c in p.rep.to_dict().items():
        if c.y != 0:
            raise ArithmeticError("the substituted density has a non-real coefficient")
        if c.x != 0:
            coefficients[monomial] = sp.Rational(c.x)
    return sp.Poly.from_dict(coefficients or {(0, 0, 0): 0}, T, X, U, domain=QQ)


def lst_of_polynomial(H: sp.Poly, e: int, sub: Substitution, shift: int = 0) -> sp.Expr | None:
    r"""The Laplace transform of :math:`h(t) = x^{shift} H(t, x, u)/(1 + u^2)^e`, exactly.

    Requires :math:`\deg_u H \le 2e`, so that h is an exponential-trigonometric polynomial:
    :math:`u^l/(1 + u^2)^e = \sin^l(\theta/2) \cos^{2e-l}(\theta/2)` with :math:`\theta = \omega t`
    expands into :math:`e^{i r \theta}`, :math:`|r| \le e`.  Returns the rational function of
    ``s`` (sympy), or None when a term does not decay (a pole with Re >= 0).
    """
    w = sp.Symbol("w")
    half_sin = (w - 1 / w) / (2 * sp.I)
    half_cos = (w + 1 / w) / 2
    poles: dict[Any, dict[int, Any]] = {}
    for (j, k, l), c in H.rep.to_dict().items():
        c = sp.Rational(c)
        if c == 0:
            continue
        if l > 2 * e:
            raise ValueError("deg_u H > 2e: not an exponential-trigonometric polynomial")
        wave = sp.Poly(sp.expand(half_sin ** l * half_cos ** (2 * e - l) * w ** (2 * e)), w)
        decay = sp.Rational(k + shift, sub.q)
        if decay <= 0:
            return None
        for (power,), amplitude in wave.as_dict().items():
            r = sp.Rational(power - 2 * e, 2)
            assert r.q == 1
            z = QQ_I.convert(-decay + sp.I * r * sub.omega)
            slot = poles.setdefault(z, {})
            slot[j] = slot.get(j, QQ_I.zero) + QQ_I.convert(c * amplitude)
    return transform_of_terms(poles)


def transform_of_terms(poles: dict[Any, dict[int, Any]]) -> sp.Expr:
    r""":math:`\sum_z \sum_j c_{z,j}\, j!/(s - z)^{j+1}`, the transform of
    :math:`\sum c_{z,j} t^j e^{zt}`, as one reduced rational function of ``s``.

    ``poles`` maps each QQ_I pole z to ``{j: c}`` (QQ_I coefficients); the sum must be real
    (conjugate poles with conjugate coefficients), else ArithmeticError.
    """
    numerator = sp.Poly(0, _S, domain=QQ_I)
    denominator = sp.Poly(1, _S, domain=QQ_I)
    for z, by_power in poles.items():
        m = max(by_power) + 1
        part = sp.Poly(0, _S, domain=QQ_I)
        for j, c in by_power.items():
            part += (sp.Poly([1, -z], _S, domain=QQ_I) ** (m - 1 - j)).mul_ground(
                c * QQ_I.convert(sp.factorial(j)))
        linear = sp.Poly([1, -z], _S, domain=QQ_I) ** m
        numerator = numerator * linear + part * denominator
        denominator = denominator * linear
    return sp.cancel(_real_univariate(numerator) / _real_univariate(denominator))


def laplace_of(density: sp.Expr, variable: sp.Symbol | None = None) -> RationalLST:
    r"""The exact Laplace transform of an exponential-polynomial density, normalised to mass 1.

    ``density`` is an expression in ``variable`` (default :data:`TIME`, the positive symbol
    ``t``): a sum of terms :math:`c\, t^j e^{a t} \cos(b t)` or :math:`\sin(bt)` with rational
    :math:`c, a, b`; products and powers are expanded first.

    Raises
    ------
    InvalidParameter
        When a rate, frequency or coefficient is not rational, a term is not of that form, or
        the mass :math:`\int_0^\infty f` is not positive (or a term does not decay).
    """
    var = TIME if variable is None else variable
    expanded = sp.expand(sp.expand(density).rewrite(sp.exp))
    poles: dict[Any, dict[int, Any]] = {}
    for term in sp.Add.make_args(expanded):
        term = sp.powsimp(term, combine="exp")
        coefficient, rest = term.as_independent(var, as_Add=False)
        j, z = 0, sp.Integer(0)
        for factor in sp.Mul.make_args(rest):
            base, power = factor.as_base_exp()
            if base == var and power.is_Integer and power >= 0:
                j += int(power)
            elif isinstance(factor, sp.exp):
                z += sp.expand(factor.args[0] / var)
            elif factor != 1:
                raise InvalidParameter("density", density, "a sum of c t^j e^(a t) cos(b t) "
                                       "and sin(b t) terms", f"term {term}")
        try:
            pole, c = QQ_I.convert(z), QQ_I.convert(sp.expand(coefficient))
        except (sp.CoercionFailed, TypeError):
            raise InvalidParameter("density", density, "rational rates, frequencies and "
                                   "coefficients", f"term {term}") from None
        slot = poles.setdefault(pole, {})
        slot[j] = slot.get(j, QQ_I.zero) + c
    poles = {z: terms for z, terms in poles.items() if any(c != 0 for c in terms.values())}
    if not poles or any(z.x >= 0 for z in poles):
        raise InvalidParameter("density", density, "an exponential polynomial whose terms decay")
    rational = transform_of_terms(poles)
    mass = rational.subs(_S, 0)
    if not mass > 0:
        raise InvalidParameter("density", density, "an exponential polynomial with positive "
                               "mass (integral over (0, inf))")
    return RationalLST.from_expr(sp.cancel(rational / mass), _S)


def _real_univariate(p: sp.Poly) -> sp.Expr:
    total = sp.Integer(0)
    for (power,), c in p.rep.to_dict().items():
        if c.y != 0:
            raise ArithmeticError("a non-real coefficient in a real transform")
        total += sp.Rational(c.x) * _S ** power
    return total


def enclose_density(terms: ExpTerms, t: Any) -> Any:
    """An interval enclosure of f(t) from the exact time-domain form (current iv precision)."""
    ti = iv.mpf(t)
    total = iv.mpf(0)
    for z, coefficients in terms.coefficients.items():
        a, b = iv_rational(_fraction(z.x)), sp.Rational(z.y)
        poly_re, poly_im = iv.mpf(0), iv.mpf(0)
        for c in reversed(coefficients):  # Horner in t
            poly_re = poly_re * ti + iv_rational(_fraction(c.x))
            poly_im = poly_im * ti + iv_rational(_fraction(c.y))
        envelope = iv.exp(a * ti)
        if b == 0:
            total += poly_re * envelope
        else:
            angle = iv_rational(_fraction(b)) * ti
            total += 2 * envelope * (poly_re * iv.cos(angle) - poly_im * iv.sin(angle))
    return total


def _fraction(q: Any) -> Fraction:
    q = sp.Rational(q)
    return Fraction(int(q.p), int(q.q))
