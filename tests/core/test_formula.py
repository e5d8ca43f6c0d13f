"""The formula parser builds sympy trees from a whitelist and never runs user text."""

from __future__ import annotations

import math
import re
import time

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.cli import main
from symq.core.errors import InvalidParameter
from symq.core.formula import MAX_LENGTH, parse_formula

W = sp.Symbol("w", positive=True)

# Known escape routes from eval-based sandboxes: each must be refused before anything runs.
ESCAPES = [
    "().__class__.__base__.__subclasses__()",
    "().__class__.__base__.__subclasses__()[133].__init__.__globals__['system']('touch {p}')+1",
    "__import__('os').system('touch {p}')",
    "exp.__globals__",
    "(lambda: __import__('os').system('touch {p}'))()",
    "[__import__('os').system('touch {p}') for _ in (1,)]",
    "{{1: __import__('os')}}",
    "f'{{__import__(\"os\").system(\"touch {p}\")}}'",
    "getattr(w, '__class__')",
    "eval('1')",
    "exec('import os')",
    "open('{p}', 'w')",
    "w.__class__",
    "Symbol('x')",
    "Integer(1)",
    "(x := 1)",
    "w if True else 0",
    "*w",
    "b'abc'",
    "exp(w)[0]",
    "exp(**{{'x': 1}})",
]


@pytest.mark.parametrize("template", ESCAPES)
def test_escape_routes_are_refused_and_run_nothing(template, tmp_path):
    marker = tmp_path / "PWNED"
    text = template.format(p=marker)
    with pytest.raises(InvalidParameter, match=r"parameter a=.* must be an expression in w"):
        parse_formula("a", text, ("w",))
    assert not marker.exists()


def test_cli_payload_of_the_issue_exits_2_and_runs_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    payload = ("a=().__class__.__base__.__subclasses__()[100].__init__.__globals__['system']"
               "('touch PWNED')+1")
    status = main(["solve", "awp", payload, "loss=1e-4*w", "after_loss=0.5*w"])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.startswith("symq: error: parameter a=") and "\n" not in err
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("text, reason", [
    ("w**w**w**w", "exponent tower"),
    ("10**10**10", "not a finite"),
    ("9**9**9", "not a finite"),
    ("2**100000", "not a finite"),
    ("w**100000000", "too large"),
    ("exp(exp(exp(exp(100))))", "not a finite"),
    ("1/0", "not finite"),
    ("0**-1", "division by zero"),
    ("1e999", "overflows"),
    ("oo", "unknown name oo"),
    ("nan", "unknown name nan"),
    ("zoo*w", "unknown name zoo"),
    ("sqrt(-1)", "not a finite real"),
    ("2w", "write products with"),
    ("", "empty"),
    ("w\x00", "control character"),
    ("exp(w, w)", "takes 1 argument"),
    ("lgamma(w)", "function lgamma is not allowed"),
    ("w // 2", "operator //"),
    ("w % 2", "operator %"),
    ("w < 2", "comparison"),
    ("True*w", "not a real number"),
    ("'w'", "not a real number"),
    ("1j*w", "not a real number"),
    ("1" * 70, "more than 60 digits"),
])
def test_bad_formulas_give_one_readable_reason(text, reason):
    with pytest.raises(InvalidParameter, match=reason) as info:
        parse_formula("loss", text, ("w",))
    assert "\n" not in str(info.value) and "parameter loss=" in str(info.value)


def test_huge_input_is_refused_quickly():
    start = time.perf_counter()
    for text in ("w+" * 5_000_000 + "w", "(" * 100_000 + "w" + ")" * 100_000,
                 "-" * 1_000_000 + "w"):
        with pytest.raises(InvalidParameter, match=f"longer than {MAX_LENGTH}"):
            parse_formula("a", text, ("w",))
    deep = "(" * 600 + "w" + ")" * 600  # under the length limit, beyond Python's parser nesting
    with pytest.raises(InvalidParameter):
        parse_formula("a", deep, ("w",))
    many = "+".join(["w"] * 600)
    with pytest.raises(InvalidParameter, match="more than"):
        parse_formula("a", many, ("w",))
    nested = "exp(" * 60 + "w" + ")" * 60
    with pytest.raises(InvalidParameter, match="nested deeper"):
        parse_formula("a", nested, ("w",))
    assert time.perf_counter() - start < 5.0


def test_caret_is_power_with_power_precedence():
    assert parse_formula("a", "2*w^2+1", ("w",)) == 2 * W**2 + 1
    assert parse_formula("a", "-w^2", ("w",)) == -W**2


def test_exact_arithmetic_is_kept():
    assert parse_formula("a", "1/3 + w/6", ("w",)) == sp.Rational(1, 3) + W / 6
    assert parse_formula("a", "(2/3)**3", ("w",)) == sp.Rational(8, 27)


def test_declared_symbols_only_and_positive():
    expr = parse_formula("rate", "lam*(1 - x)", ("lam", "x"))
    lam, x = sp.symbols("lam x", positive=True)
    assert expr == lam * (1 - x)
    with pytest.raises(InvalidParameter, match="unknown name y; names allowed: lam, x"):
        parse_formula("rate", "lam*y", ("lam", "x"))


# Random well-formed formulas: the parser's value must equal an evaluation of the same tree by
# Python's math module (independent of sympy and of the parser).
_LEAF = st.one_of(st.just(("w",)), st.integers(1, 9).map(lambda n: (str(n),)))


def _tree(children):
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children),
        st.tuples(st.just("**"), children, st.integers(0, 3).map(lambda n: (str(n),))),
        st.tuples(st.sampled_from(["exp", "sqrt", "log1+"]), children),
    )


_TREES = st.recursive(_LEAF, _tree, max_leaves=12)


def _text(node):
    if len(node) == 1:
        return node[0]
    if node[0] in "+-*/" or node[0] == "**":
        return f"({_text(node[1])}){node[0]}({_text(node[2])})"
    if node[0] == "log1+":
        return f"log(1+({_text(node[1])})**2)"
    if node[0] == "sqrt":
        return f"sqrt(1+({_text(node[1])})**2)"
    return f"exp(-({_text(node[1])})**2)"


def _value(node, w):
    if len(node) == 1:
        return w if node[0] == "w" else float(node[0])
    if node[0] == "log1+":
        return math.log(1 + _value(node[1], w) ** 2)
    if node[0] == "sqrt":
        return math.sqrt(1 + _value(node[1], w) ** 2)
    if node[0] == "exp":
        return math.exp(-_value(node[1], w) ** 2)
    a, b = _value(node[1], w), _value(node[2], w)
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else math.nan,
            "**": a ** b}[node[0]]


@settings(max_examples=150, deadline=None)
@given(_TREES, st.floats(0.1, 3.0))
def test_random_formulas_evaluate_like_python_math(tree, w):
    try:
        expected = _value(tree, w)
    except (OverflowError, ZeroDivisionError):
        return
    if not math.isfinite(expected) or abs(expected) > 1e12:
        return
    try:
        expr = parse_formula("a", _text(tree), ("w",))
    except InvalidParameter as exc:  # only the documented refusals (a constant 1/0, ...)
        assert "not finite" in str(exc) or "more than" in str(exc) or "nested" in str(exc)
        return
    got = float(expr.subs(W, w)) if expr.free_symbols else float(expr)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


# ----------------------------------------------------------------------------- special functions
# (issue 30, item 6): each against mpmath at 50 digits and a known identity

def _special_value(text, **point):
    from symq.core.claimsfile.quantities import evaluate_expression

    expr = parse_formula("f", text, tuple(point))
    return evaluate_expression(expr, point, set(), "f")


@pytest.mark.parametrize("text, reference", [
    ("atanh(x)", lambda m, x: m.atanh(x)), ("asinh(x)", lambda m, x: m.asinh(x)),
    ("acosh(1 + x)", lambda m, x: m.acosh(1 + x)), ("polylog(3, x)", lambda m, x: m.polylog(3, x)),
    ("hyp2f1(1/2, 3/2, 5/2, x)", lambda m, x: m.hyp2f1(0.5, 1.5, 2.5, x)),
    ("lambertw(x)", lambda m, x: m.lambertw(x)), ("beta(x, 2 + x)", lambda m, x: m.beta(x, 2 + x)),
    ("zeta(1 + 2*x)", lambda m, x: m.zeta(1 + 2 * x)),
])
def test_special_functions_against_mpmath_at_fifty_digits(text, reference):
    m = mpmath.MPContext()
    m.dps = 60
    for x in ("0.125", "0.5", "0.875"):
        got = _special_value(text, x=float(x))
        want = reference(m, m.mpf(x))
        assert abs(m.mpf(got) - want) <= m.mpf(10) ** -48 * max(abs(want), 1), (text, x)
        constant = parse_formula("c", text.replace("x", f"({x})"), ())  # folded at 60 digits
        assert abs(m.mpf(str(constant)) - want) <= m.mpf(10) ** -55 * max(abs(want), 1)


def test_special_function_identities():
    m = mpmath.MPContext()
    m.dps = 60
    tol = m.mpf(10) ** -55
    assert abs(m.mpf(str(parse_formula("c", "polylog(2, 1/2)", ())))
               - (m.pi ** 2 / 12 - m.log(2) ** 2 / 2)) < tol
    omega = parse_formula("c", "lambertw(1)", ())
    assert str(omega).startswith("0.5671432904097838729999686622")
    assert abs(m.mpf(str(parse_formula("c", "zeta(2)", ()))) - m.pi ** 2 / 6) < tol
    for z in (0.25, 0.9, -3.0):
        assert abs(_special_value("hyp2f1(1, 1, 2, z) + log(1 - z)/z", z=z)) < 1e-45
    for a, b in ((0.5, 0.5), (2.5, 3.25)):
        assert abs(_special_value("beta(a, b) - gamma(a)*gamma(b)/gamma(a + b)", a=a, b=b)) \
            < 1e-45


@pytest.mark.parametrize("text, reason", [
    ("atanh(1)", "atanh is real for -1 < x < 1"), ("acosh(1/2)", "x >= 1"),
    ("lambertw(-1/2)", "the principal branch"), ("zeta(1)", "s != 1"),
    ("polylog(2, 3)", "z <= 1"), ("hyp2f1(1, 1, 2, 1)", "z < 1"), ("beta(-2, 1)", "not 0, -1"),
    ("polylog(-2000, x)", "at most 1000"), ("hyp2f1(5000, 1, 2, x)", "at most 1000"),
])
def test_special_functions_outside_their_domain_are_refused_naming_it(text, reason):
    with pytest.raises(InvalidParameter, match=re.escape(reason)):
        parse_formula("f", text, ("x",))


def test_a_special_function_outside_its_domain_at_a_point_is_undecided_naming_it():
    from symq.core.claims import Inconclusive

    with pytest.raises(Inconclusive, match="atanh: -1 < x < 1"):
        _special_value("atanh(x)", x=2.0)
    assert abs(_special_value("lambertw(-exp(-1))") + 1) < 1e-50  # the branch point
