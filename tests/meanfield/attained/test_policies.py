"""Attained-service policies: score tables against hand-written rules, mean residual life
against mpmath closed forms and direct integration of the ccdf, error messages."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.integrate import quad

from symq.core.errors import InvalidParameter, UnknownName
from symq.laws import erlang, hyper_erlang, hyperexponential2
from symq.meanfield.attained.policies import (
    POLICY_NAMES,
    Policy,
    get_policy,
    mean_residual_life,
)

LOWER = np.array([0.0, 1.0, 2.0, 3.0])  # r = 3, delta = 1
B = 3


def _hand_table(rule):
    """The paper's rule (the authors' sorted_kl_indxs.m) evaluated cell by cell in plain Python."""
    r = LOWER.size - 1
    return np.array([[rule(k, LOWER[k - 1], l, r) for l in range(1, B + 1)]
                     for k in range(1, r + 2)], dtype=float)


def _same_ranking(a, b):
    """Identical order, ties included, of two score tables."""
    fa, fb = a.ravel(), b.ravel()
    return np.array_equal(np.sign(fa[:, None] - fa[None, :]), np.sign(fb[:, None] - fb[None, :]))


T = 2.0
RULES = {
    "SQ": lambda k, b, l, r: l,
    "SQ-RTB": lambda k, b, l, r: (r + 1) * l + k,
    "SQ-RE": lambda k, b, l, r: l + (B + 1) * (b >= T),
    "SQ-RTB-RE": lambda k, b, l, r: (r + 2) * l + k + (B + 1) * (r + 2) * (b >= T),
    "LAS": lambda k, b, l, r: k,
    "LAS-QTB": lambda k, b, l, r: (B + 1) * k + l,
    "RE": lambda k, b, l, r: 1.0 * (b >= T),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_builtin_score_tables_follow_the_paper_rules(name):
    table = get_policy(name, T=T).score_table(LOWER, B)
    assert table.shape == (LOWER.size, B) and table.dtype == np.float64
    assert np.all(np.isfinite(table))
    expected = _hand_table(RULES[name])
    assert np.array_equal(table, expected)
    assert _same_ranking(table, expected)


def test_lew_table_is_expected_workload():
    alpha, A = hyperexponential2(1.0, 10.0)
    p, mu1, mu2 = alpha[0], -A[0, 0], -A[1, 1]

    def mrl(a):  # closed form of the H2 residual life
        num = p / mu1 * math.exp(-mu1 * a) + (1 - p) / mu2 * math.exp(-mu2 * a)
        return num / (p * math.exp(-mu1 * a) + (1 - p) * math.exp(-mu2 * a))

    table = get_policy("LEW").score_table(LOWER, B, (alpha, A))
    expected = np.array([[mrl(b) + (l - 1) for l in range(1, B + 1)] for b in LOWER])
    np.testing.assert_allclose(table, expected, rtol=1e-12)


def test_lew_with_exponential_sizes_ties_like_sq():
    """Constant mean residual life: the scores must tie exactly across layers (no rounding
    noise deciding the ranking), i.e. the same ranking as SQ."""
    lower = np.arange(50) * 0.37
    lew = get_policy("LEW").score_table(lower, 6, ([1.0], [[-1.0]]))
    sq = get_policy("SQ").score_table(lower, 6)
    assert _same_ranking(lew, sq)
    assert np.all(lew == lew[0])


def test_names_are_case_insensitive_with_paper_suffixes():
    assert get_policy("sq-rtb-re").name.startswith("SQ-RTB-RE")
    assert get_policy("SQ(d)-RTB").name == "SQ-RTB"
    assert get_policy("re(d,T)", T=3.0).name == "RE(T=3)"
    assert set(POLICY_NAMES) == {"SQ", "SQ-RTB", "SQ-RE", "SQ-RTB-RE", "LAS", "LAS-QTB", "RE",
                                 "LEW"}
    pol = get_policy("LAS")
    assert get_policy(pol) is pol


def test_threshold_uses_layer_lower_boundary_robustly():
    """b_k = (k-1) delta is computed in floating point; 0.1 * 3 >= 0.3 must count as old."""
    lower = np.arange(6) * 0.1
    table = get_policy("RE", T=0.3).score_table(lower, 2)
    assert table[:, 0].tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]


def test_user_defined_policy_from_score():
    pol = Policy.from_score("LEW-half", lambda l, mrl, mean: mrl + 0.5 * (l - 1) * mean)
    assert pol.variables == ("l", "mrl", "mean") and pol.needs_sizes
    alpha, A = erlang(2, 2.0)
    table = pol.score_table(LOWER, B, (alpha, A))
    mrl = mean_residual_life((alpha, A), LOWER)
    np.testing.assert_allclose(table, mrl[:, None] + 0.5 * 2.0 * np.arange(B)[None, :])
    # a constant bound through a default argument is not a score variable
    shifted = Policy("shifted", lambda l, c=5.0: l + c)
    assert shifted.variables == ("l",)
    assert shifted.score_table(LOWER, B)[0].tolist() == [6.0, 7.0, 8.0]
    # a scalar score broadcasts: everybody ties (random routing among busy servers)
    assert np.all(Policy("random", lambda: 0.0).score_table(LOWER, B) == 0.0)


def test_policy_errors_name_the_parameter():
    with pytest.raises(UnknownName, match="JSQ.*SQ, SQ-RTB"):
        get_policy("JSQ")
    with pytest.raises(InvalidParameter, match="T=0"):
        get_policy("SQ-RE", T=0)
    with pytest.raises(InvalidParameter, match="T=nan"):
        get_policy("RE", T=float("nan"))
    with pytest.raises(InvalidParameter, match="score"):
        Policy("bad", lambda q: q)  # unknown variable name
    with pytest.raises(InvalidParameter, match="score"):
        Policy("bad", lambda *args: 0)
    with pytest.raises(InvalidParameter, match="score"):
        Policy("bad", 3.0)
    with pytest.raises(InvalidParameter, match="sizes"):
        get_policy("LEW").score_table(LOWER, B)  # needs the size law
    with pytest.raises(InvalidParameter, match="lower"):
        get_policy("SQ").score_table([0.0, 2.0, 1.0], B)
    with pytest.raises(InvalidParameter, match="B=0"):
        get_policy("SQ").score_table(LOWER, 0)
    with pytest.raises(InvalidParameter, match="score"):
        Policy("inf", lambda l: np.inf * l).score_table(LOWER, B)
    with pytest.raises(InvalidParameter, match="score"):
        Policy("shape", lambda l: np.ones(7)).score_table(LOWER, B)


# --------------------------------------------------------------------------------------------
# mean residual life
# --------------------------------------------------------------------------------------------


def test_mean_residual_life_exponential_is_constant():
    ages = np.array([0.0, 0.5, 3.0, 50.0, 800.0, 1e6])
    np.testing.assert_allclose(mean_residual_life(([1.0], [[-1.0]]), ages), 1.0, rtol=1e-13)
    np.testing.assert_allclose(mean_residual_life(([1.0], [[-4.0]]), ages), 0.25, rtol=1e-13)


def test_mean_residual_life_h2_against_mpmath_closed_form():
    alpha, A = hyperexponential2(1.0, 10.0, 0.3)
    p, mu1, mu2 = (mpmath.mpf(float(v)) for v in (alpha[0], -A[0, 0], -A[1, 1]))
    ages = np.array([[0.0, 0.1, 1.0], [7.5, 40.0, 2000.0]])  # any shape; large ages too
    got = mean_residual_life((alpha, A), ages)
    assert got.shape == ages.shape
    with mpmath.workdps(50):
        for a, g in zip(ages.ravel(), got.ravel()):
            a = mpmath.mpf(float(a))
            num = p / mu1 * mpmath.exp(-mu1 * a) + (1 - p) / mu2 * mpmath.exp(-mu2 * a)
            den = p * mpmath.exp(-mu1 * a) + (1 - p) * mpmath.exp(-mu2 * a)
            assert abs(g - float(num / den)) <= 1e-12 * float(num / den)


def _erlang_ccdf(k, rate, x):
    return math.exp(-rate * x) * sum((rate * x) ** i / math.factorial(i) for i in range(k))


def test_mean_residual_life_erlang_by_integrating_the_ccdf():
    k, mean = 3, 2.0
    alpha, A = erlang(k, mean)
    rate = k / mean
    ages = np.array([0.0, 0.4, 2.0, 9.0])
    got = mean_residual_life((alpha, A), ages)
    for a, g in zip(ages, got):
        integral, _ = quad(lambda x: _erlang_ccdf(k, rate, x), a, np.inf, epsabs=1e-13,
                           epsrel=1e-12)
        assert g == pytest.approx(integral / _erlang_ccdf(k, rate, a), rel=1e-9)
    # increasing failure rate: the residual life decreases towards 1/rate
    assert np.all(np.diff(got) < 0) and got[-1] > 1 / rate
    assert mean_residual_life((alpha, A), 500.0) == pytest.approx(1 / rate, rel=1e-2)


def test_mean_residual_life_hyper_erlang_by_integrating_the_ccdf():
    alpha, A = hyper_erlang(2, 1.0, 10.0, 0.5)
    # independent ccdf: mixture of two Erlang-2 read off the representation
    p = alpha[0]
    r1, r2 = -A[0, 0], -A[2, 2]

    def ccdf(x):
        return p * _erlang_ccdf(2, r1, x) + (1 - p) * _erlang_ccdf(2, r2, x)

    for a in (0.0, 1.0, 5.0, 30.0):
        integral, _ = quad(ccdf, a, np.inf, epsabs=1e-14, epsrel=1e-12, limit=200)
        assert mean_residual_life((alpha, A), a) == pytest.approx(integral / ccdf(a), rel=1e-8)


def test_mean_residual_life_errors():
    with pytest.raises(InvalidParameter, match="parameter a="):
        mean_residual_life(([1.0], [[-1.0]]), [-1.0])
    with pytest.raises(InvalidParameter, match="parameter a="):
        mean_residual_life(([1.0], [[-1.0]]), [np.inf])
    with pytest.raises(InvalidParameter, match="alpha"):
        mean_residual_life(([0.5], [[-1.0]]), 1.0)
