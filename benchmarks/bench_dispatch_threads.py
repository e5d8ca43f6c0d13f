"""Speedup of the value-iteration pass with numba threads (issue 33, item 3).

One application of the E_X pass (the work of a sweep: every stored state, size atom and
server) on grids of the accuracy-matched flow, with the parallel build at 1, 2, 4, ... threads
up to the cores numba sees, against the serial build of the same kernel (the baseline: a plain
numba loop without ``prange``).  Rounds alternate the thread counts, and the median of each is
kept, so a load that changes during the run touches every count alike.  The speedup is
``time(1 thread) / time(t threads)`` and the efficiency that over ``t``.

Cases: two servers at rho = 0.9 (step 0.05, U = 64); three at rho = 0.9 (step 0.25, U = 48,
second-largest backlog capped at 24, the grids of ``solve_accurate``); four at rho = 0.4 (step
0.25, U = 12); six at rho = 0.4 (step 0.5, U = 8).

Run: ``python benchmarks/bench_dispatch_threads.py [--rounds R]``.  The thread count is set
with :func:`numba.set_num_threads` inside the run and restored at the end.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

from symq.dispatch.vi.grid import DispatchGrid, sorted_states
from symq.dispatch.vi.passes import _TILE, _ex_pass_2, _ex_pass_2_serial, _Operator
from symq.dispatch.vi.simplex_passes import ex_pass
from symq.laws import Exponential

#: (m, rho, delta, U, U2 or None)
CASES = ((2, 0.9, 0.05, 64.0, None), (3, 0.9, 0.25, 48.0, 24.0), (4, 0.4, 0.25, 12.0, None),
         (6, 0.4, 0.5, 8.0, None))


def _pass(op: _Operator, v: np.ndarray, parallel: bool) -> float:
    """Seconds of one E_X pass of the operator's grid (parallel or serial build)."""
    g = op.grid
    start = time.perf_counter()
    if g.m == 2:
        (_ex_pass_2 if parallel else _ex_pass_2_serial)(
            v, op.tail, op.cross, g.p, g.delta, op.mode, op.table, False, op.h, _TILE)
    else:
        starts, ends = op.ranges[parallel]
        ex_pass(v, op.B, g.N, g.p, op.tail, g.delta, op.mode, op.table, op.h,
                parallel=parallel, starts=starts, ends=ends, cap=g.N2, cross=op.cross)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    saved = numba.get_num_threads()
    counts = [1]
    while counts[-1] * 2 <= saved:
        counts.append(counts[-1] * 2)
    if counts[-1] != saved:
        counts.append(saved)
    print(f"numba sees {saved} threads; counts {counts}")
    try:
        for m, rho, delta, U, U2 in CASES:
            grid = DispatchGrid.build(m, rho, Exponential(1.0), delta, U, U2=U2)
            op = _Operator(grid, 0, None)
            states = grid.n_states
            # a smooth value with the shape of the solution (quadratic in the backlogs)
            v = np.zeros(grid.shape())
            if m == 2:
                x = np.arange(grid.N + 1) * delta
                v = 0.3 * (x[:, None] ** 2 + x[None, :] ** 2)
            else:
                v = 0.3 * ((sorted_states(m, grid.N) * delta) ** 2).sum(axis=1)
            _pass(op, v, True)
            _pass(op, v, False)                        # compiled and loaded
            times: dict[object, list[float]] = {t: [] for t in counts}
            times["serial"] = []
            for _ in range(args.rounds):
                for t in counts:
                    numba.set_num_threads(t)
                    times[t].append(_pass(op, v, True))
                numba.set_num_threads(saved)
                times["serial"].append(_pass(op, v, False))
            med = {k: statistics.median(x) for k, x in times.items()}
            work = states * (grid.K + 1) * m
            line = ", ".join(f"{t} threads {med[t] * 1e3:.0f} ms (x{med[1] / med[t]:.2f}, "
                             f"efficiency {med[1] / med[t] / t:.2f})" for t in counts)
            print(f"m={m} rho={rho} delta={delta} U={U:g} U2={U2}: {states} states x "
                  f"{grid.K + 1} atoms ({work / med[counts[-1]] / 1e9:.2f}e9 evaluations/s "
                  f"at {counts[-1]} threads); serial build {med['serial'] * 1e3:.0f} ms; {line}",
                  flush=True)
    finally:
        numba.set_num_threads(saved)


if __name__ == "__main__":
    main()
