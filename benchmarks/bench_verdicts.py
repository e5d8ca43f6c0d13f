"""The confusion table of ``symq check`` on a corpus of claims whose truth is known exactly.

Issue 30 ("Verdicts a referee can trust") is done when, on a corpus of true and false claims with
exact answers, no verdict is wrong: a true claim never *fails*, a false claim never *holds*, and
the claims the evidence cannot decide are *inconclusive* with the run length or depth that would
decide.  The corpus is ``benchmarks/verdict_corpus/*.toml``: every claim states its truth as
``expected = "holds"`` or ``"fails"``, with a comment giving the exact value or the closed form
it must match and a citation (M/M/1 at loads up to 0.999, Erlang C, Pollaczek-Khinchine and two
misprints of it, approximations read as exact, processor sharing, Halfin-Whitt, heavy-traffic
constants as series, tail integrals).

This script runs ``symq check FILE --json`` on each file (a separate process per file, as a user
would run it), reads the truth of each claim from the TOML itself (not from symq's output), and
prints

* the confusion table, rows truth (true / false), columns verdict (holds / fails /
  inconclusive / error: the claim could not be built or its check was refused);
* the wrong verdicts (a true claim that fails, a false claim that holds): these are bugs;
* the inconclusive verdicts with their reason (the run length or depth that would decide);
* the errors, and the seconds per file and in all.

The same text, as Markdown, goes to ``--out`` (default ``/tmp/briefs/confusion.md``, appended to
with ``--append``).  Run it with the engine under test on ``PYTHONPATH`` (``PYTHONPATH=/path/to/
an/old/checkout python benchmarks/bench_verdicts.py --label baseline`` gives a baseline).

Usage::

    nice python benchmarks/bench_verdicts.py                       # the whole corpus (~10 min)
    python benchmarks/bench_verdicts.py --files erlang_c series    # some files
    python benchmarks/bench_verdicts.py --label after --append
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "verdict_corpus"
COLUMNS = ("holds", "fails", "inconclusive", "error")


@dataclass
class Row:
    """One claim of the corpus: its truth, and what symq said."""

    file: str
    name: str
    truth: bool
    verdict: str = "error"
    detail: str = ""
    seconds: float | None = None

    @property
    def wrong(self) -> bool:
        return (self.truth and self.verdict == "fails") or (not self.truth
                                                             and self.verdict == "holds")


@dataclass
class FileRun:
    path: Path
    rows: list[Row] = field(default_factory=list)
    exit_code: int = 0
    seconds: float = 0.0
    stderr: str = ""


def truths(path: Path) -> dict[str, bool]:
    """Claim name -> truth, from the file's ``expected`` keys (read with tomllib, not symq)."""
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    out = {}
    for claim in data.get("claims", []):
        expected = claim.get("expected")
        if expected not in ("holds", "fails"):
            raise SystemExit(f"{path}: claim {claim.get('name')!r} has no expected = "
                             "\"holds\"/\"fails\": every corpus claim states its truth")
        out[claim["name"]] = expected == "holds"
    return out


def _error_lines(stderr: str, name: str) -> str:
    """The stderr lines of ``symq check`` that name the claim (its build or run error)."""
    quoted = (f"claim {name!r}", f'claim "{name}"')
    lines = [line.removeprefix("symq: error: ") for line in stderr.splitlines()
             if any(q in line for q in quoted)]
    return " | ".join(lines)


def run_file(path: Path, timeout: float) -> FileRun:
    """``symq check PATH --json`` in a child process; one :class:`Row` per claim of the file."""
    run = FileRun(path)
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "symq", "check", str(path), "--json"],
                              capture_output=True, text=True, timeout=timeout, check=False,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        stdout, run.stderr, run.exit_code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        run.stderr, run.exit_code = f"timed out after {timeout:g} s", -1
    run.seconds = time.perf_counter() - start
    try:
        verdicts = json.loads(stdout) if stdout.strip() else []
    except json.JSONDecodeError:
        verdicts = []
        run.stderr += "\n(unreadable --json output)"
    by_name = {v["claim"]: v for v in verdicts}
    for name, truth in truths(path).items():
        row = Row(path.stem, name, truth)
        v = by_name.get(name)
        if v is None:
            row.detail = _error_lines(run.stderr, name) or run.stderr.strip()[-300:] \
                or "no verdict"
        elif v["detail"].startswith("internal error"):
            row.detail = v["detail"]                      # a crash is an error, not a verdict
        else:
            row.verdict, row.detail, row.seconds = v["status"], v["detail"], v.get("seconds")
        run.rows.append(row)
    return run


def confusion(rows: list[Row]) -> dict[bool, dict[str, int]]:
    table = {truth: {c: 0 for c in COLUMNS} for truth in (True, False)}
    for row in rows:
        table[row.truth][row.verdict if row.verdict in COLUMNS else "error"] += 1
    return table


def _cell(text: str, width: int = 400) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[:width - 3] + "..."


def report(runs: list[FileRun], label: str, engine: str) -> str:
    rows = [r for run in runs for r in run.rows]
    table = confusion(rows)
    total = sum(run.seconds for run in runs)
    lines = [f"## Verdict corpus: {label}", "",
             (f"Engine: {engine}.  {len(rows)} claims in {len(runs)} files, "
              f"{total:.0f} s in all (`symq check FILE --json`, one process per file)."), "",
             "| truth \\ verdict | " + " | ".join(COLUMNS) + " | total |",
             "|---|" + "---|" * (len(COLUMNS) + 1)]
    for truth in (True, False):
        counts = table[truth]
        lines.append(f"| {'true' if truth else 'false'} | "
                     + " | ".join(str(counts[c]) for c in COLUMNS)
                     + f" | {sum(counts.values())} |")
    wrong = [r for r in rows if r.wrong]
    lines += ["", ("**Wrong verdicts** (a true claim that fails, a false claim that holds): "
                   f"{len(wrong)}"), ""]
    lines += [f"- {r.file}: {r.name} ({'true' if r.truth else 'false'}, {r.verdict}): "
              f"{_cell(r.detail)}" for r in wrong] or ["- none"]
    undecided = [r for r in rows if r.verdict == "inconclusive"]
    lines += ["", f"**Inconclusive** ({len(undecided)}), with the reason:", ""]
    lines += [f"- {r.file}: {r.name} ({'true' if r.truth else 'false'}): {_cell(r.detail)}"
              for r in undecided] or ["- none"]
    errors = [r for r in rows if r.verdict not in ("holds", "fails", "inconclusive")]
    lines += ["", f"**Errors** ({len(errors)}: not built, refused or crashed):", ""]
    lines += [f"- {r.file}: {r.name} ({'true' if r.truth else 'false'}): {_cell(r.detail)}"
              for r in errors] or ["- none"]
    lines += ["", "| file | claims | exit code | seconds |", "|---|---|---|---|"]
    lines += [f"| {run.path.name} | {len(run.rows)} | {run.exit_code} | {run.seconds:.1f} |"
              for run in runs]
    lines += ["", "<details><summary>every claim</summary>", "",
              "| file | claim | truth | verdict | seconds |", "|---|---|---|---|---|"]
    lines += [f"| {r.file} | {_cell(r.name, 120)} | {'true' if r.truth else 'false'} | "
              f"{r.verdict}{' (WRONG)' if r.wrong else ''} | "
              f"{'' if r.seconds is None else f'{r.seconds:.2f}'} |" for r in rows]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def engine_description() -> str:
    import symq

    where = Path(symq.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(where), "log", "-1", "--format=%h %s"],
                                capture_output=True, text=True, timeout=10,
                                check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"symq from {where}" + (f" ({_cell(commit, 100)})" if commit else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--files", nargs="*", default=None,
                        help="file stems of the corpus to run (default: all)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/briefs/confusion.md"))
    parser.add_argument("--append", action="store_true", help="append to --out")
    parser.add_argument("--label", default="current engine")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per file")
    args = parser.parse_args(argv)
    paths = sorted(args.corpus.glob("*.toml"))
    if args.files:
        wanted = {re.sub(r"\.toml$", "", f) for f in args.files}
        paths = [p for p in paths if p.stem in wanted]
    if not paths:
        raise SystemExit(f"no claims files in {args.corpus}")
    runs = []
    for path in paths:
        run = run_file(path, args.timeout)
        runs.append(run)
        print(f"{path.name}: {run.seconds:.1f} s, exit {run.exit_code}", file=sys.stderr)
    text = report(runs, args.label, engine_description())
    print(text)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a" if args.append else "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    except OSError as exc:
        print(f"cannot write {args.out}: {exc}", file=sys.stderr)
    wrong = sum(r.wrong for run in runs for r in run.rows)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
