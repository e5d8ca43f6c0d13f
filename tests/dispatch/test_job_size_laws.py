"""One job-size law for the dispatcher: every accepted form converted by as_sizes.

The same law given as a PhaseType, an (alpha, A) pair, an ME law and the closed-form H2 gives the
same numbers; a frozen scipy law is tabulated like uniform by name; an ME law without a
phase-type form goes through its distribution verbs, checked against its exact moments and
quadrature of its density; the solvers and the simulator take every form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
import sympy as sp
from scipy.integrate import quad

from symq.core.errors import InvalidParameter
from symq.dispatch import simulate_dispatch
from symq.dispatch.policies.exact import exact_lwl, exact_rnd, exact_sita, sita_e_thresholds
from symq.dispatch.sizes import as_sizes, named_sizes, size_scv
from symq.dispatch.vi.multigrid import richardson
from symq.dispatch.vi.solvers import solve_optimal
from symq.laws import PhaseType
from symq.me import ME

SCV = 4.0
P = 0.5 * (1 + math.sqrt((SCV - 1) / (SCV + 1)))     # balanced-means H2, mean 1
ALPHA, A = [P, 1 - P], [[-2 * P, 0.0], [0.0, -2 * (1 - P)]]
S = sp.Symbol("s")
#: An ME law with complex poles (density (2/3) e^{-t} (1 + cos t)): no Cumani phase-type form.
COMPLEX = ME.from_expr((1 / (S + 1) + (S + 1) / ((S + 1) ** 2 + 1)) * sp.Rational(2, 3))


@pytest.mark.parametrize("form", ["PhaseType", "pair", "ME"])
def test_every_form_of_one_law_gives_the_same_values(form) -> None:
    if form == "PhaseType":
        law = PhaseType(ALPHA, A, name="H2")
    elif form == "pair":
        law = (ALPHA, A)
    else:
        law = ME.hyperexponential([P, 1 - P], [2 * P, 2 * (1 - P)])
    closed = named_sizes("h2", SCV)          # incomplete-gamma partial moments
    sizes = as_sizes(law)
    x = np.array([0.05, 0.7, 3.0, 12.0])
    for verb in ("cdf", "ccdf"):
        assert np.allclose(getattr(sizes, verb)(x), getattr(closed, verb)(x), rtol=1e-9,
                           atol=1e-14), verb
    for k in (1, 2):
        assert np.allclose(sizes.partial_moment(k, x), closed.partial_moment(k, x), rtol=1e-9,
                           atol=1e-14), k
    assert exact_rnd(2, 0.6, law) == pytest.approx(exact_rnd(2, 0.6, closed), rel=1e-9)
    h = sita_e_thresholds(2, 0.6, law)
    assert h == pytest.approx(sita_e_thresholds(2, 0.6, closed), rel=1e-8)
    assert exact_sita(2, 0.6, law, h) == pytest.approx(exact_sita(2, 0.6, closed, h), rel=1e-9)


def test_a_hyper_erlang_pair_from_the_constructors() -> None:
    from symq.laws import hyper_erlang

    sizes = as_sizes(hyper_erlang(2, 1.0, SCV))
    assert sizes.mean() == pytest.approx(1.0, rel=1e-12) and size_scv(sizes) == pytest.approx(SCV)
    # Pollaczek-Khinchine with its moments: E[X] + lam_i E[X^2]/(2(1 - rho))
    assert exact_rnd(3, 0.5, hyper_erlang(2, 1.0, SCV)) == pytest.approx(
        1.0 + 0.5 * (1 + SCV) / (2 * 0.5), rel=1e-12)


def test_a_frozen_scipy_law_is_tabulated_like_the_named_one() -> None:
    named, frozen = named_sizes("uniform"), as_sizes(scipy.stats.uniform(0.0, 2.0))
    x = np.array([0.1, 0.9, 1.7])
    assert np.array_equal(named.partial_moment(1, x), frozen.partial_moment(1, x))
    assert exact_rnd(2, 0.5, scipy.stats.uniform(0.0, 2.0)) == exact_rnd(2, 0.5, named)
    # an exponential scipy law gets the closed forms, and so the exact LWL (M/M/2) value
    assert exact_lwl(2, 0.5, scipy.stats.expon(scale=1.0)) == pytest.approx(1 / (1 - 0.25))


def test_an_me_law_without_phase_type_form_uses_its_distribution_verbs() -> None:
    sizes = as_sizes(COMPLEX)
    mean, second = float(COMPLEX.moment(1)), float(COMPLEX.moment(2))    # exact sympy values
    assert sizes.mean() == mean and sizes.moment(2) == second

    def density(t: float) -> float:
        return 2 / 3 * math.exp(-t) * (1 + math.cos(t))

    for x in (0.3, 1.0, 4.0):
        assert float(sizes.partial_moment(1, x)) == pytest.approx(
            quad(lambda t: t * density(t), 0, x)[0], rel=1e-6)
        assert float(sizes.partial_moment(2, x)) == pytest.approx(
            quad(lambda t: t * t * density(t), 0, x)[0], rel=1e-6)
    assert exact_rnd(2, 0.5, COMPLEX) == pytest.approx(
        mean + (0.5 / mean) * second / (2 * 0.5), rel=1e-12)


@pytest.mark.parametrize("law", [PhaseType(ALPHA, A), COMPLEX])
def test_value_iteration_takes_the_law_object(law) -> None:
    """One server: the extrapolated VI value is Pollaczek-Khinchine with the law's moments."""
    sizes = as_sizes(law)
    rho = 0.5
    lam = rho / sizes.mean()
    pk = sizes.mean() + lam * sizes.moment(2) / (2 * (1 - rho))
    rr = richardson(solve_optimal, 1, rho, law, delta=0.2, U=40.0, tol=1e-11)
    assert rr.ET == pytest.approx(pk, rel=2e-4)


def test_the_simulator_takes_the_law_object() -> None:
    law = PhaseType(ALPHA, A)
    est = simulate_dispatch("rnd", 2, 0.5, law, n_jobs=400_000, rng=3, level=0.999)
    assert est.ET.low <= exact_rnd(2, 0.5, law) <= est.ET.high


@pytest.mark.parametrize("law, match", [
    (object(), r"parameter sizes=.* must be a job-size law: a name of the vocabulary"),
    (([0.5, 0.6], [[-1.0, 0.0], [0.0, -1.0]]), r"parameter alpha=.* summing to 1"),
    (scipy.stats.pareto(1.5),
     r"parameter sizes=scipy\.stats\.pareto\(1\.5\) must be a job-size law on \[0, inf\) with "
     r"finite mean and variance"),
])
def test_bad_laws_are_refused_with_their_name(law, match) -> None:
    with pytest.raises(InvalidParameter, match=match):
        exact_rnd(2, 0.5, law)


# ------------------------------------------------------------------ the laws' vocabulary by name

@pytest.mark.parametrize("name, scv, frozen", [
    ("lognormal", 4.0, scipy.stats.lognorm(math.sqrt(math.log(5.0)),
                                           scale=math.exp(-0.5 * math.log(5.0)))),
    ("erlang", 0.5, scipy.stats.gamma(2, scale=0.5)),
    ("gamma", 2.0, scipy.stats.gamma(0.5, scale=2.0)),
])
def test_every_name_of_the_vocabulary_is_a_law_with_mean_one(name, scv, frozen) -> None:
    law = named_sizes(name, scv)
    assert law.mean() == pytest.approx(1.0, rel=1e-12)
    assert size_scv(law) == pytest.approx(scv, rel=1e-9)
    for x in (0.3, 1.0, 6.0):     # E[X^k; X <= x] by quadrature of scipy's own density
        for k in (1, 2):
            want = quad(lambda t, k=k: t ** k * frozen.pdf(t), 0.0, x, epsabs=0, epsrel=1e-12,
                        limit=200)[0]
            assert float(law.partial_moment(k, x)) == pytest.approx(want, rel=1e-9)
    assert not law.is_exponential


def test_the_paper_defaults_without_scv() -> None:
    h2 = named_sizes("h2")
    assert h2.name == "h2" and size_scv(h2) == pytest.approx(4.0)
    uniform = named_sizes("uniform")
    assert repr(uniform) == "uniform(0, 2)" and uniform.moment(2) == pytest.approx(4 / 3)


def test_a_lognormal_law_is_simulated_and_refused_by_the_exact_formulas() -> None:
    law = named_sizes("lognormal", 4.0)
    est = simulate_dispatch("jsq", 2, 0.5, law, n_jobs=200_000, rng=3)
    assert 1.0 < est.ET.mean < 4.0
    with pytest.raises(InvalidParameter, match="sizes"):
        exact_lwl(2, 0.5, law)
