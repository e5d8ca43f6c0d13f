"""Result types of the JSQ(d) mean-field solvers: the exponential fixed point and the refined term.

:class:`SupermarketFixedPoint` is what :func:`~symq.meanfield.supermarket.solve_supermarket`
returns; :class:`RefinedJSQ` is what :func:`~symq.meanfield.supermarket.refined_jsq`
(exponential service) and :func:`~symq.meanfield.refined_ph.refined_jsq_ph` (phase-type service)
return.  Both are frozen dataclasses on :class:`symq.core.result.ResultBase` (``to_dict()``, a
short ``str``, a Markdown table in Jupyter) whose fields follow the glossary of
:mod:`symq.core.glossary` (``ET``, ``EW``, ``EQ``, ``tail``, ``method``, ``exactness``).

Beside them, the two checks of a mean-field result that :mod:`symq.core.result` does not make
(its :func:`~symq.core.result.check_probability` and :func:`~symq.core.result.check_tail` are
called directly): :func:`check_means` (a mean that is not a finite number ``>= 0`` is a
:class:`~symq.core.errors.NumericalFailure`, CLI exit status 3) and :func:`refined_validity`.
The refined mean-field estimate ``pi + V/N`` of Gast and Van Houdt (SIGMETRICS 2018,
Theorem 1) is an expansion in ``1/N`` and need not be a probability vector for small ``N`` at
high load: that is not a solver failure but the edge of the approximation's domain of validity,
which the solvers report in the result (fields ``refined_valid`` and ``refined_invalid``)
instead of refusing the whole solve.

Examples
--------
>>> from symq.meanfield import solve_supermarket
>>> r = solve_supermarket(1, 0.5)
>>> r.ET, r.EQ
(2.0, 1.0)
>>> refined_validity([0.5, 0.25], [10.0, 0.0], N=5)
(False, 'pi + V/N has component 1 = 2.5 > 1
 (N = 5 is too small for the 1/N expansion at this load)')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import NumericalFailure
from symq.core.renamed import former_attribute
from symq.core.result import Exactness, ResultBase

__all__ = ["SupermarketFixedPoint", "RefinedJSQ", "JSQPHComparison", "check_means",
           "refined_validity", "SLACK", "PARAMETER_ECHO"]

#: Round-off allowed outside ``[0, 1]``, on monotonicity and below 0 for a mean.
SLACK = 1e-9

#: Fields of a mean-field result that repeat the model's parameters (``d``, ``lam``, ``N``):
#: shown by the result, but not among a registered model's values (they are its ``params``).
PARAMETER_ECHO = ResultBase.bookkeeping | {"d", "lam", "N"}


def _total(seconds: float) -> dict[str, float]:
    return {"total": seconds}


@dataclass(frozen=True)
class SupermarketFixedPoint(ResultBase):
    """Mean-field fixed point of JSQ(d) with unit-rate exponential service.

    Attributes
    ----------
    d : int
        Queues sampled per arrival.
    lam : float
        Per-server arrival rate.
    ET, EQ, EW : float
        Mean response time, mean number of jobs per server, mean waiting time (``ET - 1``).
    P_wait : float
        Probability that an arrival waits, ``lam^d``.
    tail : ndarray
        ``u_1, u_2, ...`` (fraction of servers with at least ``k`` jobs) while
        ``u_k >= 1e-16``, at most 10,000 entries.
    tail_levels : int
        Entries listed in ``tail``.
    tail_rest : float
        First value not listed: a bound on every later one.
    truncation_bound : float
        Bound on the part of ``EQ`` left out by the truncation (0 when exact).
    K : int
        Levels summed (or of the truncated ODE).
    ET_heavy_traffic : float or None
        ``log(1/(1 - lam))/log d`` for ``d >= 2`` (Mitzenmacher 2001), ``None`` for ``d = 1``.
    method : str
    exactness : Exactness
        ``exact`` for the closed form, ``numeric`` for the ODE fixed point.
    seconds : float
        Wall time of the solve.

    The registered model ``supermarket`` gives every field but ``d`` and ``lam`` (its
    parameters) as its values; ``ET_heavy_traffic`` only for ``d >= 2``.
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "ET", "EQ", "EW")
    bookkeeping: ClassVar[frozenset[str]] = PARAMETER_ECHO

    d: int
    lam: float
    ET: float
    EQ: float
    EW: float
    P_wait: float
    tail: NDArray[np.float64]
    tail_levels: int
    tail_rest: float
    truncation_bound: float
    K: int
    ET_heavy_traffic: float | None
    method: str
    exactness: Exactness
    seconds: float = 0.0

    timings = former_attribute("timings", "seconds", _total)


@dataclass(frozen=True)
class RefinedJSQ(ResultBase):
    """Refined mean field of JSQ(d): ``E[X^N] ~ pi + V/N`` (Gast & Van Houdt 2018, Theorem 1).

    Attributes
    ----------
    d : int
    lam : float
        Per-server arrival rate.
    N : int
        Number of servers.
    pi, V : ndarray
        Fixed point and ``1/N`` term: shape ``(K,)`` (``u_1..u_K``) for exponential service,
        ``(K, m)`` (``x_{k,j}``) for phase-type service.
    u : ndarray, shape (K,)
        The tail ``u_k`` of the fixed point (``pi`` summed over the phases).
    EQ, EQ_N : float
        Mean number of jobs per server: mean field and refined (``sum(pi + V/N)``).
    ET, ET_N, EW, EW_N : float
        Mean response and waiting times (Little's law), mean field and refined.
    K : int
        Truncation level.
    truncation_bound : float
        Bound on the part of ``EQ`` (or of the change of ``EQ_N``) left out by the truncation.
    max_real_eigenvalue : float or None
        Largest real part of the eigenvalues of ``DF(pi)`` (``None`` where not computed).
    drift_residual : float or None
        ``max |F(pi)|`` of the population process's drift at ``pi`` (``None`` where the process
        is not built).
    refined_valid : bool
        Whether ``pi + V/N`` is an occupancy vector; otherwise ``refined_invalid`` says why and
        ``EQ_N`` lies outside the domain of the expansion.
    refined_invalid : str
    pi_rest : float or None
        ``d = 1``, exponential service: the first tail value not listed in ``pi``.
    V2 : ndarray or None
        With ``order = 2`` (exponential service): the ``1/N^2`` term, ``E[X^N] = pi + V/N +
        V2/N^2 + o(1/N^2)`` (Gast, Bortolussi & Tribastone, Performance Evaluation 2019).
    EQ_N2, ET_N2, EW_N2 : float or None
        With ``order = 2``: ``sum(pi + V/N + V2/N^2)`` and the mean times from it.
    refined2_valid : bool or None
        With ``order = 2``: whether ``pi + V/N + V2/N^2`` is an occupancy vector;
        ``refined2_invalid`` says why not.
    refined2_invalid : str
    method : str
    exactness : Exactness
    seconds : float
        Wall time of the solve.

    The registered models ``refined-jsq`` and ``refined-jsq-ph`` give every field but ``d``,
    ``lam`` and ``N`` (their parameters) as their values, ``None`` ones left out.
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "N", "ET", "ET_N", "refined_valid")
    bookkeeping: ClassVar[frozenset[str]] = PARAMETER_ECHO

    d: int
    lam: float
    N: int
    pi: NDArray[np.float64]
    V: NDArray[np.float64]
    u: NDArray[np.float64]
    EQ: float
    EQ_N: float
    ET: float
    ET_N: float
    EW: float
    EW_N: float
    K: int
    truncation_bound: float
    max_real_eigenvalue: float | None
    drift_residual: float | None
    refined_valid: bool
    refined_invalid: str
    method: str
    exactness: Exactness
    pi_rest: float | None = None
    seconds: float = 0.0
    V2: NDArray[np.float64] | None = None
    EQ_N2: float | None = None
    ET_N2: float | None = None
    EW_N2: float | None = None
    refined2_valid: bool | None = None
    refined2_invalid: str = ""

    timings = former_attribute("timings", "seconds", _total)


@dataclass(frozen=True)
class JSQPHComparison(ResultBase):
    """JSQ(d) with H2 job sizes: the true mean-field fixed point beside Li's product form.

    What the registered model ``jsq-ph`` returns (:func:`~symq.meanfield.models.jsq_ph_model`):
    the cavity fixed point of :func:`~symq.meanfield.jsq_ph.solve_jsq_ph` and the two numbers
    of Li's (2010) product-form candidate ``x_k = u_k theta``
    (:func:`~symq.meanfield.jsq_ph.product_form_ET`,
    :func:`~symq.meanfield.jsq_ph.product_form_residual`).

    Attributes
    ----------
    ET, EQ, EW : float
        Mean response time, mean jobs per server, mean waiting time of the fixed point.
    tail : list of float
        ``u_1, u_2, ...`` while ``u_k >= 1e-16``.
    iterations : int
        Cavity iterations.
    residual : float
        ``max |dx/dt|`` of the mean-field ODE at the fixed point.
    invariants : dict
        Work conservation and phase-law checks of the fixed point (both ~0).
    K : int
        Levels of the fixed point.
    product_form_ET : float
        ``ET`` of Li's product form (the exponential-service value).
    product_form_residual : float
        Max ODE drift of Li's candidate (0 only for exponential sizes).
    alpha, A : ndarray
        The H2 law's phase-type representation.
    method : str
    exactness : Exactness
        ``numeric``.
    seconds : float
        Wall time of the fixed point and of the product form together.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "EQ", "EW", "product_form_ET",
                                          "product_form_residual")

    ET: float
    EQ: float
    EW: float
    tail: list[float]
    iterations: int
    residual: float
    invariants: dict[str, float]
    K: int
    product_form_ET: float
    product_form_residual: float
    alpha: NDArray[np.float64]
    A: NDArray[np.float64]
    method: str
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


def check_means(solver: str, **means: Any) -> None:
    """Every given mean is a finite real number ``>= 0`` (up to round-off)."""
    for name, value in means.items():
        v = float(value)
        if not math.isfinite(v) or v < -SLACK * max(1.0, abs(v)):
            raise NumericalFailure(f"{solver}: the solver returned the mean {name} = {v!r}, "
                                   "not a finite number >= 0")


def refined_validity(pi: ArrayLike, V: ArrayLike, N: int, V2: ArrayLike | None = None
                     ) -> tuple[bool, str]:
    """Whether ``pi + V/N`` (or ``pi + V/N + V2/N^2`` with ``V2``) is a valid occupancy:
    entries in ``[0, 1]``, non-increasing in the level.

    Parameters
    ----------
    pi, V : array_like
        Fixed point and ``1/N`` term, shape ``(K,)`` or ``(K, m)`` (level first).
    N : int
        Number of servers.
    V2 : array_like, optional
        The ``1/N^2`` term (same shape).

    Returns
    -------
    (bool, str)
        ``(True, "")`` or ``(False, reason)``; ``reason`` names the first violation.
    """
    est = np.asarray(pi, dtype=float) + np.asarray(V, dtype=float) / N
    what, order = "pi + V/N", "1/N"
    if V2 is not None:
        est = est + np.asarray(V2, dtype=float) / N ** 2
        what, order = "pi + V/N + V2/N^2", "1/N^2"
    if est.ndim == 1:
        est = est[:, None]
    if not np.all(np.isfinite(est)):
        return False, f"{what} has a non-finite entry"
    hint = f"N = {N} is too small for the {order} expansion at this load"
    flat_lo = np.unravel_index(int(np.argmin(est)), est.shape)
    if est[flat_lo] < -SLACK:
        return False, (f"{what} has component {flat_lo[0] + 1} = {est[flat_lo]:.3g} < 0 ({hint})")
    flat_hi = np.unravel_index(int(np.argmax(est)), est.shape)
    if est[flat_hi] > 1.0 + SLACK:
        return False, (f"{what} has component {flat_hi[0] + 1} = {est[flat_hi]:.3g} > 1 ({hint})")
    total = est.sum(axis=1)
    if total.size and total.max() > 1.0 + SLACK:
        k = int(np.argmax(total))
        return False, f"{what} has level {k + 1} of total mass {total[k]:.3g} > 1 ({hint})"
    if est.shape[0] > 1:
        rise = np.diff(est, axis=0)
        k, j = np.unravel_index(int(np.argmax(rise)), rise.shape)
        if rise[k, j] > SLACK:
            return False, (f"{what} is not monotone: level {k + 2} exceeds level {k + 1} by "
                           f"{rise[k, j]:.3g} ({hint})")
    return True, ""
