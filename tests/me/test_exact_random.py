"""Random exponential-polynomial densities against the exact certification route.

Squares are densities by construction: ``e^{-a t} g(t)^2`` with g a random combination of
``t^j e^{-r t}`` (rational data, so the exact route applies) must be certified NONNEGATIVE with a
proof that re-verifies.  Subtracting ``eps e^{-b t}`` (faster decay) gives a function whose
truth is not known in advance: every verdict is then checked independently -- a NEGATIVE
witness on the time-domain expression at 60 digits, a NONNEGATIVE one on a 40-digit grid.
"""

from __future__ import annotations

import mpmath
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symq.core.errors import SymqError
from symq.me.certification import Nonnegativity, certify
from symq.me.certification.corpus import laplace_of, t

Q = sp.Rational
coefficient = st.sampled_from([Q(-3), Q(-2), Q(-3, 2), Q(-1), Q(-1, 2), Q(1, 2), Q(1), Q(2)])
rate = st.sampled_from([Q(0), Q(1, 2), Q(1), Q(2)])
term = st.tuples(coefficient, st.integers(0, 2), rate)
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _g(terms) -> sp.Expr:
    return sum(c * t ** j * sp.exp(-r * t) for c, j, r in terms)


def _value(expr: sp.Expr, time, dps: int = 60) -> sp.Float:
    """The time-domain expression at ``time`` (a Rational, or an mpf witness), at ``dps`` digits."""
    point = time if isinstance(time, sp.Rational) else sp.Float(mpmath.nstr(time, dps), dps)
    return sp.N(expr.subs(t, point), dps)


@SETTINGS
@given(st.lists(term, min_size=1, max_size=3))
def test_squares_are_certified_with_a_proof_that_verifies(terms):
    g = _g(terms)
    if sp.expand(g) == 0:
        return
    density = sp.exp(-t) * g ** 2
    cert = certify(laplace_of(density))
    assert cert.status is Nonnegativity.NONNEGATIVE, (density, cert)
    assert cert.verify()


@SETTINGS
@given(st.lists(term, min_size=2, max_size=3), st.sampled_from([Q(1, 10**3), Q(1, 10**12)]),
       st.sampled_from([Q(3), Q(4), Q(6)]))
def test_squares_minus_a_small_term_are_decided_and_every_verdict_checks_out(terms, eps, b):
    # dips near the zeros of g (interior witnesses), at t = 0 (f(0) < 0), or none at all
    g = _g(terms)
    density = sp.exp(-t) * g ** 2 - eps * sp.exp(-b * t)
    try:
        lst = laplace_of(density)
    except SymqError:          # no positive mass: not a candidate
        return
    cert = certify(lst)
    assert cert.status is not Nonnegativity.INCONCLUSIVE, (density, cert.reason)
    if cert.status is Nonnegativity.NEGATIVE:
        assert _value(density, cert.witness) < 0, (density, cert.witness)
    elif cert.status is Nonnegativity.NONNEGATIVE:
        assert cert.verify()
        grid = [_value(density, sp.Rational(k, 8), 40) for k in range(1, 241)]   # (0, 30]
        assert min(grid) >= 0, density
