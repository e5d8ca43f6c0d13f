"""GI/G/1: the exact GI/M/1 waiting time against the Lindley simulation at loads up to 0.95.

For Erlang-2, deterministic and hyperexponential (scv 4.6) interarrival laws to an exponential
server, at rho = 0.5, 0.8, 0.9, 0.95: the exact mean wait (the root of sigma = A*(mu (1 -
sigma)), symq.me.gg1.gi_m1_waiting) and whether the 99% batch-means interval of the Lindley
simulation (symq.me.gg1.simulate_gg1_waiting) covers it; Kingman's bound beside.

``--coverage SEEDS``: for each law at rho = 0.95, the coverage of the 99% interval over SEEDS
seeds at the shortest run the run-length rule accepts, with a one-sided binomial test.

Run: ``python benchmarks/bench_gg1.py [--jobs N] [--coverage SEEDS]``.
"""

from __future__ import annotations

import argparse
import time

from symq.laws import Deterministic, Erlang, Exponential, Hyperexponential
from symq.me.gg1 import gg1_references, gi_m1_waiting, simulate_gg1_waiting
from symq.me.transforms import Transform


def laws(lam):
    p, r1, r2 = 0.9, 1.8 * lam, 0.2 * lam
    mean = p / r1 + (1 - p) / r2
    var = 2 * (p / r1 ** 2 + (1 - p) / r2 ** 2) - mean ** 2
    return [
        ("E2", Erlang(2, 1 / lam), Transform(f"(2*{lam}/(2*{lam} + s))^2"), 1 / (2 * lam ** 2)),
        ("D", Deterministic(1 / lam), Transform(f"exp(-s/{lam})"), 0.0),
        ("H2", Hyperexponential([p, 1 - p], [r1, r2]),
         Transform(f"{p}*{r1}/({r1} + s) + {1 - p}*{r2}/({r2} + s)"), var),
    ]


def coverage(rho, seeds):
    from scipy.stats import binomtest

    from symq.core.errors import RunTooShort

    for name, law, transform, _ in laws(rho):
        exact = gi_m1_waiting(transform, 1.0).EW
        n = 100_000
        while True:                     # the shortest run the run-length rule accepts
            try:
                simulate_gg1_waiting(law, Exponential(1.0), n_jobs=n, rng=0)
                break
            except RunTooShort:
                n = int(n * 1.3)
        hits = sum(simulate_gg1_waiting(law, Exponential(1.0), n_jobs=n, rng=seed)
                   .EW.contains(exact) for seed in range(1, seeds + 1))
        p = binomtest(hits, seeds, 0.99, alternative="less").pvalue
        print(f"coverage {name}/M/1 rho={rho}: {hits}/{seeds} of the 99% intervals at "
              f"n_jobs={n:,} cover the exact mean (binomial p = {p:.3g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=4_000_000)
    parser.add_argument("--coverage", type=int, default=0)
    args = parser.parse_args()
    if args.coverage:
        coverage(0.95, args.coverage)
        return
    covered = total = 0
    for rho in (0.5, 0.8, 0.9, 0.95):
        for name, law, transform, var in laws(rho):
            exact = gi_m1_waiting(transform, 1.0)
            start = time.perf_counter()
            est = simulate_gg1_waiting(law, Exponential(1.0), n_jobs=args.jobs, rng=7)
            seconds = time.perf_counter() - start
            bound = gg1_references(1 / rho, var, 1.0, 1.0).kingman_upper
            inside = est.EW.contains(exact.EW)
            covered += inside
            total += 1
            print(f"{name}/M/1 rho={rho:4.2f}: exact E W = {exact.EW:9.5f} | simulated {est.EW} "
                  f"({args.jobs:,} customers, {seconds:4.1f} s) | covered: {inside} | Kingman "
                  f"<= {bound:9.5f}")
    print(f"{covered} of {total} intervals cover the exact value (99% intervals)")


if __name__ == "__main__":
    main()
