"""The probe polynomial of JSQ(d): the rate at which a class of queues receives arrivals.

With ``d`` probes drawn with replacement, a class holding mass ``p - q`` whose every better
class together holds ``1 - p`` receives arrivals at rate
``lam (p^d - q^d)/(p - q) = lam h_d(p, q)`` per unit mass (Hellemans & Van Houdt 2021,
``find_lambdas.m``; ``derivations/attained-service.md`` §1-§2).
Written as the polynomial ``h_d(p, q) = sum_{i<d} p^i q^(d-1-i)`` it has no 0/0 where the
class is empty, and the same expression serves floats, numpy arrays and sympy expressions.

Examples
--------
>>> probe_polynomial(0.5, 0.5, 2)   # derivative of p^2 at 0.5
1.0
"""

from __future__ import annotations

from typing import Any

__all__ = ["probe_polynomial"]


def probe_polynomial(p: Any, q: Any, d: int) -> Any:
    """``h_d(p, q) = (p^d - q^d)/(p - q) = sum_{i<d} p^i q^(d-1-i)`` (``d >= 1``)."""
    return sum(p ** i * q ** (d - 1 - i) for i in range(d))
