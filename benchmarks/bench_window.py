"""Speed and accuracy of the window-protocol solvers (Altman et al., INFOCOM 2005).

1. Closed form: E[W] of NewReno for 10^6 values of p, vectorised
   (:func:`symq.window.powerlaw.mean_window_newreno`) [target < 1 s], beside the baseline of one
   :class:`~symq.window.powerlaw.PowerLawWindow` per value (timed on 1000 values, scaled).
2. General numerical solver on NewReno at rtol 1e-6 [target: relative error 1e-6 in < 1 s],
   error against the closed form; also HighSpeed TCP (RFC 3649), which has no closed form.
3. Simulator: loss events per second [target >= 10^6] for NewReno (exact path) and HighSpeed
   TCP (tabulated path), beside the baseline of the same exact NewReno recursion run by the
   Python interpreter.

Run: ``python benchmarks/bench_window.py``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from symq.window import highspeed, newreno, simulate_protocol, solve_protocol
from symq.window.powerlaw import PowerLawWindow, mean_window_newreno


def _python_newreno(p: float, n: int, seed: int) -> float:
    """Exact cycle recursion in pure Python: W_pre^2 = y^2 + 2E/p, area E/p (derivations/awp.md)."""
    rng = np.random.default_rng(seed)
    draws = rng.exponential(size=n).tolist()
    y, area, length = 1.0, 0.0, 0.0
    for e in draws:
        top = math.sqrt(y * y + 2.0 * e / p)
        length += top - y
        area += e / p
        y = 0.5 * top
    return area / length


def main() -> None:
    p = np.geomspace(1e-8, 1e-1, 10**6)
    mean_window_newreno(p[:10])  # the constant is computed once
    start = time.perf_counter()
    values = mean_window_newreno(p)
    vectorised = time.perf_counter() - start
    start = time.perf_counter()
    loop = [PowerLawWindow(1.0, 0.0, float(x), 1.0, 0.5).mean() for x in p[:1000]]
    per_value = (time.perf_counter() - start) / 1000
    worst = float(np.max(np.abs(np.array(loop) / values[:1000] - 1)))
    print(f"1. Closed form, 10^6 values of p: {vectorised * 1e3:.1f} ms [target < 1 s]; "
          f"one object per value: {per_value * 1e6:.0f} us each, {per_value * 1e6:.0f} s for "
          f"10^6 ({per_value * 1e6 / vectorised:.0f}x slower); agreement {worst:.1e}")

    for prob in (1e-2, 1e-4):
        tcp = newreno(prob)
        exact = solve_protocol(tcp).mean_window
        solve_protocol(tcp, method="numeric", rtol=1e-6)
        start = time.perf_counter()
        law = solve_protocol(tcp, method="numeric", rtol=1e-6)
        elapsed = time.perf_counter() - start
        print(f"2. Numerical solver, NewReno p={prob:g}, rtol 1e-6: {elapsed * 1e3:.1f} ms "
              f"[target < 1 s], relative error {abs(law.mean_window / exact - 1):.1e} "
              f"(estimate {law.error_estimate:.1e})")
    start = time.perf_counter()
    law = solve_protocol(highspeed(1e-5), rtol=1e-6)
    print(f"   HighSpeed TCP p=1e-5: {(time.perf_counter() - start) * 1e3:.1f} ms, "
          f"E[W] = {law.mean_window:.4f} (error estimate {law.error_estimate:.1e})")

    n = 2_000_000
    for tcp in (newreno(1e-4), highspeed(1e-5)):
        simulate_protocol(tcp, n_losses=10_000, rng=0)  # compile / load the kernels
        start = time.perf_counter()
        est = simulate_protocol(tcp, n_losses=n, rng=1)
        elapsed = time.perf_counter() - start
        print(f"3. Simulator, {tcp.name}: {n / elapsed / 1e6:.2f} M loss events/s "
              f"[target >= 1 M] ({est.method} path), E[W] = {est.mean_window}")
    m = 200_000
    start = time.perf_counter()
    _python_newreno(1e-4, m, 1)
    python_rate = m / (time.perf_counter() - start)
    start = time.perf_counter()
    simulate_protocol(newreno(1e-4), n_losses=n, rng=1)
    numba_rate = n / (time.perf_counter() - start)
    print(f"   baseline: the same NewReno recursion as a Python loop (exponentials drawn by "
          f"numpy beforehand, no statistics) {python_rate / 1e6:.2f} M/s; the numba run with "
          f"batch statistics is {numba_rate / python_rate:.1f}x that")


if __name__ == "__main__":
    main()
