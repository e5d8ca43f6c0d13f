"""A misspelled result key, model name or model kind in a claims file is an input error when the
file is loaded, naming the file, the claim's line and the line of the key itself, and the known
names; the other claims of the file are still built and checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from symq.core.claims import Status
from symq.core.claimsfile import ClaimsFileError, load_claims_file

GOOD = '''
[[claims]]
name = "good"
statement = "lam/(1 - lam) == lam/(1 - lam)"
region = { lam = 0.5 }
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "claims.toml"
    path.write_text('[paper]\ntitle = "input errors"\n' + text)
    return path


def line_of(path: Path, fragment: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if fragment in line)


def test_an_unknown_result_key_names_the_line_the_known_keys_and_a_guess(tmp_path: Path):
    path = write(tmp_path, '''
[[claims]]
name = "typo"
statement = "W == lam/(1 - lam)"
region = { lam = 0.5 }
let.W = { ref = "mg1-sim:EWW" }
''' + GOOD)
    loaded = load_claims_file(path)
    (error,) = loaded.errors
    assert error.path == str(path) and error.line == line_of(path, "[[claims]]")
    text = str(error)
    assert f"{path}:{error.line}" in text and "claims[0].let.W" in text
    assert text.endswith(f"[line {line_of(path, 'EWW')}]")
    assert "EW, ET, EW_exact, ET_exact, rho" in text and "did you mean EW?" in text
    (good,) = loaded.claims  # the bad claim stops no other
    assert good.name == "good" and good.check().status is Status.HOLDS


def test_an_unknown_model_name_names_the_line_and_the_known_models(tmp_path: Path):
    path = write(tmp_path, GOOD + '''
[[claims]]
name = "model typo"
statement = "W == lam/(1 - lam)"
let.W = "mg1-simm:EW"
region = { lam = 0.5 }
''')
    loaded = load_claims_file(path)
    (error,) = loaded.errors
    assert str(error).endswith(f"[line {line_of(path, 'mg1-simm')}]")
    assert "supermarket" in str(error) and "did you mean mg1-sim?" in str(error)
    assert [c.name for c in loaded.claims] == ["good"]


def test_a_bad_limit_names_its_own_line(tmp_path: Path):
    path = write(tmp_path, '''
[[claims]]
name = "limit"
statement = "1/k -> 0"
region = { k = "10:1e6" }
limit = { k = "infinite" }
''' + GOOD)
    (error,) = load_claims_file(path).errors
    assert str(error).endswith(f"[line {line_of(path, 'limit = ')}]")
    assert "claims[0].limit.k" in str(error)


def test_an_unknown_model_kind_names_the_line_and_the_known_kinds(tmp_path: Path):
    path = write(tmp_path, '''
[models.q]
kind = "populaton"
''' + GOOD)
    with pytest.raises(ClaimsFileError) as info:
        load_claims_file(path)
    assert info.value.line == line_of(path, "[models.q]")
    assert "population, routing-cost" in str(info.value)
    assert "did you mean population?" in str(info.value)
