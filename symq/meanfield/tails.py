"""Queue-length tail regimes of JSQ(d) under power-law service, seen through truncated PH laws.

Bramson, Lu and Prabhakar (Ann. Appl. Probab. 23(5), 2013) show for FIFO JSQ(d) with service
``P(X > x) ~ x^-beta`` that the mean-field queue-length tail ``u_k`` is doubly exponential when
``beta > d/(d-1)``, exponential when ``beta = d/(d-1)`` and a power law when ``beta < d/(d-1)``.
A phase-type law has an exponential tail, so no single PH law
can show these regimes: what can be computed is a *family* of PH laws whose ccdf follows
``x^-beta`` over a growing range of scales ``[1, S]``, and how the fixed point changes as
``S`` grows.  The observable used here is the number of levels ``K(eps)`` until
``u_k < eps``:

* doubly exponential limit: ``K(eps)`` stays bounded as ``S`` grows;
* power-law limit: ``K(eps)`` grows without bound, faster and faster in ``log S``;
* exponential limit (the boundary): ``K(eps)`` grows roughly linearly in ``log S`` over the
  computable range, which a finite range of scales cannot tell apart from a slow power law.

This is numerical evidence on truncated laws, not a proof; :func:`classify_levels` says
"undecided" rather than guess.

Examples
--------
>>> law = powerlaw_hyperexponential(2.5, 6)
>>> round(law.mean(), 12), round(float(law.alpha @ np.linalg.solve(-law.A, np.ones(6))), 12)
(1.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.result import Exactness, ResultBase
from symq.laws import PhaseType

from .jsq_ph import solve_jsq_ph

__all__ = ["powerlaw_hyperexponential", "TailScan", "tail_regime_scan", "classify_levels",
           "predicted_regime", "REGIMES"]

#: The labels :func:`classify_levels` returns.
REGIMES = ("doubly exponential", "power law", "undecided")


def powerlaw_hyperexponential(beta: float, phases: int, ratio: float = 4.0) -> PhaseType:
    """A hyperexponential with mean 1 whose ccdf follows ``x^-beta`` over ``phases`` scales.

    Branch ``i = 0..phases-1`` has rate proportional to ``ratio^-i`` and probability
    proportional to ``ratio^(-i beta)``: at ``x ~ ratio^j`` only the branches ``i > j`` are still
    alive, and they carry probability ``~ ratio^(-j beta) ~ x^-beta`` (the construction of
    Feldmann and Whitt, Performance Evaluation 31, 1998).  The largest scale is
    ``ratio^(phases-1)`` times the smallest; beyond it the tail is exponential.

    Parameters
    ----------
    beta : float
        Tail exponent, ``> 1`` (finite mean).
    phases : int
        Number of branches, ``>= 1``.
    ratio : float, default 4
        Ratio of successive branch means, ``> 1``.

    Returns
    -------
    PhaseType
        ``A`` is diagonal; the mean is 1.

    Raises
    ------
    InvalidParameter
        ``beta <= 1``, ``phases < 1`` or ``ratio <= 1``.
    """
    beta = real_value("beta", beta, "a finite real number > 1 (finite mean)", lambda v: v > 1)
    ratio = real_value("ratio", ratio, "a finite real number > 1", lambda v: v > 1)
    phases = integer_value("phases", phases, 1)
    i = np.arange(phases, dtype=float)
    rates = ratio ** -i
    alpha = ratio ** (-i * beta)
    alpha /= alpha.sum()
    rates *= float(np.sum(alpha / rates))  # rescale to mean 1
    return PhaseType(alpha, -np.diag(rates), name=f"power-law H{phases}(beta={beta:g})")


def classify_levels(levels: Sequence[int]) -> str:
    """Regime suggested by ``K(eps)`` at geometrically growing scales (see the module notes).

    * ``"doubly exponential"``: the last three values differ by at most one level;
    * ``"power law"``: the increments grow (each at least 1.5 times the previous one over the
      last three steps) and the last increment is at least 5 levels;
    * ``"undecided"`` otherwise (for instance a steady linear growth: the exponential boundary
      case, or too few scales).

    Examples
    --------
    >>> (classify_levels([7, 8, 8, 8]), classify_levels([10, 14, 22, 35, 62]),
    ...  classify_levels([9, 10, 12, 13, 15]))
    ('doubly exponential', 'power law', 'undecided')
    """
    k = [int(v) for v in levels]
    if len(k) < 3:
        return "undecided"
    if max(k[-3:]) - min(k[-3:]) <= 1:
        return "doubly exponential"
    steps = np.diff(k)
    if len(steps) >= 3 and steps[-1] >= 5 and np.all(steps[-3:] > 0) \
            and steps[-1] >= 1.5 * steps[-2] and steps[-2] >= 1.5 * steps[-3]:
        return "power law"
    return "undecided"


@dataclass(frozen=True)
class TailScan(ResultBase):
    """Result of :func:`tail_regime_scan`.

    Attributes
    ----------
    d, lam, beta : the case.
    scales : tuple of float
        Largest-to-smallest branch-mean ratio of each PH law.
    levels : tuple of int
        ``K(eps)``, the first level with ``u_k < eps``, for each scale.
    ET : tuple of float
        Mean-field mean response time for each scale.
    eps : float
    regime : str
        :func:`classify_levels` of ``levels``.
    predicted : str
        Bramson-Lu-Prabhakar's regime for ``beta`` vs ``d/(d-1)`` (``"exponential"`` at
        equality).
    method : str
    exactness : Exactness
        ``numeric``.
    """

    d: int
    lam: float
    beta: float
    scales: tuple[float, ...]
    levels: tuple[int, ...]
    ET: tuple[float, ...]
    eps: float
    regime: str
    predicted: str
    method: str = ("cavity fixed point (solve_jsq_ph) of truncated power-law hyperexponential "
                   "laws of growing scale")
    exactness: Exactness = Exactness.NUMERIC


def predicted_regime(d: int, beta: float) -> str:
    """Bramson, Lu, Prabhakar (2013): compare ``beta`` with ``d/(d-1)`` (``d >= 2``)."""
    threshold = d / (d - 1)
    if math.isclose(beta, threshold, rel_tol=1e-12):
        return "exponential"
    return "doubly exponential" if beta > threshold else "power law"


def tail_regime_scan(d: int, lam: float, beta: float, phases: Sequence[int] = (5, 7, 9, 11, 13),
                     ratio: float = 4.0, eps: float = 1e-12, max_levels: int = 20_000) -> TailScan:
    """``K(eps)`` of the JSQ(d) FCFS fixed point for power-law PH laws over growing scales.

    Each law is :func:`powerlaw_hyperexponential` ``(beta, n, ratio)`` for ``n`` in ``phases``;
    its fixed point comes from :func:`~symq.meanfield.jsq_ph.solve_jsq_ph` (adaptive
    truncation to ``u_K < 1e-16``).

    Parameters
    ----------
    d : int
        Probes per arrival, ``>= 2``.
    lam : float
        Per-server load (mean size 1), in ``(0, 1)``.
    beta : float
        Tail exponent, ``> 1``.
    phases : sequence of int
        Branch counts, increasing; at least three.
    ratio, eps, max_levels
        Scale ratio of successive branches, level threshold, truncation cap.

    Raises
    ------
    InvalidParameter
        ``d < 2``, fewer than three increasing ``phases``, or ``eps`` outside ``(1e-16, 1)``.
    NotConverged
        From the fixed-point solver (raise ``max_levels`` for very heavy tails).
    """
    d = integer_value("d", d, 2, "the tail regimes need d >= 2")
    counts = [int(n) for n in phases]
    if len(counts) < 3 or any(b <= a for a, b in zip(counts, counts[1:])):
        raise InvalidParameter("phases", phases, "at least three increasing branch counts")
    eps = real_value("eps", eps, "a real number in (1e-16, 1)", lambda v: 1e-16 < v < 1)
    levels, times = [], []
    for n in counts:
        fp = solve_jsq_ph(d, lam, powerlaw_hyperexponential(beta, n, ratio),
                          max_levels=max_levels)
        below = np.flatnonzero(fp.u < eps)
        levels.append(int(below[0]) + 1 if below.size else fp.K + 1)
        times.append(float(fp.ET))
    return TailScan(d=int(d), lam=float(lam), beta=float(beta),
                    scales=tuple(float(ratio) ** (n - 1) for n in counts), levels=tuple(levels),
                    ET=tuple(times), eps=eps, regime=classify_levels(levels),
                    predicted=predicted_regime(int(d), float(beta)))
