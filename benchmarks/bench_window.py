"""Speed and accuracy of the window-protocol solvers (Altman et al., INFOCOM 2005).

1. Closed form: E[W] of NewReno for 10^6 values of p, vectorised
   (:func:`symq.window.powerlaw.mean_window_newreno`) [target < 1 s], beside the baseline of one
   :class:`~symq.window.powerlaw.PowerLawWindow` per value (timed on 1000 values, scaled).
2. General numerical solver on NewReno at rtol 1e-6 [target: relative error 1e-6 in < 1 s],
   error against the closed form; also HighSpeed TCP (RFC 3649), which has no closed form.
3. Simulator: loss events per second [target >= 10^6] for NewReno (exact path) and HighSpeed
   TCP (tabulated path), beside the baseline of the same exact NewReno recursion run by the
   Python interpreter.
4. Simulator beside a plain numba loop (issue 33, item 5) [target: ratio >= 0.8]: loss cycles
   per second of ``simulate_protocol(newreno(1e-4))`` (its kernel time) and of
   :func:`_plain_newreno`, the same cycles (same draws, same per-slice sums, same ring) written
   the obvious way; 2e6 cycles, best of 9 alternated, compile excluded.  This machine (2 cores,
   AMD EPYC, load average 4.2-4.6 from another agent's test run; two runs each, the code before
   and after in alternation):

   - before (the exp/expm1 route for every exponent, a division per cycle for the slice):
     symq 6.8-9.9 M/s (100-147 ns), plain 32-50 M/s (20-31 ns): ratio 0.20-0.21;
   - after (:func:`symq.window.simulation.kernels.integer_power_integral` for integer ``k``,
     a slice counter, NewReno's class in a loop of its own): symq 34-47 M/s (21-30 ns), plain
     35-49 M/s (20-28 ns): ratio 0.96 (both runs).  The other integer ``k`` (general loop):
     k = 1 and k = -1 at 43-52 ns a cycle (before 103-132 ns); a fractional ``k`` keeps the
     exp/expm1 route (120-180 ns before and after, within the noise).

   The values change by round-off only: the trajectory (pre-loss windows, Palm mean) is the
   same bit for bit, the time and area sums differ in the last bits (<= 7e-15 relative on the
   estimates and their half-widths, measured on nine cases).

Run: ``python benchmarks/bench_window.py`` (``--plain``: item 4 only).
"""

from __future__ import annotations

import math
import sys
import time

import numba
import numpy as np

from symq.core.simrun import kernel_seed, seed_numba
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


@numba.njit(cache=True)
def _plain_newreno(y, c, beta, alpha, n_warm, per_batch, n, acc, ring):  # pragma: no cover
    """The baseline of item 4: NewReno's exact cycles as a plain numba loop.

    The same protocol (``W_pre = sqrt(y^2 + c E)``, ``y = beta W_pre``), the same draw per cycle
    (numba's ``Exp(1)``), the same accumulations per slice as symq's power-law kernel (time,
    area, area of ``W^2``, the pre-loss windows, a ring of the last pre-loss windows), written
    the obvious way: no checks, no state kept between calls.
    """
    pos = 0
    for i in range(n):
        ev = np.random.exponential(1.0)
        w = math.sqrt(y * y + c * ev)
        if i >= n_warm:
            b = (i - n_warm) // per_batch
            d = w - y
            acc[b, 0] += d / alpha
            acc[b, 1] += d * (w + y) / (2.0 * alpha)
            acc[b, 2] += d * (w * w + w * y + y * y) / (3.0 * alpha)
            acc[b, 4] += w
            ring[pos] = w
            pos += 1
            if pos == ring.shape[0]:
                pos = 0
        y = beta * w
    return y


def simulator_vs_plain(p: float = 1e-4, n: int = 2_000_000, repeats: int = 9) -> float:
    """Item 4: loss cycles per second of ``simulate_protocol(newreno(p))`` (its kernel time,
    ``events_per_second``) and of :func:`_plain_newreno` on the same cycles (NewReno in units of
    its natural window ``sqrt(2/p)``, as the simulator runs it; the same seeds, slices and
    ring), alternated, best of ``repeats``; returns the ratio symq/plain."""
    scale = math.sqrt(2.0 / p)
    alpha, gamma = 1.0 / scale, p * scale  # alpha m/gamma = 1
    slices, ring = 2000, np.zeros(100_000)
    n_warm = n - (n - n // 10) // slices * slices
    per_batch = (n - n_warm) // slices
    simulate_protocol(newreno(p), n_losses=10_000, rng=0)  # compile / load
    seed_numba(0)
    _plain_newreno(1.0, 2 * alpha / gamma, 0.5, alpha, 10, 10, 100, np.zeros((10, 5)), ring)
    best_symq = best_plain = 0.0
    means = []
    for r in range(repeats):
        est = simulate_protocol(newreno(p), n_losses=n, rng=r + 1)
        best_symq = max(best_symq, est.events_per_second)
        acc = np.zeros((slices, 5))
        seed_numba(kernel_seed(r + 1))
        start = time.perf_counter()
        _plain_newreno(1.0, 2 * alpha / gamma, 0.5, alpha, n_warm, per_batch, n, acc, ring)
        best_plain = max(best_plain, n / (time.perf_counter() - start))
        means.append((est.mean_window.mean, acc[:, 1].sum() / acc[:, 0].sum() * scale))
    ratio = best_symq / best_plain
    print(f"4. Simulator vs a plain numba loop, NewReno p={p:g}, {n} cycles, best of {repeats} "
          f"alternated: symq {best_symq / 1e6:.2f} M cycles/s ({1e9 / best_symq:.1f} ns), plain "
          f"{best_plain / 1e6:.2f} M/s ({1e9 / best_plain:.1f} ns): ratio {ratio:.2f} "
          f"[target >= 0.8]; E[W] symq {means[0][0]:.4f}, plain loop {means[0][1]:.4f}")
    return ratio


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
    if "--plain" in sys.argv:
        simulator_vs_plain()
    else:
        main()
        simulator_vs_plain()
