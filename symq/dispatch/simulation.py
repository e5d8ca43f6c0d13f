r"""Discrete-event simulation of size-aware dispatching to m parallel FCFS servers (numba).

Backlog recursion: Poisson arrivals of rate
:math:`\lambda = \rho m / E[X]`; at each arrival every backlog drains by the interarrival time
(clipped at 0), the policy (:func:`~symq.dispatch.policies.choose_server`) picks server ``i``,
the response time is :math:`T = u_i + x` (waiting time :math:`W = u_i`) and :math:`u_i \mathrel{+}= x`.
JSQ also needs the job counts: each server keeps the completion times of its jobs in a ring
buffer (FCFS, so they are increasing) and drops those completed before the arrival.

Exponential sizes are drawn inside the kernel; other laws are pre-sampled with
``sizes.sample`` in chunks of ``2**20`` jobs.  Estimates: batch means (one long run after a
warm-up, ``batches`` batches, Law 2015 Section 9.5.3) or independent replications.

Examples
--------
>>> from symq.dispatch.sizes import exponential
>>> est = simulate_dispatch("lwl", 2, 0.5, exponential(1.0), n_jobs=200_000, rng=1)
>>> abs(est.ET.mean - 1 / (1 - 0.5**2)) < 0.05
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numba
import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.randomness import RngLike, as_generator
from symq.core.simstats import ConfidenceInterval, replication_ci

from . import exact as _exact
from .policies import JSQ, RR, BoundPolicy, Policy, choose_server, get_policy

__all__ = ["DispatchEstimate", "simulate_dispatch"]

_CHUNK = 1 << 20
_OK, _OVERFLOW = 0, 1


@numba.njit(cache=True)
def _kernel(code: int, lam: float, xs: np.ndarray, exp_mean: float, n_do: int,
            n_warm: int, batch_size: int, n_batches: int, thr: np.ndarray, lam_i: np.ndarray,
            rho_i: np.ndarray, v: np.ndarray, delta: float, c_M: float, u: np.ndarray,
            cnt: np.ndarray, head: np.ndarray, comp: np.ndarray, state_i: np.ndarray,
            state_f: np.ndarray, sum_T: np.ndarray, sum_W: np.ndarray, work: np.ndarray) -> int:
    """Simulate ``n_do`` more jobs; the state lives in the arrays (runs continue across chunks).

    ``state_i = [jobs done, rr pointer]``, ``state_f = [t, t at the first post-warm-up
    arrival, t at the last arrival]``.  Sizes come from ``xs`` unless ``exp_mean > 0``.
    """
    m = u.shape[0]
    cap = comp.shape[1]
    k = state_i[0]
    rr = state_i[1]
    t = state_f[0]
    track = code == JSQ
    status = _OK
    for j in range(n_do):
        a = -math.log(1.0 - np.random.random()) / lam
        t += a
        for i in range(m):
            w = u[i] - a
            u[i] = w if w > 0.0 else 0.0
        if track:
            for i in range(m):
                while cnt[i] > 0 and comp[i, head[i]] <= t:
                    head[i] = (head[i] + 1) % cap
                    cnt[i] -= 1
        if exp_mean > 0.0:
            x = -math.log(1.0 - np.random.random()) * exp_mean
        else:
            x = xs[j]
        s = choose_server(code, u, cnt, x, rr, thr, lam_i, rho_i, v, delta, c_M)
        if code == RR:
            rr = (rr + 1) % m
        wait = u[s]
        if track:
            if cnt[s] >= cap:
                status = _OVERFLOW
                break
            comp[s, (head[s] + cnt[s]) % cap] = t + wait + x
            cnt[s] += 1
        u[s] = wait + x
        if k >= n_warm:
            if k == n_warm:
                state_f[1] = t
            b = (k - n_warm) // batch_size
            if b < n_batches:
                sum_T[b] += wait + x
                sum_W[b] += wait
                work[s] += x
                state_f[2] = t
        k += 1
    state_i[0] = k
    state_i[1] = rr
    state_f[0] = t
    return status


@numba.njit(cache=True)
def _seed(seed: int) -> None:
    np.random.seed(seed)


@dataclass(frozen=True)
class DispatchEstimate:
    """Estimates from :func:`simulate_dispatch`.

    Attributes
    ----------
    ET, EW : ConfidenceInterval
        Mean response time and mean waiting time per job.
    n_jobs : int
        Jobs simulated (all replications, warm-up included).
    jobs_per_second : float
        Simulated jobs per second of wall-clock time (kernel and size sampling).
    loads : numpy.ndarray (m,)
        Per-server loads: work dispatched to each server per unit time after the warm-up.
    policy : str
    m : int
    rho : float
    """

    ET: ConfidenceInterval
    EW: ConfidenceInterval
    n_jobs: int
    jobs_per_second: float
    loads: np.ndarray
    policy: str
    m: int
    rho: float


def _run(pol: BoundPolicy, sizes: Any, n_jobs: int, warmup: float, n_batches: int,
         gen: np.random.Generator, bar: Any, max_queue: int) -> tuple[np.ndarray, np.ndarray,
                                                                       np.ndarray, float]:
    m = pol.m
    n_warm = int(math.floor(warmup * n_jobs))
    batch_size = (n_jobs - n_warm) // n_batches
    n_warm = n_jobs - batch_size * n_batches  # leftover jobs are extra warm-up
    u = np.zeros(m)
    track = pol.code == JSQ
    cnt = np.zeros(m, dtype=np.int64)
    head = np.zeros(m, dtype=np.int64)
    comp = np.zeros((m, max_queue if track else 1))
    state_i = np.zeros(2, dtype=np.int64)
    state_f = np.zeros(3)
    sum_T = np.zeros(n_batches)
    sum_W = np.zeros(n_batches)
    work = np.zeros(m)
    exp_mean = float(sizes.mean) if getattr(sizes, "is_exponential", False) else 0.0
    _seed(int(gen.integers(0, 2**32 - 1)))
    chunk = n_jobs if (exp_mean > 0 and bar is None) else _CHUNK
    done = 0
    empty = np.empty(0)
    while done < n_jobs:
        n_do = min(chunk, n_jobs - done)
        xs = empty if exp_mean > 0 else np.ascontiguousarray(sizes.sample(n_do, gen), dtype=float)
        status = _kernel(pol.code, pol.lam, xs, exp_mean, n_do, n_warm, batch_size, n_batches,
                         *pol.arrays(), u, cnt, head, comp, state_i, state_f, sum_T, sum_W, work)
        if status != _OK:
            raise InvalidParameter("max_queue", max_queue, "larger than the longest JSQ queue",
                                   "a server held max_queue jobs; increase max_queue")
        done += n_do
        if bar is not None:
            bar.update(n_do)
    span = state_f[2] - state_f[1]
    loads = work / span if span > 0 else np.full(m, np.nan)
    return sum_T / batch_size, sum_W / batch_size, loads, float(span)


def simulate_dispatch(policy: str | Policy | BoundPolicy, m: int, rho: float, sizes: Any,
                      n_jobs: int = 10**6, *, rng: RngLike = None, warmup: float = 0.1,
                      level: float = 0.95, replications: int | None = None, batches: int = 30,
                      max_queue: int = 4096, progress: bool = False,
                      **policy_params: Any) -> DispatchEstimate:
    """Simulate dispatching to ``m`` FCFS servers and estimate the mean response time.

    Parameters
    ----------
    policy : str, Policy or BoundPolicy
        A name of :data:`~symq.dispatch.policies.POLICY_NAMES` (with ``policy_params``), a
        :class:`~symq.dispatch.policies.Policy` or a policy already bound to ``m, rho, sizes``.
    m : int
        Number of servers, ``>= 1``.
    rho : float
        Load per server in ``(0, 1)``; arrival rate ``lam = rho m / E[X]``.
    sizes : SizeLaw
        Job-size law (:mod:`symq.dispatch.sizes`).
    n_jobs : int
        Jobs in all (split evenly over the replications), ``>= 100 * batches`` (batch means) or
        ``>= 100 * replications``.
    rng : seed, SeedSequence, Generator or None
        Same seed, same result.
    warmup : float
        Fraction of each run discarded, in ``[0, 1)``.
    level : float
        Confidence level of the intervals.
    replications : int or None
        If given (``>= 2``), independent runs and a Student-t interval over their means;
        otherwise one run and batch means.
    batches : int
        Number of batches (``>= 2``) for batch means.
    max_queue : int
        Ring-buffer capacity per server for JSQ's job counts.
    progress : bool
        tqdm progress bar.

    Returns
    -------
    DispatchEstimate

    Raises
    ------
    InvalidParameter, StabilityError, UnknownName
        Bad input, ``rho >= 1``, unknown policy name.
    """
    m, rho, sizes, lam = _exact._check_common(m, rho, sizes)
    if isinstance(policy, BoundPolicy):
        if policy.m != m or abs(policy.rho - rho) > 1e-12:
            raise InvalidParameter("policy", policy.name,
                                   f"a policy bound to m={m}, rho={rho} (it has m={policy.m}, "
                                   f"rho={policy.rho})")
        if policy_params:
            raise InvalidParameter("policy_params", policy_params, "empty for a bound policy")
        pol = policy
    else:
        if isinstance(policy, Policy):
            if policy_params:
                raise InvalidParameter("policy_params", policy_params, "empty for a Policy object")
            spec = policy
        else:
            spec = get_policy(policy, **policy_params)
        pol = spec.bind(m, rho, sizes)
    batches = integer_value("batches", batches, 2)
    max_queue = integer_value("max_queue", max_queue, 2)
    warmup = real_value("warmup", warmup, "a fraction in [0, 1)", lambda w: 0 <= w < 1)
    level = real_value("level", level, "a real number in (0, 1)", lambda c: 0 < c < 1)
    reps = None if replications is None else integer_value("replications", replications, 2)
    units = batches if reps is None else reps
    n_jobs = integer_value("n_jobs", n_jobs, 100 * units)
    gen = as_generator(rng)

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_jobs, unit="job", desc=f"{pol.name} m={m} rho={rho:g}")
    start = time.perf_counter()
    try:
        if reps is None:
            bT, bW, loads, _ = _run(pol, sizes, n_jobs, float(warmup), batches, gen, bar,
                                    max_queue)
            ET = replace(replication_ci(bT, level), method="batch_means")
            EW = replace(replication_ci(bW, level), method="batch_means")
        else:
            per = n_jobs // reps
            means_T, means_W, all_loads = [], [], []
            for seq in np.random.SeedSequence(int(gen.integers(0, 2**63 - 1))).spawn(reps):
                bT, bW, loads, _ = _run(pol, sizes, per, float(warmup), 1,
                                        np.random.default_rng(seq), bar, max_queue)
                means_T.append(bT[0])
                means_W.append(bW[0])
                all_loads.append(loads)
            ET = replication_ci(means_T, level)
            EW = replication_ci(means_W, level)
            loads = np.mean(all_loads, axis=0)
            n_jobs = per * reps
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - start
    return DispatchEstimate(ET=ET, EW=EW, n_jobs=int(n_jobs),
                            jobs_per_second=n_jobs / elapsed if elapsed > 0 else math.inf,
                            loads=np.asarray(loads), policy=pol.name, m=m, rho=rho)
