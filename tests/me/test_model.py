"""symq solve me-fit: JSON fields, exact fractions, certificates and one-line errors."""

import json

import mpmath
import pytest

from symq.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exact_erlang_moments_give_the_erlang_transform(capsys):
    # Erlang(2, rate 2): m1 = 1, m2 = 3/2, m3 = 3; LST 4/(s^2 + 4 s + 4)
    code, out, _ = run(capsys, "solve", "me-fit", "moments=1,3/2,3", "--json")
    assert code == 0
    data = json.loads(out)
    results = data["results"]
    assert results["numerator_exact"] == ["4"] and results["denominator_exact"] == ["4", "4", "1"]
    assert results["denominator"][-1] == 1.0
    assert results["poles"] == [{"re": -2.0, "im": 0.0, "multiplicity": 2}]
    assert results["certificate"] == "NONNEGATIVE" and "witness" not in results
    assert data["exactness"] == "exact"


def test_negative_fit_reports_a_witness(capsys):
    # classical order-3 Padé of a lognormal (sigma = 0.5, mean 1) has f(0) < 0
    with mpmath.workdps(30):
        moments = [mpmath.exp(k * (k - 1) * mpmath.mpf("0.125")) for k in range(1, 6)]
    text = ",".join(mpmath.nstr(m, 25) for m in moments)
    code, out, _ = run(capsys, "solve", "me-fit", f"moments={text}", "--json")
    results = json.loads(out)["results"]
    assert code == 0 and results["certificate"] == "NEGATIVE"
    low, high = results["witness_enclosure"]
    assert low <= high < 0 and results["witness"] > 0
    # the same moments with f(0) = f'(0) = 0 and 3 moments: certified (order-3 theorem)
    three = ",".join(text.split(",")[:3])
    code, out, _ = run(capsys, "solve", "me-fit", f"moments={three}", "zero=0,0", "--json")
    results = json.loads(out)["results"]
    assert results["certificate"] == "NONNEGATIVE" and results["order"] == 3
    assert results["zero_used"] == 2 and results["numerator"] == [results["denominator"][0]]


@pytest.mark.parametrize("argv, words", [
    (["moments=1,0.5,1"], ["Stieltjes"]),
    (["moments=1,-2,6"], ["moments", "positive"]),
    (["moments=1,2"], ["moments", "odd"]),
    (["moments=1,2,6", "order=3"], ["order=3"]),
    (["moments=1,2,6", "zero=-1"], ["zero"]),
    (["moments=1,2,x"], ["moments", "not a finite number"]),
])
def test_bad_input(capsys, argv, words):
    code, out, err = run(capsys, "solve", "me-fit", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    for word in words:
        assert word in err
