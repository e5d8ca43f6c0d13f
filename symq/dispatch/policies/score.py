r"""Scores of user-defined index policies: their one signature, compilation and decision kernels.

An *index policy* gives every server ``i`` a score :math:`s(u_i, n_i, x, i)` from its backlog
(unfinished work) :math:`u_i`, its number of jobs :math:`n_i`, the arriving job's size
:math:`x` and its index ``i`` (1-based, ``i = 1..m``); the job goes to
:math:`\arg\min_i s(u_i, n_i, x, i)`, ties to the lowest index.  LWL is the score ``u``, JSQ
(with ties to the lowest index instead of at random) the score ``n``, the FPI policy of
Hyytiä & Righter (arXiv 2402.08142, Section 4) the score
``u + lam/m*x*(2*u + x)/(2*(1 - rho))`` (the constant ``x`` dropped).

A score is given

* as formula text in ``u, n, x, i``, the model symbols ``lam`` (total arrival rate
  :math:`\rho m / E[X]`), ``rho`` (load per server), ``m`` and the declared parameters, parsed by
  :func:`symq.core.formula.parse_formula` (a whitelisted syntax tree, never evaluated), or as a
  sympy expression in those symbols; it is compiled by :func:`symq.core.compile` (numba backend);
* or, from Python, as a numba function (or a Python function numba can compile)
  ``score(u, n, x, i, p) -> float`` of four floats and a float64 array
  ``p = (lam, rho, m, declared parameters...)`` (:data:`SCORE_SIGNATURE`).

This module compiles a score (:func:`parameter_names`, :func:`compile_formula`,
:func:`compile_function`) and decides with it (:func:`score_argmin`, :func:`decide_scores`);
:func:`~symq.dispatch.policies.policy.score_policy` wraps it into a
:class:`~symq.dispatch.policies.policy.ScorePolicy`.  Every score is compiled for the one
signature :data:`SCORE_SIGNATURE` and passed to the kernels as a first-class function of that
type (:data:`SCORE_TYPE`): the simulator
(:func:`~symq.dispatch.simulation.simulate.simulate_dispatch`), the decisions
(:meth:`~symq.dispatch.policies.bound.BoundPolicy.decide`) and the value-iteration decision
tables (:func:`~symq.dispatch.vi.solvers.evaluate_policy`) call it from machine code, with no
Python call per job, and those kernels are compiled once and cached on disk whatever the score.

Examples
--------
>>> import numpy as np
>>> from symq.core.formula import parse_formula
>>> lwl = compile_formula(parse_formula("score", "u + x", STATE_SYMBOLS), ())
>>> p, u, n = np.array([1.0, 0.5, 2.0]), np.array([3.0, 1.0]), np.zeros(2, np.int64)
>>> int(score_argmin(lwl, p, u, n, 1.0))     # lam, rho, m = 1, 0.5, 2; backlogs 3 and 1
1
"""

from __future__ import annotations

import functools
import keyword
from collections.abc import Mapping
from typing import Any

import numba
import numpy as np
import sympy as sp
from numba import types
from numba.np.unsafe.ndarray import to_fixed_tuple

from symq.core.compiler import compile as compile_expr
from symq.core.errors import InvalidParameter
from symq.core.parameters import Parameter, real_value

__all__ = ["SCORE_SIGNATURE", "SCORE_TYPE", "STATE_SYMBOLS", "MODEL_SYMBOLS", "SIGNATURE_TEXT",
           "decide_scores", "score_argmin", "null_score", "nan_score", "parameter_names",
           "compile_formula", "compile_function"]

#: The one signature of a compiled score: ``s(u, n, x, i, p) -> float``.
SCORE_SIGNATURE = types.float64(types.float64, types.float64, types.float64, types.float64,
                                types.float64[::1])
#: The first-class function type the kernels take a score as.
SCORE_TYPE = types.FunctionType(SCORE_SIGNATURE)
#: Per-server state symbols of a score: backlog, job count, job size, 1-based server index.
STATE_SYMBOLS = ("u", "n", "x", "i")
#: Model symbols a score may use, the first entries of ``p``: total arrival rate, load per
#: server, number of servers.
MODEL_SYMBOLS = ("lam", "rho", "m")
_RESERVED = set(STATE_SYMBOLS) | set(MODEL_SYMBOLS) | {"pi", "E"}
#: The signature of a score as error messages state it.
SIGNATURE_TEXT = ("a score s(u, n, x, i, p) -> float of four floats and a float64 array p = "
                   "(lam, rho, m, parameters...)")


@numba.njit(cache=True, inline="always")
def score_argmin(score, p, u, cnt, x):  # pragma: no cover - numba
    """``argmin_k score(u[k], cnt[k], x, k + 1, p)`` (ties to the lowest ``k``); -1 on a NaN."""
    best = 0
    best_s = np.inf
    for k in range(u.shape[0]):
        s = score(u[k], float(cnt[k]), x, k + 1.0, p)
        if s != s:
            return -1
        if s < best_s:
            best_s = s
            best = k
    return best


def _decide_py(score, p, U, N, X):  # pragma: no cover - numba
    out = np.empty(X.shape[0], dtype=np.int64)
    for k in range(X.shape[0]):
        out[k] = score_argmin(score, p, U[k], N[k], X[k])
    return out


@functools.cache
def _decide_kernel() -> Any:
    """The decision kernel, typed for :data:`SCORE_TYPE` (compiled once, cached on disk)."""
    sig = types.int64[::1](SCORE_TYPE, types.float64[::1], types.float64[:, ::1],
                           types.int64[:, ::1], types.float64[::1])
    return numba.njit(sig, cache=True)(_decide_py)


def _null_score_py(u, n, x, i, p):  # pragma: no cover - numba
    return 0.0


@functools.cache
def null_score() -> Any:
    """A constant score of :data:`SCORE_SIGNATURE` (what kernels get for a built-in policy)."""
    return numba.njit(SCORE_SIGNATURE, cache=True)(_null_score_py)


def decide_scores(name: str, score: Any, params: np.ndarray, U: np.ndarray, N: np.ndarray,
                  X: np.ndarray) -> np.ndarray:
    """Servers (0-based) chosen by the compiled ``score`` with parameters ``params`` (a bound
    score policy's, named ``name`` in messages) for rows of ``U, N, X``.

    Raises
    ------
    InvalidParameter
        If the score is NaN at one of the states.
    """
    out = _decide_kernel()(score, params, np.ascontiguousarray(U, dtype=float),
                           np.ascontiguousarray(N, dtype=np.int64),
                           np.ascontiguousarray(X, dtype=float))
    if out.size and out.min() < 0:
        k = int(np.argmin(out))
        raise nan_score(name, f"u={U[k].tolist()}, n={N[k].tolist()}, x={float(X[k])!r}")
    return out


def nan_score(name: str, where: str) -> InvalidParameter:
    """The error of a score that came out NaN (at the state ``where``)."""
    return InvalidParameter("policy", name, "a score policy whose score is a number at every "
                            "state", f"the score is NaN at {where}")


# --------------------------------------------------------------------------------------------
# compiling a score
# --------------------------------------------------------------------------------------------


@functools.cache
def _wrapped(function: Any, k: int) -> Any:
    """The compiled formula ``f(u, n, x, i, p_0, ..., p_{k-1})`` as a :data:`SCORE_SIGNATURE`
    function of the array ``p`` (unpacked into a tuple of the static length ``k``)."""
    def score(u, n, x, i, p):  # pragma: no cover - numba
        return function(u, n, x, i, *to_fixed_tuple(p, k))
    return numba.njit(SCORE_SIGNATURE)(score)


def compile_formula(expr: sp.Expr, names: tuple[str, ...]) -> Any:
    """Compile a score expression (symbols by name) into a :data:`SCORE_SIGNATURE` function."""
    ours = {s: sp.Symbol(s, positive=True) for s in (*STATE_SYMBOLS, *MODEL_SYMBOLS, *names)}
    if not isinstance(expr, sp.Basic):  # text is parsed by parse_formula first, never sympified
        raise TypeError(f"compile_formula takes a sympy expression, not {type(expr).__name__}")
    expr = expr.xreplace({s: ours[s.name] for s in expr.free_symbols})
    args = [ours[s] for s in (*STATE_SYMBOLS, *MODEL_SYMBOLS, *names)]
    compiled = compile_expr(expr, args, backend="numba")
    return _wrapped(compiled.function, len(MODEL_SYMBOLS) + len(names))


def compile_function(label: str, score: Any, n_params: int) -> Any:
    """A numba (or Python) function compiled for :data:`SCORE_SIGNATURE` and tried once."""
    shown = getattr(score, "__name__", repr(score))
    dispatcher = score if isinstance(score, numba.core.registry.CPUDispatcher) else None
    try:
        if dispatcher is None:
            dispatcher = numba.njit(score)
        dispatcher.compile(SCORE_SIGNATURE.args)
        value = dispatcher(1.0, 1.0, 1.0, 1.0, np.ones(len(MODEL_SYMBOLS) + n_params))
    except Exception as exc:  # noqa: BLE001 numba's typing and lowering errors have no common base
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameter(label, shown, SIGNATURE_TEXT,
                               f"numba cannot compile it for that signature: {first}") from None
    if not isinstance(value, float):
        raise InvalidParameter(label, shown, SIGNATURE_TEXT, f"it returned {value!r}")
    return dispatcher


def parameter_names(label: str, parameters: Any) -> tuple[tuple[str, ...], dict[str, float]]:
    """Names (in order) and given values of the declared parameters."""
    if isinstance(parameters, Mapping):
        items = list(parameters.items())
    else:
        items = [(getattr(p, "name", p), None) for p in parameters]
    names: list[str] = []
    values: dict[str, float] = {}
    for name, value in items:
        if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            raise InvalidParameter(label, name, "parameter names that are "
                                   "identifiers")
        if name in _RESERVED or name in names:
            raise InvalidParameter(label, name, "a name other than "
                                   + ", ".join(sorted(_RESERVED)) + " and the other parameters",
                                   "it would hide a symbol of the score")
        names.append(name)
        if value is not None and not isinstance(value, Parameter):
            values[name] = real_value(name, value, "a finite real number")
    return tuple(names), values
