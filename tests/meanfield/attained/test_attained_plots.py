"""Attained-service plots: E[W] of the policies against Pollaczek-Khinchine (d = 1) and the
doubly exponential JSQ(d) fixed point (SQ, exponential sizes), and the plot draws."""

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, UnknownName
from symq.meanfield.attained import attained_policies_data, plot_attained_policies

EXPONENTIAL = (np.array([1.0]), np.array([[-1.0]]))


def test_one_probe_is_the_mg1_queue_for_every_policy():
    # B is doubled where the mass at the truncation exceeds 1e-8
    data = attained_policies_data(("SQ", "LAS", "LEW"), d=1, loads=(0.2, 0.4), delta=0.5,
                                  rep_max=2.0, B=60)
    scv = 10.0                                            # the default H2 sizes: mean 1, SCV 10
    pk = data["lam"] * (1.0 + scv) / (2.0 * (1.0 - data["lam"]))
    for row in data["EW"]:
        np.testing.assert_allclose(row, pk, rtol=1e-6)
    np.testing.assert_allclose(data["ET"], data["EW"] + 1.0, rtol=1e-12)
    np.testing.assert_allclose(data["reduction"], 0.0, atol=1e-6)
    assert data["policies"].tolist() == ["SQ", "LAS", "LEW"] and data["d"] == 1


def test_sq_with_exponential_sizes_is_the_supermarket_fixed_point():
    data = attained_policies_data(("SQ", "LEW"), d=2, loads=(0.5,), sizes=EXPONENTIAL,
                                  delta=0.5, rep_max=2.0, B=30)
    k = np.arange(1, 40)
    exact = np.sum(0.5 ** (2.0 ** k - 1.0)) / 0.5         # E[T] = sum_k u_k / lam
    assert data["ET"][0, 0] == pytest.approx(exact, rel=1e-9)
    assert data["reduction"][0, 0] == 0.0


def test_bad_input_names_the_parameter():
    with pytest.raises(InvalidParameter, match="policies"):
        attained_policies_data((), d=2)
    with pytest.raises(InvalidParameter, match="loads"):
        attained_policies_data(("SQ",), d=2, loads=())
    with pytest.raises(UnknownName):
        attained_policies_data(("no-such-policy",), d=2, loads=(0.5,))


def test_plot_draws_one_line_per_policy():
    figure = pytest.importorskip("matplotlib.figure")
    data = attained_policies_data(("SQ", "LEW"), d=2, loads=(0.3, 0.6), delta=1.0,
                                  rep_max=2.0)
    ax = figure.Figure().subplots()
    assert plot_attained_policies(data=data, ax=ax) is ax
    assert len(ax.lines) == 2 and ax.get_yscale() == "log"
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), data["EW"][1])
    ax = figure.Figure().subplots()
    plot_attained_policies(data=data, relative=True, ax=ax)
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), data["reduction"][1])
