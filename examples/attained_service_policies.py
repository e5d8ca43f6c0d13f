"""Load balancing with attained-service reporting: E[W] of eight policies against the load.

The setting of Hellemans & Van Houdt's main figure (IEEE/ACM ToN 2021): d = 5 probes, job sizes
H2 with mean 1, SCV 10 and balanced means, threshold T = 2 for the RE policies.  The mean-field
waiting time of each policy comes from the cavity queue with age layers
(``symq.meanfield.attained.solve_attained``, through ``attained_policies_data``, the data twin
of ``plot_attained_policies``); layers of width 0.25 up to age 20 here, to keep the script quick
(0.1 up to 40 reproduces the authors' published numbers).  Prints a table of E[W] relative to
SQ(d); saves a plot when matplotlib is installed (to $SYMQ_EXAMPLE_OUTPUT or the current
folder).  The same curves from the command line, one policy at a time:

    symq sweep attained policy=LEW d=5 scv=10 lam=0.3:0.95:14 --json
"""

import os
from pathlib import Path

from symq.laws import hyperexponential2
from symq.meanfield.attained import POLICY_NAMES, attained_policies_data, plot_attained_policies

D, SCV = 5, 10.0
data = attained_policies_data(POLICY_NAMES, D, (0.3, 0.5, 0.7, 0.8, 0.9),
                              hyperexponential2(1.0, SCV, 0.5), delta=0.25, rep_max=20.0, B=40)

print("E[W] relative to SQ(d), d = 5, H2 sizes with SCV 10 (below 1: better than SQ(d))")
print(f"{'lam':>6} " + " ".join(f"{p:>10}" for p in POLICY_NAMES))
for i, lam in enumerate(data["lam"]):
    print(f"{lam:>6.3f} " + " ".join(f"{1.0 - data['reduction'][row, i]:>10.3f}"
                                     for row in range(len(POLICY_NAMES))))

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: table only (pip install 'symq[plot]')")
else:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    plot_attained_policies(data=data, ax=left)
    plot_attained_policies(data=data, relative=True, ax=right)
    right.set_ylim(-1.0, 1.0)
    fig.suptitle("Attained-service policies, d = 5, H2 sizes (SCV 10): mean field")
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "attained_service_policies.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {out}")
