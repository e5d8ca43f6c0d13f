"""The front door of :mod:`symq.markov.mdp`: :func:`solve_mdp`.

A finite process is solved once.  A countable one (a variable with ``high=None``) is solved on
truncations ``N, 2N, 4N, ...``: a truncation is accepted when the optimal value moved by at most
the tolerance asked since the previous one *and* the optimal actions agree on the states of the
previous truncation's inner half (so a boundary effect has not reached them); the structure of
the policy is then read on that inner region only.  What cannot be reached within the state
budget raises :class:`~symq.core.errors.TruncationError` naming the truncation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from symq.core.approximate import Approximate
from symq.core.errors import InvalidParameter, TruncationError
from symq.core.result import Exactness
from symq.core.witnessed import Witnessed

from ..errors import ReducibleChain
from ..stationary import _solve, one_closed_class, stationary_value
from .model import MarkovDecisionProcess
from .policies import DEFAULT_TRUNCATION, first_truncation, stated_choice
from .results import MDPSolution, StationaryPolicy
from .solvers import (
    METHODS,
    MethodOutcome,
    _greedy,
    _values,
    check_alpha,
    evaluate_pairs,
    linear_program,
    policy_iteration,
    value_iteration,
)
from .space import DecisionSpace, build_decision_space

__all__ = ["solve_mdp", "DEFAULT_TRUNCATION", "MAX_STATES", "TIE_TOLERANCE",
           "THRESHOLD_DOUBLINGS"]

#: Most states of a truncation tried.
MAX_STATES = 2_000_000
#: Extra doublings of a settled truncation to find a declared threshold beyond its region
#: (then the threshold is reported as lying beyond: an undecided value).
THRESHOLD_DOUBLINGS = 3
#: Two actions whose values at a state differ by at most this (relative to the largest cost
#: rate) are both optimal there.
TIE_TOLERANCE = 1e-9


def _run(method: str, space: DecisionSpace, alpha: float | None, rtol: float,
         atol: float, previous: tuple[DecisionSpace, Any, np.ndarray] | None
         ) -> MethodOutcome:
    if method == "vi":
        return value_iteration(space, alpha, rtol=rtol, atol=atol)
    if method == "lp":
        return linear_program(space, alpha)
    start = None
    if previous is not None:  # warm start: the previous truncation's policy where it applies
        old_space, old_outcome, _ = previous
        index = {tuple(s): i for i, s in enumerate(old_space.states)}
        old_choice = old_space.pair_action[old_outcome.pairs]
        start = np.array([old_choice[index[tuple(s)]] if tuple(s) in index else -1
                          for s in space.states])
    return policy_iteration(space, alpha, start=start)


def _optimal_sets(space: DecisionSpace, outcome: MethodOutcome, alpha: float | None,
                  method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The optimal actions at each state (ties kept), read from the exact potential of the
    method's policy; with the allowed actions and the chosen one."""
    potential = outcome.potential
    if method != "pi":  # the policy's own potential, exactly: one evaluation
        _, potential, _ = evaluate_pairs(space, outcome.pairs, alpha, "the solver's policy")
    values = _values(space, potential)
    low, _ = _greedy(space, values)
    scale = max(float(np.abs(space.pair_cost).max(initial=0.0)), 1e-300)
    near = values <= np.repeat(low, np.diff(space.state_ptr)) + TIE_TOLERANCE * scale
    optimal = np.zeros((space.n_states, len(space.mdp.actions)), dtype=bool)
    optimal[space.pair_state[near], space.pair_action[near]] = True
    return space.allowed, optimal, space.pair_action[outcome.pairs]


def _threshold_beyond(mdp: MarkovDecisionProcess, space: DecisionSpace, optimal: np.ndarray,
                      region: np.ndarray) -> bool:
    """Whether a declared threshold output lies beyond the settled region (then the
    truncation is enlarged to find it)."""
    from .structure import find_threshold

    variables = [v.name for v in mdp.variables]
    for out in mdp.outputs.values():
        if out.kind != "threshold":
            continue
        action, variable = str(out.label).split(":")
        found = find_threshold(space.states, variables, mdp.action_names, optimal, action,
                               variable, region)
        k = variables.index(variable)
        edge = int(space.states[region, k].max())
        if found.holds and any(high > edge for _, _, high in found.slices):
            return True
    return False


def _inner(space: DecisionSpace, truncation: Mapping[str, int]) -> np.ndarray:
    """The states whose countable coordinates lie in the inner half of ``truncation``."""
    names = [v.name for v in space.mdp.variables]
    keep = np.ones(space.n_states, dtype=bool)
    for v, bound in truncation.items():
        keep &= space.states[:, names.index(v)] <= bound // 2
    return keep


def _same_on(first: tuple[DecisionSpace, np.ndarray], second: tuple[DecisionSpace, np.ndarray],
             region: np.ndarray) -> bool:
    """Whether the optimal action sets agree on the states of ``region`` (of ``first``)."""
    space_a, optimal_a = first
    space_b, optimal_b = second
    index = {tuple(s): i for i, s in enumerate(space_b.states)}
    for i in np.flatnonzero(region):
        j = index.get(tuple(space_a.states[i]))
        if j is None or not np.array_equal(optimal_a[i], optimal_b[j]):
            return False
    return True


def _stationary(space: DecisionSpace, pairs: np.ndarray) -> np.ndarray | None:
    """The stationary law of the policy's chain (None when it has several closed classes,
    which a discounted problem allows)."""
    generator = space.generator(pairs)
    try:
        closed = one_closed_class(generator, space.describe)
    except ReducibleChain:  # no unique law
        return None
    pi = np.zeros(space.n_states)
    sub = generator[closed][:, closed].tocsr()
    pi[closed], _ = _solve(sub, 1e-9)
    return pi


def _output_values(space: DecisionSpace, pi: np.ndarray | None, policy: StationaryPolicy
                   ) -> dict[str, Any]:
    from ..statespace import evaluate

    mdp = space.mdp
    found: dict[str, Any] = {}
    initial = dict(zip((v.name for v in mdp.variables), mdp.base.initial, strict=True))
    for name, out in mdp.outputs.items():
        if out.kind == "mismatch":
            choice = stated_choice(space, str(out.label))
            rows = np.flatnonzero(policy.region)
            wrong = rows[~policy.optimal[rows, choice[rows]]]
            if wrong.size:
                s = int(wrong[0])
                best = [policy.actions[a] for a in np.flatnonzero(policy.optimal[s])]
                found[name] = Witnessed(wrong.size, f"first at {space.describe(s)}: "
                                        f"{out.label} picks {policy.actions[choice[s]]}, "
                                        f"optimal: {', '.join(best)}")
            else:
                found[name] = Witnessed(0, f"{out.label} is optimal at all {rows.size} "
                                        "settled states")
            continue
        if out.kind == "curve":
            action, variable, along = str(out.label).split(":")
            curve = policy.switching_curve(action, variable, along)
            if curve.holds:
                shown = ", ".join(f"{t} at {along}={y}" for y, t in curve.curve[:6])
                more = ", ..." if len(curve.curve) > 6 else ""
                found[name] = Witnessed(1 if curve.direction == "nondecreasing" else -1,
                                        f"{curve.direction} threshold of {action} in "
                                        f"{variable}: {shown}{more}")
            else:
                found[name] = Witnessed(0, f"no monotone switching curve: {curve.witness}")
            continue
        if out.kind == "threshold":
            action, variable = str(out.label).split(":")
            structure = policy.threshold(action, variable)
            others = {v: x for v, x in initial.items() if v != variable}
            if not structure.holds:
                found[name] = Witnessed(-1, f"not a threshold policy: {structure.witness}")
                continue
            low, high = structure.at(others)
            edge = int(max(policy.states[policy.region, policy.variables.index(variable)]))
            if high > edge:
                found[name] = Approximate(low, math.inf, f"the threshold of {action} in "
                                          f"{variable} lies beyond {edge}, the edge of the "
                                          "region the truncation settles")
            elif low == high:
                found[name] = low
            else:
                found[name] = Approximate(0.5 * (low + high), 0.5 * (high - low),
                                          f"tied actions: any threshold in [{low}, {high}]")
            continue
        if pi is None:
            raise InvalidParameter(f"outputs.{name}", out.text, "an output of a process "
                                   "whose optimal policy has one closed class",
                                   "the optimal policy's chain has several closed classes")
        with np.errstate(all="ignore"):
            reward = evaluate(out.expr, mdp.base, space.states, space.params)
        found[name] = stationary_value(name, out.kind, reward, pi, space.describe)
    return found


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise InvalidParameter("method", method, "one of " + ", ".join(METHODS)
                               + " (value iteration, policy iteration, linear program)")
    return method


def solve_mdp(mdp: MarkovDecisionProcess, params: Mapping[str, Any] | None = None, *,
              method: str = "pi", discount: float | None = None,
              truncation: Mapping[str, int] | None = None, tolerance: float = 1e-6,
              rtol: float = 1e-9, atol: float = 0.0, max_states: int = MAX_STATES
              ) -> MDPSolution:
    """The optimal average cost (or discounted cost) of ``mdp`` at ``params``, its policy and
    the declared outputs.

    Parameters
    ----------
    mdp : MarkovDecisionProcess
        The declaration.
    params : mapping
        A value for every declared parameter.
    method : {"pi", "vi", "lp"}
        Policy iteration (default), relative value iteration, or the linear program (HiGHS).
    discount : float, optional
        A discount rate ``alpha > 0`` (the value at the initial state is reported); the
        long-run average cost when omitted.
    truncation : mapping, optional
        The first bound of each countable variable (default :data:`DEFAULT_TRUNCATION`);
        doubled until the value moves by at most ``tolerance`` (relative) and the optimal
        actions are settled inside.
    tolerance : float
        Relative truncation error accepted.
    rtol, atol : float
        Value iteration's stopping rule on the bracket's half-width.
    max_states : int
        The largest truncation tried, in states.

    Returns
    -------
    MDPSolution

    Raises
    ------
    TruncationError
        The truncation did not settle within ``max_states`` states (with the last change).
    ReducibleChain
        Average cost: a policy whose chain has several closed classes (a multichain MDP).
    NotConverged
        A solver did not reach its tolerance (with its residual).
    InvalidParameter
        Bad input: a method, discount or truncation outside its domain; a rate, cost or guard
        failing its check (named as declared).

    Examples
    --------
    Naor's admission control (the socially optimal threshold is 4 here, Naor 1969):

    >>> from symq.markov.mdp.library import naor
    >>> solution = solve_mdp(naor(), {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0})
    >>> solution.policy.threshold("admit").at()
    (4, 4)
    >>> round(solution.gain, 6)
    -7.015696
    """
    started = time.perf_counter()
    alpha = check_alpha(discount)
    _check_method(method)
    for name, value in (("tolerance", tolerance), ("rtol", rtol)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not 0 < value < 1:
            raise InvalidParameter(name, value, "a number in (0, 1)")
    bounds = first_truncation(mdp, truncation, DEFAULT_TRUNCATION)
    previous: tuple[DecisionSpace, MethodOutcome, np.ndarray] | None = None
    truncation_error: float | None = None
    extra = 0
    while True:
        space = build_decision_space(mdp, params, bounds)
        outcome = _run(method, space, alpha, rtol, atol, previous)
        allowed, optimal, choice = _optimal_sets(space, outcome, alpha, method)
        region = np.ones(space.n_states, dtype=bool)
        if not bounds:
            break
        if previous is not None:
            old_space, old_outcome, old_optimal = previous
            change = abs(outcome.value - old_outcome.value)
            old_inner = _inner(old_space, old_space.truncation)
            settled = _same_on((old_space, old_optimal), (space, optimal), old_inner)
            if change <= atol + tolerance * abs(outcome.value) and settled:
                region = np.zeros(space.n_states, dtype=bool)
                index = {tuple(s): i for i, s in enumerate(space.states)}
                region[[index[tuple(s)] for s in old_space.states[old_inner]]] = True
                if extra >= THRESHOLD_DOUBLINGS or not _threshold_beyond(mdp, space, optimal,
                                                                         region):
                    truncation_error = change
                    break
                extra += 1
        if space.n_states * 2 ** len(bounds) > max_states:
            detail = "" if previous is None else (
                f"; the value moved by {abs(outcome.value - previous[1].value):.3g}")
            raise TruncationError(
                "solve_mdp", "truncation." + ",".join(bounds), math.inf if previous is None
                else abs(outcome.value - previous[1].value), tolerance,
                dict(bounds), f"the next truncation exceeds max_states={max_states}{detail}; "
                "raise max_states or check that the process is stable (costs bounded on the "
                "states the optimal policy visits)")
        previous = (space, outcome, optimal)
        bounds = {v: 2 * b for v, b in bounds.items()}
    variables = tuple(v.name for v in mdp.variables)
    policy = StationaryPolicy(states=space.states, variables=variables,
                              actions=mdp.action_names, choice=choice, allowed=allowed,
                              optimal=optimal, region=region, n_states=space.n_states,
                              n_tied=int(np.count_nonzero(optimal.sum(axis=1) > 1)),
                              method=outcome.method)
    pi = _stationary(space, outcome.pairs) if (mdp.outputs or bounds) else None
    values = _output_values(space, pi, policy)
    boundary = None if (not bounds or pi is None) else float(min(pi[space.boundary].sum(), 1.0))
    objective = "average" if alpha is None else f"discounted at rate {alpha:g}"
    return MDPSolution(
        objective=objective,
        gain=outcome.value if alpha is None else None,
        value=outcome.value if alpha is not None else None,
        error=outcome.error, low=outcome.low, high=outcome.high,
        truncation_error=truncation_error, truncation=dict(bounds),
        boundary_probability=boundary, policy=policy, bias=outcome.potential,
        values=values, n_states=space.n_states, n_pairs=space.n_pairs,
        iterations=outcome.iterations, residual=outcome.residual, method=outcome.method,
        exactness=Exactness.NUMERIC, seconds=time.perf_counter() - started)
