"""Window-density plots: the data against the exact MIMD law with a floor, the
Ott-Kemperman-Mathis constant for NewReno, total mass with a cap, and the plot draws."""

import math

import numpy as np
import pytest
from scipy.integrate import trapezoid
from scipy.optimize import brentq

from symq.core.errors import InvalidParameter
from symq.window import newreno, plot_window_densities, scalable, window_density_data


def test_mimd_with_a_floor_is_pareto():
    # a(w) = 0.01 w, constant loss rate 0.12, w -> max(0.875 w, 1): ln(W/w_min) ~ Exp(theta)
    # with a theta = lam (1 - beta^theta) (level crossing of ln W; Altman et al. INFOCOM 2005)
    theta = brentq(lambda t: 0.01 * t - 0.12 * (1.0 - 0.875 ** t), 1.0, 50.0)
    w = np.geomspace(1.001, 30.0, 50)
    data = window_density_data({"MIMD": scalable(0.12, loss_model="time", w_min=1.0)}, w=w)
    np.testing.assert_allclose(data["pdf"][0], theta * w ** (-theta - 1.0), rtol=1e-8)
    np.testing.assert_allclose(data["w_pdf"], w * data["pdf"])
    assert data["names"].tolist() == ["MIMD"] and data["mean"][0] == pytest.approx(
        theta / (theta - 1.0), rel=1e-8)


def test_newreno_density_has_unit_mass_and_the_okm_mean():
    p = 1e-4
    data = window_density_data(newreno(p), w=np.linspace(0.0, 8.0 / math.sqrt(p), 2001))
    mass = trapezoid(data["pdf"][0], data["w"])
    assert mass == pytest.approx(1.0, abs=1e-6)
    mean = trapezoid(data["w"] * data["pdf"][0], data["w"])
    assert mean * math.sqrt(p) == pytest.approx(1.31, abs=0.005)   # Ott, Kemperman, Mathis 1996


def test_a_cap_keeps_its_atom_out_of_the_density():
    data = window_density_data(newreno(1e-3, w_max=40.0), n=50, coverage=1e-3)
    atom = data["atom_at_cap"][0]
    assert 0.0 < atom < 1.0 and data["w"][-1] == pytest.approx(40.0)   # the quantile grid
    assert np.all(np.diff(np.log(data["w"])) == pytest.approx(np.log(data["w"][1] / data["w"][0])))
    w = np.linspace(1e-3, 40.0, 4000)
    density = window_density_data(newreno(1e-3, w_max=40.0), w=w)["pdf"][0]
    assert trapezoid(density, w) + atom == pytest.approx(1.0, abs=1e-3)


def test_bad_input_names_the_parameter():
    with pytest.raises(InvalidParameter, match="protocols"):
        window_density_data([])
    with pytest.raises(InvalidParameter, match="protocols"):
        window_density_data([3.0])
    with pytest.raises(InvalidParameter, match="w="):
        window_density_data(newreno(1e-3), w=[-1.0, 2.0])


def test_plot_draws_one_line_per_protocol():
    figure = pytest.importorskip("matplotlib.figure")
    protocols = [newreno(1e-3), scalable(0.12, loss_model="time", w_min=1.0)]
    w = np.geomspace(1.5, 200.0, 60)
    ax = figure.Figure().subplots()
    assert plot_window_densities(protocols, w=w, ax=ax) is ax
    assert len(ax.lines) == 2 and ax.get_xscale() == "log"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), w * window_density_data(
        protocols[0], w=w)["pdf"][0])
    ax = figure.Figure().subplots()
    plot_window_densities(protocols, w=w, log=False, ax=ax)
    assert ax.get_xscale() == "linear" and "E[W]" in ax.get_legend_handles_labels()[1][0]
