r"""Finite-N simulation of the supermarket model JSQ(d) with phase-type service, FCFS.

The supermarket model (Vvedenskaya, Dobrushin, Karpelevich 1996; Mitzenmacher 2001) has
:math:`N` identical FCFS servers and Poisson arrivals of total rate :math:`\lambda N`.  Each
arrival probes :math:`d` servers chosen uniformly at random and joins the one with the fewest
jobs (ties broken uniformly at random among the shortest probed servers).  Service times are
phase-type :math:`PH(\alpha, A)` with mean :math:`E[S] = \alpha (-A)^{-1} \mathbf 1`; the
exponential law of rate 1 is ``alpha=[1], A=[[-1]]``.  For exponential service and
:math:`N \to \infty` the fraction of servers with at least :math:`k` jobs tends to
:math:`u_k = \lambda^{(d^k-1)/(d-1)}` and the mean response time to
:math:`\sum_{k \ge 1} u_k / \lambda`; the error at finite :math:`N` is positive and
:math:`O(1/N)`.  This module gives the finite-N evidence those limits are checked against.

Algorithm
---------
The kernel is a Gillespie (continuous-time Markov chain) simulation on queue lengths and
phases.  Let :math:`B` be the number of busy servers and :math:`q = \max_i (-A_{ii})`.  The
total event rate is :math:`R = \lambda N + q B`: with probability :math:`\lambda N / R` the
event is an arrival, otherwise it is a *potential* service event at a busy server drawn
uniformly from an array of busy servers (O(1), swap-remove on idling).  At that server, in
phase :math:`i`, the event is a transition of the uniformised chain :math:`P = I + A/q` with an
exit column :math:`-A\mathbf 1/q` (a self-loop when nothing happens), so each event costs O(1)
for any PH order.  For exponential service :math:`q = 1` and every service event is a
departure, i.e. the plain scheme "arrival or departure from a uniformly chosen busy server".
The same uniform number selects the event type, the busy server and the phase transition.

Arrival epochs are kept in a per-server circular buffer of ``max_queue`` slots, so that the
response time of a job (arrival to departure, FCFS) is known at its departure.  A queue that
would exceed ``max_queue`` jobs stops the run with a clear error.

Statistics: per-job response times in departure order (batch means after a warm-up), the
time-average number of jobs per server :math:`E[Q]` and the busy fraction :math:`u_1` (batch
means over time batches that each contain the same number of departures), and the time-average
tail fractions :math:`u_1, \dots, u_K`.

References
----------
N. D. Vvedenskaya, R. L. Dobrushin, F. I. Karpelevich, "Queueing system with selection of the
shortest of two queues: an asymptotic approach", *Problems of Information Transmission* 32(1),
15-27, 1996 (fixed point :math:`u_k = \lambda^{(d^k-1)/(d-1)}`).

M. Mitzenmacher, "The power of two choices in randomized load balancing", *IEEE Transactions on
Parallel and Distributed Systems* 12(10), 1094-1104, 2001 (supermarket model, Theorem 3.6).

Examples
--------
>>> est = simulate_jsq(N=1, d=1, lam=0.5, n_jobs=200_000, rng=1)   # an M/M/1 queue
>>> est.ET.contains(1.0 / (1.0 - 0.5)) or abs(est.ET.mean - 2.0) < 0.05
True
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numba
import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.parameters import IntegerAtLeast, real_value
from symq.core.randomness import RngLike
from symq.core.renamed import former_attribute, renamed_keywords
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import require_probing_run_length
from symq.core.simrun import (
    RUN_SLICES,
    SIM_WORK_LIMIT,
    RunPlan,
    kernel_seed,
    require_work,
)
from symq.core.simstats import ConfidenceInterval
from symq.laws import PhaseType, as_phase_type, validate_ph
from symq.laws.kernels import exponential, first_phase, next_phase

from .results import PARAMETER_ECHO
from .simulation_core import (
    departure_interval,
    keep_smallest,
    probe,
    probing_arguments,
    record_slice,
    require_buffers,
    require_idle_time,
    require_stable,
    run_seeded,
    slice_intervals,
)
from .sizes import PhaseTypeLaw

__all__ = ["JSQEstimate", "simulate_jsq", "validate_ph"]

#: The exponential law of rate 1 (``service=None``).
_EXPONENTIAL = PhaseType([1.0], [[-1.0]], name="Exp(1)")

# kernel status codes
_OK = 0
_OVERFLOW = 1


# --------------------------------------------------------------------------------------------
# numba kernel
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _jsq_kernel(
    N: int,
    d: int,
    lam: float,
    n_jobs: int,
    replace: bool,
    alpha_cum: np.ndarray,
    trans_cum: np.ndarray,
    q: float,
    n_warm: int,
    n_slices: int,
    K: int,
    max_queue: int,
    stop_at: int,
    counters: np.ndarray,
    clock: np.ndarray,
    qlen: np.ndarray,
    head: np.ndarray,
    phase: np.ndarray,
    buf: np.ndarray,
    busy: np.ndarray,
    pos: np.ndarray,
    perm: np.ndarray,
    cnt: np.ndarray,
    last: np.ndarray,
    tail_area: np.ndarray,
    response: np.ndarray,
    waiting: np.ndarray,
    started: np.ndarray,
    slice_time: np.ndarray,
    slice_area: np.ndarray,
    slice_busy: np.ndarray,
):
    """Simulate JSQ(d) with PH service until ``stop_at`` departures (of ``n_jobs`` in all).

    The state lives in the arrays passed in, so that a run can be split into chunks (for a
    progress bar) and continue exactly where the previous chunk stopped: ``counters`` holds
    ``[busy servers, jobs in system, departures, warm flag]`` and ``clock`` ``[t, t_post]``; the
    random stream is seeded by the caller (:func:`symq.core.simrun.seed_numba`) once per run.

    The clock ``t`` restarts at 0 whenever a job arrives to an empty system (every buffer is
    then empty and every tail count 0, so nothing refers to the old origin): response times are
    differences of times within one busy period, exact to rounding however long the idle
    periods (at a load of 1e-15 an absolute clock would reach 1e20 and absorb the service
    times); ``t_post`` accumulates the post-warm-up time instead of ``t - t_warm``.

    Parameters
    ----------
    alpha_cum : float64 array (m,)
        Cumulative initial phase probabilities (last entry 1).
    trans_cum : float64 array (m, m + 1)
        Row ``i``: cumulative probabilities of the uniformised chain ``I + A/q`` over the
        phases ``0..m-1`` followed by the exit (last entry 1).
    q : float
        Uniformisation rate per busy server, ``max_i -A[i, i]``.
    n_warm : int
        Departures discarded from the tail fractions (warm-up).
    n_slices : int
        Number of time slices (equal numbers of departures) over the whole run, warm-up
        included (:func:`symq.core.simoutput.analyse_ratio` chooses the warm-up from them).

    Returns
    -------
    status : int
        0 on success, 1 on a queue overflow (a queue reached ``max_queue`` jobs).
    response, waiting : float64 arrays (n_jobs,)
        Response and waiting times in departure order (``waiting`` from the service start
        ``started[s]`` of the job at the head of server ``s``: never negative).
    slice_time, slice_area, slice_busy : float64 arrays (n_slices,)
        Length of each time slice, integral of the number in system and of the number of busy
        servers over it.
    tail_area : float64 array (K + 1,)
        ``tail_area[k]`` is the integral over the post-warm-up period of the number of servers
        with at least ``k`` jobs.
    t_post : float
        Length of the post-warm-up period.
    """
    m = alpha_cum.shape[0]
    per_slice = max(n_jobs // n_slices, 1)
    lam_n = lam * N
    n_b = counters[0]  # busy servers
    total = counters[1]  # jobs in system
    n_dep = counters[2]
    warm = counters[3] == 1
    t = clock[0]
    t_post = clock[1]
    status = _OK
    while n_dep < stop_at:
        rate = lam_n + q * n_b
        dt = exponential(rate)
        if warm:
            t_post += dt
        record_slice(slice_time, slice_area, slice_busy, n_dep, per_slice, dt, total, n_b)
        t += dt
        u = np.random.random() * rate
        if u < lam_n or n_b == 0:  # (u == lam_n can round so with no busy server)
            # ---- arrival: probe d servers, join the shortest (uniform tie-break)
            if total == 0:
                t = 0.0  # restart the clock: nothing in the system refers to it
                for k in range(K + 2):
                    last[k] = 0.0
            best = -1
            best_len = 0
            ties = 0
            for j in range(d):
                s = probe(N, j, replace, perm)
                best, best_len, ties = keep_smallest(best, best_len, ties, s, qlen[s])
            s = best
            ql = qlen[s]
            if ql >= max_queue:
                status = _OVERFLOW
                break
            buf[s, (head[s] + ql) % max_queue] = t
            qlen[s] = ql + 1
            total += 1
            lvl = ql + 1
            if lvl <= K:
                if warm:
                    tail_area[lvl] += cnt[lvl] * (t - last[lvl])
                    last[lvl] = t
                cnt[lvl] += 1
            if ql == 0:
                started[s] = t
                pos[s] = n_b
                busy[n_b] = s
                n_b += 1
                phase[s] = first_phase(alpha_cum)
        else:
            # ---- service event at a uniformly chosen busy server (uniformised PH chain)
            x = (u - lam_n) / q
            idx = int(x)
            if idx >= n_b:
                idx = n_b - 1
            frac = x - idx
            s = busy[idx]
            nxt = next_phase(trans_cum, phase[s], frac)
            if nxt < m:
                phase[s] = nxt  # phase change or self-loop
                continue
            # departure
            ql = qlen[s]
            response[n_dep] = t - buf[s, head[s]]
            waiting[n_dep] = started[s] - buf[s, head[s]]
            head[s] = (head[s] + 1) % max_queue
            qlen[s] = ql - 1
            total -= 1
            if ql <= K:
                if warm:
                    tail_area[ql] += cnt[ql] * (t - last[ql])
                    last[ql] = t
                cnt[ql] -= 1
            if ql == 1:
                # swap-remove s from the busy array
                p = pos[s]
                other = busy[n_b - 1]
                busy[p] = other
                pos[other] = p
                pos[s] = -1
                n_b -= 1
            else:
                started[s] = t
                phase[s] = first_phase(alpha_cum)
            n_dep += 1
            if not warm and n_dep >= n_warm:
                warm = True
                for k in range(K + 2):
                    last[k] = t
    counters[0] = n_b
    counters[1] = total
    counters[2] = n_dep
    counters[3] = 1 if warm else 0
    clock[0] = t
    clock[1] = t_post
    return status


def _run(N: int, d: int, lam: float, replace: bool, sizes: PhaseType, plan: RunPlan, K: int,
         max_queue: int, seed: int, progress: bool
         ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                    float, float]:
    """Run :func:`_jsq_kernel` through :func:`~symq.meanfield.simulation_core.run_seeded`
    (chunks and a tqdm bar when ``progress``; the same result either way); the last entry is
    the wall-clock seconds of the run."""
    alpha_cum, trans_cum, q = sizes.uniformised_tables()
    n_jobs, n_warm, n_slices = plan.n_jobs, plan.n_warm, RUN_SLICES
    counters = np.array([0, 0, 0, 1 if n_warm == 0 else 0], dtype=np.int64)
    clock = np.zeros(2)
    qlen = np.zeros(N, dtype=np.int64)
    head = np.zeros(N, dtype=np.int64)
    phase = np.zeros(N, dtype=np.int64)
    buf = np.empty((N, max_queue))
    busy = np.empty(N, dtype=np.int64)
    pos = np.full(N, -1, dtype=np.int64)
    perm = np.arange(N)
    cnt = np.zeros(K + 2, dtype=np.int64)  # cnt[k] = number of servers with >= k jobs
    last = np.zeros(K + 2)
    tail_area = np.zeros(K + 1)
    response = np.empty(n_jobs)
    waiting = np.empty(n_jobs)
    started = np.zeros(N)
    slice_time = np.zeros(n_slices)
    slice_area = np.zeros(n_slices)
    slice_busy = np.zeros(n_slices)
    status = _OK

    def step(stop: int) -> tuple[int, bool]:
        nonlocal status
        status = _jsq_kernel(N, d, lam, n_jobs, replace, alpha_cum, trans_cum, q, n_warm,
                             n_slices, K, max_queue, stop, counters, clock, qlen, head, phase,
                             buf, busy, pos, perm, cnt, last, tail_area, response, waiting,
                             started, slice_time, slice_area, slice_busy)
        return int(counters[2]), status != _OK

    elapsed = run_seeded(step, n_jobs, seed, progress, f"JSQ({d}) N={N}")
    t, t_post = float(clock[0]), float(clock[1])
    if counters[3] == 1:
        for k in range(1, K + 1):
            tail_area[k] += cnt[k] * (t - last[k])
    n_dep = int(counters[2])
    return (status, response[:n_dep], waiting[:n_dep], slice_time, slice_area, slice_busy,
            tail_area, t_post, elapsed)


def _guard_memory(N: int, max_queue: int, n_jobs: int) -> None:
    """Refuse, before allocating, a run whose buffers do not fit the memory budget
    (:func:`~symq.meanfield.simulation_core.require_buffers`): ``8 N (max_queue + 9)`` bytes
    of per-server state and 16 bytes a job (its response and waiting times)."""
    require_buffers(N, 8.0 * (max_queue + 9), n_jobs, 16.0,
                    what=f"{N} servers x {max_queue + 9} slots and {n_jobs} x 2 job times")


@renamed_keywords(law="sizes")
def q_steps(sizes: PhaseType) -> float:
    """Kernel events per job spent in service: ``q E[S]`` (uniformisation rate times mean)."""
    return float(sizes.uniformised_tables()[2]) * float(sizes.mean())


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JSQEstimate(ResultBase):
    """Estimates from one run of :func:`simulate_jsq`.

    Attributes
    ----------
    ET : ConfidenceInterval
        Mean response time (arrival to departure) by batch means over the jobs in departure
        order, after the warm-up.
    EW : ConfidenceInterval
        Mean waiting time (arrival to the start of service), measured job by job as ``ET``
        (so its mean is never negative, unlike ``ET - E[S]``).
    EQ : ConfidenceInterval
        Time-average number of jobs per server :math:`E[Q]`, batch means over time batches.
    utilisation : ConfidenceInterval
        Time-average fraction of busy servers :math:`u_1` (equals :math:`\\lambda E[S]`).
    tail : numpy.ndarray, shape (K,)
        Time-average fractions :math:`u_1, \\dots, u_K` of servers with at least ``k`` jobs.
    jobs_per_second : float
        Simulated jobs (departures) per second of wall-clock time of the run.
    N, d : int
    lam : float
        Arrival rate per server.
    n_jobs : int
        Number of simulated departures (including the warm-up).
    n_batches : int
        Batches of the batch-means intervals.
    replace : bool
        Whether the ``d`` probes were drawn with replacement.
    mean_size : float
        :math:`E[S]` (formerly ``mean_service``, read for one release with a warning).
    method : str
        How it was simulated.
    exactness : Exactness
        ``simulated``.
    seconds : float
        Wall time of the event kernel.

    The registered model ``jsq-sim`` gives the fields but the run's settings (``N``, ``d``,
    ``lam``, ``replace``, ``mean_size``) as its values.
    """

    summary: ClassVar[tuple[str, ...]] = ("N", "d", "lam", "ET", "EQ", "n_jobs")
    bookkeeping: ClassVar[frozenset[str]] = PARAMETER_ECHO | {"replace", "mean_size"}

    ET: ConfidenceInterval
    EW: ConfidenceInterval
    EQ: ConfidenceInterval
    utilisation: ConfidenceInterval
    tail: np.ndarray
    jobs_per_second: float
    N: int
    d: int
    lam: float
    n_jobs: int
    n_batches: int
    replace: bool
    mean_size: float
    method: str = "simulation of JSQ(d) (Gillespie, numba), batch means"
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0

    mean_service = former_attribute("mean_service", "mean_size")

    @property
    def load(self) -> float:
        """Per-server load :math:`\\lambda E[S]`."""
        return self.lam * self.mean_size


@renamed_keywords(service="sizes")
def simulate_jsq(
    N: int,
    d: int,
    lam: float,
    sizes: PhaseTypeLaw | None = None,
    *,
    n_jobs: int = 10**6,
    replace: bool = True,
    rng: RngLike = None,
    warmup: float = 0.1,
    level: float = 0.95,
    n_batches: int = 30,
    K: int = 30,
    max_queue: int = 1000,
    progress: bool = False,
) -> JSQEstimate:
    """Simulate the finite-N supermarket model JSQ(d) with phase-type service, FCFS.

    ``N`` servers, Poisson arrivals of total rate ``lam * N``; each arrival probes ``d`` servers
    uniformly at random and joins one with the fewest jobs (Vvedenskaya, Dobrushin, Karpelevich
    1996; Mitzenmacher 2001).  The run starts empty and stops after ``n_jobs`` departures.

    Parameters
    ----------
    N : int
        Number of servers, ``>= 1``.
    d : int
        Number of probes per arrival, ``>= 1`` (``<= N`` when ``replace=False``).
    lam : float
        Arrival rate per server; the load ``lam * E[S]`` must be ``< 1``.
    sizes : PhaseType, (alpha, A), ME with a phase-type form, or None
        The job-size law (converted by :func:`symq.laws.as_phase_type`: the kernel runs the
        phases of the law); ``None`` means exponential of rate 1.
    n_jobs : int, default 10**6
        Number of departures to simulate (keyword-only, as in
        :func:`~symq.meanfield.attained.simulation.simulate_attained`); at least
        ``100 * n_batches`` of them after the warm-up (:class:`symq.core.simrun.RunPlan`).
    replace : bool, default True
        Probe with replacement (the convention of the mean-field literature and of rmf_tool's
        simulator) or without replacement (``d`` distinct servers).
    rng : int, SeedSequence, numpy.random.Generator or None
        Randomness; the same seed gives the same result.
    warmup : float, default 0.1
        Fraction of the departures discarded before estimating, in ``[0, 1)``.
    level : float, default 0.95
        Confidence level.
    n_batches : int, default 30
        Number of batches of the batch-means intervals, ``>= 2``.
    K : int, default 30
        Number of tail fractions ``u_1..u_K`` reported.
    max_queue : int, default 1000
        Capacity of each server's buffer of arrival epochs (memory ``8 * N * max_queue`` bytes);
        a queue reaching it raises :class:`InvalidParameter` naming ``max_queue``.
    progress : bool, default False
        Show a tqdm progress bar (the run is split into 100 chunks; same result as without).

    Returns
    -------
    JSQEstimate

    Raises
    ------
    InvalidParameter
        For out-of-domain inputs or a buffer overflow.
    ResourceLimit
        If the buffers (``8 N (max_queue + 8) + 8 n_jobs`` bytes) do not fit the memory budget.
    StabilityError
        If ``lam * E[S] >= 1``.

    Examples
    --------
    >>> est = simulate_jsq(N=100, d=2, lam=0.5, n_jobs=100_000, rng=3)
    >>> abs(est.utilisation.mean - 0.5) < 0.02
    True
    """
    N, d, replace = probing_arguments(N, d, replace)
    K = IntegerAtLeast(1).coerce("K", K)
    max_queue = IntegerAtLeast(2).coerce("max_queue", max_queue)
    plan = RunPlan.make(n_jobs=n_jobs, n_batches=n_batches, warmup=warmup, level=level)
    lam = real_value("lam", lam, "a finite real number > 0", lambda v: v > 0)
    if sizes is None:
        law = _EXPONENTIAL
    elif isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
        raise InvalidParameter("sizes", sizes, "None or a job-size law",
                               "n_jobs is keyword-only: simulate_jsq(N, d, lam, n_jobs=...)")
    else:
        law = as_phase_type(sizes, "sizes")
    mean_s = law.mean()
    load = require_stable(lam, mean_s, "S", f"for JSQ(d={d}) with N={N} servers: every server "
                                             "needs lam*E[S] < 1")
    _guard_memory(N, max_queue, plan.n_jobs)
    require_idle_time(lam, N, plan.n_jobs, mean_s, "S")
    scv = law._raw_moment(2) / mean_s ** 2 - 1.0
    # JSQ(1) is N independent M/G/1 queues, each relaxing in its own departures
    require_probing_run_length(plan.n_jobs, N, d, load, scv, plan.n_batches)
    per_job = d + q_steps(law) + 2
    require_work(plan.n_jobs * per_job,
                 [("d", d, SIM_WORK_LIMIT / plan.n_jobs - q_steps(law) - 2),
                  ("n_jobs", plan.n_jobs, SIM_WORK_LIMIT / per_job)],
                 what=f"{plan.n_jobs} departures x (d={d} probes + {per_job - d:.3g} events)")
    seed = kernel_seed(rng)
    status, response, waiting, s_time, s_area, s_busy, tail_area, t_post, elapsed = _run(
        N, d, lam, replace, law, plan, K, max_queue, seed, bool(progress))
    if status == _OVERFLOW:
        raise InvalidParameter(
            "max_queue", max_queue, "larger than the longest queue of the run",
            "a server's queue reached max_queue jobs; increase max_queue "
            "(memory 8*N*max_queue bytes)",
        )
    EQ, utilisation = slice_intervals(N, plan, s_time, s_area, s_busy)
    return JSQEstimate(
        ET=departure_interval(response, plan),
        EW=departure_interval(waiting, plan),
        EQ=EQ,
        utilisation=utilisation,
        tail=tail_area[1:] / (t_post * N),
        jobs_per_second=plan.n_jobs / elapsed if elapsed > 0 else math.inf,
        N=N,
        d=d,
        lam=lam,
        n_jobs=plan.n_jobs,
        n_batches=plan.n_batches,
        replace=replace,
        mean_size=mean_s,
        seconds=elapsed,
    )
