"""JSQ(d) supermarket model: fixed point, symbolic proof, stability, refined term, errors.

The closed form u_k = lam^((d^k - 1)/(d - 1)) (Vvedenskaya-Dobrushin-Karpelevich 1996;
Mitzenmacher 2001) is recomputed here in mpmath, independently of the package, and compared
with the numeric fixed point (ODE + Newton) of the symbolically declared population process.
"""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.cli import main
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.registry import get_model
from symq.meanfield import (
    closed_form_symbolic,
    derivation,
    heavy_traffic_ET,
    jsq_process,
    refined_jsq,
    solve_supermarket,
    truncation_level,
    verify_closed_form,
)
from symq.meanfield.supermarket import LAM, closed_form_values

#: d = 1 at lam = 0.99 needs ~3700 levels (u_K = 0.99^K < 1e-16): ~10 s of symbolic set-up.
# d = 1 is M/M/1 with a geometric tail: at lam = 0.99 the truncation needs ~3000 levels and the
# generic Newton solve takes 20 s; lam = 0.95 (~600 levels) tests the same route in under a second
# (the M/M/1 values at lam = 0.99 are checked by test_d1_is_mm1)
CASES = [(d, lam) for d in (1, 2, 3) for lam in (0.5, 0.9, 0.95 if d == 1 else 0.99)]


def closed_form_mp(d: int, lam: float, K: int) -> list[float]:
    """u_1..u_K at 40 digits, straight from the formula."""
    with mpmath.workdps(40):
        lam_mp = mpmath.mpf(lam)
        if d == 1:
            return [float(lam_mp ** k) for k in range(1, K + 1)]
        return [float(lam_mp ** ((mpmath.mpf(d) ** k - 1) / (d - 1))) for k in range(1, K + 1)]


@pytest.mark.parametrize(("d", "lam"), CASES)
def test_numeric_fixed_point_equals_closed_form(d, lam):
    K = truncation_level(d, lam)
    fp = jsq_process(d, K).fixed_point(np.zeros(K), {LAM: lam}, tol=1e-12)
    assert fp.residual <= 1e-12
    np.testing.assert_allclose(fp.x, closed_form_mp(d, lam, K), rtol=0, atol=1e-12)
    assert np.all(np.diff(fp.x) <= 0) and np.all(fp.x >= 0)


@pytest.mark.parametrize(("d", "lam"), [(2, 0.9), (3, 0.99), (1, 0.9)])
def test_both_solver_routes_agree(d, lam):
    exact = solve_supermarket(d, lam)
    numeric = solve_supermarket(d, lam, method="fixed point")
    for key in ("EQ", "ET", "EW"):
        a, b = getattr(exact, key), getattr(numeric, key)
        assert abs(a - b) < 1e-11 * max(1.0, a)
    assert numeric.tail == pytest.approx(exact.tail[:len(numeric.tail)],
                                                   abs=1e-12)


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.9, 0.99])
def test_d1_is_mm1(lam):
    result = solve_supermarket(1, lam)
    assert abs(result.EQ - lam / (1 - lam)) < 1e-12 * (1 + lam / (1 - lam))
    assert abs(result.ET - 1 / (1 - lam)) < 1e-12 / (1 - lam)
    assert abs(result.EW - lam / (1 - lam)) < 1e-12 / (1 - lam)


def test_metrics_and_tail():
    result = solve_supermarket(2, 0.9)
    tail = result.tail
    assert tail[0] == pytest.approx(0.9) and tail[1] == pytest.approx(0.9 ** 3)
    assert min(tail) >= 1e-16 and all(a > b for a, b in zip(tail, tail[1:]))
    assert result.ET == pytest.approx(result.EQ / 0.9, rel=1e-15)  # Little's law
    assert result.EW == pytest.approx(result.ET - 1, rel=1e-15)
    assert result.P_wait == pytest.approx(0.81)


@pytest.mark.parametrize("d", [2, 3])
def test_heavy_traffic(d):
    gaps = [1e-3, 1e-6, 1e-9, 1e-12]
    ratios, offsets = [], []
    for gap in gaps:
        et, asymptote = solve_supermarket(d, 1 - gap).ET, heavy_traffic_ET(d, 1 - gap)
        ratios.append(et / asymptote)
        offsets.append(et - asymptote)
    assert all(a < b for a, b in zip(ratios, ratios[1:])) and ratios[-1] > 0.96
    assert max(abs(o) for o in offsets) < 2.0  # E[T] = log(1/(1-lam))/log d + O(1)


def test_symbolic_proof_of_closed_form():
    residuals = verify_closed_form()
    assert set(residuals) == {"drift d>1", "u_0", "drift d=1"}
    assert all(r == 0 for r in residuals.values())
    der = derivation()
    assert der["Drift at the closed form"].formulas()[0].rhs == 0
    assert "lam" in der.to_markdown() or "\\lambda" in der.to_markdown()


@pytest.mark.parametrize(("d", "lam"), [(2, 0.5), (2, 0.9), (2, 0.99), (3, 0.9), (3, 0.99)])
def test_fixed_point_is_locally_stable(d, lam):
    K = truncation_level(d, lam)
    process = jsq_process(d, K)
    fp = process.fixed_point(np.zeros(K), {LAM: lam})
    stability = process.stability(fp.x, {LAM: lam})
    assert stability.stable and stability.max_real < 0


def test_refined_jsq():
    result = refined_jsq(2, 0.9, 100)
    pi, V = np.array(result.pi), np.array(result.V)
    np.testing.assert_allclose(pi, closed_form_mp(2, 0.9, len(pi)), atol=1e-12)
    # u_1 = busy fraction = lam exactly at every N (work conservation): no 1/N term
    assert abs(V[0]) < 1e-12
    # the finite-N queue is longer than the mean field (Gast & Van Houdt 2018, Section 6)
    assert np.sum(V) > 0 and result.EQ_N > result.EQ
    assert result.EQ_N == pytest.approx(np.sum(pi + V / 100), rel=1e-14)
    assert result.max_real_eigenvalue < 0
    # V does not depend on N
    assert refined_jsq(2, 0.9, 10).V == pytest.approx(result.V, rel=1e-12, abs=1e-15)


def test_lyapunov_residual_jsq():
    K = truncation_level(2, 0.9)
    process = jsq_process(2, K)
    fp = process.fixed_point(np.zeros(K), {LAM: 0.9})
    terms = process.refined_terms(fp.x, {LAM: 0.9})
    assert terms.lyapunov_residual < 1e-12
    # d = 1: a linear drift, so no refined term
    K1 = truncation_level(1, 0.5)
    process1 = jsq_process(1, K1)
    fp1 = process1.fixed_point(np.zeros(K1), {LAM: 0.5})
    assert np.max(np.abs(process1.refined(fp1.x, {LAM: 0.5}, order=2).V2)) == 0.0
    assert np.max(np.abs(process1.refined(fp1.x, {LAM: 0.5}).V)) == 0.0


def test_errors():
    with pytest.raises(StabilityError, match=r"lam=1\.2 must be < 1 for d=2"):
        solve_supermarket(2, 1.2)
    with pytest.raises(StabilityError, match=r"lam=1 must be < 1 for d=3"):
        refined_jsq(3, 1.0, 100)
    for bad_d in (0, -1, 2.5, "two"):
        with pytest.raises(InvalidParameter, match="parameter d="):
            solve_supermarket(bad_d, 0.5)
    for bad_lam in (0.0, -0.3, float("nan")):
        with pytest.raises(InvalidParameter, match="parameter lam="):
            solve_supermarket(2, bad_lam)
    for bad_n in (0, -5, 1.5):
        with pytest.raises(InvalidParameter, match="parameter N="):
            refined_jsq(2, 0.9, bad_n)
    with pytest.raises(InvalidParameter, match="method"):
        solve_supermarket(2, 0.5, method="magic")


def test_registered_models_and_cli(capsys):
    assert get_model("supermarket").parameter("lam")
    with pytest.raises(StabilityError):
        get_model("supermarket").run({"d": 2, "lam": 1.5})
    assert main(["solve", "supermarket", "d=2", "lam=0.9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"ET", "EQ", "EW", "tail"} <= set(out["results"])
    assert main(["solve", "refined-jsq", "d=2", "lam=0.9", "N=100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"pi", "V", "EQ_N"} <= set(out["results"])
    assert main(["solve", "supermarket", "d=2", "lam=1.2"]) != 0
    assert "lam=1.2" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(d=st.integers(1, 6), lam=st.floats(0.01, 0.999), k=st.integers(0, 40))
def test_numeric_closed_form_is_the_compiled_symbolic_one(d, lam, k):
    # the numeric tail (closed_form_values, used by every solver) is the compiled form of
    # closed_form_symbolic, the expression verify_closed_form proves; here against 40 digits
    with mpmath.workdps(40):
        exponent = mpmath.mpf(k) if d == 1 else (mpmath.mpf(d) ** k - 1) / (d - 1)
        exact = float(mpmath.mpf(lam) ** exponent)
    value = float(closed_form_values(d, lam, k))
    assert value == pytest.approx(exact, rel=1e-13, abs=1e-300)
    symbolic = closed_form_symbolic(sp.Integer(k), sp.Integer(d), sp.Float(lam, 30))
    assert value == pytest.approx(float(symbolic), rel=1e-13, abs=1e-300)
