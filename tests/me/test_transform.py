"""RationalLST: exact conversions, expansions at zero and infinity, normalisation, errors."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.me.transform import RationalLST, s, to_rational


@pytest.mark.parametrize("value, expected", [
    (mpmath.mpf(-4), sp.Integer(-4)),
    (mpmath.mpf("-0.375"), sp.Rational(-3, 8)),
    (sp.Float("-2.5"), sp.Rational(-5, 2)),
    (-0.1, sp.Rational(Fraction(-0.1))),
    ("-2/3", sp.Rational(-2, 3)),
    ("0.1", sp.Rational(1, 10)),
    (np.float64(0.5), sp.Rational(1, 2)),
    (7, sp.Integer(7)),
])
def test_to_rational_is_exact_and_keeps_the_sign(value, expected):
    assert to_rational(value) == expected


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), mpmath.inf, "x", None, True])
def test_to_rational_rejects_non_numbers(bad):
    with pytest.raises(InvalidParameter):
        to_rational(bad)


def test_expansions_match_sympy_series():
    # an order-3 ME with complex poles: D = (s+1)((s+2)^2+9), N(0) = D(0) = 13
    expr = (13 + 2 * s + s**2) / ((s + 1) * ((s + 2) ** 2 + 9))
    lst = RationalLST.from_expr(expr)
    assert lst.order == 3
    series = sp.series(expr, s, 0, 6).removeO()
    assert lst.series_at_zero(5) == [series.coeff(s, k) for k in range(6)]
    moments = [sp.factorial(k) * (-1) ** k * series.coeff(s, k) for k in range(1, 6)]
    assert lst.moments(5) == moments
    w = sp.Symbol("w")
    at_infinity = sp.series(expr.subs(s, 1 / w), w, 0, 5).removeO()
    assert lst.derivatives_at_zero(4) == [at_infinity.coeff(w, j + 1) for j in range(4)]


def test_normalisation_cancels_common_factors_and_makes_d_monic():
    lst = RationalLST.from_coefficients([4, 4], [4, 6, 2])  # 4(s+1) / (2(s+1)(s+2))
    assert lst.numerator == (2,) and lst.denominator == (2, 1)
    assert lst.expr == 2 / (s + 2)


def test_scaling_time_scales_the_moments():
    lst = RationalLST.from_expr(6 / ((s + 1) * (s + 2) * (s + 3)))
    scaled = lst.scaled(sp.Rational(1, 100))
    assert scaled.moments(3) == [m / 100**k for k, m in enumerate(lst.moments(3), start=1)]


def test_invalid_transforms():
    with pytest.raises(InvalidParameter, match="total mass"):
        RationalLST.from_coefficients([1], [2, 1])
    with pytest.raises(InvalidParameter, match="pole at s = 0"):
        RationalLST.from_coefficients([1], [0, 1])
    with pytest.raises(InvalidParameter, match="strictly proper"):
        RationalLST.from_coefficients([1, 1], [1, 1])
    with pytest.raises(InvalidParameter, match="nonzero polynomial"):
        RationalLST.from_coefficients([0], [1, 1])
