"""A sweep as a labelled grid: :meth:`symq.core.sweep_result.SweepResult.to_xarray`.

The points of a sweep become the cells of an ``xarray.Dataset`` with one dimension per swept
parameter, the outputs its data variables; a simulated output (a
:class:`~symq.core.simstats.ConfidenceInterval`, or the ``KEY``/``KEY_half_width``/``KEY_level``
columns that :meth:`symq.core.registry.ModelSpec.summary_values` writes) keeps its interval as
``KEY_half_width``, with the level and the method as attributes.  A cell of the grid without a
point (an interrupted sweep, or points that do not fill the product of the axes) is NaN, and the
variable ``missing_reason`` says why.

xarray is optional (``pip install xarray``, or ``pip install "symq[xarray]"``): it is imported
here only, only when :func:`to_xarray` runs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InvalidParameter, MissingDependency, ResourceLimit

if TYPE_CHECKING:
    import xarray

    from .sweep_result import SweepResult

__all__ = ["MAX_CELLS", "MISSING_REASON", "to_xarray"]

#: Most cells of the grid :func:`to_xarray` builds (the product of the axes' sizes).
MAX_CELLS = 10_000_000
#: Name of the data variable that says why a cell of the grid has no result.
MISSING_REASON = "missing_reason"
#: Columns of :meth:`SweepResult.rows` that an interval's half-width and level make redundant.
_DERIVED = ("lo", "hi")


def _key(value: Any) -> Any:
    """A hashable stand-in for a parameter value (a vector as a tuple)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, tuple(value.ravel().tolist()))
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _key(v)) for k, v in value.items()))
    if isinstance(value, np.generic):
        return value.item()
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (numbers.Real, np.number)) and not isinstance(value, np.datetime64)


def _array(values: list[Any], shape: tuple[int, ...] = ()) -> np.ndarray:
    """Values as an array: numbers (bools, integers, floats) as such, anything else as objects
    (a vector stays one entry)."""
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.asarray(values, dtype=bool).reshape(shape or (len(values),))
    if values and all(_is_number(v) and not isinstance(v, (bool, np.bool_)) for v in values):
        kind = np.integer if all(isinstance(v, (numbers.Integral, np.integer))
                                 for v in values) else np.floating
        return np.asarray([int(v) if kind is np.integer else float(v) for v in values],
                          dtype=np.int64 if kind is np.integer else float).reshape(
                              shape or (len(values),))
    if values and all(isinstance(v, str) for v in values):
        return np.asarray(values, dtype=str).reshape(shape or (len(values),))
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out.reshape(shape or (len(values),))


def _scalar(value: Any) -> np.ndarray:
    """One value as a 0-d array (a vector stays one entry)."""
    if isinstance(value, (bool, np.bool_, str)) or _is_number(value):
        return np.asarray(value)
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def _filled(cells: dict[int, Any], shape: tuple[int, ...]) -> np.ndarray:
    """A variable over the grid: its values at the cells that have one, NaN at the others
    (numbers then as floats)."""
    size = math.prod(shape)
    values = list(cells.values())
    dense = _array(values)
    if len(cells) == size:
        out = np.empty(size, dtype=dense.dtype)
        out[list(cells)] = dense
        return out.reshape(shape)
    out = np.full(size, np.nan, dtype=float if dense.dtype.kind in "biuf" else object)
    out[list(cells)] = dense.astype(float) if dense.dtype.kind in "biuf" else dense
    return out.reshape(shape)


def _outputs(result: Any, taken: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One point's outputs (name to value) and its intervals (name to level and method).

    Names as :meth:`SweepResult.rows` writes them (``result.KEY`` for a key that is also a
    parameter, or in ``taken``; ``result`` for a result that is not a mapping); a confidence
    interval gives
    ``KEY`` and ``KEY_half_width``; the ``KEY_level``, ``KEY_lo`` and ``KEY_hi`` columns of a
    summary beside a ``KEY_half_width`` become the interval's level."""
    from .simstats import ConfidenceInterval

    items = result.items() if isinstance(result, Mapping) else [("result", result)]
    named = {(f"result.{key}" if key in taken else str(key)): value for key, value in items}
    out: dict[str, Any] = {}
    intervals: dict[str, Any] = {}
    for name, value in named.items():
        if isinstance(value, ConfidenceInterval):
            out[name] = value.mean
            out.setdefault(f"{name}_half_width", value.half_width)
            intervals[name] = (value.level, value.method)
        elif f"{name}_half_width" in named and f"{name}_level" in named and _is_number(value):
            out[name] = value
            intervals[name] = (named[f"{name}_level"], None)
        else:
            out[name] = value
    for name in intervals:                          # summary columns the interval stands for
        for suffix in ("level", *_DERIVED):
            if f"{name}_{suffix}" in named and f"{name}_{suffix}" not in intervals:
                out.pop(f"{name}_{suffix}", None)
    return out, intervals


def to_xarray(sweep: SweepResult, dims: Sequence[str] | None = None) -> xarray.Dataset:
    """The sweep as an ``xarray.Dataset`` over the grid of its swept parameters.

    See :meth:`symq.core.sweep_result.SweepResult.to_xarray`.
    """
    try:
        import xarray as xr
    except ImportError:
        raise MissingDependency("SweepResult.to_xarray() needs xarray (pip install xarray, or "
                                'pip install "symq[xarray]"); rows() gives the same values as '
                                "a list of dicts") from None
    points = sweep.points
    names: list[str] = []
    for point in points:
        names += [name for name in point if name not in names]
    columns = {name: [point.get(name) for point in points] for name in names}
    if dims is None:
        dims = [name for name in names if len({_key(v) for v in columns[name]}) > 1]
    else:
        if isinstance(dims, str):
            dims = [dims]
        dims = list(dims)
        unknown = [d for d in dims if d not in columns]
        if unknown or len(set(dims)) != len(dims):
            raise InvalidParameter("dims", dims, "distinct parameters of the sweep's points "
                                   f"({', '.join(names) or 'none'})")
    # the axes: each swept parameter's values in the order the points first give them
    axes: list[list[Any]] = []
    where: list[dict[Any, int]] = []
    for name in dims:
        seen: dict[Any, int] = {}
        axis: list[Any] = []
        for value in columns[name]:
            if _key(value) not in seen:
                seen[_key(value)] = len(axis)
                axis.append(value)
        axes.append(axis)
        where.append(seen)
    shape = tuple(len(axis) for axis in axes)
    cells = math.prod(shape)
    if cells > MAX_CELLS:
        raise ResourceLimit("dims", list(dims), f"a grid of {cells} cells ("
                            + " x ".join(f"{d}: {n}" for d, n in zip(dims, shape)) + ")",
                            f"axes whose product has at most {MAX_CELLS} cells (points that "
                            "do not form a grid: rows() or to_dataframe())")
    # the cell of each point
    flat: list[int] = []
    occupied: dict[int, int] = {}
    for index, point in enumerate(points):
        cell = 0
        for name, seen, size in zip(dims, where, shape):
            cell = cell * size + seen[_key(point.get(name))]
        if cell in occupied:
            raise InvalidParameter("dims", list(dims), "parameters that tell the points apart",
                                   f"points {occupied[cell]} and {index} fall on the same cell "
                                   "of the grid")
        occupied[cell] = index
        flat.append(cell)
    # the outputs, cell by cell
    values: dict[str, dict[int, Any]] = {}
    intervals: dict[str, dict[int, tuple[Any, Any]]] = {}
    taken = {*names, MISSING_REASON}               # names of the coordinates
    for cell, result in zip(flat, sweep.results):
        outputs, stated = _outputs(result, taken)
        for name, value in outputs.items():
            values.setdefault(name, {})[cell] = value
        for name, interval in stated.items():
            intervals.setdefault(name, {})[cell] = interval
    coords: dict[str, Any] = {name: (name, _array(axis)) for name, axis in zip(dims, axes)}
    for name in names:
        if name in dims:
            continue
        column = columns[name]
        if len({_key(v) for v in column}) == 1:
            coords[name] = ((), _scalar(column[0]))
        else:
            coords[name] = (tuple(dims), _filled(dict(zip(flat, column)), shape))
    data: dict[str, Any] = {name: (tuple(dims), _filled(at, shape), {})
                            for name, at in values.items()}
    for name, by_cell in intervals.items():
        levels = {cell: float(level) for cell, (level, _) in by_cell.items()}
        methods = sorted({str(method) for _, method in by_cell.values() if method is not None})
        attrs: dict[str, Any] = {}
        if len(set(levels.values())) == 1:
            attrs["level"] = next(iter(levels.values()))
        else:                                       # levels differ between points
            data[f"{name}_level"] = (tuple(dims), _filled(levels, shape), {})
        if methods:
            attrs["method"] = ", ".join(methods)
        data[name][2].update(attrs, half_width=f"{name}_half_width")
        if f"{name}_half_width" in data:
            data[f"{name}_half_width"][2].update(
                attrs, long_name=f"half-width of the confidence interval of {name}")
    missing = cells - len(points) if points else 0
    if missing:
        reason = sweep.incomplete or "not a point of the sweep"
        text = np.full(cells, reason, dtype=object)
        text[flat] = ""
        data[MISSING_REASON] = (tuple(dims), text.reshape(shape).astype(str), {})
    attrs = {"backend": sweep.backend, "seconds": float(sweep.seconds), "points": len(points),
             "missing": missing}
    if sweep.incomplete:
        attrs["incomplete"] = sweep.incomplete
    return xr.Dataset(data, coords=coords, attrs=attrs)
