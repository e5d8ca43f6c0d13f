"""The example claims files (examples/claims/) run, and each verdict is the one the file expects.

The files check published formulas (Mitzenmacher 2001, Padhye et al. 1998, Kleinrock's PS
insensitivity, Kingman 1961) and models declared in a file against symq's solvers, simulations
with confidence intervals and closed forms; the PFTK formula is refuted (an expected "fails").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from symq.cli import main
from symq.core.claims import Status
from symq.core.claimsfile import claims_files, load_claims_file

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "claims"
FILES = claims_files(FOLDER)


def test_there_are_at_least_three_papers_and_an_honest_failure():
    assert len(FILES) >= 3
    expected = [c.expected for f in FILES for c in load_claims_file(f).claims]
    assert Status.FAILS in expected


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_each_example_file_gives_the_expected_verdicts(path: Path):
    loaded = load_claims_file(path)
    assert not loaded.errors, [str(e) for e in loaded.errors]
    for claim in loaded.paper.build_claims():
        verdict = claim.check()
        assert verdict.status is claim.expected, (claim.name, verdict.detail)
        if verdict.status is Status.FAILS:
            assert verdict.counterexample is not None and verdict.holds_region


def test_check_and_derive_the_folder_from_the_command_line(capsys):
    assert main(["check", str(FOLDER / "pftk_tcp.toml"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "smallest counterexample" in out and "refuted as symq expects" in out
    assert main(["derive", str(FOLDER / "declared_models.toml")]) == 0
    text = capsys.readouterr().out
    assert "Drift" in text and "Kolmogorov" in text.replace("kolmogorov", "Kolmogorov")


def test_list_shows_where_papers_and_models_come_from(capsys):
    import json

    assert main(["list", str(FOLDER), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    sources = {p["key"]: p["source"] for p in listing["papers"]}
    assert sources["awp"] == "built in"
    assert sources["pftk-1998"] == f"file {FOLDER / 'pftk_tcp.toml'}"
    models = {m["name"]: m["source"] for m in listing["models"]}
    assert models["sis"] == f"file {FOLDER / 'declared_models.toml'}"
    assert models["supermarket"] == "built in"
