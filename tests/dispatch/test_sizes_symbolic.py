"""Size laws (partial moments against quadrature) and the symbolic layer of dispatching."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import sympy as sp
from scipy.integrate import quad

from symq.core.errors import InvalidParameter
from symq.dispatch.sizes import as_sizes, named_sizes
from symq.dispatch.symbolic import (
    bellman_equations,
    fpi_from_rnd_is_lwl,
    fpi_index,
    verify_mg1_value,
)
from symq.laws import Exponential


@pytest.mark.parametrize("law, density", [
    (Exponential(2.0), lambda t: np.exp(-t / 2) / 2),
    (named_sizes("uniform"), lambda t: 0.5 * (t < 2)),
    (named_sizes("h2", 4.0), None),
    (as_sizes(scipy.stats.gamma(2.0, scale=0.5)), scipy.stats.gamma(2.0, scale=0.5).pdf),
])
def test_partial_moments_against_quadrature(law, density) -> None:
    if density is None:  # H2 with balanced means, mean 1, SCV 4
        p = 0.5 * (1 + np.sqrt(3 / 5))
        density = lambda t: p * 2 * p * np.exp(-2 * p * t) + (1 - p) * 2 * (1 - p) * np.exp(  # noqa: E731
            -2 * (1 - p) * t)
    for x in (0.3, 1.0, 2.5, 8.0):
        first = quad(lambda t: t * density(t), 0, x, points=[2.0] if x > 2 else None)[0]
        second = quad(lambda t: t * t * density(t), 0, x, points=[2.0] if x > 2 else None)[0]
        assert float(law.partial_moment(1, x)) == pytest.approx(first, rel=1e-6, abs=1e-12)
        assert float(law.partial_moment(2, x)) == pytest.approx(second, rel=1e-6, abs=1e-12)
    assert law.mean() == pytest.approx(quad(lambda t: t * density(t), 0, np.inf)[0], rel=1e-8)


def test_samples_have_the_right_mean() -> None:
    for law in (Exponential(1.0), named_sizes("h2", 4.0), named_sizes("uniform")):
        x = law.sample(200_000, rng=1)
        half = 3.3 * x.std() / np.sqrt(x.size)
        assert abs(x.mean() - law.mean()) < half


def test_me_law_through_its_phase_type_form() -> None:
    from symq.me import ME

    law = ME.hyperexponential([sp.Rational(1, 4), sp.Rational(3, 4)], [1, 4])
    sizes = as_sizes(law)
    assert sizes.mean() == pytest.approx(float(law.mean()), rel=1e-12)
    assert sizes.moment(2) == pytest.approx(float(law.moment(2)), rel=1e-12)
    x = 0.7
    assert float(sizes.ccdf(x)) == pytest.approx(float(law.ccdf(x)), rel=1e-10)


def test_bad_size_laws() -> None:
    with pytest.raises(InvalidParameter, match="mean"):
        Exponential(0.0)
    with pytest.raises(InvalidParameter, match="sizes"):
        named_sizes("pareto")
    with pytest.raises(InvalidParameter, match="parameter alpha"):
        as_sizes(([0.5, 0.6], [[-1.0, 0.0], [0.0, -2.0]]))


def test_mg1_value_solves_the_bellman_equation_with_pk_constant() -> None:
    result = verify_mg1_value()
    assert not result["residual_depends_on_u"]
    assert result["g_is_pollaczek_khinchine"]


def test_fpi_index_expands_to_the_value_difference() -> None:
    lam_i, rho_i = sp.symbols("lambda_i rho_i", positive=True)
    u, x = sp.symbols("u x", positive=True)
    direct = u + x + lam_i * ((u + x) ** 2 - u ** 2) / (2 * (1 - rho_i))
    assert sp.simplify(fpi_index(lam_i, rho_i) - direct) == 0
    assert fpi_from_rnd_is_lwl()


def test_bellman_equations_have_one_choice_per_server() -> None:
    pre, post = bellman_equations(3)
    (minimum,) = pre.rhs.find(sp.Min)
    assert len(minimum.args) == 3                 # one choice per server
    assert len(post.rhs.find(sp.Max)) == 3        # every backlog drains, clipped at 0
