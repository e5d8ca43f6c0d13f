r"""The numba decision functions of the built-in dispatching policies (codes and arrays).

:func:`choose_server` picks the server of one arriving job from the backlogs ``u`` (work), the
job counts ``n``, the size ``x`` and the arrays of a
:class:`~symq.dispatch.policies.policy.BoundPolicy`; the simulator's kernel and
:meth:`~symq.dispatch.policies.policy.BoundPolicy.decide` call it.  The meaning of every policy,
with and without per-server speeds, is stated in :mod:`symq.dispatch.policies.named`.  An empty
``spd`` array means unit speeds: that path compares exactly what it compared before speeds existed
(the same decisions and random draws, bit for bit).
"""

from __future__ import annotations

import numba
import numpy as np

# numba's cache keys a compiled function on its own file only: the kernels here are compiled
# with simplex_value inside, so a change to symq/dispatch/simplex.py needs a change to this
# file too (or a cleared cache): the capped simplex's table_cap came in this way.
from ..simplex import NO_CROSS, cross_slope, simplex_value

__all__ = ["RND", "RR", "JSQ", "LWL", "SITA", "FPI", "LOOKUP", "SCORE", "JIQ", "JIQ_JSQ",
           "LOOKUP_SIMPLEX", "choose_server", "choose_unit", "choose_general", "lookup_value",
           "decide_many", "fpi_cost"]

# integer codes understood by choose_server (SCORE: the argmin of a compiled score, run by the
# callers through symq.dispatch.policies.score and symq.dispatch.policies.speeds)
RND, RR, JSQ, LWL, SITA, FPI, LOOKUP, SCORE, JIQ, JIQ_JSQ, LOOKUP_SIMPLEX = range(11)

# defaults of the trailing arrays: no packed value, unit speeds
_NO_VP = np.zeros(1)
_NO_B = np.zeros((1, 1), dtype=np.int64)
_NO_SPD = np.empty(0)


@numba.njit(cache=True, inline="always")
def lookup_value(v: np.ndarray, delta: float, c_M: float, a: float, b: float,
                 tail_slope: float = 0.0, tail_cross: np.ndarray = NO_CROSS) -> float:
    r"""Bilinear interpolation of the table ``v`` at backlogs ``(a, b)``, analytic tail beyond U.

    ``v[i, j]`` is the value at ``(i delta, j delta)``, ``U = (v.shape[0] - 1) delta``; beyond
    ``U`` each coordinate adds the tail of the boundary (Hyytiä & Righter, arXiv 2402.08142,
    Part 1, the truncated value iteration)

    .. math::

        v(\dots, U + s, \dots) = v(\dots, U, \dots) + c_M\bigl((U + s)^2 - U^2\bigr)
        + \beta s, \qquad s > 0,

    with ``c_M`` the quadratic curvature and :math:`\beta` = ``tail_slope`` a linear term
    (default 0: the quadratic tail alone, the same bits as before the slope existed), raised by
    the tail's cross term ``tail_cross`` at the other coordinate clamped to ``U``
    (:func:`~symq.dispatch.simplex.cross_slope`; default none).  The slope and the cross term
    are the last parameters so that positional calls ``lookup_value(v, delta, c_M, a, b)``
    keep their meaning.
    """
    n = v.shape[0] - 1
    U = n * delta
    extra = 0.0
    a_in = min(a, U)
    b_in = min(b, U)
    if a > U:
        slope = tail_slope + cross_slope(tail_cross, b_in / delta)
        extra += c_M * (a * a - U * U) + slope * (a - U)
        a = U
    if b > U:
        slope = tail_slope + cross_slope(tail_cross, a_in / delta)
        extra += c_M * (b * b - U * U) + slope * (b - U)
        b = U
    fa = a / delta
    ia = int(fa)
    if ia >= n:
        ia = n - 1
    fa -= ia
    fb = b / delta
    ib = int(fb)
    if ib >= n:
        ib = n - 1
    fb -= ib
    return (extra + (1.0 - fa) * ((1.0 - fb) * v[ia, ib] + fb * v[ia, ib + 1])
            + fa * ((1.0 - fb) * v[ia + 1, ib] + fb * v[ia + 1, ib + 1]))


@numba.njit(cache=True)
def fpi_cost(u: float, x: float, lam_i: float, rho_i: float) -> float:
    """The FPI index :func:`symq.dispatch.symbolic.fpi_index` typed for numba kernels.

    A fast path of the compiled symbolic form :func:`symq.dispatch.symbolic.fpi_index_fn`:
    :func:`choose_server` and the simulator's kernel are cached machine code (``cache=True``),
    which a function generated at run time (the numba backend of :func:`symq.core.compile`)
    would not be; tests/dispatch/test_compiled_forms.py checks that this form equals the
    compiled symbolic index (numpy and numba backends) at random points.
    """
    return u + x + lam_i * x * (2.0 * u + x) / (2.0 * (1.0 - rho_i))


@numba.njit(cache=True)
def _sita(x: float, thr: np.ndarray) -> int:  # pragma: no cover - numba
    """The SITA class of size ``x``: ``j`` with ``thr[j-1] <= x < thr[j]``."""
    j = 0
    while j < thr.shape[0] and x >= thr[j]:
        j += 1
    return j


@numba.njit(cache=True)
def _fpi_best(u, x, lam_i, rho_i, spd):  # pragma: no cover - numba
    """argmin of the FPI index (in time units with speeds; ties to the lowest index)."""
    het = spd.shape[0] > 0
    best = 0
    best_cost = np.inf
    for i in range(u.shape[0]):
        if het:
            c = fpi_cost(u[i] / spd[i], x / spd[i], lam_i[i], rho_i[i])
        else:
            c = fpi_cost(u[i], x, lam_i[i], rho_i[i])
        if c < best_cost:
            best_cost = c
            best = i
    return best


@numba.njit(cache=True)
def _by_shares(cum: np.ndarray) -> int:  # pragma: no cover - numba
    """A server drawn with the probabilities whose cumulative sums are ``cum``."""
    r = np.random.random()
    i = 0
    while i < cum.shape[0] - 1 and r >= cum[i]:
        i += 1
    return i


@numba.njit(cache=True)
def _jsq(cnt: np.ndarray, spd: np.ndarray) -> int:  # pragma: no cover - numba
    """Fewest jobs; ties to the faster server (with speeds), then uniformly at random."""
    het = spd.shape[0] > 0
    best = 0
    ties = 1
    for i in range(1, cnt.shape[0]):
        if cnt[i] < cnt[best] or (het and cnt[i] == cnt[best] and spd[i] > spd[best]):
            best = i
            ties = 1
        elif cnt[i] == cnt[best] and (not het or spd[i] == spd[best]):
            ties += 1
            if np.random.random() * ties < 1.0:
                best = i
    return best


@numba.njit(cache=True)
def _idle(u: np.ndarray, spd: np.ndarray) -> int:  # pragma: no cover - numba
    """An idle server (backlog 0): the fastest, ties uniformly at random; -1 if none."""
    het = spd.shape[0] > 0
    best = -1
    ties = 0
    for i in range(u.shape[0]):
        if u[i] > 0.0:
            continue
        if best < 0 or (het and spd[i] > spd[best]):
            best = i
            ties = 1
        elif not het or spd[i] == spd[best]:
            ties += 1
            if np.random.random() * ties < 1.0:
                best = i
    return best


@numba.njit(cache=True)
def _lookup_simplex(u, x, vp, B, delta, c_M, spd, tail_slope, tail_cross
                    ):  # pragma: no cover - numba
    """argmin_i {T_i + v(u + x e_i)} with the packed sorted-simplex value ``vp`` (any m)."""
    m = u.shape[0]
    N = B.shape[0] - m - 1
    het = spd.shape[0] > 0
    w = u.copy()
    best = 0
    best_c = np.inf
    for i in range(m):
        w[i] = u[i] + x
        c = (u[i] + x) / spd[i] if het else u[i] + x
        c += simplex_value(vp, B, N, delta, c_M, w, tail_slope, tail_cross)
        w[i] = u[i]
        if c < best_c:
            best_c = c
            best = i
    return best


@numba.njit(cache=True, inline="always")
def _rnd_unit(m: int) -> int:  # pragma: no cover - numba
    """RND with unit speeds: a server uniformly at random (one draw)."""
    return np.random.randint(0, m)


@numba.njit(cache=True, inline="always")
def _idle_unit(u: np.ndarray) -> int:  # pragma: no cover - numba
    """JIQ's idle server with unit speeds (backlog 0, ties uniformly at random); -1 if none."""
    best = -1
    ties = 0
    for i in range(u.shape[0]):
        if u[i] <= 0.0:
            ties += 1
            if ties == 1 or np.random.random() * ties < 1.0:
                best = i
    return best


@numba.njit(cache=True, inline="always")
def _jsq_unit(cnt: np.ndarray) -> int:  # pragma: no cover - numba
    """JSQ with unit speeds: fewest jobs, ties uniformly at random."""
    best = 0
    ties = 1
    for i in range(1, cnt.shape[0]):
        if cnt[i] < cnt[best]:
            best = i
            ties = 1
        elif cnt[i] == cnt[best]:
            ties += 1
            if np.random.random() * ties < 1.0:
                best = i
    return best


@numba.njit(cache=True, inline="always")
def _lwl_unit(u: np.ndarray) -> int:  # pragma: no cover - numba
    """LWL with unit speeds: least work left, ties to the lowest index."""
    best = 0
    for i in range(1, u.shape[0]):
        if u[i] < u[best]:
            best = i
    return best


@numba.njit(cache=True, inline="always")
def _lookup_unit(u: np.ndarray, x: float, v: np.ndarray, delta: float, c_M: float,
                 tail_slope: float, tail_cross: np.ndarray) -> int:  # pragma: no cover - numba
    """The two-server table policy with unit speeds (ties to server 0)."""
    c0 = u[0] + x + lookup_value(v, delta, c_M, u[0] + x, u[1], tail_slope, tail_cross)
    c1 = u[1] + x + lookup_value(v, delta, c_M, u[0], u[1] + x, tail_slope, tail_cross)
    return 0 if c0 <= c1 else 1


@numba.njit(cache=True, inline="always")
def choose_unit(code, u, cnt, x, rr_next, thr, lam_i, rho_i, v, delta, c_M,
                tail_slope, tail_cross):  # pragma: no cover - numba
    """:func:`choose_server` with unit speeds and no packed value (the same comparisons and
    draws as before speeds), inlined into its callers: with ``code`` a compile-time constant
    (the simulator's kernel for one policy) only that policy's decision is left in the loop."""
    m = u.shape[0]
    if code == RND:
        return _rnd_unit(m)
    if code == RR:
        return rr_next % m
    if code == JIQ or code == JIQ_JSQ:
        best = _idle_unit(u)
        if best >= 0:
            return best
        if code == JIQ:
            return _rnd_unit(m)
    if code == JSQ or code == JIQ_JSQ:
        return _jsq_unit(cnt)
    if code == LWL:
        return _lwl_unit(u)
    if code == SITA:
        return _sita(x, thr)
    if code == FPI:
        return _fpi_best(u, x, lam_i, rho_i, _NO_SPD)
    # LOOKUP, m = 2
    return _lookup_unit(u, x, v, delta, c_M, tail_slope, tail_cross)


@numba.njit(cache=True)
def choose_general(code, u, cnt, x, rr_next, thr, lam_i, rho_i, v, delta, c_M, vp, B, spd,
                   cum, tail_slope, tail_cross):  # pragma: no cover - numba
    """:func:`choose_server` with speeds (``spd`` non-empty) or a packed value (any speeds)."""
    if code == LOOKUP_SIMPLEX:
        return _lookup_simplex(u, x, vp, B, delta, c_M, spd, tail_slope, tail_cross)
    m = u.shape[0]
    if code == RND:
        return _by_shares(cum)
    if code == RR:
        return rr_next % m
    if code == JSQ:
        return _jsq(cnt, spd)
    if code == LWL:
        best = 0
        best_t = (u[0] + x) / spd[0]
        for i in range(1, m):
            t = (u[i] + x) / spd[i]
            if t < best_t:
                best_t = t
                best = i
        return best
    if code == JIQ or code == JIQ_JSQ:
        i = _idle(u, spd)
        if i >= 0:
            return i
        if code == JIQ_JSQ:
            return _jsq(cnt, spd)
        return _by_shares(cum)
    if code == SITA:
        return _sita(x, thr)
    if code == FPI:
        return _fpi_best(u, x, lam_i, rho_i, spd)
    # LOOKUP, m = 2: the full (N+1, N+1) table
    c0 = (u[0] + x) / spd[0] + lookup_value(v, delta, c_M, u[0] + x, u[1], tail_slope,
                                            tail_cross)
    c1 = (u[1] + x) / spd[1] + lookup_value(v, delta, c_M, u[0], u[1] + x, tail_slope,
                                            tail_cross)
    return 0 if c0 <= c1 else 1


@numba.njit(cache=True)
def choose_server(code: int, u: np.ndarray, cnt: np.ndarray, x: float, rr_next: int,
                  thr: np.ndarray, lam_i: np.ndarray, rho_i: np.ndarray, v: np.ndarray,
                  delta: float, c_M: float, vp: np.ndarray = _NO_VP, B: np.ndarray = _NO_B,
                  spd: np.ndarray = _NO_SPD, cum: np.ndarray = _NO_SPD,
                  tail_slope: float = 0.0, tail_cross: np.ndarray = NO_CROSS) -> int:
    """Server index (0-based) chosen by policy ``code`` for a job of size ``x``.

    ``u`` are the backlogs (work), ``cnt`` the job counts (read by JSQ and JIQ-JSQ only),
    ``rr_next`` the round-robin pointer (the caller advances it).  ``vp`` and ``B`` are the
    packed sorted-simplex value and its binomial table (``LOOKUP_SIMPLEX``), ``spd`` the
    speeds and ``cum`` the cumulative speed shares (both empty for unit speeds), ``tail_slope``
    and ``tail_cross`` the linear term of the look-up tail and its cross term
    (:func:`lookup_value`).  Random
    choices (RND, ties of JSQ and JIQ) draw from numba's random stream.
    """
    if spd.shape[0] > 0 or code == LOOKUP_SIMPLEX:
        return choose_general(code, u, cnt, x, rr_next, thr, lam_i, rho_i, v, delta, c_M,
                              vp, B, spd, cum, tail_slope, tail_cross)
    return choose_unit(code, u, cnt, x, rr_next, thr, lam_i, rho_i, v, delta, c_M, tail_slope,
                       tail_cross)


@numba.njit(cache=True)
def decide_many(code, U, N, X, thr, lam_i, rho_i, v, delta, c_M, vp, B, spd, cum, tail_slope,
                tail_cross, seed):  # pragma: no cover - numba
    """:func:`choose_server` for every row ``k`` of ``U, N, X`` (round-robin pointer ``k``)."""
    np.random.seed(seed)
    out = np.empty(X.shape[0], dtype=np.int64)
    for k in range(X.shape[0]):
        out[k] = choose_server(code, U[k], N[k], X[k], k, thr, lam_i, rho_i, v, delta, c_M,
                               vp, B, spd, cum, tail_slope, tail_cross)
    return out
