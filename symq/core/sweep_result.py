"""What a sweep returns and raises, shared by every backend of :func:`symq.core.sweep.sweep`.

:class:`SweepResult` (the points and their results, in the order of the points), the errors of a
task (:class:`SweepTaskError`, :class:`RemoteTaskError`) and the task progress bar.  The serial
and process backends (:mod:`symq.core.sweep`) and the Dask backend
(:mod:`symq.core.sweep_dask`) both import this module, which imports neither.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .display import MarkdownDisplay, cell
from .errors import MissingDependency, SymqError
from .result import to_jsonable

if TYPE_CHECKING:
    import xarray

__all__ = ["SWEEP_COLUMNS", "SWEEP_ROWS", "RemoteTaskError", "SweepResult", "SweepTaskError",
           "progress_bar"]

#: Rows and columns of a sweep shown by :meth:`SweepResult.to_markdown` (the rest are counted).
SWEEP_ROWS, SWEEP_COLUMNS = 12, 10


class SweepTaskError(SymqError, RuntimeError):
    """A task of a sweep raised an exception.

    The original exception is chained as ``__cause__``.

    Parameters
    ----------
    point : dict
        The parameter point whose evaluation failed.
    index : int
        Position of that point in the sweep.
    error : BaseException
        The exception raised by the task.
    """

    def __init__(self, point: Mapping[str, Any], index: int, error: BaseException) -> None:
        self.point = dict(point)
        self.index = index
        self.error = error
        super().__init__(
            f"sweep task {index} failed at point {self.point!r}: "
            f"{getattr(error, 'type_name', type(error).__name__)}: {error}"
        )

    @property
    def exit_status(self) -> int:  # type: ignore[override]
        """The CLI status of the task's own error (2 for bad input, 3 for run-time failures)."""
        return getattr(self.error, "exit_status", 3)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.point, self.index, self.error))


class RemoteTaskError(SymqError, RuntimeError):
    """A task's exception that could not travel back from a worker process as itself.

    It keeps the original's type name (``type_name``), message and CLI ``exit_status``.
    """

    def __init__(self, type_name: str, message: str, exit_status: int) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.exit_status = exit_status

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.type_name, str(self), self.exit_status))


@dataclass
class SweepResult(MarkdownDisplay):
    """Results of a sweep, in the order of the points.

    Attributes
    ----------
    points : list of dict
        The parameter points.
    results : list
        ``results[i]`` is ``func(points[i], rng_i)``, whatever the completion order.
    seconds : float
        Wall-clock duration of the sweep.
    backend : str
        ``"serial"``, ``"processes"`` or ``"dask"``.
    incomplete : str, default ""
        Empty when every point of the sweep has its result; otherwise why some have none (the
        ``partial`` result of an interrupted Dask sweep,
        :class:`~symq.core.sweep_dask.SweepIncomplete`, holds the finished points only).
    """

    points: list[dict[str, Any]]
    results: list[Any]
    seconds: float
    backend: str
    incomplete: str = ""

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[tuple[dict[str, Any], Any]]:
        """Iterate over ``(point, result)`` pairs."""
        return iter(zip(self.points, self.results))

    def rows(self) -> list[dict[str, Any]]:
        """Tidy rows, one per point: the point's parameters, then its results.

        A result that is a mapping (the outputs of a model) gives one column per key (a key
        that is also a parameter name is prefixed ``result.``); a confidence interval among
        them gives five: ``KEY`` (the estimate), ``KEY_half_width``, ``KEY_level``, ``KEY_lo``
        and ``KEY_hi``; any other result is the column ``result``.
        """
        from .simstats import ConfidenceInterval

        out = []
        for point, result in zip(self.points, self.results):
            row = dict(point)
            if isinstance(result, Mapping):
                for key, value in result.items():
                    name = f"result.{key}" if key in point else str(key)
                    if isinstance(value, ConfidenceInterval):
                        row[name] = value.mean
                        for suffix, number in (("half_width", value.half_width),
                                               ("level", value.level), ("lo", value.low),
                                               ("hi", value.high)):
                            row.setdefault(f"{name}_{suffix}", number)
                    else:
                        row[name] = value
            else:
                row["result"] = result
            out.append(row)
        return out

    def to_dataframe(self) -> Any:
        """The :meth:`rows` as a ``pandas.DataFrame`` (pandas is optional).

        Raises
        ------
        MissingDependency
            When pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingDependency("SweepResult.to_dataframe() needs pandas (pip install "
                                    "pandas); rows() gives the same table as a list of "
                                    "dicts") from None
        return pd.DataFrame(self.rows())

    def to_xarray(self, dims: Sequence[str] | None = None) -> xarray.Dataset:
        """The sweep as an ``xarray.Dataset`` over the grid of its swept parameters
        (xarray is optional).

        Parameters
        ----------
        dims : sequence of str, optional
            The parameters that are the dimensions, in this order.  Default: every parameter
            that takes more than one value, in the order of the points' keys (a grid from
            :func:`~symq.core.sweep.grid` gives its axes).

        Returns
        -------
        xarray.Dataset
            One dimension per swept parameter, its coordinate the parameter's values in the
            order the points first give them; a parameter with one value is a scalar
            coordinate (one that varies but is not a dimension, a coordinate over the
            dimensions).  One data variable per output, named as in :meth:`rows` (a result
            that is not a mapping is ``result``).  A simulated output (a
            :class:`~symq.core.simstats.ConfidenceInterval`, or a model's ``KEY``,
            ``KEY_half_width``, ``KEY_level`` summary) is its estimate ``KEY`` and its
            ``KEY_half_width``, both with the attributes ``level`` and, where the interval
            states it, ``method`` (``KEY_lo`` and ``KEY_hi`` are ``KEY`` minus and plus the
            half-width).  A cell of the grid without a point (an interrupted sweep,
            :attr:`incomplete`, or points that do not fill the product of the axes) is NaN,
            and the variable ``missing_reason`` says why ("" where there is a result).
            Attributes: ``backend``, ``seconds``, ``points``, ``missing`` (cells without a
            point) and ``incomplete`` where set.

        Raises
        ------
        MissingDependency
            When xarray is not installed (``pip install xarray``).
        InvalidParameter
            When ``dims`` names a parameter the points do not have, or leaves two points on
            the same cell of the grid.
        ResourceLimit
            When the grid would have more than :data:`~symq.core.sweep_xarray.MAX_CELLS`
            cells (points that do not form a grid: :meth:`rows`).

        Examples
        --------
        >>> from symq.core.sweep import grid, sweep
        >>> s = sweep(lambda p, rng: {"ET": p["d"] / (1 - p["lam"])},
        ...           grid(d=[1, 2], lam=[0.5, 0.75]), processes=1)
        >>> ds = s.to_xarray()
        >>> ds["ET"].sel(d=2, lam=0.75).item()
        8.0
        """
        from .sweep_xarray import to_xarray

        return to_xarray(self, dims)

    def to_markdown(self) -> str:
        """Points, backend and time, then the tidy :meth:`rows` as a table (Jupyter's display;
        numbers rounded; long sweeps and wide rows shortened, with the count of what is left
        out: :data:`SWEEP_ROWS` rows and :data:`SWEEP_COLUMNS` columns are shown)."""
        rows = self.rows()
        title = (f"**SweepResult**: {len(rows)} point(s), {cell(self.backend)}, "
                 f"{self.seconds:.3g} s" + (f"; incomplete: {cell(self.incomplete)}"
                                            if self.incomplete else ""))
        if not rows:
            return title
        columns: list[str] = []
        for row in rows:
            columns += [k for k in row if k not in columns]
        shown = columns[:SWEEP_COLUMNS]
        lines = [title, "", "| " + " | ".join(f"`{c}`" for c in shown) + " |",
                 "|" + "---|" * len(shown)]
        for row in rows[:SWEEP_ROWS]:
            lines.append("| " + " | ".join(cell(row.get(c, ""), 40) for c in shown) + " |")
        more = [f"{len(rows) - SWEEP_ROWS} more row(s)"] if len(rows) > SWEEP_ROWS else []
        more += [f"{len(columns) - SWEEP_COLUMNS} more column(s)"] \
            if len(columns) > SWEEP_COLUMNS else []
        if more:
            lines += ["", "; ".join(more) + " (`.rows()`, `.to_dataframe()`)"]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dictionary.

        Converted with :func:`symq.core.result.to_jsonable`: numpy scalars become Python
        numbers, arrays become lists, objects with a ``to_dict()`` method are converted with it,
        non-finite floats become the strings ``"inf"``, ``"-inf"``, ``"nan"``.  The key
        ``incomplete`` is there only when :attr:`incomplete` is set.
        """
        out = {
            "backend": self.backend,
            "seconds": float(self.seconds),
            "points": to_jsonable(self.points),
            "results": to_jsonable(self.results),
        }
        if self.incomplete:
            out["incomplete"] = self.incomplete
        return out


def progress_bar(total: int, progress: bool, desc: str) -> Any:
    """A tqdm bar over ``total`` tasks labelled ``desc``, shown only when ``progress`` is true
    (a disabled bar otherwise, so that callers update it unconditionally)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not progress, unit="task")
