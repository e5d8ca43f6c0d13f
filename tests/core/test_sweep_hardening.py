"""Sweeps that never hang: the point budget, Dask failures, process-pool task errors.

Each case ends within seconds with a result or one line and its documented exit status.  The
Dask cases use short deadlines; the "lost scheduler" and "dead worker" cases run the cluster in
a subprocess (``SERVER``).
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

from symq.cli import main
from symq.core.errors import InvalidParameter, ResourceLimit, SchedulerUnreachable
from symq.core.sweep import (
    MAX_POINTS,
    SweepIncomplete,
    SweepTaskError,
    axis_size,
    grid,
    parse_axis,
    sweep,
)
from symq.core.sweep_dask import check_scheduler_address, quiet_distributed

# ------------------------------------------------------------------ module-level tasks


def slow_identity(point: dict, rng: np.random.Generator) -> int:
    """A task of 0.1 s returning its point's x."""
    time.sleep(0.1)
    return point["x"]


def refuse_three(point: dict, rng: np.random.Generator) -> int:
    """Bad input at x = 3 (InvalidParameter does not survive pickling by itself)."""
    if point["x"] == 3:
        raise InvalidParameter("n_jobs", 1e12, "at most 1e9")
    return point["x"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def within(seconds: float, function, *args, **kwargs):
    """Call ``function`` in a thread; fail (rather than hang) if it takes over ``seconds``."""
    box: dict = {}

    def target():
        try:
            box["value"] = function(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    start = time.perf_counter()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value"), time.perf_counter() - start


# ------------------------------------------------------------------ the point budget


def test_axis_size_counts_from_the_text_only() -> None:
    assert axis_size("0.1:0.9:100000000") == 10**8
    assert axis_size("0.1:0.9:100000000000000000000:log") == 10**20
    assert axis_size("1,2,3,5") == 4
    with pytest.raises(InvalidParameter, match="not an integer"):
        axis_size("0:1:1e3")


def test_parse_axis_refuses_a_huge_axis_before_building_it() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ResourceLimit, match=r"100000000000000000000 points"):
            parse_axis("0.1:0.9:100000000000000000000")
        with pytest.raises(ResourceLimit, match=rf"at most {MAX_POINTS} points"):
            parse_axis("0.1:0.9:100000000")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # 10^8 floats would be 800 MB
    assert len(parse_axis("0:1:20001", max_points=None)) == 20001


@pytest.mark.parametrize("n", ["100000000", "100000000000000000000"])
def test_cli_sweep_refuses_a_grid_over_the_budget(capsys, n) -> None:
    start = time.perf_counter()
    code, out, err = run(capsys, "sweep", "supermarket", "d=2", f"lam=0.1:0.9:{n}")
    assert time.perf_counter() - start < 2.0
    assert code == 2 and out == ""
    line = err.strip()
    assert "\n" not in line and line.startswith("symq: error:")
    assert f"lam='0.1:0.9:{n}'" in line and f"{n} points" in line and "10000" in line
    assert "--max-points" in line


def test_cli_budget_is_the_product_over_axes_and_max_points_raises_it(capsys) -> None:
    code, _, err = run(capsys, "sweep", "supermarket", "d=2:3:2", "lam=0.1:0.9:6000")
    assert code == 2 and f"{2 * 6000} points" in err and "lam='0.1:0.9:6000'" in err
    code, _, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.5:0.9:5",
                       "--max-points", "4")
    assert code == 2 and "at most 4 points" in err
    code, out, _ = run(capsys, "sweep", "supermarket", "d=2", "lam=0.5:0.9:5",
                       "--max-points", "5", "--processes", "1", "--format", "csv")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 6
    # P(wait) = lam^d for the supermarket model (Mitzenmacher 2001): 0.5^2 = 0.25 in row 1
    header = lines[0].split(",")
    assert float(lines[1].split(",")[header.index("P_wait")]) == pytest.approx(0.25)
    code, _, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.5:0.9:5",
                       "--max-points", "0")
    assert code == 2 and "--max-points=0" in err


def test_cli_a_raised_max_points_is_still_bounded_by_memory(capsys, monkeypatch) -> None:
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(10**9))
    start = time.perf_counter()
    code, out, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.9:100000000",
                         "--max-points", "100000000")
    assert time.perf_counter() - start < 2.0
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "lam='0.1:0.9:100000000'" in err and "a grid of 100000000 points" in err


# ------------------------------------------------------------------ process pools


def test_process_pool_reports_the_failing_points_own_error() -> None:
    points = grid(x=list(range(6)))
    with pytest.raises(SweepTaskError) as info:
        sweep(refuse_three, points, processes=2, seed=0)
    error = info.value
    assert error.point == {"x": 3} and error.index == 3
    assert error.exit_status == 2
    assert "InvalidParameter: parameter n_jobs=1000000000000.0 must be at most 1e9" in str(error)
    assert "BrokenProcessPool" not in str(error)
    # the pool still works afterwards: a clean sweep gives its results
    assert sweep(refuse_three, grid(x=[0, 1, 2]), processes=2).results == [0, 1, 2]


def test_cli_process_pool_exits_with_the_points_status(capsys) -> None:
    code, _, err = run(capsys, "sweep", "jsq-sim", "N=1000000000000", "d=2", "lam=0.5:0.6:2",
                       "--processes", "2")
    line = err.strip()
    assert code == 2 and "\n" not in line
    assert "ResourceLimit: parameter N=1000000000000" in line and "failed at point {'N'" in line


# ------------------------------------------------------------------ Dask: addresses


@pytest.mark.parametrize("address", ["tls://127.0.0.1:8786", "inproc://192.0.2.2/1/1",
                                     "ucx://127.0.0.1:8786", "ws://127.0.0.1:8786"])
def test_cli_unsupported_protocols_are_refused_up_front(capsys, address) -> None:
    code, out, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2",
                         "--scheduler", address)
    line = err.strip()
    assert code == 2 and out == "" and "\n" not in line
    assert f"--scheduler={address!r}" in line and "tcp://host:port or host:port" in line


def test_host_port_means_tcp() -> None:
    assert check_scheduler_address("127.0.0.1:8786") == "tcp://127.0.0.1:8786"
    assert check_scheduler_address("[::1]:8786") == "tcp://[::1]:8786"
    with pytest.raises(InvalidParameter, match="tls:// protocol is not supported"):
        check_scheduler_address("tls://127.0.0.1:8786")


# ------------------------------------------------------------------ Dask: no answer, no workers


def test_silent_listener_is_not_a_dask_scheduler(capsys) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    held: list = []

    def accept():
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]
    import distributed  # noqa: F401  (its import sets its loggers' levels)

    levels = {n: logging.getLogger(n).level for n in list(logging.root.manager.loggerDict)
              if n.startswith("distributed")}
    assert levels["distributed.client"] < logging.CRITICAL
    try:
        (code, out, err), seconds = within(
            10, run, capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2",
            "--scheduler", f"127.0.0.1:{port}", "--connect-timeout", "1")
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert code == 3 and out == ""
    assert err.count("\n") == 1 and "is not a Dask scheduler" in err
    assert seconds < 4
    assert {n: logging.getLogger(n).level for n in levels} == levels


def test_http_server_is_not_a_dask_scheduler() -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with pytest.raises(SchedulerUnreachable, match="is not a Dask scheduler"):
            within(10, sweep, slow_identity, grid(x=[1, 2]),
                   scheduler=f"tcp://127.0.0.1:{httpd.server_address[1]}", connect_timeout=1)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def empty_cluster():
    from dask.distributed import LocalCluster

    with quiet_distributed():
        cluster = LocalCluster(n_workers=0, processes=False, protocol="tcp://",
                               host="127.0.0.1", dashboard_address=None)
    yield cluster
    with quiet_distributed():
        cluster.close()


def test_scheduler_without_workers_ends_with_no_workers(capsys, empty_cluster) -> None:
    address = empty_cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    (code, out, err), seconds = within(
        10, run, capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2",
        "--scheduler", address, "--connect-timeout", "1")
    assert code == 3 and out == ""
    assert err.count("\n") == 1 and "has no workers" in err and address in err
    assert seconds < 5


def test_library_no_workers_from_a_cluster_object(empty_cluster) -> None:
    with pytest.raises(SchedulerUnreachable, match="has no workers"):
        within(10, sweep, slow_identity, grid(x=[1, 2]), scheduler=empty_cluster,
               connect_timeout=1)


# ------------------------------------------------------------------ Dask: losing the cluster


#: A one-worker cluster on 127.0.0.1 (not importing this test module, for a quick start); once
#: six tasks have run, the scheduler dies (mode "scheduler") or its only worker leaves (mode
#: "worker").  The module MODULE with the task slow_identity is registered so that
#: the tasks pickled here as MODULE.slow_identity unpickle there.
SERVER = """
import logging, os, sys, time, types
logging.disable(logging.CRITICAL)
mode, module = sys.argv[1], sys.argv[2]
def slow_identity(point, rng):
    time.sleep(0.1)
    return point["x"]
parts = module.split(".")
for i in range(1, len(parts) + 1):
    sys.modules[".".join(parts[:i])] = types.ModuleType(".".join(parts[:i]))
sys.modules[module].slow_identity = slow_identity
import symq.core.sweep  # the module of the task wrapper, imported before the clock starts
from dask.distributed import LocalCluster
cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                       host="127.0.0.1", dashboard_address=None)
print(cluster.scheduler_address, flush=True)
def done():  # results held by the scheduler
    return sum(task.state == "memory" for task in list(cluster.scheduler.tasks.values()))
while done() < 6:
    time.sleep(0.01)
if mode == "scheduler":
    os._exit(0)
cluster.scale(0)
time.sleep(30)
"""


@pytest.fixture(scope="module")
def servers():
    """Both servers, started together (their start-up is most of these tests' time)."""
    started = {mode: subprocess.Popen([sys.executable, "-c", SERVER, mode,
                                       slow_identity.__module__],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True)
               for mode in ("scheduler", "worker")}
    yield started
    for server in started.values():
        server.kill()
        server.wait(5)


@pytest.mark.parametrize("mode, problem", [("scheduler", "lost the Dask scheduler"),
                                           ("worker", "no workers left")])
def test_losing_the_cluster_keeps_the_finished_points(capfd, servers, mode, problem) -> None:
    server = servers[mode]
    address = server.stdout.readline().strip()
    assert address.startswith("tcp://"), address
    with pytest.raises(SweepIncomplete) as info:
        within(12, sweep, slow_identity, grid(x=list(range(60))), scheduler=address,
               connect_timeout=1)
    error = info.value
    partial = error.partial
    assert 1 <= len(partial) < 60 and error.lost == 60 - len(partial)
    assert partial.results == [p["x"] for p in partial.points]  # finished points, exact
    assert f"{error.lost} of 60 points lost" in partial.incomplete  # why the others are missing
    assert str(error).startswith(partial.incomplete)
    assert problem in str(error) and f"{error.lost} of 60 points lost" in str(error)
    assert error.exit_status == 3
    assert capfd.readouterr().err == ""  # distributed's log lines and tracebacks silenced


def test_cli_prints_the_finished_points_then_one_line(capsys, monkeypatch) -> None:
    from symq.core.sweep import SweepResult

    sweep_module = sys.modules["symq.core.sweep"]  # symq.core.sweep is also the function

    def lose_half(func, points, **kwargs):
        done = points[:2]
        partial = SweepResult(done, [func(p, np.random.default_rng(0)) for p in done], 0.1,
                              "dask")
        raise SweepIncomplete("lost the Dask scheduler at tcp://127.0.0.1:1 for 1 s: 2 of 4 "
                              "points lost; the 2 finished points are kept", partial, 2)

    monkeypatch.setattr(sweep_module, "sweep", lose_half)
    code, out, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.5:0.8:4",
                         "--scheduler", "127.0.0.1:1", "--json")
    assert code == 3 and err.count("\n") == 1 and "2 of 4 points lost" in err
    data = json.loads(out)
    assert data["complete"] is False and len(data["points"]) == 2
    # P(wait) = lam^d (Mitzenmacher 2001) at the two finished points lam = 0.5, 0.6
    assert [p["results"]["P_wait"] for p in data["points"]] == pytest.approx([0.25, 0.36])

