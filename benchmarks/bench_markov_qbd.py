"""A QBD with 50 phases: :func:`symq.markov.solve_qbd` beside a plain baseline and BuTools.

Run: ``python benchmarks/bench_markov_qbd.py [--phases 50] [--load 0.9] [--repeats 5]
[--butools-precision 1e-14 ...]``

BuTools is not a dependency of symq and none of its code is here.  Its
``butools.mam.QBDFundamentalMatrices`` runs beside symq when ``BUTOOLS_PYTHON`` (the python of a
virtual environment with numpy < 2 and scipy < 1.14) and ``BUTOOLS_PATH`` (BuTools' ``Python``
folder) are set, as in ``bench_butools.py``, e.g.::

    python3.11 -m venv /tmp/butools_venv
    /tmp/butools_venv/bin/pip install "numpy<2" "scipy<1.14"
    # BuTools' source: github.com/ghorvath78/butools, its Python folder in /tmp/butools/Python
    BUTOOLS_PYTHON=/tmp/butools_venv/bin/python BUTOOLS_PATH=/tmp/butools/Python \\
        python benchmarks/bench_markov_qbd.py --phases 50 --load 0.9

The QBD: an MMPP/M/1 queue whose arrival phase is a random walk on ``--phases`` phases
(the arrival rate grows linearly along the walk, scaled so the load is ``--load``), one
server of rate 1.  *symq* is ``solve_qbd`` (logarithmic reduction for ``G``, ``R`` from ``G``,
the boundary, the residual checked).  *baseline* is the natural iteration
``R <- -(A0 + R^2 A2) A1^{-1}`` (Neuts 1981), stopped when ``||R 1 - R_prev 1|| < 1e-14``.
*BuTools* is ``QBDFundamentalMatrices(B=A2, L=A1, F=A0, "R", precision=p)`` (its ``B`` is the
down block, ``F`` the up one; logarithmic reduction with the shift technique on the uniformised
chain, at most 50 iterations, stopped when ``min(||BB||, ||BF||) <= p``; its default ``p`` is
1e-14), once for each ``--butools-precision``, timed inside its subprocess around the call only.

Each ``R`` is judged here, in this process, the same way for all three: the residual
``||A0 + R A1 + R^2 A2||_inf`` (the largest absolute row sum) and the mean level
``pi1 (I - R)^{-2} 1``, with ``[pi0 pi1]`` solved from that ``R`` (``[pi0 pi1] [[B1, B0], [B2,
A1 + R A2]] = 0``, ``pi0 1 + pi1 (I - R)^{-1} 1 = 1``); ``|diff|`` is the difference from the
mean computed so from symq's ``R`` (whose own ``mean_level`` is printed as ``E[N]``).  The
seconds are medians of ``--repeats``; the ratios are other/symq.

Measured once (x86_64, 2 CPU cores; BuTools 2.0, commit d4be9d1dcd80 of 2016-09-08, numpy 1.26.4,
scipy 1.13.1; symq with numpy 2.4.6, scipy 1.17.1)::

    --phases 50 --load 0.9 --repeats 21 --butools-precision 1e-14 1e-20:
    E[N] 672.6734186
      symq      0.0047 s  residual 7.0e-16, 15 reductions
      baseline  0.7828 s  residual 1.5e-14, |diff| 2.4e-08, 29561 iterations, ratio 167x
      BuTools   0.0024 s  residual 1.3e-15, |diff| 1.3e-10, precision 1e-14, ratio 0.5x
      BuTools   0.0023 s  residual 1.3e-15, |diff| 1.3e-10, precision 1e-20, ratio 0.5x
    --phases 50 --load 0.99 --repeats 9 --butools-precision 1e-14 1e-20:
    E[N] 10712.46727
      symq      0.0054 s  residual 1.2e-15, 19 reductions
      baseline  11.1122 s  residual 1.5e-14, |diff| 4.2e-05, 306350 iterations, ratio 2041x
      BuTools   0.0025 s  residual 1.7e-15, |diff| 1.9e-08, precision 1e-14, ratio 0.5x
      BuTools   0.0025 s  residual 1.7e-15, |diff| 1.9e-08, precision 1e-20, ratio 0.5x

The issue's target (a 50-phase QBD in under 1 s) is met by both tools; at equal accuracy
(residuals within a factor 2 of each other, means within 2e-12 relative) BuTools' call takes
about half symq's time. The two calls do not do the same work: BuTools' computes ``R`` only (11
reductions at both loads, against symq's 15 and 19: its shift technique), while ``solve_qbd``
also checks its input, computes the drift and the phase generator's closed classes, solves the
boundary by GTH and checks the residuals of ``G``, ``R`` and the boundary (its reduction is
about half its time). BuTools' precision changes nothing here: its stopping test ``min(||BB||,
||BF||)`` squares at each step (at load 0.9: 9e-6, 5e-11, 2e-21 after steps 9, 10, 11; at load
0.99: 1e-13, 6e-27 after steps 10, 11), so 1e-6, 1e-14 (the default) and 1e-20 give the same
``R`` to the digits shown; its default is not looser than symq's. The baseline's load-0.99
seconds were taken with the machine otherwise busy (load average 4 on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

from symq.markov import solve_qbd

_DRIVER = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, sys.argv[1])
import numpy as np
import butools
from butools.mam import QBDFundamentalMatrices
butools.verbose = False
job = json.load(sys.stdin)
B, L, F = (np.array(job[name]) for name in ("B", "L", "F"))
out = []
for precision in job["precisions"]:
    times, R = [], None
    for _ in range(job["repeats"]):
        start = time.perf_counter()
        R = QBDFundamentalMatrices(B, L, F, "R", precision)
        times.append(time.perf_counter() - start)
    out.append({"precision": precision, "times": times, "R": np.asarray(R).tolist()})
print(json.dumps(out))
"""


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


def residual(R: np.ndarray, A0: np.ndarray, A1: np.ndarray, A2: np.ndarray) -> float:
    """``||A0 + R A1 + R^2 A2||_inf``, the largest absolute row sum."""
    return float(np.linalg.norm(A0 + R @ A1 + R @ R @ A2, np.inf))


def mean_level(R: np.ndarray, B1: np.ndarray, B0: np.ndarray, B2: np.ndarray,
               A1: np.ndarray, A2: np.ndarray) -> float:
    """``pi1 (I - R)^{-2} 1`` with the boundary ``[pi0 pi1]`` solved from ``R`` alone."""
    m0, m = B1.shape[0], A1.shape[0]
    censored = np.block([[B1, B0], [B2, A1 + R @ A2]])
    geometric = np.linalg.solve(np.eye(m) - R, np.ones(m))       # (I - R)^{-1} 1
    system = censored.copy()
    system[:, 0] = np.concatenate([np.ones(m0), geometric])      # the normalisation
    rhs = np.zeros(m0 + m)
    rhs[0] = 1.0
    pi = np.linalg.solve(system.T, rhs)
    return float(pi[m0:] @ np.linalg.solve(np.eye(m) - R, geometric))


def run_butools(A0: np.ndarray, A1: np.ndarray, A2: np.ndarray, precisions: list[float],
                repeats: int, timeout: float = 1200) -> list[dict] | None:
    """BuTools' ``QBDFundamentalMatrices(A2, A1, A0, "R", p)`` for each ``p`` of
    ``precisions``, ``repeats`` times each, in one subprocess of BUTOOLS_PYTHON with
    BUTOOLS_PATH on its path.

    One ``{"precision", "times" (seconds), "R" (the last call's)}`` per precision, in order, or
    None, with the reason printed, when the variables are not set or the run fails.
    """
    python, path = os.environ.get("BUTOOLS_PYTHON"), os.environ.get("BUTOOLS_PATH")
    if not (python and path):
        return None
    job = {"repeats": repeats, "precisions": precisions,
           "B": A2.tolist(), "L": A1.tolist(), "F": A0.tolist()}
    try:
        proc = subprocess.run([python, "-c", _DRIVER, path], input=json.dumps(job),
                              capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print("BuTools run failed:", exc)
        return None
    if proc.returncode != 0:
        print("BuTools run failed:", proc.stderr[-2000:])
        return None
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", type=int, default=50)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--butools-precision", type=float, nargs="+", default=[1e-14],
                        help="BuTools' precision argument(s) (its default: 1e-14)")
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
    a, b = statistics.median(ours), statistics.median(theirs)
    mean_ours = mean_level(sol.R, B1, B0, B2, A1, A2)

    def judged(R: np.ndarray) -> str:
        return (f"residual {residual(R, A0, A1, A2):.1e}, |diff| "
                f"{abs(mean_level(R, B1, B0, B2, A1, A2) - mean_ours):.1e}")

    print(f"phases {args.phases}, load {args.load}: E[N] {sol.mean_level:.10g} "
          f"(from symq's R here: {mean_ours:.10g})")
    print(f"  symq      {a:.4f} s  residual {residual(sol.R, A0, A1, A2):.1e}, "
          f"{sol.iterations} reductions")
    print(f"  baseline  {b:.4f} s  {judged(R)}, {iterations} iterations, ratio {b / a:.0f}x")
    runs = None
    if os.environ.get("BUTOOLS_PYTHON") and os.environ.get("BUTOOLS_PATH"):
        runs = run_butools(A0, A1, A2, args.butools_precision, args.repeats)
    else:
        print("  (set BUTOOLS_PYTHON and BUTOOLS_PATH to run BuTools beside symq)")
    for run in runs or []:
        c = statistics.median(run["times"])
        print(f"  BuTools   {c:.4f} s  {judged(np.array(run['R']))}, precision "
              f"{run['precision']:.0e}, ratio {c / a:.1f}x")


if __name__ == "__main__":
    main()
