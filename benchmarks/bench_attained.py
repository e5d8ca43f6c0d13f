"""Speed of the attained-service analysis and simulator (Hellemans & Van Houdt, ToN 2021).

1. Cavity analysis: each of the eight policies at d = 5, lam = 0.9, H2 sizes (mean 1, SCV 10,
   f = 1/2), queue truncation B = 30, layers of width 0.1 up to age 40 (401 layers).  Target:
   under 2 s per policy.  Shown beside the age-free SQ(d) fixed point of the same model
   (:func:`symq.meanfield.solve_jsq_ph`, the baseline: what the age layers cost), then the time
   of LEW(d) as the number of layers grows (width 0.4 ... 0.025).
2. Simulator: N = 1000 servers, 10^6 jobs, same case, SQ(d) and LEW(d) score tables.  Target:
   under 10 s.  Shown beside the JSQ(d)-only simulator :func:`symq.meanfield.simulate_jsq` on the
   same case (the baseline: what the age reporting and general scores cost).

Run: ``python benchmarks/bench_attained.py [--repeat 3]``.  Times are warm (numba kernels
compiled or loaded from their cache first).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from symq.laws import hyperexponential2
from symq.meanfield import simulate_jsq, solve_jsq_ph
from symq.meanfield.attained import POLICY_NAMES, simulate_policy, solve_attained

D, LAMBDA, SCV, F = 5, 0.9, 10.0, 0.5


def _median(func, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    alpha, A = hyperexponential2(1.0, SCV, F)
    warnings.simplefilter("ignore")  # RE at lam = 0.9 holds 1e-7 of its mass at B = 30

    base, _ = _median(lambda: solve_jsq_ph(D, LAMBDA, (alpha, A), tol=1e-10), args.repeat)
    print(f"Cavity analysis, d={D}, lam={LAMBDA}, H2(SCV={SCV:g}), B=30, delta=0.1, 401 layers "
          "[target < 2 s per policy]")
    print(f"  baseline SQ(d) without ages (solve_jsq_ph): {base * 1e3:.1f} ms")
    for policy in POLICY_NAMES:
        t, fp = _median(lambda policy=policy: solve_attained(policy, D, LAMBDA, (alpha, A),
                                                             delta=0.1, rep_max=40.0, B=30),
                        args.repeat)
        print(f"  {policy:<10} {t:6.3f} s  ({t / base:7.0f} x baseline)  E[W] = {fp.EW:.6f}, "
              f"{fp.iterations} iterations")
    print("  LEW(d): time against the number of layers (rep_max = 40)")
    for delta in (0.4, 0.2, 0.1, 0.05, 0.025):
        t, fp = _median(lambda delta=delta: solve_attained("LEW", D, LAMBDA, (alpha, A),
                                                           delta=delta, rep_max=40.0, B=30), 1)
        print(f"    delta {delta:<6} {fp.r + 1:5d} layers  {t:6.3f} s  "
              f"({t / (fp.r + 1) * 1e3:.2f} ms per layer)  E[W] = {fp.EW:.6f}")

    n_jobs, N = 3 * 10**6, 1000
    simulate_jsq(N, D, LAMBDA, (alpha, A), n_jobs=2_200_000, rng=0)  # compile / load the kernels
    simulate_policy("SQ", N, D, LAMBDA, (alpha, A), n_jobs=2_200_000, rng=0)
    base, est = _median(lambda: simulate_jsq(N, D, LAMBDA, (alpha, A), n_jobs=n_jobs, rng=1),
                        args.repeat)
    print(f"Simulator, N={N}, {n_jobs:.0e} jobs, d={D}, lam={LAMBDA} [target < 10 s]")
    print(f"  baseline simulate_jsq (SQ(d) only): {base:.3f} s, "
          f"{n_jobs / base / 1e6:.2f} M jobs/s, E[T] = {est.ET}")
    for policy in ("SQ", "LEW"):
        t, est = _median(lambda policy=policy: simulate_policy(policy, N, D, LAMBDA, (alpha, A),
                                                               n_jobs=n_jobs, rng=1),
                         args.repeat)
        print(f"  simulate_policy {policy:<4} {t:.3f} s, {n_jobs / t / 1e6:.2f} M jobs/s "
              f"({t / base:.2f} x baseline), E[W] = {est.EW}")


if __name__ == "__main__":
    main()
