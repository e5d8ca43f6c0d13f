r"""Finite-N simulation of attained-service (age-aware) load balancing with general job sizes.

Model (Hellemans and Van Houdt, IEEE/ACM ToN 2021, the system model of the paper): :math:`N`
identical unit-speed FCFS servers, Poisson arrivals of total rate :math:`\lambda N` and i.i.d.
job sizes :math:`X`, phase-type :math:`PH(\alpha, A)` or any law with a sampler (any mean;
the load :math:`\lambda E[X]` must be :math:`< 1`).  On each arrival the dispatcher probes
:math:`d` servers uniformly at random (with replacement by default, as in the authors'
simulator).  A probed server reports its queue
length :math:`\ell` (jobs present, including the one in service) and the age :math:`a` (attained
service) of the job in service, coarsened into the layer

.. math:: k = \min\bigl(r + 1, \max(1, \lceil a / \Delta \rceil)\bigr), \qquad k = 1, \dots, r + 1,

with layer width :math:`\Delta` (``delta``).  The policy is a ranking score :math:`\xi(k, \ell)`
given as a table ``scores`` of shape ``(r + 1, B)``: ``scores[k - 1, l - 1]`` is
:math:`\xi(k, \ell)` for a busy server with :math:`\ell = 1, \dots, B` jobs; **for**
:math:`\ell > B` **the last column** ``scores[k - 1, B - 1]`` **is used** (the table is clamped,
as the queue truncation :math:`B` of the paper's analysis).  The job joins the probed server with
the smallest score; an idle server always wins; ties are broken uniformly at random among the
probe slots achieving the minimum (with replacement, two probes of the same server count as two
slots).  Examples of tables, with ``r + 1`` rows and ``B`` columns:

* SQ(d): ``scores[k, l] = l + 1`` (queue length only);
* LAS(d): ``scores[k, l] = k + 1`` (least attained service);
* SQ(d)-RTB: ``scores[k, l] = (r + 1) * (l + 1) + (k + 1)`` (shortest queue, ties to the
  youngest job in service),

written with 0-based numpy indices ``k, l``.

Algorithm
---------
An exact discrete-event simulation in continuous time (no uniformisation, no time step).  A
job's size is sampled when its service starts (sizes are i.i.d. and the discipline is FCFS, so
this has the law of sampling at arrival).  A law without a phase-type form is sampled
beforehand (one size per service start, in order, from ``law.sample``); a phase-type law is
sampled during the run by walking the phase-type chain: an exponential
holding time in each visited phase, then a jump of the embedded chain
:math:`P_{ij} = A_{ij} / (-A_{ii})` or absorption with probability
:math:`-\sum_j A_{ij} / (-A_{ii})`.  The completion times of the busy servers sit in an indexed
binary min-heap, so that each departure costs :math:`O(\log N)`; the age of the job in service
at server :math:`i` is ``now - start[i]``.  Arrival epochs of the jobs present are kept in a
shared pool of slots linked into one FCFS list per server, whose size follows the total number
of jobs in the system (it grows on demand, up to ``max_in_system`` jobs).

Statistics (issue 30's output analysis, :mod:`symq.core.simoutput`): per-job response time
:math:`R` = departure - arrival and waiting time :math:`W` = service start - arrival in
departure order and the indicator of waiting :math:`1\{W > 0\}`, each over the whole run
(:func:`~symq.core.simoutput.analyse_series`: MSER-5 warm-up, batches lengthened until their
means pass a lag-1 test, Student-t interval widened for skewness), and the time-average number
of jobs per server :math:`E[Q]` and busy fraction from :data:`~symq.core.simrun.RUN_SLICES`
time slices of equal numbers of departures from the start of the run
(:func:`~symq.core.simoutput.analyse_ratio`).  A run shorter than 64 relaxation times
:math:`(1 + c_X^2)/(1 - \rho)^2` per batch is refused before it starts
(:func:`~symq.core.simoutput.require_probing_run_length`; with ``d = 1`` each server is an
independent M/G/1 queue, which relaxes in its own departures, ``N`` times fewer than the
run's).

References
----------
T. Hellemans, B. Van Houdt, "Improved load balancing in large scale systems using attained
service time reporting", *IEEE/ACM Transactions on Networking* (2022); simulator
``simulation_code/simulSQd_HErlang.m`` of the authors' code (probing with replacement, layer
``min(r+1, max(1, ceil(a/Delta)))``).

Examples
--------
>>> import numpy as np
>>> sq = np.arange(1.0, 11.0)[None, :]            # SQ(d): one age layer, B = 10
>>> est = simulate_attained(50, 2, 0.5, ([1.0], [[-1.0]]), sq, 1.0, n_jobs=60_000, rng=1)
>>> est.N, est.d, est.n_jobs
(50, 2, 60000)
>>> abs(est.P_wait.mean - 0.5**2) < 0.05            # mean-field limit lam^d
True
>>> abs(est.EQ.mean - 0.5 * est.ET.mean) < 0.05   # Little's law
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, SymqError
from symq.core.parameters import IntegerAtLeast, real_value
from symq.core.randomness import RngLike, as_generator
from symq.core.renamed import renamed_keywords
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import mser_truncation, require_probing_run_length
from symq.core.simrun import (
    RUN_SLICES,
    SIM_WORK_LIMIT,
    RunPlan,
    kernel_seed,
    require_work,
)
from symq.core.simstats import ConfidenceInterval
from symq.laws import Distribution, as_phase_type, as_sampler, describe_law

from ..simulation_core import (
    departure_interval,
    probing_arguments,
    require_buffers,
    require_idle_time,
    require_stable,
    run_seeded,
    slice_intervals,
)
from ..sizes import SampledLaw
from .kernel import (
    F_ELAPSED,
    F_SIZE,
    F_T,
    I_NARR,
    I_NDEP,
    I_NFREE,
    I_PEAK,
    I_SIZE,
    POOL_FULL,
    attained_kernel,
)

__all__ = ["AttainedEstimate", "simulate_attained"]

#: Bytes of per-server state (eight arrays of N entries, and four job slots of 16 bytes each).
_SERVER_BYTES = 8 * 8 + 4 * 16
#: Bytes per simulated job (response and waiting times, a drawn size).
_JOB_BYTES = 24


def _guard(N: int, d: int, lam: float, mean_x: float, plan: RunPlan,
           n_sizes: int) -> None:
    """Refuse up front what cannot fit or finish: memory (``N``, ``n_jobs``), work (``d``
    probes and a heap step per job, :func:`~symq.core.simrun.require_work`) and a load whose
    idle time leaves floating point (:func:`~symq.core.simrun.require_time_range`)."""
    require_buffers(N, _SERVER_BYTES, plan.n_jobs, 16.0 + (8.0 if n_sizes else 0.0),
                    what=f"{N} servers and {plan.n_jobs} jobs")
    per = d + 2.0 * math.log2(N + 1) + 4.0
    require_work(plan.n_jobs * per,
                 [("d", d, SIM_WORK_LIMIT / plan.n_jobs - per + d),
                  ("n_jobs", plan.n_jobs, SIM_WORK_LIMIT / per)],
                 what=f"{plan.n_jobs} jobs x (d={d} probes + {per - d:.3g} steps)")
    require_idle_time(lam, N, plan.n_jobs, mean_x, "X")


#: Smallest initial number of job slots (the pool then grows by doubling).
_MIN_POOL = 1024



# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


#: Empty phase-type tables passed to the kernel when the sizes come from a drawn stream.
_NO_PH = (np.ones(1), np.ones(1), np.zeros((1, 1)))


def _size_source(sizes: SampledLaw, *, n_jobs: int, N: int) -> tuple[Distribution, int]:
    """The job-size law and how many sizes to draw for it beforehand (0: walk its phases).

    A phase-type law (or an ``ME`` with a phase-type form) is walked by the kernel; any other
    law (a scipy distribution, a symq distribution, the empirical law of a trace) is sampled
    beforehand: ``n_jobs + N`` sizes, as many as the service starts of a run of ``n_jobs``
    departures can use (each departure ends one service and at most ``N`` are under way at
    the end).
    """
    try:
        return as_phase_type(sizes, "sizes"), 0
    except InvalidParameter:
        return as_sampler(sizes, "sizes"), n_jobs + N


def _draw_sizes(sizes: Distribution, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` draws of the law ``sizes``, checked: finite and nonnegative (else
    InvalidParameter)."""
    drawn = np.ascontiguousarray(np.asarray(sizes.sample(count, rng=rng), dtype=np.float64))
    bad = ~np.isfinite(drawn) | (drawn < 0)
    if bad.any():
        raise InvalidParameter("sizes", describe_law(sizes), "a law of nonnegative job sizes",
                               f"it drew the size {drawn[np.argmax(bad)]!r}")
    return drawn


def _law_scv(sizes: Distribution) -> float | None:
    """The squared coefficient of variation :math:`E[X^2]/E[X]^2 - 1` of the size law, or
    ``None`` when the law has no finite second moment symq can compute (then that of the drawn
    sizes is used, as :func:`symq.me.queueing.simulate_mg1_waiting` does)."""
    try:
        m1, m2 = float(sizes._raw_moment(1)), float(sizes._raw_moment(2))
    except (SymqError, TypeError, ValueError, OverflowError, ArithmeticError):
        return None
    if not (m1 > 0 and math.isfinite(m2)):
        return None
    return max(m2 / (m1 * m1) - 1.0, 0.0)


def _sample_scv(sizes: np.ndarray) -> float:
    """The squared coefficient of variation of drawn sizes (0 for an all-zero sample)."""
    m = float(sizes.mean())
    return float(sizes.var() / (m * m)) if m > 0 else 0.0


def _score_table(scores: ArrayLike) -> np.ndarray:
    try:
        table = np.array(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameter(
            "scores", scores, "a 2-D array of finite real numbers of shape (r+1, B)"
        ) from None
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise InvalidParameter(
            "scores", f"<array of shape {table.shape}>",
            "a 2-D array of finite real numbers of shape (r+1, B) with r+1 >= 1 and B >= 1",
        )
    if not np.all(np.isfinite(table)):
        raise InvalidParameter(
            "scores", f"<array of shape {table.shape} with non-finite entries>",
            "a 2-D array of finite real numbers of shape (r+1, B)",
            "idle servers always win; busy scores must be finite",
        )
    return np.ascontiguousarray(table)


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttainedEstimate(ResultBase):
    """Estimates from one run of :func:`simulate_attained`.

    Attributes
    ----------
    EW : ConfidenceInterval
        Mean waiting time (arrival to service start), from the waiting times of all jobs in
        departure order (:func:`symq.core.simoutput.analyse_series`: MSER-5 warm-up, batch
        length from a lag-1 test); ``run_length`` is ``n_jobs`` and ``doubt`` says why the
        interval may not cover, if the run's diagnostics question it.
    ET : ConfidenceInterval
        Mean response time (arrival to departure), the same analysis.
    EQ : ConfidenceInterval
        Time-average number of jobs per server :math:`E[Q]`
        (:func:`symq.core.simoutput.analyse_ratio` over
        :data:`~symq.core.simrun.RUN_SLICES` time slices with equal numbers of departures from
        the start of the run).
    P_wait : ConfidenceInterval
        Probability that a job waits, :math:`P(W > 0)` (fraction of jobs that find their chosen
        server busy; :func:`~symq.core.simoutput.analyse_series` of the indicator).
    utilisation : ConfidenceInterval
        Time-average fraction of busy servers (equals :math:`\\lambda E[X]`).
    N, d : int
    lam : float
        Arrival rate per server.
    n_jobs : int
        Simulated departures, warm-up included.
    n_batches : int
        Batches of the final intervals.
    n_warm : int
        Departures the MSER-5 truncation discards from the response times (each estimate
        chooses its own warm-up from its own series).
    n_arrivals : int
        Arrivals during the run (``n_jobs`` plus the jobs still present at the end).
    sim_time, post_warmup_time : float
        Simulated time at the end of the run and the time after the first ``n_warm``
        departures (to the resolution of a time slice).
    peak_in_system : int
        Largest number of jobs present at once.
    replace : bool
        Whether the probes were drawn with replacement.
    mean_size : float
        :math:`E[X]`.
    delta : float
        Width of the age layers.
    layers : int
        Number of age layers ``r + 1`` (rows of the score table).
    jobs_per_second : float
        Simulated departures per second of wall-clock time of the run.
    method : str
        How it was simulated.
    exactness : Exactness
        ``simulated``.
    seconds : float
        Wall time of the event kernel.
    """

    summary: ClassVar[tuple[str, ...]] = ("N", "d", "lam", "EW", "ET", "n_jobs")

    EW: ConfidenceInterval
    ET: ConfidenceInterval
    EQ: ConfidenceInterval
    P_wait: ConfidenceInterval
    utilisation: ConfidenceInterval
    N: int
    d: int
    lam: float
    n_jobs: int
    n_batches: int
    n_warm: int
    n_arrivals: int
    sim_time: float
    post_warmup_time: float
    peak_in_system: int
    replace: bool
    mean_size: float
    delta: float
    layers: int
    jobs_per_second: float
    method: str = ("simulation of attained-service load balancing (event-driven, numba), "
                   "MSER-5 warm-up, batch means")
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0

    @property
    def load(self) -> float:
        """Per-server load :math:`\\lambda E[X]`."""
        return self.lam * self.mean_size


@renamed_keywords(service="sizes")
def simulate_attained(
    N: int,
    d: int,
    lam: float,
    sizes: SampledLaw,
    scores: ArrayLike,
    delta: float,
    *,
    n_jobs: int = 10**6,
    warmup: float = 0.2,
    replace: bool = True,
    rng: RngLike = None,
    progress: bool = False,
    n_batches: int = 30,
    level: float = 0.95,
    max_in_system: int = 10**7,
) -> AttainedEstimate:
    r"""Simulate load balancing with queue-length and attained-service (age) reports.

    ``N`` FCFS unit-speed servers, Poisson arrivals of total rate ``lam * N``, i.i.d.
    phase-type job sizes; each arrival probes ``d`` servers and joins the probed server of
    smallest score ``scores[k - 1, min(l, B) - 1]``, where ``l >= 1`` is its queue length, ``B``
    the number of columns of ``scores`` (queue lengths beyond ``B`` use the last column) and
    ``k = min(r + 1, max(1, ceil(a / delta)))`` the age layer of the job in service (``a`` its
    attained service, ``r + 1`` the number of rows).  Idle probed servers always win; ties are
    broken uniformly at random among the probe slots with the minimal score.  The run starts
    empty and stops after ``n_jobs`` departures; the warm-up and the batches are chosen from
    the data (:func:`symq.core.simoutput.analyse_series`, ``analyse_ratio``), and a run too
    short for the relaxation time at its load is refused before it starts (see ``n_jobs``).

    Parameters
    ----------
    N : int
        Number of servers, ``>= 1``.
    d : int
        Number of probes per arrival, ``>= 1`` (``<= N`` when ``replace=False``).
    lam : float
        Arrival rate per server, ``> 0``, with ``lam * E[X] < 1``.
    sizes : PhaseType, (alpha, A), ME, scipy distribution or symq Distribution
        The job-size law.  A law with a phase-type form (:func:`symq.laws.as_phase_type`)
        is sampled by walking its phases; any other law (:func:`symq.laws.as_sampler`: a
        lognormal, a Weibull, a Pareto...) is sampled itself, ``n_jobs + N`` sizes drawn before
        the run (8 bytes each) from the same ``rng``, so that a mean-field analysis with a
        fitted phase-type law can be compared with the system under the true law.
    scores : array_like, shape (r + 1, B)
        Finite ranking scores ``xi(k, l)`` of busy servers; smaller wins.
    delta : float
        Width of the age layers, ``> 0``.
    n_jobs : int, default 10**6
        Departures to simulate (keyword-only), warm-up included: at least ``100 * n_batches``
        after the ``warmup`` fraction (:class:`symq.core.simrun.RunPlan`), and at least
        :func:`symq.core.simoutput.required_run_length`: 64 relaxation times
        :math:`(1 + c_X^2)/(1 - \rho)^2` per batch at the load :math:`\rho = \lambda E[X]`
        and size scv :math:`c_X^2` (that of the drawn sizes for a law without a finite second
        moment), times ``N`` when ``d = 1`` (each server is then an independent M/G/1 queue
        and relaxes in its own departures).  The response and waiting times of all jobs are
        kept (16 bytes per job).
    warmup : float, default 0.2
        Fraction of the departures that :class:`~symq.core.simrun.RunPlan` sets aside when it
        checks ``n_jobs``, in ``[0, 1)``; the estimates choose their own warm-up (MSER).
        Kept for compatibility.
    replace : bool, default True
        Probe with replacement (as the paper's simulator) or ``d`` distinct servers.
    rng : int, SeedSequence, numpy.random.Generator or None
        Randomness; the same seed gives the same result (with or without ``progress``).
    progress : bool, default False
        Show a tqdm progress bar (the kernel then runs in chunks of departures).
    n_batches : int, default 30
        Number of batches of the batch-means intervals, ``>= 2``.
    level : float, default 0.95
        Confidence level of the intervals, in ``(0, 1)``.
    max_in_system : int, default 10**7
        Largest number of jobs allowed in the system at once (memory about 16 bytes per job);
        the pool of job slots grows on demand up to it.

    Returns
    -------
    AttainedEstimate

    Raises
    ------
    InvalidParameter
        For an out-of-domain input (the message names it), or when more than
        ``max_in_system`` jobs are present at once (names ``max_in_system``).
    RunTooShort
        An :class:`InvalidParameter` naming ``n_jobs`` with ``jobs_needed``, when the run is
        shorter than the run-length rule asks at this load.
    StabilityError
        If ``lam * E[X] >= 1``.

    Examples
    --------
    >>> import numpy as np
    >>> las = np.array([[1.0], [2.0], [3.0]])          # LAS(d): age layers only, 3 layers
    >>> est = simulate_attained(20, 1, 0.5, ([1.0], [[-1.0]]), las, 0.5, n_jobs=400_000, rng=0)
    >>> est.layers, est.load
    (3, 0.5)
    """
    N, d, replace = probing_arguments(N, d, replace)
    if not isinstance(progress, (bool, np.bool_)):
        raise InvalidParameter("progress", progress, "True or False")
    lam = real_value("lam", lam, "a finite real number > 0", lambda v: v > 0)
    delta = real_value("delta", delta, "a finite real number > 0", lambda v: v > 0)
    table = _score_table(scores)
    plan = RunPlan.make(n_jobs=n_jobs, n_batches=n_batches, warmup=warmup, level=level)
    max_in_system = IntegerAtLeast(1).coerce("max_in_system", max_in_system)
    law, n_sizes = _size_source(sizes, n_jobs=plan.n_jobs, N=N)
    mean_x = law.mean()
    load = require_stable(lam, mean_x, "X", f"for N={N} servers probed d={d} at a time: each "
                                             "server serves at unit speed")
    _guard(N, d, lam, mean_x, plan, n_sizes)
    generator = as_generator(rng)
    seed = kernel_seed(generator)   # the same seed as kernel_seed(rng): PH runs are unchanged
    # a general law: its sizes drawn now from the same stream, after the kernel's seed
    drawn = _draw_sizes(law, n_sizes, generator) if n_sizes else np.empty(0)
    scv = _law_scv(law)
    # the run-length rule, before the run (after the sizes, so that a law that draws negative
    # sizes is named first); a law without a computable second moment: the drawn sizes' scv
    require_probing_run_length(plan.n_jobs, N, d, load,
                               _sample_scv(drawn) if scv is None else scv, plan.n_batches)
    alpha_cum, rates, jump_cum = _NO_PH if n_sizes else law.jump_tables()

    n_jobs = plan.n_jobs
    per_slice = max(n_jobs // RUN_SLICES, 1)
    pool = min(max_in_system, max(_MIN_POOL, 4 * N))
    qlen = np.zeros(N, dtype=np.int64)
    qhead = np.full(N, -1, dtype=np.int64)
    qtail = np.full(N, -1, dtype=np.int64)
    start = np.zeros(N)
    depart = np.zeros(N)
    heap = np.zeros(N, dtype=np.int64)
    hpos = np.full(N, -1, dtype=np.int64)
    pool_arr = np.zeros(pool)
    pool_next = np.full(pool, -1, dtype=np.int64)
    free = np.arange(pool - 1, -1, -1, dtype=np.int64)
    perm = np.arange(N, dtype=np.int64)
    response = np.empty(n_jobs)
    wait = np.empty(n_jobs)
    slice_time = np.zeros(RUN_SLICES)
    slice_area = np.zeros(RUN_SLICES)
    slice_busy = np.zeros(RUN_SLICES)
    ist = np.zeros(I_SIZE, dtype=np.int64)
    ist[I_NFREE] = pool
    fst = np.zeros(F_SIZE)
    first = True

    def step(stop: int) -> tuple[int, bool]:
        """Run to ``stop`` departures, growing the pool of job slots when it is full."""
        nonlocal pool, pool_arr, pool_next, free, first
        while True:
            status = attained_kernel(
                N, d, lam, replace, table, delta, alpha_cum, rates, jump_cum,
                stop, per_slice,
                qlen, qhead, qtail, start, depart, heap, hpos, pool_arr, pool_next, free, perm,
                response, wait, slice_time, slice_area, slice_busy,
                ist, fst, first, drawn,
            )
            first = False
            if status != POOL_FULL:
                return int(ist[I_NDEP]), False
            if pool >= max_in_system:
                raise InvalidParameter(
                    "max_in_system", max_in_system,
                    "larger than the number of jobs present at once during the run",
                    f"{pool} jobs were present at time {fst[F_T]:.6g}; the policy may be "
                    "unstable at this load, or increase max_in_system",
                )
            new = min(max_in_system, 2 * pool)
            pool_arr = np.concatenate([pool_arr, np.zeros(new - pool)])
            pool_next = np.concatenate([pool_next, np.full(new - pool, -1, dtype=np.int64)])
            # the stack of free slots is empty here (all `pool` slots hold a job); it
            # receives the new slots and must hold up to `new` entries later on
            free = np.empty(new, dtype=np.int64)
            free[: new - pool] = np.arange(new - 1, pool - 1, -1, dtype=np.int64)
            ist[I_NFREE] = new - pool
            pool = new

    elapsed = run_seeded(step, n_jobs, seed, bool(progress), "simulate_attained")

    n_warm = mser_truncation(response).drop
    # the time after the response times' warm-up, to the resolution of a slice
    post = min(float(slice_time[min(n_warm // per_slice, RUN_SLICES - 1):].sum()),
               float(fst[F_ELAPSED]))
    EQ, utilisation = slice_intervals(N, plan, slice_time, slice_area, slice_busy)
    return AttainedEstimate(
        EW=departure_interval(wait, plan),
        ET=departure_interval(response, plan),
        EQ=EQ,
        P_wait=departure_interval((wait > 0.0).astype(float), plan),
        utilisation=utilisation,
        N=N,
        d=d,
        lam=lam,
        n_jobs=n_jobs,
        n_batches=plan.n_batches,
        n_warm=n_warm,
        n_arrivals=int(ist[I_NARR]),
        sim_time=float(fst[F_ELAPSED]),
        post_warmup_time=post,
        peak_in_system=int(ist[I_PEAK]),
        replace=replace,
        mean_size=mean_x,
        delta=delta,
        layers=int(table.shape[0]),
        jobs_per_second=n_jobs / elapsed if elapsed > 0 else math.inf,
        seconds=elapsed,
    )
