"""Honest uncertainty of the value-iteration answer, resource guards and user-facing errors.

The stated ``error_estimate`` is checked against independent values: the exact mean response
times of RND (two M/M/1, ``1/(1-rho)``) and LWL (M/M/2, ``1/(1-rho^2)``) evaluated by the same
value iteration, and, for the optimal policy, a finer and wider grid.
"""

from __future__ import annotations

import functools
import json
import math
import time

import numpy as np
import pytest

from symq.cli import main
from symq.core.errors import InvalidParameter, ResourceLimit, TruncationError
from symq.dispatch import evaluate_policy, richardson, solve_dispatch, solve_optimal
from symq.dispatch.policies.exact import exact_sita, sita_e_thresholds, sita_opt_thresholds
from symq.dispatch.policies.jsq import exact_jsq
from symq.dispatch.sizes import named_sizes
from symq.dispatch.vi.planning import plan_optimal
from symq.laws import Exponential, PhaseType

X = Exponential(1.0)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------ stated uncertainty

@pytest.mark.parametrize("policy, exact", [("rnd", lambda r: 1 / (1 - r)),
                                           ("lwl", lambda r: 1 / (1 - r * r))])
@pytest.mark.parametrize("rho", [0.3, 0.6])
def test_error_estimate_covers_the_exact_value(policy, exact, rho) -> None:
    rr = richardson(functools.partial(evaluate_policy, policy), 2, rho, X, delta=0.4, U=16.0
                    if rho < 0.5 else 24.0, tol=1e-10)
    actual = abs(rr.ET - exact(rho))
    assert actual <= rr.error_estimate
    # the Odoni bracket only certifies each discrete MDP: the fine grid's bracket misses the
    # exact value, and is far narrower than the fine grid's discretisation error
    fine = rr.results[-1]
    assert not fine.ET_low <= exact(rho) <= fine.ET_high
    assert fine.ET_high - fine.ET_low < 1e-3 * abs(fine.ET - exact(rho))
    assert rr.bracket_discrete == (rr.ET_low, rr.ET_high)


@functools.cache
def _reference_optimal(rho: float) -> float:
    """The optimal g extrapolated from the grids 0.4, 0.2 at U = 24: RND and LWL on the same
    grids are within 3e-6 of their exact values, a hundredth of the estimates tested."""
    return richardson(solve_optimal, 2, rho, X, delta=0.4, U=24.0).ET


@pytest.mark.parametrize("umax", ["8", "16"])
def test_model_error_estimate_covers_a_finer_grid(capsys, umax) -> None:
    code, out, _ = run(capsys, "solve", "dispatch", "policy=optimal", "m=2", "rho=0.3",
                       "delta=0.4", f"umax={umax}", "--json")
    assert code == 0
    res = json.loads(out)["results"]
    actual = abs(res["ET"] - _reference_optimal(0.3))
    assert actual <= res["error_estimate"]
    if umax == "8":
        # at umax = 8 the truncation is stated: it covers the change of the coarse grid's g
        # (with the tail fitted at umax = 8) against the same step at U = 24
        coarse = [g for g in res["grids"] if g["role"] == "coarse, fitted tail"][-1]
        far = solve_optimal(2, 0.3, X, delta=0.4, U=24.0, tol=1e-11).ET
        assert 0 < abs(coarse["g"] - far) <= res["error_parts"]["truncation"]


def test_brackets_are_not_the_uncertainty() -> None:
    v = solve_dispatch("optimal", 2, 0.4, delta=0.2, umax=16.0)
    coarse = [g for g in v.grids if g["role"] == "coarse, fitted tail"][0]
    fine = v.grids[-1]
    assert fine["role"] == "refinement"
    # the two discrete brackets do not overlap: they are not the uncertainty of ET ...
    assert coarse["g_bracket_discrete"][0] > fine["g_bracket_discrete"][1]
    # ... the error estimate is: it covers the distance to an independent reference (other
    # grids, larger truncation), while the fine grid itself is farther away
    reference = _reference_optimal(0.4)
    assert abs(v.ET - reference) <= v.error_estimate < abs(fine["g"] - reference)
    assert v.error_estimate < 1e-3 * v.ET


# ------------------------------------------------------------------------ resource guards

def test_tiny_delta_is_refused_before_allocating(capsys) -> None:
    code, _, err = run(capsys, "solve", "dispatch", "policy=optimal", "m=2", "rho=0.4",
                       "delta=1e-6")
    assert code == 2
    assert "delta=1e-6 must be >=" in err and "umax=16" in err and "U=" not in err
    assert len(err.strip().splitlines()) == 1


def test_huge_umax_is_refused(capsys) -> None:
    code, _, err = run(capsys, "solve", "dispatch", "policy=optimal", "m=2", "rho=0.4",
                       "umax=1e308")
    assert code == 2 and "umax=1e308 must be <=" in err and "Traceback" not in err


def test_suggested_delta_fits(monkeypatch) -> None:
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(20e6))
    with pytest.raises(ResourceLimit, match=r"delta=0\.05 must be >= ") as info:
        plan_optimal(2, 0.4, X, 0.05, 24.0, names={"U": "umax"})
    best = float(str(info.value).split(">= ")[1].split()[0])
    n = math.floor(24.0 / best)           # a step >= the suggestion that divides umax
    plan_optimal(2, 0.4, X, 24.0 / n, 24.0)
    with pytest.raises(ResourceLimit, match=r"umax=200\.0 must be <= "):
        plan_optimal(2, 0.4, X, 0.1, 200.0, names={"U": "umax"}, blame="U")


def test_runs_of_hours_are_refused() -> None:
    with pytest.raises(ResourceLimit, match=r"delta=0\.1 .*refused beyond 1 s"):
        plan_optimal(2, 0.4, X, 0.1, 24.0, time_limit=1.0)
    # delta and umax were not given: the message names rho, and the grid as defaults
    with pytest.raises(ResourceLimit, match=r"rho=0\.99 must be lower.*h of value iter.*"
                                            r"defaults delta=0\.4 and umax="):
        solve_dispatch("optimal", 2, 0.99)


def test_exact_jsq_guards() -> None:
    with pytest.raises(TruncationError, match=r"rho=0\.999999 is too close to 1"):
        exact_jsq(2, 0.999999, X)
    with pytest.raises(InvalidParameter, match=r"parameter m=7 must be <= "):
        exact_jsq(7, 0.5, X)


# ------------------------------------------------------------------------ names as typed

@pytest.mark.parametrize("args, match", [
    (("policy=optimal", "m=7", "rho=0.4"), r"parameter m=7 must be 1\.\.6"),
    (("policy=optimal", "m=2", "rho=0.4", "umax=5.33"), r"parameter umax=5\.33 .*multiple"),
    (("policy=optimal", "m=2", "rho=0.4", "umax=4"), r"parameter umax=4 must be >= 5"),
    (("policy=sita", "m=2", "rho=0.4"), r"parameter h=<missing>"),
    (("policy=sita", "m=3", "rho=0.4", "h=1"), r"parameter h=1 must be given only with m=2"),
    (("policy=lwl", "m=2", "rho=0.4", "sizes=exp", "scv=4"),
     r"scv= applies only with a size law of free SCV"),
    (("policy=lwl", "m=2", "rho=0.4", "sizes=det", "scv=4"), r"scv= applies only with a size"),
    (("policy=lwl", "m=2", "rho=0.4", "sizes=lognormal"), r"parameter scv="),
    (("policy=lwl", "m=2", "rho=0.4", "sizes=erlang", "scv=0.3"), r"parameter scv=0\.3"),
    (("policy=rnd", "m=2", "rho=0.4", "h=2"), r"h= applies only with policy=sita"),
    (("policy=lwl", "m=2", "rho=0.4", "delta=0.1"), r"delta= applies only with policy=optimal"),
    (("policy=rr", "m=2", "rho=0.4", "umax=10"), r"umax= applies only with policy=optimal"),
    (("policy=jsq", "m=1000000", "rho=0.4"), r"parameter m=1000000 must be <="),
    (("policy=sita-opt", "m=1000000", "rho=0.4"), r"parameter m=1000000 must be <="),
    (("policy=fpi-sita", "m=2", "rho=0.999999"), r"parameter rho=0\.999999 must be <="),
    (("policy=rnd", "m=2", "rho=0.4", "sizes=h2", "scv=1e300"), r"parameter scv=1e300 "),
    (("policy=rnd", "m=2", "rho=0.4", "sizes=h2", "scv=1e-300"), r"parameter scv=1e-300"),
    (("policy=lwl", "m=2", "rho=0.4", "sizes=h2", "scv=1e6"), r"parameter scv=1e6 "),
])
def test_errors_name_the_parameter_as_typed(capsys, args, match) -> None:
    code, _, err = run(capsys, "solve", "dispatch", *args)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("symq: error: ")
    import re
    assert re.search(match, err), err
    assert "U=" not in err and "thresholds=" not in err


def test_library_errors_use_user_names() -> None:
    with pytest.raises(InvalidParameter, match=r"umax=5\.33 must be an integer multiple"):
        solve_dispatch("optimal", 2, 0.4, umax=5.33)


# ------------------------------------------------------------------------ extreme inputs

@pytest.mark.parametrize("policy", ["rnd", "rr", "lwl", "fpi-rnd", "sita-e", "sita-opt"])
def test_load_near_one_gives_finite_means(policy) -> None:
    rho = 0.999999
    et = solve_dispatch(policy, 2, rho).ET
    assert math.isfinite(et) and et > 0
    if policy == "rnd":
        assert et == pytest.approx(1 / (1 - rho), rel=1e-9)
    if policy == "lwl":
        assert et == pytest.approx(1 / (1 - rho * rho), rel=1e-9)


def test_sita_opt_near_one_beats_sita_e() -> None:
    rho = 0.999999
    h_opt, h_e = sita_opt_thresholds(2, rho, X), sita_e_thresholds(2, rho, X)
    assert exact_sita(2, rho, X, h_opt) <= exact_sita(2, rho, X, h_e)


@pytest.mark.parametrize("policy", ["rnd", "lwl", "rr"])
def test_many_servers(policy) -> None:
    et = solve_dispatch(policy, 1_000_000, 0.4).ET
    assert math.isfinite(et) and et >= 1.0
    if policy == "lwl":                  # M/M/m with a million servers: no waiting
        assert et == pytest.approx(1.0, abs=1e-12)


def test_h2_law_is_stable_for_extreme_scv() -> None:
    scv = 4.0
    p = 0.5 * (1 + math.sqrt((scv - 1) / (scv + 1)))
    ref = PhaseType([p, 1 - p], [[-2 * p, 0.0], [0.0, -2 * (1 - p)]])
    law = named_sizes("h2", scv)
    x = np.array([0.05, 0.7, 3.0, 12.0])
    for verb in ("cdf", "ccdf"):
        assert np.allclose(getattr(law, verb)(x), getattr(ref, verb)(x), rtol=1e-12, atol=1e-15)
    for k in (1, 2):
        assert np.allclose(law.partial_moment(k, x), ref.partial_moment(k, x), rtol=1e-12,
                           atol=1e-15)
    big = named_sizes("h2", 1e12)
    assert big.mean() == pytest.approx(1.0, rel=1e-12)
    assert big.moment(2) == pytest.approx(1 + 1e12, rel=1e-9)
    # E[X; X <= x] for tiny x: x^2/2 of each phase's rate r, no cancellation
    small = float(big.partial_moment(1, np.array([1e-9]))[0])
    assert small == pytest.approx(sum(pi * ri * 1e-18 / 2 for pi, ri in
                                      zip((1 - 1 / (2e12), 1 / (2e12)), (2.0, 1e-12))), rel=1e-6)
    et = solve_dispatch("rnd", 2, 0.4, sizes="h2", scv=1e12).ET
    assert et == pytest.approx(1 + 0.4 * (1 + 1e12) / (2 * 0.6), rel=1e-9)


# ------------------------------------------------------------------------ library validation

@pytest.mark.parametrize("call, match", [
    (lambda: Exponential(-1.0), r"parameter mean=-1\.0 must be a positive real number"),
    (lambda: Exponential(True), r"parameter mean=True must be a positive real number"),
    (lambda: named_sizes("h2", 0.5), r"parameter scv=0\.5 must be a real number in "
                                     r"\(1, 1e\+12\] for h2 sizes"),
    (lambda: named_sizes("h2", 2e12), r"parameter scv=2000000000000\.0 must be a real number in "
                                    r"\(1, 1e\+12\] for h2 sizes"),
    (lambda: exact_sita(0, 0.5, X, []),
     r"parameter m=0 must be an integer >= 1 \(number of servers\)"),
    (lambda: exact_sita(2, float("nan"), X, [1.0]),
     r"parameter rho=nan must be a real number in \(0, 1\)"),
    (lambda: solve_optimal(2, 0.4, X, delta=float("inf")),
     r"parameter delta=inf must be a finite real number > 0"),
    (lambda: solve_optimal(2, 0.4, X, delta=0.4, U=16.0, tol=0.0),
     r"parameter tol=0\.0 must be a real number > 0"),
    (lambda: solve_optimal(2, 0.4, X, delta=0.4, U=16.0, max_iter=0),
     r"parameter max_iter=0 must be an integer >= 1"),
    (lambda: richardson(solve_optimal, 2, 0.4, X, levels=1),
     r"parameter levels=1 must be an integer >= 2"),
])
def test_library_validation_names_the_parameter(call, match) -> None:
    with pytest.raises(InvalidParameter, match=match):
        call()


@pytest.mark.parametrize("kwargs, match", [
    ({"n_batches": 1}, r"parameter n_batches=1 must be an integer >= 2"),
    ({"warmup": 1.0}, r"parameter warmup=1\.0 must be a real number in \[0, 1\)"),
    ({"level": 1.5}, r"parameter level=1\.5 must be a real number in \(0, 1\)"),
    # the one batch-means rule of symq.core.simrun: 100 post-warm-up jobs per batch, i.e. the
    # smallest n with n - floor(0.1 n) >= 30 * 100
    ({"n_jobs": 10}, rf"parameter n_jobs=10 must be an integer >= "
                     rf"{next(n for n in range(3000, 4000) if n - math.floor(0.1 * n) >= 3000)} "
                     r"\(100 post-warm-up jobs per batch for n_batches=30 and warmup=0\.1\)"),
])
def test_simulation_validation_names_the_parameter(kwargs, match) -> None:
    from symq.dispatch import simulate_dispatch

    with pytest.raises(InvalidParameter, match=match):
        simulate_dispatch("lwl", 2, 0.5, X, **kwargs)


def test_time_limit_from_the_environment(monkeypatch) -> None:
    plan_optimal(2, 0.4, X, 0.1, 24.0)                  # fits the default hour
    monkeypatch.setenv("SYMQ_VI_TIME_LIMIT", "0.001")
    with pytest.raises(ResourceLimit, match=r"refused beyond 0\.001 s"):
        plan_optimal(2, 0.4, X, 0.1, 24.0)
    monkeypatch.setenv("SYMQ_VI_TIME_LIMIT", "soon")
    with pytest.raises(InvalidParameter, match=r"SYMQ_VI_TIME_LIMIT='soon' must be a positive"):
        plan_optimal(2, 0.4, X, 0.1, 24.0)


def test_slow_mixing_value_iteration_stops_at_its_deadline(monkeypatch):
    """A server 1000 times slower mixes so slowly that value iteration would run for hours (the
    long fuzz run found it past 60 s); it stops at twice SYMQ_VI_TIME_LIMIT with its residual."""
    from symq.core import registry
    from symq.core.errors import NotConverged

    monkeypatch.setenv("SYMQ_VI_TIME_LIMIT", "3")  # the estimate (2.6 s) passes
    model = registry.get_model("dispatch")
    start = time.perf_counter()
    with pytest.raises(NotConverged, match=r"twice the value-iteration time limit.*residual"):
        model.run(model.parse({"policy": "optimal", "m": "2", "rho": "0.4",
                               "speeds": "1,0.001"}))
    assert time.perf_counter() - start < 30


@pytest.mark.parametrize("m, U, block, cap", [(3, 24.0, None, None), (5, 6.0, None, None),
                                              (4, 12.0, 1 << 14, None),
                                              (5, 6.0, 1 << 14, None), (3, 48.0, None, 12.0),
                                              (4, 24.0, 1 << 14, 6.0)])
def test_memory_estimate_covers_the_measured_peak(monkeypatch, m, U, block, cap) -> None:
    """grid_bytes against tracemalloc's peak of a warm-started solve (numpy's arrays are
    traced).  On the simplex the interpolation of the coarse value runs compiled, block by
    block, below the iteration's arrays (through VIResult.value over whole arrays it needed
    304 bytes per state at m = 5, above the 286 the estimate then counted).  A capped grid
    stores the states within its cap only, and the estimate counts those."""
    import tracemalloc

    from symq.dispatch.vi import planning
    from symq.dispatch.vi.grid import DispatchGrid

    if block is not None:
        monkeypatch.setattr(planning, "INTERPOLATION_BLOCK", block)
    X = Exponential(1.0)
    coarse = solve_optimal(m, 0.4, X, delta=0.5, U=U, tol=1e-3, U2=cap)
    grid = DispatchGrid.build(m, 0.4, X, 0.25, U, U2=cap)
    tracemalloc.start()
    try:
        solve_optimal(m, 0.4, X, delta=0.25, U=U, tol=1e-3, warm_start=coarse,
                      coarse_correction=False, U2=cap)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = planning.grid_bytes(m, grid.N, grid.K, N2=None if cap is None else grid.N2)
    assert peak <= estimate < 2.5 * peak
    assert peak < 130 * grid.n_states        # v, its start, Tv, h, Anderson: 15 values
