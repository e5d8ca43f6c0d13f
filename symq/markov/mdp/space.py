"""The state-action space of a declared MDP for given parameter values and truncation.

The reachable states are those reachable from the initial state under *some* policy: the
states of the guarded-jump chain whose jumps are every uncontrolled jump and every action's
jumps (guarded by their action's guard), built by
:func:`symq.markov.statespace.build_state_space` with its checks (rates finite and ``>= 0``,
updates integer and within bounds, the memory bounded before building).  A countable variable
``v`` is truncated at ``v <= N``: a jump that would leave the truncation is blocked there (it
does not fire).

Per state, the actions whose guard holds are its *state-action pairs*, stored state-major
(``state_ptr``); per pair, its cost rate (the process's, the action's and each enabled jump's
rate times its lump cost) and its transitions (CSR: ``trans_ptr``, ``trans_target``,
``trans_rate``; self-loops left out).  This is the layout the solvers of
:mod:`symq.markov.mdp.solvers` sweep (Puterman 1994, *Markov Decision Processes*, sec. 11.5):
:class:`StateActionSpace` holds it, :class:`DecisionSpace` adds the declaration it came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sps
import sympy as sp

from symq.core.errors import InvalidParameter

from ..chain import Jump, MarkovChain, ParsedJump, StateVariable
from ..statespace import build_state_space, evaluate
from .model import MarkovDecisionProcess

__all__ = ["DecisionSpace", "StateActionSpace", "build_decision_space"]

_UNION_NAME = re.compile(r"^jumps\[(\d+)\]")


@dataclass(frozen=True, repr=False)
class StateActionSpace:
    """States, state-action pairs, costs and transitions: what the solvers sweep.

    The solvers of :mod:`symq.markov.mdp.solvers` read only this; a declared MDP builds its
    :class:`DecisionSpace` (this plus the declaration), and a model that is not declared by
    guarded jumps may build one from its own arrays (the discretised dispatching problem of
    :mod:`symq.dispatch.vi.decision_space`).  The process is in continuous time: a discrete-time
    model enters with its transition probabilities as rates (its gain is then the average cost
    per step, since the chain with generator ``P - I`` has the stationary law of ``P``).

    Attributes
    ----------
    label : str
        What the space is of, for messages (``"MDP"`` or the model's name).
    variable_names : tuple of str
        The state variables, one per column of :attr:`states`.
    action_names : tuple of str
        The actions.
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers, lexicographically ordered.
    state_ptr : numpy.ndarray
        ``(n_states + 1,)``: the pairs of state ``s`` are ``state_ptr[s]:state_ptr[s+1]``.
    pair_action : numpy.ndarray
        The action (index into :attr:`action_names`) of each pair.
    pair_cost : numpy.ndarray
        Cost rate of each pair, lump costs included as rate times cost.
    pair_out : numpy.ndarray
        Total rate out of the state under each pair (self-loops excluded).
    trans_ptr, trans_target, trans_rate : numpy.ndarray
        The transitions of pair ``k``: ``trans_target[trans_ptr[k]:trans_ptr[k+1]]`` at the
        rates ``trans_rate[...]`` (a target may repeat: the rates add).
    initial : int
        Index of the initial state.
    boundary : numpy.ndarray
        Boolean, the states on a truncation bound.
    """

    label: str
    variable_names: tuple[str, ...]
    action_names: tuple[str, ...]
    states: np.ndarray
    state_ptr: np.ndarray
    pair_action: np.ndarray
    pair_cost: np.ndarray
    pair_out: np.ndarray
    trans_ptr: np.ndarray
    trans_target: np.ndarray
    trans_rate: np.ndarray
    initial: int
    boundary: np.ndarray

    @property
    def n_states(self) -> int:
        """Number of reachable states."""
        return int(self.states.shape[0])

    @property
    def n_pairs(self) -> int:
        """Number of state-action pairs."""
        return int(self.pair_action.size)

    @property
    def pair_state(self) -> np.ndarray:
        """The state of each pair."""
        return np.repeat(np.arange(self.n_states), np.diff(self.state_ptr))

    @property
    def pair_table(self) -> np.ndarray:
        """``(n_states, n_actions)``: the pair of each state and action, -1 where the action
        is not allowed."""
        table = np.full((self.n_states, len(self.action_names)), -1, dtype=np.int64)
        table[self.pair_state, self.pair_action] = np.arange(self.n_pairs)
        return table

    @property
    def allowed(self) -> np.ndarray:
        """``(n_states, n_actions)`` booleans: the actions allowed at each state."""
        return self.pair_table >= 0

    def describe(self, index: int) -> str:
        """State ``index`` as ``n=3, m=0``."""
        return ", ".join(f"{name}={int(x)}" for name, x in zip(self.variable_names,
                                                                self.states[index],
                                                                strict=True))

    def pairs_of(self, policy: np.ndarray) -> np.ndarray:
        """The pair chosen at each state by ``policy`` (an action index per state).

        Raises
        ------
        InvalidParameter
            The policy picks an action not allowed at some state (named).
        """
        policy = np.asarray(policy, dtype=np.int64)
        n = self.n_states
        starts, stops = self.state_ptr[:-1], self.state_ptr[1:]
        table = self.pair_table
        if policy.shape != (n,) or policy.min(initial=0) < 0 \
                or policy.max(initial=0) >= len(self.action_names):
            raise InvalidParameter("policy", policy.shape, f"an action index per state ({n})")
        chosen = table[np.arange(n), policy]
        bad = np.flatnonzero(chosen < 0)
        if bad.size:
            s = int(bad[0])
            allowed = [self.action_names[a]
                       for a in self.pair_action[starts[s]:stops[s]]]
            raise InvalidParameter("policy", self.action_names[int(policy[s])],
                                   f"an action allowed at {self.describe(s)}: "
                                   + ", ".join(allowed))
        return chosen

    def generator(self, pairs: np.ndarray) -> sps.csr_matrix:
        """The generator of the chain that uses pair ``pairs[s]`` at each state ``s``."""
        n = self.n_states
        counts = self.trans_ptr[pairs + 1] - self.trans_ptr[pairs]
        rows = np.repeat(np.arange(n), counts)
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        where = np.repeat(self.trans_ptr[pairs], counts) + offsets
        off = sps.csr_matrix((self.trans_rate[where], (rows, self.trans_target[where])),
                             shape=(n, n))
        off.sum_duplicates()
        return (off - sps.diags(np.asarray(off.sum(axis=1)).ravel())).tocsr()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n_states={self.n_states}, n_pairs={self.n_pairs}, "
                f"transitions={self.trans_target.size})")


@dataclass(frozen=True, repr=False)
class DecisionSpace(StateActionSpace):
    """The :class:`StateActionSpace` of a declared MDP at given parameter values.

    Attributes
    ----------
    mdp : MarkovDecisionProcess
        The declaration.
    params : dict
        Parameter values (floats).
    truncation : dict
        The bound of each countable variable (empty when every variable is bounded).
    """

    mdp: MarkovDecisionProcess
    params: dict[str, float]
    truncation: dict[str, int]

    def __repr__(self) -> str:
        return (f"DecisionSpace(n_states={self.n_states}, n_pairs={self.n_pairs}, "
                f"transitions={self.trans_target.size}, truncation={self.truncation})")


def _union_jumps(mdp: MarkovDecisionProcess, truncation: Mapping[str, int]
                 ) -> tuple[list[Jump], list[tuple[int, ParsedJump, sp.Expr]]]:
    """Every jump (uncontrolled, then each action's), its guard joined with its action's guard
    and the truncation; with its owner (-1 uncontrolled, else the action), parse and cost."""
    names = [v.name for v in mdp.variables]
    owned: list[tuple[int, ParsedJump, sp.Expr]] = [
        (-1, pj, c) for pj, c in zip(mdp.base.jumps, mdp.jump_costs, strict=True)]
    for a, action in enumerate(mdp.actions):
        owned += [(a, pj, c) for pj, c in zip(action.jumps, action.costs, strict=True)]
    jumps = []
    for owner, pj, _ in owned:
        guard = pj.guard if owner < 0 else sp.And(mdp.actions[owner].guard, pj.guard)
        for v, bound in truncation.items():
            if v in pj.changed:
                k = names.index(v)
                guard = sp.And(guard, sp.Le(pj.update[k], bound))
        update = {v: pj.update[k] for k, v in enumerate(names) if v in pj.changed}
        jumps.append(Jump(pj.rate, update, guard))
    return jumps, owned


def _renamed(exc: InvalidParameter, owned: list[tuple[int, ParsedJump, sp.Expr]]
             ) -> InvalidParameter:
    """An error of the union chain, its ``jumps[i]`` renamed as the user declared the jump."""
    match = _UNION_NAME.match(exc.name)
    if not match:
        return exc
    where = owned[int(match.group(1))][1].where
    return InvalidParameter(where + exc.name[match.end():], exc.value, exc.domain, exc.reason)


def _finite(where: str, values: np.ndarray, states: np.ndarray, mdp: MarkovDecisionProcess,
            what: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameter(where, float(values[i]), f"a finite {what}",
                               f"at the reachable state {mdp.describe(states[i])}")


def _within_truncation(mdp: MarkovDecisionProcess, union: MarkovChain, states: np.ndarray,
                       values: Mapping[str, float], truncation: Mapping[str, int],
                       avail: np.ndarray) -> np.ndarray:
    """``avail`` without the actions that would push the state past the truncation, at the
    states where another action remains: a truncation must not let the decision maker gain
    by having jobs blocked there (routing to a full queue to lose a job, say)."""
    if not truncation:
        return avail
    names = [v.name for v in mdp.variables]
    leaves = np.zeros_like(avail)
    for a, action in enumerate(mdp.actions):
        for pj in action.jumps:
            changed = [v for v in truncation if v in pj.changed]
            if not changed:
                continue
            rows = np.flatnonzero(avail[:, a])
            on = rows[evaluate(pj.guard, union, states[rows], values) != 0]
            if not on.size:
                continue
            on = on[evaluate(pj.rate, union, states[on], values) > 0]
            for v in changed:
                k = names.index(v)
                new = evaluate(pj.update[k], union, states[on], values)
                leaves[on[new > truncation[v]], a] = True
    kept = avail & ~leaves
    return np.where(kept.any(axis=1)[:, None], kept, avail)


def build_decision_space(mdp: MarkovDecisionProcess, params: Mapping[str, Any] | None,
                         truncation: Mapping[str, int] | None = None) -> DecisionSpace:
    """The reachable states and state-action pairs of ``mdp`` at ``params``.

    Parameters
    ----------
    mdp : MarkovDecisionProcess
    params : mapping
        A value for every declared parameter.
    truncation : mapping, optional
        The bound ``N`` of each countable variable (required for each).

    Raises
    ------
    InvalidParameter
        A missing truncation; a rate or update that fails the chain's checks (named as the
        jump was declared, ``admit.jumps[0].rate``); a cost that is not finite at a reachable
        state (``cost``, ``admit.cost``, ``admit.jumps[0].cost``); a reachable state where no
        action may be chosen (``actions``, naming the state and the guards).
    ResourceLimit
        The product of the variables' ranges does not fit the memory budget.
    """
    truncation = dict(truncation or {})
    for name in mdp.unbounded:
        if name not in truncation:
            raise InvalidParameter(f"truncation.{name}", None, "an integer bound for the "
                                   f"countable variable {name}")
    variables: list[StateVariable] = []
    for v in mdp.variables:
        if v.high is None:
            bound = truncation[v.name]
            if isinstance(bound, bool) or not isinstance(bound, (int, np.integer)) \
                    or bound <= v.low:
                raise InvalidParameter(f"truncation.{v.name}", bound,
                                       f"an integer > {v.low}, the low bound of {v.name}")
            variables.append(StateVariable(v.name, v.low, int(bound)))
        else:
            variables.append(v)
    jumps, owned = _union_jumps(mdp, truncation)
    try:
        union = MarkovChain(variables, jumps, mdp.parameters, mdp.base.initial,
                            name=mdp.name)
        space = build_state_space(union, params)
    except InvalidParameter as exc:
        raise _renamed(exc, owned) from None
    states, values = space.states, space.params
    n, n_actions = states.shape[0], len(mdp.actions)
    lows = np.array([v.low for v in variables], dtype=np.int64)
    highs = np.array([v.high for v in variables], dtype=np.int64)
    strides = np.ones(len(lows), dtype=np.int64)
    for k in range(len(lows) - 2, -1, -1):
        strides[k] = strides[k + 1] * (highs[k + 1] - lows[k + 1] + 1)
    codes = (states - lows) @ strides

    with np.errstate(all="ignore"):
        avail = np.column_stack([evaluate(a.guard, union, states, values) != 0
                                 for a in mdp.actions])
        empty = np.flatnonzero(~avail.any(axis=1))
        if empty.size:
            s = int(empty[0])
            raise InvalidParameter(
                "actions", list(mdp.action_names), "at least one action allowed at every "
                "reachable state", f"no action's guard holds at {mdp.describe(states[s])} "
                f"({empty.size} such states); guards: "
                + "; ".join(f"{a.name}: {a.guard}" for a in mdp.actions))
        avail = _within_truncation(mdp, union, states, values, truncation, avail)
        base_cost = evaluate(mdp.cost, union, states, values)
        _finite("cost", base_cost, states, mdp, "cost rate")
        pair_index = np.full((n, n_actions), -1, dtype=np.int64)
        pair_index[avail] = np.arange(int(avail.sum()))
        pair_state, pair_action = np.nonzero(avail)
        pair_cost = base_cost[pair_state].copy()
        for a, action in enumerate(mdp.actions):
            rows = np.flatnonzero(avail[:, a])
            if action.cost != 0:
                c = evaluate(action.cost, union, states[rows], values)
                _finite(f"{action.name}.cost", c, states[rows], mdp, "cost rate")
                pair_cost[pair_index[rows, a]] += c
        sources, targets, rates, pairs = [], [], [], []
        for j, (owner, pj, lump) in enumerate(owned):
            parsed = union.jumps[j]
            on = np.flatnonzero(evaluate(parsed.guard, union, states, values) != 0)
            if not on.size:
                continue
            rate = evaluate(parsed.rate, union, states[on], values)
            keep = rate > 0
            on, rate = on[keep], rate[keep]
            new = np.column_stack([evaluate(u, union, states[on], values)
                                   for u in parsed.update]).astype(np.int64) \
                if on.size else np.empty((0, len(lows)), dtype=np.int64)
            target = np.searchsorted(codes, (new - lows) @ strides)
            if lump != 0 and on.size:
                c = evaluate(lump, union, states[on], values)
                _finite(f"{pj.where}.cost", c, states[on], mdp, "lump cost")
                flow = rate * c
                if owner < 0:
                    for a in range(n_actions):
                        ok = avail[on, a]
                        np.add.at(pair_cost, pair_index[on[ok], a], flow[ok])
                else:
                    np.add.at(pair_cost, pair_index[on, owner], flow)
            moving = target != on
            on, rate, target = on[moving], rate[moving], target[moving]
            owners = range(n_actions) if owner < 0 else (owner,)
            for a in owners:
                ok = avail[on, a]
                sources.append(on[ok])
                targets.append(target[ok])
                rates.append(rate[ok])
                pairs.append(pair_index[on[ok], a])
    pair = np.concatenate(pairs) if pairs else np.empty(0, dtype=np.int64)
    order = np.argsort(pair, kind="stable")
    n_pairs = pair_state.size
    trans_target = (np.concatenate(targets) if targets else np.empty(0, np.int64))[order]
    trans_rate = (np.concatenate(rates) if rates else np.empty(0))[order]
    trans_ptr = np.zeros(n_pairs + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair, minlength=n_pairs), out=trans_ptr[1:])
    pair_out = np.bincount(pair[order], weights=trans_rate, minlength=n_pairs)
    state_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(avail.sum(axis=1), out=state_ptr[1:])
    names = [v.name for v in variables]
    boundary = np.zeros(n, dtype=bool)
    for v, bound in truncation.items():
        boundary |= states[:, names.index(v)] == bound
    return DecisionSpace(mdp.name or "MDP", tuple(names), mdp.action_names, states, state_ptr,
                         pair_action.astype(np.int64), pair_cost.astype(float),
                         pair_out.astype(float), trans_ptr, trans_target.astype(np.int64),
                         trans_rate.astype(float), space.initial, boundary, mdp=mdp,
                         params=values, truncation=truncation)
