"""JSQ(d) plots: the data arrays against closed forms and an independent ODE integration, and the
plots draw on a given axes (matplotlib only when installed)."""

import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from symq.core.errors import InvalidParameter, MissingDependency, StabilityError
from symq.meanfield import (
    jsq_response_data,
    jsq_tail_data,
    lyapunov_data,
    plot_jsq_response,
    plot_jsq_tail,
    plot_lyapunov,
)


def _closed_form(d, lam, k):
    """u_k = lam^((d^k - 1)/(d - 1)), lam^k for d = 1 (Vvedenskaya et al. 1996), by hand."""
    k = np.asarray(k, dtype=float)
    return lam ** (k if d == 1 else (float(d) ** k - 1.0) / (d - 1.0))


def test_tail_is_the_doubly_exponential_closed_form():
    data = jsq_tail_data((1, 2, 3), lam=0.7, K=8)
    assert data["k"].tolist() == list(range(1, 9))
    for d, row in zip((1, 2, 3), data["u"]):
        expected = _closed_form(d, 0.7, data["k"])
        expected[expected < 1e-16] = 0.0            # below the solver's listing threshold
        np.testing.assert_allclose(row, expected, rtol=1e-12, atol=0.0)


def test_d1_response_time_is_mm1_and_the_simulation_agrees():
    data = jsq_response_data(1, 10, [0.3, 0.6], [0.5], n_jobs=160_000, rng=3, level=0.99)
    exact = 1.0 / (1.0 - data["lam"])                # M/M/1, and V = 0 for d = 1
    np.testing.assert_allclose(data["ET"], exact, rtol=1e-12)
    np.testing.assert_allclose(data["ET_N"], exact, rtol=1e-12)
    assert abs(data["sim_ET"][0] - 2.0) <= data["sim_half_width"][0]
    assert data["ET_at_sim"].tolist() == pytest.approx([2.0])


def test_d2_mean_field_is_the_closed_form_and_the_refined_term_is_positive():
    lam = np.array([0.4, 0.8])
    data = jsq_response_data(2, 50, lam, n_jobs=None)
    k = np.arange(1, 60)
    exact = np.array([np.sum(_closed_form(2, x, k)) / x for x in lam])   # Little: E[Q]/lam
    np.testing.assert_allclose(data["ET"], exact, rtol=1e-12)
    assert np.all(data["refined_valid"]) and np.all(data["ET_N"] > data["ET"])
    assert data["sim_lam"].size == 0 and data["sim_ET"].size == 0 and data["n_jobs"] == 0


def test_bad_input_names_the_parameter():
    with pytest.raises(StabilityError, match="lam=1.2"):
        jsq_response_data(2, 10, [0.5, 1.2], n_jobs=None)
    with pytest.raises(InvalidParameter, match="ds"):
        jsq_tail_data((), 0.5)
    with pytest.raises(InvalidParameter, match="K=0"):
        jsq_tail_data((2,), 0.5, K=0)
    with pytest.raises(InvalidParameter, match="level"):
        jsq_response_data(2, 10, [0.5], n_jobs=None, level=1.5)


def _drift(t, u, d, lam):
    """du_k/dt = lam (u_{k-1}^d - u_k^d) - (u_k - u_{k+1}), u_0 = 1, u_{K+1} = 0."""
    full = np.concatenate([[1.0], u, [0.0]])
    return lam * (full[:-2] ** d - full[1:-1] ** d) - (full[1:-1] - full[2:])


def test_lyapunov_distance_matches_an_independent_integration():
    d, lam, K = 2, 0.6, 10
    data = lyapunov_data(d, lam, K=K, t_final=3.0, n_times=13)
    star = _closed_form(d, lam, np.arange(1, K + 1))
    starts = [np.zeros(K), np.where(np.arange(1, K + 1) <= 3, 1.0, 0.0),
              0.95 ** np.arange(1, K + 1)]
    for start, v in zip(starts, data["V"]):
        path = solve_ivp(_drift, (0.0, 3.0), start, t_eval=data["t"], args=(d, lam),
                         method="LSODA", rtol=1e-10, atol=1e-13)
        reference = np.abs(path.y.T - star).sum(axis=1)
        np.testing.assert_allclose(v, reference, rtol=1e-6, atol=1e-9)
        assert np.all(np.diff(v) <= 1e-9)           # the L1 distance never increases
    assert data["labels"].tolist()[0] == "empty"


def test_plots_draw_on_the_given_axes():
    figure = pytest.importorskip("matplotlib.figure")
    ax = figure.Figure().subplots()
    assert plot_jsq_tail((1, 2, 3), 0.7, K=6, ax=ax) is ax
    assert len(ax.lines) == 3 and ax.get_yscale() == "log"
    ax = figure.Figure().subplots()
    assert plot_jsq_response(2, 20, [0.3, 0.6], [0.5], n_jobs=16_000, rng=1, ax=ax) is ax
    labels = ax.get_legend_handles_labels()[1]
    assert len(labels) == 3 and "simulation" in labels[2] and len(ax.containers) == 1
    ax = figure.Figure().subplots()
    assert plot_lyapunov(2, 0.5, K=6, t_final=1.0, n_times=5, ax=ax) is ax
    assert len(ax.lines) == 3


def test_without_matplotlib_the_plot_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)   # import fails
    with pytest.raises(MissingDependency, match="matplotlib"):
        plot_jsq_tail((2,), 0.5, K=3)
