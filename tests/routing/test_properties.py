"""Hypothesis property tests of the routing closed forms on random farms."""

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.routing import (
    minimize_potential,
    minimize_social_cost,
    piecewise_loads,
    price_of_anarchy,
    social_optimum,
    thresholds,
    wardrop_equilibrium,
)
from symq.routing.exact import exact_zero

SETTINGS = settings(max_examples=50, deadline=None)

positive = st.floats(0.1, 10.0, allow_nan=False, allow_infinity=False)
fraction = st.floats(0.01, 0.99)


@st.composite
def farms(draw, k_max=8, equal_costs=False):
    K = draw(st.integers(1, k_max))
    C = np.array(draw(st.lists(positive, min_size=K, max_size=K)))
    w = np.ones(K) if equal_costs else np.array(draw(st.lists(positive, min_size=K, max_size=K)))
    return C, w, float(C.sum() * draw(fraction))


@SETTINGS
@given(farms())
def test_allocations_are_feasible(farm):
    C, w, rho = farm
    for solver in (social_optimum, wardrop_equilibrium):
        a = solver(C, w, rho)
        assert abs(a.loads.sum() - rho) <= 1e-12 * C.sum()
        assert np.all(a.loads >= 0) and np.all(a.loads < C)
        assert a.active == np.flatnonzero(a.loads > 0).tolist() and a.active
        assert np.isfinite(a.cost) and a.cost > 0


@SETTINGS
@given(farms())
def test_multipliers_separate_used_and_unused_servers(farm):
    # KKT: used servers have r_j < mu (marginal cost at zero load below mu), unused r_j >= mu
    C, w, rho = farm
    r = w / C
    for a in (social_optimum(C, w, rho), wardrop_equilibrium(C, w, rho)):
        unused = np.setdiff1d(np.arange(C.size), a.active)
        assert np.all(r[a.active] <= a.multiplier * (1 + 1e-12))
        assert np.all(r[unused] >= a.multiplier * (1 - 1e-12))


@SETTINGS
@given(farms(k_max=12))
def test_subset_property(farm):
    C, w, rho = farm
    assert set(wardrop_equilibrium(C, w, rho).active) <= set(social_optimum(C, w, rho).active)
    assert np.all(thresholds(C, w, "optimal") <= thresholds(C, w, "equilibrium") + 1e-12 * C.sum())


@SETTINGS
@given(farms())
def test_poa_at_least_one(farm):
    assert price_of_anarchy(*farm) >= 1 - 1e-12


@SETTINGS
@given(farms(k_max=10, equal_costs=True))
def test_poa_at_most_the_number_of_optimal_servers_for_equal_costs(farm):
    C, w, rho = farm
    assert price_of_anarchy(C, w, rho) <= len(social_optimum(C, w, rho).active) * (1 + 1e-12)


@SETTINGS
@given(farms(), st.randoms(use_true_random=False))
def test_relabelling_servers(farm, random):
    C, w, rho = farm
    perm = np.array(random.sample(range(C.size), C.size))
    for solver in (social_optimum, wardrop_equilibrium):
        a, b = solver(C, w, rho), solver(C[perm], w[perm], rho)
        assert np.allclose(a.loads[perm], b.loads, rtol=1e-10, atol=1e-12 * C.sum())


@settings(max_examples=30, deadline=None)
@given(farms())
def test_closed_forms_equal_the_scipy_minima(farm):
    C, w, rho = farm
    for closed, reference in ((social_optimum, minimize_social_cost),
                              (wardrop_equilibrium, minimize_potential)):
        a, b = closed(C, w, rho), reference(C, w, rho)
        assert np.max(np.abs(a.loads - b.loads)) <= 1e-9 * rho
        assert abs(a.cost - b.cost) <= 1e-9 * b.cost


rational = st.fractions(min_value=Fraction(1, 4), max_value=4, max_denominator=6)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 3).flatmap(lambda K: st.tuples(st.lists(rational, min_size=K, max_size=K),
                                                     st.lists(rational, min_size=K, max_size=K))))
def test_adjacent_piecewise_pieces_agree_at_thresholds(farm):
    C, w = farm
    pw = piecewise_loads(C, w)
    for pieces, ths in ((pw.pieces_optimal, pw.thresholds_optimal),
                        (pw.pieces_equilibrium, pw.thresholds_equilibrium)):
        for m, theta in enumerate(ths):
            for left, right in zip(pieces[m], pieces[m + 1]):
                assert exact_zero((left - right).subs(pw.rho, theta))


@SETTINGS
@given(farms(k_max=6), fraction)
def test_loads_grow_with_the_work_rate(farm, more):
    C, w, rho = farm
    rho2 = rho + (C.sum() - rho) * more
    for solver in (social_optimum, wardrop_equilibrium):
        assert np.all(solver(C, w, rho2).loads >= solver(C, w, rho).loads - 1e-12 * C.sum())
