"""Parameters: domains validate, parse and describe themselves; errors name name/value/domain."""

import math

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.parameters import (
    Choice,
    IntegerAtLeast,
    Interval,
    NonNegativeReal,
    Parameter,
    PositiveReal,
    PositiveVector,
    validate_parameters,
)


def test_positive_real_accepts_and_rejects():
    rho = Parameter("rho", PositiveReal(), typical=0.5)
    assert rho.validate(0.25) == 0.25
    assert rho.validate(np.float64(2.0)) == 2.0
    for bad in (0, -1.0, math.inf, math.nan, "x", True):
        with pytest.raises(InvalidParameter) as info:
            rho.validate(bad)
        message = str(info.value)
        assert "rho" in message and "positive real" in message


def test_symbol_carries_domain_assumptions():
    assert Parameter("rho", PositiveReal()).symbol.is_positive
    assert Parameter("u", NonNegativeReal()).symbol.is_nonnegative
    n = Parameter("n", IntegerAtLeast(1)).symbol
    assert n.is_integer and n.is_positive
    # the same declaration yields the same symbol, so expressions built twice compare equal
    assert Parameter("rho", PositiveReal()).symbol == Parameter("rho", PositiveReal()).symbol


def test_interval_open_and_closed_ends():
    p = Parameter("f", Interval(0, 1, left_open=True, right_open=True))
    assert p.validate(0.5) == 0.5
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(InvalidParameter, match=r"f=.* must be a real number in \(0, 1\)"):
            p.validate(bad)
    closed = Parameter("q", Interval(0, 1))
    assert closed.validate(0.0) == 0.0 and closed.validate(1.0) == 1.0
    assert closed.symbol.is_nonnegative


def test_integer_at_least():
    d = Parameter("d", IntegerAtLeast(1))
    assert d.validate(3) == 3 and d.validate(2.0) == 2 and d.parse("5") == 5
    for bad in (0, 2.5, "2"):
        with pytest.raises(InvalidParameter, match="d="):
            d.validate(bad)
    with pytest.raises(InvalidParameter, match="not an integer"):
        d.parse("two")


def test_positive_vector_parse_and_errors():
    C = Parameter("C", PositiveVector())
    np.testing.assert_array_equal(C.parse("4,2,1"), [4.0, 2.0, 1.0])
    np.testing.assert_array_equal(C.validate([1, 2]), [1.0, 2.0])
    with pytest.raises(InvalidParameter, match="entry 1 is -2"):
        C.validate([1, -2])
    with pytest.raises(InvalidParameter, match="length 0"):
        C.validate([])
    with pytest.raises(InvalidParameter, match="comma-separated"):
        C.parse("4;2")
    with pytest.raises(InvalidParameter, match="non-finite"):
        C.validate([1, math.nan])


def test_choice_is_case_insensitive_and_lists_choices():
    p = Parameter("policy", Choice(("SQ", "LEW")))
    assert p.parse("lew") == "LEW"
    with pytest.raises(InvalidParameter, match="one of SQ, LEW"):
        p.parse("JSQ")


def test_sympy_numbers_are_accepted():
    rho = Parameter("rho", PositiveReal())
    assert rho.validate(sp.Rational(1, 2)) == 0.5
    with pytest.raises(InvalidParameter, match="not a number"):
        rho.validate(sp.Symbol("x"))


def test_validate_parameters_missing_unknown_and_typical():
    decl = (Parameter("a", PositiveReal(), typical=1.0), Parameter("b", IntegerAtLeast(1)))
    assert validate_parameters(decl, {"a": 2, "b": 3}) == {"a": 2, "b": 3}
    with pytest.raises(InvalidParameter, match="missing"):
        validate_parameters(decl, {"a": 2})
    with pytest.raises(InvalidParameter, match="unknown parameter"):
        validate_parameters(decl, {"a": 2, "b": 1, "c": 4})
    with pytest.raises(InvalidParameter, match="b=<missing> must be given: an integer >= 1"):
        validate_parameters(decl, {}, use_typical=True)


def test_rational_vector_is_exact():
    from fractions import Fraction

    from symq.core.parameters import RationalVector

    m = Parameter("moments", RationalVector())
    assert m.parse("1, 3/2, 0.1") == (1, sp.Rational(3, 2), sp.Rational(1, 10))
    assert m.validate([0.5, Fraction(2, 3), sp.Rational(5, 7)]) == (
        sp.Rational(1, 2), sp.Rational(2, 3), sp.Rational(5, 7))
    assert m.validate([0.1])[0] == sp.Rational(Fraction(0.1))  # binary float kept exactly
    with pytest.raises(InvalidParameter, match="entry 1 is -2"):
        m.parse("1,-2")
    with pytest.raises(InvalidParameter, match="not a finite number"):
        m.validate([1.0, math.inf])
    signed = Parameter("zero", RationalVector(positive=False))
    assert signed.parse("0,-1/2") == (0, sp.Rational(-1, 2))


def test_optional_parameters_take_their_default():
    decl = (Parameter("a", PositiveReal()), Parameter("n", IntegerAtLeast(1), required=False),
            Parameter("k", IntegerAtLeast(1), required=False, default=2))
    assert validate_parameters(decl, {"a": 1.0}) == {"a": 1.0, "n": None, "k": 2}
    assert validate_parameters(decl, {"a": 1.0, "n": 3})["n"] == 3
    with pytest.raises(InvalidParameter, match="n=0"):
        validate_parameters(decl, {"a": 1.0, "n": 0})
