"""symq vs BuTools, side by side in one run: nonnegativity checks and moment matching.

BuTools is not a dependency of symq and none of its code is here.  To run the comparison, get
BuTools' Python package separately and make a virtual environment it runs in (it needs
numpy < 2 and scipy < 1.14), then point this script at both::

    BUTOOLS_PYTHON=/path/to/venv/bin/python BUTOOLS_PATH=/path/to/butools/Python \\
        python benchmarks/bench_butools.py

Without those variables only symq's side is measured.  BuTools is called through its public
functions (CheckMEPositiveDensity, MEFromMoments) in a subprocess; the inputs are
the same (alpha, A) matrices and moment lists.

Printed: median time per call of each tool, the verdicts (BuTools answers True/False; symq gives
NONNEGATIVE with a certificate or NEGATIVE with a witness), and the relative moment error of the
moment-matching fits of lognormal moments at orders 2..6.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time

import mpmath
import numpy as np
import sympy as sp

from symq.me import ME, certify, pade_fit

_DRIVER = r"""
import json, sys, time, warnings
warnings.filterwarnings("ignore")
import scipy.linalg
scipy.linalg.expm2 = scipy.linalg.expm
sys.path.insert(0, sys.argv[1])
import numpy as np
from butools.ph import CheckMEPositiveDensity, MEFromMoments
job = json.load(sys.stdin)
out = {"check": [], "fit": []}
for case in job["check"]:
    alpha, A = np.array([case["alpha"]]), np.array(case["A"])
    times, answer = [], None
    for _ in range(job["repeats"]):
        start = time.perf_counter()
        try:
            answer = bool(CheckMEPositiveDensity(alpha, A))
        except Exception as exc:
            answer = "error: " + type(exc).__name__
        times.append(time.perf_counter() - start)
    out["check"].append({"answer": answer, "times": times})
for moments in job["fit"]:
    times, error = [], None
    for _ in range(job["repeats"]):
        start = time.perf_counter()
        try:
            alpha, A = MEFromMoments(moments)
            # moments of the returned (alpha, A), m_k = k! alpha (-A)^-k 1, computed directly:
            # MomentsFromME refuses representations that are not valid distributions
            inverse = np.linalg.inv(-np.asarray(A))
            power = np.eye(inverse.shape[0])
            fitted, factorial = [], 1.0
            for k in range(1, len(moments) + 1):
                power = power @ inverse
                factorial *= k
                fitted.append(factorial * float(np.sum(np.asarray(alpha) @ power)))
            error = max(abs(f - m) / m for f, m in zip(fitted, moments))
        except Exception as exc:
            error = "error: " + type(exc).__name__
        times.append(time.perf_counter() - start)
    out["fit"].append({"error": error, "times": times})
print(json.dumps(out))
"""


def butools_configured() -> bool:
    """Whether BUTOOLS_PYTHON and BUTOOLS_PATH are both set."""
    return bool(os.environ.get("BUTOOLS_PYTHON") and os.environ.get("BUTOOLS_PATH"))


def matrix_input(me: ME) -> dict:
    """The float64 (alpha, A) of ``me`` (``ME.to_matrix_float``) as BuTools' driver takes it."""
    alpha, A = me.to_matrix_float()
    return {"alpha": np.ravel(alpha).tolist(), "A": np.asarray(A).tolist()}


def run_butools(check: list[dict], fit: list[list[float]], repeats: int,
                timeout: float = 1200) -> dict | None:
    """Run BuTools' CheckMEPositiveDensity on each (alpha, A) of ``check`` (as from
    :func:`matrix_input`) and MEFromMoments on each moment list of ``fit``, ``repeats`` times
    each, in one subprocess of BUTOOLS_PYTHON with BUTOOLS_PATH on its path.

    Returns ``{"check": [{"answer", "times"}, ...], "fit": [{"error", "times"}, ...]}`` in input
    order (``answer`` is True/False, or ``"error: <type>"`` if the call raised; ``times`` in
    seconds), or None, with the reason printed, when the variables are not set or the run fails.
    """
    python, path = os.environ.get("BUTOOLS_PYTHON"), os.environ.get("BUTOOLS_PATH")
    if not (python and path):
        return None
    job = {"repeats": repeats, "check": check, "fit": fit}
    try:
        proc = subprocess.run([python, "-c", _DRIVER, path], input=json.dumps(job),
                              capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print("BuTools run failed:", exc)
        return None
    if proc.returncode != 0:
        print("BuTools run failed:", proc.stderr[-2000:])
        return None
    return json.loads(proc.stdout)


def run_butools_checks(cases: list[ME], repeats: int, timeout: float = 1200) -> list[dict] | None:
    """BuTools' CheckMEPositiveDensity on the float64 (alpha, A) of each ME of ``cases``.

    One ``{"answer": True/False/"error: ...", "times": [seconds] * repeats}`` per case, in
    order, or None when BuTools is not configured or its run failed (see :func:`run_butools`).
    """
    out = run_butools([matrix_input(me) for me in cases], [], repeats, timeout)
    return None if out is None else out["check"]


def _lognormal_moments(sigma: float, K: int) -> list[mpmath.mpf]:
    with mpmath.workdps(60):
        return [+mpmath.exp(k * (k - 1) * mpmath.mpf(sigma) ** 2 / 2) for k in range(1, K + 1)]


def _cases() -> dict[str, ME]:
    s = sp.Symbol("s")
    lognormal = _lognormal_moments(0.5, 5)
    return {
        "valid order 3 (extended fit, complex poles)":
            ME(pade_fit(lognormal[:3], order=3, zero=[0, 0]).lst),
        "negative order 3 (classical fit, f(0) < 0)": ME(pade_fit(lognormal, order=3).lst),
        "(2/3)(1+cos t)e^-t (touching zero)":
            ME.from_expr(sp.Rational(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1))),
        "hypoexponential (1, 2, 3)": ME.from_expr(6 / ((s + 1) * (s + 2) * (s + 3))),
    }


def _median_ms(times: list[float]) -> float:
    return 1e3 * statistics.median(times)


def main(repeats: int = 15) -> None:
    cases = _cases()
    ours = {}
    for name, me in cases.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            certificate = certify(me)
            times.append(time.perf_counter() - start)
        ours[name] = (certificate, times)
    fits = {n: [float(m) for m in _lognormal_moments(0.8, 2 * n - 1)] for n in range(2, 7)}
    our_fits = {}
    for n in fits:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            result = pade_fit(_lognormal_moments(0.8, 2 * n - 1), order=n, dps=50)
            times.append(time.perf_counter() - start)
        fitted = ME(result.lst).moments(2 * n - 1)
        with mpmath.workdps(60):
            error = max(abs(mpmath.mpf(f.p) / f.q - m) / m
                        for f, m in zip(fitted, _lognormal_moments(0.8, 2 * n - 1)))
        our_fits[n] = (float(error), times)

    theirs = None
    if butools_configured():
        theirs = run_butools(check=[matrix_input(me) for me in cases.values()],
                             fit=list(fits.values()), repeats=repeats)
    else:
        print("(set BUTOOLS_PYTHON and BUTOOLS_PATH to run BuTools beside symq)\n")

    print(f"Nonnegativity check, median of {repeats} calls")
    print(f"{'input':<46}{'symq verdict':<14}{'symq ms':>9}{'BuTools':>10}{'BuTools ms':>12}"
          f"{'ratio':>8}")
    for i, (name, (certificate, times)) in enumerate(ours.items()):
        line = f"{name:<46}{certificate.status.value:<14}{_median_ms(times):>9.2f}"
        if theirs:
            other = theirs["check"][i]
            ratio = _median_ms(other["times"]) / _median_ms(times)
            line += f"{str(other['answer']):>10}{_median_ms(other['times']):>12.2f}{ratio:>7.1f}x"
        print(line)
        detail = (f"witness t={float(certificate.witness):.4g}" if certificate.witness is not None
                  else certificate.method)
        print(f"{'':<46}({detail})")
    print(f"\nMoment matching of lognormal moments (sigma 0.8), median of {repeats} calls")
    print(f"{'order':>5}{'symq ms':>10}{'symq rel. moment error':>24}{'BuTools ms':>12}"
          f"{'BuTools rel. moment error':>27}")
    for j, (n, (error, times)) in enumerate(our_fits.items()):
        line = f"{n:>5}{_median_ms(times):>10.2f}{error:>24.2e}"
        if theirs:
            other = theirs["fit"][j]
            err = other["error"]
            err_text = f"{err:.2e}" if isinstance(err, float) else str(err)
            line += f"{_median_ms(other['times']):>12.2f}{err_text:>27}"
        print(line)


if __name__ == "__main__":
    main()
