"""The registered ``dispatch`` model and its command line."""

from __future__ import annotations

import json

import pytest

from symq.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exact_policies_from_the_cli(capsys) -> None:
    code, out, _ = run(capsys, "solve", "dispatch", "policy=lwl", "m=2", "rho=0.4", "--json")
    assert code == 0
    doc = json.loads(out)
    results = doc["results"]
    assert doc["method"] == "exact" and "method" not in results
    assert results["ET"] == pytest.approx(1 / (1 - 0.4 ** 2), rel=1e-12)   # M/M/2
    code, out, _ = run(capsys, "solve", "dispatch", "policy=rnd", "m=3", "rho=0.5",
                       "sizes=uniform", "--json")
    # P-K with uniform(0, 2) sizes: E[T] = 1 + (lam/m) E[X^2]/(2(1 - rho)), lam/m = rho
    assert json.loads(out)["results"]["ET"] == pytest.approx(1 + 0.5 * (4 / 3) / 1.0, rel=1e-9)


def test_optimal_policy_by_value_iteration(capsys) -> None:
    code, out, _ = run(capsys, "solve", "dispatch", "policy=optimal", "m=2", "rho=0.3",
                       "delta=0.2", "umax=16", "--json")
    assert code == 0
    doc = json.loads(out)
    results = doc["results"]
    assert doc["method"] == "value-iteration"
    assert "g_bounds" not in results                 # the old, misleading name
    for grid in results["grids"]:                    # brackets of each DISCRETE grid
        low, high = grid["g_bracket_discrete"]
        assert low <= grid["g"] <= high
    parts = results["error_parts"]
    assert results["error_estimate"] == pytest.approx(sum(parts.values()), rel=1e-12)
    assert "discretised MDP only" in results["error_note"]
    # no heuristic can do better than the optimum: LWL (M/M/2) is an upper bound
    assert results["ET"] + results["error_estimate"] < 1 / (1 - 0.3 ** 2)


def test_policy_without_closed_form_is_simulated(capsys) -> None:
    code, out, _ = run(capsys, "solve", "dispatch", "policy=lwl", "m=2", "rho=0.5", "sizes=h2",
                       "scv=4", "--json")
    assert code == 0
    doc = json.loads(out)
    results = doc["results"]
    assert doc["method"] == "simulation" and results["ET_half_width"] > 0
    # LWL is M/G/2 with a central queue: between M/M/2 scaled by (1+C^2)/2 bounds loosely and RND
    rnd = 1 + 0.5 * 5.0 / (2 * 0.5)
    assert 1.0 < results["ET"]["mean"] < rnd


@pytest.mark.parametrize("args, needle", [
    (("policy=lwl", "m=2", "rho=1.0"), "rho"),
    (("policy=lwl", "m=0", "rho=0.4"), "parameter m"),
    (("policy=best", "m=2", "rho=0.4"), "one of rnd"),
    (("policy=sita", "m=2", "rho=0.4"), "threshold"),
])
def test_bad_input(capsys, args, needle) -> None:
    code, _, err = run(capsys, "solve", "dispatch", *args)
    assert code == 2 and needle in err


def test_speeds_from_the_cli(capsys) -> None:
    code, out, _ = run(capsys, "solve", "dispatch", "policy=optimal", "m=2", "rho=0.5",
                       "speeds=2,1", "--json")
    assert code == 0
    doc = json.loads(out)
    opt = doc["results"]
    assert doc["params"]["speeds"] == [2.0, 1.0] and doc["method"] == "value-iteration"
    code, out, _ = run(capsys, "solve", "dispatch", "policy=rnd", "m=2", "rho=0.5",
                       "speeds=2,1", "--json")
    rnd_doc = json.loads(out)
    rnd = rnd_doc["results"]
    # the split in proportion to speeds: M/M/1 queues with rates (1, 2) and (0.5, 1)
    exact = (2 / 3) * 1 / (2 - 1) + (1 / 3) * 1 / (1 - 0.5)
    assert rnd_doc["method"] == "simulation"
    assert abs(rnd["ET"]["mean"] - exact) < rnd["ET_half_width"] * 1.5
    assert opt["ET"] + opt["error_estimate"] < rnd["ET"]["mean"] - rnd["ET_half_width"]
    # unit speeds are the identical servers: the exact M/M/2 formula
    code, out, _ = run(capsys, "solve", "dispatch", "policy=lwl", "m=2", "rho=0.4",
                       "speeds=1,1", "--json")
    assert json.loads(out)["results"]["ET"] == pytest.approx(1 / (1 - 0.4 ** 2), rel=1e-12)


@pytest.mark.parametrize("args, needle", [
    (("policy=optimal", "m=4", "rho=0.4", "speeds=2,1,1,1"), "m=4 must be 1..3 for policy"),
    (("policy=optimal", "m=3", "rho=0.4", "speeds=2,1"), "speeds=2,1 must be m "),
    (("policy=lwl", "m=2", "rho=0.4", "speeds=2,0"), "parameter speeds"),
])
def test_speeds_bad_input(capsys, args, needle) -> None:
    code, _, err = run(capsys, "solve", "dispatch", *args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_waiting_times_and_loads_against_independent_values():
    """M/M/2 under least work left is M/M/2 FCFS: E[W] = rho^2/(1 - rho^2) (Erlang C with
    lam = 2 rho, mu = 1), which the exact route gives.  Join-idle-queue is simulated; its EW
    interval (99%) must hold E[W] = E[N]/lam - 1 of the same system written as a CTMC of the
    two queue lengths (idle server first, else an even split) and solved by symq.markov, and
    each server's load be near rho."""
    from symq.dispatch.model import solve_dispatch
    from symq.markov import Jump, MarkovChain, StateVariable, stationary

    rho = 0.6
    exact = solve_dispatch("lwl", 2, rho)
    assert exact.EW == pytest.approx(rho ** 2 / (1 - rho ** 2), rel=1e-12)
    top = 80
    jiq = MarkovChain(
        [StateVariable("a", 0, top), StateVariable("b", 0, top)],
        [Jump("lam/2", {"a": "a + 1"}, guard="a == 0 and b == 0"),
         Jump("lam/2", {"b": "b + 1"}, guard="a == 0 and b == 0"),
         Jump("lam", {"a": "a + 1"}, guard="a == 0 and b > 0"),
         Jump("lam", {"b": "b + 1"}, guard="b == 0 and a > 0"),
         Jump("lam/2", {"a": "a + 1"}, guard=f"a > 0 and b > 0 and a < {top}"),
         Jump("lam/2", {"b": "b + 1"}, guard=f"a > 0 and b > 0 and b < {top}"),
         Jump("1", {"a": "a - 1"}, guard="a > 0"), Jump("1", {"b": "b - 1"}, guard="b > 0")],
        parameters=("lam",), outputs={"EN": "a + b", "edge": f"a == {top} or b == {top}"})
    law = stationary(jiq, {"lam": 2 * rho})
    assert law["edge"] < 1e-12
    wait = law["EN"] / (2 * rho) - 1.0
    simulated = solve_dispatch("jiq", 2, rho, n_jobs=1_000_000, seed=3)
    assert simulated.method == "simulation" and simulated.EW.contains(wait)
    assert simulated.EW_half_width == pytest.approx(simulated.EW.half_width)
    assert all(abs(load - rho) < 0.02 for load in simulated.loads)
