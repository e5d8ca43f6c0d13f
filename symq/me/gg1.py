r"""The GI/G/1 FCFS queue: the exact GI/M/1 waiting time, Kingman's and Marshall's bounds,
Kingman's approximation, and the Lindley simulation of any pair of laws.

* **GI/M/1** (Kleinrock 1975, *Queueing Systems* I, ch. 6): with interarrival LST
  :math:`A^*` and exponential service of rate :math:`\mu`, :math:`\sigma \in (0, 1)` solves
  :math:`\sigma = A^*(\mu(1-\sigma))`; then :math:`P(W > t) = \sigma e^{-\mu(1-\sigma)t}` and
  :math:`E[W] = \sigma/(\mu(1-\sigma))` (:func:`gi_m1_waiting`; the interarrival law is a
  declared :class:`~symq.me.transforms.Transform`).
* **Kingman (1962)**, Biometrika 49:315-324: :math:`E[W] \le K_u = \lambda(\sigma_a^2 +
  \sigma_s^2)/(2(1-\rho))` for any GI/G/1 queue; **Marshall (1968)**, Oper. Res. 16:651-665:
  :math:`K_u - (1+\rho)/(2\lambda)` is a lower bound when the interarrival law has an
  increasing failure rate (an upper bound for a decreasing one);
  **Kingman's approximation** (1961, heavy traffic): :math:`E[W] \approx \frac{\rho}{1-\rho}
  \frac{c_a^2 + c_s^2}{2} E[S]`, exact for Poisson arrivals only
  (:func:`gg1_references`).
* **Simulation**: :func:`simulate_gg1_waiting`, the Lindley recursion :math:`W_{k+1} =
  \max(0, W_k + S_k - A_{k+1})` (Lindley 1952) on the simulation-run core, with batch-means
  intervals: the independent evidence for the formulas above.

Examples
--------
>>> from symq.me.transforms import Transform
>>> r = gi_m1_waiting(Transform("lam/(lam + s)", parameters=("lam",)), 1.0, {"lam": 0.5})
>>> round(r.sigma, 12), round(r.EW, 12)          # M/M/1: sigma = rho, E W = rho/(mu - lam)
(0.5, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import brentq

from symq.core.compiler import compile as compile_exprs
from symq.core.errors import InvalidParameter, NumericalFailure, StabilityError
from symq.core.parameters import real_value
from symq.core.randomness import RngLike
from symq.core.result import Exactness, ResultBase
from symq.laws import as_sampler

from .queueing import WaitingTimeEstimate, lindley_waiting
from .transforms import Transform, moments

__all__ = ["GIM1Waiting", "GG1References", "gi_m1_waiting", "gg1_references",
           "simulate_gg1_waiting"]


@dataclass(frozen=True)
class GIM1Waiting(ResultBase):
    """The exact GI/M/1 FCFS waiting time.

    Attributes
    ----------
    sigma : float
        The root of :math:`\\sigma = A^*(\\mu(1-\\sigma))` in (0, 1): the probability that an
        arrival waits, and the ratio of the geometric queue at arrivals.
    EW : float
        :math:`\\sigma/(\\mu(1-\\sigma))`.
    decay : float
        :math:`\\mu(1-\\sigma)`: :math:`P(W > t) = \\sigma e^{-\\mu(1-\\sigma)t}`.
    rho : float
        :math:`\\lambda/\\mu`.
    residual : float
        :math:`|A^*(\\mu(1-\\sigma)) - \\sigma|` at the root found.
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("sigma", "EW", "rho")

    sigma: float
    EW: float
    decay: float
    rho: float
    residual: float
    method: str = "root of sigma = A*(mu (1 - sigma)) (Brent, bracketed)"
    exactness: Exactness = Exactness.NUMERIC

    def ccdf(self, t: Any) -> np.ndarray:
        """:math:`P(W > t) = \\sigma e^{-\\mu(1-\\sigma)t}` for ``t >= 0``."""
        return self.sigma * np.exp(-self.decay * np.asarray(t, dtype=float))


def gi_m1_waiting(interarrival: Transform, mu: float,
                  values: Mapping[str, Any] | None = None) -> GIM1Waiting:
    r"""The GI/M/1 waiting time from the interarrival LST (module docstring).

    Parameters
    ----------
    interarrival : Transform
        The LST of the interarrival time (``kind="lst"``).
    mu : float
        The exponential service rate.
    values : mapping, optional
        Values of the transform's parameters.

    Raises
    ------
    InvalidParameter
        Not an LST, a non-positive ``mu``, a missing parameter value.
    StabilityError
        :math:`\rho = 1/(\mu E[A]) \ge 1`.
    NumericalFailure
        No sign change of :math:`A^*(\mu(1-\sigma)) - \sigma` below 1 (not a transform).
    """
    if not isinstance(interarrival, Transform) or interarrival.kind != "lst":
        raise InvalidParameter("interarrival", interarrival, "a Transform of kind 'lst'")
    mu = real_value("mu", mu, "a positive service rate", lambda x: x > 0)
    values = dict(values or {})
    mean = moments(interarrival, 1, values).moments[0]
    rho = 1.0 / (mu * mean)
    if rho >= 1.0:
        raise StabilityError(f"load rho = 1/(mu E[A]) = {rho:.6g} must be < 1 for a stationary "
                             "GI/M/1 queue")
    numbers = interarrival.check(values)
    used = tuple(interarrival.symbols[p] for p in interarrival.free_parameters)
    fn = compile_exprs(interarrival.expr, (interarrival.variable, *used), "numpy")
    args = [numbers[p.name] for p in used]

    def gap(sigma: float) -> float:
        return float(fn(mu * (1.0 - sigma), *args)) - sigma

    # gap(0) = A*(mu) > 0, gap(1) = 0 with slope 1/rho - 1 > 0: negative just below 1
    top = 1.0 - 1e-3 * (1.0 - rho)
    while gap(top) >= 0.0:
        top = 1.0 - (1.0 - top) / 2.0
        if 1.0 - top < 1e-15:
            raise NumericalFailure("sigma = A*(mu (1 - sigma)) has no root in (0, 1): the "
                                   "interarrival transform is not that of a law with mean "
                                   f"{mean:g}")
    sigma = brentq(gap, 0.0, top, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=200)
    decay = mu * (1.0 - sigma)
    return GIM1Waiting(sigma, sigma / decay, decay, rho, abs(gap(sigma)))


@dataclass(frozen=True)
class GG1References(ResultBase):
    """Kingman's and Marshall's bounds and Kingman's approximation of the GI/G/1 mean wait.

    Attributes
    ----------
    kingman_upper : float
        :math:`K_u = \\lambda(\\sigma_a^2 + \\sigma_s^2)/(2(1-\\rho))`, an upper bound for
        every GI/G/1 queue (Kingman 1962).
    marshall : float
        :math:`K_u - (1+\\rho)/(2\\lambda)`: a lower bound for IFR interarrival laws, an upper
        bound for DFR ones (Marshall 1968).
    kingman_approximation : float
        :math:`\\frac{\\rho}{1-\\rho}\\frac{c_a^2 + c_s^2}{2}E[S]` (exact for Poisson arrivals).
    rho : float
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("kingman_upper", "marshall", "kingman_approximation")

    kingman_upper: float
    marshall: float
    kingman_approximation: float
    rho: float
    method: str = "Kingman (1962), Marshall (1968), Kingman (1961) from two moments"
    exactness: Exactness = Exactness.EXACT


def gg1_references(mean_interarrival: float, var_interarrival: float, mean_service: float,
                   var_service: float) -> GG1References:
    """The bounds and the approximation of :class:`GG1References` from the two laws' means and
    variances.

    Raises
    ------
    InvalidParameter
        A mean that is not positive, a variance that is negative or not finite.
    StabilityError
        :math:`\\rho = E[S]/E[A] \\ge 1`.

    Examples
    --------
    >>> r = gg1_references(2.0, 4.0, 1.0, 1.0)          # M/M/1 at rho = 1/2: E W = 1
    >>> r.kingman_upper, r.marshall, r.kingman_approximation
    (2.5, 1.0, 1.0)
    """
    ea = real_value("mean_interarrival", mean_interarrival, "> 0", lambda x: x > 0)
    es = real_value("mean_service", mean_service, "> 0", lambda x: x > 0)
    va = real_value("var_interarrival", var_interarrival, ">= 0", lambda x: x >= 0)
    vs = real_value("var_service", var_service, ">= 0", lambda x: x >= 0)
    lam, rho = 1.0 / ea, es / ea
    if rho >= 1.0:
        raise StabilityError(f"load rho = E[S]/E[A] = {rho:.6g} must be < 1")
    upper = lam * (va + vs) / (2.0 * (1.0 - rho))
    ca2, cs2 = va / ea ** 2, vs / es ** 2
    return GG1References(upper, upper - (1.0 + rho) / (2.0 * lam),
                         rho / (1.0 - rho) * (ca2 + cs2) / 2.0 * es, rho)


def simulate_gg1_waiting(interarrivals: object, sizes: object,
                         thresholds: Sequence[float] = (), *, n_jobs: int = 1_000_000,
                         rng: RngLike = None, n_batches: int = 40, level: float = 0.99,
                         progress: bool = False) -> WaitingTimeEstimate:
    """Simulate a GI/G/1 FCFS queue by the Lindley recursion (the checks and intervals of
    :func:`symq.me.queueing.simulate_mg1_waiting`).

    Parameters
    ----------
    interarrivals, sizes : law
        Interarrival and service-time laws (anything :func:`symq.laws.as_sampler` takes).
    thresholds, n_jobs, rng, n_batches, level, progress
        As in :func:`~symq.me.queueing.simulate_mg1_waiting`.

    Returns
    -------
    WaitingTimeEstimate
        ``lam`` is :math:`1/E[A]`.

    Raises
    ------
    InvalidParameter
        A law the laws layer cannot sample, or without a finite mean and variance; a run too
        short for the relaxation time at the load.
    StabilityError
        :math:`E[S]/E[A] \\ge 1`.
    """
    arrivals = as_sampler(interarrivals, "interarrivals")
    service = as_sampler(sizes, "sizes")
    mean = float(arrivals.mean())
    second = float(arrivals.moment(2)) if hasattr(arrivals, "moment") else math.nan
    if not (math.isfinite(mean) and mean > 0 and math.isfinite(second)):
        raise InvalidParameter("interarrivals", getattr(arrivals, "name", interarrivals),
                               "a law with a finite positive mean and a finite variance")
    scv = max(second / mean ** 2 - 1.0, 0.0)
    return lindley_waiting(service, lambda n, generator: arrivals.sample(n, rng=generator),
                           mean, scv, thresholds, n_jobs=n_jobs, rng=rng, n_batches=n_batches,
                           warmup=0.05, level=level, progress=progress, queue="GI/G/1")

