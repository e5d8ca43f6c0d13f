"""The age-layer cavity analysis against independent computations.

(a) SQ(d) through the age layers vs the independent level-dependent QBD solver
``solve_jsq_ph`` (same fixed point, other algorithm); (b) exponential sizes: age carries no
information, SQ-RTB and LEW give the closed form lam^((d^l-1)/(d-1)), and so does the waiting
time law; (c) d = 1: every policy is random routing, M/G/1 (Pollaczek-Khinchine, and the M/M/1
waiting-time law); (d) invariants; (e) convergence in delta and B; (f) the paper's policy
ordering; (g) errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import gamma

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError
from symq.laws import erlang, hyperexponential2, ph_moments
from symq.meanfield.attained import (
    POLICY_NAMES,
    Policy,
    TruncationWarning,
    get_policy,
    solve_attained,
)
from symq.meanfield.jsq_ph import solve_jsq_ph

try:
    from symq.laws import hyper_erlang
except ImportError:  # pragma: no cover - the lead adds it to phase_type.py
    hyper_erlang = None

H2 = hyperexponential2(1.0, 10.0, 0.5)
EXP = (np.array([1.0]), np.array([[-1.0]]))


def _sizes():
    out = [("H2", H2), ("E3", erlang(3, 1.0))]
    if hyper_erlang is not None:
        out.append(("HE2", hyper_erlang(2, 1.0, 10.0, 0.3)))
    return out


# --------------------------------------------------------------------------------------------
# (a) SQ(d) vs the independent QBD solver
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("label, law", _sizes())
@pytest.mark.parametrize("delta", [0.3, 1.7])
def test_sq_through_age_layers_matches_jsq_ph(label, law, delta):
    alpha, A = law
    ref = solve_jsq_ph(3, 0.8, (alpha, A))
    fp = solve_attained("SQ", 3, 0.8, (alpha, A), delta=delta, rep_max=6.0, B=40)
    assert fp.EW == pytest.approx(ref.EW, abs=1e-8)
    assert fp.ET == pytest.approx(ref.ET, abs=1e-8)
    n = min(fp.B, ref.u.size)
    np.testing.assert_allclose(fp.queue_tail[:n], ref.u[:n], atol=1e-9)
    # the phase law of the job in service at level >= 1 (x_1 = lam E[X] theta)
    np.testing.assert_allclose(fp.x.sum(axis=(0, 1)), ref.x[0], atol=1e-9)


# --------------------------------------------------------------------------------------------
# (b) exponential sizes: age carries no information
# --------------------------------------------------------------------------------------------


def _exp_tail(d, lam, n):
    return np.array([lam ** ((d ** l - 1) / (d - 1)) for l in range(1, n + 1)])


@pytest.mark.parametrize("name", ["SQ", "SQ-RTB", "LEW"])
def test_exponential_age_blind_policies_equal_closed_form(name):
    d, lam = 3, 0.8
    fp = solve_attained(name, d, lam, EXP, delta=0.25, rep_max=5.0, B=30)
    u = _exp_tail(d, lam, 30)
    assert fp.ET == pytest.approx(u.sum() / lam, abs=1e-8)
    np.testing.assert_allclose(fp.queue_tail, u, atol=1e-9)


def test_exponential_sq_re_is_worse_than_sq():
    """SQ-RE sends jobs to longer queues whose job is young: with memoryless sizes that can
    only hurt (it is *not* SQ(d); the age of an exponential job says nothing)."""
    d, lam = 3, 0.8
    fp = solve_attained("SQ-RE", d, lam, EXP, delta=0.25, rep_max=5.0, B=30)
    assert fp.ET > _exp_tail(d, lam, 30).sum() / lam + 1e-4
    # with a threshold beyond every reported age the indicator is always 0: SQ(d)
    far = solve_attained(get_policy("SQ-RE", T=100.0), d, lam, EXP, delta=0.25, rep_max=5.0,
                         B=30)
    assert far.ET == pytest.approx(_exp_tail(d, lam, 30).sum() / lam, abs=1e-8)


def test_exponential_sq_waiting_time_law():
    """Joining a queue with l jobs (prob. u_l^d - u_{l+1}^d) means an Erlang(l, 1) wait."""
    d, lam = 2, 0.7
    fp = solve_attained("SQ-RTB", d, lam, EXP, delta=0.5, rep_max=3.0, B=30)
    u = np.concatenate([_exp_tail(d, lam, 31), [0.0]])
    w = np.array([0.0, 0.3, 1.0, 2.5, 6.0])
    expected = sum((u[l - 1] ** d - u[l] ** d) * gamma.sf(w, l) for l in range(1, 31))
    np.testing.assert_allclose(fp.waiting_ccdf(w), expected, atol=1e-9)


# --------------------------------------------------------------------------------------------
# (c) d = 1: M/G/1
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_d1_every_policy_is_mg1(name):
    alpha, A = hyperexponential2(1.0, 3.0, 0.4)
    lam = 0.4
    m1, m2 = ph_moments((alpha, A), 2)
    pk = lam * m2 / (2 * (1 - lam * m1))
    fp = solve_attained(name, 1, lam, (alpha, A), delta=0.5, rep_max=4.0, B=60)
    assert fp.truncation_mass < 1e-12
    assert fp.EW == pytest.approx(pk, abs=1e-8)


def test_d1_exponential_waiting_time_is_mm1():
    lam = 0.5
    fp = solve_attained("LAS", 1, lam, EXP, delta=0.5, rep_max=2.0, B=60)
    w = np.array([0.0, 0.5, 2.0, 10.0])
    np.testing.assert_allclose(fp.waiting_ccdf(w), lam * np.exp(-(1 - lam) * w), atol=1e-12)


# --------------------------------------------------------------------------------------------
# (d) invariants
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["LEW", "SQ-RTB-RE", "LAS-QTB"])
def test_invariants(name):
    d, lam = 2, 0.6
    alpha, A = H2
    fp = solve_attained(name, d, lam, (alpha, A), delta=0.5, rep_max=10.0, B=40)
    assert fp.x.shape == (fp.r + 1, fp.B, 2) and fp.r == 20
    assert np.all(fp.x >= 0)
    assert fp.x.sum() == pytest.approx(lam * 1.0, abs=1e-12)
    # the age of the job in service has the stationary-excess law, whatever the policy
    ages = np.arange(fp.r + 1) * fp.delta
    p, mu1, mu2 = alpha[0], -A[0, 0], -A[1, 1]

    def excess_ccdf(a):  # P(age > a) = int_a^inf P(X > s) ds / E[X]
        return p / mu1 * np.exp(-mu1 * a) + (1 - p) / mu2 * np.exp(-mu2 * a)

    layer = excess_ccdf(ages) - np.concatenate([excess_ccdf(ages[1:]), [0.0]])
    np.testing.assert_allclose(fp.x.sum(axis=(1, 2)), lam * layer, atol=1e-10)
    # P(wait) = P(no idle server among d probes) = (lam E[X])^d, and the waiting-time law
    assert fp.P_wait == pytest.approx(lam ** d, abs=1e-10)
    assert float(fp.waiting_ccdf(0.0)) == pytest.approx(fp.P_wait, abs=1e-14)
    integral, _ = quad(lambda w: float(fp.waiting_ccdf(w)), 0, np.inf, limit=200,
                       epsabs=1e-11)
    assert integral == pytest.approx(fp.EW, abs=1e-7)
    assert fp.waiting_mean() == pytest.approx(fp.EW, abs=1e-9)
    assert np.all(np.diff(fp.waiting_ccdf(np.linspace(0, 30, 31))) <= 0)
    # arrival rates: zero at the truncation, at most lam d (all probes tie)
    assert np.all(fp.rates[:, -1] == 0) and np.all(fp.rates <= lam * d + 1e-12)


def test_user_policy_with_equivalent_scores_gives_the_same_fixed_point():
    """l + age/1000 ranks (age < 40) exactly like SQ-RTB = (r+1) l + k."""
    alpha, A = H2
    kw = {"delta": 0.5, "rep_max": 10.0, "B": 40}
    mine = solve_attained(Policy.from_score("mine", lambda l, age: l + age / 1000.0), 2, 0.6,
                          (alpha, A), **kw)
    ref = solve_attained("SQ-RTB", 2, 0.6, (alpha, A), **kw)
    assert mine.policy == "mine"
    np.testing.assert_allclose(mine.x, ref.x, atol=1e-12)


# --------------------------------------------------------------------------------------------
# (e) discretisation: delta -> 0 and B -> inf
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["LAS", "LEW"])
def test_delta_convergence(name):
    alpha, A = H2
    ew = [solve_attained(name, 2, 0.7, (alpha, A), delta=dl, rep_max=20.0, B=60).EW
          for dl in (0.8, 0.4, 0.2)]
    first, second = abs(ew[1] - ew[0]), abs(ew[2] - ew[1])
    assert second < 0.5 * first  # at least first order (measured: ~second order)
    assert second < 0.01


def test_b_convergence_and_truncation_warning():
    alpha, A = H2
    kw = {"delta": 0.8, "rep_max": 20.0}
    with pytest.warns(TruncationWarning, match="raise B"):
        small = solve_attained("LEW", 2, 0.7, (alpha, A), B=8, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncationWarning)
        mid = solve_attained("LEW", 2, 0.7, (alpha, A), B=16, **kw)
        big = solve_attained("LEW", 2, 0.7, (alpha, A), B=24, **kw)
    assert small.truncation_mass > mid.truncation_mass > big.truncation_mass
    assert abs(big.EW - mid.EW) < abs(mid.EW - small.EW)
    assert abs(big.EW - mid.EW) < 1e-8
    with pytest.raises(TruncationError, match="B=8 leaves out .*raise B"):
        solve_attained("LEW", 2, 0.7, (alpha, A), B=8, truncation="raise", **kw)


# --------------------------------------------------------------------------------------------
# (f) the paper's qualitative finding (its numerical results: LEW(d) best)
# --------------------------------------------------------------------------------------------


def test_policy_ordering_h2_scv10():
    alpha, A = H2
    kw = {"delta": 0.2, "rep_max": 20.0, "B": 40}
    ew = {name: solve_attained(name, 2, 0.7, (alpha, A), **kw).EW
          for name in ("SQ", "SQ-RTB", "LEW")}
    assert ew["LEW"] < ew["SQ-RTB"] < ew["SQ"]
    # SQ here is the independent QBD fixed point
    assert ew["SQ"] == pytest.approx(solve_jsq_ph(2, 0.7, (alpha, A)).EW, abs=1e-7)


# --------------------------------------------------------------------------------------------
# (g) errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, exc, pattern", [
    ({"d": 0}, InvalidParameter, "parameter d=0"),
    ({"d": 2.5}, InvalidParameter, "parameter d=2.5"),
    ({"lam": -0.1}, InvalidParameter, "parameter lam=-0.1"),
    ({"lam": 1.0}, StabilityError, "lam=1"),
    ({"delta": 0.0}, InvalidParameter, "parameter delta=0"),
    ({"rep_max": 0.05}, InvalidParameter, "parameter rep_max=0.05"),
    ({"B": 1}, InvalidParameter, "parameter B=1"),
    ({"tol": 0.0}, InvalidParameter, "parameter tol=0"),
    ({"max_iter": 0}, InvalidParameter, "parameter max_iter=0"),
    ({"truncation": "loud"}, InvalidParameter, "parameter truncation='loud'"),
    ({"alpha": [0.5, 0.4]}, InvalidParameter, "alpha"),
    ({"policy": "JSQ"}, KeyError, "valid choices"),
])
def test_bad_input(kwargs, exc, pattern):
    args = {"policy": "SQ", "d": 2, "lam": 0.5, "alpha": [1.0], "A": [[-1.0]], "delta": 0.1,
            "rep_max": 1.0}
    args.update(kwargs)
    if "alpha" in kwargs:
        args["A"] = [[-1.0, 0.0], [0.0, -1.0]]
    policy, d, lam, alpha, A = (args.pop(k) for k in ("policy", "d", "lam", "alpha", "A"))
    with pytest.raises(exc, match=pattern):
        solve_attained(policy, d, lam, (alpha, A), **args)


def test_stability_uses_the_mean():
    with pytest.raises(StabilityError, match="lam\\*E\\[X\\]=1.2"):
        solve_attained("LEW", 2, 0.6, erlang(2, 2.0))


def test_not_converged_reports_the_residual():
    with pytest.raises(NotConverged, match="residual") as info:
        solve_attained("LEW", 2, 0.7, H2, delta=0.8, rep_max=8.0, max_iter=3)
    assert info.value.iterations == 3 and math.isfinite(info.value.residual)


def test_waiting_ccdf_rejects_negative_times():
    fp = solve_attained("SQ", 2, 0.5, EXP, delta=0.5, rep_max=1.0, B=20)
    with pytest.raises(InvalidParameter, match="parameter w="):
        fp.waiting_ccdf([-1.0])
