"""Response time by job size: per-bin intervals against x + E[W] (exact for size-blind FCFS
policies: RND is M/G/1 per server, LWL with exponential sizes is M/M/m), with Bonferroni
levels since every test checks many bins at once."""

import json
import sys

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, MissingDependency
from symq.dispatch.policies.exact import exact_lwl
from symq.dispatch.simulation.fairness import plot_response_by_size, response_by_size_data
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.dispatch.sizebins import bin_means, bin_probabilities, size_edges
from symq.dispatch.sizes import named_sizes
from symq.laws import Exponential

X = Exponential(1.0)
H2 = named_sizes("h2", scv=4.0)
FAMILY = 0.999


def test_bins_of_the_size_law():
    e = size_edges(H2, 5)
    assert e[0] == 0 and np.isinf(e[-1]) and np.all(np.diff(e) > 0)
    assert np.allclose(bin_probabilities(H2, e), 0.2, atol=1e-10)
    c = bin_means(H2, e)
    assert np.all((e[:-1] < c) & (c < e[1:]))
    assert float((c * bin_probabilities(H2, e)).sum()) == pytest.approx(H2.mean(), rel=1e-9)
    # exponential, by hand: E[X | a <= X < b] = (a+1) - (b+1) e^{-(b-a)}) / (1 - e^{-(b-a)})
    a, b = 0.5, 2.0
    d = np.exp(-(b - a))
    assert bin_means(X, np.array([a, b]))[0] == pytest.approx(((a + 1) - (b + 1) * d) / (1 - d))
    for bad in ([1.0], [2.0, 1.0], [-1.0, 1.0], [0.0, np.inf, 5.0], 0, "x"):
        with pytest.raises(InvalidParameter, match="parameter size_bins="):
            size_edges(X, bad)


def test_rnd_each_bin_is_x_plus_the_pk_wait():
    m, rho = 2, 0.6
    wait = (rho * m / m) * H2.moment(2) / (2 * (1 - rho))     # lam/m E[X^2] / (2(1-rho))
    d = response_by_size_data("rnd", m, rho, H2, bins=6, n_jobs=1_000_000, rng=1, level=FAMILY)
    assert d.bin_level == pytest.approx(1 - (1 - FAMILY) / 6)
    exact = d.centres + wait
    for q in range(6):
        assert d.interval("rnd", q).contains(exact[q]), (q, d.means[0, q], exact[q])
    assert np.all(d.half_widths[0] < 0.1 * exact)       # informative intervals
    assert np.allclose(d.slowdown, d.means / d.centres)
    assert 0.5 * 1_000_000 < d.jobs.sum() <= 1_000_000     # after the MSER warm-up


def test_lwl_each_bin_is_x_plus_the_erlang_c_wait_and_two_policies_jointly():
    m, rho = 3, 0.7
    wait = exact_lwl(m, rho, X) - 1.0
    edges = [0.0, 0.1, 0.5, 1.0, 2.0, 4.0, np.inf]
    d = response_by_size_data(["lwl", "jsq"], m, rho, X, bins=edges, n_jobs=1_500_000, rng=2,
                              level=FAMILY)
    assert d.policies == ("lwl", "jsq")
    assert d.bin_level == pytest.approx(1 - (1 - FAMILY) / 12)     # 2 policies x 6 bins
    exact = d.centres + wait
    for q in range(6):
        assert d.interval("lwl", q).contains(exact[q]), (q, d.means[0, q], exact[q])
    # JSQ waits longer than M/M/m for every size (and the same for all sizes, size-blind)
    lows = d.means[1] - d.half_widths[1]
    assert np.all(lows > exact)
    spread = d.means[1] - d.centres
    assert np.ptp(spread) < 2 * d.half_widths[1].max()


def test_size_bins_in_simulate_dispatch():
    est = simulate_dispatch("lwl", 2, 0.5, X, n_jobs=300_000, rng=3, size_bins=4, level=0.99)
    assert len(est.ET_by_size) == 4 and est.size_level == pytest.approx(1 - 0.01 / 4)
    # the bins partition the jobs after the warm-up (the MSER truncation of ET, whose batching
    # may drop a few more slices): their count-weighted mean is the overall mean
    pooled = sum(ci.mean * n for ci, n in zip(est.ET_by_size, est.jobs_by_size))
    assert 0.9 * 300_000 < est.jobs_by_size.sum() <= 300_000
    assert abs(pooled / est.jobs_by_size.sum() - est.ET.mean) < 0.1 * est.ET.half_width
    plain = simulate_dispatch("lwl", 2, 0.5, X, n_jobs=300_000, rng=3, level=0.99)
    assert plain.ET == est.ET                      # binning does not change the run
    rep = simulate_dispatch("rnd", 2, 0.5, X, n_jobs=300_000, rng=4, size_bins=3,
                            replications=5, size_level=0.9)
    assert rep.ET_by_size[0].method == "replications" and rep.size_level == 0.9
    with pytest.raises(InvalidParameter, match="parameter size_bins=.*every batch"):
        simulate_dispatch("lwl", 2, 0.5, X, n_jobs=30_000, rng=5, size_bins=[0.0, 1e-5, np.inf])


def test_result_is_json_ready_and_validated():
    d = response_by_size_data(["rnd", "lwl"], 2, 0.5, X, bins=3, n_jobs=100_000, rng=6)
    out = json.loads(json.dumps(d.to_dict()))
    assert out["policies"] == ["rnd", "lwl"] and len(out["means"]) == 2
    again = response_by_size_data(["rnd", "lwl"], 2, 0.5, X, bins=3, n_jobs=100_000, rng=6)
    assert np.array_equal(again.means, d.means)
    with pytest.raises(InvalidParameter, match="parameter policies="):
        response_by_size_data([], 2, 0.5, X)
    with pytest.raises(InvalidParameter, match="parameter policy="):
        d.interval("jsq", 0)


def test_plot_without_matplotlib_is_a_missing_dependency(monkeypatch):
    d = response_by_size_data("lwl", 2, 0.5, X, bins=3, n_jobs=100_000, rng=7)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)     # import fails
    with pytest.raises(MissingDependency, match="matplotlib"):
        plot_response_by_size(d)


def test_plot_lines_are_the_data():
    pytest.importorskip("matplotlib", reason="matplotlib is optional")
    from matplotlib.figure import Figure

    d = response_by_size_data(["rnd", "lwl"], 2, 0.5, X, bins=4, n_jobs=100_000, rng=7)
    for slowdown, y, err in ((False, d.means, d.half_widths),
                             (True, d.slowdown, d.slowdown_half_widths)):
        ax = Figure().subplots()
        assert plot_response_by_size(d, ax, slowdown=slowdown) is ax
        assert len(ax.containers) == 2 and ax.get_xscale() == "log"
        for p, (name, bars) in enumerate(zip(d.policies, ax.containers)):
            line, caps, (vertical,) = bars.lines
            assert bars.get_label() == name
            assert np.array_equal(line.get_xdata(), d.centres)
            assert np.array_equal(line.get_ydata(), y[p])
            # each error bar spans mean -+ half width at the bin's abscissa
            seg = np.array(vertical.get_segments())             # (k, 2 ends, (x, y))
            assert np.allclose(seg[:, 0, 0], d.centres) and np.allclose(seg[:, 1, 0], d.centres)
            assert np.allclose(seg[:, 0, 1], y[p] - err[p])
            assert np.allclose(seg[:, 1, 1], y[p] + err[p])
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["rnd", "lwl"]
        assert ("slowdown" in ax.get_ylabel()) == slowdown
    ax = Figure().subplots()
    plot_response_by_size(d, ax, logx=False)
    assert ax.get_xscale() == "linear"
