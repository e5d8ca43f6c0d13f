"""Mean-field analysis of attained-service load balancing: the cavity queue with age layers.

Hellemans and Van Houdt, "Improved load balancing in large scale systems using attained
service time reporting" (IEEE/ACM ToN 2021, arXiv 2011.08250: the paper's mean-field analysis;
the authors' ``general_functions/simple_kl_PH.m`` and ``find_lambdas.m``).  ``N -> inf``
identical FCFS servers, Poisson arrivals at rate ``lam`` per server, phase-type sizes
``(alpha, A)``; a dispatcher probes ``d`` servers (with replacement) and sends the job to the
one with the smallest score ``xi(k, l)`` (:mod:`~symq.meanfield.attained.policies`), idle
servers first, ties at random.

The unknown is ``x(k, l, j)`` = P(the cavity server is busy, the age of its job in service lies
in layer ``k``, it holds ``l`` jobs, the job in service is in phase ``j``), of total mass
``lam E[X]``.  One iteration of :func:`solve_attained` maps ``x`` to a new ``x``:

1. Arrival rate of a busy server in class ``(k, l)``: with ``w`` the mass of the busy cells with
   the same score and ``v`` the mass of the busy cells with a larger score,
   ``lam_{k,l} = lam ((v + w)^d - v^d) / w = lam sum_{i<d} (v + w)^i v^(d-1-i)`` (idle servers,
   of mass ``1 - lam E[X]``, always win); ``lam_{k,B} = 0`` (truncation).
2. Within layer ``k`` the pair ``(l, j)`` is a CTMC with sub-generator
   ``F_k = L_k (x) I_m + I_B (x) A``, ``L_k = -diag(lam_{k,.}) + superdiag(lam_{k,1..B-1})``;
   ``Lambda_k = exp(F_k delta) = exp(L_k delta) (x) exp(A delta)`` (the two Kronecker terms
   commute; ``Lambda_{r+1} = 0``) and ``Psi_k = (I - Lambda_k) (-F_k)^{-1}``.
3. A service completion in ``(l, j)`` (rate ``a_j``, ``a = -A 1``) starts a new service in
   ``(l - 1, alpha)`` if ``l >= 2`` and in ``(1, alpha)`` if ``l = 1`` (the idle period is
   skipped: its length does not change the law of the busy states, whose mass is ``lam E[X]``).
4. Embedded chain at service starts.  Instead of the backward recursion
   ``Omega_k = Psi_k G + Lambda_k Omega_{k+1}`` of the paper, the same quantities are computed
   forward for the ``B - 1`` possible start states at once: ``R_1 = I (x) alpha``,
   ``R_{k+1} = R_k Lambda_k``, ``Y_k = R_k Psi_k = (R_k - R_{k+1}) (-F_k)^{-1}``; the start-to-
   start matrix is ``P = (sum_k Y_k) G``, ``pi`` its stationary vector (GTH elimination) and
   ``x(k)`` proportional to ``pi Y_k``.
5. Metrics: ``E[T] = sum l x / lam``, ``E[W] = E[T] - E[X]`` and the waiting-time law
   ``P(W > w) = sum_{l,j} q_{l,j} P(residual from phase j + X_1 + ... + X_{l-1} > w)``,
   ``q_{l,j} = sum_k lam_{k,l} x(k,l,j) / lam`` (:meth:`AttainedFixedPoint.waiting_ccdf`).

The iteration starts from the SQ(d) fixed point (the same analysis with one layer) and stops
when ``||x_new - x_old||_1 < tol``.

Examples
--------
>>> fp = solve_attained("SQ", 2, 0.5, ([1.0], [[-1.0]]), delta=0.5, rep_max=2.0, B=20)
>>> exact = sum(0.5 ** (2 ** l - 1) for l in range(1, 30)) / 0.5  # E[T] = sum_l u_l / lam
>>> round(fp.ET, 10), round(exact, 10)
(1.2656860361, 1.2656860361)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError
from symq.core.parameters import integer_value as _integer
from symq.core.parameters import real_value as _real
from symq.core.renamed import renamed_keywords
from symq.core.resources import largest_fitting, require_memory
from symq.core.result import Exactness, ResultBase, check_probability
from symq.laws import as_phase_type, subgenerator_expm

from ..probes import probe_polynomial as _hd
from ..results import check_means
from ..sizes import PhaseTypeLaw
from ..supermarket import closed_form_values
from .policies import Policy, get_policy

#: Terms ``d x layers x B`` of the probe polynomial one cavity evaluation may sum (its cost is
#: linear in ``d``: a few seconds a solve at this limit); a larger ``d`` is refused naming ``d``.
PROBE_TERMS_LIMIT = 5e7

__all__ = ["AttainedFixedPoint", "solve_attained", "attained_bytes", "age_layer_count",
           "TruncationWarning", "TRUNCATION_RTOL"]

#: layers processed at once in the forward pass (bounds the memory to O(_CHUNK n B m)).
_CHUNK = 256

#: relative mass at queue length ``B`` above which :func:`solve_attained` warns (or raises).
TRUNCATION_RTOL = 1e-8


class TruncationWarning(UserWarning):
    """The mass at the truncation level ``B`` is not negligible: raise ``B``."""


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------


def age_layer_count(delta: float, rep_max: float) -> int:
    """The number ``r = ceil(rep_max / delta)`` of age layers of width ``delta`` below
    ``rep_max`` (the last layer, ages above ``rep_max``, is the ``r + 1``-th), robust to rounding
    (``1.1 / 0.1 = 11.000000000000002`` gives 11); ``10**15`` for a ratio beyond any memory
    budget, which the memory guard then refuses by name."""
    ratio = rep_max / delta
    if not math.isfinite(ratio) or ratio > 1e15:
        return 10 ** 15  # far beyond any memory budget; the guard refuses it by name
    return max(1, math.ceil(ratio - 1e-9))


def attained_bytes(layers: float, B: float, m: float) -> float:
    """Estimated peak memory (bytes) of :func:`solve_attained` with ``layers = r + 1`` age layers,
    queue truncation ``B`` and ``m`` phases: the chunked forward pass (two arrays of
    ``(256 + 1) B (B - 1) m``), the inverses ``(r + 1) B m^2``, the birth-process exponentials
    ``(r + 1) B^2`` (with their uniformisation buffers) and the occupation arrays."""
    K, B, m = float(layers), float(B), float(m)
    chunk = min(K, float(_CHUNK)) + 1.0
    kept = 2.0 * K * B * m * m + 12.0 * K * B * m + 2.0 * B * B * m + 4.0 * m * m
    # peak: the uniformisation buffers of _birth_expm (about 7 (r+1) B^2, freed on return), or
    # the kept exponentials with the chunk arrays of the forward pass
    floats = kept + max(7.0 * K * B * B, K * B * B + 4.0 * chunk * B * B * m)
    return 8.0 * floats


# --------------------------------------------------------------------------------------------
# one cavity iteration
# --------------------------------------------------------------------------------------------


class _Ranking:
    """Groups of equal scores, sorted; maps cell masses to arrival rates (step 1)."""

    def __init__(self, table: NDArray[np.float64], d: int, lam: float) -> None:
        self.shape = table.shape
        _, self.group = np.unique(table.ravel(), return_inverse=True)
        self.ngroups = int(self.group.max()) + 1
        self.d = d
        self.lam = lam

    def rates(self, mass: NDArray[np.float64]) -> NDArray[np.float64]:
        w = np.bincount(self.group, weights=mass.ravel(), minlength=self.ngroups)
        above = np.cumsum(w[::-1])[::-1]  # mass with score >= group's score
        v = above - w
        rate = self.lam * _hd(v + w, v, self.d)
        out = rate[self.group].reshape(self.shape)
        out[:, -1] = 0.0  # truncation: no arrivals at l = B
        return out


def _gth(P: NDArray[np.float64]) -> NDArray[np.float64]:
    """Stationary vector of a stochastic matrix by Grassmann-Taksar-Heyman elimination."""
    P = P.copy()
    n = P.shape[0]
    for k in range(n - 1, 0, -1):
        s = P[k, :k].sum()
        P[:k, k] /= s
        P[:k, :k] += np.outer(P[:k, k], P[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ P[:k, k]
    return pi / pi.sum()


def _birth_expm(rows: NDArray[np.float64], t: float) -> NDArray[np.float64]:
    """``exp(L t)`` for the pure-birth generators ``L = -diag(rows) + superdiag(rows[:, :-1])``.

    Uniformisation, ``sum_n Poisson(n; q t) P^n`` with ``P = I + L/q``, vectorised over the
    batch: a sum of nonnegative terms (no cancellation), with elementwise operations only
    (``P`` is bidiagonal), so it does not depend on BLAS threading.  ``q t > 500`` (where
    ``e^{-qt}`` would underflow) falls back to :func:`scipy.linalg.expm`.
    """
    U, B = rows.shape
    q = float(rows.max()) if rows.size else 0.0
    out = np.zeros((U, B, B))
    idx = np.arange(B)
    out[:, idx, idx] = 1.0
    if q <= 0.0:
        return out
    qt = q * t
    if qt > 500.0:
        L = np.zeros((U, B, B))
        L[:, idx, idx] = -rows
        L[:, idx[:-1], idx[1:]] = rows[:, :-1]
        return scipy.linalg.expm(L * t)
    # band storage: band[:, s, i] = exp(L t)[i, i + s]; P^n has s <= n
    pad = np.zeros((U, 2 * B))
    pad[:, :B] = 1.0 - rows / q
    dsh = np.stack([pad[:, s:s + B] for s in range(B)], axis=1)  # diag[i + s]
    pad[:, :B] = 0.0
    pad[:, 1:B] = rows[:, :-1] / q
    ssh = np.stack([pad[:, s:s + B] for s in range(B)], axis=1)  # sup[i + s - 1]
    bufs = (np.zeros((U, B, B)), np.zeros((U, B, B)))  # alternate P^n, P^(n+1) (bands)
    bufs[0][:, 0, :] = 1.0
    weight = math.exp(-qt)
    band = weight * bufs[0]
    total = weight
    n = 0
    while total < 1.0 - 1e-17 and n < 10_000:
        n += 1
        top = min(n, B - 1)
        a, b = bufs[(n - 1) % 2], bufs[n % 2]  # entries of a beyond band n-1 are zero
        np.multiply(a[:, :top + 1], dsh[:, :top + 1], out=b[:, :top + 1])
        b[:, 1:top + 1] += a[:, :top] * ssh[:, 1:top + 1]
        weight *= qt / n
        band[:, :top + 1] += weight * b[:, :top + 1]
        total += weight
        if weight < 1e-18 and n > qt:
            break
    out[:] = 0.0
    for s_ in range(B):
        out[:, idx[:B - s_], idx[s_:]] = band[:, s_, :B - s_]
    return out


class _Cavity:
    """Steps 2-4 for given rates ``lam_{k,l}``: the occupation ``x(k, l, j)``."""

    def __init__(self, K: int, B: int, delta: float, alpha: NDArray[np.float64],
                 A: NDArray[np.float64], mean: float, lam: float) -> None:
        self.K, self.B, self.delta = K, B, delta
        self.m = alpha.size
        self.alpha, self.A = alpha, A
        self.rho = lam * mean
        m, n = self.m, B - 1
        self.E = subgenerator_expm(A, delta)  # no cancellation at nearly equal rates
        exit_ = -A.sum(axis=1)
        # completions: (l, j) -> start state max(l - 1, 1), at rate a_j
        C = np.zeros((B * m, n))
        for l_ in range(B):
            C[l_ * m:(l_ + 1) * m, max(l_ - 1, 0)] = exit_
        self.C = C

    @staticmethod
    def _sylvester(D: NDArray[np.float64], rates: NDArray[np.float64],
                   Minv: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Z = D (-F_k)^{-1}`` layer by layer, ``D`` of shape (layers, B, rows, m).

        ``Z (-F_k) = D`` is the Sylvester equation ``L_k^T Z + Z A = -D``; ``L_k^T`` is lower
        bidiagonal, so it is solved level by level:
        ``Z_l (lam_l I - A) = D_l + lam_{l-1} Z_{l-1}``.
        """
        Z = np.empty_like(D)
        Z[:, 0] = np.matmul(D[:, 0], Minv[:, 0])
        for p in range(1, D.shape[1]):
            rhs = D[:, p] + rates[:, p - 1, None, None] * Z[:, p - 1]
            Z[:, p] = np.matmul(rhs, Minv[:, p])
        return Z

    def occupation(self, rates: NDArray[np.float64]) -> NDArray[np.float64]:
        """``x(k, l, j)`` for the rates ``lam_{k,l}`` (steps 2-4), total mass ``lam E[X]``."""
        K, B, m = self.K, self.B, self.m
        n = B - 1
        Minv = np.linalg.inv(rates[:, :, None, None] * np.eye(m) - self.A)
        E = self.E
        if K > 1:
            rows, inv = np.unique(rates[:-1], axis=0, return_inverse=True)
            inv = np.asarray(inv).ravel()
            eLT = np.swapaxes(_birth_expm(rows, self.delta), 1, 2).copy()
        # pass 1, by chunks of layers: R_{k+1} = R_k (exp(L_k delta) (x) exp(A delta)) for the
        # n start states at once, stored as (l, start, j) arrays, and sum_k Y_k with
        # Y_k = (R_k - R_{k+1}) (-F_k)^{-1}  (R_{K+1} = 0: Lambda of the last layer is 0)
        cur = np.zeros((B, n, m))
        cur[np.arange(n), np.arange(n), :] = self.alpha
        Ysum = np.zeros((B, n, m))
        for c0 in range(0, K, _CHUNK):
            c1 = min(K, c0 + _CHUNK)
            R = np.zeros((c1 - c0 + 1, B, n, m))
            R[0] = cur
            for k in range(c0, min(c1, K - 1)):
                R[k - c0 + 1] = (eLT[inv[k]] @ (R[k - c0].reshape(B * n, m) @ E).reshape(B, n * m)
                                 ).reshape(B, n, m)
            cur = R[-1]
            Z = self._sylvester(R[:-1] - R[1:], rates[c0:c1], Minv[c0:c1])
            Ysum += Z.sum(axis=0)
        P = Ysum.transpose(1, 0, 2).reshape(n, B * m) @ self.C
        pi = _gth(P)
        # pass 2: the same recursion for the single row pi R_k gives x(k) = pi Y_k
        r = np.zeros((K + 1, B, 1, m))
        r[0, :n, 0, :] = pi[:, None] * self.alpha[None, :]
        for k in range(K - 1):
            r[k + 1, :, 0, :] = eLT[inv[k]] @ (r[k, :, 0, :] @ E)
        x = self._sylvester(r[:-1] - r[1:], rates, Minv)[:, :, 0, :]
        x = np.maximum(x, 0.0)
        return x * (self.rho / x.sum())


# --------------------------------------------------------------------------------------------
# result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttainedFixedPoint(ResultBase):
    """Mean-field fixed point of an attained-service policy (from :func:`solve_attained`).

    Attributes
    ----------
    policy : str
        Policy name.
    d : int
    lam : float
        Per-server arrival rate.
    delta : float
        Width of the age layers.
    r : int
        ``r + 1`` layers; the last is ``[r delta, inf)``.
    B : int
        Queue-length truncation.
    alpha, A : ndarray
        Phase-type job-size law; ``mean`` is ``E[X]``.
    mean : float
    x : ndarray, shape (r+1, B, m)
        ``x[k-1, l-1, j]`` = P(busy, age layer ``k``, ``l`` jobs, job in service in phase
        ``j``); total mass ``lam E[X]``.
    rates : ndarray, shape (r+1, B)
        Arrival rates ``lam_{k,l}`` of a busy server in class ``(k, l)`` at the fixed point
        (``lam_{k,B} = 0``).
    scores : ndarray, shape (r+1, B)
        The policy's score table (:meth:`Policy.score_table` at :attr:`lower`); with
        ``delta`` it is the input of the finite-N simulator.
    ET, EW : float
        Mean response and waiting time: ``ET = sum l x / lam`` and ``EW = ET - E[X]``,
        computed as ``sum (l - 1) x / lam`` (equal since ``sum x = lam E[X]``; no cancellation
        at low load).
    iterations : int
        Cavity iterations (evaluations of steps 1-4 with ``r + 1`` layers), after the SQ(d)
        warm start (the same analysis with one layer, a few milliseconds).
    change : float
        Last ``||x_new - x_old||_1``.
    truncation_mass : float
        ``sum_{k,j} x(k, B, j) / (lam E[X])``: relative mass at the truncation level.
    method : str
    exactness : Exactness
        ``numeric``.
    """

    summary: ClassVar[tuple[str, ...]] = ("policy", "d", "lam", "EW", "ET", "P_wait")

    policy: str
    d: int
    lam: float
    delta: float
    r: int
    B: int
    alpha: NDArray[np.float64]
    A: NDArray[np.float64]
    mean: float
    x: NDArray[np.float64]
    rates: NDArray[np.float64]
    scores: NDArray[np.float64]
    ET: float
    EW: float
    iterations: int
    change: float
    truncation_mass: float
    method: str = "cavity queue with age layers (Hellemans & Van Houdt 2021)"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def lower(self) -> NDArray[np.float64]:
        """Lower boundaries ``b_k = (k-1) delta`` of the ``r + 1`` age layers."""
        return np.arange(self.r + 1) * self.delta

    @property
    def queue_tail(self) -> NDArray[np.float64]:
        """``u_l = P(Q >= l)``, ``l = 1..B`` (``u_1 = lam E[X]``)."""
        per_l = self.x.sum(axis=(0, 2))
        return np.cumsum(per_l[::-1])[::-1]

    @property
    def join_busy(self) -> NDArray[np.float64]:
        """``q[l-1, j]`` = P(an arrival joins a busy server holding ``l`` jobs, phase ``j``)."""
        return np.einsum("kl,klj->lj", self.rates, self.x) / self.lam

    @property
    def P_wait(self) -> float:
        """P(W > 0) = P(an arrival joins a busy server) (``= (lam E[X])^d`` up to truncation)."""
        return float(self.join_busy.sum())

    def _waiting_rep(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """PH-type representation ``(beta, Q)`` (defective) of ``W`` on ``W > 0``.

        Blocks ``0..B-2``; a start in block ``i`` runs through ``B - 1 - i`` service times: the
        residual from the current phase, then full sizes.  ``Q`` has ``A`` on the diagonal and
        ``a alpha`` on the superdiagonal blocks.
        """
        n = self.B - 1
        q = self.join_busy[:n]  # l = 1..B-1 (no arrivals at l = B)
        exit_ = -self.A.sum(axis=1)
        Q = (np.kron(np.eye(n), self.A)
             + np.kron(np.eye(n, k=1), np.outer(exit_, self.alpha)))
        beta = q[::-1].ravel()  # l jobs present -> block n - l
        return beta, Q

    def waiting_ccdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """``P(W > w)`` of the waiting time of an arrival (the authors' ``find_FbarW.m``).

        Exact up to the truncation: ``P(W > w) = beta exp(Q w) 1`` where ``(beta, Q)`` is the
        phase-type representation of "residual service from phase ``j`` plus ``l - 1`` full
        job sizes", mixed over the state ``(l, j)`` of the server joined.

        Parameters
        ----------
        w : array_like
            Times ``>= 0``, any shape.

        Returns
        -------
        ndarray
            Same shape as ``w``; ``P(W > 0) = P_wait``.

        Raises
        ------
        InvalidParameter
            ``w`` negative or not finite.
        """
        ww = np.asarray(w, dtype=float)
        if not np.all(np.isfinite(ww)) or np.any(ww < 0):
            raise InvalidParameter("w", ww, "finite real times >= 0")
        beta, Q = self._waiting_rep()
        flat = ww.ravel()
        out = np.empty(flat.size)
        ones = np.ones(Q.shape[0])
        step = max(1, min(64, int(4e6 // Q.shape[0] ** 2)))  # bounded memory
        for start in range(0, flat.size, step):
            chunk = flat[start:start + step]
            mats = scipy.linalg.expm(Q[None] * chunk[:, None, None])
            out[start:start + chunk.size] = (beta @ mats) @ ones
        return np.clip(out, 0.0, 1.0).reshape(ww.shape)

    def waiting_mean(self) -> float:
        """``E[W] = beta (-Q)^{-1} 1`` from the waiting-time law (equals ``EW`` by Little)."""
        beta, Q = self._waiting_rep()
        return float(beta @ np.linalg.solve(-Q, np.ones(Q.shape[0])))


# --------------------------------------------------------------------------------------------
# solver
# --------------------------------------------------------------------------------------------


def _iterate(cav: _Cavity, ranking: _Ranking, rates: NDArray[np.float64], tol: float,
             max_iter: int, bar: Any, label: str, x: NDArray[np.float64] | None = None,
             ) -> tuple[NDArray[np.float64], NDArray[np.float64], int, float]:
    change = math.inf
    it = 0
    if x is None:
        x = cav.occupation(rates)
        it += 1
    while it < max_iter:
        rates = ranking.rates(x.sum(axis=2))
        x_new = cav.occupation(rates)
        it += 1
        change = float(np.abs(x_new - x).sum())
        x = x_new
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"{label} change={change:.2e}")
        if change < tol:
            break
    return x, rates, it, change


@renamed_keywords(service="sizes")
def solve_attained(policy: str | Policy, d: int, lam: float, sizes: PhaseTypeLaw,
                   *, delta: float = 0.1, rep_max: float = 40.0,
                   B: int = 30, tol: float = 1e-10, max_iter: int = 500,
                   truncation: str = "warn", progress: bool = False) -> AttainedFixedPoint:
    """Mean-field fixed point of an attained-service dispatching policy (Hellemans, Van Houdt).

    The cavity queue with age layers of the paper's analysis (the authors' ``simple_kl_PH.m``
    and ``find_lambdas.m``), computed as in the module docstring (steps 1-5).

    Parameters
    ----------
    policy : str or Policy
        A :class:`~symq.meanfield.attained.policies.Policy` or a built-in name (see
        :func:`~symq.meanfield.attained.policies.get_policy`, threshold ``T = 2``).
    d : int
        Servers probed per arrival (with replacement), ``>= 1``.
    lam : float
        Per-server arrival rate, ``> 0`` with ``lam E[X] < 1``.
    sizes : PhaseType, (alpha, A) or ME with a phase-type form
        The job-size law (converted by :func:`symq.laws.as_phase_type`; a law without a
        phase-type form is refused with a message that says so).
    delta : float, default 0.1
        Width of the reported age layers, ``> 0``.
    rep_max : float, default 40.0
        Ages are reported up to ``r delta``, ``r = ceil(rep_max / delta)``; ``>= delta``.
    B : int, default 30
        Queue-length truncation, ``>= 2`` (no arrivals to a server holding ``B`` jobs).
    tol : float, default 1e-10
        Stop when ``||x_new - x_old||_1 < tol``.
    max_iter : int, default 500
        Cavity iterations allowed (for the SQ(d) warm start and again for the iteration with
        the ``r + 1`` layers).
    truncation : {"warn", "raise", "ignore"}, default "warn"
        What to do when the relative mass at ``l = B`` exceeds :data:`TRUNCATION_RTOL`.
    progress : bool, default False
        Show a tqdm bar of the iterations.

    Returns
    -------
    AttainedFixedPoint

    Raises
    ------
    InvalidParameter
        Bad ``d``, ``lam``, ``sizes``, ``delta``, ``rep_max``, ``B``, ``tol``,
        ``max_iter`` or ``truncation``.
    ResourceLimit
        The age layers (``rep_max / delta``), ``B`` and the phases need more memory than the
        budget (:func:`attained_bytes`); the message gives the smallest ``delta`` that fits.
    TruncationError
        (``truncation="raise"``) the relative mass at ``l = B`` exceeds
        :data:`TRUNCATION_RTOL`: raise ``B``.
    StabilityError
        ``lam E[X] >= 1``.
    NotConverged
        ``||x_new - x_old||_1 >= tol`` after ``max_iter`` iterations (the residual is ``inf``
        if ``max_iter = 1``: a single evaluation has no change to report).

    Warns
    -----
    TruncationWarning
        The relative mass at ``l = B`` exceeds :data:`TRUNCATION_RTOL` (raise ``B``).

    Examples
    --------
    >>> from symq.laws import hyperexponential2
    >>> h2 = hyperexponential2(1.0, 10.0)
    >>> fp = solve_attained("LEW", 2, 0.5, h2, delta=0.5, rep_max=10.0, B=40)
    >>> sq = solve_attained("SQ", 2, 0.5, h2, delta=0.5, rep_max=10.0, B=40)
    >>> bool(fp.EW < sq.EW), bool(abs(fp.x.sum() - 0.5) < 1e-12)
    (True, True)
    """
    pol = get_policy(policy) if not isinstance(policy, Policy) else policy
    d = _integer("d", d, 1, "the number of servers probed")
    lam = _real("lam", lam, "a finite real number > 0 with lam*E[X] < 1", lambda v: v > 0)
    law = as_phase_type(sizes, "sizes")
    vec, T, mean = law.alpha, law.A, law.mean()
    if lam * mean >= 1.0:
        raise StabilityError(
            f"per-server load lam*E[X]={lam * mean:.6g} (lam={lam:g}, E[X]={mean:.6g}) must be "
            f"< 1 for the attained-service policy {pol.name} with d={d}")
    delta = _real("delta", delta, "a finite real number > 0", lambda v: v > 0)
    rep_max = _real("rep_max", rep_max, f"a finite real number >= delta={delta:g}",
                    lambda v: v >= delta)
    B = _integer("B", B, 2, "the queue-length truncation")
    tol = _real("tol", tol, "a finite real number > 0", lambda v: v > 0)
    max_iter = _integer("max_iter", max_iter, 1)
    if truncation not in ("warn", "raise", "ignore"):
        raise InvalidParameter("truncation", truncation, "one of 'warn', 'raise', 'ignore'")
    r = age_layer_count(delta, rep_max)
    K = r + 1
    m = vec.size
    require_memory("delta", delta, attained_bytes(K, B, m),
                   what=f"{K:.3g} age layers x B={B} queue lengths x {m} phases",
                   limit=lambda budget: "at least {:.3g} (with rep_max={:g}, B={})".format(
                       largest_fitting(
                           lambda v: attained_bytes(age_layer_count(v, rep_max) + 1, B, m),
                           delta, rep_max, budget, decreasing=True), rep_max, B))
    terms = float(d) * K * B
    if terms > PROBE_TERMS_LIMIT:
        raise InvalidParameter(
            "d", d, f"<= {max(int(PROBE_TERMS_LIMIT // (K * B)), 1)} with {K} age layers and "
            f"B={B}", f"each cavity evaluation sums d x layers x B = {terms:.3g} terms of the "
            f"probe polynomial, over the limit of {PROBE_TERMS_LIMIT:.0e} (a few seconds a "
            f"solve); at this d a job waits with probability (lam*E[X])^d = "
            f"{(lam * mean) ** min(d, 10**6):.3g}")
    lower = np.arange(K) * delta
    scores = pol.score_table(lower, B, law)

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(desc=f"attained {pol.name}", unit="it", leave=False)
    try:
        # warm start: the SQ(d) fixed point, i.e. the same analysis with a single layer
        rho = lam * mean
        u = closed_form_values(d, rho, np.arange(1, B + 2))  # the exponential-service tail
        sq_rates = (lam * _hd(u[:-1], u[1:], d))[None, :].copy()
        sq_rates[:, -1] = 0.0
        sq_cav = _Cavity(1, B, delta, vec, T, mean, lam)
        sq_rank = _Ranking(np.arange(1, B + 1, dtype=float)[None, :], d, lam)
        x1, _, it0, change0 = _iterate(sq_cav, sq_rank, sq_rates, tol, max_iter, bar,
                                       "SQ(d) start")
        if not (change0 < tol):
            raise NotConverged(f"solve_attained SQ(d) warm start (d={d}, lam={lam:g}, B={B})",
                               change0, tol, it0)
        # spread the SQ(d) occupation over the layers: the SQ(d) rates in every layer
        cav = _Cavity(K, B, delta, vec, T, mean, lam)
        ranking = _Ranking(scores, d, lam)
        rates0 = np.repeat(sq_rank.rates(x1.sum(axis=2)), K, axis=0)
        x, rates, it, change = _iterate(cav, ranking, rates0, tol, max_iter, bar, pol.name)
    finally:
        if bar is not None:
            bar.close()
    iterations = it
    if not (change < tol) or not np.all(np.isfinite(x)):
        raise NotConverged(f"solve_attained cavity iteration ({pol.name}, d={d}, lam={lam:g}, "
                           f"delta={delta:g}, B={B})", change, tol, iterations)
    rates = ranking.rates(x.sum(axis=2))
    check_probability(f"solve_attained ({pol.name})", "x", x)
    trunc = float(x[:, -1, :].sum() / rho)
    if trunc > TRUNCATION_RTOL and truncation != "ignore":
        msg = (f"relative mass {trunc:.3g} at the queue-length truncation B={B} exceeds "
               f"{TRUNCATION_RTOL:g} ({pol.name}, d={d}, lam={lam:g}): raise B")
        if truncation == "raise":
            raise TruncationError(f"solve_attained ({pol.name}, d={d}, lam={lam:g})",
                                  "queue length B (relative mass at l = B)", trunc,
                                  TRUNCATION_RTOL, f"B={B}", "raise B")
        warnings.warn(msg, TruncationWarning, stacklevel=2)
    # E[W] = E[T] - E[X] = sum (l - 1) x / lam exactly (sum x = lam E[X]): no cancellation
    EW = float(np.einsum("klj,l->", x, np.arange(B, dtype=float)) / lam)
    ET = EW + mean
    check_means(f"solve_attained ({pol.name})", EW=EW, ET=ET)
    return AttainedFixedPoint(
        policy=pol.name, d=d, lam=lam, delta=delta, r=r, B=B, alpha=vec, A=T, mean=mean, x=x,
        rates=rates, scores=scores, ET=ET, EW=EW, iterations=iterations, change=change,
        truncation_mass=trunc,
        method=(f"cavity queue with {K} age layers of width {delta:g}, queue truncation B={B} "
                f"(Hellemans & Van Houdt 2021)"))
