"""The registered simulation model ``jsq-sim`` and the ``outputs`` of the mean-field models.

Evidence: the refined mean field of Gast & Van Houdt (2018) at N = 100 (``refined-jsq``,
``refined-jsq-ph``), whose error is O(1/N^2): in runs of 10^7 jobs (seeds 1, 2; lam = 0.5,
0.7, 0.9) the simulated E[T] lay within 0.75 half-widths of it.  The tests allow 3 half-widths
of a 95% batch-means interval (about 6 standard errors) from a 10^6-job run, a tolerance the
O(1/N^2) bias (below 0.005 at lam = 0.9) does not eat into.
"""

from __future__ import annotations

import math

import pytest

from symq.core.errors import InvalidParameter, ResourceLimit, StabilityError
from symq.core.registry import get_model
from symq.core.renamed import RenamedKeywordWarning
from symq.core.simstats import ConfidenceInterval


def test_jsq_sim_exponential_lies_within_the_ci_of_the_refined_mean_field():
    spec = get_model("jsq-sim")
    r = spec.run({"N": 100, "d": 2, "lam": 0.9}, rng=1)  # defaults: 10^6 jobs, 30 batches
    assert r.params["n_jobs"] == 10**6 and r.params["n_batches"] == 30
    assert r.seconds < 5.0
    ref = get_model("refined-jsq").run({"d": 2, "lam": 0.9, "N": 100})
    et = r["ET"]
    assert isinstance(et, ConfidenceInterval) and et.level == 0.95 and et.n == 30
    assert abs(et.mean - ref["ET_N"]) <= 3 * et.half_width
    assert abs(r["EQ"].mean - ref["EQ_N"]) <= 3 * r["EQ"].half_width
    # EW is measured job by job (arrival to service start): within its CI of ET_N - 1
    assert abs(r["EW"].mean - (ref["ET_N"] - 1.0)) <= 3 * r["EW"].half_width + 3 * et.half_width
    assert abs(r["utilisation"].mean - 0.9) <= 3 * r["utilisation"].half_width
    # u_1 = busy fraction (the tail after the fixed warm-up, the interval after the MSER one)
    assert abs(r["tail"][0] - r["utilisation"].mean) <= r["utilisation"].half_width
    assert abs(r["EQ"].mean - 0.9 * et.mean) < 3 * (r["EQ"].half_width + 0.9 * et.half_width)


def test_jsq_sim_h2_lies_within_the_ci_of_refined_jsq_ph():
    params = {"d": 2, "lam": 0.7, "scv": 4.0, "f": 0.5}
    r = get_model("jsq-sim").run({"N": 100, **params, "sizes": "h2"}, rng=2)
    ref = get_model("refined-jsq-ph").run({**params, "N": 100})
    assert abs(r["ET"].mean - ref["ET_N"]) <= 3 * r["ET"].half_width
    # and far from the exponential-service value: the job-size law reaches the kernel
    exp_value = get_model("refined-jsq").run({"d": 2, "lam": 0.7, "N": 100})["ET_N"]
    assert abs(r["ET"].mean - exp_value) > 10 * r["ET"].half_width
    assert "H2(1, scv=4, f=0.5)" in r.method


def test_jsq_sim_same_seed_same_result_and_its_options():
    spec = get_model("jsq-sim")
    args = {"N": 20, "d": 2, "lam": 0.5, "n_jobs": 20_000, "n_batches": 10, "level": 0.9}
    a, b = spec.run(args, rng=7), spec.run(args, rng=7)
    assert a["ET"] == b["ET"] and a["ET"].n == 10 and a["ET"].level == 0.9
    assert spec.run(args, rng=8)["ET"] != a["ET"]
    assert spec.parse({"N": "20", "d": "2", "lam": "0.5", "sizes": "H2", "scv": "4"}
                      )["sizes"] == "h2"


@pytest.mark.parametrize("args,error,message", [
    ({"sizes": "exp", "scv": 4.0}, InvalidParameter, r"scv=4\.0 must be absent with sizes=exp"),
    ({"sizes": "exp", "f": 0.3}, InvalidParameter, r"f=0\.3 must be absent with sizes=exp"),
    ({"sizes": "h2"}, InvalidParameter, r"scv=<missing> must be given"),
    ({"sizes": "h2", "scv": 0.5}, InvalidParameter, r"scv"),
    ({"sizes": "erlang"}, InvalidParameter, r"scv=<missing> must be given"),
    ({"sizes": "erlang", "scv": 0.3}, InvalidParameter, r"scv=0\.3"),
    ({"sizes": "erlang", "scv": 0.5, "f": 0.3}, InvalidParameter,
     r"f=0\.3 must be absent with sizes=erlang"),
    ({"sizes": "lognormal"}, InvalidParameter,
     r"sizes='lognormal' must be one of exp, h2, erlang"),
    ({"lam": 1.0}, StabilityError, r"must be < 1"),
    ({"n_jobs": 10}, InvalidParameter, r"n_jobs=10"),
    ({"N": 10**9}, ResourceLimit, r"N=1000000000 must be at most \d+ \(it needs 1000000000 "
     r"servers"),
])
def test_jsq_sim_bad_input(args, error, message):
    with pytest.raises(error, match=message):
        get_model("jsq-sim").run({"N": 10, "d": 2, "lam": 0.5, "n_jobs": 10_000, **args}, rng=1)


@pytest.mark.parametrize("name,params", [
    ("supermarket", {"d": 2, "lam": 0.9}),
    ("refined-jsq", {"d": 2, "lam": 0.9, "N": 100}),
    ("jsq-ph", {"d": 2, "lam": 0.7, "scv": 4.0, "f": 0.5}),
    ("jsq-sim", {"N": 10, "d": 2, "lam": 0.5, "n_jobs": 20_000}),
    ("attained", {"policy": "SQ", "d": 2, "lam": 0.7, "scv": 4.0, "delta": 1.0, "rep_max": 10.0}),
])
def test_outputs_list_every_result_key(name, params):
    spec = get_model(name)
    r = spec.run(params, rng=1)
    assert spec.outputs and set(r.values) <= set(spec.outputs)


def test_supermarket_outputs_answer_a_claim_on_et_eq_and_the_tail():
    spec = get_model("supermarket")
    assert {"ET", "EQ", "tail"} <= set(spec.outputs)
    r = spec.run({"d": 2, "lam": 0.5})
    closed = [0.5 ** (2**k - 1) for k in range(1, 12)]  # u_k = lam^(2^k - 1), k = 1, 2, ...
    assert len(r["tail"]) >= 4 and r["tail"] == pytest.approx(closed[:len(r["tail"])], rel=1e-12)
    assert r["EQ"] == pytest.approx(math.fsum(closed), rel=1e-12)
    assert r["ET"] == pytest.approx(r["EQ"] / 0.5, rel=1e-12)


def test_attained_gives_et_and_reads_the_former_er_with_a_warning():
    r = get_model("attained").run({"policy": "SQ", "d": 2, "lam": 0.7, "scv": 4.0,
                                   "delta": 1.0, "rep_max": 10.0})
    assert r["ET"] == pytest.approx(r["EW"] + 1.0, rel=1e-12)  # mean size 1
    with pytest.warns(RenamedKeywordWarning, match=r"AttainedPolicyMeans\.ER is now \.ET"):
        assert r.outcome.ER == r["ET"]


def test_jsq_sim_former_service_keyword_still_works_with_a_warning():
    """``service=H2`` (before issue 31) is read as ``sizes=h2`` for one release, with a warning,
    from the command line (``parse``) and from a run's parameters; same seed, same numbers."""
    spec = get_model("jsq-sim")
    with pytest.warns(RenamedKeywordWarning, match=r"service= is renamed sizes="):
        parsed = spec.parse({"N": "20", "d": "2", "lam": "0.5", "service": "H2", "scv": "4"})
    assert parsed["sizes"] == "h2" and "service" not in parsed
    args = {"N": 20, "d": 2, "lam": 0.5, "scv": 4.0, "n_jobs": 20_000, "n_batches": 10}
    with pytest.warns(RenamedKeywordWarning):
        old = spec.run({**args, "service": "H2"}, rng=3)
    new = spec.run({**args, "sizes": "h2"}, rng=3)
    assert old["ET"] == new["ET"] and old.params["sizes"] == "h2"


def test_jsq_sim_erlang_with_d1_is_the_pollaczek_khinchine_mean():
    """d = 1: every arrival joins one uniformly chosen server, so each server is an M/E_k/1
    queue with arrival rate lam; Pollaczek-Khinchine: E[T] = 1 + lam (1 + scv) / (2 (1 - lam))
    (mean size 1), here 2.75 for lam = 0.7 and Erlang(2)."""
    lam, scv = 0.7, 0.5
    r = get_model("jsq-sim").run({"N": 10, "d": 1, "lam": lam, "sizes": "erlang", "scv": scv,
                                  "n_jobs": 400_000}, rng=5)
    expected = 1.0 + lam * (1.0 + scv) / (2.0 * (1.0 - lam))
    assert abs(r["ET"].mean - expected) <= 3 * r["ET"].half_width
    assert "Erlang(k=2, mean 1)" in r.method and r.params["sizes"] == "erlang"
