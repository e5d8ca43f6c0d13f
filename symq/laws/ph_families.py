"""Phase-type job sizes for the mean-field models: H2(mean, SCV, f), hyper-Erlang, Erlang, ME -> PH.

The two-phase hyperexponential uses the ``(EX, SCV, f)`` parametrisation of Hellemans and
Van Houdt (``general_functions/hyperexponential_init.m`` of their attained-service load
balancing code, after Hellemans and Van Houdt 2021): ``f`` is the
fraction of the mean carried by branch 1, ``f = 1/2`` being "balanced means".

A phase-type law ``(alpha, A)`` has density ``alpha exp(A x) a`` with exit vector
``a = -A 1``; its moments are ``m_k = k! alpha (-A)^{-k} 1``.  The constructors return
:class:`symq.laws.phase_type.PhaseType` objects, the job-size law every mean-field solver and
simulator takes (``alpha, A = law`` still unpacks the representation).

Examples
--------
>>> law = hyperexponential2(1.0, 10.0)
>>> m = ph_moments(law, 2)
>>> round(float(m[0]), 12), round(float(m[1] / m[0] ** 2 - 1), 12)
(1.0, 10.0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.resources import require_memory

from .conversion import as_phase_type
from .phase_type import PhaseType

__all__ = ["hyperexponential2", "hyper_erlang", "erlang", "ph_from_me", "ph_moments",
           "subgenerator_expm", "ph_stationary_phase", "stationary_phase"]


#: the domain of a mean job size.
_MEAN = "a finite real number > 0"

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
    why = (f"the two H2 branch rates would differ by a factor {ratio:.3g} > "
           f"{RATE_RATIO_LIMIT:.0e}, too stiff to solve reliably")
    if not _fits(scv, 0.5):  # too variable whatever f: blame scv, largest scv that fits at this f
        lo, hi = 1.0, scv
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if _fits(mid, f) else (lo, mid)
            if hi <= lo * (1 + 1e-6):
                break
        err = InvalidParameter("scv", scv, f"a finite real number in [1, {lo:.6g}] for f={f:g}",
                               why)
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


def hyperexponential2(mean: float, scv: float, f: float = 0.5) -> PhaseType:
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
    PhaseType
        ``alpha = [p, 1 - p]``, ``A = diag(-mu_1, -mu_2)``.

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
    mean = real_value("mean", mean, _MEAN, lambda v: v > 0)
    scv_in = scv
    scv = real_value("scv", scv, "a finite real number >= 1")
    if not scv >= 1.0:
        raise InvalidParameter("scv", scv_in, "a finite real number >= 1",
                               "a two-phase hyperexponential has SCV >= 1; "
                               "use erlang() for SCV < 1")
    f_in = f
    f = real_value("f", f, "a real number in (0, 1)")
    if not 0.0 < f < 1.0:
        raise InvalidParameter("f", f_in, "a real number in (0, 1)",
                               "the fraction of the mean carried by branch 1 of the H2")
    p, q, ratio = _h2_branches(scv, f)
    if not ratio <= RATE_RATIO_LIMIT:
        _refuse_h2(scv, f, ratio)
    mu1 = p / (f * mean)
    mu2 = q / ((1.0 - f) * mean)
    alpha = np.array([p, q])
    A = np.array([[-mu1, 0.0], [0.0, -mu2]])
    return PhaseType(alpha, A, name=f"H2(mean={mean:g}, scv={scv:g}, f={f:g})")


def erlang(k: int, mean: float) -> PhaseType:
    """Erlang-``k`` law with the given mean: ``k`` phases of rate ``k / mean`` in series
    (SCV ``1/k``).

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
    k = integer_value("k", k, 1, "the number of Erlang phases")
    mean = real_value("mean", mean, _MEAN, lambda v: v > 0)
    require_memory("k", k, 6.0 * 8 * k * k, what=f"{k} x {k} phase matrices",
                   limit=lambda budget: f"at most {int(math.sqrt(budget / 48.0))}")
    rate = k / mean
    alpha = np.zeros(k)
    alpha[0] = 1.0
    A = -rate * np.eye(k) + rate * np.eye(k, k=1)
    return PhaseType(alpha, A, name=f"Erlang-{k}(mean={mean:g})")


def hyper_erlang(k: int, mean: float, scv: float, f: float = 0.5) -> PhaseType:
    """Hyper-Erlang ``HE_k``: an H2 whose two branches are Erlang-``k``, with given mean and SCV.

    Each branch of an H2 is replaced by an Erlang-``k`` law with the same branch mean, which
    divides the second moment of each branch by ``2/(1 + 1/k)``.  The H2 is therefore fitted (by
    :func:`hyperexponential2`) to the inflated SCV ``2 (scv + 1)/(1 + 1/k) - 1``, so that the
    hyper-Erlang has exactly the requested mean and SCV (Hellemans and Van Houdt,
    ``general_functions/hyper_erlang_init.m``).  ``k = 1`` is the H2 itself.

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
    PhaseType
        ``2k`` phases; ``A`` is block diagonal: two Erlang-``k`` chains.

    Raises
    ------
    InvalidParameter
        ``k`` not an integer ``>= 1``, ``mean <= 0``, ``scv < 1/k``, or ``f`` outside ``(0, 1)``.

    Examples
    --------
    >>> m = ph_moments(hyper_erlang(2, 1.0, 4.0), 2)
    >>> round(float(m[0]), 12), round(float(m[1] / m[0] ** 2 - 1), 12)
    (1.0, 4.0)
    """
    k = integer_value("k", k, 1, "the number of Erlang phases per branch")
    if not real_value("scv", scv, f"a finite real number >= 1/k = {1.0 / k:g}") >= 1.0 / k:
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
        raise InvalidParameter("scv", scv,
                               f"a finite real number in [1/k = {1.0 / k:g}, {top:.6g}] "
                               f"for k={k}, f={float(f):g}", getattr(exc, "why", "")) from None
    alpha = np.zeros(2 * k)
    A = np.zeros((2 * k, 2 * k))
    for branch in range(2):
        rate = k * -rates[branch, branch]  # Erlang-k with the branch mean 1/mu
        start = branch * k
        alpha[start] = beta[branch]
        A[start:start + k, start:start + k] = -rate * np.eye(k) + rate * np.eye(k, k=1)
    return PhaseType(alpha, A, name=f"HE{k}(mean={float(mean):g}, scv={float(scv):g}, "
                                    f"f={float(f):g})")


def ph_from_me(me: Any, dps: int = 30) -> PhaseType:
    """A phase-type representation of a :class:`symq.me.ME` law (Cumani CF1 series form).

    :func:`symq.me.phase_type.to_phase_type` (see there for when it exists), as a
    :class:`~symq.laws.phase_type.PhaseType`.  The solvers also accept the ME law itself (they
    convert it with :func:`symq.laws.conversion.as_phase_type`); ``dps`` sets the working
    digits here.

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
    convert = getattr(me, "phase_type", None)
    if isinstance(me, PhaseType) or not callable(convert):
        raise InvalidParameter("me", me, "a symq.me.ME law")
    return convert(dps)


def ph_moments(law: Any, K: int) -> NDArray[np.float64]:
    """Moments ``m_1..m_K`` of a phase-type law: ``m_k = k! alpha (-A)^{-k} 1``.

    Parameters
    ----------
    law : PhaseType, (alpha, A) or ME with a phase-type form
        The job-size law (converted by :func:`symq.laws.conversion.as_phase_type`).
    K : int
        Number of moments, ``>= 1``.

    Raises
    ------
    InvalidParameter
        Invalid representation or ``K`` not an integer ``>= 1``.

    Examples
    --------
    >>> ph_moments(([1.0], [[-2.0]]), 3).tolist()  # exponential of rate 2: k!/2^k
    [0.5, 0.5, 0.75]
    """
    K = integer_value("K", K, 1, "the number of moments")
    ph = as_phase_type(law, "law")
    inv = np.linalg.inv(-ph.A)
    row = ph.alpha.copy()
    out = np.empty(int(K))
    for k in range(1, int(K) + 1):
        row = row @ inv
        out[k - 1] = math.factorial(k) * float(row.sum())
    return out


def ph_stationary_phase(law: Any) -> NDArray[np.float64]:
    """``theta = alpha (-A)^{-1} / E[X]``: the phase law of a job in service seen at a random time.

    Used by the mean-field invariant ``x_1 = lam E[X] theta`` (the job in service at a random time
    of a busy server).

    Examples
    --------
    >>> ph_stationary_phase(([0.5, 0.5], [[-2.0, 0.0], [0.0, -0.5]])).tolist()
    [0.2, 0.8]
    """
    ph = as_phase_type(law, "law")
    return stationary_phase(ph)


def stationary_phase(ph: PhaseType) -> NDArray[np.float64]:
    """``theta = alpha (-A)^{-1} / E[X]`` of a :class:`~symq.laws.phase_type.PhaseType`
    (no checks)."""
    theta = np.asarray(np.linalg.solve(-ph.A.T, ph.alpha) / ph.mean(), dtype=np.float64)
    return theta


def subgenerator_expm(A: Any, t: float) -> NDArray[np.float64]:
    r"""``exp(A t)`` of a phase-type sub-generator ``A`` (off-diagonal entries >= 0, row sums
    <= 0), by uniformisation with scaling and squaring: no cancellation.

    ``exp(A s) = sum_n Poisson(n; q s) P^n`` with ``q = max_i -A_ii`` and ``P = I + A/q``, a
    nonnegative sub-stochastic matrix, so every term is nonnegative (Grassmann, *Transient
    solutions in Markovian queueing systems*, Comput. Oper. Res. 4 (1977); Stewart,
    *Introduction to the Numerical Solution of Markov Chains*, 1994, Section 8.5).  The step is
    ``s = t / 2^k`` with ``q s <= 32``, the series is cut where the Poisson tail is below
    ``1e-18`` (``||P^n|| <= 1``, so that is the truncation error), and the result is squared
    ``k`` times (products of nonnegative matrices).  scipy's Padé ``expm`` loses up to 2e-4 on
    triangular generators whose rates differ in the last bit (its triangular refinement
    cancels); this sum does not.

    Raises
    ------
    InvalidParameter
        ``A`` not square, with a negative off-diagonal entry or a positive row sum, or ``t < 0``.

    Examples
    --------
    >>> E = subgenerator_expm([[-5.0, 2.5], [0.0, -4.999999999999999]], 1.0)
    >>> bool(abs(E[0, 1] - 2.5 * np.exp(-5.0)) < 1e-16)  # scipy.linalg.expm: 2e-4 off
    True
    """
    A = np.asarray(A, dtype=float)
    t = float(t)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or not np.all(np.isfinite(A)):
        raise InvalidParameter("A", A, "a finite square sub-generator matrix")
    m = A.shape[0]
    off = A - np.diag(np.diag(A))
    if np.any(off < 0) or np.any(A.sum(axis=1) > 1e-12 * max(1.0, float(np.abs(A).max()))):
        raise InvalidParameter("A", A, "a sub-generator: off-diagonal entries >= 0, row sums <= 0")
    if not (t >= 0 and math.isfinite(t)):
        raise InvalidParameter("t", t, "a finite real number >= 0")
    q = float(-np.diag(A).min()) if m else 0.0
    if q <= 0.0 or t == 0.0:
        return np.eye(m)
    squarings = max(0, math.ceil(math.log2(q * t / 32.0))) if q * t > 32.0 else 0
    step = q * t / 2.0**squarings
    P = np.eye(m) + A / q
    weight = math.exp(-step)
    term = np.eye(m)
    out = weight * term
    mass, n = weight, 0
    while 1.0 - mass > 1e-18 and n < 1000:
        n += 1
        weight *= step / n
        term = term @ P
        out += weight * term
        mass += weight
    for _ in range(squarings):
        out = out @ out
    return out
