"""The registered ``dispatch`` model: ``symq solve dispatch policy=optimal m=2 rho=0.4 --json``.

``policy`` is one of ``rnd``, ``rr``, ``jsq``, ``lwl``, ``sita`` (with ``h=``), ``sita-e``,
``sita-opt``, ``fpi-rnd``, ``fpi-sita``, ``optimal``.  The mean response time ``ET`` comes from

* an exact formula where one exists (``method: exact``: Pollaczek-Khinchine for RND and SITA,
  E_m/M/1 for round-robin, M/M/m for LWL and the JSQ CTMC with exponential sizes);
* value iteration for ``optimal`` (``method: value-iteration``, Richardson-extrapolated over the
  steps ``delta`` and ``delta/2``, with ``g_bounds`` propagated from the Odoni brackets);
* simulation otherwise (``method: simulation``, with a 99% confidence interval).

Examples
--------
>>> r = solve_dispatch("lwl", 2, 0.4)
>>> r["method"], round(r["ET"], 12)     # M/M/2: 1/(1 - rho^2)
('exact', 1.190476190476)
"""

from __future__ import annotations

import time
from typing import Any

from symq.core.errors import InvalidParameter
from symq.core.parameters import Choice, IntegerAtLeast, Parameter, PositiveReal
from symq.core.registry import ModelSpec, register_model
from symq.core.result import Exactness, Result

from .exact import exact_mean_response
from .sizes import SIZE_NAMES, get_sizes

__all__ = ["DISPATCH", "solve_dispatch", "POLICY_CHOICES", "default_truncation"]

POLICY_CHOICES = ("rnd", "rr", "jsq", "lwl", "sita", "sita-e", "sita-opt", "fpi-rnd", "fpi-sita",
                  "optimal")


def default_truncation(rho: float) -> float:
    """Backlog truncation ``U`` by load (the optimal policy at high load keeps one long queue)."""
    return 24.0 if rho <= 0.5 else (48.0 if rho <= 0.8 else 96.0)


def solve_dispatch(policy: str, m: int, rho: float, sizes: str = "exp", scv: float = 4.0,
                   h: float | None = None, delta: float | None = None,
                   umax: float | None = None, n_jobs: int = 2_000_000, seed: int = 1) -> Result:
    """Mean response time of one dispatching policy (see the module notes for the method)."""
    start = time.perf_counter()
    law = get_sizes(sizes, scv)
    key = str(policy).lower()
    values: dict[str, Any] = {}
    if key == "optimal":
        from .vi import richardson, solve_optimal

        # the fine grid is delta/2; m = 3 has ~N^3/6 sorted states, so it starts coarser
        step = (0.1 if m <= 2 else 0.4) if delta is None else float(delta)
        top = default_truncation(rho) if umax is None else float(umax)
        extrapolated = richardson(solve_optimal, m, rho, law, delta=step, U=top)
        values.update(ET=extrapolated.g, method="value-iteration",
                      g_bounds=[extrapolated.g_low, extrapolated.g_high],
                      grids=[{"delta": r.delta, "U": r.U, "g": r.g, "g_low": r.g_low,
                              "g_high": r.g_high, "iterations": r.total_iterations}
                             for r in extrapolated.results])
        exactness = Exactness.NUMERIC
    else:
        thresholds = None if h is None else [float(h)]
        try:
            if key == "fpi-rnd":  # FPI from an equal split is LWL (symq.dispatch.symbolic)
                et = exact_mean_response("lwl", m, rho, law)
            elif key == "fpi-sita":
                raise InvalidParameter("policy", key, "a policy with an exact formula")
            else:
                et = exact_mean_response(key, m, rho, law, thresholds=thresholds)
            values.update(ET=float(et), method="exact")
            exactness = Exactness.EXACT
        except InvalidParameter as exc:
            if exc.name not in ("policy", "sizes"):
                raise
            from .policies import get_policy
            from .simulation import simulate_dispatch

            params = {} if h is None else {"h": float(h)}
            est = simulate_dispatch(get_policy(key, **params), m, rho, law, n_jobs=n_jobs,
                                    rng=seed, level=0.99)
            values.update(ET=float(est.ET.mean), ET_half_width=float(est.ET.half_width),
                          method="simulation", level=0.99)
            exactness = Exactness.SIMULATED
    return Result(model="dispatch",
                  params={"policy": key, "m": m, "rho": rho, "sizes": law.name},
                  values=values, method=str(values["method"]), exactness=exactness,
                  timings={"solve": time.perf_counter() - start})


DISPATCH = register_model(ModelSpec(
    name="dispatch",
    summary=("size-aware dispatching to m FCFS servers: mean response time of RND, RR, JSQ, "
             "LWL, SITA, FPI or the optimal policy by value iteration (Hyytiä & Righter 2024)"),
    parameters=(
        Parameter("policy", Choice(POLICY_CHOICES), typical="optimal",
                  description="dispatching policy: " + ", ".join(POLICY_CHOICES)),
        Parameter("m", IntegerAtLeast(1), typical=2, description="number of servers"),
        Parameter("rho", PositiveReal(), typical=0.4,
                  description="load per server, lam E[X]/m; must be < 1"),
        Parameter("sizes", Choice(SIZE_NAMES), required=False, default="exp",
                  description="job-size law with mean 1: " + ", ".join(SIZE_NAMES)),
        Parameter("scv", PositiveReal(), required=False, default=4.0,
                  description="SCV of the h2 size law"),
        Parameter("h", PositiveReal(), required=False, description="SITA threshold (m = 2)"),
        Parameter("delta", PositiveReal(), required=False,
                  description="value-iteration step (coarse grid; delta/2 is the fine one)"),
        Parameter("umax", PositiveReal(), required=False, description="backlog truncation U"),
    ),
    solve=solve_dispatch,
    scalar_outputs=lambda r: {"ET": float(r.values["ET"])},
    paper="hyytia-righter",
))
