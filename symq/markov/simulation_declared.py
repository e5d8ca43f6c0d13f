r"""Gillespie simulation of a declared chain from its rates: evidence from the declaration itself.

:func:`simulate_chain` compiles the declaration's formulas with numba
(:func:`symq.core.compiler.compile`, numba backend) into three functions of the state vector
``x`` and the parameters ``p``: the guarded rate of every jump, the update of the jumps that
are not constant shifts, and the declared rewards (an event as its indicator).  The kernel
(:func:`symq.markov.simulation_kernel.declared_kernel`) runs Gillespie's direct method on the
state vector, with no state space and no generator: so it simulates a chain with an unbounded
level (a QBD, a retrial orbit) as well as a finite one, and its evidence shares no code with
the state-space builder, the QBD solvers or the symbolic solver it is compared with.

At every state it visits it checks the rates (finite, ``>= 0``) and, at every jump it takes,
the new state (integers within the declared bounds); a violation stops the run with the
builder's message, naming the jump and the state.  A jump whose update leaves the state as it
is (a blocked arrival written ``min(n + 1, K)``) does not move the chain and is not counted,
as in :func:`~symq.markov.statespace.build_state_space`.

What is estimated, per declared output: a reward's time average, an event's time fraction, and
for ``throughput:LABEL`` the time average of the labelled jumps' total rate at the current state
(the conditional expectation of their firings: the same long-run mean as counting them, with a
smaller variance).  The run plan, the slices and the intervals are those of
:func:`symq.markov.simulation.simulate_ctmc` (:class:`~symq.markov.simulation.RunSlices`: MSER
warm-up, batch means tested for correlation, a ``doubt`` when the run is too short).

A chain whose formulas use a function numba cannot compile (the special functions of
:mod:`symq.core.formula`) is simulated from its generator instead when it is finite
(:func:`~symq.markov.simulation.simulate_ctmc` on the built state space; the ``method`` says
so), and refused when it has an unbounded level.

References
----------
D. T. Gillespie, Exact stochastic simulation of coupled chemical reactions, *J. Phys. Chem.*
81(25), 2340-2361, 1977.

Examples
--------
An M/M/1 queue, unbounded: :math:`E[N] = \rho/(1 - \rho) = 1` at :math:`\rho = 1/2`.

>>> from symq.markov.chain import Jump, MarkovChain, StateVariable
>>> mm1 = MarkovChain([StateVariable("n", 0, None)],
...                   [Jump("lam", {"n": "n + 1"}, label="arrive"),
...                    Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
...                   parameters=("lam", "mu"), outputs={"EN": "n", "X": "throughput:serve"})
>>> est = simulate_chain(mm1, {"lam": 1.0, "mu": 2.0}, n_events=400_000, rng=3)
>>> est["EN"].contains(1.0), est["X"].contains(1.0)
(True, True)
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy as sp

from symq.core.compiler import compile as compile_expr
from symq.core.errors import InvalidParameter
from symq.core.randomness import RngLike
from symq.core.simrun import kernel_seed, run_chunked, seed_numba

from .chain import MarkovChain
from .simulation import CTMCEstimate, RunSlices, simulate_ctmc
from .simulation_kernel import ABSORBED, BAD_RATE, BAD_UPDATE, CAPPED, declared_kernel

__all__ = ["simulate_chain"]

#: The method of a run from the declared rates.
METHOD = "Gillespie simulation from the declared rates (numba), batch means"


@dataclass(frozen=True)
class _Compiled:
    """The declaration as numba functions of ``(x, p)``: ``rates`` (``J`` guarded rates),
    ``update`` (``(j, x, p)``: the new state of a jump that is not a shift), ``rewards`` (the
    ``R`` reward and event outputs, then a 0 so the tuple is never empty), and per jump
    ``shift[j]`` / ``delta[j]`` (a constant shift of the state)."""

    rates: Any
    update: Any
    rewards: Any
    shift: np.ndarray
    delta: np.ndarray
    reward_names: tuple[str, ...]
    throughput_names: tuple[str, ...]
    counted: np.ndarray


_CACHE: dict[int, tuple[MarkovChain, _Compiled]] = {}
_LOCK = threading.Lock()
#: Chains whose compiled functions are kept (the oldest is dropped first).
CACHED_CHAINS = 32


def _floating(expr: Any) -> Any:
    """``expr`` with a constant made a float (a compiled tuple must be all floats)."""
    expr = sp.sympify(expr)
    return sp.Float(expr) if not expr.free_symbols else expr


def _compile(chain: MarkovChain) -> _Compiled:
    """Compile the chain's rates, updates and rewards (cached per chain object)."""
    with _LOCK:
        hit = _CACHE.get(id(chain))
    if hit is not None and hit[0] is chain:
        return hit[1]
    x, p = sp.IndexedBase("x", real=True), sp.IndexedBase("p", real=True)
    jump_index = sp.Symbol("jump_index", integer=True)
    to_arrays = {s: x[k] for k, s in enumerate(chain.variable_symbols)}
    to_arrays.update({s: p[k] for k, s in enumerate(chain.parameter_symbols)})
    n_vars = len(chain.variables)
    shift = np.zeros(len(chain.jumps), dtype=np.bool_)
    delta = np.zeros((len(chain.jumps), n_vars))
    rates, general = [], []
    for j, jump in enumerate(chain.jumps):
        rates.append(sp.Piecewise((_floating(jump.rate), jump.guard), (sp.Float(0.0), True))
                     .xreplace(to_arrays))
        steps = [sp.expand(u - v) for u, v in zip(jump.update, chain.variable_symbols,
                                                    strict=True)]
        if all(step.is_number and step.is_integer for step in steps):
            shift[j] = True
            delta[j] = [float(step) for step in steps]
        else:
            general.append(j)
    updates = []
    for k, v in enumerate(chain.variable_symbols):
        pieces = [(_floating(chain.jumps[j].update[k]), sp.Eq(jump_index, j)) for j in general]
        updates.append(sp.Piecewise(*pieces, (_floating(v), True)).xreplace(to_arrays))
    reward_names, rewards = [], []
    throughput_names, counted = [], []
    for name, out in chain.outputs.items():
        if out.kind == "throughput":
            throughput_names.append(name)
            counted.append([1.0 if jump.label == out.label else 0.0 for jump in chain.jumps])
            continue
        reward_names.append(name)
        rewards.append(sp.Piecewise((sp.Float(1.0), out.expr), (sp.Float(0.0), True))
                       if out.kind == "probability" else _floating(out.expr))
    rewards = [r.xreplace(to_arrays) for r in rewards] + [sp.Float(0.0)]
    compiled = _Compiled(
        rates=compile_expr(rates, [x, p], backend="numba").function,
        update=compile_expr(updates, [jump_index, x, p], backend="numba").function,
        rewards=compile_expr(rewards, [x, p], backend="numba").function,
        shift=shift, delta=delta, reward_names=tuple(reward_names),
        throughput_names=tuple(throughput_names),
        counted=np.array(counted, dtype=float).T.reshape(len(chain.jumps), len(counted)))
    with _LOCK:
        if len(_CACHE) >= CACHED_CHAINS:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[id(chain)] = (chain, compiled)
    return compiled


def simulate_chain(chain: MarkovChain, params: Mapping[str, Any] | None = None, *,
                   horizon: float | None = None, n_events: int | None = None,
                   n_batches: int = 30, level: float = 0.95, rng: RngLike = None,
                   progress: bool = False) -> CTMCEstimate:
    """Simulate a declared chain from its rates and estimate each declared output, as evidence
    beside :func:`~symq.markov.stationary.stationary` and
    :func:`~symq.markov.levels.qbd_stationary`.

    Parameters
    ----------
    chain : MarkovChain
        The declaration (with at least one output); it may have one unbounded variable.
    params : mapping
        A value for every declared parameter.
    horizon, n_events, n_batches, level, rng, progress
        As for :func:`~symq.markov.simulation.simulate_ctmc`: the run's length as a time or a
        number of events (10**6 events when neither is given), the batches, the confidence
        level, the randomness (the same seed gives the same result) and a progress bar.

    Returns
    -------
    CTMCEstimate
        One interval per declared output, under its name (rewards and events in ``rewards``,
        throughputs in ``impulses``); ``n_states`` is None (no state space is built), unless
        the chain was simulated from its generator (see the module's notes).

    Raises
    ------
    InvalidParameter
        No output; a parameter missing or out of its domain; a rate negative or not finite at
        a state the run reached, or an update leaving the bounds (naming the jump and the
        state); an absorbing state reached; a run over the work limit.
    RunTooShort
        A ``horizon`` too short for the batches.

    Examples
    --------
    >>> from symq.markov.library import mm1k
    >>> est = simulate_chain(mm1k(3), {"lam": 1.0, "mu": 2.0}, n_events=200_000, rng=2)
    >>> est["P_block"].contains(1 / 15)                 # (1/8) / (1 + 1/2 + 1/4 + 1/8)
    True
    """
    from .statespace import parameter_values

    if not chain.outputs:
        raise InvalidParameter("chain.outputs", {}, "at least one declared output to estimate")
    values = parameter_values(chain, params)
    try:
        compiled = _compile(chain)
        p = np.array([values[name] for name in chain.parameters], dtype=float)
        _probe(compiled, chain, p)
    except Exception as exc:  # noqa: BLE001 - numba's typing errors have no common public base
        if isinstance(exc, InvalidParameter):
            raise
        return _from_generator(chain, values, exc, horizon=horizon, n_events=n_events,
                               n_batches=n_batches, level=level, rng=rng, progress=progress)
    n_jumps, n_vars = compiled.delta.shape
    n_rewards, n_counted = len(compiled.reward_names), len(compiled.throughput_names)
    steps = 4.0 + 2.0 * n_jumps + n_rewards + n_counted * n_jumps + n_vars
    run = RunSlices.make(horizon, n_events, n_batches, level, steps, n_rewards + n_counted)
    lows = np.array([v.low for v in chain.variables], dtype=float)
    highs = np.array([math.inf if v.high is None else v.high for v in chain.variables])
    x = np.array(chain.initial, dtype=float)
    position = np.zeros(2, dtype=np.int64)
    clock = np.array([0.0, -1.0])
    status = 0

    def step(stop: int) -> tuple[int, bool]:
        nonlocal status
        status = declared_kernel(compiled.rates, compiled.update, compiled.rewards, p,
                                 compiled.shift, compiled.delta, compiled.counted, lows, highs,
                                 run.by_time, run.width, run.per_slice, run.t_stop(stop),
                                 run.e_stop(stop), run.cap, x, position, clock,
                                 run.slice_time, run.slice_sums)
        done = stop if run.by_time and status == 0 else int(position[0])
        return done, status != 0

    seed_numba(kernel_seed(rng))
    tic = time.perf_counter()
    run_chunked(step, run.total, progress=bool(progress), desc=chain.name or "CTMC",
                unit=run.unit)
    seconds = time.perf_counter() - tic
    events, t_now = int(position[0]), float(clock[0])
    if status in (BAD_RATE, BAD_UPDATE, ABSORBED):
        _stopped(chain, values, status, int(position[1]), x, events, t_now)
    names = list(compiled.reward_names) + list(compiled.throughput_names)
    intervals, warmup = run.intervals(names, events, t_now, status == CAPPED, horizon)
    return CTMCEstimate(
        rewards={name: intervals[name] for name in compiled.reward_names},
        impulses={name: intervals[name] for name in compiled.throughput_names},
        n_states=None, n_events=events, horizon=t_now, n_batches=run.batches, warmup=warmup,
        events_per_second=events / seconds if seconds > 0 else math.inf, method=METHOD,
        seconds=seconds)


def _probe(compiled: _Compiled, chain: MarkovChain, p: np.ndarray) -> None:
    """Compile the kernel for this chain (no event is simulated): numba's typing errors come
    here, before the run."""
    n_out = len(compiled.reward_names) + len(compiled.throughput_names)
    declared_kernel(compiled.rates, compiled.update, compiled.rewards, p, compiled.shift,
                    compiled.delta, compiled.counted,
                    np.zeros(len(chain.variables)), np.zeros(len(chain.variables)), False, 1.0,
                    1, math.inf, 0, 0, np.array(chain.initial, dtype=float),
                    np.zeros(2, dtype=np.int64), np.array([0.0, -1.0]), np.zeros(1),
                    np.zeros((1, n_out)))


def _from_generator(chain: MarkovChain, values: Mapping[str, float], reason: Exception,
                    **run: Any) -> CTMCEstimate:
    """A finite chain whose formulas numba cannot compile: simulate its generator instead."""
    from .statespace import build_state_space, output_rewards

    if not all(v.bounded for v in chain.variables):
        raise InvalidParameter(
            "chain", chain.name or repr(chain), "formulas numba can compile (the elementary "
            "functions), for the simulation of a chain with an unbounded level",
            f"compiling its rates failed: {type(reason).__name__}") from reason
    space = build_state_space(chain, values)
    rewards: dict[str, np.ndarray] = {}
    for name in chain.outputs:
        reward = output_rewards(space, name)
        if not np.all(np.isfinite(reward)):
            k = int(np.flatnonzero(~np.isfinite(reward))[0])
            raise InvalidParameter(f"outputs.{name}", float(reward[k]), "a finite reward at "
                                   "every reachable state", f"at the state {space.describe(k)}")
        rewards[name] = reward
    estimate = simulate_ctmc(space.generator, rewards, initial=space.initial, **run)
    return replace(estimate, method="Gillespie simulation of the generator (the rates use a "
                   "function numba cannot compile), batch means")


def _stopped(chain: MarkovChain, values: Mapping[str, float], status: int, j: int,
             x: np.ndarray, events: int, t: float) -> None:
    """The run stopped at the state ``x``: raise the message of what happened there."""
    from .statespace import _targets, _with, evaluate

    state = np.rint(x).astype(np.int64)
    if status == ABSORBED:
        raise InvalidParameter(
            "chain", chain.describe(state), "a chain with no absorbing state reachable from "
            "its initial state", f"the run reached {chain.describe(state)} (no jump enabled "
            f"with a positive rate) at time {t:.6g} after {events} events and stops there: its "
            "long-run averages are those of that state" + _with(values))
    jump = chain.jumps[j]
    if status == BAD_RATE:
        with np.errstate(all="ignore"):
            rate = float(evaluate(jump.rate, chain, state[None, :], values)[0])
        raise InvalidParameter(
            f"{jump.where}.rate", rate, "a finite rate >= 0",
            f"at the state {chain.describe(state)} reached by the simulation, where "
            f"{jump.where} is enabled" + _with(values))
    updated = [evaluate(u, chain, state[None, :], values) for u in jump.update]
    _targets(chain, jump, updated, state[None, :],
             np.array([v.low for v in chain.variables]),
             np.array([np.iinfo(np.int64).max if v.high is None else v.high
                       for v in chain.variables]), values)
    raise InvalidParameter(  # pragma: no cover - _targets raises for what the kernel refused
        f"{jump.where}.update", chain.describe(state), "an integer state within the bounds")
