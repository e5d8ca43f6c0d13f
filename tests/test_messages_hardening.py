"""Issue 29, second round: messages name what the user typed; no warnings; tiny loads.

* Values typed as text are read as they read: ``0_5`` is not 5 and ``\u0662`` (Arabic-Indic
  two) is not 2; an empty entry of a vector (``C=4,,2``) is an error, not dropped.
* A refusal names the parameters the user typed, and a default as a default.
* Library code prints no warnings (checked with ``-W error`` or an exactly-one-line stderr).
* A tiny positive load is solved, compared with its rho -> 0 limit computed independently.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.core.parameters import IntegerAtLeast, PositiveReal, PositiveVector, RationalVector


def _cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    """``symq solve ARGS`` in a subprocess with RuntimeWarnings made fatal."""
    env = dict(os.environ, PYTHONWARNINGS="error::RuntimeWarning")
    return subprocess.run([sys.executable, "-m", "symq.cli", "solve", *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


# --------------------------------------------------------------------- number text
@pytest.mark.parametrize("domain, name, text, needle", [
    (PositiveReal(), "scv", "0_5", "underscores"),
    (PositiveReal(), "rho", "1_000", "underscores"),
    (IntegerAtLeast(1), "d", "\u0662", "ASCII digits"),          # Arabic-Indic two
    (IntegerAtLeast(1), "m", "1_0", "underscores"),
    (PositiveReal(), "lam", "0.\u0665", "ASCII digits"),         # 0.<Arabic-Indic five>
    (PositiveVector(), "C", "4,\uff12,1", "ASCII digits"),       # fullwidth two
    (RationalVector(), "moments", "1,3_0", "underscores"),
])
def test_numbers_are_read_as_they_read(domain, name, text, needle):
    # Python's float/int would accept each of these (as 5, 1000, 2, 10, 0.5, 2, 30)
    with pytest.raises(InvalidParameter) as info:
        domain.parse(name, text)
    message = str(info.value)
    assert f"{name}={text!r}" in message and needle in message


@pytest.mark.parametrize("domain, text, index", [
    (PositiveVector(), "4,,2", 1), (PositiveVector(), "4,2,", 2), (PositiveVector(), ",4", 0),
    (RationalVector(), "1,,3", 1),
])
def test_an_empty_vector_entry_is_an_error(domain, text, index):
    with pytest.raises(InvalidParameter) as info:
        domain.parse("C", text)
    assert f"C={text!r}" in str(info.value) and f"entry {index} is empty" in str(info.value)


def test_plain_numbers_still_parse():
    assert PositiveReal().parse("rho", " 0.5 ") == 0.5
    assert PositiveReal().parse("rho", "1e-3") == 1e-3
    assert IntegerAtLeast(1).parse("d", "12") == 12
    np.testing.assert_array_equal(PositiveVector().parse("C", "4, 2 ,1"), [4.0, 2.0, 1.0])
    assert RationalVector().parse("moments", "1, 3/2") == (1, pytest.approx(1.5))


def test_cli_refuses_an_underscore_with_one_line():
    out = _cli("supermarket", "d=2", "lam=0_5")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "lam='0_5'" in out.stderr, out.stderr


# --------------------------------------------------------------------- dispatch
def test_default_grid_that_does_not_fit_names_the_typed_load():
    from symq.core.errors import ResourceLimit
    from symq.dispatch import solve_dispatch

    # m=6 at rho=0.99: C(n+6, 6) sorted states with n = umax/(delta/2) ~ 2000 steps: ~1e17
    with pytest.raises(ResourceLimit) as info:
        solve_dispatch("optimal", 6, 0.99)
    message = str(info.value)
    assert message.startswith("parameter rho=0.99 must be lower"), message
    assert "the defaults delta=0.5 and umax=" in message and "lower rho or m" in message
    # delta= is already at its largest (E[X]/2) and umax= at its least: neither is offered
    assert "give a coarser" not in message and "give a smaller" not in message


def test_sita_threshold_near_the_largest_double_warns_nothing_and_names_h():
    from symq.core.errors import StabilityError
    from symq.dispatch import solve_dispatch
    from symq.laws import Exponential

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        law = Exponential(1.0)
        # E[X^2; X <= x] -> E[X^2] = 2, E[X; X <= x] -> 1 as x -> oo (closed form limits)
        assert law.partial_moment(2, np.array([1e308, np.inf])).tolist() == [2.0, 2.0]
        assert law.partial_moment(1, np.array([1e308, np.inf])).tolist() == [1.0, 1.0]
        with pytest.raises(StabilityError, match=r"SITA with h=1e\+308 is unstable"):
            solve_dispatch("sita", 2, 0.5, h=1e308)
        with pytest.raises(StabilityError, match=r"h=1e\+308"):
            solve_dispatch("sita", 2, 0.5, sizes="h2", scv=1e12, h=1e308)
        with pytest.raises(InvalidParameter, match=r"speeds=\[1e\+308, 1\.0\].*entry 0"):
            solve_dispatch("optimal", 2, 0.5, speeds=[1e308, 1.0])


def test_cli_sita_huge_threshold_prints_one_line():
    out = _cli("dispatch", "policy=sita", "m=2", "rho=0.5", "h=1e308")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("symq: error: SITA with h=1e+308")


# --------------------------------------------------------------------- ps-routing
def test_tiny_total_work_rate_is_solved():
    from fractions import Fraction

    from symq.routing import social_optimum, wardrop_equilibrium
    from symq.routing.model import solve

    for rho in (1e-300, 1e-10):
        # one server used (rho below the entry thresholds): x_1 = rho, J = w rho/(C - rho),
        # mu = w C/(C - rho)^2 and c = w/(C - rho), in exact rationals
        q = Fraction(rho)
        cost = float(q / (4 - q))
        for allocation, multiplier in ((social_optimum([4, 2, 1], [1, 1, 1], rho),
                                        float(Fraction(4) / (4 - q) ** 2)),
                                       (wardrop_equilibrium([4, 2, 1], [1, 1, 1], rho),
                                        float(1 / (4 - q)))):
            assert allocation.loads.tolist() == [rho, 0.0, 0.0]
            assert allocation.cost == pytest.approx(cost, rel=1e-15)
            assert allocation.multiplier == pytest.approx(multiplier, rel=1e-15)
    # the smallest double: both use server 0 alone (same allocation: PoA 1); J underflows to 0
    result = solve([4, 2, 1], [1, 1, 1], 5e-324)
    assert result.poa == 1.0
    assert result.optimal.loads[0] == 5e-324
    # equal r_j = w_j/C_j: the load splits in proportion to C_j at once
    assert social_optimum([4, 4], [1, 1], 1e-300).loads.tolist() == [5e-301, 5e-301]


def test_light_load_form_equals_the_compiled_closed_form():
    from symq.routing import social_optimum, wardrop_equilibrium
    from symq.routing.solve import _active_count, _prepare, _thresholds, kernels

    rng = np.random.default_rng(29)
    k = kernels()
    for _ in range(40):
        K = int(rng.integers(1, 6))
        C, w = rng.uniform(0.2, 5.0, K), rng.uniform(0.2, 5.0, K)
        rho = float(rng.uniform(0.05, 0.5) * C.sum())
        farm, rho, scan = _prepare(C, w, rho)
        for kind, solve in (("optimal", social_optimum), ("equilibrium", wardrop_equilibrium)):
            m = _active_count(_thresholds(scan, kind), rho)
            SC, Ss, Sw = scan.SC[m - 1], scan.Ss[m - 1], scan.Sw[m - 1]
            if kind == "optimal":
                loads = k.opt_load(scan.C[:m], scan.w[:m], k.opt_t(SC, Ss, rho))
                cost, mult = k.opt_cost(SC, Ss, Sw, rho), k.opt_mu(SC, Ss, rho)
            else:
                c = k.ne_c(SC, Sw, rho)
                loads, cost, mult = k.ne_load(scan.C[:m], scan.w[:m], c), k.ne_cost(SC, Sw, rho), c
            got = solve(C, w, rho)
            np.testing.assert_allclose(got.loads[scan.order[:m]], loads, rtol=1e-9, atol=1e-12)
            assert got.cost == pytest.approx(float(cost), rel=1e-9)
            assert got.multiplier == pytest.approx(float(mult), rel=1e-9)


@pytest.mark.parametrize("C, w, name", [
    ([1e308, 2, 1], [1, 1, 1], "C"), ([4, 2, 1], [1e308, 1, 1], "w"),
    ([1e308, 1e308], [1, 1], "C"), ([1e-308, 2, 1], [1, 1, 1], "C"),
])
def test_extreme_capacities_and_costs_are_refused_without_warnings(C, w, name):
    from symq.routing.model import solve

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InvalidParameter, match=rf"parameter {name}=.*entry 0 is 1e[+-]308"):
            solve(C, w, 0.5)


# --------------------------------------------------------------------- jsq-ph
def test_jsq_ph_tiny_load_is_solved():
    from symq.laws import hyperexponential2
    from symq.meanfield.jsq_ph import solve_jsq_ph

    law = hyperexponential2(1.0, 4.0, 0.5)      # E[X] = 1, E[X^2] = (1 + scv) E[X]^2 = 5
    fp = solve_jsq_ph(2, 5e-324, law)
    assert fp.ET == 1.0 and fp.EW >= 0.0 and fp.EQ == 5e-324     # rho -> 0: ET -> E[X]
    # d = 1 is an M/G/1 queue per server: Pollaczek-Khinchine E[W] = lam E[X^2]/(2 (1 - rho))
    fp = solve_jsq_ph(1, 1e-250, law)
    assert fp.EW == pytest.approx(1e-250 * 5.0 / 2.0, rel=1e-12) and fp.ET == 1.0


def test_sweep_axes_are_read_as_they_read():
    from symq.core.sweep import parse_axis

    with pytest.raises(InvalidParameter, match="underscores"):
        parse_axis("0_1:0.5:3")                # float("0_1") is 1.0
    with pytest.raises(InvalidParameter, match="not an integer"):
        parse_axis("0.1:0.5:\u0663")            # int("\u0663") is 3
    np.testing.assert_array_equal(parse_axis("0.1:0.5:3"), [0.1, 0.3, 0.5])


def test_jiq_is_simulated_not_refused():
    from symq.dispatch import solve_dispatch

    # policy=jiq is one of the model's choices; with no exact form it is simulated.  One
    # server: an M/M/1 queue, ET = E[X]/(1 - rho) = 2 at rho = 1/2 (99% interval)
    result = solve_dispatch("jiq", 1, 0.5, n_jobs=200_000, seed=1)
    assert result.method == "simulation"
    assert abs(result.ET.mean - 2.0) <= result.ET_half_width


# --------------------------------------------------------------------- awp
def test_awp_throughput_overflow_names_rtt():
    from symq.window.model import solve_awp

    # NewReno with packet losses: E[W] = 1.3098 / sqrt(p) (Altman et al.), finite; only
    # throughput = E[W]/rtt overflows, so rtt (not p) is named, with the least rtt that fits
    with pytest.raises(InvalidParameter) as info:
        solve_awp("newreno", p=1e-3, rtt=1e-308)
    assert info.value.name == "rtt" and "rtt=1e-308" in str(info.value)
    least = float(str(info.value).split(">= ")[1].split()[0])
    assert least == pytest.approx(1.3098 / 1e-3 ** 0.5 / 1e308, rel=1e-3)


def test_unreachable_rtol_is_refused_up_front():
    from symq.dispatch import solve_dispatch

    # before: 20000 iterations per grid, then NotConverged (rtol=1e-13) or minutes (1e-308)
    for rtol in (1e-13, 1e-308):
        with pytest.raises(InvalidParameter, match=rf"rtol={rtol!r} must be .*\[1e-10, 0\.1\]"):
            solve_dispatch("optimal", 2, 0.5, rtol=rtol)


def test_lwl_with_very_many_servers_ends_and_matches_the_recursion():
    import symq.dispatch.policies.exact as exact

    # the Poisson form of Erlang B against the m-step recursion (forced), both in floats
    for m, a in ((200_000, 199_000.0), (100_001, 99_900.999)):
        fast = exact._erlang_c(m, a)
        b = 1.0
        for k in range(1, m + 1):
            b = a * b / (k + a * b)
        slow = b / (1.0 - a / m + a / m * b)
        assert fast == pytest.approx(slow, rel=1e-13)
    # m = 2^53 servers (the largest integer m): before, an O(m) loop that never ended
    code = ("from symq.dispatch.policies.exact import exact_lwl; from symq.laws import "
            "Exponential; print(exact_lwl(2**53, 0.5, Exponential(1.0)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=20)
    assert out.returncode == 0 and float(out.stdout) == 1.0     # Erlang C underflows: ET = E[X]


def test_mimd_floor_near_the_smallest_double_is_scale_invariant():
    from symq.window import scalable, solve_protocol

    # constant-time losses: W/w_min has a law free of w_min, so E[W] scales with the floor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unit = solve_protocol(scalable(0.5, loss_model="time", w_min=1.0)).mean_window
        tiny = solve_protocol(scalable(0.999999, loss_model="time", w_min=1e-308))
        small = solve_protocol(scalable(0.5, loss_model="time", w_min=1e-308)).mean_window
    assert small == pytest.approx(1e-308 * unit, rel=1e-12)
    assert 1e-308 < tiny.mean_window < 2e-308


def test_an_integer_written_with_an_exponent_is_that_integer():
    domain = IntegerAtLeast(1)
    assert domain.parse("N", "1e15") == 10**15 and domain.parse("N", "2.0") == 2
    for text, needle in (("2.5", "not an integer"), ("1e-3", "not an integer"),
                         ("1e400", "at most 9007199254740992")):
        with pytest.raises(InvalidParameter) as info:
            domain.parse("N", text)
        assert f"N={text!r}" in str(info.value) and needle in str(info.value)


def test_value_iteration_refusals_name_what_was_typed():
    from symq.dispatch import solve_dispatch

    # delta=1e-308 typed, umax not: before, "umax=1000.0 must be a modest multiple of delta"
    with pytest.raises(InvalidParameter) as info:
        solve_dispatch("optimal", 2, 0.5, delta=1e-308)
    assert info.value.name == "delta" and "delta=1e-308" in str(info.value)
    # scv=1e12 typed: M/G/1 wait rho E[X^2]/(2(1-rho)) = (1 + 1e12)/2, the truncation 5x it is
    # 2.5e12; before, an internal "umax=219902325555.2 must be >= 2.5e+12" was named
    with pytest.raises(InvalidParameter) as info:
        solve_dispatch("optimal", 2, 0.5, sizes="h2", scv=1e12)
    assert info.value.name == "scv" and "umax >= 2.5e+12" in str(info.value)
