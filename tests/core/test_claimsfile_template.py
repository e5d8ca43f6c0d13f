"""The starting claims files of `symq new-claims` check out of the box, with honest verdicts."""

from __future__ import annotations

import json

import pytest

from symq.cli import main


@pytest.mark.parametrize("python", [False, True], ids=["toml", "python"])
def test_new_claims_file_runs_and_its_claims_hold(tmp_path, capsys, monkeypatch, python):
    monkeypatch.chdir(tmp_path)
    args = ["new-claims", "my_paper"] + (["--python"] if python else [])
    assert main(args) == 0
    path = tmp_path / ("my_paper.py" if python else "my_paper.toml")
    assert path.is_file()
    capsys.readouterr()
    assert main(["check", str(path), "--json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert verdicts and all(v["status"] == "holds" for v in verdicts), verdicts
    assert all(v["paper"] == "my-paper" for v in verdicts)
