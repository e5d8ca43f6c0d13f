"""A finite continuous-time Markov chain declared by guarded jumps.

The declaration follows the guarded-command idiom of PRISM (Kwiatkowska, Norman & Parker,
"PRISM 4.0", CAV 2011): the state is a tuple of bounded integer variables; a :class:`Jump`
``guard -> rate : update`` moves every state where its guard holds to the state its update gives
at the rate its formula gives.  Updates are simultaneous: each new value is a formula in the *old*
state (``{"n": "n - 1", "m": "m + 1"}`` moves a job from n to m).  Several enabled jumps add
their rates, also when they reach the same state; a jump that leaves the state unchanged
(a self-loop) does not change a CTMC and is dropped.  An update that leaves the declared bounds
is an error, never clamped: guard the jump, or write the bound into the update
(``min(n + 1, K)``, which makes the blocked arrival a self-loop).

Text is parsed by :func:`symq.core.formula.parse_formula` (rates, updates, rewards) and
:func:`symq.core.conditions.parse_condition` (guards, events), never evaluated; sympy
expressions are accepted from Python.  Every name is a real symbol.

Outputs (:attr:`MarkovChain.outputs`) name what a solve reports, each by its form:

* a formula in the variables and parameters, e.g. ``{"EN": "n + m"}``: a state reward, whose
  stationary mean is reported;
* a condition, e.g. ``{"P_full": "n == K"}``: its stationary probability;
* ``"throughput:LABEL"``, e.g. ``{"X": "throughput:serve"}``: the stationary rate at which
  the jumps labelled ``LABEL`` fire (the sum over states of ``pi(s)`` times the jump's rate at
  ``s``, over the states where it is enabled and moves the chain: a blocked self-loop is not
  counted).

Examples
--------
>>> mm1k = MarkovChain(
...     [StateVariable("n", 0, 3)],
...     [Jump("lam", {"n": "n + 1"}, guard="n < 3", label="arrive"),
...      Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
...     parameters=("lam", "mu"),
...     outputs={"EN": "n", "P_full": "n == 3", "X": "throughput:serve"})
>>> mm1k
MarkovChain(variables=(n in [0, 3]), jumps=2, parameters=(lam, mu))
>>> mm1k.jumps[0].rate, mm1k.outputs["P_full"].kind
(lam, 'probability')
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import sympy as sp

from symq.core.conditions import CONDITION_WORDS, is_condition_text, parse_condition
from symq.core.errors import InvalidParameter
from symq.core.formula import CONSTANTS, FUNCTIONS, parse_formula
from symq.core.parameters import Parameter

__all__ = ["StateVariable", "Jump", "MarkovChain", "Output", "THROUGHPUT_PREFIX",
           "MAX_VARIABLES", "MAX_JUMPS"]

#: Prefix of a throughput output: ``"throughput:LABEL"``.
THROUGHPUT_PREFIX = "throughput:"
#: Most state variables of one chain.
MAX_VARIABLES = 64
#: Most jumps of one chain.
MAX_JUMPS = 1000

_ASSUME = {"real": True}
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = set(CONSTANTS) | set(FUNCTIONS) | set(CONDITION_WORDS) | {"True", "False", "sum",
                                                                      "integral", "oo"}


def _check_name(where: str, name: object) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) \
            or name in _RESERVED:
        raise InvalidParameter(where, name, "a name (letters, digits, _) that is not a "
                               "function, a constant or one of and/or/not/true/false")
    return name


def _integer(where: str, value: object) -> int:
    if isinstance(value, sp.Integer):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameter(where, value, "an integer")
    return int(value)


@dataclass(frozen=True)
class StateVariable:
    """An integer state variable ``name`` in ``[low, high]``, or ``[low, oo)`` (a level).

    Parameters
    ----------
    name : str
        The name used in rates, guards, updates and outputs.
    low, high : int
        The bounds (``low <= high``); an update leaving them is an error.  ``high=None``
        declares an unbounded *level* (at most one per chain): such a chain is solved by
        :func:`symq.markov.levels.qbd_stationary` (a quasi-birth-death process), not by the
        finite solvers.

    Examples
    --------
    >>> StateVariable("n", 0, 10)
    StateVariable(name='n', low=0, high=10)
    >>> StateVariable("n", 0, None).bounded
    False
    """

    name: str
    low: int
    high: int | None

    def __post_init__(self) -> None:
        _check_name("StateVariable.name", self.name)
        low = _integer(f"{self.name}.low", self.low)
        high = None if self.high is None else _integer(f"{self.name}.high", self.high)
        if high is not None and high < low:
            raise InvalidParameter(f"{self.name}.high", high, f"an integer >= low = {low}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def bounded(self) -> bool:
        """Whether ``high`` is finite (False for a level variable, ``high=None``)."""
        return self.high is not None

    @property
    def size(self) -> int:
        """Number of values, ``high - low + 1`` (an unbounded variable has no size)."""
        if self.high is None:
            raise InvalidParameter(f"{self.name}.high", None, "an integer (a bounded variable)",
                                   "an unbounded level has infinitely many values")
        return self.high - self.low + 1


#: A formula as written: text, a number or a sympy expression.
Formula: TypeAlias = "str | int | float | sp.Expr"
#: A condition as written: text, a bool or a sympy Boolean.
Condition: TypeAlias = "str | bool | sp.Basic"


@dataclass(frozen=True)
class Jump:
    """A guarded jump ``guard -> rate : update`` of a :class:`MarkovChain`, as written.

    Parameters
    ----------
    rate : str, number or sympy expression
        The rate, a formula in the state variables and parameters.  It must be finite and
        ``>= 0`` at every reachable state where the guard holds (checked when the state space
        is built); a zero rate adds no transition.
    update : mapping
        Variable name -> its new value, a formula in the *old* state (simultaneous updates);
        variables not named keep their value.
    guard : str, bool or sympy Boolean
        Where the jump is enabled (default everywhere).
    label : str, optional
        A name for the jump: errors name it, and ``"throughput:LABEL"`` outputs count its
        firings (several jumps may share a label).
    cost : str, number or sympy expression, default 0
        A lump cost charged at each firing, a formula in the state before the jump (a
        negative cost is a reward).  Only a Markov decision process
        (:class:`symq.markov.mdp.MarkovDecisionProcess`) charges costs; a
        :class:`MarkovChain` refuses a jump with a nonzero one.

    The parsed forms are held by :class:`MarkovChain` (``chain.jumps``), which knows the
    names a formula may use.
    """

    rate: Formula
    update: Mapping[str, Formula]
    guard: Condition = "true"
    label: str | None = None
    cost: Formula = 0

    def __post_init__(self) -> None:
        if not isinstance(self.update, Mapping):
            raise InvalidParameter("Jump.update", self.update,
                                   "a mapping variable -> new value, e.g. {\"n\": \"n + 1\"}")
        if not self.update:
            raise InvalidParameter("Jump.update", dict(self.update), "a non-empty mapping",
                                   "a jump that changes no variable is a self-loop, which does "
                                   "not change a CTMC")
        if self.label is not None and (not isinstance(self.label, str)
                                       or not _LABEL.match(self.label)):
            raise InvalidParameter("Jump.label", self.label, "a name (letters, digits, _)")
        object.__setattr__(self, "update", dict(self.update))


@dataclass(frozen=True)
class ParsedJump:
    """A jump with its formulas parsed: ``rate`` (sympy Expr), ``guard`` (sympy Boolean),
    ``update`` (one expression per state variable, in the chain's order: the identity for the
    variables the jump leaves alone), ``where`` (how errors name it) and ``label``."""

    rate: sp.Expr
    guard: Any
    update: tuple[sp.Expr, ...]
    where: str
    label: str | None
    changed: tuple[str, ...]


@dataclass(frozen=True)
class Output:
    """A parsed output: ``kind`` is ``"reward"`` (stationary mean of ``expr``),
    ``"probability"`` (stationary probability of the condition ``expr``) or ``"throughput"``
    (firing rate of the jumps labelled ``label``)."""

    name: str
    kind: str
    expr: Any = None
    label: str | None = None
    text: str = ""


@dataclass(frozen=True, repr=False)
class MarkovChain:
    """A finite CTMC declared by bounded integer variables and guarded jumps.

    Parameters
    ----------
    variables : sequence of StateVariable
        The state variables, in order (the states are ordered lexicographically by them).  At
        most one may be unbounded (``high=None``): the level of a quasi-birth-death chain,
        solved by :func:`symq.markov.levels.qbd_stationary`.
    jumps : sequence of Jump
        The guarded jumps.
    parameters : sequence of str or Parameter
        Names of the parameters the formulas use; their values are given when solving.
    initial : mapping or sequence of int, optional
        The initial state (default: every variable at its low bound); the state space is the
        set of states reachable from it.
    outputs : mapping, optional
        Name -> a formula (a state reward: its stationary mean), a condition (its stationary
        probability) or ``"throughput:LABEL"`` (the firing rate of the labelled jumps).
    name : str, optional
        A name shown in results and messages.

    Raises
    ------
    InvalidParameter
        A bad name, a duplicate name, two unbounded variables (both named), an initial state
        outside the bounds, or a formula that
        does not parse; the message names the jump as ``jumps[2].rate`` (or by its label,
        ``serve.rate``) and the output as ``outputs.EN``.
    """

    variables: tuple[StateVariable, ...]
    jumps: tuple[ParsedJump, ...]
    parameters: tuple[str, ...] = ()
    initial: tuple[int, ...] = ()
    outputs: Mapping[str, Output] = field(default_factory=dict)
    name: str | None = None
    declared: tuple[Jump, ...] = field(default=(), compare=False)

    def __init__(self, variables: Sequence[StateVariable], jumps: Sequence[Jump],
                 parameters: Sequence[str | Parameter] = (),
                 initial: Mapping[str, int] | Sequence[int] | None = None,
                 outputs: Mapping[str, Formula | Condition] | None = None,
                 name: str | None = None) -> None:
        variables = tuple(variables)
        if not variables or not all(isinstance(v, StateVariable) for v in variables):
            raise InvalidParameter("variables", variables, "a non-empty sequence of "
                                   "StateVariable")
        if len(variables) > MAX_VARIABLES:
            raise InvalidParameter("variables", len(variables),
                                   f"at most {MAX_VARIABLES} variables")
        unbounded = [v.name for v in variables if v.high is None]
        if len(unbounded) > 1:
            raise InvalidParameter("variables", unbounded, "at most one unbounded variable "
                                   "(high=None, the level)",
                                   f"{' and '.join(unbounded)} are unbounded: give every "
                                   "variable but the level a finite high")
        params = tuple(p.name if isinstance(p, Parameter) else p for p in parameters)
        for i, p in enumerate(params):
            _check_name(f"parameters[{i}]", p)
        names = [v.name for v in variables] + list(params)
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise InvalidParameter("variables/parameters", repeated[0],
                                   "a name used once (variables and parameters share names)")
        jumps = tuple(jumps)
        if not all(isinstance(j, Jump) for j in jumps):
            raise InvalidParameter("jumps", jumps, "a sequence of Jump")
        if len(jumps) > MAX_JUMPS:
            raise InvalidParameter("jumps", len(jumps), f"at most {MAX_JUMPS} jumps")
        object.__setattr__(self, "variables", variables)
        object.__setattr__(self, "parameters", params)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "declared", jumps)
        object.__setattr__(self, "jumps",
                           tuple(self._parse_jump(i, j) for i, j in enumerate(jumps)))
        object.__setattr__(self, "initial", self._initial(initial))
        object.__setattr__(self, "outputs", self._outputs(outputs or {}))

    # -- names and symbols ---------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """The names a formula may use: the variables, then the parameters."""
        return tuple(v.name for v in self.variables) + self.parameters

    @property
    def variable_symbols(self) -> tuple[sp.Symbol, ...]:
        """The state variables as (real) sympy symbols."""
        return tuple(sp.Symbol(v.name, **_ASSUME) for v in self.variables)

    @property
    def parameter_symbols(self) -> tuple[sp.Symbol, ...]:
        """The parameters as (real) sympy symbols."""
        return tuple(sp.Symbol(p, **_ASSUME) for p in self.parameters)

    @property
    def labels(self) -> tuple[str, ...]:
        """The distinct labels of the jumps, in order of first use."""
        return tuple(dict.fromkeys(j.label for j in self.jumps if j.label is not None))

    def require_finite(self, solver: str) -> None:
        """Refuse a chain with an unbounded level variable for ``solver``, which needs a finite
        state space (the message points to :func:`symq.markov.qbd_stationary`)."""
        for v in self.variables:
            if v.high is None:
                raise InvalidParameter(f"{v.name}.high", None,
                                       f"an integer (a finite state space, for {solver})",
                                       f"{v.name} is an unbounded level, a level-structured "
                                       "(QBD) chain: solve it with symq.markov.qbd_stationary "
                                       "(or give a bound)")

    def describe(self, state: Sequence[int]) -> str:
        """A state as ``n=3, m=0``."""
        return ", ".join(f"{v.name}={int(x)}" for v, x in zip(self.variables, state,
                                                                strict=True))

    def __repr__(self) -> str:
        shown = ", ".join(f"{v.name} in [{v.low}, {v.high}]" if v.high is not None
                          else f"{v.name} in [{v.low}, oo)" for v in self.variables)
        text = f"variables=({shown}), jumps={len(self.jumps)}, " \
               f"parameters=({', '.join(self.parameters)})"
        if self.name:
            text = f"name={self.name!r}, " + text
        return f"MarkovChain({text})"

    # -- parsing ---------------------------------------------------------------------------
    def _symbolic(self, where: str, value: Any, condition: bool = False) -> Any:
        """A formula or condition given as text, a number, a bool or a sympy object."""
        if condition:
            if isinstance(value, (str, bool)):
                return parse_condition(where, value, self.names)
            if isinstance(value, sp.Basic) and (value.is_Boolean or value.is_Relational):
                return self._canonical(where, value, "a condition")
            raise InvalidParameter(where, value, f"a condition in {', '.join(self.names)}")
        if isinstance(value, str):
            return parse_formula(where, value, self.names,
                                 assumptions={n: _ASSUME for n in self.names})
        if isinstance(value, bool):
            raise InvalidParameter(where, value, f"a formula in {', '.join(self.names)}")
        if isinstance(value, (int, float)):
            value = sp.sympify(value)  # a number, never text
        if isinstance(value, sp.Expr):
            expr = self._canonical(where, value, "a formula")
            if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
                raise InvalidParameter(where, value, "a finite formula")
            return expr
        raise InvalidParameter(where, value, f"a formula in {', '.join(self.names)} (text or "
                               "a sympy expression)")

    def _canonical(self, where: str, value: sp.Basic, what: str) -> Any:
        """Replace each free symbol by the chain's real symbol of the same name."""
        table = {n: sp.Symbol(n, **_ASSUME) for n in self.names}
        unknown = sorted(str(s) for s in value.free_symbols if str(s) not in table)
        if unknown:
            raise InvalidParameter(where, value, f"{what} in {', '.join(self.names)}",
                                   f"unknown name {unknown[0]}")
        return value.xreplace({s: table[str(s)] for s in value.free_symbols})

    def _parse_jump(self, i: int, jump: Jump) -> ParsedJump:
        where = jump.label if jump.label is not None else f"jumps[{i}]"
        if not (isinstance(jump.cost, (int, float, sp.Expr)) and not isinstance(jump.cost, bool)
                and sp.sympify(jump.cost) == 0):
            raise InvalidParameter(f"{where}.cost", jump.cost, "0 in a Markov chain",
                                   "a lump cost is charged by a Markov decision process "
                                   "(symq.markov.mdp.MarkovDecisionProcess), not by a chain")
        rate = self._symbolic(f"{where}.rate", jump.rate)
        guard = self._symbolic(f"{where}.guard", jump.guard, condition=True)
        known = {v.name for v in self.variables}
        for key in jump.update:
            if key not in known:
                raise InvalidParameter(f"{where}.update", key, "a state variable: one of "
                                       + ", ".join(v.name for v in self.variables))
        update = tuple(self._symbolic(f"{where}.update.{v.name}", jump.update[v.name])
                       if v.name in jump.update else s
                       for v, s in zip(self.variables, self.variable_symbols, strict=True))
        return ParsedJump(rate, guard, update, where, jump.label, tuple(jump.update))

    def _initial(self, initial: Mapping[str, int] | Sequence[int] | None) -> tuple[int, ...]:
        if initial is None:
            return tuple(v.low for v in self.variables)
        if isinstance(initial, Mapping):
            extra = sorted(set(initial) - {v.name for v in self.variables})
            if extra:
                raise InvalidParameter("initial", dict(initial), "a state: variable -> value",
                                       f"{extra[0]} is not a state variable")
            values = [initial.get(v.name, v.low) for v in self.variables]
        else:
            values = list(initial)
            if len(values) != len(self.variables):
                raise InvalidParameter("initial", values, f"{len(self.variables)} integers, "
                                       "one per state variable")
        state = []
        for v, x in zip(self.variables, values, strict=True):
            x = _integer(f"initial.{v.name}", x)
            if x < v.low or (v.high is not None and x > v.high):
                raise InvalidParameter(f"initial.{v.name}", x, f"an integer in [{v.low}, "
                                       + (f"{v.high}]" if v.high is not None else "oo)"))
            state.append(x)
        return tuple(state)

    def _outputs(self, outputs: Mapping[str, Any]) -> dict[str, Output]:
        if not isinstance(outputs, Mapping):
            raise InvalidParameter("outputs", outputs, "a mapping name -> formula, condition "
                                   "or \"throughput:LABEL\"")
        parsed: dict[str, Output] = {}
        for key, value in outputs.items():
            where = f"outputs.{key}"
            if not isinstance(key, str) or not _LABEL.match(key):
                raise InvalidParameter("outputs", key, "names (letters, digits, _)")
            text = value if isinstance(value, str) else str(value)
            if isinstance(value, str) and value.strip().startswith(THROUGHPUT_PREFIX):
                label = value.strip()[len(THROUGHPUT_PREFIX):].strip()
                if label not in self.labels:
                    raise InvalidParameter(where, value, "throughput:LABEL for a jump label: "
                                           + (", ".join(self.labels) or "(no jump is labelled)"))
                parsed[key] = Output(key, "throughput", label=label, text=text)
            elif (isinstance(value, str) and is_condition_text(value)) or isinstance(
                    value, bool) or (isinstance(value, sp.Basic)
                                     and (value.is_Boolean or value.is_Relational)):
                parsed[key] = Output(key, "probability",
                                     self._symbolic(where, value, condition=True), text=text)
            else:
                parsed[key] = Output(key, "reward", self._symbolic(where, value), text=text)
        return parsed
