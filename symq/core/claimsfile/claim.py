"""A claim of a claims file: a relation between quantities, checked over a region.

:func:`build_claim` turns one entry of a claims file's ``claims`` list (a TOML table or a Python
dict) into a :class:`FileClaim`, which is a :class:`~symq.core.claims.Claim` and is checked by
the same machinery as the built-in papers' claims.  The keys of an entry:

``name`` (required)
    A short, unique name.
``statement``
    ``lhs OP rhs`` with OP one of ``==``, ``<=``, ``>=``, ``<``, ``>``, ``->`` (a limit, with
    ``limit``); the sides are formulas in the region's parameters, the ``let`` quantities and the
    file's ``constants``.
``formula`` and ``reference``
    Shorthand for ``statement = "claimed == reference"`` with ``claimed`` the formula and
    ``reference`` a model reference (``"supermarket:ET"``).
``tex`` and ``tex_symbols``
    The statement (with a relation) or the formula (beside ``reference``) in LaTeX, and the
    claim's own TeX symbols (:mod:`symq.core.claimsfile.tex`).
``let``
    Named quantities: formulas, references ``"MODEL:KEY"`` or tables ``{ ref = "MODEL:KEY",
    param = value, ... }`` (see :mod:`symq.core.claimsfile.quantities`), TeX tables
    ``{ tex = '...' }``; in Python files also functions of the point.
``region``
    The parameter region (:mod:`symq.core.claimsfile.region`).
``tolerance``
    :mod:`symq.core.tolerance`; default relative 1e-9.
``limit``
    ``{ p = 0 }`` for ``lhs -> rhs as p -> 0``, ``{ k = "oo" }`` (or ``"-oo"``) for a limit at
    infinity: the left side is extrapolated along the region's grid toward the limit, with an
    error bar, and compared with the right side (:mod:`symq.core.claimsfile.limits`); a range
    ``"a:b"`` of that parameter is a log grid toward the limit
    (:mod:`symq.core.claimsfile.region`).
``source``, ``expected``, ``seed``, ``notes``
    Where the claim comes from, the verdict expected (``"holds"`` or ``"fails"``), the seed
    of its simulations and free text.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ..budget import time_budget
from ..claims import (
    Claim,
    Evidence,
    Inconclusive,
    PointOutcome,
    Status,
    Verdict,
    displayable,
)
from ..errors import (
    DerivationTimeout,
    InvalidParameter,
    RunTooShort,
    StabilityError,
    SymqError,
)
from ..formula import Relation, degree_estimate, parse_formula, parse_relation
from ..formula_tex import parse_tex_relation, tex_shown
from ..glossary import RETIRED
from ..parameters import validate_parameters
from ..registry import models
from ..renamed import RenamedKeywordWarning
from ..tolerance import Tolerance, parse_tolerance, point_error
from .explain import holding_region, smallest_counterexample
from .limits import check_limit_axis, limit_verdict, parse_limit_target, show_target
from .quantities import (
    DIRECT_SUM_TERMS,
    REFERENCE_PATTERN,
    SEQUENTIAL_BUDGET,
    SUM_TERM_BUDGET,
    Environment,
    FileContext,
    Formula,
    Function,
    Quantity,
    Reference,
    evaluate_expression,
    override_value,
    sum_cost,
)
from .region import Region, parse_region
from .tex import claim_symbols, tex_claim, tex_quantity

__all__ = ["CLAIM_KEYS", "FileClaim", "RegionOutsideDomain", "build_claim", "parse_quantities"]

CLAIM_KEYS = ("name", "statement", "formula", "reference", "tex", "tex_symbols", "let", "region",
              "tolerance", "limit", "source", "expected", "seed", "notes")
#: Seconds sympy may spend proving an identity.
PROOF_SECONDS = 3.0
#: Highest estimated polynomial degree of a side for which a symbolic proof is tried.
PROOF_MAX_DEGREE = 200


class RegionOutsideDomain(InvalidParameter):
    """A point of a claim's region lies outside the domain of a model the claim refers to (a
    condition the model checks when it solves, such as its stability): the claim is bad input,
    not a finding."""


@dataclass(repr=False)              # Claim's one-line repr
class FileClaim(Claim):
    """A claim declared in a claims file (see the module docstring)."""

    relation: Relation | None = None
    quantities: dict[str, Quantity] = field(default_factory=dict)
    region: Region | None = None
    tolerance_spec: Tolerance = field(default_factory=Tolerance)
    limit: dict[str, float] = field(default_factory=dict)
    observed: set[Evidence] = field(default_factory=set)
    where: str = "claims[0]"
    location: str = ""
    tex: str = ""  # the statement or formula as the user wrote it in LaTeX, if so
    _n_points: int = 1
    _domain_errors: list[tuple[Mapping[str, Any], SymqError]] = field(default_factory=list)
    _proof: str | None = None
    side_names = ("left side", "right side")

    @property
    def proof(self) -> str:
        """"sympy proves ..." when the relation is an identity sympy can prove, else "".

        Tried on first use (when the claim is checked or derived), not when the file is
        loaded, so that loading a file of many claims costs no symbolic simplification."""
        if self._proof is None:
            assert self.relation is not None
            self._proof = _prove(self.relation, self.quantities)
        return self._proof

    @property
    def evidences(self) -> tuple[Evidence, ...]:
        order = list(Evidence)
        found = sorted(self.observed, key=order.index)
        if self.proof:
            found.insert(0, Evidence.SYMBOLIC)
        return tuple(found) or (Evidence.NUMERIC,)

    @property
    def deterministic(self) -> bool:
        return Evidence.SIMULATION not in self.observed

    def points(self) -> list[Mapping[str, Any]]:
        assert self.region is not None
        return list(self.region.points())

    def _side(self, expr: sp.Expr, env: Environment, label: str) -> Any:
        if isinstance(expr, sp.Symbol):
            return env.value(expr.name)
        values = {s.name: env.value(s.name) for s in expr.free_symbols}
        return evaluate_expression(expr, values, env.evidence, label)

    def evaluate(self, point: Mapping[str, Any]) -> PointOutcome:
        return self.evaluate_sides(point)[0]

    def evaluate_sides(self, point: Mapping[str, Any]) -> tuple[PointOutcome, Any, Any]:
        """The outcome at ``point`` and both sides as computed (exact, 50-digit, a float or a
        confidence interval; None where the outcome has no error)."""
        assert self.relation is not None
        env = Environment(point, self.quantities, seed=self.seed)
        try:
            lhs = self._side(self.relation.lhs, env, "the left side")
            rhs = self._side(self.relation.rhs, env, "the right side")
            err = point_error(lhs, self.relation.op, rhs, self.tolerance_spec, self._n_points)
        except Inconclusive as exc:
            return PointOutcome(point, None, None, None, str(exc)), None, None
        except RunTooShort as exc:  # the simulation cannot resolve this load at this run length
            return PointOutcome(point, None, None, None, f"the simulation run is too short to "
                                f"decide: {exc}"), None, None
        except (StabilityError, InvalidParameter) as exc:  # the model refuses the point
            if isinstance(exc, InvalidParameter) and str(exc.name).startswith(self.where + "."):
                raise  # the claim's own key is wrong (its tolerance, say): bad input as such
            self._domain_errors.append((point, exc))
            return PointOutcome(point, None, None, None, f"{type(exc).__name__}: {exc}"), \
                None, None
        except SymqError as exc:
            return PointOutcome(point, None, None, None, f"{type(exc).__name__}: {exc}"), \
                None, None
        finally:
            self.observed |= env.evidence
        shown = displayable(lhs), displayable(rhs)  # compared exactly; kept printable
        if math.isnan(err):
            return PointOutcome(point, *shown, None, "the error is NaN"), None, None
        return PointOutcome(point, *shown, err, ""), lhs, rhs

    def compared_text(self) -> str:
        assert self.relation is not None and self.region is not None
        names = sorted({s.name for s in self.relation.lhs.free_symbols
                        | self.relation.rhs.free_symbols} & set(self.quantities))
        lets = "; ".join(f"{n} = {self.quantities[n].describe()}" for n in names)
        text = self.relation.text + (f" with {lets}" if lets else "")
        text += f"; over {self.region.describe()}; tolerance {self.tolerance_spec.describe()}"
        if self.limit:
            text += "; limit " + ", ".join(f"{k} -> {show_target(v)}"
                                           for k, v in self.limit.items())
        if self.proof:
            text += f"; {self.proof}"
        return text

    def check(self) -> Verdict:
        """The verdict; raises :class:`RegionOutsideDomain` when a model refused a point of the
        region (bad input: the claim must be fixed, it is neither true nor false)."""
        self.observed = set()
        self._domain_errors = []
        points = self.points()
        self._n_points = max(len(points), 1)
        self._check_sum_budget(points)
        if self.relation is not None and self.relation.op == "->":
            verdict = limit_verdict(self)
        else:
            verdict = super().check()
        if self._domain_errors:
            raise self._outside_domain(points)
        return verdict

    def _check_sum_budget(self, points: list[Mapping[str, Any]]) -> None:
        """Refuse, before evaluating, a claim whose finite sums need more than
        :data:`~symq.core.claimsfile.quantities.SUM_TERM_BUDGET` term evaluations."""
        assert self.relation is not None
        exprs = [self.relation.lhs, self.relation.rhs]
        exprs += [q.expr for q in self.quantities.values() if isinstance(q, Formula)]
        cost = sum_cost(exprs, points, lambda bound: _substituted(bound, self.quantities))
        if cost > SUM_TERM_BUDGET:
            sums = sorted({str(n) for e in exprs for n in e.atoms(sp.Sum, sp.Integral)})
            raise InvalidParameter(
                f"{self.where}.statement", self.relation.text,
                f"a claim whose finite sums and integrals need at most {SUM_TERM_BUDGET} term "
                "evaluations over its region", f"{', '.join(sums)} need about "
                f"{cost:.2g} over {len(points)} points (sums of more than {DIRECT_SUM_TERMS} "
                "terms count as accelerated); shrink the region or write a closed form")

    def _outside_domain(self, points: list[Mapping[str, Any]]) -> RegionOutsideDomain:
        point, exc = self._domain_errors[0]
        refused = [p for p, _ in self._domain_errors]
        accepted = [p for p in points if p not in refused]
        blame = [k for k, v in point.items() if all(a.get(k) != v for a in accepted)]
        if isinstance(exc, InvalidParameter) and exc.name in point:
            blame = [exc.name]
        shown = ", ".join(f"{k}={v!r}" for k, v in point.items())
        reason = f"at {shown}: {exc}"
        if len(blame) == 1:
            return RegionOutsideDomain(f"{self.where}.region.{blame[0]}", point[blame[0]],
                                       "a value the model accepts", reason)
        return RegionOutsideDomain(f"{self.where}.region", shown, "points the model accepts",
                                   reason)

    def _decide(self, point: dict[str, Any]) -> bool | None:
        outcome = self.evaluate(point)
        return None if outcome.error is None else outcome.error <= self.tolerance

    def explain(self, verdict: Verdict, outcomes: Any) -> Verdict:
        assert self.region is not None
        verdict.holds_region = holding_region(self.region, outcomes, self.tolerance,
                                              self._decide, self.deterministic)
        if verdict.status is Status.FAILS:
            verdict.counterexample = smallest_counterexample(
                self.region, outcomes, lambda p: (lambda d: None if d is None else not d)(
                    self._decide(p)), self.tolerance, self.deterministic)
        verdict.evidence = self.evidences
        return verdict


# ----------------------------------------------------------------------------- building

def _assumptions(region: Region) -> dict[str, dict[str, bool]]:
    out: dict[str, dict[str, bool]] = {}
    for axis in region.axes:
        if not axis.numeric:
            continue
        kind = {"integer": True} if axis.integer else {"real": True}
        if axis.low is not None and axis.low > 0:
            kind["positive"] = True
        elif axis.low is not None and axis.low >= 0:
            kind["nonnegative"] = True
        out[axis.name] = kind
    return out


def parse_quantities(where: str, table: Any, names: tuple[str, ...], context: FileContext,
                     assumptions: dict[str, dict[str, bool]], allow_references: bool = True,
                     tex_symbols: Mapping[str, str] | None = None) -> dict[str, Quantity]:
    """The ``let`` (or ``constants``) table: name -> formula, reference or function.

    A quantity given as a table with the key ``tex`` reads TeX with ``tex_symbols`` (default:
    the file's map)."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table of named quantities")
    all_names = tuple(dict.fromkeys([*names, *table]))
    real = {n: {"real": True} for n in all_names}
    out: dict[str, Quantity] = {}
    for name, spec in table.items():
        key = f"{where}.{name}"
        if not str(name).isidentifier():
            raise InvalidParameter(key, spec, "a quantity whose name is an identifier")
        ref = spec.get("ref") if isinstance(spec, Mapping) else spec
        if isinstance(spec, Mapping) and "tex" in spec:
            symbols = context.tex_symbols if tex_symbols is None else tex_symbols
            out[name] = tex_quantity(key, name, spec, tuple(n for n in all_names if n != name),
                                     symbols, {**real, **assumptions})
        elif isinstance(ref, str) and REFERENCE_PATTERN.match(ref):
            if not allow_references:
                raise InvalidParameter(key, spec, "a number or a formula (constants cannot "
                                       "refer to models)")
            overrides = dict(spec) if isinstance(spec, Mapping) else {"ref": spec}
            overrides.pop("ref")
            out[name] = _reference(key, name, ref, overrides, all_names, context)
        elif isinstance(spec, Mapping):
            raise InvalidParameter(key, dict(spec), "a table { ref = \"MODEL:KEY\", ... }",
                                   "no ref key" if "ref" not in spec else
                                   "ref is not written MODEL:KEY")
        elif isinstance(spec, str):
            others = tuple(n for n in all_names if n != name)
            expr = parse_formula(key, spec, others, sums=True,
                                 assumptions={**real, **assumptions})
            out[name] = Formula(name, expr, spec)
        elif isinstance(spec, (int, float)) and not isinstance(spec, bool):
            out[name] = Formula(name, sp.Rational(repr(spec)) if isinstance(spec, float)
                                else sp.Integer(spec), repr(spec))
        elif isinstance(spec, sp.Expr):
            unknown = {s.name for s in spec.free_symbols} - set(all_names)
            if unknown:
                raise InvalidParameter(key, spec, "an expression in " + ", ".join(all_names),
                                       f"unknown symbols {', '.join(sorted(unknown))}")
            out[name] = Formula(name, spec, str(spec))
        elif callable(spec):
            out[name] = Function(name, spec)
        else:
            raise InvalidParameter(key, spec, "a formula, a reference MODEL:KEY, a table "
                                   "{ ref = ... } or (in Python files) a function")
    _check_cycles(where, out)
    return out


def _check_cycles(where: str, quantities: Mapping[str, Quantity]) -> None:
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2 or name not in quantities:
            return
        if state.get(name) == 1:
            cycle = " -> ".join(path[path.index(name):] + [name])
            raise InvalidParameter(f"{where}.{name}", quantities[name].describe(),
                                   "a quantity that does not depend on itself",
                                   f"cycle {cycle}")
        state[name] = 1
        for dep in quantities[name].depends:
            visit(dep, path + [name])
        state[name] = 2

    for name in quantities:
        visit(name, [])


def _reference(key: str, name: str, text: str, overrides: dict[str, Any],
               names: tuple[str, ...], context: FileContext) -> Reference:
    match = REFERENCE_PATTERN.match(text)
    assert match is not None
    model_name, result_key, index = match.groups()
    try:
        model = context.model(model_name, f"{key}.ref" if overrides else key)
    except InvalidParameter as exc:
        close = difflib.get_close_matches(model_name, [*context.models, *models()], n=1)
        if not close:
            raise
        raise InvalidParameter(exc.name, exc.value, exc.domain,
                               f"{exc.reason}; did you mean {close[0]}?") from None
    if model.outputs and result_key not in model.outputs:
        result_key = _current_result_key(key, model, result_key)
    if model.outputs and result_key not in model.outputs:
        close = difflib.get_close_matches(result_key, model.outputs, n=1)
        raise InvalidParameter(f"{key}", text, f"a result of model {model.name}: "
                               + ", ".join(model.outputs), f"no result {result_key!r}"
                               + (f"; did you mean {close[0]}?" if close else ""))
    overrides = model.current_names(overrides, key)  # an old parameter name: a warning
    sequential = _sequential_keys(key, model, overrides, index)
    parsed = {}
    for param, value in overrides.items():
        try:
            parsed[param] = override_value(model, param, value, key, names)
        except InvalidParameter as exc:
            raise InvalidParameter(f"{key}.{param}", value, exc.domain, exc.reason) from None
    idx = None
    if index is not None:
        idx = parse_formula(f"{key} (index)", index, names,
                            assumptions={n: {"real": True} for n in names})
    return Reference(name, model, result_key, idx, parsed, context, text, **sequential)


def _current_result_key(key: str, model: Any, result_key: str) -> str:
    """The glossary's name for a retired result key (``attained:ER`` -> ``attained:ET``), with
    a :class:`~symq.core.renamed.RenamedKeywordWarning`; any other key unchanged."""
    current = RETIRED.get(result_key)
    if current is None or current not in model.outputs:
        return result_key
    warnings.warn(f"{key}: {model.name}:{result_key} is now {model.name}:{current} (the "
                  f"glossary's name); {result_key} is read for one release",
                  RenamedKeywordWarning, stacklevel=2)
    return current


#: Run-length parameters of the simulation models, in the order they are looked for.
JOBS_PARAMETERS = ("n_jobs", "n_losses", "n_jobs_per_server", "n_events")


def _sequential_keys(key: str, model: Any, overrides: dict[str, Any],
                     index: str | None) -> dict[str, Any]:
    """``half_width`` (a relative target in (0, 1)) and ``max_jobs`` of a reference table,
    removed from ``overrides``: the reference runs Stein's two-stage procedure
    (:meth:`Reference._sequential`) instead of one run of the given length."""
    if "half_width" not in overrides:
        if "max_jobs" in overrides:
            raise InvalidParameter(f"{key}.max_jobs", overrides["max_jobs"],
                                   "given only with half_width (sequential mode)")
        return {}
    target = overrides.pop("half_width")
    budget = overrides.pop("max_jobs", SEQUENTIAL_BUDGET)
    jobs = next((p.name for p in model.parameters if p.name in JOBS_PARAMETERS), None)
    if jobs is None or index is not None:
        raise InvalidParameter(f"{key}.half_width", target, "given only for a simulation "
                               "model's interval (a model with n_jobs) without an index")
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target < 1:
        raise InvalidParameter(f"{key}.half_width", target,
                               "a relative half-width in (0, 1), e.g. 0.01")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) \
            or not math.isfinite(budget) or budget < 1000 or budget != int(budget):
        raise InvalidParameter(f"{key}.max_jobs", budget, "an integer >= 1000, e.g. 1e8")
    return {"half_width": float(target), "max_jobs": int(budget), "jobs_parameter": jobs}


def _string(where: str, table: Mapping[str, Any], key: str, required: bool = False) -> str:
    value = table.get(key, "")
    if required and not value:
        raise InvalidParameter(f"{where}.{key}", "<missing>" if key not in table else value,
                               "a non-empty string")
    if not isinstance(value, str):
        raise InvalidParameter(f"{where}.{key}", value, "a string")
    return value


def build_claim(where: str, table: Any, context: FileContext,
                constants: Mapping[str, Any] | None = None) -> FileClaim:
    """Build the claim ``table`` (one entry of ``claims``); ``where`` is its key path as typed.

    Raises
    ------
    InvalidParameter
        Naming the key as typed (``claims[2].let.ET``) for anything the claim gets wrong.
    """
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table with name, statement, region, ...")
    unknown = [k for k in table if k not in CLAIM_KEYS]
    if unknown:
        raise InvalidParameter(f"{where}.{unknown[0]}", table[unknown[0]], "one of the keys "
                               + ", ".join(CLAIM_KEYS), "unknown key")
    name = _string(where, table, "name", required=True)
    let = table.get("let") or {}
    if not isinstance(let, Mapping):
        raise InvalidParameter(f"{where}.let", let, "a table of named quantities "
                               "(let.NAME = formula or \"MODEL:KEY\")")
    let = dict(let)
    symbols = claim_symbols(where, table, context)
    tex = tex_claim(where, table)  # (is a relation, text) or None
    shorthand = table.get("statement") is None and not (tex and tex[0])
    statement = "formula == reference" if shorthand else tex_shown(tex[1]) if tex else \
        _string(where, table, "statement")
    formula = {"tex": tex[1]} if tex and not tex[0] else table.get("formula")
    if shorthand:
        if formula is None or "reference" not in table:
            raise InvalidParameter(f"{where}.statement", "<missing>", "a relation lhs OP rhs "
                                   "(or the pair formula + reference, or tex)")
        for key in ("formula", "reference"):
            if key in let:
                raise InvalidParameter(f"{where}.let.{key}", let[key], "another name",
                                       f"{key} is the claim's own {key}")
    elif "formula" in table or "reference" in table:
        raise InvalidParameter(f"{where}.formula", table.get("formula", table.get("reference")),
                               "absent when statement is given", "give statement or the pair "
                               "formula + reference, not both")
    region = parse_region(f"{where}.region", table.get("region"),
                          limits=_limit_hint(where, table.get("limit")))
    assumptions = _assumptions(region)
    quantities = dict(constants or {})
    own = {"formula": formula, "reference": table["reference"]} if shorthand else {}
    lets = parse_quantities(f"{where}.let", let, region.names + tuple(quantities) + tuple(own),
                            context, assumptions, tex_symbols=symbols)
    if own:
        lets.update(parse_quantities(where, own, region.names + tuple(quantities) + tuple(lets),
                                     context, assumptions, tex_symbols=symbols))
        _check_cycles(where, lets)
    clash = set(lets) & set(region.names)
    if clash:
        n = sorted(clash)[0]
        raise InvalidParameter(f"{where}.let.{n}", let[n], "a name that is not a region "
                               "parameter", f"{n} is also an axis of the region")
    quantities.update(lets)
    names = region.names + tuple(quantities)
    real = {**{n: {"real": True} for n in quantities}, **assumptions}
    relation = parse_tex_relation(f"{where}.tex", tex[1], names, symbols=symbols,
                                  assumptions=real) if tex and tex[0] else \
        parse_relation(f"{where}.statement", statement, names, assumptions=real)
    tolerance = parse_tolerance(f"{where}.tolerance", table.get("tolerance"))
    limit = _limit(where, _limit_spec(where, table.get("limit"), relation), region)
    expected = table.get("expected", "holds")
    if expected not in ("holds", "fails"):
        raise InvalidParameter(f"{where}.expected", expected, "holds or fails")
    seed = table.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidParameter(f"{where}.seed", seed, "an integer >= 0")
    _check_names_used(where, relation, quantities, region)
    _check_region_in_domains(where, quantities, region)
    claim = FileClaim(
        name=name, source=_string(where, table, "source"), statement=statement,
        claimed=_unused, reference=_unused, sample=(), tolerance=tolerance.bound(relation.op),
        seed=seed, notes=_string(where, table, "notes"), expected=Status(expected),
        relation=relation, quantities=quantities, region=region, tolerance_spec=tolerance,
        limit=limit, where=where, tex=tex[1] if tex else "")
    return claim


def _unused(point: Mapping[str, Any]) -> Any:  # FileClaim.evaluate evaluates both sides
    raise AssertionError("not called")


def _limit_spec(where: str, spec: Any, relation: Relation) -> dict[str, float]:
    """The ``limit`` table: ``{ name = value }`` with value a number or ``"oo"``/``"-oo"``."""
    if relation.op != "->":
        if spec:
            raise InvalidParameter(f"{where}.limit", spec, "given only with a statement lhs -> rhs")
        return {}
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise InvalidParameter(f"{where}.limit", spec, "one parameter and its limit, e.g. "
                               "{ p = 0 } or { k = \"oo\" }", "the statement is a limit (->)")
    (name, value), = spec.items()
    return {str(name): parse_limit_target(f"{where}.limit.{name}", value)}


def _limit_hint(where: str, spec: Any) -> dict[str, float]:
    """The limit as far as the region needs it (a range "a:b" toward it is a log grid), read
    before the statement: a bad limit value is reported before the region (whose range may
    depend on it); a bad ``limit`` table once the statement is parsed."""
    if isinstance(spec, Mapping) and len(spec) == 1:
        (name, value), = spec.items()
        return {str(name): parse_limit_target(f"{where}.limit.{name}", value)}
    return {}


def _limit(where: str, limit: dict[str, float], region: Region) -> dict[str, float]:
    """``limit``, checked against the region: its parameter is a grid axis approaching it."""
    for name, target in limit.items():
        if name not in region.names:
            raise InvalidParameter(f"{where}.limit.{name}", show_target(target),
                                   "a parameter of the region: " + ", ".join(region.names))
        check_limit_axis(where, region, name, target)
    return limit


def _check_names_used(where: str, relation: Relation, quantities: Mapping[str, Quantity],
                      region: Region) -> None:
    """Every region parameter is used by a formula or passed to a model (a typo otherwise)."""
    used = {s.name for s in relation.lhs.free_symbols | relation.rhs.free_symbols}
    for q in quantities.values():
        used |= set(q.depends)
        if isinstance(q, Reference):
            used |= {p.name for p in q.model.parameters} | set(q.model.renamed)
        if isinstance(q, Function):
            used |= set(region.names)
    for name in region.names:
        if name not in used:
            raise InvalidParameter(f"{where}.region.{name}", region.axis(name).describe(),
                                   "a parameter used by the statement, a quantity or a model",
                                   "no formula and no model uses it (a typo?)")


def _check_region_in_domains(where: str, quantities: Mapping[str, Quantity],
                             region: Region) -> None:
    """Every point's values lie in the domains of the models the claim refers to."""
    references = [q for q in quantities.values() if isinstance(q, Reference)]
    if not references:
        return
    points = region.points()
    for q in references:
        direct = {p.name for p in q.model.parameters} - set(q.overrides)
        fixed = {k: v for k, v in q.overrides.items() if not isinstance(v, sp.Basic)}
        for point in points:
            current = q.current_point(point)
            values = {**{k: v for k, v in current.items() if k in direct}, **fixed}
            required = [p for p in q.model.parameters if p.required and p.name not in values
                        and p.name not in q.overrides]
            if required:
                raise InvalidParameter(f"{where}.let.{q.name}", q.describe(),
                                       "a reference whose model parameters the claim gives",
                                       f"model {q.model.name} needs {required[0].name}: give "
                                       "it in the region or in the reference's table")
            try:
                validate_parameters([p for p in q.model.parameters if p.name in values],
                                    values)
            except InvalidParameter as exc:
                if exc.name in fixed:
                    raise InvalidParameter(f"{where}.let.{q.name}.{exc.name}", exc.value,
                                           f"{exc.domain} (model {q.model.name})") from None
                raise InvalidParameter(f"{where}.region.{exc.name}", exc.value,
                                       f"{exc.domain} (model {q.model.name})",
                                       "the region leaves the model's domain") from None


def _substituted(expr: sp.Expr, quantities: Mapping[str, Quantity]) -> sp.Expr | None:
    for _ in range(len(quantities) + 1):
        names = {s.name: s for s in expr.free_symbols}
        inner = [n for n in names if n in quantities]
        if not inner:
            return expr
        mapping = {}
        for n in inner:
            q = quantities[n]
            if not isinstance(q, Formula):
                return None
            mapping[names[n]] = q.expr
        expr = expr.xreplace(mapping)
    return None


def _proof_degree(expr: sp.Expr) -> float:
    """The polynomial degree that ``simplify`` may expand ``expr`` to, counting the symbolic
    constants (pi, E) as variables: ``((pi + 1)^16 + 1)^16`` has degree 256."""
    constants = {c: sp.Dummy() for c in expr.atoms(sp.NumberSymbol)}
    return degree_estimate(expr.xreplace(constants) if constants else expr)


def _prove(relation: Relation, quantities: Mapping[str, Quantity]) -> str:
    """"sympy proves ..." when an identity between formulas simplifies to 0 (within
    :data:`PROOF_SECONDS`), else ""."""
    if relation.op != "==":
        return ""
    lhs = _substituted(relation.lhs, quantities)
    rhs = _substituted(relation.rhs, quantities)
    if lhs is None or rhs is None or any(side.has(sp.Sum, sp.Integral) for side in (lhs, rhs)):
        return ""  # simplify would try to sum or integrate, without a time bound
    if max(_proof_degree(lhs), _proof_degree(rhs)) > PROOF_MAX_DEGREE:
        return ""  # simplify would expand it (multinomials of huge degree): no proof tried
    try:
        with time_budget(PROOF_SECONDS, "the symbolic proof"):
            difference = sp.simplify(lhs - rhs)
    except DerivationTimeout:
        return ""
    if difference == 0:
        return "sympy proves lhs - rhs = 0 identically"
    return ""
