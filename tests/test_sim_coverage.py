"""Coverage of every simulator's 95% confidence interval against an exact value.

For each simulator, one setting at moderate load (0.8; for the window protocol the NewReno
decrease 1/2) with a short run (10 batches) is simulated with seeds 1..200, and the interval of
one output is compared with an exact value computed here, independently of the simulator:

* jsq-sim with d = 1 and attained service with d = 1: every arrival joins one uniformly chosen
  queue, so each of the N queues is an M/M/1 queue, :math:`E[T] = 1/(1-\\lambda)`;
* mg1-sim: Pollaczek-Khinchine :math:`E[W] = \\lambda E[X^2]/(2(1-\\rho))` (Kleinrock 1975,
  eq. 5.76), here with H2 sizes of SCV 4;
* ps-sim: M/G/1 processor sharing, :math:`E[T] = E[X]/(1-\\rho)` (Kleinrock 1976, Sec. 4.4);
* dispatch-sim, random dispatching to m = 2 servers: two independent M/M/1 queues;
* window-sim, NewReno with per-packet loss probability ``p``: :math:`E[W^2] = 2/p`
  (the mean drift balance :math:`E[a(W)] = E[\\lambda(W)(W - d(W))]`, Altman et al. 2005).

The assertion is a one-sided binomial test at the 1% level: the number of intervals that cover
must not be significantly below 95% (``scipy.stats.binomtest``).  Intervals whose ``doubt`` is
set (the run's own diagnostics question them) are not counted, and at most a tenth may be
doubtful, so that the test keeps its power.  The same test must reject the same intervals
shrunk to 60% of their half-width (coverage about 80% for a calibrated interval): the
test can fail.

Longer runs at three loads and 400 seeds are in ``benchmarks/bench_coverage.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats

SEEDS = range(1, 201)
LEVEL = 0.95
LOAD = 0.8
#: Few batches keep the runs short: the run-length rule asks for 64 relaxation times
#: (1 + scv)/(1 - load)^2 per batch (symq.core.simoutput.required_run_length); the run lengths
#: below are about 1.2 times what it asks at load 0.8 with 10 batches (N = 2 queues for d = 1).
BATCHES = 10


def _jsq(seed: int) -> Any:
    from symq.meanfield.simulation import simulate_jsq

    return simulate_jsq(2, 1, LOAD, n_jobs=80_000, rng=seed, level=LEVEL,
                        n_batches=BATCHES).ET


def _mg1(seed: int) -> Any:
    from symq.core.registry import get_model

    return get_model("mg1-sim").run({"lam": LOAD, "sizes": "h2", "scv": 4.0, "n_jobs": 100_000,
                                     "n_batches": BATCHES, "level": LEVEL},
                                    rng=seed).values["EW"]


def _ps(seed: int) -> Any:
    from symq.routing.simulation import simulate_ps_queue

    return simulate_ps_queue(LOAD, 1.0, "exp", n_jobs=40_000, rng=seed, level=LEVEL,
                             n_batches=BATCHES).ET


def _dispatch(policy: str) -> Callable[[int], Any]:
    def run(seed: int) -> Any:
        from symq.dispatch.simulation.simulate import simulate_dispatch

        return simulate_dispatch(policy, 2, LOAD, "exp", n_jobs=80_000, rng=seed,
                                 level=LEVEL, n_batches=BATCHES).ET

    return run


def _window(seed: int) -> Any:
    from symq.window.simulation import simulate_window

    return simulate_window(None, None, None, 20_000, power_law=(1.0, 0.0, 0.01, 1.0, 0.5),
                           rng=seed, level=LEVEL, n_batches=BATCHES).mean_square_window


def _attained(seed: int) -> Any:
    from symq.meanfield.attained.simulation import simulate_attained

    table = np.arange(1.0, 11.0)[None, :]        # SQ(d) scores; with d = 1 the policy is moot
    return simulate_attained(2, 1, LOAD, ([1.0], [[-1.0]]), table, 1.0, n_jobs=80_000,
                             rng=seed, level=LEVEL, n_batches=BATCHES).ET


CASES = {
    "jsq-sim N=2 d=1 (M/M/1)": (_jsq, 1.0 / (1.0 - LOAD)),
    "mg1-sim H2 scv=4 (P-K)": (_mg1, LOAD * 1.0 * (1.0 + 4.0) / (2.0 * (1.0 - LOAD))),
    "ps-sim exp (M/M/1-PS)": (_ps, 1.0 / (1.0 - LOAD)),
    "dispatch-sim RND m=2 (M/M/1)": (_dispatch("rnd"), 1.0 / (1.0 - LOAD)),
    "window-sim NewReno E[W^2] = 2/p": (_window, 2.0 / 0.01),
    "attained N=2 d=1 (M/M/1)": (_attained, 1.0 / (1.0 - LOAD)),
}


def _covered(means: np.ndarray, halves: np.ndarray, exact: float) -> int:
    return int(np.sum(np.abs(means - exact) <= halves))


def _p_low(covered: int, n: int) -> float:
    """One-sided binomial p-value of ``coverage >= LEVEL`` (small: significantly below)."""
    return float(stats.binomtest(covered, n, LEVEL, alternative="less").pvalue)


@pytest.mark.parametrize("case", list(CASES))
def test_coverage_not_below_nominal(case: str) -> None:
    run, exact = CASES[case]
    cis = [run(seed) for seed in SEEDS]
    trusted = [ci for ci in cis if not getattr(ci, "doubt", "")]
    assert all(ci.level == LEVEL for ci in cis)
    assert len(trusted) >= 0.9 * len(cis), (
        f"{case}: {len(cis) - len(trusted)} of {len(cis)} intervals doubtful: "
        + next(ci.doubt for ci in cis if getattr(ci, "doubt", "")))
    means = np.array([ci.mean for ci in trusted])
    halves = np.array([ci.half_width for ci in trusted])
    covered = _covered(means, halves, exact)
    p = _p_low(covered, len(trusted))
    assert p >= 0.01, (f"{case}: {covered}/{len(trusted)} intervals cover {exact:.6g} "
                       f"(p = {p:.3g} < 0.01); half-width/s.d. across seeds "
                       f"{halves.mean() / means.std(ddof=1):.2f}")
    # the test has power: the same intervals at 60% of their width are caught
    shrunk = _covered(means, 0.6 * halves, exact)
    assert _p_low(shrunk, len(trusted)) < 0.01, (
        f"{case}: {shrunk}/{len(trusted)} intervals at 60% width still cover: the intervals "
        "are much wider than their spread across seeds")
