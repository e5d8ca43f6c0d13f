"""Padé moment matching (symq.me.pade) against independent computations.

Reference moments and values at zero are computed here from known exact LSTs by sympy series
expansion (at s = 0 and at s = infinity), independently of symq.me.transform; fitted transforms are
compared with the known LST as rational functions.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from functools import cache

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.core.errors import InvalidMoments, InvalidParameter
from symq.core.result import Exactness
from symq.me.pade import (
    PadeResult,
    hankel_system,
    moment_order,
    pade_fit,
    stieltjes_check,
    two_point_system,
)

s, w = sp.symbols("s w")
R = sp.Rational

# known MEs given by exact LSTs: name -> (LST, order)
KNOWN = {
    "exponential": (2 / (s + 2), 1),
    "hyperexp2": (R(1, 3) / (s + 1) + R(2, 3) * 5 / (s + 5), 2),
    "erlang3": (8 / (s + 2) ** 3, 3),                                  # triple pole
    "ph3_complex": ((s**2 + 6 * s + 13) / ((s + 1) * ((s + 2) ** 2 + 9)), 3),
    "one_plus_cos": (R(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1)), 3),
}


@cache
def reference(name: str, K: int, J: int) -> tuple[tuple, tuple]:
    """Exact m_1..m_K (series at 0) and f(0)..f^(J-1)(0) (series at infinity) of a known LST."""
    L = KNOWN[name][0]
    at_zero = sp.series(L, s, 0, K + 1).removeO()
    moments = tuple((-1) ** k * sp.factorial(k) * at_zero.coeff(s, k) for k in range(1, K + 1))
    at_inf = sp.series(L.subs(s, 1 / w), w, 0, J + 2).removeO()
    zero = tuple(at_inf.coeff(w, j + 1) for j in range(J))
    return moments, zero


def same_function(a: sp.Expr, b: sp.Expr) -> bool:
    return sp.cancel(sp.together(a - b)) == 0


def monic_coefficients(expr: sp.Expr) -> tuple[list, list]:
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    N, D = sp.Poly(num, s), sp.Poly(den, s)
    lead = D.LC()
    return ([c / lead for c in reversed(N.all_coeffs())],
            [c / lead for c in reversed(D.all_coeffs())])


def series_moments(expr: sp.Expr, K: int) -> list:
    at_zero = sp.series(expr, s, 0, K + 1).removeO()
    return [(-1) ** k * sp.factorial(k) * at_zero.coeff(s, k) for k in range(1, K + 1)]


def to_mpf(x) -> mpmath.mpf:
    x = sp.Rational(x)
    return mpmath.mpf(int(x.p)) / int(x.q)


# ---------------------------------------------------------------------- (1) exact round trip
@pytest.mark.parametrize("name", list(KNOWN))
def test_every_split_recovers_the_lst_exactly(name):
    L, n = KNOWN[name]
    moments, zero = reference(name, 2 * n - 1, 2 * n - 1)
    for J in range(2 * n):
        K = 2 * n - 1 - J
        fit = pade_fit(moments[:K], zero=zero[:J])
        assert isinstance(fit, PadeResult)
        assert fit.exactness is Exactness.EXACT and fit.dps is None and fit.hankel_condition is None
        assert (fit.order, fit.moments_used, fit.zero_used) == (n, K, J), (name, K, J)
        assert same_function(fit.lst.expr, L), (name, K, J, fit.lst.expr)
        assert fit.residual == 0.0 and fit.reduced_from is None


def test_erlang_multiple_pole_is_exact():
    fit = pade_fit(list(reference("erlang3", 5, 0)[0]))
    assert fit.lst.denominator == (8, 12, 6, 1) and fit.lst.numerator == (8,)
    assert sp.factor(fit.lst.D.as_expr()) == (s + 2) ** 3


def test_explicit_order_uses_the_first_moments():
    moments, _ = reference("hyperexp2", 7, 0)
    fit = pade_fit(moments, order=2)
    assert fit.moments_used == 3 and same_function(fit.lst.expr, KNOWN["hyperexp2"][0])
    assert any("not used" in note for note in fit.notes)


def test_time_scaling_commutes_with_the_fit():
    moments, zero = reference("ph3_complex", 4, 1)
    c = R(3, 100)
    scaled_m = [m * c ** (k + 1) for k, m in enumerate(moments)]
    scaled_d = [d / c ** (j + 1) for j, d in enumerate(zero)]
    fit = pade_fit(scaled_m, zero=scaled_d)
    assert fit.lst == pade_fit(moments, zero=zero).lst.scaled(c)


def test_printed_systems_are_the_ones_solved():
    L, n = KNOWN["ph3_complex"]
    moments, zero = reference("ph3_complex", 5, 2)
    r = [1] + [m / sp.factorial(k + 1) for k, m in enumerate(moments)]
    H, y = hankel_system(r, n)
    x = H.LUsolve(y)                                  # (Q_n, ..., Q_1)
    u = sp.Symbol("u")
    Q = 1 + sum(x[n - j] * u**j for j in range(1, n + 1))
    P = sp.expand(sp.series(Q * sum(r[k] * u**k for k in range(2 * n)), u, 0, n).removeO())
    assert same_function((P / Q).subs(u, -s), L)
    for J in (0, 2):
        A, y = two_point_system(r, zero[:J], n)
        assert A.shape == (2 * n, 2 * n)
        x = A.LUsolve(y)
        expr = sum(x[n + k] * s**k for k in range(n)) / (s**n + sum(x[k] * s**k for k in range(n)))
        assert same_function(expr, L)
        assert same_function(expr, pade_fit(moments[:2 * n - 1 - J], zero=zero[:J]).lst.expr)


# ---------------------------------------------------------------------- (2) floating path
@pytest.mark.parametrize("name", list(KNOWN))
def test_mpmath_path_recovers_coefficients_to_40_digits(name):
    L, n = KNOWN[name]
    moments, zero = reference(name, 2 * n - 1, 2 * n - 1)
    with mpmath.workdps(50):
        m_mp = [to_mpf(m) for m in moments]
        d_mp = [to_mpf(d) for d in zero]
    b_ref, a_ref = monic_coefficients(L)
    for J in range(2 * n):
        K = 2 * n - 1 - J
        fit = pade_fit(m_mp[:K], zero=d_mp[:J], dps=50)
        assert fit.exactness is Exactness.NUMERIC and fit.dps >= 50 and fit.hankel_condition > 0
        assert fit.order == n
        for got, ref in ((fit.lst.numerator, b_ref), (fit.lst.denominator, a_ref)):
            top = max(abs(c) for c in ref)
            for k in range(max(len(got), len(ref))):
                g = got[k] if k < len(got) else 0
                r = ref[k] if k < len(ref) else 0
                assert abs(g - r) <= R(1, 10**40) * top, (name, K, J, k)
        # moments of the returned rational transform equal the (rational value of the) inputs
        fitted = series_moments(fit.lst.expr, K)
        for got, value in zip(fitted, m_mp):
            exact_value = to_exact(value)
            assert abs(got - exact_value) <= R(1, 10**40) * exact_value
        assert fit.residual < 1e-40
        # values prescribed at zero hold exactly for j <= n - 2 and to 40 digits beyond
        at_inf = sp.series(fit.lst.expr.subs(s, 1 / w), w, 0, J + 2).removeO()
        for j in range(J):
            got, given = at_inf.coeff(w, j + 1), to_exact(d_mp[j])
            if j <= n - 2:
                assert got == given
            else:
                assert abs(got - given) <= R(1, 10**40) * max(1, abs(given))


def to_exact(x) -> sp.Rational:
    sign, man, exp, _ = x._mpf_
    value = sp.Integer(int(man)) * sp.Integer(2) ** int(exp)
    return -value if sign else value


def test_exact_and_float_paths_agree():
    moments, zero = reference("one_plus_cos", 3, 2)
    exact = pade_fit(moments, zero=zero)
    floating = pade_fit([float(m) for m in moments], zero=[float(d) for d in zero])
    assert floating.exactness is Exactness.NUMERIC
    for got, ref in zip(floating.lst.denominator, exact.lst.denominator):
        assert abs(float(got - ref)) < 1e-13 * max(1.0, abs(float(ref)))


# ---------------------------------------------------------------------- (3) closed form, J = n - 1
def closed_form_n3(m1, m2, m3):
    return 1 / (1 + m1 * s + (m1**2 - m2 / 2) * s**2 + (m3 / 6 + m1**3 - m1 * m2) * s**3)


def test_constant_numerator_closed_form_symbolic():
    m1, m2, m3 = sp.symbols("m1 m2 m3", positive=True)
    A, y = two_point_system([1, m1, m2 / 2, m3 / 6], [0, 0], 3)
    x = A.LUsolve(y)
    expr = sum(x[3 + k] * s**k for k in range(3)) / (s**3 + sum(x[k] * s**k for k in range(3)))
    assert same_function(expr, closed_form_n3(m1, m2, m3))


def test_constant_numerator_closed_form_numeric():
    rng = random.Random(7)
    done = 0
    while done < 5:
        m1 = Fraction(rng.randint(1, 40), rng.randint(1, 20))
        m2 = m1**2 * Fraction(rng.randint(11, 40), 10)
        m3 = m2**2 / m1 * Fraction(rng.randint(11, 40), 10)
        expected = closed_form_n3(R(m1), R(m2), R(m3))
        fit = pade_fit([m1, m2, m3], zero=[0, 0])
        assert fit.lst.numerator == (fit.lst.denominator[0],)           # constant numerator
        assert same_function(fit.lst.expr, expected)
        floating = pade_fit([float(m1), float(m2), float(m3)], zero=[0.0, 0.0])
        assert len(floating.lst.numerator) == 1                          # f(0) = f'(0) = 0 exactly
        done += 1


# ---------------------------------------------------------------------- (4) lognormal targets
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_lognormal_moments_fit_and_are_reproduced(n):
    mu, sigma = 0.3, 0.8
    moments = [math.exp(k * mu + k * k * sigma**2 / 2) for k in range(1, 2 * n)]
    for J in range(n):                      # lognormal: every derivative at 0 vanishes
        K = 2 * n - 1 - J
        fit = pade_fit(moments[:K], order=n, zero=[0.0] * J)
        assert fit.order == n and fit.moments_used == K and len(fit.lst.numerator) <= n - J
        fitted = series_moments(fit.lst.expr, K)
        for got, value in zip(fitted, moments):
            exact_value = sp.Rational(Fraction(value))    # the exact value of the double
            assert abs(got - exact_value) <= R(1, 10**38) * exact_value
        assert fit.residual < 1e-38


# ---------------------------------------------------------------------- (5) order detection
def butools_order(moments):
    """BuTools MEOrderFromMoments (absolute determinant test), re-implemented for comparison."""
    size = (len(moments) + 1) // 2
    r = [1.0] + [m / math.factorial(k + 1) for k, m in enumerate(moments)]
    for k in range(2, size + 1):
        H = np.array([[r[i + j] for j in range(k)] for i in range(k)])
        if abs(np.linalg.det(H)) < 1e-12:
            return k - 1
    return size


@pytest.mark.parametrize("name", list(KNOWN))
def test_moment_order_exact_and_scale_invariant(name):
    n = KNOWN[name][1]
    moments, _ = reference(name, 9, 0)
    assert moment_order(moments) == n                       # exact rank
    for c in (1e-2, 1.0, 1e2, 1e4):
        scaled = [float(m) * c ** (k + 1) for k, m in enumerate(moments)]
        assert moment_order(scaled) == n, (name, c)
        with mpmath.workdps(50):
            scaled_mp = [to_mpf(m) * mpmath.mpf(c) ** (k + 1) for k, m in enumerate(moments)]
        assert moment_order(scaled_mp) == n, (name, c)


def test_absolute_determinant_test_is_not_scale_invariant_but_ours_is():
    moments, _ = reference("erlang3", 9, 0)
    fails = []
    for c in (1e-2, 1e2, 1e4):
        scaled = [float(m) * c ** (k + 1) for k, m in enumerate(moments)]
        fails.append(butools_order(scaled) != 3)
        assert moment_order(scaled) == 3
    assert any(fails)       # the absolute test under-/over-reports at some scale


def test_generic_sequence_has_full_order():
    moments = [1, 3, 14, 90, 800, 9000, 140000]          # not of any order-3 ME
    stieltjes_check(moments)
    assert moment_order(moments) == 4


def test_degenerate_data_are_fitted_at_the_detected_order():
    fit = pade_fit([1, 2, 6, 24, 120, 720, 5040])         # exponential, 7 moments -> order 4 asked
    assert fit.order == 1 and fit.reduced_from == 4 and fit.lst.expr == 1 / (s + 1)
    assert any("moment order 1" in note for note in fit.notes)
    # float data of an order-3 ME, time scaled by 1e4: reduced from 5 to 3
    moments, _ = reference("erlang3", 9, 0)
    scaled = [float(m) * 1e4 ** (k + 1) for k, m in enumerate(moments)]
    fit = pade_fit(scaled)
    assert fit.order == 3 and fit.reduced_from == 5
    b_ref, a_ref = monic_coefficients(KNOWN["erlang3"][0].subs(s, s * 10**4))
    for got, ref in zip(fit.lst.denominator, a_ref):
        assert abs(float(got - ref)) <= 1e-10 * abs(float(ref))
    # two-point data of an exponential with a redundant value at zero
    fit = pade_fit([1], zero=[1, -1])
    assert fit.lst.expr == 1 / (s + 1) and fit.reduced_from == 2


# ---------------------------------------------------------------------- (6) errors
@pytest.mark.parametrize("bad, index", [
    ([1, -2, 6], "moments[1]"),
    ([1, 0, 6], "moments[1]"),
    ([1, 2, float("nan")], "moments[2]"),
    ([float("inf"), 2, 6], "moments[0]"),
    ([1, 2, mpmath.inf], "moments[2]"),
    ([1, "abc", 6], "moments[1]"),
    ([1, 2, 3 + 1j], "moments[2]"),
])
def test_invalid_moment_values(bad, index):
    with pytest.raises(InvalidParameter) as info:
        pade_fit(bad)
    message = str(info.value)
    assert index in message and "finite positive" in message


def test_stieltjes_violations():
    with pytest.raises(InvalidMoments, match=r"m2 - m1\^2 = -1/2 < 0"):
        pade_fit([1, "0.5", 1])
    with pytest.raises(InvalidMoments, match=r"m2 - m1\^2"):
        pade_fit([1.0, 0.999, 1.0])
    with pytest.raises(InvalidMoments, match=r"m1\*m3 - m2\^2"):
        stieltjes_check([1, 2, 3])
    with pytest.raises(InvalidMoments, match="not positive semidefinite"):
        stieltjes_check([1, 2, 6, 18, 120])            # det [m_(i+j)]_(i,j=0..2) = -2
    stieltjes_check([1.0, 2.0, 6.0, 24.0, 120.0])      # exponential, floats
    stieltjes_check([1, 1, 1, 1])                      # point mass: semidefinite, allowed


def test_wrong_number_of_values():
    with pytest.raises(InvalidParameter, match="must be odd"):
        pade_fit([1, 2])
    with pytest.raises(InvalidParameter, match="at least 2n - 1 - J = 5 moments"):
        pade_fit([1, 2, 6], order=3)
    with pytest.raises(InvalidParameter, match="at least one"):
        pade_fit([])
    with pytest.raises(InvalidParameter, match="order"):
        pade_fit([1, 2, 6], order=0)


def test_explicit_order_above_moment_order_names_it():
    for moments in ([1, 2, 6, 24, 120], [1.0, 2.0, 6.0, 24.0, 120.0]):
        with pytest.raises(InvalidMoments, match=r"moment order 1.*order=1"):
            pade_fit(moments, order=3)
    h2, _ = reference("hyperexp2", 7, 0)
    with pytest.raises(InvalidMoments, match="moment order 2"):
        pade_fit(h2, order=4)
    with pytest.raises(InvalidMoments, match="moment order 1"):
        pade_fit([1], order=2, zero=[1, -1])           # two-point system singular


def test_degenerate_without_lower_order_fit():
    # H_2 = [[1, 1], [1, 1]] is singular but m3 != 6: no ME of order <= 2 has these moments
    with pytest.raises(InvalidMoments, match="does not reproduce m3"):
        pade_fit([1, 2, 7])


def test_invalid_values_at_zero():
    with pytest.raises(InvalidParameter, match=r"at most 2n - 1 = 1 values"):
        pade_fit([1], order=1, zero=[1, -1])
    with pytest.raises(InvalidParameter, match=r"at most 2n - 1 = 3 values"):
        pade_fit([], order=2, zero=[1, 1, 1, 1])
    with pytest.raises(InvalidParameter, match=r"zero\[0\]"):
        pade_fit([1, 2], zero=[-1])                    # f(0) < 0: not a density
    with pytest.raises(InvalidParameter, match=r"zero\[1\]"):
        pade_fit([1, 2], zero=[0, float("nan")])
    for zeros in ([0, 0, 0], [0.0, 0.0, 0.0]):       # no moment, f == 0 near 0: no distribution
        with pytest.raises(InvalidMoments, match="not the transform of a distribution"):
            pade_fit([], zero=zeros)


def test_system_builders_validate():
    with pytest.raises(InvalidParameter, match="r_0 = 1"):
        hankel_system([2, 1, 1, 1], 2)
    with pytest.raises(InvalidParameter, match="at least 4 values"):
        hankel_system([1, 1, 1], 2)
    with pytest.raises(InvalidParameter, match="at most 2n - 1"):
        two_point_system([1], [0, 0, 0, 0], 2)


# ---------------------------------------------------------------------- property test
phase_rates = st.lists(st.fractions(min_value=Fraction(1, 10), max_value=10, max_denominator=12),
                       min_size=2, max_size=3, unique=True)


@settings(max_examples=30, deadline=None)
@given(rates=phase_rates, data=st.data())
def test_hyperexponential_round_trip(rates, data):
    weights = data.draw(st.lists(st.integers(1, 9), min_size=len(rates), max_size=len(rates)))
    total = sum(weights)
    p = [Fraction(wt, total) for wt in weights]
    n = len(rates)
    moments = [sum(pi * math.factorial(k) / lam**k for pi, lam in zip(p, rates))
               for k in range(1, 2 * n)]
    fit = pade_fit(moments, order=n)
    L = sum(R(pi) * R(lam) / (s + R(lam)) for pi, lam in zip(p, rates))
    assert fit.exactness is Exactness.EXACT and fit.order == n and same_function(fit.lst.expr, L)
