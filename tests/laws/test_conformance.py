"""Conformance of every law class to the Distribution protocol (as scipy tests every distribution).

Each continuous law is checked against computations that do not use its own formulas:

* raw moments of orders 1 to 3 (where finite) against ``scipy.integrate.quad`` of ``t^k pdf(t)``;
* ``cdf`` against the integral of ``pdf``; ``ccdf = 1 - cdf``; ``icdf`` round trips;
* ``partial_moment(k, x)`` against the quadrature of ``t^k pdf(t)`` on ``[0, x]``, and its limits
  (0 below the support, the full moment at ``x = inf``, NaN passed through, shapes kept);
* ``sample`` against ``cdf`` by a Kolmogorov-Smirnov test at one fixed seed;
* ``phase_type()`` against the law (moments and cdf) where it exists, the documented error where
  not; pickling; :func:`symq.laws.as_law` round trips.

The discrete laws (:class:`Deterministic`, :class:`Empirical`) have no density: their moments,
partial moments and samples are checked against explicit sums.

On the KS test at one seed: for a correct sampler the p-value is uniform on (0, 1), so a correct
law fails the threshold 1e-3 with probability 1e-3; over the ~30 laws here the number of false
failures is binomial(30, 1e-3), zero with probability 97%, and since the seed is fixed the
outcome was drawn once, when the test was written, and is the same on every run.  A wrong sampler
(wrong scale, a phase drawn with the wrong probability) gives p-values below 1e-10 at n = 2000
(n = 400 for a :class:`PhaseType`, whose cdf costs one matrix exponential per point).
It is a conformance check of each sampler against its own cdf, not a coverage claim.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import integrate, special, stats

from symq.core.errors import InvalidParameter, NumericalFailure
from symq.laws import (
    Deterministic,
    Distribution,
    Empirical,
    Erlang,
    Exponential,
    Gamma,
    Hyperexponential,
    Lognormal,
    Lomax,
    NoPhaseType,
    Pareto,
    PhaseType,
    ScipyLaw,
    Uniform,
    Weibull,
    as_law,
    as_phase_type,
)


@dataclass(frozen=True)
class Case:
    """A law to check: how to build it and what it promises."""

    id: str
    build: Callable[[], Distribution]
    max_order: int = 3          # largest moment order (<= 3) that is finite
    phase_type: bool = False    # has a phase-type form
    exponential: bool = False   # is_exponential


def _me_erlang() -> Distribution:
    from symq.me import ME

    return ME.erlang(2, 4)


def _me_complex() -> Distribution:
    # density (2/3) e^{-t} (1 + cos t): complex poles -1 +- i, no phase-type form of order 3
    import sympy as sp

    from symq.me import ME

    third = sp.Rational(1, 3)
    return ME.from_transform([2, 8 * third, 4 * third], [2, 4, 3, 1])


COXIAN = ([0.3, 0.7], [[-2.0, 1.0], [0.5, -1.0]])

CASES = [
    Case("exp-1", lambda: Exponential(1.0), phase_type=True, exponential=True),
    Case("exp-2.5", lambda: Exponential(2.5), phase_type=True, exponential=True),
    Case("erlang-1", lambda: Erlang(1, 1.0), phase_type=True),
    Case("erlang-3", lambda: Erlang(3, 2.0), phase_type=True),
    Case("gamma-0.3", lambda: Gamma(0.3, 1.0)),
    Case("gamma-5", lambda: Gamma(5.0, 2.0)),
    Case("lognormal-0.5", lambda: Lognormal(1.0, 0.5)),
    Case("lognormal-4", lambda: Lognormal(2.0, 4.0)),
    Case("weibull-0.6", lambda: Weibull(0.6, 1.0)),
    Case("weibull-3", lambda: Weibull(3.0, 2.0)),
    Case("pareto-2.2", lambda: Pareto(2.2, 1.0), max_order=2),     # E[X^3] infinite
    Case("pareto-5", lambda: Pareto(5.0, 1.0)),
    Case("lomax-2.5", lambda: Lomax(2.5, 1.0), max_order=2),       # E[X^3] infinite
    Case("lomax-6", lambda: Lomax(6.0, 2.0)),
    Case("uniform-0-2", lambda: Uniform(0.0, 2.0)),
    Case("uniform-0.5-1.5", lambda: Uniform(0.5, 1.5)),
    Case("h2-4", lambda: Hyperexponential.balanced(1.0, 4.0), phase_type=True),
    Case("h2-100", lambda: Hyperexponential.balanced(1.0, 100.0), phase_type=True),
    Case("h3", lambda: Hyperexponential([0.2, 0.3, 0.5], [0.5, 1.0, 4.0]), phase_type=True),
    Case("h1", lambda: Hyperexponential([1.0], [2.0]), phase_type=True, exponential=True),
    Case("ph-coxian", lambda: PhaseType(*COXIAN), phase_type=True),
    Case("ph-1", lambda: PhaseType([1.0], [[-2.0]]), phase_type=True, exponential=True),
    Case("scipy-lognorm", lambda: ScipyLaw(stats.lognorm(0.8))),
    Case("scipy-gamma", lambda: ScipyLaw(stats.gamma(2.0, scale=0.5))),
    Case("scipy-new-uniform", lambda: ScipyLaw(stats.Uniform(a=0.5, b=2.0))),
    Case("me-erlang", _me_erlang, phase_type=True),
    Case("me-complex", _me_complex),
]
IDS = [c.id for c in CASES]

_LAWS: dict[str, Distribution] = {}


def law_of(case: Case) -> Distribution:
    if case.id not in _LAWS:
        _LAWS[case.id] = case.build()
    return _LAWS[case.id]


def _pdf(law: Distribution) -> Callable[[float], float]:
    """The law's density; for a PhaseType an independent one, ``alpha V e^{Lambda t} V^-1 a``
    from the eigendecomposition of ``A`` (its own pdf takes an expm a point)."""
    if not isinstance(law, PhaseType):
        return lambda t: float(law.pdf(t))
    eigenvalues, vectors = np.linalg.eig(law.A)
    left = law.alpha @ vectors
    right = np.linalg.solve(vectors, -law.A.sum(axis=1))
    return lambda t: float(np.real(np.sum(left * np.exp(eigenvalues * t) * right)))


def quad_pdf(law: Distribution, f: Callable[[float], float], a: float, b: float) -> float:
    """``int_a^b f(t) pdf(t) dt`` by scipy's quad, on pieces cut at 1, 10 and 100 medians."""
    median = float(law.icdf(0.5))
    cuts = sorted({a, b} | {c for c in (median, 10 * median, 100 * median) if a < c < b})
    pdf = _pdf(law)
    return sum(integrate.quad(lambda t: f(t) * pdf(t), lo, hi, limit=500, epsabs=0.0,
                              epsrel=1e-12)[0] for lo, hi in zip(cuts[:-1], cuts[1:]))


def points(law: Distribution) -> list[float]:
    """Points across the body and the tail of the law (its 5%, 50% and 95% quantiles)."""
    return [float(law.icdf(p)) for p in (0.05, 0.5, 0.95)]


# -------------------------------------------------------------------- the continuous laws
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_moments_against_quadrature_of_the_density(case: Case) -> None:
    law = law_of(case)
    low, high = (float(v) for v in law.support())
    for k in range(1, case.max_order + 1):
        reference = quad_pdf(law, lambda t, k=k: t ** k, low, high)
        assert float(law.moment(k)) == pytest.approx(reference, rel=1e-8), k
    assert float(law.mean()) == pytest.approx(float(law.moment(1)), rel=1e-14)
    if case.max_order < 3:
        with pytest.raises(InvalidParameter, match="finite moment of order 3"):
            law.moment(3)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cdf_ccdf_and_icdf(case: Case) -> None:
    law = law_of(case)
    low = float(law.support()[0])
    xs = points(law)
    for x in xs:
        assert float(law.cdf(x)) == pytest.approx(quad_pdf(law, lambda t: 1.0, low, x),
                                                  rel=1e-8, abs=1e-13)
    cdf, ccdf = np.asarray(law.cdf(xs), dtype=float), np.asarray(law.ccdf(xs), dtype=float)
    assert np.allclose(ccdf, 1.0 - cdf, rtol=0, atol=1e-12)
    ps = np.array([0.01, 0.3, 0.5, 0.9, 0.999])
    quantiles = np.asarray(law.icdf(ps), dtype=float)
    assert np.allclose(np.asarray(law.cdf(quantiles), dtype=float), ps, rtol=1e-9, atol=0)
    assert np.all(np.diff(quantiles) > 0)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_partial_moments_against_quadrature(case: Case) -> None:
    law = law_of(case)
    low = float(law.support()[0])
    for k in (1, 2, 3):
        for x in points(law):
            reference = quad_pdf(law, lambda t, k=k: t ** k, low, x)
            assert float(law.partial_moment(k, x)) == pytest.approx(reference, rel=1e-8), (k, x)
    xs = points(law)
    assert np.allclose(law.partial_moment(0, xs), law.cdf(xs), rtol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_partial_moment_limits_shapes_and_nan(case: Case) -> None:
    law = law_of(case)
    low = float(law.support()[0])
    for k in (1, 2, 3):
        assert float(law.partial_moment(k, 0.0)) == 0.0
        assert float(law.partial_moment(k, -1.0)) == 0.0
        full = float(law.partial_moment(k, math.inf))
        if k <= case.max_order:
            assert full == pytest.approx(float(law.moment(k)), rel=1e-12)
        else:
            assert full == math.inf
    if low > 0:
        assert float(law.partial_moment(1, 0.999 * low)) == 0.0
    xs = np.array(points(law) + [math.inf]).reshape(2, 2)
    grid = law.partial_moment(1, xs)
    assert np.shape(grid) == (2, 2)
    assert np.allclose(grid, [[float(law.partial_moment(1, v)) for v in row] for row in xs],
                       rtol=1e-14)
    assert np.all(np.diff(np.ravel(grid)) > 0)               # increasing in x
    assert math.isnan(float(law.partial_moment(2, math.nan)))
    assert np.ndim(law.partial_moment(1, 1.0)) == 0


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sample_against_the_cdf(case: Case) -> None:
    law = law_of(case)
    n = 400 if isinstance(law, PhaseType) else 2000     # a PhaseType cdf costs an expm a point
    draws = np.asarray(law.sample(n, rng=20260101), dtype=float)
    assert draws.shape == (n,)
    result = stats.kstest(draws, lambda x: np.asarray(law.cdf(x), dtype=float))
    assert result.pvalue > 1e-3, result
    assert np.array_equal(draws, np.asarray(law.sample(n, rng=20260101), dtype=float))
    assert np.shape(law.sample((3, 2), rng=1)) == (3, 2)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_phase_type_form(case: Case) -> None:
    law = law_of(case)
    assert law.is_exponential is case.exponential
    if not case.phase_type:
        error = NoPhaseType if not case.id.startswith("me-") else InvalidParameter
        with pytest.raises(error, match="phase-type|PH representation"):
            law.phase_type()
        with pytest.raises(InvalidParameter, match="phase-type"):
            as_phase_type(law, "sizes")
        return
    ph = law.phase_type()
    assert isinstance(ph, PhaseType)
    alpha, A = ph                                     # old callers unpack (alpha, A)
    assert alpha.shape == (ph.order,) and A.shape == (ph.order, ph.order)
    for k in (1, 2, 3):
        assert ph.moment(k) == pytest.approx(float(law.moment(k)), rel=1e-10)
    xs = points(law)
    assert np.allclose(ph.cdf(xs), np.asarray(law.cdf(xs), dtype=float), rtol=0, atol=1e-10)
    assert as_phase_type(law, "sizes").moment(2) == pytest.approx(ph.moment(2), rel=1e-12)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_pickling_round_trip(case: Case) -> None:
    law = law_of(case)
    back = pickle.loads(pickle.dumps(law))
    assert type(back) is type(law) and repr(back) == repr(law)
    xs = points(law)
    assert np.array_equal(np.asarray(back.cdf(xs), dtype=float),
                          np.asarray(law.cdf(xs), dtype=float))
    assert np.array_equal(np.asarray(back.sample(5, rng=7), dtype=float),
                          np.asarray(law.sample(5, rng=7), dtype=float))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_as_law_round_trips(case: Case) -> None:
    law = law_of(case)
    mean = float(law.mean())
    assert as_law(law) is law
    assert as_law(law, mean=mean) is law
    with pytest.raises(InvalidParameter, match="parameter mean=.* must be omitted or equal"):
        as_law(law, mean=mean * (1 + 1e-9))
    with pytest.raises(InvalidParameter, match="scv=1.0 must be omitted when sizes is a law"):
        as_law(law, scv=1.0)
    dist = getattr(law, "dist", None)
    if dist is not None:                        # a scipy-backed law: through its scipy object
        again = as_law(dist)
        expected = Exponential if getattr(getattr(dist, "dist", None), "name", "") == "expon" \
            else ScipyLaw
        assert type(again) is expected
        xs = points(law)
        assert np.array_equal(np.asarray(again.cdf(xs)), np.asarray(law.cdf(xs)))
        assert np.array_equal(again.sample(20, rng=5), law.sample(20, rng=5))
    if isinstance(law, PhaseType):
        assert as_law((law.alpha.tolist(), law.A.tolist())) == law


# -------------------------------------------------------------------- the discrete laws
TRACE = [0.5, 1.0, 1.0, 2.0, 7.5]


def test_deterministic_conforms() -> None:
    law = Deterministic(1.5)
    assert [law.moment(k) for k in (1, 2, 3)] == [1.5, 2.25, 3.375]
    assert law.partial_moment(2, [1.0, 1.5, math.inf]).tolist() == [0.0, 2.25, 2.25]
    assert float(law.icdf(0.3)) == 1.5 and float(law.ccdf(1.5)) == 0.0
    assert law.sample(4, rng=1).tolist() == [1.5] * 4
    assert pickle.loads(pickle.dumps(law)) == law and as_law(law, mean=1.5) is law
    assert law.name == "det" and not law.is_exponential
    with pytest.raises(NoPhaseType, match="use a simulator"):
        law.phase_type()


def test_empirical_conforms() -> None:
    law = Empirical(TRACE)
    sizes = np.array(TRACE)
    for k in (1, 2, 3):
        assert law.moment(k) == pytest.approx(np.mean(sizes ** k), rel=1e-14)
        for x in (0.0, 0.5, 1.2, 7.4, 7.5, math.inf):
            assert float(law.partial_moment(k, x)) == pytest.approx(
                sum(s ** k for s in TRACE if s <= x) / len(TRACE), rel=1e-14, abs=0)
    assert math.isnan(float(law.partial_moment(1, math.nan)))
    draws = law.sample(5000, rng=3)
    assert set(np.unique(draws)) <= set(TRACE)
    # each size is drawn with probability 1/5 (1.0 twice: 2/5); counts within 5 sd of binomial
    for value, p in ((0.5, 0.2), (1.0, 0.4), (7.5, 0.2)):
        count = np.count_nonzero(draws == value)
        assert abs(count - 5000 * p) < 5 * math.sqrt(5000 * p * (1 - p))
    back = pickle.loads(pickle.dumps(law))
    assert np.array_equal(back.sizes, law.sizes)
    with pytest.raises(NoPhaseType):
        law.phase_type()


# -------------------------------------------------------------------- the default quadrature
@pytest.mark.parametrize("dist, closed_form", [
    (stats.gamma(2.0, scale=0.5),       # 0.5^k Gamma(2 + k)/Gamma(2) P(2 + k, 2x)
     lambda k, x: 0.5 ** k * math.gamma(2 + k) * special.gammainc(2 + k, 2 * x)),
    (stats.lognorm(0.8),                # e^{k^2 s^2/2} Phi(ln x/s - k s)
     lambda k, x: math.exp(k * k * 0.32) * special.ndtr(math.log(x) / 0.8 - 0.8 * k)),
])
def test_default_quadrature_is_accurate(dist: Any, closed_form: Any) -> None:
    law = ScipyLaw(dist)
    for k in (1, 2, 3):
        for x in (0.01, 0.7, 3.0, 40.0, 1e4):
            assert float(law.partial_moment(k, x)) == pytest.approx(closed_form(k, x),
                                                                    rel=1e-10), (k, x)


class _Jagged(Distribution):
    """A density that oscillates a million times per unit: quad cannot reach its accuracy."""

    def pdf(self, x: Any) -> Any:
        x = np.asarray(x, dtype=float)
        return np.where(x >= 0, np.exp(-x) * (1.0 + 0.9 * np.sin(1e6 * x)), 0.0)

    def cdf(self, x: Any) -> Any:
        return -np.expm1(-np.maximum(np.asarray(x, dtype=float), 0.0))

    def icdf(self, p: Any) -> Any:
        return -np.log1p(-np.asarray(p, dtype=float))

    def _raw_moment(self, order: int) -> float:
        return float(math.factorial(order))


def test_default_quadrature_refuses_what_it_cannot_integrate() -> None:
    with pytest.raises(NumericalFailure, match=r"partial_moment\(1, 5.0\)"):
        _Jagged().partial_moment(1, 5.0)
    assert float(_Jagged().partial_moment(1, math.inf)) == 1.0     # the exact moment
