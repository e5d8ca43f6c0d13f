"""``as_law``, the one conversion, and the laws ``size_law`` builds.

The scipy-backed named laws must compute through the frozen object that ``size_law`` built before
the classes existed: the objects are rebuilt here from the formulas of that version, and their
parameters, numbers and random streams compared exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from symq.core.errors import InvalidParameter
from symq.laws import (
    SIZE_LAWS,
    Deterministic,
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
    as_sampler,
    size_law,
    weibull_shape,
)


def _frozen_of_the_previous_size_law(key: str, mean: float, c2: float):
    """The frozen scipy objects size_law returned before the law classes (copied formulas)."""
    if key == "exp":
        return stats.expon(scale=mean)
    if key == "erlang":
        k = round(1.0 / c2)
        return stats.erlang(k, scale=mean / k)
    if key == "gamma":
        return stats.gamma(1.0 / c2, scale=mean * c2)
    if key == "lognormal":
        sigma2 = math.log1p(c2)
        return stats.lognorm(math.sqrt(sigma2), scale=mean * math.exp(-0.5 * sigma2))
    if key == "weibull":
        k = weibull_shape(c2)
        return stats.weibull_min(k, scale=mean / math.exp(special.gammaln(1.0 + 1.0 / k)))
    if key == "pareto":
        a = 1.0 + math.sqrt(1.0 + 1.0 / c2)
        return stats.pareto(a, scale=mean * (a - 1.0) / a)
    if key == "lomax":
        a = 2.0 * c2 / (c2 - 1.0)
        return stats.lomax(a, scale=mean * (a - 1.0))
    half = mean * math.sqrt(3.0 * c2)
    return stats.uniform(loc=max(mean - half, 0.0), scale=2.0 * half)


CLASSES = {"exp": Exponential, "erlang": Erlang, "gamma": Gamma, "lognormal": Lognormal,
           "weibull": Weibull, "pareto": Pareto, "lomax": Lomax, "uniform": Uniform}


@pytest.mark.parametrize("key, mean, scv", [
    ("exp", 2.5, None), ("erlang", 3.0, 0.25), ("gamma", 2.0, 0.3), ("gamma", 0.7, 7.0),
    ("lognormal", 1.3, 2.0), ("weibull", 2.0, 3.0), ("pareto", 1.0, 0.5), ("lomax", 3.0, 4.0),
    ("uniform", 1.0, 0.2), ("uniform", 1.0, 1 / 3),
])
def test_size_law_computes_through_the_same_frozen_object(key, mean, scv) -> None:
    law = size_law(key, mean, scv)
    old = _frozen_of_the_previous_size_law(key, mean, 1.0 if scv is None else scv)
    assert type(law) is CLASSES[key] and law.name == key
    assert law.dist.args == old.args and law.dist.kwds == old.kwds
    assert law.dist.dist.name == old.dist.name
    x = np.array([0.0, 0.3, 1.0, 4.0, 30.0])
    assert np.array_equal(law.cdf(x), old.cdf(x)) and np.array_equal(law.pdf(x), old.pdf(x))
    assert np.array_equal(law.ccdf(x), old.sf(x))
    assert np.array_equal(law.icdf([0.1, 0.9]), old.ppf([0.1, 0.9]))
    assert float(law.mean()) == float(old.mean())
    assert float(law.moment(2)) == float(old.var()) + float(old.mean()) ** 2
    assert np.array_equal(law.sample(50, rng=11),
                          old.rvs(size=50, random_state=np.random.default_rng(11)))
    assert as_sampler(law) is law
    wrapped = as_sampler(old)                  # the path of a frozen object: same stream
    assert np.array_equal(wrapped.sample(50, rng=11), law.sample(50, rng=11))


def test_constructors_and_reprs() -> None:
    assert repr(Exponential(2.0)) == "Exponential(mean=2.0)"
    assert repr(Erlang(3, 1.5)) == "Erlang(k=3, mean=1.5)"
    assert repr(Gamma(0.5, 2.0)) == "Gamma(shape=0.5, mean=2.0)"
    assert repr(Lognormal(1.0, 3.0)) == "Lognormal(mean=1.0, scv=3.0)"
    assert repr(Weibull(2.0, 1.0)) == "Weibull(shape=2.0, mean=1.0)"
    assert repr(Pareto(3.0, 1.0)) == "Pareto(shape=3.0, mean=1.0)"
    assert repr(Lomax(3.0, 1.0)) == "Lomax(shape=3.0, mean=1.0)"
    assert repr(Uniform(0.5, 1.5)) == "Uniform(low=0.5, high=1.5)"
    # each constructor's own parameters, independently: scipy's mean and SCV
    for law, mean, scv in ((Gamma(0.5, 2.0), 2.0, 2.0), (Lognormal(1.0, 3.0), 1.0, 3.0),
                           (Erlang(4, 2.0), 2.0, 0.25), (Lomax(3.0, 1.0), 1.0, 3.0),
                           (Pareto(3.0, 1.0), 1.0, 1 / 3), (Uniform(0.5, 1.5), 1.0, 1 / 12)):
        m, v = (float(t) for t in law.dist.stats("mv"))
        assert m == pytest.approx(mean, rel=1e-13) and v / m ** 2 == pytest.approx(scv, rel=1e-12)
    assert Weibull(2.0, 1.0).dist.mean() == pytest.approx(1.0, rel=1e-14)
    assert Gamma(2.0, 3.0) == Gamma.from_scipy(stats.gamma(2.0, scale=1.5))
    assert len({Gamma(2.0, 3.0), Gamma.from_scipy(stats.gamma(2.0, scale=1.5))}) == 1


@pytest.mark.parametrize("build, pattern", [
    (lambda: Exponential(-1.0), r"parameter mean=-1\.0 must be a positive real number"),
    (lambda: Erlang(0, 1.0), r"parameter k=0 must be an integer >= 1"),
    (lambda: Erlang(2.5, 1.0), r"parameter k=2\.5 must be an integer >= 1"),
    (lambda: Pareto(1.0, 1.0), r"parameter shape=1\.0 must be a real number > 1 for a Pareto"),
    (lambda: Lomax(0.5, 1.0), r"parameter shape=0\.5 must be a real number > 1 for a Lomax"),
    (lambda: Uniform(1.0, 1.0), r"parameter high=1\.0 must be a finite real number > low"),
    (lambda: Uniform(-1.0, 1.0), r"parameter low=-1\.0 must be a finite real number >= 0"),
    (lambda: Gamma.from_scipy(stats.expon()), r"must be a frozen scipy\.stats\.gamma"),
    (lambda: Exponential.from_scipy(stats.expon(loc=1.0)), r"with loc = 0"),
])
def test_constructor_errors(build, pattern) -> None:
    with pytest.raises(InvalidParameter, match=pattern):
        build()


def test_is_exponential_by_representation() -> None:
    assert Exponential(1.0).is_exponential and PhaseType([1.0], [[-3.0]]).is_exponential
    assert Hyperexponential([1.0], [2.0]).is_exponential
    assert not Erlang(1, 1.0).is_exponential           # scipy's erlang: no exact-formula path
    assert not Hyperexponential.balanced(1.0, 4.0).is_exponential
    assert not ScipyLaw(stats.expon()).is_exponential
    assert as_law(stats.expon(scale=3.0)).is_exponential


def test_phase_type_forms() -> None:
    h2 = Hyperexponential.balanced(2.0, 4.0)
    ph = h2.phase_type()
    assert isinstance(ph, PhaseType)
    alpha, A = h2.phase_type()                          # old callers unpack the pair
    assert np.array_equal(alpha, h2.probabilities) and np.array_equal(np.diag(A), -h2.rates)
    erlang = Erlang(3, 1.5).phase_type()
    assert erlang.order == 3 and np.allclose(np.diag(erlang.A), -2.0)
    assert erlang.moment(2) == pytest.approx(1.5 ** 2 * 4 / 3, rel=1e-13)   # m^2 (k+1)/k
    assert Exponential(2.0).phase_type().A.tolist() == [[-0.5]]
    with pytest.raises(NoPhaseType, match=r"parameter law=scipy\.stats\.lognorm.* must be a "
                       r"law with a phase-type form \(a Lognormal law has no phase-type"):
        Lognormal(1.0, 2.0).phase_type()
    assert isinstance(NoPhaseType(Gamma(1.0, 1.0)), InvalidParameter)


# -------------------------------------------------------------------- as_law
def test_as_law_by_name() -> None:
    assert as_law("exp") == Exponential(1.0)
    assert as_law("H2", mean=2.0, scv=4.0) == Hyperexponential.balanced(2.0, 4.0)
    assert as_law("det", mean=3.0) == Deterministic(3.0)
    assert as_law("gamma", scv=0.5) == size_law("gamma", 1.0, 0.5)
    with pytest.raises(InvalidParameter, match="parameter sizes='zipf' must be one of "
                       + ", ".join(SIZE_LAWS)):
        as_law("zipf")
    with pytest.raises(InvalidParameter, match="parameter service='zipf' must be one of"):
        as_law("zipf", "service")
    with pytest.raises(InvalidParameter, match=r"scv=<missing> must be given"):
        as_law("lognormal")


def test_as_law_wraps_scipy_objects_and_pairs() -> None:
    expon = stats.expon(scale=2.0)
    law = as_law(expon)
    assert type(law) is Exponential and law.dist is expon
    shifted = as_law(stats.expon(loc=1.0))
    assert type(shifted) is ScipyLaw and not shifted.is_exponential
    gamma = stats.gamma(2.0)
    assert type(as_law(gamma)) is ScipyLaw and as_law(gamma).dist is gamma
    new_api = stats.Uniform(a=0.0, b=2.0)
    assert type(as_law(new_api)) is ScipyLaw and float(as_law(new_api).mean()) == 1.0
    ph = as_law(([0.5, 0.5], [[-1.0, 0.0], [0.0, -2.0]]))
    assert isinstance(ph, PhaseType) and ph.mean() == pytest.approx(0.75, rel=1e-14)
    with pytest.raises(InvalidParameter, match="parameter alpha=.* nonnegative entries summing"):
        as_law(([0.5, 0.6], [[-1.0, 0.0], [0.0, -2.0]]))


def test_as_law_refuses_with_what_it_accepts() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter sizes=42 must be a job-size law: a "
                       r"name of the vocabulary \(exp, det, erlang, h2, .*\), a symq Distribution "
                       r".*frozen scipy\.stats distribution, a scipy new-API distribution or a "
                       r"pair \(alpha, A\)"):
        as_law(42)
    with pytest.raises(InvalidParameter, match="parameter law=<object"):
        as_law(object(), "law")


def test_as_law_mean_and_scv_of_a_law_object() -> None:
    # the rules and messages of symq.routing.sizes.as_size_law
    law = stats.lognorm(0.5, scale=2.0)
    mean = float(law.mean())
    assert as_law(law, mean=mean * (1 + 1e-13)).dist is law
    with pytest.raises(InvalidParameter, match=r"parameter mean=1\.0 must be omitted or equal "
                       r"to the mean 2\.26629690613 of the law scipy\.stats\.lognorm\(0\.5, "
                       r"scale=2\.0\)"):
        as_law(law, mean=1.0)          # 2 e^{1/8}
    with pytest.raises(InvalidParameter, match=r"parameter scv=4\.0 must be omitted when sizes "
                       r"is a law object \(the law fixes its own variability\)"):
        as_law(law, scv=4.0)
    with pytest.raises(InvalidParameter, match=r"parameter sizes=scipy\.stats\.pareto\(0\.5\) "
                       r"must be a law of job sizes with a finite positive mean"):
        as_law(stats.pareto(0.5), mean=1.0)


# -------------------------------------------------------------------- the old conversions
def test_as_phase_type_messages_name_the_sizes() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter sizes=scipy\.stats\.lognorm\(0\.8\) "
                       r"must be a phase-type law.*\(this model needs a phase-type "
                       r"representation and the law has none; fit one"):
        as_phase_type(stats.lognorm(0.8))
    with pytest.raises(InvalidParameter, match=r"this model needs a phase-type representation"):
        as_phase_type(Deterministic(1.0))
    with pytest.raises(InvalidParameter, match=r"parameter sizes='exp' must be a phase-type "
                       r"law.*\(not a job-size law\)"):
        as_phase_type("exp")
    assert as_phase_type(stats.expon(scale=2.0)).mean() == pytest.approx(2.0, rel=1e-15)
    assert as_phase_type(Hyperexponential.balanced(1.0, 4.0)).order == 2


def test_as_sampler_messages_name_the_sizes() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter sizes='exp' must be a job-size law: "
                       r"a symq distribution \(PhaseType, ME\), a pair \(alpha, A\) or a scipy "
                       r"distribution"):
        as_sampler("exp")
    with pytest.raises(InvalidParameter, match=r"must be a law with a finite moment of order 1"):
        as_sampler(stats.pareto(0.5), "sizes")
    law = stats.lognorm(0.8)
    sampler = as_sampler(law, "law")
    assert type(sampler) is ScipyLaw and sampler.name == "law"
    assert np.array_equal(sampler.sample(10, rng=4),
                          law.rvs(size=10, random_state=np.random.default_rng(4)))
