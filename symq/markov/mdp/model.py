"""A continuous-time Markov decision process declared by actions on guarded jumps.

The declaration extends the guarded-jump chain of :mod:`symq.markov.chain` (PRISM's idiom,
Kwiatkowska, Norman & Parker, CAV 2011) the way PRISM's MDPs label commands by actions: the
state is a tuple of bounded integer variables; *uncontrolled* jumps fire whatever the decision;
each :class:`Action` has a guard (the states where it may be chosen), its own jumps and a cost
rate.  At a state ``s`` the decision maker picks one action ``a`` whose guard holds; the chain
then moves by the uncontrolled jumps enabled at ``s`` and the jumps of ``a`` enabled at ``s``,
and cost accrues at rate ``c(s) + c_a(s)`` plus each jump's lump cost at each firing (Puterman
1994, *Markov Decision Processes*, sec. 11.5: a continuous-time MDP with lump and rate costs;
Bertsekas 2012, *Dynamic Programming and Optimal Control* II, ch. 5).

A variable may be unbounded (``high=None``): the process then has a countable state space,
solved on the truncation ``var <= N`` where jumps that would leave it are blocked (the
truncation error is checked by solving again on a larger one, :func:`symq.markov.mdp.solve_mdp`).

Text is parsed by :func:`symq.core.formula.parse_formula` and
:func:`symq.core.conditions.parse_condition`, never evaluated.

Examples
--------
Naor's (1969) admission control: admit an arrival (reward ``R``) or reject it; holding cost
``C`` per customer per unit time.

>>> from symq.markov import Jump, StateVariable
>>> naor = MarkovDecisionProcess(
...     [StateVariable("n", 0, None)],
...     actions=[Action("admit", [Jump("lam", {"n": "n + 1"}, cost="-R")]),
...              Action("reject")],
...     jumps=[Jump("mu", {"n": "n - 1"}, guard="n > 0")],
...     cost="C*n", parameters=("lam", "mu", "R", "C"))
>>> naor  # doctest: +ELLIPSIS
MarkovDecisionProcess(variables=(n in [0, oo)), actions=(admit, reject), jumps=1, ...)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from symq.core.conditions import is_condition_text
from symq.core.errors import InvalidParameter
from symq.core.parameters import Parameter

from ..chain import Condition, Formula, Jump, MarkovChain, Output, ParsedJump, StateVariable

__all__ = ["Action", "MarkovDecisionProcess", "ParsedAction", "MAX_ACTIONS", "THRESHOLD_PREFIX",
           "MISMATCH_PREFIX", "CURVE_PREFIX", "RESERVED_OUTPUTS"]

#: Prefix of a structure output: ``"threshold:ACTION"`` or ``"threshold:ACTION:VARIABLE"``.
THRESHOLD_PREFIX = "threshold:"
#: Prefix of a switching-curve output: ``"curve:ACTION:VARIABLE:ALONG"`` (two variables),
#: ``1`` where the optimal policy is a threshold of ``ACTION`` in ``VARIABLE`` nondecreasing
#: in ``ALONG`` (Hajek 1984), ``-1`` nonincreasing, ``0`` neither (the break named).
CURVE_PREFIX = "curve:"
#: Prefix of a policy check: ``"mismatch:POLICY"``, the number of states (settled by the
#: truncation) where the declared policy's action is not optimal, with the first one named.
MISMATCH_PREFIX = "mismatch:"
#: Names a declared output may not take (the solution's own values).
RESERVED_OUTPUTS = ("gain", "value", "error", "truncation_error", "boundary_probability",
                    "n_states", "method", "discount", "truncation")

#: Most actions of one process.
MAX_ACTIONS = 64
#: The bound an unbounded variable stands at while the declaration is parsed.
_WIDE = 10**9
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Action:
    """An action of a :class:`MarkovDecisionProcess`: where it may be chosen, what it does and
    what it costs.

    Parameters
    ----------
    name : str
        The action's name (letters, digits, ``_``): policies, errors and structure outputs
        (``threshold:admit``) name it.
    jumps : sequence of Jump, optional
        The jumps this action enables (each with its own guard, rate, update and lump
        ``cost``); none for an action that only stops something (``reject``).
    cost : str, number or sympy expression, default 0
        Cost rate while the action is chosen, added to the process's own cost rate.
    guard : str, bool or sympy Boolean, default "true"
        The states where the action may be chosen.  Every reachable state must allow at least
        one action.
    """

    name: str
    jumps: Sequence[Jump] = ()
    cost: Formula = 0
    guard: Condition = "true"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InvalidParameter("Action.name", self.name, "a name (letters, digits, _)")
        if isinstance(self.jumps, (str, Mapping, Jump)) or not isinstance(self.jumps, Sequence):
            raise InvalidParameter(f"{self.name}.jumps", self.jumps, "a sequence of Jump")
        for i, jump in enumerate(self.jumps):
            if not isinstance(jump, Jump):
                raise InvalidParameter(f"{self.name}.jumps[{i}]", jump, "a Jump")
        object.__setattr__(self, "jumps", tuple(self.jumps))


@dataclass(frozen=True)
class ParsedAction:
    """An action with its formulas parsed: ``guard`` (sympy Boolean), ``cost`` (sympy Expr),
    ``jumps`` (parsed, named ``admit.jumps[0]``) and their lump ``costs``."""

    name: str
    guard: Any
    cost: sp.Expr
    jumps: tuple[ParsedJump, ...]
    costs: tuple[sp.Expr, ...]


class MarkovDecisionProcess:
    """A continuous-time MDP: bounded (or one-sided unbounded) integer variables, uncontrolled
    guarded jumps, actions with their own jumps, a cost rate and lump costs.

    Parameters
    ----------
    variables : sequence of StateVariable
        The state variables; ``high=None`` makes one countable (solved on a checked
        truncation).
    actions : sequence of Action
        The actions, in order (ties between equally good actions are broken by this order).
    jumps : sequence of Jump, optional
        Jumps that fire whatever action is chosen (services, arrivals not controlled).
    cost : str, number or sympy expression, default 0
        Cost rate at every state (a holding cost), whatever the action.
    parameters : sequence of str or Parameter
        The parameters the formulas use; values are given when solving.
    initial : mapping or sequence of int, optional
        The state the reachable set is built from (default: every variable at its low bound);
        a discounted value is reported at this state.
    outputs : mapping, optional
        Name -> what a solve reports besides the gain: a formula (its stationary mean under the
        optimal policy), a condition (its stationary probability), or
        ``"threshold:ACTION[:VARIABLE]"``: the threshold ``t`` such that ``ACTION`` is optimal
        where ``VARIABLE < t`` and not where ``VARIABLE >= t`` (the other variables at their
        initial values; :meth:`symq.markov.mdp.StationaryPolicy.threshold`); or
        ``"mismatch:POLICY"``:
        the number of states where the declared policy ``POLICY`` picks an action that is not
        optimal (0 when it is an optimal policy), reported with the first such state; or
        ``"curve:ACTION:VARIABLE:ALONG"`` (two variables): ``1`` when ``ACTION`` is optimal
        below a threshold in ``VARIABLE`` that is nondecreasing in ``ALONG`` (a monotone
        switching curve, Hajek 1984), ``-1`` when it is nonincreasing, ``0`` when no monotone
        curve fits (the break named; :meth:`symq.markov.mdp.StationaryPolicy.switching_curve`).
    policies : mapping, optional
        Name -> ``{ACTION: condition, ...}``: a stated policy picks, at each state, the first
        allowed action whose condition holds (``{"route1": "n1 <= n2", "route2": "true"}``).
    name : str, optional
        A name shown in results and messages.

    Raises
    ------
    InvalidParameter
        No action, two actions of one name, a formula that does not parse (named as
        ``admit.jumps[0].rate``, ``admit.cost``, ``cost``) or an unknown name.
    """

    def __init__(self, variables: Sequence[StateVariable], actions: Sequence[Action],
                 jumps: Sequence[Jump] = (), cost: Formula = 0,
                 parameters: Sequence[str | Parameter] = (),
                 initial: Mapping[str, int] | Sequence[int] | None = None,
                 outputs: Mapping[str, Any] | None = None,
                 policies: Mapping[str, Mapping[str, Condition]] | None = None,
                 name: str | None = None) -> None:
        actions = tuple(actions)
        if not actions or not all(isinstance(a, Action) for a in actions):
            raise InvalidParameter("actions", actions, "a non-empty sequence of Action")
        if len(actions) > MAX_ACTIONS:
            raise InvalidParameter("actions", len(actions), f"at most {MAX_ACTIONS} actions")
        names = [a.name for a in actions]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise InvalidParameter("actions", repeated[0], "a name used by one action")
        variables = tuple(variables)
        if not variables or not all(isinstance(v, StateVariable) for v in variables):
            raise InvalidParameter("variables", variables, "a non-empty sequence of "
                                   "StateVariable")
        self._variables = variables
        # The uncontrolled part, parsed as a chain (an unbounded variable stands at a wide
        # bound here: this chain parses and names, a truncation is built per solve).
        placeholders = [v if v.high is not None else StateVariable(v.name, v.low, v.low + _WIDE)
                        for v in variables]
        self.base = MarkovChain(placeholders, tuple(jumps), parameters, initial, name=name)
        clash = sorted(set(names) & set(self.base.names))
        if clash:
            raise InvalidParameter("actions", clash[0], "a name that is not a variable or a "
                                   "parameter")
        self.name = name
        self.cost = self.base._symbolic("cost", cost)
        self.jump_costs = tuple(self.base._symbolic(f"{pj.where}.cost", j.cost)
                                for j, pj in zip(jumps, self.base.jumps, strict=True))
        self.actions = tuple(self._parse_action(a) for a in actions)
        self.policies = self._policies(policies or {})
        self.outputs = self._outputs(outputs or {})

    def _policies(self, policies: Mapping[str, Any]) -> dict[str, tuple[tuple[int, Any], ...]]:
        if not isinstance(policies, Mapping):
            raise InvalidParameter("policies", policies, "a mapping name -> {ACTION = "
                                   "\"condition\", ...}")
        parsed = {}
        for key, rule in policies.items():
            where = f"policies.{key}"
            if not isinstance(key, str) or not _NAME.match(key):
                raise InvalidParameter("policies", key, "names (letters, digits, _)")
            if not isinstance(rule, Mapping) or not rule:
                raise InvalidParameter(where, rule, "a non-empty mapping ACTION -> condition "
                                       "(the first allowed action whose condition holds)")
            clauses = []
            for action, condition in rule.items():
                if action not in self.action_names:
                    raise InvalidParameter(f"{where}.{action}", condition, "a condition keyed "
                                           "by an action: " + ", ".join(self.action_names))
                clauses.append((self.action_names.index(action),
                                self.base._symbolic(f"{where}.{action}", condition,
                                                    condition=True)))
            parsed[key] = tuple(clauses)
        return parsed

    def _outputs(self, outputs: Mapping[str, Any]) -> dict[str, Output]:
        if not isinstance(outputs, Mapping):
            raise InvalidParameter("outputs", outputs, "a mapping name -> formula, condition "
                                   "or \"threshold:ACTION[:VARIABLE]\"")
        parsed: dict[str, Output] = {}
        variables = [v.name for v in self.variables]
        for key, value in outputs.items():
            where = f"outputs.{key}"
            if not isinstance(key, str) or not _NAME.match(key) or key in RESERVED_OUTPUTS:
                raise InvalidParameter("outputs", key, "names (letters, digits, _) other than "
                                       + ", ".join(RESERVED_OUTPUTS))
            text = value.strip() if isinstance(value, str) else ""
            if text.startswith(MISMATCH_PREFIX):
                policy = text[len(MISMATCH_PREFIX):].strip()
                if policy not in self.policies:
                    raise InvalidParameter(where, value, "mismatch:POLICY with a declared "
                                           "policy: " + (", ".join(self.policies) or
                                                         "(none declared)"))
                parsed[key] = Output(key, "mismatch", label=policy, text=text)
            elif text.startswith(CURVE_PREFIX):
                parts = [p.strip() for p in text[len(CURVE_PREFIX):].split(":")]
                if len(variables) != 2 or len(parts) != 3 or parts[0] not in self.action_names \
                        or sorted(parts[1:]) != sorted(variables):
                    raise InvalidParameter(where, value, "curve:ACTION:VARIABLE:ALONG in a "
                                           "process of two variables, with an action of "
                                           + ", ".join(self.action_names) + " and the "
                                           "variables " + " and ".join(variables))
                parsed[key] = Output(key, "curve", label=":".join(parts), text=text)
            elif text.startswith(THRESHOLD_PREFIX):
                parts = [p.strip() for p in text[len(THRESHOLD_PREFIX):].split(":")]
                action = parts[0]
                variable = parts[1] if len(parts) == 2 else (variables[0] if len(variables) == 1
                                                             else "")
                if len(parts) > 2 or action not in self.action_names \
                        or variable not in variables:
                    raise InvalidParameter(where, value, "threshold:ACTION or "
                                           "threshold:ACTION:VARIABLE with an action of "
                                           + ", ".join(self.action_names) + " and a variable of "
                                           + ", ".join(variables))
                parsed[key] = Output(key, "threshold", label=f"{action}:{variable}", text=text)
            elif (isinstance(value, str) and is_condition_text(value)) or isinstance(
                    value, bool) or (isinstance(value, sp.Basic)
                                     and (value.is_Boolean or value.is_Relational)):
                parsed[key] = Output(key, "probability",
                                     self.base._symbolic(where, value, condition=True),
                                     text=str(value))
            else:
                parsed[key] = Output(key, "reward", self.base._symbolic(where, value),
                                     text=str(value))
        return parsed

    def _parse_action(self, action: Action) -> ParsedAction:
        guard = self.base._symbolic(f"{action.name}.guard", action.guard, condition=True)
        cost = self.base._symbolic(f"{action.name}.cost", action.cost)
        stripped = [Jump(j.rate, j.update, j.guard, j.label) for j in action.jumps]
        try:
            chain = MarkovChain(self.base.variables, stripped, self.base.parameters,
                                self.base.initial)
        except InvalidParameter as exc:
            raise InvalidParameter(f"{action.name}.{exc.name}", exc.value, exc.domain,
                                   exc.reason) from None
        parsed = tuple(ParsedJump(pj.rate, pj.guard, pj.update,
                                  f"{action.name}.{pj.where}", pj.label, pj.changed)
                       for pj in chain.jumps)
        costs = tuple(self.base._symbolic(f"{pj.where}.cost", j.cost)
                      for j, pj in zip(action.jumps, parsed, strict=True))
        return ParsedAction(action.name, guard, cost, parsed, costs)

    # -- what the solvers read ---------------------------------------------------------------
    @property
    def variables(self) -> tuple[StateVariable, ...]:
        """The state variables, as declared (``high=None`` for a countable one)."""
        return self._variables

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameter names."""
        return self.base.parameters

    @property
    def action_names(self) -> tuple[str, ...]:
        """The actions' names, in declaration order."""
        return tuple(a.name for a in self.actions)

    @property
    def unbounded(self) -> tuple[str, ...]:
        """The variables without an upper bound (solved on a truncation)."""
        return tuple(v.name for v in self.variables if v.high is None)

    def describe(self, state: Sequence[int]) -> str:
        """A state as ``n=3, m=0``."""
        return self.base.describe(state)

    def __repr__(self) -> str:
        shown = ", ".join(f"{v.name} in [{v.low}, {v.high}]" if v.high is not None
                          else f"{v.name} in [{v.low}, oo)" for v in self.variables)
        text = (f"variables=({shown}), actions=({', '.join(self.action_names)}), "
                f"jumps={len(self.base.jumps)}, parameters=({', '.join(self.parameters)})")
        if self.name:
            text = f"name={self.name!r}, " + text
        return f"MarkovDecisionProcess({text})"
