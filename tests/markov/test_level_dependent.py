"""Tests of symq.markov.level_dependent: level-dependent QBDs by linear level reduction, each
against a closed form written here or a large finite chain solved by symq.markov.stationary."""

from __future__ import annotations

import math

import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.markov.chain import Jump, MarkovChain, StateVariable
from symq.markov.level_dependent import level_dependent_stationary
from symq.markov.levels import QBDStationaryLaw
from symq.markov.stationary import stationary


def _birth_death(up: str, down: str, outputs: dict[str, str], high: int | None = None
                 ) -> MarkovChain:
    return MarkovChain([StateVariable("n", 0, high)],
                       [Jump(up, {"n": "n + 1"}, guard="True" if high is None else f"n < {high}",
                             label="arrive"),
                        Jump(down, {"n": "n - 1"}, guard="n > 0", label="serve")],
                       parameters=("lam", "mu"), outputs=outputs)


def test_mm_infinity_is_poisson():
    lam, mu = 7.0, 0.5
    a = lam / mu
    outputs = {"EN": "n", "X": "throughput:serve"}
    outputs.update({f"P{k}": f"n == {k}" for k in (0, 3, 14, 30)})
    law = level_dependent_stationary(_birth_death("lam", "n*mu", outputs), {"lam": lam, "mu": mu})
    assert isinstance(law, QBDStationaryLaw)
    assert law["EN"] == pytest.approx(a, rel=1e-10)
    assert law.mean_level == pytest.approx(a, rel=1e-10)
    assert law["X"] == pytest.approx(lam, rel=1e-10)
    for k in (0, 3, 14, 30):
        assert law[f"P{k}"] == pytest.approx(math.exp(-a) * a ** k / math.factorial(k),
                                             rel=1e-9, abs=1e-15)
    assert law.drift < 0
    assert law.truncation_bound < 1e-10
    assert "linear level reduction, truncated at level n = " in law.method
    assert law.residual < 1e-12


def test_mmc_against_erlang_c():
    lam, mu, c = 3.2, 1.0, 4
    a, rho = lam / mu, lam / (c * mu)
    head = sum(a ** k / math.factorial(k) for k in range(c))
    tail = a ** c / (math.factorial(c) * (1 - rho))
    erlang_c = tail / (head + tail)                       # P(wait) = P(N >= c)
    mean = a + erlang_c * rho / (1 - rho)                 # E[N] = a + C rho / (1 - rho)
    chain = _birth_death("lam", "min(n, 4)*mu", {"EN": "n", "W": "n >= 4"})
    law = level_dependent_stationary(chain, {"lam": lam, "mu": mu})
    assert law["W"] == pytest.approx(erlang_c, rel=1e-10)
    assert law["EN"] == pytest.approx(mean, rel=1e-10)
    assert law.bounds["EN"] < 1e-10


def test_balking_is_poisson():
    lam, mu = 4.0, 1.0
    rho = lam / mu
    chain = _birth_death("lam/(n + 1)", "mu", {"EN": "n", "P2": "n == 2", "P0": "n == 0"})
    law = level_dependent_stationary(chain, {"lam": lam, "mu": mu})
    # pi_n = rho^n / n! e^-rho: pi_(n+1) mu = pi_n lam / (n + 1)
    assert law["P0"] == pytest.approx(math.exp(-rho), rel=1e-10)
    assert law["P2"] == pytest.approx(rho ** 2 / 2 * math.exp(-rho), rel=1e-10)
    assert law["EN"] == pytest.approx(rho, rel=1e-10)


def _retrial(high: int | None) -> MarkovChain:
    """M/M/1 retrial queue: orbit ``n`` (the level), server ``s``; a retrial at rate
    ``n*theta`` when the server is idle."""
    guard = "s == 1" if high is None else f"s == 1 and n < {high}"
    return MarkovChain(
        [StateVariable("n", 0, high), StateVariable("s", 0, 1)],
        [Jump("lam", {"s": "1"}, guard="s == 0", label="enter"),
         Jump("lam", {"n": "n + 1"}, guard=guard, label="orbit"),
         Jump("mu", {"s": "0"}, guard="s == 1", label="done"),
         Jump("n*theta", {"n": "n - 1", "s": "1"}, guard="s == 0 and n > 0", label="retry")],
        parameters=("lam", "mu", "theta"),
        outputs={"EN": "n", "busy": "s == 1", "X": "throughput:done"})


def test_retrial_queue_closed_form_and_finite_chain():
    lam, mu, theta = 0.7, 1.0, 0.4
    rho = lam / mu
    params = {"lam": lam, "mu": mu, "theta": theta}
    law = level_dependent_stationary(_retrial(None), params)
    # Derived from the cut lam p(n,1) = (n+1) theta p(n+1,0) and the phase balance
    # (lam + n theta) p(n,0) = mu p(n,1): sum n p(n,0) = lam rho / theta,
    # E[orbit] = rho^2 (mu + theta) / (theta (1 - rho)).
    assert law["EN"] == pytest.approx(rho ** 2 * (mu + theta) / (theta * (1 - rho)), rel=1e-9)
    assert law["busy"] == pytest.approx(rho, rel=1e-10)
    assert law["X"] == pytest.approx(lam, rel=1e-10)
    finite = stationary(_retrial(400), params)      # the independent evidence
    for key in ("EN", "busy", "X"):
        assert law[key] == pytest.approx(finite.values[key], rel=1e-9)


def test_unstable_mmc_names_the_drift():
    chain = _birth_death("lam", "min(n, 2)*mu", {"EN": "n"})
    with pytest.raises(StabilityError, match=r"drift .* = 1 >= 0"):
        level_dependent_stationary(chain, {"lam": 3.0, "mu": 1.0}, max_levels=2048)


def test_refusals():
    chain = _birth_death("lam", "n*mu", {"EN": "n"})
    with pytest.raises(InvalidParameter, match="eps"):
        level_dependent_stationary(chain, {"lam": 1.0, "mu": 1.0}, eps=0.0)
    with pytest.raises(InvalidParameter, match="max_levels"):
        level_dependent_stationary(chain, {"lam": 1.0, "mu": 1.0}, max_levels=2)
    batch = MarkovChain([StateVariable("n", 0, None)],
                        [Jump("lam", {"n": "n + 2"}, label="pair"),
                         Jump("n*mu", {"n": "n - 1"}, guard="n > 0")], parameters=("lam", "mu"))
    with pytest.raises(InvalidParameter, match=r"pair\.update\.n=.*at most one"):
        level_dependent_stationary(batch, {"lam": 1.0, "mu": 3.0})
    finite = MarkovChain([StateVariable("n", 0, 3)], [Jump(1, {"n": "n + 1"}, "n < 3")])
    with pytest.raises(InvalidParameter, match="stationary"):
        level_dependent_stationary(finite, {})


def test_truncation_is_checked():
    lam, mu = 40.0, 1.0           # the mass lies near 40: the first truncation (64) is too low
    law = level_dependent_stationary(_birth_death("lam", "n*mu", {"P0": "n == 0"}),
                                     {"lam": lam, "mu": mu})
    assert law.levels_summed >= 128
    assert law["P0"] == pytest.approx(math.exp(-lam), rel=1e-9)
    assert law.eta is None and "eta" not in law.outputs()
