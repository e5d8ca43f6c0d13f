"""Speed of the JSQ(d)-PH mean-field fixed point (cavity / level-dependent QBD iteration).

Case: d = 2, lam = 0.9, H2 service with mean 1, SCV 10, f = 1/2 (Hellemans & Van Houdt's
parametrisation), tolerance 1e-12, adaptive truncation ``u_K < 1e-16``.  Target: median time
of :func:`symq.meanfield.solve_jsq_ph` under 50 ms (warm, after the numba kernel is compiled
or loaded from its cache; the first call is timed separately).  Also printed: iterations,
truncation level, ODE residual, E[T] beside Li's product-form E[T] (the exponential value) and
the max residual of the product-form candidate (:func:`symq.meanfield.product_form_residual`).

Run: ``python benchmarks/bench_jsq_ph.py [--repeat 30]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from symq.laws import hyperexponential2
from symq.meanfield import product_form_ET, product_form_residual, solve_jsq_ph

D, LAMBDA, SCV, F, TOL = 2, 0.9, 10.0, 0.5, 1e-12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    alpha, A = hyperexponential2(1.0, SCV, F)
    start = time.perf_counter()
    fp = solve_jsq_ph(D, LAMBDA, (alpha, A), tol=TOL)
    first = time.perf_counter() - start
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        fp = solve_jsq_ph(D, LAMBDA, (alpha, A), tol=TOL)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    pf_et = product_form_ET(D, LAMBDA, (alpha, A))
    pf_res = float(np.max(product_form_residual(D, LAMBDA, (alpha, A))))
    print(f"solve_jsq_ph(d={D}, lam={LAMBDA}, H2(SCV={SCV:g}, f={F:g}), tol={TOL:g}): "
          f"first call {first * 1e3:.1f} ms, median {median * 1e3:.2f} ms over {args.repeat} runs "
          f"[target < 50 ms]")
    print(f"  iterations {fp.iterations}, K = {fp.K} levels, u_K = {fp.u[-1]:.1e}, "
          f"ODE residual {fp.residual:.1e}, invariants {fp.invariants}")
    print(f"  E[T] = {fp.ET:.10f}; Li's product form E[T] = {pf_et:.10f} "
          f"(gap {(fp.ET - pf_et) / fp.ET:.1%} of the true value); product-form residual "
          f"max {pf_res:.3e}")


if __name__ == "__main__":
    main()
