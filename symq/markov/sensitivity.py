"""Derivatives of a CTMC's stationary outputs with respect to one parameter.

Differentiating ``pi Q = 0``, ``pi 1 = 1`` gives ``pi' Q = -pi Q'`` and ``pi' 1 = 0``
(Schweitzer 1968, "Perturbation theory and finite Markov chains", J. Appl. Prob. 5:401-413:
equivalently ``pi' = pi Q' D`` with ``D`` the deviation matrix).  ``Q'`` comes from the symbolic
derivative of each jump's rate (:func:`sympy.diff`), evaluated at every state where the jump
moves the chain; the system is solved on the closed class by sparse LU on the transposed
generator with one equation replaced by the normalisation (here ``sum pi' = 0``), the system of
:mod:`symq.markov.stationary`.  An output's derivative is then ``g' = pi' r + pi r'``, with
``r'`` the derivative of its reward (or of the throughput's rates); an event's probability has
``r' = 0``.  The residual ``||pi' Q + pi Q'||_1 / max_i q_i`` is checked.

Guards and updates shape the state space: a parameter that appears in one is refused (its
derivative is not defined by the rates).

Examples
--------
>>> from symq.markov.library import mm1k
>>> s = sensitivity(mm1k(1), {"lam": 1.0, "mu": 2.0}, "lam")
>>> round(s["P_block"], 12)  # P_block = lam/(lam + mu), derivative mu/(lam + mu)**2
0.222222222222
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sps
import sympy as sp
from scipy.sparse.linalg import splu

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.result import Exactness, ResultBase

from .chain import MarkovChain
from .results import OutputsByName
from .statespace import StateSpace, build_state_space, evaluate
from .stationary import one_closed_class, stationary

__all__ = ["StationarySensitivity", "sensitivity", "SENSITIVITY_METHOD"]

#: The method, as the result names it.
SENSITIVITY_METHOD = ("derivative of pi Q = 0: pi' Q = -pi Q', sum pi' = 0, by sparse LU on "
                      "the replaced-row system")


@dataclass(frozen=True)
class StationarySensitivity(OutputsByName, ResultBase):
    """Derivatives of the stationary outputs of a finite CTMC with respect to one parameter.

    Attributes
    ----------
    parameter : str
        The parameter the derivatives are taken in.
    values : dict
        Each declared output by name: the derivative of its stationary value.
    dpi : numpy.ndarray
        The derivative of the stationary probability of each state (summing to 0).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers: the state of each entry of ``dpi``.
    variables : tuple of str
        The names of the columns of ``states``.
    n_states : int
        Number of reachable states.
    residual : float
        ``||pi' Q + pi Q'||_1 / max_i q_i`` of the returned derivative.
    method, exactness, seconds
        How the derivatives were obtained and their wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("parameter", "n_states", "residual")
    reported: ClassVar[tuple[str, ...]] = ("residual",)

    parameter: str
    values: dict[str, float]
    dpi: np.ndarray = field(repr=True)
    states: np.ndarray
    variables: tuple[str, ...]
    n_states: int
    residual: float
    method: str = SENSITIVITY_METHOD
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


def _check_parameter(chain: MarkovChain, parameter: Any) -> sp.Symbol:
    if not isinstance(parameter, str) or parameter not in chain.parameters:
        raise InvalidParameter("parameter", parameter, "one of the declared parameters: "
                               + (", ".join(chain.parameters) or "(none declared)"))
    symbol = chain.parameter_symbols[chain.parameters.index(parameter)]
    for jump in chain.jumps:
        shaping = [jump.guard] + list(jump.update)
        if any(symbol in getattr(e, "free_symbols", set()) for e in shaping):
            raise InvalidParameter("parameter", parameter, "a parameter of the rates and "
                                   "rewards only", f"{jump.where} uses it in its guard or "
                                   "update, which shape the state space: no derivative")
    return symbol


def _flows(space: StateSpace, symbol: sp.Symbol) -> tuple[sps.csr_matrix, list[np.ndarray]]:
    """``Q'`` (derivative of the generator) and, per jump, its rate's derivative at each state
    where it moves the chain (0 elsewhere)."""
    chain = space.chain
    n = space.n_states
    lows = np.array([v.low for v in chain.variables], dtype=np.int64)
    sizes = np.array([v.size for v in chain.variables], dtype=np.int64)
    strides = np.ones(len(sizes), dtype=np.int64)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    codes = (space.states - lows) @ strides  # increasing: lexicographic order
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    data: list[np.ndarray] = []
    per_jump: list[np.ndarray] = []
    for j, jump in enumerate(chain.jumps):
        moving = np.flatnonzero(space.jump_rates[j] > 0)
        derivative = np.zeros(n)
        slope = sp.diff(jump.rate, symbol)
        if moving.size and slope != 0:
            sources = space.states[moving]
            derivative[moving] = evaluate(slope, chain, sources, space.params)
            target = np.column_stack([np.rint(evaluate(u, chain, sources, space.params))
                                      for u in jump.update]).astype(np.int64)
            rows.append(moving)
            cols.append(np.searchsorted(codes, (target - lows) @ strides))
            data.append(derivative[moving])
        per_jump.append(derivative)
    row = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    col = np.concatenate(cols) if cols else np.empty(0, dtype=np.int64)
    val = np.concatenate(data) if data else np.empty(0)
    off = sps.coo_matrix((val, (row, col)), shape=(n, n)).tocsr()
    off.sum_duplicates()
    exits = np.asarray(off.sum(axis=1)).ravel()
    return (off - sps.diags(exits)).tocsr(), per_jump


def sensitivity(chain: MarkovChain, params: Mapping[str, Any] | None, parameter: str, *,
                tol: float = 1e-10) -> StationarySensitivity:
    """The derivative of every declared output's stationary value in ``parameter`` at
    ``params``.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.
    parameter : str
        The parameter to differentiate in: it may appear in rates and rewards, not in guards or
        updates.
    tol : float
        Largest residual accepted (of the law, and of ``||pi' Q + pi Q'||_1 / max_i q_i``).

    Returns
    -------
    StationarySensitivity

    Raises
    ------
    InvalidParameter
        ``parameter`` not declared, or used in a guard or an update; and as
        :func:`~symq.markov.stationary`.
    NotConverged
        The derivative's residual exceeds ``tol``.
    ReducibleChain
        More than one closed class.
    """
    started = time.perf_counter()
    symbol = _check_parameter(chain, parameter)
    law = stationary(chain, params, tol=tol)
    space = build_state_space(chain, params)
    pi = law.pi
    n = space.n_states
    closed = one_closed_class(space.generator, space.describe, chain.name)
    dQ, per_jump = _flows(space, symbol)
    Q = space.generator
    sub = Q[closed][:, closed].tocsr()
    dsub = dQ[closed][:, closed].tocsr()
    m = closed.size
    dpi = np.zeros(n)
    if m > 1:
        rhs = -(dsub.T @ pi[closed])
        rhs[-1] = 0.0
        system = sps.vstack([sub.T.tocsr()[:-1], sps.csr_matrix(np.ones((1, m)))]).tocsc()
        dpi[closed] = splu(system).solve(rhs)
    scale = float(np.max(-Q.diagonal())) if n else 0.0
    gap = float(np.abs(Q.T @ dpi + dQ.T @ pi).sum())
    residual = gap / scale if scale > 0 else gap
    if not np.all(np.isfinite(dpi)) or residual > tol:
        raise NotConverged("stationary sensitivity (sparse LU)", residual, tol, 1,
                           "the chain is too stiff for one LU solve at this tolerance")
    values = _derivatives(space, pi, dpi, symbol, per_jump)
    return StationarySensitivity(
        parameter=parameter, values=values, dpi=dpi, states=space.states,
        variables=tuple(v.name for v in chain.variables), n_states=n, residual=residual,
        seconds=time.perf_counter() - started)


def _derivatives(space: StateSpace, pi: np.ndarray, dpi: np.ndarray, symbol: sp.Symbol,
                 per_jump: list[np.ndarray]) -> dict[str, float]:
    """``g' = pi' r + pi r'`` for each declared output."""
    chain = space.chain
    values: dict[str, float] = {}
    live = pi > 0
    for name, out in chain.outputs.items():
        if out.kind == "throughput":
            chosen = [j for j, jump in enumerate(chain.jumps) if jump.label == out.label]
            rate = sum((space.jump_rates[j] for j in chosen), np.zeros(space.n_states))
            slope = sum((per_jump[j] for j in chosen), np.zeros(space.n_states))
            values[name] = float(dpi @ rate + pi @ slope)
        elif out.kind == "probability":
            mask = evaluate(out.expr, chain, space.states, space.params) != 0
            values[name] = float(dpi[mask].sum())
        else:
            with np.errstate(all="ignore"):  # checked just below
                reward = evaluate(out.expr, chain, space.states, space.params)
                slope = evaluate(sp.diff(out.expr, symbol), chain, space.states,
                                 space.params)
            bad = live & ~(np.isfinite(reward) & np.isfinite(slope))
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise InvalidParameter(f"outputs.{name}", float(reward[k]), "a finite, "
                                       "differentiable reward at every state of positive "
                                       "probability", f"at the state {space.describe(k)}")
            values[name] = float(dpi[live] @ reward[live] + pi[live] @ slope[live])
    return values
