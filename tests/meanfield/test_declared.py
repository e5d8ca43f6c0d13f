"""The model kind ``population``: population processes declared as text in a claims file.

Independent evidence: closed forms (the SIS fixed points 0 and 1 - gamma/beta with the
eigenvalues beta - gamma and gamma - beta; the supermarket fixed point s_i = lam^(2^i - 1) of
Vvedenskaya, Dobrushin & Karpelevich 1996), the exact stationary law of the finite-N SIS
birth-death chain (the refined values must be O(1/N^2) from it), the built-in ``supermarket``
and ``refined-jsq`` models, and sympy expressions built here from the rates.
"""

from __future__ import annotations

import tomllib

import numpy as np
import pytest
import sympy as sp
from scipy.special import logsumexp

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.parameters import Parameter, PositiveReal
from symq.core.registry import get_model, get_model_kind
from symq.meanfield.declared import EXAMPLE, KEYS, MAX_DIMENSION, declare_population


def positive(*names: str) -> tuple[Parameter, ...]:
    return tuple(Parameter(n, PositiveReal(), typical=1.0) for n in names)


SIS = {"variables": ["i"],
       "transitions": [{"jump": [1], "rate": "beta*i*(1 - i)"}, {"jump": [-1], "rate": "gamma*i"}]}


def sis(**extra):
    return declare_population("sis", {**SIS, **extra}, positive("beta", "gamma"), "models.sis")


def supermarket_table(K: int) -> dict:
    """JSQ(2) truncated at K levels: +e_k at lam (s_{k-1}^2 - s_k^2), -e_k at s_k - s_{k+1}."""
    transitions = []
    for k in range(1, K + 1):
        below = "1" if k == 1 else f"s{k - 1}^2"
        transitions.append({"jump": {f"s{k}": 1}, "rate": f"lam*({below} - s{k}^2)"})
        above = f" - s{k + 1}" if k < K else ""
        transitions.append({"jump": {f"s{k}": -1}, "rate": f"s{k}{above}"})
    total = " + ".join(f"s{k}" for k in range(1, K + 1))
    return {"variables": [f"s{k}" for k in range(1, K + 1)], "transitions": transitions,
            "monotone": True, "outputs": {"EQ": total, "ET": f"({total})/lam"}}


def sis_exact_moments(N: int, beta: float, gamma: float, eps: float) -> tuple[float, float]:
    """E[X], E[X^2] under the stationary law of the SIS chain on {0, ..., N}/N with births
    N (eps + beta x)(1 - x) and deaths N gamma x (detailed balance)."""
    k = np.arange(1, N + 1)
    birth = N * (eps + beta * (k - 1) / N) * (1 - (k - 1) / N)
    death = gamma * k
    log_p = np.concatenate([[0.0], np.cumsum(np.log(birth) - np.log(death))])
    w = np.exp(log_p - logsumexp(log_p))
    x = np.arange(N + 1) / N
    return float(w @ x), float(w @ x**2)


# ---------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("beta,gamma", [(2.0, 1.0), (3.0, 0.5), (1.25, 1.0)])
def test_sis_fixed_point_and_eigenvalue_are_the_closed_forms(beta, gamma):
    r = sis().run({"beta": beta, "gamma": gamma})
    assert r["i"] == pytest.approx(1 - gamma / beta, abs=1e-12)
    assert r["x"] == [r["i"]]
    assert r["residual"] <= 1e-12
    assert r["spectral_abscissa"] == pytest.approx(gamma - beta, abs=1e-10)
    assert r["eigenvalues"] == [pytest.approx(gamma - beta, abs=1e-10)]
    assert r["stable"] is True
    # the disease-free fixed point 0 is found from the corner 0, and reported as unstable
    assert r["n_fixed_points"] == 2
    assert r["fixed_points"][1] == [pytest.approx(0.0, abs=1e-14)]
    assert r["fixed_points_stable"] == [True, False]
    assert "2 distinct fixed points" in r.method and "reached from initial" in r.method


def test_which_fixed_point_is_the_one_from_initial():
    r = sis(initial=[0.0]).run({"beta": 2.0, "gamma": 1.0})
    assert r["i"] == 0.0 and r["stable"] is False
    assert r["spectral_abscissa"] == pytest.approx(2.0 - 1.0)  # beta - gamma at i = 0
    assert r["fixed_points"][0] == [0.0] and r["fixed_points"][1] == [pytest.approx(0.5)]
    assert "V" not in r.values  # no refined term at an unstable point
    with pytest.raises(StabilityError, match=r"initial = \[0.0\] is not exponentially stable"):
        sis(initial=[0.0]).run({"beta": 2.0, "gamma": 1.0, "N": 10})
    # search = []: from initial only
    only = sis(search=[]).run({"beta": 2.0, "gamma": 1.0})
    assert only["n_fixed_points"] == 1 and "one fixed point found from 1" in only.method


def test_refined_values_are_second_order_accurate_against_the_exact_chain():
    spec = declare_population(
        "sis-eps", {"variables": ["i"], "outputs": {"i2": "i^2"}, "transitions": [
            {"jump": [1], "rate": "(eps + beta*i)*(1 - i)"}, {"jump": [-1], "rate": "gamma*i"}]},
        positive("beta", "gamma", "eps"), "models.sis-eps")
    params = {"beta": 2.0, "gamma": 1.0, "eps": 0.1}
    for N in (100, 200):
        r = spec.run({**params, "N": N})
        mean, second = sis_exact_moments(N, **params)
        assert abs(r["i"] - mean) > 0.5 / N               # mean field: O(1/N) off
        assert abs(r["i_N"] - mean) < 3.0 / N**2          # refined: O(1/N^2) (2.3/N^2 measured)
        assert abs(r["i2_N"] - second) < 2.0 / N**2       # needs the (1/2) D2h W term too
        assert r["x_N"] == [r["i_N"]]
        assert r["i_N"] == pytest.approx(r["i"] + r["V"][0] / N, rel=1e-14)


@pytest.mark.parametrize("lam", [0.5, 0.8])
def test_declared_supermarket_is_the_closed_form_and_the_built_in_model(lam):
    K = 8
    spec = declare_population("jsq2", supermarket_table(K), positive("lam"), "models.jsq2")
    r = spec.run({"lam": lam, "N": 100})
    closed = lam ** (2.0 ** np.arange(1, K + 1) - 1)
    np.testing.assert_allclose(r["x"], closed, rtol=0, atol=1e-12)
    assert r["s3"] == pytest.approx(lam**7, abs=1e-12)
    assert r["ET"] == pytest.approx(closed.sum() / lam, rel=1e-10)
    assert r["ET"] == pytest.approx(get_model("supermarket").run({"d": 2, "lam": lam})["ET"],
                                    rel=1e-10)
    refined = get_model("refined-jsq").run({"d": 2, "lam": lam, "N": 100})
    assert r["ET_N"] == pytest.approx(refined["ET_N"], rel=1e-8)
    assert r["EQ_N"] == pytest.approx(refined["EQ_N"], rel=1e-8)
    assert r["stable"] and r["n_fixed_points"] == 1


def test_dimension_names_the_variables_and_sympy_rates_are_accepted():
    lam = sp.Symbol("lam")  # no assumptions: matched by name
    x1, x2 = sp.symbols("x1 x2")
    spec = declare_population("mm1", {
        "dimension": 2, "outputs": {"total": x1 + x2},
        "transitions": [([1, 0], lam * (1 - x1)), ([-1, 0], x1), ({"x2": 1}, "2*lam*(1 - x2)"),
                        ({"x2": -1}, 2 * x2)]}, positive("lam"), "models.mm1")
    r = spec.run({"lam": 0.5})
    assert r["x1"] == pytest.approx(0.5 / 1.5, abs=1e-12)  # lam (1 - x) = x
    assert r["x2"] == pytest.approx(1.0 / 3.0, abs=1e-12)  # 2 lam (1 - x) = 2 x
    assert r["total"] == pytest.approx(2.0 / 3.0, abs=1e-12)
    assert sorted(r["eigenvalues"], key=lambda z: z.real) == [pytest.approx(-3.0),
                                                              pytest.approx(-1.5)]


def test_the_example_of_the_kind_declares_and_solves():
    kind = get_model_kind("population")
    assert kind.declare is declare_population and set(kind.keys) == set(KEYS)
    table = tomllib.loads(kind.example)["models"]["my-sis"]
    assert table.pop("kind") == "population"
    names = tuple(table.pop("parameters"))
    spec = kind.declare("my-sis", table, positive(*names), "models.my-sis")
    r = spec.run({"beta": 4.0, "gamma": 1.0})
    assert r["susceptible"] == pytest.approx(1.0 / 4.0, abs=1e-12)  # 1 - i = gamma/beta
    assert [p.name for p in spec.parameters] == ["beta", "gamma", "N", "order", "t"]
    assert set(r.values) <= set(spec.outputs)
    assert set(spec.run({"beta": 4.0, "gamma": 1.0, "N": 50, "order": 2, "t": 1.0}).values) \
        == set(spec.outputs)
    assert tomllib.loads(EXAMPLE) == tomllib.loads(kind.example)


def test_derivation_shows_the_drift_jacobian_and_symbolic_fixed_points():
    der = sis().derivation()
    beta, gamma, i = sp.Symbol("beta", positive=True), sp.Symbol("gamma", positive=True), \
        sp.Symbol("i", positive=True)
    drift = beta * i * (1 - i) - gamma * i
    assert sp.simplify(der["Drift"].content.rhs[0] - drift) == 0
    assert sp.simplify(der["Jacobian"].content.rhs[0, 0] - sp.diff(drift, i)) == 0
    assert "Mean-field ODE" in [s.title for s in der]
    points = [eq.rhs[0] for eq in der["Fixed points"].content]
    assert len(points) == 2 and 0 in points
    assert any(sp.simplify(p - (1 - gamma / beta)) == 0 for p in points)
    eigs = der["Eigenvalues of the Jacobian at the fixed points"].content
    assert {next(iter(e.rhs)) for e in eigs} == {beta - gamma, gamma - beta}
    markdown = der.to_markdown()
    assert r"\frac{d}{d t}" in markdown and r"\beta i \left(1 - i\right) - \gamma i" in markdown


def test_derivation_in_high_dimension_skips_the_symbolic_solve():
    der = declare_population("jsq2", supermarket_table(4), positive("lam"), "models.j").derivation()
    titles = [s.title for s in der]
    assert "Drift" in titles and "Declared outputs" in titles and "Fixed points" not in titles


# ---------------------------------------------------------------------------- bad input


BAD_TABLES = [
    ({**SIS, "transitions": [*SIS["transitions"], {"jump": [1], "rate": "beta*z"}]},
     r"models\.sis\.transitions\[2\]\.rate='beta\*z' .*unknown name z"),
    ({**SIS, "transitions": [{"jump": [1, 0], "rate": "beta"}]},
     r"models\.sis\.transitions\[0\]\.jump=\[1, 0\] .*2 entries for 1 variables"),
    ({**SIS, "transition": []}, r"models\.sis\.transition=\[\] .*unknown key of a population"),
    ({**SIS, "transitions": [{"jump": [1], "rat": "beta"}]},
     r"models\.sis\.transitions\[0\]\.rat='beta' .*unknown key"),
    ({**SIS, "transitions": [{"jump": [1]}]}, r"models\.sis\.transitions\[0\]\.rate=<missing>"),
    ({"variables": ["i"]}, r"models\.sis\.transitions=<missing>"),
    ({"transitions": SIS["transitions"]}, r"models\.sis\.variables=<missing>"),
    ({**SIS, "dimension": 1}, r"models\.sis\.dimension=1 must be absent when variables"),
    ({**SIS, "variables": ["x"]}, r"variables\[0\]='x' .*x is the fixed-point vector"),
    ({**SIS, "variables": ["i", "i"]}, r"variables\[1\]='i' .*already used as a variable"),
    ({**SIS, "variables": ["beta"]}, r"variables\[0\]='beta' .*already used as a declared"),
    ({**SIS, "variables": ["exp"]}, r"variables\[0\]='exp' .*a function or constant"),
    ({"dimension": MAX_DIMENSION + 1, "transitions": []}, r"models\.sis\.dimension=501"),
    ({**SIS, "outputs": {"i": "i"}}, r"models\.sis\.outputs\.i='i' .*already used"),
    ({**SIS, "outputs": {"EQ_N": "i"}},
     r"models\.sis\.outputs\.EQ_N=.*names ending in _N, _N2 or _t are reserved"),
    ({**SIS, "outputs": {"EQ": "i*w"}}, r"models\.sis\.outputs\.EQ='i\*w' .*unknown name w"),
    ({**SIS, "transitions": [{"jump": [0], "rate": "beta"}]}, r"jump=\[0\] .*changes nothing"),
    ({**SIS, "transitions": [{"jump": [0.5], "rate": "beta"}]},
     r"models\.sis\.transitions\[0\]\.jump\[0\]=0\.5 must be an integer"),
    ({**SIS, "transitions": [{"jump": {"j": 1}, "rate": "beta"}]},
     r"transitions\[0\]\.jump\.j=1 .*j is not a variable"),
    ({**SIS, "transitions": [{"jump": [-1], "rate": "-2"}]}, r"rate='-2' .*negative constant"),
    ({**SIS, "transitions": [{"jump": [1], "rate": ["beta"]}]}, r"give the formula as text"),
    ({**SIS, "initial": [1.5]}, r"models\.sis\.initial=\[1\.5\] .*outside the bounds"),
    ({**SIS, "initial": ["a"]}, r"models\.sis\.initial=\['a'\] must be 1 numbers"),
    ({**SIS, "bounds": [-1, 1]}, r"models\.sis\.bounds=\[-1, 1\] .*read the variables as"),
    ({**SIS, "bounds": [0, float("inf")]}, r"models\.sis\.initial=<missing> .*infinite"),
    ({**SIS, "monotone": ["i", "j"]}, r"models\.sis\.monotone=\['i', 'j'\]"),
    ({**SIS, "search": [[2.0]]}, r"models\.sis\.search\[0\]=\[2\.0\] .*outside the bounds"),
    ({**SIS, "tolerance": 0}, r"models\.sis\.tolerance=0 must be a number in \(0, 1\)"),
]


@pytest.mark.parametrize("table,message", BAD_TABLES)
def test_bad_declaration_is_one_invalid_parameter_naming_the_key(table, message):
    with pytest.raises(InvalidParameter, match=message):
        declare_population("sis", table, positive("beta", "gamma"), "models.sis")


def test_declared_parameter_named_n_is_refused():
    with pytest.raises(InvalidParameter, match=r"models\.sis\.parameters\.N='N' .*own parameter"):
        declare_population("sis", SIS, positive("beta", "N"), "models.sis")


def test_negative_rate_at_the_fixed_point_names_the_transition():
    spec = declare_population("neg", {"variables": ["i"], "transitions": [
        {"jump": [1], "rate": "beta*(1 - i)"}, {"jump": [1], "rate": "-c*i"},
        {"jump": [-1], "rate": "gamma*i"}]}, positive("beta", "c", "gamma"), "models.neg")
    # fixed point i = beta/(beta + c + gamma) = 0.4, where -c*i = -0.2
    with pytest.raises(InvalidParameter, match=r"models\.neg\.transitions\[1\]\.rate='-c\*i' "
                       r"must be a finite rate >= 0 .*-0\.2 at the fixed point i=0\.4"):
        spec.run({"beta": 1.0, "c": 0.5, "gamma": 1.0})


def test_no_fixed_point_is_not_converged_with_its_residual():
    spec = declare_population("grow", {"variables": ["i"], "transitions": [
        {"jump": [1], "rate": "c"}]}, positive("c"), "models.grow")
    with pytest.raises(NotConverged, match=r"residual 2 > tolerance 1e-12.*from initial = "
                       r"\[0\.5\].*models\.grow\.initial") as info:
        spec.run({"c": 2.0})
    assert info.value.residual == pytest.approx(2.0)  # dx/dt = c never vanishes


def test_unknown_parameter_value_at_run_time():
    with pytest.raises(InvalidParameter, match="unknown parameter"):
        sis().run({"beta": 2.0, "gamma": 1.0, "delta": 1.0})
