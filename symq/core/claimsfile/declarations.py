"""Declarations in a claims file: parameters with their domains, and models of a registered kind.

A declared parameter is written ``name = "DOMAIN"`` or ``name = { domain = "DOMAIN", typical =
1.0, description = "..." }``, DOMAIN one of::

    positive          a positive real number
    nonnegative       a real number >= 0
    real              any real number
    probability       a real number in [0, 1]
    integer >= K      an integer >= K ("integer" alone: >= 0)
    (a, b)  [a, b]  (a, b]  [a, b)     an interval (inf allowed)
    one of w1, w2     a word among those listed

A declared model is a table ``[models.NAME]`` with ``kind`` (one of the kinds of
``symq list``: population, window, dispatch-score, routing-cost, ...), optional ``parameters``
and the kind's own keys; :func:`declare_model` hands it to the kind's
:attr:`~symq.core.registry.ModelKind.declare` and returns the model, whose source names the file.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParameter, UnknownName
from ..parameters import (
    Choice,
    Domain,
    IntegerAtLeast,
    Interval,
    NonNegativeReal,
    Parameter,
    PositiveReal,
)
from ..registry import ModelSpec, get_model_kind, model_kinds

__all__ = ["DOMAIN_HELP", "check_keys", "declare_model", "declared_parameters", "parse_domain"]

DOMAIN_HELP = ("positive, nonnegative, real, probability, integer >= K, an interval such as "
               "(0, 1] or [1, inf), or one of w1, w2, ...")
_INTERVAL = re.compile(r"^\s*([\(\[])\s*([^,]+?)\s*,\s*([^,]+?)\s*([\)\]])\s*$")
_INTEGER = re.compile(r"^\s*integer\s*(?:>=\s*(-?\d+))?\s*$")


def _end(text: str) -> float:
    value = float(text.replace("oo", "inf"))
    if math.isnan(value):
        raise ValueError(text)
    return value


def check_keys(where: str, table: Any, keys: Any, what: str = "") -> Mapping[str, Any]:
    """``table`` if it is a mapping whose keys are all among ``keys``; else one
    :class:`InvalidParameter` naming ``where`` or ``where.KEY`` (``what`` says whose keys)."""
    allowed = ", ".join(keys)
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table of the keys " + allowed)
    for key in table:
        if key not in keys:
            raise InvalidParameter(f"{where}.{key}", table[key], "one of the keys " + allowed,
                                   f"unknown key{' of ' + what if what else ''}")
    return table


def parse_domain(where: str, text: Any) -> Domain:
    """The domain written ``text`` (see the module docstring)."""
    if not isinstance(text, str):
        raise InvalidParameter(where, text, DOMAIN_HELP)
    word = text.strip().lower()
    if word == "positive":
        return PositiveReal()
    if word == "nonnegative":
        return NonNegativeReal()
    if word == "real":
        return Interval(-math.inf, math.inf, True, True)
    if word == "probability":
        return Interval(0.0, 1.0)
    integer = _INTEGER.match(word)
    if integer:
        return IntegerAtLeast(int(integer.group(1) or 0))
    interval = _INTERVAL.match(word)
    if interval:
        left, low, high, right = interval.groups()
        try:
            a, b = _end(low), _end(high)
        except ValueError:
            raise InvalidParameter(where, text, DOMAIN_HELP, "the ends are not numbers") from None
        if not a < b:
            raise InvalidParameter(where, text, DOMAIN_HELP, "an empty interval")
        return Interval(a, b, left == "(" or math.isinf(a), right == ")" or math.isinf(b))
    if word.startswith("one of "):
        choices = tuple(c.strip() for c in text.strip()[7:].split(",") if c.strip())
        if choices:
            return Choice(choices)
    raise InvalidParameter(where, text, DOMAIN_HELP)


def declared_parameters(where: str, table: Any) -> tuple[Parameter, ...]:
    """The ``parameters`` table of a declared model, as :class:`Parameter` objects."""
    if table is None:
        return ()
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table name = \"DOMAIN\"")
    out = []
    for name, spec in table.items():
        key = f"{where}.{name}"
        if not str(name).isidentifier():
            raise InvalidParameter(key, spec, "a parameter whose name is an identifier")
        typical, description = None, ""
        if isinstance(spec, Mapping):
            extra = [k for k in spec if k not in ("domain", "typical", "description")]
            if extra:
                raise InvalidParameter(f"{key}.{extra[0]}", spec[extra[0]],
                                       "one of the keys domain, typical, description",
                                       "unknown key")
            domain = parse_domain(f"{key}.domain", spec.get("domain", "real"))
            typical = spec.get("typical")
            description = str(spec.get("description", ""))
            if typical is not None:
                domain.coerce(f"{key}.typical", typical)
        else:
            domain = parse_domain(key, spec)
        out.append(Parameter(str(name), domain, typical=typical, description=description))
    return tuple(out)


def declare_model(path: str, name: str, table: Any) -> ModelSpec:
    """Build the model ``[models.NAME]`` of a claims file."""
    where = f"models.{name}"
    if not re.match(r"^[A-Za-z][\w\-]*$", str(name)):
        raise InvalidParameter(where, name, "a model name of letters, digits, - and _")
    if not isinstance(table, Mapping):
        raise InvalidParameter(where, table, "a table with kind = \"...\" and the kind's keys")
    if "kind" not in table:
        raise InvalidParameter(f"{where}.kind", "<missing>", "one of the model kinds: "
                               + ", ".join(model_kinds()))
    try:
        kind = get_model_kind(str(table["kind"]))
    except UnknownName as exc:
        close = difflib.get_close_matches(str(table["kind"]), exc.choices, n=1)
        raise InvalidParameter(f"{where}.kind", table["kind"], "one of the model kinds: "
                               + ", ".join(exc.choices), "unknown kind" + (
                                   f"; did you mean {close[0]}?" if close else "")) from None
    parameters = declared_parameters(f"{where}.parameters", table.get("parameters"))
    rest = kind.current_keys({k: v for k, v in table.items() if k not in ("kind", "parameters")},
                             where)
    spec = kind.declare(str(name), rest, parameters, where)
    return dataclasses.replace(spec, source=f"file {path}")
