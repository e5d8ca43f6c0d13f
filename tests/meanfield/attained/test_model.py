"""The registered ``attained`` model, its command line, and policy -> simulator plumbing."""

from __future__ import annotations

import json

import pytest

from symq.cli import main
from symq.laws import hyper_erlang, hyperexponential2
from symq.meanfield.attained import simulate_policy, solve_attained
from symq.meanfield.jsq_ph import solve_jsq_ph


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_solve_returns_ew_and_et(capsys) -> None:
    code, out, _ = run(capsys, "solve", "attained", "policy=lew", "d=5", "lam=0.7", "scv=10",
                       "f=0.5", "T=2", "delta=0.5", "rep_max=20", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["params"]["policy"] == "LEW"
    results = data["results"]
    assert results["ET"] - results["EW"] == pytest.approx(1.0, rel=1e-12)  # mean size 1
    assert "ER" not in results  # retired: the glossary names it ET
    assert results["P_wait"] == pytest.approx(0.7 ** 5, rel=1e-9)  # idle servers always win
    alpha, A = hyperexponential2(1.0, 10.0, 0.5)
    direct = solve_attained("LEW", 5, 0.7, (alpha, A), delta=0.5, rep_max=20.0)
    assert results["EW"] == pytest.approx(direct.EW, rel=1e-12)


def test_hyper_erlang_sizes_sq_policy_matches_the_supermarket_solver(capsys) -> None:
    code, out, _ = run(capsys, "solve", "attained", "policy=SQ", "d=2", "lam=0.8", "scv=3",
                       "k=2", "delta=1", "rep_max=10", "--json")
    assert code == 0
    alpha, A = hyper_erlang(2, 1.0, 3.0, 0.5)
    reference = solve_jsq_ph(2, 0.8, (alpha, A)).EW
    assert json.loads(out)["results"]["EW"] == pytest.approx(reference, rel=1e-8)


@pytest.mark.parametrize("args, needle", [
    (("policy=LEW", "d=5", "lam=1.0", "scv=10"), "must be < 1"),
    (("policy=JSQ", "d=5", "lam=0.5", "scv=10"), "one of SQ, SQ-RTB"),
    (("policy=LEW", "d=0", "lam=0.5", "scv=10"), "parameter d"),
    (("policy=LEW", "d=2", "lam=0.5", "scv=0.5"), "parameter scv"),
    (("policy=LEW", "d=2", "lam=0.5", "scv=4", "f=1"), "parameter f"),
    (("policy=LEW", "d=2", "lam=0.5", "scv=4", "delta=0"), "parameter delta"),
    (("policy=SQ-RE", "d=2", "lam=0.5", "scv=4", "T=-1"), "parameter T"),
])
def test_cli_bad_input_is_one_line(capsys, args, needle) -> None:
    code, _, err = run(capsys, "solve", "attained", *args)
    assert code == 2
    assert needle in err and err.count("\n") == 1


def test_cli_sweep_over_lambda(capsys) -> None:
    code, out, _ = run(capsys, "sweep", "attained", "policy=SQ-RTB", "d=2", "lam=0.5:0.7:2",
                       "scv=4", "delta=0.5", "rep_max=10", "--processes", "1", "--json")
    assert code == 0
    points = json.loads(out)["points"]
    assert [p["params"]["lam"] for p in points] == [0.5, 0.7]
    assert points[0]["results"]["EW"] < points[1]["results"]["EW"]


def test_simulated_policy_agrees_with_the_analysis_at_large_n() -> None:
    # N = 2000 servers: the O(1/N) gap is far below the 99.9% half-width of this run
    alpha, A = hyperexponential2(1.0, 4.0, 0.5)
    analysis = solve_attained("LEW", 2, 0.7, (alpha, A), delta=0.5, rep_max=10.0)
    sim = simulate_policy("LEW", 2000, 2, 0.7, (alpha, A), delta=0.5, rep_max=10.0,
                          n_jobs=2_000_000, rng=7, level=0.999)
    assert sim.EW.low <= analysis.EW <= sim.EW.high
