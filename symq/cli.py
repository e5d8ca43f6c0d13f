"""The ``symq`` command line.

::

    symq list                       models and papers
    symq check [PAPER ...]          check every claim of the papers; --json; --report DIR
    symq derive PAPER               print the derivation (Markdown + LaTeX)
    symq solve MODEL key=value ...  solve one model; --json for machine-readable output
    symq sweep MODEL key=a:b:n ...  parameter sweep; --scheduler ADDRESS runs it on Dask

Models and papers come from the registry in :mod:`symq.core.registry`; adding a domain
needs no edit here.

Exit statuses: 0 success (``check`` exits 0 whatever the verdicts); 1 an internal error (a bug in
symq: a check that crashed, an unexpected exception); 2 bad input (one line naming the parameter
as typed, the value and the allowed domain); 3 a run-time failure (a solver that did not converge
or would truncate beyond the accuracy asked for, an output path that cannot be written, a Dask
scheduler that cannot be reached, memory exhausted); 130 interrupted.  Every failure prints one
line ``symq: error: ...`` on stderr; ``SYMQ_DEBUG=1`` adds the traceback of internal errors.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import __version__
from .core import registry
from .core.claims import Verdict, internal_error_verdict
from .core.errors import EXIT_RUNTIME, EXIT_USAGE, InvalidParameter, OutputError, SymqError
from .core.parameters import validate_parameters
from .core.report import verdict_table, write_report
from .core.result import to_jsonable

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_INTERNAL = 0, 1


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump, no traceback)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _check_writable_directory(option: str, directory: Path) -> None:
    """Create ``directory`` if needed and prove it writable, before any work starts."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise OutputError(f"{option} {str(directory)!r} cannot be written: "
                          f"{exc.strerror or exc}") from None


def _check_writable_file(option: str, path: Path) -> None:
    """The folder of ``path`` must exist and be writable, and ``path`` not be a folder."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"{option} {str(path)!r} is a folder, not a file")
    if not parent.is_dir():
        raise OutputError(f"{option} {str(path)!r} cannot be written: the folder "
                          f"{str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"{option} {str(path)!r} cannot be written: permission denied")


def _split_assignments(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidParameter(item, item, "written as key=value", "malformed argument")
        if not value:
            raise InvalidParameter(key, value, "written as key=value with a value",
                                   "empty value")
        if key in out:
            raise InvalidParameter(key, value, "given once", "repeated parameter")
        out[key] = value
    return out


# ----------------------------------------------------------------------------- list

def _cmd_list(args: argparse.Namespace) -> int:
    models = registry.models()
    papers = registry.papers()
    if args.json:
        print(json.dumps({
            "models": [{"name": m.name, "summary": m.summary, "paper": m.paper,
                        "parameters": [str(p) for p in m.parameters]} for m in models.values()],
            "papers": [{"key": p.key, "title": p.title, "citation": p.citation,
                        "models": list(p.models)} for p in papers.values()],
        }, indent=2))
        return EXIT_OK
    print("Models (symq solve MODEL key=value ...):")
    for m in models.values():
        print(f"  {m.name:<16} {m.summary}")
        for p in m.parameters:
            print(f"  {'':<16}   {p}")
    print("\nPapers (symq check PAPER, symq derive PAPER):")
    for p in papers.values():
        print(f"  {p.key:<16} {p.title} — {p.citation}")
    return EXIT_OK


# ----------------------------------------------------------------------------- check

def _run_claims(keys: Sequence[str], progress: bool) -> tuple[list[Verdict], bool]:
    from tqdm import tqdm

    specs = [registry.get_paper(k) for k in keys] if keys else list(registry.papers().values())
    claims = [claim for spec in specs for claim in spec.build_claims()]
    verdicts: list[Verdict] = []
    crashed = False
    bar = tqdm(claims, desc="symq check", unit="claim", file=sys.stderr,
               disable=not (progress and sys.stderr.isatty()))
    for claim in bar:
        bar.set_postfix_str(f"{claim.paper}: {claim.name}"[:60])
        start = time.perf_counter()
        try:
            verdicts.append(claim.check())
        except Exception as exc:  # a bug in symq: report it, keep going, exit non-zero
            traceback.print_exc(file=sys.stderr)
            verdicts.append(internal_error_verdict(claim, exc, time.perf_counter() - start))
            crashed = True
    return verdicts, crashed


def _cmd_check(args: argparse.Namespace) -> int:
    for key in args.papers:  # unknown names fail before any claim runs
        registry.get_paper(key)
    if args.report:
        _check_writable_directory("--report", Path(args.report))
    verdicts, crashed = _run_claims(args.papers, progress=not args.json and not args.quiet)
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts], indent=2))
    else:
        print(verdict_table(verdicts))
    if args.report:
        keys = list(dict.fromkeys(v.paper for v in verdicts))
        specs = {k: registry.get_paper(k) for k in keys}
        derivations = {k: s.build_derivation() for k, s in specs.items()
                       if s.derivation is not None}
        figures: dict[str, list[Path]] = {}
        directory = Path(args.report)
        try:
            import matplotlib  # noqa: F401
            have_plots = True
        except ImportError:
            have_plots = False
        try:
            for key, spec in specs.items():
                if have_plots and spec.figures is not None:
                    figures[key] = [Path(p) for p in spec.figures(directory)]
            path = write_report(directory, verdicts, derivations, figures,
                                {k: s.title for k, s in specs.items()})
        except OSError as exc:
            raise OutputError(f"--report {str(directory)!r} cannot be written: "
                              f"{exc.strerror or exc}") from None
        print(f"report written to {path}", file=sys.stderr)
    return EXIT_INTERNAL if crashed else EXIT_OK


# ----------------------------------------------------------------------------- derive

def _cmd_derive(args: argparse.Namespace) -> int:
    key = args.paper
    if args.output:
        _check_writable_file("-o", Path(args.output))
    if key not in registry.papers():
        models = registry.models()
        if key in models and models[key].paper:
            key = models[key].paper  # a model's derivation is its paper's
    text = registry.get_paper(key).build_derivation().to_markdown()
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            raise OutputError(f"-o {args.output!r} cannot be written: {exc.strerror or exc}"
                              ) from None
    else:
        sys.stdout.write(text)
    return EXIT_OK


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


def _cmd_solve(args: argparse.Namespace) -> int:
    model = registry.get_model(args.model)
    params = model.parse(_split_assignments(args.assignments))
    result = model.run(params, rng=args.seed)
    if args.json:
        out = result.to_dict()
        print(json.dumps({"model": out["model"], "params": out["params"],
                          "results": out["results"], "method": out["method"],
                          "exactness": out["exactness"], "timings": out["timings"]}))
    else:
        print(f"{model.name}: {model.summary}")
        _print_values({"params": to_jsonable(result.params)})
        _print_values({"results": result.values})
        print(f"method: {result.method} ({result.exactness})")
    return EXIT_OK


# ----------------------------------------------------------------------------- sweep

def _solve_point(model_name: str, point: dict[str, Any], rng: np.random.Generator
                 ) -> dict[str, float]:
    """One sweep task: solve a registered model at a point (module level so it pickles)."""
    model = registry.get_model(model_name)
    return model.summary_values(model.run(point, rng=rng))


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .core.sweep import check_scheduler_address, grid, parse_axis, sweep

    if args.scheduler is not None:
        check_scheduler_address(args.scheduler)
    if args.processes is not None and args.processes < 1:
        raise InvalidParameter("--processes", args.processes, "an integer >= 1")
    if not 0 < args.connect_timeout <= 3600:
        raise InvalidParameter("--connect-timeout", args.connect_timeout,
                               "a number of seconds in (0, 3600]")
    model = registry.get_model(args.model)
    texts = _split_assignments(args.assignments)
    axes: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    for name, text in texts.items():
        parameter = model.parameter(name, text)
        if ":" in text:
            try:
                values = parse_axis(text)
            except InvalidParameter as exc:
                raise InvalidParameter(name, text, "a range a:b:n (n points from a to b)",
                                       str(exc)) from None
            axes[name] = [parameter.validate(float(v)) for v in values]
        else:
            fixed[name] = parameter.parse(text)
    if not axes:
        raise InvalidParameter("axes", " ".join(args.assignments),
                               "at least one key=a:b:n range", "nothing to sweep")
    points = [{**fixed, **p} for p in grid(**axes)]
    for point in points:  # validate every point up front: fail before starting workers
        validate_parameters(model.parameters, point)
    task = functools.partial(_solve_point, model.name)
    outcome = sweep(task, points, seed=args.seed, scheduler=args.scheduler,
                    processes=args.processes, connect_timeout=args.connect_timeout,
                    progress=not args.json and sys.stderr.isatty(), desc=f"sweep {model.name}")
    if args.json:
        print(json.dumps({"model": model.name, "axes": to_jsonable(axes),
                          "fixed": to_jsonable(fixed), "seconds": outcome.seconds,
                          "backend": outcome.backend,
                          "points": [{"params": to_jsonable(pt), "results": to_jsonable(res)}
                                     for pt, res in zip(outcome.points, outcome.results)]}))
        return EXIT_OK
    names = list(axes)
    outputs = list(outcome.results[0]) if outcome.results else []
    header = names + outputs
    print("  ".join(f"{h:>12}" for h in header))
    for pt, res in zip(outcome.points, outcome.results):
        cells = [f"{float(pt[n]):>12.6g}" for n in names] + [f"{float(res[o]):>12.6g}" for o in outputs]
        print("  ".join(cells))
    print(f"{len(points)} points in {outcome.seconds:.2f} s ({outcome.backend})", file=sys.stderr)
    return EXIT_OK


# ----------------------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``symq`` command."""
    parser = _Parser(prog="symq", description="Symbolic-numeric modelling of stochastic "
                     "performance models: declare, derive, compile, solve, verify.")
    parser.add_argument("--version", action="version", version=f"symq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("list", help="list models and papers")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("check", help="check the claims of papers (all papers by default)")
    p.add_argument("papers", nargs="*", metavar="PAPER", help="paper keys (see symq list)")
    p.add_argument("--json", action="store_true", help="print a JSON list of verdicts")
    p.add_argument("--report", metavar="DIR", help="write a Markdown report into DIR")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("derive", help="print a paper's (or a model's) derivation (Markdown + LaTeX)")
    p.add_argument("paper", metavar="PAPER")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_cmd_derive)

    p = sub.add_parser("solve", help="solve one model: symq solve MODEL key=value ...")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("assignments", nargs="*", metavar="key=value")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--seed", type=int, default=None, help="seed of simulation-based solvers")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("sweep", help="parameter sweep: symq sweep MODEL key=a:b:n ...")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("assignments", nargs="+", metavar="key=a:b:n|key=value")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address (tcp://...)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="give up on an unreachable scheduler after SECONDS (default 10); exit 3")
    p.add_argument("--processes", type=int, default=None, help="local worker processes")
    p.add_argument("--seed", type=int, default=None, help="root seed (SeedSequence)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_sweep)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SymqError as exc:
        print(f"symq: error: {_one_line(exc)}", file=sys.stderr)
        return int(getattr(exc, "exit_status", EXIT_USAGE))
    except KeyboardInterrupt:
        print("symq: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except MemoryError:
        print("symq: error: out of memory; lower the size parameters (or set SYMQ_MEMORY_LIMIT "
              "to the bytes symq may use)", file=sys.stderr)
        return EXIT_RUNTIME
    except Exception as exc:  # a bug in symq: one line, the traceback on request
        if os.environ.get("SYMQ_DEBUG"):
            traceback.print_exc(file=sys.stderr)
        print(f"symq: internal error: {type(exc).__name__}: {_one_line(exc)} (a bug in symq; "
              "SYMQ_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:1990] + " ..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
