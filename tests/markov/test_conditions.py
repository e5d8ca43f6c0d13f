"""parse_condition: the guard language, and what it refuses (it never runs code)."""

import pytest
import sympy as sp

from symq.core.conditions import MAX_CONDITION_LENGTH, is_condition_text, parse_condition
from symq.core.errors import InvalidParameter

NAMES = ("n", "m", "K", "c")
n, m, K, c = sp.symbols("n m K c", real=True)


@pytest.mark.parametrize("text, expected", [
    ("n < K and m > 0", sp.And(n < K, m > 0)),
    ("n >= 1 or m == c", sp.Or(n >= 1, sp.Eq(m, c))),
    ("not (n == 0)", sp.Ne(n, 0)),
    ("0 < n < K", sp.And(sp.Lt(0, n), n < K)),
    ("true", sp.true),
    ("false", sp.false),
    ("n != 2 and min(n, c) < c", sp.And(sp.Ne(n, 2), sp.Min(n, c) < c)),
    ("n^2 <= K", n**2 <= K),
])
def test_conditions_parse(text, expected):
    assert parse_condition("g", text, NAMES) == expected


def test_the_symbols_are_real_and_assumptions_can_be_given():
    cond = parse_condition("g", "n < 1", ("n",))
    assert cond.free_symbols == {sp.Symbol("n", real=True)}
    cond = parse_condition("g", "n < 1", ("n",), assumptions={"n": {"integer": True}})
    assert cond.free_symbols == {sp.Symbol("n", integer=True)}


def test_a_condition_evaluates_on_numbers():
    cond = parse_condition("g", "n < K and m > 0", NAMES)
    assert cond.subs({n: 1, K: 3, m: 1}) is sp.true
    assert cond.subs({n: 3, K: 3, m: 1}) is sp.false


@pytest.mark.parametrize("text, reason", [
    ("__import__('os')", "a call of __import__"),
    ("__import__('os').system('true') == 0", "not allowed"),
    ("n.real < 1", "attribute access"),
    ("(lambda: 1)() == 1", "not allowed"),
    ("lambda: n < 1", "a lambda"),
    ("n", "the bare name n"),
    ("1", "the bare value 1"),
    ("n + 1", "arithmetic"),
    ("n is 1", "the operator is"),
    ("n in (1, 2)", "not allowed"),
    ("n in m", "the operator in"),
    ("n < x", "unknown name x"),
    ("n <", "syntax error"),
    ("", "empty"),
    ("(n < 1) < 2", "a condition inside a comparison side"),
    ("[n][0] < 1", "not allowed"),
])
def test_unsafe_or_malformed_conditions_are_refused(text, reason):
    with pytest.raises(InvalidParameter, match="parameter g=") as info:
        parse_condition("g", text, NAMES)
    assert reason in str(info.value)


def test_long_input_and_many_nodes_are_refused():
    with pytest.raises(InvalidParameter, match=f"longer than {MAX_CONDITION_LENGTH}"):
        parse_condition("g", "n < 1 and " * 300 + "n < 1", NAMES)
    with pytest.raises(InvalidParameter, match="more than .* terms"):
        parse_condition("g", " and ".join(["n<1"] * 150), NAMES)


def test_not_a_string():
    with pytest.raises(InvalidParameter, match="not a string"):
        parse_condition("g", 3, NAMES)


def test_condition_text_is_recognised_by_its_syntax():
    assert is_condition_text("n == K") and is_condition_text("not n < 1")
    assert is_condition_text("true") and not is_condition_text("n + 1")
    assert not is_condition_text("n <")
