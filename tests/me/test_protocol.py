"""ME implements the distribution protocol of symq.laws (issue 12, item 2).

Every value is checked against an independent computation: moments against sympy derivatives of
the transform expression at s = 0 (not RationalLST.moments), the cdf against adaptive quadrature
of the pdf, the sample mean against the exact mean with a confidence interval from the exact
variance, and the scipy object against ME's own verbs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate

from symq.core.errors import InvalidParameter
from symq.laws import Distribution, ScipyAdapter
from symq.me import ME
from symq.me.scipy_adapter import MEScipyAdapter

s = sp.Symbol("s")
R = sp.Rational

LAWS = {
    "erlang3": 8 / (s + 2) ** 3,
    "ph3_complex": (s**2 + 6 * s + 13) / ((s + 1) * ((s + 2) ** 2 + 9)),
    "cos_touching": R(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1)),
    "hyperexp2": R(1, 3) / (s + 1) + R(2, 3) * 5 / (s + 5),
}


def transform_moment(expr: sp.Expr, k: int) -> sp.Rational:
    """E[X^k] = (-1)^k d^k/ds^k f*(s) at s = 0, by sympy on the expression itself."""
    return sp.nsimplify(sp.simplify((-1) ** k * sp.diff(expr, s, k).subs(s, 0)))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_moments_mean_variance_are_the_transform_derivatives(name):
    expr = LAWS[name]
    X = ME.from_expr(expr)
    assert isinstance(X, Distribution)
    m = [sp.Integer(1)] + [transform_moment(expr, k) for k in range(1, 5)]
    mean, variance = X.mean(), X.variance()          # methods, exact sympy rationals
    assert isinstance(mean, sp.Rational) and isinstance(variance, sp.Rational)
    assert mean == m[1]
    assert variance == m[2] - m[1] ** 2
    assert X.scv == variance / mean**2
    for k in range(1, 5):
        assert X.moment(k) == X.moment(k, "raw") == m[k]
        central = sum(sp.binomial(k, i) * m[i] * (-m[1]) ** (k - i) for i in range(k + 1))
        assert X.moment(k, "central") == sp.expand(central)
        assert sp.simplify(X.moment(k, "standardized") - central / variance ** R(k, 2)) == 0
    assert X.moment(0) == 1


def test_the_issue_example_mean_is_callable():
    # issue 12: "e.mean() fails with 'One' object is not callable"
    e = ME.exponential(1)
    assert e.mean() == 1 and e.variance() == 1
    assert e.support() == (0.0, math.inf)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_cdf_is_the_integral_of_the_pdf(name):
    X = ME.from_expr(LAWS[name])
    ts = np.array([0.05, 0.3, 1.0, 2.5, 6.0])
    cdf = X.cdf(ts)
    assert isinstance(cdf, np.ndarray) and cdf.dtype == float and cdf.shape == ts.shape
    for t, F in zip(ts, cdf):
        integral, error = integrate.quad(lambda u: float(X.pdf(u)), 0.0, float(t),
                                         epsabs=1e-14, epsrel=1e-12, limit=200)
        assert F == pytest.approx(integral, rel=1e-10, abs=1e-13)
        assert float(X.ccdf(t)) == pytest.approx(1.0 - integral, rel=1e-9, abs=1e-13)


@pytest.mark.parametrize("name", ["erlang3", "ph3_complex", "hyperexp2"])
def test_sample_mean_within_a_confidence_interval(name):
    X = ME.from_expr(LAWS[name])
    n = 20000
    x = X.sample(n, rng=np.random.default_rng(2024))
    assert x.shape == (n,) and np.all(x >= 0)
    mean, sd = float(X.mean()), math.sqrt(float(X.variance()))
    half_width = 4.0 * sd / math.sqrt(n)          # 4 standard errors: a failure is a real bias
    assert abs(x.mean() - mean) < half_width
    # the sample variance too, within a wide band (its standard error needs the 4th moment)
    m4 = float(X.moment(4, "central"))
    se_var = math.sqrt((m4 - sd**4) / n)
    assert abs(x.var(ddof=1) - sd**2) < 5 * se_var


def test_sample_draws_through_as_generator():
    X = ME.erlang(2, 3)
    assert np.array_equal(X.sample((3, 4), rng=7), X.sample((3, 4), rng=np.random.default_rng(7)))
    assert X.sample(rng=1).shape == ()
    with pytest.raises(InvalidParameter, match="rng"):
        X.sample(5, rng=-1)
    with pytest.raises(InvalidParameter, match="rng"):
        X.sample(5, rng="seed")


def test_to_scipy_goes_through_the_shared_adapter_and_agrees():
    X = ME.from_expr(LAWS["ph3_complex"])
    assert issubclass(MEScipyAdapter, ScipyAdapter)
    D = X.to_scipy()
    t = np.array([0.0, 0.2, 1.0, 3.0, 9.0])
    assert np.allclose(D.pdf(t), X.pdf(t), rtol=1e-15, atol=0)
    assert np.allclose(D.cdf(t), X.cdf(t), rtol=1e-15, atol=0)
    assert np.allclose(D.ccdf(t), X.ccdf(t), rtol=1e-15, atol=0)
    p = np.array([1e-6, 0.1, 0.5, 0.9])
    assert np.allclose(D.icdf(p), X.icdf(p), rtol=1e-14, atol=0)
    q = np.array([1e-30, 1e-12, 0.3])
    assert np.allclose(D.iccdf(q), X.iccdf(q), rtol=1e-14, atol=0)
    assert D.mean() == pytest.approx(float(X.mean()), rel=1e-14)
    assert D.variance() == pytest.approx(float(X.variance()), rel=1e-14)
    # the tail inverse is accurate where 1 - q rounds to 1: cdf at the quantile is 1 - q
    assert float(X.ccdf(D.iccdf(1e-30))) == pytest.approx(1e-30, rel=1e-10)
