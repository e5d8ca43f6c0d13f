"""fit(): candidates over orders and J, the chosen fit is certified, the report explains rejections."""

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
