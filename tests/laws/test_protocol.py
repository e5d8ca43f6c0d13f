"""The distribution protocol's derived verbs against closed forms of the exponential and Weibull
laws (independent: textbook formulas and scipy's own implementations)."""

import math

import numpy as np
import pytest
import scipy.stats as st

from symq.core.errors import InvalidParameter
from symq.laws import Distribution


class Weibull(Distribution):
    """Weibull(k) of scale 1, implementing only pdf, cdf and raw moments."""

    def __init__(self, k):
        self.k = k

    def pdf(self, x):
        x = np.asarray(x, dtype=float)
        safe = np.where(x > 0, x, 1.0)
        return np.where(x > 0, self.k * safe ** (self.k - 1) * np.exp(-safe ** self.k), 0.0)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        return np.where(x > 0, -np.expm1(-np.where(x > 0, x, 0.0) ** self.k), 0.0)

    def _raw_moment(self, order):
        return math.gamma(1.0 + order / self.k)


@pytest.mark.parametrize("k", [1.0, 0.7, 2.5])
def test_moments_of_every_kind_match_scipy(k):
    law, ref = Weibull(k), st.weibull_min(k)
    assert law.mean() == pytest.approx(ref.mean(), rel=1e-12)
    assert law.variance() == pytest.approx(ref.var(), rel=1e-10)
    mean, var, skew, kurt = ref.stats(moments="mvsk")
    assert law.moment(3, "standardized") == pytest.approx(float(skew), rel=1e-8)
    assert law.moment(4, "standardized") == pytest.approx(float(kurt) + 3.0, rel=1e-8)
    assert law.moment(2, "central") == pytest.approx(float(var), rel=1e-10)
    assert law.moment(0) == 1


def test_exponential_skewness_and_kurtosis_are_the_textbook_values():
    law = Weibull(1.0)  # Exp(1): skewness 2, kurtosis 9
    assert law.moment(3, "standardized") == pytest.approx(2.0, rel=1e-12)
    assert law.moment(4, "standardized") == pytest.approx(9.0, rel=1e-12)


@pytest.mark.parametrize("k", [0.7, 2.5])
def test_icdf_inverts_the_closed_form(k):
    p = np.array([1e-6, 0.01, 0.5, 0.9, 0.999999])
    exact = (-np.log1p(-p)) ** (1.0 / k)
    assert np.allclose(Weibull(k).icdf(p), exact, rtol=1e-10)
    assert Weibull(k).icdf(0.0) == 0.0 and Weibull(k).icdf(1.0) == math.inf


def test_ccdf_default_and_sample_mean_within_its_ci():
    law = Weibull(2.5)
    assert np.allclose(law.ccdf([0.5, 1.0]), np.exp(-np.array([0.5, 1.0]) ** 2.5))
    draws = law.sample(20_000, rng=4)
    half = 4.0 * draws.std() / math.sqrt(draws.size)  # 4 sigma: fails with probability 6e-5
    assert abs(draws.mean() - st.weibull_min(2.5).mean()) < half
    assert np.array_equal(draws, law.sample(20_000, rng=4))
    assert isinstance(law.sample(rng=1), float)


def test_to_scipy_gives_scipys_derived_quantities():
    law = Weibull(1.0).to_scipy()
    assert law.entropy() == pytest.approx(1.0, rel=1e-6)  # entropy of Exp(1) is 1
    assert law.median() == pytest.approx(math.log(2.0), rel=1e-10)
    assert float(law.cdf(1.0)) == pytest.approx(1 - math.exp(-1.0), rel=1e-12)


def test_bad_arguments_are_named():
    law = Weibull(1.0)
    with pytest.raises(InvalidParameter, match="order"):
        law.moment(-1)
    with pytest.raises(InvalidParameter, match="kind"):
        law.moment(2, "cumulant")
    with pytest.raises(InvalidParameter, match="probabilities in"):
        law.icdf([0.5, 1.5])
