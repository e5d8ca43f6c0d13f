"""The reachable state space of a :class:`~symq.markov.chain.MarkovChain` and its generator.

Breadth-first search from the initial state, one frontier at a time: the guards, rates and
updates of every jump are evaluated on the whole frontier at once by their compiled forms
(:func:`symq.core.compiler.compile` of the parsed expressions), the targets are packed as
mixed-radix integers from the declared bounds and looked up in a dense index, and the
transitions are collected as triples ``(i, j, rate)``.  The generator is the CSR matrix of these
triples with duplicates summed (several jumps into one state add their rates), self-loops left
out, and the diagonal set to minus the row sums (Stewart 1994, *Introduction to the Numerical
Solution of Markov Chains*, ch. 1).

The memory needed is bounded *before* building from the product of the variables' ranges (the
dense index and the worst-case number of states and transitions); what does not fit the budget of
:func:`symq.core.resources.require_memory` is refused with the largest bound that would.

Checks at every reachable state where a jump is enabled: its rate is finite and ``>= 0``; each
updated value is an integer within its variable's bounds (never clamped).  A state where no jump
moves the chain is absorbing: allowed, and listed in :attr:`StateSpace.absorbing`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sps

from symq.core.compiler import compile as compile_expr
from symq.core.errors import InvalidParameter
from symq.core.parameters import real_value
from symq.core.resources import largest_fitting, require_memory

from .chain import MarkovChain

__all__ = ["StateSpace", "build_state_space", "evaluate", "parameter_values",
           "bytes_per_state"]


@dataclass(frozen=True, repr=False)
class StateSpace:
    """The reachable states of a chain and its generator, for given parameter values.

    Attributes
    ----------
    chain : MarkovChain
        The declaration.
    params : dict
        The parameter values (floats).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers, in lexicographic order of the variables.
    generator : scipy.sparse.csr_matrix
        ``Q``: off-diagonal rates (duplicates summed, self-loops dropped), diagonal minus the row
        sums.
    jump_rates : tuple of numpy.ndarray
        Per jump, its rate at each state where it is enabled and moves the chain (0 elsewhere):
        the flows behind ``throughput:LABEL`` outputs.
    initial : int
        Index of the initial state.
    absorbing : numpy.ndarray
        Indices of the states that no jump leaves.
    """

    chain: MarkovChain
    params: dict[str, float]
    states: np.ndarray
    generator: sps.csr_matrix
    jump_rates: tuple[np.ndarray, ...]
    initial: int
    absorbing: np.ndarray

    @property
    def n_states(self) -> int:
        """Number of reachable states."""
        return int(self.states.shape[0])

    def describe(self, index: int) -> str:
        """State ``index`` as ``n=3, m=0``."""
        return self.chain.describe(self.states[index])

    def __repr__(self) -> str:
        return (f"StateSpace(n_states={self.n_states}, transitions={self.generator.nnz}, "
                f"absorbing={len(self.absorbing)})")


def parameter_values(chain: MarkovChain, params: Mapping[str, Any] | None) -> dict[str, float]:
    """The chain's parameter values as floats: every declared parameter, finite, no other name.

    Raises
    ------
    InvalidParameter
        A parameter missing, unknown or not a finite real number.
    """
    params = dict(params or {})
    extra = sorted(set(params) - set(chain.parameters))
    if extra:
        raise InvalidParameter(extra[0], params[extra[0]], "a declared parameter: one of "
                               + (", ".join(chain.parameters) or "(none declared)"))
    missing = [p for p in chain.parameters if p not in params]
    if missing:
        from symq.core.errors import MISSING

        raise InvalidParameter(missing[0], MISSING, "a finite real number")
    return {p: real_value(p, params[p], "a finite real number") for p in chain.parameters}


def bytes_per_state(chain: MarkovChain) -> float:
    """Bytes one possible state may need while building and solving: its row of ``states``, its
    slot of the dense index, its transitions (COO triples, CSR, sparse LU fill) and per-jump
    flows."""
    n_jumps = max(len(chain.jumps), 1)
    return 8.0 * (len(chain.variables) + 2) + n_jumps * (3 * 8 + 16 + 8 + 48)


def _check_size(chain: MarkovChain) -> int:
    """Refuse (before building) a product of ranges that would not fit the memory budget."""
    sizes = [v.size for v in chain.variables]
    total = math.prod(sizes)
    per_state = bytes_per_state(chain)
    widest = max(range(len(sizes)), key=lambda k: sizes[k])
    var = chain.variables[widest]
    rest = total // sizes[widest]

    def limit(budget: int) -> str:
        best = largest_fitting(lambda h: (h - var.low + 1) * rest * per_state, var.low,
                               var.high, budget, integer=True)
        return (f"at most {int(best)} (the bound that fits, with the other variables' ranges "
                f"as declared: {total:.3g} possible states need more than the memory budget)")

    require_memory(f"{var.name}.high", var.high, total * per_state,
                   what=f"{total:.3g} possible states (the product of the variables' ranges)",
                   limit=limit)
    return total


def evaluate(expr: Any, chain: MarkovChain, states: np.ndarray, params: Mapping[str, float]
             ) -> np.ndarray:
    """Evaluate a parsed expression (or condition, as 0/1) of ``chain`` at each row of
    ``states``, as a float vector (by its compiled form)."""
    function = compile_expr(expr, chain.variable_symbols + chain.parameter_symbols)
    columns = [states[:, k].astype(float) for k in range(states.shape[1])]
    # parameters as full columns too: numpy's logical_or.reduce((scalar, array)) of a guard
    # mixing a parameter-only clause with a state clause cannot broadcast
    n = states.shape[0]
    values = _real(function(*columns, *(np.full(n, params[p]) for p in chain.parameters)))
    return np.broadcast_to(values, (states.shape[0],)).copy()


def build_state_space(chain: MarkovChain, params: Mapping[str, Any] | None = None
                      ) -> StateSpace:
    """The states reachable from ``chain.initial`` and the generator, at ``params``.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.

    Returns
    -------
    StateSpace

    Raises
    ------
    ResourceLimit
        The product of the variables' ranges needs more memory than the budget (refused before
        building, with the largest bound of the widest variable that fits).
    InvalidParameter
        A variable without a bound (a level: :func:`symq.markov.levels.qbd_stationary` solves
        such a chain); a rate negative or not finite at a reachable state where its jump is
        enabled, or an update leaving its variable's bounds (or not an integer): the message
        names the jump (``jumps[2].rate``, or by its label), the state and the bound.

    Examples
    --------
    >>> from symq.markov.chain import Jump, MarkovChain, StateVariable
    >>> chain = MarkovChain([StateVariable("n", 0, 2)],
    ...                     [Jump("lam", {"n": "n + 1"}, "n < 2"),
    ...                      Jump("mu", {"n": "n - 1"}, "n > 0")], parameters=("lam", "mu"))
    >>> space = build_state_space(chain, {"lam": 1.0, "mu": 2.0})
    >>> space.generator.toarray()
    array([[-1.,  1.,  0.],
           [ 2., -3.,  1.],
           [ 0.,  2., -2.]])
    """
    chain.require_finite("build_state_space")
    values = parameter_values(chain, params)
    total = _check_size(chain)
    lows = np.array([v.low for v in chain.variables], dtype=np.int64)
    highs = np.array([v.high for v in chain.variables], dtype=np.int64)
    sizes = highs - lows + 1
    strides = np.ones(len(sizes), dtype=np.int64)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    args = chain.variable_symbols + chain.parameter_symbols
    pvals = [values[p] for p in chain.parameters]
    compiled = [(compile_expr(j.guard, args), compile_expr(j.rate, args),
                 compile_expr(list(j.update), args)) for j in chain.jumps]

    index = np.full(total, -1, dtype=np.int64)
    start = np.array(chain.initial, dtype=np.int64)
    index[int((start - lows) @ strides)] = 0
    found = [start[None, :]]
    frontier = start[None, :]
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    rates: list[np.ndarray] = []
    jumps_of: list[np.ndarray] = []
    n_found = 1
    with np.errstate(all="ignore"):  # rates and updates are checked for finiteness
        while frontier.shape[0]:
            m = frontier.shape[0]
            first = n_found - m
            columns = [frontier[:, k].astype(float) for k in range(frontier.shape[1])]
            new_codes: list[np.ndarray] = []
            new_states: list[np.ndarray] = []
            for j, (jump, (guard_f, rate_f, update_f)) in enumerate(zip(chain.jumps, compiled,
                                                                         strict=True)):
                full = [np.full(m, v) for v in pvals]  # see evaluate: or/and of mixed clauses
                enabled = np.broadcast_to(np.asarray(guard_f(*columns, *full), dtype=float),
                                          (m,)) != 0
                if not enabled.any():
                    continue
                where = np.flatnonzero(enabled)
                sub = [c[where] for c in columns]
                rate = np.broadcast_to(_real(rate_f(*sub, *pvals)),
                                       (where.size,))
                bad = ~np.isfinite(rate) | (rate < 0)
                if bad.any():
                    k = int(np.flatnonzero(bad)[0])
                    raise InvalidParameter(
                        f"{jump.where}.rate", float(rate[k]), "a finite rate >= 0",
                        f"at the reachable state {chain.describe(frontier[where[k]])} where "
                        f"{jump.where} is enabled" + _with(values))
                target = _targets(chain, jump, update_f(*sub, *pvals), frontier[where], lows,
                                  highs, values)
                moving = (rate > 0) & np.any(target != frontier[where], axis=1)
                if not moving.any():
                    continue
                source, target, rate = where[moving], target[moving], rate[moving]
                codes = (target - lows) @ strides
                unseen = index[codes] < 0
                if unseen.any():
                    fresh, first_at = np.unique(codes[unseen], return_index=True)
                    index[fresh] = np.arange(n_found, n_found + fresh.size)
                    n_found += fresh.size
                    new_codes.append(fresh)
                    new_states.append(target[unseen][first_at])
                rows.append(source + first)
                cols.append(index[codes])
                rates.append(rate)
                jumps_of.append(np.full(source.size, j, dtype=np.int64))
            frontier = np.concatenate(new_states) if new_states else np.empty((0, len(lows)),
                                                                              dtype=np.int64)
            if frontier.shape[0]:
                found.append(frontier)
    states = np.concatenate(found)
    n = states.shape[0]
    # lexicographic order of the variables = order of the mixed-radix codes
    order = np.argsort((states - lows) @ strides, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    states = states[order]
    row = rank[np.concatenate(rows)] if rows else np.empty(0, dtype=np.int64)
    col = rank[np.concatenate(cols)] if cols else np.empty(0, dtype=np.int64)
    val = np.concatenate(rates) if rates else np.empty(0)
    which = np.concatenate(jumps_of) if jumps_of else np.empty(0, dtype=np.int64)
    off = sps.coo_matrix((val, (row, col)), shape=(n, n)).tocsr()
    off.sum_duplicates()
    off.eliminate_zeros()
    exits = np.asarray(off.sum(axis=1)).ravel()
    generator = (off - sps.diags(exits)).tocsr()
    generator.sort_indices()
    jump_rates = tuple(np.bincount(row[which == j], weights=val[which == j], minlength=n)
                       for j in range(len(chain.jumps)))
    return StateSpace(chain, values, states, generator, jump_rates, int(rank[0]),
                      np.flatnonzero(exits == 0))


def output_rewards(space: StateSpace, name: str) -> np.ndarray:
    """The per-state vector of the declared output ``name`` on ``space``: the labelled jumps'
    total rate for ``throughput:LABEL``, the 0/1 indicator for an event, the formula's value for
    a reward (not checked: a non-finite value is the caller's to refuse, where it matters)."""
    chain = space.chain
    out = chain.outputs[name]
    if out.kind == "throughput":
        return sum((space.jump_rates[j] for j, jump in enumerate(chain.jumps)
                    if jump.label == out.label), np.zeros(space.n_states))
    with np.errstate(all="ignore"):
        values = evaluate(out.expr, chain, space.states, space.params)
    return (values != 0).astype(float) if out.kind == "probability" else values


def _real(values: Any) -> np.ndarray:
    """``values`` as floats; a complex value (scipy's special functions return complex
    dtypes) is kept where its imaginary part is 0 and made NaN elsewhere, so that the checks
    refuse it instead of dropping the imaginary part."""
    array = np.asarray(values)
    if np.iscomplexobj(array):
        return np.where(array.imag == 0, array.real, np.nan)
    return array.astype(float, copy=False)


def _with(values: Mapping[str, float]) -> str:
    return ("; with " + ", ".join(f"{k}={v:g}" for k, v in values.items())) if values else ""


def _targets(chain: MarkovChain, jump: Any, updated: Any, sources: np.ndarray,
             lows: np.ndarray, highs: np.ndarray, values: Mapping[str, float]) -> np.ndarray:
    """The new states of ``jump`` from ``sources``: integers within bounds, else an error."""
    m = sources.shape[0]
    new = np.column_stack([np.broadcast_to(np.asarray(u, dtype=float), (m,))
                           for u in updated])
    rounded = np.rint(new)
    for k, var in enumerate(chain.variables):
        if var.name not in jump.changed:
            continue
        column = new[:, k]
        bad = ~np.isfinite(column) | (np.abs(column - rounded[:, k]) > 1e-9)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameter(
                f"{jump.where}.update.{var.name}", float(column[i]), "an integer",
                f"at the reachable state {chain.describe(sources[i])}" + _with(values))
        outside = (rounded[:, k] < lows[k]) | (rounded[:, k] > highs[k])
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            bound = (f"{var.name}.low = {var.low}" if rounded[i, k] < lows[k]
                     else f"{var.name}.high = {var.high}")
            raise InvalidParameter(
                f"{jump.where}.update.{var.name}", int(rounded[i, k]),
                f"within [{var.low}, {var.high}], the bounds of {var.name}",
                f"at the reachable state {chain.describe(sources[i])} the update leaves the "
                f"bound {bound}; updates are never clamped: guard the jump or write "
                f"min(...)/max(...) in the update" + _with(values))
    return rounded.astype(np.int64)

