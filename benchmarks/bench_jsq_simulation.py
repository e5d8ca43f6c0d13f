"""Speed of the numba JSQ(d) simulator, side by side with Ciw on an M/M/1 queue.

Run: ``python benchmarks/bench_jsq_simulation.py [--jobs 10000000] [--ciw-jobs 100000]``

* ``symq`` -- :func:`symq.meanfield.simulation.simulate_jsq` (compile time excluded: one small
  warm-up call first), at N = 1000, d = 2, lam = 0.9 with exponential service and with H2
  service (mean 1, SCV 4), and at N = 1 (an M/M/1 queue, lam = 0.9) for a like-for-like
  comparison with Ciw;
* ``ciw``  -- Ciw (Palmer et al., https://ciw.readthedocs.io), a pure-Python discrete-event
  simulator, on an M/M/1 queue (lam = 0.9, mu = 1) run for about ``--ciw-jobs`` jobs.  Ciw is
  optional: install it with ``pip install ciw``; without it that part is skipped.

Rates are simulated jobs (departures) per second of wall-clock time; the ratio is symq / Ciw.
Each line also prints the estimated mean response time next to its exact or mean-field value.
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numba
import numpy as np

from symq.meanfield.simulation import simulate_jsq


def h2(mean: float = 1.0, scv: float = 4.0):
    p = (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0))) / 2.0
    return np.array([p, 1.0 - p]), np.diag([-2.0 * p / mean, -2.0 * (1.0 - p) / mean])


def run_ciw(lam: float, mu: float, n_jobs: int, seed: int = 1) -> tuple[float, int, float]:
    """Simulate an M/M/1 queue with Ciw for about ``n_jobs`` jobs; return (rate, jobs, mean T)."""
    import ciw

    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=lam)],
        service_distributions=[ciw.dists.Exponential(rate=mu)],
        number_of_servers=[1],
    )
    ciw.seed(seed)
    sim = ciw.Simulation(network)
    start = time.perf_counter()
    sim.simulate_until_max_time(n_jobs / lam)
    elapsed = time.perf_counter() - start
    records = sim.get_all_records()
    warm = n_jobs / lam * 0.1
    resp = [r.exit_date - r.arrival_date for r in records if r.arrival_date > warm]
    return len(records) / elapsed, len(records), float(np.mean(resp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000_000)
    parser.add_argument("--ciw-jobs", type=int, default=100_000)
    args = parser.parse_args()

    print(f"python {platform.python_version()}, numba {numba.__version__}, numpy {np.__version__}")
    simulate_jsq(N=10, d=2, lam=0.5, n_jobs=10_000, rng=0)  # compile / load the cache
    simulate_jsq(N=10, d=2, lam=0.5, n_jobs=10_000, rng=0, sizes=h2())

    lam = 0.9
    mf = sum(lam ** (2.0**k - 1.0) for k in range(1, 60)) / lam
    print(f"\n{'case':42s} {'jobs':>10s} {'jobs/s':>12s}  mean response (reference)")
    cases = [
        ("symq JSQ(2) N=1000 lam=0.9 exponential", dict(N=1000, d=2), None, f"mean field {mf:.4f}"),
        ("symq JSQ(2) N=1000 lam=0.9 H2 (SCV 4)", dict(N=1000, d=2), h2(), "no closed form"),
        ("symq M/M/1 (N=1) lam=0.9", dict(N=1, d=1), None, f"exact {1 / (1 - lam):.4f}"),
    ]
    rates = {}
    for name, kw, service, ref in cases:
        est = simulate_jsq(lam=lam, n_jobs=args.jobs, sizes=service, rng=1, **kw)
        rates[name] = est.jobs_per_second
        print(f"{name:42s} {args.jobs:10d} {est.jobs_per_second:12.3e}  {est.ET}  ({ref})")

    try:
        ciw_rate, ciw_jobs, ciw_mean = run_ciw(lam, 1.0, args.ciw_jobs)
    except ImportError:
        print("\nCiw is not installed (pip install ciw): comparison skipped")
        return
    import ciw

    name = f"ciw {ciw.__version__} M/M/1 lam=0.9"
    print(f"{name:42s} {ciw_jobs:10d} {ciw_rate:12.3e}  {ciw_mean:.3f} (point estimate)  "
          f"(exact {1 / (1 - lam):.4f})")
    print("\nratio symq / Ciw (jobs per second):")
    for case, rate in rates.items():
        print(f"  {case:42s} {rate / ciw_rate:10.0f}x")


if __name__ == "__main__":
    main()
