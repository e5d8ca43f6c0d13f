"""Population processes declared in a claims file: the model kind ``population``.

A claims file writes a density-dependent population process (Kurtz 1970; the ``DDPP`` of
rmf_tool) as text, ``[models.NAME]`` with ``kind = "population"``, its variables, and its
transitions ``{ jump = [1], rate = "beta*i*(1 - i)" }`` (:data:`EXAMPLE` is a whole SIS
epidemic), and :func:`declare_population` turns it into a
:class:`~symq.core.registry.ModelSpec` built on one
:class:`~symq.meanfield.population.PopulationProcess` (rates parsed by
:func:`symq.core.formula.parse_formula`, never evaluated).  Solving it gives the fixed point
``x`` of the drift ``F(x) = sum_l l beta_l(x)`` reached by the mean-field ODE from ``initial``
(then a guarded Newton polish), the drift ``residual``, the eigenvalues of ``DF`` at it and
their largest real part ``spectral_abscissa`` (``stable`` when negative), the declared
functionals, and, at a stable fixed point, the refined ``1/N`` term ``V`` of Gast & Van Houdt,
"A refined mean field approximation", Proc. ACM SIGMETRICS 2018, Theorem 1:
``E[h(X^N)] = h(pi) + (Dh V + (1/2) D2h . W)/N + o(1/N)`` for every declared functional ``h``
(the values ``NAME_N`` when the model parameter ``N`` is given).

A process may have several fixed points (an SIS epidemic has ``0`` and ``1 - gamma/beta``).
The reported one is the one the ODE reaches from ``initial``; the ODE is also started from the
``search`` points (by default the corners of the bounds box), and every distinct fixed point
found is listed in ``fixed_points`` with its stability, so the choice is never silent.
"""

from __future__ import annotations

import keyword
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from symq.core.claimsfile.declarations import check_keys
from symq.core.errors import MISSING, InvalidParameter
from symq.core.formula import CONSTANTS, FUNCTIONS, parse_formula
from symq.core.parameters import IntegerAtLeast, Parameter, PositiveReal
from symq.core.registry import ModelKind, ModelSpec

from .declared_solve import Declaration, Solver, derivation
from .population import PopulationProcess

__all__ = ["POPULATION", "declare_population", "KEYS", "OUTPUTS", "EXAMPLE", "MAX_DIMENSION"]

#: Most variables a declared process may have (the symbolic Jacobian and Hessian are built once).
MAX_DIMENSION = 500

KEYS: dict[str, str] = {
    "variables": "names of the occupancy variables, e.g. [\"x1\", \"x2\"] (or give dimension)",
    "dimension": "number of variables n, named x1..xn (instead of variables)",
    "transitions": "list of {jump = [...], rate = \"...\"}: the jump l (n integers, or a table "
                   "{variable = integer} of its non-zero entries) happens at rate N beta_l(x); "
                   "beta_l is a formula in the variables and the declared parameters",
    "initial": "starting point of the fixed-point search (n numbers within bounds); the "
               "reported fixed point is the one the ODE reaches from it (default: the middle "
               "of the bounds)",
    "outputs": "named functionals of the fixed point, {NAME = \"formula in the variables and "
               "parameters\"}",
    "bounds": "[low, high], the range of every variable (default [0, 1]; low >= 0)",
    "monotone": "true: the variables are nonincreasing in the declared order (kept by the "
                "Newton polish); or a list of variable names in nonincreasing order",
    "search": "further starting points of the ODE (a list of points); distinct fixed points "
              "reached from them are listed in fixed_points (default: the corners "
              "[low]*n and [high]*n; [] searches from initial only)",
    "tolerance": "drift residual max|F(x)| the fixed point must reach (default 1e-12)",
}

OUTPUTS: tuple[str, ...] = (
    "x", "<variable>", "residual", "eigenvalues", "spectral_abscissa", "stable",
    "fixed_points", "fixed_points_stable", "n_fixed_points", "<output>", "V",
    "x_N", "<variable>_N", "<output>_N", "V2", "x_N2", "<variable>_N2", "<output>_N2",
    "x_t", "<variable>_t", "<output>_t", "x_t_N", "<variable>_t_N", "<output>_t_N",
    "x_t_N2", "<variable>_t_N2", "<output>_t_N2",
)

#: Endings of result keys: a variable or output may not end with one.
_RESERVED_ENDINGS = ("_N", "_N2", "_t")

EXAMPLE = '''\
[models.my-sis]
kind = "population"
parameters = { beta = "positive", gamma = "positive" }
variables = ["i"]
transitions = [
  { jump = [1], rate = "beta*i*(1 - i)" },
  { jump = [-1], rate = "gamma*i" },
]
initial = [0.5]
outputs = { susceptible = "1 - i" }
'''

#: Result keys a variable or output may not be called.
_RESERVED = frozenset({"x", "residual", "eigenvalues", "spectral_abscissa", "stable",
                       "fixed_points", "fixed_points_stable", "n_fixed_points", "V", "x_N",
                       "N", "initial", "V2", "order", "t"})
_N = Parameter("N", IntegerAtLeast(1), typical=100, required=False, default=None,
               description="population size: gives the refined values x_N and NAME_N "
                           "= value + (1/N term) (Gast & Van Houdt 2018, Theorem 1)")
_ORDER = Parameter("order", IntegerAtLeast(1, 2), typical=1, required=False, default=1,
                   description="2 (with N): also V2 and the values to order 1/N^2, x_N2 and "
                               "NAME_N2 (Gast, Bortolussi & Tribastone 2019)")
_T = Parameter("t", PositiveReal(), typical=1.0, required=False, default=None,
               description="a time: also the values at t from initial, x_t and NAME_t (the "
                           "mean-field ODE), with N x_t_N and NAME_t_N (and _t_N2 for order "
                           "2: the transient expansion, Gast, Bortolussi & Tribastone 2019)")


# ---------------------------------------------------------------------------- validation


def _name_ok(key: str, name: Any, taken: Mapping[str, str]) -> str:
    """A new name for a variable or an output: an identifier that names nothing else."""
    domain = "an identifier that is not a declared parameter, another name or a result key"
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise InvalidParameter(key, name, domain, "not a name (letters, digits and _)")
    if name in taken:
        raise InvalidParameter(key, name, domain, f"already used as {taken[name]}")
    if name in _RESERVED or name.endswith(_RESERVED_ENDINGS):
        hint = ("; x is the fixed-point vector: call the variable x1, i, s, ..."
                if name == "x" else "")
        raise InvalidParameter(key, name, domain, "a result key of the population kind "
                               f"(x, residual, eigenvalues, V, ..., and names ending in _N, _N2 "
                               f"or _t are reserved){hint}")
    if name in FUNCTIONS or name in CONSTANTS:
        raise InvalidParameter(key, name, domain, "a function or constant of formulas")
    return name


def _variables(where: str, table: Mapping[str, Any], taken: dict[str, str]) -> tuple[str, ...]:
    if "variables" in table and "dimension" in table:
        raise InvalidParameter(f"{where}.dimension", table["dimension"],
                               "absent when variables is given", "give one of the two")
    if "variables" in table:
        names = table["variables"]
        key = f"{where}.variables"
        if isinstance(names, str) or not isinstance(names, Sequence) or not names:
            raise InvalidParameter(key, names, "a non-empty list of variable names")
    elif "dimension" in table:
        n, key = table["dimension"], f"{where}.dimension"
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) \
                or not 1 <= n <= MAX_DIMENSION:
            raise InvalidParameter(key, n, f"an integer in [1, {MAX_DIMENSION}]")
        names = [f"x{i}" for i in range(1, int(n) + 1)]
    else:
        raise InvalidParameter(f"{where}.variables", MISSING,
                               "a list of variable names (or give dimension = n)")
    if len(names) > MAX_DIMENSION:
        raise InvalidParameter(key, f"<{len(names)} names>", f"at most {MAX_DIMENSION} names")
    for i, name in enumerate(names):
        taken[_name_ok(f"{key}[{i}]" if "variables" in table else key, name, taken)] = "a variable"
    return tuple(names)


def _expression(key: str, value: Any, symbols: tuple[str, ...],
                local: Mapping[str, sp.Symbol]) -> sp.Expr:
    """A formula (text, a sympy expression or a number) in ``symbols``, on the local symbols."""
    domain = "an expression in " + ", ".join(symbols)
    if isinstance(value, str):
        return parse_formula(key, value, symbols)
    if isinstance(value, sp.Basic):
        if not isinstance(value, sp.Expr):
            raise InvalidParameter(key, value, domain, "not an expression")
        unknown = sorted({str(s) for s in value.free_symbols} - set(symbols))
        if unknown:
            raise InvalidParameter(key, value, domain, "unknown name " + ", ".join(unknown))
        if value.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
            raise InvalidParameter(key, value, domain, "not finite")
        return value.xreplace({s: local[str(s)] for s in value.free_symbols})
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
            and math.isfinite(value):
        return sp.Integer(int(value)) if isinstance(value, (int, np.integer)) else sp.Float(value)
    raise InvalidParameter(key, value, domain, "give the formula as text")


def _integer(key: str, value: Any) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise InvalidParameter(key, value, "an integer")


def _jump(key: str, value: Any, variables: tuple[str, ...]) -> list[int]:
    n = len(variables)
    domain = (f"a list of {n} integers (one per variable {', '.join(variables[:4])}"
              f"{', ...' if n > 4 else ''}) or a table {{variable = integer}}")
    if isinstance(value, Mapping):
        index = {v: i for i, v in enumerate(variables)}
        jump = [0] * n
        for var, entry in value.items():
            if var not in index:
                raise InvalidParameter(f"{key}.{var}", entry, domain, f"{var} is not a variable")
            jump[index[var]] = _integer(f"{key}.{var}", entry)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != n:
            raise InvalidParameter(key, list(value), domain,
                                   f"{len(value)} entries for {n} variables")
        jump = [_integer(f"{key}[{i}]", v) for i, v in enumerate(value)]
    else:
        raise InvalidParameter(key, value, domain)
    if not any(jump):
        raise InvalidParameter(key, value, domain, "a jump of zero changes nothing")
    return jump


def _point(key: str, value: Any, variables: tuple[str, ...], bounds: tuple[float, float],
           monotone: Sequence[int]) -> np.ndarray:
    n = len(variables)
    low, high = bounds
    domain = (f"{n} numbers in [{low:g}, {high:g}]"
              + (" nonincreasing along monotone" if monotone else ""))
    if isinstance(value, Mapping):
        missing = [v for v in variables if v not in value]
        extra = [k for k in value if k not in variables]
        if missing or extra:
            raise InvalidParameter(key, dict(value), domain + " (a value for every variable)",
                                   f"missing {', '.join(missing)}" if missing
                                   else f"{extra[0]} is not a variable")
        value = [value[v] for v in variables]
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != n or not all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            for v in value):
        raise InvalidParameter(key, value, domain)
    point = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(point)) or np.any(point < low) or np.any(point > high):
        raise InvalidParameter(key, list(value), domain, "outside the bounds")
    if any(point[i] < point[j] for i, j in zip(monotone[:-1], monotone[1:])):
        raise InvalidParameter(key, list(value), domain, "breaks the monotone order")
    return point


def _bounds(where: str, table: Mapping[str, Any]) -> tuple[float, float]:
    value = table.get("bounds", [0.0, 1.0])
    key, domain = f"{where}.bounds", "[low, high] with 0 <= low < high (high may be inf)"
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2 or not all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            for v in value):
        raise InvalidParameter(key, value, domain)
    low, high = float(value[0]), float(value[1])
    if not (math.isfinite(low) and 0 <= low < high) or math.isnan(high):
        raise InvalidParameter(key, list(value), domain, "formulas read the variables as "
                               "nonnegative" if low < 0 else "")
    return low, high


def _monotone(where: str, table: Mapping[str, Any], variables: tuple[str, ...]) -> list[int]:
    value = table.get("monotone", False)
    key = f"{where}.monotone"
    if value is True:
        return list(range(len(variables)))
    if value is False:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) >= 2 \
            and all(v in variables for v in value) and len(set(value)) == len(value):
        return [variables.index(v) for v in value]
    raise InvalidParameter(key, value, "true, false, or a list of distinct variable names "
                           "(at least two) in nonincreasing order")


def _transitions(where: str, table: Mapping[str, Any], variables: tuple[str, ...],
                 symbols: tuple[str, ...], local: Mapping[str, sp.Symbol]
                 ) -> list[tuple[list[int], sp.Expr, Any]]:
    key = f"{where}.transitions"
    items = table.get("transitions", MISSING)
    if items is MISSING:
        raise InvalidParameter(key, MISSING, "a list of {jump = [...], rate = \"...\"}")
    if isinstance(items, (str, Mapping)) or not isinstance(items, Sequence) or not items:
        raise InvalidParameter(key, items, "a non-empty list of {jump = [...], rate = \"...\"}")
    out = []
    for i, item in enumerate(items):
        at = f"{key}[{i}]"
        if isinstance(item, Mapping):
            for k in item:
                if k not in ("jump", "rate"):
                    raise InvalidParameter(f"{at}.{k}", item[k], "absent: a transition has the "
                                           "keys jump and rate", "unknown key")
            for k in ("jump", "rate"):
                if k not in item:
                    raise InvalidParameter(f"{at}.{k}", MISSING, "a transition has the keys "
                                           "jump and rate")
            jump, rate = item["jump"], item["rate"]
        elif isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
            jump, rate = item
        else:
            raise InvalidParameter(at, item, "a table {jump = [...], rate = \"...\"}")
        jump = _jump(f"{at}.jump", jump, variables)
        expr = _expression(f"{at}.rate", rate, symbols, local)
        if expr.is_number and float(expr) < 0:
            raise InvalidParameter(f"{at}.rate", rate, "a rate >= 0", "a negative constant")
        out.append((jump, expr, rate))
    return out


def _parse(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
           where: str) -> Declaration:
    """Validate the whole table up front; one :class:`InvalidParameter` names the bad key."""
    check_keys(where, table, KEYS, "a population model")
    taken: dict[str, str] = {"N": "the population size N", "order": "the expansion's order",
                             "t": "the time of the transient values"}
    params: list[str] = []
    for p in parameters:
        if p.name in taken:
            raise InvalidParameter(f"{where}.parameters.{p.name}", p.name,
                                   "a name other than N, order and t",
                                   f"{p.name} is the population model's own parameter "
                                   f"({taken[p.name]})")
        taken[p.name] = "a declared parameter"
        params.append(p.name)
    variables = _variables(where, table, taken)
    symbols = (*variables, *params)
    local = {s: sp.Symbol(s, positive=True) for s in symbols}  # as parse_formula builds them
    bounds = _bounds(where, table)
    monotone = _monotone(where, table, variables)
    transitions = _transitions(where, table, variables, symbols, local)
    outputs: dict[str, sp.Expr] = {}
    raw_outputs = table.get("outputs", {})
    if not isinstance(raw_outputs, Mapping):
        raise InvalidParameter(f"{where}.outputs", raw_outputs, "a table {NAME = \"formula\"}")
    for out_name, formula in raw_outputs.items():
        key = f"{where}.outputs.{out_name}"
        outputs[_name_ok(key, out_name, taken)] = _expression(key, formula, symbols, local)
        taken[out_name] = "an output"
    if "initial" in table:
        initial = _point(f"{where}.initial", table["initial"], variables, bounds, monotone)
    elif math.isfinite(bounds[1]):
        initial = np.full(len(variables), 0.5 * (bounds[0] + bounds[1]))
    else:
        raise InvalidParameter(f"{where}.initial", MISSING, "a starting point (n numbers) "
                               "when the upper bound is infinite")
    if "search" in table:
        raw = table["search"]
        if isinstance(raw, str) or not isinstance(raw, Sequence):
            raise InvalidParameter(f"{where}.search", raw, "a list of points")
        search = tuple(_point(f"{where}.search[{i}]", p, variables, bounds, monotone)
                       for i, p in enumerate(raw))
    else:
        search = tuple(np.full(len(variables), b) for b in bounds if math.isfinite(b))
    tolerance = table.get("tolerance", 1e-12)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) \
            or not 0 < tolerance < 1:
        raise InvalidParameter(f"{where}.tolerance", tolerance, "a number in (0, 1)")
    process = PopulationProcess([local[v] for v in variables], [local[p] for p in params],
                                bounds=bounds, name=f"population process {name}")
    for jump, expr, _text in transitions:
        process.add_transition(jump, expr)
    if len(monotone) >= 2:
        process.declare_monotone(*monotone)
    return Declaration(name=name, where=where, process=process, variables=variables,
                        parameters=tuple(params), rate_texts=tuple(t for _, _, t in transitions),
                        outputs=outputs, initial=initial, search=search,
                        tolerance=float(tolerance))


# ---------------------------------------------------------------------------- the kind


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def declare_population(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                       where: str) -> ModelSpec:
    """Build the model a ``kind = "population"`` declaration describes.

    Parameters
    ----------
    name : str
        The model's name in the claims file.
    table : mapping
        The declaration's keys (:data:`KEYS`), without ``kind`` and ``parameters``.
    parameters : tuple of Parameter
        The declared parameters (symbols of the rate and output formulas).
    where : str
        The key path as typed (``models.my-sis``), for error messages.

    Returns
    -------
    ModelSpec
        Parameters: the declared ones and ``N`` (optional); outputs: :data:`OUTPUTS`.

    Raises
    ------
    InvalidParameter
        Naming ``where.key`` (``models.my-sis.transitions[1].rate``) for an unknown or missing
        key, a jump of the wrong length, a formula with an undeclared symbol, ...

    Examples
    --------
    >>> from symq.core.parameters import Parameter, PositiveReal
    >>> ps = (Parameter("beta", PositiveReal()), Parameter("gamma", PositiveReal()))
    >>> spec = declare_population("sis", {"variables": ["i"], "transitions": [
    ...     {"jump": [1], "rate": "beta*i*(1 - i)"}, {"jump": [-1], "rate": "gamma*i"}]},
    ...     ps, "models.sis")
    >>> round(spec.run({"beta": 2.0, "gamma": 1.0})["i"], 12)  # 1 - gamma/beta
    0.5
    """
    decl = _parse(name, table, tuple(parameters), where)
    outputs = ("x", *decl.variables, "residual", "eigenvalues", "spectral_abscissa", "stable",
               "fixed_points", "fixed_points_stable", "n_fixed_points", *decl.outputs, "V",
               "x_N", *(f"{v}_N" for v in decl.variables), *(f"{k}_N" for k in decl.outputs),
               "V2", "x_N2", *(f"{v}_N2" for v in decl.variables),
               *(f"{k}_N2" for k in decl.outputs),
               *(f"{name}{end}" for end in ("_t", "_t_N", "_t_N2")
                 for name in ("x", *decl.variables, *decl.outputs)))
    return ModelSpec(
        name=name,
        summary=(f"declared population process ({_count(len(decl.variables), 'variable')}, "
                 f"{_count(len(decl.process.transitions), 'transition')}): mean-field fixed "
                 "point, stability, refined 1/N and 1/N^2 terms, transient"),
        parameters=(*parameters, _N, _ORDER, _T),
        solve=Solver(decl),
        scalar_outputs=lambda r: {k: float(r.values[k]) for k in
                                  ("residual", "spectral_abscissa", *decl.variables,
                                   *decl.outputs)},
        derivation=lambda: derivation(decl),
        source=f"declared ({where}, kind population)",
        outputs=outputs,
    )


POPULATION = ModelKind(
    kind="population",
    summary=("a density-dependent population process (Kurtz): jumps and rate formulas; "
             "mean-field fixed point, stability, refined 1/N term (Gast & Van Houdt 2018)"),
    declare=declare_population,
    keys=KEYS,
    outputs=OUTPUTS,
    example=EXAMPLE,
)
