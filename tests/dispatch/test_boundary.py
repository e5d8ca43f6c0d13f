"""The fitted tail beyond the truncation (symq.dispatch.vi.boundary).

* On the equal random split, whose relative value is exactly :math:`c_M \\sum_i u_i^2`,
  :math:`c_M = (\\lambda/m)/(2(1-\\rho))` (the size-aware M/G/1 value function of Hyytiä,
  Penttinen & Aalto, EJOR 2012, with no linear term), the fit returns that curvature and a zero
  slope.
* On the optimal policy at a high load, a fitted tail at a small truncation is much closer to a
  large-truncation reference than the default tail at the same truncation.
"""

from __future__ import annotations

import pytest

from symq.dispatch.vi.boundary import fit_tail
from symq.dispatch.vi.solvers import evaluate_policy, solve_optimal
from symq.laws import Exponential

EXP = Exponential(1.0)


def test_the_random_split_value_is_fitted_exactly() -> None:
    rho, m = 0.6, 2
    r = evaluate_policy("rnd", m, rho, EXP, delta=0.25, U=24.0, tol=1e-11)
    c, b = fit_tail(r)
    exact = (m * rho / m) / (2 * (1 - rho))          # lam/m = rho with E[X] = 1
    assert c == pytest.approx(exact, rel=2e-3)
    assert abs(b) < 2e-3 * exact * r.U


def test_a_fitted_tail_cuts_the_truncation_error() -> None:
    m, rho, delta = 2, 0.8, 0.4
    reference = solve_optimal(m, rho, EXP, delta=delta, U=96.0, tol=1e-9).ET
    plain = solve_optimal(m, rho, EXP, delta=delta, U=24.0, tol=1e-9)
    fitted = plain
    for _ in range(2):
        fitted = solve_optimal(m, rho, EXP, delta=delta, U=24.0, tol=1e-9,
                               tail=fit_tail(fitted), warm_start=fitted)
    assert abs(fitted.ET - reference) < abs(plain.ET - reference) / 5
    # the result carries its tail for the look-up policy and value()
    c, b = fitted.c_M, fitted.tail_slope
    u = fitted.U + 3.0
    assert fitted.value([[0.0, u]])[0] == pytest.approx(
        fitted.value([[0.0, fitted.U]])[0] + c * (u * u - fitted.U ** 2) + b * 3.0, rel=1e-12)
