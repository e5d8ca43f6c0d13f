"""Issue 11 for the mean-field package: no silent truncation, errors that name what the user typed.

Every expected value is computed independently here (closed forms, mpmath at 50 digits,
Pollaczek-Khinchine, numpy), never copied from a solver's output.
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from symq.cli import main
from symq.core.errors import (
    InvalidParameter,
    NumericalFailure,
    ResourceLimit,
    TruncationError,
)
from symq.core.resources import memory_budget
from symq.core.result import check_probability, check_tail
from symq.laws import hyper_erlang, hyperexponential2
from symq.meanfield.attained.cavity import attained_bytes
from symq.meanfield.attained.model import solve_attained_model
from symq.meanfield.jsq_ph import solve_jsq_ph
from symq.meanfield.population import PopulationProcess
from symq.meanfield.refined_ph import refined_jsq_ph
from symq.meanfield.results import check_means, refined_validity
from symq.meanfield.supermarket import MAX_TAIL, refined_jsq, solve_supermarket

GIB = 2 ** 30


@pytest.fixture
def one_gib(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(GIB))
    return GIB


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# ---------------------------------------------------------------- case 1: supermarket closed form

def test_d1_near_one_is_exact_and_tail_cut_is_stated() -> None:
    lam = 0.999999
    r = solve_supermarket(1, lam)
    assert r.ET == pytest.approx(1.0 / (1.0 - lam), rel=1e-13)
    assert r.EQ == pytest.approx(lam / (1.0 - lam), rel=1e-13)
    assert r.truncation_bound == 0.0
    listed = r.tail_levels
    assert listed == len(r.tail) <= MAX_TAIL
    assert r.tail_rest == pytest.approx(lam ** (listed + 1), rel=1e-9)
    assert np.allclose(r.tail[:5], lam ** np.arange(1, 6), rtol=1e-14)
    assert len(json.dumps(r.to_dict())) < 10 ** 6


@pytest.mark.parametrize("d, lam", [(2, 0.9), (2, 1 - 1e-9), (3, 0.999)])
def test_doubly_exponential_sum_against_mpmath(d: int, lam: float) -> None:
    with mpmath.workdps(50):
        lm = mpmath.mpf(lam)
        exact = mpmath.nsum(lambda k: lm ** ((mpmath.mpf(d) ** k - 1) / (d - 1)), [1, mpmath.inf])
    r = solve_supermarket(d, lam)
    assert r.EQ == pytest.approx(float(exact), rel=1e-13)
    assert 0.0 <= r.truncation_bound <= 1e-12 * r.EQ
    assert len(r.tail) < 100
    assert all(a >= b for a, b in zip(r.tail, r.tail[1:]))


def test_fixed_point_method_refuses_levels_beyond_its_cap() -> None:
    with pytest.raises(TruncationError, match="lam=0.9999 needs .* levels; lower lam"):
        solve_supermarket(1, 0.9999, method="fixed point")
    r = solve_supermarket(1, 0.9, method="fixed point")
    assert r.EQ == pytest.approx(0.9 / 0.1, rel=1e-10)


# ---------------------------------------------------------------- case 2: refined truncation

def test_refined_d1_is_mm1() -> None:
    lam = 0.99
    r = refined_jsq(1, lam, 100)
    assert r.EQ_N == pytest.approx(lam / (1 - lam), rel=1e-12)
    assert r.EQ == pytest.approx(lam / (1 - lam), rel=1e-12)
    assert r.truncation_bound == 0.0 and r.refined_valid


def test_refined_d2_truncation_bound_and_mean_field_part() -> None:
    lam = 0.95
    r = refined_jsq(2, lam, 100)
    closed = sum(lam ** (2 ** k - 1) for k in range(1, 60))
    assert r.EQ == pytest.approx(closed, rel=1e-10)
    assert r.truncation_bound <= 1e-9 * r.EQ_N
    # a fixed K that leaves out mass is refused
    with pytest.raises(TruncationError, match="K=3 leaves out"):
        refined_jsq(2, lam, 100, K=3)


def test_refined_ph_d1_is_pollaczek_khinchine() -> None:
    lam, scv = 0.3, 2.0
    alpha, A = hyperexponential2(1.0, scv)
    r = refined_jsq_ph(1, lam, (alpha, A), N=50)
    ex2 = 1.0 + scv  # E[X^2] with E[X] = 1
    pk = lam + lam ** 2 * ex2 / (2 * (1 - lam))
    assert r.EQ == pytest.approx(pk, rel=1e-9)
    assert r.EQ_N == pytest.approx(pk, rel=1e-8)  # independent queues: V = 0
    assert r.truncation_bound <= 1e-9 * r.EQ


def test_refined_ph_heavy_tail_raises_truncation_error() -> None:
    alpha, A = hyperexponential2(1.0, 10.0)
    with pytest.raises(TruncationError, match="lower lam or scv"):
        refined_jsq_ph(1, 0.7, (alpha, A), N=10)


# ---------------------------------------------------------------- case 3: domain of validity

def test_refined_estimate_outside_its_domain_is_flagged() -> None:
    r = refined_jsq(2, 0.99, 2)
    est = np.asarray(r.pi) + np.asarray(r.V) / 2
    assert est.max() > 1  # computed here: not a probability vector
    assert r.refined_valid is False
    assert "N = 2" in r.refined_invalid and "INVALID" in r.method
    ok = refined_jsq(2, 0.9, 100)
    est = np.asarray(ok.pi) + np.asarray(ok.V) / 100
    assert ok.refined_valid and est.max() <= 1 and np.all(np.diff(est) <= 1e-12)


def test_refined_ph_estimate_flag() -> None:
    alpha, A = hyperexponential2(1.0, 4.0)
    r = refined_jsq_ph(2, 0.95, (alpha, A), N=2)
    est = np.asarray(r.pi) + np.asarray(r.V) / 2
    bad = est.max() > 1 or est.min() < 0 or np.any(np.diff(est, axis=0) > 1e-9) \
        or est.sum(axis=1).max() > 1
    assert r.refined_valid is (not bad)
    assert r.refined_valid is False


def test_refined_validity_helper() -> None:
    assert refined_validity([0.5, 0.25], [0.0, 0.0], 10) == (True, "")
    ok, why = refined_validity([0.5, 0.25], [0.0, 0.6], 2)
    assert not ok and "not monotone" in why
    ok, why = refined_validity([0.5, 0.25], [0.0, -5.0], 2)
    assert not ok and "< 0" in why


# ---------------------------------------------------------------- case 4: resource guards

@pytest.mark.parametrize("key, value, pattern", [
    ("B", 10 ** 8, r"parameter B=100000000 must be at most \d+"),
    ("k", 10 ** 6, r"parameter k=1000000 must be at most \d+"),
    ("delta", 1e-300, r"parameter delta=1e-300 must be at least"),
    ("rep_max", 1e300, r"parameter rep_max=1e\+300 must be at most"),
])
def test_attained_resource_limits(one_gib: int, key: str, value: float, pattern: str) -> None:
    kw = {"policy": "LEW", "d": 2, "lam": 0.7, "scv": 10.0, key: value}
    with pytest.raises(ResourceLimit, match=pattern):
        solve_attained_model(**kw)


def test_attained_limit_is_the_largest_that_fits(one_gib: int) -> None:
    with pytest.raises(ResourceLimit) as info:
        solve_attained_model("LEW", 2, 0.7, 10.0, B=10 ** 8)
    best = int(str(info.value).split("at most ")[1].split()[0])
    assert attained_bytes(401, best, 2) <= memory_budget() < attained_bytes(401, best + 1, 2)


def test_cli_resource_limit_exit_2(capsys: pytest.CaptureFixture[str], one_gib: int) -> None:
    status, _, err = _cli(capsys, "solve", "attained", "policy=LEW", "d=2", "lam=0.7", "scv=10",
                          "delta=1e-300")
    assert status == 2 and err.count("\n") == 1 and "delta=1e-300" in err


# ---------------------------------------------------------------- case 5: H2 parameter messages

@pytest.mark.parametrize("scv, f, name", [
    (10.0, 1e-300, "f"), (10.0, 1 - 1e-16, "f"), (1e300, 0.5, "scv"), (1 - 1e-16, 0.5, "scv"),
])
def test_h2_errors_name_the_parameter(scv: float, f: float, name: str) -> None:
    with pytest.raises(InvalidParameter, match=rf"^parameter {name}=") as info:
        hyperexponential2(1.0, scv, f)
    assert "A=" not in str(info.value)


def test_hyper_erlang_reports_the_users_scv() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter scv=1e\+300 .*for k=2"):
        hyper_erlang(2, 1.0, 1e300)


@pytest.mark.parametrize("scv", [1e7, 1.0 + 1e-12])
def test_h2_moments_at_the_edges(scv: float) -> None:
    alpha, A = hyperexponential2(1.0, scv, 0.5)
    inv = np.linalg.inv(-A)
    m1 = alpha @ inv @ np.ones(2)
    m2 = 2 * alpha @ inv @ inv @ np.ones(2)
    assert m1 == pytest.approx(1.0, rel=1e-12)
    assert m2 - 1 == pytest.approx(scv, rel=1e-8)


@pytest.mark.parametrize("model, extra", [
    ("jsq-ph", []), ("refined-jsq-ph", ["N=100"]), ("attained", ["policy=LEW"]),
])
@pytest.mark.parametrize("setting, name", [
    ("f=1e-300", "f"), ("f=0.9999999999999999", "f"), ("scv=1e300", "scv"),
    ("scv=0.9999999999999999", "scv"),
])
def test_cli_h2_messages(capsys: pytest.CaptureFixture[str], model: str, extra: list[str],
                         setting: str, name: str) -> None:
    base = {"scv": "scv=10", "f": "f=0.5"}
    base[name] = setting
    status, _, err = _cli(capsys, "solve", model, "d=2", "lam=0.7", *base.values(), *extra)
    assert status == 2, err
    assert err.count("\n") == 1 and f"parameter {name}=" in err and "A=" not in err


def test_jsq_ph_at_the_edge_of_the_f_domain() -> None:
    alpha, A = hyperexponential2(1.0, 10.0, 1e-7)
    fp = solve_jsq_ph(2, 0.9, (alpha, A))
    assert np.all((fp.u >= 0) & (fp.u <= 1)) and np.all(np.diff(fp.u) <= 0)
    assert fp.u[0] == pytest.approx(0.9, abs=1e-9)  # u_1 = lam E[X] (Little at the server)
    assert math.isfinite(fp.ET)


# ---------------------------------------------------------------- case 6: no sympify of text

def test_rates_refuse_text() -> None:
    x = sp.Symbol("x")
    proc = PopulationProcess([x])
    with pytest.raises(InvalidParameter, match="parameter rate="):
        proc.add_transition([1], "__import__('os').getcwd()")
    with pytest.raises(InvalidParameter, match="parameter rate="):
        proc.add_transition([1], "1 - x")
    proc.add_transition([1], 1 - x)
    proc.add_transition([-1], 2 * x)
    proc.add_transition([1], 0)  # a number is accepted
    assert proc.fixed_point([0.1]).x[0] == pytest.approx(1 / 3)  # 1 - x = 2x


# ---------------------------------------------------------------- case 7: output checks + CLI

def test_output_checks() -> None:
    check_tail("t", "tail", [1.0, 0.5, 0.5])
    with pytest.raises(NumericalFailure, match="increases from 0.5 to 0.6"):
        check_tail("t", "tail", [0.5, 0.6])
    with pytest.raises(NumericalFailure, match=r"p\[0\] = 1.5, outside \[0, 1\]"):
        check_probability("t", "p", [1.5])
    with pytest.raises(NumericalFailure, match="not a finite number"):
        check_probability("t", "p", [float("nan")])
    with pytest.raises(NumericalFailure, match="mean EQ = inf"):
        check_means("t", EQ=float("inf"))


def test_cli_truncation_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _cli(capsys, "solve", "attained", "policy=LEW", "d=2", "lam=0.7", "scv=10",
                          "B=5")
    assert status == 3 and err.count("\n") == 1 and "raise B" in err


def test_cli_supermarket_json_is_small(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _cli(capsys, "solve", "supermarket", "d=1", "lam=0.999999", "--json")
    assert status == 0 and len(out) < 10 ** 6
    data = json.loads(out)
    assert data["results"]["ET"] == pytest.approx(1 / (1 - 0.999999), rel=1e-13)


def test_cli_refined_d1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _cli(capsys, "solve", "refined-jsq", "d=1", "lam=0.99", "N=100", "--json")
    assert status == 0
    assert json.loads(out)["results"]["EQ_N"] == pytest.approx(99.0, rel=1e-12)


def test_refined_ph_d1_shortcut_agrees_with_the_population_process() -> None:
    """The d = 1 shortcut (V = 0) against the refined terms of the built population process."""
    import numpy as np

    from symq.meanfield.jsq_ph import solve_jsq_ph
    from symq.meanfield.refined_ph import LAM, jsq_ph_process

    lam = 0.3
    alpha, A = hyperexponential2(1.0, 2.0)
    r = refined_jsq_ph(1, lam, (alpha, A), N=10)
    fp = solve_jsq_ph(1, lam, (np.asarray(alpha), np.asarray(A)), K=r.K)
    process = jsq_ph_process(1, r.K, (alpha, A))
    terms = process.refined_terms(fp.x.ravel(), {LAM: lam})
    assert np.max(np.abs(terms.V)) < 1e-9
    assert np.max(np.abs(np.asarray(r.V))) == 0.0
