"""The dispatching simulator against exact values (99.9% intervals: several checks per run)."""

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, StabilityError, UnknownName
from symq.dispatch.policies import get_policy, rnd_value_table
from symq.dispatch.policies.exact import (
    exact_lwl,
    exact_rnd,
    exact_rr,
    exact_sita,
    sita_e_thresholds,
    sita_opt_thresholds,
)
from symq.dispatch.policies.jsq import exact_jsq
from symq.dispatch.simulation.simulate import DispatchEstimate, simulate_dispatch
from symq.dispatch.sizes import named_sizes
from symq.laws import Exponential

X = Exponential(1.0)
H2 = named_sizes("h2", scv=4.0)
LEVEL = 0.999


def check(est, value):
    assert isinstance(est, DispatchEstimate)
    assert est.ET.contains(value), (est.ET, value)
    assert est.ET.relative_half_width < 0.1  # informative, not vacuous
    assert est.EW.mean == pytest.approx(est.ET.mean - 1.0, abs=0.05)  # E[X] = 1


@pytest.mark.parametrize("sizes, rho", [(X, 0.7), (H2, 0.5)])
def test_rnd(sizes, rho):
    n = 600_000 if sizes is H2 else 2_000_000  # H2 sampling is slower than the kernel
    est = simulate_dispatch("rnd", 2, rho, sizes, n_jobs=n, rng=1, level=LEVEL)
    check(est, exact_rnd(2, rho, sizes))
    assert np.allclose(est.loads, rho, atol=0.02)


@pytest.mark.parametrize("sizes, policy, params", [
    (H2, "sita", {"h": 1.5}), (H2, "sita-e", {}), (X, "sita-opt", {}),
    (X, "sita", {"thresholds": [0.6, 1.8]})])
def test_sita(sizes, policy, params):
    m = 3 if "thresholds" in params else 2
    rho = 0.6
    n = 600_000 if sizes is H2 else 2_000_000
    est = simulate_dispatch(policy, m, rho, sizes, n_jobs=n, rng=2, level=LEVEL, **params)
    h = {"sita-e": sita_e_thresholds, "sita-opt": sita_opt_thresholds}.get(policy)
    h = h(m, rho, sizes) if h else params.get("h", params.get("thresholds"))
    check(est, exact_sita(m, rho, sizes, h))
    if policy == "sita-e":
        assert np.allclose(est.loads, rho, atol=0.03)


def test_rr():
    est = simulate_dispatch("rr", 2, 0.7, X, n_jobs=2_000_000, rng=3, level=LEVEL)
    check(est, exact_rr(2, 0.7, X))


@pytest.mark.parametrize("m, rho, n", [(2, 0.4, 1_000_000), (2, 0.9, 4_000_000),
                                       (3, 0.8, 2_000_000)])
def test_lwl(m, rho, n):
    est = simulate_dispatch("lwl", m, rho, X, n_jobs=n, rng=4, level=LEVEL)
    check(est, exact_lwl(m, rho, X))


@pytest.mark.parametrize("rho, n", [(0.4, 1_000_000), (0.9, 4_000_000)])
def test_jsq(rho, n):
    est = simulate_dispatch("jsq", 2, rho, X, n_jobs=n, rng=5, level=LEVEL)
    check(est, exact_jsq(2, rho, X))


@pytest.mark.parametrize("rho", [0.4, 0.9])
def test_lookup_rnd_table_runs_like_lwl(rho):
    v, c = rnd_value_table(2, rho, X, 200, 0.05)
    n = 3_000_000
    look = simulate_dispatch("lookup", 2, rho, X, n_jobs=n, rng=6, level=LEVEL, v=v, delta=0.05,
                             c_M=c)
    lwl = simulate_dispatch("lwl", 2, rho, X, n_jobs=n, rng=6, level=LEVEL)
    check(look, 1 / (1 - rho ** 2))
    # same random stream and (up to interpolation near ties) the same decisions
    assert look.ET.mean == pytest.approx(lwl.ET.mean, rel=1e-3)


def test_fpi_rnd_runs_like_lwl():
    a = simulate_dispatch("fpi-rnd", 2, 0.8, X, n_jobs=500_000, rng=7)
    b = simulate_dispatch("lwl", 2, 0.8, X, n_jobs=500_000, rng=7)
    assert a.ET == b.ET


def test_replications_and_reproducibility():
    est = simulate_dispatch("rnd", 2, 0.5, X, n_jobs=1_000_000, rng=8, replications=10, level=LEVEL)
    assert est.ET.method == "replications" and est.ET.n == 10
    check(est, 2.0)
    again = simulate_dispatch("rnd", 2, 0.5, X, n_jobs=1_000_000, rng=8, replications=10,
                              level=LEVEL)
    assert again.ET == est.ET
    bound = get_policy("fpi-sita").bind(2, 0.5, H2)
    assert simulate_dispatch(bound, 2, 0.5, H2, n_jobs=100_000, rng=1).ET == \
        simulate_dispatch("fpi-sita", 2, 0.5, H2, n_jobs=100_000, rng=1).ET


def test_bad_input():
    with pytest.raises(StabilityError):
        simulate_dispatch("lwl", 2, 1.0, X)
    with pytest.raises(InvalidParameter, match="parameter n_jobs=100"):
        simulate_dispatch("lwl", 2, 0.5, X, n_jobs=100)
    with pytest.raises(InvalidParameter, match="parameter m=0"):
        simulate_dispatch("lwl", 0, 0.5, X)
    with pytest.raises(UnknownName, match="valid choices"):
        simulate_dispatch("nearest", 2, 0.5, X)
    with pytest.raises(InvalidParameter, match="parameter max_queue=2"):
        simulate_dispatch("jsq", 2, 0.95, X, n_jobs=100_000, max_queue=2, rng=1)
    bound = get_policy("lwl").bind(2, 0.5, X)
    with pytest.raises(InvalidParameter, match="policy"):
        simulate_dispatch(bound, 3, 0.5, X)
