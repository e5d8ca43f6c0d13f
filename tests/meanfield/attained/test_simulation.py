"""Finite-N simulator of attained-service load balancing against independent evidence.

References used (none of them computed by the code under test):

* d = 1 (random routing): every server is an M/PH/1 FCFS queue whatever the score table, so
  E[W] = lam E[X^2] / (2 (1 - lam E[X])) (Pollaczek-Khinchine) and P(W > 0) = lam E[X] (PASTA);
* SQ(d) with exponential sizes: the mean-field limit E[R] = sum_l lam^((d^l - 1)/(d - 1)) / lam
  (Vvedenskaya, Dobrushin, Karpelevich 1996; Mitzenmacher 2001), up to an O(1/N) gap;
* the independent JSQ(d) simulator :func:`symq.meanfield.simulation.simulate_jsq` (a uniformised
  Gillespie scheme, a different algorithm) for the SQ(d) table;
* Hellemans and Van Houdt's finding that SQ(d)-RTB beats SQ(d) for high-variance sizes, and that
  age carries no information for exponential sizes;
* work conservation (busy fraction = lam E[X]) and Little's law (E[Q] = lam E[R]).
"""

import math

import numpy as np
import pytest
from scipy import stats

import symq.meanfield.attained.simulation as attained_sim
from symq.core.errors import InvalidParameter, RunTooShort, StabilityError
from symq.meanfield.attained.simulation import AttainedEstimate, simulate_attained
from symq.meanfield.simulation import simulate_jsq

EXP = ([1.0], [[-1.0]])


def h2(scv: float, mean: float = 1.0):
    """Balanced-means hyperexponential H2 (f = 1/2) as (alpha, A), built by hand."""
    p = (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0))) / 2.0
    return np.array([p, 1.0 - p]), np.diag([-2.0 * p / mean, -2.0 * (1.0 - p) / mean])


def h2_second_moment(scv: float, mean: float = 1.0) -> float:
    return (scv + 1.0) * mean**2


def table(kind: str, r: int, B: int = 50) -> np.ndarray:
    """Score tables of the paper with r + 1 age layers and B queue lengths (1-based k, l)."""
    k = np.arange(1, r + 2, dtype=float)[:, None]
    l = np.arange(1, B + 1, dtype=float)[None, :]
    if kind == "sq":
        return l + 0.0 * k
    if kind == "las":
        return k + 0.0 * l
    if kind == "rtb":
        return (r + 1) * l + k
    if kind == "anti":  # shortest queue, ties to the OLDEST job in service
        return (r + 1) * l - k
    raise ValueError(kind)


def pk_wait(lam: float, mean: float, second: float) -> float:
    return lam * second / (2.0 * (1.0 - lam * mean))


def mean_field_sq_response(lam: float, d: int, lmax: int = 80) -> float:
    return sum(lam ** ((d**l - 1) / (d - 1)) for l in range(1, lmax + 1)) / lam


def overlap(a, b) -> bool:
    return a.low <= b.high and b.low <= a.high


def outcome(est: AttainedEstimate) -> dict:
    """Every field of an estimate except the wall-clock speed and time."""
    return {k: v for k, v in est.__dict__.items() if k not in ("jobs_per_second", "seconds")}


# --------------------------------------------------------------------------------------------
# exact references
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, N", [("las", 10), ("sq", 3), ("rtb", 1)])
def test_random_routing_is_pollaczek_khinchine(kind, N):
    lam, scv = 0.5, 3.0
    alpha, A = h2(scv)
    est = simulate_attained(N, 1, lam, (alpha, A), table(kind, 4), 0.5, n_jobs=400_000, rng=11,
                            level=0.999)
    w = pk_wait(lam, 1.0, h2_second_moment(scv))  # = 2.0
    assert est.EW.contains(w), (est.EW, w)
    assert est.ET.contains(w + 1.0), (est.ET, w + 1.0)
    assert est.P_wait.contains(lam), (est.P_wait, lam)  # PASTA: P(server busy) = lam E[X]
    assert est.utilisation.contains(lam), est.utilisation


def test_sq_exponential_large_n_near_mean_field_and_jsq():
    N, d, lam = 500, 2, 0.7
    est = simulate_attained(N, d, lam, EXP, table("sq", 0), 1.0, n_jobs=400_000, rng=3,
                            level=0.99)
    mf = mean_field_sq_response(lam, d)  # 1.61445...
    # the finite-N gap is O(1/N); c = 2 is generous for d = 2, lam = 0.7 (refined mean field)
    assert abs(est.ET.mean - mf) < est.ET.half_width + 2.0 / N, (est.ET, mf)
    ref = simulate_jsq(N, d, lam, n_jobs=400_000, rng=4, level=0.99)
    assert overlap(est.ET, ref.ET), (est.ET, ref.ET)


@pytest.mark.parametrize("replace", [True, False])
def test_sq_h2_matches_independent_jsq_simulator(replace):
    N, d, lam = 40, 3, 0.8
    alpha, A = h2(10.0)
    # 20 batches: the run-length rule asks 64 * 20 * (1 + 10)/(1 - 0.8)^2 = 352000 departures
    est = simulate_attained(N, d, lam, (alpha, A), table("sq", 3), 0.5, n_jobs=400_000, rng=5,
                            replace=replace, level=0.99, n_batches=20)
    ref = simulate_jsq(N, d, lam, (alpha, A), n_jobs=400_000, replace=replace, rng=6, level=0.99,
                       n_batches=20)
    assert overlap(est.ET, ref.ET), (est.ET, ref.ET)
    assert overlap(est.EQ, ref.EQ), (est.EQ, ref.EQ)


def test_work_conservation_and_little():
    lam = 0.75
    alpha, A = h2(5.0, mean=0.8)  # E[X] = 0.8, load 0.6
    est = simulate_attained(50, 2, lam, (alpha, A), table("rtb", 6), 0.4, n_jobs=300_000, rng=8,
                            level=0.99)
    assert est.load == pytest.approx(0.6)
    assert est.utilisation.contains(0.6), est.utilisation
    # Little's law per server: E[Q] = lam E[R] (both estimated, allow both half-widths)
    gap = abs(est.EQ.mean - lam * est.ET.mean)
    assert gap < est.EQ.half_width + lam * est.ET.half_width
    # E[R] = E[W] + E[X] job by job on average
    assert abs(est.ET.mean - est.EW.mean - 0.8) < est.ET.half_width + est.EW.half_width


# --------------------------------------------------------------------------------------------
# the age layers are used (and used correctly)
# --------------------------------------------------------------------------------------------


def test_rtb_beats_sq_for_h2_scv10():
    """Paper finding: SQ(d)-RTB has a lower E[W] than SQ(d) for high-variance sizes."""
    alpha, A = h2(10.0)
    sq = simulate_attained(200, 2, 0.7, (alpha, A), table("sq", 0), 0.25, n_jobs=4_000_000,
                           rng=21)
    rtb = simulate_attained(200, 2, 0.7, (alpha, A), table("rtb", 20), 0.25, n_jobs=4_000_000,
                            rng=22)
    diff = sq.EW.mean - rtb.EW.mean
    half = math.hypot(sq.EW.half_width, rtb.EW.half_width)  # 95% interval of the difference
    assert diff > half, (sq.EW, rtb.EW)


def test_age_is_irrelevant_for_exponential_sizes():
    """Paper finding: for exponential sizes SQ(d)-RTB coincides with SQ(d)."""
    sq = simulate_attained(100, 2, 0.8, EXP, table("sq", 0), 0.25, n_jobs=300_000, rng=31,
                           level=0.99)
    rtb = simulate_attained(100, 2, 0.8, EXP, table("rtb", 20), 0.25, n_jobs=300_000, rng=32,
                            level=0.99)
    assert overlap(sq.ET, rtb.ET), (sq.ET, rtb.ET)


def test_layers_and_clamping_consume_no_randomness():
    """Tables that rank every probe set identically give identical runs for one seed.

    * SQ with 1 row and SQ with 7 rows (age ignored);
    * scores (1, 2, 3) clamped beyond l = 3 and the same table written out to l = 40;
    * a table shifted and scaled by a positive affine map.
    """
    alpha, A = h2(4.0)

    def run(scores, delta=0.3):
        # 5 batches: the run-length rule asks 64 * 5 * (1 + 4)/(1 - 0.8)^2 = 40000 departures
        est = simulate_attained(30, 3, 0.8, (alpha, A), scores, delta, n_jobs=42_000, rng=4,
                                n_batches=5)
        return est

    base = outcome(run(table("sq", 0)))
    assert {**outcome(run(table("sq", 6))), "layers": 1} == base
    short = np.array([[1.0, 2.0, 3.0], [1.5, 2.5, 3.5]])
    long_ = np.hstack([short, np.repeat(short[:, -1:], 37, axis=1)])
    assert outcome(run(short)) == outcome(run(long_))
    rtb = table("rtb", 5)
    assert outcome(run(rtb)) == outcome(run(3.0 * rtb - 7.0))
    # while the age ranking does change the run
    assert outcome(run(table("anti", 5))) != outcome(run(rtb))


# --------------------------------------------------------------------------------------------
# reproducibility, progress, pool growth
# --------------------------------------------------------------------------------------------


def test_same_seed_same_result_different_seed_different():
    alpha, A = h2(4.0)
    args = (20, 2, 0.7, (alpha, A), table("rtb", 4), 0.5)
    runs = {"n_jobs": 20_000, "n_batches": 5}      # the rule asks 17778 departures
    a = simulate_attained(*args, **runs, rng=7)
    b = simulate_attained(*args, **runs, rng=7)
    c = simulate_attained(*args, **runs, rng=8)
    assert outcome(a) == outcome(b)
    assert a.ET.mean != c.ET.mean
    assert isinstance(a, AttainedEstimate)
    g = simulate_attained(*args, **runs, rng=np.random.default_rng(7))
    assert g.ET.mean == a.ET.mean  # default_rng(7) is the same stream as the seed 7


def test_progress_bar_and_chunking_do_not_change_the_run(capsys):
    args = (15, 2, 0.6, EXP, table("las", 3), 0.5)
    quiet = simulate_attained(*args, n_jobs=12_000, rng=2, n_batches=10)   # rule: 8000
    loud = simulate_attained(*args, n_jobs=12_000, rng=2, n_batches=10, progress=True)
    assert loud.ET == quiet.ET and loud.EQ == quiet.EQ
    assert "simulate_attained" in capsys.readouterr().err


def test_job_pool_grows_without_changing_the_run(monkeypatch):
    args = (2, 2, 0.9, EXP, table("sq", 0), 1.0)
    runs = {"n_jobs": 30_000, "n_batches": 2}      # the rule asks 64 * 2 * 200 = 25600
    ref = simulate_attained(*args, **runs, rng=9)
    assert ref.peak_in_system > 16
    monkeypatch.setattr(attained_sim, "_MIN_POOL", 1)  # initial pool of 4 * N = 8 slots
    grown = simulate_attained(*args, **runs, rng=9)
    assert grown.ET == ref.ET and grown.peak_in_system == ref.peak_in_system
    with pytest.raises(InvalidParameter, match="max_in_system"):
        simulate_attained(*args, **runs, rng=9, max_in_system=5)


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------

GOOD = dict(N=10, d=2, lam=0.5, sizes=([1.0], [[-1.0]]), scores=[[1.0, 2.0]], delta=1.0,
            n_jobs=20_000)                     # the run-length rule asks 15360 at load 0.5


@pytest.mark.parametrize(
    "name, value",
    [
        ("N", 0), ("N", 2.5), ("N", "10"),
        ("d", 0), ("d", True),
        ("lam", 0.0), ("lam", -1.0), ("lam", float("nan")), ("lam", "0.5"),
        ("delta", 0.0), ("delta", float("inf")),
        ("scores", [1.0, 2.0]), ("scores", np.zeros((0, 3))), ("scores", np.zeros((2, 0))),
        ("scores", [[1.0, np.inf]]), ("scores", [[1.0, np.nan]]), ("scores", "abc"),
        ("n_jobs", 100), ("n_jobs", 1e6),
        ("alpha", [0.5, 0.4]), ("A", [[1.0]]),
    ],
)
def test_bad_input_names_the_parameter(name, value):
    kwargs = dict(GOOD, **{name: value}) if name not in ("alpha", "A") else dict(GOOD)
    if name == "alpha":
        kwargs["sizes"] = (value, [[-1.0, 0.0], [0.0, -2.0]])
    if name == "A":
        kwargs["sizes"] = ([1.0], value)
    with pytest.raises(InvalidParameter) as info:
        simulate_attained(**kwargs)
    assert info.value.name == name
    assert name in str(info.value)


@pytest.mark.parametrize(
    "name, value",
    [("warmup", 1.0), ("warmup", -0.1), ("n_batches", 1), ("level", 1.0), ("replace", "yes"),
     ("progress", 1), ("rng", -1), ("max_in_system", 0)],
)
def test_bad_keyword_input_names_the_parameter(name, value):
    with pytest.raises(InvalidParameter) as info:
        simulate_attained(**GOOD, **{name: value})
    assert info.value.name == name


def test_d_larger_than_n_without_replacement():
    with pytest.raises(InvalidParameter, match="d=5") as info:
        simulate_attained(**dict(GOOD, N=4, d=5), replace=False)
    assert info.value.name == "d"
    # with replacement d > N is allowed
    simulate_attained(**dict(GOOD, N=4, d=5))


@pytest.mark.parametrize("N, d, needed", [
    # 64 relaxation times (1 + scv)/(1 - rho)^2 = 2/0.04 = 50 per batch, 30 batches: 96000
    # departures for the pooled system (d >= 2), N times more for N independent M/M/1 (d = 1)
    (10, 2, 96_000), (10, 1, 960_000), (1, 1, 96_000),
])
def test_a_run_too_short_for_its_load_is_refused_with_the_run_needed(N, d, needed):
    with pytest.raises(RunTooShort) as info:
        simulate_attained(N, d, 0.8, EXP, table("sq", 0), 1.0, n_jobs=needed - 1000, rng=1)
    assert info.value.name == "n_jobs"
    assert info.value.jobs_needed == pytest.approx(needed)
    assert ("independent" in str(info.value)) == (d == 1 and N > 1)


def test_the_intervals_carry_the_run_length_and_the_doubt():
    est = simulate_attained(10, 2, 0.8, EXP, table("sq", 0), 1.0, n_jobs=100_000, rng=3)
    for ci in (est.EW, est.ET, est.EQ, est.P_wait, est.utilisation):
        assert ci.run_length == 100_000
        assert isinstance(ci.doubt, str)
    assert 0 <= est.n_warm < 100_000 // 2
    assert 0.0 < est.post_warmup_time <= est.sim_time


@pytest.mark.parametrize("lam, A", [(1.0, [[-1.0]]), (0.6, [[-0.5]])])
def test_unstable_load_raises(lam, A):
    with pytest.raises(StabilityError, match="lam"):
        simulate_attained(**dict(GOOD, lam=lam, sizes=([1.0], A)))


# --------------------------------------------------------------------------------------------
# general job-size laws: the simulator samples the law itself
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("law, second", [
    # gamma(1/2) of mean 1: SCV 2, E[X^2] = 3 (a density infinite at 0: no phase-type form)
    (stats.gamma(0.5, scale=2.0), 3.0),
    # Weibull of shape 2 and mean 1: E[X^2] = Gamma(2) / Gamma(3/2)^2 = 4/pi
    (stats.weibull_min(2.0, scale=1.0 / math.gamma(1.5)), 4.0 / math.pi),
], ids=["gamma", "weibull"])
def test_general_law_random_routing_is_pollaczek_khinchine(law, second):
    lam = 0.5
    # d = 1: 20 independent queues, the rule asks 64 * 30 * 20 * (1 + 2)/(1 - 0.5)^2 = 460800
    est = simulate_attained(20, 1, lam, law, table("sq", 0), 1.0, n_jobs=480_000, rng=5,
                            level=0.999)
    w = pk_wait(lam, 1.0, second)
    assert est.mean_size == pytest.approx(1.0, rel=1e-9)
    assert est.EW.contains(w), (est.EW, w)
    assert est.utilisation.contains(lam), est.utilisation


def test_general_law_same_seed_same_run_and_agrees_with_the_phases_walked():
    law = stats.lognorm(0.5, scale=math.exp(-0.125))      # mean 1
    runs = [simulate_attained(10, 2, 0.6, law, table("sq", 0), 1.0, n_jobs=20_000, rng=7)
            for _ in range(2)]
    assert outcome(runs[0]) == outcome(runs[1])
    # an exponential law given as scipy (sampled) and as PH (phases walked) agree in law
    sampled = simulate_attained(50, 2, 0.7, stats.expon(), table("sq", 0), 1.0,
                                n_jobs=200_000, rng=8, level=0.99)
    walked = simulate_attained(50, 2, 0.7, EXP, table("sq", 0), 1.0, n_jobs=200_000, rng=9,
                               level=0.99)
    assert overlap(sampled.ET, walked.ET), (sampled.ET, walked.ET)


def test_a_law_with_negative_sizes_is_refused():
    with pytest.raises(InvalidParameter, match="parameter sizes=.* must be a law of "
                                               "nonnegative job sizes"):
        simulate_attained(5, 1, 0.5, stats.norm(1.0, 1.0), table("sq", 0), 1.0,
                          n_jobs=10_000, rng=1)
