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
>>> est.mean_response.contains(1.0 / (1.0 - 0.5)) or abs(est.mean_response.mean - 2.0) < 0.05
True
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass

import numba
import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import IntegerAtLeast, Interval
from symq.core.simstats import ConfidenceInterval, batch_means, ratio_batch_means
from symq.core.randomness import RngLike
from symq.core.randomness import as_generator as _generator

__all__ = ["JSQEstimate", "simulate_jsq", "validate_ph"]


#: Time slices per batch for the time-average statistics.
_SLICES_PER_BATCH = 20
#: Minimum number of jobs per batch.
_MIN_JOBS_PER_BATCH = 100

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
    slice_time: np.ndarray,
    slice_area: np.ndarray,
    slice_busy: np.ndarray,
):
    """Simulate JSQ(d) with PH service until ``stop_at`` departures (of ``n_jobs`` in all).

    The state lives in the arrays passed in, so that a run can be split into chunks (for a
    progress bar) and continue exactly where the previous chunk stopped: ``counters`` holds
    ``[busy servers, jobs in system, departures, warm flag]`` and ``clock`` ``[t, t_warm]``; the
    random stream is seeded by the caller (:func:`_seed_kernel`) once per run.

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
        Departures discarded from the time averages (warm-up).
    n_slices : int
        Number of time slices (equal numbers of departures) after the warm-up.

    Returns
    -------
    status : int
        0 on success, 1 on a queue overflow (a queue reached ``max_queue`` jobs).
    response : float64 array (n_jobs,)
        Response times in departure order.
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
    per_slice = max((n_jobs - n_warm) // n_slices, 1)
    lam_n = lam * N
    n_b = counters[0]  # busy servers
    total = counters[1]  # jobs in system
    n_dep = counters[2]
    warm = counters[3] == 1
    t = clock[0]
    t_warm = clock[1]
    status = _OK
    while n_dep < stop_at:
        rate = lam_n + q * n_b
        dt = -math.log(1.0 - np.random.random()) / rate
        if warm:
            s_idx = (n_dep - n_warm) // per_slice
            if s_idx >= n_slices:
                s_idx = n_slices - 1
            slice_time[s_idx] += dt
            slice_area[s_idx] += total * dt
            slice_busy[s_idx] += n_b * dt
        t += dt
        u = np.random.random() * rate
        if u < lam_n:
            # ---- arrival: probe d servers, join the shortest (uniform tie-break)
            best = -1
            best_len = 0
            ties = 0
            for j in range(d):
                if replace:
                    s = np.random.randint(0, N)
                else:
                    k = j + np.random.randint(0, N - j)
                    s = perm[k]
                    perm[k] = perm[j]
                    perm[j] = s
                ql = qlen[s]
                if best < 0 or ql < best_len:
                    best = s
                    best_len = ql
                    ties = 1
                elif ql == best_len:
                    ties += 1
                    if np.random.random() * ties < 1.0:
                        best = s
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
                pos[s] = n_b
                busy[n_b] = s
                n_b += 1
                v = np.random.random()
                ph = 0
                while ph < m - 1 and v >= alpha_cum[ph]:
                    ph += 1
                phase[s] = ph
        else:
            # ---- service event at a uniformly chosen busy server (uniformised PH chain)
            x = (u - lam_n) / q
            idx = int(x)
            if idx >= n_b:
                idx = n_b - 1
            frac = x - idx
            s = busy[idx]
            ph = phase[s]
            nxt = 0
            while nxt < m and frac >= trans_cum[ph, nxt]:
                nxt += 1
            if nxt < m:
                phase[s] = nxt  # phase change or self-loop
                continue
            # departure
            ql = qlen[s]
            response[n_dep] = t - buf[s, head[s]]
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
                v = np.random.random()
                ph = 0
                while ph < m - 1 and v >= alpha_cum[ph]:
                    ph += 1
                phase[s] = ph
            n_dep += 1
            if not warm and n_dep >= n_warm:
                warm = True
                t_warm = t
                for k in range(K + 2):
                    last[k] = t
    counters[0] = n_b
    counters[1] = total
    counters[2] = n_dep
    counters[3] = 1 if warm else 0
    clock[0] = t
    clock[1] = t_warm
    return status


@numba.njit(cache=True)
def _seed_kernel(seed: int) -> None:
    """Seed numba's random stream (separate from numpy's) for the kernel."""
    np.random.seed(seed)


def _run_kernel(N: int, d: int, lam: float, n_jobs: int, replace: bool, alpha_cum: np.ndarray,
                trans_cum: np.ndarray, q: float, n_warm: int, n_slices: int, K: int,
                max_queue: int, seed: int, progress: bool
                ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Run :func:`_jsq_kernel` in one call, or in chunks with a tqdm bar when ``progress``."""
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
    slice_time = np.zeros(n_slices)
    slice_area = np.zeros(n_slices)
    slice_busy = np.zeros(n_slices)
    chunks = 100 if progress else 1
    stops = np.unique(np.linspace(0, n_jobs, chunks + 1).astype(np.int64))[1:]
    _seed_kernel(seed)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_jobs, unit="job", desc=f"JSQ({d}) N={N}")
    status = _OK
    try:
        for stop in stops:
            before = int(counters[2])
            status = _jsq_kernel(N, d, lam, n_jobs, replace, alpha_cum, trans_cum, q, n_warm,
                                 n_slices, K, max_queue, int(stop), counters, clock, qlen, head,
                                 phase, buf, busy, pos, perm, cnt, last, tail_area, response,
                                 slice_time, slice_area, slice_busy)
            if bar is not None:
                bar.update(int(counters[2]) - before)
            if status != _OK:
                break
    finally:
        if bar is not None:
            bar.close()
    t, t_warm = float(clock[0]), float(clock[1])
    if counters[3] == 1:
        for k in range(1, K + 1):
            tail_area[k] += cnt[k] * (t - last[k])
    n_dep = int(counters[2])
    return status, response[:n_dep], slice_time, slice_area, slice_busy, tail_area, t - t_warm


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _integer(name: str, value: object, minimum: int) -> int:
    return int(IntegerAtLeast(minimum).coerce(name, value))


def validate_ph(alpha: ArrayLike, A: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
    """Check a phase-type representation ``(alpha, A)`` and return it with its mean.

    Parameters
    ----------
    alpha : array_like, shape (m,)
        Initial phase probabilities: nonnegative, summing to 1 (no mass at zero).
    A : array_like, shape (m, m)
        Sub-generator: negative diagonal, nonnegative off-diagonal, nonpositive row sums,
        invertible.

    Returns
    -------
    alpha, A : numpy arrays (float64)
    mean : float
        :math:`E[S] = \\alpha (-A)^{-1} \\mathbf 1`.

    Raises
    ------
    InvalidParameter
        Naming the condition that fails.

    Examples
    --------
    >>> validate_ph([1.0], [[-2.0]])[2]
    0.5
    """
    try:
        a = np.asarray(alpha, dtype=float)
        T = np.asarray(A, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter("service", (alpha, A), "a pair (alpha, A) of real arrays") from None
    if a.ndim != 1 or a.size < 1:
        raise InvalidParameter("alpha", a, "a nonempty one-dimensional array")
    m = a.size
    if T.shape != (m, m):
        raise InvalidParameter("A", T, f"a square matrix of shape ({m}, {m}) matching alpha")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(T))):
        raise InvalidParameter("service", (a, T), "finite arrays")
    if np.any(a < 0) or abs(a.sum() - 1.0) > 1e-10:
        raise InvalidParameter("alpha", a, "nonnegative entries summing to 1")
    diag = np.diag(T)
    if np.any(diag >= 0):
        raise InvalidParameter("A", T, "a sub-generator with negative diagonal entries")
    off = T - np.diag(diag)
    if np.any(off < 0):
        raise InvalidParameter("A", T, "a sub-generator with nonnegative off-diagonal entries")
    if np.any(T.sum(axis=1) > 1e-12 * np.abs(diag)):
        raise InvalidParameter("A", T, "a sub-generator with nonpositive row sums")
    try:
        mean_vec = np.linalg.solve(-T, np.ones(m))
    except np.linalg.LinAlgError:
        raise InvalidParameter("A", T, "an invertible sub-generator", "absorption must be certain") from None
    mean = float(a @ mean_vec)
    if not (math.isfinite(mean) and mean > 0) or np.linalg.cond(T) > 1e12:
        raise InvalidParameter("A", T, "an invertible sub-generator", "absorption must be certain")
    return a, T, mean


def _uniformised_tables(alpha: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    m = alpha.size
    q = float(np.max(-np.diag(A)))
    P = np.eye(m) + A / q
    P[np.abs(P) < 1e-15] = 0.0
    exit_ = np.clip(-A.sum(axis=1) / q, 0.0, None)
    table = np.hstack([P, exit_[:, None]])
    table /= table.sum(axis=1, keepdims=True)
    trans_cum = np.cumsum(table, axis=1)
    trans_cum[:, -1] = 1.0
    alpha_cum = np.cumsum(alpha)
    alpha_cum[-1] = 1.0
    return np.ascontiguousarray(alpha_cum), np.ascontiguousarray(trans_cum), q


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JSQEstimate:
    """Estimates from one run of :func:`simulate_jsq`.

    Attributes
    ----------
    mean_response : ConfidenceInterval
        Mean response time (arrival to departure) by batch means over the jobs in departure
        order, after the warm-up.
    mean_queue : ConfidenceInterval
        Time-average number of jobs per server :math:`E[Q]`, batch means over time batches.
    utilisation : ConfidenceInterval
        Time-average fraction of busy servers :math:`u_1` (equals :math:`\\lambda E[S]`).
    tail : numpy.ndarray, shape (K,)
        Time-average fractions :math:`u_1, \\dots, u_K` of servers with at least ``k`` jobs.
    jobs_per_second : float
        Simulated jobs (departures) per second of wall-clock time of the kernel.
    N, d : int
    lam : float
        Arrival rate per server.
    n_jobs : int
        Number of simulated departures (including the warm-up).
    replace : bool
        Whether the ``d`` probes were drawn with replacement.
    mean_service : float
        :math:`E[S]`.
    """

    mean_response: ConfidenceInterval
    mean_queue: ConfidenceInterval
    utilisation: ConfidenceInterval
    tail: np.ndarray
    jobs_per_second: float
    N: int
    d: int
    lam: float
    n_jobs: int
    replace: bool
    mean_service: float

    @property
    def load(self) -> float:
        """Per-server load :math:`\\lambda E[S]`."""
        return self.lam * self.mean_service


def simulate_jsq(
    N: int,
    d: int,
    lam: float,
    n_jobs: int,
    service: tuple[ArrayLike, ArrayLike] | None = None,
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
    n_jobs : int
        Number of departures to simulate, ``>= 100 * n_batches``.
    service : (alpha, A) or None
        Phase-type service law; ``None`` means exponential of rate 1 (``alpha=[1], A=[[-1]]``).
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
    StabilityError
        If ``lam * E[S] >= 1``.

    Examples
    --------
    >>> est = simulate_jsq(N=100, d=2, lam=0.5, n_jobs=100_000, rng=3)
    >>> abs(est.utilisation.mean - 0.5) < 0.02
    True
    """
    N = _integer("N", N, 1)
    d = _integer("d", d, 1)
    if not isinstance(replace, (bool, np.bool_)):
        raise InvalidParameter("replace", replace, "True or False")
    replace = bool(replace)
    if not replace and d > N:
        raise InvalidParameter("d", d, f"<= N={N} when sampling without replacement (replace=False)")
    n_batches = _integer("n_batches", n_batches, 2)
    K = _integer("K", K, 1)
    max_queue = _integer("max_queue", max_queue, 2)
    level = float(Interval(0.0, 1.0, left_open=True, right_open=True).coerce("level", level))
    warmup = float(Interval(0.0, 1.0, right_open=True).coerce("warmup", warmup))
    min_jobs = _MIN_JOBS_PER_BATCH * n_batches
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs < min_jobs:
        raise InvalidParameter("n_jobs", n_jobs, f"an integer >= {min_jobs}",
                               f"{_MIN_JOBS_PER_BATCH} jobs per batch for n_batches={n_batches}")
    n_jobs = int(n_jobs)
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not (math.isfinite(lam) and lam > 0):
        raise InvalidParameter("lam", lam, "a finite real number > 0")
    lam = float(lam)
    if service is None:
        alpha, A, mean_s = np.array([1.0]), np.array([[-1.0]]), 1.0
    else:
        try:
            alpha_in, A_in = service
        except (TypeError, ValueError):
            raise InvalidParameter("service", service, "None or a pair (alpha, A)") from None
        alpha, A, mean_s = validate_ph(alpha_in, A_in)
    load = lam * mean_s
    if load >= 1.0:
        raise StabilityError(
            f"load lam*E[S]={load:.6g} (lam={lam!r}, E[S]={mean_s:.6g}) must be < 1 for JSQ(d={d}) "
            f"with N={N} servers: every server needs lam*E[S] < 1"
        )
    gen = _generator(rng)
    seed = int(gen.integers(0, 2**32 - 1))
    alpha_cum, trans_cum, q = _uniformised_tables(alpha, A)
    n_warm = int(math.floor(warmup * n_jobs))
    n_slices = n_batches * _SLICES_PER_BATCH

    start = time.perf_counter()
    status, response, s_time, s_area, s_busy, tail_area, t_post = _run_kernel(
        N, d, lam, n_jobs, replace, alpha_cum, trans_cum, q, n_warm, n_slices, K, max_queue, seed,
        bool(progress)
    )
    elapsed = time.perf_counter() - start
    if status == _OVERFLOW:
        raise InvalidParameter(
            "max_queue", max_queue, "larger than the longest queue of the run",
            "a server's queue reached max_queue jobs; increase max_queue (memory 8*N*max_queue bytes)",
        )
    mean_response = batch_means(response, n_batches=n_batches, level=level, warmup=n_warm)
    mean_queue = ratio_batch_means(s_area / N, s_time, n_batches, level)
    utilisation = ratio_batch_means(s_busy / N, s_time, n_batches, level)
    tail = tail_area[1:] / (t_post * N)
    return JSQEstimate(
        mean_response=mean_response,
        mean_queue=mean_queue,
        utilisation=utilisation,
        tail=tail,
        jobs_per_second=n_jobs / elapsed if elapsed > 0 else math.inf,
        N=N,
        d=d,
        lam=lam,
        n_jobs=n_jobs,
        replace=replace,
        mean_service=mean_s,
    )
