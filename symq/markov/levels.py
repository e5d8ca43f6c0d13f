"""A declared chain with one unbounded level: its QBD blocks, its law and its declared outputs.

A :class:`~symq.markov.chain.MarkovChain` whose one variable has ``high=None`` is read as a
level-independent quasi-birth-death process (:mod:`symq.markov.qbd`, whose block convention
applies): the unbounded variable is the *level* (level ``n`` is the value ``low + n``), the
*phases* are the reachable combinations of the bounded variables (those of level 0 may differ
from those of the levels ``n >= 1``).

Building the blocks.  The reachable states of the levels ``0 .. 9`` (above the initial level) are
found by breadth-first search from the initial state; the phases of level 0 and of the levels
``n >= 1`` are those met there (closed under the moves of levels 0, 1 and 2).  ``B1, B0`` are the
moves out of level 0, ``B2, A1, A0`` those out of level 1, ``A2`` those out of level 2.  Refused
with :class:`~symq.core.errors.InvalidParameter` naming the jump:

* a jump that changes the level by more than 1 (not a QBD);
* a jump whose rate, enabling or target differs at some level ``n >= 2`` of
  :data:`CHECK_LEVELS` from level 1 (up and within-level moves) or level 2 (down moves: level
  1's are the boundary block ``B2``, whose total per phase must equal ``A2``'s): a
  level-dependent chain, handed to
  :func:`~symq.markov.level_dependent.level_dependent_stationary` (linear level reduction,
  truncation checked).  The check is numerical, at those levels only.

Outputs (each declared output, in :attr:`QBDStationaryLaw.values`):

* ``throughput:LABEL``: exact, from ``pi0``, ``pi1`` and ``sum_{n >= 2} pi_n = pi1 R (I - R)^{-1}``
  (the rates are level-independent from level 2 on; level 1's down moves may differ);
* a reward ``f`` or a condition: summed level by level from level 0, and in closed form beyond a
  level ``L0`` from which ``f`` is a polynomial in the level of degree at most
  :data:`MAX_DEGREE` for each phase (``sum_j pi_(L0) R^j p(j)``,
  :func:`~symq.markov.qbd.polynomial_tail`).  ``L0 = 1`` when the formula as written is such a
  polynomial (``n``, ``a + b*n``, ``n**2``; a condition free of the level, or decided for
  every level ``>= 1``, like ``n == 0``); else ``L0 - 1`` is the first level ``L`` where
  ``P(level > L) < eps`` (``Max(n - c, 0)``, ``min(n, c)``, ``n > b`` become polynomials
  there once sympy decides the comparisons for every larger level).  Either way the value is
  exact up to round-off and its bound is 0.
* otherwise (the formula is still not a polynomial beyond ``L``): a *condition* is summed up to
  level ``L`` and its bound is the tail mass ``P(level > L) < eps`` (its probability lies in
  ``[value, value + bound]``); a *reward* is refused, since no bound on the left-out part
  follows from the law alone (write it as a polynomial in the level, or a condition).

Examples
--------
M/M/1 at ``rho = 1/2``: ``E[N] = rho / (1 - rho) = 1``, ``P(N = 0) = 1/2``.

>>> from symq.markov.chain import Jump, MarkovChain, StateVariable
>>> mm1 = MarkovChain([StateVariable("n", 0, None)],
...                   [Jump("lam", {"n": "n + 1"}, label="arrive"),
...                    Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
...                   parameters=("lam", "mu"),
...                   outputs={"EN": "n", "P0": "n == 0", "X": "throughput:serve"})
>>> law = qbd_stationary(mm1, {"lam": 1.0, "mu": 2.0})
>>> {k: round(v, 12) for k, v in law.values.items()}
{'EN': 1.0, 'P0': 0.5, 'X': 1.0}
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from symq.core.compiler import compile as compile_expr
from symq.core.errors import InvalidParameter
from symq.core.result import Exactness, ResultBase

from .chain import MarkovChain
from .qbd import MatrixGeometricLaw, polynomial_tail, solve_qbd
from .results import OutputsByName
from .statespace import evaluate, parameter_values

__all__ = ["QBDStationaryLaw", "qbd_stationary", "CHECK_LEVELS", "MAX_PHASES", "MAX_DEGREE",
           "MAX_LEVELS"]

#: Levels (above ``low``) where the rates are compared with level 1's.
CHECK_LEVELS = (2, 3, 4, 5, 6, 7, 8, 16, 64, 256, 1024, 2 ** 20)
#: Levels explored above the initial level to find the phases.
EXPLORE = 9
#: Most phases of the levels (the QBD solve is dense, ``m^3`` per step).
MAX_PHASES = 2000
#: Highest degree of a reward's polynomial tail.
MAX_DEGREE = 6
#: Most levels summed for an output whose tail is not in closed form.
MAX_LEVELS = 100_000
#: Relative difference of two rates taken as equal in the level-independence check.
RATE_TOL = 1e-12


class _LevelDependent(InvalidParameter):
    """The chain's moves depend on the level (solved by linear level reduction instead)."""


@dataclass(frozen=True)
class QBDStationaryLaw(OutputsByName, ResultBase):
    """The stationary law of a declared chain with an unbounded level, and its outputs.

    Attributes
    ----------
    values : dict
        Each declared output by name: a reward's stationary mean, a condition's stationary
        probability, a label's throughput.
    bounds : dict
        Per output, a bound on its truncation error (0 where the value is in closed form; for a
        condition summed up to level ``L``, the tail mass ``P(level > L)``: the probability lies
        in ``[value, value + bound]``).
    truncation_bound : float
        The largest of :attr:`bounds`.
    level : str
        The name of the level variable.
    phase_variables : tuple of str
        The bounded variables, in order.
    phases0, phases : numpy.ndarray
        The phases of level 0 and of the levels ``n >= 1``: one row per phase, one column per
        bounded variable.
    eta : float or None
        The caudal characteristic (spectral radius of ``R``): ``P(level >= n) ~ c eta^n``;
        ``None`` for a level-dependent chain (no single decay rate), which is then not among
        the values.
    drift : float
        ``alpha A0 1 - alpha A2 1`` (negative).
    mean_level : float
        The stationary mean of the level variable (``low + E[n - low]``).
    levels_summed : int
        The level ``L`` up to which the outputs not in closed form from level 1 were summed
        (0 when none needed it).
    residual : float
        The QBD solve's residual (:attr:`MatrixGeometricLaw.residual`).
    solution : MatrixGeometricLaw
        The matrix-geometric solution (``G``, ``R``, ``pi0``, ``pi1``); not shown.
    method, exactness, seconds
        How it was obtained and its wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("eta", "mean_level", "truncation_bound", "residual")
    reported: ClassVar[tuple[str, ...]] = ("eta", "mean_level", "truncation_bound", "residual")

    values: dict[str, float]
    bounds: dict[str, float]
    truncation_bound: float
    level: str
    phase_variables: tuple[str, ...]
    phases0: np.ndarray
    phases: np.ndarray
    eta: float | None
    drift: float
    mean_level: float
    levels_summed: int
    residual: float
    solution: MatrixGeometricLaw = field(repr=False, compare=False)
    method: str = ("level-independent QBD: logarithmic reduction, matrix-geometric law; outputs "
                   "summed then in closed form")
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


class _Levels:
    """The chain's jumps evaluated on states (level value first-class), with the QBD checks."""

    def __init__(self, chain: MarkovChain, values: dict[str, float]) -> None:
        self.chain = chain
        self.values = values
        self.k = next(i for i, v in enumerate(chain.variables) if v.high is None)
        self.low = chain.variables[self.k].low
        self.name = chain.variables[self.k].name
        self.bounded = [i for i in range(len(chain.variables)) if i != self.k]
        args = chain.variable_symbols + chain.parameter_symbols
        self.pvals = [values[p] for p in chain.parameters]
        self.compiled = [(compile_expr(j.guard, args), compile_expr(j.rate, args),
                          compile_expr(list(j.update), args)) for j in chain.jumps]

    def states(self, n: int, phases: np.ndarray) -> np.ndarray:
        """The states of level ``n`` (offset from ``low``) with the given phases."""
        out = np.empty((phases.shape[0], len(self.chain.variables)), dtype=np.int64)
        out[:, self.k] = self.low + n
        if self.bounded:
            out[:, self.bounded] = phases
        return out

    def moves(self, states: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per jump: ``(rate, level change, target phases)`` at each state (rate 0 where the
        jump is disabled or does not move the chain)."""
        chain, m = self.chain, states.shape[0]
        cols = [states[:, c].astype(float) for c in range(states.shape[1])]
        found = []
        with np.errstate(all="ignore"):
            for jump, (guard_f, rate_f, update_f) in zip(chain.jumps, self.compiled,
                                                          strict=True):
                on = np.broadcast_to(np.asarray(guard_f(*cols, *self.pvals), float), (m,)) != 0
                rate = np.where(on, np.broadcast_to(np.asarray(rate_f(*cols, *self.pvals),
                                                               float), (m,)), 0.0)
                bad = on & (~np.isfinite(rate) | (rate < 0))
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise InvalidParameter(f"{jump.where}.rate", float(rate[i]),
                                           "a finite rate >= 0",
                                           f"at the state {chain.describe(states[i])}")
                new = np.column_stack([np.broadcast_to(np.asarray(u, float), (m,))
                                       for u in update_f(*cols, *self.pvals)])
                target = self._targets(jump, new, states, on)
                moving = on & (rate > 0) & np.any(target != states, axis=1)
                rate = np.where(moving, rate, 0.0)
                delta = target[:, self.k] - states[:, self.k]
                far = moving & (np.abs(delta) > 1)
                if far.any():
                    i = int(np.flatnonzero(far)[0])
                    raise InvalidParameter(
                        f"{jump.where}.update.{self.name}", int(target[i, self.k]),
                        f"{self.name} - 1, {self.name} or {self.name} + 1 (a quasi-birth-death "
                        "chain moves the level by at most one)",
                        f"at the state {chain.describe(states[i])}")
                found.append((rate, np.where(moving, delta, 0), target[:, self.bounded]))
        return found

    def _targets(self, jump: Any, new: np.ndarray, states: np.ndarray, on: np.ndarray
                 ) -> np.ndarray:
        rounded = np.rint(np.where(on[:, None], new, states))
        for c, var in enumerate(self.chain.variables):
            if var.name not in jump.changed:
                continue
            column = np.where(on, new[:, c], states[:, c])
            bad = ~np.isfinite(column) | (np.abs(column - rounded[:, c]) > 1e-9)
            high = np.inf if var.high is None else var.high
            bad |= (rounded[:, c] < var.low) | (rounded[:, c] > high)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                shown = f"[{var.low}, {var.high}]" if var.high is not None else f"[{var.low}, oo)"
                raise InvalidParameter(f"{jump.where}.update.{var.name}", float(column[i]),
                                       f"an integer within {shown}, the bounds of {var.name}",
                                       f"at the state {self.chain.describe(states[i])}; "
                                       "updates are never clamped: guard the jump")
        return rounded.astype(np.int64)


def _rows(phases: np.ndarray) -> dict[tuple[int, ...], int]:
    return {tuple(int(x) for x in p): i for i, p in enumerate(phases)}


def _sorted(found: set[tuple[int, ...]], width: int) -> np.ndarray:
    return np.array(sorted(found), dtype=np.int64).reshape(len(found), width)


def _phases(lv: _Levels) -> tuple[np.ndarray, np.ndarray]:
    """The phases of level 0 and of the levels ``>= 1``, by search from the initial state."""
    chain, width = lv.chain, len(lv.bounded)
    start = np.array(chain.initial, dtype=np.int64)
    top = int(start[lv.k]) - lv.low + EXPLORE
    seen = {tuple(int(x) for x in start)}
    frontier = start[None, :]
    while frontier.shape[0]:
        frontier = frontier[frontier[:, lv.k] - lv.low <= top]
        fresh = []
        for rate, delta, phase in lv.moves(frontier):
            for i in np.flatnonzero(rate > 0):
                state = list(phase[i]) if width else []
                state.insert(lv.k, int(frontier[i, lv.k] + delta[i]))
                key = tuple(int(x) for x in state)
                if key not in seen:
                    seen.add(key)
                    fresh.append(key)
        if len(seen) > (top + 2) * MAX_PHASES:
            raise InvalidParameter("variables", [v.name for v in chain.variables],
                                   f"at most {MAX_PHASES} phases per level",
                                   "the QBD solve is dense in the phases")
        frontier = np.array(fresh, dtype=np.int64).reshape(len(fresh), len(chain.variables))
    zero = {tuple(s[i] for i in lv.bounded) for s in seen if s[lv.k] == lv.low}
    upper = {tuple(s[i] for i in lv.bounded) for s in seen if s[lv.k] > lv.low}
    while True:  # close under the moves of levels 0, 1 and 2
        size = (len(zero), len(upper))
        for n, source in ((0, zero), (1, upper), (2, upper)):
            states = lv.states(n, _sorted(source, width))
            for rate, delta, phase in lv.moves(states):
                for i in np.flatnonzero(rate > 0):
                    (zero if n + delta[i] == 0 else upper).add(tuple(int(x) for x in phase[i]))
        if (len(zero), len(upper)) == size:
            break
    if not upper:
        raise InvalidParameter(f"{lv.name}.high", None, "an integer (the level never rises)",
                               f"no reachable state has {lv.name} > {lv.low}: give a bound and "
                               "solve it with symq.markov.stationary")
    if not zero:
        raise InvalidParameter(lv.name, lv.low, "a level that the chain reaches",
                               f"no state with {lv.name} = {lv.low} is reachable")
    if len(upper) > MAX_PHASES or len(zero) > MAX_PHASES:
        raise InvalidParameter("variables", [v.name for v in chain.variables],
                               f"at most {MAX_PHASES} phases per level",
                               f"{max(len(upper), len(zero))} found; the QBD solve is dense")
    return _sorted(zero, width), _sorted(upper, width)


def _check_level_independent(lv: _Levels, phases: np.ndarray) -> None:
    """Refuse a jump whose moves at a level of :data:`CHECK_LEVELS` differ from the repeating
    blocks: up and within-level moves from level 1's (``A0``, ``A1``), down moves from level
    2's (``A2``; the down moves of level 1 are the boundary block ``B2`` and may differ)."""
    first = lv.moves(lv.states(1, phases))
    second = lv.moves(lv.states(2, phases))
    for n in CHECK_LEVELS:
        states = lv.states(n, phases)
        for jump, (r1, d1, p1), (r2, d2, p2), (rn, dn, pn) in zip(
                lv.chain.jumps, first, second, lv.moves(states), strict=True):
            down = ((rn > 0) & (dn == -1)) | ((r2 > 0) & (d2 == -1)) | ((r1 > 0) & (d1 == -1))
            rr, dr = np.where(down, r2, r1), np.where(down, d2, d1)
            pr = np.where(down[:, None], p2, p1)
            differ = np.abs(rn - rr) > RATE_TOL * np.maximum(np.abs(rr), np.abs(rn))
            moving = (rr > 0) & (rn > 0)
            differ |= moving & ((dn != dr) | np.any(pn != pr, axis=1))
            if differ.any():
                i = int(np.flatnonzero(differ)[0])
                ref = lv.states(2 if down[i] else 1, phases[i:i + 1])[0]
                raise _LevelDependent(
                    f"{jump.where}.rate", float(rn[i]),
                    f"the same move at every level {lv.name} >= {lv.low + 1} (a "
                    "level-independent QBD; down moves from level 2 on)",
                    f"at {lv.chain.describe(states[i])} it moves at rate {rn[i]:.6g}, at "
                    f"{lv.chain.describe(ref)} at rate {rr[i]:.6g} (or to another state); "
                    "level-dependent chains are not supported yet")


def _blocks(lv: _Levels, phases0: np.ndarray, phases: np.ndarray
            ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """``[B1, B0, B2, A0, A1, A2]`` and the per-jump rates at level 0, at level 1 and at the
    levels >= 2.  Level 1 shares ``A1`` (its diagonal included) with the higher levels, so its
    total down rate in each phase must be theirs (else the chain is level-dependent)."""
    m0, m = phases0.shape[0], phases.shape[0]
    at0, at = _rows(phases0), _rows(phases)
    B1, B0, B2 = np.zeros((m0, m0)), np.zeros((m0, m)), np.zeros((m, m0))
    A0, A1, A2 = np.zeros((m, m)), np.zeros((m, m)), np.zeros((m, m))
    rates0, rates1, rates2 = [], [], []
    for n, source, blocks in ((0, phases0, {0: B1, 1: B0}), (1, phases, {-1: B2, 0: A1, 1: A0}),
                              (2, phases, {-1: A2})):
        for rate, delta, target in lv.moves(lv.states(n, source)):
            if n == 0:
                rates0.append(rate)
            elif n == 1:
                rates1.append(rate)
            else:
                rates2.append(rate)
            for i in np.flatnonzero(rate > 0):
                d = int(delta[i])
                if d not in blocks:
                    continue
                index = at0 if n + d == 0 else at
                blocks[d][i, index[tuple(int(x) for x in target[i])]] += rate[i]
    np.fill_diagonal(B1, np.diag(B1) - B1.sum(axis=1) - B0.sum(axis=1))
    np.fill_diagonal(A1, np.diag(A1) - A1.sum(axis=1) - A0.sum(axis=1) - A2.sum(axis=1))
    down1, down2 = B2.sum(axis=1), A2.sum(axis=1)
    differ = np.abs(down1 - down2) > RATE_TOL * np.maximum(np.abs(down1), np.abs(down2))
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        one, two = lv.states(1, phases[i:i + 1])[0], lv.states(2, phases[i:i + 1])[0]
        raise _LevelDependent(
            f"{lv.name} (level)", lv.chain.describe(one), "the same total rate down at level 1 "
            "as at every higher level, in each phase (a level-independent QBD)",
            f"{down1[i]:.6g} down from {lv.chain.describe(one)}, {down2[i]:.6g} from "
            f"{lv.chain.describe(two)}; level-dependent chains are not supported yet")
    return [B1, B0, B2, A0, A1, A2], rates0, rates1, rates2


def _tail_degree(expr: Any, condition: bool, lv: _Levels, start: int,
                 phases: np.ndarray) -> int | None:
    """The degree in ``j`` of ``expr`` at the level ``low + start + j`` (``j >= 0``), the
    largest over the phases; ``None`` if it is not a polynomial of degree <= MAX_DEGREE."""
    chain = lv.chain
    j = sp.Symbol("j_", integer=True, nonnegative=True)
    table = {s: sp.Float(lv.values[p]) for s, p in zip(chain.parameter_symbols,
                                                        chain.parameters, strict=True)}
    level = chain.variable_symbols[lv.k]
    shifted = expr.xreplace(table).xreplace({level: lv.low + start + j})

    def degree(e: Any) -> int | None:
        if condition:
            return 0 if (isinstance(e, sp.logic.boolalg.BooleanAtom)
                         or j not in e.free_symbols) else None
        if j not in e.free_symbols:
            return 0
        if not e.is_polynomial(j):
            return None
        d = sp.degree(e, j)
        return int(d) if d <= MAX_DEGREE else None

    found = degree(shifted)
    if found is not None:
        return found
    symbols = [chain.variable_symbols[i] for i in lv.bounded]
    worst = 0
    for row in phases:
        d = degree(shifted.xreplace({s: int(x) for s, x in zip(symbols, row, strict=True)}))
        if d is None:
            return None
        worst = max(worst, d)
    return worst


def _output(name: str, out: Any, lv: _Levels, sol: MatrixGeometricLaw, phases0: np.ndarray,
            phases: np.ndarray, levels: int, tail_mass: float) -> tuple[float, float, bool]:
    """``(value, bound, summed)`` of a reward or condition output."""
    condition = out.kind == "probability"
    chain = lv.chain

    def at(n: int, rows: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            values = evaluate(out.expr, chain, lv.states(n, rows), lv.values)
        values = (values != 0).astype(float) if condition else values
        if not np.all(np.isfinite(values)):
            raise InvalidParameter(f"outputs.{name}", out.text, "a finite reward at every "
                                   "state", f"it is not finite at level {lv.low + n}")
        return values

    degree = _tail_degree(out.expr, condition, lv, 1, phases)
    start = 1 if degree is not None else levels + 1
    if degree is None:
        degree = _tail_degree(out.expr, condition, lv, start, phases)
    value = float(sol.pi0 @ at(0, phases0))
    v = sol.pi1.copy()
    for n in range(1, start):
        value += float(v @ at(n, phases))
        v = v @ sol.R
    if degree is not None:
        samples = np.array([at(start + i, phases) for i in range(degree + 1)])
        value += polynomial_tail(v, sol.R, samples, inverse=sol._inverse)
        return (min(max(value, 0.0), 1.0) if condition else value), 0.0, start > 1
    if condition:
        return min(max(value, 0.0), 1.0), tail_mass, True
    raise InvalidParameter(
        f"outputs.{name}", out.text, f"a reward that is a polynomial in {lv.name} (degree <= "
        f"{MAX_DEGREE}) beyond some level",
        f"it is summed up to {lv.name} = {lv.low + levels} (P({lv.name} > "
        f"{lv.low + levels}) = {tail_mass:.3g}) but is still not a polynomial there, and "
        "nothing bounds the part left out: write it as a polynomial in the level or as a "
        "condition")


def check_level_chain(chain: Any, eps: Any) -> None:
    """The checks every solver of a chain with an unbounded level makes first: a
    :class:`MarkovChain` with one unbounded variable, and ``eps`` in (0, 1)."""
    if not isinstance(chain, MarkovChain):
        raise InvalidParameter("chain", chain, "a MarkovChain")
    if not any(v.high is None for v in chain.variables):
        raise InvalidParameter("chain", chain, "a chain with one unbounded variable (high=None, "
                               "the level)", "a finite chain is solved by "
                               "symq.markov.stationary")
    if isinstance(eps, bool) or not (isinstance(eps, (int, float)) and 0 < eps < 1):
        raise InvalidParameter("eps", eps, "a tail mass in (0, 1)")


def qbd_stationary(chain: MarkovChain, params: Mapping[str, Any] | None = None, *,
                   eps: float = 1e-12) -> QBDStationaryLaw:
    """The stationary law of a chain with one unbounded level and its declared outputs.

    Parameters
    ----------
    chain : MarkovChain
        A declaration with exactly one variable of ``high=None`` (the level).  A chain whose
        moves depend on the level is solved by
        :func:`~symq.markov.level_dependent.level_dependent_stationary` (with this ``eps``).
    params : mapping
        A value for every declared parameter.
    eps : float
        Tail mass below which the summation of outputs not in closed form stops
        (``P(level > L) < eps``).

    Returns
    -------
    QBDStationaryLaw

    Raises
    ------
    InvalidParameter
        No unbounded variable; a jump moving the level by more than one (named); a rate or
        update out of its domain; a reward not a polynomial in the level
        beyond any level; too many phases.
    StabilityError
        The drift is not negative (the chain is not positive recurrent).
    NotConverged, ReducibleChain
        From :func:`~symq.markov.qbd.solve_qbd`.
    """
    started = time.perf_counter()
    check_level_chain(chain, eps)
    lv = _Levels(chain, parameter_values(chain, params))
    phases0, phases = _phases(lv)
    try:
        _check_level_independent(lv, phases)
        blocks, rates0, rates1, rates2 = _blocks(lv, phases0, phases)
    except _LevelDependent:
        from .level_dependent import level_dependent_stationary  # it imports this module
        return level_dependent_stationary(chain, params, eps=eps)
    sol = solve_qbd(*blocks)
    mass1 = sol.pi1 @ sol._inverse
    ones = sol._inverse.sum(axis=1)
    levels, v = 1, sol.pi1 @ sol.R          # pi_(L+1) for L = levels
    tail_mass = float(v @ ones)
    while tail_mass >= eps and levels < MAX_LEVELS:
        levels += 1
        v = v @ sol.R
        tail_mass = float(v @ ones)
    values: dict[str, float] = {}
    bounds: dict[str, float] = {}
    summed = False
    for name, out in chain.outputs.items():
        if out.kind == "throughput":
            chosen = [j for j, jump in enumerate(chain.jumps) if jump.label == out.label]
            mass2 = mass1 - sol.pi1                  # sum over the levels >= 2
            values[name] = float(sum(sol.pi0 @ rates0[j] + sol.pi1 @ rates1[j]
                                     + mass2 @ rates2[j] for j in chosen))
            bounds[name] = 0.0
        else:
            values[name], bounds[name], used = _output(name, out, lv, sol, phases0, phases,
                                                       levels, tail_mass)
            summed |= used
    return QBDStationaryLaw(
        values=values, bounds=bounds, truncation_bound=max(bounds.values(), default=0.0),
        level=lv.name, phase_variables=tuple(chain.variables[i].name for i in lv.bounded),
        phases0=phases0, phases=phases, eta=sol.eta, drift=sol.drift,
        mean_level=lv.low + sol.mean_level, levels_summed=levels if summed else 0,
        residual=sol.residual, solution=sol, seconds=time.perf_counter() - started)
