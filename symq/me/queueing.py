r"""M/ME/1 waiting times from a rational service transform, and an M/G/1 Lindley simulator.

Angius, Horváth et al. (2014) use the fitted ME distributions inside stochastic models.  For the
M/G/1 queue with Poisson(:math:`\lambda`) arrivals, service transform :math:`B^*(s) = N(s)/D(s)` and
load :math:`\rho = \lambda m_1 < 1`, the Pollaczek-Khinchine formula for the FCFS waiting time is

.. math::

    W^*(s) = \frac{(1-\rho)\, s}{s - \lambda (1 - B^*(s))}
           = \frac{(1-\rho)\, D(s)}{D(s) - \lambda E(s)}, \qquad D(s) - N(s) = s E(s),

a rational function again: :math:`W` has an atom :math:`1-\rho` at zero and, given :math:`W > 0`, an
ME distribution of the same order (Kleinrock, Queueing Systems I, §5.7; Asmussen, Applied
Probability and Queues, §VIII.5).  The simulator is the Lindley recursion
:math:`W_{k+1} = \max(0, W_k + S_k - A_{k+1})`, an independent check that needs only samples of the
service time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numba
import numpy as np
import sympy as sp

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.simstats import ConfidenceInterval, batch_means

from .transform import RationalLST, s, to_rational

__all__ = ["WaitingTime", "mg1_waiting_time", "simulate_mg1_waiting"]


@dataclass(frozen=True)
class WaitingTime:
    r"""The M/ME/1 FCFS waiting time: an atom :math:`1-\rho` at 0 plus :math:`\rho` times an ME law.

    Attributes
    ----------
    rho : sympy.Rational
        The load :math:`\lambda m_1`.
    positive_part : RationalLST
        Transform of :math:`W` given :math:`W > 0`.
    """

    rho: sp.Rational
    positive_part: RationalLST

    def mean(self) -> sp.Rational:
        """:math:`E[W] = \\rho\\, E[W \\mid W > 0]` (exact)."""
        return self.rho * self.positive_part.moments(1)[0]


def mg1_waiting_time(service: RationalLST | Any, lam: Any) -> WaitingTime:
    r"""The Pollaczek-Khinchine waiting time of the M/ME/1 queue, exactly.

    Parameters
    ----------
    service : RationalLST or object with ``.lst``
        Service-time transform :math:`N/D`.
    lam : number
        Arrival rate (converted exactly to a rational).

    Raises
    ------
    StabilityError
        If :math:`\rho = \lambda m_1 \ge 1`.
    """
    lst = getattr(service, "lst", service)
    if not isinstance(lst, RationalLST):
        raise InvalidParameter("service", service, "a RationalLST or an ME distribution")
    lam_q = to_rational(lam, "lam")
    if not lam_q > 0:
        raise InvalidParameter("lam", lam, "a positive arrival rate")
    m1 = lst.moments(1)[0]
    rho = lam_q * m1
    if rho >= 1:
        raise StabilityError(f"load rho = lam*E[S] = {float(lam_q):g}*{float(m1):g} = "
                             f"{float(rho):g} must be < 1 for a stationary M/G/1 queue")
    N, D = lst.N, lst.D
    E = sp.div(D - N, sp.Poly(s, s, domain=sp.QQ))[0]   # D - N = s E(s), exact since N(0) = D(0)
    denominator = D - E * lam_q                          # W*(s) = (1 - rho) D / (D - lam E)
    # W | W > 0 : (W* - (1 - rho)) / rho = (1 - rho) lam E / (rho (D - lam E))
    numerator = E * (lam_q * (1 - rho) / rho)
    positive = RationalLST.from_coefficients(reversed(numerator.all_coeffs()),
                                             reversed(denominator.all_coeffs()))
    return WaitingTime(rho, positive)


@numba.njit(cache=True)
def _lindley(services: np.ndarray, interarrivals: np.ndarray, thresholds: np.ndarray,
             indicators: np.ndarray, waits: np.ndarray) -> None:
    w = 0.0
    for k in range(services.size):
        waits[k] = w
        for i in range(thresholds.size):
            indicators[k, i] = 1.0 if w > thresholds[i] else 0.0
        w = w + services[k] - interarrivals[k]
        if w < 0.0:
            w = 0.0


def simulate_mg1_waiting(sample_service: Callable[[int, np.random.Generator], np.ndarray],
                         lam: float, thresholds: Sequence[float], n_customers: int = 1_000_000,
                         rng: Any = None, *, level: float = 0.99, warmup: float = 0.05,
                         n_batches: int = 40) -> dict[str, Any]:
    """Simulate an M/G/1 FCFS queue by the Lindley recursion.

    Parameters
    ----------
    sample_service : callable(n, rng) -> array
        Draws n service times.
    lam : float
        Arrival rate.
    thresholds : sequence of float
        Values t at which P(W > t) is estimated.
    n_customers : int
        Customers simulated.
    rng : seed or numpy.random.Generator
        Randomness (same seed, same result).

    Returns
    -------
    dict
        ``mean_wait`` and ``ccdf`` (one per threshold) as batch-means confidence intervals.
    """
    if not lam > 0:
        raise InvalidParameter("lam", lam, "a positive arrival rate")
    if n_customers < 10 * n_batches:
        raise InvalidParameter("n_customers", n_customers, f"an integer >= {10 * n_batches}")
    generator = np.random.default_rng(rng)
    services = np.asarray(sample_service(n_customers, generator), dtype=float)
    if services.shape != (n_customers,) or not np.all(np.isfinite(services)) or np.any(services < 0):
        raise InvalidParameter("sample_service", "its output", "n finite nonnegative times")
    interarrivals = generator.exponential(1.0 / lam, n_customers)
    grid = np.asarray(thresholds, dtype=float)
    indicators = np.empty((n_customers, grid.size))
    waits = np.empty(n_customers)
    _lindley(services, interarrivals, grid, indicators, waits)
    ccdf: list[ConfidenceInterval] = [
        batch_means(indicators[:, i], n_batches=n_batches, level=level, warmup=warmup)
        for i in range(grid.size)
    ]
    return {"mean_wait": batch_means(waits, n_batches=n_batches, level=level, warmup=warmup),
            "ccdf": ccdf, "thresholds": grid}
