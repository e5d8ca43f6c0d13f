"""The reachable states of a finite chain with exact (rational or symbolic) rates.

One breadth-first search shared by the exact rational solve (:mod:`symq.markov.exact`) and the
symbolic one (:mod:`symq.markov.symbolic`): each jump's guard, rate and update are evaluated
exactly at each reachable state (sympy ``xreplace`` of the state, and of the parameter values
where they are given), the guard must be decided, the update must land within the bounds
(never clamped), and the rate is checked by the caller's rule.  The float search of
:mod:`symq.markov.statespace` is the fast one; this one serves chains of at most a few hundred
states.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import sympy as sp

from symq.core.errors import InvalidParameter, SymqError

from .chain import MarkovChain

__all__ = ["reachable_exact", "ExactMoves"]

#: ``(states, rates, fired)``: the states in lexicographic order, the off-diagonal rates
#: ``(i, j) -> q_ij`` (summed over jumps) and every move as ``(jump, state, rate)``.
ExactMoves = tuple[list[tuple[int, ...]], dict[tuple[int, int], Any], list[tuple[int, int, Any]]]


def reachable_exact(chain: MarkovChain, values: Mapping[sp.Symbol, Any], *, max_states: int,
                    too_many: Callable[[], SymqError],
                    check_rate: Callable[[str, Any, str], Any]) -> ExactMoves:
    """The states reachable from ``chain.initial`` and the exact rates between them.

    Parameters
    ----------
    chain : MarkovChain
        A chain with bounded variables.
    values : mapping
        Parameter symbol -> exact value (empty: the rates stay symbolic in the parameters).
    max_states : int
        Most states; reaching one more raises ``too_many()``.
    too_many : callable
        Builds the error raised past ``max_states``.
    check_rate : callable
        ``check_rate(where, rate, state)`` returns the rate accepted (or raises), ``where``
        naming the jump's rate as the user wrote it and ``state`` the state as ``n=3, m=0``.

    Returns
    -------
    tuple
        :data:`ExactMoves`.
    """
    symbols = chain.variable_symbols
    index: dict[tuple[int, ...], int] = {chain.initial: 0}
    order = [chain.initial]
    queue = deque([chain.initial])
    moves: list[tuple[int, int, tuple[int, ...], Any]] = []
    while queue:
        state = queue.popleft()
        table = {**values, **{s: sp.Integer(x) for s, x in zip(symbols, state, strict=True)}}
        shown = chain.describe(state)
        for j, jump in enumerate(chain.jumps):
            guard = jump.guard.xreplace(table) if isinstance(jump.guard, sp.Basic) \
                else jump.guard
            if guard not in (True, False, sp.true, sp.false):
                raise InvalidParameter(f"{jump.where}.guard", str(guard), "true or false at "
                                       "every reachable state", f"undecided at the state {shown}")
            if not bool(guard):
                continue
            rate = check_rate(f"{jump.where}.rate", jump.rate.xreplace(table), shown)
            target = []
            for var, new in zip(chain.variables, jump.update, strict=True):
                x = new.xreplace(table) if isinstance(new, sp.Basic) else sp.Integer(new)
                if not (x.is_Integer and var.low <= x <= var.high):
                    raise InvalidParameter(f"{jump.where}.update.{var.name}", x,
                                           f"an integer within [{var.low}, {var.high}], the "
                                           f"bounds of {var.name}",
                                           f"at the reachable state {shown}")
                target.append(int(x))
            moved = tuple(target)
            if rate == 0 or moved == state:
                continue
            if moved not in index:
                if len(order) >= max_states:
                    raise too_many()
                index[moved] = len(order)
                order.append(moved)
                queue.append(moved)
            moves.append((j, index[state], moved, rate))
    ranked = sorted(order)  # lexicographic, as the float solver orders them
    rank = {s: k for k, s in enumerate(ranked)}
    remap = [rank[s] for s in order]
    rates: dict[tuple[int, int], Any] = {}
    fired: list[tuple[int, int, Any]] = []
    for j, i, moved, rate in moves:
        key = (remap[i], rank[moved])
        rates[key] = rates.get(key, sp.Integer(0)) + rate
        fired.append((j, remap[i], rate))
    return ranked, rates, fired
