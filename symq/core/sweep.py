"""Parameter sweeps: grids of parameter points evaluated serially, on local processes or on Dask.

A sweep calls ``func(point, rng)`` once per point.  Task ``i`` receives its own
:class:`numpy.random.Generator` built from
``numpy.random.SeedSequence(seed).spawn(len(points))[i]``, so that a sweep with a given seed
returns the same results whatever the backend (serial, process pool, Dask cluster) and the number
of workers, and that the tasks draw independent streams.

Backends
--------
* serial, in-process: ``processes=1`` (and any sweep of at most one point);
* local processes: the default, :class:`concurrent.futures.ProcessPoolExecutor` with
  ``processes`` workers (``os.cpu_count()`` by default);
* Dask: ``scheduler=`` a scheduler address such as ``"tcp://host:8786"``, a
  ``dask.distributed.Client`` or a Dask cluster object.  Requires
  ``pip install "symq[distributed]"``.
  It never waits forever: see :mod:`symq.core.sweep_dask`.

For the process and Dask backends ``func`` must be picklable: a module-level function or a
:func:`functools.partial` of one (on a remote Dask cluster its module must also be importable
by the workers).

Examples
--------
>>> def mean_of_exponentials(point, rng):
...     return rng.exponential(1.0 / point["lam"], size=point["n"]).mean()
>>> points = grid(lam=[1.0, 2.0], n=[10, 100])
>>> points[1]
{'lam': 1.0, 'n': 100}
>>> result = sweep(mean_of_exponentials, points, seed=1, processes=1)
>>> len(result), result.backend
(4, 'serial')
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import numbers
import os
import pickle
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np

from symq.core.errors import (
    InvalidParameter,
    MissingDependency,
    ResourceLimit,
)
from symq.core.parameters import plain_number_text
from symq.core.sweep_dask import SweepIncomplete, check_scheduler_address, run_dask
from symq.core.sweep_result import (
    RemoteTaskError,
    SweepResult,
    SweepTaskError,
    progress_bar,
)

__all__ = [
    "MAX_POINTS",
    "fork_context",
    "MissingDependency",
    "RemoteTaskError",
    "SweepIncomplete",
    "SweepResult",
    "SweepTaskError",
    "axis_size",
    "check_scheduler_address",
    "grid",
    "parse_axis",
    "sweep",
]

_AXIS_FORMAT = (
    "'a:b:n' (n points evenly spaced from a to b, n an integer >= 1), "
    "'a:b:n:log' (geometric spacing, 0 < a, b) or a comma-separated list 'v1,v2,...'"
)


#: Most points a command-line sweep (and, by default, one :func:`parse_axis` axis) may have;
#: ``symq sweep --max-points N`` raises it.  The same cap as a claims file's region.
MAX_POINTS = 10_000


# --------------------------------------------------------------------------------------------
# grids
# --------------------------------------------------------------------------------------------


def grid(**axes: Iterable[Any] | Any) -> list[dict[str, Any]]:
    """Cartesian product of parameter axes, in row-major order (the last axis varies fastest).

    Parameters
    ----------
    **axes
        ``name=values``, each an iterable of values (list, tuple, numpy array, ...).  A string
        or a non-iterable value is taken as a single value.  Numpy scalars are converted to
        Python numbers.

    Returns
    -------
    list of dict
        One dict per point, with keys in the order of ``axes``.  With no axes, ``[{}]``.

    Raises
    ------
    InvalidParameter
        If an axis has no values.

    Examples
    --------
    >>> grid(a=[1, 2], b="xy")
    [{'a': 1, 'b': 'xy'}, {'a': 2, 'b': 'xy'}]
    >>> grid(a=[1, 2], b=[10, 20])
    [{'a': 1, 'b': 10}, {'a': 1, 'b': 20}, {'a': 2, 'b': 10}, {'a': 2, 'b': 20}]
    """
    names = list(axes)
    columns: list[list[Any]] = []
    for name in names:
        values = axes[name]
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            column = [values]
        else:
            if isinstance(values, np.ndarray) and values.ndim != 1:
                raise InvalidParameter(
                    name, f"<array of shape {values.shape}>", "a one-dimensional sequence of values"
                )
            column = list(values)
        if not column:
            raise InvalidParameter(name, axes[name], "a non-empty iterable of values")
        columns.append([v.item() if isinstance(v, np.generic) else v for v in column])
    return [dict(zip(names, combo)) for combo in itertools.product(*columns)]


def _parse_number(part: str, whole: str) -> float:
    # float() reads "0_5" as 5 and non-ASCII digits; a typed number is read as it reads
    plain_number_text("axis", part, _AXIS_FORMAT, whole=whole)
    try:
        value = float(part)
    except ValueError:
        raise InvalidParameter(
            "axis", whole, _AXIS_FORMAT, f"{part.strip()!r} is not a number"
        ) from None
    if not math.isfinite(value):
        raise InvalidParameter("axis", whole, _AXIS_FORMAT, f"{part.strip()!r} is not finite")
    return value


def axis_size(text: str) -> int:
    """The number of points of an axis specification, counted from the text alone.

    No array is built, so a huge count is cheap to refuse: ``n`` for ``"a:b:n"`` (and
    ``"a:b:n:log"``), the number of items of a list ``"v1,v2,..."``.  Only the count is read;
    :func:`parse_axis` checks the rest.

    Raises
    ------
    InvalidParameter
        If the count cannot be read (not an integer ``>= 1``, a wrong number of fields).

    Examples
    --------
    >>> axis_size("0.1:0.9:100000000"), axis_size("2,3,5")
    (100000000, 3)
    """
    if not isinstance(text, str):
        raise InvalidParameter("axis", text, _AXIS_FORMAT, "expected a string")
    stripped = text.strip()
    if not stripped:
        raise InvalidParameter("axis", text, _AXIS_FORMAT, "empty text")
    if ":" not in stripped:
        return stripped.count(",") + 1
    parts = [p.strip() for p in stripped.split(":")]
    if len(parts) not in (3, 4):
        raise InvalidParameter(
            "axis", text, _AXIS_FORMAT, f"found {len(parts)} ':'-separated fields, expected 3 or 4"
        )
    if not re.fullmatch(r"\+?[0-9]+", parts[2]):
        raise InvalidParameter(
            "axis", text, _AXIS_FORMAT, f"the number of points {parts[2]!r} is not an integer"
        )
    n = int(parts[2])
    if n < 1:
        raise InvalidParameter("axis", text, _AXIS_FORMAT, "the number of points must be >= 1")
    return n


def parse_axis(text: str, max_points: int | None = MAX_POINTS) -> np.ndarray:
    """Parse a command-line axis specification into an array of values.

    Parameters
    ----------
    text : str
        ``"a:b:n"``: ``n`` points evenly spaced from ``a`` to ``b`` (``numpy.linspace``; ``n`` an
        integer ``>= 1``, ``n = 1`` gives ``[a]``); ``"a:b:n:log"``: geometric spacing
        (``numpy.geomspace``, ``a, b > 0``); ``"a:b:n:lin"`` is the same as ``"a:b:n"``;
        ``"v1,v2,..."`` or ``"v"``: the listed values.
    max_points : int or None, default MAX_POINTS
        Most points the axis may have, checked (by :func:`axis_size`) before any array is
        built; None for no limit.

    Returns
    -------
    numpy.ndarray
        One-dimensional float array.

    Raises
    ------
    InvalidParameter
        If the text is malformed; the message gives the expected format.
    ResourceLimit
        If the axis has more than ``max_points`` points.

    Examples
    --------
    >>> parse_axis("0:1:5")
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> parse_axis("1:100:3:log")
    array([  1.,  10., 100.])
    >>> parse_axis("2,3,5")
    array([2., 3., 5.])
    """
    count = axis_size(text)
    if max_points is not None and count > max_points:
        raise ResourceLimit("axis", text, f"{count} points",
                            f"an axis of at most {max_points} points")
    stripped = text.strip()
    if ":" not in stripped:
        return np.array([_parse_number(part, text) for part in stripped.split(",")])

    parts = [p.strip() for p in stripped.split(":")]
    a = _parse_number(parts[0], text)
    b = _parse_number(parts[1], text)
    n = count  # the fields and the count were checked by axis_size
    spacing = parts[3].lower() if len(parts) == 4 else "lin"
    if spacing == "lin":
        # 15 significant digits: 0.1:0.9:9 gives 0.7 as typed, not linspace's
        # 0.7000000000000001 (a change of an ulp, printed and passed to the model as typed)
        return np.array([float(f"{v:.15g}") for v in np.linspace(a, b, n)])
    if spacing == "log":
        if a <= 0 or b <= 0:
            raise InvalidParameter(
                "axis", text, _AXIS_FORMAT, "geometric spacing needs both ends > 0"
            )
        return np.geomspace(a, b, n)
    raise InvalidParameter(
        "axis", text, _AXIS_FORMAT, f"unknown spacing {parts[3]!r}, expected 'log' or 'lin'"
    )


# --------------------------------------------------------------------------------------------
# execution
# --------------------------------------------------------------------------------------------


def _run_task(
    func: Callable[[dict[str, Any], np.random.Generator], Any],
    point: dict[str, Any],
    seed_sequence: np.random.SeedSequence,
) -> Any:
    """Evaluate one point with its own generator (runs in the worker)."""
    return func(point, np.random.default_rng(seed_sequence))


def _run_task_portable(
    func: Callable[[dict[str, Any], np.random.Generator], Any],
    point: dict[str, Any],
    seed_sequence: np.random.SeedSequence,
) -> Any:
    """:func:`_run_task` in a worker process: an exception that would not unpickle in the
    parent (which breaks a process pool and blames another task) is sent as a
    :class:`RemoteTaskError` with the same message and exit status."""
    try:
        return _run_task(func, point, seed_sequence)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - whatever stops the round trip
            raise RemoteTaskError(type(exc).__name__, str(exc),
                                  int(getattr(exc, "exit_status", 3))) from None
        raise


def _spawn(seed: Any, count: int) -> list[np.random.SeedSequence]:
    if isinstance(seed, np.random.Generator):
        seed_sequence = seed.bit_generator.seed_seq
        if not isinstance(seed_sequence, np.random.SeedSequence):
            raise InvalidParameter(
                "seed", seed,
                "None, an int, a SeedSequence or a Generator built from a SeedSequence"
            )
        return seed_sequence.spawn(count)
    if isinstance(seed, np.random.SeedSequence):
        return seed.spawn(count)
    try:
        return np.random.SeedSequence(seed).spawn(count)
    except (TypeError, ValueError):
        raise InvalidParameter(
            "seed", seed, "None, a non-negative int, a sequence of them, or a SeedSequence"
        ) from None


def _check_picklable(func: Callable[..., Any], backend: str) -> None:
    try:
        pickle.dumps(func)
    except Exception as exc:  # noqa: BLE001 - pickle raises PicklingError, AttributeError, TypeError
        raise InvalidParameter(
            "func",
            func,
            "a picklable callable (a module-level function or a functools.partial of one)",
            f"the {backend} backend sends it to other processes; use processes=1 to run "
            f"in-process. {type(exc).__name__}: {exc}",
        ) from None


def fork_context() -> Any:
    """The fork start method on Linux (workers inherit what the parent built: no pickling of
    models or claims), else None (the platform's default)."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


def _run_serial(func, points, seeds, progress, desc) -> list[Any]:
    results: list[Any] = []
    with progress_bar(len(points), progress, desc) as bar:
        for index, (point, seed_sequence) in enumerate(zip(points, seeds)):
            try:
                results.append(_run_task(func, point, seed_sequence))
            except Exception as exc:
                raise SweepTaskError(point, index, exc) from exc
            bar.update(1)
    return results


def _run_processes(func, points, seeds, workers, progress, desc) -> list[Any]:
    results: list[Any] = [None] * len(points)
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=fork_context())
    try:
        futures: dict[Future[Any], int] = {
            executor.submit(_run_task_portable, func, point, seed_sequence): index
            for index, (point, seed_sequence) in enumerate(zip(points, seeds))
        }
        with progress_bar(len(points), progress, desc) as bar:
            for future in as_completed(futures):
                index = futures[future]
                try:
                    results[index] = future.result()
                except Exception as exc:
                    for other in futures:
                        other.cancel()
                    raise SweepTaskError(points[index], index, exc) from exc
                bar.update(1)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    return results


def sweep(
    func: Callable[[dict[str, Any], np.random.Generator], Any],
    points: Sequence[Mapping[str, Any]],
    *,
    seed: int | Sequence[int] | np.random.SeedSequence | np.random.Generator | None = None,
    scheduler: Any = None,
    processes: int | None = None,
    progress: bool = False,
    desc: str = "sweep",
    connect_timeout: float = 7.0,
) -> SweepResult:
    """Evaluate ``func(point, rng)`` at every point, serially, on local processes or on Dask.

    Parameters
    ----------
    func : callable
        ``func(point: dict, rng: numpy.random.Generator) -> object``.  Must be picklable (a
        module-level function or a :func:`functools.partial` of one) unless the sweep runs
        serially.
    points : sequence of dict
        Parameter points, e.g. from :func:`grid`.
    seed : int, sequence of int, SeedSequence, Generator or None
        Root of the random streams: task ``i`` uses
        ``numpy.random.default_rng(SeedSequence(seed).spawn(len(points))[i])``.  The results
        therefore do not depend on the backend nor on the number of workers.  ``None`` draws
        fresh entropy (not reproducible).  A Generator contributes its own SeedSequence.
    scheduler : str, dask.distributed.Client, Dask cluster or None
        Run on a Dask cluster: a scheduler address (``"tcp://host:8786"``), a client or a
        cluster object.  A client created here from an address or a cluster is closed at the
        end; a client passed in is left open.
    processes : int, optional
        Number of local worker processes when ``scheduler`` is None (default
        ``os.cpu_count()``).  ``1`` runs serially in this process, as does any sweep of at most
        one point.
    progress : bool, default False
        Show a tqdm progress bar over completed tasks.
    desc : str, default "sweep"
        Label of the progress bar.
    connect_timeout : float, default 7
        Dask only: one deadline, in seconds, for reaching the scheduler, checking that it is a
        Dask scheduler and the first worker joining; also how long a lost scheduler, or a
        cluster left without workers, is waited for during the sweep
        (:mod:`symq.core.sweep_dask`).

    Returns
    -------
    SweepResult
        Results in the order of ``points``.

    Raises
    ------
    SweepTaskError
        If a task raises; the first failure (in completion order) is reported with its point,
        the original exception is chained as ``__cause__`` and the pending tasks are cancelled.
    InvalidParameter
        On a bad ``points``, ``processes``, ``seed`` or ``scheduler``, or a non-picklable
        ``func`` for a parallel backend.
    MissingDependency
        If ``scheduler`` is given and dask.distributed is not installed.
    SchedulerUnreachable
        If within ``connect_timeout`` the scheduler at the address cannot be reached, is not a
        Dask scheduler, or has no worker.
    SweepIncomplete
        If the scheduler, or every worker, is lost during the sweep for ``connect_timeout``
        seconds after some points finished: ``partial`` holds those points.

    Examples
    --------
    >>> def draw(point, rng):
    ...     return point["x"] + rng.random()
    >>> a = sweep(draw, grid(x=[0, 10]), seed=7, processes=1)
    >>> b = sweep(draw, grid(x=[0, 10]), seed=7, processes=1)
    >>> a.results == b.results
    True
    """
    if not callable(func):
        raise InvalidParameter("func", func, "a callable func(point, rng)")
    if isinstance(points, (str, bytes, Mapping)) or not isinstance(points, Iterable):
        raise InvalidParameter("points", _short(points), "a sequence of dicts (e.g. from grid())")
    point_list: list[dict[str, Any]] = []
    for index, point in enumerate(points):
        if not isinstance(point, Mapping):
            raise InvalidParameter(
                f"points[{index}]", _short(point), "a dict mapping parameter names to values"
            )
        point_list.append(dict(point))
    if processes is not None and (
        isinstance(processes, bool) or not isinstance(processes, numbers.Integral) or processes < 1
    ):
        raise InvalidParameter("processes", processes, "None or an integer >= 1")
    if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, numbers.Real) \
            or not 0 < float(connect_timeout) <= 3600:
        raise InvalidParameter("connect_timeout", connect_timeout,
                               "a number of seconds in (0, 3600]")
    seeds = _spawn(seed, len(point_list))

    start = time.perf_counter()
    if scheduler is not None:
        _check_picklable(func, "dask")
        backend = "dask"
        try:
            results = run_dask(func, point_list, seeds, scheduler, progress, desc,
                               float(connect_timeout), _run_task_portable)
        except SweepIncomplete as exc:
            exc.partial.seconds = time.perf_counter() - start
            raise
    else:
        workers = int(processes) if processes is not None else (os.cpu_count() or 1)
        workers = min(workers, len(point_list))
        if workers <= 1:
            backend = "serial"
            results = _run_serial(func, point_list, seeds, progress, desc)
        else:
            _check_picklable(func, "process")
            backend = "processes"
            results = _run_processes(func, point_list, seeds, workers, progress, desc)
    return SweepResult(point_list, results, time.perf_counter() - start, backend)


def _short(values: object) -> object:
    text = repr(values)
    return values if len(text) <= 60 else f"<{type(values).__name__}>"
