"""Price of anarchy against the load for a few processor-sharing farms.

Altman, Ayesta, Prabhu (2011): selfish jobs use fewer servers than the social optimum, and
the price of anarchy PoA = J^NE / J* grows with the load.  Dotted lines: the heavy-traffic
limit (sum C)(sum w)/(sum sqrt(w C))^2.  Prints a table; also saves a plot when matplotlib is
installed (to $SYMQ_EXAMPLE_OUTPUT or the current folder).
"""

import os
from pathlib import Path

import numpy as np

from symq.routing.plots import plot_poa_curve, poa_curve_data

FARMS = {
    "equal costs C=4,2,1": ([4, 2, 1], [1, 1, 1]),
    "paper-like C=4,2,1 w=1,2,4": ([4, 2, 1], [1, 2, 4]),
    "expensive fast server C=1,1 w=1,10": ([1, 1], [1, 10]),
}

print(f"{'farm':<38}{'load':>6}{'PoA':>9}{'|S_OPT|':>9}{'|S_NE|':>8}")
for name, (C, w) in FARMS.items():
    data = poa_curve_data(C, w, n=9, upto=0.95)
    for r, p, no, nn in zip(data["rho"], data["poa"], data["n_opt"], data["n_ne"]):
        print(f"{name:<38}{r / np.sum(C):>6.2f}{p:>9.4f}{no:>9d}{nn:>8d}")
    print(f"{name:<38}{'->1':>6}{data['heavy_traffic']:>9.4f}   (heavy-traffic limit)")

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: table only (pip install 'symq[plot]' for the plot)")
else:
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (C, w) in FARMS.items():
        plot_poa_curve(C, w, ax=ax, n=150, label=name)
    ax.legend(fontsize=8)
    ax.set_title("Price of anarchy in PS server farms")
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "routing_price_of_anarchy.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {out}")
