"""Continuous-time Markov chains declared in a claims file: the model kind ``ctmc``.

A claims file writes a finite CTMC as PRISM writes one (Kwiatkowska, Norman & Parker,
"PRISM 4.0", CAV 2011): bounded integer state variables and guarded jumps
``guard -> rate : update``.  ``[models.NAME]`` with ``kind = "ctmc"`` gives the variables with
their bounds, the jumps and the outputs (:data:`EXAMPLE` is an M/M/1/K queue), and
:func:`declare_ctmc` turns it into a :class:`~symq.core.registry.ModelSpec` whose solve builds
the reachable state space for the parameter values, solves the stationary law
(:func:`symq.markov.stationary.stationary`, sparse LU with its residual checked, or
:func:`symq.markov.exact.exact_stationary` in exact rationals with ``method = "exact"``) and
reports every declared output.

A bound may be a formula in the integer parameters (``n = [0, "K"]``): the chain is built for
the bounds the parameter values give, so one declaration covers a region over ``K``.  Text is
parsed (:func:`symq.core.formula.parse_formula`, :func:`symq.core.conditions.parse_condition`),
never evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import sympy as sp

from symq.core.claimsfile.declarations import check_keys
from symq.core.errors import MISSING, InvalidParameter
from symq.core.formula import parse_formula
from symq.core.parameters import Choice, IntegerAtLeast, Parameter
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import ResultBase

from .chain import Jump, MarkovChain, StateVariable
from .exact import exact_stationary
from .levels import qbd_stationary
from .simulation_declared import simulate_chain
from .stationary import stationary

__all__ = ["CTMC", "declare_ctmc", "KEYS", "OUTPUTS", "EXAMPLE", "CACHED_CHAINS"]

KEYS: dict[str, str] = {
    "variables": "table {NAME = [low, high]} of integer state variables; a bound is an "
                 "integer or a formula in the integer parameters (\"K\", \"c + K\"); one "
                 "variable may be an unbounded level, high = \"oo\" (a QBD: matrix-geometric "
                 "solve)",
    "jumps": "list of {rate = \"...\", update = {VAR = \"new value from the old state\"}, "
             "guard = \"condition\" (default: always), label = \"name\" (optional)}; enabled "
             "jumps add their rates (PRISM's semantics), updates are simultaneous",
    "initial": "{VAR = integer}: the state the reachable set is built from (default: every "
               "variable at its low bound)",
    "outputs": "{NAME = \"formula\" (its stationary mean), \"condition\" (its stationary "
               "probability) or \"throughput:LABEL\" (the firing rate of the labelled jumps)}",
    "tolerance": "largest residual ||pi Q||_1 / max q_i accepted (default 1e-10)",
}

#: Result keys of a declared chain besides its own outputs.
OUTPUTS: tuple[str, ...] = ("<output>", "n_states", "residual", "n_events", "horizon")

#: The upper bound of an unbounded level variable, as a claims file writes it.
UNBOUNDED = ("oo", "inf", "infinity")
#: Chains built for distinct bound values kept per declaration (a region over ``K``).
CACHED_CHAINS = 64
#: A bound given by a formula stands at -/+ this while the declaration is checked (no state
#: space is built then, only the formulas are parsed).
_WIDE = 10**6

EXAMPLE = '''\
[models.mm1k]
kind = "ctmc"
parameters = { lam = "positive", mu = "positive", K = "integer >= 1" }
variables = { n = [0, "K"] }
jumps = [
  { guard = "n < K", rate = "lam", update = { n = "n + 1" }, label = "arrive" },
  { guard = "n > 0", rate = "mu", update = { n = "n - 1" }, label = "serve" },
]
outputs = { EN = "n", P_full = "n == K", X = "throughput:serve" }
'''

_METHOD = Parameter("method", Choice(("sparse", "exact", "simulation")), required=False,
                    default="sparse", typical="sparse",
                    description="sparse: GTH or sparse LU in floats, residual checked (a "
                                "chain with an unbounded level: matrix-geometric or level "
                                "reduction); simulation: a Gillespie run compiled from the "
                                "declared rates (intervals; n_events, rng; unbounded chains "
                                "too); exact: rational arithmetic (finite, small chains; a "
                                "parameter is read as the decimal it is written as, "
                                "0.3 = 3/10)")
_N_EVENTS = Parameter("n_events", IntegerAtLeast(1000), required=False, default=None,
                      typical=1_000_000,
                      description="transitions of a simulation run (method = simulation; "
                                  "default 10^6)")
_RESERVED = frozenset({"n_states", "residual", "method", "n_events", "horizon"})


def _where(where: str, exc: InvalidParameter) -> InvalidParameter:
    """The chain's own error, its parameter path prefixed with the declaration's key."""
    return InvalidParameter(f"{where}.{exc.name}", exc.value, exc.domain, exc.reason)


def _bounds(where: str, table: Mapping[str, Any], params: tuple[str, ...]
            ) -> dict[str, tuple[Any, Any]]:
    key = f"{where}.variables"
    raw = table.get("variables", MISSING)
    domain = "a table {NAME = [low, high]} (integers or formulas in the parameters)"
    if raw is MISSING or not isinstance(raw, Mapping) or not raw:
        raise InvalidParameter(key, raw, domain)
    out: dict[str, tuple[Any, Any]] = {}
    for name, pair in raw.items():
        at = f"{key}.{name}"
        if name in _RESERVED:
            raise InvalidParameter(at, name, "a name other than " + ", ".join(sorted(_RESERVED)))
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise InvalidParameter(at, pair, "[low, high]")
        ends = []
        for i, end in enumerate(pair):
            if isinstance(end, bool):
                raise InvalidParameter(f"{at}[{i}]", end, "an integer or a formula")
            if isinstance(end, int):
                ends.append(end)
            elif i == 1 and isinstance(end, str) and end.strip() in UNBOUNDED:
                ends.append(None)
            elif isinstance(end, str):
                ends.append(parse_formula(f"{at}[{i}]", end, params))
            else:
                raise InvalidParameter(f"{at}[{i}]", end, "an integer or a formula in the "
                                       "parameters " + ", ".join(params))
        out[str(name)] = (ends[0], ends[1])
    return out


def _jumps(where: str, table: Mapping[str, Any]) -> tuple[Jump, ...]:
    key = f"{where}.jumps"
    raw = table.get("jumps", MISSING)
    domain = "a non-empty list of {rate = ..., update = {...}, guard = ..., label = ...}"
    if raw is MISSING or isinstance(raw, (str, Mapping)) or not isinstance(raw, Sequence) \
            or not raw:
        raise InvalidParameter(key, raw, domain)
    jumps = []
    for i, item in enumerate(raw):
        at = f"{key}[{i}]"
        if not isinstance(item, Mapping):
            raise InvalidParameter(at, item, domain)
        unknown = sorted(set(item) - {"rate", "update", "guard", "label"})
        if unknown:
            raise InvalidParameter(f"{at}.{unknown[0]}", item[unknown[0]], "absent: a jump "
                                   "has the keys rate, update, guard and label")
        for needed in ("rate", "update"):
            if needed not in item:
                raise InvalidParameter(f"{at}.{needed}", MISSING, "given: " + domain)
        try:
            jumps.append(Jump(item["rate"], item["update"], item.get("guard", "true"),
                              item.get("label")))
        except InvalidParameter as exc:
            raise InvalidParameter(at + exc.name.removeprefix("Jump"), exc.value, exc.domain,
                                   exc.reason) from None
    return tuple(jumps)


def _as_written(value: Any) -> Any:
    """A float parameter as the decimal it prints as (``0.3`` -> ``3/10``): the rational a
    claims file's author wrote, for the exact solve."""
    if isinstance(value, float) and math.isfinite(value):
        return Fraction(repr(value))
    return value


class ChainSolver:
    """Builds the chain for the bounds a parameter point gives (cached) and solves it."""

    def __init__(self, name: str, where: str, table: Mapping[str, Any],
                 parameters: tuple[str, ...]) -> None:
        self.name, self.where, self.parameters = name, where, parameters
        self.bounds = _bounds(where, table, parameters)
        self.jumps = _jumps(where, table)
        self.initial = table.get("initial")
        self.outputs = table.get("outputs", {})
        if not isinstance(self.outputs, Mapping):
            raise InvalidParameter(f"{where}.outputs", self.outputs,
                                   "a table {NAME = \"formula\", \"condition\" or "
                                   "\"throughput:LABEL\"}")
        for out in self.outputs:
            if out in _RESERVED or out in self.bounds:
                raise InvalidParameter(f"{where}.outputs.{out}", out, "a name other than a "
                                       "variable and " + ", ".join(sorted(_RESERVED)))
        tolerance = table.get("tolerance", 1e-10)
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) \
                or not 0 < tolerance < 1:
            raise InvalidParameter(f"{where}.tolerance", tolerance, "a number in (0, 1)")
        self.tolerance = float(tolerance)
        self._chains: dict[tuple[tuple[int, int | None], ...], MarkovChain] = {}
        self._build([(lo if isinstance(lo, int) else -_WIDE,
                      hi if hi is None or isinstance(hi, int) else _WIDE)
                     for lo, hi in self.bounds.values()])  # every formula checked up front
        self.level = next((v for v, (_, hi) in self.bounds.items() if hi is None), None)

    def _bound(self, at: str, end: Any, values: Mapping[str, Any]) -> int | None:
        if end is None or isinstance(end, int):
            return end
        number = end.subs({sp.Symbol(p, positive=True): values[p] for p in self.parameters})
        x = float(number)
        if not math.isfinite(x) or abs(x - round(x)) > 1e-9 * max(1.0, abs(x)):
            raise InvalidParameter(at, str(end), "a formula giving an integer",
                                   f"it gives {x:g} at "
                                   + ", ".join(f"{p}={values[p]}" for p in self.parameters))
        return int(round(x))

    def _build(self, bounds: Sequence[tuple[int, int | None]]) -> MarkovChain:
        try:
            variables = [StateVariable(v, lo, hi) for v, (lo, hi) in zip(self.bounds, bounds)]
            return MarkovChain(variables, self.jumps, self.parameters, self.initial,
                               self.outputs, name=self.name)
        except InvalidParameter as exc:
            raise _where(self.where, exc) from None

    def chain(self, values: Mapping[str, Any]) -> MarkovChain:
        """The chain for the bounds at ``values`` (built once per distinct bounds)."""
        key = tuple((self._bound(f"{self.where}.variables.{v}[0]", lo, values),
                     self._bound(f"{self.where}.variables.{v}[1]", hi, values))
                    for v, (lo, hi) in self.bounds.items())
        chain = self._chains.get(key)
        if chain is None:
            chain = self._build(key)
            if len(self._chains) >= CACHED_CHAINS:
                self._chains.pop(next(iter(self._chains)))
            self._chains[key] = chain
        return chain

    def __call__(self, method: str = "sparse", n_events: int | None = None, rng: Any = None,
                 **values: Any) -> ResultBase:
        chain = self.chain(values)
        params = {p: values[p] for p in self.parameters}
        if n_events is not None and method != "simulation":
            raise InvalidParameter("n_events", n_events, "given only with method = simulation")
        if self.level is not None and method == "exact":
            raise InvalidParameter("method", method, "sparse (the matrix-geometric or level "
                                   "reduction solve) or simulation for a chain with the "
                                   f"unbounded level {self.level}")
        if self.level is not None and method != "simulation":
            try:
                return qbd_stationary(chain, params)
            except InvalidParameter as exc:
                raise _where(self.where, exc) from None
        try:
            if method == "simulation":
                return simulate_chain(chain, params, n_events=n_events, rng=rng)
            if method == "exact":
                return exact_stationary(chain, {p: _as_written(v) for p, v in params.items()})
            return stationary(chain, params, tol=self.tolerance)
        except InvalidParameter as exc:
            if exc.name.startswith(("jumps[", "outputs.", "initial")) or any(
                    exc.name.startswith(f"{j.label}.") for j in self.jumps if j.label):
                raise _where(self.where, exc) from None
            raise


def declare_ctmc(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                 where: str) -> ModelSpec:
    """Build the model a ``kind = "ctmc"`` declaration describes.

    Parameters
    ----------
    name : str
        The model's name in the claims file.
    table : mapping
        The declaration's keys (:data:`KEYS`), without ``kind`` and ``parameters``.
    parameters : tuple of Parameter
        The declared parameters (symbols of the rates, guards, updates, outputs and bounds).
    where : str
        The key path as typed (``models.mm1k``), for error messages.

    Returns
    -------
    ModelSpec
        Parameters: the declared ones, ``method`` (``sparse``, ``exact`` or ``simulation``)
        and ``n_events`` (a simulation's run length); outputs: the declared outputs (intervals
        with ``method = "simulation"``), ``n_states`` and ``residual``.

    Raises
    ------
    InvalidParameter
        Naming ``where.key`` (``models.mm1k.jumps[1].rate``) for an unknown or missing key, a
        formula that does not parse or uses an undeclared name, a bound that is not an integer.

    Examples
    --------
    >>> from symq.core.parameters import IntegerAtLeast, Parameter, PositiveReal
    >>> ps = (Parameter("lam", PositiveReal()), Parameter("mu", PositiveReal()),
    ...       Parameter("K", IntegerAtLeast(1)))
    >>> spec = declare_ctmc("mm1k", {"variables": {"n": [0, "K"]}, "jumps": [
    ...     {"guard": "n < K", "rate": "lam", "update": {"n": "n + 1"}},
    ...     {"guard": "n > 0", "rate": "mu", "update": {"n": "n - 1"}}],
    ...     "outputs": {"P_full": "n == K"}}, ps, "models.mm1k")
    >>> r = spec.run({"lam": 1.0, "mu": 1.0, "K": 3})
    >>> round(r["P_full"], 12), r["n_states"]       # uniform on 0..3 when lam = mu
    (0.25, 4)
    """
    check_keys(where, table, KEYS, "a ctmc model")
    for p in parameters:
        if p.name in _RESERVED:
            raise InvalidParameter(f"{where}.parameters.{p.name}", p.name,
                                   "a name other than " + ", ".join(sorted(_RESERVED)))
    solver = ChainSolver(name, where, table, tuple(p.name for p in parameters))
    outputs = (*solver.outputs, "n_states", "residual", "n_events", "horizon")
    return ModelSpec(
        name=name,
        summary=(f"declared CTMC ({len(solver.bounds)} variables, {len(solver.jumps)} jumps): "
                 "its stationary law and the declared outputs"),
        parameters=(*parameters, _METHOD, _N_EVENTS),
        solve=solver,
        source=f"declared ({where}, kind ctmc)",
        outputs=outputs,
    )


CTMC = ModelKind(
    kind="ctmc",
    summary=("a continuous-time Markov chain by guarded jumps (PRISM's idiom), finite or with "
             "one unbounded level: the stationary law (GTH, sparse LU or GMRES; a QBD "
             "matrix-geometrically; exact rationals; or a Gillespie simulation), means, "
             "probabilities and throughputs"),
    declare=declare_ctmc,
    keys=KEYS,
    outputs=OUTPUTS,
    example=EXAMPLE,
)
