"""Three independent solvers of a continuous-time MDP's Bellman equation, each with a bracket.

Average cost (the optimal gain ``g`` and a bias ``h``, Puterman 1994, *Markov Decision
Processes*, sec. 8.4 and 11.5)::

    g = min_a [ c(s, a) + sum_s' q(s, a, s') (h(s') - h(s)) ]      for every state s

Discounted cost at rate ``alpha`` (the value ``v``)::

    alpha v(s) = min_a [ c(s, a) + sum_s' q(s, a, s') (v(s') - v(s)) ]

* :func:`value_iteration`: relative value iteration on the uniformised chain (rate
  ``Lambda = (1 + margin) max q(s, a)``, so that every state keeps a self-loop and the sweep is
  aperiodic; Bertsekas 2012, *Dynamic Programming and Optimal Control* II, sec. 5.3), stopped
  when the bracket is narrow enough;
* :func:`policy_iteration`: Howard's policy iteration, each policy evaluated by one sparse LU
  solve, improved until no state gains (Puterman sec. 8.6);
* :func:`linear_program`: the occupation-measure linear program (Puterman sec. 8.8; Manne 1960)
  solved by HiGHS (scipy), its dual giving a bias.

Every method's answer is *bracketed* by the same rule applied to the potential it ends with:
for any ``h``, Odoni's (1969) bounds ``min_s m(s) <= g <= max_s m(s)`` with
``m(s) = min_a [c(s, a) + sum q (h(s') - h(s))]`` (valid when the optimal gain does not depend on
the state: a unichain or communicating MDP), and for a discounted problem MacQueen's (1966)
bounds ``v(s) + min r / alpha <= v*(s) <= v(s) + max r / alpha`` with ``r = m - alpha v``.  So
the stated error of each method is a bound computed from its own output, and the three can be
checked against one another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps
from scipy.sparse.linalg import splu

from symq.core.errors import InvalidParameter, NotConverged

from ..stationary import one_closed_class
from .kernels import bellman_sweep, pair_values, span_and_shift
from .space import StateActionSpace

__all__ = ["MethodOutcome", "value_iteration", "policy_iteration", "linear_program",
           "evaluate_pairs", "bracket", "UNIFORMISATION_MARGIN", "METHODS"]

#: The uniformisation rate is ``(1 + margin)`` times the largest total rate of a pair.
UNIFORMISATION_MARGIN = 0.05
#: The solvers by the name a user gives.
METHODS = ("vi", "pi", "lp")
#: Above this many states, policy iteration starts from the greedy policy of a short value
#: iteration (:data:`WARM_START_SWEEPS` sweeps) rather than the myopic one.
WARM_START_STATES = 10_000
#: Sweeps of that value iteration.
WARM_START_SWEEPS = 1000
#: Relative tolerance below which two actions' values count as tied (policy iteration keeps
#: its current action then, so that it stops).
TIE = 1e-11


@dataclass(frozen=True)
class MethodOutcome:
    """What one solver found: the optimal ``value`` (gain, or the discounted value at the
    initial state) bracketed by ``[low, high]``, the greedy pair at each state, the potential
    (bias ``h`` or value ``v``), iterations and the solver's own residual."""

    method: str
    value: float
    low: float
    high: float
    pairs: np.ndarray
    potential: np.ndarray
    iterations: int
    residual: float

    @property
    def error(self) -> float:
        """Half the bracket's width: the stated error of :attr:`value`."""
        return 0.5 * (self.high - self.low)


def _pair_state(space: StateActionSpace) -> np.ndarray:
    return space.pair_state


def _values(space: StateActionSpace, h: np.ndarray) -> np.ndarray:
    out = np.empty(space.n_pairs)
    pair_values(h, space.state_ptr, space.pair_cost, space.pair_out, space.trans_ptr,
                space.trans_target, space.trans_rate, out)
    return out


def _greedy(space: StateActionSpace, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per state, the least pair value and the first pair attaining it."""
    starts = space.state_ptr[:-1]
    low = np.minimum.reduceat(values, starts)
    hit = values <= np.repeat(low, np.diff(space.state_ptr))
    first = np.maximum.reduceat(np.where(hit, -np.arange(space.n_pairs), -space.n_pairs),
                                starts)
    return low, -first


def bracket(space: StateActionSpace, potential: np.ndarray, alpha: float | None
            ) -> tuple[float, float, float, np.ndarray]:
    """The Odoni (average) or MacQueen (discounted) bracket from any potential.

    Returns
    -------
    value, low, high : float
        The midpoint and the bounds of the optimal gain (average), or of the optimal value at
        the initial state (discounted).
    pairs : numpy.ndarray
        The pair greedy with respect to ``potential`` at each state.
    """
    m, pairs = _greedy(space, _values(space, potential))
    if alpha is None:
        low, high = float(m.min()), float(m.max())
        return 0.5 * (low + high), low, high, pairs
    r = m - alpha * potential
    base = float(potential[space.initial])
    low, high = base + float(r.min()) / alpha, base + float(r.max()) / alpha
    return 0.5 * (low + high), low, high, pairs


def _converged(low: float, high: float, atol: float, rtol: float) -> bool:
    return 0.5 * (high - low) <= atol + rtol * max(abs(low), abs(high))


def value_iteration(space: StateActionSpace, alpha: float | None = None, *, atol: float = 0.0,
                    rtol: float = 1e-8, max_iterations: int = 1_000_000) -> MethodOutcome:
    """Relative value iteration with Odoni's (average) or MacQueen's (discounted) bounds.

    Stops when half the bracket's width is at most ``atol + rtol * |bound|``.

    Raises
    ------
    NotConverged
        ``max_iterations`` sweeps without reaching the tolerance (with the bracket's width).
    """
    n = space.n_states
    fastest = float(space.pair_out.max(initial=0.0))
    uniform = (1.0 + UNIFORMISATION_MARGIN) * fastest if fastest > 0 else 1.0
    discount = 0.0 if alpha is None else float(alpha)
    v = np.zeros(n)
    w = np.empty(n)
    best = np.empty(n, dtype=np.int64)
    ref = space.initial
    low = high = math.nan
    for iteration in range(1, max_iterations + 1):
        bellman_sweep(v, space.state_ptr, space.pair_cost, space.pair_out, space.trans_ptr,
                      space.trans_target, space.trans_rate, uniform, discount, w, best)
        if alpha is None:
            d_low, d_high = span_and_shift(w, v, float(w[ref]))
            low, high = uniform * d_low, uniform * d_high
        else:
            factor = (uniform / (uniform + discount)) / (1.0 - uniform / (uniform + discount))
            base = float(w[ref])
            d_low, d_high = span_and_shift(w, v, 0.0)
            low, high = base + factor * d_low, base + factor * d_high
        v, w = w, v
        if _converged(low, high, atol, rtol):
            value = 0.5 * (low + high)
            return MethodOutcome("relative value iteration (uniformised; Odoni bounds)"
                                 if alpha is None else
                                 "value iteration (uniformised; MacQueen bounds)",
                                 value, low, high, best.copy(), v.copy(), iteration,
                                 0.5 * (high - low))
    raise NotConverged("relative value iteration", 0.5 * (high - low),
                       atol + rtol * max(abs(low), abs(high)), max_iterations,
                       "raise max_iterations or loosen the tolerance")


def evaluate_pairs(space: StateActionSpace, pairs: np.ndarray, alpha: float | None,
                   what: str = "the policy") -> tuple[float, np.ndarray, float]:
    """The gain and bias (average; ``h`` zero at a recurrent state) or the value (discounted)
    of the stationary policy using ``pairs[s]`` at each state, by one sparse LU solve.

    Returns
    -------
    value : float
        The gain (average) or the value at the initial state (discounted).
    potential : numpy.ndarray
        The bias ``h`` or the value ``v``.
    residual : float
        ``max |c + Q h - g|`` (or ``|c + Q v - alpha v|``) over the states, relative to the
        size of the terms (largest cost rate plus twice the largest exit rate times
        ``max |h|``).

    Raises
    ------
    ReducibleChain
        Average cost: the policy's chain has more than one closed class (the classes listed).
    NotConverged
        The solve's residual exceeds ``1e-8`` of the cost scale.
    """
    n = space.n_states
    generator = space.generator(pairs)
    cost = space.pair_cost[pairs]
    if alpha is None:
        closed = one_closed_class(generator, space.describe,
                                  f"the chain of {what} ({space.label})")
        ref = int(closed[0])
        # the column of h(ref) = 0 carries the unknown g instead: -1 in every row
        matrix = generator.tocsc()
        start, stop = matrix.indptr[ref], matrix.indptr[ref + 1]
        matrix.data[start:stop] = 0.0
        matrix = (matrix + sps.csc_matrix((-np.ones(n), (np.arange(n), np.full(n, ref))),
                                          shape=(n, n))).tocsc()
        matrix.eliminate_zeros()
        rhs = -cost
    else:
        matrix = (alpha * sps.identity(n, format="csc") - generator).tocsc()
        rhs = cost
    try:
        lu = splu(matrix)
    except RuntimeError as exc:
        raise NotConverged("policy evaluation", math.inf, 1e-8, 1,
                           f"the factorisation failed ({exc})") from None
    x = lu.solve(rhs)
    x += lu.solve(rhs - matrix @ x)  # one step of iterative refinement
    if alpha is None:
        value = float(x[ref])
        potential = x.copy()
        potential[ref] = 0.0
        residual_vector = cost + generator @ potential - value
    else:
        potential = x
        value = float(potential[space.initial])
        residual_vector = cost + generator @ potential - alpha * potential
    # relative to the size of the terms: the cost rates and the flows of the potential
    rates = float(np.abs(generator.diagonal()).max(initial=0.0))
    scale = max(float(np.abs(cost).max(initial=0.0))
                + 2.0 * rates * float(np.abs(potential).max(initial=0.0)), 1e-300)
    residual = float(np.abs(residual_vector).max(initial=0.0)) / scale
    if not np.all(np.isfinite(potential)) or residual > 1e-8:
        raise NotConverged("policy evaluation (sparse LU)", residual, 1e-8, 1,
                           "the policy's chain is too stiff for one LU solve")
    return value, potential, residual


def policy_iteration(space: StateActionSpace, alpha: float | None = None, *,
                     max_iterations: int = 1000, start: np.ndarray | None = None
                     ) -> MethodOutcome:
    """Howard's policy iteration from ``start`` (an action index per state, -1 where none is
    proposed), else from the myopic policy (least cost rate at each state), or above
    :data:`WARM_START_STATES` states from the greedy policy of a short value iteration.

    Each policy is evaluated by :func:`evaluate_pairs`; a state changes action only where
    another is better by more than a relative :data:`TIE` (so the iteration stops).

    Raises
    ------
    ReducibleChain
        Average cost: a policy met on the way is multichain (its closed classes listed); such
        an MDP is not unichain, and its optimal gain may depend on the initial state.
    NotConverged
        ``max_iterations`` improvements without a fixed point.
    """
    _, pairs = _greedy(space, space.pair_cost)
    if start is None and space.n_states > WARM_START_STATES:
        pairs = _value_iteration_start(space, alpha)
    if start is not None:
        proposed = space.pair_table[np.arange(space.n_states), np.maximum(start, 0)]
        pairs = np.where((start >= 0) & (proposed >= 0), proposed, pairs)
    scale = max(float(np.abs(space.pair_cost).max(initial=0.0)), 1e-300)
    for iteration in range(1, max_iterations + 1):
        _, potential, residual = evaluate_pairs(space, pairs, alpha,
                                                    f"the policy of iteration {iteration}")
        values = _values(space, potential)
        low, best = _greedy(space, values)
        current = values[pairs]
        improve = current > low + TIE * scale
        if not improve.any():
            mid, b_low, b_high, _ = bracket(space, potential, alpha)
            return MethodOutcome("policy iteration (sparse LU evaluation; Odoni bounds)"
                                 if alpha is None else
                                 "policy iteration (sparse LU evaluation; MacQueen bounds)",
                                 mid, b_low, b_high, pairs.copy(), potential, iteration,
                                 residual)
        pairs = np.where(improve, best, pairs)
    raise NotConverged("policy iteration", float(np.count_nonzero(improve)), 0,
                       max_iterations, "states still improving")


def _value_iteration_start(space: StateActionSpace, alpha: float | None) -> np.ndarray:
    """The greedy pairs after :data:`WARM_START_SWEEPS` sweeps of relative value iteration:
    a start close to optimal for a large process (policy iteration then certifies it)."""
    fastest = float(space.pair_out.max(initial=0.0))
    uniform = (1.0 + UNIFORMISATION_MARGIN) * fastest if fastest > 0 else 1.0
    v, w = np.zeros(space.n_states), np.empty(space.n_states)
    best = np.empty(space.n_states, dtype=np.int64)
    for _ in range(WARM_START_SWEEPS):
        bellman_sweep(v, space.state_ptr, space.pair_cost, space.pair_out, space.trans_ptr,
                      space.trans_target, space.trans_rate, uniform,
                      0.0 if alpha is None else alpha, w, best)
        if alpha is None:
            w -= w[space.initial]
        v, w = w, v
    return best


def linear_program(space: StateActionSpace, alpha: float | None = None) -> MethodOutcome:
    """The linear program of the MDP by HiGHS; its dual gives the potential bracketed.

    Average cost: minimise ``sum x(s,a) c(s,a)`` over occupation measures ``x >= 0`` with
    ``sum_a x(j,a) q(j,a) = sum_(s,a) x(s,a) q(s,a,j)`` and ``sum x = 1``; the duals of the
    balance rows are a bias ``h``.  Discounted: maximise ``sum_s v(s)`` subject to
    ``alpha v(s) <= c(s,a) + sum q (v(s') - v(s))`` for every pair.

    Raises
    ------
    NotConverged
        HiGHS did not reach an optimum (its status message).
    """
    from scipy.optimize import linprog

    n, m = space.n_states, space.n_pairs
    pair_state = _pair_state(space)
    trans_pair = np.repeat(np.arange(m), np.diff(space.trans_ptr))
    if alpha is None:
        rows = np.concatenate([pair_state, space.trans_target, np.full(m, n)])
        cols = np.concatenate([np.arange(m), trans_pair, np.arange(m)])
        data = np.concatenate([space.pair_out, -space.trans_rate, np.ones(m)])
        a_eq = sps.csr_matrix((data, (rows, cols)), shape=(n + 1, m))
        b_eq = np.zeros(n + 1)
        b_eq[n] = 1.0
        res = linprog(space.pair_cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
        if res.status != 0:
            raise NotConverged("linear program (HiGHS)", math.inf, 0, int(res.nit or 0),
                               res.message)
        duals = np.asarray(res.eqlin.marginals)[:n]
        # Any potential gives Odoni's lower bound min_s m(s) <= g (scipy's sign convention for
        # the duals is the objective's sensitivity; both signs give a valid bound, the larger
        # is the dual's).  The upper bound is the gain of the program's own policy (its primal
        # argmax where the occupation measure is positive, greedy for the dual elsewhere),
        # evaluated exactly: the dual says nothing about states no optimal policy visits.
        lows = []
        for sign in (1.0, -1.0):
            m_values, greedy = _greedy(space, _values(space, sign * duals))
            lows.append((float(m_values.min()), sign, greedy))
        low, sign, greedy = max(lows, key=lambda item: item[0])
        potential = sign * duals
        x = np.asarray(res.x)
        occupied = np.maximum.reduceat(x, space.state_ptr[:-1])
        _, primal = _greedy(space, -x)
        pairs = np.where(occupied > 1e-9, primal, greedy)
        high, _, _ = evaluate_pairs(space, pairs, None, "the linear program's policy")
        high = max(high, low)
        mid = 0.5 * (low + high)
        found_value = float(res.fun)
    else:
        rows = np.concatenate([np.arange(m), trans_pair])
        cols = np.concatenate([pair_state, space.trans_target])
        data = np.concatenate([alpha + space.pair_out, -space.trans_rate])
        a_ub = sps.csr_matrix((data, (rows, cols)), shape=(m, n))
        res = linprog(-np.ones(n), A_ub=a_ub, b_ub=space.pair_cost, bounds=(None, None),
                      method="highs")
        if res.status != 0:
            raise NotConverged("linear program (HiGHS)", math.inf, 0, int(res.nit or 0),
                               res.message)
        potential = np.asarray(res.x)
        mid, low, high, pairs = bracket(space, potential, alpha)
        found_value = float(potential[space.initial])
    # the residual: how far HiGHS's own optimum lies from the bracket's midpoint
    return MethodOutcome("linear program (HiGHS; Odoni's lower bound from its dual, its "
                         "policy's gain above)" if alpha is None
                         else "linear program (HiGHS; MacQueen bounds)", mid, low, high, pairs,
                         potential, int(res.nit or 0), abs(found_value - mid))


def check_alpha(alpha: float | None) -> float | None:
    """``alpha`` as a positive finite float, or None (average cost)."""
    if alpha is None:
        return None
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
            or not math.isfinite(alpha) or alpha <= 0:
        raise InvalidParameter("discount", alpha, "a positive finite discount rate, or None "
                               "for the average cost")
    return float(alpha)
