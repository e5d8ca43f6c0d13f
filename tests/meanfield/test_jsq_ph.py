"""JSQ(d) with phase-type service: the mean-field fixed point against independent evidence.

(a) exponential service vs the closed form lam^((d^k-1)/(d-1)); (b) d = 1 vs
Pollaczek-Khinchine; (c) the ODE drift and the exact invariants u_1 = lam E[X],
x_1 = lam E[X] theta;
(d) the finite-N simulator; (e) Li's (2010) product-form candidate; (f) error messages.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError
from symq.core.registry import get_model
from symq.laws import erlang, hyperexponential2, ph_moments
from symq.meanfield import (
    jsq_ph_drift,
    product_form_candidate,
    product_form_ET,
    product_form_residual,
    solve_jsq_ph,
)
from symq.meanfield.simulation import simulate_jsq

# ------------------------------------------------------------------ phase-type helpers


@pytest.mark.parametrize("scv", [1.0, 4.0, 10.0, 50.0])
@pytest.mark.parametrize("f", [0.1, 0.5, 0.8])
def test_h2_moments_and_branch_means(scv: float, f: float) -> None:
    mean = 2.5
    alpha, A = hyperexponential2(mean, scv, f)
    m1, m2 = ph_moments((alpha, A), 2)
    assert m1 == pytest.approx(mean, rel=1e-13)
    assert m2 / m1**2 - 1 == pytest.approx(scv, rel=1e-12, abs=1e-12)
    mu1 = -A[0, 0]
    assert alpha[0] / mu1 == pytest.approx(f * mean, rel=1e-13)  # branch 1 carries f of the mean
    assert 0 < alpha[0] < 1


def test_h2_balanced_means_formula_of_hellemans_van_houdt() -> None:
    scv = 10.0
    alpha, A = hyperexponential2(1.0, scv, 0.5)
    p = (1 + math.sqrt((scv - 1) / (scv + 1))) / 2
    assert alpha[0] == pytest.approx(p, rel=1e-14)
    assert -A[0, 0] == pytest.approx(2 * p, rel=1e-14)
    assert -A[1, 1] == pytest.approx(2 * (1 - p), rel=1e-14)


def test_erlang_and_moments() -> None:
    alpha, A = erlang(3, 1.5)
    m = ph_moments((alpha, A), 3)
    rate = 2.0  # 3 / 1.5
    # Erlang(k, rate): E[X^n] = (k)(k+1)...(k+n-1) / rate^n
    assert m == pytest.approx([3 / rate, 12 / rate**2, 60 / rate**3], rel=1e-13)


# ------------------------------------------------------------------ (a) exponential service


@pytest.mark.parametrize("d,lam", [(2, 0.9), (2, 0.99), (3, 0.7), (5, 0.95)])
def test_exponential_service_reproduces_closed_form(d: int, lam: float) -> None:
    fp = solve_jsq_ph(d, lam, ([1.0], [[-1.0]]))
    k = np.arange(1, fp.K + 1)
    closed = lam ** ((float(d) ** k - 1) / (d - 1))
    assert np.max(np.abs(fp.u - closed)) < 1e-12
    assert fp.u[-1] < 1e-16
    assert fp.ET == pytest.approx(float(closed.sum()) / lam, rel=1e-12)


def test_two_phase_representation_of_the_exponential() -> None:
    # a non-minimal PH of the exp(1) law: the kernel runs with m = 2 and must agree
    fp = solve_jsq_ph(2, 0.85, ([0.3, 0.7], [[-1.0, 0.0], [0.0, -1.0]]))
    k = np.arange(1, fp.K + 1)
    assert np.max(np.abs(fp.u - 0.85 ** (2.0**k - 1))) < 1e-12


# ------------------------------------------------------------------ (b) d = 1: Pollaczek-Khinchine


@pytest.mark.parametrize("lam", [0.5, 0.7])
@pytest.mark.parametrize("scv", [4.0, 10.0])
def test_d1_pollaczek_khinchine(lam: float, scv: float) -> None:
    alpha, A = hyperexponential2(1.0, scv, 0.5)
    fp = solve_jsq_ph(1, lam, (alpha, A))
    ex2 = ph_moments((alpha, A), 2)[1]
    pk = lam * ex2 / (2 * (1 - lam))
    assert fp.EW == pytest.approx(pk, rel=1e-8)
    assert fp.u[-1] < 1e-16


def test_d1_pollaczek_khinchine_unbalanced_f() -> None:
    alpha, A = hyperexponential2(1.0, 4.0, 0.2)
    fp = solve_jsq_ph(1, 0.6, (alpha, A))
    assert fp.EW == pytest.approx(0.6 * 5.0 / (2 * 0.4), rel=1e-8)


# ------------------------------------------------------------------ (c) drift and invariants


@pytest.mark.parametrize("d,lam,scv,f", [(2, 0.9, 10.0, 0.5), (3, 0.8, 4.0, 0.3),
                                         (2, 0.95, 20.0, 0.5)])
def test_fixed_point_satisfies_ode_and_invariants(d: int, lam: float, scv: float, f: float) -> None:
    alpha, A = hyperexponential2(1.0, scv, f)
    fp = solve_jsq_ph(d, lam, (alpha, A))
    assert fp.residual < 1e-10
    # recompute the drift here, from the ODE, at the returned x
    assert np.max(np.abs(jsq_ph_drift(fp.x, d, lam, (alpha, A)))) < 1e-10
    theta = np.linalg.solve(-A.T, alpha)  # E[X] = 1
    assert fp.u[0] == pytest.approx(lam, abs=1e-10)
    assert np.max(np.abs(fp.x[0] - lam * theta)) < 1e-10
    assert abs(fp.invariants["u1 - lam E[X]"]) < 1e-10
    assert fp.invariants["|x1 - lam E[X] theta|"] < 1e-10
    assert np.all(fp.x >= 0) and np.all(np.diff(fp.u) <= 0)
    assert np.allclose(fp.x.sum(axis=1), fp.u, atol=1e-15)
    assert fp.ET == pytest.approx(fp.EQ / lam) and fp.EW == pytest.approx(fp.ET - 1.0)
    assert fp.u[-1] < 1e-16


def test_doubly_exponential_eventually_for_h2() -> None:
    # Bramson, Lu, Prabhakar (AAP 2013): light-tailed H2 -> log u_{k+1} / log u_k -> d after a
    # quasi-geometric stretch
    alpha, A = hyperexponential2(1.0, 10.0, 0.5)
    fp = solve_jsq_ph(2, 0.9, (alpha, A))
    tail = np.array(fp.tail())
    ratios = np.log(tail[1:]) / np.log(tail[:-1])
    assert ratios[-1] > 1.8
    # the long quasi-geometric stretch: u_10 ~ 0.26, the exponential formula gives 0.9^1023 ~ 1e-47
    assert tail[9] > 0.2 and np.all(tail[1:10] / tail[:9] > 0.75)


# ------------------------------------------------------------------ (d) finite-N simulation


def test_agrees_with_simulation_n1000() -> None:
    alpha, A = hyperexponential2(1.0, 4.0, 0.5)
    fp = solve_jsq_ph(2, 0.8, (alpha, A))
    est = simulate_jsq(1000, 2, 0.8, (alpha, A), n_jobs=4_000_000, rng=20260101)
    ci = est.ET
    low, high = ci.mean - ci.half_width, ci.mean + ci.half_width
    allowance = 5.0 / 1000  # mean-field error is positive O(1/N): E[T_N] >= ET - noise
    assert low - allowance <= fp.ET <= high, (fp.ET, ci)
    # the product form is far outside the simulation interval
    assert product_form_ET(2, 0.8, (alpha, A)) < low - 0.2


# ------------------------------------------------------------------ (e) Li's product form


@pytest.mark.parametrize("d,lam", [(2, 0.9), (3, 0.95)])
def test_product_form_exact_for_exponential(d: int, lam: float) -> None:
    assert np.max(product_form_residual(d, lam, ([1.0], [[-1.0]]))) < 1e-14
    assert np.max(product_form_residual(d, lam, ([0.4, 0.6], [[-1.0, 0.0], [0.0, -1.0]]))) < 1e-14


@pytest.mark.parametrize("d,lam,scv", [(2, 0.9, 10.0), (2, 0.7, 4.0), (3, 0.9, 10.0)])
def test_product_form_fails_for_h2_with_closed_form_residual(d: int, lam: float,
                                                             scv: float) -> None:
    alpha, A = hyperexponential2(1.0, scv, 0.5)
    K = 8
    res = product_form_residual(d, lam, (alpha, A), K)
    assert res[0] < 1e-14  # level 1 holds
    assert np.max(res) > 1e-3  # clearly nonzero
    cand = product_form_candidate(d, lam, (alpha, A), K + 2)
    u = cand.sum(axis=1)
    theta = np.linalg.solve(-A.T, alpha)
    drift = jsq_ph_drift(cand[:K], d, lam, (alpha, A), x_next=cand[K])
    for k in range(2, K + 1):  # level k is row k-1
        expected = (u[k - 1] - u[k]) * (theta - alpha)
        assert np.max(np.abs(drift[k - 1] - expected)) < 1e-12
        assert res[k - 1] == pytest.approx(np.max(np.abs(expected)), abs=1e-12)


def test_product_form_ET_far_from_true_fcfs_at_scv10() -> None:
    alpha, A = hyperexponential2(1.0, 10.0, 0.5)
    fp = solve_jsq_ph(2, 0.9, (alpha, A))
    pf = product_form_ET(2, 0.9, (alpha, A))
    assert pf == pytest.approx(2.6140573773238, rel=1e-12)  # the exponential value
    assert (fp.ET - pf) / fp.ET > 0.2


# ------------------------------------------------------------------ (f) errors and the CLI model


def test_errors() -> None:
    alpha, A = hyperexponential2(1.0, 4.0)
    with pytest.raises(StabilityError, match="lam\\*E\\[X\\]=1"):
        solve_jsq_ph(2, 1.0, (alpha, A))
    with pytest.raises(StabilityError):
        solve_jsq_ph(2, 0.6, ([1.0], [[-0.5]]))  # E[X] = 2, load 1.2
    with pytest.raises(InvalidParameter, match="scv=0.5 must be a finite real number >= 1"):
        hyperexponential2(1.0, 0.5)
    for f in (0.0, 1.0, -0.2, 1.5):
        with pytest.raises(InvalidParameter, match=r"f=.* must be a real number in \(0, 1\)"):
            hyperexponential2(1.0, 4.0, f)
    with pytest.raises(InvalidParameter, match="mean"):
        hyperexponential2(0.0, 4.0)
    with pytest.raises(InvalidParameter, match="alpha"):
        solve_jsq_ph(2, 0.5, ([0.5, 0.2], [[-1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(InvalidParameter, match="A"):
        solve_jsq_ph(2, 0.5, ([0.5, 0.5], [[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(InvalidParameter, match="d"):
        solve_jsq_ph(0, 0.5, (alpha, A))
    with pytest.raises(InvalidParameter, match="k"):
        erlang(0, 1.0)


def test_truncation_cap_raises_not_converged() -> None:
    alpha, A = hyperexponential2(1.0, 10.0, 0.5)
    with pytest.raises(TruncationError, match="K=50 .*lower lam or scv"):
        solve_jsq_ph(1, 0.7, (alpha, A), max_levels=50)
    with pytest.raises(NotConverged, match="cavity iteration"):
        solve_jsq_ph(2, 0.95, (alpha, A), max_iter=3)


def test_registered_model() -> None:
    spec = get_model("jsq-ph")
    result = spec.run({"d": 2, "lam": 0.9, "scv": 10, "f": 0.5})
    out = json.loads(json.dumps(result.to_dict()))["results"]
    for key in ("ET", "EQ", "EW", "tail", "iterations", "residual", "product_form_ET",
                "product_form_residual"):
        assert key in out
    assert out["residual"] < 1e-10 and out["product_form_residual"] > 1e-3
    assert min(out["tail"]) >= 1e-16 and out["tail"][0] == pytest.approx(0.9, abs=1e-10)
    with pytest.raises(InvalidParameter, match="scv"):
        spec.run({"d": 2, "lam": 0.9, "scv": 0.5, "f": 0.5})
    with pytest.raises(InvalidParameter, match="f"):
        spec.run({"d": 2, "lam": 0.9, "scv": 4, "f": 1.0})
    with pytest.raises(StabilityError):
        spec.run({"d": 2, "lam": 1.2, "scv": 4, "f": 0.5})
