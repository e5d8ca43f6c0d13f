"""``symq solve`` and ``symq sweep``: one registered model at a point or over a grid."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

import numpy as np

from ..core import registry
from ..core.errors import MISSING, InvalidParameter
from ..core.parameters import PositiveVector, RationalVector, validate_parameters
from ..core.result import to_jsonable
from .common import EXIT_OK, one_line, split_assignments

__all__: list[str] = []  # the commands are reached through symq.cli.main


# ----------------------------------------------------------------------------- solve

def _print_values(values: Any, indent: str = "") -> None:
    for key, value in values.items():
        if isinstance(value, dict):
            print(f"{indent}{key}:")
            _print_values(value, indent + "  ")
        elif isinstance(value, (list, tuple, np.ndarray)):
            seq = list(np.asarray(value).ravel()) if isinstance(value, np.ndarray) else list(value)
            shown = ", ".join(f"{v:.6g}" if isinstance(v, (float, np.floating)) else str(v)
                              for v in seq[:12])
            more = f", ... ({len(seq)} in all)" if len(seq) > 12 else ""
            print(f"{indent}{key}: [{shown}{more}]")
        elif isinstance(value, (float, np.floating)):
            print(f"{indent}{key}: {value:.10g}")
        else:
            print(f"{indent}{key}: {value}")


def _model_help(command: str, model: registry.ModelSpec) -> str:
    """``symq solve MODEL --help``: the model's summary, paper and parameters (domain,
    default or typical value, description), and an example command line."""
    lines = [f"usage: symq {command} {model.name} key=value ... "
             + ("[--json] [--seed N]" if command == "solve" else "[options]"),
             "", f"{model.name}: {model.summary}"]
    if model.paper:
        lines.append(f"paper: {model.paper} (symq check {model.paper})")
    lines += ["", "parameters:"]
    for p in model.parameters:
        if p.required:
            need = "required"
        elif p.default is not None:
            need = f"default {p.default}"
        else:
            need = "optional"
        lines.append(f"  {p.name:<12} {p.domain.describe()}; {need}")
        if p.description:
            lines.append(f"  {'':<12} {p.description}")
    if model.outputs:
        lines += ["", "results: " + ", ".join(model.outputs)]
    example = model.example or " ".join(f"{p.name}={_typed(p.typical)}"
                                        for p in model.parameters
                                        if p.required and p.typical is not None)
    lines += ["", f"example: symq {command} {model.name} {example}".rstrip()]
    return "\n".join(lines)


def _typed(value: Any) -> str:
    """A typical value as it is typed on the command line (``1,2,3`` for a vector)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(f"{v:g}" for v in np.asarray(value, dtype=float))
    return str(value)


def _help_requested(args: argparse.Namespace, command: str) -> bool:
    """Print the generic or the model's help for ``--help``; whether it was asked for."""
    if not args.help:
        if args.model is None:
            raise InvalidParameter("MODEL", MISSING, "a model name (symq list shows them)")
        return False
    if args.model is None:
        print(args.parser.format_help(), end="")
    else:
        print(_model_help(command, registry.get_model(args.model)))
    return True


def _show_progress(args: argparse.Namespace) -> bool:
    """Progress bars go to a terminal only, and never with ``--json`` or ``-q``."""
    return sys.stderr.isatty() and not args.json and not getattr(args, "quiet", False)


def _seed(text: str | None) -> int | None:
    """``--seed`` as typed: an integer >= 0 (a numpy seed), else bad input naming ``--seed``."""
    if text is None:
        return None
    try:
        value = int(str(text).strip())
    except ValueError:
        raise InvalidParameter("--seed", text, "an integer >= 0") from None
    if value < 0:
        raise InvalidParameter("--seed", value, "an integer >= 0")
    return value


def _cmd_solve(args: argparse.Namespace) -> int:
    if _help_requested(args, "solve"):
        return EXIT_OK
    model = registry.get_model(args.model)
    typed = model.current_names(split_assignments(args.assignments))  # old names: a warning
    try:
        params = model.parse(typed)
        result = model.run(params, rng=_seed(args.seed), progress=_show_progress(args))
    except InvalidParameter as exc:
        _show_as_typed(exc, typed)
        raise
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(f"{model.name}: {model.summary}")
        _print_values({"params": to_jsonable(result.params)})
        _print_values({"results": result.values})
        print(f"method: {result.method} ({result.exactness})")
        for key, value in result.values.items():
            doubt = getattr(value, "doubt", "")
            if doubt:  # the run's own diagnostics: this interval may not cover
                print(f"doubt: {key}: {doubt}")
    return EXIT_OK


def _show_as_typed(exc: InvalidParameter, typed: dict[str, str]) -> None:
    """Show the value of a refused parameter as the user typed it (``n_jobs=1e12``, not the
    integer it was read as; ``C=1e308,2,1``, not a list), where the typed text reads as that
    same number or vector."""
    text = typed.get(exc.name)
    value = exc.value
    if text is None or value is MISSING or isinstance(value, (bool, str)):
        return
    shown = value.tolist() if hasattr(value, "tolist") and hasattr(value, "shape") else value
    try:
        typed_numbers = [float(part) for part in text.split(",")]
        numbers = [float(v) for v in np.ravel(np.asarray(shown, dtype=float))]
    except (TypeError, ValueError, OverflowError):
        return
    prefix = f"parameter {exc.name}={shown!r}"
    message = str(exc)
    if typed_numbers == numbers and text != repr(shown) and message.startswith(prefix):
        exc.args = (f"parameter {exc.name}={text}" + message[len(prefix):],)


# ----------------------------------------------------------------------------- sweep

def _solve_point(model_name: str, point: dict[str, Any], rng: np.random.Generator
                 ) -> dict[str, float]:
    """One sweep task: solve a registered model at a point (module level so it pickles)."""
    model = registry.get_model(model_name)
    return model.summary_values(model.run(point, rng=rng))


def _is_list_axis(model: Any, name: str, text: str) -> bool:
    """``key=v1,v2,...`` sweeps the listed values, unless the parameter is itself a vector
    (``speeds=1,2,4`` is one value)."""
    if "," not in text or ":" in text:
        return False
    return not isinstance(model.parameter(name, text).domain, (PositiveVector, RationalVector))


def _cell(value: Any) -> str:
    """A grid value in the sweep table: a number to 6 digits, a name as typed."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f"{float(value):>12.6g}"
    return f"{value!s:>12}"


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..core.errors import ResourceLimit
    from ..core.resources import require_memory
    from ..core.sweep import (
        SweepIncomplete,
        axis_size,
        check_scheduler_address,
        grid,
        parse_axis,
        sweep,
    )

    if _help_requested(args, "sweep"):
        return EXIT_OK
    if not args.assignments:
        raise InvalidParameter("key=a:b:n", MISSING, "at least one parameter assignment "
                               f"(symq sweep {args.model} --help lists the parameters)")
    scheduler = None
    if args.scheduler is not None:
        scheduler = check_scheduler_address(args.scheduler, "--scheduler", allow_inproc=False)
    if args.processes is not None and args.processes < 1:
        raise InvalidParameter("--processes", args.processes, "an integer >= 1")
    if not 0 < args.connect_timeout <= 3600:
        raise InvalidParameter("--connect-timeout", args.connect_timeout,
                               "a number of seconds in (0, 3600]")
    if args.max_points < 1:
        raise InvalidParameter("--max-points", args.max_points, "an integer >= 1")
    model = registry.get_model(args.model)
    texts = model.current_names(split_assignments(args.assignments))  # old names: a warning
    counts: dict[str, int] = {}  # the point budget, counted from the text before any array
    listed = {name for name, text in texts.items() if _is_list_axis(model, name, text)}
    for name in listed:
        counts[name] = len(texts[name].split(","))
    for name, text in texts.items():
        if ":" in text:
            model.parameter(name, text)
            try:
                counts[name] = axis_size(text)
            except InvalidParameter as exc:
                raise InvalidParameter(name, text, "a range a:b:n (n points from a to b)",
                                       exc.reason) from None
    total = 1
    for count in counts.values():
        total *= count
    if total > args.max_points:
        name = max(counts, key=counts.__getitem__)
        grid_text = " x ".join(f"{n}: {c}" for n, c in counts.items())
        raise ResourceLimit(name, texts[name],
                            f"{total} points" + (f" ({grid_text})" if len(counts) > 1 else ""),
                            f"a grid of at most {args.max_points} points in all "
                            "(--max-points N allows more)")
    if counts:  # a --max-points above the default may still ask for more than fits
        biggest = max(counts, key=counts.__getitem__)
        require_memory(biggest, texts[biggest], 2048.0 * total,  # ~2 KiB a point
                       what=f"a grid of {total} points",
                       limit=lambda budget: f"a grid of at most {budget // 2048} points")
    axes: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    for name, text in texts.items():
        parameter = model.parameter(name, text)
        if ":" in text:
            try:
                values = parse_axis(text, max_points=None)
            except InvalidParameter as exc:
                raise InvalidParameter(name, text, "a range a:b:n (n points from a to b)",
                                       str(exc)) from None
            axes[name] = [parameter.validate(float(v)) for v in values]
        elif name in listed:
            axes[name] = [parameter.parse(part.strip()) for part in text.split(",")]
        else:
            fixed[name] = parameter.parse(text)
    if not axes:
        raise InvalidParameter("axes", " ".join(args.assignments),
                               "at least one key=a:b:n range or key=v1,v2,... list",
                               "nothing to sweep")
    points = [{**fixed, **p} for p in grid(**axes)]
    for point in points:  # validate every point up front: fail before starting workers
        validate_parameters(model.parameters, point)
    task = functools.partial(_solve_point, model.name)
    incomplete: SweepIncomplete | None = None
    try:
        outcome = sweep(task, points, seed=_seed(args.seed), scheduler=scheduler,
                        processes=args.processes, connect_timeout=args.connect_timeout,
                        progress=sys.stderr.isatty() and not args.json and args.format == "table",
                        desc=f"sweep {model.name}")
    except SweepIncomplete as exc:  # the finished points are printed, then the error line
        outcome, incomplete = exc.partial, exc
    fmt = "json" if args.json else args.format
    if fmt == "csv":
        _print_csv(outcome.rows())
    elif fmt == "json":
        print(json.dumps({"model": model.name, "axes": to_jsonable(axes),
                          "fixed": to_jsonable(fixed), "seconds": outcome.seconds,
                          "backend": outcome.backend, "complete": incomplete is None,
                          "points": [{"params": to_jsonable(pt), "results": to_jsonable(res)}
                                     for pt, res in zip(outcome.points, outcome.results)]}))
    else:
        names = list(axes)
        outputs = list(outcome.results[0]) if outcome.results else []
        # the table shows each estimate and its half-width; the level once, below; lo and hi
        # in JSON and CSV
        levels = sorted({outcome.results[0][o] for o in outputs if o.endswith("_level")
                         and f"{o[:-6]}_half_width" in outputs}) if outputs else []
        outputs = [o for o in outputs if not (o.endswith(("_level", "_lo", "_hi"))
                                              and f"{o.rsplit('_', 1)[0]}_half_width" in outputs)]
        widths = [max(12, len(h)) for h in names + outputs]
        print("  ".join(f"{h:>{w}}" for h, w in zip(names + outputs, widths)))
        for pt, res in zip(outcome.points, outcome.results):
            cells = [_cell(pt[n]) for n in names] + [f"{float(res[o]):>12.6g}" for o in outputs]
            print("  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
        if levels:
            print("half-widths of confidence intervals at level "
                  + ", ".join(f"{v:g}" for v in levels) + " (lo, hi: --format csv or json)",
                  file=sys.stderr)
        if incomplete is None:
            print(f"{len(points)} points in {outcome.seconds:.2f} s ({outcome.backend})",
                  file=sys.stderr)
    if incomplete is not None:
        print(f"symq: error: {one_line(incomplete)}", file=sys.stderr)
        return incomplete.exit_status
    return EXIT_OK


def _print_csv(rows: list[dict[str, Any]]) -> None:
    """Tidy CSV on stdout: a header, then one row per point; numbers as Python prints them
    (the shortest decimal that reads back to the same float)."""
    import csv

    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if c not in row else _csv_cell(row[c]) for c in columns])


def _csv_cell(value: Any) -> str:
    """A CSV cell: a number as the shortest decimal, a vector of numbers as it is typed
    (``4,2,1``), anything else nested as JSON."""
    value = to_jsonable(value)
    if isinstance(value, list) and value and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return ",".join(_number_as_typed(v) for v in value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return repr(value) if isinstance(value, float) else str(value)


def _number_as_typed(value: float) -> str:
    """``4`` for 4.0, ``0.1`` for 0.1: the shortest text that reads back to the number."""
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)
