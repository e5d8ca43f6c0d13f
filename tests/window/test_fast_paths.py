"""Hand-written fast paths of symq.window equal the compiled form of their symbolic derivation.

The simulator's power-law kernel samples each loss cycle with closed forms typed in numba
(:func:`power_pre_loss`, :func:`power_integral`); sympy derives the same cycle
(:func:`symq.window.symbolic.power_law_cycle`).  Here the derived expressions are compiled by
:func:`symq.core.compile` and compared with the kernels' helpers at random points.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from symq.core.compiler import compile as symq_compile
from symq.window.protocol import POWER_LAW_ARGS, POWER_LAW_PROFILES, PowerLawParameters
from symq.window.simulation.kernels import power_integral, power_pre_loss
from symq.window.symbolic import power_law_cycle

CYCLE = power_law_cycle()


def _compiled(expr: sp.Expr, *names: str):
    by_name = {str(s): s for s in expr.free_symbols}
    assert set(by_name) == set(names), (by_name, names)
    return symq_compile(expr, [by_name[n] for n in names])


PRE_LOSS = _compiled(CYCLE["pre_loss"], "y", "E", "alpha", "gamma", "m")
PRE_LOSS_M0 = _compiled(CYCLE["pre_loss_m0"], "y", "E", "alpha", "gamma")
INTEGRAL = _compiled(CYCLE["integral"], "y", "w", "alpha", "e")

positive = st.floats(1e-3, 1e3)
exponent = st.one_of(st.sampled_from([1.0, 2.0, -1.0, 0.5]), st.floats(-3.0, 3.0))


@settings(max_examples=300, deadline=None)
@given(y=positive, ev=st.floats(1e-6, 30.0), alpha=positive, gamma=positive, m=exponent)
def test_pre_loss_window_equals_the_derived_root(y, ev, alpha, gamma, m) -> None:
    if m == 0.0:
        fast = power_pre_loss(y, ev, alpha, gamma, 0.0, 0.0, 0.0)
        with np.errstate(over="ignore"):       # both overflow to inf for huge alpha ev/gamma
            derived = float(PRE_LOSS_M0(y, ev, alpha, gamma))
        assert math.isclose(fast, derived, rel_tol=1e-12)
        return
    assume(abs(m) > 1e-3)
    fast = power_pre_loss(y, ev, alpha, gamma, m, alpha * m / gamma, 1.0 / m)
    base = y ** m + alpha * m * ev / gamma
    if base <= 0.0:            # m < 0: the hazard left is below ev, no further loss
        assert fast == -1.0
        return
    assume(base > 1e-300 and math.isfinite(base))
    with np.errstate(all="ignore"):
        derived = float(PRE_LOSS(y, ev, alpha, gamma, m))
    assume(math.isfinite(derived) and derived > 0)
    # the root amplifies the relative rounding of the base by 1/|m|, and the base can be a
    # difference (m < 0): allow for both
    cond = (y ** m + abs(alpha * m * ev / gamma)) / base / abs(m)
    assert math.isclose(fast, derived, rel_tol=1e-13 * max(1.0, cond))


@settings(max_examples=300, deadline=None)
@given(y=positive, ratio=st.floats(1.0 + 1e-6, 1e3), alpha=positive,
       e=st.one_of(st.sampled_from([1.0, 2.0, -1.0]), st.floats(-3.0, 4.0)))
def test_cycle_integrals_equal_the_derived_integral(y, ratio, alpha, e) -> None:
    assume(abs(e) > 1e-6)
    w = y * ratio
    fast = power_integral(y, w, math.log(w / y), e) / alpha
    derived = float(INTEGRAL(y, w, alpha, e))
    # the derived form subtracts w^e - y^e: its rounding is relative to the larger term
    scale = max(w ** e, y ** e) / (alpha * abs(e))
    assert abs(fast - derived) <= 1e-13 * scale + 1e-13 * abs(fast)


@settings(max_examples=50, deadline=None)
@given(alpha=positive, k=st.floats(-2, 2), gamma=positive, l_exp=st.floats(-2, 2),
       beta=st.floats(0.05, 0.95), w=st.floats(1e-3, 1e6))
def test_power_law_profiles_are_the_declared_ones(alpha, k, gamma, l_exp, beta, w) -> None:
    """``PowerLawParameters.numeric`` evaluates the declared sympy profiles (50 digits)."""
    a, lam, d = PowerLawParameters(alpha, k, gamma, l_exp, beta).numeric()
    values = dict(zip(POWER_LAW_ARGS, (w, alpha, k, gamma, l_exp, beta)))
    for fast, expr in zip((a, lam, d), POWER_LAW_PROFILES):
        exact = float(expr.subs(values).evalf(50))
        assert math.isclose(float(fast(w)), exact, rel_tol=1e-13)
