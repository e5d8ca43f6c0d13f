r"""Certified nonnegativity (symq.me.certification) vs a float64 grid check, side by side.

Run: ``python benchmarks/bench_certify.py``.

The instances have a known truth by construction: densities written in the
time domain (Erlang, hyperexponential, generalized Erlang, oscillating terms dominated by a real
pole, (1 + cos t) e^{-t} with a touching zero, a near-touching double zero) and non-densities
(f(0) < 0, wide and narrow interior dips, a right-half-plane pole, a complex dominant pole, a
negative dominant residue), for orders 2..6.  For each order the script prints the median time
of :func:`certify` and of the baseline, their ratio, and how many verdicts agree with the truth.

The baselines are what is commonly done without a certifier: poles by ``numpy.roots`` (invalid if
one has Re >= 0 or the dominant one is complex, as BuTools' CheckMERepresentation), then f on
10^4 grid points of (0, 40/|Re z_1|], either from the float partial fractions
:math:`\sum_k N(z_k)/D'(z_k)\, e^{z_k t}` (fast; wrong for multiple poles) or from
``scipy.linalg.expm`` of the companion realisation (robust, slower); "density" iff min f >= 0
(strict), or >= -1e-9 max|f| (tolerant).  It is not a certificate: it
misses narrow dips and round-off decides touching zeros.  INCONCLUSIVE answers of the certifier
are counted as undecided, never as right.  A last block times certify on classical Padé fits of
lognormal moments (realistic inputs whose truth is not known in advance).
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import scipy.linalg
import sympy as sp

import symq.me.certification as certify_module
from symq.core.errors import SymqError
from symq.me.transform import RationalLST

certify = certify_module.certify
Nonnegativity = certify_module.Nonnegativity

s = sp.Symbol("s")
Q = sp.Rational


# ----------------------------------------------------------------------------- instances
def _lst(expr: sp.Expr) -> RationalLST:
    expr = sp.cancel(sp.together(expr))
    return RationalLST.from_expr(sp.cancel(expr / expr.subs(s, 0)))


def _exp(c, lam, j=0):  # L{c t^j e^{-lam t}}
    return c * sp.factorial(j) / (s + lam) ** (j + 1)


def _cos(c, a, b):  # L{c e^{-a t} cos(b t)}
    return c * (s + a) / ((s + a) ** 2 + b ** 2)


def instances(n: int) -> list[tuple[str, bool, RationalLST]]:
    """(name, is_density, transform) of order n."""
    out: list[tuple[str, bool, RationalLST]] = []

    def extra(first: int, c: sp.Expr) -> sp.Expr:
        return sum(_exp(c, k) for k in range(first, first + n - 3))

    # --- densities
    out.append(("erlang", True, _lst((Q(n) / (s + n)) ** n)))
    out.append(("hyperexp", True, _lst(sum(_exp(Q(i * i), i) for i in range(1, n + 1)))))
    out.append(("hypoexp", True, _lst(sp.prod([Q(i) / (s + i) for i in range(1, n + 1)]))))
    if n == 2:
        out.append(("descartes", True, _lst(_exp(2, 1) + _exp(-1, 2))))
    else:
        k = (n - 1) // 2
        expr = _exp(1, 1) + sum(_cos(Q(9, 10 * k), 1 + Q(j, 2), 2 * j + 1) for j in range(1, k + 1))
        if (n - 1) % 2:
            expr += _exp(Q(3, 10), k + 2)
        out.append(("oscillating", True, _lst(expr)))
    if n >= 3:
        out.append(("touching", True, _lst(_exp(1, 1) + _cos(1, 1, 1) + extra(2, Q(1, 10)))))
        out.append(("near-touching", True, _lst(
            _exp(1, 1) + _exp(Q(-8, 3), 2) + _exp(Q(16, 9) + Q(1, 10**4), 3)
            + extra(4, Q(1, 100)))))
    # --- not densities
    out.append(("f(0)<0", False, _lst(_exp(1, 1) + sum(_exp(Q(-3, 2 * (n - 1)), i)
                                                     for i in range(2, n + 1)))))
    if n >= 3:
        out.append(("wide dip", False, _lst(
            5 * (_exp(1, 1) - _exp(3, 2) + _exp(Q(21, 10), 3)) + extra(4, Q(1, 100)))))
        out.append(("narrow dip", False, _lst(
            _exp(1, 1) + _exp(Q(-8, 3) - Q(1, 10**8), 2) + _exp(Q(16, 9), 3)
            + extra(4, Q(-1, 10**12)))))
    D = (s - Q(1, 2)) * sp.prod([s + i for i in range(1, n)])
    out.append(("RHP pole", False, RationalLST.from_expr((D.subs(s, 0) + 3 * s ** (n - 1)) / D)))
    out.append(("complex dominant", False, _lst(
        _cos(Q(1, 2), 1, 2) + sum(_exp(1, k) for k in range(2, n)))))
    out.append(("negative tail", False, _lst(
        _exp(2, 2) - _exp(Q(1, 20), 1) + sum(_exp(Q(1, 2), k) for k in range(3, n + 1)))))
    for name, _, lst in out:
        assert lst.order == n, (name, n, lst.order)
    return out


# ----------------------------------------------------------------------------- float baselines
def _float_poles(lst: RationalLST):
    a = np.array([float(x) for x in lst.denominator])
    b = np.array([float(x) for x in lst.numerator] + [0.0] * (lst.order - len(lst.numerator)))
    poles = np.roots(a[::-1])
    if np.any(poles.real >= 0):
        return a, b, poles, None
    dominant = poles[np.argmax(poles.real)]
    if abs(dominant.imag) > 1e-8 * abs(dominant):
        return a, b, poles, None
    return a, b, poles, np.linspace(0, 40 / abs(dominant.real), 10_001)[1:]


def _verdicts(values: np.ndarray) -> tuple[bool, bool]:
    return bool(values.min() >= 0), bool(values.min() >= -1e-9 * np.abs(values).max())


def grid_partial_fractions(lst: RationalLST) -> tuple[bool, bool]:
    """(strict, tolerant) 'is a density' from numpy roots + residues N(z)/D'(z) on 10^4 points."""
    a, b, poles, t = _float_poles(lst)
    if t is None:
        return False, False
    with np.errstate(divide="ignore", invalid="ignore"):
        residues = np.polyval(b[::-1], poles) / np.polyval(np.polyder(a[::-1]), poles)
        values = (np.exp(np.outer(t, poles)) @ residues).real
    if not np.all(np.isfinite(values)):  # a numerically multiple pole: the check fails
        return False, False
    return _verdicts(values)


def grid_expm(lst: RationalLST) -> tuple[bool, bool]:
    """(strict, tolerant) from f(t) = c e^{At} e_n (companion matrix, batched expm)."""
    a, b, poles, t = _float_poles(lst)
    if t is None:
        return False, False
    n = lst.order
    A = np.diag(np.ones(n - 1), 1)
    A[-1, :] = -a[:-1]
    E = scipy.linalg.expm(A[None, :, :] * t[:, None, None])
    return _verdicts(E[:, :, -1] @ b)


# ----------------------------------------------------------------------------- Padé inputs
def classical_pade(sigma2: sp.Rational, n: int) -> RationalLST | None:
    moments = [sp.nsimplify(sp.exp(Q(k * (k - 1), 2) * sigma2).evalf(60), rational=True)
               for k in range(1, 2 * n)]
    c = [sp.Integer(1)] + [(-1) ** k * moments[k - 1] / sp.factorial(k) for k in range(1, 2 * n)]
    rows, rhs = [], []
    for k in range(2 * n):
        rows.append([-(c[k - i] if k - i >= 0 else 0) for i in range(n)]
                    + [1 if k == j else 0 for j in range(n)])
        rhs.append(c[k - n] if k >= n else 0)
    try:
        sol = sp.Matrix(rows).LUsolve(sp.Matrix(rhs))
        return RationalLST.from_coefficients(list(sol[n:]), list(sol[:n]) + [1])
    except (ValueError, ZeroDivisionError, SymqError):  # singular system or degenerate order
        return None


def timed(fn, *args, repeat: int = 3):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    print("certify (certified) vs float64 grid checks on 10^4 points (not certificates)")
    print("  grid-pf: numpy roots + residues N(z)/D'(z); "
          "grid-expm: companion matrix, batched expm")
    print("  counts = verdicts agreeing with the truth; certify: right/undecided/wrong;")
    print("  grids: strict (min f >= 0) / tolerant (min f >= -1e-9 max|f|)")
    header = (f"{'order':>5} {'n':>3} | {'certify med':>11} {'max':>8} | {'grid-pf med':>11} "
              f"{'ratio':>6} | {'grid-expm med':>13} {'ratio':>6} | {'certify':>7} | "
              f"{'grid-pf':>7} | {'grid-expm':>9}")
    print(header)
    print("-" * len(header))
    details = []
    all_cert, all_pf = [], []
    for n in range(2, 7):
        t_cert, t_pf, t_expm = [], [], []
        right = undecided = wrong = 0
        pf_ok = [0, 0]
        ex_ok = [0, 0]
        cases = instances(n)
        for name, truth, lst in cases:
            certify(lst)  # warm-up
            tc, cert = timed(certify, lst)
            tp, pf = timed(grid_partial_fractions, lst)
            te, em = timed(grid_expm, lst)
            t_cert.append(tc)
            t_pf.append(tp)
            t_expm.append(te)
            if cert.status is Nonnegativity.INCONCLUSIVE:
                undecided += 1
                verdict = "undecided"
            elif (cert.status is Nonnegativity.NONNEGATIVE) == truth:
                right += 1
                verdict = "right"
            else:
                wrong += 1
                verdict = "WRONG"
            for i in range(2):
                pf_ok[i] += pf[i] == truth
                ex_ok[i] += em[i] == truth
            details.append((n, name, truth, cert, verdict, pf, em, tc))
        mc, mp, me = (statistics.median(x) for x in (t_cert, t_pf, t_expm))
        all_cert += t_cert
        all_pf += t_pf
        k = len(cases)
        print(f"{n:>5} {k:>3} | {mc * 1e3:>8.2f} ms {max(t_cert) * 1e3:>5.1f} ms | "
              f"{mp * 1e3:>8.2f} ms {mc / mp:>6.1f} | {me * 1e3:>10.2f} ms {mc / me:>6.2f} | "
              f"{right:>2}/{undecided}/{wrong} | {pf_ok[0]:>2}/{pf_ok[1]:<2}/{k:<2} | "
              f"{ex_ok[0]:>2}/{ex_ok[1]:<2}/{k:<2}")
    print(f"all orders: certify median {statistics.median(all_cert) * 1e3:.2f} ms, "
          f"grid-pf median {statistics.median(all_pf) * 1e3:.2f} ms")

    print("\nper instance (truth; certify verdict, rule, time; "
          "grid-pf and grid-expm strict/tolerant):")
    word = {True: "density", False: "not"}
    for n, name, truth, cert, verdict, pf, em, tc in details:
        flag = "" if all(v == truth for v in (*pf, *em)) else "   <- a grid is wrong"
        print(f"  n={n} {name:<17} truth={word[truth]:<7} {cert.status.value:<12} {verdict:<9} "
              f"{cert.method:<52} {tc * 1e3:5.1f} ms  pf={word[pf[0]]}/{word[pf[1]]}  "
              f"expm={word[em[0]]}/{word[em[1]]}{flag}")
        if cert.status is Nonnegativity.INCONCLUSIVE:
            print(f"      reason: {cert.reason}")

    print("\nclassical Padé fits of lognormal moments (mean 1), truth not known in advance:")
    for n in range(2, 7):
        row = []
        times = []
        for sigma2 in (Q(1, 5), Q(1, 2), Q(1), Q(3, 2)):
            lst = classical_pade(sigma2, n)
            if lst is None or lst.order != n:
                row.append(f"s2={sigma2}: degenerate")
                continue
            tc, cert = timed(certify, lst)
            times.append(tc)
            row.append(f"s2={sigma2}: {cert.status.value} ({cert.method}, {tc * 1e3:.1f} ms)")
        print(f"  order {n}: " + "; ".join(row))


if __name__ == "__main__":
    main()
