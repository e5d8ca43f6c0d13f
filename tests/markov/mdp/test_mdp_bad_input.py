"""Bad input to a declared MDP: one readable error each, naming what the user wrote."""

from __future__ import annotations

import pytest

from symq.core.errors import InvalidParameter, TruncationError
from symq.markov import Jump, MarkovChain, ReducibleChain, StateVariable
from symq.markov.mdp import Action, MarkovDecisionProcess, evaluate_policy, solve_mdp
from symq.markov.mdp.library import naor

NAOR = {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0}


def _queue(**changes):
    spec = {"variables": [StateVariable("n", 0, 4)],
            "actions": [Action("admit", [Jump("lam", {"n": "n + 1"}, guard="n < 4")]),
                        Action("reject")],
            "jumps": [Jump("1", {"n": "n - 1"}, guard="n > 0")], "cost": "n",
            "parameters": ("lam",)}
    spec.update(changes)
    return MarkovDecisionProcess(**spec)


def test_an_empty_action_set_names_the_state_and_the_guards():
    mdp = _queue(actions=[Action("admit", [Jump("lam", {"n": "n + 1"})], guard="n < 4"),
                          Action("reject", guard="n < 2")])
    with pytest.raises(InvalidParameter, match=r"no action's guard holds at n=4.*admit: n < 4"):
        solve_mdp(mdp, {"lam": 1.0})


def test_a_multichain_policy_lists_its_closed_classes():
    # "stay" keeps every state: under the myopic start (staying is free) each state is closed
    mdp = MarkovDecisionProcess(
        [StateVariable("n", 0, 2)],
        actions=[Action("stay"), Action("move", [Jump("1", {"n": "min(n + 1, 2)"},
                                                      guard="n < 2")], cost="1")],
        cost="0")
    with pytest.raises(ReducibleChain, match=r"closed classes.*\(n=0\).*\(n=1\)"):
        solve_mdp(mdp)
    with pytest.raises(ReducibleChain, match="the given policy"):
        evaluate_policy(mdp, {"stay": "true"})


def test_negative_and_non_finite_rates_and_costs_name_the_jump():
    bad_rate = _queue(actions=[Action("admit", [Jump("lam - 2", {"n": "n + 1"},
                                                     guard="n < 4")]), Action("reject")])
    with pytest.raises(InvalidParameter, match=r"admit\.jumps\[0\]\.rate"):
        solve_mdp(bad_rate, {"lam": 1.0})
    bad_cost = _queue(cost="log(n - 1)")
    with pytest.raises(InvalidParameter, match=r"parameter cost=.*finite cost rate"):
        solve_mdp(bad_cost, {"lam": 1.0})
    bad_lump = _queue(actions=[Action("admit", [Jump("lam", {"n": "n + 1"}, guard="n < 4",
                                                     cost="1/(n - 2)")]), Action("reject")])
    with pytest.raises(InvalidParameter, match=r"admit\.jumps\[0\]\.cost"):
        solve_mdp(bad_lump, {"lam": 1.0})


def test_a_truncation_too_small_for_the_accuracy_names_the_bound():
    with pytest.raises(TruncationError, match=r"truncation\.n"):
        solve_mdp(naor(), {"lam": 1.1, "mu": 1.2, "R": 500.0, "C": 1.0}, max_states=100)


@pytest.mark.parametrize("kwargs,name", [
    ({"method": "newton"}, "method"), ({"discount": -1.0}, "discount"),
    ({"tolerance": 2.0}, "tolerance"), ({"truncation": {"m": 4}}, "truncation.m"),
    ({"truncation": {"n": 0}}, "truncation.n"),
])
def test_solver_options_out_of_their_domain(kwargs, name):
    with pytest.raises(InvalidParameter, match=rf"parameter {name}="):
        solve_mdp(naor(), NAOR, **kwargs)


def test_declaration_errors():
    with pytest.raises(InvalidParameter, match="a name used by one action"):
        _queue(actions=[Action("a"), Action("a")])
    with pytest.raises(InvalidParameter, match="not a variable or a parameter"):
        _queue(actions=[Action("lam")])
    with pytest.raises(InvalidParameter, match=r"outputs\.t"):
        _queue(outputs={"t": "threshold:serve"})
    with pytest.raises(InvalidParameter, match=r"policies\.p\.serve"):
        _queue(policies={"p": {"serve": "true"}})
    with pytest.raises(InvalidParameter, match=r"outputs\.m"):
        _queue(outputs={"m": "mismatch:unknown"})
    with pytest.raises(InvalidParameter, match=r"reward\.jumps\[0\]\.rate"):
        _queue(actions=[Action("reward", [Jump("lam +", {"n": "n + 1"})])])


def test_a_chain_refuses_a_lump_cost():
    with pytest.raises(InvalidParameter, match=r"jumps\[0\]\.cost.*Markov decision process"):
        MarkovChain([StateVariable("n", 0, 1)], [Jump("1", {"n": "1 - n"}, cost="2")])


def test_a_stated_policy_must_pick_an_allowed_action():
    with pytest.raises(InvalidParameter, match="none holds at n=0"):
        evaluate_policy(_queue(), {"admit": "n > 0"}, {"lam": 1.0})
    with pytest.raises(InvalidParameter, match="an action name"):
        evaluate_policy(_queue(), lambda n: "serve", {"lam": 1.0})
