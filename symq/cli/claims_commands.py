"""``symq list``, ``check``, ``derive`` and ``new-claims``: papers and claims files."""

from __future__ import annotations

import argparse
import io
import json
import pickle
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core import registry
from ..core.claims import Status, Verdict, internal_error_verdict
from ..core.errors import EXIT_USAGE, InvalidParameter, OutputError, SymqError
from ..core.report import unexpected_line, verdict_table, write_report
from ..core.report_html import write_html_report
from ..core.threads import limit_blas_threads
from .common import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_UNEXPECTED,
    check_writable_directory,
    check_writable_file,
)

__all__: list[str] = []  # the commands are reached through symq.cli.main


# ----------------------------------------------------------------------------- list

def _cmd_list(args: argparse.Namespace) -> int:
    models = registry.models()
    papers = registry.papers()
    kinds = registry.model_kinds()
    python_files: list[Path] = []  # listed, never run: only symq check runs a Python file
    if args.files:  # claims files: their papers and declared models, with source "file PATH"
        from ..core.claimsfile import (
            claims_files,
            load_claims_file,
            python_claims_files,
        )

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
                        "parameters": [p.as_data() for p in m.parameters]}
                       for m in models.values()],
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
    for paper in papers.values():
        print(f"  {paper.key:<16} {paper.title} — {paper.citation}  [{paper.source}]")
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
    from ..core.claimsfile import (
        ClaimsFileError,
        claims_files,
        is_explicit_path,
        load_claims_file,
        python_claims_files,
        shadowed_path_note,
    )

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


#: The claims a forked ``symq check -j N`` worker checks, set before its pool starts (a fork
#: inherits them: nothing is pickled but an index and a verdict).
_CLAIMS: list[Any] = []


class _OutcomePickler(pickle.Pickler):
    """A verdict holds numbers of a thread's private mpmath context, whose classes do not
    pickle: they travel as the global context's numbers, bit for bit."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj).__module__.startswith("mpmath"):
            for slot, rebuild in (("_mpf_", _global_mpf), ("_mpc_", _global_mpc)):
                if hasattr(obj, slot):
                    return rebuild, (getattr(obj, slot),)
        return NotImplemented


def _global_mpf(raw: Any) -> Any:
    import mpmath

    number = object.__new__(mpmath.mpf)
    number._mpf_ = raw
    return number


def _global_mpc(raw: Any) -> Any:
    import mpmath

    number = object.__new__(mpmath.mpc)
    number._mpc_ = raw
    return number


def _check_in_worker(index: int, claims: Sequence[Any] | None = None) -> bytes:
    """:func:`_check_one` in a worker process, its outcome pickled by :class:`_OutcomePickler`
    (``claims``: those to index, default :data:`_CLAIMS`)."""
    buffer = io.BytesIO()
    _OutcomePickler(buffer).dump(_check_one(index, claims))
    return buffer.getvalue()


#: Claims a Dask worker has built, by the command line that names them (built once per worker).
_BUILT: dict[tuple[tuple[str, ...], bool], list[Any]] = {}


def _check_on_dask(targets: tuple[str, ...], allow_python: bool, index: int) -> bytes:
    """Check claim ``index`` of the papers ``targets`` on a Dask worker: the worker builds the
    claims itself from the same command line (paper keys and absolute paths; the same claims
    in the same order, each with its own seed) and keeps them for its next tasks."""
    key = (targets, allow_python)
    if key not in _BUILT:
        specs, _errors = _papers_to_check(list(targets), allow_python=allow_python)
        _BUILT[key] = [claim for spec in specs for claim in spec.build_claims()]
    return _check_in_worker(index, _BUILT[key])


def _dask_task(func: Any, point: dict[str, Any], _seed: Any) -> bytes:
    return func(point["targets"], point["allow_python"], point["index"])


def _absolute_targets(targets: Sequence[str]) -> tuple[str, ...]:
    """Paper keys as typed, paths made absolute (a Dask worker runs in another directory)."""
    from ..core.claimsfile import is_explicit_path

    out = []
    for target in targets:
        path = Path(target)
        explicit = is_explicit_path(target)
        keep = not explicit and (target in registry.papers() or not path.exists())
        out.append(target if keep else str(path.resolve()))
    return tuple(out)


def _check_one(index: int, claims: Sequence[Any] | None = None) -> tuple[str, Any]:
    """Check claim ``index`` of ``claims`` (default :data:`_CLAIMS`): ``("verdict", Verdict)``,
    ``("error", line)``
    for bad input met while it runs, or ``("crash", (traceback, Verdict))`` for a bug."""
    claim = (_CLAIMS if claims is None else claims)[index]
    start = time.perf_counter()
    try:
        with limit_blas_threads():  # small matrices: one BLAS thread (SYMQ_BLAS_THREADS)
            return "verdict", claim.check()
    except SymqError as exc:
        where = getattr(claim, "location", "") or claim.paper
        return "error", f"{where}: claim {claim.name!r}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a bug in symq: report it, go on, exit non-zero
        return "crash", (traceback.format_exc(),
                         internal_error_verdict(claim, exc, time.perf_counter() - start))


def _run_claims(specs: Sequence[registry.PaperSpec], progress: bool,
                errors: list[str] | None = None, jobs: int = 1,
                scheduler: tuple[Any, tuple[str, ...], bool, float] | None = None
                ) -> tuple[list[Verdict], bool]:
    """Check every claim of ``specs``, on ``jobs`` forked processes when more than one, or on
    a Dask cluster (``scheduler``: the address or client, the command line's targets, whether
    Python claims files may run, the connect timeout; each worker builds the claims from the
    targets) -- the same verdicts in the same order: each claim has its own seed.  A claim of
    a claims file that turns out to be bad input while it runs (a model refuses a point of its
    region) adds its error line to ``errors`` instead of a verdict.  Progress: a bar on a
    terminal, else a line on stderr as each paper's claims are done."""
    from tqdm import tqdm

    claims = [claim for spec in specs for claim in spec.build_claims()]
    _CLAIMS[:] = claims
    left: dict[str, int] = {}                   # paper -> claims not yet checked
    for claim in claims:
        left[claim.paper] = left.get(claim.paper, 0) + 1
    terminal = progress and sys.stderr.isatty()
    bar = tqdm(total=len(claims), desc="symq check", unit="claim", file=sys.stderr,
               disable=not terminal or scheduler is not None)  # Dask: run_dask's own bar
    outcomes: dict[int, tuple[str, Any]] = {}
    start = time.perf_counter()

    def done(index: int, outcome: tuple[str, Any]) -> None:
        outcomes[index] = outcome
        paper = claims[index].paper
        bar.update(1)
        bar.set_postfix_str(f"{paper}: {claims[index].name}"[:60])
        left[paper] -= 1
        if progress and not terminal and left[paper] == 0:
            print(f"symq check: {paper} done ({len(outcomes)}/{len(claims)} claims, "
                  f"{time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)

    from ..core.sweep import fork_context

    context = fork_context() if jobs > 1 and len(claims) > 1 else None
    try:
        if scheduler is not None and claims:
            from ..core.sweep_dask import run_dask

            address, targets, allow_python, timeout = scheduler
            points = [{"targets": targets, "allow_python": allow_python, "index": i}
                      for i in range(len(claims))]
            raw = run_dask(_check_on_dask, points, [None] * len(points), address, terminal,
                           "symq check", timeout, _dask_task)
            for index, outcome in enumerate(raw):
                done(index, pickle.loads(outcome))
        elif context is None:
            for index in range(len(claims)):
                done(index, _check_one(index))
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(jobs, len(claims)),
                                     mp_context=context) as pool:
                futures = {pool.submit(_check_in_worker, i): i for i in range(len(claims))}
                for future in as_completed(futures):
                    done(futures[future], pickle.loads(future.result()))
    finally:
        bar.close()
        _CLAIMS.clear()
    verdicts: list[Verdict] = []
    crashed = False
    for index in range(len(claims)):
        kind, value = outcomes[index]
        if kind == "verdict":
            verdicts.append(value)
        elif kind == "error":
            if errors is None:
                raise SymqError(value)
            errors.append(value)
        else:
            print(value[0], file=sys.stderr, end="")
            verdicts.append(value[1])
            crashed = True
    return verdicts, crashed


def _cmd_check(args: argparse.Namespace) -> int:
    """``symq check``.  Exit status: 1 when a check crashed (a bug in symq), else 2 when a claim
    is bad input (its error line is printed, the other claims still run), else
    :data:`~symq.cli.common.EXIT_UNEXPECTED` (4) when a verdict contradicts its claim's
    ``expected`` verdict (flagged in the table, in ``--json`` as ``"unexpected": true`` and in
    the report), else 0, also when verdicts are inconclusive (they are counted in the table)."""
    if args.report:
        check_writable_directory("--report", Path(args.report))
    specs, errors = _papers_to_check(args.papers, allow_python=args.allow_python)
    for line in errors:  # claims that could not be built: said before the others run
        print(f"symq: error: {line}", file=sys.stderr)
    run_errors: list[str] = []
    if args.jobs < 1:
        raise InvalidParameter("-j", args.jobs, "an integer >= 1 (processes)")
    scheduler = None
    if args.scheduler is not None:
        from ..core.sweep_dask import check_scheduler_address

        if args.jobs != 1:
            raise InvalidParameter("-j", args.jobs, "1 with --scheduler",
                                   "the Dask cluster's workers are the processes")
        if not args.connect_timeout > 0:
            raise InvalidParameter("--connect-timeout", args.connect_timeout, "a positive number "
                                   "of seconds")
        scheduler = (check_scheduler_address(args.scheduler, "--scheduler", allow_inproc=False),
                     _absolute_targets(args.papers), bool(args.allow_python),
                     float(args.connect_timeout))
    verdicts, crashed = _run_claims(specs, progress=not args.json and not args.quiet,
                                    errors=run_errors, jobs=args.jobs, scheduler=scheduler)
    for line in run_errors:
        print(f"symq: error: {line}", file=sys.stderr)
    errors += run_errors
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts], indent=2))
    else:
        print(verdict_table(verdicts))
        if args.explain:
            for v in verdicts:
                if args.explain == "all" or v.status is not Status.HOLDS or v.unexpected:
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
    status = _count_bad_claims(errors)
    flagged = unexpected_line(verdicts)
    if flagged:
        print(f"symq: error: {flagged}", file=sys.stderr)
    return status if status != EXIT_OK or not flagged else EXIT_UNEXPECTED


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
        check_writable_file("-o", Path(args.output))
    from ..core.claimsfile import (
        ClaimsFileError,
        is_explicit_path,
        load_claims_file,
        shadowed_path_note,
    )

    errors: list[str] = []
    models = registry.models()
    explicit = is_explicit_path(key)  # a path as typed: the papers are not even imported
    built_in = not explicit and (key in registry.papers()
                                 or (key in models and bool(models[key].paper)))
    if explicit or (not built_in and Path(key).exists()):  # a claims file
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
    from ..core.claimsfile import new_claims_text

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
    check_writable_file("NAME", path)
    try:
        path.write_text(new_claims_text(stem.replace("_", "-"), str(path), python=python))
    except OSError as exc:
        raise OutputError(f"{str(path)!r} cannot be written: {exc.strerror or exc}") from None
    print(f"wrote {path}; edit it, then run: symq check {path}")
    return EXIT_OK
