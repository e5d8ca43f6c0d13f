"""A QBD with 50 phases: :func:`symq.markov.solve_qbd` side by side with a plain baseline.

Run: ``python benchmarks/bench_markov_qbd.py [--phases 50] [--load 0.9] [--repeats 5]``

(The issue's comparison with BuTools' ``QBDFundamentalMatrices`` is not here yet: BuTools needs
its own environment, see ``bench_butools.py``.)

The QBD: an MMPP/M/1 queue whose arrival phase is a random walk on ``--phases`` phases
(the arrival rate grows linearly along the walk, scaled so the load is ``--load``), one
server of rate 1.  *symq* is ``solve_qbd`` (logarithmic reduction for ``G``, ``R`` from ``G``,
the boundary, the residual checked).  *baseline* is the natural iteration
``R <- -(A0 + R^2 A2) A1^{-1}`` (Neuts 1981), stopped when ``||R 1 - R_prev 1|| < 1e-14``.
Both report the mean level ``pi1 (I - R)^{-2} 1``; the table gives the seconds (median of
``--repeats``), the residual of ``A0 + R A1 + R^2 A2 = 0`` and the two means' difference.

Measured once (x86_64, 2 CPU cores)::

    phases 50, load 0.9: symq 0.0099 s (residual 3.9e-16, 15 reductions), baseline 1.3851 s
    (residual 9.2e-16, 29561 iterations), ratio 140x; E[N] 672.6734186, |diff| 4.2e-08

(the issue's target: a 50-phase QBD in under 1 s).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from symq.markov import solve_qbd


def blocks(m: int, load: float) -> tuple[np.ndarray, ...]:
    walk = np.zeros((m, m))
    for i in range(m - 1):
        walk[i, i + 1] = walk[i + 1, i] = 0.5
    rates = np.linspace(0.2, 1.8, m)
    alpha = np.full(m, 1.0 / m)          # the walk's stationary law is uniform
    rates *= load / float(alpha @ rates)
    L = np.diag(rates)
    W = walk - np.diag(walk.sum(axis=1))
    A0, A2 = L, np.eye(m)
    A1 = W - L - np.eye(m)
    B1, B0, B2 = W - L, L, np.eye(m)
    return B1, B0, B2, A0, A1, A2


def natural_r(A0: np.ndarray, A1: np.ndarray, A2: np.ndarray) -> tuple[np.ndarray, int]:
    inverse = np.linalg.inv(A1)
    R = np.zeros_like(A0)
    for k in range(1, 1_000_000):
        new = -(A0 + R @ R @ A2) @ inverse
        if np.abs(new.sum(axis=1) - R.sum(axis=1)).max() < 1e-14:
            return new, k
        R = new
    return R, k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, default=50)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    B1, B0, B2, A0, A1, A2 = blocks(args.phases, args.load)
    ours, theirs = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        sol = solve_qbd(B1, B0, B2, A0, A1, A2)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        R, iterations = natural_r(A0, A1, A2)
        theirs.append(time.perf_counter() - start)
    residual = np.abs(A0 + sol.R @ A1 + sol.R @ sol.R @ A2).max()
    base_residual = np.abs(A0 + R @ A1 + R @ R @ A2).max()
    inverse = np.linalg.inv(np.eye(args.phases) - R)
    # the baseline's mean from symq's pi1 (the boundary is the same solve): the R's differ only
    mean_base = float(sol.pi1 @ inverse @ inverse.sum(axis=1))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"phases {args.phases}, load {args.load}: symq {a:.4f} s (residual {residual:.1e}, "
          f"{sol.iterations} reductions), baseline {b:.4f} s (residual {base_residual:.1e}, "
          f"{iterations} iterations), ratio {b / a:.0f}x; E[N] {sol.mean_level:.10g}, "
          f"|diff| {abs(sol.mean_level - mean_base):.1e}")


if __name__ == "__main__":
    main()
