r"""Transforms declared in a claims file: the model kind ``transform``.

A declaration gives the formula as a paper prints it (:data:`EXAMPLE`: an Erlang-2 service law
and its M/G/1 waiting time), what it is (``of = "lst"``, ``"mgf"`` or ``"pgf"``), optionally
an ``operation`` that builds the transform a claim is about from it (the M/G/1 FCFS
``waiting-time``, ``sojourn-time``, ``queue-length`` or ``busy-period`` with the arrival rate
``arrival_rate``; ``vacation-waiting-time`` with a ``vacation`` LST; one class of a priority
queue, ``priority-waiting-time`` or ``priority-sojourn-time``, from a list of service LSTs;
``random-sum`` of a ``summand`` LST counted by the PGF; the ``equilibrium`` residual life),
and ``outputs`` read from it:

* ``"moment:K"``, ``"cumulant:K"``, ``"factorial:K"`` (a PGF): exact, ``inf`` where the moment
  does not exist; ``"prob:N"`` (a PGF): :math:`P(N = n)`, exact;
* ``"density:T"``, ``"cdf:T"``, ``"ccdf:T"`` at a point ``T > 0``: by numerical inversion,
  an approximate value whose error bar is the disagreement of the two methods
  (:mod:`symq.me.transforms.inversion`);
* ``"atom"``: the mass at zero;
* ``"decay"``, ``"tail_prefactor"``: :math:`\eta` and :math:`C` of the tail
  :math:`P(X > t) \sim C e^{-\eta t}` from the dominant pole
  (:mod:`symq.me.transforms.tails`).

Text is parsed by the safe formula parser, never evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from symq.core.approximate import Approximate
from symq.core.claimsfile.declarations import check_keys
from symq.core.errors import MISSING, InvalidParameter
from symq.core.parameters import Parameter
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import Exactness, ResultBase

from .busy_period import busy_period_moments, invert_busy_period
from .inversion import WHAT, invert, mass_at_zero
from .model import KINDS, Transform
from .moments import MAX_ORDER, moments, probabilities
from .operations import (
    equilibrium,
    pollaczek_khinchine,
    queue_length,
    random_sum,
    sojourn_time,
    vacation_waiting_time,
)
from .priority import DISCIPLINES, PriorityClassTime, priority_class_time
from .tails import TailAsymptotics, tail_asymptotics

__all__ = ["TRANSFORM", "declare_transform", "KEYS", "EXAMPLE", "TransformOutputs"]

OPERATIONS = ("none", "waiting-time", "sojourn-time", "busy-period", "queue-length",
              "priority-waiting-time", "priority-sojourn-time", "vacation-waiting-time",
              "random-sum", "equilibrium")
KEYS: dict[str, str] = {
    "transform": "the formula, in s (lst), theta (mgf) or z (pgf) and the parameters (a list "
                 "of service LSTs, the highest class first, for a priority operation)",
    "of": "what the formula is: lst (default), mgf or pgf",
    "operation": "none (default), waiting-time or sojourn-time: the M/G/1 FCFS transform "
                 "built from a service LST (Pollaczek-Khinchine); busy-period: the M/G/1 busy "
                 "period (Takacs' equation); queue-length: the PGF of the M/G/1 number in "
                 "system; priority-waiting-time or priority-sojourn-time: one class of an "
                 "M/G/1 priority queue; vacation-waiting-time: the M/G/1 wait with multiple "
                 "vacations (Fuhrmann-Cooper); random-sum: a sum of a PGF-counted number of "
                 "summands; equilibrium: the residual life of the law",
    "arrival_rate": "the parameter that is the Poisson arrival rate of the operation (default "
                    "lam; a list, one per class, for a priority operation)",
    "priority_class": "the tagged class of a priority operation, 1 the highest",
    "vacation": "the vacation LST of operation vacation-waiting-time",
    "summand": "the summand LST of operation random-sum (the transform is the count's PGF)",
    "discipline": "of a priority operation: non-preemptive (default) or preemptive-resume",
    "outputs": "{NAME = \"moment:K\" | \"cumulant:K\" | \"factorial:K\" | \"prob:N\" | "
               "\"density:T\" | \"cdf:T\" | \"ccdf:T\" | \"atom\" | \"decay\" | "
               "\"tail_prefactor\"}",
    "digits": "significant digits aimed at by the inversions (default 10)",
}

EXAMPLE = '''\
[models.me2-wait]
kind = "transform"
parameters = { mu = "positive", lam = "positive" }
transform = "(2*mu/(2*mu + s))^2"
operation = "waiting-time"
outputs = { EW = "moment:1", EW2 = "moment:2", tail = "ccdf:2", P0 = "atom" }
'''


@dataclass(frozen=True)
class TransformOutputs(ResultBase):
    """The declared outputs of a transform at a parameter point.

    Attributes
    ----------
    values : dict
        Output name -> value (a float, ``inf`` for a moment that does not exist, or an
        :class:`~symq.core.approximate.Approximate` for an inverted value).
    transform : str
        The transform the outputs are read from.
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("values",)

    values: dict[str, Any]
    transform: str = ""
    method: str = "exact series at the anchor; numerical inversion by two methods"
    exactness: Exactness = Exactness.NUMERIC

    def outputs(self) -> dict[str, Any]:
        """The declared outputs, by name."""
        return dict(self.values)


def _outputs(where: str, raw: Any, kind: str) -> dict[str, tuple[str, float]]:
    if not isinstance(raw, Mapping) or not raw:
        raise InvalidParameter(f"{where}.outputs", raw, KEYS["outputs"])
    parsed: dict[str, tuple[str, float]] = {}
    for name, text in raw.items():
        at = f"{where}.outputs.{name}"
        if not isinstance(name, str) or not name.isidentifier():
            raise InvalidParameter(f"{where}.outputs", name, "names (letters, digits, _)")
        if not isinstance(text, str):
            raise InvalidParameter(at, text, KEYS["outputs"])
        head, _, tail = text.strip().partition(":")
        if head in ("atom", "decay", "tail_prefactor") and not tail and kind != "pgf":
            parsed[name] = (head, 0.0)
            continue
        if head in ("moment", "cumulant", "factorial", "prob"):
            if head in ("factorial", "prob") and kind != "pgf":
                raise InvalidParameter(at, text, f"{head}:K for a pgf only")
            if head == "prob" and tail.strip().isdigit():
                parsed[name] = (head, float(int(tail)))
                continue
            if not tail.strip().isdigit() or not 1 <= int(tail) <= MAX_ORDER:
                raise InvalidParameter(at, text, f"{head}:K with K in 1..{MAX_ORDER}")
            parsed[name] = (head, float(int(tail)))
            continue
        if head in WHAT and kind != "pgf":
            try:
                point = float(tail)
            except ValueError:
                point = math.nan
            if not math.isfinite(point) or point <= 0:
                raise InvalidParameter(at, text, f"{head}:T with a number T > 0")
            parsed[name] = (head, point)
            continue
        raise InvalidParameter(at, text, KEYS["outputs"] + (" (a pgf: moment, cumulant, "
                                                            "factorial)" if kind == "pgf"
                                                            else ""))
    return parsed


class DeclaredTransform:
    """Reads the declared outputs of the transform at a parameter point."""

    def __init__(self, name: str, where: str, table: Mapping[str, Any],
                 parameters: tuple[str, ...]) -> None:
        self.where = where
        kind = table.get("of", "lst")
        if kind not in KINDS:
            raise InvalidParameter(f"{where}.of", kind, "one of " + ", ".join(KINDS))
        operation = table.get("operation", "none")
        if operation not in OPERATIONS:
            raise InvalidParameter(f"{where}.operation", operation,
                                   "one of " + ", ".join(OPERATIONS))
        for key, only in (("priority_class", "priority"), ("discipline", "priority"),
                          ("vacation", "vacation-waiting-time"), ("summand", "random-sum")):
            if key in table and not operation.startswith(only):
                raise InvalidParameter(f"{where}.{key}", table[key], "only with operation "
                                       + ("priority-*" if only == "priority" else only))
        self.busy_rate: str | None = None
        self.priority: PriorityClassTime | None = None
        if operation.startswith("priority"):
            if kind != "lst":
                raise InvalidParameter(f"{where}.of", kind, f"lst for operation {operation}")
            self.priority = _priority(where, table, operation, parameters)
            base = Transform("1", "lst", (), f"{where}.transform")    # not read from
            kind_out = "lst"
        else:
            base = self._single(where, table, kind, operation, parameters)
            kind_out = base.kind
        self.transform = base
        self.outputs = _outputs(where, table.get("outputs", MISSING), kind_out)
        implicit = "busy-period" if self.busy_rate is not None \
            else operation if self.priority is not None else None
        if implicit is not None:
            for out, (head, _) in self.outputs.items():
                if head in ("decay", "tail_prefactor") or \
                        (head == "atom" and self.busy_rate is not None):
                    raise InvalidParameter(f"{where}.outputs.{out}", head,
                                           "moment:K, cumulant:K, density:T, cdf:T or ccdf:T "
                                           f"for operation {implicit}",
                                           "its transform has no closed form: its moments "
                                           "are exact series, its distribution an inversion "
                                           "with the fixed point at each node")
        digits = table.get("digits", 10)
        if isinstance(digits, bool) or not isinstance(digits, int) or not 2 <= digits <= 40:
            raise InvalidParameter(f"{where}.digits", digits, "an integer in 2..40")
        self.digits = digits

    def _single(self, where: str, table: Mapping[str, Any], kind: str, operation: str,
                parameters: tuple[str, ...]) -> Transform:
        formula = table.get("transform", MISSING)
        if not isinstance(formula, str):
            raise InvalidParameter(f"{where}.transform", formula, KEYS["transform"])
        rate = table.get("arrival_rate", "lam")
        if operation in ("random-sum", "equilibrium", "none"):
            own = parameters
            wanted = "pgf" if operation == "random-sum" else "lst"
            if operation != "none" and kind != wanted:
                raise InvalidParameter(f"{where}.of", kind, f"{wanted} for operation {operation}")
        else:
            if kind != "lst":
                raise InvalidParameter(f"{where}.of", kind, f"lst for operation {operation}")
            if rate not in parameters:
                raise InvalidParameter(f"{where}.arrival_rate", rate, "a declared parameter: "
                                       + ", ".join(parameters))
            own = tuple(p for p in parameters if p != rate)
        base = Transform(formula, kind, own, f"{where}.transform")
        if operation in ("vacation-waiting-time", "random-sum"):
            key = "vacation" if operation == "vacation-waiting-time" else "summand"
            text = table.get(key, MISSING)
            if not isinstance(text, str):
                raise InvalidParameter(f"{where}.{key}", text, KEYS[key])
            other = Transform(text, "lst", own, f"{where}.{key}")
            return (vacation_waiting_time(base, other, rate)
                    if operation == "vacation-waiting-time" else random_sum(base, other))
        if operation == "equilibrium":
            return equilibrium(base)
        if operation == "busy-period":
            self.busy_rate = rate
        elif operation == "waiting-time":
            base = pollaczek_khinchine(base, rate)
        elif operation == "sojourn-time":
            base = sojourn_time(base, rate)
        elif operation == "queue-length":
            base = queue_length(base, rate)
        return base

    def __call__(self, **values: Any) -> TransformOutputs:
        params = {p: values[p] for p in self.transform.parameters if p in values}
        found: dict[str, Any] = {}
        orders = [int(k) for head, k in self.outputs.values()
                  if head in ("moment", "cumulant", "factorial")]
        table: dict[str, tuple[float, ...]] = {}
        tail: TailAsymptotics | None = None
        if self.priority is not None:
            return self._priority_outputs(values, orders)
        if orders and self.busy_rate is not None:
            m = busy_period_moments(self.transform, self.busy_rate, max(orders),
                                    {**params, self.busy_rate: values[self.busy_rate]})
            table = {"moment": m.moments, "cumulant": m.cumulants}
        elif orders:
            m = moments(self.transform, max(orders), params)
            table = {"moment": m.moments, "cumulant": m.cumulants,
                     "factorial": m.factorial_moments}
        counts = [int(k) for head, k in self.outputs.values() if head == "prob"]
        if counts:
            table["prob"] = probabilities(self.transform, max(counts), params)
        for name, (head, arg) in self.outputs.items():
            if head in table:          # probabilities from P(N = 0); moments from order 1
                found[name] = table[head][int(arg) - (head != "prob")]
            elif head == "atom":
                found[name] = mass_at_zero(self.transform, params)
            elif head in ("decay", "tail_prefactor"):
                if tail is None:
                    tail = tail_asymptotics(self.transform, params)
                found[name] = tail.decay if head == "decay" else tail.ccdf_prefactor
            else:
                if self.busy_rate is not None:
                    r = invert_busy_period(self.transform, self.busy_rate, [arg],
                                           {**params, self.busy_rate: values[self.busy_rate]},
                                           head, self.digits)
                else:
                    r = invert(self.transform, [arg], params, head, self.digits)
                found[name] = Approximate(float(r.value[0]), float(r.error[0]),
                                          f"{head} at {arg:g}: {r.method}")
        return TransformOutputs(found, str(self.transform.expr))

    def _priority_outputs(self, values: Mapping[str, Any], orders: list[int]
                          ) -> TransformOutputs:
        priority = self.priority
        assert priority is not None
        point = {p: values[p] for p in priority.parameters}
        found: dict[str, Any] = {}
        m = priority.moments(max(orders), point) if orders else None
        for name, (head, arg) in self.outputs.items():
            if m is not None and head in ("moment", "cumulant"):
                found[name] = (m.moments if head == "moment" else m.cumulants)[int(arg) - 1]
            elif head == "atom":
                found[name] = priority.atom(point)
            else:
                r = priority.invert([arg], point, head, self.digits)
                found[name] = Approximate(float(r.value[0]), float(r.error[0]),
                                          f"{head} at {arg:g}: {r.method}")
        return TransformOutputs(found, priority.name)


def _priority(where: str, table: Mapping[str, Any], operation: str,
              parameters: tuple[str, ...]) -> PriorityClassTime:
    """The class a priority operation declares: a list of service LSTs and of rates."""
    formulas = table.get("transform", MISSING)
    if not isinstance(formulas, list) or not formulas or \
            not all(isinstance(f, str) for f in formulas):
        raise InvalidParameter(f"{where}.transform", formulas, "a list of service LSTs, the "
                               f"highest class first, for operation {operation}")
    rates = table.get("arrival_rate", MISSING)
    if not isinstance(rates, list) or len(rates) != len(formulas) or \
            not all(r in parameters for r in rates):
        raise InvalidParameter(f"{where}.arrival_rate", rates, f"a list of {len(formulas)} "
                               "declared parameters, one per class: " + ", ".join(parameters))
    own = tuple(p for p in parameters if p not in rates)
    services = [Transform(f, "lst", own, f"{where}.transform[{i}]")
                for i, f in enumerate(formulas)]
    k = table.get("priority_class", MISSING)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(formulas):
        raise InvalidParameter(f"{where}.priority_class", k,
                               f"an integer in 1..{len(formulas)} (1 the highest)")
    discipline = table.get("discipline", "non-preemptive")
    if discipline not in DISCIPLINES:
        raise InvalidParameter(f"{where}.discipline", discipline,
                               "one of " + ", ".join(DISCIPLINES))
    return priority_class_time(services, rates, k, discipline,
                               operation.removeprefix("priority-"))


def declare_transform(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                      where: str) -> ModelSpec:
    """Build the model a ``kind = "transform"`` declaration describes.

    Raises
    ------
    InvalidParameter
        Naming ``where.key`` for an unknown or missing key, a formula that does not parse or
        is not a transform, an unknown output or operation.

    Examples
    --------
    >>> from symq.core.parameters import Parameter, PositiveReal
    >>> import tomllib
    >>> table = tomllib.loads(EXAMPLE)["models"]["me2-wait"]
    >>> ps = tuple(Parameter(p, PositiveReal()) for p in ("mu", "lam"))
    >>> spec = declare_transform("me2-wait", {k: v for k, v in table.items()
    ...                          if k not in ("kind", "parameters")}, ps, "models.me2-wait")
    >>> spec.run({"mu": 1.0, "lam": 0.5})["EW"]          # lam E S^2 / (2 (1 - rho))
    0.75
    """
    check_keys(where, table, KEYS, "a transform model")
    solver = DeclaredTransform(name, where, table, tuple(p.name for p in parameters))
    return ModelSpec(
        name=name,
        summary=((solver.priority.name if solver.priority is not None
                  else f"declared transform ({solver.transform.kind})") + ": "
                 + ", ".join(solver.outputs)),
        parameters=parameters,
        solve=solver,
        source=f"declared ({where}, kind transform)",
        outputs=tuple(solver.outputs),
        allow_infinite=tuple(n for n, (head, _) in solver.outputs.items()
                             if head in ("moment", "cumulant", "factorial")),
    )


TRANSFORM = ModelKind(
    kind="transform",
    summary=("a Laplace-Stieltjes transform, MGF or PGF given by its formula (or the M/G/1 "
             "waiting or sojourn time built from a service LST): exact moments and cumulants, "
             "density, distribution function and tail by two inversion methods"),
    declare=declare_transform,
    keys=KEYS,
    outputs=("<output>",),
    example=EXAMPLE,
)
