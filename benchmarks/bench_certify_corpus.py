r"""Certified nonnegativity (symq.me.certification.certify) vs BuTools' CheckMEPositiveDensity,
side by side on the touching/dipping corpus of :mod:`symq.me.certification.corpus`.

Run: ``python benchmarks/bench_certify_corpus.py [--repeats N]`` (symq only), or with BuTools
beside it (a separate checkout of BuTools' Python package and a virtual environment with
numpy < 2 and scipy < 1.14, as for ``benchmarks/bench_butools.py``)::

    BUTOOLS_PYTHON=/path/to/venv/bin/python BUTOOLS_PATH=/path/to/butools/Python \
        python benchmarks/bench_certify_corpus.py

The instances are those of ``corpus()``, with the truth known by construction: *touching*
densities (exponential-polynomial squares with a zero of even order in (0, inf), or infinitely
many for the trigonometric ones; truth: a density) and *dipping* ones (a touching case minus
eps times a positive term, eps down to 1e-30; truth: not a density), orders 2..10.

Measured: ``certify(case.lst)`` with its default options, each call timed with
``time.perf_counter``, ``--repeats`` times per case (default 3); a case's time is the median over
its repeats, and per order the script prints the median and the worst of these over the cases
(every call counts, decided or not).  A symq verdict is right when it is NONNEGATIVE for a
density and NEGATIVE for a non-density; INCONCLUSIVE is counted as undecided, never right (and
any other answer, INVALID or an exception, as wrong).  Also printed: a per-family summary, how
many decisions each ``cert.method`` made, and the cases left undecided (with the reason).

The baseline is BuTools' ``CheckMEPositiveDensity(alpha, A)`` (its public function, called in a
subprocess through :func:`bench_butools.run_butools_checks`) on the float64 representation
``symq.me.ME(case.lst).to_matrix_float()``, timed the same way.  It answers True (density: a
monocyclic phase-type representation was found) or False ("not a density *or* inconclusive"), so
False is counted as right only when the truth is not a density, and the valid densities it
rejects are counted separately.  BuTools sees the float64 rounding of the exact transform: for
the deepest dips (eps ~ 1e-16 of the peak and below) its input no longer carries the dip, while
the truth is that of the exact rational transform symq certifies.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_butools import butools_configured, run_butools_checks

from symq.me import ME
from symq.me.certification import certify
from symq.me.certification.corpus import corpus

ORDERS = range(2, 11)


def _expected(is_density: bool) -> str:
    return "NONNEGATIVE" if is_density else "NEGATIVE"


def _run_symq(case, repeats: int) -> dict:
    """certify(case.lst) ``repeats`` times: the last verdict, its method/reason and the times."""
    times, status, method, reason = [], "ERROR", "", ""
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            cert = certify(case.lst)
        except Exception as exc:  # noqa: BLE001 - the script must survive whatever certify does
            times.append(time.perf_counter() - start)
            status, method, reason = "ERROR", "", f"{type(exc).__name__}: {exc}"
            continue
        times.append(time.perf_counter() - start)
        status = getattr(cert.status, "value", str(cert.status))
        method = str(cert.method or "")
        reason = str(getattr(cert, "reason", "") or "")
    return {"status": status, "method": method, "reason": reason,
            "time": statistics.median(times)}


def _butools_right(answer, is_density: bool) -> bool:
    return answer is True if is_density else answer is False


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.1f}"


def main(repeats: int = 3) -> None:
    cases = corpus()
    ours = []
    for case in cases:
        ours.append(_run_symq(case, repeats))

    theirs = None
    if butools_configured():
        theirs = run_butools_checks([ME(case.lst) for case in cases], repeats,
                                    timeout=1200 * max(1, repeats))
        if theirs is not None:
            for entry in theirs:
                entry["time"] = statistics.median(entry["times"]) if entry["times"] else 0.0
    else:
        print("(set BUTOOLS_PYTHON and BUTOOLS_PATH to run BuTools beside symq)\n")

    rows = list(zip(cases, ours, theirs if theirs is not None else [None] * len(cases)))

    def summary(selected) -> tuple[str, str]:
        """symq and BuTools columns for a group of rows."""
        if not selected:
            left = f"{0:>6}{'-':>10}{'-':>11}{'-':>7}{'-':>7}"
            return left, (f"{'-':>12}{'-':>7}{'-':>10}" if theirs is not None else "")
        times = [o["time"] for _, o, _ in selected]
        right = sum(o["status"] == _expected(c.is_density) for c, o, _ in selected)
        undecided = sum(o["status"] == "INCONCLUSIVE" for _, o, _ in selected)
        left = (f"{len(selected):>6}{_ms(statistics.median(times)):>10}{_ms(max(times)):>11}"
                f"{right:>7}{undecided:>7}")
        if theirs is None:
            return left, ""
        b_right = sum(_butools_right(b["answer"], c.is_density) for c, _, b in selected)
        rejected = sum(c.is_density and b["answer"] is not True for c, _, b in selected)
        b_time = statistics.median(b["time"] for _, _, b in selected)
        return left, f"{_ms(b_time):>12}{b_right:>7}{rejected:>10}"

    head_b = f"{'BuT. ms':>12}{'right':>7}{'rejected':>10}" if theirs is not None else ""
    head_s = f"{'cases':>6}{'med ms':>10}{'worst ms':>11}{'right':>7}{'undec':>7}"
    print(f"certify vs CheckMEPositiveDensity on the corpus ({len(cases)} cases, "
          f"{sum(c.is_density for c in cases)} densities), median of {repeats} calls per case")
    print("symq: median/worst over cases of the per-case median; right = NONNEGATIVE for a "
          "density, NEGATIVE for not; undec = INCONCLUSIVE")
    if theirs is not None:
        print("BuTools: median time; right = True for a density, False for not; rejected = "
              "valid densities answered False")
    print(f"\n{'order':>5}{head_s}{head_b}")
    orders = sorted(set(ORDERS) | {c.order for c in cases})
    for n in orders:
        left, right_cols = summary([r for r in rows if r[0].order == n])
        print(f"{n:>5}{left}{right_cols}")
    left, right_cols = summary(rows)
    print(f"{'all':>5}{left}{right_cols}")

    print(f"\n{'family':<18}{'truth':<8}{head_s}{head_b}")
    families = defaultdict(list)
    for r in rows:
        families[r[0].family].append(r)
    for family in sorted(families, key=lambda f: (f.endswith("dip"), f)):
        group = families[family]
        truth = "density" if group[0][0].is_density else "not"
        left, right_cols = summary(group)
        print(f"{family:<18}{truth:<8}{left}{right_cols}")

    print("\nsymq decisions by cert.method (INCONCLUSIVE not counted):")
    decided = Counter((o["method"], o["status"]) for _, o, _ in rows
                      if o["status"] not in ("INCONCLUSIVE", "ERROR"))
    statuses = sorted({status for _, status in decided})
    if decided:
        print(f"  {'method':<58}" + "".join(f"{s:>13}" for s in statuses))
        for method in sorted({m for m, _ in decided},
                             key=lambda m: (-sum(decided[(m, s)] for s in statuses), m)):
            print(f"  {method:<58}" + "".join(f"{decided[(method, s)]:>13}" for s in statuses))
    else:
        print("  (none)")

    wrong = [(c, o) for c, o, _ in rows
             if o["status"] not in ("INCONCLUSIVE", _expected(c.is_density))]
    if wrong:
        print("\nsymq WRONG (decided against the truth, INVALID, or raised):")
        for c, o in wrong:
            print(f"  n={c.order:<2} {c.name:<40} truth={_expected(c.is_density):<12} "
                  f"got {o['status']} ({o['method']}) {o['reason']}")

    undecided = [(c, o, b) for c, o, b in rows if o["status"] == "INCONCLUSIVE"]
    print(f"\ncases symq did not decide ({len(undecided)}):")
    for c, o, b in undecided:
        extra = f"  BuTools={b['answer']}" if b is not None else ""
        print(f"  n={c.order:<2} {c.name:<40} truth={'density' if c.is_density else 'not':<8}"
              f"{_ms(o['time']):>9} ms  {o['method']}: {o['reason']}{extra}")

    if theirs is not None:
        errors = [(c, b) for c, _, b in rows if b["answer"] not in (True, False)]
        if errors:
            print("\nBuTools raised (counted as not right):")
            for c, b in errors:
                print(f"  n={c.order:<2} {c.name:<40} {b['answer']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3,
                        help="calls per case and tool (the median is taken); default 3")
    main(parser.parse_args().repeats)
