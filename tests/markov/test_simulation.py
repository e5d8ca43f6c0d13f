"""The Gillespie simulator of a CTMC against exact stationary laws built independently here.

The M/M/1/K queue's generator is written directly as a CSR matrix (births ``lam`` below ``K``,
deaths ``mu`` above 0); its stationary law is the truncated geometric law
``pi_n = rho^n (1 - rho) / (1 - rho^(K+1))`` (Kleinrock, *Queueing Systems I*, 1975, Section
3.6), so ``E[N]``, ``P(N = K)`` and the accepted arrival rate ``lam (1 - P(N = K))`` are exact
references.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.stats import binomtest

from symq.core.errors import InvalidParameter, RunTooShort, SymqError
from symq.core.result import Exactness
from symq.markov.simulation import CTMCEstimate, simulate_ctmc


def mm1k(lam: float, mu: float, K: int) -> sps.csr_array:
    """The generator of M/M/1/K, written row by row (entries: up then down; diagonal stored)."""
    indptr, indices, data = [0], [], []
    for n in range(K + 1):
        out = 0.0
        if n > 0:
            indices.append(n - 1)
            data.append(mu)
            out += mu
        indices.append(n)
        data.append(-out - (lam if n < K else 0.0))
        if n < K:
            indices.append(n + 1)
            data.append(lam)
        indptr.append(len(indices))
    return sps.csr_array((np.array(data), np.array(indices), np.array(indptr)),
                         shape=(K + 1, K + 1))


def exact(lam: float, mu: float, K: int) -> np.ndarray:
    rho = lam / mu
    pi = np.array([rho ** n for n in range(K + 1)])
    return pi / pi.sum()


def arrivals(Q: sps.csr_array) -> np.ndarray:
    """Per CSR entry: 1 on the transitions n -> n + 1 (an accepted arrival)."""
    rows = np.repeat(np.arange(Q.shape[0]), np.diff(Q.indptr))
    return (Q.indices == rows + 1).astype(float)


LAM, MU, K = 0.8, 1.0, 5


def outputs(K: int) -> dict[str, np.ndarray]:
    n = np.arange(K + 1, dtype=float)
    return {"EN": n, "PK": (n == K).astype(float)}


@pytest.mark.parametrize("run", [{"n_events": 400_000}, {"horizon": 250_000.0}],
                         ids=["events", "horizon"])
def test_mm1k_intervals_cover_the_closed_forms(run):
    Q = mm1k(LAM, MU, K)
    pi = exact(LAM, MU, K)
    est = simulate_ctmc(Q, outputs(K), impulses={"X": arrivals(Q)}, rng=7, **run)
    assert est["EN"].contains(np.arange(K + 1) @ pi)
    assert est["PK"].contains(pi[K])
    assert est["X"].contains(LAM * (1.0 - pi[K]))
    assert est["EN"].relative_half_width < 0.05
    assert est.method == "Gillespie simulation, batch means"
    assert est.exactness is Exactness.SIMULATED
    assert est.n_states == K + 1 and est.n_batches == 30 and est.seconds > 0
    assert all(v >= 0 for v in est.warmup.values())
    if "horizon" in run:
        assert est.horizon == pytest.approx(run["horizon"])
    else:
        assert est.n_events == run["n_events"]


def test_impulse_as_a_matrix_and_a_dense_generator_agree_with_per_entry_weights():
    Q = mm1k(LAM, MU, K)
    W = sps.diags(np.ones(K), 1, shape=(K + 1, K + 1))
    by_entry = simulate_ctmc(Q, None, impulses={"X": arrivals(Q)}, n_events=20_000, rng=3)
    by_matrix = simulate_ctmc(Q.toarray(), None, impulses={"X": W.toarray()}, n_events=20_000,
                              rng=3)
    assert by_entry["X"] == by_matrix["X"]


def test_coverage_over_seeds_is_nominal():
    """200 independent short runs: how often the 95% interval of E[N] covers the exact value
    must not reject 95% (two-sided binomial test at the 1e-3 level)."""
    Q = mm1k(LAM, MU, K)
    pi = exact(LAM, MU, K)
    target = np.arange(K + 1) @ pi
    rewards = {"EN": np.arange(K + 1, dtype=float)}
    hits = sum(simulate_ctmc(Q, rewards, horizon=12_500.0, rng=seed)["EN"].contains(target)
               for seed in range(200))
    assert binomtest(hits, 200, 0.95).pvalue > 1e-3, hits


def test_same_seed_same_result_and_progress_does_not_change_it():
    Q = mm1k(LAM, MU, K)
    runs = [simulate_ctmc(Q, outputs(K), horizon=5_000.0, rng=11, progress=p)
            for p in (False, False, True)]
    first = runs[0].to_dict()
    for other in runs[1:]:
        again = other.to_dict()
        for key in ("seconds", "events_per_second"):
            first.pop(key, None)
            again.pop(key)
        assert again == first
    other = simulate_ctmc(Q, outputs(K), horizon=5_000.0, rng=12)
    assert other["EN"].mean != runs[0]["EN"].mean


def test_result_is_a_frozen_typed_result_with_json():
    Q = mm1k(LAM, MU, K)
    est = simulate_ctmc(Q, outputs(K), n_events=10_000, rng=1)
    assert isinstance(est, CTMCEstimate)
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.n_events = 1  # type: ignore[misc]
    data = json.loads(json.dumps(est.to_dict()))
    assert data["exactness"] == "simulated" and set(data["rewards"]) == {"EN", "PK"}
    assert "CTMCEstimate" in str(est)
    with pytest.raises(KeyError, match="neither a reward"):
        est["nope"]


def test_negative_rate_is_refused_naming_the_entry():
    Q = mm1k(LAM, MU, K).toarray()
    Q[2, 3] = -0.5
    with pytest.raises(InvalidParameter, match=r"generator.*generator\[2, 3\]=-0.5"):
        simulate_ctmc(Q, outputs(K), n_events=10_000, rng=1)
    Q[2, 3] = np.inf
    with pytest.raises(InvalidParameter, match="finite"):
        simulate_ctmc(Q, outputs(K), n_events=10_000, rng=1)


def test_non_square_matrix_is_refused():
    with pytest.raises(InvalidParameter, match=r"parameter generator=.*shape \(2, 3\).*square"):
        simulate_ctmc(np.ones((2, 3)), {"a": [1.0, 0.0]}, n_events=10_000, rng=1)


def test_absorbing_state_reached_stops_the_run_naming_the_state():
    # 0 -> 1 -> 2, and 2 has no way out
    Q = sps.csr_array(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(SymqError, match="reached state 2"):
        simulate_ctmc(Q, {"a": [1.0, 0.0, 0.0]}, horizon=1e4, rng=1)
    with pytest.raises(InvalidParameter, match="state 2 has no outgoing rate"):
        simulate_ctmc(Q, {"a": [1.0, 0.0, 0.0]}, initial=2, n_events=10_000, rng=1)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"initial": 6}, "initial"),
    ({"initial": True}, "initial"),
    ({"n_events": 100}, "n_events"),
    ({"horizon": -1.0}, "horizon"),
    ({"horizon": 10.0, "n_events": 10_000}, "horizon"),
    ({"n_batches": 1}, "n_batches"),
    ({"level": 1.5}, "level"),
    ({"rewards": {"EN": [1.0, 2.0]}}, r"rewards\['EN'\]"),
    ({"rewards": {}}, "rewards"),
    ({"impulses": {"X": np.ones(3)}}, r"impulses\['X'\]"),
])
def test_bad_arguments_name_the_parameter(kwargs, name):
    Q = mm1k(LAM, MU, K)
    call = {"rewards": outputs(K), "n_events": 10_000, "rng": 1}
    if "horizon" in kwargs and "n_events" not in kwargs:
        call.pop("n_events")
    call.update(kwargs)
    rewards = call.pop("rewards")
    with pytest.raises(InvalidParameter, match=rf"parameter {name}="):
        simulate_ctmc(Q, rewards, **call)


def test_a_horizon_with_too_few_events_is_run_too_short():
    Q = mm1k(LAM, MU, K)
    with pytest.raises(RunTooShort, match=r"parameter horizon=100.0 must be >= about"):
        simulate_ctmc(Q, outputs(K), horizon=100.0, rng=1)
