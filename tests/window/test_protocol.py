"""Window protocol declarations, presets and the symbolic stability test."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.window import (
    W,
    WindowProtocol,
    general,
    highspeed,
    highspeed_family,
    kolmogorov_equation,
    newreno,
    scalable,
    stability,
)

# RFC 3649 Appendix B (as tabulated in Linux net/ipv4/tcp_highspeed.c): window, a(w), b(w)
RFC3649_ROWS = [(38, 1, 0.50), (118, 2, 0.44), (221, 3, 0.41), (347, 4, 0.38), (495, 5, 0.37),
                (663, 6, 0.35), (851, 7, 0.34), (1058, 8, 0.33)]


def test_highspeed_profiles_reproduce_the_rfc_table() -> None:
    a, _, d = highspeed(1e-5).numeric()
    w = np.array([row[0] for row in RFC3649_ROWS], dtype=float)
    np.testing.assert_allclose(a(w), [row[1] for row in RFC3649_ROWS], atol=0.02)
    np.testing.assert_allclose(1 - d(w) / w, [row[2] for row in RFC3649_ROWS], atol=0.006)


def test_highspeed_decrease_is_capped_beyond_high_window() -> None:
    _, _, d = highspeed(1e-5).numeric()
    w = np.array([1e5, 1e7, 1e9])
    np.testing.assert_allclose(1 - d(w) / w, 0.1, rtol=1e-12)


def test_power_law_detection() -> None:
    assert newreno(1e-3).power_law().m == 2.0
    law = scalable(1e-3).power_law()
    assert (law.alpha, law.k, law.l, law.beta) == (0.01, 1.0, 1.0, 0.875)
    assert highspeed(1e-3).power_law() is None
    family = highspeed_family(0.835, 1e-3).power_law()
    assert family.k == pytest.approx(2 - 1 / 0.835, rel=1e-9)


def test_highspeed_family_at_one_half_is_newreno() -> None:
    family = highspeed_family(0.5, 1e-4)
    assert float(family.increase) == pytest.approx(1.0, rel=1e-14)
    assert family.after_loss == sp.Float(0.5) * W


def test_declared_parameters_are_substituted() -> None:
    tcp = WindowProtocol("alpha", "p*w", "beta*w", parameters={"alpha": 2, "p": 1e-3, "beta": 0.5})
    law = tcp.power_law()
    assert (law.alpha, law.gamma, law.beta) == (2.0, 1e-3, 0.5)


@pytest.mark.parametrize("args, needle", [
    (("1", "-1e-4*w", "w/2"), "parameter loss"),
    (("-1", "1e-4*w", "w/2"), "parameter increase"),
    (("1", "1e-4*w", "w"), "reduce the window"),
    (("1", "1e-4*w", "1.5*w"), "reduce the window"),
    (("1", "1e-4*w", "w/2 + 0.4*sin(w)*w"), "nondecreasing"),
    (("1", "1e-4*x", "w/2"), "unknown name x"),
])
def test_bad_profiles(args, needle) -> None:
    with pytest.raises(InvalidParameter, match=needle):
        general(*args)


def test_bad_bounds_and_probability() -> None:
    with pytest.raises(InvalidParameter, match="w_min"):
        newreno(1e-3, w_min=10.0, w_max=5.0)
    with pytest.raises(InvalidParameter, match="parameter p"):
        newreno(1.5)
    with pytest.raises(InvalidParameter, match="loss_model"):
        newreno(1e-3, loss_model="bursty")
    with pytest.raises(InvalidParameter, match="undeclared symbol"):
        WindowProtocol(sp.Symbol("alpha"), W, W / 2)


def test_kolmogorov_equation_of_newreno() -> None:
    eq = kolmogorov_equation(newreno(sp.Rational(1, 100)))
    integral = eq.rhs
    u, lower, upper = integral.limits[0]
    assert lower == W and sp.simplify(upper - 2 * W) == 0  # d^{-1}(w) = 2w


@pytest.mark.parametrize("protocol, status", [
    (newreno(1e-4), "stable"),
    (newreno(1e-4, loss_model="time"), "stable"),
    (scalable(1e-4), "stable"),
    (highspeed(1e-5), "stable"),
    (highspeed(1e-5, loss_model="time"), "stable"),
    # Scalable with time-based losses: threshold a/ln(1/beta) = 0.01/ln(8/7) = 0.0749
    (scalable(0.05, loss_model="time", w_min=1.0), "transient"),
    (scalable(0.1, loss_model="time", w_min=1.0), "stable"),
    (scalable(0.1, loss_model="time"), "collapse"),
    (highspeed_family(1.25, 1e-4, loss_model="time"), "transient"),     # m = 1/S - 1 < 0
    (general("w**2", "w**0.5", "w/2"), "transient"),
    (scalable(0.01 / math.log(8 / 7), loss_model="time", w_min=1.0), "borderline"),
])
def test_stability_verdicts(protocol, status) -> None:
    # independent of symq: verdicts worked out by hand from lim a/(w lam) vs ln(1/beta)
    assert stability(protocol).status == status


def test_a_cap_makes_a_transient_protocol_stable() -> None:
    assert stability(scalable(0.05, loss_model="time", w_min=1.0, w_max=1e4)).status == "stable"
