"""equilibria / limit_sets: every fixed point of a polynomial drift, certified, and limit sets.

Independent evidence: roots known in closed form (a cubic with chosen rational roots, the
golden ratio), equilibria of Lotka-Volterra systems solved by hand or support by support with
numpy, Jacobian eigenvalues written out by hand, scipy.optimize.root from many starts, and the
radius sqrt(mu) and period 2 pi / w of the Hopf normal form.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import root

from symq.meanfield import PopulationProcess, limit_sets
from symq.meanfield.equilibria import ContinuumOfEquilibria, NonPolynomialDrift, equilibria

X, Y, Z = sp.symbols("x y z")


def from_drift(variables, drift, parameters=(), bounds=(0.0, 1.0)) -> PopulationProcess:
    """A process whose drift is ``drift``: a birth at rate F_i + 5 and a death at rate 5."""
    proc = PopulationProcess(list(variables), list(parameters), bounds=bounds)
    n = len(variables)
    for i, f in enumerate(drift):
        up = [0] * n
        up[i] = 1
        down = [0] * n
        down[i] = -1
        proc.add_transition(up, f + 5)
        proc.add_transition(down, 5)
    return proc


def check_certified(result, proc, params=None) -> None:
    p = proc.parameter_values(params)
    for e in result.equilibria:
        assert np.all(e.enclosure[:, 0] <= e.x) and np.all(e.x <= e.enclosure[:, 1])
        assert float(np.max(np.abs(proc.F(e.x, p)))) < 1e-10
        assert e.residual < 1e-10
    json.dumps(result.to_dict())


def test_schlogl_three_rational_roots():
    a, b, c = sp.Rational(3, 20), sp.Rational(1, 2), sp.Rational(7, 8)
    cubic = sp.expand(-(X - a) * (X - b) * (X - c))
    proc = PopulationProcess([X], name="Schlogl")
    # birth k1 + k3 x^2, death k2 x + x^3: the drift is the cubic
    births = sp.Add(*[t for t in cubic.as_ordered_terms() if t.could_extract_minus_sign() is False])
    deaths = sp.expand(births - cubic)
    proc.add_transition([1], births)
    proc.add_transition([-1], deaths)
    assert sp.expand(proc.drift[0] - cubic) == 0
    result = equilibria(proc)
    assert [e.exact[0] for e in result.equilibria] == [a, b, c]
    assert [e.classification for e in result.equilibria] == ["stable", "unstable", "stable"]
    assert all(e.krawczyk for e in result.equilibria)
    # F'(r) = -(r - s)(r - t) for the other two roots s, t
    for e, (r, s, t) in zip(result.equilibria, [(a, b, c), (b, a, c), (c, a, b)]):
        assert e.eigenvalues[0].real == pytest.approx(float(-(r - s) * (r - t)), rel=1e-12)
    assert result.real_solutions == 3 and result.outside_box == 0
    check_certified(result, proc)


def lotka_volterra():
    a, b, k = sp.symbols("a b K", positive=True)
    proc = PopulationProcess([X, Y], [a, b, k], bounds=(0.0, 1.0))
    proc.add_transition([1, 0], X)
    proc.add_transition([-1, 0], X * (X + a * Y))
    proc.add_transition([0, 1], k * Y)
    proc.add_transition([0, -1], Y * (Y + b * X))
    return proc


def test_lotka_volterra_competition_saddle_and_box():
    proc = lotka_volterra()
    params = {"a": 2.0, "b": 3.0, "K": 1.5}
    result = equilibria(proc, params)
    # by hand: (0,0), (1,0), (0,K)=(0,1.5) outside, coexistence x + 2y = 1, 3x + y = 1.5
    expected = {(0.0, 0.0): "unstable", (0.4, 0.3): "saddle", (1.0, 0.0): "stable"}
    got = {tuple(np.round(e.x, 12)): e.classification for e in result.equilibria}
    assert got == expected
    assert result.real_solutions == 4 and result.outside_box == 1
    coexist = [e for e in result.equilibria if e.classification == "saddle"][0]
    assert coexist.exact == (sp.Rational(2, 5), sp.Rational(3, 10))
    # Jacobian at the coexistence point: [[-x, -a x], [-b y, -y]]
    jac = np.array([[-0.4, -0.8], [-0.9, -0.3]])
    assert np.sort(coexist.eigenvalues.real) == pytest.approx(np.sort(np.linalg.eigvals(jac).real))
    check_certified(result, proc, params)
    wide = equilibria(proc, params, box=(0.0, 2.0))
    assert len(wide) == 4 and wide.outside_box == 0
    assert [0.0, 1.5] in wide.points.tolist()


def test_lotka_volterra_limit_sets_bistable():
    proc = lotka_volterra()
    params = {"a": 2.0, "b": 3.0, "K": 1.5}
    survey = limit_sets(proc, params, grid=3, t_max=60.0, box=(0.0, 2.0))
    eqs = survey.equilibria.points.tolist()
    assert sum(survey.counts.values()) == 9 and not survey.cycles
    # exclusion: every start goes to (1, 0) or (0, 1.5) (none lies on the saddle's stable manifold)
    ends = {tuple(eqs[int(k.split()[1])]) for k in survey.counts}
    assert ends == {(1.0, 0.0), (0.0, 1.5)}
    for x0, label in zip(survey.starts, survey.outcomes):
        end = proc.ode(x0, 60.0, params).x[-1]
        assert np.allclose(end, eqs[int(label.split()[1])], atol=1e-3)


def test_hopf_limit_cycle():
    mu, w, c = 0.04, 2.0, 0.5
    u, v = X - c, Y - c
    drift = [mu * u - w * v - (u**2 + v**2) * u, w * u + mu * v - (u**2 + v**2) * v]
    proc = from_drift([X, Y], drift)
    result = equilibria(proc)
    assert len(result) == 1 and result.equilibria[0].x == pytest.approx([c, c], abs=1e-14)
    assert result.equilibria[0].classification == "unstable"  # eigenvalues mu +- i w
    survey = limit_sets(proc, grid=2, t_max=80.0, found=result)
    assert survey.counts == {"cycle 0": 4}
    (cycle,) = survey.cycles
    assert cycle.amplitude == pytest.approx(math.sqrt(mu), rel=1e-3)
    assert cycle.period == pytest.approx(2 * math.pi / w, rel=1e-4)
    assert cycle.center == pytest.approx([c, c], abs=1e-3)
    radii = np.linalg.norm(cycle.orbit - c, axis=1)
    assert radii == pytest.approx(math.sqrt(mu), rel=1e-3)


def test_hopf_non_hyperbolic_at_mu_zero():
    w, c = 1.0, 0.5
    u, v = X - c, Y - c
    proc = from_drift([X, Y], [-w * v - (u**2 + v**2) * u, w * u - (u**2 + v**2) * v])
    (eq,) = equilibria(proc).equilibria
    assert eq.classification == "non-hyperbolic"  # eigenvalues +- i


def test_non_shape_basis_and_multiple_root():
    # x(x-1) = 0, y(x-y) = 0: (0,0) is a double solution, lex basis not in shape position
    proc = from_drift([X, Y], [X * (X - 1), Y * (X - Y)])
    result = equilibria(proc)
    assert [e.exact for e in result.equilibria] == [(0, 0), (1, 0), (1, 1)]
    by = {e.exact: e for e in result.equilibria}
    assert by[(0, 0)].classification == "non-hyperbolic" and not by[(0, 0)].krawczyk
    assert by[(1, 0)].classification == "unstable"  # J = [[1, 0], [0, 1]]
    assert by[(1, 1)].classification == "saddle"    # J = [[1, 0], [1, -1]]
    check_certified(result, proc)


def test_generic_linear_form():
    # x^2 = 2, y^2 = 2: the lex basis {x^2 - 2, y^2 - 2} is not in shape position
    proc = from_drift([X, Y], [X**2 - 2, Y**2 - 2], bounds=(-2.0, 2.0))
    result = equilibria(proc)
    assert result.shape_variable.startswith("t =")
    r = math.sqrt(2)
    assert result.points == pytest.approx(np.array([[-r, -r], [-r, r], [r, -r], [r, r]]), rel=1e-15)
    assert [e.classification for e in result.equilibria] == ["stable", "saddle", "saddle",
                                                              "unstable"]
    for e in result.equilibria:
        assert all(sp.simplify(c**2 - 2) == 0 for c in e.exact)
    check_certified(result, proc)


def test_rational_drift_golden_ratio_and_pole():
    k = sp.Symbol("k", positive=True)
    proc = PopulationProcess([X], [k])
    proc.add_transition([1], k * (1 - X))
    proc.add_transition([-1], X / (1 + X))
    (eq,) = equilibria(proc, {"k": 1.0}).equilibria  # (1 - x)(1 + x) = x
    assert eq.x[0] == pytest.approx((math.sqrt(5) - 1) / 2, rel=1e-15)
    assert eq.krawczyk and eq.classification == "stable"
    assert sp.simplify(eq.exact[0] - (sp.sqrt(5) - 1) / 2) == 0
    # F_1 = 0 forces y = 1/2, where F_2 has a pole: no equilibrium
    pole = from_drift([X, Y], [(Y - sp.Rational(1, 2)) / (X + 1),
                               (X - sp.Rational(1, 4)) / (Y - sp.Rational(1, 2))])
    result = equilibria(pole)
    assert len(result) == 0 and result.at_poles == 1 and result.real_solutions == 1


def lv_matrix(n):
    rng = np.random.default_rng(7 + n)
    A = np.eye(n) + rng.integers(1, 9, size=(n, n)) / 8 * (1 - np.eye(n))
    return [[sp.Rational(int(round(A[i, j] * 8)), 8) for j in range(n)] for i in range(n)]


@pytest.mark.parametrize("n", [3, 4])
def test_lotka_volterra_support_by_support(n):
    xs = sp.symbols(f"u1:{n + 1}")
    A = lv_matrix(n)
    growth = [1, sp.Rational(5, 4), sp.Rational(3, 4), sp.Rational(9, 8)][:n]
    drift = [xs[i] * (growth[i] - sum(A[i][j] * xs[j] for j in range(n))) for i in range(n)]
    proc = from_drift(xs, drift, bounds=(0.0, 2.0))
    result = equilibria(proc)
    An = np.array(A, dtype=float)
    r = np.array(growth, dtype=float)
    expected = []
    for size in range(n + 1):
        for support in itertools.combinations(range(n), size):
            point = np.zeros(n)
            if support:
                s = list(support)
                point[s] = np.linalg.solve(An[np.ix_(s, s)], r[s])
            if np.all(point >= -1e-12) and np.all(point <= 2 + 1e-12):
                expected.append(point)
    expected.sort(key=tuple)
    assert result.points == pytest.approx(np.array(expected), abs=1e-12)
    for e in result.equilibria:  # exact substitution
        assert all(sp.simplify(f.subs(dict(zip(xs, e.exact)))) == 0 for f in drift)
    check_certified(result, proc)


def test_three_dimensional_irrational_against_scipy_roots():
    drift = [X**2 + Y - sp.Rational(7, 10), Y**2 + Z - sp.Rational(3, 5),
             Z**2 + X - sp.Rational(1, 2)]
    proc = from_drift([X, Y, Z], drift, bounds=(-2.0, 2.0))
    result = equilibria(proc)
    fun = sp.lambdify([(X, Y, Z)], drift)
    jac = sp.lambdify([(X, Y, Z)], sp.Matrix(drift).jacobian([X, Y, Z]))
    rng = np.random.default_rng(3)
    scipy_roots = []
    for x0 in rng.uniform(-2, 2, size=(300, 3)):
        sol = root(lambda v: np.array(fun(v), dtype=float), x0,
                   jac=lambda v: np.array(jac(v), dtype=float))
        if sol.success and np.max(np.abs(fun(sol.x))) < 1e-12 and np.all(np.abs(sol.x) <= 2):
            scipy_roots.append(sol.x)
    assert scipy_roots
    for s in scipy_roots:
        assert np.min(np.linalg.norm(result.points - s, axis=1)) < 1e-9
    for e in result.equilibria:  # every reported one is seen by scipy
        assert min(np.linalg.norm(np.array(scipy_roots) - e.x, axis=1)) < 1e-9
        assert e.krawczyk
    check_certified(result, proc)


def test_sis_fixed_point_matches_population_solver():
    beta, gamma, eps = sp.symbols("beta gamma epsilon", positive=True)
    sis = PopulationProcess([X], [beta, gamma, eps])
    sis.add_transition([1], (eps + beta * X) * (1 - X))
    sis.add_transition([-1], gamma * X)
    params = {"beta": 2.0, "gamma": 1.0, "epsilon": 0.1}
    (eq,) = equilibria(sis, params).equilibria
    # -2x^2 + 0.9x + 0.1 = 0 (epsilon as its binary value: compare to 1e-15)
    assert eq.x[0] == pytest.approx((0.9 + math.sqrt(0.81 + 0.8)) / 4, rel=1e-14)
    assert eq.x[0] == pytest.approx(sis.fixed_point([0.5], params).x[0], abs=1e-12)


def test_non_polynomial_drift_is_refused():
    proc = PopulationProcess([X])
    proc.add_transition([1], sp.exp(X))
    proc.add_transition([-1], 3 * X)
    with pytest.raises(NonPolynomialDrift, match="not a polynomial or rational function.*exp"):
        equilibria(proc)


def test_continuum_is_refused():
    proc = from_drift([X, Y], [X - Y, Y - X])
    with pytest.raises(ContinuumOfEquilibria, match="continuum"):
        equilibria(proc)


def test_no_equilibrium_and_bad_arguments():
    proc = from_drift([X], [X**2 + 1])
    result = equilibria(proc)
    assert len(result) == 0 and result.real_solutions == 0
    with pytest.raises(Exception, match="box"):
        equilibria(proc, box=(1.0, 0.0))
    with pytest.raises(Exception, match="grid"):
        limit_sets(proc, grid=0)
