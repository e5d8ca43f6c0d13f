"""fit(): candidates over orders and J, the chosen fit is certified, the report explains
rejections."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import stats

from symq.core.errors import InvalidParameter
from symq.me.certification import Nonnegativity, certify
from symq.me.distribution import ME
from symq.me.fit import NoCertifiedFit, Target, fit


def _lognormal_moments(sigma, K):
    with mpmath.workdps(60):
        return [+mpmath.exp(k * (k - 1) * mpmath.mpf(sigma) ** 2 / 2) for k in range(1, K + 1)]


def test_exact_target_is_recovered_and_certified():
    target = ME.erlang(3, 3)                                  # mean 1, a density
    me, report = fit(target.moments(7), order_max=4)
    # the order-4 candidate reduces to the exact Erlang(3) (moment order 3)
    assert me == target
    assert report.best.status == "NONNEGATIVE"
    assert all(c.order <= 4 for c in report.candidates)


def test_lognormal_fit_is_certified_and_every_candidate_is_reported():
    sigma = 0.5
    dist = stats.lognorm(sigma, scale=np.exp(-sigma**2 / 2))
    target = Target(tuple(_lognormal_moments(sigma, 7)), (0, 0, 0), pdf=dist.pdf)
    me, report = fit(target, order_max=4)
    assert certify(me).status is Nonnegativity.NONNEGATIVE      # independent re-certification
    grid = me.pdf_mp([mpmath.mpf(k) / 50 for k in range(1, 1001)], dps=30)
    assert min(grid) >= 0                                       # supporting evidence
    pairs = {(c.order, c.zero_used) for c in report.candidates}
    assert pairs == {(n, J) for n in range(1, 5) for J in range(0, min(3, n - 1) + 1)}
    rejected = [c for c in report.candidates if c.status != "NONNEGATIVE"]
    assert rejected and all(c.reason for c in rejected)
    # the chosen candidate has the smallest L1 distance among the certified ones
    certified = [c for c in report.candidates if c.status == "NONNEGATIVE"]
    assert report.best.distance == min(c.distance for c in certified)
    assert "<- chosen" in report.table()


def test_classical_only_and_no_certified_fit():
    # sigma = 0.5: classical Padé of orders 2..3 is NEGATIVE (f(0) < 0), so with order_max = 3
    # only the order-1 (exponential) candidate certifies
    me, report = fit(_lognormal_moments(0.5, 5), order_max=3, method="classical")
    assert me.order == 1 and me == ME.exponential(1)
    with pytest.raises(NoCertifiedFit, match="no certified nonnegative ME fit"):
        fit(_lognormal_moments(0.5, 5), order_max=3, method="extended", zero=())
    none, report = fit(_lognormal_moments(0.5, 5), order_max=3, method="extended",
                       raise_if_none=False)
    assert none is None and report.best is None


def test_sympy_target_gives_exact_moments():
    from sympy import stats as sstats

    X = sstats.Gamma("X", 2, sp.Rational(1, 2))                # Erlang(2) with mean 1
    target = Target.from_sympy(X, 3, n_zero=1)
    assert target.moments == (1, sp.Rational(3, 2), 3) and target.zero == (0,)
    me, _ = fit(target, order_max=2)
    assert me == ME.erlang(2, 2)


def test_bad_arguments():
    with pytest.raises(InvalidParameter, match="method"):
        fit([1, 2, 6], method="best")
    with pytest.raises(InvalidParameter, match="order_max"):
        fit([1, 2, 6], order_max=0)


def test_scipy_and_sympy_distributions_are_accepted_as_targets():
    from sympy import stats as sstats

    # Erlang(2) with mean 1 as a scipy distribution: float moments, mpmath path
    me, report = fit(stats.gamma(2, scale=0.5), order_max=2, zero=(0,))
    assert report.best.status == "NONNEGATIVE"
    np.testing.assert_allclose([float(m) for m in me.moments(3)], [1.0, 1.5, 3.0], rtol=1e-12)
    # the same law from sympy.stats: exact moments and values at zero, exact Erlang recovered
    me, _ = fit(sstats.Gamma("Y", 2, sp.Rational(1, 2)), order_max=2)
    assert me == ME.erlang(2, 2)


def test_from_moments_constructor_matches_the_exact_transform():
    # hypoexponential(1, 2): LST 2/((s+1)(s+2)); its moments from sympy's series at s = 0
    s = sp.Symbol("s")
    lst = 2 / ((s + 1) * (s + 2))
    series = sp.series(lst, s, 0, 4).removeO()
    moments = [sp.factorial(k) * (-1) ** k * series.coeff(s, k) for k in range(1, 4)]
    assert ME.from_moments(moments) == ME.from_expr(lst)


def _quadrature_moment(dist, k):
    """E[X^k] by 40-digit quadrature of the density written out here (not scipy's, not fit's)."""
    name, scale = dist.dist.name, mpmath.mpf(dist.kwds["scale"])
    if name == "lognorm":               # x = scale e^(sigma z), z standard normal
        sigma = mpmath.mpf(dist.args[0])
        return mpmath.quad(lambda z: (scale * mpmath.exp(sigma * z)) ** k * mpmath.exp(-z * z / 2),
                           [-mpmath.inf, 0, mpmath.inf]) / mpmath.sqrt(2 * mpmath.pi)
    if name == "weibull_min":           # x = scale u^(1/c), u standard exponential
        c = mpmath.mpf(dist.args[0])
        return mpmath.quad(lambda u: (scale * u ** (1 / c)) ** k * mpmath.exp(-u),
                           [0, 1, mpmath.inf])
    if name == "gamma":                 # density x^(a-1) e^(-x/scale) / (Gamma(a) scale^a)
        a = mpmath.mpf(dist.args[0])
        return mpmath.quad(lambda x: x ** (k + a - 1) * mpmath.exp(-x / scale),
                           [0, 1, mpmath.inf]) / (mpmath.gamma(a) * scale**a)
    raise AssertionError(name)


@pytest.mark.parametrize("dist", [stats.lognorm(1.0, scale=0.5), stats.weibull_min(0.7, scale=2.0),
                                  stats.gamma(2.5, scale=0.4), stats.expon(scale=3.0)],
                         ids=["lognorm", "weibull", "gamma", "expon"])
def test_scipy_targets_of_closed_form_families_get_their_moments_to_full_precision(dist):
    target = Target.from_scipy(dist, 7)
    for k, value in enumerate(target.moments, start=1):
        # scipy's own float moments drift for higher orders (lognormal m6 is 3% low, the
        # exponential's m6 off by 1e-9): compared for the first three only
        if k <= 3:
            assert float(value) == pytest.approx(float(dist.moment(k)), rel=1e-6), k
        with mpmath.workdps(40):
            if dist.dist.name == "expon":   # E[X^k] = k! scale^k, an integer here
                reference = mpmath.mpf(math.factorial(k) * 3**k)
            else:
                reference = _quadrature_moment(dist, k)
            assert abs(mpmath.mpf(value) / reference - 1) < mpmath.mpf(10) ** -25, k


def test_a_lognormal_fits_at_order_four_from_its_exact_moments():
    """scipy's float moments m1..m7 of a lognormal (sigma = 1) have an indefinite Hankel matrix
    in double precision; the closed-form moments in mpmath do not, so order 4 fits."""
    law = stats.lognorm(1.0, scale=np.exp(-0.5))
    me, report = fit(law, order_max=4)
    assert me.order == 4 and certify(me).status is Nonnegativity.NONNEGATIVE
    for k in range(1, 8):                                  # 2 * 4 - 1 moments reproduced
        assert float(me.moment(k)) == pytest.approx(np.exp(k * k / 2 - k / 2), rel=1e-9), k
