"""Every simulator's inputs guarded (issue 29, second round): tiny loads give the right answer
or a true refusal, sizes and work are refused up front with the largest value that fits, and
messages name what the user typed.

Each case compares with an independent value: the exact M/M/1, M/G/1-PS or two-queue values at
the load, a closed form of the window law (NewReno: E[W^2] = 2/p), an exact power-of-two time
scaling, or the limits recomputed from the documented constants.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from symq.cli import main
from symq.core.errors import InvalidParameter, NumericalFailure, ResourceLimit
from symq.core.registry import get_model
from symq.core.simrun import SIM_WORK_LIMIT
from symq.core.simstats import batch_means
from symq.meanfield.attained import simulate_attained
from symq.meanfield.attained.cavity import PROBE_TERMS_LIMIT
from symq.meanfield.simulation import simulate_jsq
from symq.routing.simulation import simulate_ps_queue


def _solve(model: str, **params: object) -> object:
    return get_model(model).run(params, rng=1)


def _cli(*args: str) -> tuple[int, str]:
    """``symq solve ARGS -q`` in a subprocess that must end within 10 s: its exit status and
    its one stderr line (a run that would take minutes fails here instead of hanging)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "symq", "solve", *args, "-q"],
                              check=False, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"symq solve {' '.join(args)} ran past 20 s")
    assert time.perf_counter() - start < 10
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return proc.returncode, lines[0]


# ------------------------------------------------------------------ tiny loads: right answers


def test_jsq_tiny_load_is_the_mm1_value() -> None:
    # N = 1, d = 1 is an M/M/1 queue: ET = 1/(1 - lam), EW = lam/(1 - lam), EQ = lam/(1 - lam);
    # before: ET = 0 (service times absorbed by a clock at 1e20), EW = ET - 1 = -1
    lam = 1e-15
    est = simulate_jsq(1, 1, lam, n_jobs=20_000, rng=1, level=0.99)
    assert est.ET.contains(1.0 / (1.0 - lam))
    assert est.EW.mean >= 0.0 and abs(est.EW.mean - lam / (1.0 - lam)) <= est.EW.half_width + 1e-12
    assert est.EQ.distance(lam / (1.0 - lam)) < 4


def test_jsq_sim_ew_is_never_negative() -> None:
    r = _solve("jsq-sim", N=10, d=2, lam=1e-15, n_jobs=20_000)
    assert r["EW"].mean >= 0.0 and r["EW"].low <= 1e-15 <= r["EW"].high + 1e-12
    assert r["ET"].contains(1.0) or r["ET"].distance(1.0) < 4


def test_jsq_sim_smallest_rates_end_in_one_clean_line() -> None:
    # before: a segmentation fault (exit 139)
    status, line = _cli("jsq-sim", "N=10", "d=2", "lam=1e-320")
    assert status == 2
    assert line.startswith("symq: error: parameter lam=1e-320") and "too small to simulate" in line
    assert "ET = E[S] = 1" in line


def test_attained_simulator_tiny_load_is_the_mm1_value() -> None:
    # one server, one probe: M/M/1 whatever the ranking; before: ET = 0
    lam = 1e-15
    est = simulate_attained(1, 1, lam, ([1.0], [[-1.0]]), np.arange(1.0, 31.0)[None, :], 1.0,
                            n_jobs=20_000, rng=2, level=0.99)
    assert est.ET.contains(1.0 / (1.0 - lam)) and est.EW.mean == 0.0


@pytest.mark.parametrize("lam, C, mean", [(1e-15, 1.0, 1.0), (5e299, 1.0, 1e-300),
                                          (1e-300, 1e-299, 1.0)])
def test_ps_queue_tiny_loads_and_scales(lam: float, C: float, mean: float) -> None:
    # M/G/1-PS: E[T] = mean/(C - lam mean) (insensitive); before: ET = 0 for the first two
    est = simulate_ps_queue(lam, C, "exp", mean=mean, n_jobs=20_000, rng=3, level=0.99)
    exact = mean / (C - lam * mean)
    assert est.ET.contains(exact) or est.ET.distance(exact) < 4
    assert est.ET.mean > 0 and np.isfinite(est.ET.half_width)


def test_dispatch_small_speeds_scale_exactly() -> None:
    # RND to two servers of speed s at load 1/2: two M/M/1 queues, ET = 1/(s (1 - 1/2)) = 2/s
    # (speeds outside [1e-100, 1e100] are refused by the speeds check, see test_speeds)
    s = 1e-90
    r = _solve("dispatch-sim", policy="rnd", m=2, rho=0.5, speeds=[s, s], n_jobs=200_000)
    assert r["ET"].contains(2.0 / s) or r["ET"].distance(2.0 / s) < 4
    unit = _solve("dispatch-sim", policy="lwl", m=2, rho=0.5, n_jobs=100_000)
    scaled = _solve("dispatch-sim", policy="lwl", m=2, rho=0.5, speeds=[2.0 ** -300] * 2,
                    n_jobs=100_000)
    assert scaled["ET"].mean == unit["ET"].mean * 2.0 ** 300  # the same run, times exactly scaled
    assert scaled["ET"].half_width == unit["ET"].half_width * 2.0 ** 300


def test_batch_means_of_huge_values() -> None:
    x = np.random.default_rng(0).exponential(1.0, 3000)
    ci, big = batch_means(x, 30), batch_means(x * 1e200, 30)
    assert big.mean == pytest.approx(ci.mean * 1e200, rel=1e-12)
    assert big.half_width == pytest.approx(ci.half_width * 1e200, rel=1e-12)
    # two batch means of +-8e307: t(0.975, 1) s/sqrt(2) = 12.7 x 8e307 overflows
    with pytest.raises(NumericalFailure, match="floating-point range"):
        batch_means([8e307, 8e307, -8e307, -8e307], 2)


def test_newreno_tiny_loss_probability() -> None:
    # E[W^2] = 2/p exactly (mean drift balance); before: "escaped ... unstable protocol" at
    # p = 1e-30 and below
    p = 1e-30
    r = _solve("window-sim", protocol="newreno", p=p, n_losses=100_000)
    assert not r["escaped"] and r["EW2"].distance(2.0 / p) < 4
    with pytest.raises(InvalidParameter, match=r"parameter p=1e-320 .*E\[W\^2\] would be about "
                                               r"1e320"):
        _solve("window-sim", protocol="newreno", p=1e-320, n_losses=100_000)
    # the analytic model: E[W^2] = 2/p = 2e320 overflows; before: exit 3, "or this is a bug"
    with pytest.raises(InvalidParameter,
                       match=r"parameter p=1e-320 .*E\[W\^2\] would be about 1e320"):
        _solve("awp", protocol="newreno", p=1e-320)


# ------------------------------------------------------------------ sizes and work up front


def test_mg1_sim_memory_guard_names_n_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    # 32 bytes a customer (4 float arrays): the largest run in 1e9 bytes is 31 250 000
    # customers; before: "out of memory" (exit 3) after trying to allocate
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", "1e9")
    with pytest.raises(ResourceLimit, match=r"parameter n_jobs=1000000000000 must be at most "
                                            r"31250000 "):
        _solve("mg1-sim", lam=0.5, n_jobs=10**12)


def test_jsq_sim_work_guard_names_d() -> None:
    # 10^6 departures x (d probes + 3 events) <= SIM_WORK_LIMIT: d <= 3997; before: minutes
    largest = int(SIM_WORK_LIMIT / 10**6 - 3)
    status, line = _cli("jsq-sim", "N=100000", "d=100000", "lam=0.5")
    assert status == 2 and line.startswith(f"symq: error: parameter d=100000 must be <= {largest} ")


def test_attained_guard_names_d() -> None:
    # 401 age layers x B=30 x d terms per evaluation <= PROBE_TERMS_LIMIT; before: minutes
    largest = int(PROBE_TERMS_LIMIT // (401 * 30))
    status, line = _cli("attained", "policy=LEW", "d=1000000", "lam=0.5", "scv=4")
    assert status == 2 and line.startswith(
        f"symq: error: parameter d=1000000 must be <= {largest} ")


@pytest.mark.parametrize("model, params", [
    ("mg1-sim", {"lam": 1 - 1e-16}),
    ("ps-sim", {"lam": 1 - 1e-16}),
    ("jsq-sim", {"N": 10, "d": 2, "lam": 1 - 1e-16}),
])
def test_loads_the_run_cannot_resolve_are_refused(model: str, params: dict) -> None:
    # relaxation ~ 2/(1 - rho)^2 = 1.6e32 jobs, far beyond a batch; before: a finite ET with an
    # interval around ~10^3 for an exact value of ~10^16; refused naming n_jobs and the run
    # needed: 64 relaxation times per batch
    with pytest.raises(InvalidParameter, match=r"parameter n_jobs=\d+ must be >= ") as caught:
        _solve(model, **params)
    needed = float(caught.value.domain.split()[1])
    assert needed >= 64 * 30 * 2 / (2.3e-16) ** 2


# ------------------------------------------------------------------ messages as typed


def test_dispatch_messages_name_what_was_typed() -> None:
    # before: "parameter m=2 must be <= 0" and "rho=0.5 must be <= -1053"
    with pytest.raises(InvalidParameter, match=rf"parameter n_jobs=1000000000000 must be <= "
                                               rf"{int(4e9 // 2)} with m=2"):
        _solve("dispatch-sim", policy="jsq", m=2, rho=0.5, n_jobs=10**12)
    with pytest.raises(InvalidParameter, match=r"parameter n_batches=1000000000 must be <= 9000 "):
        _solve("dispatch-sim", policy="jsq", m=2, rho=0.5, n_batches=10**9)


def test_seed_message_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    # before: "parameter rng=-5 must be None, a nonnegative integer seed, ..."
    assert main(["solve", "mg1-sim", "lam=0.5", "--seed", "-5", "-q"]) == 2
    line, = capsys.readouterr().err.strip().splitlines()
    assert line == "symq: error: parameter --seed=-5 must be an integer >= 0"


def test_awp_stable_protocol_beyond_the_solver_is_not_called_unstable() -> None:
    # HighSpeed at p = 1e-300: lam/a ~ w^0.2, Lambda(inf) = inf, so stable; the numerical
    # solver's window range cannot hold it; before: "... the window escapes to infinity"
    with pytest.raises((InvalidParameter, NumericalFailure), match=r"is stable"):
        _solve("awp", protocol="highspeed", p=1e-300)
    with pytest.raises(InvalidParameter, match=r"parameter w_max=1e-300 must be > 1e-12"):
        _solve("window-sim", protocol="newreno", p=0.01, w_max=1e-300, n_losses=10_000)


def test_size_law_too_variable_for_the_run_names_scv() -> None:
    # relaxation ~ (1 + scv)/(1 - rho)^2 = 4e10 jobs at rho = 1/2, scv = 1e10: 64 of them in
    # each of 40 batches, n_jobs >= 64 * 40 * 4e10 = 1.024e14;
    # before: EW = 0.17 +- 0.001 against the exact P-K value 5e9
    with pytest.raises(InvalidParameter, match=r"parameter n_jobs=1000000 must be >= 1\.024e\+14 "):
        _solve("mg1-sim", lam=0.5, sizes="h2", scv=1e10)


def test_attained_simulator_guards() -> None:
    # 10^5 jobs x (d probes + 2 log2(N + 1) heap steps + 4) <= SIM_WORK_LIMIT
    sq = np.arange(1.0, 31.0)[None, :]
    exp = ([1.0], [[-1.0]])
    largest = int(SIM_WORK_LIMIT / 100_000 - 2 * np.log2(11) - 4)
    with pytest.raises(InvalidParameter, match=rf"parameter d=1000000 must be <= {largest} "):
        simulate_attained(10, 10**6, 0.5, exp, sq, 1.0, n_jobs=100_000, rng=1)
    with pytest.raises(InvalidParameter, match=r"parameter lam=1e-320 must be >= "):
        simulate_attained(10, 2, 1e-320, exp, sq, 1.0, n_jobs=100_000, rng=1)


def test_dispatch_unresolvable_speeds_are_not_an_answer() -> None:
    # JSQ (blind to speeds) with a server 1e90 times slower: its jobs outlast the run, and the
    # stationary ET (about 2 + 600 by Little's law on ~300 jobs parked there) is not resolved;
    # before: exit 0 with ET = 8e85 +- 1.4e86
    with pytest.raises(NumericalFailure, match=r"did not resolve ET: .* reaches below 0"):
        _solve("dispatch-sim", policy="jsq", m=2, rho=0.5, speeds=[1.0, 1e-90], n_jobs=100_000)
    # RND sends that server 1e-90 of the jobs: two M/M/1 queues at load 1/2, ET = 2
    r = _solve("dispatch-sim", policy="rnd", m=2, rho=0.5, speeds=[1.0, 1e-90], n_jobs=200_000)
    assert r["ET"].contains(2.0) or r["ET"].distance(2.0) < 4


def test_window_floor_near_the_smallest_double_is_simulated():
    """A floor w_min = 1e-300 (found by the long fuzz run: the table span overflowed) changes
    nothing for NewReno at p = 1e-4: E[W] = 1.30983/sqrt(p) (the Ott-Kemperman-Mathis
    constant of the square-root law, quoted by Altman et al., INFOCOM 2005) and E[W^2] = 2/p
    lie in the run's intervals (95 %, widened by the constant's last digit)."""
    values = _solve("window-sim", protocol="newreno", p=1e-4, w_min=1e-300).values
    for key, exact, slack in (("EW", 1.30983 / 1e-2, 1e-3), ("EW2", 2 / 1e-4, 0.0)):
        ci = values[key]
        assert abs(ci.mean - exact) <= ci.half_width + slack, (key, ci, exact)


@pytest.mark.parametrize("S", ["100", "900", "639126"])
def test_highspeed_family_beyond_floating_point_is_one_line_naming_S(S):
    """At p = 1e-4 the family's window C p^-S passes 1e308 (S = 100), or its law's q-series
    would cancel hundreds of digits (S = 900: minutes; S = 639126: mpmath gave up): each is
    refused up front, naming S, within the bound (was: an internal error or a hang)."""
    code, line = _cli("awp", "protocol=highspeed-family", "p=1e-4", f"S={S}")
    assert code == 2 and f"S={S}" in line, line
