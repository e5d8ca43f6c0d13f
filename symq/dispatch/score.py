r"""User-defined index (score) policies for dispatching, compiled for the numba kernels.

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

Every score is compiled for the one signature :data:`SCORE_SIGNATURE` and passed to the
kernels as a first-class function of that type (:data:`SCORE_TYPE`): the simulator
(:func:`~symq.dispatch.simulation.simulate_dispatch`), the decisions
(:meth:`~symq.dispatch.policies.BoundPolicy.decide`) and the value-iteration decision tables
(:func:`~symq.dispatch.vi.evaluate_policy`) call it from machine code, with no Python call per
job, and those kernels are compiled once and cached on disk whatever the score.

Examples
--------
>>> from symq.dispatch.sizes import exponential
>>> pol = score_policy("mine", "u + beta*x", {"beta": 0.5})
>>> pol.bind(2, 0.5, exponential()).decide([[1.0, 1.2], [1.0, 3.0]], [1.0, 2.0]).tolist()
[0, 0]
>>> sorted(pol.with_values(beta=2.0).params.items())
[('beta', 2.0)]
"""

from __future__ import annotations

import dataclasses
import functools
import keyword
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
import sympy as sp
from numba import types
from numba.np.unsafe.ndarray import to_fixed_tuple

from symq.core.compiler import compile as compile_expr
from symq.core.errors import MISSING, InvalidParameter
from symq.core.formula import parse_formula
from symq.core.parameters import Parameter, real_value

from . import exact as _exact
from .policies import SCORE, BoundPolicy, DispatchPolicy

__all__ = ["SCORE_SIGNATURE", "SCORE_TYPE", "STATE_SYMBOLS", "MODEL_SYMBOLS", "ScorePolicy",
           "score_policy", "decide_scores", "score_argmin"]

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
_SIGNATURE_TEXT = ("a score s(u, n, x, i, p) -> float of four floats and a float64 array p = "
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


def decide_scores(pol: BoundPolicy, U: np.ndarray, N: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Servers (0-based) chosen by the bound score policy ``pol`` for rows of ``U, N, X``.

    Raises
    ------
    InvalidParameter
        If the score is NaN at one of the states.
    """
    out = _decide_kernel()(pol.score, pol.score_params, np.ascontiguousarray(U, dtype=float),
                           np.ascontiguousarray(N, dtype=np.int64),
                           np.ascontiguousarray(X, dtype=float))
    if out.size and out.min() < 0:
        k = int(np.argmin(out))
        raise nan_score(pol.name, f"u={U[k].tolist()}, n={N[k].tolist()}, x={float(X[k])!r}")
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


def _compile_formula(expr: sp.Expr, names: tuple[str, ...]) -> Any:
    """Compile a score expression (symbols by name) into a :data:`SCORE_SIGNATURE` function."""
    ours = {s: sp.Symbol(s, positive=True) for s in (*STATE_SYMBOLS, *MODEL_SYMBOLS, *names)}
    if not isinstance(expr, sp.Basic):  # text is parsed by parse_formula first, never sympified
        raise TypeError(f"_compile_formula takes a sympy expression, not {type(expr).__name__}")
    expr = expr.xreplace({s: ours[s.name] for s in expr.free_symbols})
    args = [ours[s] for s in (*STATE_SYMBOLS, *MODEL_SYMBOLS, *names)]
    compiled = compile_expr(expr, args, backend="numba")
    return _wrapped(compiled.function, len(MODEL_SYMBOLS) + len(names))


def _compile_function(label: str, score: Any, n_params: int) -> Any:
    """A numba (or Python) function compiled for :data:`SCORE_SIGNATURE` and tried once."""
    shown = getattr(score, "__name__", repr(score))
    dispatcher = score if isinstance(score, numba.core.registry.CPUDispatcher) else None
    try:
        if dispatcher is None:
            dispatcher = numba.njit(score)
        dispatcher.compile(SCORE_SIGNATURE.args)
        value = dispatcher(1.0, 1.0, 1.0, 1.0, np.ones(len(MODEL_SYMBOLS) + n_params))
    except Exception as exc:  # numba's typing and lowering errors have no common base
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameter(label, shown, _SIGNATURE_TEXT,
                               f"numba cannot compile it for that signature: {first}") from None
    if not isinstance(value, float):
        raise InvalidParameter(label, shown, _SIGNATURE_TEXT, f"it returned {value!r}")
    return dispatcher


def _parameter_names(label: str, parameters: Any) -> tuple[tuple[str, ...], dict[str, float]]:
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


@dataclass(frozen=True)
class ScorePolicy(DispatchPolicy):
    """An index policy: the job goes to :math:`\\arg\\min_i s(u_i, n_i, x, i)` (ties lowest).

    Built by :func:`score_policy`.  ``params`` holds the values of the declared parameters
    (:meth:`with_values` changes them without compiling again); :meth:`bind` fixes ``m``,
    ``rho`` and the size law like every :class:`~symq.dispatch.policies.DispatchPolicy`.

    Attributes
    ----------
    name : str
    params : dict
        Values of the declared parameters given so far.
    score : numba function
        The compiled score of :data:`SCORE_SIGNATURE`.
    parameters : tuple of str
        The declared parameters, in the order of ``p[3:]``.
    uses_counts : bool
        Whether the score reads ``n`` (then the simulator tracks job counts and value
        iteration, whose state holds no counts, cannot evaluate it).
    expr : sympy.Expr or None
        The score formula (None for a Python function).
    description : str
    """

    score: Any = field(default=None, repr=False, compare=False)
    parameters: tuple[str, ...] = ()
    uses_counts: bool = True
    expr: Any = None
    description: str = ""

    def _repr_markdown_(self) -> str:  # Jupyter
        from symq.core.display import markdown

        u, n, x, i = sp.symbols("u_i n_i x i")
        formula = [] if self.expr is None else [("", sp.Eq(
            sp.Function("s")(u, n, x, i), self.expr.xreplace(
                {v: {"u": u, "n": n}.get(v.name, v) for v in self.expr.free_symbols}),
            evaluate=False))]
        rows = [("description", self.description), ("parameters", ", ".join(self.parameters)),
                *self.params.items(), ("uses_counts", self.uses_counts)]
        return markdown(f"**ScorePolicy** {self.name}: the job goes to the server of least "
                        "score", [(k, v) for k, v in rows if v != ""], formula)

    def with_values(self, **values: Any) -> ScorePolicy:
        """The same compiled score with other values of its declared parameters."""
        for key, value in values.items():
            if key not in self.parameters:
                raise InvalidParameter(key, value, "one of the score's parameters: "
                                       + (", ".join(self.parameters) or "(none declared)"))
            values[key] = real_value(key, value, "a finite real number")
        return dataclasses.replace(self, params={**self.params, **values})

    def bind(self, m: int, rho: float, sizes: Any) -> BoundPolicy:
        """Fix ``m``, ``rho`` and the size law; ``p = (lam, rho, m, parameter values...)``.

        Raises
        ------
        InvalidParameter
            A declared parameter without a value, bad ``m`` or sizes.
        StabilityError
            ``rho >= 1``.
        """
        m, rho, sizes, lam = _exact._check_common(m, rho, sizes)
        missing = [name for name in self.parameters if name not in self.params]
        if missing:
            raise InvalidParameter(missing[0], MISSING, "a finite real number",
                                   f"a value of the parameter {missing[0]} of the score policy "
                                   f"{self.name!r} (with_values({missing[0]}=...))")
        p = np.array([lam, rho, m, *(self.params[k] for k in self.parameters)], dtype=float)
        return BoundPolicy(self.name, m, rho, lam, SCORE, np.empty(0), np.full(m, lam / m),
                           np.full(m, rho), np.zeros((2, 2)), score=self.score, score_params=p,
                           counts=self.uses_counts)


def score_policy(name: str, score: Any, parameters: Any = (), *,
                 uses_counts: bool | None = None, description: str = "",
                 label: str = "score", parameters_label: str = "parameters") -> ScorePolicy:
    """A user-defined index policy from a score formula or a numba function.

    Parameters
    ----------
    name : str
        The policy's name (shown in results).
    score : str, sympy.Expr or callable
        Formula text in ``u, n, x, i, lam, rho, m`` and the declared parameters (``i`` is the
        1-based server index; ``^`` is a power), a sympy expression in those symbols, or a
        numba function ``score(u, n, x, i, p)`` (a plain Python function is compiled with
        ``numba.njit``) with ``p = (lam, rho, m, parameters...)`` a float64 array.
    parameters : sequence of str (or Parameter), or mapping of str to float
        The declared parameters: names, or names with values (later values through
        :meth:`ScorePolicy.with_values`).
    uses_counts : bool, optional
        Whether the score reads ``n``: found from a formula (giving another value is an error);
        for a function ``True`` unless stated (the simulator then tracks the job counts and
        value iteration refuses the policy).
    description : str
    label, parameters_label : str
        The names of ``score`` and ``parameters`` in error messages (a claims file passes
        ``models.NAME.score`` and ``models.NAME.parameters``).

    Returns
    -------
    ScorePolicy

    Raises
    ------
    InvalidParameter
        Formula text outside the whitelist (attribute access, calls other than the elementary
        functions, ...) or with a symbol that is neither a state or model symbol nor declared;
        a function numba cannot compile for :data:`SCORE_SIGNATURE`; a bad parameter name.
        The error names ``label``.

    Examples
    --------
    >>> import numba
    >>> @numba.njit
    ... def least_work(u, n, x, i, p):
    ...     return u
    >>> score_policy("lwl2", least_work, uses_counts=False).uses_counts
    False
    """
    names, values = _parameter_names(parameters_label, parameters)
    symbols = (*STATE_SYMBOLS, *MODEL_SYMBOLS, *names)
    if isinstance(score, str):
        expr = parse_formula(label, score, symbols)
    elif isinstance(score, sp.Basic):
        if not isinstance(score, sp.Expr):
            raise InvalidParameter(label, score, "an expression in " + ", ".join(symbols))
        unknown = sorted(str(s) for s in score.free_symbols if str(s) not in symbols)
        if unknown or score.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
            reason = ("unknown name " + ", ".join(unknown)) if unknown else "not finite"
            raise InvalidParameter(label, score, "an expression in " + ", ".join(symbols),
                                   reason)
        expr = score
    elif callable(score):
        expr = None
    else:
        raise InvalidParameter(label, score, "formula text, a sympy expression or "
                               + _SIGNATURE_TEXT)
    if expr is not None:
        reads_n = "n" in {s.name for s in expr.free_symbols}
        if uses_counts is not None and bool(uses_counts) != reads_n:
            raise InvalidParameter(f"{label}.uses_counts", uses_counts,
                                   f"{reads_n} (or omitted) for this formula",
                                   "a formula's use of n is read from the formula")
        if expr.has(sp.I):
            raise InvalidParameter(label, str(expr), "a real-valued expression")
        compiled = _compile_formula(expr, names)
        uses = reads_n
    else:
        compiled = _compile_function(label, score, len(names))
        uses = True if uses_counts is None else bool(uses_counts)
    return ScorePolicy(name=str(name), params=values, score=compiled, parameters=names,
                       uses_counts=uses, expr=expr, description=str(description))
