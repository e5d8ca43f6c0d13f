"""JSQ(d) (supermarket model) with phase-type service, FCFS: the true mean-field fixed point.

State (the tagged-server view of Bramson, Lu, Prabhakar 2010): ``x_{k,j}`` is the fraction of
servers with at least ``k`` jobs whose job in service is in phase ``j``; ``u_k = sum_j x_{k,j}``,
``u_0 = 1``.  With PH service ``(alpha, A)``, exit vector ``a = -A 1`` and
``h_d(p, q) = sum_{i<d} p^i q^{d-1-i}``, the mean-field ODE of SQ(d) is::

    dx_1/dt = lam (1 - u_1^d) alpha + x_1 A + (x_2 . a) alpha
    dx_k/dt = lam h_d(u_{k-1}, u_k) (x_{k-1} - x_k) + x_k A + (x_{k+1} . a) alpha,   k >= 2.

Its fixed point is the stationary law of one M/PH/1 queue whose arrival rate depends on its own
length, ``lam_k = lam h_d(u_k, u_{k+1})`` (Bramson, Lu, Prabhakar, SIGMETRICS 2010 and
Queueing Systems 71, 2012: asymptotic independence; AAP 23(5), 2013: FIFO tails depend on the
service law).  :func:`solve_jsq_ph` computes it by the cavity / level-dependent QBD iteration
(as Hellemans and Van Houdt's ``general_functions/SQ_PH.m``; the backward R-recursion of
``derivations/li-nonlinear.md`` §3-§4).

:func:`product_form_residual` checks the product-form reading of Li (2010, arXiv 1008.3788,
"Doubly exponential solution for randomized load balancing models with general service
times"): ``x_k = u_k theta`` with ``u_k = rho^((d^k-1)/(d-1))`` and
``theta = alpha (-A)^{-1}/E[X]``.  It is a fixed point only for exponential service; for
``k >= 2`` the drift is ``(u_k - u_{k+1})(theta - alpha)/E[X]`` (insert the candidate in the ODE
and use ``rho u_{k-1}^d = u_k``, ``theta A = -alpha/E[X]``, ``theta a = 1/E[X]``).

Examples
--------
>>> from symq.laws import hyperexponential2
>>> fp = solve_jsq_ph(2, 0.9, hyperexponential2(1.0, 10.0))
>>> fp.residual < 1e-10, fp.ET > 2 * 2.614
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError
from symq.core.parameters import integer_value, real_value
from symq.core.renamed import renamed_keywords
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase, check_probability, check_tail
from symq.laws import PhaseType, as_phase_type, ph_moments, stationary_phase

from .probes import probe_polynomial as _hd
from .results import check_means
from .sizes import PhaseTypeLaw
from .supermarket import closed_form_values, truncation_level

__all__ = [
    "JSQPHFixedPoint", "solve_jsq_ph", "jsq_ph_drift", "batched_drift", "product_form_candidate",
    "product_form_residual", "product_form_ET",
]

#: tail probability below which the truncation level K is accepted.
TAIL = 1e-16
#: Loads ``lam E[X]`` below this are solved in light traffic (:func:`_light_traffic`).
LIGHT_TRAFFIC = 1e-200
#: largest truncation level tried by the adaptive truncation.
MAX_LEVELS = 2000


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _check_d_lam(d: Any, lam: Any) -> tuple[int, float]:
    d = integer_value("d", d, 1, "the number of sampled queues")
    lam = real_value("lam", lam, "a finite real number > 0 with lam*E[X] < 1 (the per-server "
                     "arrival rate)", lambda v: v > 0)
    return d, lam


def _check_stable(d: int, lam: float, mean: float) -> None:
    if lam * mean >= 1.0:
        raise StabilityError(
            f"per-server load lam*E[X]={lam * mean:.6g} (lam={lam!r}, E[X]={mean:.6g}) must be < 1 "
            f"for JSQ(d={d}) with phase-type service: every server needs lam*E[X] < 1")


def _exponential_tail(d: int, rho: float, K: int) -> NDArray[np.float64]:
    """``rho^((d^k-1)/(d-1))`` for ``k = 1..K`` (``rho^k`` for ``d = 1``).

    The compiled closed form of the exponential supermarket model
    (:func:`~symq.meanfield.supermarket.closed_form_values`).
    """
    return closed_form_values(d, rho, np.arange(1, K + 1))


def _exponential_levels(d: int, rho: float, tail: float = TAIL) -> int:
    """First level ``K`` with ``rho^((d^K-1)/(d-1)) < tail`` (no cap)."""
    return truncation_level(d, rho, tail, cap=2**62)


# --------------------------------------------------------------------------------------------
# the mean-field drift (plain numpy, independent of the R-recursion)
# --------------------------------------------------------------------------------------------


@renamed_keywords(service="sizes")
def jsq_ph_drift(x: ArrayLike, d: int, lam: float, sizes: PhaseTypeLaw,
                 x_next: ArrayLike | None = None) -> NDArray[np.float64]:
    """Right-hand side of the mean-field ODE of SQ(d) with PH service (module docstring).

    Parameters
    ----------
    x : array_like, shape (K, m)
        ``x[k-1, j]`` = fraction of servers with at least ``k`` jobs and the job in service in
        phase ``j``.
    d, lam : int, float
        Number of probes and per-server arrival rate.
    sizes : PhaseType, (alpha, A) or ME with a phase-type form
        The job-size law (converted by :func:`symq.laws.as_phase_type`).
    x_next : array_like, shape (m,), optional
        ``x_{K+1}`` (default 0: the ODE truncated at ``K`` levels).

    Returns
    -------
    ndarray, shape (K, m)
        ``dx_k/dt`` for ``k = 1..K``.
    """
    d, lam = _check_d_lam(d, lam)
    law = as_phase_type(sizes, "sizes")
    a_vec, T = law.alpha, law.A
    X = np.asarray(x, dtype=float)
    if X.ndim != 2 or X.shape[1] != a_vec.size or X.shape[0] < 1:
        raise InvalidParameter("x", X, f"an array of shape (K, {a_vec.size}) with K >= 1")
    nxt = None if x_next is None else np.asarray(x_next, dtype=float)
    return batched_drift(X, d, lam, a_vec, T, nxt)


def batched_drift(X: Any, d: int, lam: float, alpha: NDArray[np.float64],
           A: NDArray[np.float64], x_next: Any = None) -> Any:
    """The drift of :func:`jsq_ph_drift` without checks, for ``X`` of shape ``(..., K, m)``.

    Leading batch axes and complex entries are allowed (the complex-step Jacobian of
    :mod:`symq.meanfield.convergence` evaluates all probes in one call).
    """
    X = np.asarray(X)
    exit_ = -A.sum(axis=1)
    u = X.sum(axis=-1)
    one = np.ones(u.shape[:-1] + (1,), dtype=u.dtype)
    u_prev = np.concatenate([one, u[..., :-1]], axis=-1)
    zero = np.zeros(X.shape[:-2] + (1, X.shape[-1]), dtype=X.dtype)
    last = zero if x_next is None else zero + x_next
    x_prev = np.concatenate([zero, X[..., :-1, :]], axis=-2)
    x_after = np.concatenate([X[..., 1:, :], last], axis=-2)
    rate = lam * _hd(u_prev, u, d)
    out = rate[..., None] * (x_prev - X) + X @ A + (x_after @ exit_)[..., None] * alpha
    # level 1: arrivals to empty servers, lam (1 - u_1^d) alpha (the x_0 - x_1 form has no x_0)
    out[..., 0, :] = (lam * (1.0 - u[..., 0] ** d))[..., None] * alpha + X[..., 0, :] @ A \
        + (x_after[..., 0, :] @ exit_)[..., None] * alpha
    return out


# --------------------------------------------------------------------------------------------
# cavity / level-dependent QBD iteration (numba kernel)
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _qbd_iteration(u: np.ndarray, d: int, lam: float, alpha: np.ndarray, A: np.ndarray,
                   tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, int, float]:
    """Iterate u -> tail of the M/PH/1 queue with arrival rates lam h_d(u_k, u_{k+1}).

    Backward R-recursion (derivations/li-nonlinear.md, sections 3-4): U_K = A; for k = K-1..1,
    R_k = lam_k (-U_{k+1})^{-1}, U_k = A - lam_k I + R_k a alpha; R_0 = lam_0 alpha (-U_1)^{-1};
    p_1 = R_0, p_{k+1} = p_k R_k, normalised with p_0.  Returns (u, x, iterations, change).
    """
    K = u.size
    m = alpha.size
    a = np.zeros(m)
    for i in range(m):
        s = 0.0
        for j in range(m):
            s -= A[i, j]
        a[i] = s
    R = np.zeros((K, m, m))
    p = np.zeros((K, m))
    x = np.zeros((K, m))
    rates = np.zeros(K)
    cur = u.copy()
    change = np.inf
    it = 0
    while it < max_iter:
        it += 1
        # arrival rates lam_k = lam h_d(u_k, u_{k+1}), u_0 = 1, lam_K = 0 (truncation)
        for k in range(K):
            hi = 1.0 if k == 0 else cur[k - 1]
            lo = cur[k]
            h = 0.0
            for i in range(d):
                h += hi ** i * lo ** (d - 1 - i)
            rates[k] = lam * h
        U = A.copy()
        for k in range(K - 1, 0, -1):
            Rk = rates[k] * np.linalg.inv(-U)
            R[k] = Rk
            ra = Rk @ a
            U = A.copy()
            for i in range(m):
                U[i, i] -= rates[k]
                for j in range(m):
                    U[i, j] += ra[i] * alpha[j]
        p[0] = rates[0] * (alpha @ np.linalg.inv(-U))
        for k in range(1, K):
            p[k] = p[k - 1] @ R[k]
        total = 1.0 + p.sum()
        # tails x_k = sum_{i >= k} p_i, normalised
        acc = np.zeros(m)
        for k in range(K - 1, -1, -1):
            for j in range(m):
                acc[j] += p[k, j] / total
                x[k, j] = acc[j]
        change = 0.0
        for k in range(K):
            new = 0.0
            for j in range(m):
                new += x[k, j]
            diff = abs(new - cur[k])
            if diff > change:
                change = diff
            cur[k] = new
        if change < tol:
            break
    return cur, x, it, change


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JSQPHFixedPoint(ResultBase):
    """Mean-field fixed point of JSQ(d) with PH service, FCFS (from :func:`solve_jsq_ph`).

    Attributes
    ----------
    d : int
    lam : float
        Per-server arrival rate.
    alpha, A : ndarray
        The phase-type service law.
    mean : float
        ``E[X]``.
    u : ndarray, shape (K,)
        Tail ``u_1..u_K`` (fraction of servers with at least ``k`` jobs), ``u_K < 1e-16`` under
        adaptive truncation.
    x : ndarray, shape (K, m)
        ``x_{k,j}``: at least ``k`` jobs and the job in service in phase ``j``.
    EQ : float
        Mean number of jobs per server, ``sum_k u_k``.
    ET : float
        Mean response time ``EQ / lam`` (Little).
    EW : float
        Mean waiting time ``ET - E[X]``.
    iterations : int
        Cavity iterations (summed over truncation levels tried).
    residual : float
        ``max |dx/dt|`` of the mean-field ODE at ``x`` (:func:`jsq_ph_drift`, computed
        independently of the R-recursion).
    change : float
        Last max change of ``u`` in the iteration (``< tol``).
    invariants : dict
        ``"u1 - lam E[X]"`` and ``"|x1 - lam E[X] theta|"`` (max norm), both ~0 (work conservation
        and the phase law of the job in service).
    method : str
        How the fixed point was computed.
    exactness : Exactness
        ``numeric``.
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "ET", "EQ", "EW", "residual")

    d: int
    lam: float
    alpha: NDArray[np.float64]
    A: NDArray[np.float64]
    mean: float
    u: NDArray[np.float64]
    x: NDArray[np.float64]
    EQ: float
    ET: float
    EW: float
    iterations: int
    residual: float
    change: float
    invariants: dict[str, float] = field(default_factory=dict)
    method: str = "cavity / level-dependent QBD iteration"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def K(self) -> int:
        """Truncation level (number of levels)."""
        return int(self.u.size)

    def tail(self, threshold: float = TAIL) -> list[float]:
        """``u_1, u_2, ...`` while ``u_k >= threshold``."""
        out: list[float] = []
        for value in self.u:
            if value < threshold:
                break
            out.append(float(value))
        return out


@renamed_keywords(service="sizes")
def solve_jsq_ph(d: int, lam: float, sizes: PhaseTypeLaw, *, tol: float = 1e-12,
                 K: int | None = None, max_iter: int = 100_000,
                 max_levels: int = MAX_LEVELS) -> JSQPHFixedPoint:
    """Mean-field fixed point of JSQ(d) with phase-type service, FCFS (cavity QBD iteration).

    Cavity / level-dependent QBD iteration: given the tail ``u``, the queue-length-dependent
    arrival rates are ``lam_0 = lam (1 - u_1^d)/(1 - u_1)`` and ``lam_k = lam h_d(u_k, u_{k+1})``;
    the M/PH/1 queue with these rates, truncated at ``K`` levels, is solved by the backward
    R-recursion, and its tail becomes the new ``u`` (Bramson, Lu, Prabhakar 2010/2012: the
    arrivals to a tagged queue are Poisson with a rate depending on its length).  The iteration
    starts from the exponential tails ``rho^((d^k-1)/(d-1))``, ``rho = lam E[X]``, and stops
    when the max change of ``u`` is below ``tol``.  Unless ``K`` is given, the truncation grows
    until ``u_K < 1e-16``.

    Parameters
    ----------
    d : int
        Number of queues probed per arrival, ``>= 1`` (``d = 1``: M/PH/1, Pollaczek-Khinchine).
    lam : float
        Per-server arrival rate, ``lam E[X] < 1``.
    sizes : PhaseType, (alpha, A) or ME with a phase-type form
        The job-size law (converted by :func:`symq.laws.as_phase_type`; a law without a
        phase-type form is refused with a message that says so).
    tol : float, default 1e-12
        Stopping tolerance on ``max_k |u_k^new - u_k|``.
    K : int, optional
        Fixed truncation level (no adaptation).  Default: adaptive, ``u_K < 1e-16``.
    max_iter : int, default 100000
        Iterations allowed per truncation level.
    max_levels : int, default 2000
        Cap of the adaptive truncation.

    Returns
    -------
    JSQPHFixedPoint

    Raises
    ------
    InvalidParameter
        Bad ``d``, ``lam``, ``sizes``, ``tol``, ``K``, ``max_iter`` or ``max_levels``.
    StabilityError
        ``lam E[X] >= 1``.
    NotConverged
        The iteration did not reach ``tol`` in ``max_iter`` iterations, or the adaptive
        truncation reached ``max_levels`` with ``u_K >= 1e-16`` (heavy tail: lower ``lam`` or the
        SCV, or raise ``max_levels``).

    Examples
    --------
    >>> fp = solve_jsq_ph(2, 0.9, ([1.0], [[-1.0]]))  # exponential: lam^(2^k - 1)
    >>> round(fp.ET, 6)
    2.614057
    """
    d, lam = _check_d_lam(d, lam)
    law = as_phase_type(sizes, "sizes")
    a_vec, T, mean = law.alpha.copy(), law.A.copy(), law.mean()
    _check_stable(d, lam, mean)
    tol = real_value("tol", tol, "a finite real number > 0", lambda v: v > 0)
    max_iter = integer_value("max_iter", max_iter, 1)
    max_levels = integer_value("max_levels", max_levels, 2)
    if K is not None:
        K = integer_value("K", K, 2, "or None for adaptive truncation")
    rho = lam * mean
    if rho < LIGHT_TRAFFIC:
        return _light_traffic(d, lam, law, a_vec, T, mean, 2 if K is None else int(K))
    adaptive = K is None
    m = a_vec.size
    top = int(K) if K is not None else int(max_levels)
    require_memory("max_levels" if K is None else "K", top, 8.0 * top * (4 * m * m + 6 * m),
                   what=f"{top} levels of {m} phases",
                   limit=lambda budget: f"at most {int(budget // (8 * (4 * m * m + 6 * m)))}")
    levels = (int(K) if K is not None
              else min(max(_exponential_levels(d, rho) + 2, 8), int(max_levels)))
    u0 = _exponential_tail(d, rho, levels)
    total_iter = 0
    while True:
        u, x, it, change = _qbd_iteration(u0, d, lam, a_vec, T, float(tol), int(max_iter))
        total_iter += int(it)
        if not (change < tol) or not np.all(np.isfinite(u)):
            raise NotConverged(f"the JSQ(d) cavity iteration (d={d}, lam={lam!r}, K={levels})",
                               float(change), float(tol), total_iter)
        if not adaptive or u[-1] < TAIL:
            break
        if levels >= max_levels:
            raise TruncationError(
                f"JSQ(d) with phase-type service (d={d}, lam={lam!r}, E[X]={mean:.6g})",
                "queue-length levels (tail u_K)", float(u[-1]), TAIL, f"K={max_levels}",
                "the queue-length tail is too heavy: lower lam or scv (library: raise max_levels)")
        ratio = float(u[-1] / u[-2]) if u[-2] > 0 else 0.5
        ratio = min(max(ratio, 1e-3), 1.0 - 1e-6)
        extra = math.ceil(1.2 * math.log(TAIL / u[-1]) / math.log(ratio)) + 5
        new_levels = min(max(levels + extra, math.ceil(1.25 * levels)), int(max_levels))
        u0 = np.concatenate([u, u[-1] * ratio ** np.arange(1, new_levels - levels + 1)])
        levels = new_levels
    if adaptive:
        # the growth overshoots for doubly exponential tails: re-solve at the first level with
        # u_k < 1e-16 (plus one), warm-started, and keep it if it still meets the tail criterion
        first = int(np.argmax(u < TAIL)) + 2
        if first < levels:
            u_t, x_t, it_t, change_t = _qbd_iteration(u[:first].copy(), d, lam, a_vec, T,
                                                      float(tol), int(max_iter))
            total_iter += int(it_t)
            if change_t < tol and u_t[-1] < TAIL and np.all(np.isfinite(u_t)):
                u, x, change = u_t, x_t, change_t
    check_tail("solve_jsq_ph", "u", u)
    check_probability("solve_jsq_ph", "x", x)
    drift = jsq_ph_drift(x, d, lam, law)
    theta = stationary_phase(law)
    eq = float(u.sum())
    check_means("solve_jsq_ph", EQ=eq)
    invariants = {"u1 - lam E[X]": float(u[0] - rho),
                  "|x1 - lam E[X] theta|": float(np.max(np.abs(x[0] - rho * theta)))}
    return JSQPHFixedPoint(d=d, lam=lam, alpha=a_vec, A=T, mean=mean, u=u, x=x, EQ=eq,
                           ET=eq / lam, EW=eq / lam - mean, iterations=total_iter,
                           residual=float(np.max(np.abs(drift))), change=float(change),
                           invariants=invariants,
                           method=(f"cavity / level-dependent QBD iteration (as Hellemans & Van "
                                   f"Houdt's SQ_PH.m), K={u.size} levels, {total_iter} iterations"))


def _light_traffic(d: int, lam: float, sizes: PhaseType, a_vec: NDArray[np.float64],
                   T: NDArray[np.float64], mean: float,
                   levels: int) -> JSQPHFixedPoint:
    """The fixed point at a load ``rho = lam E[X] < 1e-200``, to double precision.

    A server is busy with probability ``u_1 = rho`` (work conservation), its job in phase
    ``rho theta``; an arrival waits only when all ``d`` sampled servers are busy (probability
    ``rho^d``), for the residual service ``E[X^2]/(2 E[X])`` of its server, so
    ``E[W] = rho^d E[X^2]/(2 E[X]) (1 + O(rho))`` (for ``d = 1`` the leading term of
    Pollaczek-Khinchine's ``lam E[X^2]/(2 (1 - rho))``).  The relative error ``O(rho)`` is far
    below double precision, where the cavity iteration itself would work with subnormal
    probabilities (``rho < 2.2e-308``) and lose every digit.  Levels ``k >= 2`` hold
    ``u_k = O(rho^2) < 1e-400``: 0 in double precision (``levels`` of them are returned).
    """
    rho = lam * mean
    theta = stationary_phase(sizes)
    second = float(ph_moments(sizes, 2)[1])
    wait = rho ** d * second / (2.0 * mean)
    u = np.zeros(levels)
    x = np.zeros((levels, theta.size))
    u[0], x[0] = rho, rho * theta
    with np.errstate(under="ignore"):
        drift = jsq_ph_drift(x, d, lam, sizes)
    et = mean + wait
    return JSQPHFixedPoint(d=d, lam=lam, alpha=a_vec, A=T, mean=mean, u=u, x=x, EQ=lam * et,
                           ET=et, EW=wait, iterations=0,
                           residual=float(np.max(np.abs(drift))), change=0.0,
                           invariants={"u1 - lam E[X]": 0.0, "|x1 - lam E[X] theta|": 0.0},
                           method=f"light traffic (lam E[X] = {rho:.3g} < {LIGHT_TRAFFIC:g}): "
                                  "u_1 = lam E[X], E[W] = (lam E[X])^d E[X^2]/(2 E[X])")


@renamed_keywords(service="sizes")
def product_form_candidate(d: int, lam: float, sizes: PhaseTypeLaw,
                           K: int | None = None) -> NDArray[np.float64]:
    """Li's product-form candidate ``x_k = u_k theta``, ``u_k = rho^((d^k-1)/(d-1))``, ``k = 1..K``.

    ``rho = lam E[X]`` and ``theta = alpha (-A)^{-1}/E[X]`` (Li 2010, arXiv 1008.3788: "arrival
    information x service information", read as ``x_{k,j} = u_k theta_j``).  ``K`` defaults to the
    first level with ``u_K < 1e-16``.  Returns an array of shape ``(K, m)``.
    """
    d, lam = _check_d_lam(d, lam)
    law = as_phase_type(sizes, "sizes")
    _check_stable(d, lam, law.mean())
    return _candidate(d, lam, law, K)


def _candidate(d: int, lam: float, sizes: PhaseType, K: int | None) -> NDArray[np.float64]:
    rho = lam * sizes.mean()
    if K is None:
        K = _exponential_levels(d, rho)
    K = integer_value("K", K, 1)
    return _exponential_tail(d, rho, int(K))[:, None] * stationary_phase(sizes)[None, :]


@renamed_keywords(service="sizes")
def product_form_residual(d: int, lam: float, sizes: PhaseTypeLaw,
                          K: int | None = None) -> NDArray[np.float64]:
    """Max abs drift per level of Li's product-form candidate plugged into the mean-field ODE.

    The candidate (:func:`product_form_candidate`) is extended by one level (``x_{K+1}``), so
    no truncation error enters.  Level 1 is 0 (up to round-off); for ``k >= 2`` the drift is
    ``(u_k - u_{k+1})(theta - alpha)/E[X]`` (module docstring): zero only when
    ``theta = alpha`` (exponential service), nonzero for H2 (Bramson, Lu, Prabhakar, AAP 2013:
    FIFO tails depend on the service law).

    Returns
    -------
    ndarray, shape (K,)
        ``max_j |dx_{k,j}/dt|`` for ``k = 1..K``.

    Examples
    --------
    >>> float(product_form_residual(2, 0.9, ([1.0], [[-1.0]])).max()) < 1e-15
    True
    """
    d, lam = _check_d_lam(d, lam)
    law = as_phase_type(sizes, "sizes")
    _check_stable(d, lam, law.mean())
    if K is None:
        K = _exponential_levels(d, lam * law.mean())
    ext = _candidate(d, lam, law, int(K) + 1)
    drift = jsq_ph_drift(ext[:-1], d, lam, law, x_next=ext[-1])
    return np.max(np.abs(drift), axis=1)


@renamed_keywords(service="sizes")
def product_form_ET(d: int, lam: float, sizes: PhaseTypeLaw) -> float:
    """``E[T]`` of Li's product form: ``sum_k rho^((d^k-1)/(d-1)) / lam`` (the exponential value).

    Examples
    --------
    >>> round(product_form_ET(2, 0.9, ([1.0], [[-1.0]])), 6)
    2.614057
    """
    d, lam = _check_d_lam(d, lam)
    mean = as_phase_type(sizes, "sizes").mean()
    _check_stable(d, lam, mean)
    rho = lam * mean
    levels = _exponential_levels(d, rho, 1e-18)
    return float(_exponential_tail(d, rho, levels).sum() / lam)
