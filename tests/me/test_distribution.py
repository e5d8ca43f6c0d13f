"""Tests of symq.me.distribution.ME: exact moments, numerics vs 50-digit mpmath, sampling, scipy.

Independent references: hand-derived closed forms (Erlang, hyperexponential, hypoexponential,
(2/3)(1 + cos t) e^{-t}), mpmath at 50+ digits, scipy quadrature, Kolmogorov-Smirnov tests.
"""

from __future__ import annotations

import math
import pickle

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from symq.core.errors import InvalidParameter, SymqError
from symq.me.distribution import ME, NotADistribution
from symq.me.transform import RationalLST, s

R = sp.Rational


# ------------------------------------------------------------------ reference closed forms
def cos_example() -> ME:
    """f(t) = (2/3)(1 + cos t) e^{-t}: ME(3), not PH (zero at t = pi); LST derived by hand."""
    return ME.from_expr(R(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1)))


def cos_pdf(t):
    return mpmath.mpf(2) / 3 * (1 + mpmath.cos(t)) * mpmath.exp(-t)


def cos_ccdf(t):
    # 1 - (2/3)[3/2 - e^{-t} + e^{-t}(sin t - cos t)/2]
    e = mpmath.exp(-t)
    return mpmath.mpf(2) / 3 * (e - e * (mpmath.sin(t) - mpmath.cos(t)) / 2)


def erlang_pdf(k, lam, t):
    return mpmath.mpf(lam) ** k * t ** (k - 1) * mpmath.exp(-lam * t) / mpmath.factorial(k - 1)


def erlang_ccdf(k, lam, t):
    return mpmath.gammainc(k, lam * t, mpmath.inf, regularized=True)


# ------------------------------------------------------------------ exact quantities
@pytest.mark.parametrize("k, lam", [(1, R(3)), (3, R(2)), (5, R(7, 3))])
def test_erlang_moments_and_derivatives_exact(k, lam):
    X = ME.erlang(k, lam)
    assert X.order == k
    # m_j = k (k+1) ... (k+j-1) / lam^j
    assert X.moments(5) == [sp.rf(k, j) / lam**j for j in range(1, 6)]
    assert X.mean() == k / lam and X.variance() == k / lam**2 and X.scv == R(1, k)
    # f(t) = lam^k t^{k-1} e^{-lam t}/(k-1)!  =>  f^{(j)}(0) = lam^k C(j, k-1) (-lam)^{j-k+1}
    expected = [0 if j < k - 1 else lam**k * sp.binomial(j, k - 1) * (-lam) ** (j - k + 1)
                for j in range(k + 3)]
    assert X.derivatives_at_zero(k + 3) == expected
    assert X.moment(3, "standardized") == 2 / sp.sqrt(k)  # Erlang skewness
    assert X.moment(4, "standardized") == 3 + R(6, k)  # non-excess kurtosis


def test_hyperexponential_moments_exact():
    p, lam = [R(1, 5), R(1, 2), R(3, 10)], [R(1), R(4), R(1, 3)]
    X = ME.hyperexponential(p, lam)
    assert X.order == 3
    assert X.moments(6) == [sp.factorial(j) * sum(pi / li**j for pi, li in zip(p, lam))
                            for j in range(1, 7)]
    assert X.derivatives_at_zero(5) == [sum(pi * li * (-li) ** j for pi, li in zip(p, lam))
                                        for j in range(5)]


def test_moment_kinds_follow_scipy_semantics():
    X = cos_example()
    m = [1] + X.moments(4)
    mu = m[1]
    assert X.moment(0) == 1 and X.moment(1) == mu
    assert X.moment(2, "central") == m[2] - mu**2 == X.variance()
    assert X.moment(3, "central") == m[3] - 3 * mu * m[2] + 2 * mu**3
    assert X.moment(1, "standardized") == 0 and X.moment(2, "standardized") == 1
    assert X.moment(4, "standardized") == X.moment(4, "central") / X.variance()**2
    assert isinstance(X.moment(3, "central"), sp.Rational)
    with pytest.raises(InvalidParameter, match="kind"):
        X.moment(2, "excess")
    with pytest.raises(InvalidParameter, match="order"):
        X.moment(-1)


RATES = st.fractions(min_value=R(1, 50), max_value=50, max_denominator=1000)


@given(st.lists(st.tuples(st.integers(1, 20), RATES), min_size=1, max_size=4))
@settings(max_examples=40, deadline=None)
def test_hyperexponential_property(components):
    weights = [w for w, _ in components]
    probs = [R(w, sum(weights)) for w in weights]
    rates = [R(r.numerator, r.denominator) for _, r in components]
    X = ME.hyperexponential(probs, rates)
    assert X.lst(0) == 1  # LST at 0 is 1
    assert X.order == len(set(rates))
    assert X.moments(4) == [sp.factorial(j) * sum(p / r**j for p, r in zip(probs, rates))
                            for j in range(1, 5)]
    # all poles real and simple, with residues sum of p_i r_i over equal rates
    merged: dict = {}
    for p, r in zip(probs, rates):
        merged[r] = merged.get(r, 0) + p * r
    residues = X.residues(dps=30)
    assert len(residues) == len(merged)
    tol = mpmath.mpf(10) ** -25
    with mpmath.workdps(40):
        check_residues(residues, merged, tol)
    assert np.all(np.diff(X.cdf(np.linspace(0, 10 * float(X.mean()), 200))) >= -1e-15)


def check_residues(residues, merged, tol):
    for pole, coeffs in residues:
        rate = min(merged, key=lambda r: abs(pole + mpmath.mpf(r.p) / r.q))
        assert isinstance(pole, mpmath.mpf) and len(coeffs) == 1
        assert abs(pole + mpmath.mpf(rate.p) / rate.q) < tol * max(1, rate)
        expected = mpmath.mpf(merged[rate].p) / merged[rate].q
        assert abs(coeffs[0] - expected) < tol * max(1, expected)


# ------------------------------------------------------------------ numerics vs 50-digit mpmath
def _rel(x, ref):
    return abs(mpmath.mpf(float(x)) - ref) / abs(ref)


def test_erlang_float_and_mp_against_closed_form():
    k, lam = 3, 2
    X = ME.erlang(k, lam)
    ts = np.concatenate([np.geomspace(1e-10, 1, 25), np.linspace(1.5, 60, 25)])
    with mpmath.workdps(80):
        pdf_ref = [erlang_pdf(k, lam, mpmath.mpf(t)) for t in ts]
        ccdf_ref = [erlang_ccdf(k, lam, mpmath.mpf(t)) for t in ts]
        cdf_ref = [1 - c for c in ccdf_ref]
        pdf, cdf, ccdf = X.pdf(ts), X.cdf(ts), X.ccdf(ts)
        assert max(_rel(pdf[i], pdf_ref[i]) for i in range(len(ts))) < 1e-13
        assert max(_rel(cdf[i], cdf_ref[i]) for i in range(len(ts))) < 1e-13
        assert max(_rel(ccdf[i], ccdf_ref[i]) for i in range(len(ts))) < 1e-13
        for t in (R(1, 10**12), R(1, 3), 7, "12.5"):
            tm = mpmath.mpf(sp.Rational(t).p) / sp.Rational(t).q
            assert abs(X.pdf_mp(t, dps=50) / erlang_pdf(k, lam, tm) - 1) < mpmath.mpf(10) ** -48
            assert abs(X.ccdf_mp(t, dps=50) / erlang_ccdf(k, lam, tm) - 1) < mpmath.mpf(10) ** -48


def test_cos_example_float_and_mp():
    X = cos_example()
    ts = np.linspace(0, 30, 301)
    with mpmath.workdps(80):
        pdf_ref = [cos_pdf(mpmath.mpf(t)) for t in ts]
        ccdf_ref = [cos_ccdf(mpmath.mpf(t)) for t in ts]
        pdf, ccdf = X.pdf(ts), X.ccdf(ts)
        # absolute error relative to f(0) = 4/3 (f touches 0 at t = pi, 3 pi, ...)
        assert max(abs(pdf[i] - float(pdf_ref[i])) for i in range(len(ts))) < 1e-15
        # tail probability with relative accuracy
        assert max(_rel(ccdf[i], ccdf_ref[i]) for i in range(len(ts))) < 1e-13
        for t in ("0.25", 1, R(22, 7), 20):
            tm = mpmath.mpf(sp.Rational(t).p) / sp.Rational(t).q
            assert abs(X.pdf_mp(t) - cos_pdf(tm)) < mpmath.mpf(10) ** -50
            assert abs(X.cdf_mp(t) - (1 - cos_ccdf(tm))) < mpmath.mpf(10) ** -50
    assert X.pdf(0.0) == pytest.approx(4 / 3, rel=1e-15)


def test_small_t_relative_accuracy_with_vanishing_derivatives():
    """6/((s+1)(s+2)(s+3)): f = 3e^{-t} - 6e^{-2t} + 3e^{-3t} ~ 3t^2 near 0 (terms cancel)."""
    X = ME.from_expr(6 / ((s + 1) * (s + 2) * (s + 3)))
    assert X.derivatives_at_zero(3) == [0, 0, 6]
    ts = np.geomspace(1e-12, 2, 40)
    with mpmath.workdps(120):
        for t, f, F in zip(ts, X.pdf(ts), X.cdf(ts)):
            tm = mpmath.mpf(t)
            ref_f = 3 * mpmath.exp(-tm) - 6 * mpmath.exp(-2 * tm) + 3 * mpmath.exp(-3 * tm)
            ref_F = 1 - (3 * mpmath.exp(-tm) - 3 * mpmath.exp(-2 * tm) + mpmath.exp(-3 * tm))
            assert _rel(f, ref_f) < 1e-13
            assert _rel(F, ref_F) < 1e-13
    assert np.all(X.pdf(np.geomspace(1e-100, 1e-3, 50)) > 0)  # 3t^2 > 0, no round-off sign


def test_nearly_double_pole_accuracy():
    """Rates 1 and 1 + 1e-10: residues +-1e10 cancel; the expm fallback keeps the accuracy."""
    eps = R(1, 10**10)
    X = ME.from_expr((1 + eps) / ((s + 1) * (s + 1 + eps)))
    assert [m for _, m in X.poles()] == [1, 1]  # exactly two simple poles
    ts = np.concatenate([np.geomspace(1e-8, 1, 20), np.linspace(1.5, 60, 40)])
    with mpmath.workdps(100):
        e = mpmath.mpf(1) / 10**10
        for t, f, G in zip(ts, X.pdf(ts), X.ccdf(ts)):
            tm = mpmath.mpf(t)
            ref_f = (1 + e) * (mpmath.exp(-tm) - mpmath.exp(-(1 + e) * tm)) / e
            ref_G = ((1 + e) * mpmath.exp(-tm) - mpmath.exp(-(1 + e) * tm)) / e
            assert _rel(f, ref_f) < 1e-12
            assert _rel(G, ref_G) < 1e-12
            assert abs(X.pdf_mp(float(t)) / ref_f - 1) < mpmath.mpf(10) ** -48


def test_wide_scale_mixture_tail():
    X = ME.hyperexponential([R(1, 2), R(1, 2)], [10**4, R(1, 100)])
    ts = np.geomspace(1e-9, 5e4, 80)
    with mpmath.workdps(60):
        for t, f, G in zip(ts, X.pdf(ts), X.ccdf(ts)):
            tm = mpmath.mpf(t)
            ref_G = (mpmath.exp(-10**4 * tm) + mpmath.exp(-tm / 100)) / 2
            ref_f = 5000 * mpmath.exp(-10**4 * tm) + mpmath.exp(-tm / 100) / 200
            assert _rel(f, ref_f) < 1e-13 and _rel(G, ref_G) < 1e-13


def test_quadrature_consistency():
    X = ME.from_expr((1 + 2 * s) * 24 / ((s + 2) ** 2 * (s**2 + 2 * s + 6)))
    assert X.lst(0) == 1
    total, _ = integrate.quad(X.pdf, 0, np.inf, epsabs=1e-13, epsrel=1e-13, limit=200)
    assert total == pytest.approx(1, abs=1e-11)
    for t in (0.1, 0.7, 2.0, 5.0):
        part, _ = integrate.quad(X.pdf, 0, t, epsabs=1e-14, epsrel=1e-13)
        assert part == pytest.approx(float(X.cdf(t)), abs=1e-12)
    for k, mk in enumerate(X.moments(4), start=1):
        value, _ = integrate.quad(lambda t, k=k: t**k * X.pdf(t), 0, np.inf, epsrel=1e-12,
                                  limit=200)
        assert value == pytest.approx(float(mk), rel=1e-9)


def test_edge_values_and_shapes():
    X = ME.erlang(2, 1)
    assert X.pdf(-1.0) == 0 and X.cdf(-5) == 0 and X.ccdf(-1) == 1
    assert X.pdf(np.inf) == 0 and X.cdf(np.inf) == 1 and X.ccdf(np.inf) == 0
    assert X.pdf(1e300) == 0 and X.ccdf(1e300) == 0
    grid = np.linspace(-1, 5, 12).reshape(3, 4)
    assert X.pdf(grid).shape == (3, 4) and X.cdf(grid).shape == (3, 4)
    assert np.ndim(X.pdf(1.0)) == 0
    with pytest.raises(InvalidParameter, match="NaN"):
        X.pdf([1.0, np.nan])


# ------------------------------------------------------------------ inversion and sampling
def test_icdf_inverts_cdf():
    X = cos_example()
    p = np.array([1e-15, 1e-6, 0.01, 0.3, 0.5, 0.8, 0.999, 1 - 1e-12])
    t = X.icdf(p)
    assert np.allclose(X.cdf(t), p, rtol=1e-12, atol=1e-15)
    assert X.icdf(0.0) == 0 and X.icdf(1.0) == np.inf
    q = np.array([1e-300, 1e-100, 1e-20, 0.2, 0.6])
    tq = X.iccdf(q)
    assert np.allclose(X.ccdf(tq), q, rtol=1e-11, atol=0)
    E = ME.exponential(R(5, 2))
    p = np.linspace(0.001, 0.999, 50)
    assert np.allclose(E.icdf(p), -np.log1p(-p) / 2.5, rtol=1e-14)
    with pytest.raises(InvalidParameter, match="probabilities"):
        X.icdf(1.5)


@pytest.mark.parametrize("X", [cos_example(), ME.erlang(4, 3),
                               ME.hyperexponential([R(9, 10), R(1, 10)], [10, R(1, 10)])],
                         ids=["cos", "erlang", "hyperexp"])
def test_sample_ks_and_mean(X):
    n = 20000
    x = X.sample(n, rng=12345)
    assert x.shape == (n,) and np.all(x >= 0)
    assert stats.kstest(x, X.cdf).pvalue > 1e-3
    mean, sd = float(X.mean()), math.sqrt(float(X.variance()))
    assert abs(x.mean() - mean) < 4.5 * sd / math.sqrt(n)
    assert np.array_equal(x, X.sample(n, rng=12345))
    assert not np.array_equal(x, X.sample(n, rng=54321))
    assert X.sample((2, 3), rng=np.random.default_rng(1)).shape == (2, 3)


@pytest.mark.parametrize("numerator, denominator, message", [
    ([2, -1], [2, 3, 1], "negative, f\\(0\\)"),                  # f(0) = -1
    ([1, -1, 1], [1, 3, 3, 1], "negative, f\\(0.7"),             # interior negative dip
    ([10], [10, 3, R(51, 5), 1], "dominant pole .* complex"),    # complex dominant pole
    ([-2], [-2, -1, 1], "real part >= 0"),                       # pole at s = 2
])
def test_not_a_distribution(numerator, denominator, message):
    X = ME.from_transform(numerator, denominator)
    X.pdf(np.linspace(0, 3, 5))  # the ME function itself can be evaluated
    for call in (lambda: X.sample(10, rng=0), lambda: X.icdf(0.5), X.to_scipy, X.check_density):
        with pytest.raises(NotADistribution, match=message):
            call()
    assert issubclass(NotADistribution, SymqError)


# ------------------------------------------------------------------ scipy
def test_to_scipy_agrees():
    X = cos_example()
    D = X.to_scipy()
    t = np.array([0.0, 0.3, 1.0, np.pi, 7.0])
    assert np.allclose(D.pdf(t), X.pdf(t), rtol=1e-15, atol=0)
    assert np.allclose(D.cdf(t), X.cdf(t), rtol=1e-15, atol=0)
    assert D.mean() == pytest.approx(float(X.mean()), rel=1e-15)
    assert D.variance() == pytest.approx(float(X.variance()), rel=1e-15)
    assert D.skewness() == pytest.approx(float(X.moment(3, "standardized")), rel=1e-14)
    assert D.moment(3, "raw") == pytest.approx(float(X.moments(3)[2]), rel=1e-15)
    assert D.icdf(0.25) == pytest.approx(float(X.icdf(0.25)), rel=1e-14)
    assert np.array_equal(D.sample(5, rng=7), X.sample(5, rng=7))
    # scipy derives the rest: median by inversion, entropy by quadrature, transformations
    assert D.cdf(D.median()) == pytest.approx(0.5, abs=1e-12)
    ent, _ = integrate.quad(lambda u: -X.pdf(u) * np.log(X.pdf(u)) if X.pdf(u) > 0 else 0.0,
                            0, 60, limit=200, points=[np.pi, 3 * np.pi])
    assert D.entropy() == pytest.approx(ent, rel=1e-6)
    assert (2 * D).cdf(2.0) == pytest.approx(float(X.cdf(1.0)), rel=1e-14)


# ------------------------------------------------------------------ API, errors, identity
def test_constructors_and_identity():
    X = ME.erlang(2, 3)
    assert X == ME.from_expr(9 / (s + 3) ** 2) == ME.from_transform([9.0], [9, 6, 1])
    assert X == ME(RationalLST.from_coefficients([9], [9, 6, 1]))
    assert hash(X) == hash(ME.from_expr(9 / (s + 3) ** 2)) and len({X, ME.erlang(2, 3)}) == 1
    assert X != ME.erlang(2, 2) and X != "ME"
    assert pickle.loads(pickle.dumps(X)) == X
    assert X.numerator == (9,) and X.denominator == (9, 6, 1)
    assert sp.simplify(X.transform - 9 / (s + 3) ** 2) == 0
    assert repr(X) == "ME(9/(s**2 + 6*s + 9))"
    assert X._repr_latex_().startswith("$") and "\\frac{9}" in X._repr_latex_()
    with pytest.raises(AttributeError):
        X.lst = None
    assert ME.hyperexponential([0.25, 0.75], [1.0, 1.0]) == ME.exponential(1)
    assert ME.hyperexponential([0.1, 0.2, 0.7], [1, 2, 3]).order == 3  # float mass 1 +- ulp


@pytest.mark.parametrize("make, name", [
    (lambda: ME.exponential(0), "rate"),
    (lambda: ME.exponential(float("nan")), "rate"),
    (lambda: ME.erlang(0, 1), "k"),
    (lambda: ME.erlang(2.5, 1), "k"),
    (lambda: ME.hyperexponential([R(1, 2), R(1, 3)], [1, 2]), "probs"),
    (lambda: ME.hyperexponential([R(3, 2), R(-1, 2)], [1, 2]), "probs"),
    (lambda: ME.hyperexponential([1], [1, 2]), "probs"),
    (lambda: ME.from_transform([1, 1], [1, 1]), "numerator"),      # atom / not strictly proper
    (lambda: ME.from_transform([1], [2, 1]), "numerator"),         # mass 1/2
    (lambda: ME("1/(s+1)"), "lst"),
    (lambda: ME.erlang(2, 1).poles(dps=2), "dps"),
])
def test_bad_input(make, name):
    with pytest.raises(InvalidParameter, match=f"parameter {name}="):
        make()
