"""Density-dependent population processes, declared symbolically, with the refined mean field.

A population of ``N`` objects is described by its occupancy vector ``x`` (fractions).  Each
transition ``l`` makes the jump ``x -> x + l/N`` at rate ``N beta_l(x)`` (Kurtz's density
dependent processes; the ``DDPP`` of rmf_tool, Gast et al.).  Everything the solvers need is
derived once with sympy from the declared rates and compiled once with :func:`symq.core.compile`:

* the drift ``F(x) = sum_l l beta_l(x)`` (mean-field ODE ``dx/dt = F(x)``),
* its Jacobian ``DF`` and Hessian ``D2F`` (stored sparsely: only non-zero entries),
* the diffusion matrix ``Q(x) = sum_l l l^T beta_l(x)``.

The numeric layer integrates the ODE, finds a fixed point (ODE then guarded Newton), tests
local stability and computes the ``1/N`` term ``V`` of the refined mean field of Gast & Van
Houdt, "A refined mean field approximation", Proc. ACM SIGMETRICS 2018 (Theorem 1):
``E[X^N] = pi + V/N + O(1/N^2)``.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x")
>>> beta, gamma, eps = sp.symbols("beta gamma epsilon", positive=True)
>>> sis = PopulationProcess([x], [beta, gamma, eps])
>>> sis.add_transition([1], (eps + beta * x) * (1 - x))
>>> sis.add_transition([-1], gamma * x)
>>> fp = sis.fixed_point([0.5], {"beta": 2.0, "gamma": 1.0, "epsilon": 0.1})
>>> round(float(fp.x[0]), 6)
0.542214
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse
import scipy.sparse.linalg
import sympy as sp
from numpy.typing import ArrayLike, NDArray
from scipy.integrate import solve_ivp

from symq.core.compiler import CompiledFunction
from symq.core.compiler import compile as symq_compile
from symq.core.derivation import Derivation
from symq.core.display import MarkdownDisplay, short_text
from symq.core.errors import InvalidParameter, NotConverged, SymqError
from symq.core.printing import latex
from symq.core.result import Exactness, ResultBase

from .conservation import conservation
from .expansion import (
    MeanFieldExpansion,
    TransientExpansion,
    expansion_steady_state,
    expansion_transient,
    output_times,
)

__all__ = ["PopulationProcess", "FixedPoint", "PopulationStability", "RefinedTerms", "Trajectory",
           "MAX_TRANSITIONS", "scalar_call"]

#: Transitions shown in the Markdown table of a population process (the rest are counted).
MAX_TRANSITIONS = 12

#: Jacobians with at most this fraction of non-zero entries are handled as sparse matrices.
_SPARSE_DENSITY = 0.2


@dataclass(frozen=True)
class Trajectory(ResultBase):
    """A solution of the mean-field ODE: times ``t`` (shape (m,)) and states ``x`` (shape (m, n)).

    ``method`` names the scipy integrator (``solve_ivp(LSODA)``, ...).
    """

    t: NDArray[np.float64]
    x: NDArray[np.float64]
    method: str = "scipy solve_ivp"
    exactness: Exactness = Exactness.NUMERIC


@dataclass(frozen=True)
class FixedPoint(ResultBase):
    """A fixed point ``F(x) = 0`` of the drift.

    Attributes
    ----------
    x : ndarray
        The fixed point.
    residual : float
        ``max_i |F_i(x)|``.
    ode_time : float
        Time the ODE was integrated before the Newton polish.
    newton_steps : int
        Accepted Newton steps.
    rejected_steps : int
        Newton steps rejected by the domain or monotonicity guard (then halved).
    method : str
    exactness : Exactness
        ``numeric``.
    """

    x: NDArray[np.float64]
    residual: float
    ode_time: float
    newton_steps: int
    rejected_steps: int
    method: str = "mean-field ODE (Radau), then guarded Newton on F(x) = 0"
    exactness: Exactness = Exactness.NUMERIC


@dataclass(frozen=True)
class PopulationStability(ResultBase):
    """Local stability of a fixed point of a population process: eigenvalues of ``DF(pi)``."""

    eigenvalues: NDArray[np.complex128]
    max_real: float
    method: str = "eigenvalues of the Jacobian DF(pi) (numpy.linalg.eigvals)"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def stable(self) -> bool:
        """Locally exponentially stable: every eigenvalue has a negative real part."""
        return self.max_real < 0


@dataclass(frozen=True)
class RefinedTerms(ResultBase):
    """The ingredients of the refined mean field (Gast & Van Houdt 2018, Theorem 1).

    Attributes
    ----------
    V : ndarray
        The ``1/N`` term: ``E[X^N] = pi + V/N + O(1/N^2)``.
    W : ndarray
        The solution of ``A W + W A^T + Q = 0`` (the scaled covariance ``N Cov(X^N)`` in the limit).
    A : ndarray
        ``DF(pi)``.
    Q : ndarray
        ``sum_l l l^T beta_l(pi)``.
    BW : ndarray
        ``(1/2) sum_{jk} B_{i,jk} W_{jk}`` with ``B = D2F(pi)``.
    max_real : float
        Largest real part of the eigenvalues of ``A`` (negative: the theorem applies).
    method : str
    exactness : Exactness
        ``numeric``.
    """

    V: NDArray[np.float64]
    W: NDArray[np.float64]
    A: NDArray[np.float64]
    Q: NDArray[np.float64]
    BW: NDArray[np.float64]
    max_real: float
    method: str = ("refined mean field (Gast & Van Houdt 2018, Theorem 1): Lyapunov solve for W, "
                   "linear solve for V")
    exactness: Exactness = Exactness.NUMERIC

    @property
    def lyapunov_residual(self) -> float:
        """``max |A W + W A^T + Q|``."""
        return float(np.max(np.abs(self.A @ self.W + self.W @ self.A.T + self.Q), initial=0.0))


def _rate_expression(rate: Any) -> sp.Expr:
    """A transition rate as a sympy expression: sympy objects and real numbers only.

    Text is refused (never given to ``sympify``, which evaluates it): build the rate from the
    process's symbols, or parse user text with :func:`symq.core.parameters.parse_formula`.
    """
    if isinstance(rate, sp.Basic):
        if not isinstance(rate, sp.Expr):
            raise InvalidParameter("rate", rate, "a sympy expression or a real number")
        return rate
    if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, (int, float, np.integer,
                                                                   np.floating)):
        raise InvalidParameter("rate", rate, "a sympy expression or a real number",
                               "text is not parsed here: use sympy symbols or parse_formula")
    value = float(rate)
    if not math.isfinite(value):
        raise InvalidParameter("rate", rate, "a finite real number or a sympy expression")
    return sp.Integer(int(rate)) if isinstance(rate, (int, np.integer)) else sp.Float(value)


def scalar_call(func: CompiledFunction, x: ArrayLike, p: ArrayLike) -> NDArray[np.float64]:
    """Evaluate a compiled column matrix at one point, as a flat float array.

    Uses :meth:`~symq.core.compiler.CompiledFunction.scalar`: with thousands of scalar
    arguments it is several times faster than the broadcasting front door.
    """
    args = [*np.asarray(x, dtype=float).tolist(), *np.asarray(p, dtype=float).tolist()]
    return np.asarray(func.scalar(*args), dtype=float).ravel()


class PopulationProcess(MarkdownDisplay):
    """A density-dependent population process declared with sympy expressions.

    Parameters
    ----------
    variables : int or sequence of sympy.Symbol
        The occupancy variables; an integer ``n`` creates ``x_1, ..., x_n``.
    parameters : sequence of sympy.Symbol
        Symbols of the model parameters; their numeric values are given when solving.
    bounds : (float, float)
        The physical domain of every coordinate (``[0, 1]`` for occupancy fractions); the
        Newton polish never leaves it.
    name : str
        A name used in derivations and messages.

    Notes
    -----
    A transition ``(l, beta_l)`` moves ``x -> x + l/N`` at rate ``N beta_l(x)`` (Kurtz 1970;
    Gast & Van Houdt 2018, Section 2).
    """

    def __init__(self, variables: int | Sequence[sp.Symbol], parameters: Sequence[sp.Symbol] = (),
                 *, bounds: tuple[float, float] = (0.0, 1.0), name: str = "population process"
                 ) -> None:
        if isinstance(variables, int):
            if variables < 1:
                raise InvalidParameter("variables", variables, "an integer >= 1")
            variables = sp.symbols(f"x_1:{variables + 1}", real=True)
        self.variables: tuple[sp.Symbol, ...] = tuple(variables)
        if not self.variables or not all(isinstance(v, sp.Symbol) for v in self.variables):
            raise SymqError("PopulationProcess: variables must be a non-empty sequence of "
                            "sympy symbols")
        self.parameters: tuple[sp.Symbol, ...] = tuple(parameters)
        if set(self.parameters) & set(self.variables):
            raise SymqError("PopulationProcess: a symbol cannot be both a variable and a parameter")
        low, high = bounds
        if not low < high:
            raise InvalidParameter("bounds", bounds, "a pair (low, high) with low < high")
        self.bounds = (float(low), float(high))
        self.name = name
        self.transitions: list[tuple[tuple[int, ...], sp.Expr]] = []
        self.monotone: list[tuple[int, int]] = []
        self._supports: list[tuple[int, ...]] = []
        self._symbols = set(self.variables) | set(self.parameters)
        self._derived: dict[str, Any] = {}
        self._compiled: dict[str, Any] = {}

    # ------------------------------------------------------------------ declaration
    @property
    def dimension(self) -> int:
        """The number of occupancy variables ``n``."""
        return len(self.variables)

    def to_markdown(self) -> str:
        r"""The process as Markdown (Jupyter's display): its variables, parameters, the first
        :data:`MAX_TRANSITIONS` transitions (jump :math:`\ell`, rate :math:`\beta_\ell(x)`;
        the rest counted) and the drift :math:`F(x) = \sum_\ell \ell \beta_\ell(x)` in
        LaTeX."""
        names = ", ".join(f"${latex(v)}$" for v in self.variables)
        params = ", ".join(f"${latex(p)}$" for p in self.parameters) or "none"
        lines = [(f"**{short_text(self.name)}**: {self.dimension} variable(s) {names}; "
                  f"parameters {params}; {len(self.transitions)} transition(s), "
                  r"$x \to x + \ell/N$ at rate $N \beta_\ell(x)$"), ""]
        if self.transitions:
            lines += ["| jump $\\ell$ | rate $\\beta_\\ell(x)$ |", "|---|---|"]
            for jump, rate in self.transitions[:MAX_TRANSITIONS]:
                lines.append(f"| {tuple(jump)} | ${latex(rate)}$ |")
            more = len(self.transitions) - MAX_TRANSITIONS
            if more > 0:
                lines.append(f"| ... | {more} more |")
            drift = r" \\ ".join(f"\\dot{{{latex(v)}}} &= {latex(f)}"
                                  for v, f in zip(self.variables, self.drift))
            lines += ["", f"$$\\begin{{aligned}} {drift} \\end{{aligned}}$$"]
        return "\n".join(lines)

    def add_transition(self, jump: Sequence[int], rate: sp.Expr) -> None:
        """Declare the jump ``x -> x + jump/N`` at rate ``N rate(x)``.

        Parameters
        ----------
        jump : sequence of int
            The jump vector ``l`` (length ``n``).
        rate : sympy expression or real number
            ``beta_l(x)`` in the variables and parameters.  Strings are refused with
            :class:`InvalidParameter` (they are never given to ``sympify``).
        """
        raw = np.asarray(jump)
        if raw.shape != (self.dimension,) or not np.issubdtype(raw.dtype, np.number) \
                or not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
            raise InvalidParameter("jump", jump, f"a sequence of {self.dimension} integers")
        jump = tuple(int(j) for j in raw.tolist())
        rate = _rate_expression(rate)
        unknown = rate.free_symbols - self._symbols
        if unknown:
            raise SymqError("add_transition: rate depends on undeclared symbols "
                            + ", ".join(sorted(map(str, unknown))))
        self.transitions.append((jump, rate))
        self._supports.append(tuple(int(i) for i in np.flatnonzero(raw)))
        self._derived.clear()
        self._compiled.clear()

    def declare_monotone(self, *indices: int) -> None:
        """Declare ``x[i0] >= x[i1] >= ...`` (kept by the Newton polish of :meth:`fixed_point`)."""
        for i in indices:
            if not 0 <= i < self.dimension:
                raise InvalidParameter("index", i, f"an integer in [0, {self.dimension - 1}]")
        self.monotone.extend(zip(indices[:-1], indices[1:]))

    # ------------------------------------------------------------------ derivation (sympy, once)
    def _require_transitions(self) -> None:
        if not self.transitions:
            raise SymqError(f"{self.name}: no transition declared (call add_transition)")

    @property
    def drift(self) -> sp.ImmutableMatrix:
        """``F(x) = sum_l l beta_l(x)`` as a column matrix."""
        if "F" not in self._derived:
            self._require_transitions()
            terms: list[list[sp.Expr]] = [[] for _ in self.variables]
            for (jump, rate), support in zip(self.transitions, self._supports):
                for i in support:
                    terms[i].append(jump[i] * rate)
            self._derived["F"] = sp.ImmutableMatrix([sp.Add(*t) for t in terms])
        return self._derived["F"]

    def _entries_jacobian(self) -> dict[tuple[int, int], sp.Expr]:
        if "J" not in self._derived:
            index = {v: j for j, v in enumerate(self.variables)}
            entries: dict[tuple[int, int], sp.Expr] = {}
            for i, f in enumerate(self.drift):
                for v in sorted(f.free_symbols & index.keys(), key=index.get):
                    df = sp.diff(f, v)
                    if df != 0:
                        entries[(i, index[v])] = df
            self._derived["J"] = entries
        return self._derived["J"]

    def _entries_hessian(self) -> dict[tuple[int, int, int], sp.Expr]:
        if "H" not in self._derived:
            index = {v: j for j, v in enumerate(self.variables)}
            entries: dict[tuple[int, int, int], sp.Expr] = {}
            for (i, j), df in self._entries_jacobian().items():
                for v in sorted(df.free_symbols & index.keys(), key=index.get):
                    d2f = sp.diff(df, v)
                    if d2f != 0:
                        entries[(i, j, index[v])] = d2f
            self._derived["H"] = entries
        return self._derived["H"]

    def _entries_diffusion(self) -> dict[tuple[int, int], sp.Expr]:
        if "Q" not in self._derived:
            self._require_transitions()
            terms: dict[tuple[int, int], list[sp.Expr]] = {}
            for (jump, rate), support in zip(self.transitions, self._supports):
                for i in support:
                    for j in support:
                        terms.setdefault((i, j), []).append(jump[i] * jump[j] * rate)
            self._derived["Q"] = {k: sp.Add(*v) for k, v in terms.items()}
        return self._derived["Q"]

    @property
    def jacobian(self) -> sp.ImmutableSparseMatrix:
        """``DF(x)``, entry ``(i, j) = dF_i/dx_j``."""
        n = self.dimension
        return sp.ImmutableSparseMatrix(n, n, self._entries_jacobian())

    @property
    def hessian(self) -> dict[tuple[int, int, int], sp.Expr]:
        """The non-zero entries ``(i, j, k) -> d2F_i/(dx_j dx_k)`` of ``D2F(x)``."""
        return dict(self._entries_hessian())

    @property
    def diffusion(self) -> sp.ImmutableSparseMatrix:
        """``Q(x) = sum_l l l^T beta_l(x)``."""
        n = self.dimension
        return sp.ImmutableSparseMatrix(n, n, self._entries_diffusion())

    def derivation(self) -> Derivation:
        """The derivation: transitions, drift, Jacobian, diffusion matrix (as sympy objects)."""
        x = sp.Matrix(self.variables)
        der = Derivation(
            title=f"Mean-field drift of the {self.name}",
            source="Kurtz (1970); Gast & Van Houdt, SIGMETRICS 2018, Section 2 and Theorem 1",
            summary=r"Each transition $\ell$ moves $x$ to $x + \ell/N$ at rate $N \beta_\ell(x)$.",
        )
        der.add("Drift", sp.Eq(sp.Derivative(x, sp.Symbol("t")), self.drift, evaluate=False),
                r"$F(x) = \sum_\ell \ell \beta_\ell(x)$: the mean-field ODE $dx/dt = F(x)$.")
        der.add("Jacobian",
                sp.Eq(sp.Symbol("DF"), sp.ImmutableMatrix(self.jacobian), evaluate=False),
                r"$DF(x)_{ij} = \partial F_i/\partial x_j$, at the fixed point for stability "
                r"and the refined term.")
        der.add("Diffusion matrix", sp.Eq(sp.Symbol("Q"), sp.ImmutableMatrix(self.diffusion),
                                          evaluate=False),
                r"$Q(x) = \sum_\ell \ell \ell^T \beta_\ell(x)$ (Gast & Van Houdt 2018, Theorem 1).")
        return der

    # ------------------------------------------------------------------ compile (once)
    def _args(self) -> tuple[sp.Symbol, ...]:
        return (*self.variables, *self.parameters)

    def _compiled_entries(self, key: str, entries: dict) -> tuple[list, CompiledFunction | None]:
        if key not in self._compiled:
            positions = list(entries)
            func = None
            if positions:
                func = symq_compile(sp.ImmutableMatrix([entries[p] for p in positions]),
                                    self._args())
            self._compiled[key] = (positions, func)
        return self._compiled[key]

    def _f_drift(self) -> CompiledFunction:
        if "F" not in self._compiled:
            self._compiled["F"] = symq_compile(self.drift, self._args())
        return self._compiled["F"]

    def parameter_values(self, params: Mapping[Any, float] | None) -> NDArray[np.float64]:
        """Order the parameter values as :attr:`parameters` (keys: symbols or their names)."""
        params = dict(params or {})
        by_name = {str(k): v for k, v in params.items()}
        values = []
        for p in self.parameters:
            value = params.get(p, by_name.get(str(p)))
            if value is None:
                raise InvalidParameter(str(p), None, "a finite real number", "no value given")
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise InvalidParameter(str(p), value, "a finite real number") from None
            if not math.isfinite(value):
                raise InvalidParameter(str(p), value, "a finite real number")
            values.append(value)
        extra = set(by_name) - {str(p) for p in self.parameters}
        if extra:
            raise InvalidParameter(sorted(extra)[0], by_name[sorted(extra)[0]],
                                   ("one of " + ", ".join(map(str, self.parameters)))
                                   if self.parameters else "absent (no parameters declared)",
                                   f"{self.name} has no such parameter")
        return np.array(values, dtype=float)

    def _state(self, x: ArrayLike, name: str = "x0") -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float).ravel()
        if x.shape != (self.dimension,) or not np.all(np.isfinite(x)):
            raise InvalidParameter(name, x, f"a finite vector of length {self.dimension}")
        return x

    def F(self, x: ArrayLike, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """The drift ``F(x)`` (``p``: parameter values from :meth:`parameter_values`)."""
        return scalar_call(self._f_drift(), x, p)

    def _sparse(self, key: str, entries: dict, x: ArrayLike, p: NDArray[np.float64]
                ) -> scipy.sparse.csr_matrix:
        positions, func = self._compiled_entries(key, entries)
        n = self.dimension
        if func is None:
            return scipy.sparse.csr_matrix((n, n))
        vals = scalar_call(func, x, p)
        rows, cols = zip(*positions)
        return scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))

    def DF(self, x: ArrayLike, p: NDArray[np.float64], sparse: bool = False) -> Any:
        """The Jacobian ``DF(x)``: a dense array, or CSR when ``sparse``."""
        mat = self._sparse("J", self._entries_jacobian(), x, p)
        return mat if sparse else mat.toarray()

    def Q(self, x: ArrayLike, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """The diffusion matrix ``Q(x)`` (dense)."""
        return self._sparse("Q", self._entries_diffusion(), x, p).toarray()

    def hessian_contraction(self, x: ArrayLike, p: NDArray[np.float64], W: NDArray[np.float64]
                            ) -> NDArray[np.float64]:
        """``(1/2) sum_{jk} B_{i,jk} W_{jk}`` with ``B = D2F(x)``, from the sparse Hessian."""
        positions, func = self._compiled_entries("H", self._entries_hessian())
        out = np.zeros(self.dimension)
        if func is None:
            return out
        vals = scalar_call(func, x, p)
        idx = np.array(positions, dtype=int)
        np.add.at(out, idx[:, 0], 0.5 * vals * W[idx[:, 1], idx[:, 2]])
        return out

    # ------------------------------------------------------------------ solve
    def ode(self, x0: ArrayLike, t: float | ArrayLike, params: Mapping[Any, float] | None = None,
            *, method: str = "LSODA", rtol: float = 1e-8, atol: float = 1e-12) -> Trajectory:
        """Integrate the mean-field ODE ``dx/dt = F(x)`` with :func:`scipy.integrate.solve_ivp`.

        Parameters
        ----------
        x0 : array_like
            Initial occupancy.
        t : float or array_like
            Final time, or increasing output times starting at 0 or later.
        params : mapping
            Parameter values (keys: symbols or names).
        method : {"LSODA", "Radau", "BDF", "RK45", ...}
            The scipy integrator; implicit ones receive the compiled Jacobian.
        """
        x0 = self._state(x0)
        p = self.parameter_values(params)
        times = output_times(t)
        t_eval = None if times.size == 1 else times
        sol = solve_ivp(lambda _t, y: self.F(y, p), (0.0, float(times[-1])), x0, method=method,
                        t_eval=t_eval, rtol=rtol, atol=atol, **self._jac_option(method, p))
        if not sol.success or not np.all(np.isfinite(sol.y)):
            raise NotConverged(f"solve_ivp({method}) of the {self.name} ODE",
                               float("inf"), rtol, int(sol.nfev))
        return Trajectory(t=sol.t, x=sol.y.T, method=f"scipy solve_ivp({method})")

    def _jac_option(self, method: str, p: NDArray[np.float64]) -> dict[str, Any]:
        if method in ("Radau", "BDF"):
            sparse = self._jacobian_is_sparse()
            return {"jac": lambda _t, y: self.DF(y, p, sparse=sparse)}
        if method == "LSODA":
            return {"jac": lambda _t, y: self.DF(y, p)}
        return {}

    def _jacobian_is_sparse(self) -> bool:
        """Whether ``DF`` is sparse enough (symbolically) for sparse LU in ODE and Newton."""
        n = self.dimension
        return n > 8 and len(self._entries_jacobian()) <= _SPARSE_DENSITY * n * n

    def _admissible(self, x: NDArray[np.float64], slack: float) -> bool:
        low, high = self.bounds
        if np.any(x < low - slack) or np.any(x > high + slack):
            return False
        return all(x[i] >= x[j] - slack for i, j in self.monotone)

    def fixed_point(self, x0: ArrayLike, params: Mapping[Any, float] | None = None, *,
                    tol: float = 1e-12, t_first: float = 0.3, t_max: float = 1e6,
                    ode_tol: float = 1e-7,
                    max_newton: int = 50, slack: float = 1e-13) -> FixedPoint:
        """A fixed point ``F(pi) = 0``: ODE towards steady state, then a guarded Newton polish.

        The ODE is integrated (Radau, compiled Jacobian) from ``x0`` in stages up to
        ``t_first, 10 t_first, ...`` (at most ``t_max``), stopping early once
        ``max|F| < ode_tol``.  After each stage Newton steps on ``F(x) = 0`` are tried with the
        compiled Jacobian; a step that leaves the domain :attr:`bounds` or breaks a declared
        monotonicity constraint (beyond ``slack``), or does not reduce the residual, is
        halved (rejected).  When Newton does not reach ``tol`` the integration resumes from
        the ODE state (the fallback).  As in rmf_tool the ODE is assumed to be attracted to
        the fixed point; Newton adds the last digits and saves the slow final approach.

        Raises
        ------
        NotConverged
            If the final residual ``max|F(pi)|`` exceeds ``tol``.
        """
        x0 = self._state(x0)
        p = self.parameter_values(params)
        if not self._admissible(x0, slack):
            raise InvalidParameter("x0", x0, f"a point of [{self.bounds[0]}, {self.bounds[1]}]^n "
                                   "meeting the declared monotonicity constraints")

        def near(_t: float, y: NDArray[np.float64]) -> float:
            return float(np.max(np.abs(self.F(y, p)))) - ode_tol
        near.terminal = True  # type: ignore[attr-defined]

        low, high = self.bounds
        x, t_now, horizon = x0, 0.0, min(t_first, t_max)
        steps = rejected = 0
        best = (float("inf"), x0)
        while True:
            reached = near(t_now, x) <= 0
            if not reached:
                sol = solve_ivp(lambda _t, y: self.F(y, p), (t_now, horizon), x, method="Radau",
                                events=near, rtol=1e-8, atol=1e-13, **self._jac_option("Radau", p))
                if not (sol.y.size and np.all(np.isfinite(sol.y[:, -1]))):
                    break
                x, t_now = np.clip(sol.y[:, -1], low, high), float(sol.t[-1])
                reached = sol.status == 1
            polished, residual, n_steps, n_rejected = self._newton(x, p, tol, max_newton, slack)
            steps, rejected = steps + n_steps, rejected + n_rejected
            if residual < best[0]:
                best = (residual, polished)
            if residual <= tol:
                return FixedPoint(x=polished, residual=residual, ode_time=t_now, newton_steps=steps,
                                  rejected_steps=rejected)
            if reached or horizon >= t_max:
                break
            horizon = min(10.0 * horizon, t_max)
        raise NotConverged(f"fixed point of the {self.name} (ODE + guarded Newton)",
                           best[0], tol, steps)

    def _newton(self, x: NDArray[np.float64], p: NDArray[np.float64], tol: float, max_newton: int,
                slack: float) -> tuple[NDArray[np.float64], float, int, int]:
        """Guarded Newton on ``F(x) = 0``: (point, residual, accepted steps, rejected steps)."""
        low, high = self.bounds
        sparse = self._jacobian_is_sparse()
        span = conservation(self).basis
        f = self.F(x, p)
        residual = float(np.max(np.abs(f)))
        steps = rejected = 0
        for _ in range(max_newton):
            if residual <= tol * 1e-3:
                break
            jac = self.DF(x, p, sparse=sparse)
            try:
                if span is not None:   # conserved quantities: the step stays in the jumps' span
                    delta = span @ np.linalg.solve(span.T @ (jac @ span), span.T @ f)
                else:
                    delta = (scipy.sparse.linalg.spsolve(jac.tocsc(), f) if sparse
                             else np.linalg.solve(jac, f))
            except (np.linalg.LinAlgError, RuntimeError):
                break
            if not np.all(np.isfinite(delta)):
                break
            step, accepted = 1.0, False
            for _halving in range(30):
                trial = x - step * delta
                if self._admissible(trial, slack):
                    f_trial = self.F(trial, p)
                    r_trial = float(np.max(np.abs(f_trial)))
                    if r_trial < residual:
                        x, f, residual, accepted = trial, f_trial, r_trial, True
                        break
                rejected += 1
                step /= 2
            if not accepted:
                break
            steps += 1
        x = np.clip(x, low, high)
        return x, float(np.max(np.abs(self.F(x, p)))), steps, rejected

    def stability(self, pi: ArrayLike, params: Mapping[Any, float] | None = None
                  ) -> PopulationStability:
        """Eigenvalues of ``DF(pi)``; the fixed point is locally stable if all real parts are
        < 0.  A process that conserves linear quantities (:mod:`symq.meanfield.conservation`)
        is judged by the eigenvalues of ``P^T DF P`` on the span ``P`` of its jumps (those
        along the conserved directions are 0 whatever the dynamics)."""
        pi = self._state(pi, "pi")
        jac = self.DF(pi, self.parameter_values(params))
        kept = conservation(self)
        if kept.basis is None:
            eig = np.linalg.eigvals(jac)
            return PopulationStability(eigenvalues=eig, max_real=float(np.max(eig.real)))
        P = kept.basis
        eig = np.linalg.eigvals(P.T @ jac @ P)
        return PopulationStability(
            eigenvalues=eig, max_real=float(np.max(eig.real)),
            method=("eigenvalues of P^T DF(pi) P on the span P of the jumps (conserved: "
                    f"{kept.describe(tuple(map(str, self.variables)))})"))

    def refined_terms(self, pi: ArrayLike, params: Mapping[Any, float] | None = None
                      ) -> RefinedTerms:
        """The refined mean-field terms at a fixed point ``pi`` (Gast & Van Houdt 2018, Thm 1).

        ``A = DF(pi)``, ``B = D2F(pi)``, ``Q = sum_l l l^T beta_l(pi)``; ``W`` solves
        ``A W + W A^T + Q = 0`` (:func:`scipy.linalg.solve_continuous_lyapunov`) and
        ``V = -A^{-1} ((1/2) sum_{jk} B_{.,jk} W_{jk})`` (solved in the span of the jumps when
        the process conserves a linear quantity, :mod:`symq.meanfield.conservation`).

        Raises
        ------
        StabilityError
            If ``A`` has an eigenvalue with non-negative real part (the theorem needs an
            exponentially stable fixed point).
        """
        pi = self._state(pi, "pi")
        p = self.parameter_values(params)
        first = expansion_steady_state(self, pi, params, order=1)
        BW = self.hessian_contraction(pi, p, first.W)
        return RefinedTerms(V=first.V, W=first.W, A=self.DF(pi, p), Q=self.Q(pi, p), BW=BW,
                            max_real=first.max_real)

    def refined(self, pi: ArrayLike, params: Mapping[Any, float] | None = None, *,
                order: int = 1) -> MeanFieldExpansion:
        """The size expansion at a stable fixed point ``pi``: ``E[X^N] = pi + V/N`` (order 1,
        Gast & Van Houdt 2018, Theorem 1) ``+ V2/N^2`` (order 2, Gast, Bortolussi &
        Tribastone, Performance Evaluation 2019); ``.mean(N)`` gives the estimate.  See
        :func:`symq.meanfield.expansion.expansion_steady_state`."""
        return expansion_steady_state(self, pi, params, order=order)

    def refined_transient(self, x0: ArrayLike, t: float | ArrayLike,
                          params: Mapping[Any, float] | None = None, *, order: int = 1,
                          rtol: float = 1e-8, atol: float = 1e-10) -> TransientExpansion:
        """The transient size expansion ``E[X^N(t)] = phi(t) + V(t)/N (+ V2(t)/N^2)`` from
        ``X^N(0) = x0`` (Gast, Bortolussi & Tribastone 2019); ``.mean(N)`` gives the
        estimate at every time.  See :func:`symq.meanfield.expansion.expansion_transient`."""
        return expansion_transient(self, x0, t, params, order=order, rtol=rtol, atol=atol)

    def __repr__(self) -> str:
        return (f"<PopulationProcess {self.name!r}: {self.dimension} variables, "
                f"{len(self.parameters)} parameters, {len(self.transitions)} transitions>")
