"""Join-idle-queue: decisions, and simulation against M/M/1, a CTMC solved here, LWL and RND."""

import numpy as np
import pytest

from symq.dispatch.policies import POLICY_NAMES, get_policy
from symq.dispatch.policies.exact import exact_lwl, exact_rnd
from symq.dispatch.policies.jsq import exact_jsq
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.laws import Exponential

X = Exponential(1.0)
LEVEL = 0.999


def jiq_route(a, b):
    """JIQ-random with two identical servers: an idle one (uniform on ties), else uniform."""
    if a == 0 and b == 0:
        return 0.5, 0.5
    if a == 0:
        return 1.0, 0.0
    if b == 0:
        return 0.0, 1.0
    return 0.5, 0.5


def test_names():
    assert "jiq" in POLICY_NAMES and "jiq-jsq" in POLICY_NAMES
    assert get_policy("JIQ").bind(2, 0.5, X).tracks_counts is False
    assert get_policy("jiq-jsq").bind(2, 0.5, X).tracks_counts is True


def test_jiq_decisions():
    k = 30_000
    pol = get_policy("jiq").bind(4, 0.5, X)
    # servers 1 and 3 idle: uniform between them
    picks = pol.decide(np.tile([2.0, 0.0, 5.0, 0.0], (k, 1)), np.ones(k), rng=1)
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == 0 and counts[2] == 0
    assert abs(counts[1] / k - 0.5) < 0.015
    # nobody idle: uniform over all four, whatever the backlogs
    picks = pol.decide(np.tile([9.0, 0.1, 5.0, 3.0], (k, 1)), np.ones(k), rng=2)
    assert np.all(np.abs(np.bincount(picks, minlength=4) / k - 0.25) < 0.015)
    # jiq-jsq: an idle server if any, else fewest jobs
    both = get_policy("jiq-jsq").bind(3, 0.5, X)
    assert both.decide([[1.0, 0.0, 2.0]], [1.0], n=[[1, 0, 1]]).tolist() == [1]
    assert both.decide([[1.0, 0.5, 2.0]], [1.0], n=[[3, 2, 1]]).tolist() == [2]


@pytest.mark.parametrize("policy", ["jiq", "jiq-jsq"])
def test_one_server_is_mm1(policy):
    est = simulate_dispatch(policy, 1, 0.5, X, n_jobs=1_000_000, rng=1, level=LEVEL)
    assert est.ET.contains(1 / (1 - 0.5)), est.ET
    assert est.ET.relative_half_width < 0.05


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_jiq_two_servers_against_its_ctmc(rho, two_server_ctmc):
    lam = 2 * rho
    et, boundary = two_server_ctmc(lam, (1.0, 1.0), jiq_route, 80)
    assert boundary < 1e-9
    # the CTMC's value lies strictly between LWL (M/M/2) and RND (two M/M/1), as JIQ should
    assert exact_lwl(2, rho, X) < et < exact_rnd(2, rho, X)
    n = 1_500_000 if rho < 0.7 else 3_000_000
    est = simulate_dispatch("jiq", 2, rho, X, n_jobs=n, rng=3, level=LEVEL)
    assert est.ET.contains(et), (est.ET, et)
    assert est.ET.relative_half_width < 0.05


def test_jiq_jsq_is_jsq_in_law():
    """An idle server is one with the fewest (zero) jobs, so JIQ-JSQ is JSQ: the exact JSQ
    value (its CTMC, symq.dispatch.policies.jsq) must lie in the simulated interval."""
    est = simulate_dispatch("jiq-jsq", 2, 0.8, X, n_jobs=2_000_000, rng=4, level=LEVEL)
    assert est.ET.contains(exact_jsq(2, 0.8, X)), est.ET


def test_low_load_jiq_is_close_to_lwl():
    """At rho = 0.05 a job almost always finds an idle server (LWL would send it there too):
    JIQ's E[T] is LWL's (Erlang C, 1.0000...) up to far less than RND's extra 0.05."""
    rho, m = 0.05, 3
    lwl, rnd = exact_lwl(m, rho, X), exact_rnd(m, rho, X)
    assert rnd - lwl > 0.04
    est = simulate_dispatch("jiq", m, rho, X, n_jobs=1_000_000, rng=5, level=LEVEL)
    assert est.ET.low <= lwl + 2e-3 and est.ET.high >= lwl, (est.ET, lwl)
    assert est.ET.high < rnd


def test_many_servers_jiq_beats_rnd():
    rho, m = 0.8, 20
    est = simulate_dispatch("jiq", m, rho, X, n_jobs=1_000_000, rng=6, level=LEVEL)
    assert est.ET.high < 0.5 * exact_rnd(m, rho, X)      # RND: 1/(1 - rho) = 5
    assert est.ET.low > exact_lwl(m, rho, X) - 0.05      # not better than the central queue
