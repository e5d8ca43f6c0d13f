"""Optimal size-aware dispatching to two FCFS servers: decision regions and the value function.

Two identical servers, Poisson arrivals at load rho = 0.4 per server, exponential job sizes with
mean 1 (Hyytiä & Righter, arXiv 2402.08142).  Relative value iteration on the steps 0.1 and 0.05
(backlogs up to 24), Richardson-extrapolated, gives the optimal mean response time with its
stated error (the grid difference), beside the exact values of the heuristics.  The Odoni
bracket of each grid is printed too, labelled: it bounds the discretised problem only.  The
plots show, for a few job sizes, which server a job joins as a function of the
two backlogs (short jobs to the shorter queue, long jobs to the longer one), and v(u, u) along
the diagonal against the report's 0.56 u^2 and the random split's lam u^2/(2(1 - rho))
(``symq.dispatch.plot_decision_regions`` and ``plot_value_diagonal``).  Saved to
$SYMQ_EXAMPLE_OUTPUT or the current folder when matplotlib is installed.
"""

import os
from pathlib import Path

import numpy as np

from symq.dispatch import (
    exact_mean_response,
    plot_decision_regions,
    plot_value_diagonal,
    richardson,
    solve_optimal,
)
from symq.laws import Exponential

RHO = 0.4
sizes = Exponential(1.0)
ext = richardson(solve_optimal, 2, RHO, sizes, delta=0.1, U=24.0)
result = ext.results[-1]          # the fine grid (delta = 0.05): value function and policy
print(f"optimal (value iteration, Richardson over delta = 0.1, 0.05): E[T] = {ext.ET:.6f} "
      f"+- {ext.error_estimate:.1e} (grid difference; truncation at U = 24 not included)")
for r in ext.results:
    print(f"   grid delta = {r.delta:g}: g = {r.ET:.6f}, Odoni bracket of this discrete MDP "
          f"[{r.ET_low:.10f}, {r.ET_high:.10f}], {r.total_iterations} iterations")
for name in ("rnd", "rr", "jsq", "lwl", "sita-e", "sita-opt"):
    print(f"{name:>9}: E[T] = {exact_mean_response(name, 2, RHO, sizes).ET:.6f} (exact)")
print(f"v(u, u) ~ c u^2 on [2, 10]: c = {result.diagonal_constant(2.0, 10.0):.3f} "
      "(the report: about 0.56)")
for u in ((0.0, 1.0), (0.0, 4.0), (1.0, 3.0), (2.0, 4.0)):
    print(f"threshold x*{u}: {result.threshold(*u):.3f}  (larger jobs join the longer queue)")

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: text only (pip install 'symq[plot]')")
else:
    fig, axes = plt.subplots(1, 5, figsize=(17, 3.8), layout="constrained")
    for ax, x in zip(axes[:4], (0.5, 1.0, 2.0, 4.0)):
        plot_decision_regions(result, x, u_max=8.0, ax=ax)
    plot_value_diagonal(result, u_max=12.0, ax=axes[4])
    axes[4].plot(np.linspace(0, 12, 121), 0.56 * np.linspace(0, 12, 121) ** 2, "k-.",
                 linewidth=0.8, label="0.56 u^2 (report)")
    axes[4].legend(fontsize=7)
    fig.suptitle("Optimal dispatching, m = 2, rho = 0.4: blue = server 1, red = server 2")
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "dispatch_optimal_policy.png"
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"plot saved to {out}")
