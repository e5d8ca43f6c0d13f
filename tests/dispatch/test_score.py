"""User-defined score policies against the built-in policies, closed forms and each other."""

import functools

import numba
import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.dispatch import DispatchPolicy, ScorePolicy, score_policy
from symq.dispatch.policies import get_policy
from symq.dispatch.policies.exact import exact_lwl, exact_sita
from symq.dispatch.policies.jsq import exact_jsq
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.dispatch.vi.multigrid import richardson
from symq.dispatch.vi.solvers import evaluate_policy
from symq.laws import Exponential

X = Exponential(1.0)
LEVEL = 0.999
FPI_TEXT = "u + x + lam/m*x*(2*u + x)/(2*(1 - rho))"     # symq.dispatch.symbolic.fpi_index


def random_states(m, k, seed, integer=False):
    rng = np.random.default_rng(seed)
    u = rng.exponential(2.0, size=(k, m))
    if integer:               # many ties in u
        u = np.floor(u)
    n = rng.integers(0, 6, size=(k, m))
    x = rng.exponential(1.0, size=k)
    return u, n, x


@pytest.mark.parametrize("integer", [False, True])
def test_score_u_decides_like_lwl(integer):
    u, n, x = random_states(3, 2000, 1, integer)
    mine = score_policy("u", "u").bind(3, 0.5, X).decide(u, x, n)
    lwl = get_policy("lwl").bind(3, 0.5, X).decide(u, x, n)
    assert np.array_equal(mine, lwl)
    assert np.array_equal(mine, np.argmin(u, axis=1))     # numpy: ties to the first index


def test_score_n_decides_like_jsq():
    u, n, x = random_states(4, 3000, 2)
    mine = score_policy("jsq", "n").bind(4, 0.5, X).decide(u, x, n)
    jsq = get_policy("jsq").bind(4, 0.5, X).decide(u, x, n, rng=3)
    least = n == n.min(axis=1, keepdims=True)
    unique = least.sum(axis=1) == 1
    assert unique.sum() > 500 and (~unique).sum() > 500
    assert np.array_equal(mine[unique], jsq[unique])
    assert np.all(least[np.arange(len(mine)), mine])       # a least-loaded server
    assert np.array_equal(mine, np.argmax(least, axis=1))  # ... the lowest-indexed one


def test_fpi_formula_equals_builtin_fpi():
    # the compiled formula against the hand-written numba fast path of the FPI index
    u, n, x = random_states(3, 2000, 4)
    mine = score_policy("fpi", FPI_TEXT).bind(3, 0.6, X).decide(u, x, n)
    fpi = get_policy("fpi-rnd").bind(3, 0.6, X).decide(u, x, n)
    assert np.array_equal(mine, fpi)


def test_declared_parameter_changes_decisions():
    u, n, x = random_states(3, 2000, 5)
    pol = score_policy("mine", "u + beta*x*n", ("beta",))
    for beta in (0.0, 0.7, 5.0):
        got = pol.with_values(beta=beta).bind(3, 0.5, X).decide(u, x, n)
        assert np.array_equal(got, np.argmin(u + beta * x[:, None] * n, axis=1))
    with pytest.raises(InvalidParameter, match="beta"):
        pol.bind(3, 0.5, X)                          # no value given
    with pytest.raises(InvalidParameter, match="gamma"):
        pol.with_values(gamma=1.0)


def test_model_symbols_and_one_based_index():
    # lam = rho m / E[X] = 1.5, i = 1..m: the score lam*i - u prefers the long queue unless
    # the index penalty lam is larger than the difference of backlogs
    pol = score_policy("idx", "lam*i - u")
    got = pol.bind(3, 0.5, X).decide([[0.0, 1.0, 2.0], [0.0, 2.0, 5.0]], [1.0, 1.0])
    # scores (1.5, 2.0, 2.5) -> 0 ; (1.5, 1.0, -0.5) -> 2
    assert got.tolist() == [0, 2]


def test_numba_and_python_functions_equal_the_formula():
    @numba.njit
    def njit_score(u, n, x, i, p):
        return u + p[3] * x * n

    def py_score(u, n, x, i, p):
        return u + p[3] * x * n

    u, n, x = random_states(3, 1000, 6)
    want = score_policy("f", "u + beta*x*n", {"beta": 0.4}).bind(3, 0.5, X).decide(u, x, n)
    for f in (njit_score, py_score):
        pol = DispatchPolicy.from_score("g", f, {"beta": 0.4})
        assert isinstance(pol, ScorePolicy) and pol.uses_counts
        assert np.array_equal(pol.bind(3, 0.5, X).decide(u, x, n), want)


def test_bad_scores_raise_one_invalid_parameter():
    cases = {"u + q": "unknown name q", "__import__('os')": "", "u.real": "attribute access",
             "u +": "syntax error"}
    for text, reason in cases.items():
        with pytest.raises(InvalidParameter, match="mine.score") as exc:
            score_policy("p", text, label="mine.score")
        assert reason in str(exc.value)
    with pytest.raises(InvalidParameter, match="cannot compile"):
        score_policy("p", lambda u: u, label="mine.score")                 # wrong arity
    with pytest.raises(InvalidParameter, match="returned"):
        score_policy("p", lambda u, n, x, i, p: 1, label="mine.score")     # not a float
    with pytest.raises(InvalidParameter, match="uses_counts"):
        score_policy("p", "u", uses_counts=True)
    with pytest.raises(InvalidParameter, match="rho"):
        score_policy("p", "u", ("rho",))
    with pytest.raises(InvalidParameter, match="score"):
        score_policy("p", 3)


def test_nan_score_is_refused():
    pol = score_policy("nan", "sqrt(u - x)").bind(2, 0.5, X)
    with pytest.raises(InvalidParameter, match="NaN"):
        pol.decide([[0.0, 0.0]], [1.0])
    with pytest.raises(InvalidParameter, match="NaN"):
        simulate_dispatch(pol, 2, 0.5, X, n_jobs=10_000, rng=1)


# ---------------------------------------------------------------- simulation


def test_simulated_score_u_is_lwl_with_the_same_seed():
    kw = dict(n_jobs=1_000_000, rng=11, level=LEVEL)
    a = simulate_dispatch(score_policy("u", "u"), 3, 0.6, X, **kw)
    b = simulate_dispatch("lwl", 3, 0.6, X, **kw)
    assert a.ET == b.ET and a.EW == b.EW            # the same decisions on the same stream
    assert a.ET.contains(exact_lwl(3, 0.6, X)), a.ET    # M/M/3


def test_simulated_score_n_matches_exact_jsq():
    # exponential sizes: the queue-length process of JSQ is the same for any tie rule
    est = simulate_dispatch(score_policy("n", "n"), 2, 0.7, X, n_jobs=1_500_000, rng=12,
                            level=LEVEL)
    assert est.ET.contains(exact_jsq(2, 0.7, X)), est.ET


def test_simulated_parameter_reaches_the_kernel():
    # beta = 100 sends (practically) every job to server 1: M/M/1 at load m rho = 0.6
    pol = score_policy("pref", "u + beta*i", ("beta",))
    est = simulate_dispatch(pol, 2, 0.3, X, n_jobs=1_000_000, rng=13, level=LEVEL, beta=100.0)
    assert est.ET.contains(1 / (1 - 0.6)), est.ET
    assert est.loads[1] < 1e-3
    zero = simulate_dispatch(pol, 2, 0.3, X, n_jobs=200_000, rng=13, beta=0.0)
    assert zero.ET == simulate_dispatch("lwl", 2, 0.3, X, n_jobs=200_000, rng=13).ET


# ---------------------------------------------------------------- value iteration

KW = dict(delta=0.2, U=16.0, tol=1e-10)


def test_vi_score_u_equals_builtin_lwl_evaluation():
    a = evaluate_policy("lwl", 2, 0.4, X, **KW)                   # sorted states
    b = evaluate_policy(score_policy("u", "u"), 2, 0.4, X, **KW)  # full lattice
    assert not b.symmetric and b.policy == "u"
    assert abs(a.ET - b.ET) < 1e-9
    assert np.allclose(a.v, b.v, atol=1e-8)


def test_vi_asymmetric_policy_against_exact_sita():
    # SITA is not symmetric in the servers; h between two atoms, error O(delta^2)
    errs = []
    for d in (0.2, 0.1):
        h = 1.0 + d / 2
        r = evaluate_policy(get_policy("sita", h=h), 2, 0.4, X, delta=d, U=16.0, tol=1e-9)
        errs.append(r.ET - exact_sita(2, 0.4, X, [h]))
    assert 0 < errs[1] < errs[0] < 0.01
    assert 2.5 < errs[0] / errs[1] < 5.5


def test_vi_parameter_against_mm1():
    pol = score_policy("pref", "u + beta*i", {"beta": 100.0})
    rr = richardson(functools.partial(evaluate_policy, pol), 2, 0.3, X, delta=0.2, U=24.0,
                    tol=1e-10)
    assert abs(rr.ET - 1 / (1 - 0.6)) < 2e-3


def test_vi_refuses_counts_and_more_servers():
    with pytest.raises(InvalidParameter, match="job counts"):
        evaluate_policy(score_policy("n", "n"), 2, 0.4, X, **KW)
    with pytest.raises(InvalidParameter, match="job counts"):
        evaluate_policy(get_policy("jsq"), 2, 0.4, X, **KW)
    with pytest.raises(InvalidParameter, match="parameter m=3"):
        evaluate_policy(score_policy("u", "u"), 3, 0.4, X, **KW)
