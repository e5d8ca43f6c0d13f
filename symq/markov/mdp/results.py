"""The results of :mod:`symq.markov.mdp`: a policy as a table with its structure, and a solve.

:class:`StationaryPolicy` is an action per state with the set of optimal actions at each state
(ties kept), so that its structure (:meth:`~StationaryPolicy.threshold`,
:meth:`~StationaryPolicy.switching_curve`, :meth:`~StationaryPolicy.priority`) is read from
every optimal policy at once; :meth:`~StationaryPolicy.policy_data` and
:meth:`~StationaryPolicy.plot_policy` draw it.  :class:`MDPSolution` is the optimal gain (or
value) with its bracket and truncation error, the policy, the bias and the declared outputs
under the policy's stationary law.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.plotting import axes_or_new
from symq.core.result import Exactness, ResultBase

from ..results import OutputsByName
from .structure import (
    PriorityRule,
    SwitchingCurve,
    ThresholdStructure,
    find_priority,
    find_switching_curve,
    find_threshold,
)

__all__ = ["StationaryPolicy", "MDPSolution"]


@dataclass(frozen=True)
class StationaryPolicy(ResultBase):
    """A stationary policy of a declared MDP: the action chosen at each state, and the set of
    optimal actions there.

    Attributes
    ----------
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers.
    variables, actions : tuple of str
        The state variables and the actions (declaration order).
    choice : numpy.ndarray
        The chosen action (index into ``actions``) at each state.
    allowed, optimal : numpy.ndarray
        ``(n_states, n_actions)`` booleans: the actions allowed at each state, and those
        optimal there (within the tie tolerance; the chosen one for a policy that was given,
        not solved).
    region : numpy.ndarray
        The states whose optimal actions do not depend on the truncation (all states of a
        finite process); structure is read there only.
    n_states : int
    """

    summary: ClassVar[tuple[str, ...]] = ("n_states", "n_tied")

    states: np.ndarray = field(repr=False)
    variables: tuple[str, ...]
    actions: tuple[str, ...]
    choice: np.ndarray = field(repr=False)
    allowed: np.ndarray = field(repr=False)
    optimal: np.ndarray = field(repr=False)
    region: np.ndarray = field(repr=False)
    n_states: int = 0
    n_tied: int = 0
    method: str = "policy iteration"
    exactness: Exactness = Exactness.NUMERIC

    def action(self, **state: int) -> str:
        """The chosen action at ``state`` (``policy.action(n=3)``)."""
        return self.actions[int(self.choice[self._index(state)])]

    def optimal_actions(self, **state: int) -> tuple[str, ...]:
        """Every optimal action at ``state``."""
        row = self.optimal[self._index(state)]
        return tuple(a for a, ok in zip(self.actions, row, strict=True) if ok)

    def _index(self, state: Mapping[str, int]) -> int:
        if set(state) != set(self.variables):
            raise InvalidParameter("state", dict(state), "a value for each of "
                                   + ", ".join(self.variables))
        want = np.array([state[v] for v in self.variables])
        hit = np.flatnonzero(np.all(self.states == want, axis=1))
        if not hit.size:
            raise InvalidParameter("state", dict(state), "a reachable state of the process")
        return int(hit[0])

    def table(self) -> list[dict[str, Any]]:
        """One row per state: the variables, the chosen action and the optimal ones."""
        return [{**{v: int(x) for v, x in zip(self.variables, s, strict=True)},
                 "action": self.actions[int(c)],
                 "optimal": tuple(a for a, ok in zip(self.actions, o, strict=True) if ok)}
                for s, c, o in zip(self.states, self.choice, self.optimal, strict=True)]

    def threshold(self, action: str, variable: str | None = None) -> ThresholdStructure:
        """Whether ``action`` is optimal exactly below a threshold in ``variable`` (the only
        variable by default), per slice of the other variables, within :attr:`region`."""
        return find_threshold(self.states, self.variables, self.actions, self.optimal, action,
                              variable or self._only_variable(), self.region)

    def switching_curve(self, action: str, variable: str, along: str) -> SwitchingCurve:
        """A threshold of ``action`` in ``variable`` that is monotone in ``along`` (Hajek's
        switching curve), within :attr:`region`."""
        return find_switching_curve(self.states, self.variables, self.actions, self.optimal,
                                    action, variable, along, self.region)

    def priority(self, among: tuple[str, ...] | None = None) -> PriorityRule:
        """A fixed priority order of the actions (``among``, default all) that is optimal at
        every state of :attr:`region` (an index rule such as c-mu)."""
        return find_priority(self.states, self.variables, self.actions, self.allowed,
                             self.optimal, self.region, among)

    def _only_variable(self) -> str:
        if len(self.variables) != 1:
            raise InvalidParameter("variable", None, "one of " + ", ".join(self.variables),
                                   "the process has several state variables")
        return self.variables[0]

    def policy_data(self, x: str | None = None, y: str | None = None,
                    fixed: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The chosen action on the grid of ``x`` (and ``y``), other variables at ``fixed``.

        Returns
        -------
        dict
            ``x``, ``y`` (value vectors; ``y`` is ``[0]`` for one variable), ``action``
            (``(len(y), len(x))`` action indices, -1 where no state), ``actions`` (names) and
            ``tied`` (booleans: several actions optimal).
        """
        x = x or self.variables[0]
        fixed = dict(fixed or {})
        rest = [v for v in self.variables if v not in (x, y)]
        for v in rest:
            fixed.setdefault(v, int(self.states[:, self.variables.index(v)].min()))
        keep = np.ones(self.n_states, dtype=bool)
        for v in rest:
            keep &= self.states[:, self.variables.index(v)] == fixed[v]
        xs = np.unique(self.states[keep, self.variables.index(x)])
        ys = np.unique(self.states[keep, self.variables.index(y)]) if y else np.zeros(1, int)
        grid = np.full((ys.size, xs.size), -1)
        tied = np.zeros((ys.size, xs.size), dtype=bool)
        for i in np.flatnonzero(keep):
            col = np.searchsorted(xs, self.states[i, self.variables.index(x)])
            row = np.searchsorted(ys, self.states[i, self.variables.index(y)]) if y else 0
            grid[row, col] = self.choice[i]
            tied[row, col] = self.optimal[i].sum() > 1
        return {"x": xs, "y": ys, "action": grid, "actions": self.actions, "tied": tied,
                "x_name": x, "y_name": y}

    def plot_policy(self, x: str | None = None, y: str | None = None,
                    fixed: Mapping[str, int] | None = None, ax: Any = None) -> Any:
        """Draw :meth:`policy_data`: one colour per action, tied states hatched."""
        data = self.policy_data(x, y, fixed)
        ax = axes_or_new(ax, "plot_policy")
        grid = np.ma.masked_less(data["action"], 0)
        image = ax.pcolormesh(data["x"], data["y"], grid, shading="nearest",
                              vmin=0, vmax=max(len(self.actions) - 1, 1), cmap="tab10")
        rows, cols = np.nonzero(data["tied"])
        if rows.size:
            ax.scatter(data["x"][cols], data["y"][rows], marker="x", color="k", s=12,
                       label="tied")
        ax.set_xlabel(data["x_name"])
        ax.set_ylabel(data["y_name"] or "")
        colorbar = ax.figure.colorbar(image, ax=ax, ticks=range(len(self.actions)))
        colorbar.ax.set_yticklabels(list(self.actions))
        return ax


@dataclass(frozen=True)
class MDPSolution(OutputsByName, ResultBase):
    """The optimal average cost (gain) or discounted value of a declared MDP, bracketed.

    Attributes
    ----------
    objective : str
        ``"average"`` or ``"discounted at rate alpha"``.
    gain : float or None
        The optimal long-run average cost per unit time (average objective).
    value : float or None
        The optimal discounted cost from the initial state (discounted objective).
    error : float
        Half the width of the solver's bracket ``[low, high]`` (a bound on the truncated
        problem: Odoni's bounds for the gain, MacQueen's for a discounted value).
    low, high : float
        The bracket.
    truncation_error : float or None
        ``|value at N - value at N/2|`` for a countable process solved on a truncation ``N``
        (an estimate, not a bound); None for a finite one.
    truncation : dict
        The bound of each countable variable of the final solve.
    boundary_probability : float or None
        Stationary probability of the truncation's boundary under the optimal policy.
    policy : StationaryPolicy
        The optimal policy and the optimal actions at each state.
    bias : numpy.ndarray
        The bias ``h`` (average; 0 at a recurrent state) or the value function (discounted).
    values : dict
        Each declared output: stationary means and probabilities under the optimal policy,
        structure outputs (thresholds).
    n_states, n_pairs, iterations, residual, method, exactness, seconds
    """

    summary: ClassVar[tuple[str, ...]] = ("gain", "value", "error", "n_states")
    uncertainty: ClassVar[Mapping[str, str | tuple[str, str]]] = {"gain": "error",
                                                                  "value": "error"}
    reported: ClassVar[tuple[str, ...]] = ("gain", "value", "error", "truncation_error",
                                           "boundary_probability", "n_states")

    objective: str
    gain: float | None
    value: float | None
    error: float
    low: float
    high: float
    truncation_error: float | None
    truncation: dict[str, int]
    boundary_probability: float | None
    policy: StationaryPolicy = field(repr=False)
    bias: np.ndarray = field(repr=False)
    values: dict[str, Any] = field(default_factory=dict)
    n_states: int = 0
    n_pairs: int = 0
    iterations: int = 0
    residual: float = 0.0
    method: str = "policy iteration"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    def __str__(self) -> str:
        key = "gain" if self.gain is not None else "value"
        shown = ", ".join(f"{k}={v:.6g}" for k, v in list(self.values.items())[:4]
                          if isinstance(v, (int, float)))
        return (f"MDPSolution({key}={getattr(self, key):.8g} +- {self.error:.2g}, "
                f"n_states={self.n_states}" + (f", {shown}" if shown else "") + ")")

    def outputs(self) -> dict[str, Any]:
        """The fields of :attr:`reported`, then each declared output (and the ``gain`` with
        its error bar, where a claims file's model put it there)."""
        found = {**{k: getattr(self, k) for k in self.reported}, **self.values}
        return {k: v for k, v in found.items() if v is not None}

    @property
    def total_error(self) -> float:
        """The bracket's half-width plus the truncation error estimate."""
        return self.error + (self.truncation_error or 0.0)
