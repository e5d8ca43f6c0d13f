"""Exponential convergence of the JSQ(d) mean-field ODE to its fixed point; the M/G/1 comparison.

Q.-L. Li, "Doubly exponential solution for randomized load balancing models with general
service times" (arXiv 1008.3788, 2010), states (abstract and his section on the exponential
convergence of the current location of the supermarket model to its fixed point) that the
solution of the mean-field ODE tends to the fixed point exponentially fast.
:func:`convergence_rate` measures it: the ODE of SQ(d) with phase-type service (exponential
service is the one-phase case) is integrated with scipy (LSODA by default) and its exact
(complex-step) Jacobian from several initial states, the distance ``||x(t) - pi||_2`` to the
fixed point is recorded, and the decay rate is fitted by log-linear least squares on the late
window where the distance lies between ``window[1]`` and ``window[0]`` times its start (default
``1e-13`` and ``1e-6``: late enough that the slowest mode dominates even for starts with a
small component along it; the deviation ``x - pi`` is integrated with a cancellation-free
drift increment so that such small distances are resolved).  Independently, the spectral
abscissa (the largest real part of the eigenvalues) of the Jacobian of the drift at the fixed
point is computed; exponential convergence at that rate is what linearisation predicts.  For
``d >= 2`` the levels above the fixed point's support contribute eigenvalues near ``-1`` (the
departures of a nearly empty tail) in a strongly non-normal block, so a start with mass high
up settles on the slowest mode later than the gap alone suggests; ``rate_drift`` and
``fit_residual`` show it.

The ODE is truncated at ``K`` levels (``x_{K+1} = 0``).  ``K`` is chosen so that the fixed
point's ``u_K`` is below ``tail_tol`` (else :class:`TruncationError`), and the abscissa is
recomputed at ``K + extra`` levels to see whether it has converged in ``K``.  For ``d = 1``
(independent M/G/1 queues, a linear ODE) it has not: the generator of the M/M/1 birth-death
chain has continuous spectrum ``[-(1 + sqrt(lam))^2, -(1 - sqrt(lam))^2]`` on the infinite
state space, the truncated one has eigenvalues ``-(1 + lam) + 2 sqrt(lam) cos(j pi/(K+1))``,
whose top tends to the edge ``-(1 - sqrt(lam))^2`` like ``1/K^2``; the result says so
(``abscissa_converged`` False) instead of reporting a truncation artefact as the rate.

:func:`mg1_comparison` sets the fixed point's tail ``u_k`` (fraction of servers with at least
``k`` jobs) beside the M/PH/1 queue-length tail ``P(Q >= k)`` computed by the explicit
matrix-geometric form of Neuts (*Matrix-Geometric Solutions in Stochastic Models*, 1981,
Chapter 3, the M/PH/1 queue): ``P(Q = k) = (1 - rho) alpha R^k 1`` with
``R = lam (lam I - lam 1 alpha - A)^{-1}``.
For ``d = 1`` both are the same law; for ``d >= 2`` the mean-field tail falls doubly
exponentially.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.integrate import solve_ivp

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError
from symq.core.parameters import integer_value, real_value
from symq.core.renamed import former_attribute, renamed_keywords
from symq.core.result import Exactness, ResultBase
from symq.laws import PhaseType, as_phase_type

from .jsq_ph import batched_drift, solve_jsq_ph
from .probes import probe_polynomial
from .sizes import PhaseTypeLaw

__all__ = ["ConvergenceRate", "MG1Comparison", "convergence_rate", "mg1_comparison",
           "drift", "deviation_drift", "jacobian", "spectral_abscissa", "mph1_tail"]

#: default bound on the fixed point's tail mass at the truncation level.
TAIL_TOL = 1e-14
#: default fit window: distance between 1e-13 and 1e-6 of its start.
WINDOW = (1e-6, 1e-13)
#: starts understood by :func:`convergence_rate`.
STARTS = ("empty", "heavy", "random")


# --------------------------------------------------------------------------------------------
# the drift (batched, complex-safe) and its exact Jacobian
# --------------------------------------------------------------------------------------------


@renamed_keywords(law="sizes")
def drift(X: Any, d: int, lam: float, sizes: PhaseType) -> Any:
    """Right-hand side of the SQ(d) mean-field ODE with PH service, truncated at ``K`` levels.

    ``X`` has shape ``(..., K, m)`` (leading batch axes allowed, complex entries allowed):
    ``X[..., k-1, j]`` is the fraction of servers with at least ``k`` jobs whose job in service
    is in phase ``j`` (Bramson, Lu, Prabhakar 2010; Li 2010's system of differential
    equations).  The same equations as
    :func:`symq.meanfield.jsq_ph.jsq_ph_drift` (its batched core, so that the complex-step
    Jacobian is one call).  No parameter checks.
    """
    return batched_drift(X, d, lam, sizes.alpha, sizes.A)


@renamed_keywords(law="sizes")
def deviation_drift(Y: NDArray[np.float64], P: NDArray[np.float64],
                    d: int, lam: float, sizes: PhaseType) -> NDArray[np.float64]:
    """``F(P + Y) - F(P)`` of :func:`drift` computed without cancellation (shape ``(K, m)``).

    The drift is linear except for the arrival terms ``lam h_d(u_{k-1}, u_k)(x_{k-1} - x_k)``
    and ``lam (1 - u_1^d) alpha``, whose increments are expanded binomially; so the
    increment keeps its relative accuracy however small ``Y`` is, and the distance to the
    fixed point can be followed far below ``eps |P|`` (the floor of integrating ``x`` itself).
    """
    P = np.asarray(P, dtype=float)
    increment = _deviation_rhs(P, d, lam, sizes, with_residual=False)
    return increment(0.0, np.asarray(Y, dtype=float).ravel()).reshape(P.shape)


def _deviation_rhs(P: NDArray[np.float64], d: int, lam: float, sizes: PhaseType,
                   with_residual: bool = True) -> Any:
    """:func:`deviation_drift` at ``P`` (plus ``F(P)`` if ``with_residual``) as a flat
    ``rhs(t, y)``, with the coefficients that depend on ``P`` alone computed once."""
    shape, m = P.shape, P.shape[1]
    alpha, A = sizes.alpha, sizes.A
    exit_ = -A.sum(axis=1)
    f0 = drift(P, d, lam, sizes) if with_residual else 0.0  # the Newton residual, ~1e-16
    pu = P.sum(axis=1)
    pu_prev = np.concatenate([[1.0], pu[:-1]])
    dp = np.vstack([np.zeros((1, m)), P[:-1]]) - P
    rate = lam * probe_polynomial(pu_prev, pu, d)
    # (p + a)^i = sum_l C(i, l) p^(i-l) a^l: coefficient rows for p = u_{k-1} and p = u_k
    coef = {(i, ell): (math.comb(i, ell) * pu_prev ** (i - ell),
                       math.comb(i, ell) * pu ** (i - ell))
            for i in range(d + 1) for ell in range(i + 1)}
    first = [math.comb(d, ell) * pu[0] ** (d - ell) for ell in range(d + 1)]

    def rhs(_t: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
        Y = y.reshape(shape)
        yu = Y.sum(axis=1)
        yu_prev = np.concatenate([[0.0], yu[:-1]])
        pow_prev = [np.ones_like(yu)] + [yu_prev ** ell for ell in range(1, d + 1)]
        pow_cur = [np.ones_like(yu)] + [yu ** ell for ell in range(1, d + 1)]
        inc = np.zeros_like(yu)
        for i in range(d):
            j = d - 1 - i
            di = sum(coef[i, ell][0] * pow_prev[ell] for ell in range(1, i + 1)) if i else 0.0
            dj = sum(coef[j, ell][1] * pow_cur[ell] for ell in range(1, j + 1)) if j else 0.0
            full_j = sum(coef[j, ell][1] * pow_cur[ell] for ell in range(j + 1))
            inc = inc + di * full_j + coef[i, 0][0] * dj
        dy = np.vstack([np.zeros((1, m)), Y[:-1]]) - Y
        y_after_exit = np.concatenate([Y[1:] @ exit_, [0.0]])
        out = (lam * inc)[:, None] * (dp + dy) + rate[:, None] * dy + Y @ A \
            + y_after_exit[:, None] * alpha
        out[0] = -lam * sum(first[ell] * yu[0] ** ell for ell in range(1, d + 1)) * alpha \
            + Y[0] @ A + y_after_exit[0] * alpha
        return (out + f0).ravel()

    return rhs


@renamed_keywords(law="sizes")
def jacobian(X: Any, d: int, lam: float, sizes: PhaseType) -> NDArray[np.float64]:
    """The Jacobian of :func:`drift` at ``X`` (shape ``(K, m)``), flattened row-major.

    Complex-step differentiation (Squire & Trapp, SIAM Review 40, 1998): the drift is a
    polynomial, so ``Im F(x + i h e_j)/h`` with ``h = 1e-30`` is exact to rounding.
    """
    X = np.asarray(X, dtype=float)
    n = X.size
    step = 1e-30
    probe = X[None, :, :] + 1j * step * np.eye(n).reshape((n,) + X.shape)
    return np.ascontiguousarray(drift(probe, d, lam, sizes).reshape(n, n).imag.T / step)


@renamed_keywords(law="sizes")
def spectral_abscissa(X: Any, d: int, lam: float, sizes: PhaseType
                      ) -> tuple[float, NDArray[np.complex128]]:
    """Largest real part of the eigenvalues of the Jacobian at ``X``, and the eigenvalues
    sorted by decreasing real part."""
    ev = np.linalg.eigvals(jacobian(X, d, lam, sizes))
    ev = ev[np.argsort(-ev.real)]
    return float(ev[0].real), ev


def _newton(X0: NDArray[np.float64], d: int, lam: float, sizes: PhaseType
            ) -> tuple[NDArray[np.float64], float]:
    """Zero of the truncated drift near ``X0`` (Newton with the exact Jacobian)."""
    X = X0.copy()
    for _ in range(30):
        F = drift(X, d, lam, sizes)
        if np.max(np.abs(F)) < 1e-15:
            break
        step = np.linalg.solve(jacobian(X, d, lam, sizes), -F.ravel())
        X = X + step.reshape(X.shape)
    residual = float(np.max(np.abs(drift(X, d, lam, sizes))))
    if not residual < 1e-12:
        raise NotConverged("convergence_rate: Newton on the truncated drift", residual, 1e-12, 30)
    return X, residual


# --------------------------------------------------------------------------------------------
# convergence rate
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvergenceRate(ResultBase):
    """Measured exponential decay of ``||x(t) - pi||`` against the Jacobian's spectral abscissa.

    Attributes
    ----------
    d, lam : int, float
        Probes and per-server arrival rate.
    sizes : str
        Name of the job-size law (formerly ``service``, read for one release with a warning).
    K : int
        Levels of the truncated ODE.
    rates : dict
        Measured decay rate per start (``"empty"``, ``"heavy"``, ``"random-<i>"``): ``-slope``
        of the least-squares line through ``log ||x(t) - pi||_2`` on the window.
    fit_residual : dict
        Root-mean-square residual of ``log`` distance about the fitted line, per start.
    fit_window : dict
        ``(t_start, t_end, n_points)`` of the window, per start.
    rate_drift : dict
        Relative difference of the rates fitted on the two halves of the window (a pure
        exponential gives ~0; slowly separating modes give more).
    abscissa : float
        Spectral abscissa ``s`` of the Jacobian at the fixed point, ``K`` levels (``< 0``).
    rate_predicted : float
        ``-abscissa``.
    abscissa_extra : float
        The same at ``K + extra`` levels.
    abscissa_converged : bool
        ``|abscissa - abscissa_extra| <= 1e-8 |abscissa|``.
    second_eigenvalue : complex
        The eigenvalue with the next largest real part (the gap decides how soon the slowest
        mode dominates).
    relative_difference : dict
        ``|rate - rate_predicted| / rate_predicted`` per start.
    max_relative_difference : float
        Largest of them.
    tail_at_K : float
        The fixed point's ``u_K``.
    transient_tail_max : float
        Largest ``u_K(t)`` along the trajectories, starts included (mass at the truncation
        level: where it is not small the transient is that of the truncated system, while the
        fitted late rate is that of its linearisation, the abscissa converged in ``K``).
    fixed_point_residual : float
        ``max |F(pi)|`` of the truncated drift at the fixed point used.
    method, exactness
    seconds : float
        Wall time (formerly ``timings``, read for one release as ``{"total": seconds}``).
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "rate_predicted", "max_relative_difference")

    d: int
    lam: float
    sizes: str
    K: int
    rates: dict[str, float]
    fit_residual: dict[str, float]
    fit_window: dict[str, tuple[float, float, int]]
    rate_drift: dict[str, float]
    abscissa: float
    rate_predicted: float
    abscissa_extra: float
    abscissa_converged: bool
    second_eigenvalue: complex
    relative_difference: dict[str, float]
    max_relative_difference: float
    tail_at_K: float
    transient_tail_max: float
    fixed_point_residual: float
    method: str = ""
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    service = former_attribute("service", "sizes")
    timings = former_attribute("timings", "seconds", lambda seconds: {"total": seconds})


def _law(sizes: PhaseTypeLaw | None) -> PhaseType:
    return as_phase_type(([1.0], [[-1.0]]) if sizes is None else sizes, "sizes")


def _fixed_point(d: int, lam: float, sizes: PhaseType, K: int | None,
                 tail_tol: float) -> tuple[NDArray[np.float64], int]:
    """Fixed point (shape ``(K, m)``) of the infinite system, cut or zero-padded to ``K``."""
    fp = solve_jsq_ph(d, lam, sizes)
    x = np.asarray(fp.x, dtype=float)
    if K is None:
        below = np.nonzero(x.sum(axis=1) < tail_tol)[0]
        K = int(below[0]) + 1 if below.size else x.shape[0]
        K = max(K, 4)
    if K <= x.shape[0]:
        x = x[:K]
    else:
        x = np.vstack([x, np.zeros((K - x.shape[0], x.shape[1]))])
    return x, int(K)


def _start(kind: str, K: int, sizes: PhaseType, heavy: int,
           rng: np.random.Generator) -> NDArray[np.float64]:
    m = sizes.alpha.size
    if kind == "empty":
        return np.zeros((K, m))
    if kind == "heavy":  # every server holds `heavy` jobs, the one in service in phase alpha
        X = np.zeros((K, m))
        X[:heavy] = sizes.alpha
        return X
    # a random monotone occupancy vector: u_1 uniform, then ratios uniform in (0.05, 0.7)
    u = rng.uniform(0.0, 1.0) * np.cumprod(np.concatenate([[1.0], rng.uniform(0.05, 0.7, K - 1)]))
    phases = rng.dirichlet(np.ones(m), size=K)
    return u[:, None] * phases


def _fit(t: NDArray[np.float64], dist: NDArray[np.float64], window: tuple[float, float]
         ) -> tuple[float, float, tuple[float, float, int], float]:
    ratio = dist / dist[0]
    mask = (ratio <= window[0]) & (ratio >= window[1])
    n = int(mask.sum())
    if n < 10:
        raise NotConverged("convergence_rate: fit window", float(ratio[-1]), window[1], n,
                           "the distance did not pass through the fit window on enough points")
    ts, ys = t[mask], np.log(dist[mask])
    slope, icpt = np.polyfit(ts, ys, 1)
    resid = float(np.sqrt(np.mean((ys - (slope * ts + icpt)) ** 2)))
    half = n // 2
    s1 = np.polyfit(ts[:half], ys[:half], 1)[0]
    s2 = np.polyfit(ts[half:], ys[half:], 1)[0]
    return float(-slope), resid, (float(ts[0]), float(ts[-1]), n), float(abs(s1 - s2) / abs(slope))


@renamed_keywords(service="sizes")
def convergence_rate(d: int, lam: float, sizes: PhaseTypeLaw | None = None, *, starts: Any = STARTS,
                     n_random: int = 2, K: int | None = None, extra: int = 10,
                     heavy: int = 5, window: tuple[float, float] = WINDOW,
                     tail_tol: float = TAIL_TOL, method: str = "LSODA", rtol: float = 1e-10,
                     rng: Any = 0) -> ConvergenceRate:
    """Measure the exponential decay rate of the JSQ(d) mean-field ODE towards its fixed point.

    Li (2010, arXiv 1008.3788) asserts that the current location of the supermarket model
    converges exponentially to its fixed point.  The ODE (module docstring) is integrated by
    LSODA (``rtol = 1e-10``, ``atol = 1e-20``, exact Jacobian) from each start, in the
    deviation ``y = x - pi`` with the cancellation-free increment :func:`deviation_drift`, so
    that the distance ``||y||_2`` keeps its relative accuracy down to ``1e-13`` of its start; it
    is recorded on 600 points, and ``log`` distance fitted by a
    line on the window; the rate is compared with ``-s``, ``s`` the spectral abscissa of the
    Jacobian at ``pi`` (eigenvalues of the complex-step Jacobian, independent of the
    integration).

    Parameters
    ----------
    d : int
        Number of queues sampled per arrival (``>= 1``).
    lam : float
        Per-server arrival rate, ``lam E[X] < 1``.
    sizes : PhaseType, (alpha, A), optional
        Job-size law (default: unit-mean exponential).
    starts : sequence of {"empty", "heavy", "random"}
        Initial states: the empty system, every server holding ``heavy`` jobs (the job in
        service in phase ``alpha``), and ``n_random`` random monotone occupancy vectors
        (``u_1`` uniform, ratios ``u_{k+1}/u_k`` uniform in ``(0.05, 0.7)``) with Dirichlet
        phases (seeded by ``rng``).
    n_random : int, default 2
    K : int, optional
        Levels of the ODE (default: ``heavy + 5`` above the first level where the fixed point's
        ``u_k < tail_tol``, so that the transients of the starts stay away from the truncation;
        ``transient_tail_max`` reports how far they reach).
    extra : int, default 10
        The abscissa is recomputed at ``K + extra`` levels (convergence in ``K``).
    heavy : int, default 5
        Jobs per server of the heavy start (``< K``).
    window : (float, float), default (1e-6, 1e-13)
        The fit uses the times where ``distance/distance(0)`` lies in ``[window[1], window[0]]``.
    tail_tol : float, default 1e-14
        Largest ``u_K`` of the fixed point accepted.
    method : {"LSODA", "Radau", "BDF"}, default "LSODA"
        The scipy integrator (all given the exact Jacobian); ``atol = 1e-20``.
    rtol : float, default 1e-10
        Relative tolerance of the integrator, in ``[1e-13, 1e-8]``.
    rng : int or Generator, default 0

    Returns
    -------
    ConvergenceRate

    Raises
    ------
    InvalidParameter
        Naming ``d``, ``lam``, ``sizes``, ``starts``, ``n_random``, ``K``, ``extra``, ``heavy``,
        ``window`` or ``tail_tol``.
    StabilityError
        ``lam E[X] >= 1``.
    TruncationError
        The fixed point's ``u_K`` exceeds ``tail_tol`` at the given ``K``.
    NotConverged
        A trajectory did not reach the end of the window.
    """
    begin = time.perf_counter()
    d = integer_value("d", d, 1, "the number of sampled queues")
    lam = real_value("lam", lam, "a finite real number > 0 (the per-server arrival rate)",
                     lambda v: v > 0)
    law = _law(sizes)
    if lam * law.mean() >= 1:
        raise StabilityError(f"per-server load lam*E[X]={lam * law.mean():.6g} must be < 1")
    starts = tuple(starts) if not isinstance(starts, str) else (starts,)
    if not starts or any(s not in STARTS for s in starts):
        raise InvalidParameter("starts", starts, f"a non-empty sequence of {STARTS}")
    n_random = integer_value("n_random", n_random, 0)
    extra = integer_value("extra", extra, 1)
    heavy = integer_value("heavy", heavy, 1)
    tail_tol = real_value("tail_tol", tail_tol, "a real number in (0, 1)", lambda v: 0 < v < 1)
    try:
        hi, lo = (float(w) for w in window)
    except (TypeError, ValueError):
        raise InvalidParameter("window", window, "two numbers 1 > hi > lo >= 1e-15") from None
    if not 1 > hi > lo >= 1e-15:
        raise InvalidParameter("window", window, "two numbers 1 > hi > lo >= 1e-15")
    if method not in ("LSODA", "Radau", "BDF"):
        raise InvalidParameter("method", method, "'LSODA', 'Radau' or 'BDF'")
    rtol = real_value("rtol", rtol, "a real number in [1e-13, 1e-8]", lambda v: 1e-13 <= v <= 1e-8)
    if K is not None:
        K = integer_value("K", K, 2, "or None for the automatic truncation")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    x_inf, K_auto = _fixed_point(d, lam, law, K, tail_tol)
    if K is None:  # room above the fixed point's support for the transients of the starts
        x_inf, K_auto = _fixed_point(d, lam, law, K_auto + heavy + 5, tail_tol)
    K = K_auto
    if heavy >= K:
        raise InvalidParameter("heavy", heavy, f"an integer < K = {K}")
    pi, fp_res = _newton(x_inf, d, lam, law)
    tail_at_k = float(pi[-1].sum())
    if tail_at_k > tail_tol:
        raise TruncationError("convergence_rate", "queue-length levels (fixed point u_K)",
                              tail_at_k, tail_tol, f"K={K}", "raise K or tail_tol")
    s, ev = spectral_abscissa(pi, d, lam, law)
    pi_x, _ = _newton(np.vstack([pi, np.zeros((extra, pi.shape[1]))]), d, lam, law)
    s_extra = spectral_abscissa(pi_x, d, lam, law)[0]
    converged = abs(s - s_extra) <= 1e-8 * abs(s)
    shape = pi.shape

    rhs = _deviation_rhs(pi, d, lam, law)

    def jac(_t: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return jacobian(pi + y.reshape(shape), d, lam, law)

    labels: list[tuple[str, str]] = []
    for kind in starts:
        if kind == "random":
            labels += [(f"random-{i}", kind) for i in range(n_random)]
        else:
            labels.append((kind, kind))
    rates, resid, win, drift_rel, rel = {}, {}, {}, {}, {}
    transient = 0.0
    t_end = 1.5 * math.log(1.0 / lo) / abs(s) + 20.0
    for label, kind in labels:
        y0 = (_start(kind, K, law, heavy, generator) - pi).ravel()
        horizon = t_end
        for _ in range(4):
            t = np.linspace(0.0, horizon, 600)
            sol = solve_ivp(rhs, (0.0, horizon), y0, method=method, t_eval=t, jac=jac,
                            rtol=rtol, atol=1e-20)
            if not sol.success:
                raise NotConverged(f"convergence_rate: {method} ({sol.message})", math.inf,
                                   rtol, 0)
            dev = sol.y.T.reshape((-1,) + shape)
            dist = np.sqrt(np.sum(dev ** 2, axis=(1, 2)))
            if dist[-1] <= lo * dist[0] and np.sum(dist <= hi * dist[0]) >= 60:
                break
            horizon *= 2.0
        transient = max(transient, float(np.max((pi[-1] + dev[:, -1, :]).sum(axis=1))))
        rates[label], resid[label], win[label], drift_rel[label] = _fit(t, dist, (hi, lo))
        rel[label] = abs(rates[label] + s) / abs(s)
    how = (f"{method} (rtol {rtol:g}, atol 1e-20, exact Jacobian) of the deviation from the fixed "
           f"point on K={K} levels x {shape[1]} phases; log-linear fit where distance/start is "
           f"in [{lo:g}, {hi:g}]; abscissa by eigenvalues of the "
           f"complex-step Jacobian at the fixed point")
    if not converged:
        how += (f"; ABSCISSA NOT CONVERGED IN K ({s:.6g} at K={K}, {s_extra:.6g} at "
                f"K={K + extra}): the slowest mode is a truncation of a continuous spectrum edge")
    if transient > tail_tol:
        how += f"; transients reach u_K = {transient:.2g} at the truncation level"
    return ConvergenceRate(
        d=d, lam=lam, sizes=str(getattr(law, "name", "") or "PH"), K=K, rates=rates,
        fit_residual=resid, fit_window=win, rate_drift=drift_rel, abscissa=s, rate_predicted=-s,
        abscissa_extra=s_extra, abscissa_converged=bool(converged),
        second_eigenvalue=complex(ev[1]) if ev.size > 1 else complex("nan"),
        relative_difference=rel, max_relative_difference=max(rel.values()), tail_at_K=tail_at_k,
        transient_tail_max=transient, fixed_point_residual=fp_res, method=how,
        seconds=time.perf_counter() - begin)


# --------------------------------------------------------------------------------------------
# comparison with the M/G/1 queue
# --------------------------------------------------------------------------------------------


@renamed_keywords(service="sizes")
def mph1_tail(lam: float, sizes: PhaseTypeLaw, levels: int) -> NDArray[np.float64]:
    """``P(Q >= k)``, ``k = 1..levels``, of the M/PH/1 FCFS queue (matrix-geometric, explicit R).

    Neuts (1981, Chapter 3, the M/PH/1 queue): with ``rho = lam E[X] < 1``, the stationary
    vector of level ``k``
    (jobs present, phase of the job in service) is ``(1 - rho) alpha R^k`` with
    ``R = lam (lam I - lam 1 alpha - A)^{-1}``, so
    ``P(Q >= k) = (1 - rho) alpha R^k (I - R)^{-1} 1``.
    The residual of the QBD equation ``lam I + R (A - lam I) + R^2 a alpha = 0`` is checked.
    """
    law = _law(sizes)
    lam = real_value("lam", lam, "a finite real number > 0", lambda v: v > 0)
    levels = integer_value("levels", levels, 1)
    alpha, A = law.alpha, law.A
    m = alpha.size
    rho = lam * law.mean()
    if rho >= 1:
        raise StabilityError(f"M/PH/1 load rho = lam E[X] = {rho:.6g} must be < 1")
    eye = np.eye(m)
    R = lam * np.linalg.inv(lam * eye - lam * np.outer(np.ones(m), alpha) - A)
    exit_ = -A.sum(axis=1)
    residual = np.max(np.abs(lam * eye + R @ (A - lam * eye) + R @ R @ np.outer(exit_, alpha)))
    if not residual < 1e-10:
        raise NotConverged("mph1_tail: matrix-geometric R", float(residual), 1e-10, 1)
    tail_vec = np.linalg.solve(eye - R, np.ones(m))
    out = np.empty(levels)
    row = (1.0 - rho) * alpha
    for k in range(levels):
        row = row @ R
        out[k] = row @ tail_vec
    return out


@dataclass(frozen=True)
class MG1Comparison(ResultBase):
    """The mean-field tail ``u_k`` of JSQ(d) beside the M/PH/1 queue-length tail ``P(Q >= k)``.

    Attributes
    ----------
    d, lam : int, float
    sizes : str
        Name of the job-size law (formerly ``service``, read for one release with a warning).
    k : ndarray
        Levels ``1..levels``.
    u : ndarray
        Mean-field fixed point ``u_k`` (:func:`symq.meanfield.jsq_ph.solve_jsq_ph`).
    mg1_tail : ndarray
        ``P(Q >= k)`` of M/PH/1 (:func:`mph1_tail`).
    ratio : ndarray
        ``u_k / P(Q >= k)``.
    max_relative_difference : float
        ``max_k |u_k - P(Q >= k)| / P(Q >= k)``.
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "max_relative_difference")

    d: int
    lam: float
    sizes: str
    k: NDArray[np.int64]
    u: NDArray[np.float64]
    mg1_tail: NDArray[np.float64]
    ratio: NDArray[np.float64]
    max_relative_difference: float
    method: str = ""
    exactness: Exactness = Exactness.NUMERIC

    service = former_attribute("service", "sizes")


@renamed_keywords(service="sizes")
def mg1_comparison(d: int, lam: float, sizes: PhaseTypeLaw | None = None,
                   levels: int = 8) -> MG1Comparison:
    """Compare the JSQ(d) mean-field fixed point with the M/G/1 queue-length tail (same law).

    ``d = 1`` is exactly M/PH/1 (each server an independent M/PH/1 queue with rate ``lam``);
    for ``d >= 2`` the fixed point's tail falls doubly exponentially (Li 2010; for
    exponential service ``u_k = rho^((d^k-1)/(d-1))``) while the M/G/1 tail is geometric.

    Parameters
    ----------
    d : int
        Probes per arrival, ``>= 1``.
    lam : float
        Arrival rate, ``lam E[X] < 1``.
    sizes : PhaseType or (alpha, A), optional
        Job-size law (default: unit-mean exponential).
    levels : int, default 8
        Levels ``k = 1..levels`` listed.

    Raises
    ------
    InvalidParameter, StabilityError
    """
    d = integer_value("d", d, 1, "the number of sampled queues")
    lam = real_value("lam", lam, "a finite real number > 0", lambda v: v > 0)
    levels = integer_value("levels", levels, 1)
    law = _law(sizes)
    if lam * law.mean() >= 1:
        raise StabilityError(f"per-server load lam*E[X]={lam * law.mean():.6g} must be < 1")
    fp = solve_jsq_ph(d, lam, law)
    u = np.zeros(levels)
    n = min(levels, fp.u.size)
    u[:n] = fp.u[:n]
    tail = mph1_tail(lam, law, levels)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = u / tail
    return MG1Comparison(
        d=d, lam=lam, sizes=str(getattr(law, "name", "") or "PH"), k=np.arange(1, levels + 1),
        u=u, mg1_tail=tail, ratio=ratio,
        max_relative_difference=float(np.max(np.abs(u - tail) / tail)),
        method="mean field: cavity QBD iteration (solve_jsq_ph); M/PH/1: Neuts' explicit R")
