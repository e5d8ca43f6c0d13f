"""The size expansion E[X^N] = pi + V/N + V2/N^2 (steady state and transient).

Independent evidence: the exact finite-N chains.  For a one-dimensional SIS epidemic the
stationary law of the birth-death chain on {0, ..., N} is a product; for a two-dimensional
epidemic with cubic and quartic rates (so that D^3 F and D^4 F are not zero) the stationary
law is a sparse linear solve over the (N+1)(N+2)/2 states; transients are
``scipy.sparse.linalg.expm_multiply`` of the generator.  ``N^2 (E[X^N] - pi - V/N)`` tends to
``V2`` with an ``O(1/N)`` gap: a fit of ``V2 + c/N + c'/N^2`` on three values of ``N`` must give
``V2``, and ``E[X^N] - (pi + V/N + V2/N^2)`` must fall as ``N^-3``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spl
import sympy as sp

from symq.core.errors import InvalidParameter, StabilityError
from symq.meanfield import PopulationProcess
from symq.meanfield.expansion import expansion_steady_state

X = sp.Symbol("x")
BETA, GAMMA, EPS = sp.symbols("beta gamma epsilon", positive=True)
SIS_PARAMS = {"beta": 2.0, "gamma": 1.0, "epsilon": 0.1}

X1, X2 = sp.symbols("x1 x2")
B, G, R, E = sp.symbols("b g r e", positive=True)
TWO_PARAMS = {"b": 2.0, "g": 1.0, "r": 1.0, "e": 0.3}


def sis() -> PopulationProcess:
    process = PopulationProcess([X], [BETA, GAMMA, EPS], name="SIS epidemic")
    process.add_transition([1], (EPS + BETA * X) * (1 - X))
    process.add_transition([-1], GAMMA * X)
    return process


def two_dimensional() -> PopulationProcess:
    """Susceptible x1, infected x2, recovered 1 - x1 - x2; infection at a quartic rate."""
    process = PopulationProcess([X1, X2], [B, G, R, E], name="SIRS with a quartic rate")
    process.add_transition([-1, 1], B * X1 * X2 * (1 + X1 * X2) + E * X1)
    process.add_transition([0, -1], G * X2)
    process.add_transition([1, 0], R * (1 - X1 - X2))
    return process


def sis_generator(N: int) -> tuple[sps.csr_matrix, np.ndarray]:
    """The generator of the SIS chain on k = 0..N infected (written from the rates, not from
    the process object) and the values k/N."""
    beta, gamma, eps = SIS_PARAMS["beta"], SIS_PARAMS["gamma"], SIS_PARAMS["epsilon"]
    k = np.arange(N + 1)
    x = k / N
    up = N * (eps + beta * x) * (1 - x)
    down = N * gamma * x
    Q = sps.diags([up[:-1], down[1:]], [1, -1], shape=(N + 1, N + 1)).tolil()
    Q.setdiag(-(up + down))
    return Q.tocsr(), x[:, None]


def two_generator(N: int) -> tuple[sps.csr_matrix, np.ndarray]:
    p = TWO_PARAMS
    states = [(s, i) for s in range(N + 1) for i in range(N + 1 - s)]
    index = {state: j for j, state in enumerate(states)}
    rows, cols, vals = [], [], []
    for (s, i), j in index.items():
        x1, x2 = s / N, i / N
        for (ds, di), rate in (((-1, 1), p["b"] * x1 * x2 * (1 + x1 * x2) + p["e"] * x1),
                               ((0, -1), p["g"] * x2), ((1, 0), p["r"] * (1 - x1 - x2))):
            if N * rate > 1e-9:
                rows.append(j)
                cols.append(index[(s + ds, i + di)])
                vals.append(N * rate)
    n = len(states)
    Q = sps.csr_matrix((vals, (rows, cols)), shape=(n, n))
    Q = Q - sps.diags(np.asarray(Q.sum(axis=1)).ravel())
    return Q.tocsr(), np.array(states, dtype=float) / N


def stationary_law(Q: sps.csr_matrix) -> np.ndarray:
    """pi Q = 0, sum pi = 1 (one balance equation replaced by the normalisation)."""
    n = Q.shape[0]
    A = Q.T.tolil()
    A[0, :] = 1.0
    rhs = np.zeros(n)
    rhs[0] = 1.0
    return spl.spsolve(A.tocsr(), rhs)


def stationary_mean(Q: sps.csr_matrix, values: np.ndarray) -> np.ndarray:
    return stationary_law(Q) @ values


def fitted_second_order(values: dict[int, np.ndarray], pi: np.ndarray, V: np.ndarray
                        ) -> np.ndarray:
    """Fit ``N^2 (E - pi - V/N) = V2 + c/N + c'/N^2`` exactly on three values of ``N``."""
    Ns = sorted(values)
    H = np.array([[1.0, 1.0 / N, 1.0 / N ** 2] for N in Ns])
    y = np.array([(values[N] - pi - V / N) * N ** 2 for N in Ns])
    return np.linalg.solve(H, y)[0]


def test_sis_steady_state_second_order_term():
    process = sis()
    pi = process.fixed_point([0.5], SIS_PARAMS).x
    ex = process.refined(pi, SIS_PARAMS, order=2)
    assert ex.order == 2 and ex.residual < 1e-12
    exact = {N: stationary_mean(*sis_generator(N)) for N in (100, 200, 400, 800)}
    fitted = fitted_second_order({N: exact[N] for N in (200, 400, 800)}, pi, ex.V)
    assert fitted == pytest.approx(ex.V2, rel=2e-3)
    # third order: the error of pi + V/N + V2/N^2 falls as N^-3 (ratio 8 per doubling)
    errors = [abs(exact[N] - ex.mean(N))[0] for N in (100, 200, 400, 800)]
    ratios = [a / b for a, b in zip(errors, errors[1:])]
    assert all(6.5 < r < 9.5 for r in ratios), ratios
    # and beats the 1/N estimate by a factor growing with N
    first = [abs(exact[N] - pi - ex.V / N)[0] for N in (100, 800)]
    assert errors[0] < first[0] / 5 and errors[-1] < first[-1] / 40


def test_order_one_is_the_refined_term():
    process = sis()
    pi = process.fixed_point([0.5], SIS_PARAMS).x
    ex = process.refined(pi, SIS_PARAMS)
    assert ex.order == 1 and ex.V2 is None and ex.W2 is None
    assert ex.V == pytest.approx(process.refined_terms(pi, SIS_PARAMS).V, rel=1e-13)


def test_two_dimensional_steady_state_with_cubic_and_quartic_rates():
    process = two_dimensional()
    pi = process.fixed_point([0.5, 0.3], TWO_PARAMS).x
    ex = process.refined(pi, TWO_PARAMS, order=2)
    exact = {N: stationary_mean(*two_generator(N)) for N in (50, 100, 200)}
    fitted = fitted_second_order(exact, pi, ex.V)
    np.testing.assert_allclose(fitted, ex.V2, rtol=5e-4)
    # the second-moment term: N^2 (E[(X - pi)(X - pi)^T] - W/N) -> W2, checked at N = 200
    Q, values = two_generator(200)
    p = stationary_law(Q)
    dev = values - pi
    second = np.einsum("s,sj,sk->jk", p, dev, dev)
    np.testing.assert_allclose(second * 200, ex.W, rtol=0.05)
    np.testing.assert_allclose((second - ex.W / 200) * 200 ** 2, ex.W2, rtol=0.15)


def test_sis_transient_second_order_term():
    process = sis()
    times = np.array([0.25, 1.0, 3.0])
    x0 = [0.05]
    tr = process.refined_transient(x0, times, SIS_PARAMS, order=2, rtol=1e-10, atol=1e-12)
    assert tr.x.shape == (3, 1) and tr.V2.shape == (3, 1)
    exact = {}
    for N in (100, 200, 400):
        Q, values = sis_generator(N)
        start = np.zeros(N + 1)
        start[int(round(x0[0] * N))] = 1.0
        laws = spl.expm_multiply(Q.T, start, start=0.0, stop=3.0, num=13, endpoint=True)
        exact[N] = laws[[1, 4, 12]] @ values         # times 0.25, 1.0 and 3.0
    for i in range(3):
        fitted = fitted_second_order({N: exact[N][i] for N in exact}, tr.x[i], tr.V[i])
        assert fitted == pytest.approx(tr.V2[i], rel=5e-3, abs=1e-4)
    # the transient terms tend to the stationary ones
    late = process.refined_transient(x0, 40.0, SIS_PARAMS, order=2)
    steady = process.refined(process.fixed_point([0.5], SIS_PARAMS).x, SIS_PARAMS, order=2)
    assert late.V[-1] == pytest.approx(steady.V, rel=1e-6)
    assert late.V2[-1] == pytest.approx(steady.V2, rel=1e-6)


def test_two_dimensional_transient():
    process = two_dimensional()
    x0 = [0.9, 0.1]
    tr = process.refined_transient(x0, [0.5, 2.0], TWO_PARAMS, order=2)
    exact = {}
    for N in (30, 60, 120):
        Q, values = two_generator(N)
        start = np.zeros(Q.shape[0])
        states = np.round(values * N).astype(int)
        at_x0 = (states[:, 0] == round(0.9 * N)) & (states[:, 1] == round(0.1 * N))
        start[np.flatnonzero(at_x0)] = 1
        laws = spl.expm_multiply(Q.T, start, start=0.0, stop=2.0, num=5, endpoint=True)
        exact[N] = laws[[1, 4]] @ values
    for i in range(2):
        fitted = fitted_second_order({N: exact[N][i] for N in exact}, tr.x[i], tr.V[i])
        np.testing.assert_allclose(fitted, tr.V2[i], rtol=0.02, atol=2e-3)


def test_errors():
    process = sis()
    pi = process.fixed_point([0.5], SIS_PARAMS).x
    with pytest.raises(InvalidParameter, match="order"):
        process.refined(pi, SIS_PARAMS, order=3)
    with pytest.raises(InvalidParameter, match="N=0"):
        process.refined(pi, SIS_PARAMS, order=2).mean(0)
    with pytest.raises(InvalidParameter, match="t=-1"):
        process.refined_transient([0.1], -1.0, SIS_PARAMS)
    unstable = PopulationProcess([X], [BETA], name="logistic")
    unstable.add_transition([1], BETA * X * (1 - X))
    with pytest.raises(StabilityError):
        expansion_steady_state(unstable, [0.0], {"beta": 1.0}, order=2)


def test_declared_population_second_order_and_transient_values():
    """The declared kind's NAME_N2 and NAME_t_N2 values against the exact chain (N = 400):
    a functional (i^2) exercises the derivative terms of E[h(X^N)]."""
    from symq.core.parameters import Parameter, PositiveReal
    from symq.meanfield.declared import declare_population

    params = tuple(Parameter(name, PositiveReal()) for name in ("beta", "gamma", "epsilon"))
    spec = declare_population("sis", {
        "variables": ["i"], "initial": [0.05], "outputs": {"sq": "i^2"},
        "transitions": [{"jump": [1], "rate": "(epsilon + beta*i)*(1 - i)"},
                        {"jump": [-1], "rate": "gamma*i"}]}, params, "models.sis")
    N = 400
    r = spec.run({**SIS_PARAMS, "N": N, "order": 2, "t": 1.0})
    Q, values = sis_generator(N)
    exact_sq = stationary_mean(Q, values ** 2)[0]
    assert abs(r["sq_N2"] - exact_sq) < abs(r["sq_N"] - exact_sq) / 20
    assert abs(r["sq_N2"] - exact_sq) < 1e-6
    start = np.zeros(N + 1)
    start[20] = 1.0                                   # i = 0.05
    law = spl.expm_multiply(Q.T, start, start=0.0, stop=1.0, num=2, endpoint=True)[-1]
    for name, h in (("i", values[:, 0]), ("sq", values[:, 0] ** 2)):
        exact = law @ h
        assert abs(r[f"{name}_t_N2"] - exact) < abs(r[f"{name}_t_N"] - exact) / 20
        assert abs(r[f"{name}_t_N"] - exact) < abs(r[f"{name}_t"] - exact) / 20
    with pytest.raises(InvalidParameter, match="order"):
        spec.run({**SIS_PARAMS, "order": 2})          # no N: nothing to expand


def test_a_conserved_sum_is_solved_in_the_span_of_the_jumps():
    """S + I + R = 1 declared with three variables (as rmf_tool's SIR example): the jumps
    conserve the sum, so DF is singular along it; fixed point, stability and both terms must
    equal those of the same epidemic in the independent coordinates (S, I), R = 1 - S - I."""
    from symq.meanfield.conservation import conservation

    X3 = sp.Symbol("x3")
    full = PopulationProcess([X1, X2, X3], [B, G, R, E], name="SIRS in three fractions")
    full.add_transition([-1, 1, 0], B * X1 * X2 * (1 + X1 * X2) + E * X1)
    full.add_transition([0, -1, 1], G * X2)
    full.add_transition([1, 0, -1], R * X3)
    kept = conservation(full)
    assert kept.conserved == ((1, 1, 1),)
    assert kept.describe(("S", "I", "R")) == "S + I + R"
    reduced = two_dimensional()
    pi2 = reduced.fixed_point([0.5, 0.3], TWO_PARAMS).x
    fp = full.fixed_point([0.5, 0.3, 0.2], TWO_PARAMS)
    np.testing.assert_allclose(fp.x, [*pi2, 1 - pi2.sum()], atol=1e-11)
    stab2, stab3 = reduced.stability(pi2, TWO_PARAMS), full.stability(fp.x, TWO_PARAMS)
    assert stab3.stable and np.allclose(np.sort_complex(stab3.eigenvalues),
                                        np.sort_complex(stab2.eigenvalues), atol=1e-10)
    e2, e3 = reduced.refined(pi2, TWO_PARAMS, order=2), full.refined(fp.x, TWO_PARAMS, order=2)
    for two, three in ((e2.V, e3.V), (e2.V2, e3.V2)):
        np.testing.assert_allclose(three, [*two, -two.sum()], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(e3.W[:2, :2], e2.W, rtol=1e-8, atol=1e-12)
    terms = full.refined_terms(fp.x, TWO_PARAMS)
    assert terms.lyapunov_residual < 1e-12 and np.allclose(terms.V, e3.V, atol=1e-12)


def test_declared_process_with_a_conserved_sum():
    """The declared kind inherits the reduction: S, I, R all declared, refined values given."""
    from symq.core.parameters import Parameter, PositiveReal
    from symq.meanfield.declared import declare_population

    params = tuple(Parameter(name, PositiveReal()) for name in ("b", "g", "r", "e"))
    spec = declare_population("sirs", {
        "variables": ["S", "I", "R"], "initial": [0.5, 0.3, 0.2],
        "transitions": [{"jump": [-1, 1, 0], "rate": "b*S*I*(1 + S*I) + e*S"},
                        {"jump": [0, -1, 1], "rate": "g*I"},
                        {"jump": [1, 0, -1], "rate": "r*R"}]}, params, "models.sirs")
    out = spec.run({**TWO_PARAMS, "N": 100, "order": 2})
    reduced = two_dimensional()
    pi = reduced.fixed_point([0.5, 0.3], TWO_PARAMS).x
    expected = reduced.refined(pi, TWO_PARAMS, order=2).mean(100)
    assert out["stable"] and out["S_N2"] == pytest.approx(expected[0], rel=1e-9)
    assert out["I_N2"] == pytest.approx(expected[1], rel=1e-9)
    assert out["R_N2"] == pytest.approx(1 - expected.sum(), rel=1e-9)
