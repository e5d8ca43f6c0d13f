"""Speed of size-aware dispatching: value iteration and the simulator (Hyytiä & Righter 2024).

1. Two servers, rho = 0.4, Exp(1) sizes, step 0.05, backlog up to 24, span < 1e-10 [target
   < 5 s], with the multigrid warm start and without it (the baseline: value iteration from
   v = 0 on the fine grid), and the Richardson-extrapolated g with its error estimate.
2. Three servers with the sorted-state reduction at rho = 0.4 (step 0.2; the step 0.1 grid,
   2.4e6 states, takes a few minutes and is run with ``--m3-fine``).
3. Simulator: jobs per second of the lookup (optimal) policy, LWL and JSQ [target >= 5 M/s].

Run: ``python benchmarks/bench_dispatch.py [--m3-fine]``.
"""

from __future__ import annotations

import argparse
import resource
import time

from symq.dispatch import get_policy, richardson, simulate_dispatch, solve_optimal
from symq.laws import Exponential


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m3-fine", action="store_true")
    args = parser.parse_args()
    sizes = Exponential(1.0)
    solve_optimal(2, 0.4, sizes, delta=0.4, U=24.0)  # compile / load the kernels
    start = time.perf_counter()
    fast = solve_optimal(2, 0.4, sizes, delta=0.05, U=24.0, tol=1e-10)
    warm = time.perf_counter() - start
    start = time.perf_counter()
    cold = solve_optimal(2, 0.4, sizes, delta=0.05, U=24.0, tol=1e-10, multigrid=False)
    plain = time.perf_counter() - start
    print(f"1. m=2, rho=0.4, delta=0.05, U=24, span < 1e-10: {warm:.2f} s with warm starts "
          f"[target < 5 s]; {plain:.2f} s from v = 0 ({plain / warm:.1f}x); g = {fast.ET:.10f} "
          f"in [{fast.ET_low:.10f}, {fast.ET_high:.10f}]; cold g = {cold.ET:.10f}")
    ext = richardson(solve_optimal, 2, 0.4, sizes, delta=0.1, U=24.0)
    print(f"   Richardson (0.1, 0.05): g0 = {ext.ET:.9f} +- {ext.error_estimate:.2e} (grid "
          f"difference); Odoni bracket of the discrete combination [{ext.ET_low:.9f}, "
          f"{ext.ET_high:.9f}] (convergence only)")
    for step in ((0.1,) if args.m3_fine else ()) + (0.2,):
        start = time.perf_counter()
        res = solve_optimal(3, 0.4, sizes, delta=step, U=24.0, tol=1e-8)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"2. m=3, rho=0.4, delta={step}: {time.perf_counter() - start:.1f} s, "
              f"{res.v.size} sorted states, g = {res.ET:.7f}, peak memory so far {peak:.0f} MB")
    n = 10_000_000
    for name, policy in (("lookup (optimal)", get_policy("lookup", result=fast)),
                         ("lwl", "lwl"), ("jsq", "jsq")):
        simulate_dispatch(policy, 2, 0.4, sizes, n_jobs=100_000, rng=0)
        est = simulate_dispatch(policy, 2, 0.4, sizes, n_jobs=n, rng=1)
        print(f"3. simulator {name}: {est.jobs_per_second / 1e6:.1f} M jobs/s [target >= 5 M], "
              f"E[T] = {est.ET}")


if __name__ == "__main__":
    main()
