"""The ``symq`` command line.

::

    symq list [FILE ...]            models, papers (and where they come from), model kinds
    symq check [PAPER|FILE ...]     check every claim of the papers or claims files (a folder:
                                    its own *.toml files; --allow-python: also its *.py
                                    claims files); --json; --report DIR
    symq derive PAPER|FILE          print the derivation (Markdown + LaTeX)
    symq new-claims NAME            write a starting claims file NAME.toml (--python: NAME.py)
    symq solve MODEL key=value ...  solve one model; --json for machine-readable output
    symq sweep MODEL key=a:b:n ...  parameter sweep; --scheduler ADDRESS runs it on Dask

Models and papers come from the registry in :mod:`symq.core.registry`; adding a domain
needs no edit here.

Exit statuses: 0 success (``check`` exits 0 whatever the verdicts); 1 an internal error (a bug in
symq: a check that crashed, an unexpected exception); 2 bad input (also a claims file with a
claim that cannot be built: its error is printed, the file's other claims still run) (one line naming the parameter
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
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import __version__
from .core import registry
from .core.claims import Status, Verdict, internal_error_verdict
from .core.errors import (EXIT_RUNTIME, EXIT_USAGE, MISSING, InvalidParameter, OutputError,
                          SymqError)
from .core.parameters import validate_parameters
from .core.report import verdict_table, write_report
from .core.report_html import write_html_report
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
    kinds = registry.model_kinds()
    python_files: list[Path] = []  # listed, never run: only symq check runs a Python file
    if args.files:  # claims files: their papers and declared models, with source "file PATH"
        from .core.claimsfile import claims_files, load_claims_file, python_claims_files

        for target in args.files:
            path = Path(target)
            files = claims_files(path) if path.is_dir() else [path]
            python_files += python_claims_files(path) if path.is_dir() else []
            for file in files:
                if file.suffix == ".py" and file.is_file():
                    python_files.append(file)
                    continue
                loaded = load_claims_file(file)
                papers = dict(sorted({**papers, loaded.paper.key: loaded.paper}.items()))
                models = dict(sorted({**models, **loaded.models}.items()))
    if args.json:
        print(json.dumps({
            "models": [{"name": m.name, "summary": m.summary, "paper": m.paper,
                        "source": m.source, "outputs": list(m.outputs),
                        "parameters": [str(p) for p in m.parameters]} for m in models.values()],
            "papers": [{"key": p.key, "title": p.title, "citation": p.citation,
                        "source": p.source, "models": list(p.models)} for p in papers.values()],
            "model_kinds": [{"kind": k.kind, "summary": k.summary, "keys": dict(k.keys),
                             "outputs": list(k.outputs)} for k in kinds.values()],
            "plugin_failures": [str(f) for f in registry.plugin_failures()],
            "python_claims_files": [str(f) for f in python_files],
        }, indent=2))
        return EXIT_OK
    print("Models (symq solve MODEL key=value ...; in claims files MODEL:KEY):")
    for m in models.values():
        origin = "" if m.source == registry.BUILT_IN else f"  [{m.source}]"
        print(f"  {m.name:<16} {m.summary}{origin}")
        for p in m.parameters:
            print(f"  {'':<16}   {p}")
        if m.outputs:
            print(f"  {'':<16}   results: {', '.join(m.outputs)}")
    print("\nPapers (symq check PAPER, symq derive PAPER):")
    for p in papers.values():
        print(f"  {p.key:<16} {p.title} — {p.citation}  [{p.source}]")
    if kinds:
        print("\nModel kinds a claims file may declare ([models.NAME] kind = ...):")
        for k in kinds.values():
            print(f"  {k.kind:<16} {k.summary}")
            if k.keys:
                print(f"  {'':<16}   keys: {', '.join(k.keys)}")
    if python_files:
        print("\nPython claims files (not run by symq list; symq check FILE runs one, "
              "symq check --allow-python FOLDER those of a folder):")
        for file in python_files:
            print(f"  {file}")
    print("\nClaims files: symq check FILE.toml|FILE.py|FOLDER (its *.toml files; "
          "--allow-python: also its *.py); symq new-claims NAME")
    return EXIT_OK


# ----------------------------------------------------------------------------- check

def _papers_to_check(targets: Sequence[str], allow_python: bool = False
                     ) -> tuple[list[registry.PaperSpec], list[str]]:
    """The papers named on the command line (keys, claims files, folders of them), and the
    error lines of claims that could not be built.  Unknown keys and unusable files fail
    before any claim runs.

    A bare name that is a paper key means the paper, even where a file or folder of that name
    exists (a note on stderr says so); ``./NAME``, ``NAME/``, an absolute path or a name ending
    in ``.toml`` or ``.py`` means the path.  A folder contributes its own ``*.toml`` files (one
    level deep) and, with ``allow_python``, its ``*.py`` files that assign ``CLAIMS``; a Python
    file named on the command line runs.
    """
    from .core.claimsfile import (ClaimsFileError, claims_files, is_explicit_path,
                                  load_claims_file, python_claims_files, shadowed_path_note)

    if not targets:
        return list(registry.papers().values()), []
    specs: list[registry.PaperSpec] = []
    errors: list[str] = []
    for target in targets:
        explicit = is_explicit_path(target)
        if not explicit and (target in registry.papers() or not Path(target).exists()):
            note = shadowed_path_note(target)
            if note:
                print(f"symq: note: {note}", file=sys.stderr)
            specs.append(registry.get_paper(target))  # an unknown key names the paper keys
            continue
        path = Path(target)
        if not path.exists():
            raise ClaimsFileError(target, None, "", "no such claims file or folder (or paper key: "
                                  + ", ".join(registry.papers()) + ")")
        files = claims_files(path, allow_python=allow_python)
        if not files:
            python = [] if allow_python else python_claims_files(path)
            hint = (f"; its Python claims files ({', '.join(p.name for p in python)}) run "
                    "only with --allow-python" if python else "")
            raise ClaimsFileError(target, None, "", "the folder holds no claims file (*.toml"
                                  + (", *.py" if allow_python else "")
                                  + ", in the folder itself)" + hint)
        for file in files:
            loaded = load_claims_file(file)
            specs.append(loaded.paper)
            errors += [str(e) for e in loaded.errors]
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec.key] = counts.get(spec.key, 0) + 1
    repeated = sorted(k for k, n in counts.items() if n > 1)
    if repeated:
        raise ClaimsFileError(repeated[0], None, "", "two papers (or claims files) have the same "
                              "key; give each file its own [paper] key")
    return specs, errors


def _run_claims(specs: Sequence[registry.PaperSpec], progress: bool, errors: list[str] | None = None
                ) -> tuple[list[Verdict], bool]:
    """Check every claim of ``specs``.  A claim of a claims file that turns out to be bad input
    while it runs (a model refuses a point of its region) adds its error line to ``errors``
    instead of a verdict."""
    from tqdm import tqdm

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
        except SymqError as exc:
            if errors is None:
                raise
            where = getattr(claim, "location", "") or claim.paper
            errors.append(f"{where}: claim {claim.name!r}: {exc}")
        except Exception as exc:  # a bug in symq: report it, keep going, exit non-zero
            traceback.print_exc(file=sys.stderr)
            verdicts.append(internal_error_verdict(claim, exc, time.perf_counter() - start))
            crashed = True
    return verdicts, crashed


def _cmd_check(args: argparse.Namespace) -> int:
    if args.report:
        _check_writable_directory("--report", Path(args.report))
    specs, errors = _papers_to_check(args.papers, allow_python=args.allow_python)
    for line in errors:  # claims that could not be built: said before the others run
        print(f"symq: error: {line}", file=sys.stderr)
    run_errors: list[str] = []
    verdicts, crashed = _run_claims(specs, progress=not args.json and not args.quiet,
                                    errors=run_errors)
    for line in run_errors:
        print(f"symq: error: {line}", file=sys.stderr)
    errors += run_errors
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts], indent=2))
    else:
        print(verdict_table(verdicts))
        if args.explain:
            for v in verdicts:
                if args.explain == "all" or v.status is not Status.HOLDS:
                    print("\n" + v.explanation())
    if args.report:
        by_key = {s.key: s for s in specs}
        keys = list(dict.fromkeys(v.paper for v in verdicts))
        chosen = {k: by_key[k] for k in keys if k in by_key}
        derivations = {k: s.build_derivation() for k, s in chosen.items()
                       if s.derivation is not None}
        figures: dict[str, list[Path]] = {}
        directory = Path(args.report)
        try:
            import matplotlib  # noqa: F401
            have_plots = True
        except ImportError:
            have_plots = False
        try:
            for key, spec in chosen.items():
                if have_plots and spec.figures is not None:
                    figures[key] = [Path(p) for p in spec.figures(directory)]
            titles = {k: s.title for k, s in chosen.items()}
            path = write_report(directory, verdicts, derivations, figures, titles)
            page = write_html_report(directory, verdicts, derivations, figures, titles,
                                     {k: s.citation for k, s in chosen.items()})
        except OSError as exc:
            raise OutputError(f"--report {str(directory)!r} cannot be written: "
                              f"{exc.strerror or exc}") from None
        print(f"report written to {page} and {path}", file=sys.stderr)
    if crashed:
        return EXIT_INTERNAL
    return _count_bad_claims(errors)


def _count_bad_claims(errors: Sequence[str]) -> int:
    """The closing line when claims were bad input (their lines are printed already), and the
    exit status: 2 if any, else 0."""
    if not errors:
        return EXIT_OK
    print(f"symq: error: {len(errors)} claim(s) could not be built (see above)", file=sys.stderr)
    return EXIT_USAGE


# ----------------------------------------------------------------------------- derive

def _cmd_derive(args: argparse.Namespace) -> int:
    key = args.paper
    if args.output:
        _check_writable_file("-o", Path(args.output))
    from .core.claimsfile import (ClaimsFileError, is_explicit_path, load_claims_file,
                                  shadowed_path_note)

    errors: list[str] = []
    models = registry.models()
    built_in = key in registry.papers() or (key in models and bool(models[key].paper))
    if is_explicit_path(key) or (not built_in and Path(key).exists()):  # a claims file
        if Path(key).is_dir():
            raise ClaimsFileError(key, None, "", "is a folder; symq derive takes one claims "
                                  "file (symq check takes folders)")
        loaded = load_claims_file(key)
        errors = [str(e) for e in loaded.errors]
        text = loaded.paper.build_derivation().to_markdown()
    else:  # a built-in paper or model wins over a local path of the same name
        note = shadowed_path_note(key, "paper" if key in registry.papers() else "model")
        if note:
            print(f"symq: note: {note}", file=sys.stderr)
        if key not in registry.papers() and built_in:
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
    for line in errors:  # the claims the derivation leaves out, and why
        print(f"symq: error: {line}", file=sys.stderr)
    return _count_bad_claims(errors)


# ----------------------------------------------------------------------------- new-claims

def _cmd_new_claims(args: argparse.Namespace) -> int:
    from .core.claimsfile import new_claims_text

    name = args.name
    stem = Path(name).stem if Path(name).suffix in (".toml", ".py") else Path(name).name
    if not stem or not stem.replace("-", "_").isidentifier():
        raise InvalidParameter("NAME", name, "a name of letters, digits, - and _ (the file "
                               "NAME.toml is written)")
    python = args.python or Path(name).suffix == ".py"
    path = Path(name) if Path(name).suffix in (".toml", ".py") else \
        Path(name).with_name(stem + (".py" if python else ".toml"))
    if path.exists():
        raise OutputError(f"{str(path)!r} exists; symq new-claims does not overwrite a file")
    _check_writable_file("NAME", path)
    try:
        path.write_text(new_claims_text(stem.replace("_", "-"), str(path), python=python))
    except OSError as exc:
        raise OutputError(f"{str(path)!r} cannot be written: {exc.strerror or exc}") from None
    print(f"wrote {path}; edit it, then run: symq check {path}")
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
    example = " ".join(f"{p.name}={_typed(p.typical)}" for p in model.parameters
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
    typed = _split_assignments(args.assignments)
    try:
        params = model.parse(typed)
        result = model.run(params, rng=_seed(args.seed), progress=_show_progress(args))
    except InvalidParameter as exc:
        _show_as_typed(exc, typed)
        raise
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


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .core.errors import ResourceLimit
    from .core.resources import require_memory
    from .core.sweep import (SweepIncomplete, axis_size, check_scheduler_address, grid,
                             parse_axis, sweep)

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
    texts = _split_assignments(args.assignments)
    counts: dict[str, int] = {}  # the point budget, counted from the text before any array
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
        else:
            fixed[name] = parameter.parse(text)
    if not axes:
        raise InvalidParameter("axes", " ".join(args.assignments),
                               "at least one key=a:b:n range", "nothing to sweep")
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
        print("  ".join(f"{h:>12}" for h in names + outputs))
        for pt, res in zip(outcome.points, outcome.results):
            cells = [f"{float(pt[n]):>12.6g}" for n in names] + \
                [f"{float(res[o]):>12.6g}" for o in outputs]
            print("  ".join(cells))
        if incomplete is None:
            print(f"{len(points)} points in {outcome.seconds:.2f} s ({outcome.backend})",
                  file=sys.stderr)
    if incomplete is not None:
        print(f"symq: error: {_one_line(incomplete)}", file=sys.stderr)
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
    value = to_jsonable(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return repr(value) if isinstance(value, float) else str(value)


# ----------------------------------------------------------------------------- main

def _model_command(sub: Any, name: str, text: str, metavar: str) -> argparse.ArgumentParser:
    """A subcommand ``symq NAME MODEL key=value ...`` whose ``--help`` with a MODEL shows that
    model's parameters (:func:`_help_requested`)."""
    p = sub.add_parser(name, help=text, add_help=False)
    p.add_argument("-h", "--help", action="store_true",
                   help="this help; with MODEL, the model's parameters")
    p.add_argument("model", metavar="MODEL", nargs="?")
    p.add_argument("assignments", nargs="*", metavar=metavar)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``symq`` command."""
    parser = _Parser(prog="symq", description="Symbolic-numeric modelling of stochastic "
                     "performance models: declare, derive, compile, solve, verify.")
    parser.add_argument("--version", action="version", version=f"symq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("list", help="list models, papers and the model kinds of claims files")
    p.add_argument("files", nargs="*", metavar="FILE", help="also list the papers and models of "
                   "these claims files or folders (a folder's own *.toml files; Python claims "
                   "files are listed by name, never run)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("check", help="check the claims of papers or claims files (all built-in "
                       "and plugin papers by default)")
    p.add_argument("papers", nargs="*", metavar="PAPER|FILE",
                   help="paper keys (see symq list), claims files (*.toml, *.py) or folders (their "
                   "own *.toml files); a bare name that is a paper key means the paper: write "
                   "./NAME for a local file or folder of that name")
    p.add_argument("--allow-python", action="store_true",
                   help="in a folder, also run the *.py files that assign CLAIMS (a Python "
                   "claims file is a program: only for files you trust)")
    p.add_argument("--json", action="store_true", help="print a JSON list of verdicts")
    p.add_argument("--explain", nargs="?", const="failed", choices=("failed", "all"),
                   help="after the table, explain each verdict that is not 'holds' (or all): "
                   "what was compared, the worst point with both values, the counterexample, "
                   "where it holds")
    p.add_argument("--report", metavar="DIR",
                   help="write an HTML report (DIR/index.html) and its Markdown twin "
                        "(DIR/report.md) into DIR")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("derive", help="print a paper's, a model's or a claims file's derivation "
                       "(Markdown + LaTeX)")
    p.add_argument("paper", metavar="PAPER|FILE")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_cmd_derive)

    p = sub.add_parser("new-claims", help="write a starting claims file NAME.toml")
    p.add_argument("name", metavar="NAME", help="file name (NAME.toml, or NAME.py with --python)")
    p.add_argument("--python", action="store_true", help="a Python claims file instead of TOML")
    p.set_defaults(func=_cmd_new_claims)

    p = _model_command(sub, "solve", "solve one model: symq solve MODEL key=value ...",
                       "key=value")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--seed", default=None, metavar="N",
                   help="seed of simulation-based solvers (an integer >= 0)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar (shown on a terminal for value iteration and "
                        "simulations; never with --json or when stderr is not a terminal)")
    p.set_defaults(func=_cmd_solve, parser=p)

    p = _model_command(sub, "sweep", "parameter sweep: symq sweep MODEL key=a:b:n ...",
                       "key=a:b:n|key=value")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address, tcp://host:port or host:port")
    p.add_argument("--connect-timeout", type=float, default=7.0, metavar="SECONDS",
                   help="one deadline for reaching the scheduler and its first worker, and "
                        "the longest wait for a lost scheduler or workers (default 7); exit 3")
    p.add_argument("--processes", type=int, default=None, help="local worker processes")
    from .core.sweep import MAX_POINTS

    p.add_argument("--max-points", type=int, default=MAX_POINTS, metavar="N",
                   help="most points the grid may have (default 10000); counted before "
                        "anything is built, more is refused with exit 2")
    p.add_argument("--seed", default=None, metavar="N",
                   help="root seed (SeedSequence; an integer >= 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object (--format json)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table (default), one JSON object, or tidy CSV (one row per point)")
    p.set_defaults(func=_cmd_sweep, parser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _load_plugins()
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


def _load_plugins() -> None:
    """Load the plugins once; a broken one is one warning line, and every command goes on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", registry.PluginWarning)
        registry.load_plugins()
    for warning in caught:
        if issubclass(warning.category, registry.PluginWarning):
            print(f"symq: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:1990] + " ..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
