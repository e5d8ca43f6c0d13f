"""Speed of the refined mean field of JSQ(d) (d=2, lam=0.9, K=100 levels), beside rmftool.

Targets: ``refined_jsq`` < 1 s, fixed point at tolerance 1e-12 < 50 ms (warm, i.e. after the
one-off symbolic derivation and compilation, which is timed separately).  When the optional
peer ``rmftool`` (Gast et al., rmf_tool; not a symq dependency) is importable, its
``meanFieldExpansionSteadyState(order=1)`` is timed on the same model and the largest
difference of ``V`` is printed.  rmftool differentiates a dense n x n x n Hessian symbolically,
so it is run at ``--rmftool-levels`` levels (default 30) as well as, with ``--rmftool-full``,
at the full truncation.

Run: ``python benchmarks/bench_refined.py [--rmftool-levels 30] [--rmftool-full]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from symq.meanfield import jsq_process, refined_jsq
from symq.meanfield.supermarket import LAM

D, LAMBDA, LEVELS, N = 2, 0.9, 100, 100


def best_of(func, repeat: int = 5) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def symq_times() -> dict[str, float]:
    start = time.perf_counter()
    process = jsq_process(D, LEVELS)
    process.F(np.zeros(LEVELS), np.array([LAMBDA]))
    process.DF(np.zeros(LEVELS), np.array([LAMBDA]))
    first = refined_jsq(D, LAMBDA, N, K=LEVELS)
    cold = time.perf_counter() - start
    warm, result = best_of(lambda: refined_jsq(D, LAMBDA, N, K=LEVELS))
    fixed, fp = best_of(lambda: process.fixed_point(np.zeros(LEVELS), {LAM: LAMBDA}, tol=1e-12), 10)
    print(f"symq: refined_jsq(d={D}, lam={LAMBDA}, N={N}, K={LEVELS}) cold (derive + compile + "
          f"solve) {cold:.3f} s, warm {warm * 1e3:.1f} ms   [target < 1 s]")
    print(f"symq: fixed point to 1e-12 (K={LEVELS}) {fixed * 1e3:.1f} ms, residual "
          f"{fp.residual:.1e}   [target < 50 ms]")
    print(f"symq: EQ = {result.EQ:.12f}, EQ_N = {result.EQ_N:.12f}, sum V = "
          f"{sum(result.V):.12f}")
    assert np.array_equal(first.V, result.V)
    return {"cold": cold, "warm": warm, "fixed_point": fixed}


def rmftool_compare(levels: int) -> None:
    try:
        import rmftool
    except ImportError:
        print("rmftool: not installed (pip install rmftool), comparison skipped")
        return
    model = rmftool.DDPP()
    for k in range(levels):
        jump = np.zeros(levels)
        jump[k] = 1
        if k == 0:
            model.add_transition(jump, lambda x: LAMBDA * (1 - x[0] ** D))
        else:
            model.add_transition(jump, lambda x, k=k: LAMBDA * (x[k - 1] ** D - x[k] ** D))
        jump = np.zeros(levels)
        jump[k] = -1
        if k == levels - 1:
            model.add_transition(jump, lambda x, k=k: x[k])
        else:
            model.add_transition(jump, lambda x, k=k: x[k] - x[k + 1])
    model.set_initial_state(np.zeros(levels))
    start = time.perf_counter()
    pi, V, _ = model.meanFieldExpansionSteadyState(order=1)
    elapsed = time.perf_counter() - start
    ours_start = time.perf_counter()
    ours = refined_jsq(D, LAMBDA, N, K=levels)
    ours_elapsed = time.perf_counter() - ours_start
    diff_v = float(np.max(np.abs(np.asarray(V) - np.array(ours.V))))
    diff_pi = float(np.max(np.abs(np.asarray(pi) - np.array(ours.pi))))
    print(f"rmftool: K={levels}: {elapsed:.3f} s (symq cold at K={levels}: {ours_elapsed:.3f} s); "
          f"max |V_rmftool - V_symq| = {diff_v:.2e}, max |pi diff| = {diff_pi:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rmftool-levels", type=int, default=30)
    parser.add_argument("--rmftool-full", action="store_true")
    args = parser.parse_args()
    symq_times()
    rmftool_compare(args.rmftool_levels)
    if args.rmftool_full:
        rmftool_compare(LEVELS)


if __name__ == "__main__":
    main()
