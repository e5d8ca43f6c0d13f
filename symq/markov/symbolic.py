"""The stationary law of a small finite CTMC as formulas in its parameters.

The reachable states are enumerated structurally: every guard and update must be a formula in
the state variables only (integer bounds fixed when the chain is declared), so the states do
not depend on the parameter values; the rates stay symbolic, each jump's rate with the state
substituted.  Then, in order of preference (Kelly 1979, *Reversibility and Stochastic Networks*,
Wiley, ch. 1):

1. **Kolmogorov's criterion.**  When the transition graph has a symmetric support, products of
   rate ratios along a breadth-first spanning tree give ``pi_j = pi_i q_ij / q_ji``; when every
   edge outside the tree closes (``pi_i q_ij - pi_j q_ji`` simplifies to 0: detailed balance
   holds on every fundamental cycle) the chain is reversible and the normalised tree products
   are the stationary law, with no linear solve.
2. **Fraction-free linear solve.**  Otherwise ``pi Q = 0``, ``pi 1 = 1`` (one equation replaced
   by the normalisation) is solved over the polynomial ring of the parameters by fraction-free
   elimination (:meth:`sympy.polys.matrices.DomainMatrix.solve_den`), then cancelled.

Either way the answer is checked by substituting random positive rationals for the parameters:
``pi Q = 0`` and ``sum(pi) = 1`` must hold exactly.  The cost grows steeply with the number of
states and parameters (expression swell), so the work runs under a time budget
(:func:`symq.core.budget.time_budget`) and chains of more than :data:`MAX_SYMBOLIC_STATES`
reachable states are refused.

Examples
--------
>>> from symq.markov.library import mm1k
>>> law = symbolic_stationary(mm1k(2))
>>> law.pi[0]
mu**2/(lam**2 + lam*mu + mu**2)
>>> law.reversible
True
>>> law["P_block"]
lam**2/(lam**2 + lam*mu + mu**2)
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sps
import sympy as sp
from scipy.sparse.csgraph import breadth_first_order
from sympy.polys.matrices import DomainMatrix
from sympy.polys.polyerrors import CoercionFailed

from symq.core.budget import time_budget
from symq.core.errors import (
    DerivationTimeout,
    InvalidParameter,
    NumericalFailure,
    ResourceLimit,
)
from symq.core.result import Exactness, ResultBase

from .chain import MarkovChain
from .exact_states import ExactMoves, reachable_exact
from .results import OutputsByName
from .statespace import build_state_space
from .stationary import one_closed_class, stationary

__all__ = ["SymbolicStationaryLaw", "symbolic_stationary", "is_reversible", "product_form",
           "MAX_SYMBOLIC_STATES", "TREE_METHOD", "SOLVE_METHOD"]

#: Most reachable states of a symbolic solve (the default of ``max_states``).
MAX_SYMBOLIC_STATES = 60
#: The two methods, as a result names them.
TREE_METHOD = "Kolmogorov criterion: detailed balance, tree products"
SOLVE_METHOD = "fraction-free linear solve"

#: Random rational points at which the law is checked exactly.
_CHECKS = 2
#: Attempts at drawing a point where no denominator vanishes.
_DRAWS = 20


@dataclass(frozen=True)
class SymbolicStationaryLaw(OutputsByName, ResultBase):
    """The stationary law of a small finite CTMC and its outputs, as formulas in the parameters.

    Attributes
    ----------
    pi : tuple of sympy.Expr
        Stationary probability of each state, a rational function of the parameters (zero on
        transient states).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers, in lexicographic order of the variables (the
        order of :func:`~symq.markov.stationary`).
    variables : tuple of str
        The names of the columns of ``states``.
    n_states : int
        Number of reachable states.
    values : dict
        Each declared output by name, a simplified formula in the parameters.
    reversible : bool
        Whether Kolmogorov's criterion holds (detailed balance, identically in the parameters).
    n_transient : int
        Number of transient states (outside the one closed class).
    method, exactness, seconds
        How the law was obtained (:data:`TREE_METHOD` or :data:`SOLVE_METHOD`) and its wall
        time.
    """

    summary: ClassVar[tuple[str, ...]] = ("n_states", "reversible")
    reported: ClassVar[tuple[str, ...]] = ("n_states", "reversible")

    pi: tuple[sp.Expr, ...]
    states: np.ndarray
    variables: tuple[str, ...]
    n_states: int
    values: dict[str, sp.Expr]
    reversible: bool
    n_transient: int = 0
    method: str = TREE_METHOD
    exactness: Exactness = Exactness.EXACT
    seconds: float = 0.0

    def at(self, params: Mapping[str, Any]) -> dict[str, sp.Expr]:
        """The outputs with the parameters replaced by ``params`` (name -> value)."""
        table = {sp.Symbol(k, real=True): sp.sympify(v) for k, v in params.items()}
        return {k: sp.simplify(v.xreplace(table)) for k, v in self.values.items()}


def _parameter_free(chain: MarkovChain) -> None:
    """Refuse a guard, an update or an event that depends on a parameter: the states would
    depend on the parameter values."""
    params = set(chain.parameter_symbols)

    def refuse(where: str, expr: Any) -> None:
        used = sorted(str(s) for s in getattr(expr, "free_symbols", set()) & params)
        if used:
            raise InvalidParameter(
                where, str(expr), "a formula in the state variables only, for the symbolic "
                "solve", f"it uses the parameter {used[0]}, so the reachable states depend on "
                f"its value: write {used[0]} as a fixed integer in the declaration, or solve at "
                "numeric values with stationary()")

    for jump in chain.jumps:
        refuse(f"{jump.where}.guard", jump.guard)
        for var, new in zip(chain.variables, jump.update, strict=True):
            refuse(f"{jump.where}.update.{var.name}", new)
    for name, out in chain.outputs.items():
        if out.kind == "probability":
            refuse(f"outputs.{name}", out.expr)


def _symbolic_rate(where: str, rate: sp.Expr, state: str) -> sp.Expr:
    if rate.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or (rate.is_number and (
            not rate.is_real or rate < 0)):
        raise InvalidParameter(where, rate, "a finite rate >= 0",
                               f"at the reachable state {state}")
    return rate


def _enumerate(chain: MarkovChain, max_states: int) -> ExactMoves:
    """The reachable states (lexicographic order), the symbolic off-diagonal rates
    ``(i, j) -> q_ij`` and the moves ``(jump, state, rate)``."""

    def too_many() -> ResourceLimit:
        return ResourceLimit(
            "max_states", max_states,
            f"more than {max_states} reachable states (the symbolic solve's cost "
            "and expression swell grow steeply with the number of states)",
            f"a chain of at most max_states = {max_states} reachable states for the "
            "symbolic solve; solve at numeric values with stationary() or "
            "exact_stationary()")

    return reachable_exact(chain, {}, max_states=max_states, too_many=too_many,
                           check_rate=_symbolic_rate)


class _Arithmetic:
    """Rational functions of the parameters: exact field arithmetic in ``ZZ(params)`` (every
    element in lowest terms, so a zero test is exact) when every formula is a rational function
    of the parameters; sympy expressions with ``cancel``/``simplify`` otherwise (rates with
    ``sqrt`` or ``exp``)."""

    def __init__(self, symbols: tuple[sp.Symbol, ...], formulas: list[sp.Expr]) -> None:
        field = sp.ZZ.frac_field(*symbols) if symbols else sp.QQ
        try:
            for f in formulas:
                field.from_sympy(f)
        except (CoercionFailed, ValueError):  # not a rational function of the parameters
            self.field: Any = None
        else:
            self.field = field

    def to(self, expr: sp.Expr) -> Any:
        return self.field.from_sympy(expr) if self.field is not None else expr

    def back(self, element: Any) -> sp.Expr:
        return self.field.to_sympy(element) if self.field is not None else sp.cancel(element)

    def is_zero(self, element: Any) -> bool:
        if self.field is not None:
            return bool(element == self.field.zero)
        if sp.cancel(sp.together(element)) == 0:
            return True
        return bool(sp.simplify(element) == 0)

    def zero(self) -> Any:
        return self.field.zero if self.field is not None else sp.Integer(0)


def _draw(symbols: tuple[sp.Symbol, ...], rng: random.Random) -> dict[sp.Symbol, sp.Rational]:
    return {s: sp.Rational(rng.randint(1, 97), rng.randint(1, 31)) for s in symbols}


def _numerically_zero(expr: sp.Expr, point: dict[sp.Symbol, sp.Rational]) -> bool:
    value = sp.N(expr.xreplace(point), 40)
    return bool(value == 0 or abs(value) < sp.Float("1e-30", 40))


def _tree_law(rates: dict[tuple[int, int], Any], closed: list[int], arithmetic: _Arithmetic
              ) -> list[Any] | None:
    """Unnormalised tree products on ``closed`` when Kolmogorov's criterion holds, else None.

    Breadth-first spanning tree from the first state, ``w_j = w_i q_ij / q_ji`` on its edges;
    the criterion holds when ``w_i q_ij = w_j q_ji`` on every other edge (each closes one
    fundamental cycle), identically in the parameters."""
    neighbours: dict[int, list[int]] = {i: [] for i in closed}
    for (a, b) in rates:
        if a in neighbours and b in neighbours:
            if (b, a) not in rates:
                return None  # support not symmetric: not reversible
            neighbours[a].append(b)
    root = closed[0]
    weight: dict[int, Any] = {root: arithmetic.to(sp.Integer(1))}
    tree: set[tuple[int, int]] = set()
    queue = deque([root])
    while queue:
        i = queue.popleft()
        for j in sorted(neighbours[i]):
            if j not in weight:
                weight[j] = weight[i] * rates[(i, j)] / rates[(j, i)]
                tree.update({(i, j), (j, i)})
                queue.append(j)
    for (a, b), rate in rates.items():
        if a < b and (a, b) not in tree and a in weight:
            if not arithmetic.is_zero(weight[a] * rate - weight[b] * rates[(b, a)]):
                return None
    return [weight[i] for i in closed]


def _solve(rates: dict[tuple[int, int], sp.Expr], closed: list[int]
           ) -> tuple[list[sp.Expr], sp.Expr]:
    """``pi Q = 0``, ``sum pi = 1`` on ``closed`` by fraction-free elimination: the numerators
    of ``pi`` and their common denominator."""
    m = len(closed)
    if m == 1:
        return [sp.Integer(1)], sp.Integer(1)
    where = {s: k for k, s in enumerate(closed)}
    A = sp.zeros(m, m)
    for (a, b), rate in rates.items():
        if a in where and b in where:
            A[where[b], where[a]] += rate  # transposed
            A[where[a], where[a]] -= rate
    for k in range(m):
        A[m - 1, k] = sp.Integer(1)
    b = sp.zeros(m, 1)
    b[m - 1] = sp.Integer(1)
    system, rhs = DomainMatrix.from_Matrix(A).unify(DomainMatrix.from_Matrix(b))
    x, den = system.solve_den(rhs)
    return [system.domain.to_sympy(v) for v in x.flat()], system.domain.to_sympy(den)


def _verify(rates: dict[tuple[int, int], sp.Expr], pi: list[sp.Expr], n: int,
            symbols: tuple[sp.Symbol, ...], rng: random.Random) -> None:
    """``pi Q = 0`` and ``sum pi = 1`` exactly at random positive rational points."""
    checked = 0
    for _ in range(_DRAWS):
        point = _draw(symbols, rng)
        values = [p.xreplace(point) for p in pi]
        if any(v.has(sp.zoo, sp.nan, sp.oo) for v in values):
            continue  # a denominator vanishes at this point: draw another
        flow = [sp.Integer(0)] * n
        for (a, b), rate in rates.items():
            moved = values[a] * rate.xreplace(point)
            flow[b] += moved
            flow[a] -= moved
        if all(v.is_Rational for v in values + flow):
            ok = all(f == 0 for f in flow) and sum(values) == 1
        else:
            ok = all(_numerically_zero(f, {}) for f in flow) and \
                _numerically_zero(sum(values) - 1, {})
        if not ok:
            raise NumericalFailure("symbolic stationary solve: the law does not satisfy "
                                   f"pi Q = 0, sum(pi) = 1 at {point} (a bug in symq)")
        checked += 1
        if checked == _CHECKS:
            return
    raise NumericalFailure("symbolic stationary solve: no random rational point where the "
                           "law is defined (its denominator vanishes everywhere tried)")


def _output_terms(chain: MarkovChain, states: list[tuple[int, ...]],
                  fired: list[tuple[int, int, sp.Expr]]) -> dict[str, list[tuple[int, sp.Expr]]]:
    """Each output as terms ``(state, weight)``: its value is ``sum pi[state] * weight``."""
    symbols = chain.variable_symbols
    tables = [{s: sp.Integer(x) for s, x in zip(symbols, state, strict=True)}
              for state in states]
    terms: dict[str, list[tuple[int, sp.Expr]]] = {}
    for name, out in chain.outputs.items():
        if out.kind == "throughput":
            terms[name] = [(i, r) for j, i, r in fired if chain.jumps[j].label == out.label]
        elif out.kind == "probability":
            terms[name] = [(i, sp.Integer(1)) for i, t in enumerate(tables)
                           if bool(sp.sympify(out.expr).xreplace(t))]
        else:
            terms[name] = [(i, out.expr.xreplace(t)) for i, t in enumerate(tables)]
            for i, weight in terms[name]:
                if weight.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
                    raise InvalidParameter(f"outputs.{name}", weight, "a finite reward at "
                                           "every reachable state",
                                           f"at the state {chain.describe(states[i])}")
    return terms


def symbolic_stationary(chain: MarkovChain, *, timeout: float = 10.0,
                        max_states: int = MAX_SYMBOLIC_STATES, seed: int = 0
                        ) -> SymbolicStationaryLaw:
    """The stationary law of ``chain`` and its outputs as formulas in the parameters.

    Parameters
    ----------
    chain : MarkovChain
        The declaration: its guards, updates and events must not use the parameters (the
        integer bounds are fixed in the declaration); rates and rewards may be any formulas.
    timeout : float
        Wall-clock budget in seconds for the whole symbolic work.
    max_states : int
        Most reachable states accepted.
    seed : int
        Seed of the random rational points at which the law is checked exactly.

    Returns
    -------
    SymbolicStationaryLaw
        Each probability and output a rational function of the parameters in lowest terms
        (numerator and denominator expanded); ``sympy.factor`` shows structure such as a
        product form.

    Raises
    ------
    InvalidParameter
        A guard, an update or an event that uses a parameter (named as ``serve.guard``), or a
        rate that is negative or not finite at a reachable state.
    ResourceLimit
        More than ``max_states`` reachable states.
    DerivationTimeout
        The work exceeded ``timeout`` seconds.
    ReducibleChain
        More than one closed class is reachable from the initial state.
    """
    if isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1:
        raise InvalidParameter("max_states", max_states, "an integer >= 1")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise InvalidParameter("timeout", timeout, "a positive number of seconds")
    started = time.perf_counter()
    chain.require_finite("symbolic_stationary")
    _parameter_free(chain)
    what = f"the symbolic stationary law of {chain.name or 'the chain'}"
    try:
        with time_budget(float(timeout), what):
            pi, states, values, reversible, transient = _derive(chain, max_states,
                                                                random.Random(seed))
    except DerivationTimeout:
        raise DerivationTimeout(
            f"{what} exceeded its time budget of timeout={timeout:g} s (the cost grows "
            "steeply with the states and parameters): raise timeout=, or solve at numeric "
            "values with stationary() or exact_stationary()") from None
    return SymbolicStationaryLaw(
        pi=tuple(pi), states=np.array(states, dtype=np.int64).reshape(
            len(states), len(chain.variables)),
        variables=tuple(v.name for v in chain.variables), n_states=len(states),
        values=values, reversible=reversible, n_transient=transient,
        method=TREE_METHOD if reversible else SOLVE_METHOD,
        seconds=time.perf_counter() - started)


def _derive(chain: MarkovChain, max_states: int, rng: random.Random) -> tuple[
        list[sp.Expr], list[tuple[int, ...]], dict[str, sp.Expr], bool, int]:
    states, rates, fired = _enumerate(chain, max_states)
    n = len(states)
    pattern = sps.csr_matrix(([1.0] * len(rates), ([a for a, _ in rates],
                                                   [b for _, b in rates])), shape=(n, n))
    closed = [int(c) for c in one_closed_class(
        pattern, lambda k: chain.describe(states[k]), chain.name)]
    symbols = chain.parameter_symbols
    terms = _output_terms(chain, states, fired)
    arithmetic = _Arithmetic(symbols, list(rates.values())
                             + [w for t in terms.values() for _, w in t])
    lifted = {key: arithmetic.to(rate) for key, rate in rates.items()}
    weights = _tree_law(lifted, closed, arithmetic)
    if weights is not None:
        total = sum(weights[1:], weights[0])
        law = [w / total for w in weights]
    else:
        nums, den = _solve(rates, closed)
        law = [arithmetic.to(x) / arithmetic.to(den) for x in nums]
    zero = arithmetic.zero()
    pi_lifted = [zero] * n
    for k, p in zip(closed, law, strict=True):
        pi_lifted[k] = p
    pi = [arithmetic.back(p) for p in pi_lifted]
    _verify(rates, pi, n, symbols, rng)
    values = {}
    for name, pairs in terms.items():
        value = sum((pi_lifted[i] * arithmetic.to(w) for i, w in pairs), zero)
        values[name] = arithmetic.back(value)
    return pi, states, values, weights is not None, n - len(closed)


def is_reversible(chain: MarkovChain, params: Mapping[str, Any] | None = None, *,
                  tol: float = 1e-9) -> bool:
    """Whether the chain is reversible at ``params``: Kolmogorov's criterion in floats.

    On the closed class: the support must be symmetric (``q_ij > 0`` exactly when
    ``q_ji > 0``); ``log pi`` is built along a breadth-first spanning tree,
    ``log pi_j = log pi_i + log q_ij - log q_ji``; and every edge must close,
    ``|log pi_i + log q_ij - log pi_j - log q_ji| <= tol`` (Kelly 1979, *Reversibility and
    Stochastic Networks*, ch. 1).  Cost O(transitions), no solve.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.
    tol : float
        Largest violation of detailed balance accepted, on the log scale (a relative error).

    Returns
    -------
    bool

    Examples
    --------
    >>> from symq.markov.library import mm1k, tandem
    >>> is_reversible(mm1k(5), {"lam": 1.0, "mu": 2.0})
    True
    >>> is_reversible(tandem(2, 2), {"lam": 1.0, "mu1": 2.0, "mu2": 3.0})
    False
    """
    space = build_state_space(chain, params)
    closed = one_closed_class(space.generator, space.describe, chain.name)
    sub = space.generator[closed][:, closed].tocsr()
    off = (sub - sps.diags(sub.diagonal())).tocsr()
    off.eliminate_zeros()
    if off.nnz == 0:
        return True
    support = (off != 0).astype(np.int8)
    if (support != support.T).nnz:
        return False  # the support is not symmetric
    order, parent = breadth_first_order(off, 0, directed=False, return_predecessors=True)
    log_pi = np.zeros(sub.shape[0])
    for j in order[1:]:
        i = parent[j]
        log_pi[j] = log_pi[i] + np.log(off[i, j]) - np.log(off[j, i])
    coo = off.tocoo()
    back = np.asarray(off[coo.col, coo.row]).ravel()
    gap = log_pi[coo.row] + np.log(coo.data) - log_pi[coo.col] - np.log(back)
    return bool(np.max(np.abs(gap)) <= tol)


def product_form(chain: MarkovChain, params: Mapping[str, Any] | None = None, *,
                 tol: float = 1e-8) -> bool:
    """Whether the stationary law at ``params`` has a product form over the state variables.

    On a product-shaped state set, ``pi(x) = prod_k f_k(x_k)`` exactly when every mixed second
    difference ``log pi(x + e_a + e_b) - log pi(x + e_a) - log pi(x + e_b) + log pi(x)``
    (``a != b``) vanishes; it is tested wherever all four states are reachable and of positive
    probability (on a constrained set, only there).  The law is the float one of
    :func:`~symq.markov.stationary` (GTH elimination up to its state limit: every entry to
    relative accuracy, so ``log pi`` is accurate).  A chain of one variable is of product form.
    Product form is weaker than reversibility: a Jackson tandem is of product form but not
    reversible.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.
    tol : float
        Largest mixed second difference of ``log pi`` accepted.

    Returns
    -------
    bool

    Examples
    --------
    >>> from symq.markov.library import tandem
    >>> product_form(tandem(2, 2), {"lam": 1.0, "mu1": 2.0, "mu2": 3.0})
    False
    """
    law = stationary(chain, params)
    lows = np.array([v.low for v in chain.variables], dtype=np.int64)
    sizes = np.array([v.size for v in chain.variables], dtype=np.int64)
    strides = np.ones(len(sizes), dtype=np.int64)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    positive = law.pi > 0
    states = law.states[positive]
    codes = (states - lows) @ strides  # increasing: the states are in lexicographic order
    with np.errstate(divide="ignore"):
        log_pi = np.log(law.pi[positive])

    def shifted(mask: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
        target = codes[mask] + step
        at = np.minimum(np.searchsorted(codes, target), codes.size - 1)
        return at, codes[at] == target

    for a in range(len(sizes)):
        for b in range(a + 1, len(sizes)):
            room = (states[:, a] - lows[a] < sizes[a] - 1) & (states[:, b] - lows[b]
                                                              < sizes[b] - 1)
            if not room.any():
                continue
            at_a, has_a = shifted(room, strides[a])
            at_b, has_b = shifted(room, strides[b])
            at_ab, has_ab = shifted(room, strides[a] + strides[b])
            ok = has_a & has_b & has_ab
            gap = (log_pi[at_ab] - log_pi[at_a] - log_pi[at_b] + log_pi[room])[ok]
            if gap.size and np.max(np.abs(gap)) > tol:
                return False
    return True
