"""Renamed model parameters and declaration keys (issue 31): the old name is read as the new one
for one release, with a RenamedKeywordWarning, on the command line, in sweeps and in claims
files; both names together are refused naming the old one."""

from __future__ import annotations

import json
import warnings

import pytest

from symq.cli import main
from symq.core import registry
from symq.core.claims import Status
from symq.core.claimsfile import build_claim
from symq.core.claimsfile.declarations import declare_model
from symq.core.claimsfile.quantities import FileContext
from symq.core.errors import InvalidParameter
from symq.core.parameters import Interval, Parameter, PositiveReal
from symq.core.renamed import RenamedKeywordWarning, renamed_keys
from symq.core.result import Result


def _mm1(rho, scale=1.0):
    """Mean number in an M/M/1 queue of load rho, times ``scale``."""
    return Result("toy-renamed", {"rho": rho, "scale": scale},
                  {"EN": scale * rho / (1 - rho)}, "closed form")


TOY = registry.ModelSpec(
    "toy-renamed", "M/M/1 mean number (a toy with renamed parameters)",
    (Parameter("rho", Interval(0.0, 1.0, True, True), typical=0.5),
     Parameter("scale", PositiveReal(), required=False, default=1.0)),
    _mm1, renamed={"load": "rho"})
PLAIN = registry.ModelSpec("toy-plain", "M/M/1 mean number, no renames",
                           (Parameter("rho", Interval(0.0, 1.0, True, True), typical=0.5),), _mm1)


@pytest.fixture
def toys():
    registry.register_model(TOY)
    registry.register_model(PLAIN)
    yield
    registry._MODELS.pop("toy-renamed", None)
    registry._MODELS.pop("toy-plain", None)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_renamed_keys_moves_old_names_and_refuses_both():
    with pytest.warns(RenamedKeywordWarning, match=r"^service= is renamed sizes= \(model m\)"):
        out = renamed_keys({"m": 2, "service": "exp"}, {"service": "sizes"}, "model m")
    assert out == {"m": 2, "sizes": "exp"}
    with pytest.raises(InvalidParameter, match=r"parameter q\.service=.*omitted when sizes"):
        renamed_keys({"service": "exp", "sizes": "det"}, {"service": "sizes"},
                              "model m", "q")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert renamed_keys({"sizes": 1}, {"service": "sizes"}, "m") == {"sizes": 1}


def test_parse_and_run_accept_the_old_name(toys):
    with pytest.warns(RenamedKeywordWarning, match="load= is renamed rho="):
        assert TOY.parse({"load": "0.25"}) == {"rho": 0.25, "scale": 1.0}
    with pytest.warns(RenamedKeywordWarning):
        assert TOY.run({"load": 0.5})["EN"] == pytest.approx(1.0, rel=1e-15)
    with pytest.raises(InvalidParameter, match="load.*former name of rho"):
        TOY.parse({"load": "0.25", "rho": "0.5"})


def test_solve_old_name_warns_on_stderr_and_solves(toys, capsys):
    code, out, err = run(capsys, "solve", "toy-renamed", "load=0.75", "--json")
    assert code == 0
    assert json.loads(out)["results"]["EN"] == pytest.approx(3.0, rel=1e-15)  # 0.75/0.25
    assert err.startswith("symq: warning: load= is renamed rho= (model toy-renamed); ")
    code, out, err = run(capsys, "solve", "toy-renamed", "load=0.75", "rho=0.5")
    assert code == 2 and "load" in err and "rho" in err and not out


def test_sweep_old_name_warns_and_sweeps(toys, capsys):
    code, out, err = run(capsys, "sweep", "toy-renamed", "load=0.2:0.6:3", "--json",
                         "--processes", "1")
    assert code == 0 and "symq: warning: load= is renamed rho=" in err
    data = json.loads(out)
    assert list(data["axes"]) == ["rho"]
    assert [p["results"]["EN"] for p in data["points"]] == pytest.approx(
        [0.2 / 0.8, 0.4 / 0.6, 0.6 / 0.4], rel=1e-14)
    code, _, err = run(capsys, "sweep", "toy-renamed", "load=0.2:0.6:3", "rho=0.5")
    assert code == 2 and "load" in err


def test_list_and_models_without_renames_are_unchanged(toys, capsys):
    assert "renamed" not in PLAIN.to_markdown()
    assert "`load` is now `rho`" in TOY.to_markdown()
    code, out, err = run(capsys, "solve", "toy-plain", "rho=0.5")
    assert code == 0 and "warning" not in err
    code, _, err = run(capsys, "solve", "toy-plain", "load=0.5")
    assert code == 2 and "has no parameter load" in err


def test_claims_file_reference_with_the_old_name(toys):
    table = {"name": "toy", "statement": "EN == r/(1 - r)",
             "let": {"EN": {"ref": "toy-renamed:EN", "load": "r"}},
             "region": {"r": [0.25, 0.5]}, "tolerance": 1e-12}
    with pytest.warns(RenamedKeywordWarning, match="load= is renamed rho="):
        built = build_claim("claims[0]", table, FileContext("test"))
    assert built.check().status is Status.HOLDS
    both = {**table, "let": {"EN": {"ref": "toy-renamed:EN", "load": "r", "rho": "r"}}}
    with pytest.raises(InvalidParameter, match=r"claims\[0\]\.let\.EN\.load"):
        build_claim("claims[0]", both, FileContext("test"))


def _mm1_response(rho):
    """Mean response time of an M/M/1 queue of load rho with unit service rate."""
    return Result("toy-et", {"rho": rho}, {"ET": 1.0 / (1.0 - rho)}, "closed form")


def test_claims_file_reference_to_a_retired_result_key():
    """``MODEL:ER`` (a key retired by the glossary) reads ``MODEL:ET`` with a warning; a key
    that is neither an output nor a retired name of one is still refused."""
    spec = registry.ModelSpec("toy-et", "M/M/1 mean response time",
                              (Parameter("rho", Interval(0.0, 1.0, True, True), typical=0.5),),
                              _mm1_response, outputs=("ET",))
    registry.register_model(spec)
    try:
        table = {"name": "toy", "statement": "T == 1/(1 - r)",
                 "let": {"T": {"ref": "toy-et:ER", "rho": "r"}},
                 "region": {"r": [0.25, 0.5]}, "tolerance": 1e-12}
        with pytest.warns(RenamedKeywordWarning, match=r"toy-et:ER is now toy-et:ET"):
            built = build_claim("claims[0]", table, FileContext("test"))
        assert built.check().status is Status.HOLDS
        wrong = {**table, "let": {"T": {"ref": "toy-et:EW", "rho": "r"}}}
        with pytest.raises(InvalidParameter, match="no result 'EW'"):
            build_claim("claims[0]", wrong, FileContext("test"))
    finally:
        registry._MODELS.pop("toy-et", None)


def test_model_kind_declaration_with_an_old_key():
    seen = {}

    def declare(name, table, parameters, where):
        seen.update(table)
        return TOY

    kind = registry.register_model_kind(registry.ModelKind(
        "toy-kind", "a toy", declare, keys={"sizes": "the job sizes"},
        renamed={"service": "sizes"}))
    try:
        with pytest.warns(RenamedKeywordWarning, match=r"service= is renamed sizes= \(model "
                                                       r"kind toy-kind\)"):
            declare_model("f.toml", "q", {"kind": "toy-kind", "service": "exp"})
        assert seen == {"sizes": "exp"}
        with pytest.raises(InvalidParameter, match=r"models\.q\.service"):
            declare_model("f.toml", "q", {"kind": "toy-kind", "service": "exp", "sizes": "d"})
    finally:
        registry._KINDS.pop(kind.kind, None)


def test_region_axis_with_the_old_name(toys):
    """A region axis under a parameter's former name gives the model that parameter (with a
    warning) and stays a symbol for the formulas; before, the axis was left unused and the
    claim refused for want of ``rho``."""
    table = {"name": "toy", "statement": "EN == 3*load/(1 - load)",
             "let": {"EN": {"ref": "toy-renamed:EN", "scale": 3}},
             "region": {"load": [0.25, 0.5]}, "tolerance": 1e-12}
    with pytest.warns(RenamedKeywordWarning, match="load= is renamed rho="):
        built = build_claim("claims[0]", table, FileContext("test"))
        assert built.check().status is Status.HOLDS
