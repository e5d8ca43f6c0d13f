r"""Discrete-event simulation of size-aware dispatching to m parallel FCFS servers (numba).

Backlog recursion: Poisson arrivals of rate :math:`\lambda = \rho \sum_i s_i / E[X]`
(:math:`\rho m / E[X]` for unit speeds); at each arrival every backlog (work) drains by its
speed times the interarrival time (clipped at 0), the policy
(:func:`~symq.dispatch.policies.decisions.choose_server`) picks server ``i``, the response time is
:math:`T = (u_i + x)/s_i` (waiting time :math:`W = u_i/s_i`) and :math:`u_i \mathrel{+}= x`.
JSQ, JIQ-JSQ and a score policy that reads ``n`` also need the job counts: each server keeps
the completion times of its jobs in a ring buffer (FCFS, so they are increasing) and drops
those completed before the arrival.  With ``size_bins`` the kernel also sums T and counts the
jobs per size bin and batch, so that :math:`E[T \mid X \in \text{bin}]` gets a batch-means
interval per bin (:mod:`symq.dispatch.simulation.fairness`).

Exponential sizes are drawn inside the kernel; other laws are pre-sampled with
``sizes.sample`` in blocks of ``2**20`` jobs.  The run length, the seeding of the kernel from
``rng`` and the chunked progress bar come from :mod:`symq.core.simrun`.  Estimates: one long run
(the run starts empty) whose per-job T and W are summed in a few thousand slices of equal job
counts after the ``warmup`` fraction; :func:`symq.core.simoutput.analyse_ratio` drops the rest
of the transient by MSER-5 and merges the slices into ``n_batches`` batches long enough for
their means to be uncorrelated (lag-1 test), with a ``doubt`` on the interval when the run is
too short for either (Law 2015, Sections 9.5.1 and 9.5.3); or independent replications.

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
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, NumericalFailure
from symq.core.parameters import integer_value, real_value
from symq.core.randomness import RngLike, as_generator
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import (
    RELAXATION_RUNS,
    analyse_ratio,
    mser_truncation,
    relaxation_jobs,
    required_run_length,
)
from symq.core.simrun import RUN_SLICES, RunPlan, kernel_seed, run_chunked, seed_numba
from symq.core.simstats import ConfidenceInterval, ratio_batch_means, replication_ci

from ..policies import BoundPolicy, DispatchPolicy, ScorePolicy, bind_policy, get_policy
from ..policies.checks import check_model
from ..policies.decisions import LOOKUP_SIMPLEX, RR, SCORE, choose_general, choose_unit
from ..policies.score import SCORE_TYPE, nan_score, null_score, score_argmin
from ..sizebins import size_edges
from ..sizes import SizeLaw
from ..policies.speeds import check_speeds, score_argmin_speeds

__all__ = ["DispatchEstimate", "simulate_dispatch"]

_CHUNK = 1 << 20
_OK, _OVERFLOW, _NAN_SCORE = 0, 1, 2


def _kernel_py(code, lam, xs, exp_mean, n_do, n_warm, batch_size, n_batches, thr, lam_i,
               rho_i, v, delta, c_M, vp, B, spd, cum, u, cnt, head, comp, state_i, state_f,
               sum_T, sum_W, work, track, score, score_params, edges, bin_T,
               bin_n):  # pragma: no cover - numba
    """Simulate ``n_do`` more jobs; the state lives in the arrays (runs continue across chunks).

    ``state_i = [jobs done, rr pointer]``, ``state_f = [t, t at the first post-warm-up
    arrival, t at the last arrival]``.  Sizes come from ``xs`` unless ``exp_mean > 0``.
    ``track``: keep the job counts (JSQ, JIQ-JSQ, a score reading ``n``).  ``score`` (a
    first-class function of :data:`~symq.dispatch.policies.score.SCORE_TYPE`) decides for
    ``code == SCORE``.  ``spd``: server speeds (empty: unit speeds, the unit-speed arithmetic
    exactly as without speeds).  ``bin_T``, ``bin_n`` (batches x bins, zero bins: off): the
    sums of T and the job counts per size bin ``edges[q] <= x < edges[q + 1]``.
    """
    m = u.shape[0]
    cap = comp.shape[1]
    het = spd.shape[0] > 0
    nbins = bin_T.shape[1]
    k = state_i[0]
    rr = state_i[1]
    t = state_f[0]
    status = _OK
    for j in range(n_do):
        a = -math.log(1.0 - np.random.random()) / lam
        t += a
        if het:
            for i in range(m):
                w = u[i] - a * spd[i]
                u[i] = w if w > 0.0 else 0.0
        else:
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
            if het:
                s = score_argmin_speeds(score, score_params, u, cnt, spd, x)
            else:
                s = score_argmin(score, score_params, u, cnt, x)
            if s < 0:
                status = _NAN_SCORE
                break
        elif het or code == LOOKUP_SIMPLEX:
            s = choose_general(code, u, cnt, x, rr, thr, lam_i, rho_i, v, delta, c_M, vp, B,
                               spd, cum)
        else:   # the unit-speed decision, inlined by LLVM (a call with all arrays is slower)
            s = choose_unit(code, u, cnt, x, rr, thr, lam_i, rho_i, v, delta, c_M)
        if code == RR:
            rr = (rr + 1) % m
        wait = u[s]
        if het:
            resp = (wait + x) / spd[s]
            queued = wait / spd[s]
        else:
            resp = wait + x
            queued = wait
        if track:
            if cnt[s] >= cap:
                status = _OVERFLOW
                break
            comp[s, (head[s] + cnt[s]) % cap] = t + resp if het else t + wait + x
            cnt[s] += 1
        u[s] = wait + x
        if k >= n_warm:
            if k == n_warm:
                state_f[1] = t
            b = (k - n_warm) // batch_size
            if b < n_batches:
                sum_T[b] += resp
                sum_W[b] += queued
                work[s] += x
                state_f[2] = t
                if nbins > 0 and x >= edges[0] and x < edges[nbins]:
                    lo = 0
                    hi = nbins
                    while hi - lo > 1:      # edges[lo] <= x < edges[hi]
                        mid = (lo + hi) // 2
                        if x >= edges[mid]:
                            lo = mid
                        else:
                            hi = mid
                    bin_T[b, lo] += resp
                    bin_n[b, lo] += 1.0
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
    rb = types.Array(i8, 2, "C", readonly=True)
    sig = i8(i8, f8, r1, f8, i8, i8, i8, i8, r1, r1, r1, r2, f8, f8, r1, rb, r1, r1, a1, i1, i1,
             a2, i1, a1, a1, a1, a1, types.boolean, SCORE_TYPE, a1, r1, a2, a2)
    return numba.njit(sig, cache=True)(_kernel_py)


@dataclass(frozen=True)
class DispatchEstimate(ResultBase):
    """Estimates from :func:`simulate_dispatch`.

    Attributes
    ----------
    ET, EW : ConfidenceInterval
        Mean response time and mean waiting time per job (time units: with speeds a job of
        size ``x`` at backlog ``u_i`` has :math:`T = (u_i + x)/s_i`, :math:`W = u_i/s_i`).
    n_jobs : int
        Jobs simulated (all replications, warm-up included).
    n_batches : int
        Batches of the batch-means intervals, or the number of independent replications.
    jobs_per_second : float
        Simulated jobs per second of wall-clock time (kernel and size sampling).
    loads : numpy.ndarray (m,)
        Per-server loads (utilisations): work dispatched to each server per unit time after
        the warm-up, divided by its speed.
    policy : str
    m : int
    rho : float
        Load :math:`\\lambda E[X]/\\sum_i s_i`.
    method : str
        ``"batch_means"`` (one long run) or ``"replications"``.
    exactness : Exactness
        ``simulated``.
    speeds : numpy.ndarray or None
        Server speeds (``None``: unit speeds).
    size_edges : numpy.ndarray or None
        Edges of the size bins (``size_bins=``).
    ET_by_size : tuple of ConfidenceInterval or None
        :math:`E[T \\mid e_q \\le X < e_{q+1}]` per bin, each at :attr:`size_level`.
    jobs_by_size : numpy.ndarray or None
        Post-warm-up jobs per bin.
    size_level : float or None
        Confidence level of each bin's interval (by default the Bonferroni level
        ``1 - (1 - level)/k``, so that the ``k`` intervals hold jointly at ``level``).
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
    speeds: np.ndarray | None = None
    size_edges: np.ndarray | None = None
    ET_by_size: tuple[ConfidenceInterval, ...] | None = None
    jobs_by_size: np.ndarray | None = None
    size_level: float | None = None


@dataclass
class _Sums:
    """Per-batch outputs of one run."""

    T: np.ndarray
    W: np.ndarray
    loads: np.ndarray
    bin_T: np.ndarray
    bin_n: np.ndarray


def _run(pol: BoundPolicy, sizes: SizeLaw, n_jobs: int, n_warm: int, n_batches: int,
         gen: np.random.Generator, progress: bool, desc: str, max_queue: int,
         edges: np.ndarray) -> _Sums:
    """One run of ``n_jobs`` jobs: batch means of T and W, per-server loads, bin sums.

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
    nbins = max(edges.size - 1, 0)
    bin_T = np.zeros((n_batches, nbins))
    bin_n = np.zeros((n_batches, nbins))
    exp_mean = float(sizes.mean) if sizes.is_exponential else 0.0
    arrays = pol.arrays()
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
                            n_batches, *arrays, u, cnt, head, comp, state_i, state_f,
                            sum_T, sum_W, work, track, score, score_params, edges, bin_T, bin_n)
            if status == _NAN_SCORE:
                raise nan_score(pol.name, f"backlogs u={u.tolist()}, job {int(state_i[0])}")
            if status != _OK:
                raise InvalidParameter("max_queue", max_queue, "larger than the longest queue "
                                       "whose jobs are counted", "a server held max_queue jobs; increase "
                                       "max_queue")
            done += n_do
        return done, False

    run_chunked(step, n_jobs, progress=progress, desc=desc, unit="job")
    with np.errstate(invalid="ignore"):
        span = state_f[2] - state_f[1]  # inf - inf at a load below 1e-300: the loads are 0
    loads = work / span if span > 0 else np.zeros(m) if math.isnan(span) else np.full(m, np.nan)
    if pol.speeds is not None:
        loads = loads / pol.speeds
    return _Sums(sum_T / batch_size, sum_W / batch_size, loads, bin_T, bin_n)


def _slices(jobs: int, n_batches: int) -> int:
    """Slices of a batch-means run: about :data:`~symq.core.simrun.RUN_SLICES`, a multiple of
    ``n_batches`` (the size bins merge them into batches), at least 8 jobs each
    (:func:`~symq.core.simoutput.analyse_ratio` merges them)."""
    most = max(jobs // 8, n_batches)
    per = max(RUN_SLICES // n_batches, 1)
    return max(min(per * n_batches, most - most % n_batches), n_batches)


def _short_run(plan: RunPlan, pol: BoundPolicy, sizes: SizeLaw) -> str:
    """A doubt when the run is shorter than the relaxation rule of every symq simulator
    (:func:`~symq.core.simoutput.required_run_length`: each batch spans
    :data:`~symq.core.simoutput.RELAXATION_RUNS` relaxation times of a server's queue, which
    receives one job in ``m``); empty otherwise."""
    scv = float(sizes.scv)
    need = required_run_length(pol.rho, scv, plan.n_batches, per_queue=pol.m)
    if plan.n_jobs >= need:
        return ""
    return (f"run shorter than the relaxation rule: each of the m={pol.m} queues relaxes in "
            f"about (1 + scv)/(1 - rho)^2 = {relaxation_jobs(pol.rho, scv):.3g} of its jobs, "
            f"and each of the {plan.n_batches} batches should span {RELAXATION_RUNS:g} of "
            f"those; a run of about {need:.3g} jobs would do")


def _with_doubt(ci: ConfidenceInterval, doubt: str) -> ConfidenceInterval:
    """``ci`` with ``doubt`` added to its own."""
    if not doubt:
        return ci
    return replace(ci, doubt="; ".join(d for d in (doubt, ci.doubt) if d))


def _bound(policy: str | DispatchPolicy | BoundPolicy, m: int, rho: float, sizes: SizeLaw,
           speeds: Any, policy_params: dict[str, Any]) -> BoundPolicy:
    if isinstance(policy, BoundPolicy):
        if policy.m != m or abs(policy.rho - rho) > 1e-12:
            raise InvalidParameter("policy", policy.name,
                                   f"a policy bound to m={m}, rho={rho} (it has m={policy.m}, "
                                   f"rho={policy.rho})")
        if policy_params:
            raise InvalidParameter("policy_params", policy_params, "empty for a bound policy")
        spd = check_speeds(speeds, m)
        if speeds is not None and not (
                (spd is None and policy.speeds is None)
                or (spd is not None and policy.speeds is not None
                    and np.array_equal(spd, policy.speeds))):
            raise InvalidParameter("speeds", np.asarray(speeds).tolist(), "omitted or the "
                                   "speeds the policy was bound with ("
                                   + ("unit" if policy.speeds is None
                                      else str(policy.speeds.tolist())) + ")")
        return policy
    if isinstance(policy, ScorePolicy):
        return bind_policy(policy.with_values(**policy_params), m, rho, sizes, speeds)
    if isinstance(policy, DispatchPolicy):
        if policy_params:
            raise InvalidParameter("policy_params", policy_params,
                                   "empty for a DispatchPolicy object")
        return bind_policy(policy, m, rho, sizes, speeds)
    return get_policy(policy, **policy_params).bind(m, rho, sizes, speeds=speeds)


def _bin_intervals(sums: list[_Sums], edges: np.ndarray, level: float, replications: bool,
                   n_batches: int) -> tuple[tuple[ConfidenceInterval, ...], np.ndarray]:
    """Per-bin intervals of :math:`E[T \\mid \\text{bin}]`: batch-means ratios (sum of T over
    the count per batch, :func:`~symq.core.simstats.ratio_batch_means`), or a Student-t interval
    over the replications' ratios."""
    bin_T = np.concatenate([r.bin_T for r in sums])
    bin_n = np.concatenate([r.bin_n for r in sums])
    if not replications:
        # the fine slices of one run after its MSER warm-up (that of ET), merged into
        # n_batches batches (the leftover at the start joins the warm-up)
        drop = mser_truncation(sums[0].T, batch=1).drop
        per = (bin_T.shape[0] - drop) // n_batches or bin_T.shape[0] // n_batches
        keep = slice(bin_T.shape[0] - per * n_batches, None)
        bin_T = bin_T[keep].reshape(n_batches, per, -1).sum(axis=1)
        bin_n = bin_n[keep].reshape(n_batches, per, -1).sum(axis=1)
    out = []
    for q in range(edges.size - 1):
        if np.any(bin_n[:, q] == 0):
            raise InvalidParameter("size_bins", edges.tolist(), "bins that receive jobs in "
                                   "every batch", f"bin [{edges[q]:g}, {edges[q + 1]:g}) got no "
                                   "job in some batch: use wider bins or more jobs")
        if replications:
            out.append(replication_ci(bin_T[:, q] / bin_n[:, q], level))
        else:
            out.append(ratio_batch_means(bin_T[:, q], bin_n[:, q], bin_n.shape[0], level))
    return tuple(out), bin_n.sum(axis=0)


def simulate_dispatch(policy: str | DispatchPolicy | BoundPolicy, m: int, rho: float,
                      sizes: Any, *, n_jobs: int = 10**6, rng: RngLike = None, warmup: float = 0.1,
                      level: float = 0.95, replications: int | None = None, n_batches: int = 30,
                      max_queue: int = 4096, progress: bool = False,
                      speeds: ArrayLike | None = None, size_bins: int | ArrayLike | None = None,
                      size_level: float | None = None,
                      **policy_params: Any) -> DispatchEstimate:
    """Simulate dispatching to ``m`` FCFS servers and estimate the mean response time.

    Parameters
    ----------
    policy : str, DispatchPolicy or BoundPolicy
        A name of :data:`~symq.dispatch.policies.named.POLICY_NAMES` (with ``policy_params``), a
        :class:`~symq.dispatch.policies.policy.DispatchPolicy`, a score policy
        (:func:`~symq.dispatch.policies.policy.score_policy`; ``policy_params`` are then values of its
        declared parameters) or a policy already bound to ``m, rho, sizes`` (and speeds).  A
        score runs inside the numba kernel as a first-class function (no Python call per job).
    m : int
        Number of servers, ``>= 1``.
    rho : float
        Load in ``(0, 1)``: :math:`\\rho = \\lambda E[X]/\\sum_i s_i`, so the arrival rate is
        ``lam = rho sum(speeds) / E[X]`` (``rho m / E[X]`` for unit speeds).
    sizes : job-size law
        A :class:`~symq.laws.PhaseType` or ``(alpha, A)`` pair, an :class:`~symq.me.ME`
        law, a frozen scipy distribution, a name (``"exp"``, ``"uniform"``, ``"h2"``) or a
        :class:`~symq.dispatch.sizes.SizeLaw`; converted by
        :func:`~symq.dispatch.sizes.as_size_law`.
    n_jobs : int
        Jobs in all (split evenly over the replications); at least 100 post-warm-up jobs per
        batch (or per replication), the rule of :class:`symq.core.simrun.RunPlan`.
    rng : seed, SeedSequence, Generator or None
        Same seed, same result.
    warmup : float
        Fraction of each replication discarded, in ``[0, 1)``.  One long run (batch means)
        chooses its warm-up from the data (MSER-5, :func:`~symq.core.simoutput.analyse_ratio`);
        ``warmup`` then only enters the check of the run length (:class:`~symq.core.simrun.RunPlan`).
    level : float
        Confidence level of the intervals.
    replications : int or None
        If given (``>= 2``), independent runs and a Student-t interval over their means;
        otherwise one run and batch means.
    n_batches : int
        Number of batches (``>= 2``) for batch means.
    max_queue : int
        Ring-buffer capacity per server for the job counts (JSQ, JIQ-JSQ, a score reading
        ``n``).
    progress : bool
        tqdm progress bar.
    speeds : array_like of m positive reals, optional
        Server speeds (default all 1): server ``i`` drains its backlog at rate ``speeds[i]``;
        what each policy does with speeds is stated in :mod:`symq.dispatch.policies.named`.  Unit
        speeds run the same arithmetic as no speeds (the same result bit for bit).
    size_bins : int or array_like, optional
        Also estimate :math:`E[T \\mid X \\in \\text{bin}]`: ``k`` equiprobable bins of the size
        law, or the bin edges (:func:`~symq.dispatch.sizebins.size_edges`).
    size_level : float, optional
        Level of each bin's interval; default ``1 - (1 - level)/k`` (Bonferroni: the ``k``
        intervals hold jointly at ``level``).

    Returns
    -------
    DispatchEstimate
        Its intervals carry ``run_length`` and a ``doubt`` when the run's diagnostics question
        them (MSER warm-up not over, batch means still correlated) or the run is shorter than
        :func:`~symq.core.simoutput.required_run_length` for one server's queue (each receives
        one job in ``m``).

    Raises
    ------
    InvalidParameter, StabilityError, UnknownName
        Bad input, ``rho >= 1``, a static policy that overloads a server, unknown policy name,
        a size bin without jobs in some batch.
    """
    m, rho, sizes, _ = check_model(m, rho, sizes)
    typed_speeds, shift = speeds, 0
    if speeds is not None and not isinstance(policy, (BoundPolicy, ScorePolicy)):
        spd = check_speeds(speeds, m)
        if spd is not None:
            # run at speeds scaled by a power of two (exactly) to a largest speed near 1: the
            # run is the same bit for bit, its times scaled by 2**shift, wherever the speeds lie
            shift = int(np.frexp(float(np.max(spd)))[1]) - 1
            speeds = np.ldexp(spd, -shift)
    pol = _bound(policy, m, rho, sizes, speeds, policy_params)
    max_queue = integer_value("max_queue", max_queue, 2)
    reps = None if replications is None else integer_value("replications", replications, 2)
    plan = RunPlan.make(n_jobs, n_batches if reps is None else reps, warmup, level)
    edges = (np.empty(0) if size_bins is None
             else np.ascontiguousarray(size_edges(sizes, size_bins), dtype=float))
    k = max(edges.size - 1, 1)
    bin_level = (1.0 - (1.0 - plan.level) / k if size_level is None
                 else real_value("size_level", size_level, "a real number in (0, 1)",
                                 lambda x: 0.0 < x < 1.0))
    gen = as_generator(rng)
    desc = f"{pol.name} m={m} rho={rho:g}"
    start = time.perf_counter()
    if reps is None:
        # the whole run in fine slices of equal job counts: the output analysis drops the
        # transient (MSER) and merges the slices into uncorrelated batches
        slices = _slices(plan.n_jobs, plan.n_batches)
        sums = [_run(pol, sizes, plan.n_jobs, 0, slices, gen, progress, desc, max_queue, edges)]
        ones = np.ones(slices)
        short = _short_run(plan, pol, sizes)
        ET, EW = (_with_doubt(analyse_ratio(x, ones, plan.n_batches, plan.level,
                                            run_length=plan.n_jobs), short)
                  for x in (sums[0].T, sums[0].W))
        loads = sums[0].loads
        n_done = plan.n_jobs
    else:
        per = plan.n_jobs // reps
        sums = [_run(pol, sizes, per, int(math.floor(plan.warmup * per)), 1,
                     np.random.default_rng(seq), progress, f"{desc} ({i + 1}/{reps})",
                     max_queue, edges)
                for i, seq in enumerate(np.random.SeedSequence(int(gen.integers(0, 2**63 - 1)))
                                        .spawn(reps))]
        n_done = per * reps
        ET = replace(replication_ci([r.T[0] for r in sums], plan.level), run_length=n_done)
        EW = replace(replication_ci([r.W[0] for r in sums], plan.level), run_length=n_done)
        loads = np.mean([r.loads for r in sums], axis=0)
    elapsed = time.perf_counter() - start
    if pol.speeds is not None and ET.half_width > ET.mean:
        # an interval reaching below 0 for a positive mean: with very unequal speeds a slow
        # server's jobs outlast the run (its relaxation time exceeds every batch)
        slow = float(np.min(pol.speeds)) / float(np.max(pol.speeds))
        raise NumericalFailure(
            f"the simulation of {pol.name} with speeds "
            f"{np.asarray(typed_speeds, dtype=float).tolist()} did not resolve ET: its interval "
            f"{ET.mean:.3g} +- {ET.half_width:.3g} reaches below 0; a job at the slowest "
            f"server takes about {1.0 / slow:.3g} times as long as at the fastest, beyond what "
            f"{plan.n_jobs} jobs resolve: use closer speeds or a speed-aware policy")
    by_size: dict[str, Any] = {}
    if edges.size:
        cis, counts = _bin_intervals(sums, edges, bin_level, reps is not None,
                                     plan.n_batches)
        by_size = {"size_edges": edges,
                   "ET_by_size": tuple(_unscaled(replace(c, run_length=n_done), shift,
                                                 typed_speeds) for c in cis),
                   "jobs_by_size": counts, "size_level": bin_level}
    return DispatchEstimate(ET=_unscaled(ET, shift, typed_speeds),
                            EW=_unscaled(EW, shift, typed_speeds), n_jobs=int(n_done),
                            n_batches=plan.n_batches,
                            jobs_per_second=n_done / elapsed if elapsed > 0 else math.inf,
                            loads=np.asarray(loads), policy=pol.name, m=m, rho=rho,
                            method="batch_means" if reps is None else "replications",
                            speeds=(pol.speeds if shift == 0 or pol.speeds is None
                                    else np.ldexp(pol.speeds, shift)), **by_size)


def _unscaled(ci: ConfidenceInterval, shift: int, speeds: Any) -> ConfidenceInterval:
    """An interval of times of the run at speeds ``speeds / 2**shift``, in the user's time unit
    (``2**-shift`` times it, exactly); refused when it leaves the floating-point range."""
    if shift == 0:
        return ci
    with np.errstate(over="ignore"):
        mean, half = float(np.ldexp(ci.mean, -shift)), float(np.ldexp(ci.half_width, -shift))
    if not (math.isfinite(mean) and math.isfinite(half)):
        power = math.log10(abs(ci.mean) + ci.half_width) - shift * math.log10(2.0)
        raise InvalidParameter("speeds", np.asarray(speeds, dtype=float).tolist(),
                               "large enough that the mean response time stays below 1e308",
                               f"at these speeds it is about 1e{power:.0f}")
    return replace(ci, mean=mean, half_width=half)
