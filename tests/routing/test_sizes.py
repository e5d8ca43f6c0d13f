"""Job-size laws of the PS simulator, the run core it uses, and the result protocol.

* law objects (a scipy lognormal, an ME Erlang, a PhaseType) against the insensitive PS
  formulas E[T] = E[X]/(C - x), E[N] = rho/(1 - rho), with E[X] written out here;
* a named law and the same law given as an object give the same run (one conversion);
* the former keyword ``law=`` and the former names still work for one release, with a warning;
* the resumable kernel: any chunking gives the events of one call, bit for bit;
* bad laws and contradicting arguments name the parameter.

Seeds are fixed (chosen before the first run, not tuned).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from symq.core.errors import InvalidParameter, RunTooShort
from symq.core.renamed import RenamedKeywordWarning
from symq.core.result import ResultBase
from symq.laws import Deterministic, size_law
from symq.me import ME
from symq.routing import UnboundedFamily, social_optimum, unbounded_family
from symq.routing.kernel import PSState, ps_kernel
from symq.routing.simulation import draw_sizes, simulate_farm, simulate_ps_queue

SEED = 1983
LEVEL = 0.99


def test_deterministic_law() -> None:
    law = Deterministic(2.5)
    assert law.mean() == 2.5 and law.variance() == 0.0 and law.moment(3) == 2.5 ** 3
    assert float(law.cdf(2.4)) == 0.0 and float(law.cdf(2.5)) == 1.0
    assert float(law.icdf(0.3)) == 2.5
    assert law.sample(4, rng=0).tolist() == [2.5] * 4
    with pytest.raises(InvalidParameter, match="parameter mean=0"):
        Deterministic(0)


def test_named_laws_have_the_stated_moments() -> None:
    # balanced-means H2 with SCV c2: mean and second moment written out
    mean, scv = 3.0, 9.0
    h2 = size_law("h2", mean, scv)
    assert h2.mean() == pytest.approx(mean, rel=1e-13)
    assert h2.moment(2) == pytest.approx((1 + scv) * mean ** 2, rel=1e-12)
    ph = h2.phase_type()
    p1, p2 = ph.alpha
    rates = -np.diag(ph.A)
    assert p1 / rates[0] == pytest.approx(p2 / rates[1], rel=1e-13)   # balanced means
    assert size_law("exp", 2.0).mean() == 2.0
    assert size_law("det", 2.0).variance() == 0.0


def test_h2_sizes_are_drawn_as_written_out() -> None:
    # balanced-means H2 by hand: phase 1 iff U < p1, then Exp(1)/mu_phase; the law object must
    # use the generator the same way (n uniforms, n exponentials, nothing more)
    mean, scv, n = 2.0, 4.0, 5000
    p1 = (1 + math.sqrt((scv - 1) / (scv + 1))) / 2
    mu = np.array([2 * p1 / mean, 2 * (1 - p1) / mean])
    by_hand = np.random.default_rng(SEED)
    phase = (by_hand.random(n) >= p1).astype(int)
    expected = by_hand.exponential(1.0, n) / mu[phase]
    gen = np.random.default_rng(SEED)
    drawn = draw_sizes("h2", mean, n, rng=gen, scv=scv)
    np.testing.assert_allclose(drawn, expected, rtol=1e-15)
    assert gen.random() == by_hand.random()          # the same draws were consumed


def test_a_named_law_and_its_object_give_the_same_run() -> None:
    by_name = simulate_ps_queue(0.6, 1.0, "h2", mean=1.0, scv=4.0, n_jobs=60_000, rng=SEED)
    by_object = simulate_ps_queue(0.6, 1.0, size_law("h2", 1.0, 4.0), n_jobs=60_000, rng=SEED)
    # the same law as a PhaseType (alpha, A): the same stream, hence the same run
    by_pair = simulate_ps_queue(0.6, 1.0, size_law("h2", 1.0, 4.0).phase_type(), n_jobs=60_000,
                                rng=SEED)
    assert by_object.ET == by_name.ET and by_object.EQ == by_name.EQ
    assert by_pair.ET == by_name.ET and by_pair.EQ == by_name.EQ
    assert by_name.sizes == "h2" and "Hyperexponential" in by_object.sizes


@pytest.mark.parametrize("case", ["lognormal", "erlang", "pairs"])
def test_law_objects_satisfy_insensitivity(case: str) -> None:
    C, lam = 2.0, 1.2
    if case == "lognormal":
        sigma, scale = 0.9, 0.5
        law, mean = stats.lognorm(sigma, scale=scale), scale * math.exp(sigma ** 2 / 2)
    elif case == "erlang":
        law, mean = ME.erlang(3, 4), 3 / 4               # Erlang-3, rate 4
    else:
        law, mean = ([0.2, 0.8], [[-0.5, 0.0], [0.0, -4.0]]), 0.2 / 0.5 + 0.8 / 4.0
    est = simulate_ps_queue(lam, C, law, n_jobs=400_000, rng=SEED, level=LEVEL)
    x = lam * mean
    assert est.mean_size == pytest.approx(mean, rel=1e-9)
    assert est.ET.contains(mean / (C - x)), (case, str(est.ET), mean / (C - x))
    assert est.EQ.contains((x / C) / (1 - x / C)), (case, str(est.EQ))
    assert est.mean_slowdown.contains(1 / (C - x)), (case, str(est.mean_slowdown))


def test_farm_takes_a_law_object() -> None:
    C, w = [4.0, 2.0, 1.0], [1.0, 2.0, 4.0]
    optimum = social_optimum(C, w, 3.5)
    law = stats.gamma(0.5, scale=2.0)                       # mean 1, SCV 2
    est = simulate_farm(C, w, optimum.loads, sizes=law, n_jobs_per_server=200_000, rng=SEED,
                        level=LEVEL)
    assert est.social_cost.contains(optimum.cost), (str(est.social_cost), optimum.cost)
    assert "gamma" in est.sizes


# ----------------------------------------------------------------------------- run core


@pytest.mark.parametrize("stops", [[1, 2, 3], [17, 250, 251, 999], list(range(50, 1000, 50))])
def test_chunked_kernel_equals_one_call(stops: list[int]) -> None:
    rng = np.random.default_rng(SEED)
    n = 1000
    arrivals = np.cumsum(rng.exponential(1.0 / 0.9, n))
    sizes = rng.exponential(1.0, n) * rng.choice([0.3, 2.5], n)
    sojourn, departures, area = ps_kernel(arrivals, sizes, 1.1, float(arrivals[100]),
                                          float(arrivals[-1]), 40)
    state = PSState(arrivals, sizes, 1.1, float(arrivals[100]), float(arrivals[-1]), 40)
    for stop in stops + [n]:
        done, finished = state.advance(stop)
        assert done == stop and not finished
    assert np.array_equal(state.sojourn, sojourn)
    assert np.array_equal(state.departures, departures)
    assert np.array_equal(state.area, area)


def test_progress_gives_the_same_result() -> None:
    quiet = simulate_ps_queue(0.7, 1.0, "h2", scv=4.0, n_jobs=110_000, rng=SEED)
    shown = simulate_ps_queue(0.7, 1.0, "h2", scv=4.0, n_jobs=110_000, rng=SEED, progress=True)
    assert quiet == shown


def test_run_length_rule_names_the_smallest_run() -> None:
    # 30 batches of at least 100 post-warm-up jobs with warmup 0.1: 3000 jobs are too few
    with pytest.raises(InvalidParameter, match=r"parameter n_jobs=3000 must be an integer >= "
                       r".*100 post-warm-up jobs per batch for n_batches=30"):
        simulate_ps_queue(0.5, 1.0, n_jobs=3000, rng=1)
    # then the relaxation rule: 30 batches of 64 relaxation times (1 + 1)/(1 - 0.5)^2 = 8 jobs
    with pytest.raises(RunTooShort, match=r"parameter n_jobs=15359 must be >= 15360 at load 0.5"):
        simulate_ps_queue(0.5, 1.0, n_jobs=15_359, rng=1)
    assert simulate_ps_queue(0.5, 1.0, n_jobs=15_360, rng=1).ET.run_length == 15_360
    with pytest.raises(InvalidParameter, match="parameter n_jobs_per_server="):
        simulate_farm([1.0], [1.0], [0.5], n_jobs_per_server=1000, rng=1)


# ----------------------------------------------------------------------------- bad laws


@pytest.mark.parametrize("kwargs, name, needle", [
    (dict(sizes=stats.expon(scale=2.0), mean=1.0), "mean", "equal to the mean 2"),
    (dict(sizes=stats.expon(scale=2.0), scv=3.0), "scv", "omitted when sizes is a law object"),
    (dict(sizes="exp", scv=3.0), "scv", "omitted or 1 for sizes=exp"),
    (dict(sizes="zipf"), "sizes", "one of exp, det, erlang, h2"),
    (dict(sizes=2.0), "sizes", "a job-size law"),
    (dict(sizes=stats.norm(1.0, 1.0)), "sizes", "nonnegative"),
    (dict(sizes=stats.pareto(0.5)), "sizes", "finite"),
])
def test_bad_laws_name_the_parameter(kwargs: dict, name: str, needle: str) -> None:
    with pytest.raises(InvalidParameter) as info:
        simulate_ps_queue(0.1, 1.0, n_jobs=5000, rng=1, **kwargs)
    assert info.value.name == name and needle in str(info.value), str(info.value)


def test_draw_sizes_of_an_object() -> None:
    x = draw_sizes(Deterministic(1.5), None, 3, rng=0)
    assert x.tolist() == [1.5, 1.5, 1.5]


# ----------------------------------------------------------------------------- former names


def _farm(**kwargs):
    return simulate_farm([1.0, 2.0], [1.0, 1.0], [0.2, 0.4], n_jobs_per_server=40_000, rng=4,
                         **kwargs)


def _queue(**kwargs):
    return simulate_ps_queue(0.2, 1.0, n_jobs=40_000, rng=4, **kwargs)


def _draw(**kwargs):
    return draw_sizes(mean=2.0, n=50, rng=4, **kwargs)


@pytest.mark.parametrize("run", [_queue, _farm, _draw])
@pytest.mark.parametrize("old, new", [
    (dict(law="h2", scv=9.0), dict(sizes="h2", scv=9.0)),                # the former keyword
    (dict(sizes="hyperexponential"), dict(sizes="h2", scv=4.0)),         # its former default SCV
    (dict(sizes="hyperexponential", scv=9.0), dict(sizes="h2", scv=9.0)),
    (dict(sizes="Exponential"), dict(sizes="exp")),
    (dict(sizes="deterministic"), dict(sizes="det")),
    (dict(law="exponential"), dict(sizes="exp")),                        # both at once
])
def test_former_keyword_and_names_still_work_and_warn(run, old: dict, new: dict) -> None:
    with pytest.warns(RenamedKeywordWarning) as caught:
        before = run(**old)
    after = run(**new)
    messages = " ".join(str(w.message) for w in caught)
    assert ("law=" in messages) == ("law" in old)
    if isinstance(old.get("sizes", old.get("law")), str) and old.get("sizes", old.get("law")) \
            .lower() in ("hyperexponential", "exponential", "deterministic"):
        assert f"sizes={new['sizes']!r}" in messages
    if run is _draw:
        np.testing.assert_array_equal(before, after)
    else:   # the same run; the label is the name as given
        assert _same_numbers(before, after)


def _same_numbers(a, b) -> bool:
    da, db = a.to_dict(), b.to_dict()
    da.pop("sizes"), db.pop("sizes")
    for d in (da, db):
        for server in d.get("servers") or ():
            if server is not None:
                server.pop("sizes")
    return da == db


def test_former_keyword_with_the_new_one_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="parameter law='exp' must be omitted when sizes="):
        simulate_ps_queue(0.5, 1.0, law="exp", sizes="exp")


# ----------------------------------------------------------------------------- results


def test_former_attribute_names_still_read_and_warn() -> None:
    # the glossary names mean_size and sizes; mean and law are read for one release
    est = simulate_ps_queue(0.5, 2.0, "det", mean=1.5, n_jobs=8000, rng=SEED)
    farm = simulate_farm([2.0, 1.0], [1.0, 1.0], [0.5, 0.0], sizes="det", mean=1.5,
                         n_jobs_per_server=8000, rng=SEED)
    assert (est.mean_size, est.sizes, farm.sizes) == (1.5, "det", "det")   # as given
    assert est.load == 0.5 * 1.5 and est.utilisation == 0.5 * 1.5 / 2.0
    with pytest.warns(RenamedKeywordWarning, match=r"PSQueueEstimate\.mean is now \.mean_size"):
        assert est.mean == 1.5
    with pytest.warns(RenamedKeywordWarning, match=r"PSQueueEstimate\.law is now \.sizes"):
        assert est.law == "det"
    with pytest.warns(RenamedKeywordWarning, match=r"FarmEstimate\.law is now \.sizes"):
        assert farm.law == "det"
    assert "law" not in est.to_dict() and "mean" not in est.to_dict()
    assert "law" not in farm.to_dict() and farm.to_dict()["sizes"] == "det"


def test_results_follow_the_protocol() -> None:
    est = simulate_farm([1.0, 1.0], [1.0, 2.0], [0.3, 0.0], n_jobs_per_server=8000, rng=2)
    data = json.loads(json.dumps(est.to_dict()))
    assert data["social_cost"]["n"] == 30 and data["servers"][1] is None
    assert data["servers"][0]["ET"]["method"] == "batch_means"
    assert str(est).startswith("FarmEstimate(social_cost=")
    fam = unbounded_family(4.0)
    assert isinstance(fam, UnboundedFamily) and isinstance(fam, ResultBase)
    assert json.loads(json.dumps(fam.to_dict()))["x_ne"] == [0.75, 0.0]
    assert "| `poa` |" in fam._repr_markdown_()
