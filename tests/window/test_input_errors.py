"""Issue 11 for the window layer: every bad input a one-line error naming the parameter as
typed, profiles validated on the window domain, ignored options refused, thread-safe
numerics (private mpmath contexts) with unchanged results, bounded simulators."""

from __future__ import annotations

import math
import threading

import mpmath
import numpy as np
import pytest
from scipy.integrate import quad

from symq.cli import main
from symq.core.errors import InvalidParameter, NotConverged, ResourceLimit
from symq.window.model import protocol_from_options, solve_awp
from symq.window.powerlaw import OKM_CONSTANT, PowerLawWindow
from symq.window.protocol import general, newreno
from symq.window.simulation import simulate_window
from symq.window.solve import solve_protocol


def cli(capsys, *args):
    code = main(["solve", "awp", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, needle", [
    (("a=-1", "loss=0.01*w", "after_loss=0.5*w"), "parameter a="),
    (("a=1", "loss=1/0", "after_loss=0.5*w"), "parameter loss="),
    (("a=1", "loss=0", "after_loss=0.5*w"), "parameter loss="),
    (("a=1", "loss=0.01*w", "after_loss=w"), "parameter after_loss="),
    (("a=1", "loss=0.01*w", "after_loss=2*w"), "parameter after_loss="),
    (("a=w**w**w", "loss=0.01*w", "after_loss=0.5*w"), "parameter a="),
    (("a=1", "loss=0.01*w"), "parameter after_loss=<missing>"),
    (("a=1", "loss=0.01*w", "after_loss=0.5*w", "p=0.1"), "parameter p="),
    (("a=1", "loss=0.01*w", "after_loss=0.5*w", "loss_model=time"), "parameter loss_model="),
    (("protocol=newreno", "p=1e-4", "S=1"), "parameter S="),
    (("protocol=newreno", "p=1e-4", "loss=0.1"), "parameter loss="),
    (("protocol=newreno",), "parameter p=<missing>"),
    (("protocol=highspeed-family", "p=1e-4"), "parameter S=<missing>"),
    (("protocol=highspeed-family", "p=1e-4", "S=1e-300"), "parameter S="),
    (("protocol=highspeed-family", "p=1e-4", "S=1e-3"), "parameter S="),
    (("protocol=newreno", "p=1e-4", "w_min=1e308"), "parameter w_min="),
    (("protocol=newreno", "p=1e-4", "w_max=1e300"), "parameter w_max="),
    (("protocol=newreno", "p=1e-4", "w_min=10", "w_max=5"), "parameter w_min="),
    (("protocol=newreno", "p=1"), "parameter p="),
])
def test_cli_one_line_naming_the_parameter(capsys, args, needle) -> None:
    code, _, err = cli(capsys, *args)
    assert code == 2, err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert "increase=" not in err


def test_cli_far_cap_is_a_runtime_error_not_a_wrong_answer(capsys) -> None:
    # the numerical solver cannot resolve a cap 1e6 times above the law: exit 3, one line
    code, _, err = cli(capsys, "protocol=newreno", "p=1e-4", "w_max=1e9")
    assert code == 3 and err.count("\n") == 1 and "rate-conservation" in err


def test_messages_name_the_cli_parameters() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter a='-1'"):
        protocol_from_options(a="-1", loss="0.01*w", after_loss="0.5*w")
    with pytest.raises(InvalidParameter, match=r"parameter after_loss=.*0 < d\(w\) < w"):
        protocol_from_options(a="1", loss="0.01*w", after_loss="w")
    with pytest.raises(InvalidParameter, match=r"parameter loss=.*lam\(w\) >= 0"):
        protocol_from_options(a="1", loss="-0.01*w", after_loss="0.5*w")
    # the library keeps its own field names
    with pytest.raises(InvalidParameter, match=r"parameter increase="):
        general("-1", "0.01*w", "0.5*w")


def test_profiles_checked_on_the_window_domain() -> None:
    # negative only below the floor: never visited, accepted
    tcp = general("w - 0.5", "1e-3*w", "0.5*w", w_min=1.0)
    assert tcp.w_min == 1.0
    with pytest.raises(InvalidParameter, match="parameter increase=.*w >= 0.5"):
        general("w - 0.75", "1e-3*w", "0.5*w", w_min=0.5)
    # increase negative at the cap itself
    with pytest.raises(InvalidParameter, match="at w = 200"):
        general("150 - 0.75*w", "1e-3*w", "0.5*w", w_max=200.0)


def test_reset_to_the_floor_agrees_with_renewal_quadrature() -> None:
    # d(w) = 0 with w_min = 1: every loss resets the window to 1, W(t) = 1 + t over a cycle;
    # E[W] = E[int_0^T W dt]/E[T] with P(T > t) = exp(-1e-3 (t + t^2/2)) (renewal-reward)
    surv = lambda t: math.exp(-1e-3 * (t + t * t / 2))  # noqa: E731
    ref = quad(lambda t: (1 + t) * surv(t), 0, math.inf)[0] / quad(surv, 0, math.inf)[0]
    r = solve_awp(a="1", loss="1e-3*w", after_loss="0", w_min=1.0)
    assert abs(r.EW - ref) < 1e-7 * ref


def test_loss_vanishing_at_infinity_is_transient() -> None:
    r = solve_awp(a="1", loss="exp(-w)", after_loss="0.5*w")
    assert r.stable is False and r.stability == "transient"


def test_closed_form_agrees_with_numeric_after_precision_change() -> None:
    law = solve_protocol(newreno(1e-3))
    num = solve_protocol(newreno(1e-3), method="numeric")
    assert law.method.startswith("closed form")
    assert abs(law.mean() - num.mean()) < 1e-8 * law.mean()
    assert abs(OKM_CONSTANT - 1.30983327466) < 1e-11
    assert abs(law.mean() * math.sqrt(1e-3) - 1.30983327466) < 1e-10


def test_powerlaw_threads_private_precision() -> None:
    """Two threads at different precisions: the same digits as alone, mpmath.mp untouched."""
    s = PowerLawWindow(0.01, 1, 1e-4, 1, 0.875)
    w = 0.3 * s.mean()
    alone = {d: s.pdf_mp(w, d) for d in (30, 60)}
    results: dict[int, list] = {30: [], 60: []}
    seen_dps = []

    def work(d: int) -> None:
        for _ in range(3):
            results[d].append(s.pdf_mp(w, d))
            seen_dps.append(mpmath.mp.dps)

    threads = [threading.Thread(target=work, args=(d,)) for d in (30, 60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mpmath.mp.dps == 15 and set(seen_dps) == {15}
    for d in (30, 60):
        for v in results[d]:
            assert abs(v - alone[d]) <= abs(alone[d]) * 10.0 ** (-d + 2)
    # and the float density agrees with the 60-digit value
    assert abs(float(s.pdf(w)) - float(alone[60])) < 1e-11 * float(alone[60])


def test_simulator_refuses_absurd_runs_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    one = lambda w: np.ones_like(w)  # noqa: E731
    rate = lambda w: 0.1 + 0 * w  # noqa: E731
    half = lambda w: 0.5 * w  # noqa: E731
    with pytest.raises(InvalidParameter, match="parameter n_losses="):
        simulate_window(one, rate, half, 1e15, rng=1)
    with pytest.raises(InvalidParameter, match="parameter n_batches="):
        simulate_window(one, rate, half, 1000, n_batches=0, rng=1)
    with pytest.raises(InvalidParameter, match="parameter n_batches="):
        simulate_window(one, rate, half, 1000, n_batches=10**9, rng=1)
    with pytest.raises(ResourceLimit, match="parameter points_per_decade="):
        simulate_window(one, rate, half, 10_000, points_per_decade=10**12, rng=1)
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", "1e9")  # 6e8 kept windows need 4.8 GB
    with pytest.raises(ResourceLimit, match="parameter keep_pre_loss="):
        simulate_window(one, rate, half, 6 * 10**8, keep_pre_loss=10**15, rng=1)


def test_numeric_solver_errors_renamed() -> None:
    # monotonicity lost to rounding far up: the solver's own check, shown as after_loss
    with pytest.raises(InvalidParameter, match="parameter after_loss="):
        solve_awp(a="log(1+w)", loss="1e-3*w", after_loss="w/(1+w)")


def test_far_cap_is_not_a_silent_answer() -> None:
    with pytest.raises(NotConverged):
        solve_protocol(newreno(1e-4, w_max=1e6))
