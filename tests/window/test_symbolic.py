"""The sympy-derived forms of symq.window.symbolic against the numeric solvers that use them.

The derivation (``derivations/awp.md``) obtains the MIMD floor exponent, its Pareto moments and
the power-law cycle by sympy; here each is compiled and compared with the independent numeric
code (root finding and the Pareto law in :mod:`symq.window.mimd`) or checked symbolically.
"""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from symq.core.compiler import compile as symq_compile
from symq.window.mimd import MIMDFloor, mimd_theta
from symq.window.protocol import W, general, newreno
from symq.window.symbolic import (
    ALPHA,
    BETA,
    E_POW,
    GAMMA,
    K_EXP,
    Y,
    log_drift,
    mimd_floor_law,
    power_law_cycle,
    stability,
)

MIMD_FLOOR = mimd_floor_law()


def _symbols(expr: sp.Basic, *names: str) -> list[sp.Symbol]:
    by_name = {str(s): s for s in expr.free_symbols}
    return [by_name[n] for n in names]


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.05, 2.0), excess=st.floats(1.05, 20.0), beta=st.floats(0.1, 0.95))
def test_theta_equation_holds_at_the_numeric_root(a: float, excess: float, beta: float) -> None:
    lam = excess * a / -math.log(beta)      # stable: lam ln(1/beta) > a
    equation = MIMD_FLOOR["theta"]
    args = _symbols(equation, "a", "lambda", "beta", "theta")
    residual = symq_compile(equation.lhs - equation.rhs, args)
    theta = mimd_theta(a, lam, beta)
    assert abs(float(residual(a, lam, beta, theta))) <= 1e-12 * max(a * theta, lam)


@settings(max_examples=40, deadline=None)
@given(excess=st.floats(1.05, 20.0), beta=st.floats(0.1, 0.95), w_min=st.floats(0.1, 10.0),
       share=st.floats(-2.0, 0.95))
@example(excess=20.0, beta=0.95, w_min=0.1, share=-2.0)  # w_min^s overflows: both sides inf
@example(excess=20.0, beta=0.95, w_min=0.1, share=0.95)  # w_min^s underflows: both sides 0
def test_pareto_moments_equal_the_mimd_law(excess: float, beta: float, w_min: float,
                                           share: float) -> None:
    law = MIMDFloor(1.0, excess / -math.log(beta), beta, w_min)
    s = share * law.theta
    moment = MIMD_FLOOR["moment"].rhs
    f = symq_compile(moment, _symbols(moment, "w_min", "s", "theta"))
    with np.errstate(over="ignore"):  # the compiled form overflows to inf, as it should
        compiled = float(f(w_min, s, law.theta))
    assert math.isclose(compiled, law.moment(s), rel_tol=1e-13)


def test_a_moment_beyond_the_float_range_is_inf_and_one_inside_it_is_exact() -> None:
    """E[W^s] = w_min^s theta/(theta - s), in 50-digit mpmath: above the largest float it is
    returned as inf (never an OverflowError); just below, to the last digits."""
    law = MIMDFloor(1.0, 20.0 / -math.log(0.95), 0.95, 0.1)
    with mpmath.workdps(50):
        def exact(s: float) -> mpmath.mpf:
            theta = mpmath.mpf(law.theta)
            return mpmath.mpf(0.1) ** s * theta / (theta - s)

        assert exact(-400.0) > mpmath.mpf(sys.float_info.max)
        assert law.moment(-400.0) == math.inf
        assert exact(-300.0) < mpmath.mpf(sys.float_info.max)
        assert math.isclose(law.moment(-300.0), float(exact(-300.0)), rel_tol=1e-13)


def test_log_drift_of_the_power_law_class() -> None:
    """L ln w = lam (a/(w lam) - ln(1/beta)) for a = alpha w^k, lam = gamma w^l, d = beta w."""
    a, lam, d = sp.Function("a"), sp.Function("lambda"), sp.Function("d")
    l_exp = sp.Symbol("l", real=True)
    drift = log_drift().subs({a(W): ALPHA * W ** K_EXP, lam(W): GAMMA * W ** l_exp,
                              d(W): BETA * W}).doit()
    expected = GAMMA * W ** l_exp * (ALPHA * W ** K_EXP / (W * GAMMA * W ** l_exp)
                                     - sp.log(1 / BETA))
    assert sp.simplify(sp.expand_log(drift - expected, force=True)) == 0


def test_cycle_hazard_inverts_to_the_pre_loss_window() -> None:
    cycle = power_law_cycle()
    e_draw = sp.Symbol("E", positive=True)
    back = cycle["hazard"].subs(W, cycle["pre_loss"])
    assert sp.simplify(sp.powdenest(back, force=True) - e_draw) == 0
    assert cycle["integral"].free_symbols == {W, Y, ALPHA, E_POW}


def test_numeric_limits_when_sympy_gives_up(monkeypatch) -> None:
    """The fallback evaluates the compiled (mpmath) index on w = 1e12, 1e15, 1e18 (or 1e-12...)."""
    def refuse(*args, **kwargs):
        raise NotImplementedError("sympy gives up")

    monkeypatch.setattr(sp, "limit", refuse)
    reno = stability(newreno(1e-4))          # a/(w lam) = 1e4/w^2; ln(w/d) = ln 2
    assert (reno.status, reno.method) == ("stable", "numeric")
    assert abs(reno.upper_index) < 1e-30 and reno.lower_index == math.inf
    assert math.isclose(reno.upper_threshold, math.log(2.0), rel_tol=1e-12)
    mimd = stability(general("0.01*w", "0.05", "0.875*w", w_min=1.0))   # 0.2 > ln(8/7)
    assert (mimd.status, mimd.method) == ("transient", "numeric")
    assert math.isclose(mimd.upper_index, 0.2, rel_tol=1e-12)
    assert math.isclose(mimd.upper_threshold, math.log(8 / 7), rel_tol=1e-12)
