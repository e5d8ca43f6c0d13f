"""The power-law kernel's integer-exponent route against 50-digit arithmetic, and its loops.

:func:`integer_power_integral` computes ``int_y^w u^(n-1) du = (w^n - y^n)/n`` for a nonzero
integer ``n`` as ``w - y`` times a sum of positive terms (no ``exp``/``log``/``expm1``).  Its
relative error is bounded by about ``2|n| + 5`` roundings: here it is measured against mpmath at
50 digits over the simulator's whole window range ``[1e-12, 1e15]`` (the default grid), every
``|n| <= INTEGER_EXPONENT_MAX``, ratios ``w/y`` from ``1 + 2^-52`` (``w`` next to ``y``, where a
difference of powers cancels) to ``1e3``, and must stay within ``(2|n| + 8) 2^-53``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symq.window.simulation import simulate_window
from symq.window.simulation.kernels import (
    INTEGER_EXPONENT_MAX,
    integer_power_integral,
    power_integral,
)

ULP = 2.0**-53
EXPONENTS = [n for n in range(-INTEGER_EXPONENT_MAX, INTEGER_EXPONENT_MAX + 1) if n != 0]


def _exact(y: float, w: float, n: int) -> mpmath.mpf:
    """``(w^n - y^n)/n`` at 50 digits from the binary values of ``y`` and ``w``."""
    with mpmath.workdps(50):
        return (mpmath.mpf(w) ** n - mpmath.mpf(y) ** n) / n


def _points(seed: int, count: int) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    ys = 10.0 ** rng.uniform(-12.0, 15.0, count)
    # log-uniform ratios down to w - y of one unit in the last place of y
    gaps = 10.0 ** rng.uniform(-15.5, 3.0, count)
    out = []
    for y, gap in zip(ys, gaps):
        w = float(y * (1.0 + gap))
        if w == y:
            w = float(np.nextafter(y, math.inf))
        out.append((float(y), w))
    return out


@pytest.mark.parametrize("n", EXPONENTS)
def test_integer_route_within_a_few_roundings_of_50_digits(n: int) -> None:
    worst = 0.0
    for y, w in _points(abs(n) * 2 + (n < 0), 400):
        fast = integer_power_integral(y, w, n)
        exact = _exact(y, w, n)
        with mpmath.workdps(50):
            worst = max(worst, float(abs((mpmath.mpf(fast) - exact) / exact)))
    assert worst <= (2 * abs(n) + 8) * ULP, (n, worst / ULP)


def test_integer_route_sign_and_zero() -> None:
    # w = y: 0; w < y: the negative integral (the formula holds both ways)
    for n in EXPONENTS:
        assert integer_power_integral(3.0, 3.0, n) == 0.0
        with mpmath.workdps(50):
            exact = _exact(5.0, 2.0, n)
            assert abs(integer_power_integral(5.0, 2.0, n) / exact - 1) <= (2 * abs(n) + 8) * ULP


@pytest.mark.parametrize("n", EXPONENTS)
def test_integer_route_beside_the_exp_route(n: int) -> None:
    """Where ``w/y`` is not close to 1 the general route ``y^n expm1(n ln(w/y))/n`` is accurate
    to about ``|n ln(w/y)|`` roundings; the two agree there (the integer route is the more
    accurate one close to ``y``, where ``ln(w/y)`` carries the rounding of ``w/y``)."""
    for y, w in _points(100 + n, 200):
        lr = math.log(w / y)
        if lr < 1e-3:
            continue
        general = power_integral(y, w, lr, float(n))
        fast = integer_power_integral(y, w, n)
        scale = 1.0 + abs(n) * (abs(math.log(y)) + abs(lr))
        assert fast == pytest.approx(general, rel=64 * scale * ULP)


def test_newreno_loop_equals_the_general_loop() -> None:
    """NewReno runs a loop of its own; a cap it never reaches sends the same cycles through the
    general loop (integer route, cap terms 0): the same values, bit for bit."""
    kw = dict(power_law=(1.0, 0, 1e-3, 1, 0.5), rng=7)
    own = simulate_window(None, None, None, 60_000, **kw)
    general = simulate_window(None, None, None, 60_000, w_max=1e12, **kw)
    assert own.mean_window == general.mean_window
    assert own.mean_square_window == general.mean_square_window
    assert own.loss_rate == general.loss_rate
    np.testing.assert_array_equal(own.pre_loss_sample, general.pre_loss_sample)
    assert general.time_fraction_at_cap.mean == 0.0


@pytest.mark.parametrize("law", [(0.5, 1, 0.1, 2, 0.6), (1.0, -1, 0.01, 0, 0.5),
                                 (1.0, 0.5, 0.01, 1, 0.5)])
def test_same_seed_same_values_in_chunks(law) -> None:
    """Integer ``k = 1, -1`` and a fractional ``k``: one call and a run in chunks (the slice
    counter carried between them) give the same values."""
    one = simulate_window(None, None, None, 40_000, power_law=law, rng=11)
    chunks = simulate_window(None, None, None, 40_000, power_law=law, rng=11, progress=True)
    assert one.mean_window == chunks.mean_window
    assert one.mean_square_window == chunks.mean_square_window
    assert one.pre_loss_mean == chunks.pre_loss_mean
    np.testing.assert_array_equal(one.pre_loss_sample, chunks.pre_loss_sample)
