"""The result types of symq.me follow the result protocol of symq.core.result.ResultBase:
frozen dataclasses, JSON-ready ``to_dict()``, a one-line ``str`` and a Markdown table, with field
names from the glossary."""

import dataclasses
import json

import pytest
import sympy as sp

from symq.core.glossary import RETIRED
from symq.core.result import Exactness, ResultBase
from symq.me import (
    Candidate,
    Certificate,
    FitReport,
    PadeResult,
    WaitingTime,
    WaitingTimeEstimate,
    certify,
    fit,
    mg1_waiting_time,
    pade_fit,
    simulate_mg1_waiting,
)
from symq.me.distribution import ME
from symq.me.mg1 import MG1Simulation, solve_mg1_sim
from symq.me.model import MEFit
from symq.me.model import solve as solve_me_fit

s = sp.Symbol("s")
TYPES = (Candidate, Certificate, FitReport, MEFit, MG1Simulation, PadeResult, WaitingTime,
         WaitingTimeEstimate)


@pytest.mark.parametrize("cls", TYPES, ids=lambda c: c.__name__)
def test_frozen_results_without_retired_names(cls):
    assert issubclass(cls, ResultBase) and cls.__dataclass_params__.frozen
    assert not {f.name for f in dataclasses.fields(cls)} & set(RETIRED)


def test_pade_result():
    # Erlang(2) with rate 2: moments 1, 3/2, 3 and transform 4/(s + 2)^2 = 4/(s^2 + 4 s + 4)
    exact = pade_fit([1, "3/2", 3])
    data = json.loads(json.dumps(exact.to_dict()))
    assert data["lst"] == {"numerator": ["4"], "denominator": ["4", "4", "1"]}
    assert data["exactness"] == "exact" and data["method"] == "classical Padé (Hankel system)"
    assert str(exact) == ("PadeResult(order=2, moments_used=3, zero_used=0, exactness=exact, "
                          "residual=0)")
    assert sp.latex(4 / (s**2 + 4 * s + 4)) in exact._repr_markdown_()
    with pytest.raises(dataclasses.FrozenInstanceError):
        exact.order = 3  # type: ignore[misc]
    floating = pade_fit([1.0, 1.5], zero=[0.0])
    assert floating.exactness is Exactness.NUMERIC and floating.method == "two-point Padé"
    assert json.loads(json.dumps(floating.to_dict()))["dps"] >= 50


def test_certificate_display():
    negative = certify(([2, -1], [2, 3, 1]))          # f(0) = -1 < 0
    markdown = negative._repr_markdown_()
    assert "| `status` | NEGATIVE |" in markdown and "witness" in markdown
    assert str(negative.status) == "NEGATIVE"


def test_fit_report():
    me, report = fit(ME.erlang(2, 2).moments(3), order_max=2)
    assert me == ME.erlang(2, 2)
    data = json.loads(json.dumps(report.to_dict()))
    assert [(c["order"], c["zero_used"]) for c in data["candidates"]] == [(1, 0), (2, 0)]
    assert data["best"]["transform"] == {"numerator": ["4"], "denominator": ["4", "4", "1"]}
    assert data["best"]["status"] == "NONNEGATIVE" and data["best"]["matched"] == 3
    assert str(report) == "FitReport(target: 2 candidates, best order 2, J = 0)"
    assert report._repr_markdown_().count("\n") == 3 + len(report.candidates)
    assert "**(chosen)**" in report._repr_markdown_()
    assert str(report.best).startswith("Candidate(order=2, zero_used=0, status=NONNEGATIVE")
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.best = None  # type: ignore[misc]


def test_waiting_time_markdown_shows_the_transform():
    waiting = mg1_waiting_time(ME.exponential(1), sp.Rational(1, 2))
    # M/M/1: W | W > 0 is exponential with rate mu - lam = 1/2
    assert sp.latex(sp.Rational(1, 2) / (s + sp.Rational(1, 2))) in waiting._repr_markdown_()


def test_estimate_markdown_lists_each_threshold():
    sim = simulate_mg1_waiting(lambda n, g: g.exponential(1.0, n), 0.5, [0.5, 1.0],
                               n_jobs=30_000, rng=2, n_batches=10)
    markdown = sim._repr_markdown_()
    assert "| `P(W > 0.5)` |" in markdown and "| `P(W > 1)` |" in markdown
    assert str(sim).startswith("WaitingTimeEstimate(lam=0.5, EW=")


def test_every_result_says_how_it_was_obtained():
    for cls in TYPES:
        fields = {f.name for f in dataclasses.fields(cls)}
        assert {"method", "exactness"} <= fields, cls.__name__
    assert certify(([6], [6, 11, 6, 1])).exactness is Exactness.CERTIFIED


def test_fit_exactness_follows_the_data():
    # exact fractions are fitted in rational arithmetic, floats in mpmath
    _, exact = fit([1, "3/2", 3], order_max=2)
    _, floating = fit([1.0, 1.5, 3.0], order_max=2)
    assert exact.exactness is Exactness.EXACT and floating.exactness is Exactness.NUMERIC
    assert {c.exactness for c in exact.candidates} == {Exactness.EXACT}
    assert {c.exactness for c in floating.candidates} == {Exactness.NUMERIC}
    assert exact.best is not None and exact.best.method.startswith("classical Padé")


def test_me_fit_returns_its_typed_result():
    # Erlang(2) with rate 2: moments 1, 3/2, 3, transform 4/(s^2 + 4 s + 4), double pole -2
    result = solve_me_fit((sp.Integer(1), sp.Rational(3, 2), sp.Integer(3)))
    assert isinstance(result, MEFit) and result.exactness is Exactness.EXACT
    assert result.numerator_exact == ("4",) and result.denominator_exact == ("4", "4", "1")
    assert result.poles == ({"re": -2.0, "im": 0.0, "multiplicity": 2},)
    assert result.certificate == "NONNEGATIVE"
    assert "witness" not in result.outputs() and "reason" not in result.outputs()
    assert result.fitted_moments == (1.0, 1.5, 3.0)


def test_mg1_sim_returns_its_typed_result():
    result = solve_mg1_sim(0.5, "det", n_jobs=100_000, rng=3)
    assert isinstance(result, MG1Simulation) and result.exactness is Exactness.SIMULATED
    assert result.EW_exact == pytest.approx(0.5)      # M/D/1: rho/(2(1 - rho)) E[X]
    assert result.ET_exact == pytest.approx(1.5) and result.rho == 0.5
    assert result.ET.mean - result.EW.mean == pytest.approx(1.0)
    assert set(result.outputs()) == {"EW", "ET", "EW_exact", "ET_exact", "rho"}
