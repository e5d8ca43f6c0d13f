"""The parameter region of a claim in a claims file: grids, ranges and random samples.

A region is a table of axes, one per parameter, written in TOML (or as a Python dict)::

    [claims.region]
    lam = "0.1:0.9:9"                     # 9 points from 0.1 to 0.9 (like ``symq sweep``)
    p = "1e-6:1e-2:5:log"                 # 5 points, geometric spacing
    d = [2, 3, 5]                         # listed values
    C = { vector = [4, 2, 1] }            # one vector value (a model's vector parameter)
    w = [[1, 2, 4], [1, 1, 1]]            # two vector values
    policy = "lwl"                        # one value (a number or a word)
    k = { integers = [1, 6] }             # every integer from 1 to 6
    mu = { uniform = [0.5, 2.0] }         # random: drawn `samples` times with `seed`
    nu = { loguniform = [1e-3, 1.0] }     # random, uniform in log scale
    m = { randint = [2, 6] }              # random integer in [2, 6]
    samples = 20                          # draws of the random axes (needed with random axes)
    seed = 1
    where = "lam*d < 3"                   # optional constraints (a relation or a list of them)

For the parameter of a limit claim (``limit = { k = "oo" }``, or ``{ p = 0 }``) a range written
with two ends and no count, ``k = "10:1e6"``, is a grid approaching the limit geometrically:
:data:`LIMIT_POINTS_PER_DECADE` points per decade of the approach variable (``1/|k|`` toward
infinity, ``|k - k0|`` toward ``k0``), ends included, at least :data:`LIMIT_MIN_POINTS` points;
``"10:1e6"`` toward ``oo`` gives the 11 points 10, 32, 100, ..., 1e6 (rounded to integers when
both ends are integers).  Any other axis form is used as written.

The points are the product of the grid axes, each combined with ``samples`` draws of the random
axes; ``where`` keeps the points that satisfy every constraint (each side evaluated exactly or at
50 digits, as the claim's formulas are).  A region has at most :data:`MAX_POINTS` points: the
count of a range ``a:b:n`` is read from its text and the product of the axes is checked as each
axis is read, before any array is built.  Each axis also knows its bounds,
which :mod:`symq.core.claimsfile.shrink` uses to look for the smallest counterexample.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameter
from ..formula import Relation, parse_relation
from ..sweep import axis_size, parse_axis

__all__ = [
    "LIMIT_MIN_POINTS",
    "LIMIT_POINTS_PER_DECADE",
    "MAX_POINTS",
    "Axis",
    "Region",
    "parse_region",
]

#: Most points a claim's region may have.
MAX_POINTS = 10_000
#: Points per decade of a range "a:b" approaching a limit.
LIMIT_POINTS_PER_DECADE = 2
#: Fewest points of a range "a:b" approaching a limit.
LIMIT_MIN_POINTS = 6
_RANDOM = ("uniform", "loguniform", "randint")
_TABLE_KINDS = ("integers", "vector", *_RANDOM)
_RESERVED = ("samples", "seed", "where")


@dataclass(frozen=True)
class Axis:
    """One parameter of a region.

    Attributes
    ----------
    name : str
        The parameter.
    values : tuple
        The grid values (empty for a random axis).
    random : str
        ``""`` for a grid axis, else ``"uniform"``, ``"loguniform"`` or ``"randint"``.
    low, high : float or None
        The bounds (None for a word-valued axis).
    integer : bool
        Whether every value is an integer.
    """

    name: str
    values: tuple[Any, ...]
    random: str = ""
    low: float | None = None
    high: float | None = None
    integer: bool = False

    @property
    def numeric(self) -> bool:
        return self.low is not None

    def draw(self, rng: np.random.Generator) -> Any:
        assert self.low is not None and self.high is not None
        if self.random == "uniform":
            return float(rng.uniform(self.low, self.high))
        if self.random == "loguniform":
            return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))
        return int(rng.integers(int(self.low), int(self.high) + 1))

    def describe(self) -> str:
        if self.values and isinstance(self.values[0], tuple):
            shown = ", ".join("(" + ", ".join(map(_show, v)) + ")" for v in self.values)
            return f"{self.name} = {shown}" if len(self.values) == 1 else \
                f"{self.name} in {{{shown}}}"
        if self.random:
            return f"{self.name} ~ {self.random}[{self.low:g}, {self.high:g}]"
        if len(self.values) == 1:
            return f"{self.name} = {_show(self.values[0])}"
        if self.numeric and len(self.values) > 4:
            return f"{self.name} in [{self.low:g}, {self.high:g}] ({len(self.values)} values)"
        return f"{self.name} in {{{', '.join(_show(v) for v in self.values)}}}"


def _show(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Region:
    """The parameter region of a claim: axes, random draws and constraints."""

    axes: tuple[Axis, ...]
    samples: int = 0
    seed: int = 0
    where: tuple[Relation, ...] = ()
    key: str = "region"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(name)

    def admits(self, point: Mapping[str, Any]) -> bool:
        """Whether ``point`` satisfies every ``where`` constraint."""
        from ..claims import Inconclusive
        from ..tolerance import exact_difference
        from .quantities import evaluate_expression

        for i, relation in enumerate(self.where):
            values = {s.name: point[s.name]
                      for s in relation.lhs.free_symbols | relation.rhs.free_symbols}
            try:
                left = evaluate_expression(relation.lhs, values, set(), "the left side")
                right = evaluate_expression(relation.rhs, values, set(), "the right side")
                gap = exact_difference(left, right)
            except Inconclusive as exc:
                shown = ", ".join(f"{k}={v!r}" for k, v in point.items())
                raise InvalidParameter(f"{self.key}.where[{i}]", relation.text,
                                       "a constraint defined at every point of the region",
                                       f"at {shown}: {exc}") from None
            ok = {"<": gap < 0, "<=": gap <= 0, ">": gap > 0, ">=": gap >= 0,
                  "==": gap == 0}[relation.op]
            if not ok:
                return False
        return True

    def points(self) -> list[dict[str, Any]]:
        """Every point of the region, in a reproducible order."""
        grid = [a for a in self.axes if not a.random]
        random = [a for a in self.axes if a.random]
        rng = np.random.default_rng(self.seed)
        out = []
        for combo in itertools.product(*(a.values for a in grid)):
            base = dict(zip((a.name for a in grid), combo))
            for _ in range(self.samples if random else 1):
                point = dict(base)
                for a in random:
                    point[a.name] = a.draw(rng)
                ordered = {a.name: point[a.name] for a in self.axes}
                if self.admits(ordered):
                    out.append(ordered)
        return out

    def describe(self) -> str:
        text = "; ".join(a.describe() for a in self.axes) or "one point"
        if self.samples and any(a.random for a in self.axes):
            text += f"; {self.samples} draws (seed {self.seed})"
        if self.where:
            text += "; where " + " and ".join(r.text for r in self.where)
        return text


def _number(where: str, value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameter(where, value, "a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidParameter(where, value, "a finite real number")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _pair(where: str, value: Any, kind: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InvalidParameter(where, value, f"{{ {kind} = [low, high] }}", "two bounds")
    low, high = (_number(f"{where}[{i}]", v) for i, v in enumerate(value))
    if not low < high:
        raise InvalidParameter(where, list(value), "[low, high] with low < high")
    if kind == "loguniform" and low <= 0:
        raise InvalidParameter(where, list(value), "[low, high] with 0 < low < high",
                               "log scale")
    return low, high


def _vector(where: str, value: Any) -> tuple[float | int, ...]:
    """A vector value (for a model's vector parameter such as capacities ``C``)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise InvalidParameter(where, value, "a non-empty list of numbers (a vector)")
    return tuple(_number(f"{where}[{i}]", v) for i, v in enumerate(value))


def _grid_axis(name: str, values: Sequence[Any]) -> Axis:
    numeric = [v for v in values if not isinstance(v, str)]
    if numeric and len(numeric) == len(values):
        as_float = [float(v) for v in values]
        integer = all(isinstance(v, numbers.Integral) or float(v).is_integer() for v in values)
        values = tuple(int(v) if integer else float(v) for v in values)
        return Axis(name, tuple(values), "", min(as_float), max(as_float), integer)
    if numeric:
        raise InvalidParameter(name, list(values), "numbers or words, not both")
    return Axis(name, tuple(values))


def _approach_range(where: str, name: str, spec: str, target: float) -> Axis:
    """The range ``"a:b"`` as a grid approaching the limit ``target`` (module docstring)."""
    domain = (f"a range a:b approaching the limit {name} -> "
              + ("oo: 0 < a < b" if target == math.inf else "-oo: a < b < 0"
                 if target == -math.inf else f"{target:g}: both ends on one side of it"))
    try:
        a, b = (float(part) for part in spec.split(":"))
    except ValueError:
        raise InvalidParameter(where, spec, domain, "the ends are not numbers") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        raise InvalidParameter(where, spec, domain, "two different finite ends")
    if math.isinf(target):
        sign = 1.0 if target > 0 else -1.0
        if a * sign <= 0 or b * sign <= 0:
            raise InvalidParameter(where, spec, domain)
        t_a, t_b = 1 / abs(a), 1 / abs(b)
    else:
        sign = 1.0 if a > target else -1.0
        if (a - target) * sign <= 0 or (b - target) * sign <= 0:
            raise InvalidParameter(where, spec, domain)
        t_a, t_b = abs(a - target), abs(b - target)
    decades = abs(math.log10(t_a / t_b))
    count = max(LIMIT_MIN_POINTS, math.ceil(decades * LIMIT_POINTS_PER_DECADE - 1e-9) + 1)
    if count > MAX_POINTS:
        raise InvalidParameter(where, spec, f"a range of at most {MAX_POINTS} points",
                               f"{count} points at {LIMIT_POINTS_PER_DECADE} per decade")
    ts = np.geomspace(t_a, t_b, count)
    values: list[float | int] = [sign / t if math.isinf(target) else target + sign * t
                                 for t in ts]
    values[0], values[-1] = a, b
    if math.isinf(target) and a.is_integer() and b.is_integer():
        values = list(dict.fromkeys(round(v) for v in values))
    else:
        values = [float(round(v, 12)) if v != target else v for v in values]
    return _grid_axis(name, values)


def _axis(where: str, name: str, spec: Any, target: float | None = None) -> Axis:
    if isinstance(spec, bool):
        raise InvalidParameter(where, spec, "a number, a word, a list, a range a:b:n or a table")
    if isinstance(spec, numbers.Real):
        return _grid_axis(name, [_number(where, spec)])
    if isinstance(spec, str):
        if target is not None and spec.count(":") == 1:
            return _approach_range(where, name, spec, target)
        if ":" in spec:
            try:
                count = axis_size(spec)
                if count > MAX_POINTS:
                    raise InvalidParameter(where, spec, f"a range of at most {MAX_POINTS} points",
                                           f"{count} points; the region has at most "
                                           f"{MAX_POINTS}")
                values = parse_axis(spec, max_points=None)
            except InvalidParameter as exc:
                if exc.name == where:
                    raise
                raise InvalidParameter(where, spec, "a range a:b:n or a:b:n:log", exc.args[0]
                                       ) from None
            return _grid_axis(name, [float(round(v, 12)) for v in values])
        return Axis(name, (spec,))
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(v, (list, tuple))
                                                         for v in spec):
        return Axis(name, tuple(_vector(f"{where}[{i}]", v) for i, v in enumerate(spec)))
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise InvalidParameter(where, spec, "a non-empty list of values")
        for i, v in enumerate(spec):
            if not isinstance(v, str):
                _number(f"{where}[{i}]", v)
        return _grid_axis(name, list(spec))
    if isinstance(spec, Mapping):
        kinds = [k for k in spec if k in _TABLE_KINDS]
        unknown = [k for k in spec if k not in _TABLE_KINDS]
        if len(kinds) != 1 or unknown:
            raise InvalidParameter(where, dict(spec), "a table with one key among "
                                   + ", ".join(_TABLE_KINDS),
                                   f"unknown key {unknown[0]}" if unknown else "")
        kind = kinds[0]
        if kind == "vector":
            return Axis(name, (_vector(f"{where}.vector", spec["vector"]),))
        low, high = _pair(f"{where}.{kind}", spec[kind], kind)
        if kind in ("integers", "randint"):
            if not (float(low).is_integer() and float(high).is_integer()):
                raise InvalidParameter(f"{where}.{kind}", list(spec[kind]), "two integers")
            if kind == "integers":
                if high - low + 1 > MAX_POINTS:
                    raise InvalidParameter(f"{where}.{kind}", list(spec[kind]),
                                           f"at most {MAX_POINTS} integers")
                return _grid_axis(name, list(range(int(low), int(high) + 1)))
            return Axis(name, (), kind, float(low), float(high), True)
        return Axis(name, (), kind, float(low), float(high), False)
    raise InvalidParameter(where, spec, "a number, a word, a list, a range a:b:n or a table")


def parse_region(where: str, table: Any, names_allowed: Sequence[str] | None = None,
                 limits: Mapping[str, float] | None = None) -> Region:
    """Parse a claim's ``region`` table (see the module docstring).

    Parameters
    ----------
    where : str
        The key path as typed (``claims[2].region``), named in errors.
    table : mapping
        The region as written.
    names_allowed : sequence of str, optional
        Parameter names the region may give (None: any name).
    limits : mapping of str to float, optional
        The parameter of a limit claim and its limit (``inf`` or ``-inf`` for ``+-oo``): a
        range ``"a:b"`` of that parameter is a grid approaching it.
    """
    if table is None:
        table = {}
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table of parameter axes")
    axes = []
    for name, spec in table.items():
        if name in _RESERVED:
            continue
        if not name.isidentifier():
            raise InvalidParameter(f"{where}.{name}", spec, "an axis of a parameter whose name "
                                   "is an identifier (letters, digits, _)")
        if names_allowed is not None and name not in names_allowed:
            raise InvalidParameter(f"{where}.{name}", spec, "an axis of a parameter the claim "
                                   "uses: " + ", ".join(names_allowed), "unknown parameter")
        axes.append(_axis(f"{where}.{name}", name, spec, (limits or {}).get(name)))
        size = math.prod(len(a.values) for a in axes if not a.random)
        if size > MAX_POINTS:  # checked axis by axis: the product is never built
            raise InvalidParameter(where, f"{size} points", f"at most {MAX_POINTS} points",
                                   "the product of the axes " + " x ".join(
                                       f"{a.name} ({len(a.values)})" for a in axes
                                       if not a.random) + "; shrink the grid")
    has_random = any(a.random for a in axes)
    samples = table.get("samples", 0)
    if has_random:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise InvalidParameter(f"{where}.samples", samples, "an integer >= 1",
                                   "the region has random axes")
    elif "samples" in table:
        raise InvalidParameter(f"{where}.samples", samples, "given only with random axes "
                               "(uniform, loguniform, randint)")
    seed = table.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidParameter(f"{where}.seed", seed, "an integer >= 0")
    where_texts = table.get("where", ())
    if isinstance(where_texts, str):
        where_texts = (where_texts,)
    if not isinstance(where_texts, (list, tuple)):
        raise InvalidParameter(f"{where}.where", where_texts, "a relation or a list of them")
    numeric_names = tuple(a.name for a in axes if a.numeric)
    constraints = []
    for i, text in enumerate(where_texts):
        relation = parse_relation(f"{where}.where[{i}]", text, numeric_names, sums=False,
                                  assumptions={n: {"real": True} for n in numeric_names})
        if relation.op == "->":
            raise InvalidParameter(f"{where}.where[{i}]", text, "a constraint with <, <=, > "
                                   "or >=", "-> is a limit, not a constraint")
        constraints.append(relation)
    size = 1
    for a in axes:
        size *= len(a.values) if not a.random else 1
    size *= samples if has_random else 1
    if size > MAX_POINTS:
        raise InvalidParameter(where, f"{size} points", f"at most {MAX_POINTS} points",
                               "shrink the grid or the samples")
    return Region(tuple(axes), int(samples) if has_random else 0, int(seed), tuple(constraints),
                  where)
