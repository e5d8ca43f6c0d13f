"""Certified dominant poles of transforms (symq.me.transforms.certify, used by tail_asymptotics).

Every certified enclosure is checked against a root computed independently (mpmath.findroot at
50 digits, or a closed form), and every deliberately wrong input must come back not certified.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest
import sympy as sp

from symq.core.errors import NumericalFailure
from symq.core.precision import local_iv, working_dps
from symq.me.transforms import Transform, pollaczek_khinchine
from symq.me.transforms.certify import (
    certify_rational_pole,
    certify_real_pole,
    interval_function,
)
from symq.me.transforms.tails import tail_asymptotics

S = sp.Symbol("s")


def _ctx(dps: int = 50) -> mpmath.MPContext:
    ctx = mpmath.MPContext()
    ctx.dps = dps
    return ctx


def test_md1_pole_is_certified_and_encloses_the_cramer_lundberg_root():
    d, lam = 1.0, 0.5
    ctx = _ctx()
    eta = ctx.findroot(lambda x: ctx.exp(x * d) - 1 - x / lam, 1.2)   # exp(eta d) = 1 + eta/lam
    waiting = pollaczek_khinchine(Transform("exp(-d*s)", parameters=("d",)), "lam")
    r = tail_asymptotics(waiting, {"d": d, "lam": lam})
    c = r.certificate
    assert r.certified and c is not None and c.certified and c.order == 1
    assert c.contains(-eta)
    assert 0 < c.width < 1e-25 * float(eta)
    assert r.decay == pytest.approx(float(eta), rel=1e-15)
    assert "certified by interval arithmetic" in r.method
    json.dumps(r.to_dict())                            # the certificate is JSON-ready
    assert mpmath.mp.prec == 53 and mpmath.iv.prec == 53   # global precision untouched


@pytest.mark.parametrize("lam, d", [(sp.Rational(1, 10), 2), (sp.Rational(9, 10), 1),
                                    (sp.Rational(3, 4), sp.Rational(1, 3))])
def test_md1_certificate_directly_for_several_loads(lam, d):
    ctx = _ctx()
    lam_, d_ = ctx.mpf(lam.p) / lam.q, ctx.mpf(sp.Rational(d).p) / sp.Rational(d).q
    # exp(x d) - 1 - x/lam is convex with zeros 0 and eta: Newton from the right finds eta
    eta = ctx.findroot(lambda x: ctx.exp(x * d_) - 1 - x / lam_, 20 / d_, solver="newton",
                       maxsteps=200)
    assert eta > 1e-3
    num, den = (1 - lam * d) * S, S - lam + lam * sp.exp(-d * S)
    guess = float(-eta) * (1 + 3e-14)                  # a bisected root, not the exact one
    c = certify_real_pole(num, den, S, guess)
    assert c.certified, c.reason
    assert c.contains(-eta) and c.width < 1e-28 * float(eta)


def test_rational_m_e2_1_pole_is_exact():
    mu, lam = 1.0, 0.7
    ctx = _ctx(60)
    m, la = ctx.mpf(mu), ctx.mpf(lam)                # the same binary numbers as the floats
    # s^2 + (4 mu - lam) s + 4 mu (mu - lam) = 0, rightmost root -eta
    b, c0 = 4 * m - la, 4 * m * (m - la)
    root = (-b + ctx.sqrt(b * b - 4 * c0)) / 2
    e2 = pollaczek_khinchine(Transform("(2*mu/(2*mu + s))^2", parameters=("mu",)), "lam")
    r = tail_asymptotics(e2, {"mu": mu, "lam": lam})
    c = r.certificate
    assert r.certified and c is not None and c.contains(root)
    assert (c.order, c.on_line, r.order, r.oscillating) == (1, 0, 1, False)
    assert c.width < 1e-29
    assert r.decay == pytest.approx(float(-root), rel=1e-15)


def test_rational_double_pole_and_oscillating_pair_are_exact():
    # Erlang-2 of rate 2: a double pole at -2, isolated as the rational point -2
    e2 = tail_asymptotics(Transform("(2*mu/(2*mu + s))^2", parameters=("mu",)), {"mu": 1.0})
    assert e2.certified and e2.certificate is not None
    assert (e2.certificate.low, e2.certificate.high, e2.certificate.order) == (-2, -2, 2)
    # density (5/4) e^{-t} (1 - cos 2t): poles -1 and -1 +- 2i on one line, proved exactly
    osc = tail_asymptotics(Transform("5/((s + 1)*((s + 1)^2 + 4))"))
    assert osc.certified and osc.oscillating and osc.certificate is not None
    assert osc.certificate.on_line == 2 and osc.certificate.contains(-1)
    # an irrational real pole (s^2 + 3s + 1) with a complex pair on its line: the resultant
    y = sp.Symbol("y")
    pair = sp.resultant((S - y) ** 2 + 4, y ** 2 + 3 * y + 1, y)     # roots r +- 2i
    c = certify_rational_pole(sp.Integer(1), sp.expand((S ** 2 + 3 * S + 1) * pair), S)
    assert c.certified and c.on_line == 2
    ctx = _ctx()
    assert c.contains((-3 + ctx.sqrt(5)) / 2) and not c.contains((-3 - ctx.sqrt(5)) / 2)


def test_rational_pole_right_of_the_real_one_is_not_certified():
    c = certify_rational_pole(sp.Integer(1), sp.expand(((S + 1) ** 2 + 1) * (S + 2)), S)
    assert not c.certified and "not the LST" in c.reason
    assert not certify_rational_pole(sp.Integer(1), S * (S + 1), S).certified   # pole at 0


# a denominator with two zeros 2e-5 apart near -0.6, between two points of the scan's grid
CLOSE = (S + 2) * ((S + sp.Rational(3, 5)) ** 2 - sp.Rational(1, 10 ** 10)) * sp.exp(S)
RIGHTMOST = Fraction(-3, 5) + Fraction(1, 10 ** 5)


def test_the_scan_grid_cannot_see_the_close_pair():
    grid = [-200.0 * (k / 4000.0) ** 2 for k in range(1, 4001)]    # tails._rightmost_real_zero
    assert not any(-0.60001 <= x <= -0.59999 for x in grid)


def test_a_wrong_root_is_never_certified():
    # -2 is a zero of den, but not the rightmost one
    c = certify_real_pole(sp.Integer(1), CLOSE, S, -2.0)
    assert not c.certified and c.suspect is not None
    assert abs(c.suspect - float(RIGHTMOST)) < 1e-9          # where the proof broke down
    # no zero at all near the guess
    assert not certify_real_pole(sp.Integer(1), CLOSE, S, -1.5).certified
    # a double zero: the derivative vanishes, no certificate
    assert not certify_real_pole(sp.Integer(1), (S + 1) ** 2 * sp.exp(S), S, -1.0).certified
    # a branch point of the numerator right of the pole (sqrt(s + 1/2) at -1/2)
    c = certify_real_pole(sp.sqrt(S + sp.Rational(1, 2)), (S + 1) * sp.exp(S), S, -1.0)
    assert not c.certified and "not analytic" in c.reason


def test_retries_find_and_certify_the_missed_rightmost_zero():
    c = certify_real_pole(sp.Integer(1), CLOSE, S, -2.0, retries=3)
    assert c.certified and c.contains(RIGHTMOST) and not c.contains(-2)
    # the same through tail_asymptotics: an LST (a shift by 1 of a sum of three exponentials)
    f = Transform("exp(-s) * 2*(9/25 - 1/10^10)/((s + 2)*((s + 3/5)^2 - 1/10^10))")
    r = tail_asymptotics(f)
    assert r.certified and r.certificate is not None and r.certificate.contains(RIGHTMOST)
    assert r.decay == pytest.approx(-float(RIGHTMOST), rel=1e-14)


def test_unsupported_functions_are_refused():
    with pytest.raises(NumericalFailure, match="besselj"):
        certify_real_pole(sp.Integer(1), sp.besselj(0, S) + S, S, -1.0)
    with pytest.raises(NumericalFailure, match="sin"):
        interval_function(sp.sin(S), S)


def test_interval_function_encloses_the_values():
    expr = sp.exp(-2 * S) * sp.sqrt(S + 3) + sp.log(S + 5) / (S + 7) ** 2 \
        + (S + 4) ** sp.Rational(2, 3) + 2 ** S + sp.Float(0.1) * sp.pi
    f = interval_function(expr, S)
    ctx = _ctx(60)
    with working_dps(40, intervals=True):
        box = f(local_iv().mpf([-1, -0.5]))
    lo, hi = (ctx.make_mpf(end) for end in box._mpi_)
    values = [ctx.mpf(str(expr.subs(S, sp.Rational(-40 + k, 40)).evalf(50)))   # on [-1, -1/2]
              for k in range(21)]
    assert all(lo <= v <= hi for v in values)
    assert hi - lo < 2 * (max(values) - min(values))       # and not absurdly wide
