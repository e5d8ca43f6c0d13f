"""The registered simulation model ``window-sim`` and the declared kind ``window-sim``: their
confidence intervals against the exact values of the ``awp`` model and of closed forms."""

from __future__ import annotations

import math

import pytest

from symq.cli import main
from symq.core import registry
from symq.core.errors import InvalidParameter
from symq.core.parameters import Parameter, PositiveReal
from symq.core.simstats import ConfidenceInterval
from symq.window.model import solve_awp

SHORT = 200_000    # loss cycles: a fraction of a second


def sim(**params):
    return registry.get_model("window-sim").run({"n_losses": SHORT, **params}, rng=11)


def test_newreno_simulation_brackets_the_exact_values() -> None:
    p = 0.01
    result = sim(protocol="newreno", p=p)
    exact = solve_awp(protocol="newreno", p=p)
    assert not result["escaped"] and result["n_losses"] == SHORT
    assert isinstance(result["EW"], ConfidenceInterval)
    assert result["EW"].distance(exact.EW) < 4
    assert result["EW2"].distance(2 / p) < 4                # E[W^2] = 2/p (mean drift balance)
    assert result["loss_rate"].distance(exact.loss_rate) < 4
    assert result["EW"].relative_half_width < 0.01


def test_general_protocol_on_the_tabulated_path() -> None:
    # AIMD with a window-proportional increase term: no closed form, the numerical solver
    result = sim(a="1 + 0.05*w", loss="0.001*w", after_loss="0.7*w", rtt=0.5)
    exact = solve_awp(a="1 + 0.05*w", loss="0.001*w", after_loss="0.7*w", rtt=0.5)
    assert "tabulated" in result.method and exact.method.startswith("numeric")
    assert result["EW"].distance(exact.EW) < 4
    assert result["throughput"].mean == pytest.approx(2 * result["EW"].mean, rel=1e-12)


def test_same_seed_same_numbers_and_escape_reported() -> None:
    assert sim(protocol="scalable", p=0.01)["EW"] == sim(protocol="scalable", p=0.01)["EW"]
    # MIMD with too few losses for its floor (0.05 ln(8/7) < 0.01): the window escapes
    escaped = sim(a="0.01*w", loss="0.05", after_loss="0.875*w", w_min=1.0)
    assert escaped["escaped"] and "escaped" in escaped["escape_reason"]
    assert "EW" not in escaped.values


def test_declared_simulation_kind_against_the_declared_solver() -> None:
    table = {"increase": "1", "loss": "p*w", "after_loss": "c*w"}
    c = (Parameter("c", PositiveReal()),)
    simulated = registry.get_model_kind("window-sim").declare("s", table, c, "models.s")
    solved = registry.get_model_kind("window").declare("t", table, c, "models.t")
    assert [q.name for q in simulated.parameters] == ["c", "p", "n_losses", "n_batches"]
    point = {"p": 0.01, "c": 0.7}
    estimate = simulated.run({**point, "n_losses": SHORT}, rng=5)
    assert estimate["EW"].distance(solved.run(point)["EW"]) < 4
    with pytest.raises(InvalidParameter, match=r"parameter models\.s\.method="):
        registry.get_model_kind("window-sim").declare("s", {**table, "method": "numeric"}, c,
                                                      "models.s")
    with pytest.raises(InvalidParameter, match=r"parameter models\.s\.parameters\.n_losses="):
        registry.get_model_kind("window-sim").declare(
            "s", table, (Parameter("n_losses", PositiveReal()),), "models.s")


def test_bad_input_names_the_parameter(capsys) -> None:
    with pytest.raises(InvalidParameter, match=r"parameter n_losses=1000 must be an integer >= "):
        sim(protocol="newreno", p=0.01, n_losses=1000)
    with pytest.raises(InvalidParameter, match=r"parameter S=1"):
        sim(protocol="newreno", p=0.01, S=1)
    code = main(["solve", "window-sim", "protocol=newreno", "p=0.01", "n_batches=1"])
    err = capsys.readouterr().err
    assert code == 2 and "parameter n_batches=1" in err and err.count("\n") == 1


def test_outputs_are_the_result_keys() -> None:
    spec = registry.get_model("window-sim")
    result = sim(protocol="newreno", p=0.01)
    assert set(result.values) == set(spec.outputs) - {"escape_reason"}
    summary = spec.summary_values(result)
    assert summary["EW"] == result["EW"].mean and math.isfinite(summary["EW_half_width"])
