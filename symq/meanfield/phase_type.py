"""Phase-type job sizes for the mean-field models: H2(mean, SCV, f), hyper-Erlang, Erlang, ME -> PH.

The two-phase hyperexponential uses the ``(EX, SCV, f)`` parametrisation of Hellemans and
Van Houdt (``general_functions/hyperexponential_init.m`` of their attained-service load
balancing code; see the mean-field reference note, section 1.1): ``f`` is the
fraction of the mean carried by branch 1, ``f = 1/2`` being "balanced means".

A phase-type law ``(alpha, A)`` has density ``alpha exp(A x) a`` with exit vector
``a = -A 1``; its moments are ``m_k = k! alpha (-A)^{-k} 1``.

Examples
--------
>>> alpha, A = hyperexponential2(1.0, 10.0)
>>> m = ph_moments(alpha, A, 2)
>>> round(float(m[0]), 12), round(float(m[1] / m[0] ** 2 - 1), 12)
(1.0, 10.0)
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter
from symq.core.resources import require_memory

from .simulation import validate_ph

__all__ = ["hyperexponential2", "hyper_erlang", "erlang", "ph_from_me", "ph_moments",
           "ph_stationary_phase"]


def _positive_real(name: str, value: Any, domain: str = "a finite real number > 0") -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating)):
        raise InvalidParameter(name, value, domain)
    out = float(value)
    if not (math.isfinite(out) and out > 0):
        raise InvalidParameter(name, value, domain)
    return out

#: largest ratio of the two branch rates of an H2 accepted: beyond it the service law is too stiff
#: for the solvers (the PH checks refuse condition numbers above 1e12).
RATE_RATIO_LIMIT = 1e8


def _h2_branches(scv: float, f: float) -> tuple[float, float, float]:
    """``p``, ``q = 1 - p`` (each without cancellation) and the branch-rate ratio of H2(1, scv, f).

    ``p`` is the larger root of ``c p^2 - (c + 2f - 1) p + f^2`` (``c = (1 + scv)/2``) and ``q``
    the smaller root of the reflected polynomial ``c q^2 - (c - 2f + 1) q + (1 - f)^2``.
    """
    c = 0.5 * (1.0 + scv)
    b = c + 2.0 * f - 1.0
    disc = max(b * b - 4.0 * c * f * f, 0.0)  # = (c-1)(c-1+4f(1-f)) >= 0
    root = math.sqrt(disc)
    p = (b + root) / (2.0 * c)
    q = 2.0 * (1.0 - f) ** 2 / ((c - 2.0 * f + 1.0) + root)
    with np.errstate(all="ignore"):
        mu1, mu2 = p / f, q / (1.0 - f)
        ratio = max(mu1, mu2) / min(mu1, mu2) if min(mu1, mu2) > 0 else math.inf
    if not (0.0 < p < 1.0 and 0.0 < q < 1.0 and math.isfinite(ratio)):
        ratio = math.inf
    return p, q, ratio


def _fits(scv: float, f: float) -> bool:
    return _h2_branches(scv, f)[2] <= RATE_RATIO_LIMIT


def _refuse_h2(scv: float, f: float, ratio: float) -> None:
    """Name the parameter (``scv`` or ``f``) that makes the H2 too stiff, and its usable range."""
    why = (f"the two H2 branch rates would differ by a factor {ratio:.3g} > {RATE_RATIO_LIMIT:.0e}, "
           "too stiff to solve reliably")
    if not _fits(scv, 0.5):  # too variable whatever f: blame scv, largest scv that fits at this f
        lo, hi = 1.0, scv
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if _fits(mid, f) else (lo, mid)
            if hi <= lo * (1 + 1e-6):
                break
        err = InvalidParameter("scv", scv, f"a finite real number in [1, {lo:.6g}] for f={f:g}", why)
        err.scv_max = lo  # type: ignore[attr-defined]
        err.why = why  # type: ignore[attr-defined]
        raise err
    # bisect (in log scale) the distance t from the nearer edge of (0, 1), between the bad f
    # and the good 1/2
    edge = (lambda t: t) if f < 0.5 else (lambda t: 1.0 - t)
    bad, good = (f, 0.5) if f < 0.5 else (1.0 - f, 0.5)
    bad = max(bad, 1e-300)
    for _ in range(200):
        mid = math.sqrt(bad * good)
        bad, good = (bad, mid) if _fits(scv, edge(mid)) else (mid, good)
        if good <= bad * (1 + 1e-6):
            break
    side = f"at least {good:.6g}" if f < 0.5 else (f"at most {1.0 - good:.6g}" if good > 1e-4
                                                   else f"at most 1 - {good:.6g}")
    raise InvalidParameter("f", f, f"a real number in (0, 1), {side} for scv={scv:g}", why)


def hyperexponential2(mean: float, scv: float, f: float = 0.5
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two-phase hyperexponential H2 with given mean, squared coefficient of variation and ``f``.

    With ``p`` the probability of branch 1 and ``mu_1, mu_2`` the branch rates::

        p / mu_1 = f * mean,   (1 - p) / mu_2 = (1 - f) * mean,
        2 (p / mu_1^2 + (1 - p) / mu_2^2) = (1 + scv) * mean^2.

    Eliminating the rates gives ``c p^2 - (c + 2f - 1) p + f^2 = 0`` with ``c = (1 + scv)/2``.
    Both roots lie in ``(0, 1)`` (the polynomial is ``f^2 > 0`` at 0 and ``(1-f)^2 > 0`` at 1,
    with its vertex inside); the larger root is taken, which is the choice of Hellemans and
    Van Houdt (``hyperexponential_init.m``: ``p = EX mu_1 f`` with
    ``mu_1 = (SCV + 4f - 1 + s)/(2 EX f (SCV + 1))``, ``s = sqrt((SCV-1)(SCV-1+8f(1-f)))``).
    For ``f = 1/2``: ``p = (1 + sqrt((scv-1)/(scv+1)))/2``, ``mu_1 = 2p/mean``,
    ``mu_2 = 2(1-p)/mean``.  ``scv = 1`` gives the exponential law (``mu_1 = mu_2``).

    Parameters
    ----------
    mean : float
        Mean job size, ``> 0``.
    scv : float
        Squared coefficient of variation, ``>= 1`` (an H2 cannot be less variable).
    f : float, default 0.5
        Fraction of the mean carried by branch 1, in ``(0, 1)``.

    Returns
    -------
    alpha : ndarray, shape (2,)
        ``[p, 1 - p]``.
    A : ndarray, shape (2, 2)
        ``diag(-mu_1, -mu_2)``.

    Raises
    ------
    InvalidParameter
        ``mean <= 0``, ``scv < 1`` or ``f`` outside ``(0, 1)`` (or non-finite input).

    Examples
    --------
    >>> alpha, A = hyperexponential2(1.0, 1.0)
    >>> alpha.tolist(), A.tolist()
    ([0.5, 0.5], [[-1.0, 0.0], [0.0, -1.0]])
    """
    mean = _positive_real("mean", mean)
    if isinstance(scv, (bool, np.bool_)) or not isinstance(scv, (numbers.Real, np.floating)) \
            or not (math.isfinite(float(scv)) and float(scv) >= 1.0):
        raise InvalidParameter("scv", scv, "a finite real number >= 1",
                               "a two-phase hyperexponential has SCV >= 1; use erlang() for SCV < 1")
    scv = float(scv)
    if isinstance(f, (bool, np.bool_)) or not isinstance(f, (numbers.Real, np.floating)) \
            or not (math.isfinite(float(f)) and 0.0 < float(f) < 1.0):
        raise InvalidParameter("f", f, "a real number in (0, 1)",
                               "the fraction of the mean carried by branch 1 of the H2")
    f = float(f)
    p, q, ratio = _h2_branches(scv, f)
    if not ratio <= RATE_RATIO_LIMIT:
        _refuse_h2(scv, f, ratio)
    mu1 = p / (f * mean)
    mu2 = q / ((1.0 - f) * mean)
    alpha = np.array([p, q])
    A = np.array([[-mu1, 0.0], [0.0, -mu2]])  # noqa: N806
    validate_ph(alpha, A)
    return alpha, A


def erlang(k: int, mean: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Erlang-``k`` law with the given mean: ``k`` phases of rate ``k / mean`` in series (SCV ``1/k``).

    Raises
    ------
    InvalidParameter
        ``k`` not an integer ``>= 1`` or ``mean <= 0``.

    Examples
    --------
    >>> alpha, A = erlang(2, 1.0)
    >>> alpha.tolist(), A.tolist()
    ([1.0, 0.0], [[-2.0, 2.0], [0.0, -2.0]])
    """
    if isinstance(k, (float, np.floating)) and float(k).is_integer():
        k = int(k)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameter("k", k, "an integer >= 1", "the number of Erlang phases")
    mean = _positive_real("mean", mean)
    k = int(k)
    require_memory("k", k, 6.0 * 8 * k * k, what=f"{k} x {k} phase matrices",
                   limit=lambda budget: f"at most {int(math.sqrt(budget / 48.0))}")
    rate = k / mean
    alpha = np.zeros(k)
    alpha[0] = 1.0
    A = -rate * np.eye(k) + rate * np.eye(k, k=1)  # noqa: N806
    return alpha, A


def hyper_erlang(k: int, mean: float, scv: float, f: float = 0.5
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Hyper-Erlang ``HE_k``: an H2 whose two branches are Erlang-``k``, with given mean and SCV.

    Each branch of an H2 is replaced by an Erlang-``k`` law with the same branch mean, which
    divides the second moment of each branch by ``2/(1 + 1/k)``.  The H2 is therefore fitted (by
    :func:`hyperexponential2`) to the inflated SCV ``2 (scv + 1)/(1 + 1/k) - 1``, so that the
    hyper-Erlang has exactly the requested mean and SCV (Hellemans and Van Houdt,
    ``hyper_erlang_init.m``; reference note section 1.1).  ``k = 1`` is the H2 itself.

    Parameters
    ----------
    k : int
        Erlang phases per branch, ``>= 1``.
    mean : float
        Mean job size, ``> 0``.
    scv : float
        Squared coefficient of variation, ``>= 1/k``.
    f : float, default 0.5
        Fraction of the mean carried by branch 1, in ``(0, 1)``.

    Returns
    -------
    alpha : ndarray, shape (2k,)
    A : ndarray, shape (2k, 2k)
        Block diagonal: two Erlang-``k`` chains.

    Raises
    ------
    InvalidParameter
        ``k`` not an integer ``>= 1``, ``mean <= 0``, ``scv < 1/k``, or ``f`` outside ``(0, 1)``.

    Examples
    --------
    >>> alpha, A = hyper_erlang(2, 1.0, 4.0)
    >>> m = ph_moments(alpha, A, 2)
    >>> round(float(m[0]), 12), round(float(m[1] / m[0] ** 2 - 1), 12)
    (1.0, 4.0)
    """
    if isinstance(k, (float, np.floating)) and float(k).is_integer():
        k = int(k)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameter("k", k, "an integer >= 1", "the number of Erlang phases per branch")
    k = int(k)
    if isinstance(scv, (bool, np.bool_)) or not isinstance(scv, (numbers.Real, np.floating)) \
            or not (math.isfinite(float(scv)) and float(scv) >= 1.0 / k):
        raise InvalidParameter("scv", scv, f"a finite real number >= 1/k = {1.0 / k:g}",
                               f"a hyper-Erlang with {k} phases per branch has SCV >= 1/k")
    require_memory("k", k, 6.0 * 8 * (2 * k) ** 2, what=f"{2 * k} x {2 * k} phase matrices",
                   limit=lambda budget: f"at most {int(math.sqrt(budget / 48.0) / 2)}")
    inflated = max(2.0 * (float(scv) + 1.0) / (1.0 + 1.0 / k) - 1.0, 1.0)
    try:
        beta, rates = hyperexponential2(mean, inflated, f)
    except InvalidParameter as exc:
        if exc.name != "scv":
            raise
        top = (getattr(exc, "scv_max", 1.0) + 1.0) * (1.0 + 1.0 / k) / 2.0 - 1.0
        raise InvalidParameter("scv", scv, f"a finite real number in [1/k = {1.0 / k:g}, {top:.6g}] "
                               f"for k={k}, f={float(f):g}", getattr(exc, "why", "")) from None
    alpha = np.zeros(2 * k)
    A = np.zeros((2 * k, 2 * k))  # noqa: N806
    for branch in range(2):
        rate = k * -rates[branch, branch]  # Erlang-k with the branch mean 1/mu
        start = branch * k
        alpha[start] = beta[branch]
        A[start:start + k, start:start + k] = -rate * np.eye(k) + rate * np.eye(k, k=1)
    validate_ph(alpha, A)
    return alpha, A


def ph_from_me(me: Any, dps: int = 30) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A phase-type representation of a :class:`symq.me.ME` law (Cumani CF1 series form).

    :func:`symq.me.phase_type.to_phase_type`, checked by
    :func:`~symq.meanfield.simulation.validate_ph`; see there for when it exists.

    Raises
    ------
    InvalidParameter
        Complex poles, a negative CF1 entry weight, or not an ME law.

    Examples
    --------
    >>> from symq.me import ME
    >>> alpha, A = ph_from_me(ME.hyperexponential([0.25, 0.75], [1, 4]))  # 1/4 Exp(1) + 3/4 Exp(4)
    >>> alpha.tolist(), A.tolist()
    ([0.1875, 0.8125], [[-1.0, 1.0], [0.0, -4.0]])
    """
    from symq.me.phase_type import to_phase_type

    alpha, A = to_phase_type(me, dps)  # noqa: N806
    validate_ph(alpha, A)
    return alpha, A


def ph_moments(alpha: ArrayLike, A: ArrayLike, K: int) -> NDArray[np.float64]:  # noqa: N803
    """Moments ``m_1..m_K`` of a phase-type law: ``m_k = k! alpha (-A)^{-k} 1``.

    Parameters
    ----------
    alpha, A : array_like
        Phase-type representation (checked by :func:`~symq.meanfield.simulation.validate_ph`).
    K : int
        Number of moments, ``>= 1``.

    Raises
    ------
    InvalidParameter
        Invalid representation or ``K`` not an integer ``>= 1``.

    Examples
    --------
    >>> ph_moments([1.0], [[-2.0]], 3).tolist()  # exponential of rate 2: k!/2^k
    [0.5, 0.5, 0.75]
    """
    if isinstance(K, (float, np.floating)) and float(K).is_integer():
        K = int(K)  # noqa: N806
    if isinstance(K, (bool, np.bool_)) or not isinstance(K, (int, np.integer)) or K < 1:
        raise InvalidParameter("K", K, "an integer >= 1", "the number of moments")
    a, T, _ = validate_ph(alpha, A)
    inv = np.linalg.inv(-T)
    row = a.copy()
    out = np.empty(int(K))
    for k in range(1, int(K) + 1):
        row = row @ inv
        out[k - 1] = math.factorial(k) * float(row.sum())
    return out


def ph_stationary_phase(alpha: ArrayLike, A: ArrayLike) -> NDArray[np.float64]:  # noqa: N803
    """``theta = alpha (-A)^{-1} / E[X]``: the phase law of a job in service seen at a random time.

    Used by the mean-field invariant ``x_1 = lam E[X] theta`` (note section 2.4).

    Examples
    --------
    >>> ph_stationary_phase([0.5, 0.5], [[-2.0, 0.0], [0.0, -0.5]]).tolist()
    [0.2, 0.8]
    """
    a, T, mean = validate_ph(alpha, A)
    return np.linalg.solve(-T.T, a) / mean
