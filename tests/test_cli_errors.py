"""The CLI's error contract: one line, exit 2 for bad input, 3 for run-time failures, 1 for bugs."""

from __future__ import annotations

import time

import pytest

from symq.cli import main
from symq.core import registry
from symq.core.errors import NotConverged, TruncationError
from symq.core.parameters import Parameter, PositiveReal


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def failing_models():
    """Toy models whose solvers fail in each documented way (a bug, non-convergence, truncation)."""

    def not_converged(x):
        raise NotConverged("toy iteration", 0.5, 1e-10, 200, advice="raise max_iter")

    def truncated(x):
        raise TruncationError("toy solver", "levels", 0.01, 1e-10, 400, advice="lower x")

    def bug(x):
        return {}["no such key"]

    def exhausted(x):
        raise MemoryError

    names = []
    for name, solve in [("toy-nc", not_converged), ("toy-trunc", truncated), ("toy-bug", bug),
                        ("toy-oom", exhausted)]:
        registry.register_model(registry.ModelSpec(
            name, "toy", (Parameter("x", PositiveReal(), typical=1.0),), solve))
        names.append(name)
    yield
    for name in names:
        registry._MODELS.pop(name, None)


def test_run_time_failures_exit_3_with_one_line(capsys, failing_models):
    code, out, err = run(capsys, "solve", "toy-nc", "x=1")
    assert code == 3 and out == ""
    assert one_line(err) == ("symq: error: toy iteration did not converge: residual 0.5 > "
                             "tolerance 1e-10 after 200 iterations; raise max_iter")
    code, _, err = run(capsys, "solve", "toy-trunc", "x=1")
    assert code == 3 and "leaves out 0.01 > tolerance 1e-10; lower x" in one_line(err)
    code, _, err = run(capsys, "solve", "toy-oom", "x=1")
    assert code == 3 and "out of memory" in one_line(err)


def test_a_bug_is_one_line_exit_1_and_traceback_on_request(capsys, failing_models, monkeypatch):
    monkeypatch.delenv("SYMQ_DEBUG", raising=False)
    code, _, err = run(capsys, "solve", "toy-bug", "x=1")
    assert code == 1
    assert one_line(err).startswith("symq: internal error: KeyError:")
    monkeypatch.setenv("SYMQ_DEBUG", "1")
    code, _, err = run(capsys, "solve", "toy-bug", "x=1")
    assert code == 1 and "Traceback" in err


def test_unknown_parameter_shows_what_was_typed(capsys):
    code, _, err = run(capsys, "solve", "supermarket", "d=2", "lam=0.5", "foo=3")
    assert code == 2
    assert one_line(err) == ("symq: error: parameter foo='3' must be one of the parameters "
                             "d, lam (model supermarket has no parameter foo)")
    code, _, err = run(capsys, "solve", "supermarket", "d=2", "Lam=0.5")
    assert code == 2 and "did you mean lam?" in one_line(err)
    code, _, err = run(capsys, "solve", "supermarket", "lam=0.5")
    assert code == 2 and one_line(err) == ("symq: error: parameter d=<missing> must be given: "
                                           "an integer >= 1")
    code, _, err = run(capsys, "solve", "supermarket", "d=2", "lam=")
    assert code == 2 and "lam=''" in one_line(err)


def test_derive_into_a_missing_folder_fails_before_deriving(capsys, tmp_path):
    target = tmp_path / "no" / "such" / "folder" / "d.md"
    start = time.perf_counter()
    code, out, err = run(capsys, "derive", "ps-routing", "-o", str(target))
    assert code == 3 and out == ""
    assert "-o" in one_line(err) and "does not exist" in err
    assert time.perf_counter() - start < 2.0  # refused before the derivation ran
    code, _, err = run(capsys, "derive", "ps-routing", "-o", str(tmp_path))
    assert code == 3 and "is a folder" in one_line(err)


def test_report_where_a_file_stands_fails_before_the_checks(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    start = time.perf_counter()
    code, out, err = run(capsys, "check", "ps-routing", "--report", str(blocker / "r"))
    assert code == 3 and out == ""
    assert one_line(err).startswith("symq: error: --report")
    assert time.perf_counter() - start < 2.0  # no claim ran


@pytest.mark.parametrize("address", ["tcp//127.0.0.1:1", "tcp://127.0.0.1", "tcp://:8786",
                                     "tcp://host:99999", "http://127.0.0.1:8786", "127.0.0.1",
                                     "tcp://a b:1"])
def test_malformed_scheduler_address_is_bad_input(capsys, address):
    code, _, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2",
                       "--scheduler", address)
    assert code == 2 and "--scheduler" in one_line(err)


def test_unreachable_scheduler_fails_in_the_time_asked(capsys):
    start = time.perf_counter()
    code, _, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2",
                       "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "1")
    elapsed = time.perf_counter() - start
    assert code == 3 and "cannot reach the Dask scheduler" in one_line(err)
    assert elapsed < 15.0


def test_bad_sweep_options(capsys):
    code, _, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2",
                       "--connect-timeout", "0")
    assert code == 2 and "--connect-timeout" in one_line(err)
    code, _, err = run(capsys, "sweep", "supermarket", "d=2", "lam=0.1:0.5:2", "--processes", "0")
    assert code == 2 and "--processes" in one_line(err)


@pytest.mark.parametrize("argv, typed", [
    (["mg1-sim", "lam=0.5", "n_jobs=1e12"], "n_jobs=1e12 must be at most"),
    (["dispatch-sim", "policy=rnd", "m=2", "rho=0.5", "n_batches=1e9"], "n_batches=1e9 must be"),
    (["ps-routing", "C=1e308,2,1", "w=1,2,4", "rho=1"], "C=1e308,2,1 must be"),
    (["dispatch-sim", "policy=rnd", "m=2", "rho=0.5", "speeds=1e-300,1e-300"],
     "speeds=1e-300,1e-300 must be"),
])
def test_a_refused_value_is_shown_as_typed(capsys, argv, typed):
    """The line quotes the value as the user wrote it, not the number or list it was read as."""
    code, out, err = run(capsys, "solve", *argv)
    assert code == 2 and out == ""
    assert typed in one_line(err)
