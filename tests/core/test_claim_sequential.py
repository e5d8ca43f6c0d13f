"""Sequential references in claims (issue 30, item 1): ``half_width = r`` in a reference's
table runs Stein's two-stage procedure, a pilot then an independent run sized for ``r``.

Truth: for exponential sizes of mean 1, mg1-sim is the M/M/1 queue, E[W] = lam/(1 - lam)
exactly (Pollaczek-Khinchine), 9 at lam = 0.9.
"""

from __future__ import annotations

import pytest

from symq.core.claims import Status
from symq.core.claimsfile.claim import build_claim
from symq.core.claimsfile.quantities import FileContext
from symq.core.errors import InvalidParameter


def check(let: dict, statement: str, tolerance: float, lam: object = 0.9):
    table = {"name": "c", "statement": statement, "let": {"EW": let},
             "tolerance": {"relative": tolerance}, "region": {"lam": lam}}
    return build_claim("claims[0]", table, FileContext()).check()


def test_a_short_run_cannot_decide_a_5_percent_misprint_and_the_sequential_run_refutes_it():
    short = check({"ref": "mg1-sim:EW", "n_jobs": 600_000}, "EW == 1.05*lam/(1 - lam)", 0.02)
    assert short.status is Status.INCONCLUSIVE, short.detail
    assert "would decide" in short.detail
    sequential = check({"ref": "mg1-sim:EW", "half_width": 0.01}, "EW == 1.05*lam/(1 - lam)",
                       0.02)
    assert sequential.status is Status.FAILS, sequential.detail
    assert "sequential to a relative half-width 0.01" in sequential.compared


def test_the_true_formula_holds_with_the_interval_sized_for_its_tolerance():
    verdict = check({"ref": "mg1-sim:EW", "half_width": 0.01}, "EW == lam/(1 - lam)", 0.03,
                    lam=[0.5, 0.9])
    assert verdict.status is Status.HOLDS, verdict.detail
    (ci,) = [o.claimed for o in verdict.points if o.point["lam"] == 0.9]
    # the final run was sized from a pilot of the model's default length (1e6 jobs): longer
    assert ci.run_length > 10**6 and ci.relative_half_width < 0.015


@pytest.mark.parametrize("let, match", [
    ({"ref": "mg1-sim:EW", "half_width": 2}, r"claims\[0\]\.let\.EW\.half_width=2 must be a "
                                            r"relative half-width in \(0, 1\)"),
    ({"ref": "mg1-sim:EW", "max_jobs": 1e8}, r"claims\[0\]\.let\.EW\.max_jobs=.* given only "
                                             r"with half_width"),
    ({"ref": "mg1-sim:EW", "half_width": 0.01, "max_jobs": 10}, r"max_jobs=10 must be an "
                                                                r"integer >= 1000"),
    ({"ref": "supermarket:ET", "half_width": 0.01}, r"half_width=0\.01 must be given only for a "
                                                    r"simulation model"),
])
def test_bad_sequential_keys_are_input_errors_naming_the_key(let, match):
    table = {"name": "c", "statement": "EW == 1", "let": {"EW": let},
             "tolerance": {"relative": 0.02}, "region": {"lam": 0.5, "d": 2}}
    with pytest.raises(InvalidParameter, match=match):
        build_claim("claims[0]", table, FileContext())
