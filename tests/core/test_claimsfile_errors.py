"""Bad input in claims files (issue 13, "Bad input"): one error line per bad claim, exit 2.

A claims file with a syntax error, an unknown reference, an unknown parameter, a formula with an
undeclared symbol or a region outside a model's domain gives one line ``symq: error: FILE:LINE:
claim 'NAME': ...`` naming the key as typed (``claims[1].let.ET``) and exits 2; when the error is
local to one claim, the file's other claims still run.  Each test writes a small claims file into
``tmp_path`` and runs :func:`symq.cli.main`.  The expected line is counted in the text the test
wrote, and the good claims next to a bad one are honest claims checked against an independent
value (the supermarket model at d = 1 against the M/M/1 closed form E[T] = 1/(1 - lam), and an
exact rational identity), so a bad claim that stopped its neighbours, or an error reported at the
wrong place, fails the test.  Formulas that try to run code must be refused without running it:
the file their payload would create must not exist.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from symq.cli import main
from symq.core import registry

PAPER = '[paper]\nkey = "bad-input"\ntitle = "Bad input"\n'
GOOD = '''
[[claims]]
name = "M/M/1 mean response time"
statement = "ET == 1/(1 - lam)"
let.ET = { ref = "supermarket:ET", d = 1 }
region = { lam = [0.25, 0.5] }
'''
GOOD_EXACT = '''
[[claims]]
name = "geometric identity"
statement = "lam/(1 - lam) + 1 == 1/(1 - lam)"
region = { lam = [0.2, 0.9] }
tolerance = 0
'''
GOOD_NAMES = ("M/M/1 mean response time", "geometric identity")
COUNT_LINE = re.compile(r"^symq: error: (\d+) claim\(s\) could not be built")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("symq: error:")]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def table_line(text: str, pattern: str, occurrence: int = 0) -> int:
    """The 1-based line of the ``occurrence``-th line of ``text`` matching ``pattern``."""
    found = [i for i, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]
    return found[occurrence]


def claim_line(text: str, index: int) -> int:
    return table_line(text, r"^\s*\[\[\s*claims\s*\]\]", index)


def holds(out: str, name: str) -> bool:
    """Whether the verdict table on stdout says that claim ``name`` holds."""
    return any(re.search(rf"(^|\s){re.escape(name)}\s+holds\s", line) for line in out.splitlines())


def names_key(line: str, key: str) -> bool:
    """Whether the error line names the parameter ``key`` exactly as typed (a formula's key may
    carry ``(left side)``/``(right side)``)."""
    return re.search(rf"parameter {re.escape(key)}( \((left|right) side\))?=", line) is not None


def check_bad_claim(capsys, tmp_path: Path, body: str, key: str, fragments: tuple[str, ...],
                    name: str | None = "bad claim") -> str:
    """A file with a good claim, the bad claim ``body`` (claims[1]) and a second good claim:
    exit 2, one error line for the bad claim naming file, line, claim and key, the count line,
    and both good claims hold.  Returns the error line."""
    header = f'name = "{name}"\n' if name is not None else ""
    text = PAPER + GOOD + "\n[[claims]]\n" + header + body + GOOD_EXACT
    path = write(tmp_path, "claims.toml", text)
    code, out, err = run(capsys, "check", "-q", str(path))
    errors = error_lines(err)
    assert code == 2, (out, err)
    assert len(errors) == 2, err
    what = f"claim {name!r}" if name is not None else "claims[1]"
    prefix = f"symq: error: {path}:{claim_line(text, 1)}: {what}: "
    assert errors[0].startswith(prefix), (errors[0], prefix)
    assert names_key(errors[0], key), (errors[0], key)
    for fragment in fragments:
        assert fragment in errors[0], (errors[0], fragment)
    match = COUNT_LINE.match(errors[1])
    assert match and int(match.group(1)) == 1, errors[1]
    for good in GOOD_NAMES:
        assert holds(out, good), out
    assert name is None or name not in out
    return errors[0]


# ----------------------------------------------------------------------------- one bad claim

BAD_CLAIMS = {
    "unknown claim key": (
        'statment = "lam == lam"\nregion = { lam = 0.5 }\n',
        "claims[1].statment", ("unknown key", "statement")),
    "missing statement": (
        'region = { lam = 0.5 }\n',
        "claims[1].statement", ("<missing>", "formula + reference")),
    "unknown model": (
        'statement = "ET == 1/(1 - lam)"\nlet.ET = "nosuchmodel:ET"\nregion = { lam = 0.5 }\n',
        "claims[1].let.ET", ("nosuchmodel", "supermarket")),
    "unknown result key": (
        'statement = "ET == 1/(1 - lam)"\nlet.ET = { ref = "supermarket:ETX", d = 1 }\n'
        'region = { lam = 0.5 }\n',
        "claims[1].let.ET", ("no result 'ETX'", "ET, EQ, EW")),
    "unknown parameter in a reference override": (
        'statement = "ET == 1/(1 - lam)"\nlet.ET = { ref = "supermarket:ET", d = 1, mu = 2 }\n'
        'region = { lam = 0.5 }\n',
        "claims[1].let.ET.mu", ("model supermarket has no parameter mu", "d, lam")),
    "reference missing a required model parameter": (
        'statement = "ET == 1/(1 - lam)"\nlet.ET = "supermarket:ET"\nregion = { lam = 0.5 }\n',
        "claims[1].let.ET", ("needs d",)),
    "undeclared symbol in the statement": (
        'statement = "ET == 1/(1 - lam) + zeta"\nlet.ET = { ref = "supermarket:ET", d = 1 }\n'
        'region = { lam = 0.5 }\n',
        "claims[1].statement", ("unknown name zeta",)),
    "undeclared symbol in a let formula": (
        'statement = "rho == lam"\nlet.rho = "lam/mu"\nregion = { lam = 0.5 }\n',
        "claims[1].let.rho", ("unknown name mu",)),
    "undeclared symbol in a reference index": (
        'statement = "u == lam"\nlet.u = { ref = "supermarket:tail[j]", d = 1 }\n'
        'region = { lam = 0.5 }\n',
        "claims[1].let.u (index)", ("unknown name j",)),
    "region value outside the declared domain": (
        'statement = "ET == 1/(1 - lam)"\nlet.ET = "supermarket:ET"\n'
        'region = { lam = 0.5, d = 0 }\n',
        "claims[1].region.d", ("integer >= 1", "model supermarket")),
    "region parameter no formula uses (a typo)": (
        'statement = "lam/(1 - lam) + 1 == 1/(1 - lam)"\nregion = { lam = 0.5, lamda = 0.5 }\n',
        "claims[1].region.lamda", ("typo",)),
    "cycle in let": (
        'statement = "a == lam"\nlet.a = "b + lam"\nlet.b = "2*a"\nregion = { lam = 0.5 }\n',
        "claims[1].let.a", ("cycle a -> b -> a",)),
    "limit claim without limit": (
        'statement = "lam/(1 + lam) -> 0"\nregion = { lam = [0.1, 0.01, 0.001] }\n',
        "claims[1].limit", ("{ p = 0 }",)),
    "limit of a parameter not in the region": (
        'statement = "lam/(1 + lam) -> 0"\nregion = { lam = [0.1, 0.01] }\nlimit = { p = 0 }\n',
        "claims[1].limit.p", ("lam",)),
    "negative tolerance": (
        'statement = "lam == lam"\nregion = { lam = 0.5 }\ntolerance = -1\n',
        "claims[1].tolerance.relative", ("nonnegative",)),
    "unknown tolerance key": (
        'statement = "lam == lam"\nregion = { lam = 0.5 }\ntolerance = { rel = 1e-6 }\n',
        "claims[1].tolerance.rel", ("relative, absolute, ci", "unknown key")),
    "confidence level outside (0, 1)": (
        'statement = "lam == lam"\nregion = { lam = 0.5 }\ntolerance = { ci = 1.5 }\n',
        "claims[1].tolerance.ci", ("(0, 1)",)),
    "bad range": (
        'statement = "lam == lam"\nregion = { lam = "0.1:0.9:x" }\n',
        "claims[1].region.lam", ("a:b:n",)),
    "random axis without samples": (
        'statement = "lam == lam"\nregion = { lam = { uniform = [0.1, 0.9] } }\n',
        "claims[1].region.samples", ("random axes",)),
    "expected neither holds nor fails": (
        'statement = "lam == lam"\nregion = { lam = 0.5 }\nexpected = "maybe"\n',
        "claims[1].expected", ("holds or fails",)),
    "not-equal is no claim": (
        'statement = "lam != 1"\nregion = { lam = 0.5 }\n',
        "claims[1].statement", ("!=",)),
}


@pytest.mark.parametrize("case", list(BAD_CLAIMS))
def test_a_bad_claim_is_one_error_line_and_the_others_run(capsys, tmp_path, case):
    body, key, fragments = BAD_CLAIMS[case]
    check_bad_claim(capsys, tmp_path, body, key, fragments)


def test_a_claim_without_a_name_is_named_by_its_index(capsys, tmp_path):
    check_bad_claim(capsys, tmp_path, 'statement = "lam == lam"\nregion = { lam = 0.5 }\n',
                    "claims[1].name", ("non-empty string",), name=None)


def test_a_repeated_name_is_reported_at_the_second_claim(capsys, tmp_path):
    text = PAPER + GOOD + GOOD_EXACT + GOOD_EXACT
    path = write(tmp_path, "claims.toml", text)
    code, out, err = run(capsys, "check", "-q", str(path))
    errors = error_lines(err)
    assert code == 2 and len(errors) == 2, err
    assert errors[0].startswith(f"symq: error: {path}:{claim_line(text, 2)}: claim "
                                "'geometric identity': ")
    assert names_key(errors[0], "claims[2].name") and "unique" in errors[0]
    assert all(holds(out, good) for good in GOOD_NAMES), out


def test_several_bad_claims_give_one_line_each_in_file_order(capsys, tmp_path):
    bad = [('name = "first bad"\nstatement = "lam == zeta"\nregion = { lam = 0.5 }\n',
            "claims[1].statement"),
           ('name = "second bad"\nstatement = "lam == lam"\nregion = { lam = 0.5, lamm = 1 }\n',
            "claims[3].region.lamm"),
           ('name = "third bad"\nstatement = "ET == 1/(1 - lam)"\nlet.ET = "supermarket:EX"\n'
            'region = { lam = 0.5, d = 1 }\n', "claims[4].let.ET")]
    text = (PAPER + GOOD + "\n[[claims]]\n" + bad[0][0] + GOOD_EXACT + "\n[[claims]]\n" + bad[1][0]
            + "\n[[claims]]\n" + bad[2][0])
    path = write(tmp_path, "claims.toml", text)
    code, out, err = run(capsys, "check", "-q", str(path))
    errors = error_lines(err)
    assert code == 2 and len(errors) == 4, err
    for line, index, (body, key) in zip(errors, (1, 3, 4), bad):
        name = body.split('"')[1]
        assert line.startswith(f"symq: error: {path}:{claim_line(text, index)}: claim {name!r}: ")
        assert names_key(line, key), line
    assert int(COUNT_LINE.match(errors[3]).group(1)) == 3
    assert all(holds(out, good) for good in GOOD_NAMES), out


def test_json_output_holds_the_good_claims_and_stderr_the_error(capsys, tmp_path):
    text = PAPER + GOOD + '\n[[claims]]\nname = "bad"\nstatement = "lam == zeta"\n' \
        'region = { lam = 0.5 }\n'
    path = write(tmp_path, "claims.toml", text)
    code, out, err = run(capsys, "check", "--json", str(path))
    assert code == 2
    verdicts = json.loads(out)
    assert [v["claim"] for v in verdicts] == [GOOD_NAMES[0]]
    assert verdicts[0]["status"] == "holds" and verdicts[0]["n_points"] == 2
    # the worst point's two sides are E[T] of M/M/1 at that lam
    lam = verdicts[0]["worst_point"]["lam"]
    assert float(verdicts[0]["reference_value"]) == pytest.approx(1 / (1 - lam), rel=1e-12)
    assert float(verdicts[0]["claimed_value"]) == pytest.approx(1 / (1 - lam), rel=1e-12)
    errors = error_lines(err)
    assert len(errors) == 2 and errors[0].startswith(f"symq: error: {path}:{claim_line(text, 1)}:")


# ----------------------------------------------------------------------------- code is refused

def payloads(marker: Path) -> dict[str, str]:
    """Formulas that would create ``marker`` (or reach Python objects) if they were evaluated."""
    return {
        "import": f"__import__('os').system('touch {marker}')",
        "open": f"open('{marker}', 'w')",
        "attribute": "lam.__class__.__mro__",
        "dunder on a literal": "().__class__.__bases__",
        "lambda": "(lambda: 1)()",
        "comprehension": f"[open('{marker}', 'w') for q in (1,)]",
    }


@pytest.mark.parametrize("place", ["statement", "let", "override", "index", "where"])
@pytest.mark.parametrize("kind", list(payloads(Path("x"))))
def test_a_formula_that_runs_code_is_refused_and_never_run(capsys, tmp_path, place, kind):
    marker = tmp_path / "pwned"
    payload = payloads(marker)[kind].replace('"', '\\"')
    bodies = {
        "statement": (f'statement = "{payload} == lam"\nregion = {{ lam = 0.5 }}\n',
                      "claims[1].statement"),
        "let": (f'statement = "q == lam"\nlet.q = "{payload}"\nregion = {{ lam = 0.5 }}\n',
                "claims[1].let.q"),
        "override": (f'statement = "ET == 1/(1 - lam)"\n'
                     f'let.ET = {{ ref = "supermarket:ET", d = 1, lam = "{payload}" }}\n'
                     'region = { lam = 0.5 }\n', "claims[1].let.ET.lam"),
        "index": (f'statement = "u == lam"\nlet.u = "supermarket:tail[{payload}]"\n'
                  'region = { lam = 0.5, d = 1 }\n', "claims[1].let.u (index)"),
        "where": (f'statement = "lam == lam"\nregion = {{ lam = 0.5, where = "{payload} > 0" }}\n',
                  "claims[1].region.where[0]"),
    }
    body, key = bodies[place]
    if place == "index" and "[" in payload:  # brackets end the index: not a reference at all
        body, key = bodies["let"]
    line = check_bad_claim(capsys, tmp_path, body, key, ("not allowed",))
    assert not marker.exists()
    assert "Traceback" not in line


def test_constants_that_run_code_are_refused_for_the_whole_file(capsys, tmp_path):
    marker = tmp_path / "pwned"
    text = PAPER + f'\n[constants]\nc = "__import__(\'os\').system(\'touch {marker}\')"\n' + GOOD
    path = write(tmp_path, "claims.toml", text)
    code, out, err = run(capsys, "check", "-q", str(path))
    assert code == 2 and out == "" and not marker.exists()
    (line,) = error_lines(err)
    number = table_line(text, r"^\[constants\]")
    assert line.startswith(f"symq: error: {path}:{number}: constants: ")
    assert names_key(line, "constants.c") and "not allowed" in line


def test_a_python_claims_file_parses_its_formula_strings_too(capsys, tmp_path):
    marker = tmp_path / "pwned"
    text = ('PAPER = {"key": "py-payload", "title": "Payload"}\n'
            'CLAIMS = [\n'
            '    {"name": "exact", "statement": "lam/(1 - lam) + 1 == 1/(1 - lam)",\n'
            '     "region": {"lam": [0.2, 0.9]}, "tolerance": 0},\n'
            f'    {{"name": "payload", "statement": "__import__(\'os\').system(\'touch {marker}\') '
            '== 0",\n'
            '     "region": {"lam": 0.5}},\n'
            ']\n')
    path = write(tmp_path, "payload.py", text)
    code, out, err = run(capsys, "check", "-q", str(path))
    assert code == 2 and not marker.exists()
    errors = error_lines(err)
    assert len(errors) == 2, err
    number = table_line(text, '"payload"')
    assert errors[0].startswith(f"symq: error: {path}:{number}: claim 'payload': ")
    assert names_key(errors[0], "claims[1].statement") and "not allowed" in errors[0]
    assert holds(out, "exact"), out


# ----------------------------------------------------------------------------- the region

def test_a_region_outside_the_models_stability_domain_is_an_error(capsys, tmp_path):
    check_bad_claim(capsys, tmp_path,
                    'statement = "ET == 1/(1 - lam)"\nlet.ET = "supermarket:ET"\n'
                    'region = { lam = [0.5, 1.5], d = 1 }\n',
                    "claims[1].region.lam", ("1.5", "< 1"))


# ----------------------------------------------------------------------------- file-level errors

def only_error(capsys, *argv: str) -> str:
    """Run a command that must fail before any claim runs: exit 2, one line, nothing on stdout."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("symq: error: "), err
    return lines[0]


def test_toml_syntax_error_names_its_line(capsys, tmp_path):
    text = PAPER + GOOD + '\n[[claims]]\nname = "broken"\nregion = { lam = [0.5 }\n'
    path = write(tmp_path, "syntax.toml", text)
    line = only_error(capsys, "check", str(path))
    number = table_line(text, r"lam = \[0.5 }")
    assert line.startswith(f"symq: error: {path}:{number}: TOML syntax")


def test_missing_paper_table(capsys, tmp_path):
    path = write(tmp_path, "nopaper.toml", GOOD)
    line = only_error(capsys, "check", str(path))
    assert line.startswith(f"symq: error: {path}: paper: ") and "[paper]" in line


def test_paper_without_title(capsys, tmp_path):
    text = '[paper]\nkey = "untitled"\nauthors = ["A. Author"]\n' + GOOD
    path = write(tmp_path, "untitled.toml", text)
    line = only_error(capsys, "check", str(path))
    assert line.startswith(f"symq: error: {path}:1: paper: ") and "title" in line


def test_unknown_top_level_table(capsys, tmp_path):
    text = PAPER + '\n[claim]\nname = "typo of claims"\n' + GOOD
    path = write(tmp_path, "toptable.toml", text)
    line = only_error(capsys, "check", str(path))
    number = table_line(text, r"^\[claim\]")
    assert line.startswith(f"symq: error: {path}:{number}: claim: ")
    assert "unknown table" in line and "paper, constants, models, claims" in line


def test_unknown_model_kind(capsys, tmp_path):
    text = PAPER + '\n[models.mine]\nkind = "no-such-kind"\n' + GOOD
    path = write(tmp_path, "kind.toml", text)
    line = only_error(capsys, "check", str(path))
    number = table_line(text, r"^\[models\.mine\]")
    assert line.startswith(f"symq: error: {path}:{number}: ")
    assert names_key(line, "models.mine.kind")
    assert all(kind in line for kind in registry.model_kinds())


def test_file_without_claims(capsys, tmp_path):
    path = write(tmp_path, "empty.toml", PAPER)
    code, out, err = run(capsys, "check", "-q", str(path))
    assert code == 2
    assert error_lines(err)[0] == f"symq: error: {path}: claims: the file has no claims"


def test_python_file_that_raises_at_import_names_the_line_of_the_raise(capsys, tmp_path):
    text = ('"""Claims."""\n'
            'PAPER = {"title": "Raises"}\n\n\n'
            'def helper():\n'
            '    raise ValueError("boom in helper")\n\n\n'
            'helper()\n'
            'CLAIMS = []\n')
    path = write(tmp_path, "raises.py", text)
    line = only_error(capsys, "check", str(path))
    assert line == (f"symq: error: {path}:{table_line(text, 'raise ValueError')}: running the "
                    "file: ValueError: boom in helper")


def test_python_syntax_error_names_its_line(capsys, tmp_path):
    text = 'PAPER = {"title": "t"}\nCLAIMS = [\n    {"name": "a",\n]\n'
    path = write(tmp_path, "syntax.py", text)
    line = only_error(capsys, "check", str(path))
    assert line.startswith(f"symq: error: {path}:4: Python syntax: ")


def test_python_claim_error_is_at_the_line_of_its_name(capsys, tmp_path):
    text = ('PAPER = {"key": "py-bad", "title": "Python claims"}\n\n\n'
            'def mm1(point):\n'
            '    return 1 / (1 - point["lam"])\n\n\n'
            'CLAIMS = [\n'
            '    {"name": "M/M/1 mean response time", "statement": "ET_f == ET",\n'
            '     "let": {"ET_f": mm1, "ET": {"ref": "supermarket:ET", "d": 1}},\n'
            '     "region": {"lam": [0.25, 0.5]}, "tolerance": 1e-12},\n'
            '    {"name": "bad override", "statement": "ET_f == ET",\n'
            '     "let": {"ET_f": mm1, "ET": {"ref": "supermarket:ET", "d": 1, "mu": 1}},\n'
            '     "region": {"lam": 0.25}},\n'
            ']\n')
    path = write(tmp_path, "pyclaims.py", text)
    code, out, err = run(capsys, "check", "-q", str(path))
    errors = error_lines(err)
    assert code == 2 and len(errors) == 2, err
    assert errors[0].startswith(f"symq: error: {path}:{table_line(text, 'bad override')}: "
                                "claim 'bad override': ")
    assert names_key(errors[0], "claims[1].let.ET.mu")
    assert holds(out, "M/M/1 mean response time"), out


def test_folder_without_claims_files(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("not a claims file")
    (tmp_path / "_private.toml").write_text(PAPER + GOOD)  # names starting with _ are skipped
    line = only_error(capsys, "check", str(tmp_path))
    assert line == (f"symq: error: {tmp_path}: the folder holds no claims file (*.toml, in the "
                    "folder itself)")


def test_folder_runs_every_file_and_reports_each_bad_claim(capsys, tmp_path):
    text_a = PAPER.replace("bad-input", "file-a") + GOOD
    text_b = (PAPER.replace("bad-input", "file-b") + GOOD_EXACT
              + '\n[[claims]]\nname = "bad"\nstatement = "lam == zeta"\nregion = { lam = 0.5 }\n')
    write(tmp_path, "a.toml", text_a)
    path_b = write(tmp_path, "b.toml", text_b)
    code, out, err = run(capsys, "check", "-q", str(tmp_path))
    errors = error_lines(err)
    assert code == 2 and len(errors) == 2, err
    assert errors[0].startswith(f"symq: error: {path_b}:{claim_line(text_b, 1)}: claim 'bad': ")
    assert all(holds(out, good) for good in GOOD_NAMES), out


def test_missing_claims_file(capsys, tmp_path):
    path = tmp_path / "nosuch.toml"
    line = only_error(capsys, "check", str(path))
    assert line.startswith(f"symq: error: {path}: no such claims file")


def test_unknown_paper_key_still_names_the_paper_keys(capsys):
    line = only_error(capsys, "check", "unknown-paper")
    assert "unknown paper 'unknown-paper'" in line
    keys = list(registry.papers())
    assert keys and all(key in line for key in keys), line


@pytest.mark.parametrize("python", [False, True])
def test_new_claims_does_not_overwrite(capsys, tmp_path, python):
    stem = tmp_path / "mine"
    flags = ["--python"] if python else []
    code, out, err = run(capsys, "new-claims", str(stem), *flags)
    path = stem.with_suffix(".py" if python else ".toml")
    assert code == 0 and path.is_file() and str(path) in out
    path.write_text("# my own edits\n")
    code, out, err = run(capsys, "new-claims", str(stem), *flags)
    assert code == 3 and out == ""  # an output that cannot be written: exit 3 (symq.cli)
    (line,) = error_lines(err)
    assert str(path) in line and "does not overwrite" in line
    assert path.read_text() == "# my own edits\n"


# ----------------------------------------------------------------------------- more claim errors

def test_a_let_that_is_not_a_table_is_a_claim_error(capsys, tmp_path):
    check_bad_claim(capsys, tmp_path, 'statement = "lam == lam"\nregion = { lam = 0.5 }\nlet = 5\n',
                    "claims[1].let", ("table",))


@pytest.mark.parametrize("body, key", [
    ('formula = "1/(1 - lam)"\nreference = "nosuchmodel:ET"\nregion = { lam = 0.5 }\n',
     "claims[1].reference"),
    ('formula = "1/(1 - lam) + zeta"\nreference = "supermarket:ET"\n'
     'region = { lam = 0.5, d = 1 }\n',
     "claims[1].formula"),
], ids=["reference", "formula"])
def test_formula_and_reference_errors_name_the_keys_as_typed(capsys, tmp_path, body, key):
    check_bad_claim(capsys, tmp_path, body, key, ())


def test_unknown_override_parameter_says_the_domain_once(capsys, tmp_path):
    body, key, fragments = BAD_CLAIMS["unknown parameter in a reference override"]
    line = check_bad_claim(capsys, tmp_path, body, key, fragments)
    assert line.count("one of the parameters d, lam") == 1, line


@pytest.mark.parametrize("suffix", [".toml", ".py"])
def test_a_claim_without_its_own_table_line_still_gets_a_line(capsys, tmp_path, suffix):
    if suffix == ".toml":
        text = ('claims = [\n'
                '  { name = "exact", statement = "x + 1 == 1 + x", region = { x = 1 } },\n'
                '  { name = "bad", statement = "x == zz", region = { x = 1 } },\n'
                ']\n\n' + PAPER)
    else:
        text = ('PAPER = {"title": "generated claims"}\n\n\n'
                'def make(name, statement):\n'
                '    return {"name": name, "statement": statement, "region": {"x": 1}}\n\n\n'
                'CLAIMS = [make(n, s) for n, s in (("exact", "x + 1 == 1 + x"), '
                '("b" + "ad", "x == zz"))]\n')
    path = write(tmp_path, "generated" + suffix, text)
    code, out, err = run(capsys, "check", "-q", str(path))
    errors = error_lines(err)
    assert code == 2 and len(errors) == 2 and holds(out, "exact"), err
    pattern = rf"symq: error: {re.escape(str(path))}:\d+: claim 'bad': "
    assert re.match(pattern, errors[0]), errors[0]


def test_derive_reports_a_bad_claim(capsys, tmp_path):
    text = PAPER + GOOD_EXACT + '\n[[claims]]\nname = "bad"\nstatement = "lam == zeta"\n' \
        'region = { lam = 0.5 }\n'
    path = write(tmp_path, "derive.toml", text)
    code, out, err = run(capsys, "derive", str(path))
    assert "geometric identity" in out
    errors = error_lines(err)
    assert code == 2 and errors, (code, err)
    assert errors[0].startswith(f"symq: error: {path}:{claim_line(text, 1)}: claim 'bad': ")
