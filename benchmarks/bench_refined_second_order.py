"""The 1/N^2 term of the refined mean field of JSQ(d) against finite-N simulation.

For JSQ(2) at load ``lam`` (default 0.9) and N = 10, 20, 50 servers, prints the mean-field
``E[T]``, the refined ``1/N`` estimate (Gast & Van Houdt, SIGMETRICS 2018, Theorem 1), the
``1/N^2`` estimate (Gast, Bortolussi & Tribastone, Performance Evaluation 2019) and a
simulation of the N-server system (``jsq-sim``: the ``d`` probes drawn with replacement, as
in the mean-field model) with its 99% batch-means interval, and the error of each estimate
against the simulation.

Optionally (``--rmf-tool PATH``: a directory holding the peer rmf_tool's ``src/rmf_tool.py``
and its ``test_twoChoice.py``; not a symq dependency, nothing of it is copied here) the
``1/N^2`` term of the same truncated model is compared with rmf_tool's steady-state solver
and with the long-time limit of its transient solver, and both are timed.

Run: ``python benchmarks/bench_refined_second_order.py [--jobs 200000000] [--rmf-tool DIR]``
(the default 2e8 jobs per N take about a minute each on one core).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from symq.meanfield import jsq_process, refined_jsq, simulate_jsq
from symq.meanfield.supermarket import LAM, closed_form_tail


def against_simulation(lam: float, jobs: int, seed: int) -> None:
    print(f"JSQ(2), lam = {lam}: E[T] estimates against simulation ({jobs:.3g} jobs, "
          "50 batches, 99% intervals)")
    print(f"{'N':>4} {'mean field':>11} {'1/N':>9} {'1/N^2':>9} {'simulation':>19} "
          f"{'err MF':>8} {'err 1/N':>8} {'err 1/N^2':>9}")
    for N in (10, 20, 50):
        r = refined_jsq(2, lam, N, order=2)
        start = time.perf_counter()
        sim = simulate_jsq(N, 2, lam, n_jobs=jobs, n_batches=50, level=0.99, rng=seed + N)
        seconds = time.perf_counter() - start
        et = sim.ET
        print(f"{N:>4} {r.ET:>11.5f} {r.ET_N:>9.5f} {r.ET_N2:>9.5f} "
              f"{et.mean:>10.5f} ± {et.half_width:.5f} {r.ET - et.mean:>8.4f} "
              f"{r.ET_N - et.mean:>8.4f} {r.ET_N2 - et.mean:>9.4f}   ({seconds:.0f} s)")


def against_rmf_tool(path: str, lam: float) -> None:
    sys.path[:0] = [path]
    import matplotlib

    matplotlib.use("Agg")
    from test_twoChoice import dChoiceModel  # the peer's own JSQ(d) declaration

    for K in (5, 10):
        start = time.perf_counter()
        peer = dChoiceModel(K, lam, 2).meanFieldExpansionSteadyState(order=2)
        peer_seconds = time.perf_counter() - start
        start = time.perf_counter()
        process = jsq_process(2, K)
        fp = process.fixed_point(np.clip(closed_form_tail(2, lam, K), 0, 1), {LAM: lam})
        ours = process.refined(fp.x, {LAM: lam}, order=2)
        our_seconds = time.perf_counter() - start
        print(f"K = {K}: |pi - peer| {np.max(np.abs(peer[0] - ours.pi)):.1e}, "
              f"|V - peer| {np.max(np.abs(peer[1] - ours.V)):.1e}, "
              f"|V2 - peer| {np.max(np.abs(peer[2] - ours.V2)):.1e} (max |V2| "
              f"{np.max(np.abs(ours.V2)):.3g}); rmf_tool {peer_seconds:.2f} s, symq (cold: "
              f"derivation, compilation, solve) {our_seconds:.2f} s "
              f"= {peer_seconds / our_seconds:.0f}x")
        if K == 5:
            _t, _x, _v, a_t, _ = dChoiceModel(K, lam, 2).meanFieldExpansionTransient(
                order=2, time=400)
            print(f"        the peer's transient V2(t = 400) - our steady V2: "
                  f"{np.max(np.abs(a_t[-1] - ours.V2)):.1e}; - the peer's steady V2: "
                  f"{np.max(np.abs(a_t[-1] - peer[2])):.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lam", type=float, default=0.9)
    parser.add_argument("--jobs", type=int, default=200_000_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rmf-tool", default=None, help="directory of the peer rmf_tool")
    args = parser.parse_args()
    against_simulation(args.lam, args.jobs, args.seed)
    if args.rmf_tool:
        against_rmf_tool(args.rmf_tool, args.lam)


if __name__ == "__main__":
    main()
