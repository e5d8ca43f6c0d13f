"""Start-up time of ``symq --version``, ``symq --help``, ``import symq``, ``import symq.core``.

Each is timed as a whole process (interpreter start, imports, exit), several runs, beside the
baseline ``python -c pass`` (the interpreter alone), run in turn A B A B ... so that a drift of
the machine's speed touches both.  Targets (issue 31): ``symq --version`` and ``symq --help``
under 0.3 s, ``import symq`` under 0.5 s.  Then the heaviest imports of ``import symq.core`` and
of ``symq --version`` from ``python -X importtime`` (cumulative microseconds), to show what a
start costs.

The commands run as ``python -c`` with the entry point's own code (what the ``symq`` console
script runs), so that a shell wrapper in front of the script (pyenv's shims) is not counted.

Run: ``python benchmarks/bench_startup.py [--runs 11] [--importtime]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (baseline)": "pass",
    "symq --version": "import sys; sys.argv = ['symq', '--version']; "
                      "from symq.cli import main; sys.exit(main())",
    "symq --help": "import sys; sys.argv = ['symq', '--help']; "
                   "from symq.cli import main; sys.exit(main())",
    "import symq": "import symq",
    "import symq.core": "import symq.core",
}
TARGETS = {"symq --version": 0.3, "symq --help": 0.3, "import symq": 0.5}


def wall(code: str) -> float:
    """Seconds of one whole ``python -c code`` process."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def importtime(code: str, top: int) -> list[tuple[int, str]]:
    """The ``top`` imports with the largest cumulative time (microseconds) of ``python -X
    importtime -c code``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], check=True,
                          capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line[len("import time:"):].split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="runs of each command (default 11)")
    parser.add_argument("--importtime", action="store_true",
                        help="also print the heaviest imports (python -X importtime)")
    args = parser.parse_args()
    for code in CASES.values():  # warm-up: file-system caches, .pyc files
        wall(code)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, code in CASES.items():
            times[name].append(wall(code))
    base = statistics.median(times["python -c pass (baseline)"])
    print(f"{'command':<28} {'min s':>7} {'median s':>9} {'- baseline':>11} {'target':>7}")
    for name, values in times.items():
        median = statistics.median(values)
        target = f"{TARGETS[name]:.1f}" if name in TARGETS else ""
        print(f"{name:<28} {min(values):>7.3f} {median:>9.3f} {median - base:>11.3f} "
              f"{target:>7}")
    if args.importtime:
        for name in ("import symq.core", "symq --version"):
            print(f"\nheaviest imports of {name} (cumulative us):")
            for micro, module in importtime(CASES[name], 12):
                print(f"  {micro:>9}  {module}")


if __name__ == "__main__":
    main()
