"""The symq command line: list, solve, derive, check, sweep, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from symq.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_models_and_papers(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0 and "ps-routing" in out and "Papers" in out
    code, out, _ = run(capsys, "list", "--json")
    data = json.loads(out)
    assert any(m["name"] == "ps-routing" for m in data["models"])
    assert any(p["key"] == "ps-routing" for p in data["papers"])


def test_solve_json_satisfies_kkt_and_wardrop_conditions(capsys):
    code, out, _ = run(capsys, "solve", "ps-routing", "C=4,2,1", "w=1,2,4", "rho=5", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["model"] == "ps-routing" and data["params"]["rho"] == 5
    C, w, rho = np.array([4.0, 2, 1]), np.array([1.0, 2, 4]), 5.0
    opt, ne = data["results"]["optimal"], data["results"]["equilibrium"]
    for alloc in (opt, ne):
        x = np.array(alloc["loads"])
        assert x.sum() == pytest.approx(rho, rel=1e-12)
        assert np.all(x >= 0) and np.all(x < C)
        assert alloc["cost"] == pytest.approx(float(np.sum(w * x / (C - x))), rel=1e-12)
        assert alloc["active"] == [int(j) for j in np.flatnonzero(x > 0)]
    # social optimum: equal marginal costs w C/(C-x)^2 on used servers (KKT, independent check)
    x = np.array(opt["loads"])
    used = x > 0
    marginal = w * C / (C - x) ** 2
    assert np.ptp(marginal[used]) < 1e-9 * marginal[used].max()
    assert np.all(w[~used] / C[~used] >= marginal[used].max() * (1 - 1e-12))
    # Wardrop: equal average costs w/(C-x) on used servers
    x = np.array(ne["loads"])
    used = x > 0
    average = w / (C - x)
    assert np.ptp(average[used]) < 1e-9 * average[used].max()
    assert np.all(w[~used] / C[~used] >= average[used].max() * (1 - 1e-12))
    assert data["results"]["poa"] == pytest.approx(ne["cost"] / opt["cost"], rel=1e-12)
    assert data["results"]["poa"] >= 1


def test_solve_plain_text(capsys):
    code, out, _ = run(capsys, "solve", "ps-routing", "C=1,1", "w=1,1", "rho=1")
    assert code == 0 and "poa" in out and "optimal" in out


@pytest.mark.parametrize("argv, words", [
    (["solve", "ps-routing", "C=4,2,1", "w=1,2,4", "rho=7"], ["rho", "7"]),
    (["solve", "ps-routing", "C=4,-2,1", "w=1,2,4", "rho=1"], ["C", "positive"]),
    (["solve", "ps-routing", "C=4,2", "w=1,2,4", "rho=1"], ["length"]),
    (["solve", "ps-routing", "C=4,2,1", "w=1,2,4"], ["rho", "missing"]),
    (["solve", "ps-routing", "C=4,2,1", "w=1,2,4", "rho"], ["key=value"]),
    (["solve", "ps-routing", "C=4,2,1", "w=1,2,4", "rho=1", "k=3"],
     ["has no parameter k", "k='3'"]),
    (["solve", "nosuchmodel"], ["valid choices", "ps-routing"]),
    (["derive", "nosuchpaper"], ["valid choices", "ps-routing"]),
    (["check", "nosuchpaper"], ["valid choices", "ps-routing"]),
    (["sweep", "ps-routing", "C=4,2,1", "w=1,2,4", "rho=1:2"], ["rho", "a:b:n"]),
])
def test_bad_input_gives_one_line_and_exit_2(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symq: error:")
    for word in words:
        assert word in lines[0]


def test_argparse_errors_are_one_line():
    proc = subprocess.run([sys.executable, "-m", "symq", "frobnicate"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_derive_prints_markdown(capsys):
    code, out, _ = run(capsys, "derive", "ps-routing")
    assert code == 0 and out.startswith("# ") and "$$" in out


def test_sweep_serial_json(capsys):
    code, out, _ = run(capsys, "sweep", "ps-routing", "C=1,1", "w=1,1", "rho=0.5:1.5:3",
                       "--processes", "1", "--json")
    assert code == 0
    data = json.loads(out)
    rhos = [p["params"]["rho"] for p in data["points"]]
    assert rhos == [0.5, 1.0, 1.5]
    # two identical servers: both solutions split evenly, so PoA = 1 and J = 2 (rho/2)/(1 - rho/2)
    for p in data["points"]:
        r = p["params"]["rho"]
        assert p["results"]["poa"] == pytest.approx(1.0, rel=1e-12)
        assert p["results"]["J_opt"] == pytest.approx(2 * (r / 2) / (1 - r / 2), rel=1e-12)


def test_check_on_a_dask_cluster_gives_the_serial_verdicts(capsys, tmp_path, monkeypatch):
    """``symq check --scheduler``: the workers build the claims from the command line (a
    relative path made absolute: the worker's directory differs) and give the serial verdicts,
    values included."""
    from pathlib import Path

    from dask.distributed import LocalCluster  # part of the test extra

    source = Path(__file__).resolve().parents[1] / "examples" / "claims" / "own_ctmc.toml"
    (tmp_path / "own.toml").write_text(source.read_text())
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "check", "own.toml", "--json")
    serial = json.loads(out)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                      host="127.0.0.1", dashboard_address=":0") as cluster:
        code2, out2, _ = run(capsys, "check", "own.toml", "--json", "--scheduler",
                             cluster.scheduler_address)
    assert code == code2 == 0
    dask = json.loads(out2)
    assert [(v["claim"], v["status"], v["max_error"]) for v in dask] == \
        [(v["claim"], v["status"], v["max_error"]) for v in serial]
    code, _, err = run(capsys, "check", "own.toml", "--scheduler", "ws://h:1")
    assert code == 2 and "--scheduler" in err
    code, _, err = run(capsys, "check", "own.toml", "--scheduler", "127.0.0.1:9", "-j", "2")
    assert code == 2 and "-j" in err


def test_sweep_on_a_dask_cluster(capsys):
    from dask.distributed import LocalCluster  # part of the test extra

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                      host="127.0.0.1", dashboard_address=":0") as cluster:  # tcp: the CLI's
        code, out, _ = run(capsys, "sweep", "ps-routing", "C=2,1", "w=1,1", "rho=0.5:2.5:5",
                           "--scheduler", cluster.scheduler_address, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["backend"] == "dask" and len(data["points"]) == 5
    serial = [main(["sweep", "ps-routing", "C=2,1", "w=1,1", "rho=0.5:2.5:5", "--processes", "1",
                    "--json"])]
    out2, _ = capsys.readouterr()
    assert serial == [0]
    assert json.loads(out2)["points"] == data["points"]


@pytest.fixture
def toy_papers():
    from symq.core import registry
    from symq.core.claims import Claim

    def claims():
        return [
            Claim("true", "toy", "1 = 1", lambda p: 1.0, lambda p: 1.0, [{}]),
            Claim("false", "toy", "1 = 2", lambda p: 1.0, lambda p: 2.0, [{"a": 1}]),
        ]

    def crashing():
        return [Claim("bug", "toy", "x", lambda p: 1 / 0, lambda p: 1.0, [{}])]

    registry.register_paper(registry.PaperSpec("toy-findings", "Toy", "nobody", claims))
    registry.register_paper(registry.PaperSpec("toy-bug", "Toy bug", "nobody", crashing))
    yield
    registry._PAPERS.pop("toy-findings", None)
    registry._PAPERS.pop("toy-bug", None)


def test_check_exits_4_on_an_unexpected_failure_and_1_on_a_crash(capsys, toy_papers, tmp_path):
    code, out, _ = run(capsys, "check", "toy-findings", "--json")
    assert code == 4  # "false" fails although it is expected to hold
    verdicts = {v["claim"]: v for v in json.loads(out)}
    assert verdicts["true"]["status"] == "holds"
    assert verdicts["false"]["status"] == "fails" and verdicts["false"]["max_error"] == 0.5
    code, out, err = run(capsys, "check", "toy-bug", "--report", str(tmp_path))
    assert code == 1 and "internal error" in out and "ZeroDivisionError" in err
    report = (tmp_path / "report.md").read_text()
    assert "| toy-bug | bug | *inconclusive*" in report


def test_check_ps_routing_every_claim_holds_and_json_parses(capsys, tmp_path):
    code, out, _ = run(capsys, "check", "ps-routing", "--json", "--report", str(tmp_path))
    assert code == 0
    verdicts = json.loads(out)
    assert len(verdicts) >= 10
    keys = {"paper", "claim", "status", "max_error", "evidence", "detail", "seconds"}
    assert all(keys <= set(v) for v in verdicts)
    not_holding = [(v["claim"], v["detail"]) for v in verdicts if v["status"] != "holds"]
    assert not not_holding
    evidence = {e.strip() for v in verdicts for e in v["evidence"].split(",")}
    assert {"numeric", "exact", "symbolic", "simulation"} <= evidence
    report = (tmp_path / "report.md").read_text()
    assert report.count("| ps-routing |") == len(verdicts) and "$$" in report
    page = (tmp_path / "index.html").read_text()       # its HTML twin: one row per claim
    assert page.count('<tr class="holds">') == len(verdicts) and "<math" in page
    figures = sorted(tmp_path.glob("*.png"))           # embedded, when matplotlib is there
    assert page.count("data:image/png;base64,") == len(figures)


def test_derive_accepts_a_model_name(capsys):
    code, by_model, _ = run(capsys, "derive", "dispatch")
    assert code == 0
    code, by_paper, _ = run(capsys, "derive", "hyytia-righter")
    assert by_model == by_paper and "Bellman" in by_model


def test_solve_model_help_lists_that_models_parameters(capsys):
    from symq.core import registry

    for name, model in registry.models().items():
        for command in ("solve", "sweep"):
            code, out, _ = run(capsys, command, name, "--help")
            assert code == 0 and out.startswith(f"usage: symq {command} {name} ")
            for p in model.parameters:
                line = next((ln for ln in out.splitlines()
                             if ln.startswith(f"  {p.name} ")), "")
                assert p.domain.describe() in line, (name, p.name)
                assert ("required" in line) == p.required, (name, p.name)
    # the example line of the help runs as printed
    code, out, _ = run(capsys, "solve", "dispatch", "--help")
    example = out.strip().splitlines()[-1]
    assert example.startswith("example: symq solve dispatch ")
    argv = example.split()[2:]
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0 and json.loads(out)["model"] == "dispatch"


def test_solve_help_without_a_model_and_a_missing_model(capsys):
    code, out, _ = run(capsys, "solve", "--help")
    assert code == 0 and "MODEL" in out and "--json" in out
    code, _, err = run(capsys, "solve")
    assert code == 2 and "MODEL" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "sweep", "dispatch")
    assert code == 2 and "at least one parameter assignment" in err
    code, _, err = run(capsys, "solve", "nosuch", "--help")
    assert code == 2 and "unknown model 'nosuch'" in err


def test_sweep_csv_is_tidy_and_holds_the_closed_form(capsys):
    import csv
    import io

    code, out, _ = run(capsys, "sweep", "supermarket", "lam=0.1:0.9:9", "d=2", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["lam"] for r in rows] == [f"0.{k}" for k in range(1, 10)]   # as typed
    assert all(r["d"] == "2" for r in rows)
    for r in rows:      # JSQ(2) mean-field: E[T] = sum_k lam^(d^k - d)/(d - 1) (Mitzenmacher)
        lam = float(r["lam"])
        exact = sum(lam ** (2 ** k - 2) for k in range(1, 60))
        assert float(r["ET"]) == pytest.approx(exact, rel=1e-9)


def test_sweep_keeps_the_intervals_of_simulated_outputs(capsys):
    """Every simulated key carries its half-width, level, lo and hi in CSV and JSON; the 99.9%
    interval of the M/G/1 simulation holds the exact Pollaczek-Khinchine mean (one seed)."""
    import csv
    import io

    argv = ("sweep", "mg1-sim", "lam=0.5,0.7", "sizes=exp,det", "n_jobs=200000",
            "level=0.999", "--seed", "3")
    code, out, _ = run(capsys, *argv, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["sizes"], r["lam"]) for r in rows] == [          # list axes, the first outer
        ("exp", "0.5"), ("det", "0.5"), ("exp", "0.7"), ("det", "0.7")]
    for r in rows:
        assert float(r["EW_level"]) == 0.999 and float(r["ET_level"]) == 0.999
        assert float(r["EW_lo"]) <= float(r["EW_exact"]) <= float(r["EW_hi"])
        assert float(r["EW_hi"]) - float(r["EW_lo"]) == pytest.approx(
            2 * float(r["EW_half_width"]), rel=1e-12)
    code, out, _ = run(capsys, "sweep", "jsq-sim", "N=20", "d=2", "lam=0.5,0.6",
                       "n_jobs=50000", "--json")
    results = [p["results"] for p in json.loads(out)["points"]]
    for key in ("ET", "EW", "EQ"):
        assert all({f"{key}_half_width", f"{key}_level", f"{key}_lo", f"{key}_hi"} <= set(r)
                   for r in results)


def test_sweep_lists_integer_axes_and_keeps_vectors_whole(capsys):
    code, out, _ = run(capsys, "sweep", "supermarket", "d=2,3", "lam=0.5", "--json")
    assert code == 0
    points = json.loads(out)["points"]
    assert [p["params"]["d"] for p in points] == [2, 3]
    for p in points:       # the mean-field chance to wait is lam^d (Mitzenmacher 2001)
        assert p["results"]["P_wait"] == pytest.approx(0.5 ** p["params"]["d"], rel=1e-12)
    from symq.cli.model_commands import _is_list_axis
    from symq.core import registry

    dispatch = registry.get_model("dispatch")
    assert not _is_list_axis(dispatch, "speeds", "1,2")           # one vector, not an axis
    assert _is_list_axis(dispatch, "m", "2,3")
    import csv
    import io

    code, out, _ = run(capsys, "sweep", "ps-routing", "C=4,2,1", "w=1,2,0.5", "rho=1:2:2",
                       "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [(r["C"], r["w"]) for r in rows] == [("4,2,1", "1,2,0.5")] * 2


def test_solve_shows_a_progress_bar_on_a_terminal_only(capsys, monkeypatch):
    argv = ("solve", "jsq-sim", "N=10", "d=2", "lam=0.5", "n_jobs=20000", "--seed", "1")
    code, plain, err = run(capsys, *argv)              # captured stderr: not a terminal
    assert code == 0 and "JSQ(2) N=10" not in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, shown, err = run(capsys, *argv)
    assert code == 0 and "JSQ(2) N=10" in err and "20000/20000" in err
    def without_speed(text):
        return [line for line in text.splitlines() if "jobs_per_second" not in line]
    assert without_speed(shown) == without_speed(plain)   # the bar changes nothing else
    for quiet in (("-q",), ("--json",)):
        code, _, err = run(capsys, *argv, *quiet)
        assert code == 0 and "JSQ(2) N=10" not in err, quiet


def _help_example(command, name):
    from symq.cli.model_commands import _model_help
    from symq.core import registry

    line = _model_help(command, registry.get_model(name)).splitlines()[-1]
    assert line.startswith(f"example: symq {command} {name}")
    return line.split()[2:]


def _built_in_models():
    from symq.core import registry

    return sorted(name for name, m in registry.models().items()
                  if m.source == registry.BUILT_IN)


@pytest.mark.parametrize("name", _built_in_models())
def test_every_help_example_runs(capsys, name):
    """The example line that ``symq solve MODEL --help`` ends with is a command that works."""
    argv = _help_example("solve", name)
    code, out, err = run(capsys, *argv, "--json", "--seed", "1")
    assert code == 0, err
    assert json.loads(out)["model"] == name


def test_list_json_gives_parameter_domains_as_data(capsys):
    """Each parameter's domain is structured, and agrees with what the parser accepts: the
    typical value lies in the stated bounds or choices, and a value just outside is refused."""
    from symq.core import registry

    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    seen = set()
    for model in json.loads(out)["models"]:
        spec = registry.get_model(model["name"])
        for p in model["parameters"]:
            domain, typical = p["domain"], p["typical"]
            seen.add(domain["kind"])
            assert domain["text"] and p["text"].startswith(f"{p['name']}: {domain['text']}")
            parameter = spec.parameter(p["name"])
            if domain["kind"] == "choice":
                assert typical is None or typical in domain["choices"]
                with pytest.raises(Exception, match=p["name"]):
                    parameter.validate("no-such-choice")
            elif domain["kind"] == "integer_at_least" and typical is not None:
                assert typical >= domain["minimum"]
                with pytest.raises(Exception, match=p["name"]):
                    parameter.validate(domain["minimum"] - 1)
            elif domain["kind"] == "interval" and typical is not None:
                assert domain["low"] <= typical <= domain["high"]
    assert {"choice", "integer_at_least", "positive_real", "interval"} <= seen
