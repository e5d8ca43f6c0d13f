"""Result types of the JSQ(d) mean-field solvers: the exponential fixed point and the refined term.

:class:`SupermarketFixedPoint` is what :func:`~symq.meanfield.supermarket.solve_supermarket`
returns; :class:`RefinedJSQ` is what :func:`~symq.meanfield.supermarket.refined_jsq`
(exponential service) and :func:`~symq.meanfield.refined_ph.refined_jsq_ph` (phase-type service)
return.  Both are frozen dataclasses on :class:`symq.core.result.ResultBase` (``to_dict()``, a
short ``str``, a Markdown table in Jupyter) whose fields follow the glossary of
:mod:`symq.core.glossary` (``ET``, ``EW``, ``EQ``, ``tail``, ``method``, ``exactness``).

Examples
--------
>>> from symq.meanfield import solve_supermarket
>>> r = solve_supermarket(1, 0.5)
>>> r.ET, r.EQ
(2.0, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from symq.core.result import Exactness, ResultBase

__all__ = ["SupermarketFixedPoint", "RefinedJSQ"]


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
    timings : dict
        Seconds spent.
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "ET", "EQ", "EW")

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
    timings: dict[str, float] = field(default_factory=dict)


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
    method : str
    exactness : Exactness
    timings : dict
    """

    summary: ClassVar[tuple[str, ...]] = ("d", "lam", "N", "ET", "ET_N", "refined_valid")

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
    timings: dict[str, float] = field(default_factory=dict)
