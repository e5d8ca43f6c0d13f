"""Each policy code reaches its own compiled kernel with its own decision.

The simulator compiles one kernel per policy code (with or without speeds and job counts);
these tests replay short runs of the deterministic policies in Python, with the decision of
:meth:`BoundPolicy.decide` for each job and the arrival and size draws of numba's stream
(the Mersenne Twister of ``numpy.random.RandomState``, seeded as the kernel is), and compare
the per-batch mean response times.  The policies that draw for their decisions (RND, JSQ
ties, JIQ) are checked against exact values in test_simulation.py, test_jiq.py.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from symq.core.simrun import kernel_seed
from symq.dispatch import score_policy
from symq.dispatch.policies import bind_policy, get_policy, rnd_value_table
from symq.dispatch.simplex import colex_states
from symq.dispatch.simulation.kernel import run_policy
from symq.dispatch.simulation.simulate import simulate_dispatch
from symq.laws import Exponential

X = Exponential(1.0)
JOBS, BATCHES = 3000, 15


def replay(pol, seed, rr=False):
    """Per-batch mean T of JOBS jobs from an empty system, decided by ``pol.decide``."""
    draws = np.random.RandomState(kernel_seed(np.random.default_rng(seed)))
    spd = np.ones(pol.m) if pol.speeds is None else pol.speeds
    u = np.zeros(pol.m)
    sums = np.zeros(BATCHES)
    per = JOBS // BATCHES
    for j in range(JOBS):
        a = -math.log(1.0 - draws.random_sample()) / pol.lam
        u = np.maximum(u - a * spd, 0.0)
        x = -math.log(1.0 - draws.random_sample())
        s = j % pol.m if rr else int(pol.decide(u[None, :], [x])[0])
        sums[j // per] += (u[s] + x) / spd[s]
        u[s] += x
    return sums / per


def simulated(pol, seed):
    return run_policy(pol, X, JOBS, 0, BATCHES, np.random.default_rng(seed), False, "", 64,
                      np.empty(0)).T


def lookup_simplex(m, rho):
    N, delta = 12, 0.5
    c = rho / (2 * (1 - rho))                   # (lam/m)/(2(1 - rho)) with E[X] = 1
    v = c * ((colex_states(m, N) * delta) ** 2).sum(axis=1)
    return get_policy("lookup", result=SimpleNamespace(m=m, v=v, N=N, delta=delta, c_M=c,
                                                       symmetric=True))


def table(rho):
    v, c = rnd_value_table(2, rho, X, 60, 0.1)
    return get_policy("lookup", v=v, delta=0.1, c_M=c)


CASES = [
    ("lwl", 2, None), ("lwl", 4, None), ("lwl", 3, [1.0, 1.5, 2.0]),
    ("rr", 3, None), ("sita", 2, None), ("sita-e", 3, None),
    ("fpi-rnd", 3, None), ("fpi-sita", 2, None), ("fpi-rnd", 2, [1.0, 3.0]),
    ("table", 2, None), ("table", 2, [1.0, 1.25]), ("simplex", 3, None),
    ("score", 3, None), ("score", 3, [2.0, 1.0, 1.0]),
]


@pytest.mark.parametrize("name, m, speeds", CASES)
def test_kernel_decides_as_the_policy(name, m, speeds):
    rho = 0.8
    policy = {"table": lambda: table(rho), "simplex": lambda: lookup_simplex(m, rho),
              "score": lambda: score_policy("u", "u + x*i/8")}.get(name, lambda: name)()
    if isinstance(policy, str):
        policy = get_policy(policy, **({"h": 2.0} if policy in ("sita", "fpi-sita") else {}))
    pol = bind_policy(policy, m, rho, X, speeds)
    got = simulated(pol, 7)
    want = replay(pol, 7, rr=name == "rr")
    assert np.allclose(got, want, rtol=1e-12, atol=0), (got, want)


@pytest.mark.parametrize("policy", ["rnd", "jsq", "jiq", "jiq-jsq", "lwl", "sita-e"])
def test_same_seed_same_answer_through_both_entry_points(policy):
    """A name and a policy bound beforehand run the same kernel with the same draws."""
    bound = get_policy(policy).bind(3, 0.7, X)
    a = simulate_dispatch(policy, 3, 0.7, X, n_jobs=60_000, rng=5)
    b = simulate_dispatch(bound, 3, 0.7, X, n_jobs=60_000, rng=5)
    assert a.ET == b.ET and a.EW == b.EW and np.array_equal(a.loads, b.loads)
    c = simulate_dispatch(policy, 3, 0.7, X, n_jobs=60_000, rng=6)
    assert c.ET.mean != a.ET.mean


def test_lwl_mm2_at_high_load():
    """LWL with Exp(1) sizes is M/M/2: E[T] = 1 + C(2, 2 rho)/(2 (1 - rho)) = 1/(1 - rho^2)."""
    rho = 0.9
    est = simulate_dispatch("lwl", 2, rho, X, n_jobs=4_000_000, rng=11, level=0.999)
    assert est.ET.contains(1 / (1 - rho ** 2)), est.ET
