"""Stationary window densities of TCP NewReno, Scalable TCP and HighSpeed TCP.

Per-packet loss probability p = 1e-5 (losses at rate p w per round-trip time).  NewReno and
Scalable TCP are power-law profiles with the q-series closed form; HighSpeed TCP (RFC 3649)
goes through the general numerical solver.  Each mean is checked against 2e5 simulated loss
cycles.  Prints a table; saves a plot of the densities (``symq.window.plot_window_densities``)
when matplotlib is installed (to $SYMQ_EXAMPLE_OUTPUT or the current folder).
"""

import os
from pathlib import Path

import numpy as np

from symq.window import highspeed, newreno, plot_window_densities, scalable, stability
from symq.window.simulation import simulate_protocol
from symq.window.solve import solve_protocol

P = 1e-5
laws = {}
print(f"{'protocol':<15} {'stability':<10} {'E[W]':>10} {'simulated E[W] (95% CI)':>26} "
      f"{'E[W^2]':>12} {'losses/RTT':>11}  method")
for tcp in (newreno(P), scalable(P), highspeed(P)):
    law = solve_protocol(tcp)
    laws[tcp.name] = law
    sim = simulate_protocol(tcp, n_losses=200_000, rng=1)
    print(f"{tcp.name:<15} {stability(tcp).status:<10} {law.mean_window:>10.2f} "
          f"{str(sim.mean_window):>26} {law.mean_square_window:>12.4g} "
          f"{law.loss_rate:>11.4g}  {law.method}")

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: table only (pip install 'symq[plot]')")
else:
    fig, ax = plt.subplots(figsize=(6.5, 4))
    plot_window_densities(laws, w=np.geomspace(10, 2e4, 600), ax=ax)
    ax.set_title(f"Stationary window laws, per-packet loss probability p = {P:g}")
    ax.legend()
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "tcp_window_densities.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {out}")
