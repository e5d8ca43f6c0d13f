"""Certified nonnegativity of ME densities (symq.me.certification: its procedure and exact rules).

Evidence is independent of the certifier: densities are built from explicit time-domain formulas
(sums of t^j e^{-lt}, e^{-at} cos bt, ...) whose Laplace transforms are written by hand, and every
verdict is checked against that formula at 50 digits (the witness of a NEGATIVE answer, a dense
sample for a NONNEGATIVE one).  Transforms given only as N/D (the Padé fit) are inverted
independently by sympy roots + residues and cross-checked with mpmath's Talbot inversion.
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from me_references import classical_pade, density_by_residues

import symq.me.certification as certify_module
from symq.core.errors import InvalidParameter, SymqError
from symq.me.transform import RationalLST

certify = certify_module.certify
Certificate = certify_module.Certificate
Nonnegativity = certify_module.Nonnegativity

s = sp.Symbol("s")
Q = sp.Rational
NONNEG, NEG, INVALID, INCONCL = (Nonnegativity.NONNEGATIVE, Nonnegativity.NEGATIVE,
                                 Nonnegativity.INVALID, Nonnegativity.INCONCLUSIVE)


# ------------------------------------------------------------------------ independent densities
class Density:
    """f(t) = sum of terms, each ("exp", c, l, j) = c t^j e^{-l t},
    ("cos", c, a, b) = c e^{-a t} cos(b t) or ("sin", c, a, b) = c e^{-a t} sin(b t).

    The transform is written term by term (L{t^j e^{-lt}} = j!/(s+l)^{j+1},
    L{e^{-at} cos bt} = (s+a)/((s+a)^2+b^2), L{e^{-at} sin bt} = b/((s+a)^2+b^2)) and the
    density is normalised to mass 1 exactly.
    """

    def __init__(self, *terms):
        self.terms = [tuple(Q(x) if i else x for i, x in enumerate(term)) for term in terms]
        F = 0
        for kind, c, a, b in self.terms:
            if kind == "exp":
                F += c * sp.factorial(b) / (s + a) ** (b + 1)
            elif kind == "cos":
                F += c * (s + a) / ((s + a) ** 2 + b ** 2)
            else:
                F += c * b / ((s + a) ** 2 + b ** 2)
        F = sp.cancel(sp.together(F))
        self.mass = F.subs(s, 0)
        assert self.mass > 0
        self.lst = RationalLST.from_expr(sp.cancel(F / self.mass))

    def __call__(self, t):
        """f(t) at the current mpmath precision, from the time-domain formula."""
        t = mpmath.mpf(t)
        total = mpmath.mpf(0)
        for kind, c, a, b in self.terms:
            c, a = mpmath.mpf(c.p) / c.q, mpmath.mpf(a.p) / a.q
            if kind == "exp":
                total += c * t ** int(b) * mpmath.exp(-a * t)
            else:
                bb = mpmath.mpf(b.p) / b.q
                trig = mpmath.cos(bb * t) if kind == "cos" else mpmath.sin(bb * t)
                total += c * mpmath.exp(-a * t) * trig
        return total / (mpmath.mpf(self.mass.p) / self.mass.q)


def assert_witness(cert, f):
    """The witness of a NEGATIVE certificate: f < 0 there (50 digits) and inside the enclosure."""
    assert cert.status is NEG
    assert cert.witness > 0
    lo, hi = cert.enclosure
    assert lo <= hi < 0
    with mpmath.workdps(50):
        value = f(cert.witness)
        slack = mpmath.mpf(10) ** -45
        assert value < 0, (cert, value)
        assert lo - slack <= value <= hi + slack, (cert, value)


#: Rounding allowed in the dense-grid check of a NONNEGATIVE verdict (50-digit evaluation).
GRID_TOL = mpmath.mpf(10) ** -40


def assert_no_negative_sample(f, t_max, points=10_000, tol=GRID_TOL):
    """Supporting evidence for NONNEGATIVE: f >= -tol on a dense grid (50 digits)."""
    with mpmath.workdps(50):
        worst = min(f(mpmath.mpf(t_max) * k / points) for k in range(1, points + 1))
    assert worst >= -tol, worst




# ----------------------------------------------------------------------------- known densities
def test_exponential_is_nonnegative_by_an_exact_rule():
    cert = certify(([1], [1, 1]))
    assert cert.status is NONNEG and cert.is_density is True
    assert cert.tail_bound is None and cert.boxes == 0
    assert cert.poles == ((-1 + 0j, 0.0),) and cert.multiplicities == (1,)


def test_erlang_multiple_pole():
    dens = Density(("exp", Q(27, 2), 3, 2))  # Erlang(3, rate 3): 27/2 t^2 e^{-3t}
    assert sp.expand(dens.lst.D.as_expr() - (s + 3) ** 3) == 0
    cert = certify(dens.lst)
    assert cert.status is NONNEG
    assert cert.multiplicities == (3,)
    # Hermite coefficients of t^0, t^1, t^2: 0, 0, 27/2
    centers = [c for c, _ in cert.residues[0]]
    assert centers == pytest.approx([0, 0, 13.5])
    assert_no_negative_sample(dens, 15, points=2000)


def test_erlang_mixture_with_numerator_uses_nonnegative_hermite_coefficients():
    dens = Density(("exp", Q(1, 2) * 4, 2, 1), ("exp", Q(1, 2) * 3, 3, 0))
    cert = certify(dens.lst)
    assert (cert.status, cert.method) == (NONNEG, "all poles real, residues positive")


def test_hyperexponential():
    dens = Density(("exp", Q(1, 3), 1, 0), ("exp", 2, 3, 0))  # (1/3)e^{-t} + (2/3) 3 e^{-3t}
    cert = certify(dens.lst)
    assert (cert.status, cert.method) == (NONNEG, "all poles real, residues positive")
    assert_no_negative_sample(dens, 30, points=2000)


@pytest.mark.parametrize("rates", [(1, 2, 3), (1, 2, 3, 5), (Q(1, 2), 1, Q(7, 4), 3, 4)])
def test_generalized_erlang_has_a_negative_residue_but_is_a_density(rates):
    lst = RationalLST.from_expr(sp.prod([Q(r) / (s + r) for r in rates]))
    # independent partial fractions: at least one residue is negative
    residues = [term.as_numer_denom()[0] / sp.Poly(term.as_numer_denom()[1], s).LC()
                for term in sp.Add.make_args(sp.apart(lst.expr, s))]
    assert any(r < 0 for r in residues)
    cert = certify(lst)
    assert cert.status is NONNEG
    assert cert.method == "all poles real, constant numerator (hypoexponential)"
    f = density_by_residues(lst)
    assert_no_negative_sample(f, 25, points=2000)


def test_one_plus_cos_touching_zero_is_certified_by_the_exact_pair_rule():
    # (2/3)(1 + cos t) e^{-t}: f(pi) = 0, a tangential zero no interval method can certify
    dens = Density(("exp", Q(2, 3), 1, 0), ("cos", Q(2, 3), 1, 1))
    assert dens.mass == 1
    cert = certify(dens.lst)
    assert (cert.status, cert.method) == (NONNEG, "dominant pair exact test")
    assert cert.tail_bound is None
    with mpmath.workdps(50):
        assert abs(dens(mpmath.pi)) < mpmath.mpf(10) ** -45
    assert_no_negative_sample(dens, 40)


def test_one_plus_cos_with_too_large_pair_is_negative_near_pi():
    dens = Density(("exp", 1, 1, 0), ("cos", Q(3, 2), 1, 1))  # (1 + 1.5 cos t) e^{-t}
    cert = certify(dens.lst)
    assert cert.method == "dominant pair exact test"
    assert_witness(cert, dens)
    assert float(cert.witness) % (2 * math.pi) == pytest.approx(math.pi, abs=1e-6)


def test_touching_pair_plus_a_positive_rest_is_nonnegative():
    # (1 + cos t) e^{-t} + e^{-2t} - 2 e^{-3t}: the rest is negative near 0 but positive from
    # ln 2 on, in particular at the touching points t = pi, 3 pi, ...
    dens = Density(("exp", 1, 1, 0), ("cos", 1, 1, 1), ("exp", 1, 2, 0), ("exp", -2, 3, 0))
    cert = certify(dens.lst)
    assert cert.status is NONNEG
    assert cert.method == "dominant pair exact test + branch and bound"
    assert cert.tail_bound is not None
    assert_no_negative_sample(dens, 40)


def test_touching_pair_plus_a_negative_rest_is_negative_at_a_touching_point():
    dens = Density(("exp", 1, 1, 0), ("cos", 1, 1, 1), ("exp", Q(-1, 10), 2, 0))
    cert = certify(dens.lst)
    assert cert.method == "dominant pair exact test"
    assert_witness(cert, dens)
    assert float(cert.witness) % (2 * math.pi) == pytest.approx(math.pi, abs=1e-6)


def test_two_touching_groups_are_decided_by_the_exact_factorisation():
    # (1 + cos t)(e^{-t} + e^{-2t}) >= 0 with zeros at odd multiples of pi that persist in the
    # rest: no interval enclosure can be positive there.  With x = e^{-t}, u = tan(t/2) the
    # density is (const) x (1 + x)/(1 + u^2): a positive constant times positive factors
    dens = Density(("exp", 1, 1, 0), ("cos", 1, 1, 1), ("exp", 1, 2, 0), ("cos", 1, 2, 1))
    cert = certify(dens.lst)
    assert cert.status is NONNEG and cert.method.startswith("exact factorisation")
    assert cert.verify()
    assert_no_negative_sample(dens, 30, points=2000)


def test_me3_constant_numerator_real_dominant_pole_is_nonnegative():
    # poles -1, -2 +- 2i, constant numerator: f(0) = f'(0) = 0 (derivations/me-pade.md, step 10)
    lst = RationalLST.from_expr(8 / ((s + 1) * ((s + 2) ** 2 + 4)))
    assert lst.derivatives_at_zero(2) == [0, 0]
    cert = certify(lst)
    assert (cert.status, cert.method) == (NONNEG, "order 3 constant numerator")
    assert_no_negative_sample(density_by_residues(lst), 30, points=3000)


def test_me3_constant_numerator_complex_dominant_pole_is_invalid():
    lst = RationalLST.from_expr(10 / ((s + 2) * ((s + 1) ** 2 + 4)))
    cert = certify(lst)
    assert (cert.status, cert.method) == (INVALID, "order 3 constant numerator")
    assert "complex dominant pole" in cert.reason and cert.is_density is False
    # independent: f really is negative somewhere (f changes sign infinitely often)
    f = density_by_residues(lst)
    with mpmath.workdps(50):
        assert min(f(k / 10) for k in range(1, 200)) < 0


def test_me3_constant_numerator_shared_real_part_is_nonnegative():
    # poles -1, -1 +- i: delta = 0 in the theorem of derivations/me-pade.md, steps 11-12
    lst = RationalLST.from_expr(2 / ((s + 1) * ((s + 1) ** 2 + 1)))
    cert = certify(lst)
    assert (cert.status, cert.method) == (NONNEG, "order 3 constant numerator")
    assert_no_negative_sample(density_by_residues(lst), 40, points=3000)


def _lognormal_moments(sigma2, count):
    return [sp.nsimplify(sp.exp(Q(k * (k - 1), 2) * sigma2).evalf(40), rational=True)
            for k in range(1, count + 1)]


def test_classical_pade_with_negative_density_at_zero():
    # classical Padé ME(3) of a lognormal (mean 1, sigma^2 = 0.3): valid poles, f(0) < 0
    lst = classical_pade(_lognormal_moments(Q(3, 10), 5), 3)
    assert lst.moments(5) == _lognormal_moments(Q(3, 10), 5)
    poles = np.roots([float(c) for c in reversed(lst.denominator)])
    assert np.all(poles.real < 0)
    assert lst.derivatives_at_zero(1)[0] < 0
    cert = certify(lst)
    assert cert.method == "f^(j*)(0) < 0"
    f = density_by_residues(lst)
    assert_witness(cert, f)
    # second opinion on the witness value: numerical inverse Laplace (Talbot)
    with mpmath.workdps(50):
        value = mpmath.invertlaplace(lst, cert.witness, method="talbot")
        assert value < 0 and abs(value - f(cert.witness)) < 1e-20


def test_classical_pade_with_an_interior_dip():
    # sigma^2 = 0.2, order 3: f(0) > 0, valid poles, negative on a small interval
    lst = classical_pade(_lognormal_moments(Q(1, 5), 5), 3)
    assert lst.derivatives_at_zero(1)[0] > 0
    cert = certify(lst)
    assert cert.method == "branch and bound"
    assert_witness(cert, density_by_residues(lst))


def test_interior_dip_between_valid_poles_gives_a_witness():
    # f = 5 [e^{-t} - 3 e^{-2t} + 2.1 e^{-3t}]: f(0) = 0.5 > 0, dominant coefficient > 0,
    # negative for e^{-t} in ((3 - sqrt(0.6))/4.2, (3 + sqrt(0.6))/4.2)
    dens = Density(("exp", 5, 1, 0), ("exp", -15, 2, 0), ("exp", Q(21, 2), 3, 0))
    assert dens.mass == 1
    cert = certify(dens.lst)
    # a polynomial in x = e^{-t} with a sign change: decided by exact root isolation
    assert cert.method == "exact factorisation (x = exp(-t)): sign change in x"
    assert_witness(cert, dens)
    x = math.exp(-float(cert.witness))
    assert (3 - math.sqrt(0.6)) / 4.2 < x < (3 + math.sqrt(0.6)) / 4.2


def test_narrow_dip_missed_by_a_float_grid_is_found():
    # e^{-t} (1 - (4/3) e^{-t})^2 - 1e-6 e^{-2t}: dip of depth ~1e-6 around t = ln(4/3)
    dens = Density(("exp", 1, 1, 0), ("exp", Q(-8, 3) - Q(1, 10**6), 2, 0), ("exp", Q(16, 9), 3, 0))
    cert = certify(dens.lst)
    assert_witness(cert, dens)
    assert float(cert.witness) == pytest.approx(math.log(4 / 3), abs=2e-3)


def test_tangential_interior_zero_is_proved_by_the_factorisation():
    # e^{-t} (1 - (4/3) e^{-t})^2 >= 0 with a double zero at t = ln(4/3): interval arithmetic
    # alone cannot certify it; the factorisation in x = e^{-t} shows the square
    dens = Density(("exp", 1, 1, 0), ("exp", Q(-8, 3), 2, 0), ("exp", Q(16, 9), 3, 0))
    cert = certify(dens.lst)
    assert cert.status is NONNEG and cert.verify()
    assert [role for _, _, role in cert.proof.factors] == ["touching"]
    assert cert.proof.touching_times == pytest.approx([math.log(4 / 3)], abs=1e-10)
    assert_no_negative_sample(dens, 40, points=2000)


def test_descartes_rule_one_sign_change():
    dens = Density(("exp", 2, 1, 0), ("exp", -1, 2, 0))  # 2e^{-t} - e^{-2t}, f(0) = 1
    cert = certify(dens.lst)
    assert (cert.status, cert.method) == (NONNEG, "Descartes sign rule")
    assert_no_negative_sample(dens, 40, points=2000)


def test_negative_dominant_residue_gives_a_witness_at_large_t():
    dens = Density(("exp", 4, 2, 0), ("exp", Q(-1, 10), 1, 0))  # 4e^{-2t} - 0.1 e^{-t}
    cert = certify(dens.lst)
    assert cert.method == "dominant residue negative"
    assert_witness(cert, dens)
    assert float(cert.witness) > math.log(40)  # f < 0 exactly for t > ln(40)


def test_branch_and_bound_proves_nonnegativity_with_oscillating_terms():
    dens = Density(("exp", 1, 1, 0), ("cos", Q(1, 2), 2, 3), ("sin", Q(-1, 3), 3, 5))
    cert = certify(dens.lst)
    assert (cert.status, cert.method) == (NONNEG, "branch and bound")
    assert cert.tail_bound is not None and cert.tail_bound > 0 and cert.boxes >= 1
    assert len(cert.poles) == 5 and cert.multiplicities == (1,) * 5
    assert_no_negative_sample(dens, 40)


def test_branch_and_bound_with_multiple_complex_poles():
    # e^{-t}(1 + t) + t e^{-2t} cos(3t)/2 ... a double complex pair (Hermite form t e^{zt})
    lst = RationalLST.from_expr(sp.cancel(
        (1 / (s + 1) + 1 / (s + 1) ** 2
         + sp.Rational(1, 2) * ((s + 2) ** 2 - 9) / ((s + 2) ** 2 + 9) ** 2)
        / (2 + sp.Rational(1, 2) * (4 - 9) / 13 ** 2)))
    cert = certify(lst)
    assert cert.status is NONNEG
    assert sorted(cert.multiplicities) == [2, 2, 2]


@pytest.mark.parametrize("gap", [Q(1, 10**3), Q(1, 10**8), Q(1, 10**30)])
def test_nearly_multiple_poles(gap):
    # a pair of real poles 1 -+ sqrt(2) gap apart (irreducible factor), dominant or not
    for D in ((s + 2) * ((s + 1) ** 2 - 2 * gap ** 2), (s + 1) * ((s + 2) ** 2 - 2 * gap ** 2)):
        lst = RationalLST.from_expr(sp.cancel((s + 3) / D * D.subs(s, 0) / 3))
        cert = certify(lst)
        assert cert.status is NONNEG, cert
        assert cert.boxes < 200


def test_right_half_plane_pole_is_invalid():
    # D = (s + 2)(s - 1/2), N = s - 1: f(0) = 1 > 0, mass 1, a pole at +1/2
    lst = RationalLST.from_coefficients([-1, 1], [-1, Q(3, 2), 1])
    cert = certify(lst)
    assert (cert.status, cert.method) == (INVALID, "Routh-Hurwitz test")
    assert "right half plane" in cert.reason and "0.5" in cert.reason
    assert cert.is_density is False
    # INVALID takes priority over a negative initial behaviour (here f(0) = 0, f'(0) = -2 < 0)
    cert = certify(RationalLST.from_expr(-2 / ((s - 1) * (s + 2))))
    assert (cert.status, cert.method) == (INVALID, "Routh-Hurwitz test")


def test_pole_on_the_imaginary_axis_is_invalid():
    lst = RationalLST.from_expr((s ** 2 + s + 1) / ((s + 1) * (s ** 2 + 1)))
    cert = certify(lst)
    assert cert.status is INVALID and "imaginary axis" in cert.reason


def test_complex_dominant_pole_is_invalid():
    dens_lst = RationalLST.from_expr(sp.cancel(
        (2 / (s + 2) + (s + 1) / ((s + 1) ** 2 + 1)) / (1 + sp.Rational(1, 2))))
    cert = certify(dens_lst)
    assert (cert.status, cert.method) == (INVALID, "dominant pole")
    assert cert.reason.startswith("complex dominant pole")


# ----------------------------------------------------------------------------- API and bad input
class _Holder:
    def __init__(self, lst):
        self.lst = lst


def test_input_forms_agree():
    lst = RationalLST.from_expr(6 / ((s + 1) * (s + 2) * (s + 3)))
    forms = [lst, _Holder(lst), ([6], [6, 11, 6, 1]), ((6,), (6, 11, 6, 1)), lst.expr]
    verdicts = {(certify(x).status, certify(x).method) for x in forms}
    assert len(verdicts) == 1


def test_certificate_is_a_frozen_json_ready_record():
    cert = certify(Density(("exp", 1, 1, 0), ("cos", Q(1, 2), 2, 3)).lst)
    assert isinstance(cert, Certificate)
    with pytest.raises(AttributeError):
        cert.status = NONNEG  # type: ignore[misc]
    data = json.loads(json.dumps(cert.to_dict()))
    assert data["status"] == cert.status.value
    assert set(data) >= {"status", "method", "tail_bound", "boxes", "witness", "enclosure",
                         "reason", "poles", "residues", "seconds"}
    neg = certify(([2, -1], [2, 3, 1]))
    d = json.loads(json.dumps(neg.to_dict()))
    assert d["status"] == "NEGATIVE" and d["enclosure"][0] <= d["enclosure"][1] <= 0
    assert d["witness"] == pytest.approx(float(neg.witness))
    assert Nonnegativity.NEGATIVE == "NEGATIVE" and "NEGATIVE" in str(neg)


def test_certificate_has_no_truth_value():
    cert = certify(([1], [1, 1]))
    with pytest.raises(TypeError, match="is_density"):
        bool(cert)
    assert cert.is_density is True


@pytest.mark.parametrize("kwargs, name", [
    ({"dps": 5}, "dps"), ({"dps": 40.0}, "dps"), ({"max_boxes": 0}, "max_boxes"),
    ({"min_width": -1.0}, "min_width"), ({"min_width": float("nan")}, "min_width"),
    ({"time_budget": 0}, "time_budget"), ({"time_budget": "soon"}, "time_budget"),
])
def test_bad_options_are_rejected_with_the_parameter_name(kwargs, name):
    with pytest.raises(InvalidParameter, match=name):
        certify(([1], [1, 1]), **kwargs)


def test_bad_objects_are_rejected():
    with pytest.raises(InvalidParameter, match="obj"):
        certify(3.5)
    with pytest.raises(InvalidParameter, match="total mass"):
        certify(([2], [1, 1]))  # N(0) != D(0)
    with pytest.raises(SymqError):
        certify(([1, 1], [1, 1]))  # atom: deg N = deg D


def test_box_budget_and_time_budget_give_inconclusive():
    # e^{-t} (1 - 1.99 e^{-t} cos 3t + e^{-2t}): about 0.01 near t = 0, square-free in (x, u),
    # so only branch and bound applies (13 boxes)
    lst = Density(("exp", 1, 1, 0), ("cos", Q(-199, 100), 2, 3), ("exp", 1, 3, 0)).lst
    cert = certify(lst, max_boxes=3)
    assert cert.status is INCONCL and "max_boxes=3" in cert.reason
    cert = certify(lst, time_budget=1e-9)
    assert cert.status is INCONCL and "time budget" in cert.reason


def test_precision_is_raised_when_needed():
    gap = Q(1, 10**45)
    D = (s + 2) * ((s + 1) ** 2 - 2 * gap ** 2)
    lst = RationalLST.from_expr(sp.cancel((s + 3) / D * D.subs(s, 0) / 3))
    cert = certify(lst, dps=40)
    assert cert.status is NONNEG and cert.dps > 40


# ----------------------------------------------------------------------------- random instances
rates = st.sampled_from([Q(1, 2), Q(1), Q(3, 2), Q(2), Q(5, 2), Q(3), Q(4), Q(5)])


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 3), rates), min_size=1, max_size=3))
def test_random_erlang_mixtures_are_never_called_negative(mixture):
    total = sum(w for w, _, _ in mixture)
    expr = sum(Q(w, total) * (lam / (s + lam)) ** k for w, k, lam in mixture)
    lst = RationalLST.from_expr(sp.cancel(sp.together(expr)))
    cert = certify(lst)
    assert cert.status not in (NEG, INVALID)
    assert cert.status is NONNEG  # positive combination of t^j e^{-lt}: an exact rule applies


@st.composite
def exponential_sums(draw):
    """sum_i c_i e^{-l_i t}: distinct rates, mixed signs, positive dominant coefficient (so
    that sign changes in the interior -- dips -- are the interesting case), mass > 0."""
    lams = draw(st.lists(rates, min_size=2, max_size=5, unique=True))
    lams.sort()
    coefficients = [draw(st.integers(1, 6))]
    if draw(st.booleans()):  # alternating signs: + - + ..., the shape of interior dips
        coefficients += [(-1) ** i * draw(st.integers(1, 12)) for i in range(1, len(lams))]
    else:
        coefficients += [draw(st.integers(-8, 8).filter(bool)) for _ in lams[1:]]
    assume(sum(Q(c) / lam for c, lam in zip(coefficients, lams)) > 0)
    return list(zip(coefficients, lams))


@settings(max_examples=50, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(exponential_sums())
def test_random_exponential_sums_agree_with_a_dense_grid(terms):
    dens = Density(*[("exp", c, lam, 0) for c, lam in terms])
    cert = certify(dens.lst)
    assert cert.status is not INVALID  # all poles real and negative
    with mpmath.workdps(50):
        grid_negative = any(dens(mpmath.mpf(k) / 50) < 0 for k in range(1, 1501))  # t in (0, 30]
    if grid_negative:
        assert cert.status is NEG, cert
    if cert.status is NEG:
        assert_witness(cert, dens)
    if cert.status is NONNEG:
        assert not grid_negative
