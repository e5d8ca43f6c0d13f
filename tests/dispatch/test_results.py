"""The results of the dispatching solvers follow symq's result protocol (symq.core.result).

Each public result is a frozen dataclass with glossary names (``ET``, ``n_batches``,
``residual``, ``method``, ``exactness``), JSON-ready through ``to_dict()``, with a one-line
``__str__`` and a Markdown table; the values are checked against closed forms.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from symq.core.result import Exactness, ResultBase
from symq.core.simstats import ConfidenceInterval
from symq.dispatch import (
    DispatchEstimate,
    ExactResult,
    RichardsonResult,
    VIResult,
    evaluate_policy,
    exact_mean_response,
    richardson,
    simulate_dispatch,
)
from symq.laws import Exponential

X = Exponential(1.0)


def _protocol(result: ResultBase) -> dict:
    assert isinstance(result, ResultBase)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.method = "other"  # type: ignore[misc]
    data = json.loads(json.dumps(result.to_dict()))
    assert str(result).startswith(type(result).__name__ + "(")
    assert "| `ET` |" in result._repr_markdown_()
    return data


def test_exact_result() -> None:
    result = exact_mean_response("sita-e", 2, 0.5, X)
    assert isinstance(result, ExactResult) and result.exactness is Exactness.EXACT
    data = _protocol(result)
    assert data["ET"] == result.ET and data["policy"] == "sita-e" and len(data["thresholds"]) == 1
    # SITA-E, Exp(1), m = 2: 1 - e^{-h}(1 + h) = 1/2
    h = result.thresholds[0]
    assert abs(1 - (1 + h) * math.exp(-h) - 0.5) < 1e-12
    lwl = exact_mean_response("lwl", 2, 0.5, X)
    assert lwl.ET == pytest.approx(1 / (1 - 0.25), rel=1e-14) and "Erlang C" in lwl.method


def test_value_iteration_results() -> None:
    rr = richardson(evaluate_policy, "rnd", 2, 0.5, X, delta=0.4, U=20.0, tol=1e-10)
    assert isinstance(rr, RichardsonResult) and all(isinstance(r, VIResult) for r in rr.results)
    data = _protocol(rr)
    assert "results" not in data                          # the grids are not dumped
    assert data["error_estimate"] == pytest.approx(rr.correction + rr.ET_high - rr.ET_low)
    assert abs(rr.ET - 1 / (1 - 0.5)) <= rr.error_estimate    # two M/M/1 queues
    fine = rr.results[-1]
    data = _protocol(fine)
    assert "v" not in data and data["residual"] < 1e-10
    assert fine.ET_low <= fine.ET <= fine.ET_high and fine.exactness is Exactness.NUMERIC


def test_simulation_estimate() -> None:
    est = simulate_dispatch("lwl", 2, 0.5, X, n_jobs=60_000, n_batches=20, rng=4, level=0.999)
    assert isinstance(est, DispatchEstimate) and isinstance(est.ET, ConfidenceInterval)
    data = _protocol(est)
    assert data["n_batches"] == 20 and data["method"] == "batch_means"
    assert data["exactness"] == "simulated" and data["ET"]["n"] == 20
    assert est.ET.contains(1 / (1 - 0.25))                 # M/M/2
    reps = simulate_dispatch("rnd", 2, 0.5, X, n_jobs=60_000, replications=5, rng=4, level=0.999)
    assert reps.method == "replications" and reps.n_batches == 5 and reps.ET.contains(2.0)
