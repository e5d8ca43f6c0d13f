"""The claims-file kind ``mdp``: a process declared in TOML gives Naor's threshold and the gain
of M/M/1/N with its error bar, a discounted value equal to an exact solve, and bad declarations
name their key."""

from __future__ import annotations

import math
import textwrap
import tomllib

import pytest

from symq.core.approximate import Approximate
from symq.core.claimsfile.declarations import declare_model
from symq.core.errors import InvalidParameter
from symq.core.registry import get_model_kind

NAOR = textwrap.dedent('''
    kind = "mdp"
    parameters = { lam = "positive", mu = "positive", R = "positive", C = "positive" }
    variables = { n = [0, "oo"] }
    actions = [
      { name = "admit", jumps = [{ rate = "lam", update = { n = "n + 1" }, cost = "-R" }] },
      { name = "reject" },
    ]
    jumps = [{ guard = "n > 0", rate = "mu", update = { n = "n - 1" } }]
    cost = "C*n"
    outputs = { N = "threshold:admit", EN = "n", full = "n >= 4" }
''')
POINT = {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0}


def _declare(text: str = NAOR, **changes):
    table = {**tomllib.loads(text), **changes}
    return declare_model("f.toml", "q", table)


def _mm1n(rho: float, n: int) -> tuple[float, float]:
    weights = [rho**k for k in range(n + 1)]
    total = sum(weights)
    return weights[-1] / total, sum(k * w for k, w in enumerate(weights)) / total


def test_the_kind_is_registered_with_its_example():
    kind = get_model_kind("mdp")
    assert {"variables", "actions", "jumps", "cost", "outputs"} <= set(kind.keys)
    spec = declare_model("e.toml", "naor", tomllib.loads(kind.example)["models"]["naor"])
    assert spec.run(POINT)["N"] == 4


@pytest.mark.parametrize("method", ["pi", "vi", "lp"])
def test_naor_declared_gives_threshold_gain_and_outputs(method):
    r = _declare().run({**POINT, "method": method})
    n = r["N"]
    assert n == 4
    rho = POINT["lam"] / POINT["mu"]
    p_full, mean = _mm1n(rho, n)
    gain = POINT["C"] * mean - POINT["R"] * POINT["lam"] * (1 - p_full)
    g = r["gain"]
    value = float(g.value) if isinstance(g, Approximate) else float(g)
    bar = float(g.error) if isinstance(g, Approximate) else 0.0
    assert abs(value - gain) <= bar + 1e-12 * abs(gain)
    assert r["EN"] == pytest.approx(mean, rel=1e-10)
    assert r["full"] == pytest.approx(p_full, rel=1e-10)       # n = 4 is the boundary reached


def test_a_discounted_declaration_reports_the_value_at_the_initial_state():
    # a finite two-state process: from 0 jump to 1 at rate 1 (cost rate 2 at 0, 0 at 1), back
    # at rate 1 unless the action "hold" (cost rate h) keeps it at 1.  With alpha = 1, the value
    # of never holding solves v0 = (2 + v1)/2, v1 = v0/2: v0 = 4/3, v1 = 2/3.
    text = textwrap.dedent('''
        kind = "mdp"
        parameters = { h = "positive", alpha = "positive" }
        variables = { s = [0, 1] }
        actions = [
          { name = "free", jumps = [{ guard = "s == 1", rate = "1", update = { s = "0" } }] },
          { name = "hold", guard = "s == 1", cost = "h" },
        ]
        jumps = [{ guard = "s == 0", rate = "1", update = { s = "1" } }]
        cost = "2*(1 - s)"
        discount = "alpha"
    ''')
    r = _declare(text).run({"h": 5.0, "alpha": 1.0})
    v = r["value"]
    value = float(v.value) if isinstance(v, Approximate) else float(v)
    assert value == pytest.approx(4 / 3, rel=1e-10)
    # holding is free enough: v1 = h/alpha = 0.1 stays at 1 forever
    r = _declare(text).run({"h": 0.1, "alpha": 1.0})
    v = r["value"]
    value = float(v.value) if isinstance(v, Approximate) else float(v)
    assert value == pytest.approx((2 + 0.1) / 2, rel=1e-10)   # v0 = (2 + v1)/(alpha + 1)
    assert math.isfinite(r["error"])


@pytest.mark.parametrize("changes,key", [
    ({"actions": []}, "q.actions"),
    ({"actions": [{"name": "a", "jumps": [{"rate": "lam"}]}]}, r"q.actions\[0\].jumps\[0\].update"),
    ({"actions": [{"name": "a", "speed": 2}]}, r"q.actions\[0\].speed"),
    ({"variables": {"n": [0, "lots"]}}, r"q.variables.n\[1\]"),
    ({"outputs": {"N": "threshold:serve"}}, "q.outputs.N"),
    ({"truncation": {"n": "big"}}, "q.truncation"),
    ({"tolerance": 5}, "q.tolerance"),
    ({"horizon": 5}, "q.horizon"),
])
def test_bad_declarations_name_their_key(changes, key):
    with pytest.raises(InvalidParameter, match=rf"parameter models\.{key}[=\[]"):
        _declare(**changes)
