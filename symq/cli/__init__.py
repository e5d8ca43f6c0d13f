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
needs no edit here.  ``symq --version`` and ``symq --help`` import nothing heavy: the commands
(:mod:`~symq.cli.claims_commands`, :mod:`~symq.cli.model_commands`) and the registry are
imported once a command runs.

Exit statuses: 0 success (for ``check``: every verdict as its claim's ``expected`` says, or
inconclusive); 1 an internal error (a bug in symq: a check that crashed, an unexpected
exception); 2 bad input (one line naming the parameter as typed, the value and the allowed
domain; also a claims file with a claim that cannot be built: its error is printed, the file's
other claims still run); 4 (``check`` only) a verdict that contradicts its claim's ``expected``
(a claim that fails without ``expected = "fails"``, or the reverse), flagged in the table; 3 a
run-time failure (a solver that did not converge or would truncate beyond the accuracy asked
for, an output path that cannot be written, a Dask scheduler that cannot be reached, memory
exhausted); 130 interrupted.  Every failure prints one
line ``symq: error: ...`` on stderr; ``SYMQ_DEBUG=1`` adds the traceback of internal errors.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from .. import __version__
from ..core.errors import EXIT_RUNTIME, EXIT_USAGE, SymqError
from .common import EXIT_INTERNAL, EXIT_OK, one_line

__all__ = ["build_parser", "main"]

#: Most points ``symq sweep`` accepts by default (:data:`symq.core.sweep.MAX_POINTS`, which a
#: test keeps equal; written here so that building the parser imports no numeric module).
DEFAULT_MAX_POINTS = 10_000


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump, no traceback)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# ----------------------------------------------------------------------------- main

def _command(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """The command ``function`` of ``symq.cli.MODULE``, imported when the command runs (so
    that ``--version`` and ``--help`` import neither the commands nor the registry)."""

    def run(args: argparse.Namespace) -> int:
        command = getattr(importlib.import_module(f"{__name__}.{module}"), function)
        return int(command(args))

    run.__name__ = run.__qualname__ = function
    return run


def _model_command(sub: Any, name: str, text: str, metavar: str) -> _Parser:
    """A subcommand ``symq NAME MODEL key=value ...`` whose ``--help`` with a MODEL shows that
    model's parameters (``_help_requested`` in :mod:`symq.cli.model_commands`)."""
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
    p.set_defaults(func=_command("claims_commands", "_cmd_list"))

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
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="check the claims on N processes (Linux; the same verdicts as one, "
                        "each claim having its own seed)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="check the claims on a Dask cluster, tcp://host:port or host:port (the "
                        "same verdicts; its workers need symq and the claims files' paths)")
    p.add_argument("--connect-timeout", type=float, default=7.0, metavar="SECONDS",
                   help="with --scheduler: one deadline for reaching the scheduler and its "
                        "first worker, and the longest wait for a lost scheduler or workers "
                        "(default 7); exit 3")
    p.set_defaults(func=_command("claims_commands", "_cmd_check"))

    p = sub.add_parser("derive", help="print a paper's, a model's or a claims file's derivation "
                       "(Markdown + LaTeX)")
    p.add_argument("paper", metavar="PAPER|FILE")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_command("claims_commands", "_cmd_derive"))

    p = sub.add_parser("new-claims", help="write a starting claims file NAME.toml")
    p.add_argument("name", metavar="NAME", help="file name (NAME.toml, or NAME.py with --python)")
    p.add_argument("--python", action="store_true", help="a Python claims file instead of TOML")
    p.set_defaults(func=_command("claims_commands", "_cmd_new_claims"))

    p = _model_command(sub, "solve", "solve one model: symq solve MODEL key=value ...",
                       "key=value")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--seed", default=None, metavar="N",
                   help="seed of simulation-based solvers (an integer >= 0)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar (shown on a terminal for value iteration and "
                        "simulations; never with --json or when stderr is not a terminal)")
    p.set_defaults(func=_command("model_commands", "_cmd_solve"), parser=p)

    p = _model_command(sub, "sweep", "parameter sweep: symq sweep MODEL key=a:b:n ...",
                       "key=a:b:n|key=value")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address, tcp://host:port or host:port")
    p.add_argument("--connect-timeout", type=float, default=7.0, metavar="SECONDS",
                   help="one deadline for reaching the scheduler and its first worker, and "
                        "the longest wait for a lost scheduler or workers (default 7); exit 3")
    p.add_argument("--processes", type=int, default=None, help="local worker processes")
    p.add_argument("--max-points", type=int, default=DEFAULT_MAX_POINTS, metavar="N",
                   help=f"most points the grid may have (default {DEFAULT_MAX_POINTS}); "
                        "counted before anything is built, more is refused with exit 2")
    p.add_argument("--seed", default=None, metavar="N",
                   help="root seed (SeedSequence; an integer >= 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object (--format json)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table (default), one JSON object, or tidy CSV (one row per point)")
    p.set_defaults(func=_command("model_commands", "_cmd_sweep"), parser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _load_plugins()
        with _renamed_as_warning_lines():
            return int(args.func(args))
    except SymqError as exc:
        print(f"symq: error: {one_line(exc)}", file=sys.stderr)
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
    except Exception as exc:  # noqa: BLE001 - a bug in symq: one line, traceback on request
        if os.environ.get("SYMQ_DEBUG"):
            traceback.print_exc(file=sys.stderr)
        print(f"symq: internal error: {type(exc).__name__}: {one_line(exc)} (a bug in symq; "
              "SYMQ_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


@contextlib.contextmanager
def _renamed_as_warning_lines() -> Iterator[None]:
    """Within the block, a :class:`~symq.core.renamed.RenamedKeywordWarning` (a parameter or key
    typed under its former name) is one line ``symq: warning: ...`` on stderr; other warnings
    are shown as Python shows them."""
    from ..core.renamed import RenamedKeywordWarning

    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
            if issubclass(category, RenamedKeywordWarning):
                print(f"symq: warning: {message}", file=sys.stderr)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def _load_plugins() -> None:
    """Load the domains and the plugins once (not symq's papers: a command that needs them
    loads them); a broken plugin is one warning line, and every command goes on."""
    from ..core import registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", registry.PluginWarning)
        registry.plugin_failures()
    for warning in caught:
        if issubclass(warning.category, registry.PluginWarning):
            print(f"symq: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)
