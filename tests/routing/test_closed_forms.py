"""Prefix-scan closed forms against hand-derived cases, invariances and the registered model.

Hand derivations use only the model (J = sum w x/(C - x), KKT / Wardrop conditions), written
out in the comments; none of the expected numbers is copied from symq's output.
"""

import doctest
import json
from fractions import Fraction

import numpy as np
import pytest

import symq.routing
from symq.core import Result, get_model
from symq.routing import (
    exact,
    farm,
    heavy_traffic_poa,
    model,
    numeric,
    poa_bound_equal_costs,
    price_of_anarchy,
    simulation,
    social_optimum,
    solve,
    symbolic,
    thresholds,
    unbounded_family,
    wardrop_equilibrium,
)


def close(a, b, tol=1e-12):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=tol, atol=tol)


def test_typical_farm_by_hand():
    # C = (4, 2, 1), w = (1, 2, 4), rho = 5: sqrt(wC) = (2, 2, 2), r = (1/4, 1, 4).
    # Optimum, all used: t = (7 - 5)/6 = 1/3, x = C - 2t = (10/3, 4/3, 1/3),
    # J* = 1*(10/3)/(2/3) + 2*(4/3)/(2/3) + 4*(1/3)/(2/3) = 5 + 4 + 2 = 11, mu = 1/t^2 = 9.
    opt = social_optimum([4, 2, 1], [1, 2, 4], 5)
    assert close(opt.loads, [Fraction(10, 3), Fraction(4, 3), Fraction(1, 3)])
    assert close(opt.cost, 11) and close(opt.multiplier, 9) and opt.active == [0, 1, 2]
    # Equilibrium: with servers 1, 2: c = 3/(6 - 5) = 3 <= r_3 = 4, so server 3 stays idle;
    # x = C - w/c = (11/3, 4/3, 0), J = 3 * 5 = 15.
    ne = wardrop_equilibrium([4, 2, 1], [1, 2, 4], 5)
    assert close(ne.loads, [Fraction(11, 3), Fraction(4, 3), 0]) and ne.loads[2] == 0.0
    assert close(ne.cost, 15) and close(ne.multiplier, 3) and ne.active == [0, 1]
    assert close(price_of_anarchy([4, 2, 1], [1, 2, 4], 5), Fraction(15, 11))


def test_thresholds_by_hand():
    # r = (1/4, 1, 4): theta^OPT_1 = 4(1 - sqrt(1/4)) = 2,
    # theta^OPT_2 = 4(1 - sqrt(1/16)) + 2(1 - sqrt(1/4)) = 3 + 1 = 4.
    # theta^NE_1 = 4(1 - 1/4) = 3, theta^NE_2 = 4(1 - 1/16) + 2(1 - 1/4) = 21/4.
    assert close(thresholds([4, 2, 1], [1, 2, 4]), [0, 2, 4])
    assert close(thresholds([4, 2, 1], [1, 2, 4], "equilibrium"), [0, 3, 5.25])
    # order of the thresholds follows r = w/C, not the input order
    assert close(thresholds([1, 2, 4], [4, 2, 1], "equilibrium"), [0, 3, 5.25])
    assert thresholds([3.0], [1.0]).tolist() == [0.0]


def test_two_servers_by_hand():
    # C = (1, 1), w = (1, 4), rho = 1: optimum t = (2 - 1)/(1 + 2) = 1/3, x = (2/3, 1/3),
    # J* = 2 + 2 = 4; equilibrium c = 5/(2 - 1) = 5, x = (4/5, 1/5), J = 5.
    opt = social_optimum([1, 1], [1, 4], 1.0)
    ne = wardrop_equilibrium([1, 1], [1, 4], 1.0)
    assert close(opt.loads, [Fraction(2, 3), Fraction(1, 3)]) and close(opt.cost, 4)
    assert close(ne.loads, [Fraction(4, 5), Fraction(1, 5)]) and close(ne.cost, 5)


def test_single_server():
    # K = 1: everything goes to the server; J = w rho/(C - rho); mu = wC/(C - rho)^2.
    C, w, rho = 3.0, 2.0, 1.0
    for alloc in (social_optimum([C], [w], rho), wardrop_equilibrium([C], [w], rho)):
        assert close(alloc.loads, [rho]) and close(alloc.cost, w * rho / (C - rho))
        assert alloc.active == [0]
    assert close(social_optimum([C], [w], rho).multiplier, w * C / (C - rho) ** 2)
    assert close(wardrop_equilibrium([C], [w], rho).multiplier, w / (C - rho))
    assert close(price_of_anarchy([C], [w], rho), 1.0)


@pytest.mark.parametrize("rho", [0.3, 1.5, 2.9])
def test_equal_servers_split_evenly(rho):
    for alloc in (social_optimum([1, 1, 1], [2, 2, 2], rho),
                  wardrop_equilibrium([1, 1, 1], [2, 2, 2], rho)):
        assert close(alloc.loads, [rho / 3] * 3) and alloc.active == [0, 1, 2]
        assert close(alloc.cost, 3 * 2 * (rho / 3) / (1 - rho / 3))


def test_equal_ratios_give_proportional_loads_and_no_anarchy():
    # w proportional to C: every r_j equal, both solutions split in proportion to C.
    C, w, rho = np.array([4.0, 1.0, 2.5]), 0.7 * np.array([4.0, 1.0, 2.5]), 5.0
    for alloc in (social_optimum(C, w, rho), wardrop_equilibrium(C, w, rho)):
        assert close(alloc.loads, rho * C / C.sum())
    assert close(price_of_anarchy(C, w, rho), 1.0) and close(heavy_traffic_poa(C, w), 1.0)


def test_ties_are_harmless():
    # r = (1, 1, 1) with unequal capacities: loads proportional to C.
    assert close(social_optimum([2, 1, 1], [2, 1, 1], 1.5).loads, [0.75, 0.375, 0.375])
    # r = (1, 1, 9/5), rho = 1/2: c = 2/(2 - 1/2) = 4/3 < 9/5, x = 1 - 3/4 on the tied pair.
    assert close(wardrop_equilibrium([1, 1, 5], [1, 1, 9], 0.5).loads, [0.25, 0.25, 0.0])


def test_entering_server_has_exactly_zero_load_at_its_threshold():
    opt = social_optimum([4, 2, 1], [1, 2, 4], 2.0)       # theta^OPT_1 = 2
    ne = wardrop_equilibrium([4, 2, 1], [1, 2, 4], 3.0)   # theta^NE_1 = 3
    assert opt.loads.tolist() == [2.0, 0.0, 0.0] and opt.active == [0]
    assert ne.loads.tolist() == [3.0, 0.0, 0.0] and ne.active == [0]
    assert social_optimum([4, 2, 1], [1, 2, 4], 2.0 + 1e-9).active == [0, 1]
    assert np.all(social_optimum([4, 2, 1], [1, 2, 4], 2.0 + 1e-15).loads >= 0)


def test_permuting_servers_permutes_loads():
    rng = np.random.default_rng(3)
    C, w = rng.uniform(0.5, 3, 7), rng.uniform(0.5, 3, 7)
    perm = rng.permutation(7)
    for solver in (social_optimum, wardrop_equilibrium):
        a, b = solver(C, w, 6.0), solver(C[perm], w[perm], 6.0)
        assert close(a.loads[perm], b.loads) and close(a.cost, b.cost)
        assert sorted(perm[b.active].tolist()) == a.active


def test_scaling():
    # (C, rho) -> s (C, rho) scales loads by s and leaves J unchanged; w -> b w scales J by b.
    C, w, rho = np.array([3.0, 1.0, 2.0]), np.array([1.0, 5.0, 2.0]), 4.0
    for solver in (social_optimum, wardrop_equilibrium):
        base = solver(C, w, rho)
        scaled = solver(2.5 * C, w, 2.5 * rho)
        costly = solver(C, 3.0 * w, rho)
        assert close(scaled.loads, 2.5 * base.loads) and close(scaled.cost, base.cost)
        assert close(costly.loads, base.loads) and close(costly.cost, 3.0 * base.cost)


def test_costs_agree_with_the_loads():
    rng = np.random.default_rng(8)
    for _ in range(20):
        C, w = rng.uniform(0.2, 5, 6), rng.uniform(0.1, 4, 6)
        rho = C.sum() * rng.uniform(0.05, 0.95)
        for solver in (social_optimum, wardrop_equilibrium):
            a = solver(C, w, rho)
            assert close(a.cost, numeric.social_cost(C, w, a.loads), 1e-10)


def test_heavy_traffic_limit_by_hand():
    # (sum C)(sum w)/(sum sqrt(wC))^2 = 7 * 7 / 6^2
    assert close(heavy_traffic_poa([4, 2, 1], [1, 2, 4]), Fraction(49, 36))
    assert close(price_of_anarchy([4, 2, 1], [1, 2, 4], 7 - 1e-8), Fraction(49, 36), 1e-7)


def test_poa_bound_for_equal_costs():
    assert poa_bound_equal_costs([4, 2, 1], 0.5) == 1
    assert poa_bound_equal_costs([4, 2, 1], 6.5) == 3
    # w = 1, C = (9, 1): heavy-traffic PoA = 2*10/(3 + 1)^2 = 5/4 <= 2
    assert close(heavy_traffic_poa([9, 1], [1, 1]), Fraction(5, 4))


def test_unbounded_family_by_hand():
    # h = 4: rho = 3/4; equilibrium: only server 1 (c = 1/(1 - 3/4) = 4 = r_2), J^NE = 3;
    # optimum: t = (2 - 3/4)/(1 + 2) = 5/12, x = (7/12, 1/6), J* = 9/(5/4) - 5 = 11/5.
    fam = unbounded_family(4.0)
    assert close(fam.rho, 0.75) and close(fam.J_ne, 3) and close(fam.J_opt, Fraction(11, 5))
    assert close(fam.x_opt, [Fraction(7, 12), Fraction(1, 6)]) and close(fam.x_ne, [0.75, 0])
    assert close(fam.poa, Fraction(15, 11)) and close(fam.poa_asymptotic, 1.0)


@pytest.mark.parametrize("h", [1.1, 3.0, 50.0, 1e4])
def test_unbounded_family_matches_the_general_prefix_scan(h):
    fam = unbounded_family(h)
    opt = social_optimum(fam.C, fam.w, fam.rho)
    ne = wardrop_equilibrium(fam.C, fam.w, fam.rho)
    assert close(opt.loads, fam.x_opt, 1e-9) and close(ne.loads, fam.x_ne, 1e-9)
    assert ne.active == [0] and opt.active == [0, 1]
    assert close(ne.cost / opt.cost, fam.poa, 1e-9)


def test_allocation_is_json_ready_and_read_only():
    alloc = social_optimum([4, 2, 1], [1, 2, 4], 5)
    data = json.loads(json.dumps(alloc.to_dict()))
    assert set(data) == {"loads", "cost", "active", "multiplier"}
    assert data["active"] == [0, 1, 2] and len(data["loads"]) == 3
    with pytest.raises(ValueError):
        alloc.loads[0] = 1.0


def test_server_farm_accepts_farm_objects():
    f = farm.ServerFarm([4, 2, 1], [1, 2, 4])
    assert close(social_optimum(f, 5).loads, social_optimum([4, 2, 1], [1, 2, 4], 5).loads)
    assert close(price_of_anarchy(f, 5), Fraction(15, 11))
    assert f.K == 3 and f.order.tolist() == [0, 1, 2] and f.capacity == 7.0


def test_large_farm_is_consistent():
    rng = np.random.default_rng(0)
    K = 100_000
    C, w = rng.uniform(0.2, 5, K), np.exp(rng.normal(0, 1, K))
    rho = 0.6 * C.sum()
    opt = social_optimum(C, w, rho)     # the speed is measured in benchmarks/bench_routing.py
    ne = wardrop_equilibrium(C, w, rho)
    for alloc in (opt, ne):
        assert close(alloc.loads.sum(), rho, 1e-10)
        assert np.all(alloc.loads >= 0) and np.all(alloc.loads < C)
    # the used servers are exactly those with r_j below the multiplier (KKT / Wardrop)
    r = w / C
    assert set(opt.active) == set(np.flatnonzero(r < opt.multiplier).tolist())
    assert set(ne.active) == set(np.flatnonzero(r < ne.multiplier).tolist())


def test_registered_model():
    spec = get_model("ps-routing")
    assert spec is model.MODEL and [p.name for p in spec.parameters] == ["C", "w", "rho"]
    assert spec.paper == "ps-routing"
    result = spec.run(spec.parse({"C": "4,2,1", "w": "1,2,4", "rho": "5"}))
    assert isinstance(result, Result) and result.model == "ps-routing"
    assert close(result["optimal"].cost, 11) and close(result["equilibrium"].cost, 15)
    assert close(result["poa"], Fraction(15, 11))
    assert spec.summary_values(result) == pytest.approx(
        {"J_opt": 11, "J_ne": 15, "poa": 15 / 11, "n_opt": 3, "n_ne": 2})
    text = json.dumps(result.to_dict())
    assert '"method": "closed form (prefix scan)"' in text
    typical = {p.name: p.typical for p in spec.parameters}
    assert spec.run(typical)["equilibrium"].active == [0, 1]


def test_parameters_are_declared():
    assert farm.C.symbol.is_positive and farm.rho.symbol.name == "rho"
    assert "capacities" in farm.C.description and farm.w.typical == (1.0, 2.0, 4.0)


@pytest.mark.parametrize("module", [farm, solve, symbolic, exact, numeric, model,
                                    simulation, simulation.sizes, simulation.queue,
                                    simulation.farm, symq.routing])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
