"""The routing-cost model kind against ps-routing and against closed forms derived here.

* the default cost w x/(C - x) reproduces ps-routing (the prefix scan over its closed forms, an
  independent path from the numeric solver the declared model uses): loads of the optimum and of
  the equilibrium to 1e-6, the two costs and the PoA;
* x^2/C: Lagrange gives 2 x_j/C_j = mu, so x_j = rho C_j/sum C and J* = rho^2/sum C; the cost
  per unit of work x/C is proportional to the marginal cost, so the equilibrium is the optimum
  and PoA = 1;
* w x + x^2/C (affine latency w + x/C): on the used prefix S (servers sorted by w) the optimum
  has w_j + 2 x_j/C_j = mu, the equilibrium w_j + x_j/C_j = c, and the PoA is at most 4/3
  (Roughgarden & Tardos, J. ACM 49(2), 2002, affine latencies);
* bad input gives one InvalidParameter naming models.NAME.KEY or the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.parameters import Parameter, PositiveReal, PositiveVector
from symq.core.registry import get_model, get_model_kind

KIND = get_model_kind("routing-cost")
PS = get_model("ps-routing")
A = (Parameter("a", PositiveReal(), typical=1.0),)


def declare(table=None, parameters=(), name="m"):
    return KIND.declare(name, table or {}, parameters, f"models.{name}")


def test_registered_kind() -> None:
    assert set(KIND.keys) == {"cost", "capacity"}
    assert {"x_opt", "x_ne", "J_opt", "J_ne", "poa"} <= set(KIND.outputs)
    assert 'kind = "routing-cost"' in KIND.example
    assert set(PS.outputs) == {"optimal", "equilibrium", "poa"}


@pytest.mark.parametrize("C, w, rho", [
    ([4, 2, 1], [1, 2, 4], 5.0),           # the equilibrium leaves server 3 unused
    ([4, 2, 1], [1, 2, 4], 1.0),           # only server 1 in both
    ([1, 1, 1, 1], [1, 1, 1, 1], 3.9),     # heavy traffic, symmetric
    ([3.0, 0.5, 2.0, 1.5, 0.7], [0.2, 1.0, 3.0, 0.6, 5.0], 6.0),
])
@pytest.mark.parametrize("table", [{}, {"cost": "w*x/(C - x)"}])
def test_default_cost_reproduces_ps_routing(C, w, rho, table) -> None:
    declared = declare(table).run({"C": C, "w": w, "rho": rho})
    reference = PS.run({"C": C, "w": w, "rho": rho})
    opt, ne = reference["optimal"], reference["equilibrium"]
    assert np.allclose(declared["x_opt"], opt.loads, rtol=0, atol=1e-6)
    assert np.allclose(declared["x_ne"], ne.loads, rtol=0, atol=1e-6)
    assert declared["J_opt"] == pytest.approx(opt.cost, rel=1e-9)
    assert declared["J_ne"] == pytest.approx(ne.cost, rel=1e-9)
    assert declared["poa"] == pytest.approx(reference["poa"], rel=1e-9)
    assert declared["active_opt"] == opt.active and declared["active_ne"] == ne.active
    assert declared["mu"] == pytest.approx(opt.multiplier, rel=1e-8)
    assert declared["c"] == pytest.approx(ne.multiplier, rel=1e-8)
    assert declared["residual"] <= 1e-10


def test_quadratic_cost_closed_form() -> None:
    spec = declare({"cost": "x^2/C"})
    assert [p.name for p in spec.parameters] == ["C", "rho"]      # w unused, not asked for
    C, rho = np.array([4.0, 2.0, 1.0]), 5.0
    r = spec.run({"C": C, "rho": rho})
    closed = rho * C / C.sum()
    assert np.allclose(r["x_opt"], closed, atol=1e-9) and np.allclose(r["x_ne"], closed, atol=1e-9)
    assert r["J_opt"] == pytest.approx(rho ** 2 / C.sum(), rel=1e-12)
    assert r["poa"] == pytest.approx(1.0, abs=1e-12)
    assert r["mu"] == pytest.approx(2 * rho / C.sum(), rel=1e-9)   # 2 x_j / C_j
    assert r["c"] == pytest.approx(rho / C.sum(), rel=1e-9)        # x_j / C_j


def _affine(C, w, rho, factor):
    """Water-filling for w_j + factor x_j/C_j = level on the used prefix (sorted by w)."""
    order = np.argsort(w)
    for m in range(1, len(C) + 1):
        S = order[:m]
        level = (factor * rho + np.sum(w[S] * C[S])) / np.sum(C[S])
        if m == len(C) or level <= w[order[m]]:
            x = np.zeros(len(C))
            x[S] = (level - w[S]) * C[S] / factor
            return x, level


def test_affine_cost_closed_form_and_the_4_3_bound() -> None:
    C, w, rho = np.array([4.0, 2.0, 1.0]), np.array([1.0, 1.5, 3.0]), 3.0
    # by hand: optimum mu = 13/6 on {1, 2}: x = (7/3, 2/3, 0); equilibrium c = 5/3: (8/3, 1/3, 0)
    x_opt, mu = _affine(C, w, rho, 2.0)
    x_ne, c = _affine(C, w, rho, 1.0)
    assert np.allclose(x_opt, [7 / 3, 2 / 3, 0]) and np.allclose(x_ne, [8 / 3, 1 / 3, 0])
    r = declare({"cost": "w*x + x^2/C"}).run({"C": C, "w": w, "rho": rho})
    assert np.allclose(r["x_opt"], x_opt, atol=1e-9) and np.allclose(r["x_ne"], x_ne, atol=1e-9)
    cost = lambda x: float(np.sum(w * x + x ** 2 / C))  # noqa: E731
    assert r["J_opt"] == pytest.approx(cost(x_opt), rel=1e-12)
    assert r["J_ne"] == pytest.approx(cost(x_ne), rel=1e-12)
    assert r["mu"] == pytest.approx(mu) and r["c"] == pytest.approx(c)
    assert 1.0 < r["poa"] <= 4 / 3


def test_declared_parameters_scalar_and_vector() -> None:
    C, w, rho = [4.0, 2.0, 1.0], [1.0, 2.0, 4.0], 5.0
    reference = PS.run({"C": C, "w": w, "rho": rho})
    # a scalar factor scales both costs and leaves the loads (and the PoA) unchanged
    scaled = declare({"cost": "a*w*x/(C - x)"}, A).run({"a": 3.0, "C": C, "w": w, "rho": rho})
    assert scaled["J_opt"] == pytest.approx(3 * reference["optimal"].cost, rel=1e-9)
    assert scaled["poa"] == pytest.approx(reference["poa"], rel=1e-9)
    # a vector parameter, one entry per server, plays the part of w
    vector = (Parameter("h", PositiveVector(), typical=(1.0, 1.0, 1.0)),)
    spec = declare({"cost": "h*x/(C - x)"}, vector)
    assert [p.name for p in spec.parameters] == ["h", "C", "rho"]
    r = spec.run({"h": w, "C": C, "rho": rho})
    assert np.allclose(r["x_ne"], reference["equilibrium"].loads, atol=1e-6)


def test_capacity_key() -> None:
    # x/(C/2 - x) with capacity C/2 is ps-routing on capacities C/2 with unit weights
    spec = declare({"cost": "x/(C/2 - x)", "capacity": "C/2"})
    r = spec.run({"C": [4.0, 2.0, 1.0], "rho": 2.5})
    reference = PS.run({"C": [2.0, 1.0, 0.5], "w": [1, 1, 1], "rho": 2.5})
    assert r["capacity"].tolist() == [2.0, 1.0, 0.5]
    assert np.allclose(r["x_opt"], reference["optimal"].loads, atol=1e-6)
    assert r["poa"] == pytest.approx(reference["poa"], rel=1e-9)


def test_a_sympy_expression_is_accepted() -> None:
    x, C = sp.symbols("x C")
    r = declare({"cost": x ** 2 / C}).run({"C": [1.0, 3.0], "rho": 2.0})
    assert np.allclose(r["x_opt"], [0.5, 1.5], atol=1e-9)


def test_potential_by_quadrature_when_sympy_has_no_closed_form(monkeypatch) -> None:
    from symq.routing import declared

    monkeypatch.setattr(declared, "_potential", lambda per_unit: None)
    spec = declare({"cost": "w*x/(C - x)"})
    r = spec.run({"C": [4, 2, 1], "w": [1, 2, 4], "rho": 5})
    assert "quadrature" in r.method
    reference = PS.run({"C": [4, 2, 1], "w": [1, 2, 4], "rho": 5})
    assert np.allclose(r["x_ne"], reference["equilibrium"].loads, atol=1e-6)


def test_derivation_kkt_conditions() -> None:
    d = declare().derivation()
    kkt = d["KKT conditions"].content[0]
    x, C, w, mu = (sp.Symbol(n) for n in ("x_j", "C_j", "w_j", "mu"))
    by_hand = C * w / (C - x) ** 2                          # d/dx of w x/(C - x)
    names = {s.name: s for s in kkt.lhs.free_symbols}
    assert sp.simplify(kkt.lhs - by_hand.subs({x: names["x_j"], C: names["C_j"],
                                               w: names["w_j"]})) == 0
    assert kkt.rhs.name == mu.name
    wardrop = d["Wardrop conditions"].content[0]
    assert sp.simplify(wardrop.lhs - names["w_j"] / (names["C_j"] - names["x_j"])) == 0
    assert "log" in d.to_markdown()                         # the potential in closed form


@pytest.mark.parametrize("table, parameters, key, pattern", [
    ({"cost": "x*z"}, (), "models.m.cost", r"unknown name z"),
    ({"costs": "x"}, (), "models.m.costs", r"one of the keys cost, capacity"),
    ({"capacity": "C - x"}, (), "models.m.capacity", r"unknown name x"),
    ({"cost": "w*C"}, (), "models.m.cost", r"does not depend on x"),
    ({"cost": "x + 1"}, (), "models.m.cost", r"vanishes at x = 0 .*cost\(0\) = 1"),
    ({"cost": "Max(x, x^2)"}, (), "models.m.cost", r"twice differentiable"),
    ({"cost": len}, (), "models.m.cost", r"the solver needs the formula itself"),
    ({}, (Parameter("x", PositiveReal()),), "models.m.parameters", r"names other than x, C"),
])
def test_bad_declaration(table, parameters, key, pattern) -> None:
    with pytest.raises(InvalidParameter, match=pattern) as info:
        declare(table, parameters)
    assert info.value.name == key


@pytest.mark.parametrize("table, values, key, pattern", [
    ({"cost": "x - x^2/(4*C)"}, {"C": [1, 2], "rho": 1}, "models.m.cost",
     r"convex in x .*d2 cost/dx2 = -0\.5 < 0 at x = 0 on server 0"),
    ({"cost": "sqrt(x)"}, {"C": [1, 2], "rho": 1}, "models.m.cost", r"finite .*derivative is inf"),
    ({"cost": "x*(x - C/2)^2"}, {"C": [1, 2], "rho": 1}, "models.m.cost", r"increasing in x"),
    ({}, {"C": [4, 2, 1], "w": [1, 2, 4], "rho": 7}, "rho",
     r"total load < the sum of the capacities 7"),
    ({"capacity": "C/2"}, {"C": [4, 2, 1], "w": [1, 2, 4], "rho": 4}, "rho", r"capacities 3\.5"),
    ({}, {"C": [4, 2, 1], "w": [1, 2], "rho": 1}, "w", r"same length as C"),
    ({"cost": "w*x + x^2/C"}, {"C": [4, 2, 1], "w": [1, 2, 4], "rho": 5}, "models.m.capacity",
     r"stays finite at the capacity of server 0: the bound x < capacity probably binds"),
])
def test_bad_values(table, values, key, pattern) -> None:
    spec = declare(table)
    with pytest.raises(InvalidParameter, match=pattern) as info:
        spec.run(values)
    assert info.value.name == key


def test_vector_parameter_of_the_wrong_length() -> None:
    spec = declare({"cost": "h*x/(C - x)"}, (Parameter("h", PositiveVector()),))
    with pytest.raises(InvalidParameter, match=r"parameter h=.* must be a number or a vector of "
                       r"3 entries") as info:
        spec.run({"h": [1, 2], "C": [4, 2, 1], "rho": 1})
    assert info.value.name == "h"
