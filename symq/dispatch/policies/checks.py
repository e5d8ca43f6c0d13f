"""The checks every dispatching computation makes of its model: ``m``, ``rho``, sizes, thresholds.

The model of Hyytiä & Righter (arXiv 2402.08142): ``m`` identical FCFS servers, load per server
:math:`\\rho = \\lambda E[X] / m < 1`, a job-size law, and, for SITA, ``m - 1`` increasing size
thresholds.  The exact formulas (:mod:`~symq.dispatch.policies.exact`), the JSQ chain
(:mod:`~symq.dispatch.policies.jsq`), the policies' ``bind`` and the simulator all check their
arguments here, so that one bad value gives one message wherever it is typed.

Examples
--------
>>> from symq.laws import Exponential
>>> check_model(2, 0.5, Exponential(1.0))[3]     # lam = rho m / E[X]
1.0
>>> check_thresholds(3, [1.0, 2.0]).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import integer_value, real_value
from symq.laws import Distribution

from ..sizes import as_sizes

__all__ = ["check_servers", "check_load", "check_model", "require_exponential",
           "check_thresholds"]


def check_servers(m: Any) -> int:
    """The number of servers ``m``, an integer >= 1.

    Raises
    ------
    InvalidParameter
        If ``m`` is not an integer >= 1.
    """
    return integer_value("m", m, 1, "number of servers")


def check_load(rho: Any) -> float:
    """The load per server ``rho``, a real number in (0, 1).

    Raises
    ------
    InvalidParameter
        If ``rho`` is not a positive real number.
    StabilityError
        If ``rho >= 1``.
    """
    rho = real_value("rho", rho, "a real number in (0, 1) (load per server)", lambda r: r > 0)
    if rho >= 1.0:
        raise StabilityError(
            f"load per server rho={rho!r} must be < 1: the arrival rate lam = rho*m/E[X] exceeds "
            f"the total service capacity of the m servers")
    return rho


def check_model(m: Any, rho: Any, sizes: Any) -> tuple[int, float, Distribution, float]:
    """``m``, ``rho``, the job-size law converted by :func:`~symq.dispatch.sizes.as_size_law`,
    and the arrival rate ``lam = rho m / E[X]``.

    Raises
    ------
    InvalidParameter
        A bad ``m``, ``rho`` or size law.
    StabilityError
        If ``rho >= 1``.
    """
    m = check_servers(m)
    rho = check_load(rho)
    sizes = as_sizes(sizes)
    lam = rho * m / float(sizes.mean())
    return m, rho, sizes, lam


def require_exponential(policy: str, sizes: Distribution) -> None:
    """Refuse a size law that is not exponential for the exact value of ``policy``.

    Raises
    ------
    InvalidParameter
        If ``sizes`` is not exponential (``sizes.is_exponential`` false or missing).
    """
    if not getattr(sizes, "is_exponential", False):
        extra = (" (M/G/m: no closed form is known for general sizes; use simulate_dispatch)"
                 if policy == "lwl" else "; use simulate_dispatch for other size laws")
        raise InvalidParameter("sizes", getattr(sizes, "name", sizes),
                               "an exponential size law", f"the exact {policy} value needs "
                               f"exponential sizes{extra}")


def check_thresholds(m: int, thresholds: Any) -> np.ndarray:
    """The ``m - 1`` SITA thresholds as a float array, strictly increasing, finite and positive.

    Raises
    ------
    InvalidParameter
        If there are not ``m - 1`` of them or they are not strictly increasing positive reals.
    """
    try:
        h = np.atleast_1d(np.asarray(thresholds, dtype=float))
    except (TypeError, ValueError):
        raise InvalidParameter("thresholds", thresholds,
                               f"{m - 1} increasing positive real numbers") from None
    if h.ndim != 1 or h.size != m - 1:
        raise InvalidParameter("thresholds", thresholds,
                               f"{m - 1} increasing positive real numbers (one fewer than m={m})")
    if not np.all(np.isfinite(h)) or np.any(h <= 0) or np.any(np.diff(h) <= 0):
        raise InvalidParameter("thresholds", thresholds,
                               f"{m - 1} strictly increasing finite positive real numbers")
    return h
