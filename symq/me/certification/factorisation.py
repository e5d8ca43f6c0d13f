r"""The exact decision for ME densities with rational and Gaussian-rational poles.

With the substitution of :mod:`~symq.me.certification.exponential`,
:math:`f(t) = G(t, x, u)/(1 + u^2)^N` for :math:`x = e^{-t/q} \in (0, 1)`,
:math:`u = \tan(\omega t/2) \in \mathbb{R}`.  The factorisation of G into irreducible factors
over :math:`\mathbb{Q}` (after removing the positive monomial :math:`t^\alpha x^\beta` and the
positive factor :math:`(1 + u^2)^\gamma`),

.. math:: G = c\, t^\alpha x^\beta (1 + u^2)^\gamma \prod_m g_m^{m},

splits f into parts whose sign is known exactly:

* every factor of **even** multiplicity is :math:`\ge 0`: its zeros are *touching* zeros, proved
  so by the factorisation itself;
* a factor of **odd** multiplicity in one variable with no real root in that variable's range
  (:math:`(0, \infty)` for t, :math:`(0, 1)` for x, :math:`\mathbb{R}` for u; exact real-root
  counting by Sturm sequences) has a constant sign, read at one rational point;
* what is left, :math:`R = \prod g`, is square-free.  If it is a constant, f has the sign of
  :math:`c` times the constant signs (a proof).  If it is a polynomial in one variable, every
  root in range is simple, so f changes sign there: NEGATIVE, with a rational point of the
  variable where the sign is exactly negative (the witness).  If it involves several variables,
  :math:`h = x^{\sigma} R/(1 + u^2)^e` is itself an exponential-trigonometric polynomial with a
  rational transform, and the numeric certifier decides it.  For R in :math:`(t, x)` or in
  :math:`(x, u)` alone, h has no touching zero in :math:`(0, \infty)`: a double zero would be a
  common zero of R and its derivative along the curve, an algebraic point, while :math:`e^{-t/q}`
  and :math:`e^{i\omega t}` are transcendental at algebraic :math:`t \neq 0` (Lindemann-Weierstrass;
  Gelfond-Schneider for the pair), so branch and bound meets only sign changes and boxes bounded
  away from zero.

The result is an :class:`ExactProof` that :meth:`ExactProof.verify` re-checks from the transform
alone: the transform of :math:`G/(1+u^2)^N` equals :math:`N/D`, the product of the factors equals
G, the root counts of the sign-definite factors are zero and their signs are as stated, and the
sub-certificate of R (if any) re-verifies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import mpmath
import sympy as sp

from symq.core.display import MarkdownDisplay

from .._context import mp
from ..transform import RationalLST
from .base import lower_end, upper_end
from .exponential import (
    ExpTerms,
    Substitution,
    T,
    U,
    X,
    enclose_density,
    gaussian_poles,
    hermite_terms,
    lst_of_polynomial,
    substitute,
    substitution_for,
)
from .verdict import Decision, Nonnegativity, Run, at_precision

__all__ = ["ExactProof"]

#: Largest degree of G in x (and harmonic in u) the exact route builds; rates with a larger
#: common denominator (e.g. 1 and 1.0001) leave the decision to the numeric stages
MAX_DEGREE = 400

_RANGES = {"t": (sp.Integer(0), None), "x": (sp.Integer(0), sp.Integer(1)), "u": (None, None)}
_SAMPLE = {"t": sp.Integer(1), "x": sp.Rational(1, 2), "u": sp.Integer(0)}


def _variable(g: sp.Poly) -> str | None:
    """The one variable g depends on ('t', 'x' or 'u'), '' for a constant, None for several."""
    used = [name for name, degree in zip("txu", g.degree_list()) if degree > 0]
    if not used:
        return ""
    return used[0] if len(used) == 1 else None


def _univariate(g: sp.Poly, name: str) -> sp.Poly:
    return sp.Poly(g.as_expr(), {"t": T, "x": X, "u": U}[name], domain=sp.QQ)


def roots_in_range(g: sp.Poly, name: str) -> int:
    """Exact number of distinct real roots of the univariate g in the open range of ``name``."""
    p = _univariate(g, name).sqf_part()
    lo, hi = _RANGES[name]
    count = p.count_roots(lo, hi)
    for end in (lo, hi):
        if end is not None and p.eval(end) == 0:
            count -= 1
    return count


@dataclass(frozen=True)
class ExactProof(MarkdownDisplay):
    r"""A checkable proof of the sign of f from the factorisation of G (module docstring).

    Attributes
    ----------
    substitution : Substitution
        The variables x and u.
    G : sympy.Poly
        :math:`f(t) = G(t, x, u)/(1 + u^2)^N`.
    N : int
        The power of :math:`1 + u^2`.
    content : sympy.Rational
        The constant c of the factorisation.
    monomial : tuple of int
        :math:`(\alpha, \beta, \gamma)`: the positive factor
        :math:`t^\alpha x^\beta (1 + u^2)^\gamma`.
    factors : tuple of (sympy.Poly, int, str)
        Each factor :math:`g`, its multiplicity and its role: ``"touching"`` (even multiplicity),
        ``"positive"`` / ``"negative"`` (odd, one variable, no root in range), ``"rest"``.
    rest_certificate : Certificate or None
        The certificate of :math:`h = x^\sigma R/(1 + u^2)^e` when R involves several variables.
    rest_transform : tuple or None
        :math:`(\sigma, e)` for that h.
    touching_times : tuple of float
        Approximate times of the touching zeros (univariate even factors, and
        :math:`\omega t = \pi` when :math:`\deg_u G < 2N`).
    roots : tuple of (int, (Rational, Rational))
        For each univariate touching factor (by its index in ``factors``): exact isolating
        intervals (width at most 1e-12) of its real roots in the variable's range, each holding
        one root of multiplicity equal to the factor's (re-checked by :meth:`verify` with Sturm
        counts).
    """

    substitution: Substitution
    G: sp.Poly
    N: int
    content: sp.Rational
    monomial: tuple[int, int, int]
    factors: tuple[tuple[sp.Poly, int, str], ...]
    rest_certificate: Any = None
    rest_transform: tuple[int, int] | None = None
    touching_times: tuple[float, ...] = field(default=())
    roots: tuple[tuple[int, tuple[sp.Rational, sp.Rational]], ...] = field(default=())

    @property
    def rest(self) -> sp.Poly:
        rest = sp.Poly(1, T, X, U, domain=sp.QQ)
        for g, _, role in self.factors:
            if role == "rest":
                rest = rest * g
        return rest

    def sign(self) -> int:
        """Sign of c times the sign-definite factors."""
        sign = 1 if self.content > 0 else -1
        for _, _, role in self.factors:
            if role == "negative":
                sign = -sign
        return sign

    def verify(self, lst: RationalLST) -> bool:
        """Re-check the proof from the transform ``lst`` without any search.

        1. the exact transform of :math:`G/(1 + u^2)^N` equals ``lst``;
        2. :math:`c\\, t^\\alpha x^\\beta (1 + u^2)^\\gamma \\prod g^m = G`;
        3. touching factors have even multiplicity; every sign-definite factor is univariate,
           has no root in range (Sturm count) and the stated sign at a rational point;
        4. the sign is positive and R is 1, or R's sub-certificate is NONNEGATIVE, re-verifies,
           and is the certificate of :math:`x^\\sigma R/(1 + u^2)^e` up to a positive factor.

        A proof that is malformed (e.g. edited by hand) does not verify: False, not an error.
        """
        try:
            return self._verify(lst)
        except (ArithmeticError, ValueError, TypeError, sp.PolynomialError):
            return False

    def _verify(self, lst: RationalLST) -> bool:
        back = lst_of_polynomial(self.G, self.N, self.substitution)
        if back is None or sp.cancel(back - lst.expr) != 0:
            return False
        a, b, c = self.monomial
        product = sp.Poly(self.content * T ** a * X ** b * (1 + U ** 2) ** c, T, X, U,
                          domain=sp.QQ)
        for g, m, _ in self.factors:
            product = product * g ** m
        if product != self.G:
            return False
        for g, m, role in self.factors:
            if role == "touching" and m % 2:
                return False
            if role in ("positive", "negative"):
                name = _variable(g)
                if not name or m % 2 == 0 or roots_in_range(g, name) != 0:
                    return False
                value = _univariate(g, name).eval(_SAMPLE[name])
                if (value > 0) != (role == "positive") or value == 0:
                    return False
        for index, (a, b) in self.roots:
            g, _, role = self.factors[index]
            name = _variable(g)
            if role != "touching" or not name or _univariate(g, name).count_roots(a, b) != 1:
                return False
        if self.sign() < 0:
            return False
        rest = self.rest
        if rest.is_ground:
            return self.rest_certificate is None and rest.LC() == 1
        cert = self.rest_certificate
        if cert is None or cert.status is not Nonnegativity.NONNEGATIVE or not cert.verify():
            return False
        sigma, e = self.rest_transform
        h = lst_of_polynomial(rest, e, self.substitution, sigma)
        ratio = sp.cancel(h / cert.lst.expr) if h is not None else None
        return ratio is not None and ratio.is_number and ratio > 0

    def explain(self) -> str:
        lines = [f"substitution {self.substitution.describe()}: f(t) = G(t, x, u)"
                 + (f"/(1 + u^2)^{self.N}" if self.N else ""),
                 f"G = {sp.factor(self.G.as_expr())}"]
        for g, m, role in self.factors:
            text = sp.sstr(g.as_expr())
            if role == "touching":
                lines.append(f"({text})^{m}: even power, >= 0 (touching zeros)")
            elif role in ("positive", "negative"):
                lines.append(f"({text})^{m}: no root in the range of {_variable(g)}, {role}")
            else:
                lines.append(f"({text})^{m}: certified separately ({self.rest_certificate})")
        if self.substitution.omega and self.G.degree(U) < 2 * self.N:
            lines.append(f"deg_u G < {2 * self.N}: f = 0 where {self.substitution.omega} t = pi "
                         "(mod 2 pi), u = inf (touching zeros)")
        for index, (a, b) in self.roots:
            g, m, _ = self.factors[index]
            lines.append(f"root of multiplicity {m} of {sp.sstr(g.as_expr())} in "
                         f"[{a}, {b}]" if a != b else
                         f"root of multiplicity {m} of {sp.sstr(g.as_expr())} at {a}")
        if self.touching_times:
            lines.append("touching zeros near t = "
                         + ", ".join(f"{v:.10g}" for v in self.touching_times)
                         + (" (and periodically)" if self.substitution.omega else ""))
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The proof as Markdown: a bold title over :meth:`explain`, one bullet a line."""
        lines = self.explain().splitlines()
        return "**Exact proof of nonnegativity**\n\n" + "\n".join(f"- `{line}`" for line in lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "substitution": {"q": self.substitution.q, "omega": str(self.substitution.omega)},
            "G": sp.sstr(self.G.as_expr()), "N": self.N, "content": str(self.content),
            "monomial": list(self.monomial),
            "factors": [{"factor": sp.sstr(g.as_expr()), "multiplicity": m, "role": role}
                        for g, m, role in self.factors],
            "touching_times": list(self.touching_times),
            "roots": [{"factor": index, "interval": [str(a), str(b)],
                       "multiplicity": self.factors[index][1]} for index, (a, b) in self.roots],
            "rest_certificate": None if self.rest_certificate is None
            else self.rest_certificate.to_dict(),
        }


# ====================================================================== the decision
@dataclass
class _Factored:
    """The time-domain terms of f and the proof under construction."""

    terms: ExpTerms
    proof: ExactProof

    @property
    def sub(self) -> Substitution:
        return self.proof.substitution

    @property
    def has_touching(self) -> bool:
        return any(role == "touching" for _, _, role in self.proof.factors)


def substitution_degree(terms: ExpTerms, sub: Substitution) -> int:
    """The larger of the degree of G in x and the highest harmonic of omega."""
    degree_x = max(int(rate * sub.q) for rate in terms.rates())
    harmonic = max((int(b / sub.omega) for b in terms.frequencies() if b), default=0)
    return max(degree_x, harmonic)


def why_not_exact(run: Run) -> str | None:
    """Why the exact route did not decide a transform with (Gaussian-)rational poles, or None."""
    poles = gaussian_poles(run.ex.factors)
    if poles is None:
        return None
    terms = hermite_terms(run.ex.b, run.ex.a, poles)
    degree = substitution_degree(terms, substitution_for(terms))
    if degree > MAX_DEGREE:
        return (f"the exact factorisation would need degree {degree} in x = e^(-t/q) "
                f"(more than {MAX_DEGREE}: rates with a large common denominator)")
    return None


def factorise(run: Run) -> _Factored | None:
    """The exact factorisation of G, or None when a pole is not (Gaussian) rational, a complex
    pole dominates (the standard path says INVALID) or G would have degree > MAX_DEGREE.

    Computed once per run (the route and its fallback after INCONCLUSIVE share it)."""
    if not run.factored_done:
        run.factored, run.factored_done = _factorise(run), True
    return run.factored


def _factorise(run: Run) -> _Factored | None:
    ex = run.ex
    poles = gaussian_poles(ex.factors)
    if poles is None:
        return None
    real_rates = [-sp.Rational(z.x) for z, _ in poles if z.y == 0]
    complex_rates = [-sp.Rational(z.x) for z, _ in poles if z.y != 0]
    if complex_rates and (not real_rates or min(complex_rates) < min(real_rates)):
        return None
    terms = hermite_terms(ex.b, ex.a, poles)
    sub = substitution_for(terms)
    if substitution_degree(terms, sub) > MAX_DEGREE:
        return None  # rates or frequencies with large common denominators: G is too large
    G, N = substitute(terms, sub)
    (alpha, beta, power_u), core = G.terms_gcd()
    core = core * sp.Poly(U ** power_u, T, X, U, domain=sp.QQ)  # u changes sign: a factor
    gamma = 0
    one_plus = sp.Poly(1 + U ** 2, T, X, U, domain=sp.QQ)
    while True:
        quotient, remainder = sp.div(core, one_plus)
        if not remainder.is_zero or core.degree(U) < 2:
            break
        core, gamma = quotient, gamma + 1
    content, factor_list = sp.factor_list(core)
    factors: list[tuple[sp.Poly, int, str]] = []
    for g, m in factor_list:
        g = sp.Poly(g, T, X, U, domain=sp.QQ)
        if m % 2 == 0:
            factors.append((g, m, "touching"))
            continue
        name = _variable(g)
        if name and roots_in_range(g, name) == 0:
            value = _univariate(g, name).eval(_SAMPLE[name])
            factors.append((g, m, "positive" if value > 0 else "negative"))
        else:
            factors.append((g, m, "rest"))
    proof = ExactProof(sub, G, N, sp.Rational(content), (alpha, beta, gamma), tuple(factors))
    proof = replace(proof, roots=_isolated_roots(proof))
    return _Factored(terms, replace(proof, touching_times=_touching_times(proof)))


def _to_time(name: str, value: Any, sub: Substitution) -> mpmath.mpf:
    v = mp.mpf(sp.Rational(value).p) / sp.Rational(value).q
    if name == "t":
        return v
    if name == "x":
        return -sub.q * mp.log(v)
    omega = mp.mpf(sub.omega.p) / sub.omega.q
    t = 2 * mp.atan(v) / omega
    return t if t > 0 else t + 2 * mp.pi / omega


def _isolated_roots(proof: ExactProof) -> tuple[tuple[int, tuple[Any, Any]], ...]:
    """Exact isolating intervals (width <= 1e-12) of the roots in the open range of each
    univariate touching factor."""
    out = []
    for index, (g, _, role) in enumerate(proof.factors):
        name = _variable(g)
        if role != "touching" or not name:
            continue
        lo, hi = _RANGES[name]
        for (a, b), _ in _univariate(g, name).intervals(eps=sp.Rational(1, 10 ** 12), inf=lo,
                                                        sup=hi):
            if not (a == b and a in (lo, hi)):
                out.append((index, (a, b)))
    return tuple(out)


def _touching_times(proof: ExactProof) -> tuple[float, ...]:
    """The times of the isolated touching roots (``proof.roots``), and omega t = pi when
    deg_u G < 2N."""
    sub = proof.substitution
    times = [float(_to_time(_variable(proof.factors[index][0]), (a + b) / 2, sub))
             for index, (a, b) in proof.roots]
    if sub.omega and proof.G.degree(U) < 2 * proof.N:
        # at omega t = pi (u = inf) f is the coefficient of u^(2N) in G: here 0, a touching zero
        times.append(float(mp.pi / (mp.mpf(sub.omega.p) / sub.omega.q)))
    return tuple(sorted(times))


def _negative_points(R: sp.Poly, name: str, sign: int) -> list[sp.Rational]:
    """Rational points of the range where sign * R < 0 exactly (R univariate, square-free).

    The roots in the closed range are isolated (sympy's exact real-root isolation restricted to
    the range); one point is taken in each gap between them and the ends: R has one sign on each
    gap, so every sign region of the open range is sampled.  A root at an end of the range is
    left out (it is not in the open range); intervals are refined only when one touches an end
    that is itself a root.
    """
    p = _univariate(R, name)
    lo, hi = _RANGES[name]
    ends_are_roots = [end for end in (lo, hi) if end is not None and p.eval(end) == 0]
    for digits in (None, 6, 15, 30, 60, 120):
        eps = None if digits is None else sp.Rational(1, 10 ** digits)
        intervals = sorted(a for a, _ in p.intervals(eps=eps, inf=lo, sup=hi))
        inside = [(a, b) for a, b in intervals if not (a == b and a in ends_are_roots)]
        if any(a != b and (a in ends_are_roots or b in ends_are_roots) for a, b in inside):
            continue  # an interval still holds an end that is a root: refine
        left = lo if lo is not None else (inside[0][0] - 1 if inside else sp.Integer(-1))
        right = hi if hi is not None else (inside[-1][1] + 1 if inside else sp.Integer(1))
        ends = [left] + [end for interval in inside for end in interval] + [right]
        candidates = [(ends[k] + ends[k + 1]) / 2 for k in range(0, len(ends), 2)]
        points = [v for v in candidates if sign * p.eval(v) < 0]
        if points:
            return points
    return []


def _witness_verdict(fac: _Factored, times: list[mpmath.mpf], run: Run, method: str
                     ) -> Decision | None:
    for t in times:
        for factor in (1, 2, 4):
            with at_precision(run.dps * factor):
                enc = enclose_density(fac.terms, t)
                if upper_end(enc) < 0:
                    return Decision(Nonnegativity.NEGATIVE, method, witness=t,
                                    enclosure=(lower_end(enc), upper_end(enc)))
    return None


def decide_by_factorisation(run: Run, sub_certify: Callable[..., Any],
                            only_if_informative: bool = True) -> tuple[Decision, ExactProof | None
                                                                       ] | None:
    """The exact decision of the module docstring; None when it does not apply.

    With ``only_if_informative`` the decision is skipped (None) when G is square-free and
    involves several variables, the case where it would hand the numeric stages f itself.
    """
    fac = factorise(run)
    if fac is None:
        return None
    run.check_time()
    rest = fac.proof.rest
    name = _variable(rest)
    sign = fac.proof.sign()
    base = f"exact factorisation ({fac.sub.describe()})"
    if name == "":
        if sign > 0:
            return Decision(Nonnegativity.NONNEGATIVE, base), fac.proof
        return None  # f <= 0 everywhere cannot have mass 1; leave it to the standard path
    if name is not None:
        points = _negative_points(rest, name, sign)
        verdict = _witness_verdict(fac, [_to_time(name, v, fac.sub) for v in points], run,
                                   f"{base}: sign change in {name}")
        return (verdict, None) if verdict is not None else None
    if only_if_informative and not fac.has_touching and all(
            role == "rest" for _, _, role in fac.proof.factors):
        # f itself is the square-free rest: the numeric stages get it, and when it lives in
        # (t, x) or (x, u) alone it has no touching zero, so their boxes may shrink to the
        # working precision (a dip of 1e-30 is then found in the first pass)
        if rest.degree(U) == 0 or rest.degree(T) == 0:
            run.min_width = min(run.min_width, max(10.0 ** -(run.dps - 8), 1e-300))
        return None
    return _decide_rest(fac, rest, sign, run, sub_certify, base)


def _decide_rest(fac: _Factored, rest: sp.Poly, sign: int, run: Run,
                 sub_certify: Callable[..., Any], base: str
                 ) -> tuple[Decision, ExactProof | None] | None:
    """R involves several variables: certify h = x^sigma (sign R)/(1 + u^2)^e numerically."""
    signed = rest * sign
    e = (signed.degree(U) + 1) // 2
    for sigma in range(0, 200):
        h = lst_of_polynomial(signed, e, fac.sub, sigma)
        if h is None:
            continue
        mass = h.subs(sp.Symbol("s"), 0)
        if mass > 0:
            break
    else:
        return Decision(Nonnegativity.INCONCLUSIVE, base,
                        reason="no decaying form of the square-free part with positive mass"
                        ), None
    lst = RationalLST.from_expr(sp.cancel(h / mass), sp.Symbol("s"))
    cert = sub_certify(lst)
    method = f"{base} + {cert.method} on the square-free part"
    if cert.status is Nonnegativity.NONNEGATIVE:
        if sign < 0:
            return None
        proof = replace(fac.proof, rest_certificate=cert, rest_transform=(sigma, e))
        return Decision(Nonnegativity.NONNEGATIVE, method), proof
    if cert.status is Nonnegativity.NEGATIVE:
        w = mp.mpf(cert.witness)
        verdict = _witness_verdict(fac, [w, w * (1 + mp.mpf(2) ** -40), w * (1 - mp.mpf(2) ** -40)],
                                   run, method)
        if verdict is not None:
            return verdict, None
    return Decision(Nonnegativity.INCONCLUSIVE, method,
                    reason=f"square-free part {sp.sstr(rest.as_expr())}: "
                           f"{cert.status.value} ({cert.reason or cert.method})"), None

