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
from symq.core.errors import DerivationTimeout, InvalidParameter, NotConverged, StabilityError
from symq.core.result import Exactness, ResultBase

from .population import PopulationProcess, scalar_call

__all__ = ["Declaration", "DeclaredFixedPoint", "Solver", "derivation", "SYMBOLIC_SOLVE_BUDGET"]

#: Seconds the derivation may spend on a symbolic solve of F(x) = 0 (dimension <= 3 only).
SYMBOLIC_SOLVE_BUDGET = 10.0


@dataclass(frozen=True)
class Declaration:
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

    def _repr_markdown_(self) -> str:  # Jupyter: the declaration, then its process
        from symq.core.display import markdown

        head = markdown(f"**Declaration** {self.name} (declared in `{self.where}`)",
                        [("variables", ", ".join(self.variables)),
                         ("parameters", ", ".join(self.parameters) or "none"),
                         ("initial", self.initial), ("tolerance", self.tolerance)],
                        [("", sp.Eq(sp.Symbol(k), h, evaluate=False))
                         for k, h in self.outputs.items()])
        return f"{head}\n\n{self.process._repr_markdown_()}"


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
        ``NAME_N`` for every variable and declared output, for a given ``N``.
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
    method: str = "mean-field ODE (Radau), then guarded Newton on F(x) = 0"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    def outputs(self) -> dict[str, Any]:
        """The model's values: the named dictionaries spread into one value per name."""
        values = super().outputs()
        out: dict[str, Any] = {"x": values.pop("x"), **values.pop("coordinates")}
        functionals = values.pop("functionals")
        refined = values.pop("refined")
        for name in ("residual", "eigenvalues", "spectral_abscissa", "stable", "fixed_points",
                     "fixed_points_stable", "n_fixed_points"):
            out[name] = values.pop(name)
        out.update(functionals)
        out.update(values)  # V and x_N where computed
        out.update(refined)
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

    def _functionals(self) -> tuple[list[tuple[str, tuple[int, ...]]], Any]:
        """Compiled [h, dh/dx_j, d2h/dx_j dx_k] of every output (non-zero entries only)."""
        if "outputs" not in self._compiled:
            variables = self.decl.process.variables
            positions: list[tuple[str, tuple[int, ...]]] = []
            exprs: list[sp.Expr] = []
            for out_name, h in self.decl.outputs.items():
                positions.append((out_name, ()))
                exprs.append(h)
                for j, vj in enumerate(variables):
                    dh = sp.diff(h, vj)
                    if dh == 0:
                        continue
                    positions.append((out_name, (j,)))
                    exprs.append(dh)
                    for k, vk in enumerate(variables):
                        d2h = sp.diff(dh, vk)
                        if d2h != 0:
                            positions.append((out_name, (j, k)))
                            exprs.append(d2h)
            func = symq_compile(sp.ImmutableMatrix(exprs), self._args()) if exprs else None
            self._compiled["outputs"] = (positions, func)
        return self._compiled["outputs"]

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
        positions, func = self._functionals()
        entries = scalar_call(func, x, p) if func is not None else np.zeros(0)
        functionals = {out_name: float(value) for (out_name, index), value
                       in zip(positions, entries) if index == ()}
        V = x_N = None
        refined: dict[str, float] = {}
        if stab.stable:
            terms = process.refined_terms(x, params)
            V = terms.V
            if N is not None:
                x_N, refined = self._refined(x, functionals, positions, entries, terms.V,
                                             terms.W, int(N))
        elif N is not None:
            raise StabilityError(
                f"{decl.name}: the fixed point reached from initial = {decl.initial.tolist()} "
                f"is not exponentially stable (spectral abscissa {stab.max_real:.3g} >= 0), so "
                f"its refined values for N={N} do not exist (Gast & Van Houdt 2018, Theorem 1 "
                f"needs a stable fixed point); leave N out for the mean-field values")
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
            refined=refined,
            method=(f"mean-field ODE (Radau) from initial, then guarded Newton on F(x) = 0 "
                    f"(residual {fp.residual:.1e}); {several}; "
                    f"{'stable' if stab.stable else 'not stable'}"
                    + ("; refined 1/N term (Gast & Van Houdt 2018, Theorem 1)"
                       if stab.stable else "")),
            exactness=Exactness.NUMERIC, seconds=time.perf_counter() - start)

    def _refined(self, x: np.ndarray, functionals: Mapping[str, float], positions: list,
                 entries: np.ndarray, V: np.ndarray, W: np.ndarray, N: int,
                 ) -> tuple[np.ndarray, dict[str, float]]:
        """``x + V/N`` and ``E[h(X^N)] = h(pi) + (Dh V + (1/2) sum_jk D2h_jk W_jk)/N``
        (Gast & Van Houdt 2018, Theorem 1) for every variable and declared output, as
        ``NAME_N``."""
        refined = {f"{v}_N": float(c + V[i] / N) for i, (v, c) in
                   enumerate(zip(self.decl.variables, x))}
        correction = dict.fromkeys(self.decl.outputs, 0.0)
        for (out_name, index), value in zip(positions, entries):
            if len(index) == 1:
                correction[out_name] += value * V[index[0]]
            elif len(index) == 2:
                correction[out_name] += 0.5 * value * W[index]
        refined.update({f"{k}_N": float(functionals[k] + c / N) for k, c in correction.items()})
        return x + V / N, refined

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
