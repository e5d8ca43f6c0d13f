"""The supermarket model JSQ(d): mean field, refined mean field and simulation at N = 100.

Exponential service, per-server load lam.  The mean-field response time comes from the doubly
exponential fixed point u_k = lam^((d^k-1)/(d-1)); the refined value adds the 1/N term of Gast and
Van Houdt (2018); the simulation (numba, N = 100 servers, probes with replacement) gives a 95%
confidence interval.  Prints a table; saves a plot when matplotlib is installed (to
$SYMQ_EXAMPLE_OUTPUT or the current folder).
"""

import os
from pathlib import Path

from symq.meanfield import refined_jsq, simulate_jsq, solve_supermarket

N = 100
rows = []
print(f"{'d':>2} {'lam':>5} {'E[T] mean field':>16} {'refined N=100':>14} {'simulation N=100':>22}")
for d in (1, 2, 3):
    for lam in (0.5, 0.7, 0.9):
        mean_field = solve_supermarket(d, lam).ET
        refined = refined_jsq(d, lam, N).ET_N
        simulated = simulate_jsq(N, d, lam, n_jobs=400_000, rng=d * 100 + int(lam * 10)).ET
        rows.append((d, lam, mean_field, refined, simulated))
        print(f"{d:>2} {lam:>5.2f} {mean_field:>16.4f} {refined:>14.4f} {str(simulated):>22}")

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: table only (pip install 'symq[plot]')")
else:
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 4))
    grid = np.linspace(0.05, 0.97, 60)
    for d in (1, 2, 3):
        ax.plot(grid, [solve_supermarket(d, lam).ET for lam in grid], label=f"d = {d}")
        points = [r for r in rows if r[0] == d]
        ax.errorbar([r[1] for r in points], [r[4].mean for r in points],
                    yerr=[r[4].half_width for r in points], fmt="o", color="k", markersize=3)
    ax.set_xlabel("per-server load lam")
    ax.set_ylabel("mean response time E[T]")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("JSQ(d): mean field (lines) and simulation at N = 100 (dots)")
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "supermarket_mean_field.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {out}")
