r"""Exact mean response times of classical dispatching policies to m parallel FCFS servers.

Model: ``m`` identical unit-speed FCFS servers, Poisson arrivals of rate
:math:`\lambda = \rho m / E[X]`, i.i.d. job sizes :math:`X` known at dispatch (the model of
Hyytiä & Righter, arXiv 2402.08142).

* ``rnd`` (uniform random split): each server is M/G/1 with rate :math:`\lambda/m`
  (Pollaczek-Khinchine), :math:`E[T] = E[X] + (\lambda/m) E[X^2] / (2(1-\rho))`.
* ``sita`` (size interval task assignment, thresholds :math:`h_1 < \dots < h_{m-1}`): server
  :math:`j` is M/G/1 with the sizes in :math:`[h_{j-1}, h_j)`, rate :math:`\lambda_j = \lambda p_j`
  and load :math:`\rho_j = \lambda E[X; \text{class } j]`, so
  :math:`E[T] = E[X] + \sum_j p_j \lambda_j E[X_j^2] / (2(1-\rho_j))
  = E[X] + \sum_j \lambda p_j E[X^2; \text{class } j] / (2(1-\rho_j))`.
* ``rr`` (round-robin), exponential sizes: each server is :math:`E_m/M/1`; with
  :math:`\sigma = (\lambda/(\lambda + \mu(1-\sigma)))^m`, :math:`E[T] = 1/(\mu(1-\sigma))`.
* ``lwl`` (least work left), exponential sizes: LWL is the M/M/m central FCFS queue
  (Erlang C), :math:`E[T] = E[X] + C(m, a)/(m\mu - \lambda)`, :math:`a = \lambda/\mu`; for
  ``m = 2`` and :math:`E[X] = 1` this is :math:`1/(1-\rho^2)`.  For general sizes no closed form
  is known (M/G/m), so none is offered.
* ``jsq`` (join the shortest queue), exponential sizes: the CTMC on the job counts, truncated at
  ``n_max`` jobs per server and enlarged until the answer stops changing
  (:func:`symq.dispatch.policies.jsq.exact_jsq`).

:func:`exact_mean_response` dispatches by name and returns an :class:`ExactResult`; the
functions per policy return the float.  RND and SITA evaluate the compiled Pollaczek-Khinchine
form of :mod:`symq.dispatch.symbolic`.

Examples
--------
>>> from symq.laws import Exponential
>>> X = Exponential(1.0)
>>> round(exact_rnd(2, 0.5, X), 12), round(exact_lwl(2, 0.5, X), 12)
(2.0, 1.333333333333)
>>> h = sita_e_thresholds(2, 0.5, X)
>>> round(float(h[0]), 6)   # 1 - e^{-h}(1 + h) = 1/2
1.678347
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, UnknownName
from symq.core.result import Exactness, ResultBase
from symq.core.threads import limit_blas_threads
from symq.laws import Distribution

from ..sizes import size_name
from ..symbolic import mean_response_fn, wait_fn
from .checks import check_model, check_thresholds, require_exponential

__all__ = [
    "exact_rnd",
    "exact_sita",
    "exact_rr",
    "exact_lwl",
    "exact_mean_response",
    "ExactResult",
    "sita_e_thresholds",
    "sita_opt_thresholds",
    "sita_class_stats",
    "EXACT_POLICIES",
]

#: Policies with an exact mean response time in :func:`exact_mean_response`.
EXACT_POLICIES = ("rnd", "rr", "jsq", "lwl", "sita", "sita-e", "sita-opt")


# --------------------------------------------------------------------------------------------
# RND, SITA
# --------------------------------------------------------------------------------------------


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def exact_rnd(m: int, rho: float, sizes: Any) -> float:
    """Mean response time under the uniform random split (Pollaczek-Khinchine per server).

    :math:`E[T] = E[X] + (\\lambda/m) E[X^2] / (2(1-\\rho))`.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> exact_rnd(3, 0.75, Exponential(1.0))
    4.0
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    # every server is M/G/1 with rate lam/m and load rho: the compiled Pollaczek-Khinchine form
    return float(mean_response_fn().scalar(float(sizes.mean()), lam / m,
                                           float(sizes.moment(2)), rho))


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def sita_class_stats(m: int, rho: float, sizes: Any, thresholds: ArrayLike
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-server statistics of SITA with the given thresholds.

    Returns
    -------
    p : array (m,)
        Probability that a job belongs to class ``j`` (sizes in ``[h_{j-1}, h_j)``).
    lam_j : array (m,)
        Arrival rates ``lam * p_j``.
    rho_j : array (m,)
        Loads ``lam * E[X; class j]``.
    second : array (m,)
        Partial second moments ``E[X^2; class j]``.
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    h = check_thresholds(m, thresholds) if m > 1 else np.empty(0)
    return _sita_stats(lam, sizes, h)


def _sita_stats(lam: float, sizes: Distribution, h: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    cdf = np.concatenate([[0.0], 1.0 - np.asarray(sizes.ccdf(h), dtype=float), [1.0]])
    pm = np.concatenate([[0.0], np.asarray(sizes.partial_moment(1, h), dtype=float),
                         [sizes.mean()]])
    ps = np.concatenate([[0.0], np.asarray(sizes.partial_moment(2, h), dtype=float),
                         [sizes.moment(2)]])
    p = np.clip(np.diff(cdf), 0.0, None)
    first = np.clip(np.diff(pm), 0.0, None)
    second = np.clip(np.diff(ps), 0.0, None)
    return p, lam * p, lam * first, second


def _sita_value(lam: float, sizes: Distribution, h: np.ndarray) -> float:
    p, lam_j, rho_j, second = _sita_stats(lam, sizes, h)
    if np.any(rho_j >= 1.0):
        return math.inf
    # class j's share p_j W_j of the mean wait is the compiled Pollaczek-Khinchine wait with the
    # class rate lam_j and the partial second moment E[X^2; class j]
    return float(sizes.mean() + np.sum(wait_fn()(lam_j, second, rho_j)))


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def exact_sita(m: int, rho: float, sizes: Any, thresholds: ArrayLike, *,
               unstable: str = "raise") -> float:
    """Mean response time of SITA with thresholds :math:`h_1 < \\dots < h_{m-1}`.

    Server ``j`` receives the jobs with sizes in ``[h_{j-1}, h_j)`` (``h_0 = 0``, ``h_m = inf``)
    and is an M/G/1 queue with rate :math:`\\lambda_j = \\lambda p_j`, second moment
    :math:`E[X_j^2] = E[X^2 \\mid j]` and load :math:`\\rho_j = \\lambda E[X; j]`:

    .. math:: E[T] = E[X] + \\sum_j p_j \\frac{\\lambda_j E[X_j^2]}{2(1-\\rho_j)}.

    Parameters
    ----------
    thresholds : float or array_like
        The ``m - 1`` thresholds (a single number for ``m = 2``).
    unstable : {"raise", "inf"}
        What to do when some server has :math:`\\rho_j \\ge 1`: raise :class:`StabilityError`
        (default) or return ``math.inf``.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> round(exact_sita(2, 0.5, Exponential(1.0), 1.0), 6)
    2.349405
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    if unstable not in ("raise", "inf"):
        raise InvalidParameter("unstable", unstable, "'raise' or 'inf'")
    h = check_thresholds(m, thresholds) if m > 1 else np.empty(0)
    value = _sita_value(lam, sizes, h)
    if math.isinf(value) and unstable == "raise":
        loads = _sita_stats(lam, sizes, h)[2]
        raise StabilityError(
            f"SITA with thresholds={h.tolist()} is unstable at rho={rho!r}: server loads "
            f"{np.round(loads, 6).tolist()} must all be < 1")
    return value


def _load_root(sizes: Distribution, target: float, lo: float = 0.0) -> float:
    """Smallest ``h`` with ``E[X; X <= h] = target`` (``0 < target < E[X]``)."""
    hi = max(lo, float(sizes.mean()))
    while float(sizes.partial_moment(1, hi)) < target:
        hi *= 2.0
        if hi > 1e300:  # pragma: no cover - a law with finite mean always gets there
            raise NotConverged("sita_e_thresholds bracket", hi, 0.0, 0)
    return float(optimize.brentq(lambda h: float(sizes.partial_moment(1, h)) - target, lo, hi,
                                 xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500))


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def sita_e_thresholds(m: int, rho: float, sizes: Any) -> np.ndarray:
    """Thresholds of SITA-E: every server receives the same load ``rho``.

    ``h_j`` solves :math:`E[X; X \\le h_j] = j E[X] / m` (brentq); the loads do not depend on
    ``rho``, which is only validated.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> h = sita_e_thresholds(3, 0.5, Exponential(1.0))
    >>> h.shape
    (2,)
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    h = np.empty(m - 1)
    lo = 0.0
    for j in range(1, m):
        h[j - 1] = _load_root(sizes, j * float(sizes.mean()) / m, lo)
        lo = h[j - 1]
    return h


def _scale_top(sizes: Distribution) -> float:
    """A size beyond which (practically) no mass remains."""
    top = max(float(sizes.mean()), 1e-300)
    while float(sizes.ccdf(top)) > 1e-12 and top < 1e12 * float(sizes.mean()):
        top *= 2.0
    return top


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def sita_opt_thresholds(m: int, rho: float, sizes: Any, *, grid: int = 400) -> np.ndarray:
    """Thresholds of SITA minimising the exact mean response time :func:`exact_sita`.

    For ``m = 2``: a coarse grid (linear and geometric points up to the size beyond which the
    tail mass is below ``1e-12``), then bounded scalar minimisation (Brent) around the best grid
    point.  For ``m > 2``: coordinate search started from SITA-E, each threshold optimised the
    same way between its neighbours, until no coordinate improves by more than ``1e-13``.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> X = Exponential(1.0)
    >>> h_opt = sita_opt_thresholds(2, 0.9, X)
    >>> exact_sita(2, 0.9, X, h_opt) <= exact_sita(2, 0.9, X, sita_e_thresholds(2, 0.9, X))
    True
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    if m == 1:
        return np.empty(0)
    h = sita_e_thresholds(m, rho, sizes)
    top = _scale_top(sizes)

    def f_of(j: int, base: np.ndarray) -> Any:
        def f(x: float) -> float:
            trial = base.copy()
            trial[j] = x
            return _sita_value(lam, sizes, trial)
        return f

    best = _sita_value(lam, sizes, h)
    for _sweep in range(200):
        improved = False
        for j in range(m - 1):
            lo = h[j - 1] if j > 0 else 0.0
            hi = h[j + 1] if j < m - 2 else top
            # the thresholds keeping servers j and j+1 stable form an interval (narrow near
            # rho = 1): search inside it
            pm_lo = float(sizes.partial_moment(1, lo)) if lo > 0 else 0.0
            pm_hi = float(sizes.partial_moment(1, hi)) if j < m - 2 else float(sizes.mean())
            if pm_hi - 1.0 / lam > pm_lo:
                lo = max(lo, _load_root(sizes, pm_hi - 1.0 / lam, lo))
            if pm_lo + 1.0 / lam < pm_hi:
                hi = min(hi, _load_root(sizes, pm_lo + 1.0 / lam, lo))
            if not hi > lo:
                continue
            try:
                value, x = _minimise_1d(f_of(j, h), lo, hi, grid)
            except StabilityError:
                continue
            if value < best - 1e-13 * max(1.0, abs(best)):
                best = value
                h[j] = x
                improved = True
        if not improved or m == 2:
            break
    return h


def _minimise_1d(f: Any, lo: float, hi: float, grid: int) -> tuple[float, float]:
    span = hi - lo
    pts = np.unique(np.concatenate([
        lo + span * np.linspace(0.0, 1.0, grid + 2)[1:-1],
        lo + span * np.geomspace(1e-6, 1.0, grid // 2 + 2)[:-1],
    ]))
    pts = pts[(pts > lo) & (pts < hi)]
    values = np.array([f(x) for x in pts])
    k = int(np.argmin(values))
    if not math.isfinite(values[k]):
        raise StabilityError("no stable SITA thresholds found (every grid point overloads a "
                             "server)")
    a = pts[k - 1] if k > 0 else lo
    b = pts[k + 1] if k < pts.size - 1 else hi

    def g(x: float) -> float:
        v = f(x)
        return v if math.isfinite(v) else 1e300

    res = optimize.minimize_scalar(g, bounds=(a, b), method="bounded",
                                   options={"xatol": 1e-12 * max(1.0, abs(b)), "maxiter": 500})
    if res.fun < values[k]:
        return float(res.fun), float(res.x)
    return float(values[k]), float(pts[k])


# --------------------------------------------------------------------------------------------
# RR, LWL (exponential sizes)
# --------------------------------------------------------------------------------------------


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def exact_rr(m: int, rho: float, sizes: Any) -> float:
    """Mean response time under round-robin with exponential sizes (E_m/M/1 per server).

    Each server sees every ``m``-th arrival: Erlang-``m`` interarrival times with phase rate
    ``lam``.  The GI/M/1 root :math:`\\sigma \\in (0,1)` of
    :math:`\\sigma = (\\lambda/(\\lambda + \\mu(1-\\sigma)))^m` (brentq) gives
    :math:`E[T] = 1/(\\mu(1-\\sigma))`, :math:`\\mu = 1/E[X]`.

    Raises
    ------
    InvalidParameter
        If the sizes are not exponential.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> round(exact_rr(1, 0.5, Exponential(1.0)), 12)   # M/M/1
    2.0
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    require_exponential("rr", sizes)
    mu = 1.0 / float(sizes.mean())

    def f(s: float) -> float:
        return s - (lam / (lam + mu * (1.0 - s))) ** m

    eps = 1e-6
    while f(1.0 - eps) <= 0.0:
        eps /= 10.0
        if eps < 1e-15:  # pragma: no cover - rho < 1 guarantees a root below 1
            raise NotConverged("exact_rr bracket", f(1.0 - eps), 0.0, 0)
    sigma = optimize.brentq(f, 0.0, 1.0 - eps, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return float(1.0 / (mu * (1.0 - sigma)))


#: Above this many servers Erlang B comes from the Poisson law instead of the m-step recursion.
_ERLANG_RECURSION_MAX = 100_000


def _erlang_c(m: int, a: float) -> float:
    """Erlang C probability of waiting, via the stable Erlang B recursion.

    For more than 100000 servers, Erlang B is the Poisson ratio ``P(N = m)/P(N <= m)`` with
    ``N ~ Poisson(a)`` (``gammaincc(m + 1, a) = P(N <= m)``), evaluated in logarithms: the same
    value in O(1) instead of O(m) steps.
    """
    if m > _ERLANG_RECURSION_MAX:
        from scipy import special

        from symq.core.precision import working_dps

        with working_dps(30) as ctx:   # m log a - a - log m!: a difference of huge terms
            log_pmf = float(m * ctx.log(a) - a - ctx.loggamma(m + 1))
        b = math.exp(log_pmf - math.log(float(special.gammaincc(m + 1.0, a))))
    else:
        b = 1.0
        for k in range(1, m + 1):
            b = a * b / (k + a * b)
    rho = a / m
    return b / (1.0 - rho + rho * b)


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def exact_lwl(m: int, rho: float, sizes: Any) -> float:
    """Mean response time under least-work-left with exponential sizes (M/M/m, Erlang C).

    LWL sends each job to the server that frees first, so jobs start exactly as in a central
    FCFS queue: :math:`E[T] = E[X] + C(m, a)/(m\\mu-\\lambda)`.

    Raises
    ------
    InvalidParameter
        For non-exponential sizes: M/G/m has no known closed form.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> rho = 0.9
    >>> abs(exact_lwl(2, rho, Exponential(1.0)) - 1 / (1 - rho**2)) < 1e-12
    True
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    require_exponential("lwl", sizes)
    mu = 1.0 / float(sizes.mean())
    return float(sizes.mean() + _erlang_c(m, lam / mu) / (m * mu - lam))


# --------------------------------------------------------------------------------------------
# dispatcher by name
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactResult(ResultBase):
    """The exact mean response time of one dispatching policy (:func:`exact_mean_response`).

    Attributes
    ----------
    ET : float
        Mean response time per job.
    EW : float
        Mean waiting time per job, ``ET - E[X]`` (identical servers of speed 1).
    policy : str
        The policy's name (lower case).
    m : int
    rho : float
        Load per server.
    sizes : str
        Name of the job-size law.
    thresholds : tuple of float
        The SITA thresholds used (``sita``, ``sita-e``, ``sita-opt``; empty otherwise).
    method : str
        The formula: Pollaczek-Khinchine, E_m/M/1, M/M/m (Erlang C) or the JSQ CTMC.
    exactness : Exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "policy", "m", "rho", "method")

    ET: float
    policy: str
    m: int
    rho: float
    sizes: str
    thresholds: tuple[float, ...] = ()
    method: str = ""
    exactness: Exactness = Exactness.EXACT
    EW: float | None = None


_METHODS = {
    "rnd": "Pollaczek-Khinchine (an M/G/1 queue of rate lam/m per server)",
    "rr": "E_m/M/1 per server (root of the GI/M/1 equation)",
    "lwl": "M/M/m (Erlang C)",
    "jsq": "CTMC of the job counts, truncated until the boundary mass is below tol",
    "sita": "Pollaczek-Khinchine per size class",
}


@limit_blas_threads()    # small matrices (phase-type partial moments): one BLAS thread
def exact_mean_response(policy: str, m: int, rho: float, sizes: Any,
                        thresholds: Sequence[float] | float | None = None, **options: Any
                        ) -> ExactResult:
    """Exact mean response time of a policy given by name (see :data:`EXACT_POLICIES`).

    ``sita`` needs ``thresholds``; ``sita-e`` and ``sita-opt`` compute theirs.  ``sizes`` is any
    job-size law :func:`~symq.dispatch.sizes.as_size_law` accepts (RR, LWL and JSQ need
    exponential sizes).

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> exact_mean_response("RND", 2, 0.4, Exponential(1.0)).ET
    1.6666666666666667
    """
    key = str(policy).lower()
    if key not in EXACT_POLICIES:
        raise UnknownName("policy with an exact mean response time", str(policy),
                          EXACT_POLICIES)
    m, rho, sizes, _ = check_model(m, rho, sizes)
    h: tuple[float, ...] = ()
    if key == "rnd":
        value = exact_rnd(m, rho, sizes)
    elif key == "rr":
        value = exact_rr(m, rho, sizes)
    elif key == "lwl":
        value = exact_lwl(m, rho, sizes)
    elif key == "jsq":
        from .jsq import exact_jsq

        value = exact_jsq(m, rho, sizes, **options)
    else:
        if key == "sita":
            if thresholds is None:
                raise InvalidParameter("thresholds", None, f"the {m - 1} SITA thresholds")
            chosen = check_thresholds(m, thresholds) if m > 1 else np.empty(0)
        elif key == "sita-e":
            chosen = sita_e_thresholds(m, rho, sizes)
        else:
            chosen = sita_opt_thresholds(m, rho, sizes)
        value = exact_sita(m, rho, sizes, chosen, **options)
        h = tuple(float(x) for x in chosen)
    return ExactResult(ET=float(value), EW=float(value) - float(sizes.mean()), policy=key, m=m,
                       rho=rho, sizes=size_name(sizes), thresholds=h,
                       method=_METHODS.get(key, _METHODS["sita"]))
