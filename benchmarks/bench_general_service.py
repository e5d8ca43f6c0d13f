"""A lognormal job-size law into JSQ(2): fit + PH + fixed point, and the error against simulation.

Case (issue 16): lognormal sizes with sigma = 1 and mean 1, d = 2, lam = 0.9.  Timed, warm
(the numba kernels compiled or loaded first): :func:`symq.meanfield.service_fit.fit_phase_type`
(certified Padé fits + CF1, or the two-moment PH) and :func:`symq.meanfield.jsq_ph.solve_jsq_ph`
with its PH, for order_max = 1..4; target: the whole chain under 1 s.  Side by side, the
two-moment hyper-Erlang baseline (no fit).  The error of each is measured against a simulation
of N = 1000 servers that samples the true lognormal (99% batch-means interval).

Run: ``python benchmarks/bench_general_service.py [--jobs 10000000]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import scipy.stats as st

from symq.laws import hyperexponential2
from symq.meanfield.attained.simulation import simulate_attained
from symq.meanfield.jsq_ph import solve_jsq_ph
from symq.meanfield.service_fit import fit_phase_type

D, LAMBDA, SIGMA, SERVERS = 2, 0.9, 1.0, 1000


def _timed(call, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    law = st.lognorm(SIGMA, scale=math.exp(-SIGMA**2 / 2))
    solve_jsq_ph(D, LAMBDA, hyperexponential2(1.0, 2.0))            # warm the kernels
    start = time.perf_counter()
    sim = simulate_attained(SERVERS, D, LAMBDA, law, np.arange(1.0, 401.0)[None, :], 1.0,
                            n_jobs=args.jobs, rng=1, level=0.99).ET
    print(f"simulation, N = {SERVERS}, {args.jobs:.0e} jobs of the true lognormal: E[T] = {sim} "
          f"({time.perf_counter() - start:.1f} s)")
    print(f"{'chain':<34} {'phases':>6} {'fit s':>7} {'solve s':>8} {'total s':>8} {'E[T]':>8} "
          f"{'error':>8} {'in CI':>6}  Kolmogorov")
    rows = [(f"fit_phase_type(order_max={k})", lambda k=k: fit_phase_type(law, order_max=k))
            for k in (1, 2, 3, 4)]
    rows.append(("two-moment H2 (baseline, no fit)",
                 lambda: hyperexponential2(1.0, math.exp(SIGMA**2) - 1.0)))
    for label, make in rows:
        fit_time, made = _timed(make, args.repeat)
        ph = getattr(made, "ph", made)
        solve_time, fp = _timed(lambda ph=ph: solve_jsq_ph(D, LAMBDA, ph), args.repeat)
        error = fp.ET - sim.mean
        kolmogorov = f"{made.distance:.4f}" if hasattr(made, "distance") else ""
        print(f"{label:<34} {ph.order:>6} {fit_time:>7.3f} {solve_time:>8.3f} "
              f"{fit_time + solve_time:>8.3f} {fp.ET:>8.4f} {error:>+8.4f} "
              f"{str(abs(error) <= sim.half_width):>6}  {kolmogorov}")


if __name__ == "__main__":
    main()
