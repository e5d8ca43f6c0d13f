"""The dispatch model's P_wait and E[T | size bin] against closed forms computed here.

RND: each server is M/G/1 of load rho, P(wait) = rho and a job of size x waits E[W] =
rho E[X^2]/(2 E[X] (1 - rho)) whatever x, so E[T | bin] = E[X | bin] + E[W].  LWL with
exponential sizes is M/M/m (Erlang C).  Round-robin with exponential sizes is E_m/M/1 per
server, P(wait) = sigma, the root of sigma = (lam/(lam + mu (1 - sigma)))^m (50 digits).
SITA with threshold h: class 1 (x < h) and class 2 are M/G/1 queues (Pollaczek-Khinchine).
"""

import math
from fractions import Fraction

import mpmath
import pytest

from symq.core.errors import InvalidParameter
from symq.core.registry import get_model
from symq.dispatch.model import solve_dispatch


def exp_bin_mean(a: float, b: float) -> float:
    """E[X | a <= X < b] for Exp(1): ((a+1)e^-a - (b+1)e^-b)/(e^-a - e^-b)."""
    tb = 0.0 if math.isinf(b) else (b + 1) * math.exp(-b)
    eb = 0.0 if math.isinf(b) else math.exp(-b)
    return ((a + 1) * math.exp(-a) - tb) / (math.exp(-a) - eb)


def test_rnd_exact_p_wait_and_response_by_size():
    rho, k = 0.7, 4
    r = solve_dispatch("rnd", 2, rho, size_bins=k)
    assert r.method == "exact" and r.P_wait == rho
    edges = [0.0] + [-math.log(1 - j / k) for j in range(1, k)] + [math.inf]
    assert r.size_edges == pytest.approx(edges, rel=1e-10)
    wait = rho / (1 - rho)                                  # M/M/1, E[X] = 1
    for q in range(k):
        mean = exp_bin_mean(edges[q], edges[q + 1])
        assert r.size_means[q] == pytest.approx(mean, rel=1e-9)
        assert r.ET_by_size[q] == pytest.approx(mean + wait, rel=1e-9)
    assert r.ET_by_size_half_width is None


def test_lwl_exact_p_wait_is_erlang_c():
    rho = Fraction(3, 5)
    a = 4 * rho
    top = a ** 4 / math.factorial(4) / (1 - rho)
    want = top / (sum(a ** j / math.factorial(j) for j in range(4)) + top)
    r = solve_dispatch("lwl", 4, 0.6)
    assert r.P_wait == pytest.approx(float(want), rel=1e-12)


def test_rr_exact_p_wait_is_the_gi_m_1_root():
    m, rho = 3, 0.6
    with mpmath.workdps(50):
        lam = mpmath.mpf(m) * mpmath.mpf("0.6")
        sigma = mpmath.findroot(lambda s: s - (lam / (lam + (1 - s))) ** m, 0.5)
    assert solve_dispatch("rr", m, rho).P_wait == pytest.approx(float(sigma), rel=1e-10)


def test_sita_by_class_when_bins_are_the_classes():
    rho, h = 0.4, math.log(2.0)                             # the median: 2 equiprobable bins
    r = solve_dispatch("sita", 2, rho, h=h, size_bins=2)
    lam = 2 * rho
    first = [1 - math.exp(-h) * (h + 1), math.exp(-h) * (h + 1)]          # E[X; class]
    second = [2 - math.exp(-h) * (h * h + 2 * h + 2), math.exp(-h) * (h * h + 2 * h + 2)]
    p = [1 - math.exp(-h), math.exp(-h)]
    waits = [lam * s / (2 * (1 - lam * f)) for s, f in zip(second, first)]
    assert r.P_wait == pytest.approx(sum(pj * lam * f for pj, f in zip(p, first)), rel=1e-10)
    for q in range(2):
        assert r.ET_by_size[q] == pytest.approx(first[q] / p[q] + waits[q], rel=1e-8)
    assert r.ET == pytest.approx(1 + sum(pj * w for pj, w in zip(p, waits)), rel=1e-10)


def test_simulated_policy_gives_intervals():
    """RND with speeds 2, 2 (simulated): each server is M/M/1 with rate 1 and service X/2."""
    r = solve_dispatch("rnd", 2, 0.5, speeds=[2.0, 2.0], size_bins=2, n_jobs=400_000, seed=3)
    assert r.method == "simulation"
    assert abs(r.P_wait - 0.5) <= r.P_wait_half_width
    wait = 0.5 / (1 - 0.5) * 0.5
    for q in range(2):
        exact = exp_bin_mean(r.size_edges[q], r.size_edges[q + 1]) / 2 + wait
        assert abs(r.ET_by_size[q] - exact) <= r.ET_by_size_half_width[q]
    assert r.size_level == pytest.approx(1 - 0.01 / 2)


def test_none_with_a_reason_and_refusals():
    r = solve_dispatch("jsq", 2, 0.5)
    assert r.P_wait is None and "P_wait" in r.notes
    with pytest.raises(InvalidParameter) as info:
        solve_dispatch("optimal", 2, 0.4, size_bins=3)
    assert info.value.name == "size_bins"
    with pytest.raises(InvalidParameter) as info:
        solve_dispatch("rnd", 2, 0.4, sizes="det", size_bins=3)
    assert info.value.name == "size_bins"


def test_registered_model_outputs_infinite_last_edge():
    res = get_model("dispatch").run({"policy": "rnd", "m": 2, "rho": 0.5, "size_bins": 2})
    assert res["size_edges"][-1] == math.inf and res["P_wait"] == 0.5
