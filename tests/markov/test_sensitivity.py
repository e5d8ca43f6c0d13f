"""Derivatives of stationary outputs: against central finite differences of stationary() and
against the derivative of closed forms written here."""

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.result import Exactness
from symq.markov import Jump, MarkovChain, StateVariable, mm1k, stationary, tandem
from symq.markov.sensitivity import StationarySensitivity, sensitivity

STEP = 1e-6


def _central(chain, params, name):
    up = stationary(chain, {**params, name: params[name] + STEP}).values
    down = stationary(chain, {**params, name: params[name] - STEP}).values
    return {k: (up[k] - down[k]) / (2 * STEP) for k in up}


def _close(value, reference, rtol=1e-6):
    assert abs(value - reference) <= rtol * max(abs(reference), 1e-3), (value, reference)


@pytest.mark.parametrize("parameter", ["lam", "mu1", "mu2"])
def test_tandem_derivatives_match_central_differences(parameter):
    chain = tandem(3, 2)
    params = {"lam": 1.2, "mu1": 2.0, "mu2": 1.5}
    result = sensitivity(chain, params, parameter)
    reference = _central(chain, params, parameter)
    assert set(result.values) == set(reference)
    for name, value in result.values.items():
        _close(value, reference[name])
    assert abs(result.dpi.sum()) < 1e-12
    assert result.exactness == Exactness.NUMERIC and isinstance(result, StationarySensitivity)


def test_mm1k_blocking_derivative_is_the_derivative_of_the_closed_form():
    K = 5
    lam, mu = sp.symbols("lam mu", positive=True)
    P_full = lam ** K / sum(lam ** n * mu ** (K - n) for n in range(K + 1))
    EN = sum(n * lam ** n * mu ** (K - n) for n in range(K + 1)) / \
        sum(lam ** n * mu ** (K - n) for n in range(K + 1))
    point = {lam: sp.Rational(7, 10), mu: 1}
    for which, symbol in (("lam", lam), ("mu", mu)):
        result = sensitivity(mm1k(K), {"lam": 0.7, "mu": 1.0}, which)
        expected_block = float(sp.diff(P_full, symbol).subs(point))
        expected_EN = float(sp.diff(EN, symbol).subs(point))
        assert result["P_block"] == pytest.approx(expected_block, rel=1e-10)
        assert result["EN"] == pytest.approx(expected_EN, rel=1e-10)
        # departures = lam (1 - P_full): d/dlam = 1 - P_full - lam P_full'
        X = lam * (1 - P_full)
        assert result["X"] == pytest.approx(float(sp.diff(X, symbol).subs(point)), rel=1e-10)


def test_a_reward_that_depends_on_the_parameter_adds_pi_times_its_derivative():
    chain = MarkovChain([StateVariable("n", 0, 4)],
                        [Jump("lam", {"n": "n + 1"}, "n < 4", label="arrive"),
                         Jump("mu*n", {"n": "n - 1"}, "n > 0", label="serve")],
                        parameters=("lam", "mu"),
                        outputs={"cost": "mu*n**2 + lam", "X": "throughput:serve",
                                 "P0": "n == 0"})
    params = {"lam": 1.7, "mu": 0.8}
    for parameter in ("lam", "mu"):
        result = sensitivity(chain, params, parameter)
        reference = _central(chain, params, parameter)
        for name in ("cost", "X", "P0"):
            _close(result[name], reference[name])


def test_a_parameter_that_appears_in_no_rate_has_zero_derivatives():
    chain = MarkovChain([StateVariable("n", 0, 2)],
                        [Jump("lam", {"n": "n + 1"}, "n < 2"),
                         Jump("mu", {"n": "n - 1"}, "n > 0")],
                        parameters=("lam", "mu", "c"), outputs={"EN": "n", "cost": "c*n"})
    result = sensitivity(chain, {"lam": 1.0, "mu": 1.0, "c": 3.0}, "c")
    assert result["EN"] == 0.0
    assert result["cost"] == pytest.approx(1.0, rel=1e-12)  # E[n] = (0 + 1 + 2)/3
    np.testing.assert_array_equal(result.dpi, 0.0)


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(InvalidParameter, match="parameter='nu'"):
        sensitivity(mm1k(3), {"lam": 1.0, "mu": 2.0}, "nu")
    chain = MarkovChain([StateVariable("n", 0, 5)],
                        [Jump("lam", {"n": "n + 1"}, "n < K", label="arrive"),
                         Jump("mu", {"n": "n - 1"}, "n > 0")], parameters=("lam", "mu", "K"))
    with pytest.raises(InvalidParameter, match="arrive uses it"):
        sensitivity(chain, {"lam": 1.0, "mu": 2.0, "K": 3.0}, "K")


def test_the_result_displays_and_gives_its_outputs():
    result = sensitivity(mm1k(2), {"lam": 1.0, "mu": 2.0}, "lam")
    assert result._repr_markdown_().startswith("**StationarySensitivity**")
    assert set(result.outputs()) == {"EN", "EN_queue", "P_block", "X", "X_in", "residual"}
    assert result.residual < 1e-12
