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
>>> from symq.laws import Exponential
>>> est = simulate_dispatch("lwl", 2, 0.5, Exponential(1.0), n_jobs=200_000, rng=1)
>>> abs(est.ET.mean - 1 / (1 - 0.5**2)) < 0.05
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
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
from symq.core.simrun import RUN_SLICES, RunPlan
from symq.core.simstats import ConfidenceInterval, ratio_batch_means, replication_ci
from symq.laws import Distribution

from ..policies import BoundPolicy, DispatchPolicy, ScorePolicy, bind_policy, get_policy
from ..policies.checks import check_model
from ..policies.speeds import check_speeds
from ..sizebins import size_edges
from ..sizes import size_scv
from .kernel import RunSums, run_policy

__all__ = ["DispatchEstimate", "simulate_dispatch"]


@dataclass(frozen=True)
class DispatchEstimate(ResultBase):
    """Estimates from :func:`simulate_dispatch`.

    Attributes
    ----------
    ET, EW : ConfidenceInterval
        Mean response time and mean waiting time per job (time units: with speeds a job of
        size ``x`` at backlog ``u_i`` has :math:`T = (u_i + x)/s_i`, :math:`W = u_i/s_i`).
    P_wait : ConfidenceInterval
        Probability that an arriving job waits (finds the backlog of the server it is sent to
        positive), by the same batch means or replications as ``ET``.  Its point estimate is a
        fraction of jobs, in [0, 1]; the interval is ``mean +- half_width`` as every
        :class:`~symq.core.simstats.ConfidenceInterval` (symmetric), and
        :attr:`P_wait_bounds` gives its ends clipped to [0, 1] (the same coverage: the
        probability lies in [0, 1]).
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

    summary: ClassVar[tuple[str, ...]] = ("ET", "EW", "P_wait", "policy", "n_jobs")

    ET: ConfidenceInterval
    EW: ConfidenceInterval
    P_wait: ConfidenceInterval
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

    @property
    def P_wait_bounds(self) -> tuple[float, float]:
        """The ends of the :attr:`P_wait` interval clipped to [0, 1] (the mean is not moved)."""
        return max(self.P_wait.low, 0.0), min(self.P_wait.high, 1.0)


def _slices(jobs: int, n_batches: int) -> int:
    """Slices of a batch-means run: about :data:`~symq.core.simrun.RUN_SLICES`, a multiple of
    ``n_batches`` (the size bins merge them into batches), at least 8 jobs each
    (:func:`~symq.core.simoutput.analyse_ratio` merges them)."""
    most = max(jobs // 8, n_batches)
    per = max(RUN_SLICES // n_batches, 1)
    return max(min(per * n_batches, most - most % n_batches), n_batches)


def _shortrun_policy(plan: RunPlan, pol: BoundPolicy, sizes: Distribution) -> str:
    """A doubt when the run is shorter than the relaxation rule of every symq simulator
    (:func:`~symq.core.simoutput.required_run_length`: each batch spans
    :data:`~symq.core.simoutput.RELAXATION_RUNS` relaxation times of a server's queue, which
    receives one job in ``m``); empty otherwise."""
    scv = size_scv(sizes)
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


def _bound(policy: str | DispatchPolicy | BoundPolicy, m: int, rho: float, sizes: Distribution,
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


def _bin_intervals(sums: list[RunSums], edges: np.ndarray, level: float, replications: bool,
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
        (:func:`~symq.dispatch.policies.policy.score_policy`; ``policy_params`` are then values of
        its declared parameters) or a policy already bound to ``m, rho, sizes`` (and speeds).  A
        score runs inside the numba kernel as a first-class function (no Python call per job).
    m : int
        Number of servers, ``>= 1``.
    rho : float
        Load in ``(0, 1)``: :math:`\\rho = \\lambda E[X]/\\sum_i s_i`, so the arrival rate is
        ``lam = rho sum(speeds) / E[X]`` (``rho m / E[X]`` for unit speeds).
    sizes : job-size law
        A :class:`~symq.laws.PhaseType` or ``(alpha, A)`` pair, an :class:`~symq.me.ME`
        law, a frozen scipy distribution, a name (``"exp"``, ``"uniform"``, ``"h2"``) or a
        :class:`~symq.dispatch.sizes.Distribution`; converted by
        :func:`~symq.dispatch.sizes.as_size_law`.
    n_jobs : int
        Jobs in all (split evenly over the replications); at least 100 post-warm-up jobs per
        batch (or per replication), the rule of :class:`symq.core.simrun.RunPlan`.
    rng : seed, SeedSequence, Generator or None
        Same seed, same result.
    warmup : float
        Fraction of each replication discarded, in ``[0, 1)``.  One long run (batch means)
        chooses its warm-up from the data (MSER-5, :func:`~symq.core.simoutput.analyse_ratio`);
        ``warmup`` then only enters the check of the run length
        (:class:`~symq.core.simrun.RunPlan`).
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
        sums = [run_policy(pol, sizes, plan.n_jobs, 0, slices, gen, progress, desc, max_queue,
                           edges)]
        ones = np.ones(slices)
        short = _shortrun_policy(plan, pol, sizes)
        ET, EW, P_wait = (_with_doubt(analyse_ratio(x, ones, plan.n_batches, plan.level,
                                                    run_length=plan.n_jobs), short)
                          for x in (sums[0].T, sums[0].W, sums[0].P))
        loads = sums[0].loads
        n_done = plan.n_jobs
    else:
        per = plan.n_jobs // reps
        sums = [run_policy(pol, sizes, per, int(math.floor(plan.warmup * per)), 1,
                     np.random.default_rng(seq), progress, f"{desc} ({i + 1}/{reps})",
                     max_queue, edges)
                for i, seq in enumerate(np.random.SeedSequence(int(gen.integers(0, 2**63 - 1)))
                                        .spawn(reps))]
        n_done = per * reps
        ET = replace(replication_ci([r.T[0] for r in sums], plan.level), run_length=n_done)
        EW = replace(replication_ci([r.W[0] for r in sums], plan.level), run_length=n_done)
        P_wait = replace(replication_ci([r.P[0] for r in sums], plan.level), run_length=n_done)
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
                            EW=_unscaled(EW, shift, typed_speeds), P_wait=P_wait,
                            n_jobs=int(n_done),
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
