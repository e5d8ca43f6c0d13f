"""Speed of the numba M/G/1-PS kernel against pure-Python versions of the same algorithm.

Run: ``python benchmarks/bench_ps_simulation.py [--rho 0.8] [--jobs 2000000] [--py-jobs 100000]``

All versions simulate the same jobs with the virtual-time algorithm of
:mod:`symq.routing.simulation` (one heap push and pop per job):

* ``numba``          -- ``symq.routing.kernel.ps_kernel`` (compiled; compile time excluded);
* ``python (kernel)`` -- the kernel's own loop run by the interpreter (``ps_advance.py_func``);
* ``python (heapq)`` -- idiomatic Python: the same loop with the C-accelerated ``heapq`` module.

The Python versions run on fewer jobs (the first ``--py-jobs`` of the same stream) and must
return the same sojourn times as the kernel on those jobs.  Rates are jobs per second; the
ratio is numba rate / Python rate.  The number-in-system accumulation of the kernel
(``n_slices=0`` here) is switched off so that the three versions do the same work.
"""

from __future__ import annotations

import argparse
import heapq
import math
import platform
import time

import numba
import numpy as np

from symq.routing.kernel import PSState, ps_advance, ps_kernel
from symq.routing.simulation import draw_sizes


def ps_python_heapq(arrivals: list[float], sizes: list[float], capacity: float) -> list[float]:
    """The same algorithm with :mod:`heapq` (C-accelerated heap operations)."""
    n_jobs = len(arrivals)
    sojourn = [0.0] * n_jobs
    heap: list[tuple[float, int]] = []
    t = v = 0.0
    i = 0
    while i < n_jobs or heap:
        n = len(heap)
        t_dep = t + (heap[0][0] - v) * n / capacity if n else math.inf
        if i < n_jobs and arrivals[i] < t_dep:
            t_next = arrivals[i]
            v = v + (t_next - t) * capacity / n if n else 0.0
            t = t_next
            heapq.heappush(heap, (v + sizes[i], i))
            i += 1
        else:
            t = t_dep
            v, j = heapq.heappop(heap)
            sojourn[j] = t - arrivals[j]
            if not heap:
                v = 0.0
    return sojourn


def ps_python_kernel(arrivals: np.ndarray, sizes: np.ndarray, capacity: float):
    """The kernel's loop (``ps_advance``) run by the interpreter, on a fresh state."""
    state = PSState(arrivals, sizes, capacity, 0.0, 0.0, 0)
    ps_advance.py_func(state.arrivals, state.sizes, state.capacity, state.t_start, state.t_stop,
                       state.width, arrivals.shape[0], state.clock, state.counters, state.keys,
                       state.ids, state.sojourn, state.departures, state.area)
    return state.sojourn, state.departures, state.area


def _best_of(repeats: int, func, *args) -> tuple[float, object]:
    best = math.inf
    out = None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func(*args)
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rho", type=float, default=0.8, help="utilisation lam*mean/C")
    parser.add_argument("--sizes", default="h2", help="a name of symq.laws.SIZE_LAWS")
    parser.add_argument("--scv", type=float, default=4.0, help="SCV of the named law (h2: 4)")
    parser.add_argument("--jobs", type=int, default=2_000_000, help="jobs for the numba kernel")
    parser.add_argument("--py-jobs", type=int, default=100_000, help="jobs for the Python versions")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    capacity, mean = 1.0, 1.0
    lam = args.rho * capacity / mean
    rng = np.random.default_rng(args.seed)
    scv = None if args.sizes in ("exp", "det") else args.scv
    sizes = draw_sizes(args.sizes, mean, args.jobs, rng, scv=scv)
    arrivals = np.cumsum(rng.exponential(1.0 / lam, args.jobs))
    n_py = min(args.py_jobs, args.jobs)

    start = time.perf_counter()
    ps_kernel(arrivals[:10], sizes[:10], capacity, 0.0, 0.0, 0)  # compile or load the cache
    first_call = time.perf_counter() - start

    t_numba, (sojourn, _, _) = _best_of(args.repeats, ps_kernel, arrivals, sizes, capacity, 0.0,
                                        0.0, 0)
    arr_py, siz_py = arrivals[:n_py].tolist(), sizes[:n_py].tolist()
    t_array, (soj_array, _, _) = _best_of(args.repeats, ps_python_kernel, arrivals[:n_py],
                                          sizes[:n_py], capacity)
    t_heapq, soj_heapq = _best_of(args.repeats, ps_python_heapq, arr_py, siz_py, capacity)

    # same jobs, same algorithm: identical sojourns (the first n_py jobs do not depend on later
    # arrivals except through the drain at the end, so compare with the kernel run on n_py jobs)
    ref, _, _ = ps_kernel(arrivals[:n_py], sizes[:n_py], capacity, 0.0, 0.0, 0)
    assert np.allclose(soj_array, ref, rtol=1e-12, atol=1e-12), "interpreted kernel differs"
    assert np.allclose(soj_heapq, ref, rtol=1e-12, atol=1e-12), "pure-Python (heapq) differs"

    rate_numba = args.jobs / t_numba
    rate_array = n_py / t_array
    rate_heapq = n_py / t_heapq
    print(f"M/G/1-PS virtual-time simulation, sizes={args.sizes}, rho={args.rho}, "
          f"best of {args.repeats}")
    print(f"python {platform.python_version()}, numba {numba.__version__}, numpy {np.__version__}")
    print(f"numba first call (compile or cache load): {first_call:.2f} s")
    print(f"{'version':<16}{'jobs':>11}{'seconds':>10}{'jobs/s':>14}{'numba speed-up':>16}")
    for name, jobs, seconds, rate in [
        ("numba", args.jobs, t_numba, rate_numba),
        ("python (kernel)", n_py, t_array, rate_array),
        ("python (heapq)", n_py, t_heapq, rate_heapq),
    ]:
        print(f"{name:<16}{jobs:>11,}{seconds:>10.3f}{rate:>14,.0f}{rate_numba / rate:>15.1f}x")
    print(f"mean sojourn (numba run): {sojourn.mean():.4f}  "
          f"exact {mean / (capacity - lam * mean):.4f}")


if __name__ == "__main__":
    main()
