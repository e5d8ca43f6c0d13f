"""Given policies: the exact gain of a stated policy and its simulation as evidence.

A policy is given by a declared name (``policies`` of :class:`MarkovDecisionProcess`), by
conditions per action, by a Python function of the state, or as a solved
:class:`~symq.markov.mdp.StationaryPolicy`.  :func:`evaluate_policy` solves its chain exactly
(one sparse LU solve); :func:`simulate_policy` runs the chain by the Markov domain's Gillespie
simulator (:func:`symq.markov.simulation.simulate_ctmc`) and gives the long-run cost rate as a
confidence interval: evidence independent of every Bellman solver.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.randomness import RngLike

from ..simulation import CTMCEstimate, simulate_ctmc
from .model import MarkovDecisionProcess
from .results import StationaryPolicy
from .solvers import check_alpha, evaluate_pairs
from .space import DecisionSpace, build_decision_space

#: The first truncation of each countable variable.
DEFAULT_TRUNCATION = 32

__all__ = ["evaluate_policy", "simulate_policy", "policy_choice", "stated_choice"]


def first_truncation(mdp: MarkovDecisionProcess, truncation: Mapping[str, int] | None,
                     default: int = DEFAULT_TRUNCATION) -> dict[str, int]:
    """The bound of each countable variable: as given, else ``default``; a bound given for
    another name is refused."""
    given = dict(truncation or {})
    for v in given:
        if v not in mdp.unbounded:
            raise InvalidParameter(f"truncation.{v}", given[v], "a bound of a countable "
                                   "variable: " + (", ".join(mdp.unbounded) or "(none)"))
    return {v: int(given.get(v, default)) for v in mdp.unbounded}


def stated_choice(space: DecisionSpace, policy: str) -> np.ndarray:
    """The action the declared policy ``policy`` picks at each state of ``space``: the first
    allowed action whose condition holds.

    Raises
    ------
    InvalidParameter
        No clause picks an allowed action at some state (named).
    """
    from ..statespace import evaluate

    mdp = space.mdp
    allowed = space.allowed
    choice = np.full(space.n_states, -1)
    for a, condition in mdp.policies[policy]:
        with np.errstate(all="ignore"):
            holds = evaluate(condition, mdp.base, space.states, space.params) != 0
        choice = np.where((choice < 0) & holds & allowed[:, a], a, choice)
    missing = np.flatnonzero(choice < 0)
    if missing.size:
        raise InvalidParameter(f"policies.{policy}", policy, "conditions that pick an allowed "
                               "action at every state",
                               f"none does at {space.describe(int(missing[0]))}")
    return choice


def evaluate_policy(mdp: MarkovDecisionProcess, policy: Callable[..., str] | Mapping[str, Any],
                    params: Mapping[str, Any] | None = None, *, discount: float | None = None,
                    truncation: Mapping[str, int] | None = None) -> tuple[float, np.ndarray]:
    """The gain (or discounted value at the initial state) of a given stationary policy.

    Parameters
    ----------
    policy : str, mapping, callable or StationaryPolicy
        A declared policy's name; a mapping action name -> condition text (the first action
        whose condition holds and which is allowed is chosen); ``policy(**state) -> action
        name``; or a solved policy.

    Returns
    -------
    value : float
    bias : numpy.ndarray
    """
    alpha = check_alpha(discount)
    space = build_decision_space(mdp, params, first_truncation(mdp, truncation))
    pairs = space.pairs_of(policy_choice(space, policy))
    value, potential, _ = evaluate_pairs(space, pairs, alpha, "the given policy")
    return value, potential


def policy_choice(space: DecisionSpace, policy: Any) -> np.ndarray:
    """The action index a policy picks at each state of ``space``: a declared policy's name, a
    mapping action -> condition, a callable ``policy(**state) -> action``, or a
    :class:`StationaryPolicy` (matched state by state)."""
    from ..statespace import evaluate

    mdp = space.mdp
    if isinstance(policy, str):
        if policy not in mdp.policies:
            raise InvalidParameter("policy", policy, "a declared policy: "
                                   + (", ".join(mdp.policies) or "(none declared)"))
        return stated_choice(space, policy)
    if isinstance(policy, StationaryPolicy):
        index = {tuple(s): i for i, s in enumerate(policy.states)}
        missing = [i for i, s in enumerate(space.states) if tuple(s) not in index]
        if missing:
            raise InvalidParameter("policy", "StationaryPolicy", "a policy over the states of "
                                   "this truncation", f"it has no action at "
                                   f"{space.describe(missing[0])}: give the solution's "
                                   "truncation")
        return np.array([policy.choice[index[tuple(s)]] for s in space.states])
    names = [v.name for v in mdp.variables]
    allowed = space.allowed
    if isinstance(policy, Mapping):
        from symq.core.conditions import parse_condition

        choice = np.full(space.n_states, -1)
        for action, condition in policy.items():
            if action not in mdp.action_names:
                raise InvalidParameter(f"policy.{action}", condition, "a condition keyed by an "
                                       "action: " + ", ".join(mdp.action_names))
            parsed = parse_condition(f"policy.{action}", condition, mdp.base.names)
            holds = evaluate(parsed, mdp.base, space.states, space.params) != 0
            a = mdp.action_names.index(action)
            choice = np.where((choice < 0) & holds & allowed[:, a], a, choice)
        missing = np.flatnonzero(choice < 0)
        if missing.size:
            raise InvalidParameter("policy", dict(policy), "conditions that choose an allowed "
                                   "action at every state",
                                   f"none holds at {space.describe(int(missing[0]))}")
    else:
        choice = np.empty(space.n_states, dtype=np.int64)
        for i, s in enumerate(space.states):
            action = policy(**dict(zip(names, map(int, s), strict=True)))
            if action not in mdp.action_names:
                raise InvalidParameter("policy", action, "an action name: "
                                       + ", ".join(mdp.action_names),
                                       f"returned at {space.describe(i)}")
            choice[i] = mdp.action_names.index(action)
    return choice


def simulate_policy(mdp: MarkovDecisionProcess, policy: Any,
                    params: Mapping[str, Any] | None = None, *,
                    truncation: Mapping[str, int] | None = None, n_events: int = 1_000_000,
                    level: float = 0.95, rng: RngLike = None) -> CTMCEstimate:
    """The long-run average cost of a policy by simulating its chain (Gillespie).

    The state reward is the cost rate of the chosen action, lump costs included as rate times
    cost (their conditional mean: the same long-run average).  The estimate's ``["cost"]`` is
    a confidence interval at ``level`` (batch means of the Markov domain's simulator).

    Parameters
    ----------
    policy : str, mapping, callable or StationaryPolicy
        As for :func:`evaluate_policy` (a solved policy with its solution's ``truncation``).

    Examples
    --------
    >>> from symq.markov.mdp import solve_mdp
    >>> from symq.markov.mdp.library import naor
    >>> p = {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0}
    >>> s = solve_mdp(naor(), p)
    >>> est = simulate_policy(naor(), s.policy, p, truncation=s.truncation, rng=1)
    >>> est["cost"].contains(s.gain)
    True
    """
    space = build_decision_space(mdp, params, first_truncation(mdp, truncation))
    pairs = space.pairs_of(policy_choice(space, policy))
    generator = space.generator(pairs)
    return simulate_ctmc(generator, {"cost": space.pair_cost[pairs]},
                         initial=space.initial, n_events=n_events, level=level, rng=rng)
