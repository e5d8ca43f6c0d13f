"""The stationary law of a small finite CTMC in exact rationals: independent evidence.

With rational parameter values, the states are rebuilt by a plain breadth-first search that
evaluates every guard, rate and update exactly (sympy rationals; no floating point and no code
shared with the vectorised builder of :mod:`symq.markov.statespace` beyond the parsed
declaration), and ``pi Q = 0``, ``pi 1 = 1`` is solved by Gaussian elimination over the rationals
(:class:`sympy.polys.matrices.DomainMatrix` over ``QQ``), one equation replaced by the
normalisation (Stewart 1994, *Introduction to the Numerical Solution of Markov Chains*, ch. 2).
The answer is then substituted back: ``pi Q = 0`` and ``sum(pi) = 1`` hold exactly, or an error
is raised.  The outputs are exact rationals too.

The cost grows like the cube of the number of states: chains of more than
:data:`MAX_EXACT_STATES` reachable states are refused (use :func:`~symq.markov.stationary`).

Examples
--------
>>> from fractions import Fraction
>>> from symq.markov.library import mm1k
>>> law = exact_stationary(mm1k(2), {"lam": 1, "mu": Fraction(2)})
>>> law.pi
(4/7, 2/7, 1/7)
>>> law["P_block"]
1/7
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sps
import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.matrices import DomainMatrix

from symq.core.errors import MISSING, InvalidParameter, NumericalFailure
from symq.core.result import Exactness, ResultBase

from .chain import MarkovChain
from .exact_states import reachable_exact
from .results import OutputsByName
from .stationary import one_closed_class

__all__ = ["ExactStationaryLaw", "exact_stationary", "MAX_EXACT_STATES"]

#: Most reachable states of an exact solve.
MAX_EXACT_STATES = 400


@dataclass(frozen=True)
class ExactStationaryLaw(OutputsByName, ResultBase):
    """The stationary law of a small finite CTMC and its outputs, in exact rationals.

    Attributes
    ----------
    pi : tuple of sympy.Rational
        Stationary probability of each state (zero on transient states).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers, in lexicographic order of the variables (the
        order of :func:`~symq.markov.stationary`).
    variables : tuple of str
        The names of the columns of ``states``.
    n_states : int
        Number of reachable states.
    values : dict
        Each declared output by name, an exact rational.
    residual : float
        0: ``pi Q = 0`` and ``sum(pi) = 1`` were checked exactly.
    n_transient : int
        Number of transient states.
    method, exactness, seconds
        How the law was obtained and its wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("n_states",)
    reported: ClassVar[tuple[str, ...]] = ("n_states", "residual")

    pi: tuple[sp.Rational, ...]
    states: np.ndarray
    variables: tuple[str, ...]
    n_states: int
    values: dict[str, sp.Rational]
    residual: float = 0.0
    n_transient: int = 0
    method: str = "exact rational solve (Gaussian elimination over QQ), checked exactly"
    exactness: Exactness = Exactness.EXACT
    seconds: float = 0.0

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in list(self.values.items())[:6])
        return f"ExactStationaryLaw(n_states={self.n_states}, {shown})"


def _rational(name: str, value: Any) -> sp.Rational:
    domain = "an exact rational (int, fractions.Fraction or sympy.Rational)"
    if isinstance(value, sp.Rational):
        return value
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return sp.Integer(int(value))
    reason = ("a float is not exact: write Fraction(\"0.3\") for 0.3"
              if isinstance(value, (float, np.floating)) else "")
    raise InvalidParameter(name, value, domain, reason)


def _exact_values(chain: MarkovChain, params: Mapping[str, Any] | None
                  ) -> dict[sp.Symbol, sp.Rational]:
    params = dict(params or {})
    extra = sorted(set(params) - set(chain.parameters))
    if extra:
        raise InvalidParameter(extra[0], params[extra[0]], "a declared parameter: one of "
                               + (", ".join(chain.parameters) or "(none declared)"))
    for p in chain.parameters:
        if p not in params:
            raise InvalidParameter(p, MISSING, "an exact rational")
    return {s: _rational(p, params[p]) for p, s in zip(chain.parameters,
                                                       chain.parameter_symbols, strict=True)}


def _number(where: str, expr: Any, table: dict[sp.Symbol, sp.Rational], state: str) -> Any:
    value = expr.xreplace(table)
    if not isinstance(value, sp.Rational):
        raise InvalidParameter(where, value, "an exact rational at every reachable state",
                               f"at the state {state} it is not rational; the exact solve "
                               "needs rational rates")
    return value


def _exact_rate(where: str, rate: Any, state: str) -> sp.Rational:
    if not isinstance(rate, sp.Rational):
        raise InvalidParameter(where, rate, "an exact rational at every reachable state",
                               f"at the state {state} it is not rational; the exact solve "
                               "needs rational rates")
    if rate < 0:
        raise InvalidParameter(where, rate, "a rate >= 0", f"at the reachable state {state}")
    return rate


def _too_many() -> InvalidParameter:
    return InvalidParameter("chain", f"more than {MAX_EXACT_STATES} states",
                            f"at most {MAX_EXACT_STATES} reachable states for the exact solve",
                            "use symq.markov.stationary (sparse LU) instead")


def _truth(where: str, condition: Any, table: dict[sp.Symbol, sp.Rational], state: str
           ) -> bool:
    value = condition.xreplace(table)
    if value not in (sp.true, sp.false):
        raise InvalidParameter(where, value, "true or false at every reachable state",
                               f"undecided at the state {state}")
    return bool(value)


def exact_stationary(chain: MarkovChain, params: Mapping[str, Any] | None = None
                     ) -> ExactStationaryLaw:
    """The stationary law of ``chain`` at rational ``params``, in exact rationals.

    Parameters
    ----------
    chain : MarkovChain
        The declaration (at most :data:`MAX_EXACT_STATES` reachable states).
    params : mapping
        An exact rational (int, :class:`fractions.Fraction`, :class:`sympy.Rational`) for every
        declared parameter; floats are refused.

    Returns
    -------
    ExactStationaryLaw

    Raises
    ------
    InvalidParameter
        A float or missing parameter; more than :data:`MAX_EXACT_STATES` reachable states; a
        negative or irrational rate, or an update out of bounds, at a reachable state.
    ReducibleChain
        More than one closed class.
    """
    started = time.perf_counter()
    chain.require_finite("exact_stationary")
    values = _exact_values(chain, params)
    sorted_states, Q, fired = reachable_exact(
        chain, values, max_states=MAX_EXACT_STATES, too_many=_too_many, check_rate=_exact_rate)
    n = len(sorted_states)
    exits = [sp.Integer(0)] * n
    for (a, _b), rate in Q.items():
        exits[a] += rate
    for a in range(n):
        Q[(a, a)] = -exits[a]
    states = np.array(sorted_states, dtype=np.int64).reshape(n, len(chain.variables))
    pattern = sps.csr_matrix(([1.0] * len(Q), ([a for a, _ in Q], [b for _, b in Q])),
                             shape=(n, n))
    closed = [int(c) for c in one_closed_class(
        pattern, lambda k: chain.describe(sorted_states[k]), chain.name)]
    pi_closed = _solve(Q, closed)
    pi = [sp.Integer(0)] * n
    for k, p in zip(closed, pi_closed, strict=True):
        pi[k] = p
    _verify(Q, pi, n)
    outputs = _outputs(chain, values, sorted_states, pi, fired)
    return ExactStationaryLaw(pi=tuple(pi), states=states,
                              variables=tuple(v.name for v in chain.variables), n_states=n,
                              values=outputs, n_transient=n - len(closed),
                              seconds=time.perf_counter() - started)


def _solve(Q: dict[tuple[int, int], Any], closed: list[int]) -> list[sp.Rational]:
    """Solve ``pi Q_CC = 0``, ``sum pi = 1`` over QQ on the closed class ``closed``."""
    m = len(closed)
    if m == 1:
        return [sp.Integer(1)]
    where = {s: k for k, s in enumerate(closed)}
    rows = [[QQ(0)] * m for _ in range(m)]
    for (a, b), rate in Q.items():
        if a in where and b in where:
            rows[where[b]][where[a]] = QQ(int(rate.p), int(rate.q))  # transposed
    rows[m - 1] = [QQ(1)] * m
    system = DomainMatrix(rows, (m, m), QQ)
    rhs = DomainMatrix([[QQ(0)] for _ in range(m - 1)] + [[QQ(1)]], (m, 1), QQ)
    solution = system.lu_solve(rhs).to_list()
    return [sp.Rational(int(x[0].numerator), int(x[0].denominator)) for x in solution]


def _verify(Q: dict[tuple[int, int], Any], pi: list[sp.Rational], n: int) -> None:
    """``pi Q = 0`` and ``sum(pi) = 1`` exactly, every entry in [0, 1]."""
    flow = [sp.Integer(0)] * n
    for (a, b), rate in Q.items():
        flow[b] += pi[a] * rate
    if any(f != 0 for f in flow) or sum(pi) != 1 or any(p < 0 or p > 1 for p in pi):
        raise NumericalFailure("exact stationary solve: the solution does not satisfy "
                               "pi Q = 0, sum(pi) = 1 exactly (a bug in symq)")


def _outputs(chain: MarkovChain, values: dict[sp.Symbol, sp.Rational],
             states: list[tuple[int, ...]], pi: list[sp.Rational],
             fired: list[tuple[int, int, Any]]) -> dict[str, sp.Rational]:
    result: dict[str, sp.Rational] = {}
    symbols = chain.variable_symbols
    tables = [{**values, **{s: sp.Integer(x) for s, x in zip(symbols, state, strict=True)}}
              for state in states]
    for name, out in chain.outputs.items():
        where = f"outputs.{name}"
        if out.kind == "throughput":
            total = sum((pi[i] * r for j, i, r in fired if chain.jumps[j].label == out.label),
                        sp.Integer(0))
        elif out.kind == "probability":
            total = sum((p for p, t, s in zip(pi, tables, states, strict=True)
                         if p != 0 and _truth(where, out.expr, t, chain.describe(s))),
                        sp.Integer(0))
        else:
            total = sum((p * _number(where, out.expr, t, chain.describe(s))
                         for p, t, s in zip(pi, tables, states, strict=True) if p != 0),
                        sp.Integer(0))
        result[name] = sp.Rational(total)
    return result
