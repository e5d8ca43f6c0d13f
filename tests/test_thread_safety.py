"""Numerics called from several threads at once give the serial results bit for bit.

symq's high-precision code runs in thread-local private mpmath contexts
(:mod:`symq.core.precision`); mpmath's global context is never changed.  Each job below is run
serially first, then 3 times each from 4 threads concurrently (interleaved with a user thread
that does its own mpmath work at its own precision); every result must be identical to the
serial one (``_mpf_`` tuples of enclosures and witnesses, ``==`` for floats and rationals), and
the global precisions must be 53 bits afterwards.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from symq.core.precision import working_dps
from symq.me import ME, certify, mg1_waiting_time
from symq.me.pade import pade_fit
from symq.me.transform import RationalLST, s

REPEATS = 3
THREADS = 4


def _raw(x):
    """Exact, context-free form of a result: mpmath numbers by their binary tuples."""
    if isinstance(x, (list, tuple)):
        return tuple(_raw(v) for v in x)
    if hasattr(x, "_mpf_"):
        return ("mpf", x._mpf_)
    if hasattr(x, "_mpc_"):
        return ("mpc", x._mpc_)
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.tobytes())
    return x


def _certificate(cert):
    return _raw((cert.status.value, cert.method, cert.witness, cert.enclosure, cert.reason,
                 cert.boxes, cert.tail_bound, cert.dps, cert.poles, cert.residues))


def _lognormal_moments(sigma2: Fraction, K: int):
    # m_k = exp(k (k - 1) sigma^2 / 2) for the lognormal of mean 1, at 60 digits
    with working_dps(60) as ctx:
        return [ctx.exp(k * (k - 1) * ctx.mpf(sigma2.numerator) / sigma2.denominator / 2)
                for k in range(1, K + 1)]


def _normalised(expr):
    return RationalLST.from_expr(sp.cancel(expr / expr.subs(s, 0)))


# f = 5 [e^-t - 3 e^-2t + 2.1 e^-3t]: negative on an interior interval (exact root isolation in x)
DIP = _normalised(5 / (s + 1) - 15 / (s + 2) + sp.Rational(21, 2) / (s + 3))
# e^-t + 1/2 cos(3t) e^-2t - 1/3 sin(5t) e^-3t: nonnegative, proved by branch and bound
OSCILLATING = _normalised(1 / (s + 1) + sp.Rational(1, 2) * (s + 2) / ((s + 2) ** 2 + 9)
                          - sp.Rational(1, 3) * 5 / ((s + 3) ** 2 + 25))
SHARED = ME(_normalised(1 / (s + 1) - sp.Rational(1, 2) / (s + 2) + 1 / (s + 3) ** 2))


def job_lognormal_classical():
    """Floating-mode Padé fit (sigma = 0.5, order 3) and its NEGATIVE certificate (f(0) < 0)."""
    moments = _lognormal_moments(Fraction(1, 4), 5)
    fitted = pade_fit(moments, order=3)
    cert = certify(fitted.lst)
    assert cert.status.value == "NEGATIVE" and cert.enclosure[1] < 0
    return (fitted.lst.numerator, fitted.lst.denominator, fitted.dps), _certificate(cert)


def job_lognormal_extended():
    moments = _lognormal_moments(Fraction(1, 4), 3)
    fitted = pade_fit(moments, order=3, zero=[0, 0])
    return fitted.lst.numerator, fitted.lst.denominator, _certificate(certify(fitted.lst))


def job_dip():
    cert = certify(DIP)
    assert (cert.status.value, cert.method) == (
        "NEGATIVE", "exact factorisation (x = exp(-t)): sign change in x")
    return _certificate(cert)


def job_oscillating():
    cert = certify(OSCILLATING)
    assert (cert.status.value, cert.method) == ("NONNEGATIVE", "branch and bound")
    return _certificate(cert)


def job_shared_distribution():
    """One ME object shared by all threads: cached poles re-used at several precisions."""
    return _raw((SHARED.poles(dps=40), SHARED.residues(dps=25), SHARED.pdf_mp([0.5, 3], dps=45),
                 SHARED.ccdf_mp(sp.Rational(7, 2), dps=30), SHARED.cdf(np.array([0.1, 1.0]))))


def job_mg1():
    waiting = mg1_waiting_time(ME.erlang(2, 3), "1/2")
    positive = ME(waiting.positive_part)
    return waiting.rho, waiting.positive_part, _raw(positive.cdf_mp(1, dps=40))


def job_routing():
    from symq.routing import minimize_social_cost

    sol = minimize_social_cost([1.0, 2.0, 4.0], [1.0, 1.0, 2.0], 3.0)
    return _raw((sol.cost, np.asarray(sol.loads)))


def job_supermarket():
    from symq.meanfield import solve_supermarket

    r = solve_supermarket(2, 0.9, method="fixed point")
    return r.ET, r.EQ, tuple(r.tail)


def job_compiled():
    from symq.core import compile as symq_compile

    x, y = sp.symbols("x y")
    f = symq_compile(sp.exp(x) * sp.sqrt(y) / 3 + sp.log(1 + x * y), [x, y], backend="mpmath")
    return _raw(f(sp.Rational(1, 3), 2, dps=40))


JOBS = [job_lognormal_classical, job_lognormal_extended, job_dip, job_oscillating,
        job_shared_distribution, job_mg1, job_routing, job_supermarket, job_compiled]


def test_concurrent_results_equal_serial_results_and_global_precision_is_untouched():
    assert mpmath.mp.prec == 53 and mpmath.iv.prec == 53
    serial = {job.__name__: job() for job in JOBS}
    assert mpmath.mp.prec == 53 and mpmath.iv.prec == 53

    stop = threading.Event()
    user_errors: list[str] = []

    def user_thread():
        # a user's own mpmath work at the default and at its own precision, during the run
        third_53 = mpmath.mpf(1) / 3
        while not stop.is_set():
            if (mpmath.mpf(1) / 3)._mpf_ != third_53._mpf_ or mpmath.mp.prec != 53:
                user_errors.append(f"global precision changed to {mpmath.mp.prec} bits")
            with mpmath.workdps(25):   # changes the global context: symq must not care
                value = mpmath.sqrt(2)
                if mpmath.mp.dps != 25 or abs(value**2 - 2) > mpmath.mpf(10) ** -24:
                    user_errors.append(f"user precision {mpmath.mp.dps} != 25")

    user = threading.Thread(target=user_thread)
    user.start()
    try:
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            futures = [(job.__name__, pool.submit(job)) for _ in range(REPEATS)
                       for job in JOBS[::-1] + JOBS]
            results = [(name, future.result()) for name, future in futures]
    finally:
        stop.set()
        user.join()

    for name, result in results:
        assert result == serial[name], name
    assert not user_errors, user_errors[:3]
    assert mpmath.mp.prec == 53 and mpmath.iv.prec == 53


def test_window_solves_in_threads_never_change_a_user_threads_precision():
    """Issue 29: three threads solving HighSpeed TCP while a user thread computes 1/3.

    sympy's simplify, limit and assumption queries evaluate numeric constants such as
    ``log(83000) - log(38)`` in mpmath's *global* context; before symq kept those constants
    away from sympy, the user's thread got 103-bit values in about a fifth of its evaluations
    and the global precision could be left at 103 bits.
    """
    from symq.window import highspeed, solve_protocol

    assert mpmath.mp.prec == 53
    third_53 = (mpmath.mpf(1) / 3)._mpf_
    stop = threading.Event()
    counts = {"evaluations": 0, "anomalies": 0}

    def user_thread():
        while not stop.is_set():
            value = mpmath.mpf(1) / 3
            counts["evaluations"] += 1
            if value._mpf_ != third_53 or mpmath.mp.prec != 53:
                counts["anomalies"] += 1

    # a user thread sees a change only when the scheduler switches at the wrong moment; a
    # spy on the global context's setters makes the test deterministic: it records every
    # write to mpmath.mp's precision (private contexts are other instances and pass through)
    context_type = type(mpmath.mp)
    prec_property, dps_property = context_type.prec, context_type.dps
    writes: list[str] = []

    def spy(prop, label):
        def setter(ctx, value):
            if ctx is mpmath.mp:
                writes.append(f"{label}={value} from {threading.current_thread().name}")
            prop.fset(ctx, value)
        return property(prop.fget, setter)

    user = threading.Thread(target=user_thread, name="user")
    context_type.prec, context_type.dps = spy(prec_property, "prec"), spy(dps_property, "dps")
    user.start()
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            # a fresh protocol object in each thread (nothing of an earlier solve re-used)
            laws = list(pool.map(lambda p: solve_protocol(highspeed(p)), [1e-2, 2e-2, 3e-2]))
    finally:
        stop.set()
        user.join()
        context_type.prec, context_type.dps = prec_property, dps_property
    assert counts["evaluations"] > 0
    assert counts["anomalies"] == 0, counts
    assert not writes, writes[:3]
    assert mpmath.mp.prec == 53
    # the mean window falls as the loss rate rises (RFC 3649's response w ~ p^-0.835)
    means = [law.mean_window for law in laws]
    assert means[0] > means[1] > means[2] > 0
