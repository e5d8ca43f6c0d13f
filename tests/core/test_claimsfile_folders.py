"""Which claims files ``symq check``, ``symq list`` and ``symq derive`` read, how fast, how deep.

Issue 29 ("Hardening, second round"):

- Python runs only when asked by name: a folder contributes its own ``*.toml`` files (one level
  deep); its ``*.py`` claims files run only with ``symq check --allow-python``, a ``.py`` file
  runs when named on the command line, and ``symq list`` never runs one.  Each Python file here
  writes a marker file when it runs, so a file that ran when it should not have fails the test.
- A bare name that is a built-in paper key means the paper even where a local path of that
  name exists (a note on stderr says so); ``./NAME``, ``NAME/`` or an absolute path means the
  path.
- Line numbers are found in time linear in the file: 20,000 claims whose errors each carry a
  line load in a few seconds (in a subprocess with a timeout: the old loader took minutes), and
  each line is the one counted in the text the test wrote.
- Deep nesting (10^5 levels of arrays, inline tables, dotted keys; deep or self-holding Python
  data) is one line ``symq: error: FILE:LINE: ...`` and exit 2, never a RecursionError nor a
  run-away parse (run in a subprocess with a memory cap and a timeout).

The claims that must hold are exact rational identities (``lam/(1 - lam) + 1 == 1/(1 - lam)``),
decided by exact evaluation, independently of which file they came from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from symq.cli import main
from symq.cli.claims_commands import _papers_to_check
from symq.core import registry
from symq.core.claimsfile import claims_files, load_claims_file

IDENTITY = '''
[[claims]]
name = "geometric identity"
statement = "lam/(1 - lam) + 1 == 1/(1 - lam)"
region = { lam = [0.2, 0.9] }
tolerance = 0
'''


def toml_file(path: Path, key: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[paper]\nkey = "{key}"\ntitle = "{key}"\n' + IDENTITY, encoding="utf-8")
    return path


def python_file(path: Path, key: str, marker: Path) -> Path:
    """A Python claims file (it assigns CLAIMS at top level) that writes ``marker`` when run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(f'''\
        import pathlib
        pathlib.Path({str(marker)!r}).write_text("ran")
        PAPER = {{"key": "{key}", "title": "{key}"}}
        CLAIMS = [{{"name": "geometric identity", "tolerance": 0,
                   "statement": "lam/(1 - lam) + 1 == 1/(1 - lam)",
                   "region": {{"lam": [0.2, 0.9]}}}}]
        '''), encoding="utf-8")
    return path


@pytest.fixture
def paper_folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A downloaded paper folder: a TOML claims file, a nested one, a Python claims file at top
    level and a helper script in a subfolder that also assigns CLAIMS."""
    folder = tmp_path / "paper"
    toml_file(folder / "main.toml", "main-paper")
    toml_file(folder / "sub" / "nested.toml", "nested-paper")
    top, helper = tmp_path / "ran-top", tmp_path / "ran-helper"
    python_file(folder / "extra.py", "python-paper", top)
    python_file(folder / "helpers" / "plot_utils.py", "helper-paper", helper)
    return folder, top, helper


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err


def checked_papers(out: str) -> dict[str, str]:
    return {v["paper"]: v["status"] for v in json.loads(out)}


# ----------------------------------------------------------------------------- which files run

def test_list_of_a_folder_runs_no_python(capsys, paper_folder):
    folder, top, helper = paper_folder
    code, out, err = run(capsys, "list", str(folder), "--json")
    listing = json.loads(out)
    assert code == 0 and not top.exists() and not helper.exists()
    keys = {p["key"] for p in listing["papers"]}
    assert "main-paper" in keys and not keys & {"nested-paper", "python-paper", "helper-paper"}
    assert listing["python_claims_files"] == [str(folder / "extra.py")]


def test_list_of_a_python_file_names_it_without_running_it(capsys, paper_folder):
    folder, top, _ = paper_folder
    code, out, err = run(capsys, "list", str(folder / "extra.py"))
    assert code == 0 and not top.exists()
    assert "not run by symq list" in out and str(folder / "extra.py") in out


def test_a_folder_is_searched_one_level_deep_for_toml_only(capsys, paper_folder):
    folder, top, helper = paper_folder
    assert claims_files(folder) == [folder / "main.toml"]
    code, out, err = run(capsys, "check", "-q", "--json", str(folder))
    assert code == 0 and checked_papers(out) == {"main-paper": "holds"}
    assert not top.exists() and not helper.exists()


def test_allow_python_runs_the_folders_own_python_claims_files(capsys, paper_folder):
    folder, top, helper = paper_folder
    code, out, err = run(capsys, "check", "-q", "--json", "--allow-python", str(folder))
    assert code == 0 and checked_papers(out) == {"main-paper": "holds", "python-paper": "holds"}
    assert top.exists() and not helper.exists()  # still one level deep


def test_a_python_file_named_on_the_command_line_runs(capsys, paper_folder):
    folder, top, _ = paper_folder
    code, out, err = run(capsys, "check", "-q", "--json", str(folder / "extra.py"))
    assert code == 0 and checked_papers(out) == {"python-paper": "holds"} and top.exists()


def test_a_folder_of_python_files_only_says_how_to_run_them(capsys, tmp_path):
    marker = tmp_path / "ran"
    python_file(tmp_path / "only" / "mine.py", "mine", marker)
    code, out, err = run(capsys, "check", "-q", str(tmp_path / "only"))
    (line,) = err.splitlines()
    assert code == 2 and not marker.exists()
    assert line.startswith(f"symq: error: {tmp_path / 'only'}: the folder holds no claims file")
    assert "mine.py" in line and "--allow-python" in line


# ----------------------------------------------------------------------------- built-ins win

def test_a_paper_key_means_the_built_in_paper_with_a_note(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    toml_file(tmp_path / "awp" / "local.toml", "local-awp")
    specs, errors = _papers_to_check(["awp"])
    err = capsys.readouterr().err
    assert [s.key for s in specs] == ["awp"] and specs[0].source == registry.BUILT_IN
    (line,) = err.splitlines()
    assert line.startswith("symq: note: 'awp' is the built-in paper") and "./awp" in line
    for path in ("./awp", "awp/", str(tmp_path / "awp")):  # the path forms mean the path
        specs, errors = _papers_to_check([path])
        assert [s.key for s in specs] == ["local-awp"] and not errors
        assert capsys.readouterr().err == ""


def test_derive_of_a_paper_key_is_the_built_in_derivation_with_a_note(capsys, tmp_path,
                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    toml_file(tmp_path / "awp" / "local.toml", "local-awp")
    code, out, err = run(capsys, "derive", "awp")
    assert code == 0 and out == registry.get_paper("awp").build_derivation().to_markdown()
    (line,) = err.splitlines()
    assert line.startswith("symq: note: 'awp' is the built-in paper") and "local folder" in line
    code, out, err = run(capsys, "derive", "./awp")  # the path: a folder is not one file
    assert code == 2 and out == "" and err.startswith("symq: error: ./awp: is a folder")
    code, out, err = run(capsys, "derive", "awp/local.toml")
    assert code == 0 and err == "" and "Claims file awp/local.toml." in out


# ----------------------------------------------------------------------------- linear time

LINES_SCRIPT = """
import sys, time
from symq.core.claimsfile import load_claims_file
loaded = load_claims_file(sys.argv[1])
print(" ".join(str(e.line) for e in loaded.errors))
"""


@pytest.mark.parametrize("suffix", [".toml", ".py"])
def test_twenty_thousand_claims_find_their_lines_in_linear_time(tmp_path, suffix):
    """Each claim lacks its statement, so each is an error that carries its line: finding
    20,000 lines used to rescan the file per claim (minutes); now one pass."""
    n = 20000
    if suffix == ".toml":  # claim i's table starts on line 4 + 3 i
        text = '[paper]\ntitle = "t"\n' + "".join(f'\n[[claims]]\nname = "c{i}"\n'
                                                  for i in range(n))
        expected = [4 + 3 * i for i in range(n)]
    else:  # claim i is written on line 3 + i
        text = 'PAPER = {"title": "t"}\nCLAIMS = [\n' + "".join(
            f'    {{"name": "c{i}"}},\n' for i in range(n)) + "]\n"
        expected = [3 + i for i in range(n)]
    path = tmp_path / f"many{suffix}"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", LINES_SCRIPT, str(path)], capture_output=True,
                          text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    assert [int(x) for x in done.stdout.split()] == expected


# ----------------------------------------------------------------------------- deep nesting

DEEP = 100_000
TOML_DEEP = "tables, arrays or dotted keys nested more than"
DEEP_CASES = {  # name -> (file name, text, line of the error, how the line starts)
    "arrays": ("arrays.toml", '[paper]\ntitle = "t"\n[constants]\na = ' + "[" * DEEP
               + "]" * DEEP + "\n", 4, TOML_DEEP),
    "inline tables": ("tables.toml", '[paper]\ntitle = "t"\n[constants]\na = ' + "{b = " * DEEP
                      + "1" + "}" * DEEP + "\n", 4, TOML_DEEP),
    "dotted keys": ("dotted.toml", '[paper]\ntitle = "t"\n\n' + "x." * DEEP + "y = 1\n", 4,
                    TOML_DEEP),
    "python list": ("deep.py", 'PAPER = {"title": "t"}\nx = []\nfor _ in range(100000):\n'
                    '    x = [x]\nCONSTANTS = {"a": x}\nCLAIMS = []\n', 5, "CONSTANTS: "),
    "python cycle": ("cycle.py", 'PAPER = {"title": "t"}\nx = []\nx.append(x)\n'
                     'MODELS = {"m": x}\nCLAIMS = []\n', 4, "MODELS: "),
}
DEEP_SCRIPT = """
import contextlib, io, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
from symq.cli import main
out = {}
for path in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["check", "-q", path])
    out[path] = [code, err.getvalue()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def deep_results(tmp_path_factory) -> dict[str, tuple[int, str, Path]]:
    """All deep files checked in one subprocess (memory-capped, with a timeout): the old
    loader recursed past Python's limit, and tomllib's dotted keys take quadratic memory."""
    folder = tmp_path_factory.mktemp("deep")
    paths = {}
    for name, (file, text, _, _) in DEEP_CASES.items():
        paths[name] = folder / file
        paths[name].write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", DEEP_SCRIPT, *map(str, paths.values())],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONWARNINGS": "error"})
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    return {name: (*results[str(path)], path) for name, path in paths.items()}


@pytest.mark.parametrize("case", list(DEEP_CASES))
def test_deep_nesting_is_one_line_and_exit_2(deep_results, case):
    code, err, path = deep_results[case]
    _, _, line, what = DEEP_CASES[case]
    assert code == 2 and "Traceback" not in err and "RecursionError" not in err, err[-500:]
    (message,) = err.splitlines()
    assert message.startswith(f"symq: error: {path}:{line}: {what}"), message
    assert "nested more than 32 levels deep" in message


def test_a_deep_claim_is_its_own_error_and_the_others_run(capsys, tmp_path):
    path = tmp_path / "claims.py"
    path.write_text('PAPER = {"title": "t"}\nx = []\nfor _ in range(5000):\n    x = [x]\n'
                    'CLAIMS = [\n    {"name": "deep", "statement": "lam == lam",\n'
                    '     "region": {"lam": x}},\n'
                    '    {"name": "geometric identity", "tolerance": 0,\n'
                    '     "statement": "lam/(1 - lam) + 1 == 1/(1 - lam)",\n'
                    '     "region": {"lam": [0.2, 0.9]}},\n]\n', encoding="utf-8")
    code, out, err = run(capsys, "check", "-q", "--json", str(path))
    first, count = err.splitlines()
    assert code == 2 and checked_papers(out) == {"claims": "holds"}
    assert first.startswith(f"symq: error: {path}:6: claims[0]: lists and tables nested more")
    assert count.startswith("symq: error: 1 claim(s) could not be built")


def test_nesting_a_claims_file_needs_is_not_refused(tmp_path):
    """Twenty levels of arrays in a region are refused for what they are (not a number), not
    for their depth."""
    path = tmp_path / "fine.toml"
    path.write_text('[paper]\ntitle = "t"\n\n[[claims]]\nname = "c"\n'
                    'statement = "lam == lam"\nregion = { lam = ' + "[" * 20 + "0.5"
                    + "]" * 20 + " }\n", encoding="utf-8")
    (error,) = load_claims_file(path).errors
    assert "nested more than" not in str(error) and "claims[0].region.lam" in str(error)
