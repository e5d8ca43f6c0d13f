"""Declared transforms: moments, and inversion side by side with mpmath's ``invertlaplace``.

* moments to order 10 of the M/E2/1 waiting-time transform declared by Pollaczek-Khinchine:
  the first call (series and power-series division with the parameters as symbols) and a call
  at new parameter values (the cached expressions at exact rationals);
* the density of the M/M/1 waiting time (part without the atom) at 100 points: symq's two
  methods (unified Euler and fixed Talbot, the error stated) against ``mpmath.invertlaplace``
  (fixed Talbot, one method, no error estimate) at equal accuracy: for each target, the least
  ``digits`` (symq) and the least ``dps`` (mpmath) whose actual error against the exact density
  ``rho (mu - lam) exp(-(mu - lam) t)`` meets it; up to 8 digits symq runs in complex doubles
  vectorised over every node and point, up to 10 in numpy's extended precision (where the
  platform has it) also vectorised, beyond in mpmath.

mpmath runs in a private context (its global precision untouched).

Run: ``python benchmarks/bench_transforms.py``.
"""

from __future__ import annotations

import time

import mpmath
import numpy as np

from symq.me.transforms import Transform, invert, moments, pollaczek_khinchine


def timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def bench_moments():
    service = Transform("(2*mu/(2*mu + s))^2", parameters=("mu",))
    waiting = pollaczek_khinchine(service, "lam")
    first, t_first = timed(lambda: moments(waiting, 10, {"mu": 1.0, "lam": 0.5}))
    again, t_again = timed(lambda: moments(waiting, 10, {"mu": 1.3, "lam": 0.9}))
    print(f"moments 1..10 of the M/E2/1 waiting time: first call {t_first:.2f} s, then "
          f"{t_again * 1e3:.1f} ms (E W^10 = {again.moments[-1]:.6g})")


def bench_inversion():
    lam, mu = 0.5, 1.0
    waiting = pollaczek_khinchine(Transform("mu/(mu + s)", parameters=("mu",)), "lam")
    t = np.linspace(0.1, 10.0, 100)
    exact = lam / mu * (mu - lam) * np.exp(-(mu - lam) * t)
    ctx = mpmath.MPContext()

    def continuous_part(s):
        w = (1 - ctx.mpf(lam) / mu) * s / (s - lam + lam * mu / (mu + s))
        return w - (1 - ctx.mpf(lam) / mu)

    ours = {}
    for digits in range(6, 15):
        invert(waiting, t[:2], {"mu": mu, "lam": lam}, digits=digits)   # compile first
        r, seconds = timed(lambda d=digits: invert(waiting, t, {"mu": mu, "lam": lam},
                                                   digits=d))
        ours[digits] = (float(np.max(np.abs(r.value - exact))), r.max_error, seconds)
    theirs = {}
    for dps in range(5, 17):
        ctx.dps = dps
        values, seconds = timed(lambda: np.array(
            [float(ctx.invertlaplace(continuous_part, x, method="talbot")) for x in t]))
        theirs[dps] = (float(np.max(np.abs(values - exact))), seconds)
    for target in (1e-8, 1e-9, 1e-10, 1e-12):
        d = next((k for k, v in ours.items() if v[0] <= target), None)
        p = next((k for k, v in theirs.items() if v[0] <= target), None)
        if d is None or p is None:
            print(f"target {target:.0e}: not reached by " + ("symq" if d is None else "mpmath"))
            continue
        e, stated, t_ours = ours[d]
        e_theirs, t_theirs = theirs[p]
        print(f"density at 100 points to {target:.0e}: symq digits={d} {t_ours:.3f} s (error "
              f"{e:.1e}, stated {stated:.1e}) | mpmath talbot dps={p} {t_theirs:.3f} s (error "
              f"{e_theirs:.1e}, none stated) | ratio {t_theirs / t_ours:.1f}x")


if __name__ == "__main__":
    bench_moments()
    bench_inversion()
