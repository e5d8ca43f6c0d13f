"""The stationary law of a finite CTMC declared by guarded jumps: GTH, sparse LU or GMRES.

Solve ``pi Q = 0``, ``pi 1 = 1`` on the reachable states.  Up to
:data:`~symq.markov.gth.GTH_MAX_STATES` states by the elimination of Grassmann, Taksar & Heyman
(1985; :mod:`symq.markov.gth`), which gives every entry to relative accuracy, also a probability
of 1e-20 beside ones of order 1.  Above, with one probability pinned to 1 (its equation and
unknown removed, the law normalised after; Stewart 1994, *Introduction to the Numerical Solution
of Markov Chains*, Princeton, ch. 2): by sparse LU (:func:`scipy.sparse.linalg.splu`, minimum
degree order on ``A^T + A``) up to :data:`LU_MAX_STATES` states, by GMRES with an incomplete-LU
preconditioner beyond.  Their entries are accurate to the residual only in absolute terms (the
result's ``method`` says which solver ran).  Every answer is accepted only when its residual
``||pi Q||_1 / max_i q_i`` (``q_i`` the exit rates) is at most ``tol`` and
``min(pi) >= -tol``; otherwise :class:`~symq.core.errors.NotConverged` is raised with the
residual.  Round-off negatives (``>= -tol``) are set to 0 and the law renormalised, so every
probability returned lies in [0, 1].

Reducibility: the strongly connected components (Tarjan 1972, SIAM J. Comput. 1:146-160, by
:func:`scipy.sparse.csgraph.connected_components`) and their condensation give the closed
classes.  More than one closed class: no unique stationary law, and
:class:`~symq.markov.errors.ReducibleChain` lists them.  One closed class with transient states:
the law is solved on the class and is zero elsewhere (the result says how many states are
transient).

Examples
--------
>>> from symq.markov.library import mm1k
>>> law = stationary(mm1k(3), {"lam": 1.0, "mu": 2.0})
>>> law.pi.round(6)
array([0.533333, 0.266667, 0.133333, 0.066667])
>>> round(law["P_block"], 6)
0.066667
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sps
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.result import Exactness, ResultBase

from .chain import MarkovChain
from .errors import ReducibleChain
from .gth import GTH_MAX_STATES, gth_stationary
from .results import OutputsByName
from .statespace import StateSpace, build_state_space, output_rewards

__all__ = ["StationaryLaw", "stationary", "closed_classes", "one_closed_class",
           "output_values", "residual_of"]

#: The two solvers, as a result names them.
GTH_METHOD = "GTH elimination (every entry to relative accuracy)"
LU_METHOD = ("sparse LU (one probability pinned, then normalised; entries accurate to the "
             "residual, absolutely)")
GMRES_METHOD = ("ILU-preconditioned GMRES (one probability pinned, then normalised; entries "
                "accurate to the residual, absolutely)")
#: Largest chain solved by sparse LU (fill-in grows fast on 2-D and 3-D grids); GMRES beyond.
LU_MAX_STATES = 200_000

#: States of each closed class listed by :class:`ReducibleChain`.
_LISTED = 3


@dataclass(frozen=True)
class StationaryLaw(OutputsByName, ResultBase):
    """The stationary law of a finite CTMC and the stationary values of its outputs.

    Attributes
    ----------
    pi : numpy.ndarray
        Stationary probability of each state (in [0, 1], summing to 1; zero on transient
        states).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers: the state of each entry of ``pi``.
    variables : tuple of str
        The names of the columns of ``states``.
    n_states : int
        Number of reachable states.
    values : dict
        Each declared output by name: a reward's stationary mean, an event's stationary
        probability, a label's throughput.
    residual : float
        ``||pi Q||_1 / max_i q_i`` of the returned law.
    n_transient : int
        Number of transient states (mass 0), outside the one closed class.
    absorbing : tuple of str
        The absorbing states (no jump leaves them), as ``n=3, m=0``.
    method, exactness, seconds
        How the law was obtained and its wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("n_states", "residual")
    reported: ClassVar[tuple[str, ...]] = ("n_states", "residual")

    pi: np.ndarray = field(repr=True)
    states: np.ndarray
    variables: tuple[str, ...]
    n_states: int
    values: dict[str, float]
    residual: float
    n_transient: int = 0
    absorbing: tuple[str, ...] = ()
    method: str = "GTH elimination (every entry to relative accuracy)"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={v:.6g}" for k, v in list(self.values.items())[:6])
        more = ", ..." if len(self.values) > 6 else ""
        return (f"StationaryLaw(n_states={self.n_states}, {shown}{more}, "
                f"residual={self.residual:.2g})")


def closed_classes(generator: sps.spmatrix) -> tuple[np.ndarray, list[int]]:
    """The strongly connected components of a generator's transition graph and the closed ones.

    Returns
    -------
    labels : numpy.ndarray
        The component of each state.
    closed : list of int
        The components that no transition leaves (the bottom of the condensation).
    """
    off = sps.coo_matrix(generator)
    edges = (off.row != off.col) & (off.data != 0)
    rows, cols = off.row[edges], off.col[edges]
    graph = sps.csr_matrix((np.ones(rows.size), (rows, cols)), shape=generator.shape)
    count, labels = connected_components(graph, directed=True, connection="strong")
    leaving = np.zeros(count, dtype=bool)
    crossing = labels[rows] != labels[cols]
    leaving[labels[rows][crossing]] = True
    return labels, [int(c) for c in np.flatnonzero(~leaving)]


def one_closed_class(generator: sps.spmatrix, describe: Callable[[int], str],
                     name: str | None = None) -> np.ndarray:
    """The indices of the one closed class of ``generator``, or :class:`ReducibleChain`
    listing the closed classes (a few states of each, by ``describe``)."""
    labels, closed = closed_classes(generator)
    if len(closed) > 1:
        members = [np.flatnonzero(labels == c) for c in closed]
        members.sort(key=lambda m: int(m[0]))
        raise ReducibleChain([[describe(int(i)) for i in m[:_LISTED]] for m in members],
                             [m.size for m in members], name or "the chain")
    return np.flatnonzero(labels == closed[0])


def residual_of(generator: sps.csr_matrix, pi: np.ndarray) -> float:
    """``||pi Q||_1 / max_i q_i`` (0 for a chain without transitions)."""
    scale = float(np.max(-generator.diagonal())) if generator.shape[0] else 0.0
    flow = float(np.abs(generator.T @ pi).sum())
    return flow / scale if scale > 0 else flow


def stationary_value(name: str, kind: str, reward: np.ndarray, pi: np.ndarray,
                     describe: Callable[[int], str]) -> float:
    """The stationary value of the output ``name`` of ``kind`` under the law ``pi``: the
    probability of an event (``reward != 0``; in [0, 1]), the rate of a throughput, the mean
    of a reward (finite at every state of positive probability, else an error naming it)."""
    if kind == "throughput":
        return float(pi @ reward)
    if kind == "probability":
        return float(min(max(pi[reward != 0].sum(), 0.0), 1.0))
    bad = (pi > 0) & ~np.isfinite(reward)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InvalidParameter(f"outputs.{name}", float(reward[k]), "a finite reward "
                               "at every state of positive probability",
                               f"at the state {describe(k)}")
    return float(pi[pi > 0] @ reward[pi > 0])


def output_values(space: StateSpace, pi: np.ndarray) -> dict[str, float]:
    """The stationary value of each declared output under the law ``pi`` on ``space``."""
    chain: MarkovChain = space.chain
    return {name: stationary_value(name, out.kind, output_rewards(space, name), pi,
                                   space.describe)
            for name, out in chain.outputs.items()}


def stationary(chain: MarkovChain, params: Mapping[str, Any] | None = None, *,
               tol: float = 1e-10) -> StationaryLaw:
    """The stationary law of ``chain`` at ``params`` by sparse LU, with its residual checked.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.
    tol : float
        Largest residual ``||pi Q||_1 / max_i q_i`` accepted, and the largest negative entry
        accepted as round-off.

    Returns
    -------
    StationaryLaw

    Raises
    ------
    ReducibleChain
        More than one closed class is reachable from the initial state.
    NotConverged
        The residual exceeds ``tol``, or an entry is below ``-tol`` (a near-singular system).
    InvalidParameter, ResourceLimit
        From building the state space (:func:`~symq.markov.statespace.build_state_space`).
    """
    started = time.perf_counter()
    space = build_state_space(chain, params)
    closed = one_closed_class(space.generator, space.describe, chain.name)
    n = space.n_states
    sub = space.generator[closed][:, closed].tocsr()
    pi_closed, method = _solve(sub, tol)
    pi = np.zeros(n)
    pi[closed] = pi_closed
    residual = residual_of(space.generator, pi)
    if residual > tol:
        raise NotConverged("sparse LU stationary solve", residual, tol, 1,
                           "the chain is too stiff for one LU solve at this tolerance")
    values = output_values(space, pi)
    transient = n - closed.size
    if transient:
        method += f"; solved on the closed class ({closed.size} states), {transient} " \
                  "transient states have probability 0"
    return StationaryLaw(pi=pi, states=space.states,
                         variables=tuple(v.name for v in chain.variables), n_states=n,
                         values=values, residual=residual, n_transient=transient,
                         absorbing=tuple(space.describe(int(i)) for i in space.absorbing),
                         method=method, seconds=time.perf_counter() - started)


def _solve(sub: sps.csr_matrix, tol: float) -> tuple[np.ndarray, str]:
    """``pi`` with ``pi Q = 0``, ``sum pi = 1`` for an irreducible generator ``sub``, and the
    method: GTH elimination up to :data:`~symq.markov.gth.GTH_MAX_STATES` states (every entry
    to relative accuracy); above, the system with one probability pinned (its row and column
    removed, so no dense normalisation row spoils the sparsity) by sparse LU up to
    :data:`LU_MAX_STATES` states, by ILU-preconditioned GMRES beyond; every answer's residual
    is checked against ``tol``."""
    n = sub.shape[0]
    if n == 1:
        return np.ones(1), GTH_METHOD
    if n <= GTH_MAX_STATES:  # every entry to relative accuracy, also the tiny ones
        pi = gth_stationary(sub.toarray())
        residual = residual_of(sub, pi)
        if np.all(np.isfinite(pi)) and residual <= tol:
            return np.clip(pi, 0.0, 1.0), GTH_METHOD
    # pi_0 = 1: the equations of states 1..n-1 in the unknowns pi_1..pi_{n-1}, then normalise
    transposed = sub.T.tocsc()
    system = transposed[1:, 1:].tocsc()
    rhs = -transposed[1:, 0].toarray().ravel()
    if n <= LU_MAX_STATES:
        method = LU_METHOD
        try:
            rest = splu(system, permc_spec="MMD_AT_PLUS_A").solve(rhs)
        except RuntimeError as exc:  # exactly singular: cannot happen for an irreducible class
            raise NotConverged("sparse LU stationary solve", float("inf"), tol, 1,
                               f"the factorisation failed ({exc})") from None
    else:
        method = GMRES_METHOD
        rest = _gmres(system, rhs, tol)
    pi = np.concatenate(([1.0], rest))
    pi /= pi.sum()
    residual = residual_of(sub, pi)
    if not np.all(np.isfinite(pi)) or residual > tol or pi.min() < -tol:
        shown = residual if np.isfinite(residual) else float("inf")
        raise NotConverged(method.split(" (")[0] + " stationary solve",
                           max(shown, -float(np.nanmin(pi))), tol, 1,
                           "the law has a residual or a negative entry beyond the tolerance")
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    return np.clip(pi, 0.0, 1.0), method


def _gmres(system: sps.csc_matrix, rhs: np.ndarray, tol: float) -> np.ndarray:
    """The pinned system by GMRES with an incomplete-LU preconditioner (Saad 2003, *Iterative
    Methods for Sparse Linear Systems*, ch. 10): its own stopping rule is only a first filter,
    the caller checks the residual of the normalised law."""
    from scipy.sparse.linalg import LinearOperator, gmres, spilu

    try:
        ilu = spilu(system, drop_tol=1e-5, fill_factor=10)
    except RuntimeError as exc:
        raise NotConverged("ILU-GMRES stationary solve", float("inf"), tol, 0,
                           f"the incomplete factorisation failed ({exc})") from None
    preconditioner = LinearOperator(system.shape, ilu.solve)
    rest, info = gmres(system, rhs, M=preconditioner, rtol=min(tol, 1e-12) * 1e-2, restart=50,
                       maxiter=200)
    if info != 0:
        scale = float(np.abs(rhs).max()) or 1.0
        raise NotConverged("ILU-GMRES stationary solve",
                           float(np.abs(system @ rest - rhs).max()) / scale, tol, info,
                           "GMRES stopped before its residual target")
    return np.asarray(rest)
