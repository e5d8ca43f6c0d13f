"""Results of solving a model: values, method, exactness and seconds, JSON-ready."""

from __future__ import annotations

import dataclasses
import enum
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from .display import (
    MarkdownDisplay,
    cell,
    doc_title,
    is_formula,
    markdown,
    number_text,
    with_error,
)
from .errors import NumericalFailure

__all__ = [
    "PROBABILITY_NAMES",
    "TAIL_NAMES",
    "Exactness",
    "Result",
    "ResultBase",
    "check_probability",
    "check_tail",
    "check_values",
    "to_jsonable",
]

#: Result names that hold probabilities (or vectors of them): every entry must lie in [0, 1].
PROBABILITY_NAMES = frozenset({"P_wait", "tail", "queue_tail", "pi", "u", "atom_at_cap",
                               "truncation_mass", "probability"})
#: Result names that hold tails P(X >= k), k = 0, 1, ...: also nonincreasing.
TAIL_NAMES = frozenset({"tail", "queue_tail", "u"})
#: Rounding allowed in the probability checks.
_SLACK = 1e-9


class Exactness(str, enum.Enum):
    """How a value was obtained."""

    EXACT = "exact"          #: closed form or exact arithmetic
    NUMERIC = "numeric"      #: floating-point numerical method
    CERTIFIED = "certified"  #: interval arithmetic with a guaranteed enclosure
    SIMULATED = "simulated"  #: Monte Carlo estimate (with a confidence interval)

    def __str__(self) -> str:
        return self.value


def to_jsonable(value: Any) -> Any:
    """Convert numpy, sympy, mpmath and symq objects into plain JSON types.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` or ``"nan"`` so that the
    output is strict JSON.
    """
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict())
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (complex, np.complexfloating)):
        return {"re": to_jsonable(value.real), "im": to_jsonable(value.imag)}
    if isinstance(value, sp.Basic):
        if value.is_Integer:
            return int(value)
        if value.is_number and value.is_real:
            return to_jsonable(float(value))
        return str(value)
    if value is None or isinstance(value, str):
        return value
    try:  # mpmath numbers and similar
        return to_jsonable(float(value))
    except (TypeError, ValueError):
        return str(value)


@dataclass(init=False)
class Result(MarkdownDisplay):
    """The outcome of a registered model's solve, as ``symq solve``, sweeps and claims read it.

    A model's solver returns a typed result (a :class:`ResultBase` subclass); the registry wraps
    it with :meth:`of`, so the ``MODEL:KEY`` values a claim names and the ``--json`` output are
    the typed result's fields (:meth:`ResultBase.outputs`), never a hand-written copy.

    Parameters
    ----------
    model : str
        Registered model name.
    params : dict
        The validated parameters.
    values : dict
        Named results (floats, arrays, confidence intervals, nested dicts).
    method : str
        The method used ("closed form", "SLSQP", "simulation", ...).
    exactness : Exactness
        How the values were obtained.
    seconds : float
        Wall time of the solve.  A mapping (the former ``timings``, seconds per phase) is
        read as its total, with a :class:`~symq.core.renamed.RenamedKeywordWarning` when given
        as ``timings=``.
    outcome : ResultBase, optional
        The typed result the values come from (``None`` for a result built by hand, e.g. by a
        plugin).
    """

    model: str
    params: dict[str, Any]
    values: dict[str, Any]
    method: str
    exactness: Exactness
    seconds: float
    outcome: ResultBase | None = field(default=None, repr=False, compare=False)

    def __init__(self, model: str, params: Mapping[str, Any], values: Mapping[str, Any],
                 method: str = "", exactness: Exactness | str = Exactness.NUMERIC,
                 seconds: float | Mapping[str, float] = 0.0,
                 outcome: ResultBase | None = None, *,
                 timings: Mapping[str, float] | None = None) -> None:
        if timings is not None:
            from .renamed import RenamedKeywordWarning

            warnings.warn("Result(timings=...) is now Result(seconds=...), the total in "
                          "seconds; timings= is read for one release",
                          RenamedKeywordWarning, stacklevel=2)
            seconds = timings
        if isinstance(seconds, Mapping):
            seconds = float(sum(seconds.values()))
        self.model = model
        self.params = dict(params)
        self.values = dict(values)
        self.method = method
        self.exactness = Exactness(exactness)
        self.seconds = float(seconds)
        self.outcome = outcome

    @classmethod
    def of(cls, model: str, params: Mapping[str, Any], outcome: ResultBase,
           seconds: float = 0.0) -> Result:
        """The registry's result for a typed ``outcome``: values from
        :meth:`ResultBase.outputs`, method and exactness from its fields, ``seconds`` the
        outcome's own when it has one, else the ``seconds`` measured around the solve."""
        own = getattr(outcome, "seconds", None)
        return cls(model, params, outcome.outputs(), outcome.method, outcome.exactness,
                   float(own) if isinstance(own, (int, float)) and own > 0 else seconds,
                   outcome)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __str__(self) -> str:
        scalars = [(k, v) for k, v in self.values.items() if ResultBase._is_scalar(v)]
        shown = ", ".join(f"{k}={ResultBase._text(v)}" for k, v in scalars[:6])
        more = ", ..." if len(scalars) > 6 else ""
        return f"{self.model}: {shown}{more} ({self.method}, {self.exactness})"

    def to_markdown(self) -> str:
        """The model and its parameters, method and exactness in bold, then a table of the
        scalar values (Jupyter's display)."""
        params = ", ".join(f"{k}={cell(v)}" for k, v in self.params.items())
        rows = [(k, v) for k, v in self.values.items() if ResultBase._is_scalar(v)]
        return markdown(f"**{self.model}** ({params}): {self.method}, {self.exactness}", rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form: ``{"model", "params", "results", "method", "exactness",
        "seconds"}``."""
        return {
            "model": self.model,
            "params": to_jsonable(self.params),
            "results": to_jsonable(self.values),
            "method": self.method,
            "exactness": str(self.exactness),
            "seconds": self.seconds,
        }


class ResultBase(MarkdownDisplay):
    """Base of every public result and estimate of symq: one protocol across domains.

    Subclass it with a frozen dataclass::

        @dataclass(frozen=True)
        class JSQFixedPoint(ResultBase):
            summary: ClassVar[tuple[str, ...]] = ("ET", "EQ")
            ET: float
            EQ: float
            tail: np.ndarray

    and the result has

    * ``to_dict()``: every field, converted by :func:`to_jsonable` (numpy arrays become lists,
      :class:`~symq.core.simstats.ConfidenceInterval` fields become their dicts, nested results
      their ``to_dict()``), ready for ``json.dumps``;
    * ``__str__``: one line with the class name and the fields named in :attr:`summary` (all
      scalar fields when it is empty);
    * ``_repr_markdown_()``: for Jupyter, a bold title (the class, the first sentence of its
      docstring, ``method`` and ``exactness``), then a table of the fields (those of
      :attr:`summary` first; numbers to 6 significant digits, vectors shortened, each error named
      in :attr:`uncertainty` next to its value), formulas in LaTeX below
      (:meth:`to_markdown`).

    * ``outputs()``: the values of a registered model (:meth:`Result.of`).

    Every result has a ``method`` (text) and an ``exactness`` (:class:`Exactness`) field, and
    ``seconds`` (its wall time) where it measures one.  Field names follow
    :mod:`symq.core.glossary` (``ET``, ``EW``, ``EQ``, ``tail``, ``n_jobs``, ``n_batches``,
    ``mean_size``, ``method``, ``exactness``, ``seconds``, ``residual``, ...).
    """

    #: Fields shown by ``__str__`` (empty: every scalar field), and first in the display.
    summary: ClassVar[tuple[str, ...]] = ()
    #: Errors shown with the value they qualify: ``{"ET": "error_estimate"}`` (``ET ± error``),
    #: ``{"EW": "relative error_estimate"}`` (a relative error) or ``{"ET": ("ET_low",
    #: "ET_high")}`` (a bracket).
    uncertainty: ClassVar[Mapping[str, str | tuple[str, str]]] = {}
    #: LaTeX names of formula fields in the display: ``{"lst": "$f^*(s)$"}``.
    labels: ClassVar[Mapping[str, str]] = {}
    #: Fields that say how a result was obtained rather than what it is (not in :meth:`outputs`).
    bookkeeping: ClassVar[frozenset[str]] = frozenset({"method", "exactness", "seconds"})

    # Every result says how it was obtained: a field of each name (with a default where the
    # class always uses one method); tests/core/test_result_classes.py checks every subclass.
    method: str
    exactness: Exactness

    def outputs(self) -> dict[str, Any]:
        """The values a claim names as ``MODEL:KEY`` and ``symq solve --json`` prints.

        Every shown field (``field(repr=False)`` hides one) except :attr:`bookkeeping`
        (``method``, ``exactness``, ``seconds``); a field holding ``None`` (not computed for
        these parameters) is left out.  :meth:`Result.of` wraps a typed result with these
        values, so a registered model needs no hand-written list of its values.
        """
        return {name: value for name, value in self._field_items()
                if name not in self.bookkeeping and value is not None}

    def _field_items(self) -> list[tuple[str, Any]]:
        if not dataclasses.is_dataclass(self):
            raise TypeError(f"{type(self).__name__} must be a dataclass to use ResultBase")
        return [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.repr]

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON types (see :func:`to_jsonable`)."""
        return {name: to_jsonable(value) for name, value in self._field_items()}

    @staticmethod
    def _is_scalar(value: Any) -> bool:
        from .simstats import ConfidenceInterval

        return (isinstance(value, (bool, int, float, str, enum.Enum, np.number, np.bool_,
                                   ConfidenceInterval))
                or (isinstance(value, sp.Basic) and value.is_number))

    @staticmethod
    def _text(value: Any) -> str:
        return number_text(value)

    def _scalar_items(self) -> list[tuple[str, Any]]:
        items = [(n, v) for n, v in self._field_items() if self._is_scalar(v)]
        if self.summary:
            chosen = dict(self._field_items())
            items = [(n, chosen[n]) for n in self.summary if n in chosen]
        return items

    def __str__(self) -> str:
        fields = ", ".join(f"{n}={self._text(v)}" for n, v in self._scalar_items())
        return f"{type(self).__name__}({fields})"

    def to_markdown(self) -> str:
        """The result for reading (Jupyter's display): **name**, what it is (its docstring's
        first sentence), method and exactness; a table of its values, the fields of
        :attr:`summary` first, each error of :attr:`uncertainty` next to its value; formulas in
        LaTeX after the table.  ``None`` fields are left out."""
        items = dict(_display_fields(self))
        errors: Mapping[str, Any] = getattr(self, "uncertainty", {}) or {}
        labels: Mapping[str, str] = getattr(self, "labels", {}) or {}
        used = {e.split()[-1] for spec in errors.values()
                for e in ((spec,) if isinstance(spec, str) else spec)}
        how = [cell(items[k]) for k in ("method", "exactness") if items.get(k) not in (None, "")]
        title = f"**{type(self).__name__}**"
        about = doc_title(type(self))
        if about:
            title += f": {about}"
        if how:
            title += f" ({', '.join(how)})"
        order = [n for n in getattr(self, "summary", ()) if n in items]
        order += [n for n in items if n not in order]
        rows: list[tuple[str, Any]] = []
        formulas: list[tuple[str, Any]] = []
        for name in order:
            value = items[name]
            if name in ("method", "exactness") or name in used or value is None:
                continue
            spec = errors.get(name)
            if isinstance(spec, str) and spec.startswith("relative "):
                error = items.get(spec.split()[-1])
                rows.append((name, (f"{number_text(value)} (relative error {cell(error)}, "
                                   f"{spec.split()[-1]})")))
            elif isinstance(spec, str):
                rows.append((name, f"{with_error(value, items.get(spec))} ({spec})"))
            elif spec is not None:
                low, high = (items.get(k) for k in spec)
                rows.append((name, (f"{number_text(value)} in [{number_text(low)}, "
                                   f"{number_text(high)}] ({', '.join(spec)})")))
            elif is_formula(value) or (isinstance(value, (list, tuple)) and value
                                       and all(is_formula(v) for v in value)):
                formulas.append((labels.get(name, f"`{name}`"), value if not isinstance(
                    value, (list, tuple)) else sp.Tuple(*value)))
            elif isinstance(value, Mapping) and any(is_formula(v) for v in value.values()):
                formulas += [(f"`{name}.{k}`", v) for k, v in value.items()]
            elif (isinstance(getattr(value, "expr", None), sp.Basic)
                  and hasattr(value, "_repr_latex_")):
                formulas.append((labels.get(name, f"`{name}`"), value.expr))  # e.g. a RationalLST
            else:
                rows.append((name, value))
        return markdown(title, rows, formulas)


def _display_fields(obj: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)
            if f.repr and not f.name.startswith("_")]


def _flat_numbers(value: Any, path: str) -> list[tuple[str, float]]:
    if isinstance(value, ResultBase):  # a nested typed result (an Allocation): its values
        return _flat_numbers(value.outputs(), path)
    if hasattr(value, "half_width") and hasattr(value, "mean"):  # a ConfidenceInterval
        return [(f"{path}.mean", float(value.mean)),
                (f"{path}.half_width", float(value.half_width))]
    if isinstance(value, Mapping):
        return [item for k, v in value.items() for item in _flat_numbers(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [item for i, v in enumerate(value) for item in _flat_numbers(v, f"{path}[{i}]")]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            bad = ~np.isfinite(value)
            if bad.any():
                index = tuple(int(i) for i in np.argwhere(bad)[0])
                return [(f"{path}{list(index)}", float("nan"))]
            return []
        return [item for i, v in enumerate(value.tolist()) for item in
                _flat_numbers(v, f"{path}[{i}]")] if value.dtype.kind == "O" else []
    if isinstance(value, (bool, np.bool_)):
        return []
    if isinstance(value, (float, np.floating)):
        return [(path, float(value))]
    if isinstance(value, (complex, np.complexfloating)):
        return [(path, float(value.real)), (path, float(value.imag))]
    return []


def check_values(model: str, values: Mapping[str, Any], allow_infinite: tuple[str, ...] = ()
                 ) -> None:
    """Refuse a result with a non-finite number or a probability outside [0, 1].

    The safety net behind every registered model (``ModelSpec.run``): a solver's silent NaN,
    infinity or negative probability becomes a :class:`~symq.core.errors.NumericalFailure` that
    names the value, instead of a number a user would trust.

    Parameters
    ----------
    model : str
        Model name, for the message.
    values : mapping
        The result's values.
    allow_infinite : tuple of str
        Top-level names whose values may be infinite (a threshold "never", an unbounded ratio).
    """
    for key, value in values.items():
        if key in allow_infinite:
            continue
        for path, number in _flat_numbers(value, key):
            if not math.isfinite(number):
                raise NumericalFailure(f"{model}: the solver returned {path} = {number}, not a "
                                       "finite number; the parameters are beyond its numerical "
                                       "range (or this is a bug in symq)")
        if key in PROBABILITY_NAMES and value is not None:
            check_probability(model, key, value)
            if key in TAIL_NAMES:
                check_tail(model, key, value)


def check_probability(source: str, name: str, values: Any) -> None:
    """Raise :class:`~symq.core.errors.NumericalFailure` unless every entry of ``values`` is a
    finite number in [0, 1] (up to a round-off of 1e-9); an approximate value (a value with an
    error bar, :class:`~symq.core.approximate.Approximate`) is checked by its value, a
    confidence interval by its estimate."""
    from .approximate import Approximate
    from .simstats import ConfidenceInterval

    if isinstance(values, Approximate):
        values = float(values.value)
    elif isinstance(values, ConfidenceInterval):
        values = float(values.mean)
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        return
    bad = ~np.isfinite(array)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise NumericalFailure(f"{source}: the solver returned the probability {name}[{i}] = "
                               f"{array[i]}, not a finite number")
    outside = (array < -_SLACK) | (array > 1 + _SLACK)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise NumericalFailure(f"{source}: the solver returned the probability {name}"
                               f"[{i}] = {array[i]:.6g}, outside [0, 1]")


def check_tail(source: str, name: str, values: Any) -> None:
    """Like :func:`check_probability`, and the tail ``P(X >= k)`` must not increase in ``k``."""
    from .approximate import Approximate
    from .simstats import ConfidenceInterval

    check_probability(source, name, values)
    if isinstance(values, (Approximate, ConfidenceInterval)):
        return
    array = np.asarray(values, dtype=float)
    if array.ndim == 2:  # levels x phases: the tail of the level totals
        array = array.sum(axis=1)
    array = array.ravel()
    if array.size > 1:
        rises = np.flatnonzero(np.diff(array) > _SLACK * max(1.0, float(array.max())))
        if rises.size:
            i = int(rises[0])
            raise NumericalFailure(f"{source}: the tail {name} increases from "
                                   f"{array[i]:.6g} to {array[i + 1]:.6g} at level {i + 1}")
