"""M/ME/1 waiting times: exact Pollaczek-Khinchine transforms against closed forms and
simulation."""

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter, StabilityError
from symq.me.distribution import ME
from symq.me.queueing import mg1_waiting_time, simulate_mg1_waiting
from symq.me.transform import RationalLST, s


def test_mm1_waiting_time_is_exact():
    # M/M/1, mu = 1, lam = 1/2: P(W > t) = rho e^{-(mu - lam) t}, W | W > 0 ~ exp(1/2)
    waiting = mg1_waiting_time(RationalLST.from_expr(1 / (s + 1)), sp.Rational(1, 2))
    assert waiting.rho == sp.Rational(1, 2)
    half = sp.Rational(1, 2)
    assert sp.simplify(waiting.positive_part.expr - half / (s + half)) == 0


@pytest.mark.parametrize("sizes", [
    4 / (s + 2) ** 2,
    sp.Rational(1, 3) * 2 / (s + 2) + sp.Rational(2, 3) * 4 / (s + 4),
    6 / ((s + 1) * (s + 2) * (s + 3)),
])
def test_mean_wait_is_pollaczek_khinchine(sizes):
    lst = RationalLST.from_expr(sizes)
    m1, m2 = lst.moments(2)
    lam = sp.Rational(1, 2) / m1                      # rho = 1/2
    expected = lam * m2 / (2 * (1 - lam * m1))        # P-K mean, computed independently
    assert mg1_waiting_time(lst, lam).mean() == expected


def test_waiting_time_ccdf_agrees_with_simulation():
    service = ME.erlang(2, 2)                         # mean 1, SCV 1/2
    lam = 0.7
    thresholds = [0.5, 1.0, 2.0, 4.0]
    waiting = mg1_waiting_time(service, sp.Rational(7, 10))
    exact = float(waiting.rho) * ME(waiting.positive_part).ccdf(np.array(thresholds))
    sim = simulate_mg1_waiting(lambda n, g: g.gamma(2.0, 0.5, n), lam, thresholds,
                               n_jobs=1_000_000, rng=11, level=0.999)
    for ci, value in zip(sim.ccdf, exact):
        assert ci.contains(value), (ci, value)
    assert sim.EW.contains(float(waiting.mean()))


def test_errors():
    with pytest.raises(StabilityError, match="rho"):
        mg1_waiting_time(RationalLST.from_expr(1 / (s + 1)), 1)
    with pytest.raises(InvalidParameter, match="lam"):
        mg1_waiting_time(RationalLST.from_expr(1 / (s + 1)), -1)
    with pytest.raises(InvalidParameter, match="parameter sizes='exp'"):
        mg1_waiting_time("exp", sp.Rational(1, 2))
    with pytest.raises(InvalidParameter, match="parameter sizes="):
        simulate_mg1_waiting(2.0, 0.5, n_jobs=30_000)


def test_exact_result_follows_the_protocol():
    import json

    waiting = mg1_waiting_time(ME.erlang(2, 2), sp.Rational(1, 2))
    m1, m2 = ME.erlang(2, 2).lst.moments(2)
    lam = sp.Rational(1, 2)
    assert waiting.EW == waiting.mean() == lam * m2 / (2 * (1 - lam * m1))
    data = json.loads(json.dumps(waiting.to_dict()))
    assert data["EW"] == float(waiting.EW) and data["exactness"] == "exact"
    assert str(waiting) == "WaitingTime(lam=1/2, rho=1/2, EW=3/4)"


def test_simulator_takes_a_job_size_law():
    # an ME law is sampled through symq.laws.as_sampler; E[W] = 3/4 for Erlang(2, rate 2), lam 1/2
    service = ME.erlang(2, 2)
    waiting = mg1_waiting_time(service, sp.Rational(1, 2))
    sim = simulate_mg1_waiting(service, 0.5, [1.0], n_jobs=200_000, rng=5)
    exact = float(waiting.rho) * float(ME(waiting.positive_part).ccdf(1.0))
    assert sim.EW.contains(float(waiting.EW)) and sim.ccdf[0].contains(exact)
    assert (sim.n_jobs, sim.n_batches, sim.n_warm) == (200_000, 40, 10_000)


def test_simulator_result_is_json_ready_and_progress_changes_nothing():
    import json

    def draw(n, g):
        return g.exponential(1.0, n)

    quiet = simulate_mg1_waiting(draw, 0.5, [0.0, 2.0], n_jobs=30_000, rng=4, n_batches=10)
    shown = simulate_mg1_waiting(draw, 0.5, [0.0, 2.0], n_jobs=30_000, rng=4, n_batches=10,
                                 progress=True)
    assert quiet.to_dict() == shown.to_dict()
    data = json.loads(json.dumps(quiet.to_dict()))
    assert data["thresholds"] == [0.0, 2.0] and len(data["ccdf"]) == 2
    assert data["EW"]["n"] == 10 and data["exactness"] == "simulated"
    # M/M/1, rho = 1/2: P(W > 0) = rho
    assert quiet.ccdf[0].contains(0.5)


def test_simulator_errors():
    def draw(n, g):
        return g.exponential(1.0, n)

    # 40 batches of 100 post-warm-up jobs: n - floor(0.05 n) >= 4000 first holds at n = 4210
    with pytest.raises(InvalidParameter, match="n_jobs=4209 .*>= 4210"):
        simulate_mg1_waiting(draw, 0.5, [1.0], n_jobs=4209)
    # 4210 passes the batch rule but not the relaxation rule: 64 relaxation times
    # (1 + scv)/(1 - rho)^2 = 8 (exponential sizes, rho = 0.5) per batch, 40 batches: 20480
    with pytest.raises(InvalidParameter, match=r"n_jobs=4210 must be >= (\d+)") as caught:
        simulate_mg1_waiting(draw, 0.5, [1.0], n_jobs=4210)
    needed = float(caught.value.domain.split()[1])
    assert abs(needed / 20480 - 1) < 0.15  # rho and scv of the drawn times
    with pytest.raises(InvalidParameter, match="lam"):
        simulate_mg1_waiting(draw, 0.0, [1.0], n_jobs=10_000)
    with pytest.raises(InvalidParameter, match="thresholds"):
        simulate_mg1_waiting(draw, 0.5, [1.0, float("nan")], n_jobs=10_000)
    with pytest.raises(InvalidParameter, match="parameter sizes='str'"):
        simulate_mg1_waiting("exponential", 0.5, [1.0], n_jobs=10_000)
    with pytest.raises(InvalidParameter, match="parameter sizes='its samples'"):
        simulate_mg1_waiting(lambda n, g: -g.exponential(1.0, n), 0.5, n_jobs=10_000)
    with pytest.raises(StabilityError, match="rho"):
        simulate_mg1_waiting(ME.erlang(2, 2), 1.0, n_jobs=10_000)


@pytest.mark.parametrize("function, kwargs", [
    (mg1_waiting_time, {"lam": sp.Rational(1, 2)}),
    (simulate_mg1_waiting, {"lam": 0.5, "thresholds": [1.0], "n_jobs": 30_000, "rng": 3}),
])
def test_former_keyword_service_still_works_and_warns(function, kwargs):
    # service= was renamed sizes= (issue 31): the same result, with a RenamedKeywordWarning
    from symq.core.renamed import RenamedKeywordWarning

    law = ME.erlang(2, 2)
    with pytest.warns(RenamedKeywordWarning, match=r"\(service=\.\.\.\) is renamed .*\(sizes="):
        before = function(service=law, **kwargs)
    assert before.to_dict() == function(sizes=law, **kwargs).to_dict()
