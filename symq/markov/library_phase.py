"""Classic queues with phase-type and Markovian arrival laws, and a closed cyclic network.

The queues have an unbounded number in system ``n`` (the level) and a bounded phase ``p``: they
are level-independent quasi-birth-death chains, solved by
:func:`symq.markov.levels.qbd_stationary` (Neuts' matrix-geometric form, Neuts 1981, *Matrix-
Geometric Solutions in Stochastic Models*, ch. 3).  The matrices of a phase-type (PH) law or of a
Markovian arrival process (MAP) are *numbers* fixed when the chain is built (as the sizes of
:mod:`symq.markov.library` are); one rate stays a symbolic parameter given when solving:

* :func:`mph1` (M/PH/1): Poisson arrivals at rate ``lam``; the service time is PH(``alpha``,
  ``T``) as given (its time unit is the chain's);
* :func:`phm1` (PH/M/1): interarrival times PH(``alpha``, ``T``) as given; exponential service
  at rate ``mu``;
* :func:`mapm1` (MAP/M/1): arrivals by the MAP (``D0``, ``D1``) as given; exponential service at
  rate ``mu``.

A PH law (``alpha``, ``T``) is the time to absorption of a CTMC started in phase ``i`` with
probability ``alpha[i]`` whose transient phases move by the sub-generator ``T``; the exit rates
are ``t = -T 1``.  A MAP moves its phase by ``D0`` without an arrival and by ``D1`` with one;
``D0 + D1`` is a generator (Latouche & Ramaswami 1999, *Introduction to Matrix Analytic Methods*,
ch. 2-3).  Phases are numbered from 1; ``p = 0`` is the idle server of :func:`mph1`.

Every queue reports ``EN`` (mean number in system, level included), ``EN_queue`` (mean number
waiting), ``P_busy`` (the stationary probability that the server is busy: ``P(n > 0)``; for
M/PH/1 it is also the probability that an arrival waits, by PASTA), ``X`` (throughput of
departures, label ``serve``) and ``X_in`` (throughput of arrivals, label ``arrive``).

:func:`closed_cyclic` is a closed network of ``M`` single-server exponential stations in a cycle
(rates ``mu1 .. muM``) with ``N`` customers: a finite chain (Gordon & Newell 1967, product form).

Examples
--------
An M/E2/1 queue (Erlang-2 service of mean 1) at load 1/2: the Pollaczek-Khinchine mean
``rho + rho^2 (1 + 1/2) / (2 (1 - rho)) = 7/8``.

>>> from symq.markov.levels import qbd_stationary
>>> me21 = mph1([1, 0], [[-2, 2], [0, -2]])
>>> me21.parameters, round(qbd_stationary(me21, {"lam": 0.5})["EN"], 12)
(('lam',), 0.875)
>>> closed_cyclic(3, 2)
MarkovChain(name='closed cycle N=3 M=2', variables=(n1 in [0, 3]), jumps=2, parameters=(mu1, mu2))
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value

from .chain import Jump, MarkovChain, StateVariable

__all__ = ["mph1", "phm1", "mapm1", "closed_cyclic", "MAX_PHASES"]

#: Most phases of a PH law or a MAP given to a builder (the jumps grow as its square).
MAX_PHASES = 20
#: Relative slack of the row-sum rules (a row of a generator sums to 0 within it).
_SLACK = 1e-9


def _entries(name: str, value: Any, ndim: int) -> tuple[np.ndarray, list[Any]]:
    """``value`` as a float array of ``ndim`` dimensions, and its entries as exact sympy numbers
    where they are written exactly (int, Fraction) and as floats otherwise."""
    shape = "a vector of numbers" if ndim == 1 else "a square matrix of numbers (a list of rows)"
    if isinstance(value, (str, bytes)):
        raise InvalidParameter(name, value, shape)
    try:
        array = np.array(value, dtype=object)
        numbers = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, shape) from None
    if numbers.ndim != ndim or numbers.size == 0 or (ndim == 2 and
                                                     numbers.shape[0] != numbers.shape[1]):
        raise InvalidParameter(name, value, shape, f"its shape is {numbers.shape}")
    if numbers.shape[0] > MAX_PHASES:
        raise InvalidParameter(name, value, f"at most {MAX_PHASES} phases",
                               f"it has {numbers.shape[0]}")
    if not np.all(np.isfinite(numbers)) or any(isinstance(x, (bool, np.bool_))
                                               for x in array.flat):
        raise InvalidParameter(name, value, shape + ", every entry finite")
    exact = [_exact(x) for x in array.flat]
    return numbers, exact


def _exact(x: Any) -> Any:
    if isinstance(x, (int, np.integer)):
        return sp.Integer(int(x))
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    if isinstance(x, sp.Rational):
        return x
    return sp.Float(float(x))


def _rows(name: str, value: Any, rule: str, sums: np.ndarray, ok: np.ndarray) -> None:
    bad = np.flatnonzero(~ok)
    if bad.size:
        i = int(bad[0])
        raise InvalidParameter(name, value, rule, f"row {i + 1} sums to {sums[i]:.6g}")


def _nonsingular(name: str, value: Any, matrix: np.ndarray, rule: str, reason: str) -> None:
    """Refuse ``matrix`` (entries >= 0 off the diagonal, rows <= 0) unless ``-matrix^-1 1`` is
    finite and positive: from every phase the process leaves the set of phases."""
    try:
        means = np.linalg.solve(-matrix, np.ones(matrix.shape[0]))
    except np.linalg.LinAlgError:
        means = np.full(matrix.shape[0], np.inf)
    if not np.all(np.isfinite(means)) or np.any(means <= 0):
        raise InvalidParameter(name, value, rule, reason)


def _off_diagonal(name: str, value: Any, matrix: np.ndarray, what: str) -> None:
    off = matrix - np.diag(np.diag(matrix))
    if np.any(off < 0):
        i, j = (int(k) for k in np.argwhere(off < 0)[0])
        raise InvalidParameter(name, value, what, f"the entry ({i + 1}, {j + 1}) = "
                               f"{matrix[i, j]:.6g} is negative off the diagonal")


def _phase_type(alpha: Any, T: Any) -> tuple[np.ndarray, list[Any], np.ndarray, list[Any],
                                              list[Any]]:
    """Check a PH law: ``alpha`` and ``T`` as floats and as exact entries (where written
    exactly, row-major), and the exit rates ``-T 1``."""
    a, a_exact = _entries("alpha", alpha, 1)
    t, t_exact = _entries("T", T, 2)
    m = a.size
    if t.shape[0] != m:
        raise InvalidParameter("T", T, f"a {m} x {m} matrix (alpha has {m} phases)",
                               f"its shape is {t.shape}")
    if np.any(a < 0) or abs(a.sum() - 1) > _SLACK:
        raise InvalidParameter("alpha", alpha, "a probability vector: entries >= 0 summing to 1",
                               f"it sums to {a.sum():.6g}" if np.all(a >= 0)
                               else "an entry is negative")
    what = "a sub-generator: entries >= 0 off the diagonal, rows summing to <= 0, absorption " \
           "reached from every phase"
    _off_diagonal("T", T, t, what)
    sums = t.sum(axis=1)
    scale = np.abs(t).max()
    _rows("T", T, what, sums, sums <= _SLACK * scale)
    _nonsingular("T", T, t, what, "T is singular: some phases never reach absorption")
    exits = [-sum(t_exact[i * m:(i + 1) * m], sp.Integer(0)) for i in range(m)]
    return a, a_exact, t, t_exact, exits


def mph1(alpha: Sequence[float], T: Sequence[Sequence[float]]) -> MarkovChain:
    """M/PH/1: Poisson arrivals at rate ``lam`` (a parameter), one server whose service times are
    PH(``alpha``, ``T``), FCFS; ``n`` is the number in system, ``p`` the phase of the job in
    service (``0`` when idle).

    Parameters
    ----------
    alpha : sequence of numbers
        The initial law of the service phases: entries ``>= 0`` summing to 1.
    T : square matrix (list of rows)
        The sub-generator: entries ``>= 0`` off the diagonal, rows summing to ``<= 0``, and
        nonsingular (every phase reaches absorption).  The mean service time is
        ``alpha (-T)^-1 1``.

    Returns
    -------
    MarkovChain
        A QBD chain (solve it with :func:`symq.markov.qbd_stationary`), parameter ``lam``.

    Raises
    ------
    InvalidParameter
        Naming ``alpha`` or ``T`` and the rule broken.
    """
    a_num, a, numbers, t, exits = _phase_type(alpha, T)
    m = len(a)
    lam = sp.Symbol("lam")
    jumps = [Jump(lam * a[j], {"n": "1", "p": str(j + 1)}, guard="n == 0", label="arrive")
             for j in range(m) if a_num[j] != 0]
    jumps.append(Jump(lam, {"n": "n + 1"}, guard="n > 0", label="arrive"))
    for i in range(m):
        jumps += [Jump(t[i * m + j], {"p": str(j + 1)}, guard=f"p == {i + 1}")
                  for j in range(m) if j != i and numbers[i, j] != 0]
        if float(exits[i]) == 0:
            continue
        jumps += [Jump(exits[i] * a[j], {"n": "n - 1", "p": str(j + 1)},
                       guard=f"p == {i + 1} and n > 1", label="serve")
                  for j in range(m) if a_num[j] != 0]
        jumps.append(Jump(exits[i], {"n": "0", "p": "0"}, guard=f"p == {i + 1} and n == 1",
                          label="serve"))
    return MarkovChain(
        [StateVariable("n", 0, None), StateVariable("p", 0, m)], jumps, parameters=("lam",),
        outputs=_queue_outputs(), name=f"M/PH/1 ({m} phases)")


def _queue_outputs() -> dict[str, str]:
    return {"EN": "n", "EN_queue": "max(n - 1, 0)", "P_busy": "n > 0",
            "X": "throughput:serve", "X_in": "throughput:arrive"}


def _map_queue(d0: list[Any], d1: list[Any], numbers0: np.ndarray, numbers1: np.ndarray,
               start: int, name: str) -> MarkovChain:
    """The MAP/M/1 chain of exact entries ``d0``, ``d1`` (row-major), service rate ``mu``."""
    m = numbers0.shape[0]
    jumps = []
    for i in range(m):
        jumps += [Jump(d0[i * m + j], {"p": str(j + 1)}, guard=f"p == {i + 1}")
                  for j in range(m) if j != i and numbers0[i, j] != 0]
        jumps += [Jump(d1[i * m + j], {"n": "n + 1", "p": str(j + 1)}, guard=f"p == {i + 1}",
                       label="arrive")
                  for j in range(m) if numbers1[i, j] != 0]
    jumps.append(Jump("mu", {"n": "n - 1"}, guard="n > 0", label="serve"))
    return MarkovChain(
        [StateVariable("n", 0, None), StateVariable("p", 1, m)], jumps, parameters=("mu",),
        initial={"n": 0, "p": start}, outputs=_queue_outputs(), name=name)


def phm1(alpha: Sequence[float], T: Sequence[Sequence[float]]) -> MarkovChain:
    """PH/M/1: interarrival times PH(``alpha``, ``T``) (a renewal process), one exponential
    server at rate ``mu`` (a parameter); ``n`` is the number in system, ``p`` the phase of the
    interarrival time in progress (1 to ``m``).

    Parameters
    ----------
    alpha, T
        The interarrival law, with the rules of :func:`mph1`; the arrival rate is
        ``1 / alpha (-T)^-1 1``.

    Returns
    -------
    MarkovChain
        A QBD chain, parameter ``mu``; it starts in the likeliest initial phase.

    Raises
    ------
    InvalidParameter
        Naming ``alpha`` or ``T`` and the rule broken.
    """
    a_num, a, numbers, t, exits = _phase_type(alpha, T)
    m = len(a)
    d1 = [exits[i] * a[j] for i in range(m) for j in range(m)]
    d1_num = np.array([float(x) for x in d1]).reshape(m, m)
    start = int(np.argmax(a_num)) + 1
    return _map_queue(t, d1, numbers, d1_num, start, f"PH/M/1 ({m} phases)")


def mapm1(D0: Sequence[Sequence[float]], D1: Sequence[Sequence[float]]) -> MarkovChain:
    """MAP/M/1: arrivals by the Markovian arrival process (``D0``, ``D1``), one exponential
    server at rate ``mu`` (a parameter); ``n`` is the number in system, ``p`` the MAP's phase
    (1 to ``m``).

    Parameters
    ----------
    D0 : square matrix (list of rows)
        Phase moves without an arrival: entries ``>= 0`` off the diagonal, nonsingular (an
        arrival comes from every phase).
    D1 : square matrix of the same size
        Phase moves with an arrival: entries ``>= 0``, not all zero; ``D0 + D1`` is a generator
        (rows summing to 0).  The arrival rate is ``theta D1 1``, ``theta`` the stationary law
        of ``D0 + D1``.

    Returns
    -------
    MarkovChain
        A QBD chain, parameter ``mu``; it starts in phase 1 with an empty queue.

    Raises
    ------
    InvalidParameter
        Naming ``D0`` or ``D1`` and the rule broken.
    """
    d0, d0_exact = _entries("D0", D0, 2)
    d1, d1_exact = _entries("D1", D1, 2)
    if d1.shape != d0.shape:
        raise InvalidParameter("D1", D1, f"a {d0.shape[0]} x {d0.shape[0]} matrix (as D0)",
                               f"its shape is {d1.shape}")
    _off_diagonal("D0", D0, d0, "entries >= 0 off the diagonal")
    if np.any(d1 < 0) or not np.any(d1 > 0):
        raise InvalidParameter("D1", D1, "a matrix of entries >= 0, not all zero",
                               "an entry is negative" if np.any(d1 < 0) else "no arrival")
    sums = (d0 + d1).sum(axis=1)
    scale = max(np.abs(d0).max(), np.abs(d1).max())
    _rows("D1", D1, "entries making D0 + D1 a generator (its rows sum to 0)", sums,
          np.abs(sums) <= _SLACK * scale)
    _nonsingular("D0", D0, d0, "a nonsingular matrix",
                 "D0 is singular: from some phase no arrival ever comes")
    return _map_queue(d0_exact, d1_exact, d0, d1, 1, f"MAP/M/1 ({d0.shape[0]} phases)")


def closed_cyclic(N: int, M: int) -> MarkovChain:
    """A closed cyclic network: ``N`` customers move through ``M`` single-server exponential
    stations in turn, station ``i`` serving at rate ``mu<i>`` (parameters ``mu1 .. muM``).

    The state is the numbers ``n1 .. n(M-1)`` at the first ``M - 1`` stations; station ``M``
    holds the rest, ``N - (n1 + ... + n(M-1))`` (so every state is reachable and no guard
    constrains the sum).  Outputs: ``EN1 .. ENM`` (mean numbers at each station), ``U1 .. UM``
    (the probability that station ``i`` is busy) and ``X`` (the throughput of the cycle: the
    departures from station ``M``, label ``serve<M>``; every station has the same).

    Parameters
    ----------
    N : int
        Customers, ``>= 1``.
    M : int
        Stations, ``>= 2``.

    Returns
    -------
    MarkovChain
        A finite chain of ``C(N + M - 1, M - 1)`` states.
    """
    N = integer_value("N", N, 1)
    M = integer_value("M", M, 2)
    names = [f"n{i}" for i in range(1, M)]
    rest = f"{N} - ({' + '.join(names)})"
    jumps = [Jump(f"mu{i}", {f"n{i}": f"n{i} - 1", **({f"n{i + 1}": f"n{i + 1} + 1"}
                                                     if i < M - 1 else {})},
                  guard=f"n{i} > 0", label=f"serve{i}") for i in range(1, M)]
    jumps.append(Jump(f"mu{M}", {"n1": "n1 + 1"}, guard=f"{rest} > 0", label=f"serve{M}"))
    outputs = {f"EN{i}": f"n{i}" for i in range(1, M)}
    outputs[f"EN{M}"] = rest
    outputs.update({f"U{i}": f"n{i} > 0" for i in range(1, M)})
    outputs[f"U{M}"] = f"{rest} > 0"
    outputs["X"] = f"throughput:serve{M}"
    return MarkovChain(
        [StateVariable(n, 0, N) for n in names], jumps,
        parameters=tuple(f"mu{i}" for i in range(1, M + 1)), initial={names[0]: N},
        outputs=outputs, name=f"closed cycle N={N} M={M}")
