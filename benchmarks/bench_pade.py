"""Padé moment matching: exact rationals vs 50-digit mpmath vs a plain numpy float64 Hankel solve.

Run: ``python benchmarks/bench_pade.py``.  For lognormal-like targets (moments
``exp(k mu + k^2 sigma^2 / 2)`` as python floats) and orders 2..10 it prints, measured side by side
in one run, the median wall time of ``pade_fit`` in exact mode (the doubles converted exactly) and
in mpmath mode (``dps=50``), and of a plain float64 Hankel solve (time normalised to m1 = 1, the
same construction as derivations/me-pade.md, step 5); the ratio mpmath / float64; and the relative
moment error of each fit, computed exactly from the fitted rational transform.  The float64 error
column shows why float64 is not enough at order ~8.  Target: ``pade_fit`` order 8, 50 digits,
under 20 ms median.
"""

from __future__ import annotations

import math
import statistics
import time
from fractions import Fraction

import numpy as np

from symq.core.errors import SymqError
from symq.me.pade import pade_fit
from symq.me.transform import RationalLST


def lognormal_moments(count: int, mu: float = 0.0, sigma: float = 0.8) -> list[float]:
    return [math.exp(k * mu + k * k * sigma**2 / 2) for k in range(1, count + 1)]


def numpy_pade(moments: list[float], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Classical Padé in float64: Hankel solve in time normalised to m1 = 1, then scaled back."""
    m1 = moments[0]
    r = np.array([1.0] + [m / m1 ** (k + 1) / math.factorial(k + 1) for k, m in enumerate(moments)])
    H = np.array([[r[i + j] for j in range(n)] for i in range(n)])
    x = np.linalg.solve(H, -r[n:2 * n])
    Q = np.concatenate(([1.0], x[::-1]))
    P = np.array([Q[: k + 1] @ r[k::-1] for k in range(n)])
    sign = (-1.0) ** np.arange(n + 1)
    lead = sign[n] * Q[n]
    scale = m1 ** (np.arange(n + 1) - n)
    a = sign * Q / lead * scale
    b = sign[:n] * P / lead * scale[:n]
    return a, b


def moment_error(lst: RationalLST, moments: list[float]) -> float:
    """Max relative error of the transform's exact moments against the (exact) inputs."""
    fitted = lst.moments(len(moments))
    return max(float(abs(Fraction(int(f.p), int(f.q)) - Fraction(m)) / Fraction(m))
               for f, m in zip(fitted, moments))


def median_time(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(sigma: float = 0.8, dps: int = 50) -> None:
    print(f"lognormal moments exp(k^2 sigma^2/2), sigma = {sigma} "
          f"(SCV = {math.exp(sigma**2) - 1:.3f}), given as python floats; "
          f"pade_fit(dps={dps}) vs exact vs numpy float64")
    header = (f"{'n':>3} {'exact ms':>9} {'mpmath ms':>10} {'dps used':>8} {'float64 us':>11} "
              f"{'mp/f64':>7} {'cond(H)':>9} {'err mpmath':>11} {'err float64':>12}")
    print(header)
    print("-" * len(header))
    order8 = None
    for n in range(2, 11):
        moments = lognormal_moments(2 * n - 1, sigma=sigma)
        exact_fit = pade_fit(moments, order=n, exact=True)
        mp_fit = pade_fit(moments, order=n, dps=dps)
        t_exact = median_time(lambda m=moments, n=n: pade_fit(m, order=n, exact=True), 5)
        t_mp = median_time(lambda m=moments, n=n: pade_fit(m, order=n, dps=dps), 15)
        t_np = median_time(lambda m=moments, n=n: numpy_pade(m, n), 200)
        assert exact_fit.lst.order == n and exact_fit.residual == 0.0
        try:
            a, b = numpy_pade(moments, n)
            np_lst = RationalLST.from_coefficients([float(x) for x in b], [float(x) for x in a])
            err_np = f"{moment_error(np_lst, moments):12.1e}"
        except (SymqError, np.linalg.LinAlgError) as error:
            err_np = f"{'fails':>12}"
            print(f"    float64 fit at order {n} is not a transform: {error}")
        err_mp = moment_error(mp_fit.lst, moments)
        print(f"{n:3d} {t_exact * 1e3:9.2f} {t_mp * 1e3:10.2f} {mp_fit.dps:8d} {t_np * 1e6:11.1f} "
              f"{t_mp / t_np:7.0f} {mp_fit.hankel_condition:9.1e} {err_mp:11.1e} {err_np}")
        if n == 8:
            order8 = t_mp
    verdict = "meets" if order8 < 0.020 else "MISSES"
    print(f"\npade_fit order 8 at {dps} digits: median {order8 * 1e3:.2f} ms "
          f"({verdict} the 20 ms target)")


if __name__ == "__main__":
    main()
