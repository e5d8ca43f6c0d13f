"""Claims: verdicts hold, fail with the worst point, or are inconclusive with a reason."""

import json
import math

import numpy as np
import pytest
import sympy as sp

from symq.core.claims import (
    Claim,
    Evidence,
    Inconclusive,
    Status,
    absolute_error,
    ci_error,
    mixed_error,
    relative_error,
    symbolic_error,
)
from symq.core.errors import StabilityError
from symq.core.simstats import ConfidenceInterval


def _geometric_sum_claim(tolerance, claimed_bias=0.0):
    # claimed: closed form of sum_{k>=0} r^k; reference: the partial sum to 2000 terms
    return Claim(
        name="geometric series", source="textbook", statement="sum r^k = 1/(1-r)",
        claimed=lambda p: 1 / (1 - p["r"]) + claimed_bias,
        reference=lambda p: float(np.sum(p["r"] ** np.arange(2000))),
        sample=lambda rng: [{"r": r} for r in rng.uniform(0, 0.9, size=20)],
        tolerance=tolerance, evidence=Evidence.NUMERIC, paper="toy",
    )


def test_holds_when_within_tolerance():
    verdict = _geometric_sum_claim(1e-12).check()
    assert verdict.status is Status.HOLDS and verdict.holds
    assert verdict.max_error < 1e-12 and verdict.n_points == 20
    assert verdict.paper == "toy" and verdict.seconds >= 0


def test_fails_with_the_worst_point():
    verdict = _geometric_sum_claim(1e-6, claimed_bias=1e-3).check()
    assert verdict.status is Status.FAILS
    # the relative error 1e-3/(1/(1-r)) = 1e-3 (1-r) is largest at the smallest r
    rng = np.random.default_rng(0)
    smallest = min(rng.uniform(0, 0.9, size=20))
    assert verdict.worst_point["r"] == pytest.approx(smallest)
    assert verdict.max_error == pytest.approx(1e-3 * (1 - smallest), rel=1e-6)
    assert "r=" in verdict.detail and "claimed" in verdict.detail


def test_inconclusive_when_a_side_cannot_decide():
    def reference(p):
        raise Inconclusive("simulation too short")

    claim = Claim("c", "s", "x", lambda p: 1.0, reference, [{"a": 1}])
    verdict = claim.check()
    assert verdict.status is Status.INCONCLUSIVE and "simulation too short" in verdict.detail

    claim = Claim("c", "s", "x", lambda p: math.nan, lambda p: 1.0, [{"a": 1}])
    assert claim.check().status is Status.INCONCLUSIVE

    def unstable(p):
        raise StabilityError("rho=2 >= 1")

    assert Claim("c", "s", "x", unstable, None, [{}]).check().status is Status.INCONCLUSIVE
    assert Claim("c", "s", "x", lambda p: 1, lambda p: 1, []).check().status is Status.INCONCLUSIVE


def test_a_bug_in_a_claim_propagates():
    claim = Claim("c", "s", "x", lambda p: 1 / 0, lambda p: 1.0, [{}])
    with pytest.raises(ZeroDivisionError):
        claim.check()


def test_predicate_claims():
    primes = Claim.predicate("primes are odd", "folklore", "p odd",
                             lambda p: p["n"] % 2 == 1, [{"n": n} for n in (3, 5, 7, 2)])
    verdict = primes.check()
    assert verdict.status is Status.FAILS and verdict.worst_point == {"n": 2}
    ok = Claim.predicate("odd", "f", "p odd", lambda p: p["n"] % 2 == 1, [{"n": 3}, {"n": 5}])
    assert ok.check().status is Status.HOLDS


def test_error_measures():
    assert relative_error([1.0, 2.2], [1.0, 2.0]) == pytest.approx(0.1)
    assert relative_error(0.5, 0.0) == 0.5
    assert absolute_error([1.0, 3.0], [1.5, 3.0]) == 0.5
    assert mixed_error(1.0)(1e-9, 0.0) == pytest.approx(1e-9)
    assert mixed_error(1.0)(110.0, 100.0) == pytest.approx(0.1)
    x = sp.Symbol("x")
    assert symbolic_error(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1) == 0.0
    assert symbolic_error(sp.Rational(1, 3), sp.Rational(1, 4)) == pytest.approx(1 / 12)
    with pytest.raises(Inconclusive, match="shape"):
        relative_error([1, 2], [1, 2, 3])
    ci = ConfidenceInterval(mean=1.0, half_width=0.1, level=0.95, n=30, method="batch means")
    assert ci_error(ci, 1.05) == pytest.approx(0.5)
    assert ci_error(ci, 1.3) == pytest.approx(3.0)


def test_verdict_json_has_the_cli_keys():
    verdict = _geometric_sum_claim(1e-12).check()
    data = json.loads(json.dumps(verdict.to_dict()))
    for key in ("paper", "claim", "status", "max_error", "evidence", "detail", "seconds"):
        assert key in data
    assert data["status"] == "holds" and data["evidence"] == "numeric"


def test_expected_verdict_is_carried_to_the_json():
    refuted = Claim("refuted", "paper", "1 = 2", lambda p: 1.0, lambda p: 2.0, [{}],
                    expected=Status.FAILS)
    verdict = refuted.check()
    assert verdict.status is Status.FAILS and verdict.expected is Status.FAILS
    assert verdict.to_dict()["expected"] == "fails"
    assert _geometric_sum_claim(1e-12).check().to_dict()["expected"] == "holds"
