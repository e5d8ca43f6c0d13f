"""Routing to PS servers: closed forms (prefix scan) vs scipy.optimize, and large farms.

Run: ``python benchmarks/bench_routing.py``.  Prints, measured side by side in one run:

* closed-form social optimum and Wardrop equilibrium vs ``scipy.optimize`` (SLSQP on J and
  on the potential Phi) at K = 1000: time ratio and the largest relative difference in loads
  and cost;
* the closed-form solve time at K = 10^5 (both solutions and the PoA).
"""

from __future__ import annotations

import time

import numpy as np

from symq.routing import price_of_anarchy, social_optimum, wardrop_equilibrium
from symq.routing.numeric import minimize_potential, minimize_social_cost


def _farm(K: int, rng: np.random.Generator, load: float = 0.7):
    C = rng.uniform(0.5, 5.0, K)
    w = rng.uniform(0.5, 5.0, K)
    return C, w, load * C.sum()


def _best_of(func, repeat: int = 5) -> tuple[float, object]:
    best, value = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = func()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    rng = np.random.default_rng(2011)
    C, w, rho = _farm(1000, rng)
    t_closed_opt, opt = _best_of(lambda: social_optimum(C, w, rho))
    t_closed_ne, ne = _best_of(lambda: wardrop_equilibrium(C, w, rho))
    t_scipy_opt, num_opt = _best_of(lambda: minimize_social_cost(C, w, rho), repeat=1)
    t_scipy_ne, num_ne = _best_of(lambda: minimize_potential(C, w, rho), repeat=1)
    scale = C
    err_opt = np.max(np.abs(opt.loads - num_opt.loads) / scale)
    err_ne = np.max(np.abs(ne.loads - num_ne.loads) / scale)
    cost_opt = abs(opt.cost - num_opt.cost) / opt.cost
    cost_ne = abs(ne.cost - num_ne.cost) / ne.cost
    print("K = 1000 (random C, w in [0.5, 5], load 0.7 of capacity)")
    print(f"  optimum     : closed form {t_closed_opt * 1e3:8.3f} ms, "
          f"scipy SLSQP {t_scipy_opt:8.3f} s, ratio {t_scipy_opt / t_closed_opt:,.0f}x; "
          f"max |dx|/C {err_opt:.2e}, cost rel. {cost_opt:.2e}")
    print(f"  equilibrium : closed form {t_closed_ne * 1e3:8.3f} ms, "
          f"scipy SLSQP {t_scipy_ne:8.3f} s, ratio {t_scipy_ne / t_closed_ne:,.0f}x; "
          f"max |dx|/C {err_ne:.2e}, cost rel. {cost_ne:.2e}")

    C, w, rho = _farm(100_000, rng)
    t_big, poa = _best_of(lambda: price_of_anarchy(C, w, rho), repeat=3)
    t_big_opt, opt = _best_of(lambda: social_optimum(C, w, rho), repeat=3)
    print("K = 100000")
    print(f"  social optimum alone : {t_big_opt * 1e3:8.2f} ms ({len(opt.active)} servers used)")
    print(f"  optimum + equilibrium + PoA : {t_big * 1e3:8.2f} ms (PoA = {poa:.6f})")


if __name__ == "__main__":
    main()
