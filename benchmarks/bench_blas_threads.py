"""BLAS threads and small matrices: each case with and without :func:`symq.core.limit_blas_threads`.

A BLAS library (OpenBLAS here) starts threads on every core for each call, and for the 2 x 2 to
10 x 10 matrices of phase-type laws, QBD levels and small CTMCs the threads cost more than the
arithmetic (issue 31).  Each case runs in one process, in turn A B A B ... (``--runs`` times each,
the median kept) so that a drift of the machine's speed touches both sides: *threads* is the BLAS
library as it starts (as many threads as cores unless ``OPENBLAS_NUM_THREADS`` says otherwise),
*one* the same call under ``limit_blas_threads()``.  The values of both sides must be identical
(checked).

The cases: the issue's ``exact_mean_response("sita-opt", 2, 0.7, ME law)``, 1,000 small
``scipy.linalg.expm`` calls, and the public functions of other packages that could carry the
limit themselves (their names printed beside them).  A case whose function cannot be imported
(a package being rebuilt) is reported and skipped.

Run: ``python benchmarks/bench_blas_threads.py [--runs 3] [--quick]``.

Measured (2 cores, OpenBLAS 0.3.31 pthreads at 2 threads, medians of 3; every value the same)::

    case                                      threads        one   ratio
    1,000 expm of 4 x 4                       0.773 s    0.080 s    x9.7
    sita-opt m=2 rho=0.7 Erlang-3 (ME)        2.554 s    0.325 s    x7.9
    sita-e m=3 rho=0.8 H2 (ME)                0.008 s    0.004 s    x1.9
    partial moments k=0..2 at 200 points      6.743 s    0.120 s   x56.3
    ME -> PH, cdf and pdf at 400 points       0.834 s    0.189 s    x4.4
    JSQ(2) PH mean field lam=0.9 Erlang-2     0.002 s    0.006 s    x0.4  (noise: a cached solve)
    M/G/1 waiting time Erlang-2               0.001 s    0.001 s    x1.0

Entering and leaving the limit costs about 20-80 microseconds (1-2 ms after new imports, when
threadpoolctl scans the loaded libraries again); nested, a lock and a counter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info

from symq.core.threads import limit_blas_threads


def expm_calls(count: int = 1000, order: int = 4) -> float:
    """``count`` calls of ``scipy.linalg.expm`` on a small sub-generator (a phase-type law's)."""
    import scipy.linalg

    rng = np.random.default_rng(1)
    a = rng.uniform(0.1, 1.0, (order, order))
    np.fill_diagonal(a, 0.0)
    np.fill_diagonal(a, -a.sum(axis=1) - 1.0)
    total = 0.0
    for t in np.linspace(0.01, 5.0, count):
        total += float(scipy.linalg.expm(a * t).sum())
    return total


def cases(quick: bool) -> list[tuple[str, str, Callable[[], Any]]]:
    """(label, the public function concerned, a call returning comparable values)."""
    out: list[tuple[str, str, Callable[[], Any]]] = []

    def add(label: str, where: str, build: Callable[[], Callable[[], Any]]) -> None:
        try:
            out.append((label, where, build()))
        except Exception as exc:  # noqa: BLE001 - a package being rebuilt: say so, go on
            print(f"skipped {label}: {type(exc).__name__}: {exc}")

    def sita_opt() -> Callable[[], Any]:
        from symq.dispatch import exact_mean_response
        from symq.me import ME

        law = ME.erlang(3, 3)
        return lambda: exact_mean_response("sita-opt", 2, 0.7, law).ET

    def sita_e() -> Callable[[], Any]:
        from symq.dispatch import exact_mean_response
        from symq.me import ME

        law = ME.hyperexponential(["1/2", "1/2"], [1, 3])
        return lambda: exact_mean_response("sita-e", 3, 0.8, law).ET

    def partial_moments() -> Callable[[], Any]:
        from symq.laws import as_phase_type
        from symq.me import ME

        law = as_phase_type(ME.erlang(3, 3), "sizes")
        xs = np.linspace(0.01, 5.0, 200)
        return lambda: [float(law.partial_moment(k, x)) for k in (0, 1, 2) for x in xs]

    def me_phase_type() -> Callable[[], Any]:
        from symq.me import ME

        law = ME.hyperexponential(["1/3", "2/3"], [1, 4])
        xs = np.linspace(0.0, 6.0, 400)

        def run() -> Any:
            ph = law.phase_type()
            return np.concatenate([ph.cdf(xs), ph.pdf(xs)]).tolist()
        return run

    def jsq_ph() -> Callable[[], Any]:
        from symq.me import ME
        from symq.meanfield import solve_jsq_ph

        law = ME.erlang(2, 2)
        return lambda: solve_jsq_ph(2, 0.9, law).ET

    def mg1() -> Callable[[], Any]:
        from symq.me import ME, mg1_waiting_time

        law = ME.erlang(2, 3)
        return lambda: str(mg1_waiting_time(law, "1/2").mean)

    add("1,000 expm of 4 x 4", "scipy.linalg.expm", lambda: expm_calls)
    add("sita-opt m=2 rho=0.7 Erlang-3 (ME)", "symq.dispatch.exact_mean_response", sita_opt)
    if not quick:
        add("sita-e m=3 rho=0.8 H2 (ME)", "symq.dispatch.exact_mean_response", sita_e)
        add("partial moments k=0..2 at 200 points", "symq.laws.PhaseType.partial_moment",
            partial_moments)
        add("ME -> PH, cdf and pdf at 400 points", "symq.me.ME.phase_type", me_phase_type)
        add("JSQ(2) PH mean field lam=0.9 Erlang-2", "symq.meanfield.solve_jsq_ph", jsq_ph)
        add("M/G/1 waiting time Erlang-2", "symq.me.mg1_waiting_time", mg1)
    return out


def timed(call: Callable[[], Any], limit: bool) -> tuple[float, Any]:
    """Seconds of one call and its value, under the limit or with the library's threads."""
    start = time.perf_counter()
    with limit_blas_threads(1 if limit else 0):
        value = call()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--quick", action="store_true", help="the issue's two cases only")
    args = parser.parse_args()
    blas = [(lib["internal_api"], lib["num_threads"]) for lib in threadpool_info()
            if lib["user_api"] == "blas"]
    print(f"cores: {os.cpu_count()}; BLAS libraries (threads): {blas}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    rows = []
    for label, where, call in cases(args.quick):
        call()  # warm-up: imports, numba compilation, caches
        times: dict[bool, list[float]] = {False: [], True: []}
        values: dict[bool, Any] = {}
        for _ in range(args.runs):
            for limit in (False, True):
                seconds, values[limit] = timed(call, limit)
                times[limit].append(seconds)
        same = "same" if values[False] == values[True] else "DIFFERENT VALUES"
        threads, one = statistics.median(times[False]), statistics.median(times[True])
        rows.append((label, where, threads, one, same))
        print(f"{label:<40} {threads:9.3f} s {one:9.3f} s  x{threads / one:6.1f}  {same}"
              f"  ({where})", flush=True)
    print(f"\n{'case':<40} {'threads':>11} {'one':>11} {'ratio':>7}")
    for label, _, threads, one, same in rows:
        print(f"{label:<40} {threads:9.3f} s {one:9.3f} s  x{threads / one:6.1f}  {same}")


if __name__ == "__main__":
    main()
