"""Per-server speeds: meanings of the policies, exact values (PK, CTMCs solved here, M/M/1),
an independent plain-Python simulation of LWL, time scaling, and the refusals."""

import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.dispatch.policies import bind_policy, get_policy, rnd_value_table, score_policy
from symq.dispatch.simplex import colex_states
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.dispatch.sizes import named_sizes
from symq.dispatch.symbolic import fpi_index_fn
from symq.laws import Exponential

X = Exponential(1.0)
H2 = named_sizes("h2", scv=4.0)
LEVEL = 0.999


def random_states(m, k, seed, scale=3.0):
    rng = np.random.default_rng(seed)
    U = rng.exponential(scale, (k, m)) * (rng.random((k, m)) < 0.7)  # some idle servers
    return U, rng.exponential(1.0, k)


# ---------------------------------------------------------------- validation and refusals


@pytest.mark.parametrize("speeds", [[1.0], [1.0, 0.0], [2.0, -1.0], [1.0, math.nan],
                                    [1.0, math.inf], "fast", [[1.0, 2.0, 3.0]]])
def test_bad_speeds_are_named(speeds):
    with pytest.raises(InvalidParameter, match="parameter speeds=.*m positive finite reals"):
        get_policy("lwl").bind(2, 0.5, X, speeds=speeds)


def test_static_policies_that_overload_a_server_are_refused():
    # RR: 1/m of the jobs each, the slow server gets load rho * 5 / (2 * 1) = 1.25
    with pytest.raises(StabilityError, match="rr: .*server 2"):
        get_policy("rr").bind(2, 0.5, X, speeds=[4, 1])
    get_policy("rr").bind(2, 0.35, X, speeds=[4, 1])          # 0.875 < 1
    # SITA: class 2 (x >= 0.5) brings the work fraction 1.5 e^{-0.5} = 0.91 to speed 0.3
    assert 0.5 * 1.3 * 1.5 * math.exp(-0.5) / 0.3 > 1
    with pytest.raises(StabilityError, match="sita: .*server 2"):
        get_policy("sita", h=0.5).bind(2, 0.5, X, speeds=[1.0, 0.3])
    # unit speeds too: h = 3 at rho = 0.8 gives server 1 the load 1.6 (1 - 4 e^{-3}) > 1
    with pytest.raises(StabilityError, match="sita"):
        simulate_dispatch("sita", 2, 0.8, X, h=3.0)
    with pytest.raises(StabilityError, match="fpi-sita"):
        get_policy("fpi-sita", h=0.5).bind(2, 0.5, X, speeds=[1.0, 0.3])
    # thresholds computed for identical servers need equal speeds
    for name in ("sita-e", "sita-opt", "fpi-sita"):
        with pytest.raises(InvalidParameter, match="parameter speeds=.*equal speeds"):
            get_policy(name).bind(2, 0.5, X, speeds=[2, 1])
    assert get_policy("sita-e").bind(2, 0.5, X, speeds=[2, 2]).speeds.tolist() == [2, 2]


def test_a_bound_policy_keeps_its_speeds():
    bound = get_policy("lwl").bind(2, 0.5, X, speeds=[2, 1])
    est = simulate_dispatch(bound, 2, 0.5, X, n_jobs=100_000, rng=1)
    assert est.speeds.tolist() == [2, 1]
    assert simulate_dispatch(bound, 2, 0.5, X, n_jobs=100_000, rng=1, speeds=[2, 1]).ET == est.ET
    with pytest.raises(InvalidParameter, match="parameter speeds="):
        simulate_dispatch(bound, 2, 0.5, X, n_jobs=100_000, speeds=[1, 2])


# ---------------------------------------------------------------- decisions


def test_decisions_with_speeds():
    s = np.array([3.0, 1.0, 2.0])
    k = 30_000
    U, x = random_states(3, 20_000, seed=1)
    lwl = get_policy("lwl").bind(3, 0.5, X, speeds=s).decide(U, x)
    finish = (U + x[:, None]) / s
    assert np.array_equal(lwl, np.argmin(finish, axis=1))
    # JSQ: fewest jobs, ties to the faster server, then random among equal speeds
    jsq = get_policy("jsq").bind(4, 0.5, X, speeds=[1, 2, 2, 3])
    n = np.tile([1, 1, 1, 2], (k, 1))
    picks = jsq.decide(np.ones((k, 4)), np.ones(k), n=n, rng=2)
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == 0 and counts[3] == 0 and abs(counts[1] / k - 0.5) < 0.015
    # JIQ: the fastest idle server; nobody idle: in proportion to the speeds (as RND)
    jiq = get_policy("jiq").bind(3, 0.5, X, speeds=s)
    assert jiq.decide([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 2.0]], [1, 1, 1]).tolist() \
        == [0, 2, 1]
    for pol in (jiq, get_policy("rnd").bind(3, 0.5, X, speeds=s)):
        picks = pol.decide(np.ones((k, 3)), np.ones(k), rng=3)
        assert np.all(np.abs(np.bincount(picks, minlength=3) / k - s / s.sum()) < 0.015)
    # FPI from the proportional split: the FPI index in time units, rates lam s_i / sum(s)
    fpi = get_policy("fpi-rnd").bind(3, 0.5, X, speeds=s)
    lam = 0.5 * s.sum()
    assert np.allclose(fpi.lam_i, lam * s / s.sum()) and np.allclose(fpi.rho_i, 0.5)
    costs = fpi_index_fn()(U / s, x[:, None] / s, fpi.lam_i, fpi.rho_i)
    assert np.array_equal(fpi.decide(U, x), np.argmin(costs, axis=1))


def test_score_policies_see_time_units():
    """The score "u + x" is LWL's finishing time with speeds; lam is rho sum(s) / E[X]."""
    s = [2.0, 1.0, 0.5]
    pol = bind_policy(score_policy("finish", "u + x"), 3, 0.5, X, speeds=s)
    assert pol.lam == pytest.approx(0.5 * 3.5) and pol.score_params[0] == pytest.approx(1.75)
    lwl = get_policy("lwl").bind(3, 0.5, X, speeds=s)
    U, x = random_states(3, 20_000, seed=4)
    finish = np.sort((U + x[:, None]) / np.array(s), axis=1)
    clear = finish[:, 1] - finish[:, 0] > 1e-9
    assert clear.mean() > 0.99
    assert np.array_equal(pol.decide(U, x)[clear], lwl.decide(U, x)[clear])
    a = simulate_dispatch(score_policy("finish", "u + x"), 3, 0.5, X, n_jobs=300_000, rng=5,
                          speeds=s)
    b = simulate_dispatch("lwl", 3, 0.5, X, n_jobs=300_000, rng=5, speeds=s)
    assert a.ET.mean == pytest.approx(b.ET.mean, rel=1e-9)


# ---------------------------------------------------------------- simulation: exact values


def test_unit_speeds_are_the_old_results_bit_for_bit():
    v, c = rnd_value_table(2, 0.6, X, 60, 0.2)
    for name, m, law, params in [("rnd", 2, X, {}), ("jsq", 3, X, {}), ("lwl", 3, H2, {}),
                                 ("jiq", 3, X, {}), ("rr", 2, X, {}), ("sita", 2, H2, {"h": 2.0}),
                                 ("fpi-sita", 2, H2, {}),
                                 ("lookup", 2, X, {"v": v, "delta": 0.2, "c_M": c})]:
        a = simulate_dispatch(name, m, 0.6, law, n_jobs=100_000, rng=7, **params)
        b = simulate_dispatch(name, m, 0.6, law, n_jobs=100_000, rng=7, speeds=[1.0] * m,
                              **params)
        assert a.ET == b.ET and a.EW == b.EW and np.array_equal(a.loads, b.loads), name
        assert b.speeds is None


@pytest.mark.parametrize("name, params", [("lwl", {}), ("jsq", {}), ("fpi-rnd", {}),
                                          ("sita", {"thresholds": [0.9, 2.0]})])
def test_equal_speeds_scale_time(name, params):
    """Speeds c (all equal) are the unit system with time divided by c: the same arrivals,
    sizes and decisions (up to rounding), T / c.  This runs the speeds path of the kernel."""
    c = 2.5
    a = simulate_dispatch(name, 3, 0.7, X, n_jobs=300_000, rng=8, **params)
    b = simulate_dispatch(name, 3, 0.7, X, n_jobs=300_000, rng=8, speeds=[c] * 3, **params)
    assert b.speeds is not None
    assert b.ET.mean * c == pytest.approx(a.ET.mean, rel=1e-9)
    assert b.EW.mean * c == pytest.approx(a.EW.mean, rel=1e-9)
    assert np.allclose(b.loads, a.loads, rtol=1e-9)


@pytest.mark.parametrize("name", ["rnd", "rr", "lwl", "jsq", "jiq", "jiq-jsq", "fpi-rnd"])
def test_one_server_of_speed_s_is_mm1_of_rate_s(name):
    s, rho = 2.5, 0.6
    est = simulate_dispatch(name, 1, rho, X, n_jobs=600_000, rng=9, level=LEVEL, speeds=[s])
    assert est.ET.contains(1 / (s * (1 - rho))), est.ET
    assert est.EW.contains(rho / (s * (1 - rho))), est.EW
    assert est.loads[0] == pytest.approx(rho, abs=0.02)


def test_rnd_with_speeds_is_pollaczek_khinchine_per_server():
    """Server i: arrivals lam s_i / sum(s), service times X / s_i, load rho (equal loads)."""
    s, rho = np.array([3.0, 1.0, 1.5]), 0.6
    lam = rho * s.sum() / H2.mean()
    lam_i = lam * s / s.sum()
    T_i = H2.mean() / s + lam_i * H2.moment(2) / s ** 2 / (2 * (1 - rho))
    exact = float((lam_i / lam * T_i).sum())
    est = simulate_dispatch("rnd", 3, rho, H2, n_jobs=1_000_000, rng=10, level=LEVEL, speeds=s)
    assert est.ET.contains(exact), (est.ET, exact)
    assert est.ET.relative_half_width < 0.05
    assert np.allclose(est.loads, rho, atol=0.03)


def jsq_fast_route(a, b):
    """JSQ with speeds (2, 1): fewer jobs; a tie goes to the faster server 1."""
    return (1.0, 0.0) if a <= b else (0.0, 1.0)


def jiq_fast_route(a, b):
    """JIQ with speeds (2, 1): the fastest idle server, else in proportion to the speeds."""
    if a == 0:
        return 1.0, 0.0
    if b == 0:
        return 0.0, 1.0
    return 2 / 3, 1 / 3


@pytest.mark.parametrize("name, route", [("jsq", jsq_fast_route), ("jiq", jiq_fast_route)])
def test_two_servers_with_speeds_against_their_ctmc(name, route, two_server_ctmc):
    rho = 0.7
    lam = rho * 3.0
    et, boundary = two_server_ctmc(lam, (2.0, 1.0), route, 80)
    assert boundary < 1e-9
    est = simulate_dispatch(name, 2, rho, X, n_jobs=2_000_000, rng=11, level=LEVEL,
                            speeds=[2, 1])
    assert est.ET.contains(et), (est.ET, et)
    assert est.ET.relative_half_width < 0.03


def lwl_by_hand(s, rho, n, n_batches, seed):
    """LWL with speeds written from its definition in plain Python: backlogs in work drain at
    s_i, the job joins argmin (u_i + x)/s_i and stays (u_i + x)/s_i.  Batch means of T."""
    rng = np.random.default_rng(seed)
    lam = rho * sum(s)
    gaps = rng.exponential(1 / lam, n)
    sizes = rng.exponential(1.0, n)
    u = [0.0] * len(s)
    T = np.empty(n)
    for k in range(n):
        a, x = gaps[k], sizes[k]
        u = [max(ui - a * si, 0.0) for ui, si in zip(u, s)]
        finish = [(ui + x) / si for ui, si in zip(u, s)]
        i = finish.index(min(finish))
        T[k] = finish[i]
        u[i] += x
    keep = T[n // 10:]
    b = keep[: keep.size // n_batches * n_batches].reshape(n_batches, -1).mean(axis=1)
    return b.mean(), b.std(ddof=1) / math.sqrt(n_batches)


def test_lwl_with_speeds_against_a_plain_python_simulation():
    from scipy import stats
    s, rho = (2.0, 1.0), 0.7
    mean_py, se_py = lwl_by_hand(s, rho, 300_000, 20, seed=12)
    est = simulate_dispatch("lwl", 2, rho, X, n_jobs=2_000_000, rng=13, level=LEVEL, speeds=s)
    se_sim = est.ET.half_width / stats.t.ppf(0.5 + LEVEL / 2, est.ET.n - 1)
    z = abs(est.ET.mean - mean_py) / math.hypot(se_py, se_sim)
    assert z < stats.norm.ppf(0.9995), (est.ET, mean_py, se_py)
    # and it is faster than the proportional random split (PK value), as a least-time policy
    assert est.ET.high < 3.0 / (3.0 * (1 - rho)) * 0.8


def test_lookup_with_speeds():
    """m = 2 table: costs in time units.  A packed (symmetric) value needs equal speeds."""
    v, c = rnd_value_table(2, 0.5, X, 40, 0.25)
    pol = get_policy("lookup", v=v, delta=0.25, c_M=c).bind(2, 0.5, X, speeds=[2, 1])
    U, x = random_states(2, 5_000, seed=14)
    finish = (U + x[:, None]) / np.array([2.0, 1.0])
    vals = np.stack([c * ((U[:, 0] + x) ** 2 + U[:, 1] ** 2),
                     c * (U[:, 0] ** 2 + (U[:, 1] + x) ** 2)], axis=1)
    cost = finish + vals
    clear = np.abs(cost[:, 0] - cost[:, 1]) > c * 0.25 ** 2
    assert clear.mean() > 0.9
    assert np.array_equal(pol.decide(U, x)[clear], np.argmin(cost, axis=1)[clear])
    packed = c * ((colex_states(3, 8) * 0.5) ** 2).sum(axis=1)
    look = get_policy("lookup", v=packed, delta=0.5, c_M=c)
    with pytest.raises(InvalidParameter, match="parameter speeds=.*equal speeds"):
        look.bind(3, 0.5, X, speeds=[2, 1, 1])
    look.bind(3, 0.5, X, speeds=[2, 2, 2])
