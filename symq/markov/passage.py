"""Mean first-passage times of a finite CTMC to the states where a condition holds.

For a target set ``A``, the mean time ``m_i`` to reach ``A`` from state ``i`` solves
``m_i = 0`` on ``A`` and ``sum_j q_ij m_j = -1`` off ``A`` (Kemeny & Snell, *Finite Markov
Chains*, 1960; Stewart 1994, *Introduction to the Numerical Solution of Markov Chains*, ch. 1).
It is finite only where ``A`` is reached with probability 1.  Before solving, a graph search
(breadth-first, :func:`scipy.sparse.csgraph.breadth_first_order`) finds the states from which
``A`` cannot be reached, then every state that can reach one of those without passing through
``A``: from these the chain avoids ``A`` forever with positive probability, and their mean is
reported as ``inf`` (never a finite number).  On the remaining states outside ``A`` the system
is non-singular and is solved by sparse LU (:func:`scipy.sparse.linalg.splu`); its residual is
checked.

Examples
--------
M/M/1/K with ``lam = 1``, ``mu = 2``, from ``n = 3`` to ``n == 0``: about ``3 / (mu - lam) = 3``
when ``K`` is large (the capacity barely matters at ``K = 40``):

>>> from symq.markov.library import mm1k
>>> result = passage_time(mm1k(40), {"lam": 1.0, "mu": 2.0}, "n == 0", initial={"n": 3})
>>> round(result.mean, 9)
3.0
>>> result.means[:3]
array([0., 1., 2.])
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sps
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.linalg import splu

from symq.core.errors import NotConverged, SymqError
from symq.core.result import Exactness, ResultBase

from .chain import Condition, MarkovChain
from .statespace import StateSpace, build_state_space, evaluate
from .transient import Initial, initial_law

__all__ = ["PassageTime", "passage_time", "UnreachableTarget", "avoiding_states",
           "target_states"]

#: Largest relative residual ``||Q_CC m + 1||_inf / (1 + ||Q_CC||_inf ||m||_inf)`` accepted.
RESIDUAL_TOL = 1e-10

METHOD = ("sparse LU on the states outside the target that reach it with probability 1 "
          "(graph search; the others have mean inf)")


class UnreachableTarget(SymqError, ValueError):
    """The target condition holds at no state reachable from the chain's initial state, so no
    passage time is defined.

    Parameters
    ----------
    target : str
        The condition as written.
    name : str
        The chain, for the message.
    """

    def __init__(self, target: str, name: str = "the chain") -> None:
        self.target = target
        super().__init__(f"parameter target={target!r} must hold at a state reachable from "
                         f"the initial state of {name} (it holds at none: check the "
                         "condition against the variables' bounds)")


@dataclass(frozen=True)
class PassageTime(ResultBase):
    """Mean first-passage times of a finite CTMC to the states where a condition holds.

    Attributes
    ----------
    target : str
        The condition, as written.
    mean : float
        The mean time to reach the target from the initial law (``inf`` if the chain may avoid
        it forever; 0 if it starts there).
    means : numpy.ndarray
        The mean time from each state (0 on the target, ``inf`` where it may be avoided
        forever).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers: the state of each entry of ``means``.
    variables : tuple of str
        The names of the columns of ``states``.
    n_target : int
        Number of reachable states where the condition holds.
    n_avoiding : int
        Number of states from which the target may be avoided forever (mean ``inf``).
    residual : float
        ``||Q_CC m + 1||_inf / (1 + ||Q_CC||_inf ||m||_inf)`` on the solved states ``C``.
    method, exactness, seconds
        How the means were obtained and the wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("target", "mean", "n_avoiding")

    target: str
    mean: float
    means: np.ndarray
    states: np.ndarray
    variables: tuple[str, ...]
    n_target: int
    n_avoiding: int
    residual: float = 0.0
    method: str = METHOD
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


def target_states(space: StateSpace, target: Condition) -> tuple[np.ndarray, str]:
    """The indices of the states of ``space`` where ``target`` holds, and its text.

    ``target`` is a condition text in the chain's variables and parameters (parsed by
    :func:`symq.core.conditions.parse_condition`), a bool or a sympy Boolean; errors name it
    ``target``."""
    chain = space.chain
    parsed = chain._symbolic("target", target, condition=True)
    holds = evaluate(parsed, chain, space.states, space.params) != 0
    return np.flatnonzero(holds), target if isinstance(target, str) else str(target)


def _reached_backwards(graph_t: sps.csr_matrix, sources: np.ndarray) -> np.ndarray:
    """Boolean mask of the states from which one of ``sources`` is reachable in the graph whose
    transpose is ``graph_t`` (a breadth-first search from a virtual root joined to them)."""
    n = graph_t.shape[0]
    mask = np.zeros(n, dtype=bool)
    if sources.size == 0:
        return mask
    root = sps.csr_matrix((np.ones(sources.size), (np.full(sources.size, n), sources)),
                          shape=(n + 1, n + 1))
    padded = sps.bmat([[graph_t, None], [None, sps.csr_matrix((1, 1))]], format="csr") + root
    order = breadth_first_order(padded, n, directed=True, return_predecessors=False)
    mask[order[order < n]] = True
    return mask


def avoiding_states(generator: sps.spmatrix, target: np.ndarray) -> np.ndarray:
    """Boolean mask of the states (outside ``target``) from which the chain avoids ``target``
    forever with positive probability: those that cannot reach it, and those that can reach such
    a state without passing through ``target``."""
    n = generator.shape[0]
    off = sps.coo_matrix(generator)
    keep = (off.row != off.col) & (off.data > 0)
    rows, cols = off.row[keep], off.col[keep]
    in_target = np.zeros(n, dtype=bool)
    in_target[target] = True
    transposed = sps.csr_matrix((np.ones(rows.size), (cols, rows)), shape=(n, n))
    doomed = np.flatnonzero(~_reached_backwards(transposed, target))
    outside = ~in_target[rows]  # edges leaving non-target states only
    graph_t = sps.csr_matrix((np.ones(int(outside.sum())), (cols[outside], rows[outside])),
                             shape=(n, n))
    return _reached_backwards(graph_t, doomed) & ~in_target


def passage_time(chain: MarkovChain, params: Mapping[str, Any] | None, target: Condition, *,
                 initial: Initial = None) -> PassageTime:
    """Mean first-passage times of ``chain`` to the states where ``target`` holds.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.
    target : str, bool or sympy Boolean
        The condition defining the target set, e.g. ``"n == 0"`` (names: the chain's variables
        and parameters).
    initial : mapping, sequence of int or numpy.ndarray, optional
        Where ``mean`` starts: a state (default the chain's initial state; another one must be
        reachable from it) or a probability vector over the reachable states.

    Returns
    -------
    PassageTime
        ``means`` for every state; ``mean`` from ``initial``.  States that may avoid the target
        forever have mean ``inf``.

    Raises
    ------
    InvalidParameter
        ``target`` does not parse or names an unknown symbol; a bad ``initial``.
    UnreachableTarget
        The target holds at no reachable state.
    NotConverged
        The LU solve's residual exceeds :data:`RESIDUAL_TOL`.
    """
    started = time.perf_counter()
    space = build_state_space(chain, params)
    inside, text = target_states(space, target)
    if inside.size == 0:
        raise UnreachableTarget(text, chain.name or "the chain")
    p0 = initial_law(space, initial)
    n = space.n_states
    avoiding = avoiding_states(space.generator, inside)
    means = np.zeros(n)
    means[avoiding] = np.inf
    solved = np.ones(n, dtype=bool)
    solved[inside] = False
    solved &= ~avoiding
    cols = np.flatnonzero(solved)
    residual = 0.0
    if cols.size:
        sub = space.generator[cols][:, cols].tocsc()
        try:
            m = splu(sub).solve(-np.ones(cols.size))
        except RuntimeError as exc:  # singular: cannot happen once the avoiders are removed
            raise NotConverged("sparse LU passage-time solve", float("inf"), RESIDUAL_TOL, 1,
                               f"the factorisation failed ({exc})") from None
        scale = 1.0 + float(abs(sub).sum(axis=1).max()) * float(np.abs(m).max())
        residual = float(np.abs(sub @ m + 1.0).max()) / scale
        if not np.all(np.isfinite(m)) or residual > RESIDUAL_TOL or m.min() < 0:
            raise NotConverged("sparse LU passage-time solve", residual, RESIDUAL_TOL, 1,
                               "the system is too ill-conditioned for one LU solve")
        means[cols] = m
    weight = p0 > 0
    mean = float(np.inf) if np.any(np.isinf(means[weight])) else float(p0[weight]
                                                                        @ means[weight])
    return PassageTime(target=text, mean=mean, means=means, states=space.states,
                       variables=tuple(v.name for v in chain.variables),
                       n_target=int(inside.size), n_avoiding=int(avoiding.sum()),
                       residual=residual, seconds=time.perf_counter() - started)
