"""The structure of an optimal policy: a threshold in one variable, a monotone switching curve
in two, a fixed priority (index) rule.

Each test reads the *sets of optimal actions* (every action within a tie tolerance of the best
at a state), not one policy, so that a tie is never taken for a broken structure: a threshold
``t`` in ``x`` for the action ``a`` means "``a`` is optimal wherever ``x < t`` and another action
is optimal wherever ``x >= t``"; the thresholds consistent with the sets form an interval
``[low, high]`` per slice (the other variables fixed).  Where no threshold is consistent, the
result names the two states that break it.  Classic results of this form: Naor (1969,
Econometrica 37:15-24) for admission, Lippman (1975, Oper. Res. 23:687-710) and Stidham &
Weber (1989, Oper. Res. 37:611-625) for service-rate control, Hajek (1984, IEEE Trans. Autom.
Control 29:491-499) for the monotone switching curve of routing to two queues, Cox & Smith
(1961, *Queues*) for the c-mu priority rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symq.core.errors import InvalidParameter

__all__ = ["ThresholdStructure", "SwitchingCurve", "PriorityRule", "find_threshold",
           "find_switching_curve", "find_priority"]


@dataclass(frozen=True)
class ThresholdStructure:
    """Whether ``action`` is optimal exactly below a threshold in ``variable``, per slice.

    Attributes
    ----------
    action, variable : str
    holds : bool
        A threshold is consistent with the optimal sets in every slice.
    slices : tuple of (dict, int, int)
        Per slice (the other variables' values), the interval ``[low, high]`` of consistent
        thresholds; ``high`` is one past the largest value in the slice when ``action`` is
        optimal up to the edge (the threshold may lie beyond it).
    witness : str
        Where the structure breaks (empty when it holds).
    """

    action: str
    variable: str
    holds: bool
    slices: tuple[tuple[dict[str, int], int, int], ...]
    edge: tuple[int, ...]
    witness: str = ""

    def at(self, others: dict[str, int] | None = None) -> tuple[int, int]:
        """The interval of thresholds in the slice with the other variables at ``others``
        (the only slice when the process has one variable)."""
        others = dict(others or {})
        for values, low, high in self.slices:
            if values == others:
                return low, high
        raise InvalidParameter("others", others, "the values of the other variables at a "
                               "slice: " + ", ".join(str(v) for v, _, _ in self.slices[:5]))


@dataclass(frozen=True)
class SwitchingCurve:
    """A threshold in ``variable`` for each value of ``along`` that is monotone in it.

    Attributes
    ----------
    holds : bool
        Every slice has a threshold and a monotone choice of them exists.
    direction : str
        ``"nondecreasing"`` or ``"nonincreasing"`` (the first that fits), or ``""``.
    curve : tuple of (int, int)
        ``(value of along, threshold)`` for a monotone choice (the least one).
    """

    action: str
    variable: str
    along: str
    holds: bool
    direction: str
    curve: tuple[tuple[int, int], ...]
    witness: str = ""


@dataclass(frozen=True)
class PriorityRule:
    """A fixed order of the actions such that, at every state, the first allowed action of the
    order is optimal (an index or priority rule); ``order`` is empty when none exists."""

    holds: bool
    order: tuple[str, ...]
    witness: str = ""


def _describe(variables: Sequence[str], state: np.ndarray) -> str:
    return ", ".join(f"{v}={int(x)}" for v, x in zip(variables, state, strict=True))


def find_threshold(states: np.ndarray, variables: Sequence[str], actions: Sequence[str],
                   optimal: np.ndarray, action: str, variable: str,
                   region: np.ndarray | None = None) -> ThresholdStructure:
    """The threshold structure of ``action`` along ``variable`` (see the module).

    ``optimal`` is the ``(n_states, n_actions)`` boolean table of optimal actions; ``region``
    (boolean per state) restricts the test to the states trusted (inside a truncation).
    """
    if action not in actions:
        raise InvalidParameter("action", action, "an action: " + ", ".join(actions))
    if variable not in variables:
        raise InvalidParameter("variable", variable, "a state variable: " + ", ".join(variables))
    a, k = list(actions).index(action), list(variables).index(variable)
    keep = np.ones(states.shape[0], dtype=bool) if region is None else np.asarray(region)
    others = [j for j in range(len(variables)) if j != k]
    sub = states[keep]
    opt = optimal[keep]
    key = sub[:, others] if others else np.zeros((sub.shape[0], 0), dtype=np.int64)
    slices, edges = [], []
    holds, witness = True, ""
    for values in np.unique(key, axis=0):
        rows = np.flatnonzero(np.all(key == values, axis=1))
        rows = rows[np.argsort(sub[rows, k])]
        x = sub[rows, k]
        chosen = opt[rows, a]
        alone = chosen & (opt[rows].sum(axis=1) == 1)
        high = int(x[np.flatnonzero(~chosen)[0]]) if (~chosen).any() else int(x[-1]) + 1
        low = int(x[np.flatnonzero(alone)[-1]]) + 1 if alone.any() else int(x[0])
        label = {variables[j]: int(v) for j, v in zip(others, values, strict=True)}
        if low > high and holds:
            holds = False
            not_at = sub[rows[np.flatnonzero(~chosen)[0]]]
            only_at = sub[rows[np.flatnonzero(alone)[-1]]]
            witness = (f"{action} is not optimal at ({_describe(variables, not_at)}) but is the "
                       f"only optimal action at ({_describe(variables, only_at)})")
        slices.append((label, low, high))
        edges.append(int(x[-1]))
    return ThresholdStructure(action, variable, holds, tuple(slices), tuple(edges), witness)


def find_switching_curve(states: np.ndarray, variables: Sequence[str], actions: Sequence[str],
                         optimal: np.ndarray, action: str, variable: str, along: str,
                         region: np.ndarray | None = None) -> SwitchingCurve:
    """A threshold of ``action`` in ``variable`` for each value of ``along``, monotone in it
    (Hajek 1984): the thresholds per slice, then the least monotone choice in their intervals."""
    if along == variable or along not in variables:
        raise InvalidParameter("along", along, "a state variable other than " + variable)
    if len(variables) != 2:
        raise InvalidParameter("variables", tuple(variables), "two state variables for a "
                               "switching curve")
    found = find_threshold(states, variables, actions, optimal, action, variable, region)
    if not found.holds:
        return SwitchingCurve(action, variable, along, False, "", (), found.witness)
    ordered = sorted((values[along], low, high) for values, low, high in found.slices)
    for direction, sequence in (("nondecreasing", ordered), ("nonincreasing", ordered[::-1])):
        curve, last, ok = [], -np.inf, True
        for y, low, high in sequence:
            t = max(low, last)
            if t > high:
                ok = False
                witness = (f"the threshold of {action} in {variable} cannot be {direction} in "
                           f"{along}: it lies in [{low}, {high}] at {along}={y} after "
                           f"{int(last)}")
                break
            curve.append((y, int(t)))
            last = t
        if ok:
            curve.sort()
            return SwitchingCurve(action, variable, along, True, direction, tuple(curve))
    return SwitchingCurve(action, variable, along, False, "", (), witness)


def find_priority(states: np.ndarray, variables: Sequence[str], actions: Sequence[str],
                  allowed: np.ndarray, optimal: np.ndarray, region: np.ndarray | None = None,
                  among: Sequence[str] | None = None) -> PriorityRule:
    """A fixed priority order of ``among`` (default: every action) such that at each state of
    ``region`` the first allowed action of the order is optimal."""
    names = list(actions)
    chosen = list(among) if among is not None else names
    for name in chosen:
        if name not in names:
            raise InvalidParameter("among", name, "an action: " + ", ".join(names))
    idx = [names.index(c) for c in chosen]
    keep = np.ones(states.shape[0], dtype=bool) if region is None else np.asarray(region)
    ok_rows = np.flatnonzero(keep & allowed[:, idx].any(axis=1))
    worst = ""
    for order in itertools.permutations(idx):
        first = np.full(ok_rows.size, -1)
        for a in reversed(order):
            first = np.where(allowed[ok_rows, a], a, first)
        good = optimal[ok_rows, first]
        if good.all():
            return PriorityRule(True, tuple(names[a] for a in order))
        if not worst:
            s = ok_rows[np.flatnonzero(~good)[0]]
            worst = (f"no fixed priority order fits: e.g. {' > '.join(names[a] for a in order)} "
                     f"picks {names[first[np.flatnonzero(~good)[0]]]} at "
                     f"({_describe(variables, states[s])}), where it is not optimal")
    return PriorityRule(False, (), worst)
