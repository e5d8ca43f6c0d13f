"""Every documented error of symq.routing is raised with a message naming parameter, value,
domain."""

import numpy as np
import pytest

from symq.core import InvalidParameter, NotConverged, StabilityError, get_model
from symq.routing import (
    ServerFarm,
    heavy_traffic_poa,
    kkt_residuals,
    minimize_potential,
    minimize_social_cost,
    piecewise_loads,
    poa_bound_equal_costs,
    price_of_anarchy,
    social_optimum,
    thresholds,
    unbounded_family,
    wardrop_equilibrium,
)

SOLVERS = [social_optimum, wardrop_equilibrium, price_of_anarchy, minimize_social_cost,
           minimize_potential]


@pytest.mark.parametrize("solver", SOLVERS)
def test_rho_at_or_above_capacity_is_unstable(solver):
    with pytest.raises(StabilityError,
                       match=r"total work rate rho=7 must be < sum\(C\)=7 for a stationary regime"):
        solver([4, 2, 1], [1, 2, 4], 7)
    with pytest.raises(StabilityError, match=r"rho=9\.5 must be < sum\(C\)=7"):
        solver([4, 2, 1], [1, 2, 4], 9.5)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_rho_must_be_positive_and_finite(solver, bad):
    with pytest.raises(InvalidParameter, match=r"parameter rho=.* must be a positive real number"):
        solver([4, 2, 1], [1, 2, 4], bad)


def test_rho_must_be_a_number():
    with pytest.raises(InvalidParameter, match="rho='five'"):
        social_optimum([1.0], [1.0], "five")


@pytest.mark.parametrize("bad", [[4, 0, 1], [4, -2, 1], [4, float("nan"), 1], [4, float("inf"), 1]])
def test_capacities_must_be_positive_and_finite(bad):
    with pytest.raises(InvalidParameter, match=r"parameter C=.* must be a non-empty vector of "
                                               r"positive real numbers \((entry 1 is|contains)"):
        ServerFarm(bad, [1, 2, 4])


@pytest.mark.parametrize("bad", [[1, 2, 0], [1, -2, 4], [np.nan, 1, 1]])
def test_holding_costs_must_be_positive_and_finite(bad):
    with pytest.raises(InvalidParameter, match=r"parameter w=.* must be a non-empty vector"):
        social_optimum([4, 2, 1], bad, 1.0)


def test_empty_farm():
    with pytest.raises(InvalidParameter,
                       match=r"parameter C=\[\] must be a non-empty vector.*length 0"):
        ServerFarm([], [])


def test_mismatched_lengths():
    with pytest.raises(InvalidParameter,
                       match=r"parameter w=\[1, 2\] must be a vector of the same length as C \(3\) "
                             r"\(has length 2\)"):
        wardrop_equilibrium([4, 2, 1], [1, 2], 1.0)


def test_non_numeric_and_matrix_input():
    with pytest.raises(InvalidParameter, match="C='abc'.*comma-separated"):
        ServerFarm("abc", [1.0])
    with pytest.raises(InvalidParameter, match="has 2 dimensions"):
        ServerFarm([[1.0, 2.0]], [1.0, 2.0])


def test_model_reports_bad_input_through_the_registry():
    model = get_model("ps-routing")
    with pytest.raises(StabilityError, match=r"sum\(C\)=7"):
        model.run({"C": [4, 2, 1], "w": [1, 2, 4], "rho": 8})
    with pytest.raises(InvalidParameter, match="parameter C='4,x,1'"):
        model.parse({"C": "4,x,1", "w": "1,2,4", "rho": "5"})
    with pytest.raises(InvalidParameter, match="w=.*missing"):
        model.run({"C": [4, 2, 1], "rho": 1})


@pytest.mark.parametrize("bad", [1.0, 0.5, -3, float("nan")])
def test_unbounded_family_needs_h_above_one(bad):
    with pytest.raises(InvalidParameter,
                       match=r"parameter h=.* must be a real number in \(1, inf\)"):
        unbounded_family(bad)


def test_unknown_kind():
    with pytest.raises(InvalidParameter, match="kind='nash' must be one of optimal, equilibrium"):
        thresholds([1, 2], [1, 1], kind="nash")
    with pytest.raises(InvalidParameter, match="kind='nash'"):
        piecewise_loads([1, 2], [1, 1]).at(1, "nash")


def test_exact_tools_reject_bad_input():
    with pytest.raises(InvalidParameter, match="loads"):
        kkt_residuals([1, 2], [1, 1], 1, [1])
    with pytest.raises(InvalidParameter, match=r"C\[0\]"):
        piecewise_loads([object(), 1], [1, 1])
    with pytest.raises(InvalidParameter, match="parameter C="):
        piecewise_loads([0, 1], [1, 1])


def test_other_entry_points_validate():
    with pytest.raises(InvalidParameter, match="parameter w="):
        heavy_traffic_poa([1, 2], [1, -1])
    with pytest.raises(StabilityError, match=r"sum\(C\)=3"):
        poa_bound_equal_costs([1, 2], 3)


def test_optimiser_failure_raises_not_converged_with_its_residual():
    with pytest.raises(NotConverged,
                       match=r"SLSQP \(social cost.*did not converge: residual") as info:
        minimize_social_cost([4, 2, 1], [1, 2, 4], 5, maxiter=1, polish=False)
    assert info.value.residual > info.value.tolerance
    with pytest.raises(NotConverged, match=r"SLSQP \(potential"):
        minimize_potential([4, 2, 1], [1, 2, 4], 5, maxiter=1, polish=False)


@pytest.mark.parametrize("solver", [social_optimum, wardrop_equilibrium])
def test_loads_unresolvable_in_double_precision_raise_instead_of_returning_capacity(solver):
    # rho one ulp below sum(C) = 4 with a nearly free first server: x_1 would round to C_1 = 1
    with pytest.raises(StabilityError, match=r"too close to sum\(C\)=4.*double precision"):
        solver([1.0, 3.0], [1e-6, 1.0], np.nextafter(4.0, 0.0))
