"""Solving a declared population process: fixed point, stability, outputs, refined terms.

The numeric and symbolic half of the model kind ``population``
(:mod:`symq.meanfield.declared` validates the declaration).  :class:`Solver` runs
:meth:`PopulationProcess.fixed_point` from the declared ``initial`` point and from the
``search`` points, reports every distinct fixed point found,
checks the rates are nonnegative at the reported one, and adds the refined ``1/N`` values of
Gast & Van Houdt, "A refined mean field approximation", Proc. ACM SIGMETRICS 2018, Theorem 1:
``E[h(X^N)] = h(pi) + (Dh V + (1/2) sum_jk D2h_jk W_jk)/N + o(1/N)``.  :func:`derivation`
shows the drift, the Jacobian and, in dimension <= 3 within a time budget, the fixed points
solved symbolically with the eigenvalues of the Jacobian there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from symq.core.budget import time_budget
from symq.core.compiler import compile as symq_compile
from symq.core.derivation import Derivation
from symq.core.display import MarkdownDisplay, markdown
from symq.core.errors import DerivationTimeout, InvalidParameter, NotConverged, StabilityError
from symq.core.result import Exactness, ResultBase

from .expansion import functional_terms
from .population import PopulationProcess, scalar_call

__all__ = ["Declaration", "DeclaredFixedPoint", "Solver", "derivation", "SYMBOLIC_SOLVE_BUDGET"]

#: Seconds the derivation may spend on a symbolic solve of F(x) = 0 (dimension <= 3 only).
SYMBOLIC_SOLVE_BUDGET = 10.0


@dataclass(frozen=True)
class Declaration(MarkdownDisplay):
    """A validated declaration: the process and what its solve needs."""

    name: str
    where: str
    process: PopulationProcess
    variables: tuple[str, ...]
    parameters: tuple[str, ...]
    rate_texts: tuple[Any, ...]
    outputs: dict[str, sp.Expr]
    initial: np.ndarray
    search: tuple[np.ndarray, ...]
    tolerance: float

    def to_markdown(self) -> str:
        """The declaration, then its process, as Markdown (Jupyter's display)."""
        head = markdown(f"**Declaration** {self.name} (declared in `{self.where}`)",
                        [("variables", ", ".join(self.variables)),
                         ("parameters", ", ".join(self.parameters) or "none"),
                         ("initial", self.initial), ("tolerance", self.tolerance)],
                        [("", sp.Eq(sp.Symbol(k), h, evaluate=False))
                         for k, h in self.outputs.items()])
        return f"{head}\n\n{self.process.to_markdown()}"


# ---------------------------------------------------------------------------- solve


@dataclass(frozen=True)
class DeclaredFixedPoint(ResultBase):
    """The solve of a declared population process (a ``kind = "population"`` model).

    Its values (:meth:`outputs`) are, in order: ``x``, one value per declared variable
    (:attr:`coordinates`), ``residual``, ``eigenvalues``, ``spectral_abscissa``, ``stable``,
    ``fixed_points``, ``fixed_points_stable``, ``n_fixed_points``, the declared outputs
    (:attr:`functionals`), ``V``, ``x_N`` and the refined values ``NAME_N`` (:attr:`refined`);
    ``V`` only at a stable fixed point, ``x_N`` and ``NAME_N`` only for a given ``N``.

    Attributes
    ----------
    x : ndarray
        The fixed point reached from the declared ``initial`` point.
    coordinates : dict
        ``x`` by variable name.
    residual : float
        ``max |F(x)|``.
    eigenvalues : list of complex
        Eigenvalues of the Jacobian ``DF(x)``.
    spectral_abscissa : float
        Their largest real part.
    stable : bool
        Whether ``x`` is exponentially stable (spectral abscissa ``< 0``).
    fixed_points : list of ndarray
        The distinct fixed points found from ``initial`` and the ``search`` points.
    fixed_points_stable : list of bool
        Their stability.
    n_fixed_points : int
        How many.
    functionals : dict
        The declared outputs ``h(x)`` by name.
    V : ndarray or None
        The refined ``1/N`` term of ``x`` (Gast & Van Houdt 2018, Theorem 1); ``None`` when
        ``x`` is not stable.
    x_N : ndarray or None
        ``x + V/N`` for a given ``N``.
    refined : dict
        ``NAME_N`` for every variable and declared output, for a given ``N``; with
        ``order = 2`` also ``NAME_N2``, the value to order ``1/N^2``.
    V2 : ndarray or None
        With ``order = 2``: the ``1/N^2`` term (Gast, Bortolussi & Tribastone, Performance
        Evaluation 2019), ``E[X^N] = x + V/N + V2/N^2 + o(1/N^2)``.
    x_N2 : ndarray or None
        ``x + V/N + V2/N^2`` for a given ``N`` and ``order = 2``.
    transient : dict
        For a given time ``t``: ``x_t`` and ``NAME_t`` (the mean-field ODE from ``initial`` at
        time ``t``), with ``N`` also ``x_t_N``, ``NAME_t_N`` (and ``x_t_N2``, ``NAME_t_N2`` for
        ``order = 2``) from the transient expansion.
    method : str
    exactness : Exactness
        ``numeric``.
    seconds : float
        Wall time of the solve.
    """

    summary: ClassVar[tuple[str, ...]] = ("residual", "spectral_abscissa", "stable",
                                          "n_fixed_points")

    x: np.ndarray
    coordinates: dict[str, float]
    residual: float
    eigenvalues: list[complex]
    spectral_abscissa: float
    stable: bool
    fixed_points: list[np.ndarray]
    fixed_points_stable: list[bool]
    n_fixed_points: int
    functionals: dict[str, float] = field(default_factory=dict)
    V: np.ndarray | None = None
    x_N: np.ndarray | None = None
    refined: dict[str, float] = field(default_factory=dict)
    V2: np.ndarray | None = None
    x_N2: np.ndarray | None = None
    transient: dict[str, Any] = field(default_factory=dict)
    method: str = "mean-field ODE (Radau), then guarded Newton on F(x) = 0"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    def outputs(self) -> dict[str, Any]:
        """The model's values: the named dictionaries spread into one value per name."""
        values = super().outputs()
        out: dict[str, Any] = {"x": values.pop("x"), **values.pop("coordinates")}
        functionals = values.pop("functionals")
        refined = values.pop("refined")
        transient = values.pop("transient")
        for name in ("residual", "eigenvalues", "spectral_abscissa", "stable", "fixed_points",
                     "fixed_points_stable", "n_fixed_points"):
            out[name] = values.pop(name)
        out.update(functionals)
        out.update(values)  # V, x_N, V2, x_N2 where computed
        out.update(refined)
        out.update(transient)
        return out




class Solver:
    """Solves a declaration for parameter values (compiled functions built on first use)."""

    def __init__(self, decl: Declaration) -> None:
        self.decl = decl
        self._compiled: dict[str, Any] = {}

    def _args(self) -> tuple[sp.Symbol, ...]:
        return (*self.decl.process.variables, *self.decl.process.parameters)

    def _rates(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        if "rates" not in self._compiled:
            rates = sp.ImmutableMatrix([rate for _, rate in self.decl.process.transitions])
            self._compiled["rates"] = symq_compile(rates, self._args())
        return scalar_call(self._compiled["rates"], x, p)

    def _functionals(self, depth: int = 2) -> tuple[list[tuple[str, tuple[int, ...]]], Any]:
        """Compiled ``h`` and its non-zero partial derivatives up to order ``depth`` (2, or 4
        for the ``1/N^2`` terms) of every output, keyed ``(name, index tuple)``."""
        key = f"outputs{depth}"
        if key not in self._compiled:
            variables = self.decl.process.variables
            positions: list[tuple[str, tuple[int, ...]]] = []
            exprs: list[sp.Expr] = []
            for out_name, h in self.decl.outputs.items():
                level: list[tuple[tuple[int, ...], sp.Expr]] = [((), h)]
                for _ in range(depth + 1):
                    following: list[tuple[tuple[int, ...], sp.Expr]] = []
                    for index, expr in level:
                        positions.append((out_name, index))
                        exprs.append(expr)
                        for j, vj in enumerate(variables):
                            if len(index) < depth and vj in expr.free_symbols:
                                derivative = sp.diff(expr, vj)
                                if derivative != 0:
                                    following.append(((*index, j), derivative))
                    level = following
            func = symq_compile(sp.ImmutableMatrix(exprs), self._args()) if exprs else None
            self._compiled[key] = (positions, func)
        return self._compiled[key]

    def _derivatives_at(self, x: np.ndarray, p: np.ndarray, depth: int
                        ) -> dict[str, dict[tuple[int, ...], float]]:
        """Every output's value (index ``()``) and derivatives at ``x``."""
        positions, func = self._functionals(depth)
        entries = scalar_call(func, x, p) if func is not None else np.zeros(0)
        out: dict[str, dict[tuple[int, ...], float]] = {k: {} for k in self.decl.outputs}
        for (out_name, index), value in zip(positions, entries):
            out[out_name][index] = float(value)
        return out

    def _expanded(self, x: np.ndarray, p: np.ndarray, N: int, suffix: str, V: np.ndarray,
                  W: np.ndarray, V2: np.ndarray | None = None, W2: np.ndarray | None = None,
                  M3: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, float]]:
        """``x + V/N (+ V2/N^2)`` and every variable's and output's expanded value, named
        ``NAME{suffix}`` (Gast & Van Houdt 2018, Theorem 1; Gast, Bortolussi & Tribastone
        2019 for the second order)."""
        second = V2 is not None
        point = x + V / N + (V2 / N ** 2 if V2 is not None else 0.0)
        values = {f"{v}{suffix}": float(c) for v, c in zip(self.decl.variables, point)}
        for out_name, derivs in self._derivatives_at(x, p, 4 if second else 2).items():
            first, two = functional_terms(derivs, V, W, V2, W2, M3)
            values[f"{out_name}{suffix}"] = derivs[()] + first / N + (two / N ** 2 if second
                                                                       else 0.0)
        return point, values

    def _transient(self, p: np.ndarray, params: Mapping[str, float], horizon: float,
                   N: int | None, order: int) -> dict[str, Any]:
        """The values at time ``horizon`` from ``initial``: ``x_t``, ``NAME_t`` (mean field);
        with ``N``, ``x_t_N`` and ``NAME_t_N`` (and ``_t_N2`` for order 2) from the transient
        size expansion (Gast, Bortolussi & Tribastone 2019)."""
        decl, process = self.decl, self.decl.process
        if N is None:
            phi = process.ode(decl.initial, horizon, params).x[-1]
        else:
            tr = process.refined_transient(decl.initial, horizon, params, order=order)
            phi = tr.x[-1]
        out: dict[str, Any] = {"x_t": phi}
        out.update({f"{v}_t": float(c) for v, c in zip(decl.variables, phi)})
        out.update({f"{k}_t": d[()] for k, d in self._derivatives_at(phi, p, 0).items()})
        if N is None:
            return out
        out["x_t_N"], values = self._expanded(phi, p, int(N), "_t_N", tr.V[-1], tr.W[-1])
        out.update(values)
        if tr.V2 is not None and tr.W2 is not None and tr.M3 is not None:
            out["x_t_N2"], values = self._expanded(phi, p, int(N), "_t_N2", tr.V[-1], tr.W[-1],
                                                   tr.V2[-1], tr.W2[-1], tr.M3[-1])
            out.update(values)
        return out

    def _check_rates(self, x: np.ndarray, p: np.ndarray, values: Mapping[str, float]) -> None:
        rates = self._rates(x, p)
        scale = 1e-9 * max(1.0, float(np.max(np.abs(rates), initial=0.0)))
        for i, rate in enumerate(rates):
            if not (math.isfinite(rate) and rate >= -scale):
                point = ", ".join(f"{v}={c:.6g}" for v, c in zip(self.decl.variables, x))
                given = ", ".join(f"{k}={v:g}" for k, v in values.items())
                raise InvalidParameter(
                    f"{self.decl.where}.transitions[{i}].rate", self.decl.rate_texts[i],
                    "a finite rate >= 0 on the state space",
                    f"it is {rate:.6g} at the fixed point {point}"
                    + (f" ({given})" if given else ""))

    def _fixed_point(self, x0: np.ndarray, params: Mapping[str, float]) -> Any:
        return self.decl.process.fixed_point(x0, params, tol=self.decl.tolerance)

    def __call__(self, **values: Any) -> DeclaredFixedPoint:
        decl, process = self.decl, self.decl.process
        start = time.perf_counter()
        N = values.pop("N", None)
        order = values.pop("order", None) or 1
        horizon = values.pop("t", None)
        if order == 2 and N is None:
            raise InvalidParameter("order", order, "1 without N",
                                   "the 1/N^2 values need the population size N")
        params = {k: values[k] for k in decl.parameters}
        p = process.parameter_values(params)
        try:
            fp = self._fixed_point(decl.initial, params)
        except NotConverged as exc:
            raise NotConverged(exc.solver, exc.residual, exc.tolerance, exc.iterations,
                               f"from initial = {decl.initial.tolist()}; try another initial "
                               f"point or a larger tolerance ({decl.where}.initial, "
                               f"{decl.where}.tolerance)") from None
        x = fp.x
        self._check_rates(x, p, params)
        stab = process.stability(x, params)
        found = [(x, stab.stable)]
        for point in decl.search:
            try:
                other = self._fixed_point(point, params).x
            except NotConverged:
                continue
            if all(np.max(np.abs(other - y)) > 1e-6 * max(1.0, float(np.max(np.abs(y))))
                   for y, _ in found):
                found.append((other, process.stability(other, params).stable))
        functionals = {k: d[()] for k, d in self._derivatives_at(x, p, 0).items()}
        V = x_N = V2 = x_N2 = None
        refined: dict[str, float] = {}
        if stab.stable:
            terms = process.refined(x, params, order=order)
            V, V2 = terms.V, terms.V2
            if N is not None:
                x_N, refined = self._expanded(x, p, int(N), "_N", terms.V, terms.W)
                if order == 2:
                    x_N2, second = self._expanded(x, p, int(N), "_N2", terms.V, terms.W,
                                                  terms.V2, terms.W2, terms.M3)
                    refined.update(second)
        elif N is not None:
            raise StabilityError(
                f"{decl.name}: the fixed point reached from initial = {decl.initial.tolist()} "
                f"is not exponentially stable (spectral abscissa {stab.max_real:.3g} >= 0), so "
                f"its refined values for N={N} do not exist (Gast & Van Houdt 2018, Theorem 1 "
                f"needs a stable fixed point); leave N out for the mean-field values")
        transient = {} if horizon is None else self._transient(p, params, horizon, N, order)
        several = (f"{len(found)} distinct fixed points found from {1 + len(decl.search)} "
                   f"starting points (fixed_points); reported: the one reached from initial "
                   f"= {decl.initial.tolist()}") if len(found) > 1 else (
                   f"one fixed point found from {1 + len(decl.search)} starting points")
        return DeclaredFixedPoint(
            x=x, coordinates={v: float(c) for v, c in zip(decl.variables, x)},
            residual=fp.residual, eigenvalues=[complex(e) for e in stab.eigenvalues],
            spectral_abscissa=stab.max_real, stable=stab.stable,
            fixed_points=[y for y, _ in found], fixed_points_stable=[s for _, s in found],
            n_fixed_points=len(found), functionals=functionals, V=V, x_N=x_N,
            refined=refined, V2=V2, x_N2=x_N2, transient=transient,
            method=(f"mean-field ODE (Radau) from initial, then guarded Newton on F(x) = 0 "
                    f"(residual {fp.residual:.1e}); {several}; "
                    f"{'stable' if stab.stable else 'not stable'}"
                    + ("; refined 1/N term (Gast & Van Houdt 2018, Theorem 1)"
                       if stab.stable else "")
                    + ("; 1/N^2 term (Gast, Bortolussi & Tribastone 2019)"
                       if V2 is not None else "")
                    + (f"; transient at t = {horizon:g} from initial (mean-field ODE"
                       + (" and moment equations)" if N is not None else ")")
                       if horizon is not None else "")),
            exactness=Exactness.NUMERIC, seconds=time.perf_counter() - start)

# ---------------------------------------------------------------------------- derivation


def derivation(decl: Declaration) -> Derivation:
    """Transitions, drift ``dx/dt = sum_l l beta_l(x)``, Jacobian, diffusion matrix, the
    declared outputs, and (dimension <= 3, within a time budget) the fixed points solved
    symbolically with the eigenvalues of the Jacobian there."""
    process = decl.process
    der = process.derivation()
    der.title = f"Declared population process {decl.name}"
    ell = sp.Symbol("ell", integer=True, positive=True)
    steps = list(der.steps)
    der.steps.clear()
    jumps = [sp.Eq(sp.Symbol(f"l_{i + 1}"), sp.ImmutableMatrix(jump), evaluate=False)
             for i, (jump, _) in enumerate(process.transitions)]
    rates = [sp.Eq(sp.Function(f"beta_{i + 1}")(*process.variables), rate, evaluate=False)
             for i, (_, rate) in enumerate(process.transitions)]
    der.add("Transitions", [*jumps, *rates],
            r"Transition $\ell$ moves $x$ to $x + \ell/N$ at rate $N \beta_\ell(x)$ (Kurtz 1970).")
    der.add("Mean-field ODE",
            sp.Eq(sp.Derivative(sp.Function("x")(sp.Symbol("t")), sp.Symbol("t")),
                  sp.Sum(sp.IndexedBase("l")[ell] * sp.Indexed("beta", ell)
                         , (ell, 1, len(process.transitions))), evaluate=False),
            r"$dx/dt = F(x) = \sum_\ell \ell \beta_\ell(x)$, written out in the next step.")
    der.steps.extend(steps)
    if decl.outputs:
        der.add("Declared outputs", [sp.Eq(sp.Symbol(k), h, evaluate=False)
                                     for k, h in decl.outputs.items()],
                "Functionals of the fixed point; their refined values add "
                "(Dh V + (1/2) D2h W)/N (Gast & Van Houdt 2018, Theorem 1).")
    if process.dimension <= 3:
        try:
            with time_budget(SYMBOLIC_SOLVE_BUDGET, f"the fixed points of {decl.name}"):
                # formulas read variables as positive symbols: solve over x >= 0 (x = 0 too)
                free = [sp.Symbol(v.name, nonnegative=True) for v in process.variables]
                back = dict(zip(process.variables, free))
                roots = sp.solve(list(process.drift.xreplace(back)), free, dict=True)
                points = [[sp.simplify(r.get(v, v)) for v in free] for r in roots]
                jac = sp.Matrix(process.jacobian).xreplace(back)
                eigs = [[sp.simplify(e) for e in jac.xreplace(dict(zip(free, pt))).eigenvals()]
                        for pt in points]
        except (DerivationTimeout, NotImplementedError, ValueError, sp.PolynomialError):
            der.add("Fixed points", [], f"sympy found no closed form within "
                    f"{SYMBOLIC_SOLVE_BUDGET:g} s; the solve computes them numerically.")
        else:
            x = sp.ImmutableMatrix(process.variables)
            der.add("Fixed points", [sp.Eq(x, sp.ImmutableMatrix(pt), evaluate=False)
                                     for pt in points],
                    "The solutions of F(x) = 0 (sympy solve; those outside the bounds are "
                    "not states of the process).")
            der.add("Eigenvalues of the Jacobian at the fixed points",
                    [sp.Eq(sp.Symbol(f"lambda_{i + 1}"), sp.FiniteSet(*e), evaluate=False)
                     for i, e in enumerate(eigs)],
                    "A fixed point is locally stable when every eigenvalue of DF there has a "
                    "negative real part.")
    return der
