"""The front door solve_protocol, stochastic ordering and the awp model / command line."""

from __future__ import annotations

import json
import math

import pytest

from symq.cli import main
from symq.core.errors import InvalidParameter, StabilityError
from symq.window import (
    compare,
    general,
    highspeed,
    newreno,
    scalable,
    simulate_protocol,
    solve_protocol,
)
from symq.window.mimd import MIMDFloor


def test_dispatch_and_agreement_between_solvers() -> None:
    tcp = newreno(1e-3)
    exact = solve_protocol(tcp)
    numeric = solve_protocol(tcp, method="numeric")
    assert exact.method.startswith("closed form") and numeric.method.startswith("numeric")
    assert numeric.mean() == pytest.approx(exact.mean(), rel=1e-6)
    assert exact.mean_square_window == pytest.approx(2 / 1e-3, rel=1e-10)   # E[W^2] = 2/p exactly
    assert exact.loss_rate == pytest.approx(1e-3 * exact.mean(), rel=1e-12)  # E[lam(W)] = p E[W]


def test_mimd_with_constant_losses_and_a_floor() -> None:
    # Z = ln(W/w_min) ~ Exp(theta), a theta = lam (1 - beta^theta): solve theta independently
    from scipy.optimize import brentq

    a, lam, beta = 0.01, 0.3, 0.875
    theta = brentq(lambda t: a * t - lam * (1 - beta ** t), 1e-3, 1e3)
    law = solve_protocol(scalable(lam, loss_model="time", w_min=2.0))
    assert law.mean() == pytest.approx(2.0 * theta / (theta - 1), rel=1e-10)
    assert abs(law.drift_balance) < 1e-9


def test_unstable_protocols_raise_stability_error() -> None:
    with pytest.raises(StabilityError, match="transient"):
        solve_protocol(scalable(0.05, loss_model="time", w_min=1.0))
    with pytest.raises(StabilityError, match="collapse"):
        solve_protocol(scalable(0.3, loss_model="time"))
    with pytest.raises(StabilityError, match="transient"):
        solve_protocol(general("w**2", "w**0.5", "w/2"))


def test_infinite_mean_window_is_one_error_class_in_every_solver() -> None:
    """Stable (lam ln(1/beta) > a) but E[W] infinite (a >= lam (1 - beta)): the closed form, the
    MIMD law itself and the numerical solver all raise StabilityError with the tail exponent."""
    tcp = scalable(0.079, loss_model="time", w_min=1.0)   # 0.079 ln(8/7) > 0.01 > 0.079/8
    pattern = r"E\[W\] is infinite: tail exponent theta = "
    with pytest.raises(StabilityError, match="Scalable TCP: the window is stable but " + pattern):
        solve_protocol(tcp)
    with pytest.raises(StabilityError, match=pattern):
        MIMDFloor(0.01, 0.079, 0.875, 1.0).mean()
    with pytest.raises(StabilityError, match=pattern):
        solve_protocol(tcp, method="numeric")


def test_closed_form_is_refused_outside_its_class() -> None:
    with pytest.raises(InvalidParameter, match="method"):
        solve_protocol(highspeed(1e-5), method="closed form")
    with pytest.raises(InvalidParameter, match="method"):
        solve_protocol(newreno(1e-3), method="exact")


def test_general_profile_agrees_with_simulation() -> None:
    tcp = highspeed(1e-5)
    law = solve_protocol(tcp)
    sim = simulate_protocol(tcp, n_losses=300_000, rng=3, level=0.999)
    assert sim.mean_window.low <= law.mean() <= sim.mean_window.high


def test_cap_orders_the_stationary_laws() -> None:
    result = compare(newreno(1e-3, w_max=30.0), newreno(1e-3))
    assert result.first_below and not result.second_below
    assert result.means[0] < result.means[1]
    # the order of the arguments matters: the larger protocol is not below the smaller one
    assert not compare(newreno(1e-3), newreno(1e-3, w_max=30.0)).first_below


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_newreno_json(capsys) -> None:
    code, out, _ = run(capsys, "solve", "awp", "protocol=newreno", "p=1e-4", "--json")
    assert code == 0
    results = json.loads(out)["results"]
    assert results["stable"] is True
    assert results["EW2"] == pytest.approx(2e4, rel=1e-10)
    assert results["throughput"] == pytest.approx(results["EW"], rel=1e-15)   # rtt = 1


def test_cli_general_protocol_and_unstable_one(capsys) -> None:
    code, out, _ = run(capsys, "solve", "awp", "a=0.01*w", "loss=1e-4*w", "after_loss=0.875*w",
                       "--json")
    assert code == 0
    results = json.loads(out)["results"]
    assert results["EW"] == pytest.approx(0.01 / (1e-4 * math.log(1 / 0.875)), rel=1e-10)
    code, out, _ = run(capsys, "solve", "awp", "a=0.01*w", "loss=0.05", "after_loss=0.875*w",
                       "w_min=1", "--json")
    assert code == 0
    results = json.loads(out)["results"]
    assert results["stable"] is False and "EW" not in results


@pytest.mark.parametrize("args, needle", [
    (("protocol=newreno",), "needs p="),
    (("a=1", "loss=1e-4*x", "after_loss=0.5*w"), "unknown name x"),
    (("a=1", "loss=1e-4*w", "after_loss=1.5*w"), "reduce the window"),
    (("a=1", "loss=-1e-4*w", "after_loss=0.5*w"), "parameter loss"),
    (("a=1", "loss=1e-4*w"), "after_loss"),
    (("protocol=newreno", "p=1e-4", "a=1"), "preset"),
])
def test_cli_bad_input(capsys, args, needle) -> None:
    code, _, err = run(capsys, "solve", "awp", *args)
    assert code == 2 and needle in err
