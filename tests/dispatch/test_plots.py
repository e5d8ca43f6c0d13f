"""Dispatching plots: the decision regions of the optimal two-server policy have the structure
of Hyytiä & Righter (short jobs to the shorter queue, long jobs to the longer one, symmetry), the
value of the random split is the M/G/1 closed form, and the plots draw."""

import dataclasses

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.dispatch import (
    decision_regions_data,
    evaluate_policy,
    plot_decision_regions,
    plot_value_diagonal,
    solve_optimal,
    value_diagonal_data,
)
from symq.laws import Exponential


@pytest.fixture(scope="module")
def optimal():
    return solve_optimal(2, 0.4, Exponential(1.0), delta=0.25, U=16.0)


def test_short_jobs_join_the_shorter_queue(optimal):
    data = decision_regions_data(optimal, x=[0.05], u_max=6.0, n=25)
    u1, u2 = np.meshgrid(data["u"], data["u"], indexing="ij")
    apart = np.abs(u1 - u2) >= 0.5
    shorter = np.where(u1 < u2, 0, 1)
    assert np.array_equal(data["choice"][0][apart], shorter[apart])


def test_long_jobs_join_the_longer_queue_and_the_regions_are_symmetric(optimal):
    data = decision_regions_data(optimal, x=[0.5, 6.0], u_max=4.0, n=9)
    u = data["u"]
    i, j = int(np.searchsorted(u, 1.0)), int(np.searchsorted(u, 3.0))
    assert data["choice"][1, i, j] == 1 and data["choice"][1, j, i] == 0   # (1, 3): to the 3
    off = ~np.eye(u.size, dtype=bool)
    for choice in data["choice"]:                    # swapping the servers swaps the choice
        assert np.mean(choice[off] == 1 - choice.T[off]) > 0.97


def test_random_split_value_is_the_mg1_closed_form():
    rnd = evaluate_policy("rnd", 2, 0.4, Exponential(1.0), delta=0.25, U=16.0)
    data = value_diagonal_data(rnd, u_max=12.0, n=49)
    lam = 0.8                                        # total arrival rate, m rho / E[X]
    exact = lam * data["u"] ** 2 / (2.0 * (1.0 - 0.4))  # sum_i (lam/2) u^2 / (2 (1 - rho))
    far = data["u"] >= 2.0
    np.testing.assert_allclose(data["v"][far], exact[far], rtol=2e-2)
    np.testing.assert_allclose(data["rnd"], exact, rtol=1e-12)
    assert data["c"] == pytest.approx(lam / (2.0 * 0.6), rel=2e-2)


def test_optimal_value_grows_like_the_reported_quadratic(optimal):
    data = value_diagonal_data(optimal)
    assert data["c"] == pytest.approx(0.56, abs=0.02)        # Hyytiä & Righter: about 0.56 u^2
    assert np.all(data["v"][1:] < data["rnd"][1:])           # below the random split's value


def test_bad_input_names_the_parameter(optimal):
    three = dataclasses.replace(optimal, m=3)       # only the server count is looked at
    with pytest.raises(InvalidParameter, match="m = 2"):
        decision_regions_data(three)
    with pytest.raises(InvalidParameter, match="result"):
        value_diagonal_data("not a result")
    with pytest.raises(InvalidParameter, match="x="):
        decision_regions_data(optimal, x=[-1.0])


def test_plots_draw(optimal):
    figure = pytest.importorskip("matplotlib.figure")
    ax = figure.Figure().subplots()
    assert plot_decision_regions(optimal, 2.0, n=21, ax=ax) is ax
    assert len(ax.lines) == 1 and len(ax.collections) == 1          # diagonal, regions
    ax = figure.Figure().subplots()
    assert plot_value_diagonal(optimal, ax=ax) is ax
    assert len(ax.lines) == 3
