r"""Gillespie simulation of a finite CTMC given by its generator: independent evidence.

:func:`simulate_ctmc` runs the chain of a generator :math:`Q` (a scipy sparse matrix, CSR
preferred, or a dense array; the diagonal is not used) from one state, with the direct method of
Gillespie (1977) compiled with numba (:mod:`symq.markov.simulation_kernel`), and estimates

* for each **state reward** :math:`r` (a vector over the states: :math:`r_i = n_i` for a mean
  number, the indicator of a set for a probability) the long-run time average
  :math:`\sum_i \pi_i r_i`;
* for each **impulse reward** :math:`w` (a weight per transition :math:`i \to j`, e.g. 1 on
  the accepted arrivals) the long-run rate :math:`\sum_i \pi_i \sum_j q_{ij} w_{ij}` per unit
  time (a throughput).

It uses the simulation-run core of every symq simulator: the kernel's seed comes from ``rng``
(:func:`symq.core.simrun.kernel_seed`, :func:`~symq.core.simrun.seed_numba`), the run goes in
chunks with a progress bar when asked (:func:`~symq.core.simrun.run_chunked`), a run is checked
against the batch-means rule before it starts (:class:`~symq.core.simrun.RunPlan`: at least
:data:`~symq.core.simrun.MIN_JOBS_PER_BATCH` events per batch) and refused above the work limit
(:func:`~symq.core.simrun.require_work`), and every interval comes from
:func:`symq.core.simoutput.analyse_ratio` over :data:`~symq.core.simrun.RUN_SLICES` slices of
the whole run: MSER warm-up, batches tested for correlation, a ``doubt`` when the run is too
short for either.  The slices have equal lengths of time when the run is given a ``horizon``,
equal numbers of events when it is given ``n_events``.

The simulator knows nothing of how the chain was declared: it takes the generator and arrays, so
that any builder of a generator (a user's own matrix) gets simulation evidence from it.  A
declared chain is simulated from its rates by
:func:`symq.markov.simulation_declared.simulate_chain`, which shares this module's run plan and
interval analysis (:class:`RunSlices`).

References
----------
D. T. Gillespie, Exact stochastic simulation of coupled chemical reactions, *J. Phys. Chem.*
81(25), 2340-2361, 1977.  A. M. Law, *Simulation Modeling and Analysis*, 5th ed., 2015,
Section 9.5.3 (batch means of a time average).

Examples
--------
An M/M/1/2 queue (arrivals 1, services 2): :math:`\pi = (4, 2, 1)/7`, so :math:`E[N] = 4/7`.

>>> import numpy as np
>>> Q = np.array([[-1.0, 1.0, 0.0], [2.0, -3.0, 1.0], [0.0, 2.0, -2.0]])
>>> est = simulate_ctmc(Q, {"EN": [0, 1, 2]}, n_events=200_000, rng=4)
>>> est["EN"].contains(4 / 7)
True
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sps
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, RunTooShort
from symq.core.parameters import IntegerAtLeast
from symq.core.randomness import RngLike
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import analyse_ratio, mser_truncation
from symq.core.simrun import (
    MIN_JOBS_PER_BATCH,
    RUN_SLICES,
    SIM_WORK_LIMIT,
    RunPlan,
    kernel_seed,
    require_work,
    run_chunked,
    seed_numba,
)
from symq.core.simstats import ConfidenceInterval, check_level

from .simulation_kernel import ABSORBED, CAPPED, ctmc_kernel

__all__ = ["CTMCEstimate", "RunSlices", "simulate_ctmc"]

#: Events of a run given neither ``horizon`` nor ``n_events``.
DEFAULT_EVENTS = 1_000_000


@dataclass(frozen=True)
class CTMCEstimate(ResultBase):
    """Time averages and rates of one Gillespie run of a CTMC (:func:`simulate_ctmc`).

    Attributes
    ----------
    rewards : dict of str to ConfidenceInterval
        Per state reward, the interval of its long-run time average.
    impulses : dict of str to ConfidenceInterval
        Per impulse reward, the interval of its long-run rate per unit time.
    n_states : int or None
        States of the chain (None for a run from the declared rates, which builds no state
        space).
    n_events : int
        Transitions simulated (warm-up included).
    horizon : float
        Time simulated (warm-up included).
    n_batches : int
        Batches of the intervals.
    warmup : dict of str to float
        Per output, the time discarded at the start of the run (its MSER truncation).
    events_per_second : float
        Transitions simulated per second of wall-clock time.
    method : str
    exactness : Exactness
    seconds : float
        Wall time of the run (the kernel; the output analysis excluded).
    """

    summary: ClassVar[tuple[str, ...]] = ("n_states", "n_events", "horizon")

    rewards: dict[str, ConfidenceInterval]
    impulses: dict[str, ConfidenceInterval]
    n_states: int | None
    n_events: int
    horizon: float
    n_batches: int
    warmup: dict[str, float] = field(default_factory=dict)
    events_per_second: float = math.inf
    method: str = "Gillespie simulation, batch means"
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0

    def outputs(self) -> dict[str, Any]:
        """The values a claim names as ``MODEL:KEY``: each reward's and impulse's interval by
        its name, then ``n_states``, ``n_events`` and ``horizon``."""
        return {**self.rewards, **self.impulses, "n_states": self.n_states,
                "n_events": self.n_events, "horizon": self.horizon}

    def __getitem__(self, name: str) -> ConfidenceInterval:
        """The interval of the reward or impulse ``name``."""
        if name in self.rewards:
            return self.rewards[name]
        if name in self.impulses:
            return self.impulses[name]
        raise KeyError(f"{name!r} is neither a reward ({sorted(self.rewards)}) nor an impulse "
                       f"({sorted(self.impulses)})")


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------


def _as_csr(generator: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """``(indptr, indices, data, n, was_csr)`` of the generator, its CSR entries in the order
    given when it is already CSR (so that per-entry impulse weights line up with it)."""
    if sps.issparse(generator):
        shape = generator.shape
        was_csr = generator.format == "csr"
        matrix = generator if was_csr else sps.csr_array(generator)
    else:
        try:
            dense = np.asarray(generator, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameter("generator", _short(generator),
                                   "a square matrix of rates (scipy sparse or array)") from None
        shape = dense.shape
        was_csr = False
        matrix = sps.csr_array(dense) if dense.ndim == 2 else None
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 1:
        raise InvalidParameter("generator", f"<matrix of shape {tuple(shape)}>",
                               "a square matrix of rates with at least one state")
    indptr = np.asarray(matrix.indptr, dtype=np.int64)
    indices = np.asarray(matrix.indices, dtype=np.int64)
    data = np.array(matrix.data, dtype=float)
    return indptr, indices, data, int(shape[0]), was_csr


def _rows(indptr: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr))


def _off_diagonal_rates(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, n: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The rates with the diagonal set to 0, and the exit rates; bad rates refused."""
    rows = _rows(indptr)
    rates = np.where(rows == indices, 0.0, data)
    bad = ~np.isfinite(rates) | (rates < 0)
    if bad.any():
        e = int(np.argmax(bad))
        i, j = int(rows[e]), int(indices[e])
        raise InvalidParameter("generator", f"<{n}x{n} matrix with generator[{i}, {j}]="
                                            f"{float(data[e])!r}>",
                               "off-diagonal rates that are finite and >= 0",
                               f"the rate of the transition {i} -> {j}")
    exit_rates = np.bincount(rows, weights=rates, minlength=n)
    if not np.all(np.isfinite(exit_rates)):
        i = int(np.argmax(~np.isfinite(exit_rates)))
        raise InvalidParameter("generator", f"<{n}x{n} matrix>", "rates whose row sums are "
                               "finite", f"the exit rate of state {i} overflows")
    return rates, exit_rates


def _short(value: object) -> object:
    text = repr(value)
    return value if len(text) <= 60 else f"<{type(value).__name__}>"


def _outputs(name: str, values: Any) -> Mapping[str, Any]:
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise InvalidParameter(name, _short(values), "a mapping of names to arrays",
                               f'e.g. {name}={{"EN": n}}')
    for key in values:
        if not isinstance(key, str) or not key:
            raise InvalidParameter(name, _short(values), "a mapping with nonempty str names")
    return values


def _reward_matrix(rewards: Mapping[str, Any], n: int) -> np.ndarray:
    """The state rewards as an ``(n, K)`` array."""
    columns = []
    for key, values in rewards.items():
        label = f"rewards[{key!r}]"
        try:
            column = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameter(label, _short(values),
                                   f"an array of {n} finite real numbers (one per state)"
                                   ) from None
        if column.shape != (n,):
            raise InvalidParameter(label, f"<array of shape {column.shape}>",
                                   f"an array of shape ({n},), one value per state")
        if not np.all(np.isfinite(column)):
            k = int(np.argmax(~np.isfinite(column)))
            raise InvalidParameter(label, f"<array with [{k}]={float(column[k])!r}>",
                                   "finite real numbers")
        columns.append(column)
    return np.ascontiguousarray(np.column_stack(columns)) if columns else np.zeros((n, 0))


def _impulse_matrix(impulses: Mapping[str, Any], indptr: np.ndarray, indices: np.ndarray,
                    n: int, was_csr: bool) -> np.ndarray:
    """The impulse weights as an ``(nnz, M)`` array over the generator's CSR entries.

    A weight is an ``(n, n)`` matrix (sparse or dense; ``W[i, j]`` for the transition
    ``i -> j``) or, for a CSR generator, a vector of one weight per stored entry.
    """
    nnz = indices.size
    rows = _rows(indptr)
    columns = []
    for key, values in impulses.items():
        label = f"impulses[{key!r}]"
        if sps.issparse(values):
            if values.shape != (n, n):
                raise InvalidParameter(label, f"<matrix of shape {values.shape}>",
                                       f"an ({n}, {n}) matrix of weights or {nnz} entry weights")
            column = np.asarray(sps.csr_array(values)[rows, indices], dtype=float).ravel()
        else:
            try:
                array = np.asarray(values, dtype=float)
            except (TypeError, ValueError):
                raise InvalidParameter(label, _short(values),
                                       "a matrix or vector of real weights") from None
            if array.shape == (n, n):
                column = array[rows, indices]
            elif array.shape == (nnz,) and was_csr:
                column = array
            else:
                need = (f"an ({n}, {n}) matrix of weights or a vector of {nnz} weights, one "
                        "per stored entry of the CSR generator" if was_csr else
                        f"an ({n}, {n}) matrix of weights (per-entry weights need a CSR "
                        "generator)")
                raise InvalidParameter(label, f"<array of shape {array.shape}>", need)
        if not np.all(np.isfinite(column)):
            e = int(np.argmax(~np.isfinite(column)))
            raise InvalidParameter(label, f"<weights with [{int(rows[e])}, {int(indices[e])}]="
                                          f"{float(column[e])!r}>", "finite real numbers")
        columns.append(column)
    return np.ascontiguousarray(np.column_stack(columns)) if columns else np.zeros((nnz, 0))


def _initial(initial: Any, n: int) -> int:
    if isinstance(initial, (bool, np.bool_)) or not isinstance(initial, numbers.Integral) \
            or not 0 <= initial < n:
        raise InvalidParameter("initial", initial, f"a state index in [0, {n - 1}]")
    return int(initial)


def _horizon(horizon: Any) -> float:
    try:
        value = float(horizon)
    except (TypeError, ValueError):
        raise InvalidParameter("horizon", horizon, "a finite real number > 0") from None
    if isinstance(horizon, bool) or not (value > 0 and math.isfinite(value)):
        raise InvalidParameter("horizon", horizon, "a finite real number > 0")
    return value


@dataclass
class RunSlices:
    """The plan of one Gillespie run and its slices' sums, shared by :func:`simulate_ctmc` and
    :func:`symq.markov.simulation_declared.simulate_chain`.

    A run is given a ``horizon`` (slices of equal time ``width``) or ``n_events`` (slices of
    ``per_slice`` events); :meth:`make` checks either against the batch-means rule and the
    work limit before the run, :meth:`intervals` turns the slices' sums into one interval per
    output after it.
    """

    by_time: bool
    t_end: float
    batches: int
    total_events: int
    level: float
    steps_per_event: float
    slice_time: np.ndarray
    slice_sums: np.ndarray

    @classmethod
    def make(cls, horizon: Any, n_events: Any, n_batches: Any, level: Any,
             steps_per_event: float, n_outputs: int) -> RunSlices:
        """Check the run's length (``horizon`` or ``n_events``, not both), ``n_batches`` and
        ``level``; allocate :data:`~symq.core.simrun.RUN_SLICES` slices of ``n_outputs``
        sums."""
        level = check_level(level)
        if horizon is not None and n_events is not None:
            raise InvalidParameter("horizon", horizon, "None when n_events is given",
                                   "give the run length as a time or as a number of events")
        by_time = horizon is not None
        if by_time:
            t_end = _horizon(horizon)
            batches = int(IntegerAtLeast(2).coerce("n_batches", n_batches))
            total_events = 0
        else:
            plan = RunPlan.make(n_jobs=DEFAULT_EVENTS if n_events is None else n_events,
                                n_batches=n_batches, warmup=0.0, level=level,
                                jobs_name="n_events", unit="events")
            batches, total_events = plan.n_batches, plan.n_jobs
            require_work(total_events * steps_per_event,
                         [("n_events", total_events, SIM_WORK_LIMIT / steps_per_event)],
                         what=f"{total_events} events x {steps_per_event:.3g} steps")
            t_end = math.inf
        return cls(by_time, t_end, batches, total_events, level, steps_per_event,
                   np.zeros(RUN_SLICES), np.zeros((RUN_SLICES, n_outputs)))

    @property
    def width(self) -> float:
        """The length of time of a slice (1.0, unused, for a run by events)."""
        return self.t_end / RUN_SLICES if self.by_time else 1.0

    @property
    def per_slice(self) -> int:
        """Events per slice of a run by events."""
        return max(self.total_events // RUN_SLICES, 1)

    @property
    def cap(self) -> int:
        """The events at which a run stops whatever its horizon (the work limit)."""
        return (int(SIM_WORK_LIMIT / self.steps_per_event) if self.by_time
                else self.total_events + 1)

    @property
    def total(self) -> int:
        """The units of :func:`~symq.core.simrun.run_chunked`: slices or events."""
        return RUN_SLICES if self.by_time else self.total_events

    @property
    def unit(self) -> str:
        return "slice" if self.by_time else "event"

    def t_stop(self, stop: int) -> float:
        """Where a kernel call stops by time, for the chunk ending at ``stop`` units."""
        if not self.by_time:
            return math.inf
        return self.t_end if stop >= RUN_SLICES else stop * self.width

    def e_stop(self, stop: int) -> int:
        """Where a kernel call stops by events, for the chunk ending at ``stop`` units."""
        return self.cap if self.by_time else stop

    def intervals(self, names: list[str], events: int, t_now: float, capped: bool,
                  horizon: Any) -> tuple[dict[str, ConfidenceInterval], dict[str, float]]:
        """One interval per output (the columns of ``slice_sums``, named ``names``) and its
        warm-up time, after a run that made ``events`` transitions up to ``t_now``.

        Raises
        ------
        InvalidParameter
            The run reached the work limit before its horizon (``capped``).
        RunTooShort
            A run by time with fewer than ``MIN_JOBS_PER_BATCH`` events per batch.
        """
        if capped:
            raise InvalidParameter(
                "horizon", horizon, f"<= {t_now:.3g} for a run within the work limit",
                f"the run reached {events} events ({self.steps_per_event:.3g} steps each, the "
                f"limit of {SIM_WORK_LIMIT:.0e} steps of one simulation) at that time")
        if self.by_time and events < MIN_JOBS_PER_BATCH * self.batches:
            need = MIN_JOBS_PER_BATCH * self.batches
            longer = self.t_end * need / max(events, 1)
            raise RunTooShort("horizon", horizon, f">= about {longer:.3g}",
                              f"the run made {events} transitions; {MIN_JOBS_PER_BATCH} per "
                              f"batch for n_batches={self.batches} need {need}",
                              jobs_needed=longer)
        kept = self.slice_time > 0
        durations = self.slice_time[kept]
        sums = self.slice_sums[kept]
        intervals: dict[str, ConfidenceInterval] = {}
        warmup: dict[str, float] = {}
        for column, name in enumerate(names):
            intervals[name] = analyse_ratio(sums[:, column], durations, self.batches,
                                            self.level, run_length=events, unit="events")
            cut = mser_truncation(sums[:, column] / durations, batch=1)
            warmup[name] = float(durations[:cut.drop].sum())
        return intervals, warmup


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def simulate_ctmc(generator: Any, rewards: Mapping[str, ArrayLike] | None, *,
                  initial: int = 0, horizon: float | None = None, n_events: int | None = None,
                  n_batches: int = 30, level: float = 0.95, rng: RngLike = None,
                  impulses: Mapping[str, Any] | None = None,
                  progress: bool = False) -> CTMCEstimate:
    r"""Simulate a finite CTMC by Gillespie's direct method and estimate long-run averages.

    Parameters
    ----------
    generator : scipy sparse matrix or array_like, shape (n, n)
        The generator :math:`Q`: ``Q[i, j]`` is the rate of ``i -> j`` (finite, ``>= 0``);
        the diagonal is not used (the exit rates are the off-diagonal row sums).  CSR is used
        as given; other forms are converted.
    rewards : mapping of str to array_like (n,), or None
        State rewards; each gives the interval of its time average :math:`\sum_i \pi_i r_i`.
    initial : int, default 0
        The start state.
    horizon : float, optional
        Time to simulate (slices of equal time).  Give ``horizon`` or ``n_events``, not both.
    n_events : int, optional
        Transitions to simulate (slices of equal numbers of events); 10**6 when neither is
        given.  At least :data:`~symq.core.simrun.MIN_JOBS_PER_BATCH` per batch.
    n_batches : int, default 30
        Batches of the intervals, ``>= 2``.
    level : float, default 0.95
        Confidence level.
    rng : int, SeedSequence, numpy.random.Generator or None
        Randomness; the same seed gives the same result.
    impulses : mapping of str to weights, optional
        Impulse rewards: an ``(n, n)`` matrix ``W`` (``W[i, j]`` counted at each transition
        ``i -> j``) or, for a CSR generator, one weight per stored entry (booleans allowed).
        Each gives the interval of its rate per unit time.
    progress : bool, default False
        Show a tqdm bar (the run in 100 chunks; the same result as without).

    Returns
    -------
    CTMCEstimate

    Raises
    ------
    InvalidParameter
        A matrix that is not square, a negative or non-finite off-diagonal rate (naming the
        entry), a reward or weight of the wrong shape, a bad ``initial``, ``horizon``,
        ``n_events``, ``n_batches`` or ``level``; a run over the work limit; or an absorbing
        state (no outgoing rate) reached before the end of the run: the chain stops there, and
        the message names the state.
    RunTooShort
        A ``horizon`` whose run has fewer than ``MIN_JOBS_PER_BATCH * n_batches`` events,
        with the horizon that would have about enough.

    Examples
    --------
    A two-state chain (rates 1 and 3) spends 3/4 of its time in state 0 and jumps
    :math:`2 \cdot 1 \cdot 3/4 = 1.5` times per unit time:

    >>> import numpy as np
    >>> Q = np.array([[0.0, 1.0], [3.0, 0.0]])
    >>> est = simulate_ctmc(Q, {"p0": [1, 0]}, horizon=50_000.0, rng=2,
    ...                     impulses={"jumps": np.ones((2, 2))})
    >>> est["p0"].contains(0.75), est["jumps"].contains(1.5)
    (True, True)
    """
    indptr, indices, data, n, was_csr = _as_csr(generator)
    rates, exit_rates = _off_diagonal_rates(indptr, indices, data, n)
    reward_map = _outputs("rewards", rewards)
    impulse_map = _outputs("impulses", impulses)
    clash = set(reward_map) & set(impulse_map)
    if clash:
        raise InvalidParameter("impulses", sorted(clash), "names that are not also rewards")
    if not reward_map and not impulse_map:
        raise InvalidParameter("rewards", rewards, "at least one reward (or an impulse)",
                               'e.g. rewards={"EN": n}')
    reward = _reward_matrix(reward_map, n)
    weight = _impulse_matrix(impulse_map, indptr, indices, n, was_csr)
    start = _initial(initial, n)
    steps_per_event = 3.0 + float(np.diff(indptr).mean()) + reward.shape[1] + weight.shape[1]
    run = RunSlices.make(horizon, n_events, n_batches, level, steps_per_event,
                         reward.shape[1] + weight.shape[1])
    if exit_rates[start] <= 0.0:
        _absorbed(start, 0, 0.0, start)
    weighted = np.any(weight != 0.0, axis=1) if weight.shape[1] else np.zeros(indices.size, bool)
    position = np.array([start, 0], dtype=np.int64)
    clock = np.array([0.0, -1.0])
    slice_reward = run.slice_sums[:, :reward.shape[1]]
    slice_impulse = run.slice_sums[:, reward.shape[1]:]
    status = 0

    def step(stop: int) -> tuple[int, bool]:
        nonlocal status
        status = ctmc_kernel(indptr, indices, rates, exit_rates, reward, weight, weighted,
                             run.by_time, run.width, run.per_slice, run.t_stop(stop),
                             run.e_stop(stop), run.cap, position, clock, run.slice_time,
                             slice_reward, slice_impulse)
        done = stop if run.by_time and status == 0 else int(position[1])
        return done, status != 0

    seed_numba(kernel_seed(rng))
    tic = time.perf_counter()
    run_chunked(step, run.total, progress=bool(progress), desc=f"CTMC n={n}", unit=run.unit)
    seconds = time.perf_counter() - tic
    events, t_now = int(position[1]), float(clock[0])
    if status == ABSORBED:
        _absorbed(int(position[0]), events, t_now, start)
    intervals, warmup = run.intervals(list(reward_map) + list(impulse_map), events, t_now,
                                      status == CAPPED, horizon)
    return CTMCEstimate(
        rewards={name: intervals[name] for name in reward_map},
        impulses={name: intervals[name] for name in impulse_map},
        n_states=n, n_events=events, horizon=t_now, n_batches=run.batches, warmup=warmup,
        events_per_second=events / seconds if seconds > 0 else math.inf, seconds=seconds)


def _absorbed(state: int, events: int, t: float, start: int) -> None:
    raise InvalidParameter(
        "generator", f"<matrix whose state {state} has no outgoing rate>",
        f"a chain with no absorbing state reachable from initial={start}",
        f"the chain reached state {state} (exit rate 0) at time {t:.6g} after {events} events "
        "and stops there: its long-run averages are those of that state; simulate the "
        "transient part or remove the absorption")
