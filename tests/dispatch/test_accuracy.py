"""The stated error of accuracy-matched value iteration covers independent values.

:func:`symq.dispatch.vi.accuracy.solve_accurate` reports ``ET`` with ``error_estimate = bracket +
extrapolation + truncation``.  Each test compares with a value computed another way: Erlang C
for LWL (M/M/m), 1/(1 - rho) for the equal random split, a CTMC on the job counts for JIQ, and
for the optimal policy a reference on finer grids with a larger truncation.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.dispatch import exact_mean_response, richardson, solve_optimal
from symq.dispatch.vi.accuracy import solve_accurate
from symq.laws import Exponential

EXP = Exponential(1.0)


@pytest.mark.parametrize("m, rho, policy", [(2, 0.4, "lwl"), (2, 0.7, "lwl"), (3, 0.4, "lwl"),
                                            (2, 0.6, "rnd"), (3, 0.5, "rnd")])
def test_error_estimate_covers_exact_values(m, rho, policy):
    est = solve_accurate(m, rho, EXP, policy=policy, rtol=1e-3)
    exact = exact_mean_response(policy, m, rho, EXP).ET
    assert abs(est.ET - exact) <= est.error_estimate
    assert est.meets_rtol and est.error_estimate <= 1e-3 * exact
    assert est.error_estimate == pytest.approx(sum(est.error_parts.values()), rel=1e-12)
    # the discrete brackets of the grids are far narrower than the error: not the uncertainty
    fine = est.fine
    assert fine.ET_high - fine.ET_low < 0.1 * abs(fine.ET - exact)


def test_jiq_error_estimate_covers_the_ctmc(two_server_ctmc):
    rho = 0.4
    lam = 2 * rho

    def jiq(n1, n2):                     # an idle server if any, else the equal split
        if n1 == 0 and n2 == 0:
            return 0.5, 0.5
        if n1 == 0:
            return 1.0, 0.0
        if n2 == 0:
            return 0.0, 1.0
        return 0.5, 0.5

    exact, boundary = two_server_ctmc(lam, (1.0, 1.0), jiq, 60)
    assert boundary < 1e-12
    est = solve_accurate(2, rho, EXP, policy="jiq", rtol=1e-3)
    # JIQ's decision jumps at an empty queue: an O(delta) error, extrapolated as such
    assert abs(est.ET - exact) <= est.error_estimate < 3e-3


@functools.cache
def _reference(rho: float, U: float) -> float:
    return richardson(solve_optimal, 2, rho, EXP, delta=0.1, U=U, tol=1e-10).ET


def test_optimal_error_estimate_covers_a_finer_reference():
    est = solve_accurate(2, 0.4, EXP, rtol=1e-3)
    reference = _reference(0.4, 24.0)      # steps 0.1, 0.05 and U = 24 against 0.2..0.1, U = 16
    assert abs(est.ET - reference) <= est.error_estimate <= 1e-3 * est.ET
    # the close triple (d, 4d/5, 2d/3) met rtol: the step d/2 was not needed
    assert est.deltas == pytest.approx((0.2, 0.2 * 4 / 5, 0.2 * 2 / 3))
    assert [g["role"] for g in est.grids] == ["coarse, for the tail fit",
                                              "coarse, for the tail fit",
                                              "coarse, for the tail fit",
                                              "coarse, fitted tail", "truncation check",
                                              "truncation check", "refinement", "refinement"]


def test_a_given_truncation_is_checked_not_enlarged():
    est = solve_accurate(2, 0.4, EXP, U=8.0)
    assert est.U == 8.0
    reference = _reference(0.4, 24.0)
    assert est.truncation > est.extrapolation            # U = 8 truncates visibly
    assert abs(est.ET - reference) <= est.error_estimate
    assert not est.meets_rtol or est.error_estimate <= 1e-3 * est.ET


def test_bad_input():
    with pytest.raises(InvalidParameter, match="parameter policy='jsq' must be one of"):
        solve_accurate(2, 0.4, EXP, policy="jsq")
    with pytest.raises(InvalidParameter, match=r"parameter rtol=0\.5 must be"):
        solve_accurate(2, 0.4, EXP, rtol=0.5)
    with pytest.raises(InvalidParameter, match=r"parameter U=9\.5 must be a multiple of 2 delta"):
        solve_accurate(2, 0.4, EXP, U=9.5, coarse=0.5)
    with pytest.raises(InvalidParameter, match=r"parameter m=7 must be 1\.\.6"):
        solve_accurate(7, 0.4, EXP)


def _split_by_speeds_exact(speeds, rho):
    """ET of the split in proportion to speeds with Exp(1) sizes: server i is M/M/1 with
    arrival rate lam s_i/sum(s) and service rate s_i (Pollaczek-Khinchine), lam = rho sum(s)."""
    total = sum(speeds)
    lam = rho * total
    return sum(s / total / (s - lam * s / total) for s in speeds)


def test_speeds_error_estimate_covers_the_exact_split():
    speeds = (2.0, 1.0)
    est = solve_accurate(2, 0.4, EXP, policy="rnd", speeds=speeds, rtol=1e-3)
    exact = _split_by_speeds_exact(speeds, 0.4)
    assert abs(est.ET - exact) <= est.error_estimate <= 1e-3 * exact
    assert est.deltas[0] == pytest.approx(0.2)       # time units of the slowest server
    assert est.fine.curvatures is not None and not est.fine.symmetric


def test_speeds_optimal_beats_least_finishing_time_and_the_split():
    speeds = (2.0, 1.0)
    opt = solve_accurate(2, 0.4, EXP, speeds=speeds)
    lwl = solve_accurate(2, 0.4, EXP, policy="lwl", speeds=speeds)
    assert opt.ET + opt.error_estimate < lwl.ET - lwl.error_estimate
    assert lwl.ET < _split_by_speeds_exact(speeds, 0.4)


def test_speeds_bad_input():
    with pytest.raises(InvalidParameter, match=r"parameter m=3 must be 2, the number of speeds"):
        solve_accurate(3, 0.4, EXP, speeds=(2.0, 1.0))
    with pytest.raises(InvalidParameter, match=r"parameter policy='jiq' must be optimal, lwl"):
        solve_accurate(2, 0.4, EXP, policy="jiq", speeds=(2.0, 1.0))
    with pytest.raises(InvalidParameter, match=r"parameter speeds=.* must be 1 to 3 positive"):
        solve_accurate(4, 0.4, EXP, speeds=(2.0, 1.0, 1.0, 1.0))
    with pytest.raises(InvalidParameter, match=r"parameter speeds=\[2.0, -1.0\] must be"):
        solve_accurate(2, 0.4, EXP, speeds=(2.0, -1.0))


def test_an_enlargement_that_does_not_fit_is_not_made(monkeypatch):
    """U = 5 truncates visibly; the enlarged grids exceed the time limit, so the result keeps
    U = 5 and states its (large) truncation error instead of failing after the work."""
    import math

    from symq.dispatch.vi import accuracy
    from symq.dispatch.vi.planning import plan_optimal

    def planned(u: float, step: float) -> float:    # every step counted, as the plan does
        grids = ((0.25, u), (0.25, u + step), (0.25, u + 2 * step), (0.2, u), (1 / 6, u),
                 (0.125, u))
        return sum(plan_optimal(2, 0.4, EXP, d, x, levels=1, time_limit=math.inf)["seconds"]
                   for d, x in grids)

    first, enlarged = planned(5.0, 4.0), planned(9.0, 4.0)
    assert first < enlarged
    reference = _reference(0.4, 24.0)               # before the time limit is lowered
    monkeypatch.setattr(accuracy, "default_truncation", lambda m, rho: 5.0)
    monkeypatch.setenv("SYMQ_VI_TIME_LIMIT", str((first + enlarged) / 2))
    est = solve_accurate(2, 0.4, EXP, coarse=0.25)
    assert est.U == 5.0 and not est.meets_rtol
    assert est.truncation > 1e-3 * est.ET / 3
    assert abs(est.ET - reference) <= est.error_estimate


def test_four_grids_state_the_error_from_the_three_finest():
    # at rho = 0.9 the close triple does not meet rtol = 1e-4: the step d/2 is added and the
    # extrapolation uses (4d/5, 2d/3, d/2); Erlang C is the independent value
    est = solve_accurate(2, 0.9, EXP, policy="lwl", rtol=1e-4)
    exact = exact_mean_response("lwl", 2, 0.9, EXP).ET
    assert est.deltas == pytest.approx((0.32, 0.4 * 2 / 3, 0.2))
    assert [g["role"] for g in est.grids].count("refinement") == 3
    assert abs(est.ET - exact) <= est.error_estimate


def test_extrapolated_start_is_closer_and_changes_nothing_else():
    from symq.dispatch.vi.grid import sorted_states
    from symq.dispatch.vi.multigrid import extrapolated_start

    kw = dict(U=12.0, tol=1e-12)
    a = solve_optimal(3, 0.7, EXP, delta=0.5, **kw)
    b = solve_optimal(3, 0.7, EXP, delta=0.4, warm_start=a, **kw)
    c = solve_optimal(3, 0.7, EXP, delta=1 / 3, warm_start=b, **kw)
    start = extrapolated_start(a, b, 1 / 3, 2)
    points = sorted_states(3, c.N)
    target = c.v
    plain = b.value(points * c.delta)
    moved = start.value(points * c.delta)
    # the value of the step 1/3 itself (solved to 1e-12) is the independent reference
    assert np.max(np.abs(moved - target)) < 0.5 * np.max(np.abs(plain - target))
    again = solve_optimal(3, 0.7, EXP, delta=1 / 3, warm_start=start, **kw)
    assert max(again.ET_low, c.ET_low) <= min(again.ET_high, c.ET_high)
    # a grid of another truncation is not moved
    other = solve_optimal(3, 0.7, EXP, delta=0.5, U=16.0, tol=1e-8)
    assert extrapolated_start(other, b, 1 / 3, 2) is b
