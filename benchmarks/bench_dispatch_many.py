"""Optimal dispatching at the accuracy asked for: m = 2..6 (Hyytiä & Righter 2024, Part 1).

The accuracy-matched value iteration of :func:`symq.dispatch.vi.accuracy.solve_accurate` (the
``symq solve dispatch policy=optimal`` default) with its stated error, against the targets of
issue 14: m = 2, rho = 0.9 under 30 s with a relative error below 1e-3; m = 2, rho = 0.4 under
1 s; m = 3, rho = 0.4 under 30 s at an error below 1e-3; m = 4, rho = 0.4 under 5 minutes;
``--big`` adds m = 3 and m = 4 at rho = 0.9 at the defaults (issue 33: under 2 and 10 minutes)
and m = 5, 6 at rho = 0.4 to rtol 1e-4 (issue 33: m = 6 under 15 minutes and 8 GB; the peak
resident memory of the run is printed), printing each grid's iterations and time per
iteration, and
``--baseline`` the previous CLI default for m = 2, rho = 0.9 (Richardson over delta = 0.1, 0.05
at U = 96, each grid to a span of 1e-10), run in the same session for the ratio, and
``--correction`` each case with and without the coarse-grid correction of
:mod:`symq.dispatch.vi.coarse_correction`, alternated (plain, corrected, plain, corrected) in
one run, with the ratio of the better times and both values with their errors, and ``--cap``
the cap on the second-largest backlog (the default above load 0.7 at m >= 3) against no cap
(``U2 = U``), alternated the same way: m = 3 at rho = 0.75 (default grids) and 0.9 (U = 48),
and ``--refinement`` the refinement grids of the default flow (started from the two grids
before them extrapolated in the step, span rtol/30) against the previous ones (started from
the grid before, span rtol/100), alternated: m = 2 at rho = 0.9, m = 3 at 0.6 and 0.9, and
``--cap-size`` the default cap ``max(U/3, 16 E[X])`` against the previous default ``U/2``,
alternated, at m = 3, rho = 0.9 (default grids and truncation), and ``--tail`` the tail beyond
U with its cross term, fitted three times and accelerated
(:func:`symq.dispatch.vi.boundary.fit_boundary`, :func:`~symq.dispatch.vi.boundary.accelerated`)
at every truncation tried, against the previous quadratic fitted twice at the first,
alternated, at m = 2 and 3, rho = 0.9 (defaults; ``--big`` adds m = 4 once each).

Run: ``python benchmarks/bench_dispatch_many.py [--big] [--baseline] [--correction] [--cap]
[--refinement] [--cap-size] [--tail]``.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import time
from collections.abc import Iterator

from symq.dispatch import richardson, solve_optimal
from symq.dispatch.vi import accuracy, boundary
from symq.dispatch.vi.accuracy import solve_accurate
from symq.laws import Exponential


def _run(m: int, rho: float, verbose: bool = False, **options: object) -> float:
    start = time.perf_counter()
    est = solve_accurate(m, rho, Exponential(1.0), **options)
    seconds = time.perf_counter() - start
    fine = est.fine
    print(f"m={m} rho={rho} {options or ''}: ET = {est.ET:.6f} +- {est.error_estimate:.2e} "
          f"(relative {est.error_estimate / est.ET:.1e}; bracket {est.bracket:.1e}, "
          f"extrapolation {est.extrapolation:.1e}, truncation {est.truncation:.1e}, "
          f"cap {est.cap:.1e} at U2 = {est.U2}), "
          f"U = {est.U:g}, "
          f"finest grid {fine.v.size} values, {seconds:.1f} s")
    if verbose:
        for g in est.grids:
            print(f"    {g['role']:>16}: delta = {g['delta']:.4g}, U = {g['U']:g}, "
                  f"g = {g['g']:.6f}, {g['iterations']} iterations, {g['seconds']:.1f} s "
                  f"({g['seconds'] / max(g['iterations'], 1) * 1e3:.0f} ms per iteration)")
    return seconds


#: The cases of ``--correction``: (m, rho) at the default grids of solve_accurate.
CORRECTION_CASES = ((2, 0.9), (3, 0.4), (3, 0.6), (4, 0.4))


def _correction() -> None:
    solve_accurate(2, 0.4, Exponential(1.0), coarse=0.5, U=8.0)     # load the kernels
    solve_accurate(2, 0.4, Exponential(1.0), coarse=0.5, U=8.0, coarse_correction=False)
    for m, rho in CORRECTION_CASES:
        times: dict[bool, list[float]] = {False: [], True: []}
        for flag in (False, True, False, True):
            times[flag].append(_run(m, rho, coarse_correction=flag))
        print(f"  m={m} rho={rho}: plain {min(times[False]):.1f} s, corrected "
              f"{min(times[True]):.1f} s, ratio {min(times[False]) / min(times[True]):.2f}x")


#: The cases of ``--cap``: (m, rho, U or None for the default).
CAP_CASES = ((3, 0.75, None), (3, 0.9, 48.0))


def _cap() -> None:
    solve_accurate(3, 0.75, Exponential(1.0), coarse=0.5, U=16.0, rtol=1e-2)   # load kernels
    for m, rho, top in CAP_CASES:
        U = 32.0 if top is None else top          # the default U at rho = 0.75
        extra = {} if top is None else {"U": top}
        times: dict[bool, list[float]] = {False: [], True: []}
        for capped in (False, True, False, True):
            times[capped].append(_run(m, rho, **extra, **({} if capped else {"U2": U})))
        print(f"  m={m} rho={rho}: no cap {min(times[False]):.1f} s, capped "
              f"{min(times[True]):.1f} s, ratio {min(times[False]) / min(times[True]):.2f}x")


#: The cases of ``--refinement``: (m, rho, rounds of the alternation).
REFINEMENT_CASES = ((2, 0.9, 2), (3, 0.6, 2), (3, 0.9, 1))


@contextlib.contextmanager
def _previous_refinements() -> Iterator[None]:
    """The refinement grids as before: a span of rtol/100 and a start from the previous grid
    alone (no extrapolation in the step)."""
    saved = accuracy.REFINEMENT_SPAN, accuracy.extrapolated_start
    accuracy.REFINEMENT_SPAN = 1 / 100
    accuracy.extrapolated_start = lambda coarser, finer, delta, power: finer
    try:
        yield
    finally:
        accuracy.REFINEMENT_SPAN, accuracy.extrapolated_start = saved


def _refinement() -> None:
    solve_accurate(2, 0.4, Exponential(1.0), coarse=0.5, U=8.0)     # load the kernels
    for m, rho, rounds in REFINEMENT_CASES:
        times: dict[bool, list[float]] = {False: [], True: []}
        for new in (False, True) * rounds:
            with contextlib.nullcontext() if new else _previous_refinements():
                times[new].append(_run(m, rho, verbose=m == 3 and rho == 0.9))
        print(f"  m={m} rho={rho}: previous refinements {min(times[False]):.1f} s, "
              f"extrapolated starts and span rtol/30 {min(times[True]):.1f} s, ratio "
              f"{min(times[False]) / min(times[True]):.2f}x")


@contextlib.contextmanager
def _previous_cap() -> Iterator[None]:
    """The default cap as before: half the initial U, no floor."""
    saved = accuracy.CAP_FRACTION, accuracy.CAP_LEAST
    accuracy.CAP_FRACTION, accuracy.CAP_LEAST = 1 / 2, 0.0
    try:
        yield
    finally:
        accuracy.CAP_FRACTION, accuracy.CAP_LEAST = saved


def _cap_size() -> None:
    solve_accurate(3, 0.75, Exponential(1.0), coarse=0.5, U=24.0, rtol=1e-2)   # load kernels
    times: dict[bool, list[float]] = {False: [], True: []}
    for new in (False, True, False, True):
        with contextlib.nullcontext() if new else _previous_cap():
            times[new].append(_run(3, 0.9, verbose=True))
    print(f"  m=3 rho=0.9: previous cap U/2 {min(times[False]):.1f} s, cap max(U/3, 16) "
          f"{min(times[True]):.1f} s, ratio {min(times[False]) / min(times[True]):.2f}x")


@contextlib.contextmanager
def _previous_tail() -> Iterator[None]:
    """The tail as before: the quadratic of fit_tail, fitted twice at the first U only, not
    accelerated."""
    saved = (accuracy.fit_boundary, accuracy.accelerated, accuracy.TAIL_REFITS,
             accuracy.REFIT_ON_ENLARGE)
    accuracy.fit_boundary = lambda r: boundary.Tail(*boundary.fit_tail(r))
    accuracy.accelerated = lambda fits, U: fits[-1]
    accuracy.TAIL_REFITS = 2
    accuracy.REFIT_ON_ENLARGE = False
    try:
        yield
    finally:
        (accuracy.fit_boundary, accuracy.accelerated, accuracy.TAIL_REFITS,
         accuracy.REFIT_ON_ENLARGE) = saved


def _tail(big: bool) -> None:
    solve_accurate(3, 0.75, Exponential(1.0), coarse=0.5, U=24.0, rtol=1e-2)   # load kernels
    for m, rounds in ((2, 2), (3, 2)) + (((4, 1),) if big else ()):
        times: dict[bool, list[float]] = {False: [], True: []}
        for new in (False, True) * rounds:
            with contextlib.nullcontext() if new else _previous_tail():
                times[new].append(_run(m, 0.9, verbose=True))
        print(f"  m={m} rho=0.9: quadratic tail {min(times[False]):.1f} s, with the cross term "
              f"{min(times[True]):.1f} s, ratio {min(times[False]) / min(times[True]):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true")
    parser.add_argument("--baseline", action="store_true")
    parser.add_argument("--correction", action="store_true")
    parser.add_argument("--cap", action="store_true")
    parser.add_argument("--refinement", action="store_true")
    parser.add_argument("--cap-size", action="store_true")
    parser.add_argument("--tail", action="store_true")
    args = parser.parse_args()
    if args.tail:
        _tail(args.big)
        return
    if args.cap_size:
        _cap_size()
        return
    if args.refinement:
        _refinement()
        return
    if args.correction:
        _correction()
    if args.cap:
        _cap()
    if args.correction or args.cap:
        return
    solve_accurate(2, 0.4, Exponential(1.0), coarse=0.5, U=8.0)     # load the kernels
    new = _run(2, 0.9)
    if args.baseline:
        start = time.perf_counter()
        old = richardson(solve_optimal, 2, 0.9, Exponential(1.0), delta=0.1, U=96.0)
        base = time.perf_counter() - start
        print(f"baseline (old CLI default): g0 = {old.ET:.6f}, {base:.1f} s; "
              f"ratio {base / new:.1f}x")
    for m in (2, 3, 4):
        _run(m, 0.4)
    if args.big:
        _run(3, 0.9, verbose=True)
        _run(4, 0.9, verbose=True)
        _run(5, 0.4, verbose=True, rtol=1e-4)
        _run(6, 0.4, verbose=True, rtol=1e-4)       # issue 33: under 15 minutes and 8 GB
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        print(f"peak resident memory of the run: {peak:.2f} GB")


if __name__ == "__main__":
    main()
