"""The claims-file kind ``ctmc``: a chain declared in TOML solves to the textbook values, one
declaration covers a region over an integer bound, and bad declarations name their key."""

from __future__ import annotations

import textwrap
import tomllib
from fractions import Fraction

import pytest

from symq.core.claims import Status
from symq.core.claimsfile import build_claim
from symq.core.claimsfile.declarations import declare_model
from symq.core.claimsfile.quantities import FileContext
from symq.core.errors import InvalidParameter
from symq.core.registry import get_model_kind

MM1K = textwrap.dedent('''
    kind = "ctmc"
    parameters = { lam = "positive", mu = "positive", K = "integer >= 1" }
    variables = { n = [0, "K"] }
    jumps = [
      { guard = "n < K", rate = "lam", update = { n = "n + 1" }, label = "arrive" },
      { guard = "n > 0", rate = "mu", update = { n = "n - 1" }, label = "serve" },
    ]
    outputs = { EN = "n", P_full = "n == K", X = "throughput:serve" }
''')


def _declare(text: str = MM1K, **changes):
    table = {**tomllib.loads(text), **changes}
    return declare_model("f.toml", "q", table)


def _mm1k(lam: float, K: int) -> tuple[float, float]:
    """P(N = K) and E[N] of M/M/1/K with mu = 1: the truncated geometric law."""
    weights = [lam**k for k in range(K + 1)]
    total = sum(weights)
    return weights[-1] / total, sum(k * w for k, w in enumerate(weights)) / total


def test_the_kind_is_registered_with_its_keys_and_example():
    kind = get_model_kind("ctmc")
    assert {"variables", "jumps", "outputs"} <= set(kind.keys)
    spec = declare_model("example.toml", "mm1k", tomllib.loads(kind.example)["models"]["mm1k"])
    assert spec.run({"lam": 1.0, "mu": 1.0, "K": 4})["P_full"] == pytest.approx(0.2, rel=1e-14)


@pytest.mark.parametrize("lam, K", [(0.5, 1), (0.9, 7), (1.7, 12)])
def test_one_declaration_covers_a_region_over_the_bound(lam, K):
    spec = _declare()
    r = spec.run({"lam": lam, "mu": 1.0, "K": K})
    p_full, mean = _mm1k(lam, K)
    assert r["n_states"] == K + 1
    assert r["P_full"] == pytest.approx(p_full, rel=1e-13)
    assert r["EN"] == pytest.approx(mean, rel=1e-13)
    assert r["X"] == pytest.approx(lam * (1 - p_full), rel=1e-13)   # departures = admitted


def test_exact_method_gives_rationals_equal_to_the_closed_form():
    r = _declare().run({"lam": 0.3, "mu": 1.0, "K": 3, "method": "exact"})
    weights = [Fraction(3, 10) ** k for k in range(4)]
    assert r["P_full"] == weights[-1] / sum(weights)
    assert r.exactness.value == "exact"


def test_a_claim_against_the_declared_model_holds_and_a_wrong_one_fails():
    context = FileContext("test")
    context.models["q"] = _declare()
    table = {"name": "M/M/1/K blocking", "statement": "P == (1 - lam)*lam^K/(1 - lam^(K + 1))",
             "let": {"P": {"ref": "q:P_full", "mu": "1"}},
             "region": {"lam": [0.5, 0.8], "K": [2, 6]}, "tolerance": 1e-10}
    assert build_claim("claims[0]", table, context).check().status is Status.HOLDS
    wrong = {**table, "statement": "P == (1 - lam)*lam^K"}      # the untruncated geometric law
    assert build_claim("claims[0]", wrong, context).check().status is Status.FAILS


@pytest.mark.parametrize("change, key", [
    ({"variables": {"n": [0, "K/2"]}}, r"models\.q\.variables\.n\[1\]"),
    ({"jumps": [{"rate": "lam"}]}, r"models\.q\.jumps\[0\]\.update"),
    ({"jumps": [{"rate": "lam", "update": {"n": "n + 1"}, "when": "n < K"}]},
     r"models\.q\.jumps\[0\]\.when"),
    ({"jumps": [{"rate": "lam + z", "update": {"n": "n + 1"}, "guard": "n < K"}]},
     r"models\.q\.jumps\[0\]\.rate"),
    ({"outputs": {"X": "throughput:nowhere"}}, r"models\.q\.outputs\.X"),
    ({"outputs": {"n_states": "n"}}, r"models\.q\.outputs\.n_states"),
    ({"colour": "red"}, r"models\.q\.colour"),
])
def test_bad_declarations_name_their_key(change, key):
    if "variables" in change:     # a bound that is not an integer shows when solved at K odd
        spec = _declare(**change)
        with pytest.raises(InvalidParameter, match=key):
            spec.run({"lam": 0.5, "mu": 1.0, "K": 3})
        return
    with pytest.raises(InvalidParameter, match=key):
        _declare(**change)


def test_an_update_leaving_the_bounds_is_refused_naming_the_jump():
    spec = _declare(jumps=[{"rate": "lam", "update": {"n": "n + 1"}, "label": "arrive"},
                           {"guard": "n > 0", "rate": "mu", "update": {"n": "n - 1"},
                            "label": "serve"}])
    with pytest.raises(InvalidParameter, match="arrive"):
        spec.run({"lam": 0.5, "mu": 1.0, "K": 3})


def test_simulation_method_gives_intervals_covering_the_closed_form():
    spec = _declare()
    r = spec.run({"lam": 0.5, "mu": 1.0, "K": 3, "method": "simulation", "n_events": 300_000},
                 rng=11)
    p_full, mean = _mm1k(0.5, 3)
    assert r.exactness.value == "simulated"
    assert r["P_full"].contains(p_full) and r["EN"].contains(mean)
    assert r["X"].contains(0.5 * (1 - p_full))
    with pytest.raises(InvalidParameter, match="n_events"):
        spec.run({"lam": 0.5, "mu": 1.0, "K": 3, "n_events": 5000})


MMC = textwrap.dedent('''
    kind = "ctmc"
    parameters = { a = "positive", c = "integer >= 1" }
    variables = { b = [0, "c"], q = [0, "oo"] }
    jumps = [
      { guard = "b < c", rate = "a", update = { b = "b + 1" } },
      { guard = "b == c", rate = "a", update = { q = "q + 1" } },
      { guard = "b > 0 and q == 0", rate = "b", update = { b = "b - 1" } },
      { guard = "q > 0", rate = "c", update = { q = "q - 1" } },
    ]
    outputs = { P_wait = "b == c", EQ = "q" }
''')


@pytest.mark.parametrize("a, c", [(0.5, 1), (2.0, 3), (5.5, 6)])
def test_an_unbounded_level_is_solved_matrix_geometrically_against_erlang_c(a, c):
    from math import factorial

    spec = declare_model("f.toml", "mmc", tomllib.loads(MMC))
    r = spec.run({"a": a, "c": c})
    b = (a**c / factorial(c)) / sum(a**k / factorial(k) for k in range(c + 1))
    erlang_c = b / (1 - (a / c) * (1 - b))
    assert r["P_wait"] == pytest.approx(erlang_c, rel=1e-12)
    assert r["EQ"] == pytest.approx(erlang_c * a / (c - a), rel=1e-12)
    with pytest.raises(InvalidParameter, match="method=.exact.*unbounded level q"):
        spec.run({"a": a, "c": c, "method": "exact"})
