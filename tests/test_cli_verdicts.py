"""``symq check`` bookkeeping (issue 30): a verdict that contradicts ``expected`` is flagged and
exits 4, inconclusive verdicts exit 0, values print with the digits that tell them apart, and
``--explain`` prints a per-point table.  The expected values are computed by hand (exact
arithmetic) in each test."""

from __future__ import annotations

import json

from symq.cli import main

HEADER = '[paper]\nkey = "toy-verdicts"\ntitle = "Toy"\nauthors = ["nobody"]\nyear = 2026\n'


def check(capsys, tmp_path, claims, *options):
    path = tmp_path / "toy.toml"
    path.write_text(HEADER + claims)
    code = main(["check", str(path), "-q", *options])
    out, err = capsys.readouterr()
    return code, out, err


TRUE = '''
[[claims]]
name = "geometric series"
statement = "1/(1 - x) == sum(x^k, k, 0, oo)"
region = { x = [0.25, 0.5] }
tolerance = 1e-12
'''


#: A false claim the file declares false: a refutation symq expects.
MISPRINT = '''
[[claims]]
name = "a misprint"
statement = "x^2 <= x"
region = { x = [0.5, 2] }
tolerance = 0
expected = "fails"
'''


def test_a_claim_that_holds_as_expected_exits_0(capsys, tmp_path):
    code, out, err = check(capsys, tmp_path, TRUE)
    assert code == 0 and "UNEXPECTED" not in out and "contradict" not in err


def test_an_unexpected_verdict_is_flagged_and_exits_4(capsys, tmp_path):
    claims = TRUE + 'expected = "fails"\n' + '''
[[claims]]
name = "a misprint"
statement = "x^2 <= x"
region = { x = [0.5, 2] }
tolerance = 0
'''
    code, out, err = check(capsys, tmp_path, claims)
    assert code == 4
    assert "holds (UNEXPECTED: expected fails)" in out
    assert "fails (UNEXPECTED: expected holds)" in out
    assert "2 verdict(s) contradict" in out and "2 verdict(s) contradict" in err
    code, out, _ = check(capsys, tmp_path, claims, "--json")
    verdicts = {v["claim"]: v for v in json.loads(out)}
    assert code == 4
    assert verdicts["geometric series"]["unexpected"] is True
    assert verdicts["a misprint"]["unexpected"] is True
    # x^2 <= x: error (4 - 2)/max(4, 2) = 0.5 at x = 2, and 0 at x = 0.5
    points = verdicts["a misprint"]["points"]
    assert [(p["point"], p["status"]) for p in points] == [({"x": 0.5}, "holds"),
                                                           ({"x": 2}, "fails")]
    assert points[1]["error"] == 0.5


def test_a_refutation_symq_expects_exits_0(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, MISPRINT)
    assert code == 0 and "refuted as symq expects" in out
    row = next(line for line in out.splitlines() if line.startswith("toy-verdicts"))
    assert "fails (as expected)" in row                 # the table row says so too


def test_a_claim_without_region_and_values_that_differ_in_the_tenth_digit(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, '''
[[claims]]
name = "almost one"
statement = "0.9999999999 == 1"
tolerance = 1e-12
''', "--explain")
    assert code == 4
    assert "at :" not in out
    # |1 - 0.9999999999| / 1 = 1e-10 > 1e-12, and both values are printed distinctly
    assert "error 1e-10 relative > tolerance 1e-12: left side 0.9999999999, right side 1" in out


def test_explain_prints_the_table_of_points(capsys, tmp_path):
    code, out, _ = check(capsys, tmp_path, '''
[[claims]]
name = "square below the line"
statement = "x^2 <= x"
region = { x = [0.5, 1.5, 3] }
tolerance = 0.4
''', "--explain")
    assert code == 4
    table = out[out.index("points (3):"):].splitlines()
    assert table[1].split() == ["point", "left", "side", "right", "side", "error", "verdict"]
    rows = [line.split() for line in table[3:6]]
    # x = 1.5: (2.25 - 1.5)/2.25 = 1/3 <= 0.4 holds; x = 3: (9 - 3)/9 = 2/3 fails
    assert rows[0] == ["x=0.5", "0.25", "0.5", "0", "holds"]
    assert rows[1] == ["x=1.5", "2.25", "1.5", "0.333", "holds"]
    assert rows[2] == ["x=3", "9", "3", "0.667", "fails"]
    assert "tolerance: 0.4 relative" in out


def test_an_equality_against_a_simulation_without_tolerance_is_bad_input(capsys, tmp_path):
    """The bad claim is reported with its key and an example; the other claim still runs."""
    code, out, err = check(capsys, tmp_path, '''
[[claims]]
name = "M/M/1 by simulation"
statement = "ET == 1/(1 - lam)"
let.ET = { ref = "ps-sim:ET", n_jobs = 20000 }
region = { lam = 0.5, mean = 1, sizes = "exp" }
tolerance = { ci = 0.95 }
''' + TRUE)
    assert code == 2
    assert "claims[0].tolerance" in err and "relative = 0.02" in err
    assert "geometric series" in out and "1 claims: 1 hold" in out


def test_parallel_check_gives_the_serial_verdicts(capsys, tmp_path):
    """-j 2 forks two workers; the verdicts (50-digit numbers included) come back identical
    to a serial run, in the same order; the progress line names the paper when stderr is not
    a terminal."""
    claims = TRUE + MISPRINT + '''
[[claims]]
name = "exponential series"
statement = "exp(x) == sum(x^k/gamma(k + 1), k, 0, oo)"
region = { x = [0.1, 1, 3] }
tolerance = 1e-12
'''
    path = tmp_path / "toy.toml"
    path.write_text(HEADER + claims)
    runs = []
    for jobs in ("1", "2"):
        code = main(["check", str(path), "--json", "-j", jobs])
        out, _ = capsys.readouterr()
        assert code == 0
        runs.append([{k: v for k, v in d.items() if k != "seconds"} for d in json.loads(out)])
    assert runs[0] == runs[1] and len(runs[0]) == 3
    code = main(["check", str(path), "-j", "2"])
    _, err = capsys.readouterr()
    assert code == 0 and "symq check: toy-verdicts done (3/3 claims" in err
    assert main(["check", str(path), "-j", "0"]) == 2
    assert "-j" in capsys.readouterr().err
