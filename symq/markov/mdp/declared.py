"""Markov decision processes declared in a claims file: the model kind ``mdp``.

A declaration writes the process as :class:`~symq.markov.mdp.MarkovDecisionProcess` takes it
(:data:`EXAMPLE` is Naor's admission control): integer variables with bounds (``"oo"`` for a
countable one, solved on a checked truncation), uncontrolled ``jumps``, ``actions`` with a
guard, a cost rate and their own jumps (each jump may carry a lump ``cost``), a cost rate,
declared ``policies`` and ``outputs``.  The model reports the optimal gain (``gain``, an
approximate value with its bracket and truncation error as the error bar) or the discounted
``value`` (``discount = "alpha"``), the outputs under the optimal policy, thresholds and policy
checks (``mismatch:POLICY``).  Text is parsed, never evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from symq.core.approximate import Approximate
from symq.core.claimsfile.declarations import check_keys
from symq.core.errors import MISSING, InvalidParameter
from symq.core.formula import parse_formula
from symq.core.parameters import Choice, Parameter
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import ResultBase

from ..chain import Jump, StateVariable
from .model import RESERVED_OUTPUTS, Action, MarkovDecisionProcess
from .results import MDPSolution
from .solve import solve_mdp

__all__ = ["MDP", "declare_mdp", "KEYS", "EXAMPLE"]

KEYS: dict[str, str] = {
    "variables": "table {NAME = [low, high]} of integer state variables; high = \"oo\" for a "
                 "countable one (solved on truncations doubled until the gain settles)",
    "actions": "list of {name = \"...\", guard = \"where it may be chosen\" (default: "
               "always), cost = \"cost rate while chosen\" (default 0), jumps = [{rate, "
               "update, guard, cost = \"lump cost per firing\"}]}",
    "jumps": "list of uncontrolled jumps {rate, update, guard, cost}, as in a ctmc",
    "cost": "the cost rate at every state (a formula; default 0)",
    "initial": "{VAR = integer}: where the reachable states start (and a discounted value is "
               "reported)",
    "policies": "{NAME = {ACTION = \"condition\", ...}}: stated policies (the first allowed "
                "action whose condition holds)",
    "outputs": "{NAME = \"formula\" (its stationary mean under the optimal policy), "
               "\"condition\" (its probability), \"threshold:ACTION[:VAR]\", "
               "\"curve:ACTION:VAR:ALONG\" (1: a nondecreasing switching curve, -1: "
               "nonincreasing, 0: none) or \"mismatch:POLICY\"}",
    "discount": "a discount rate (a formula in the parameters): the discounted value instead "
                "of the average cost",
    "truncation": "{VAR = N}: the first truncation of a countable variable (default 32)",
    "tolerance": "relative truncation error accepted (default 1e-6)",
}

EXAMPLE = '''\
[models.naor]
kind = "mdp"
parameters = { lam = "positive", mu = "positive", R = "positive", C = "positive" }
variables = { n = [0, "oo"] }
actions = [
  { name = "admit", jumps = [{ rate = "lam", update = { n = "n + 1" }, cost = "-R" }] },
  { name = "reject" },
]
jumps = [{ guard = "n > 0", rate = "mu", update = { n = "n - 1" } }]
cost = "C*n"
outputs = { N = "threshold:admit", EN = "n" }
'''

_METHOD = Parameter("method", Choice(("pi", "vi", "lp")), required=False, default="pi",
                    typical="pi",
                    description="pi: policy iteration (sparse LU); vi: relative value "
                                "iteration (Odoni bounds); lp: the linear program (HiGHS)")


def _bound(at: str, end: Any) -> int | None:
    if isinstance(end, bool):
        raise InvalidParameter(at, end, "an integer or \"oo\"")
    if isinstance(end, int):
        return end
    if isinstance(end, str) and end.strip() in ("oo", "inf", "infinity"):
        return None
    raise InvalidParameter(at, end, "an integer (or \"oo\" for the upper bound)")


def _variables(where: str, raw: Any) -> list[StateVariable]:
    key = f"{where}.variables"
    if not isinstance(raw, Mapping) or not raw:
        raise InvalidParameter(key, raw, "a table {NAME = [low, high]} (integers; high may be "
                               "\"oo\")")
    out = []
    for name, pair in raw.items():
        at = f"{key}.{name}"
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise InvalidParameter(at, pair, "[low, high]")
        low = _bound(f"{at}[0]", pair[0])
        if low is None:
            raise InvalidParameter(f"{at}[0]", pair[0], "an integer")
        high = _bound(f"{at}[1]", pair[1])
        try:
            out.append(StateVariable(str(name), low, high))
        except InvalidParameter as exc:
            raise InvalidParameter(f"{where}.variables.{exc.name}", exc.value, exc.domain,
                                   exc.reason) from None
    return out


def _jumps(where: str, raw: Any) -> list[Jump]:
    domain = "a list of {rate = ..., update = {...}, guard = ..., cost = ..., label = ...}"
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, Sequence):
        raise InvalidParameter(where, raw, domain)
    jumps = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        check_keys(at, item, ("rate", "update", "guard", "label", "cost"), "a jump")
        for needed in ("rate", "update"):
            if needed not in item:
                raise InvalidParameter(f"{at}.{needed}", MISSING, "given: " + domain)
        try:
            jumps.append(Jump(item["rate"], item["update"], item.get("guard", "true"),
                              item.get("label"), item.get("cost", 0)))
        except InvalidParameter as exc:
            raise InvalidParameter(at + exc.name.removeprefix("Jump"), exc.value, exc.domain,
                                   exc.reason) from None
    return jumps


def _actions(where: str, raw: Any) -> list[Action]:
    key = f"{where}.actions"
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, Sequence) or not raw:
        raise InvalidParameter(key, raw, "a non-empty list of {name = ..., guard = ..., "
                               "cost = ..., jumps = [...]}")
    actions = []
    for i, item in enumerate(raw):
        at = f"{key}[{i}]"
        check_keys(at, item, ("name", "guard", "cost", "jumps"), "an action")
        if "name" not in item:
            raise InvalidParameter(f"{at}.name", MISSING, "the action's name")
        try:
            actions.append(Action(item["name"], _jumps(f"{at}.jumps", item.get("jumps", [])),
                                  item.get("cost", 0), item.get("guard", "true")))
        except InvalidParameter as exc:
            if exc.name.startswith(where):
                raise
            raise InvalidParameter(f"{at}.{exc.name.split('.', 1)[-1]}", exc.value,
                                   exc.domain, exc.reason) from None
    return actions


class DeclaredMDP:
    """Solves the declared process at a parameter point."""

    def __init__(self, name: str, where: str, table: Mapping[str, Any],
                 parameters: tuple[str, ...]) -> None:
        self.where, self.parameters = where, parameters
        try:
            self.mdp = MarkovDecisionProcess(
                _variables(where, table.get("variables", MISSING)),
                _actions(where, table.get("actions", MISSING)),
                _jumps(f"{where}.jumps", table.get("jumps", [])), table.get("cost", 0),
                parameters, table.get("initial"), table.get("outputs", {}),
                table.get("policies", {}), name=name)
        except InvalidParameter as exc:
            if exc.name.startswith(where):
                raise
            raise InvalidParameter(f"{where}.{exc.name}", exc.value, exc.domain,
                                   exc.reason) from None
        discount = table.get("discount")
        self.discount = None if discount is None else parse_formula(
            f"{where}.discount", str(discount), parameters)
        truncation = table.get("truncation", {})
        if not isinstance(truncation, Mapping) or any(
                isinstance(v, bool) or not isinstance(v, int) for v in truncation.values()):
            raise InvalidParameter(f"{where}.truncation", truncation, "{VAR = integer}")
        self.truncation = dict(truncation)
        tolerance = table.get("tolerance", 1e-6)
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) \
                or not 0 < tolerance < 1:
            raise InvalidParameter(f"{where}.tolerance", tolerance, "a number in (0, 1)")
        self.tolerance = float(tolerance)

    def __call__(self, method: str = "pi", **values: Any) -> ResultBase:
        params = {p: values[p] for p in self.parameters}
        alpha = None
        if self.discount is not None:
            number = self.discount.subs({s: params[s.name]
                                         for s in self.discount.free_symbols})
            alpha = float(number)
            if not math.isfinite(alpha) or alpha <= 0:
                raise InvalidParameter(f"{self.where}.discount", str(self.discount),
                                       "a formula giving a positive rate", f"it gives {alpha}")
        try:
            solution = solve_mdp(self.mdp, params, method=method, discount=alpha,
                                 truncation=self.truncation or None, tolerance=self.tolerance)
        except InvalidParameter as exc:
            if exc.name in self.parameters or exc.name.startswith(self.where):
                raise
            raise InvalidParameter(f"{self.where}.{exc.name}", exc.value, exc.domain,
                                   exc.reason) from None
        return _with_error_bar(solution)


def _with_error_bar(solution: MDPSolution) -> MDPSolution:
    """The solution whose ``gain`` / ``value`` a claim reads carries its error bar (the
    bracket's half-width plus the truncation error estimate)."""
    import dataclasses

    key = "gain" if solution.gain is not None else "value"
    value = getattr(solution, key)
    bar = solution.total_error
    how = (f"{solution.method}; bracket half-width {solution.error:.2g}"
           + (f", truncation {solution.truncation_error:.2g}"
              if solution.truncation_error is not None else ""))
    shown = value if bar == 0 else Approximate(value, bar, how)
    return dataclasses.replace(solution, values={**solution.values, key: shown})


def declare_mdp(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                where: str) -> ModelSpec:
    """Build the model a ``kind = "mdp"`` declaration describes.

    Returns
    -------
    ModelSpec
        Parameters: the declared ones and ``method`` (``pi``, ``vi`` or ``lp``); outputs:
        ``gain`` (or ``value``, discounted) with its error bar, ``error``,
        ``truncation_error``, ``boundary_probability``, ``n_states`` and the declared outputs.

    Raises
    ------
    InvalidParameter
        Naming ``where.key`` (``models.naor.actions[0].jumps[0].rate``) for an unknown or
        missing key, a formula that does not parse, an output or policy naming an unknown
        action.

    Examples
    --------
    >>> from symq.core.parameters import Parameter, PositiveReal
    >>> import tomllib
    >>> table = tomllib.loads(EXAMPLE)["models"]["naor"]
    >>> ps = tuple(Parameter(p, PositiveReal()) for p in ("lam", "mu", "R", "C"))
    >>> spec = declare_mdp("naor", {k: v for k, v in table.items()
    ...                             if k not in ("kind", "parameters")}, ps, "models.naor")
    >>> spec.run({"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0})["N"]
    4
    """
    check_keys(where, table, KEYS, "an mdp model")
    for p in parameters:
        if p.name in RESERVED_OUTPUTS:
            raise InvalidParameter(f"{where}.parameters.{p.name}", p.name,
                                   "a name other than " + ", ".join(RESERVED_OUTPUTS))
    solver = DeclaredMDP(name, where, table, tuple(p.name for p in parameters))
    key = "value" if solver.discount is not None else "gain"
    outputs = (key, "error", "truncation_error", "boundary_probability", "n_states",
               *solver.mdp.outputs)
    return ModelSpec(
        name=name,
        summary=(f"declared MDP ({len(solver.mdp.variables)} variables, "
                 f"{len(solver.mdp.actions)} actions): the optimal "
                 + ("discounted value" if solver.discount is not None else "average cost")
                 + ", its policy and the declared outputs"),
        parameters=(*parameters, _METHOD),
        solve=solver,
        source=f"declared ({where}, kind mdp)",
        outputs=outputs,
    )


MDP = ModelKind(
    kind="mdp",
    summary=("a continuous-time Markov decision process by actions on guarded jumps: the "
             "optimal average or discounted cost (policy iteration, value iteration or the "
             "linear program, bracketed), the policy's thresholds and policy checks"),
    declare=declare_mdp,
    keys=KEYS,
    outputs=("gain", "value", "error", "truncation_error", "boundary_probability",
             "n_states", "<output>"),
    example=EXAMPLE,
)
