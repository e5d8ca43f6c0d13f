"""The supermarket model JSQ(d): mean field, refined mean field and simulation at N = 100.

Exponential service, per-server load lam.  The mean-field response time comes from the doubly
exponential fixed point u_k = lam^((d^k-1)/(d-1)); the refined value adds the 1/N term of Gast and
Van Houdt (2018); the simulation (numba, N = 100 servers, probes with replacement) gives a 95%
confidence interval.  The numbers come from ``symq.meanfield.jsq_response_data`` (the data twin
of ``plot_jsq_response``).  Prints a table; saves a plot when matplotlib is installed (to
$SYMQ_EXAMPLE_OUTPUT or the current folder).
"""

import os
from pathlib import Path

import numpy as np

from symq.meanfield import jsq_response_data, plot_jsq_response

N = 100
# simulated loads and run lengths: each batch of a run must span 64 relaxation times
# (1 + scv)/(1 - lam)^2; with d = 1 the N queues are independent M/M/1 queues, each relaxing in
# its own departures, so the run is N times longer (a shorter run is refused with the length
# it needs)
SIMULATED = {1: ((0.5,), 1_600_000), 2: ((0.5, 0.7, 0.9), 400_000),
             3: ((0.5, 0.7, 0.9), 400_000)}
curves = np.linspace(0.05, 0.95, 13)
data = {d: jsq_response_data(d, N, curves, loads, n_jobs=n_jobs, rng=100 * d)
        for d, (loads, n_jobs) in SIMULATED.items()}
print(f"{'d':>2} {'lam':>5} {'E[T] mean field':>16} {'refined N=100':>14} {'simulation N=100':>22}")
for d, rows in data.items():
    for i, lam in enumerate(rows["sim_lam"]):
        simulated = f"{rows['sim_ET'][i]:.4f} +- {rows['sim_half_width'][i]:.4f}"
        print(f"{d:>2} {lam:>5.2f} {rows['ET_at_sim'][i]:>16.4f} {rows['ET_N_at_sim'][i]:>14.4f} "
              f"{simulated:>22}")

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: table only (pip install 'symq[plot]')")
else:
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for rows in data.values():
        plot_jsq_response(data=rows, ax=ax)
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("JSQ(d): mean field (solid), refined (dashed), simulation at N = 100 (dots)")
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "supermarket_mean_field.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {out}")
