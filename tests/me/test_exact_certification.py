"""The exact certification route (symq.me.certification.exponential / factorisation / corpus).

Every check compares with a computation that does not go through the code under test: the
corpus densities are evaluated from their time-domain expressions in ``t`` (mpmath, 50-60
digits), their transforms are checked against exact moments from sympy ``integrate`` and
against mpmath's Talbot inversion, the zeros of touching cases are the closed-form ones
(ln(4/3), t = 1, cos t = 1/2, ...), the transforms of the "way back" are written by hand, and
witnesses of NEGATIVE answers are checked against the time-domain expression at 60 digits.
"""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction
from functools import cache

import mpmath
import pytest
import sympy as sp
from me_references import classical_pade, density_by_residues, irrational_touching

from symq.core.precision import working_dps
from symq.me.certification import Certificate, Nonnegativity, certify
from symq.me.certification.corpus import corpus
from symq.me.certification.exponential import TIME as T_SYM
from symq.me.certification.exponential import (
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
from symq.me.certification.factorisation import ExactProof
from symq.me.transform import RationalLST

NONNEG, NEG, INCONCL = (Nonnegativity.NONNEGATIVE, Nonnegativity.NEGATIVE,
                        Nonnegativity.INCONCLUSIVE)
s = sp.Symbol("s")
Q = sp.Rational

CASES = {case.name: case for case in corpus()}
NAMES = list(CASES)


# ------------------------------------------------------------------------------ helpers
def mpq(q) -> mpmath.mpf:
    """A sympy rational as an mpf at the current precision."""
    q = sp.Rational(q)
    return mpmath.mpf(int(q.p)) / int(q.q)


@cache
def density(name: str):
    """The unnormalised density of a corpus case, from its time-domain expression (mpmath)."""
    return sp.lambdify(T_SYM, CASES[name].density, modules="mpmath")


@cache
def mass(name: str, dps: int = 60) -> mpmath.mpf:
    """Total mass of the time-domain expression by mpmath quadrature."""
    f = density(name)
    with mpmath.workdps(dps):
        points = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, mpmath.inf]
        return +mpmath.quad(f, points)


@cache
def certificate(name: str) -> Certificate:
    return certify(CASES[name].lst)


def transform_at(lst: RationalLST, z):
    """N(z)/D(z) from the ascending coefficients, in mpmath."""
    num = mpmath.polyval([mpq(c) for c in reversed(lst.numerator)], z)
    den = mpmath.polyval([mpq(c) for c in reversed(lst.denominator)], z)
    return num / den


def exp_terms(lst: RationalLST):
    """The exponential module's exact time-domain form, from the factorisation of D over Q."""
    _, factor_list = lst.D.factor_list()
    factors = []
    for poly, m in factor_list:
        coefficients = [Fraction(int(c.p), int(c.q)) for c in reversed(poly.all_coeffs())]
        factors.append(([c / coefficients[-1] for c in coefficients], int(m)))
    poles = gaussian_poles(factors)
    assert poles is not None
    numerator = [Fraction(int(c.p), int(c.q)) for c in lst.numerator]
    denominator = [Fraction(int(c.p), int(c.q)) for c in lst.denominator]
    return hermite_terms(numerator, denominator, poles)


def eval_G(G: sp.Poly, t, x, u):
    return sum(mpq(c) * t ** j * x ** k * u ** l for (j, k, l), c in G.terms())


def polyTXU(expr) -> sp.Poly:
    return sp.Poly(expr, T, X, U, domain=sp.QQ)


HALF = Q(1, 2)


def mixed_zero(c: sp.Rational = HALF) -> mpmath.mpf:
    """The touching zero of t - 1 + c e^{-t} (60 digits)."""
    with mpmath.workdps(60):
        return mpmath.findroot(lambda t: t - 1 + mpq(c) * mpmath.exp(-t), mpmath.mpf("0.77"))


# ======================================================== 1. the corpus is what it says
MOMENT_SAMPLE = ["x-square c=5, rate 1/2", "t-squares K=3", "(t-1/2)^2 (t^2+1)",
                 "mixed (t-2+e^-t)^2", "zero at 0: e^-t - e^-2t", "x-dip eps=1e-6",
                 "t-dip eps=1e-20", "mixed-dip eps=1e-10"]
TALBOT_SAMPLE = ["trig (cos t - cos 2t)^2", "mixed (1+cos t)(1-2e^-t)^2", "trig-dip eps=1e-10",
                 "trig (1+cos t)^2, rate 1/2"]


@pytest.mark.parametrize("name", MOMENT_SAMPLE)
def test_corpus_transform_has_the_moments_of_the_time_domain_expression(name):
    case = CASES[name]
    raw = [sp.integrate(sp.expand(T_SYM ** k * case.density), (T_SYM, 0, sp.oo))
           for k in range(4)]
    assert all(r.is_Rational for r in raw), raw
    assert case.lst.moments(3) == [r / raw[0] for r in raw[1:]]


@pytest.mark.parametrize("name", TALBOT_SAMPLE)
def test_corpus_transform_inverts_to_the_time_domain_expression(name):
    case = CASES[name]
    f, m = density(name), mass(name)
    with mpmath.workdps(40):
        for t in ("0.5", "1.7", "4.2"):
            t = mpmath.mpf(t)
            inverse = mpmath.invertlaplace(lambda z: transform_at(case.lst, z), t,
                                           method="talbot")
            expected = f(t) / m
            assert abs(inverse - expected) < mpmath.mpf(10) ** -30 * (1 + abs(expected))


def _undipped_zero(name: str) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The touching zero of the undipped case and the closed-form value of the dipped density
    there (both at 60 digits)."""
    case = CASES[name]
    with mpmath.workdps(60):
        eps = mpq(case.depth)
        if case.family == "x-square dip":  # x((1 - 4x/3)^2 - eps x) at x = 3/4
            t0 = mpmath.log(mpmath.mpf(4) / 3)
            factor = mpmath.mpf(7) / 4 if "times (1+e^-t)" in name else 1  # (1 + x) at x = 3/4
            return t0, -eps * mpmath.mpf(9) / 16 * factor
        if case.family == "t-square dip":  # e^{-t}(P(t) - eps) at t = 1, P(1) = 0 for both
            return mpmath.mpf(1), -eps * mpmath.exp(-1)
        if case.family == "trig-square dip":  # e^{-t}(1 + cos t - eps) at t = pi
            return +mpmath.pi, -eps * mpmath.exp(-mpmath.pi)
        if case.family == "mixed-square dip":  # x((t - 1 + x/2)^2 - eps x) at its zero
            t0 = mixed_zero()
            return t0, -eps * mpmath.exp(-2 * t0)
        if case.family == "zero at 0 dip":  # e^{-t} - (1 + eps) e^{-2t} near t = 0
            t0 = mpmath.mpf(10) ** -20  # Taylor: -eps + (1 + 2 eps) t + O(t^2)
            return t0, -eps + (1 + 2 * eps) * t0
    raise AssertionError(case.family)


@pytest.mark.parametrize("name", [n for n in NAMES if not CASES[n].is_density])
def test_dipping_corpus_case_is_negative_at_the_undipped_touching_zero(name):
    t0, closed_form = _undipped_zero(name)
    with mpmath.workdps(60):
        value = density(name)(t0)
        assert value < 0
        assert abs(value - closed_form) <= mpmath.mpf(10) ** -50 + abs(closed_form) * 1e-20


TOUCHING_ZEROS = {  # closed-form zeros of the touching cases
    "x-square c=4/3": [lambda: mpmath.log(mpmath.mpf(4) / 3)],
    "x-square c=5, rate 1/2": [lambda: 2 * mpmath.log(5)],
    "t-square (t-1)^2": [lambda: mpmath.mpf(1)],
    "trig 1+cos t": [lambda: +mpmath.pi],
    "trig (1-2cos t)^2": [lambda: mpmath.pi / 3, lambda: 5 * mpmath.pi / 3],
    "trig (cos t - cos 2t)^2": [lambda: 2 * mpmath.pi / 3, lambda: 2 * mpmath.pi],
    "mixed (t-1+e^-t/2)^2": [mixed_zero],
    "x-squares K=4": [lambda c=c: mpmath.log(mpq(c)) for c in (Q(4, 3), 2, 3, 5)],
    "t-squares K=4 times (t+1)": [lambda k=k: mpmath.mpf(k) for k in (1, 2, 3, 4)],
}


@pytest.mark.parametrize("name", [n for n in NAMES if CASES[n].is_density])
def test_touching_corpus_case_has_no_negative_value_and_touches_zero(name):
    f = density(name)
    with mpmath.workdps(40):
        grid = [f(mpmath.mpf(k) / 16) for k in range(1, 321)]  # t in (0, 20]
        assert min(grid) >= 0
        for zero in TOUCHING_ZEROS.get(name, []):
            t0 = zero()
            assert abs(f(t0)) < mpmath.mpf(10) ** -35
            assert abs(mpmath.diff(f, t0)) < mpmath.mpf(10) ** -30  # a double zero


def test_touching_corpus_expressions_are_squares_times_positive_parts():
    # sympy factorisation of the time-domain expressions, with e^{-t} and cos t as symbols:
    # an even power carries the zero and what is left is a power of e^{-t} (positive)
    xs, cs = sp.symbols("x c")
    for name in ["x-square c=4/3", "t-square (t-1)^2", "trig (1-2cos t)^2",
                 "mixed (t-1+e^-t/2)^2", "x-squares K=3", "t-squares K=2",
                 "mixed (t-1)^2 (1-3/2 e^-t)^2"]:
        expr = CASES[name].density.subs({sp.exp(-T_SYM): xs, sp.cos(T_SYM): cs})
        assert expr.free_symbols <= {xs, cs, T_SYM}, (name, expr)
        _, factors = sp.factor_list(sp.expand(expr), xs, cs, T_SYM)
        even = [g for g, m in factors if m % 2 == 0]
        odd = [g for g, m in factors if m % 2 == 1]
        assert even, name
        assert all(g == xs for g in odd), (name, odd)


# ========================================================== 2. certify decides the corpus
@pytest.mark.parametrize("name", NAMES)
def test_certify_decides_the_corpus_case(name):
    case = CASES[name]
    cert = certificate(name)
    if case.is_density:
        assert cert.status is NONNEG, cert
        assert cert.verify() is True
        return
    assert cert.status is NEG, cert
    assert cert.verify() is True
    lo, hi = cert.enclosure
    assert lo <= hi < 0
    with mpmath.workdps(60):
        w = mpmath.mpf(cert.witness)
        assert w > 0
        value = density(name)(w)
        assert value < 0, (cert, value)
        normalised = value / mass(name)
        slack = mpmath.mpf(10) ** -45
        assert lo - slack <= normalised <= hi + slack, (cert, normalised)


# ==================================================================== 3. tampered proofs
def _proof(name: str) -> ExactProof:
    cert = certificate(name)
    assert cert.proof is not None
    assert cert.proof.verify(CASES[name].lst)
    return cert.proof


def test_verify_fails_when_a_touching_multiplicity_is_changed():
    proof = _proof("x-square c=4/3")
    lst = CASES["x-square c=4/3"].lst
    (g, m, role), = proof.factors
    assert (m, role) == (2, "touching")
    for tampered in [(g, 1, role), (g, 2, "positive"), (g, 1, "positive"), (g, 4, role)]:
        assert proof.verify(lst) and not dataclasses.replace(
            proof, factors=(tampered,)).verify(lst), tampered


def test_verify_fails_when_the_content_sign_is_changed():
    for name in ["x-square c=4/3", "trig (1-2cos t)^2", "mixed (1+cos t)(1-2e^-t)^2"]:
        proof = _proof(name)
        assert not dataclasses.replace(proof, content=-proof.content).verify(CASES[name].lst)


def test_verify_fails_when_G_is_changed():
    for name in ["x-square c=4/3", "t-squares K=2", "trig (cos t - cos 2t)^2"]:
        proof = _proof(name)
        lst = CASES[name].lst
        assert not dataclasses.replace(proof, G=proof.G + polyTXU(X ** 5)).verify(lst)
        assert not dataclasses.replace(proof, G=proof.G * 2).verify(lst)
    # the power of 1 + u^2 (for omega = 0, u = tan(0) = 0 and N does not matter)
    proof = _proof("trig (cos t - cos 2t)^2")
    assert proof.substitution.omega == 1
    assert not dataclasses.replace(proof, N=proof.N + 1).verify(
        CASES["trig (cos t - cos 2t)^2"].lst)


def test_verify_fails_for_another_transform():
    proof = _proof("x-square c=4/3")
    for other in ["x-square c=3/2", "x-dip eps=1e-30", "t-square (t-1)^2"]:
        assert not proof.verify(CASES[other].lst)
    for name, other in [("x-square c=4/3", "x-dip eps=1e-30"),
                        ("trig (1-2cos t)^2", "trig-dip eps=1e-2"),
                        ("trig 1+cos t", "trig-dip eps=1e-30"),  # exact pair rule replayed
                        ("x-dip eps=1e-6", "x-square c=4/3"),  # witness re-enclosed
                        ("mixed-dip eps=1e-2", "mixed (t-1+e^-t/2)^2")]:
        cert = certificate(name)
        assert cert.verify()
        assert not dataclasses.replace(cert, lst=CASES[other].lst).verify(), (name, other)


def test_verify_fails_without_the_proof():
    cert = certificate("x-square c=4/3")
    assert not dataclasses.replace(cert, proof=None).verify()


def test_verify_fails_for_a_witness_where_f_is_positive():
    cert = certificate("x-dip eps=1e-6")
    with mpmath.workdps(60):
        assert density("x-dip eps=1e-6")(mpmath.mpf(3)) > 0
    assert not dataclasses.replace(cert, witness=mpmath.mpf(3)).verify()


def test_verify_fails_when_the_status_contradicts_the_proof():
    cert = certificate("x-square c=4/3")
    assert cert.proof is not None
    assert not dataclasses.replace(cert, status=NEG).verify()
    assert not dataclasses.replace(cert, status=Nonnegativity.INVALID).verify()


def test_verify_fails_for_a_false_enclosure():
    cert = certificate("x-dip eps=1e-6")
    fake = dataclasses.replace(cert, enclosure=(mpmath.mpf(5), mpmath.mpf(6)))
    assert not fake.verify()


def _rest_case():
    # e^{-t}(1 - 4/3 e^{-t})^2 (1 + t e^{-t}): square times a positive part in (t, x) that goes
    # to the numeric stages.  Transform by hand: x^a t^j -> j!/(s + a)^(j+1)
    expr = (1 / (s + 1) - Q(8, 3) / (s + 2) + Q(16, 9) / (s + 3)
            + 1 / (s + 2) ** 2 - Q(8, 3) / (s + 3) ** 2 + Q(16, 9) / (s + 4) ** 2)
    expr = sp.cancel(sp.together(expr))
    return RationalLST.from_expr(sp.cancel(expr / expr.subs(s, 0)))


def test_verify_fails_for_a_swapped_rest_certificate():
    lst = _rest_case()
    cert = certify(lst)
    assert cert.status is NONNEG and cert.verify()
    proof = cert.proof
    assert proof is not None and proof.rest_certificate is not None
    assert [m for _, m, role in proof.factors if role == "touching"] == [2]
    # the rest is 1 + t x (up to a positive constant)
    assert sp.cancel(proof.rest.as_expr() / (1 + T * X)).is_number
    other = certify(([2], [2, 3, 1]))  # 2/((s+1)(s+2)): a density, a different one
    assert other.status is NONNEG
    assert not dataclasses.replace(proof, rest_certificate=other).verify(lst)
    sigma, e = proof.rest_transform
    assert not dataclasses.replace(proof, rest_transform=(sigma + 1, e)).verify(lst)
    assert not dataclasses.replace(proof, rest_certificate=None).verify(lst)


def test_verify_fails_for_a_broken_branch_and_bound_partition():
    # e^{-t} + (1/2) e^{-2t} cos(sqrt 3 t) > 0: poles -2 +- i sqrt 3 are not Gaussian rational
    F = sp.cancel(sp.together(1 / (s + 1) + Q(1, 2) * (s + 2) / ((s + 2) ** 2 + 3)))
    cert = certify(RationalLST.from_expr(sp.cancel(F / F.subs(s, 0))))
    assert cert.status is NONNEG and cert.method == "branch and bound" and cert.verify()
    assert not dataclasses.replace(cert, partition=()).verify()
    (a, b), *rest = cert.partition
    shrunk = ((a + (b - a) / 4, b), *rest)
    assert not dataclasses.replace(cert, partition=shrunk).verify()


# ================================================================ 4. the substitution
SUBSTITUTION_CASES = {  # name: (q, omega) read off the expression
    "x-square c=5, rate 1/2": (2, 0),
    "trig (cos t - cos 2t)^2": (1, 1),
    "mixed (1+cos t)(1-2e^-t)^2": (1, 1),
}


@pytest.mark.parametrize("name", list(SUBSTITUTION_CASES))
def test_substitute_reproduces_the_time_domain_density(name):
    case = CASES[name]
    terms = exp_terms(case.lst)
    sub = substitution_for(terms)
    assert (sub.q, sub.omega) == SUBSTITUTION_CASES[name]
    G, N = substitute(terms, sub)
    f, m = density(name), mass(name)
    with mpmath.workdps(50):
        omega = mpq(sub.omega)
        for t in ("0.7", "2.3", "5.1"):  # omega t / 2 in (0, pi/2) or (pi/2, pi) but not pi/2
            t = mpmath.mpf(t)
            assert abs(omega * t - mpmath.pi) > mpmath.mpf("0.5")
            x, u = mpmath.exp(-t / sub.q), mpmath.tan(omega * t / 2)
            value = eval_G(G, t, x, u) / (1 + u ** 2) ** N
            assert abs(value - f(t) / m) < mpmath.mpf(10) ** -45
            with working_dps(50, intervals=True):
                enc = enclose_density(terms, t)
            lo, hi = (mpmath.mp.make_mpf(v) for v in enc._mpi_)
            assert hi - lo < mpmath.mpf(10) ** -40
            assert lo <= f(t) / m <= hi


def test_lst_of_polynomial_matches_hand_written_transforms():
    sub = Substitution(1, Q(1))
    cases = [  # (H, e, shift, h(t), transform by hand)
        (1 - U ** 2, 1, 1, "e^-t cos t", (s + 1) / ((s + 1) ** 2 + 1)),
        (2 * U, 1, 1, "e^-t sin t", 1 / ((s + 1) ** 2 + 1)),
        (T * X ** 2, 0, 0, "t e^-2t", 1 / (s + 2) ** 2),
        (X * (1 + U ** 2), 1, 2, "e^-3t", 1 / (s + 3)),
        (4 * X, 1, 0, "(1 + cos t) 2 e^-t", 2 * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1))),
    ]
    for H, e, shift, _, expected in cases:
        got = lst_of_polynomial(polyTXU(H), e, sub, shift)
        assert sp.cancel(got - expected) == 0, (H, got)
    assert lst_of_polynomial(polyTXU(1 + X), 0, sub) is None  # the constant does not decay
    half = Substitution(2, Q(0))
    got = lst_of_polynomial(polyTXU(X ** 3), 0, half)  # x = e^{-t/2}
    assert sp.cancel(got - 1 / (s + Q(3, 2))) == 0


# ================================================================ 5. touching times
def _assert_zeros(times, expected):
    got = sorted(float(v) for v in times)
    assert len(got) == len(expected), (got, expected)
    for g, e in zip(got, sorted(float(v) for v in expected)):
        assert g == pytest.approx(e, abs=1e-9)


def test_touching_times_are_the_known_zeros():
    with mpmath.workdps(30):
        known = {
            "x-square c=4/3": [mpmath.log(mpmath.mpf(4) / 3)],
            "x-square c=5, rate 1/2": [2 * mpmath.log(5)],
            "t-square (t-1)^2": [1],
            "(t-1/2)^2 (t^2+1)": [0.5],
            "x-squares K=4": [mpmath.log(mpmath.mpf(4) / 3), mpmath.log(2), mpmath.log(3),
                              mpmath.log(5)],
            "t-squares K=3": [1, 2, 3],
            "mixed (t-1)^2 (1-3/2 e^-t)^2": [mpmath.log(mpmath.mpf(3) / 2), 1],
            "mixed (1+cos t)(1-2e^-t)^2": [mpmath.log(2), +mpmath.pi],  # 1 + cos t = 0 at pi
            "trig (1+cos t)^4": [+mpmath.pi],
        }
    for name, zeros in known.items():
        _assert_zeros(_proof(name).touching_times, zeros)


@pytest.mark.parametrize("name", ["trig (1-2cos t)^2", "trig (cos t - cos 2t)^2",
                                  "mixed (1+cos t)(1-2e^-t)^2"])
def test_listed_trigonometric_touching_times_are_zeros_of_the_density(name):
    times = _proof(name).touching_times
    f = density(name)
    with mpmath.workdps(50):
        for t0 in times:
            assert t0 > 0
            assert abs(f(mpmath.mpf(t0))) < 1e-18, (name, t0)
    if name == "trig (1-2cos t)^2":  # cos t = 1/2: pi/3 and 5 pi/3 in the first period
        _assert_zeros(times, [math.pi / 3, 5 * math.pi / 3])
    if name == "trig (cos t - cos 2t)^2":  # cos t in {1, -1/2}
        _assert_zeros(times, [2 * math.pi / 3, 4 * math.pi / 3, 2 * math.pi])


def test_touching_times_are_empty_when_the_even_factor_has_several_variables():
    # (2t + x - 2)^2: the zero t ~ 0.768 is on a curve, not a root of a univariate factor
    proof = _proof("mixed (t-1+e^-t/2)^2")
    (g, m, role), = proof.factors
    assert m == 2 and role == "touching" and len(g.free_symbols) == 2
    assert proof.touching_times == ()
    # the zero itself is real: the time-domain expression vanishes at the root of t-1+x/2
    with mpmath.workdps(60):
        assert abs(density("mixed (t-1+e^-t/2)^2")(mixed_zero())) < mpmath.mpf(10) ** -55


# ================================================================= 6. outside the exact class
def test_pade_fit_with_an_irreducible_cubic_is_decided_numerically():
    moments = [sp.nsimplify(sp.exp(Q(k * (k - 1), 2) * Q(1, 5)).evalf(40), rational=True)
               for k in range(1, 6)]  # lognormal, mean 1, sigma^2 = 0.2
    lst = classical_pade(moments, 3)
    assert lst.moments(5) == moments
    _, factors = sp.factor_list(lst.D.as_expr(), s)
    assert [(sp.degree(g, s), m) for g, m in factors] == [(3, 1)]  # irreducible over Q
    cert = certify(lst)
    assert cert.proof is None
    assert cert.status is NEG and cert.method == "branch and bound"
    assert cert.verify()
    f = density_by_residues(lst)
    with mpmath.workdps(60):
        value = f(cert.witness)
        assert value < 0
        lo, hi = cert.enclosure
        assert lo - mpmath.mpf(10) ** -45 <= value <= hi + mpmath.mpf(10) ** -45


def test_non_gaussian_complex_pair_is_decided_by_branch_and_bound():
    # f = e^{-t} + (1/2) e^{-2t} cos(sqrt(3) t) >= e^{-t} - e^{-2t}/2 > 0
    F = sp.cancel(sp.together(1 / (s + 1) + Q(1, 2) * (s + 2) / ((s + 2) ** 2 + 3)))
    cert = certify(RationalLST.from_expr(sp.cancel(F / F.subs(s, 0))))
    assert cert.proof is None
    assert cert.status is NONNEG and "branch and bound" in cert.method and cert.verify()


def test_irrational_touching_case_is_inconclusive_with_a_reason():
    # (1 + cos t)(e^{-t} + e^{-(3 - sqrt 2) t} + e^{-(3 + sqrt 2) t}) >= 0 with zeros at odd
    # multiples of pi: poles -3 -+ sqrt(2) (-+ i) are not Gaussian rational
    lst = irrational_touching()
    _, factors = sp.factor_list(lst.D.as_expr(), s)
    assert any(sp.degree(g, s) == 4 for g, _ in factors)
    cert = certify(lst, time_budget=5)
    assert cert.status is INCONCL and cert.proof is None
    assert cert.reason and "touching" in cert.reason
    assert not cert.verify()
    # the honest answer: the density is >= 0 and touches zero at t = pi (so no witness exists)
    with mpmath.workdps(50):
        a1, a2 = 3 - mpmath.sqrt(2), 3 + mpmath.sqrt(2)

        def f(t):
            return (1 + mpmath.cos(t)) * (mpmath.exp(-t) + mpmath.exp(-a1 * t)
                                          + mpmath.exp(-a2 * t))
        assert abs(f(mpmath.pi)) < mpmath.mpf(10) ** -45
        assert min(f(mpmath.mpf(k) / 10) for k in range(1, 200)) >= 0


def test_irrational_real_poles_leave_the_exact_route():
    # f = e^{-(3 - sqrt 2) t} (1 - e^{-2 sqrt 2 t}) * const: poles -3 -+ sqrt 2
    F = 1 / (s + 3 - sp.sqrt(2)) - 1 / (s + 3 + sp.sqrt(2))
    F = sp.cancel(sp.expand(sp.together(F)))
    lst = RationalLST.from_expr(sp.cancel(F / F.subs(s, 0)))
    _, factors = sp.factor_list(lst.D.as_expr(), s)
    assert [sp.expand(g) for g, _ in factors] == [s ** 2 + 6 * s + 7]
    cert = certify(lst)
    assert cert.proof is None and cert.status is NONNEG and cert.verify()


# ===================================================================== 7. to_dict and JSON
def test_exact_certificate_to_dict_is_json_and_holds_the_factorisation():
    cert = certificate("x-square c=4/3")
    data = json.loads(json.dumps(cert.to_dict()))
    assert data["status"] == "NONNEGATIVE"
    proof = data["proof"]
    assert proof is not None
    (factor,) = proof["factors"]
    assert factor["multiplicity"] == 2 and factor["role"] == "touching"
    # the factor is (up to a constant) 1 - (4/3) x, the square of the time-domain expression
    xs = sp.Symbol("x")
    g = sp.sympify(factor["factor"], locals={"x": xs})
    assert sp.cancel(g / (1 - Q(4, 3) * xs)).is_number
    assert proof["substitution"] == {"q": 1, "omega": "0"}
    # the content times x times the square is G, and 1/(mass) of the time-domain expression
    G = sp.sympify(proof["G"], locals={"x": xs})
    with mpmath.workdps(40):
        t0 = mpmath.mpf("0.9")
        value = mpmath.mpf(str(sp.N(G.subs(xs, sp.exp(-sp.Rational(9, 10))), 45)))
        assert abs(value - density("x-square c=4/3")(t0) / mass("x-square c=4/3")) < 1e-35


def test_nested_rest_certificate_is_json_serialisable():
    cert = certify(_rest_case())
    data = json.loads(json.dumps(cert.to_dict()))
    roles = sorted(f["role"] for f in data["proof"]["factors"])
    assert roles == ["rest", "touching"]
    assert data["proof"]["rest_certificate"]["status"] == "NONNEGATIVE"
    # explain() names the factorisation
    assert "even power" in cert.explain() and "certified separately" in cert.explain()


def test_isolated_roots_of_touching_factors_hold_the_known_roots_and_are_rechecked():
    # (cos t - cos 2t)^2 e^{-t} with u = tan(t/2): cos t = 1 (u = 0) and cos t = -1/2 (u^2 = 3)
    proof = _proof("trig (cos t - cos 2t)^2")
    found = sorted(float((a + b) / 2) for _, (a, b) in proof.roots)
    assert found == pytest.approx([-math.sqrt(3), 0.0, math.sqrt(3)], abs=1e-8)
    for index, (a, b) in proof.roots:
        assert proof.factors[index][2] == "touching" and b - a <= Q(1, 10**9)
    lst = CASES["trig (cos t - cos 2t)^2"].lst
    assert proof.verify(lst)
    (index, _), *rest = proof.roots
    moved = dataclasses.replace(proof, roots=((index, (Q(5), Q(6))), *rest))  # no root there
    assert not moved.verify(lst)
