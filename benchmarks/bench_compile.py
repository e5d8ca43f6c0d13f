"""Compiled numpy function vs sympy evalf/subs on the same expression and points.

Run: ``python benchmarks/bench_compile.py``.  Prints the time per point of each path
and their ratio, measured side by side in one run, and the largest difference between
the two (the compiled values are checked against 30-digit evalf).
"""

from __future__ import annotations

import time

import numpy as np
import sympy as sp

from symq.core import compile as symq_compile


def main(n_points: int = 100_000, n_evalf: int = 300) -> None:
    # the social cost of a 3-server PS farm and its KKT multiplier: a realistic model expression
    x1, x2, x3 = sp.symbols("x1:4", positive=True)
    C = (4, 2, 1)
    w = (1, 2, 4)
    xs = (x1, x2, x3)
    expr = sum(wj * xj / (Cj - xj) for wj, xj, Cj in zip(w, xs, C))
    expr += sp.sqrt(sum(wj * Cj / (Cj - xj) ** 2 for wj, xj, Cj in zip(w, xs, C)))
    rng = np.random.default_rng(1)
    points = rng.uniform(0.05, 0.9, size=(n_points, 3)) * np.array(C)

    f = symq_compile(expr, xs)
    start = time.perf_counter()
    values = f(points[:, 0], points[:, 1], points[:, 2])
    compiled_per_point = (time.perf_counter() - start) / n_points

    start = time.perf_counter()
    reference = [float(expr.evalf(30, subs=dict(zip(xs, p)))) for p in points[:n_evalf]]
    evalf_per_point = (time.perf_counter() - start) / n_evalf

    start = time.perf_counter()
    for p in points[:n_evalf]:
        float(expr.subs(dict(zip(xs, p))))
    subs_per_point = (time.perf_counter() - start) / n_evalf

    error = np.max(np.abs(values[:n_evalf] - reference) / np.abs(reference))
    print(f"compiled numpy : {compiled_per_point * 1e9:10.1f} ns/point ({n_points} points)")
    print(f"sympy evalf    : {evalf_per_point * 1e9:10.1f} ns/point ({n_evalf} points)")
    print(f"sympy subs     : {subs_per_point * 1e9:10.1f} ns/point ({n_evalf} points)")
    print(f"ratio evalf / compiled: {evalf_per_point / compiled_per_point:,.0f}x")
    print(f"ratio subs  / compiled: {subs_per_point / compiled_per_point:,.0f}x")
    print(f"max relative difference compiled vs 30-digit evalf: {error:.2e}")


if __name__ == "__main__":
    main()
