"""Infinite sums in claims (issue 30, item 5): a closed form by sympy under a time budget,
convergence acceleration by two methods that must agree, the disagreement as an error bar that the
comparison respects.  Expected values are closed forms evaluated by mpmath at 50 digits."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from symq.core.approximate import (
    Approximate,
    approximate_point_error,
    settle,
)
from symq.core.claims import Inconclusive, Status
from symq.core.claimsfile.claim import build_claim
from symq.core.claimsfile.quantities import FileContext, evaluate_expression
from symq.core.claimsfile.sums import closed_form
from symq.core.formula import parse_formula
from symq.core.precision import working_dps
from symq.core.tolerance import Tolerance, point_error


def claim(table):
    return build_claim("claims[0]", table, FileContext())


def value(text, **point):
    expr = parse_formula("x", text, tuple(point), sums=True)
    return evaluate_expression(expr, point, set(), "x")


@pytest.mark.parametrize("lam", ["0.999", "0.9999"])
def test_slow_series_near_the_singularity_give_the_closed_form_value(lam):
    mp = mpmath.mp.clone() if hasattr(mpmath.mp, "clone") else mpmath.MPContext()
    mp.dps = 50
    x = mp.mpf(lam)
    got = value("sum(lam^n/n, n, 1, oo)", lam=float(lam))
    assert not isinstance(got, Approximate)
    assert abs(mp.mpf(got) + mp.log(1 - x)) < mp.mpf(10) ** -40
    got = value("sum(n^2*lam^n, n, 1, oo)", lam=float(lam))
    assert abs(mp.mpf(got) / (x * (1 + x) / (1 - x) ** 3) - 1) < mp.mpf(10) ** -40


def test_a_swapped_heavy_traffic_constant_written_as_a_series_fails():
    # (1-lam)^3 sum n^2 lam^n -> 2 as lam -> 1; at lam = 0.9999 it is lam(1+lam) = 1.99970001
    true = claim({"name": "second moment", "statement":
                  "(1-lam)^3*sum(n^2*lam^n, n, 1, oo) == lam*(1+lam)",
                  "region": {"lam": [0.9, 0.999, 0.9999]}}).check()
    assert true.status is Status.HOLDS, true.detail
    swapped = claim({"name": "swapped", "statement":
                     "(1-lam)^3*sum(n^2*lam^n, n, 1, oo) == lam*(2+lam)/2",
                     "region": {"lam": [0.999, 0.9999]}, "tolerance": 1e-6}).check()
    assert swapped.status is Status.FAILS, swapped.detail


def test_a_series_without_closed_form_is_accelerated_by_two_agreeing_methods():
    # sum lam^n/(n + 1/2): sympy finds no closed form here; the exact value is
    # 2 lam^(-1/2) atanh(sqrt(lam)) - 2 (from the Taylor series of atanh)
    with working_dps(50) as ctx:
        lam = ctx.mpf("0.99")
        exact = 2 * ctx.atanh(ctx.sqrt(lam)) / ctx.sqrt(lam) - 2
        got = value("sum(lam^n/(n + 1/2), n, 1, oo)", lam=0.99)
        v = got.value if isinstance(got, Approximate) else got
        bar = got.error if isinstance(got, Approximate) else ctx.mpf(10) ** -25 * abs(v)
        assert abs(v - exact) <= 2 * bar + ctx.mpf(10) ** -40
        assert bar < 1e-10 * abs(exact)


def test_a_divergent_series_is_undecided_quickly_never_a_number():
    v = claim({"name": "harmonic", "statement": "sum(1/k, k, 1, oo) == 10"}).check()
    assert v.status is Status.INCONCLUSIVE and "does not converge" in v.detail
    v = claim({"name": "alternating growth", "statement": "sum(k*(-1)^k*lam^k, k, 1, oo) == 0",
               "region": {"lam": [1.5]}, "tolerance": 1e-3}).check()
    assert v.status is Status.INCONCLUSIVE


def test_closed_form_is_found_once_per_sum_and_none_for_an_unknown_one():
    k, lam = sp.Symbol("k", integer=True), sp.Symbol("lam", positive=True)
    assert closed_form(sp.Sum(lam**k / sp.factorial(k), (k, 0, sp.oo))) == sp.exp(lam)
    node = sp.Sum(1 / (k**2 + lam), (k, 1, sp.oo))
    assert closed_form(node) is None or not closed_form(node).has(sp.Sum)


def test_the_comparison_respects_the_error_bar():
    a = Approximate(mpmath.mpf(2), mpmath.mpf("1e-6"), "a sum")
    # well inside a wide tolerance: holds; its error is the least favourable one
    assert approximate_point_error(a, "==", 2.0, Tolerance(relative=1e-3), 1, point_error) \
        == pytest.approx(5e-7, rel=1e-6)
    # far outside: fails, with the most favourable error
    err = approximate_point_error(a, "==", 2.1, Tolerance(relative=1e-3), 1, point_error)
    assert err > 1e-3
    # the bar straddles the band: undecided, naming the bar
    with pytest.raises(Inconclusive, match="error bar"):
        approximate_point_error(a, "==", 2.0, Tolerance(relative=1e-9), 1, point_error)
    # the sides cross inside the bar: never 'fails'
    with pytest.raises(Inconclusive):
        approximate_point_error(a, "==", 2.0000005, Tolerance(relative=1e-7), 1, point_error)
    # inequalities: the least favourable values must satisfy it to hold
    assert approximate_point_error(a, "<=", 2.01, Tolerance(relative=0), 1, point_error) == 0
    with pytest.raises(Inconclusive):
        approximate_point_error(a, "<=", 2.0000005, Tolerance(relative=0), 1, point_error)
    assert approximate_point_error(a, ">=", 2.01, Tolerance(relative=0), 1, point_error) > 0


def test_an_error_bar_is_never_used_silently_as_a_number():
    a = Approximate(mpmath.mpf(1), mpmath.mpf("1e-3"), "a sum")
    with pytest.raises(Inconclusive):
        float(a)
    with working_dps(20) as ctx, pytest.raises(Inconclusive):
        ctx.mpf(a)
    with working_dps(50) as ctx:
        assert settle(ctx.mpf(1), ctx.mpf(10) ** -40, "x") == 1  # negligible: a plain number


def test_a_formula_of_an_approximate_value_carries_the_bar():
    from symq.core.claimsfile import quantities

    with working_dps(50) as ctx:
        a = Approximate(ctx.mpf(2), ctx.mpf("1e-6"), "a sum")
        y = sp.Symbol("y", positive=True)
        out = quantities._evaluate_mp(3 * y**2, {"y": a}, "f")
        assert isinstance(out, Approximate)
        assert abs(out.value - 12) < 1e-40
        assert abs(out.error - 12e-6) < 1e-9  # |d(3y^2)/dy| = 12 times the bar


def test_a_divergent_series_is_not_given_the_value_of_its_analytic_continuation():
    # Levin and Shanks sum 1/sqrt(k) to zeta(1/2) = -1.46 and sum k (-x)^k at x = 1.5 to
    # -x/(1+x)^2; neither series converges
    v = claim({"name": "zeta(1/2)", "statement": "sum(1/sqrt(k), k, 1, oo) == zeta(0.5)",
               "tolerance": 1e-3}).check()
    assert v.status is Status.INCONCLUSIVE, v.detail
