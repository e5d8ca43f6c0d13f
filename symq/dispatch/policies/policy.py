r"""Dispatching policies as objects: :class:`DispatchPolicy` (a built-in policy by name) and
:class:`ScorePolicy` (a user-defined index policy), and how each binds to a model.

:meth:`DispatchPolicy.bind` fixes ``m``, the load :math:`\rho`, the size law and the server
speeds and returns a :class:`~symq.dispatch.policies.bound.BoundPolicy` (SITA thresholds from
:mod:`~symq.dispatch.policies.exact`, stability of static policies with speeds from
:mod:`~symq.dispatch.policies.speeds`, a value table checked for ``lookup``).  :func:`score_policy`
compiles a score (:mod:`~symq.dispatch.policies.score`) into a :class:`ScorePolicy`, the index
policy :math:`\arg\min_i s(u_i, n_i, x, i)` of Hyytiä & Righter (arXiv 2402.08142, Section 4).
The policies by name and what each means: :mod:`symq.dispatch.policies.named`.

Examples
--------
>>> from symq.laws import Exponential
>>> pol = score_policy("mine", "u + beta*x", {"beta": 0.5})
>>> pol.bind(2, 0.5, Exponential(1.0)).decide([[1.0, 1.2], [1.0, 3.0]], [1.0, 2.0]).tolist()
[0, 0]
>>> sorted(pol.with_values(beta=2.0).params.items())
[('beta', 2.0)]
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import ArrayLike

from symq.core.display import MarkdownDisplay
from symq.core.errors import MISSING, InvalidParameter
from symq.core.formula import parse_formula
from symq.core.parameters import real_value
from symq.laws import Distribution

from ..simplex import binomial_table, n_sorted_states
from ..sizes import as_sizes
from . import exact as _exact
from . import speeds as _speeds
from .bound import BoundPolicy
from .checks import check_model, check_thresholds
from .decisions import FPI, JIQ, JIQ_JSQ, JSQ, LOOKUP, LOOKUP_SIMPLEX, LWL, RND, RR, SCORE, SITA
from .score import (
    MODEL_SYMBOLS,
    SIGNATURE_TEXT,
    STATE_SYMBOLS,
    compile_formula,
    compile_function,
    parameter_names,
)

__all__ = ["DispatchPolicy", "ScorePolicy", "score_policy", "bind_policy"]


@dataclass(frozen=True)
class DispatchPolicy(MarkdownDisplay):
    """A dispatching policy by name with its parameters; :meth:`bind` makes it runnable."""

    name: str
    params: dict = field(default_factory=dict)

    def to_markdown(self) -> str:
        """The policy as Markdown: its name and parameters."""
        from symq.core.display import markdown

        return markdown(f"**{type(self).__name__}** {self.name}: a dispatching policy "
                        "(`.bind(m, rho, sizes)` makes it runnable)", list(self.params.items()))

    @classmethod
    def from_score(cls, name: str, score: Any, parameters: Any = (), *,
                   uses_counts: bool | None = None, description: str = "") -> DispatchPolicy:
        """A user-defined index policy: the job goes to the server of least ``score``.

        Shorthand for :func:`symq.dispatch.policies.policy.score_policy` (see there for ``score``,
        ``parameters`` and ``uses_counts``).

        Examples
        --------
        >>> from symq.laws import Exponential
        >>> pol = DispatchPolicy.from_score("lwl-ish", "u + beta*x", {"beta": 0.0})
        >>> pol.bind(2, 0.5, Exponential(1.0)).decide([[3.0, 1.0]], [1.0]).tolist()
        [1]
        """
        return score_policy(name, score, parameters, uses_counts=uses_counts,
                            description=description)

    def bind(self, m: int, rho: float, sizes: Any, speeds: ArrayLike | None = None
             ) -> BoundPolicy:
        """Fix the number of servers, the load, the size law and the server speeds.

        ``speeds`` (``m`` positive reals, default all 1) change what the policies mean as the
        module docstring states; the load is then :math:`\\rho = \\lambda E[X]/\\sum_i s_i`.

        Raises
        ------
        InvalidParameter
            Bad ``m``, thresholds, value table, speeds; a two-dimensional ``lookup`` table
            with ``m != 2``; unequal speeds with ``sita-e``, ``sita-opt``, ``fpi-sita``
            without thresholds or a packed (symmetric) ``lookup`` value.
        StabilityError
            ``rho >= 1``, or a static policy (SITA, RR with speeds, the base SITA of
            ``fpi-sita``) that overloads a server.
        """
        m, rho, sizes, lam = check_model(m, rho, sizes)
        spd = _speeds.check_speeds(speeds, m)
        key = self.name
        empty = np.empty(0)
        dummy_v = np.zeros((2, 2))
        if spd is None:
            rates = np.full(m, lam / m)
        else:
            lam = _speeds.arrival_rate(rho, sizes.mean(), spd, m)
            rates = lam * spd / spd.sum()
        loads = np.full(m, rho)
        cum = _speeds.cumulative_shares(spd)

        def make(code: int, thr: np.ndarray = empty, lam_i: np.ndarray = rates,
                 rho_i: np.ndarray = loads, v: np.ndarray = dummy_v, delta: float = 1.0,
                 c_M: float = 0.0, **more: Any) -> BoundPolicy:
            return BoundPolicy(key, m, rho, lam, code, np.ascontiguousarray(thr, dtype=float),
                               np.ascontiguousarray(lam_i, dtype=float),
                               np.ascontiguousarray(rho_i, dtype=float),
                               np.ascontiguousarray(v, dtype=float), float(delta), float(c_M),
                               speeds=spd, cum=cum, **more)

        if key in ("rnd", "rr", "jsq", "lwl", "jiq", "jiq-jsq", "fpi-rnd"):
            if key == "rr" and spd is not None:
                _speeds.check_stable(key, _speeds.static_loads(np.full(m, 1.0 / m), rho, spd, m),
                                     rho, "round-robin (1/m of the jobs to each server)")
            code = {"rnd": RND, "rr": RR, "jsq": JSQ, "lwl": LWL, "jiq": JIQ, "jiq-jsq": JIQ_JSQ,
                    "fpi-rnd": FPI}[key]
            return make(code, counts=key == "jiq-jsq")
        if key in ("sita", "sita-e", "sita-opt", "fpi-sita"):
            return self._bind_sita(m, rho, sizes, spd, make)
        return self._bind_lookup(m, spd, make)

    def _bind_sita(self, m: int, rho: float, sizes: Distribution, spd: np.ndarray | None,
                   make: Any) -> BoundPolicy:
        key, p = self.name, self.params
        given = p.get("thresholds", p.get("h"))
        if key in ("sita-e", "sita-opt") or (key == "fpi-sita" and given is None):
            if not _speeds.equal_speeds(spd):
                raise InvalidParameter("speeds", spd.tolist(), "equal speeds for policy "
                                       f"{key}" + (" without thresholds" if key == "fpi-sita"
                                                   else ""),
                                       "its thresholds are computed for identical servers; "
                                       "give thresholds (policy sita or fpi-sita)")
        if key == "sita-opt":
            thr = _exact.sita_opt_thresholds(m, rho, sizes)
        elif given is None:
            if key == "sita":
                raise InvalidParameter("thresholds", None,
                                       f"{m - 1} increasing SITA thresholds (h= for m=2)")
            thr = _exact.sita_e_thresholds(m, rho, sizes)
        else:
            thr = check_thresholds(m, given)
        _, lam_j, rho_j, _ = _exact.sita_class_stats(m, rho, sizes, thr)
        if spd is not None:   # class rates and work rates scale with lam = rho sum(s) / E[X]
            f = float(spd.sum()) / m
            lam_j, rho_j = lam_j * f, rho_j * f / spd
        what = (f"the base SITA with thresholds={np.asarray(thr).tolist()}" if key == "fpi-sita"
                else f"SITA with thresholds={np.asarray(thr).tolist()}")
        _speeds.check_stable(key, rho_j, rho, what)
        if key != "fpi-sita":
            return make(SITA, thr)
        return make(FPI, thr, lam_j, rho_j)

    def _bind_lookup(self, m: int, spd: np.ndarray | None, make: Any) -> BoundPolicy:
        p = self.params
        v = np.asarray(p["v"], dtype=float)
        if v.ndim == 2:
            if m != 2:
                raise InvalidParameter("m", m, "2 for the lookup policy with a two-dimensional "
                                       "table (a packed sorted-simplex value serves any m)")
            return make(LOOKUP, v=v, delta=p["delta"], c_M=p["c_M"],
                        tail_slope=float(p.get("tail_slope", 0.0)),
                        tail_cross=_cross(p))
        if p.get("m", m) != m:
            raise InvalidParameter("m", m, f"{p['m']}, the number of servers of the value "
                                   "the lookup policy was built from")
        N, N2 = p.get("N"), p.get("N2")
        if N is None:
            N = _packed_steps(v.size, m)
        if N < 1 or n_sorted_states(m, N, N2) != v.size:
            raise InvalidParameter("v", f"<array of length {v.size}>", "a packed "
                                   f"sorted-simplex value of length C(N+m, m) for m={m}, N >= 1"
                                   + (f" (N={N} gives {n_sorted_states(m, N, N2)}"
                                      + (f" with the cap N2={N2}" if N2 is not None else "")
                                      + ")" if p.get("N") is not None else ""))
        if not _speeds.equal_speeds(spd):
            raise InvalidParameter("speeds", spd.tolist(), "equal speeds for a lookup policy of a "
                                   "packed sorted-simplex value", "the value of identical "
                                   "servers is symmetric; unequal speeds need a full table")
        return make(LOOKUP_SIMPLEX, delta=p["delta"], c_M=p["c_M"], vp=v,
                    B=binomial_table(m, N, N2=N2), tail_slope=float(p.get("tail_slope", 0.0)),
                    tail_cross=_cross(p))


def _cross(params: dict[str, Any]) -> np.ndarray:
    """The lookup policy's cross term of the tail (empty: none)."""
    cross = params.get("tail_cross")
    return np.zeros(0) if cross is None else np.ascontiguousarray(cross, dtype=np.float64)


def _packed_steps(length: int, m: int) -> int:
    """The ``N`` with ``C(N+m, m) = length`` (or the first ``N`` beyond it)."""
    N = max(int((math.factorial(m) * length) ** (1.0 / m)) - m, 1)
    while N > 1 and n_sorted_states(m, N) > length:
        N -= 1
    while n_sorted_states(m, N) < length:
        N += 1
    return N


@dataclass(frozen=True)
class ScorePolicy(DispatchPolicy):
    """An index policy: the job goes to :math:`\\arg\\min_i s(u_i, n_i, x, i)` (ties lowest).

    Built by :func:`score_policy`.  ``params`` holds the values of the declared parameters
    (:meth:`with_values` changes them without compiling again); :meth:`bind` fixes ``m``,
    ``rho`` and the size law like every :class:`~symq.dispatch.policies.policy.DispatchPolicy`.

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

    def to_markdown(self) -> str:
        """The policy as Markdown: description, parameters and its score in LaTeX."""
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
        m, rho, sizes, lam = check_model(m, rho, sizes)
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
    names, values = parameter_names(parameters_label, parameters)
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
                               + SIGNATURE_TEXT)
    if expr is not None:
        reads_n = "n" in {s.name for s in expr.free_symbols}
        if uses_counts is not None and bool(uses_counts) != reads_n:
            raise InvalidParameter(f"{label}.uses_counts", uses_counts,
                                   f"{reads_n} (or omitted) for this formula",
                                   "a formula's use of n is read from the formula")
        if expr.has(sp.I):
            raise InvalidParameter(label, str(expr), "a real-valued expression")
        compiled = compile_formula(expr, names)
        uses = reads_n
    else:
        compiled = compile_function(label, score, len(names))
        uses = True if uses_counts is None else bool(uses_counts)
    return ScorePolicy(name=str(name), params=values, score=compiled, parameters=names,
                       uses_counts=uses, expr=expr, description=str(description))


def bind_policy(policy: DispatchPolicy, m: int, rho: float, sizes: Any,
                speeds: ArrayLike | None = None) -> BoundPolicy:
    """``policy.bind(m, rho, sizes, speeds=speeds)``, also for a policy whose ``bind`` takes no
    speeds (a score policy): its arrival rate ``lam`` (the first score parameter) is then the
    one of the speeds, and the kernels give its score time units."""
    if type(policy).bind is DispatchPolicy.bind:
        return policy.bind(m, rho, sizes, speeds=speeds)
    bound = policy.bind(m, rho, sizes)
    spd = _speeds.check_speeds(speeds, bound.m)
    if spd is None:
        return bound
    if bound.code != SCORE:
        raise InvalidParameter("speeds", spd.tolist(), "omitted for this policy object",
                               f"{type(policy).__name__}.bind takes no speeds")
    lam = _speeds.arrival_rate(bound.rho, as_sizes(sizes).mean(), spd, bound.m)
    p = np.array(bound.score_params, dtype=float)
    p[0] = lam
    return dataclasses.replace(bound, lam=lam, score_params=p, lam_i=lam * spd / spd.sum(),
                               speeds=spd, cum=_speeds.cumulative_shares(spd))
