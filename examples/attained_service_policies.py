"""Load balancing with attained-service reporting: E[W] of eight policies against the load.

The setting of Hellemans & Van Houdt's main figure (IEEE/ACM ToN 2021): d = 5 probes, job sizes
H2 with mean 1, SCV 10 and balanced means, threshold T = 2 for the RE policies.  The mean-field
waiting time of each policy comes from the cavity queue with age layers
(``symq.meanfield.attained.solve_attained``); layers of width 0.25 up to age 20 here, to keep the
script quick (0.1 up to 40 reproduces the authors' published numbers).  Prints a table of E[W]
relative to SQ(d); saves a plot when matplotlib is installed (to $SYMQ_EXAMPLE_OUTPUT or the
current folder).  The same curves from the command line, one policy at a time:

    symq sweep attained policy=LEW d=5 scv=10 lam=0.3:0.95:14 --json
"""

import os
import warnings
from pathlib import Path

import numpy as np

from symq.meanfield import hyperexponential2
from symq.meanfield.attained import POLICY_NAMES, TruncationWarning, solve_attained

D, SCV = 5, 10.0
alpha, A = hyperexponential2(1.0, SCV, 0.5)
loads = np.array([0.3, 0.5, 0.7, 0.8, 0.9])
ew = {}
for policy in POLICY_NAMES:
    values = []
    for lam in loads:
        with warnings.catch_warnings():
            warnings.simplefilter("error", TruncationWarning)
            try:
                fp = solve_attained(policy, D, lam, (alpha, A), delta=0.25, rep_max=20.0, B=40)
            except TruncationWarning:  # heavy queues near lam = 1: more levels
                fp = solve_attained(policy, D, lam, (alpha, A), delta=0.25, rep_max=20.0, B=160)
        values.append(fp.EW)
    ew[policy] = np.array(values)

print("E[W] relative to SQ(d), d = 5, H2 sizes with SCV 10 (below 1: better than SQ(d))")
print(f"{'lam':>6} " + " ".join(f"{p:>10}" for p in POLICY_NAMES))
for i, lam in enumerate(loads):
    print(f"{lam:>6.3f} " + " ".join(f"{ew[p][i] / ew['SQ'][i]:>10.3f}" for p in POLICY_NAMES))

try:
    import matplotlib

    matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: table only (pip install 'symq[plot]')")
else:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for policy in POLICY_NAMES:
        left.plot(loads, ew[policy], marker="o", markersize=3, label=policy)
        right.plot(loads, 1 - ew[policy] / ew["SQ"], marker="o", markersize=3, label=policy)
    left.set_yscale("log")
    left.set_xlabel("load lam")
    left.set_ylabel("mean waiting time E[W]")
    right.set_xlabel("load lam")
    right.set_ylabel("relative reduction of E[W] over SQ(d)")
    right.set_ylim(-1.0, 1.0)
    left.legend(fontsize=7)
    fig.suptitle("Attained-service policies, d = 5, H2 sizes (SCV 10): mean field")
    out = Path(os.environ.get("SYMQ_EXAMPLE_OUTPUT", ".")) / "attained_service_policies.png"
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {out}")
