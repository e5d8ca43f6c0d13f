"""Named job-size laws: mean and SCV of every law against an independent computation.

Each law's first two moments are computed twice, independently of the construction in
``symq.laws``: by quadrature of its density (``scipy.integrate.quad`` of x f(x) and
x^2 f(x)), and from the closed form of the law's moments in its own parameters (Weibull's gamma
functions, Pareto's a x_m/(a - 1), ...).  The H2 law is checked against the phase-type moments of
``symq.laws.PhaseType``; bad input gives one InvalidParameter naming ``sizes``, ``mean`` or
``scv``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from symq.core.errors import InvalidParameter
from symq.core.parameters import validate_parameters
from symq.laws import (
    SIZE_LAWS,
    Deterministic,
    Hyperexponential,
    PhaseType,
    as_phase_type,
    as_sampler,
    law_scv,
    size_law,
    size_parameters,
    weibull_shape,
)

CASES = [("exp", None), ("det", None), ("erlang", 0.25), ("h2", 4.0), ("h2", 1.0),
         ("gamma", 0.3), ("gamma", 5.0), ("lognormal", 2.0), ("weibull", 0.2),
         ("weibull", 6.0), ("pareto", 0.5), ("pareto", 5.0), ("lomax", 4.0),
         ("uniform", 0.2), ("uniform", 1 / 3)]


def _quadrature_moments(law) -> tuple[float, float]:
    """E[X], E[X^2] by quadrature of the density (split at the median: heavy tails)."""
    low, high = (float(v) for v in law.support())
    mid = float(law.icdf(0.5))
    out = []
    for k in (1, 2):
        parts = [integrate.quad(lambda x, k=k: x ** k * float(law.pdf(x)), a, b, limit=400,
                                epsabs=0, epsrel=1e-11)[0] for a, b in ((low, mid), (mid, high))]
        out.append(sum(parts))
    return out[0], out[1]


@pytest.mark.parametrize("name, scv", CASES)
def test_mean_and_scv(name: str, scv: float | None) -> None:
    mean = 2.5
    law = size_law(name, mean, scv)
    target = {"exp": 1.0, "det": 0.0}.get(name, scv)
    if name == "det":
        m1, m2 = law.mean(), law.moment(2)
    else:
        m1, m2 = _quadrature_moments(law)
    assert m1 == pytest.approx(mean, rel=1e-8)
    assert m2 / m1 ** 2 - 1 == pytest.approx(target, rel=1e-7, abs=1e-12)
    sampler = as_sampler(law, "sizes")            # the one conversion of the simulators
    assert float(sampler.mean()) == pytest.approx(mean, rel=1e-12)
    assert np.all(np.asarray(sampler.sample(1000, rng=1)) >= 0)


def test_closed_forms_of_the_parameters() -> None:
    # Weibull: E[X] = s G(1 + 1/k), E[X^2] = s^2 G(1 + 2/k)
    law = size_law("weibull", 1.0, 2.0)
    k, s = law.dist.args[0], law.dist.kwds["scale"]
    assert s * math.gamma(1 + 1 / k) == pytest.approx(1.0, rel=1e-13)
    assert math.gamma(1 + 2 / k) / math.gamma(1 + 1 / k) ** 2 - 1 == pytest.approx(2.0, rel=1e-12)
    # classical Pareto: E[X] = a x_m/(a - 1), Var = x_m^2 a/((a - 1)^2 (a - 2))
    law = size_law("pareto", 3.0, 0.5)
    a, xm = law.dist.args[0], law.dist.kwds["scale"]
    assert a > 2 and a * xm / (a - 1) == pytest.approx(3.0, rel=1e-14)
    assert (xm ** 2 * a / ((a - 1) ** 2 * (a - 2))) / 9.0 == pytest.approx(0.5, rel=1e-13)
    # Lomax: E[X] = s/(a - 1), SCV a/(a - 2)
    law = size_law("lomax", 3.0, 4.0)
    a, s = law.dist.args[0], law.dist.kwds["scale"]
    assert s / (a - 1) == pytest.approx(3.0, rel=1e-14) and a / (a - 2) == pytest.approx(4.0)
    # lognormal: SCV exp(sigma^2) - 1
    law = size_law("lognormal", 1.0, 3.0)
    assert math.expm1(law.dist.args[0] ** 2) == pytest.approx(3.0, rel=1e-13)
    # Erlang-4 with mean 2: four phases of mean 1/2
    law = size_law("erlang", 2.0, 0.25)
    assert law.dist.args[0] == 4 and law.dist.kwds["scale"] == 0.5


def test_weibull_shape_is_the_exponential_at_scv_one() -> None:
    assert weibull_shape(1.0) == pytest.approx(1.0, rel=1e-12)


def test_h2_against_the_phase_type_law() -> None:
    law = size_law("h2", 2.0, 4.0)
    assert isinstance(law, Hyperexponential)
    ph = as_phase_type(law.phase_type())
    for order in (1, 2, 3):
        assert law.moment(order) == pytest.approx(ph.moment(order), rel=1e-12)
    # balanced means: p_i / mu_i = E[X]/2
    assert np.allclose(law.probabilities / law.rates, 1.0)
    x = np.array([0.0, 0.5, 3.0, 20.0])
    assert np.allclose(law.cdf(x), ph.cdf(x), rtol=1e-12, atol=1e-15)
    assert np.allclose(law.pdf(x), ph.pdf(x), rtol=1e-12)
    # same stream as the phase-type sampler of a mixture of exponentials
    p = PhaseType(*law.phase_type())
    assert np.array_equal(law.sample(50, rng=3), p.sample(50, rng=3))


def test_deterministic() -> None:
    law = size_law("det", 1.5)
    assert isinstance(law, Deterministic) and law == Deterministic(1.5)
    assert law.sample(3, rng=0).tolist() == [1.5, 1.5, 1.5]


def test_law_scv() -> None:
    assert law_scv("exp") == 1.0 and law_scv("det", 0) == 0.0 and law_scv("erlang", 0.5) == 0.5


@pytest.mark.parametrize("args, pattern", [
    (("zipf", 1.0, 1.0), r"parameter sizes='zipf' must be one of exp, det, erlang"),
    (("exp", -1.0, None), r"parameter mean=-1\.0 must be a positive real number"),
    (("exp", 1.0, 2.0), r"scv=2\.0 must be omitted or 1 for sizes=exp"),
    (("det", 1.0, 0.5), r"scv=0\.5 must be omitted or 0 for sizes=det"),
    (("h2", 1.0, 0.5), r"scv=0\.5 must be a real number >= 1 for sizes=h2"),
    (("lomax", 1.0, 1.0), r"scv=1\.0 must be a real number > 1 for sizes=lomax .*shape a"),
    (("uniform", 1.0, 0.5), r"scv=0\.5 must be a real number in \(0, 1/3\] for sizes=uniform"),
    (("erlang", 1.0, 0.4), r"scv=0\.4 must be 1/k for an integer k >= 1 .*nearest: 1/2 = 0\.5, "
                           r"1/3 = 0\.333333"),
    (("erlang", 1.0, 2.0), r"scv=2\.0 must be 1/k for an integer k >= 1"),
    (("gamma", 1.0, 0.0), r"scv=0\.0 must be a positive real number for sizes=gamma .*sizes=det"),
    (("gamma", 1.0, None), r"scv=<missing> must be given: the SCV of sizes=gamma, a "
                           r"nonnegative real number \(this law's SCV is free\)$"),
    (("lognormal", 1.0, -1.0), r"scv=-1\.0 must be a nonnegative real number"),
    (("weibull", 1.0, 1e-12), r"scv=1e-12 must be a real number in \[.*\] for sizes=weibull"),
])
def test_bad_input(args, pattern) -> None:
    with pytest.raises(InvalidParameter, match=pattern):
        size_law(*args)


def test_size_parameters() -> None:
    params = size_parameters("h2", typical_scv=4.0)
    values = validate_parameters(params, {"scv": 4})
    assert values == {"sizes": "h2", "mean": 1.0, "scv": 4}
    assert size_law(**{"name": values["sizes"], "mean": values["mean"], "scv": values["scv"]})
    assert params[0].domain.choices == SIZE_LAWS
    with pytest.raises(InvalidParameter, match="parameter sizes='H3' must be one of"):
        validate_parameters(params, {"sizes": "H3"})
