r"""The discretised two-server dispatching problem as a generic MDP of :mod:`symq.markov.mdp`.

Hyytiä & Righter (arXiv 2402.08142, Part 1) solve the Bellman equation of size-aware
dispatching on a lattice of backlogs (:mod:`symq.dispatch.vi`): a job of size :math:`X` arrives
to backlogs :math:`u`, is sent to a server :math:`i` at cost :math:`u_i + X` (its response
time), and the backlogs drain for an exponential inter-arrival time.  This module writes the
*same* discretised problem (the grid's hat-kernel size atoms :math:`p_k` and the exact
exponential weights :math:`(a, b, q)` of the diagonal :math:`E_A` recursion of
:class:`~symq.dispatch.vi.grid.DispatchGrid`) as a
:class:`~symq.markov.mdp.space.StateActionSpace`, so that the Markov domain's generic solvers
(relative value iteration, policy iteration, the linear program) solve it: an independent
computation of the figure the dedicated passes give.

Every arrival is two steps of a discrete-time chain:

* a *draw* state :math:`u` (``size = -1``), one action ``draw``, cost 0, goes to the decision
  state :math:`(u, k)` with probability :math:`p_k`;
* a *decision* state :math:`(u, k)` has the actions ``shorter`` and ``longer`` (sorted
  backlogs, identical servers): cost :math:`u_i + k\delta`; the backlogs become :math:`w = u +
  k e_i`, then drain along the diagonal :math:`x_t = ((w_1 - t)^+, w_2 - t)`, ``t = 0 ..
  w_2``, and the next draw state is :math:`x_t` with probability :math:`a q^t + b q^{t-1}`
  (:math:`t \ge 1`), :math:`a` at :math:`t = 0`, and :math:`b q^{T-1} + q^T` at the origin
  :math:`T = w_2` (the unrolled recursion :math:`f(x_t) = a h(x_t) + b h(x_{t+1}) + q
  f(x_{t+1})`, :math:`f(0) = h(0)`).

The transition probabilities enter as rates (:class:`~symq.markov.mdp.space.StateActionSpace`),
so the generic gain is the average cost per step and the mean response time is twice it.  The
one difference from the dedicated solver is the truncation: a backlog that would pass
:math:`U` is clipped at :math:`U` here, where the dedicated passes extend the value beyond
:math:`U` by the analytic tail; the two agree where :math:`P(\text{backlog} \ge U)` is small.

Examples
--------
>>> from symq.laws import Uniform
>>> space = dispatch_decision_space(0.3, Uniform(0.0, 2.0), delta=0.5, U=5.0)
>>> space.n_states, space.action_names        # 66 backlog pairs, then 66 x 5 decisions
(396, ('draw', 'shorter', 'longer'))
>>> space.describe(space.n_lattice + 7)
'backlogs (0, 0.5), a job of size 1'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase
from symq.markov.mdp.solvers import (
    MethodOutcome,
    evaluate_pairs,
    linear_program,
    policy_iteration,
    value_iteration,
)
from symq.markov.mdp.space import StateActionSpace

from .grid import DispatchGrid, sorted_states

__all__ = ["DispatchDecisionSpace", "GenericDispatchSolution", "dispatch_decision_space",
           "solve_generic", "GENERIC_METHODS"]

#: The generic solvers by name: relative value iteration, policy iteration, linear program.
GENERIC_METHODS = ("vi", "pi", "lp")
#: Bytes per transition while the layout is built (targets, rates and their temporaries).
BYTES_PER_TRANSITION = 64
#: Steps of the chain per arrival (a draw step and a decision step).
STEPS_PER_ARRIVAL = 2
_DRAW, _SHORTER, _LONGER = 0, 1, 2


@dataclass(frozen=True, repr=False)
class DispatchDecisionSpace(StateActionSpace):
    """The two-server dispatching lattice of a :class:`DispatchGrid` as a state-action space.

    Attributes
    ----------
    grid : DispatchGrid
        The discretised model (step, truncation, size atoms, arrival weights).
    n_lattice : int
        Number of sorted backlog states :math:`u_1 \\le u_2` (the draw states come first, in
        :func:`~symq.dispatch.vi.grid.sorted_states` order; the decision state of lattice
        state ``r`` and size atom ``k`` is ``n_lattice + r (K + 1) + k``).
    """

    grid: DispatchGrid
    n_lattice: int

    def describe(self, index: int) -> str:
        """State ``index`` as backlogs and, at a decision, the job's size."""
        i, j, k = (int(x) for x in self.states[index])
        d = self.grid.delta
        text = f"backlogs ({i * d:g}, {j * d:g})"
        return text if k < 0 else f"{text}, a job of size {k * d:g}"


def _drain(first: np.ndarray, second: np.ndarray, a: float, b: float, q: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The drain of sorted backlogs ``(first, second)`` (steps) until the next arrival: per
    start, the points ``x_t`` of the path and their probabilities (see the module docstring).

    Returns ``(counts, x1, x2, weight)``: ``counts[s]`` points for start ``s``, concatenated."""
    T = second
    counts = T + 1
    t = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    T_rep = np.repeat(T, counts)
    x1 = np.maximum(np.repeat(first, counts) - t, 0)
    x2 = T_rep - t
    tf = t.astype(float)
    weight = a * q ** tf + np.where(t >= 1, b * q ** np.maximum(tf - 1, 0.0), 0.0)
    end = t == T_rep
    weight[end] = np.where(T_rep[end] == 0, 1.0,
                           b * q ** np.maximum(T_rep[end] - 1.0, 0.0) + q ** T_rep[end])
    return counts, x1, x2, weight


def dispatch_decision_space(rho: float, sizes: Any, delta: float, U: float,
                            tail_tol: float = 1e-10) -> DispatchDecisionSpace:
    r"""The discretised two-server dispatching problem as a generic state-action space.

    Parameters
    ----------
    rho : float
        Per-server load :math:`\lambda E[X]/2`, in ``(0, 1)``.
    sizes : Distribution or str
        The job-size law (anything :func:`~symq.dispatch.sizes.as_sizes` accepts).
    delta, U : float
        Lattice step and truncation of the backlogs, as in
        :func:`~symq.dispatch.vi.solvers.solve_optimal` (same checks and error names).
    tail_tol : float
        Size-lattice truncation of :func:`~symq.dispatch.vi.grid.hat_atoms`.

    Returns
    -------
    DispatchDecisionSpace
        Variables ``u1``, ``u2`` (sorted backlogs in steps) and ``size`` (the arriving job's
        size in steps, ``-1`` before it is drawn); actions ``draw``, ``shorter``, ``longer``.
    """
    grid = DispatchGrid.build(2, rho, sizes, delta, U, tail_tol)
    N, K, p = grid.N, grid.K, grid.p
    bound = (N + 1) * (N + 2) // 2 * (K + 1) * 2 * (N + 1)     # transitions, at most
    require_memory("delta", delta, BYTES_PER_TRANSITION * bound,
                   what=f"up to {bound:.3g} transitions of the generic layout",
                   limit="coarse enough to fit: lower U or raise delta (the dedicated solver "
                         "of symq.dispatch.vi needs no transition list)")
    lattice = sorted_states(2, N)
    n_lat = lattice.shape[0]
    index = np.full((N + 1, N + 1), -1, dtype=np.int64)
    index[lattice[:, 0], lattice[:, 1]] = np.arange(n_lat)
    n_dec = n_lat * (K + 1)
    # states: the draw states, then the decision states (lattice-major, atoms inner)
    states = np.empty((n_lat + n_dec, 3), dtype=np.int64)
    states[:n_lat, :2], states[:n_lat, 2] = lattice, -1
    states[n_lat:, :2] = np.repeat(lattice, K + 1, axis=0)
    states[n_lat:, 2] = np.tile(np.arange(K + 1), n_lat)
    # pairs: one per draw state, two per decision state
    state_ptr = np.concatenate([np.arange(n_lat + 1),
                                n_lat + 2 * np.arange(1, n_dec + 1)]).astype(np.int64)
    i, j, k = (np.repeat(states[n_lat:, c], 2) for c in range(3))
    to_longer = np.tile(np.array([False, True]), n_dec)
    pair_action = np.concatenate([np.full(n_lat, _DRAW), np.where(to_longer, _LONGER,
                                                                  _SHORTER)])
    cost_dec = (np.where(to_longer, j, i) + k) * grid.delta
    pair_cost = np.concatenate([np.zeros(n_lat), cost_dec])
    # decision transitions: add the job, clip at U, sort, drain
    w1 = np.minimum(np.where(to_longer, i, i + k), N)
    w2 = np.minimum(np.where(to_longer, j + k, j), N)
    first, second = np.minimum(w1, w2), np.maximum(w1, w2)
    counts, x1, x2, weight = _drain(first, second, grid.a, grid.b, grid.q)
    dec_target = index[x1, x2]
    draw_target = n_lat + np.arange(n_dec).reshape(n_lat, K + 1)
    trans_target = np.concatenate([draw_target.ravel(), dec_target])
    trans_rate = np.concatenate([np.tile(p, n_lat), weight])
    trans_ptr = np.concatenate([[0], np.cumsum(np.concatenate(
        [np.full(n_lat, K + 1), counts]))]).astype(np.int64)
    pair_out = np.add.reduceat(trans_rate, trans_ptr[:-1])
    boundary = states[:, 1] == N
    return DispatchDecisionSpace(
        "two-server dispatching lattice", ("u1", "u2", "size"),
        ("draw", "shorter", "longer"), states, state_ptr, pair_action.astype(np.int64),
        pair_cost, pair_out, trans_ptr, trans_target.astype(np.int64), trans_rate, 0,
        boundary, grid=grid, n_lattice=n_lat)


@dataclass(frozen=True)
class GenericDispatchSolution(ResultBase):
    """Mean response time of the discretised two-server problem by a generic MDP solver.

    Attributes
    ----------
    ET, ET_low, ET_high : float
        The mean response time and the solver's bracket (twice the gain per step, the chain
        taking two steps per arrival); an evaluated policy's bracket is its one value.
    rho, delta, U : float
        Per-server load, lattice step and truncation.
    n_states, n_transitions : int
        Size of the state-action space solved.
    iterations : int
        Sweeps (value iteration), improvements (policy iteration) or 1.
    residual : float
        The solver's own residual.
    longer : numpy.ndarray
        ``(n_lattice, K + 1)`` booleans: whether the job of atom ``k`` arriving to the sorted
        backlogs ``r`` (:func:`~symq.dispatch.vi.grid.sorted_states` order) goes to the longer
        queue under the solved (or evaluated) policy.
    method : str
        The generic solver and its bounds.
    exactness : Exactness
        ``numeric``: the value of the discretised, truncated problem.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "ET_low", "ET_high", "delta", "U")
    uncertainty: ClassVar[Mapping[str, tuple[str, str]]] = {"ET": ("ET_low", "ET_high")}

    ET: float
    ET_low: float
    ET_high: float
    rho: float
    delta: float
    U: float
    n_states: int
    n_transitions: int
    iterations: int
    residual: float
    longer: np.ndarray = field(repr=False)
    method: str = ""
    exactness: Exactness = Exactness.NUMERIC


def solve_generic(rho: float, sizes: Any, delta: float, U: float, method: str = "vi", *,
                  policy: str | None = None, rtol: float = 1e-9) -> GenericDispatchSolution:
    """Solve the discretised two-server problem with a generic solver of :mod:`symq.markov.mdp`.

    Parameters
    ----------
    rho, sizes, delta, U
        As in :func:`dispatch_decision_space`.
    method : {"vi", "pi", "lp"}
        Relative value iteration, policy iteration or the linear program.
    policy : {"lwl"}, optional
        Evaluate least-work-left (every job to the shorter backlog) by one sparse LU solve
        instead of optimising (``method`` is then not used).
    rtol : float
        Relative half-width of the bracket at which ``vi`` stops.

    Returns
    -------
    GenericDispatchSolution
    """
    if method not in GENERIC_METHODS:
        raise InvalidParameter("method", method, "one of " + ", ".join(GENERIC_METHODS))
    if policy is not None and str(policy).lower() != "lwl":
        raise InvalidParameter("policy", policy, "'lwl' or None (the optimal policy)")
    space = dispatch_decision_space(rho, sizes, delta, U)
    if policy is not None:
        pairs = space.state_ptr[:-1].copy()          # draw, or the first pair: shorter
        value, potential, residual = evaluate_pairs(space, pairs, None, "least work left")
        outcome = MethodOutcome("policy evaluation (sparse LU)", value, value, value, pairs,
                                potential, 1, residual)
        name = "lwl"
    elif method == "vi":
        outcome, name = value_iteration(space, rtol=rtol), method
    elif method == "pi":
        outcome, name = policy_iteration(space), method
    else:
        outcome, name = linear_program(space), method
    chosen = space.pair_action[outcome.pairs[space.n_lattice:]]
    return GenericDispatchSolution(
        STEPS_PER_ARRIVAL * outcome.value, STEPS_PER_ARRIVAL * outcome.low,
        STEPS_PER_ARRIVAL * outcome.high, space.grid.rho, space.grid.delta, space.grid.U,
        space.n_states, int(space.trans_target.size), outcome.iterations, outcome.residual,
        (chosen == _LONGER).reshape(space.n_lattice, space.grid.K + 1),
        f"{outcome.method} on the dispatching lattice as a generic MDP ({name})")
