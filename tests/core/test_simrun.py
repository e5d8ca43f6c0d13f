"""The simulation-run core: one run-length rule, reproducible numba seeding, chunked runs that
give the same result as one call."""

import numba
import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.core.simrun import MIN_JOBS_PER_BATCH, RunPlan, kernel_seed, run_chunked, seed_numba


def test_run_plan_rule_counts_post_warm_up_jobs():
    plan = RunPlan.make(n_jobs=4000, n_batches=30, warmup=0.25)
    assert (plan.n_warm, plan.n_slices) == (1000, 600)
    assert plan.n_jobs - plan.n_warm >= MIN_JOBS_PER_BATCH * plan.n_batches
    # 3333 jobs with warm-up 0.1 leave 3333 - 333 = 3000 (>= 30 * 100), 3332 leave 2999
    RunPlan.make(n_jobs=3333, n_batches=30, warmup=0.1)
    with pytest.raises(InvalidParameter, match=r"n_jobs=3332 must be an integer >= 3333"):
        RunPlan.make(n_jobs=3332, n_batches=30, warmup=0.1)


def test_the_stated_smallest_run_is_the_smallest_accepted():
    import math

    for n_batches in (2, 7, 30):
        for warmup in (0.0, 0.1, 0.25, 0.3, 0.9):
            needed = MIN_JOBS_PER_BATCH * n_batches
            brute = next(n for n in range(needed, 100 * needed)
                         if n - math.floor(warmup * n) >= needed)
            RunPlan.make(brute, n_batches, warmup)
            with pytest.raises(InvalidParameter, match=rf">= {brute} "):
                RunPlan.make(brute - 1, n_batches, warmup)


@pytest.mark.parametrize("kwargs, name", [
    ({"n_jobs": 10_000.0}, "n_jobs"), ({"n_jobs": True}, "n_jobs"),
    ({"n_jobs": 10_000, "n_batches": 1}, "n_batches"),
    ({"n_jobs": 10_000, "warmup": 1.0}, "warmup"), ({"n_jobs": 10_000, "level": 1.0}, "level"),
])
def test_run_plan_names_the_bad_argument(kwargs, name):
    with pytest.raises(InvalidParameter, match=rf"parameter {name}="):
        RunPlan.make(**kwargs)


def test_run_plan_uses_the_callers_name():
    with pytest.raises(InvalidParameter, match=r"n_losses=5 .*post-warm-up losses"):
        RunPlan.make(5, jobs_name="n_losses", unit="losses")


@numba.njit(cache=False)
def _draw(out, start, stop):
    for i in range(start, stop):
        out[i] = np.random.random()
    return stop


def _run(seed, progress):
    out = np.zeros(1000)
    state = {"done": 0}
    seed_numba(seed)

    def step(stop):
        state["done"] = _draw(out, state["done"], stop)
        return state["done"], False

    done = run_chunked(step, out.size, progress=progress, desc="test")
    return done, out


def test_seeded_chunked_runs_repeat_the_single_call():
    seed = kernel_seed(11)
    assert seed == kernel_seed(11) and seed != kernel_seed(12)
    done, one_call = _run(seed, progress=False)
    _, chunked = _run(seed, progress=True)
    assert done == 1000
    assert np.array_equal(one_call, chunked)
    assert 0.4 < one_call.mean() < 0.6  # uniform draws, not a constant


def test_run_chunked_stops_when_the_kernel_says_so():
    calls = []

    def step(stop):
        calls.append(stop)
        return min(stop, 30), stop >= 30

    assert run_chunked(step, 100, progress=True, chunks=10) == 30
    assert calls == [10, 20, 30]
