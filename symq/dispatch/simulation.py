r"""Discrete-event simulation of size-aware dispatching to m parallel FCFS servers (numba).

Backlog recursion: Poisson arrivals of rate
:math:`\lambda = \rho m / E[X]`; at each arrival every backlog drains by the interarrival time
(clipped at 0), the policy (:func:`~symq.dispatch.policies.choose_server`) picks server ``i``,
the response time is :math:`T = u_i + x` (waiting time :math:`W = u_i`) and :math:`u_i \mathrel{+}= x`.
JSQ and a score policy that reads ``n`` also need the job counts: each server keeps the completion times of its jobs in a ring
buffer (FCFS, so they are increasing) and drops those completed before the arrival.

Exponential sizes are drawn inside the kernel; other laws are pre-sampled with
``sizes.sample`` in blocks of ``2**20`` jobs.  The run length, warm-up and batches, the seeding
of the kernel from ``rng`` and the chunked progress bar come from :mod:`symq.core.simrun`.
Estimates: batch means (one long run after a warm-up, ``n_batches`` batches, Law 2015
Section 9.5.3) or independent replications.

Examples
--------
>>> from symq.dispatch.sizes import exponential
>>> est = simulate_dispatch("lwl", 2, 0.5, exponential(1.0), n_jobs=200_000, rng=1)
>>> abs(est.ET.mean - 1 / (1 - 0.5**2)) < 0.05
True
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numba
import numpy as np
from numba import types

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value
from symq.core.randomness import RngLike, as_generator
from symq.core.result import Exactness, ResultBase
from symq.core.simrun import RunPlan, kernel_seed, run_chunked, seed_numba
from symq.core.simstats import ConfidenceInterval, replication_ci

from . import exact as _exact
from .policies import RR, SCORE, BoundPolicy, DispatchPolicy, choose_server, get_policy
from .score import SCORE_TYPE, ScorePolicy, nan_score, null_score, score_argmin
from .sizes import SizeLaw

__all__ = ["DispatchEstimate", "simulate_dispatch"]

_CHUNK = 1 << 20
_OK, _OVERFLOW, _NAN_SCORE = 0, 1, 2


def _kernel_py(code, lam, xs, exp_mean, n_do, n_warm, batch_size, n_batches, thr, lam_i,
               rho_i, v, delta, c_M, u, cnt, head, comp, state_i, state_f, sum_T, sum_W, work,
               track, score, score_params):  # pragma: no cover - numba
    """Simulate ``n_do`` more jobs; the state lives in the arrays (runs continue across chunks).

    ``state_i = [jobs done, rr pointer]``, ``state_f = [t, t at the first post-warm-up
    arrival, t at the last arrival]``.  Sizes come from ``xs`` unless ``exp_mean > 0``.
    ``track``: keep the job counts (JSQ, a score reading ``n``).  ``score`` (a first-class
    function of :data:`~symq.dispatch.score.SCORE_TYPE`) decides for ``code == SCORE``.
    """
    m = u.shape[0]
    cap = comp.shape[1]
    k = state_i[0]
    rr = state_i[1]
    t = state_f[0]
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
        if code == SCORE:
            s = score_argmin(score, score_params, u, cnt, x)
            if s < 0:
                status = _NAN_SCORE
                break
        else:
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


@functools.cache
def _kernel() -> Any:
    """The simulation kernel, typed for a first-class score (compiled once, cached on disk)."""
    f8, i8 = types.float64, types.int64
    a1, a2, i1 = f8[::1], f8[:, ::1], i8[::1]
    r1, r2 = (types.Array(f8, d, "C", readonly=True) for d in (1, 2))   # inputs: any array
    sig = i8(i8, f8, r1, f8, i8, i8, i8, i8, r1, r1, r1, r2, f8, f8, a1, i1, i1, a2, i1, a1, a1,
             a1, a1, types.boolean, SCORE_TYPE, a1)
    return numba.njit(sig, cache=True)(_kernel_py)


@dataclass(frozen=True)
class DispatchEstimate(ResultBase):
    """Estimates from :func:`simulate_dispatch`.

    Attributes
    ----------
    ET, EW : ConfidenceInterval
        Mean response time and mean waiting time per job.
    n_jobs : int
        Jobs simulated (all replications, warm-up included).
    n_batches : int
        Batches of the batch-means intervals, or the number of independent replications.
    jobs_per_second : float
        Simulated jobs per second of wall-clock time (kernel and size sampling).
    loads : numpy.ndarray (m,)
        Per-server loads: work dispatched to each server per unit time after the warm-up.
    policy : str
    m : int
    rho : float
    method : str
        ``"batch_means"`` (one long run) or ``"replications"``.
    exactness : Exactness
        ``simulated``.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "EW", "policy", "n_jobs")

    ET: ConfidenceInterval
    EW: ConfidenceInterval
    n_jobs: int
    n_batches: int
    jobs_per_second: float
    loads: np.ndarray
    policy: str
    m: int
    rho: float
    method: str = "batch_means"
    exactness: Exactness = Exactness.SIMULATED


def _run(pol: BoundPolicy, sizes: SizeLaw, n_jobs: int, n_warm: int, n_batches: int,
         gen: np.random.Generator, progress: bool, desc: str, max_queue: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """One run of ``n_jobs`` jobs: batch sums of T and W, per-server loads, measured span.

    The kernel keeps its state between calls of :func:`symq.core.simrun.run_chunked`; sizes
    other than exponential are drawn in blocks of ``2**20`` whatever the chunks, so the run is
    the same with and without a progress bar.
    """
    m = pol.m
    batch_size = (n_jobs - n_warm) // n_batches
    n_warm = n_jobs - batch_size * n_batches  # leftover jobs are extra warm-up
    u = np.zeros(m)
    track = pol.tracks_counts
    score = pol.score if pol.code == SCORE else null_score()
    score_params = np.ascontiguousarray(pol.score_params, dtype=float)
    kernel = _kernel()
    cnt = np.zeros(m, dtype=np.int64)
    head = np.zeros(m, dtype=np.int64)
    comp = np.zeros((m, max_queue if track else 1))
    state_i = np.zeros(2, dtype=np.int64)
    state_f = np.zeros(3)
    sum_T = np.zeros(n_batches)
    sum_W = np.zeros(n_batches)
    work = np.zeros(m)
    exp_mean = float(sizes.mean) if sizes.is_exponential else 0.0
    seed_numba(kernel_seed(gen))
    block = {"xs": np.empty(0), "pos": 0, "drawn": 0}
    done = 0

    def step(stop: int) -> tuple[int, bool]:
        nonlocal done
        while done < stop:
            if exp_mean > 0:
                xs, n_do = block["xs"], stop - done
            else:
                if block["pos"] == block["xs"].size:       # next block of pre-drawn sizes
                    n_new = min(_CHUNK, n_jobs - block["drawn"])
                    block.update(xs=np.ascontiguousarray(sizes.sample(n_new, gen), dtype=float),
                                 pos=0, drawn=block["drawn"] + n_new)
                n_do = min(stop - done, block["xs"].size - block["pos"])
                xs = block["xs"][block["pos"]:block["pos"] + n_do]
                block["pos"] += n_do
            status = kernel(pol.code, pol.lam, xs, exp_mean, n_do, n_warm, batch_size,
                            n_batches, *pol.arrays(), u, cnt, head, comp, state_i, state_f,
                            sum_T, sum_W, work, track, score, score_params)
            if status == _NAN_SCORE:
                raise nan_score(pol.name, f"backlogs u={u.tolist()}, job {int(state_i[0])}")
            if status != _OK:
                raise InvalidParameter("max_queue", max_queue, "larger than the longest queue "
                                       "whose jobs are counted", "a server held max_queue jobs; increase "
                                       "max_queue")
            done += n_do
        return done, False

    run_chunked(step, n_jobs, progress=progress, desc=desc, unit="job")
    span = state_f[2] - state_f[1]
    loads = work / span if span > 0 else np.full(m, np.nan)
    return sum_T / batch_size, sum_W / batch_size, loads, float(span)


def _bound(policy: str | DispatchPolicy | BoundPolicy, m: int, rho: float, sizes: SizeLaw,
           policy_params: dict[str, Any]) -> BoundPolicy:
    if isinstance(policy, BoundPolicy):
        if policy.m != m or abs(policy.rho - rho) > 1e-12:
            raise InvalidParameter("policy", policy.name,
                                   f"a policy bound to m={m}, rho={rho} (it has m={policy.m}, "
                                   f"rho={policy.rho})")
        if policy_params:
            raise InvalidParameter("policy_params", policy_params, "empty for a bound policy")
        return policy
    if isinstance(policy, ScorePolicy):
        return policy.with_values(**policy_params).bind(m, rho, sizes)
    if isinstance(policy, DispatchPolicy):
        if policy_params:
            raise InvalidParameter("policy_params", policy_params,
                                   "empty for a DispatchPolicy object")
        return policy.bind(m, rho, sizes)
    return get_policy(policy, **policy_params).bind(m, rho, sizes)


def simulate_dispatch(policy: str | DispatchPolicy | BoundPolicy, m: int, rho: float,
                      sizes: Any, *, n_jobs: int = 10**6, rng: RngLike = None, warmup: float = 0.1,
                      level: float = 0.95, replications: int | None = None, n_batches: int = 30,
                      max_queue: int = 4096, progress: bool = False,
                      **policy_params: Any) -> DispatchEstimate:
    """Simulate dispatching to ``m`` FCFS servers and estimate the mean response time.

    Parameters
    ----------
    policy : str, DispatchPolicy or BoundPolicy
        A name of :data:`~symq.dispatch.policies.POLICY_NAMES` (with ``policy_params``), a
        :class:`~symq.dispatch.policies.DispatchPolicy`, a score policy
        (:func:`~symq.dispatch.score.score_policy`; ``policy_params`` are then values of its
        declared parameters) or a policy already bound to ``m, rho, sizes``.  A score runs
        inside the numba kernel as a first-class function (no Python call per job).
    m : int
        Number of servers, ``>= 1``.
    rho : float
        Load per server in ``(0, 1)``; arrival rate ``lam = rho m / E[X]``.
    sizes : job-size law
        A :class:`~symq.me.laws.PhaseType` or ``(alpha, A)`` pair, an :class:`~symq.me.ME`
        law, a frozen scipy distribution, a name (``"exp"``, ``"uniform"``, ``"h2"``) or a
        :class:`~symq.dispatch.sizes.SizeLaw`; converted by
        :func:`~symq.dispatch.sizes.as_size_law`.
    n_jobs : int
        Jobs in all (split evenly over the replications); at least 100 post-warm-up jobs per
        batch (or per replication), the rule of :class:`symq.core.simrun.RunPlan`.
    rng : seed, SeedSequence, Generator or None
        Same seed, same result.
    warmup : float
        Fraction of each run discarded, in ``[0, 1)``.
    level : float
        Confidence level of the intervals.
    replications : int or None
        If given (``>= 2``), independent runs and a Student-t interval over their means;
        otherwise one run and batch means.
    n_batches : int
        Number of batches (``>= 2``) for batch means.
    max_queue : int
        Ring-buffer capacity per server for the job counts (JSQ, a score reading ``n``).
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
    pol = _bound(policy, m, rho, sizes, policy_params)
    max_queue = integer_value("max_queue", max_queue, 2)
    reps = None if replications is None else integer_value("replications", replications, 2)
    plan = RunPlan.make(n_jobs, n_batches if reps is None else reps, warmup, level)
    gen = as_generator(rng)
    desc = f"{pol.name} m={m} rho={rho:g}"
    start = time.perf_counter()
    if reps is None:
        bT, bW, loads, _ = _run(pol, sizes, plan.n_jobs, plan.n_warm, plan.n_batches, gen,
                                progress, desc, max_queue)
        ET = replace(replication_ci(bT, plan.level), method="batch_means")
        EW = replace(replication_ci(bW, plan.level), method="batch_means")
        n_done = plan.n_jobs
    else:
        per = plan.n_jobs // reps
        means_T, means_W, all_loads = [], [], []
        for i, seq in enumerate(np.random.SeedSequence(int(gen.integers(0, 2**63 - 1)))
                                .spawn(reps)):
            bT, bW, loads, _ = _run(pol, sizes, per, int(math.floor(plan.warmup * per)), 1,
                                    np.random.default_rng(seq), progress,
                                    f"{desc} ({i + 1}/{reps})", max_queue)
            means_T.append(bT[0])
            means_W.append(bW[0])
            all_loads.append(loads)
        ET = replication_ci(means_T, plan.level)
        EW = replication_ci(means_W, plan.level)
        loads = np.mean(all_loads, axis=0)
        n_done = per * reps
    elapsed = time.perf_counter() - start
    return DispatchEstimate(ET=ET, EW=EW, n_jobs=int(n_done), n_batches=plan.n_batches,
                            jobs_per_second=n_done / elapsed if elapsed > 0 else math.inf,
                            loads=np.asarray(loads), policy=pol.name, m=m, rho=rho,
                            method="batch_means" if reps is None else "replications")
