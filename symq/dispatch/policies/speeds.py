r"""Per-server speeds of the dispatching model: validation, arrival rate, static-policy loads.

A server of speed :math:`s_i > 0` drains its backlog (unfinished *work*) at rate :math:`s_i`: a
job of size :math:`x` sent to server ``i`` with backlog :math:`u_i` waits :math:`u_i/s_i` and
leaves after :math:`T = (u_i + x)/s_i`.  The load is the work brought per unit of total capacity,

.. math::

    \rho = \frac{\lambda E[X]}{\sum_i s_i}, \qquad \lambda = \frac{\rho \sum_i s_i}{E[X]},

which is :math:`\lambda E[X]/m` for unit speeds, the identical servers of Hyytiä & Righter
(arXiv 2402.08142).  What each policy does with speeds is stated in
:mod:`symq.dispatch.policies.named`; this module holds the shared arithmetic:
:func:`check_speeds`, :func:`arrival_rate`, :func:`static_loads` (the per-server loads of the
static policies, whose stability is then known) and the score decision in time units.

Examples
--------
>>> check_speeds(None, 3) is None, check_speeds([1, 1], 2) is None
(True, True)
>>> check_speeds([2, 1], 2).tolist()
[2.0, 1.0]
>>> round(arrival_rate(0.5, 1.0, np.array([2.0, 1.0]), 2), 6)
1.5
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, StabilityError

__all__ = ["check_speeds", "total_speed", "arrival_rate", "static_loads", "check_stable",
           "cumulative_shares", "score_argmin_speeds", "decide_scores_speeds"]

SPEEDS_DOMAIN = "m positive finite reals"


#: Range of server speeds: rates, times and their squares stay normal doubles.
_SLOWEST, _FASTEST = 1e-100, 1e100


def check_speeds(speeds: ArrayLike | None, m: int) -> np.ndarray | None:
    """Validated speeds: ``None`` for unit speeds (``None`` or all ones), else a float array.

    Unit speeds map to ``None`` so that the simulator runs its unit-speed path, whose results
    are the same bit for bit as without ``speeds``.

    Raises
    ------
    InvalidParameter
        ``speeds`` not ``m`` positive finite reals (named ``speeds``).
    """
    if speeds is None:
        return None
    try:
        s = np.array(speeds, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidParameter("speeds", speeds, SPEEDS_DOMAIN, f"m={m}") from None
    if s.size != m or not np.all(np.isfinite(s)) or np.any(s <= 0):
        shown = s.tolist() if s.size <= 12 else f"<array of length {s.size}>"
        raise InvalidParameter("speeds", shown, SPEEDS_DOMAIN,
                               f"m={m}" + ("" if s.size == m else f"; got {s.size} values"))
    outside = np.flatnonzero((s < _SLOWEST) | (s > _FASTEST))
    if outside.size:
        i = int(outside[0])
        raise InvalidParameter("speeds", s.tolist() if s.size <= 12 else f"<array of length "
                               f"{s.size}>", f"{SPEEDS_DOMAIN} in [{_SLOWEST:g}, {_FASTEST:g}]",
                               f"entry {i} is {s[i]:g}: arrival rates, service times and "
                               "their squares would leave the range of doubles; rescale the "
                               "unit of time")
    if np.all(s == 1.0):
        return None
    s.setflags(write=False)
    return s


def total_speed(speeds: np.ndarray | None, m: int) -> float:
    """:math:`\\sum_i s_i` (``m`` for unit speeds)."""
    return float(m) if speeds is None else float(np.sum(speeds))


def arrival_rate(rho: float, mean: float, speeds: np.ndarray | None, m: int) -> float:
    """:math:`\\lambda = \\rho \\sum_i s_i / E[X]`."""
    return rho * total_speed(speeds, m) / float(mean)


def equal_speeds(speeds: np.ndarray | None) -> bool:
    """Whether all servers have the same speed (unit speeds included)."""
    return speeds is None or bool(np.all(speeds == speeds[0]))


def cumulative_shares(speeds: np.ndarray | None) -> np.ndarray:
    """Cumulative routing probabilities :math:`\\sum_{j \\le i} s_j / \\sum s` (empty for unit
    speeds); the last entry is set to exactly 1."""
    if speeds is None:
        return np.empty(0)
    c = np.cumsum(speeds) / np.sum(speeds)
    c[-1] = 1.0
    return c


def static_loads(work_shares: ArrayLike, rho: float, speeds: np.ndarray | None,
                 m: int) -> np.ndarray:
    """Per-server loads :math:`\\lambda E[X] w_i / s_i = \\rho (\\sum s) w_i / s_i` of a static
    policy sending the fraction :math:`w_i` of the work to server ``i``."""
    s = np.ones(m) if speeds is None else speeds
    return rho * total_speed(speeds, m) * np.asarray(work_shares, dtype=float) / s


def check_stable(policy: str, loads: np.ndarray, rho: float, what: str) -> None:
    """Raise :class:`StabilityError` if a static policy overloads a server (``loads >= 1``)."""
    if np.any(loads >= 1.0):
        i = int(np.argmax(loads))
        raise StabilityError(
            f"{policy}: {what} overloads server {i + 1} at rho={rho!r} (per-server loads "
            f"{np.round(loads, 6).tolist()} must all be < 1)")


# --------------------------------------------------------------------------------------------
# score policies in time units
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def score_argmin_speeds(score, p, u, cnt, spd, x):  # pragma: no cover - numba
    """``argmin_k score(u_k/s_k, n_k, x/s_k, k + 1, p)`` (ties lowest); -1 on a NaN score.

    A score sees the backlog and the size in time units with speeds: the time to drain server
    ``k`` and the job's service time there.
    """
    best = 0
    best_s = np.inf
    for k in range(u.shape[0]):
        s = score(u[k] / spd[k], float(cnt[k]), x / spd[k], k + 1.0, p)
        if s != s:
            return -1
        if s < best_s:
            best_s = s
            best = k
    return best


def _decide_py(score, p, U, N, spd, X):  # pragma: no cover - numba
    out = np.empty(X.shape[0], dtype=np.int64)
    for k in range(X.shape[0]):
        out[k] = score_argmin_speeds(score, p, U[k], N[k], spd, X[k])
    return out


@functools.cache
def _decide_kernel() -> Any:
    from numba import types

    from .score import SCORE_TYPE
    sig = types.int64[::1](SCORE_TYPE, types.float64[::1], types.float64[:, ::1],
                           types.int64[:, ::1], types.Array(types.float64, 1, "C", readonly=True),
                           types.float64[::1])
    return numba.njit(sig, cache=True)(_decide_py)


def decide_scores_speeds(score: Any, p: np.ndarray, U: np.ndarray, N: np.ndarray,
                         speeds: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Decisions of a compiled score in time units (see :func:`score_argmin_speeds`); -1 rows
    mark a NaN score."""
    return _decide_kernel()(score, np.ascontiguousarray(p, dtype=float), U, N,
                            np.ascontiguousarray(speeds, dtype=float), X)
