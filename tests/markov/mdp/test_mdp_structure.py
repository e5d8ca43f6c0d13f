"""Structure of optimal policies: thresholds (with ties), switching curves, priority rules.

The synthetic tables check the readers against structures written by hand; the solved models
check the classic results (Cox & Smith's c-mu rule, Winston's JSQ, Hajek's monotone switching
curve, Lippman's service-rate threshold) with their parameters on both sides of the switch.
"""

from __future__ import annotations

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.markov.mdp import solve_mdp
from symq.markov.mdp.library import cmu, routing, service_rate
from symq.markov.mdp.structure import find_priority, find_switching_curve, find_threshold

STATES = np.arange(8)[:, None]


def _table(rows: list[str]) -> np.ndarray:
    """'a', 'b' or 'ab' (tied) per state -> the optimal table over actions (a, b)."""
    return np.array([["a" in r, "b" in r] for r in rows])


def test_a_threshold_is_found_and_ties_widen_it_to_an_interval():
    sharp = _table(["a", "a", "a", "b", "b", "b", "b", "b"])
    found = find_threshold(STATES, ["n"], ["a", "b"], sharp, "a", "n")
    assert found.holds and found.at() == (3, 3)
    tied = _table(["a", "a", "ab", "ab", "b", "b", "b", "b"])
    found = find_threshold(STATES, ["n"], ["a", "b"], tied, "a", "n")
    assert found.holds and found.at() == (2, 4)      # a below 2, 3 or 4: all optimal


def test_a_broken_threshold_names_the_two_states():
    broken = _table(["a", "b", "a", "b", "b", "b", "b", "b"])
    found = find_threshold(STATES, ["n"], ["a", "b"], broken, "a", "n")
    assert not found.holds
    assert "n=1" in found.witness and "n=2" in found.witness


def test_a_switching_curve_must_be_monotone():
    states = np.array([(x, y) for x in range(4) for y in range(3)])
    # a below x = y + 1: a nondecreasing curve 1, 2, 3
    good = np.array([[x < y + 1, x >= y + 1] for x, y in states])
    curve = find_switching_curve(states, ["x", "y"], ["a", "b"], good, "a", "x", "y")
    assert curve.holds and curve.direction == "nondecreasing"
    assert curve.curve == ((0, 1), (1, 2), (2, 3))
    # thresholds 2, 0, 2: neither nondecreasing nor nonincreasing
    bad_t = {0: 2, 1: 0, 2: 2}
    bad = np.array([[x < bad_t[y], x >= bad_t[y]] for x, y in states])
    curve = find_switching_curve(states, ["x", "y"], ["a", "b"], bad, "a", "x", "y")
    assert not curve.holds and "cannot be" in curve.witness


def test_a_priority_order_is_found_or_refuted():
    states = np.array([(x, y) for x in range(3) for y in range(3)])
    allowed = np.array([[x > 0, y > 0] for x, y in states])
    first_a = np.array([[x > 0, x == 0 and y > 0] for x, y in states])
    rule = find_priority(states, ["x", "y"], ["a", "b"], allowed, first_a)
    assert rule.holds and rule.order == ("a", "b")
    mixed = np.array([[x > 0 and y != 1, (x == 0 or y == 1) and y > 0] for x, y in states])
    rule = find_priority(states, ["x", "y"], ["a", "b"], allowed, mixed)
    assert not rule.holds and "not optimal" in rule.witness


@pytest.mark.parametrize("c1,order", [(2.0, ("serve1", "serve2")), (1.0, ("serve2", "serve1"))])
def test_the_c_mu_rule(c1, order):
    # c1 mu1 = 2 > c2 mu2 = 1.5 serves class 1 first; c1 mu1 = 1 < 1.5 serves class 2 first
    s = solve_mdp(cmu(), {"lam1": 0.3, "lam2": 0.3, "mu1": 1.0, "mu2": 1.5, "c1": c1,
                          "c2": 1.0}, truncation={"n1": 12, "n2": 12})
    assert s.policy.priority(("serve1", "serve2")).order == order
    assert s["mismatch_cmu"] == 0 and s["mismatch_reverse"] > 0


def test_jsq_for_identical_servers_and_a_monotone_curve_for_unequal_ones():
    same = solve_mdp(routing(), {"lam": 1.2, "mu1": 1.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0},
                     truncation={"n1": 16, "n2": 16})
    assert same["mismatch_jsq"] == 0
    unequal = solve_mdp(routing(), {"lam": 1.2, "mu1": 2.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0},
                        truncation={"n1": 16, "n2": 16})
    assert unequal["mismatch_jsq"] > 0
    assert "first at" in str(unequal["mismatch_jsq"])
    curve = unequal.policy.switching_curve("to1", "n1", "n2")
    assert curve.holds and curve.direction == "nondecreasing"
    # the faster server takes the arrival at equal queues (its expected delay is smaller)
    assert unequal.policy.action(n1=3, n2=3) == "to1"


def test_service_rate_control_has_a_threshold_that_falls_with_the_holding_cost():
    base = {"lam": 1.0, "mu1": 1.2, "mu2": 2.5, "c1": 0.0, "c2": 3.0}
    thresholds = [solve_mdp(service_rate(), {**base, "h": h})["threshold"] for h in (0.2, 1.0, 5.0)]
    assert thresholds[0] >= thresholds[1] >= thresholds[2] >= 1
    assert thresholds[0] > thresholds[2]


def test_policy_table_and_plot_data():
    s = solve_mdp(cmu(), {"lam1": 0.3, "lam2": 0.3, "mu1": 1.0, "mu2": 1.5, "c1": 2.0,
                          "c2": 1.0}, truncation={"n1": 8, "n2": 8})
    data = s.policy.policy_data("n1", "n2")
    assert data["action"].shape == (data["y"].size, data["x"].size)
    assert s.policy.actions[data["action"][0, 0]] == "idle"
    assert s.policy.optimal_actions(n1=0, n2=0) == ("idle",)
    rows = s.policy.table()
    assert rows[0]["action"] == "idle" and len(rows) == s.n_states
    with pytest.raises(InvalidParameter, match="reachable state"):
        s.policy.action(n1=100, n2=0)


def test_plot_policy_draws_on_given_axes():
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is the optional plot extra")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = solve_mdp(routing(), {"lam": 1.2, "mu1": 2.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0},
                  truncation={"n1": 8, "n2": 8})
    fig, ax = plt.subplots()
    assert s.policy.plot_policy("n1", "n2", ax=ax) is ax
    plt.close(fig)


def test_a_threshold_beyond_every_truncation_is_undecided_not_a_number():
    # discounted at alpha = 0.5, a customer's discounted holding cost is below C/alpha = 2 < R:
    # admitting is optimal at every n, so no finite threshold exists; after three extra
    # doublings the threshold is reported as lying beyond, with an infinite error bar
    import math

    from symq.core.approximate import Approximate
    from symq.markov.mdp.library import naor

    s = solve_mdp(naor(), {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0}, discount=0.5)
    assert isinstance(s["threshold"], Approximate) and math.isinf(s["threshold"].error)
    assert s.truncation == {"n": 512}
    assert s.policy.threshold("admit").slices[0][1] > 128


def test_the_curve_output_reads_a_switching_curve():
    # identical servers: join the shortest queue (Winston 1977), ties at n1 = n2, so to1 is
    # optimal exactly below a threshold in [n2, n2 + 1]: the least monotone choice is n2
    same = solve_mdp(routing({"curve": "curve:to1:n1:n2"}),
                     {"lam": 1.2, "mu1": 1.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0},
                     truncation={"n1": 16, "n2": 16})
    assert same["curve"] == 1
    assert "0 at n2=0, 1 at n2=1, 2 at n2=2" in str(same["curve"])
    for bad in ("curve:to1:n1", "curve:to3:n1:n2", "curve:to1:n1:n1"):
        with pytest.raises(InvalidParameter, match="outputs.curve"):
            routing({"curve": bad})


def test_the_curve_output_is_zero_where_no_monotone_curve_fits():
    from symq.markov import Jump, StateVariable
    from symq.markov.mdp import Action, MarkovDecisionProcess

    # a made-up cost: routing to queue 1 is cheap exactly where n1 + n2 is odd, so the
    # optimal action alternates along n1 and no threshold exists in any slice
    mdp = MarkovDecisionProcess(
        [StateVariable("n1", 0, 4), StateVariable("n2", 0, 4)],
        actions=[Action("to1", [Jump("lam", {"n1": "n1 + 1"}, guard="n1 < 4")],
                        cost="5 + 5*cos(3.141592653589793*(n1 + n2))"),
                 Action("to2", [Jump("lam", {"n2": "n2 + 1"}, guard="n2 < 4")], cost="5")],
        jumps=[Jump("mu", {"n1": "n1 - 1"}, guard="n1 > 0"),
               Jump("mu", {"n2": "n2 - 1"}, guard="n2 > 0")],
        parameters=("lam", "mu"), outputs={"curve": "curve:to1:n1:n2"})
    r = solve_mdp(mdp, {"lam": 0.1, "mu": 1.0})
    assert r["curve"] == 0 and "no monotone switching curve" in str(r["curve"])
