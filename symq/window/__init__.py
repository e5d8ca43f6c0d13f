"""Adaptive window protocols (TCP variants) under window-dependent losses.

Altman, Avrachenkov, Kherani, Prabhu, "Performance analysis and stochastic stability of
congestion control protocols", IEEE INFOCOM 2005 (reference note part B).

* :mod:`~symq.window.protocol`: :class:`WindowProtocol` declared with sympy profiles, presets
  NewReno, Scalable TCP, HighSpeed TCP (RFC 3649) and the one-parameter HighSpeed family;
* :mod:`~symq.window.symbolic`: the stationary Kolmogorov (level-crossing) equation, the drift
  identity, stability by sympy limits.
"""

from .protocol import (
    PRESETS,
    W,
    PowerLawParameters,
    WindowProtocol,
    general,
    highspeed,
    highspeed_family,
    newreno,
    scalable,
)
from .symbolic import Stability, delay_equation, drift_identity, kolmogorov_equation, stability

__all__ = [
    "W", "WindowProtocol", "PowerLawParameters", "newreno", "scalable", "highspeed",
    "highspeed_family", "general", "PRESETS",
    "kolmogorov_equation", "delay_equation", "drift_identity", "Stability", "stability",
]
