"""The Gillespie simulator compiled from a chain's declared rates, against exact values and
independent solvers (the M/M/1 closed forms, the sparse stationary solve, linear level
reduction), with its interval's coverage checked over many seeds.

A test that checks one run against an exact value asks for a 99.9% interval: its coverage is
tested at 95% over many seeds in the first test, and one run's check should not fail by the
5% chance a 95% interval leaves."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from symq.core.errors import InvalidParameter
from symq.markov.chain import Jump, MarkovChain, StateVariable
from symq.markov.level_dependent import level_dependent_stationary
from symq.markov.simulation_declared import simulate_chain
from symq.markov.stationary import stationary

#: The level of the intervals a single run is checked with.
LEVEL = 0.999


def _mm1() -> MarkovChain:
    return MarkovChain([StateVariable("n", 0, None)],
                       [Jump("lam", {"n": "n + 1"}, label="arrive"),
                        Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
                       parameters=("lam", "mu"),
                       outputs={"EN": "n", "P0": "n == 0", "X": "throughput:serve"})


def test_mm1_intervals_cover_the_closed_forms_over_many_seeds():
    """E[N] = rho/(1 - rho), P(N = 0) = 1 - rho, X = lam, at rho = 1/2: each 95% interval
    covers in a number of 150 runs that a binomial(150, 0.95) law makes plausible."""
    chain, params, runs = _mm1(), {"lam": 0.5, "mu": 1.0}, 150
    exact = {"EN": 1.0, "P0": 0.5, "X": 0.5}
    covered = dict.fromkeys(exact, 0)
    for seed in range(runs):
        est = simulate_chain(chain, params, n_events=40_000, rng=seed)
        for key, value in exact.items():
            covered[key] += est[key].contains(value)
    for key, count in covered.items():
        assert binom.cdf(count, runs, 0.95) > 1e-3, (key, count)


def test_the_same_seed_gives_the_same_run_whether_chunked_or_not():
    chain, params = _mm1(), {"lam": 0.7, "mu": 1.0}
    one = simulate_chain(chain, params, n_events=100_000, rng=11)
    bar = simulate_chain(chain, params, n_events=100_000, rng=11, progress=True)
    assert one["EN"].mean == bar["EN"].mean and one.n_events == bar.n_events == 100_000
    timed = simulate_chain(chain, params, horizon=20_000.0, rng=11, level=LEVEL)
    assert timed.horizon == pytest.approx(20_000.0)
    assert timed["EN"].contains(0.7 / 0.3)


def test_tandem_with_blocking_against_the_sparse_solve():
    """A finite tandem (not of product form): every output's interval holds the stationary
    solve's value, and the method names the declared-rate simulator."""
    from symq.markov.library import tandem

    chain, params = tandem(4, 3), {"lam": 1.0, "mu1": 1.3, "mu2": 1.1}
    law = stationary(chain, params)
    est = simulate_chain(chain, params, n_events=600_000, rng=5, level=LEVEL)
    assert "declared rates" in est.method and est.n_states is None
    for key in ("EN", "EN1", "EN2", "P_block", "X", "X_in"):
        assert est[key].contains(law[key]), (key, est[key], law[key])


def test_a_retrial_queue_against_linear_level_reduction():
    """The M/M/1 retrial queue (orbit j unbounded, retrials at rate j*theta): a level-dependent
    chain solved by linear level reduction; the simulation's intervals hold its values."""
    chain = MarkovChain(
        [StateVariable("j", 0, None), StateVariable("s", 0, 1)],
        [Jump("lam", {"s": "1"}, guard="s == 0", label="arrive"),
         Jump("lam", {"j": "j + 1"}, guard="s == 1", label="to_orbit"),
         Jump("j*theta", {"j": "j - 1", "s": "1"}, guard="s == 0 and j > 0", label="retry"),
         Jump("mu", {"s": "0"}, guard="s == 1", label="serve")],
        parameters=("lam", "mu", "theta"),
        outputs={"EJ": "j", "busy": "s == 1", "X": "throughput:serve"})
    params = {"lam": 0.6, "mu": 1.0, "theta": 0.8}
    law = level_dependent_stationary(chain, params)
    est = simulate_chain(chain, params, n_events=800_000, rng=8, level=LEVEL)
    for key in ("EJ", "busy", "X"):
        assert est[key].contains(law[key]), (key, est[key], law[key])
    assert law["busy"] == pytest.approx(0.6, abs=1e-9)       # P(busy) = rho for any retrial rate


def test_general_updates_and_self_loops_match_the_exact_laws():
    """A reset jump (update n -> 0, not a shift) and an arrival written min(n + 1, K), which is
    a self-loop at K: the accepted-arrival throughput leaves the blocked ones out."""
    K = 3
    reset = MarkovChain([StateVariable("n", 0, 5)],
                        [Jump("lam", {"n": "n + 1"}, guard="n < 5"),
                         Jump("g", {"n": "0"}, guard="n > 0")],
                        parameters=("lam", "g"), outputs={"EN": "n", "P5": "n == 5"})
    params = {"lam": 1.0, "g": 0.5}
    # pi_n = pi_0 * (lam/(lam + g))^n for n < 5, pi_5 = pi_4 * lam/g (balance by hand)
    r = 1.0 / 1.5
    weights = np.array([r ** n for n in range(5)] + [r ** 4 * 2.0])
    pi = weights / weights.sum()
    est = simulate_chain(reset, params, n_events=400_000, rng=3, level=LEVEL)
    assert est["EN"].contains(float(pi @ np.arange(6)))
    assert est["P5"].contains(float(pi[5]))

    blocked = MarkovChain([StateVariable("n", 0, K)],
                          [Jump("lam", {"n": f"min(n + 1, {K})"}, label="arrive"),
                           Jump("mu", {"n": "n - 1"}, guard="n > 0")],
                          parameters=("lam", "mu"), outputs={"X_in": "throughput:arrive"})
    rho = 0.8
    p_full = rho ** K * (1 - rho) / (1 - rho ** (K + 1))
    est = simulate_chain(blocked, {"lam": rho, "mu": 1.0}, n_events=400_000, rng=4,
                         level=LEVEL)
    assert est["X_in"].contains(rho * (1 - p_full))


def _faulty() -> MarkovChain:
    """One chain (compiled once) whose parameters make each fault: an up rate ``a - n`` that
    may turn negative, a guard ``n < b`` that may let the update leave the bound 4, a down
    rate ``d`` that may be 0 (then the top state reached absorbs)."""
    return MarkovChain([StateVariable("n", 0, 4)],
                       [Jump("a - n", {"n": "n + 1"}, guard="n < b", label="up"),
                        Jump("d", {"n": "n - 1"}, guard="n > 0", label="down")],
                       parameters=("a", "b", "d"), outputs={"EN": "n"})


def test_a_negative_rate_at_a_reached_state_names_the_jump_and_the_state():
    chain = _faulty()
    # at a = 2 the up rate is 0 at n = 2, so n = 3 (where it is negative) is never reached
    est = simulate_chain(chain, {"a": 2.0, "b": 4.0, "d": 1.0}, n_events=30_000, rng=1)
    assert est["EN"].mean < 2
    with pytest.raises(InvalidParameter, match=r"up\.rate.*-0\.5.*n=3"):
        simulate_chain(chain, {"a": 2.5, "b": 4.0, "d": 1.0}, n_events=30_000, rng=1)


def test_an_update_leaving_the_bounds_names_the_bound():
    with pytest.raises(InvalidParameter, match=r"up\.update\.n.*n\.high = 4"):
        simulate_chain(_faulty(), {"a": 10.0, "b": 5.0, "d": 1.0}, n_events=30_000, rng=1)


def test_an_absorbing_state_stops_the_run_with_its_name():
    with pytest.raises(InvalidParameter, match="n=4.*no jump enabled"):
        simulate_chain(_faulty(), {"a": 10.0, "b": 4.0, "d": 0.0}, n_events=30_000, rng=1)


def test_a_function_numba_lacks_falls_back_to_the_generator_or_is_refused():
    """lambertw has no numba form: a finite chain is simulated from its generator (the method
    says so, and the answer is right); a chain with an unbounded level is refused."""
    w1 = 0.5671432904097838                                  # W(1), the omega constant
    jumps = [Jump("lambertw(n + 1)", {"n": "n + 1"}, guard="n < 1"),
             Jump("1", {"n": "n - 1"}, guard="n > 0")]
    finite = MarkovChain([StateVariable("n", 0, 1)], jumps, outputs={"P1": "n == 1"})
    est = simulate_chain(finite, n_events=200_000, rng=2, level=LEVEL)
    assert "generator" in est.method and est.n_states == 2
    assert est["P1"].contains(w1 / (1 + w1))
    unbounded = MarkovChain([StateVariable("n", 0, None)],
                            [Jump("lambertw(n + 1)", {"n": "n + 1"}),
                             Jump("3", {"n": "n - 1"}, guard="n > 0")], outputs={"EN": "n"})
    with pytest.raises(InvalidParameter, match="numba can compile"):
        simulate_chain(unbounded, n_events=30_000, rng=2)


def test_no_output_and_bad_parameters_are_refused():
    chain = MarkovChain([StateVariable("n", 0, 2)], [Jump("1", {"n": "n + 1"}, guard="n < 2"),
                                                     Jump("1", {"n": "n - 1"}, guard="n > 0")])
    with pytest.raises(InvalidParameter, match="chain.outputs"):
        simulate_chain(chain, n_events=30_000)
    with pytest.raises(InvalidParameter, match="lam"):
        simulate_chain(_mm1(), {"lam": math.nan, "mu": 1.0}, n_events=30_000)
