"""Issue 11 for the ME domain: impossible moments refused, user text never evaluated, CLI errors."""

import json
import math

import pytest
import sympy as sp
from scipy import stats

from symq.cli import main
from symq.core.errors import InvalidMoments, InvalidParameter
from symq.me import ME, fit
from symq.me.pade import hankel_system, pade_fit, two_point_system

INJECTION = "__import__('os').system('touch /tmp/symq_pwned')"


@pytest.mark.parametrize("moments, words", [
    ([1, 0.5, 3], r"Stieltjes condition fails: m2 - m1\^2 = -0.5 < 0"),
    ([1, "1/2", 3], r"m2 - m1\^2 = -1/2 < 0 \(a negative variance\)"),
    ([1, 2, 5], r"H_2 .* singular.*does not reproduce m3 = 5 \(fit gives 6\)"),
])
def test_fit_refuses_impossible_moments_like_from_moments(moments, words):
    with pytest.raises(InvalidMoments, match=words):
        fit(moments)
    with pytest.raises(InvalidMoments):
        ME.from_moments(moments)


def test_exponential_moments_still_fit_exactly():
    me, report = fit([1, 2, 6])
    # independent: Exp(1) has m_k = k!
    assert me.moments(3) == [sp.Integer(math.factorial(k)) for k in (1, 2, 3)]
    assert report.unmatched == [] and "NOT reproduce" not in report.table()


def test_a_fit_that_matches_fewer_moments_says_which():
    # Erlang(2, rate 2) has m = 1, 3/2, 3, 15/2, 45/2; with float data the double pole splits,
    # and the chosen certified fit (order 1) reproduces only m1: the report must say so
    me, report = fit([1, 1.5, 3, 7.5, 22.5], order_max=3)
    assert me.order == 1
    assert report.unmatched[0] == "m2 = 3/2 (fit gives 2)"
    assert len(report.unmatched) == 4
    assert "the chosen fit does NOT reproduce: m2 = 3/2" in report.table()
    assert report.to_dict()["unmatched"] == report.unmatched


@pytest.mark.parametrize("target", [stats.pareto(1.5),
                                    __import__("sympy.stats", fromlist=["Pareto"]).Pareto(
                                        "X", 1, sp.Rational(3, 2))])
def test_infinite_moments_are_a_clear_error(target):
    # Pareto(alpha = 1.5): E X finite, E X^2 infinite (independent: alpha <= 2)
    with pytest.raises(InvalidMoments, match=r"moment m2 .*not finite.*only the first 1 are "
                                             r"finite; use order_max <= 1"):
        fit(target, order_max=2)


def test_user_text_is_never_evaluated(tmp_path):
    with pytest.raises(InvalidParameter, match=r"reduced_moments\[1\]"):
        hankel_system([1, INJECTION, 1, 1], 2)
    with pytest.raises(InvalidParameter, match=r"zero\[0\]"):
        two_point_system([1, 1, 1], [INJECTION], 2)
    with pytest.raises(InvalidParameter, match=r"moments\[1\]"):
        pade_fit([1, INJECTION, 6])
    with pytest.raises(InvalidParameter):
        fit([1, INJECTION, 6])
    with pytest.raises(InvalidParameter):
        ME(INJECTION)
    with pytest.raises(InvalidParameter, match=r"expr=.*attribute access"):
        ME.from_expr(INJECTION)
    assert ME.from_expr("2/(s + 2)").lst.denominator == (2, 1)   # parsed by parse_formula
    import os
    assert not os.path.exists("/tmp/symq_pwned")
    # documented text still works, exactly
    H, y = hankel_system([1, "1", "2/3", "0.5"], 2)
    assert H[1, 1] == sp.Rational(2, 3) and y[1] == sp.Rational(-1, 2)


def run(capsys, *argv):
    code = main(["solve", "me-fit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, pattern", [
    (["moments=1,nan"], r"moments=.*nan.*not a finite number"),
    (["moments=1,inf"], r"moments=.*inf.*not a finite number"),
    (["moments="], r"moments"),
    (["moments=1", "order=0"], r"order=0 must be an integer"),
    (["moments=1", "order=1000"], r"order=1000 must be an integer in 1\.\.30"),
    (["moments=1", "dps=100000"], r"dps=100000 must be an integer in 16\.\.1000"),
    (["moments=1e308,1e308,1e308"], r"moments=.*between 1e-300 and 1e300"),
    (["moments=1e5000"], r"moments='1\.0e\+5000' must be moments between"),
    (["moments=1,½,6"], r"moments=.*ASCII digits 0-9 only"),
    (["moments=" + ",".join(["1"] * 2001)], r"moments=.*at most 59 values"),
    (["moments=1,0.5,3"], r"Stieltjes condition fails"),
    (["moments=1,2,5"], r"no ME of order <= 2"),
    ([f"moments=1,{INJECTION},6"], r"moments"),
])
def test_cli_errors_are_one_line_and_name_the_parameter(capsys, argv, pattern):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symq: error: ")
    assert __import__("re").search(pattern, lines[0]), lines[0]


def test_cli_reports_every_given_moment(capsys):
    code, out, _ = run(capsys, "moments=1,2,6", "--json")
    results = json.loads(out)["results"]
    assert code == 0 and results["fitted_moments"] == [1.0, 2.0, 6.0]
