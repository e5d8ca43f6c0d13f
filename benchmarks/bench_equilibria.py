"""All certified equilibria of 2- to 4-dimensional polynomial drifts: wall time per system.

Run: ``python benchmarks/bench_equilibria.py``.  For Lotka-Volterra competition systems in
dimensions 2, 3, 4 (up to 2^n equilibria, most of them on the boundary: the lex basis is split at
rational roots), cyclic quadratic systems ``x_i^2 + x_{i+1} = c_i`` in dimensions 2, 3, 4
(eliminant of degree 2^n, irrational roots) and an SIS-type rational drift, it prints the number
of equilibria found in the box, the degree of the eliminant, whether every point passed the
Krawczyk test, and the median wall time of :func:`symq.meanfield.equilibria` (a fresh process each
repeat, so the sympy work is counted).  Goal: under 1 s per system.  Then one ``limit_sets`` survey
of the Hopf normal form (grid 3x3).
"""

from __future__ import annotations

import math
import statistics
import time

import sympy as sp

from symq.meanfield import PopulationProcess, limit_sets
from symq.meanfield.equilibria import equilibria


def from_drift(xs, drift, bounds=(0.0, 1.0)) -> PopulationProcess:
    proc = PopulationProcess(list(xs), bounds=bounds)
    n = len(xs)
    for i, f in enumerate(drift):
        up, down = [0] * n, [0] * n
        up[i], down[i] = 1, -1
        proc.add_transition(up, f + 5)
        proc.add_transition(down, 5)
    return proc


def lotka_volterra(n: int):
    xs = sp.symbols(f"x1:{n + 1}")
    growth = [1, sp.Rational(5, 4), sp.Rational(3, 4), sp.Rational(9, 8)]
    A = [[1 if i == j else sp.Rational((3 * i + 5 * j) % 7 + 1, 8) for j in range(n)]
         for i in range(n)]
    drift = [xs[i] * (growth[i] - sum(A[i][j] * xs[j] for j in range(n))) for i in range(n)]
    return lambda: from_drift(xs, drift, bounds=(0.0, 2.0))


def cyclic(n: int):
    xs = sp.symbols(f"y1:{n + 1}")
    cs = [sp.Rational(7, 10), sp.Rational(3, 5), sp.Rational(1, 2), sp.Rational(2, 5)]
    drift = [xs[i] ** 2 + xs[(i + 1) % n] - cs[i] for i in range(n)]
    return lambda: from_drift(xs, drift, bounds=(-2.0, 2.0))


def sis():
    x, y = sp.symbols("s i")
    # two-group SIS with saturating incidence beta x / (1 + x)
    drift = [2 * (1 - x) * (x + y) / (1 + x + y) - x, 3 * (1 - y) * (x + y) / (1 + x + y) - y]
    return lambda: from_drift([x, y], drift)


def median_time(make, repeats: int = 3):
    times, result = [], None
    for _ in range(repeats):
        proc = make()
        start = time.perf_counter()
        result = equilibria(proc)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    cases = [(f"Lotka-Volterra n={n}", lotka_volterra(n)) for n in (2, 3, 4)]
    cases += [(f"cyclic quadratic n={n}", cyclic(n)) for n in (2, 3, 4)]
    cases += [("two-group SIS (rational)", sis())]
    print(f"{'system':28s} {'found':>5s} {'deg h':>6s} {'real':>5s} {'Krawczyk':>9s} "
          f"{'median s':>9s}")
    for name, make in cases:
        seconds, res = median_time(make)
        ok = all(e.krawczyk for e in res.equilibria)
        print(f"{name:28s} {len(res):5d} {res.eliminant_degree:6d} {res.real_solutions:5d} "
              f"{str(ok):>9s} {seconds:9.3f}")
    x, y = sp.symbols("x y")
    mu, w, c = 0.04, 2.0, 0.5
    u, v = x - c, y - c
    hopf = from_drift([x, y], [mu * u - w * v - (u**2 + v**2) * u,
                               w * u + mu * v - (u**2 + v**2) * v])
    start = time.perf_counter()
    survey = limit_sets(hopf, grid=3, t_max=80.0)
    seconds = time.perf_counter() - start
    cyc = survey.cycles[0]
    print(f"limit_sets Hopf 3x3: {survey.counts} period {cyc.period:.6f} (2 pi / w = "
          f"{2 * math.pi / w:.6f}), amplitude {cyc.amplitude:.6f} "
          f"(sqrt(mu) = {math.sqrt(mu):.6f}), "
          f"{seconds:.3f} s")


if __name__ == "__main__":
    main()
