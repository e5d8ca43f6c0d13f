"""Simulate a declared :class:`~symq.window.protocol.WindowProtocol` (exact event sampling).

The bridge between a protocol and :func:`symq.window.simulation.simulate_window`: power-law
profiles without bounds use the simulator's exact closed-form cycle sampling, everything else
its tabulated general path, with the protocol's compiled profiles and bounds.

Examples
--------
>>> from symq.window.protocol import newreno
>>> est = simulate_protocol(newreno(1e-2), n_losses=100_000, rng=1)
>>> abs(est.mean_window.mean * 0.1 - 1.31) < 0.03     # E[W] sqrt(p), Ott-Kemperman-Mathis
True
"""

from __future__ import annotations

from typing import Any

from ..protocol import WindowProtocol
from .simulator import WindowEstimate, simulate_window

__all__ = ["simulate_protocol"]


def simulate_protocol(protocol: WindowProtocol, n_losses: int = 10**6, **options: Any
                      ) -> WindowEstimate:
    """Monte Carlo estimate of the stationary window of ``protocol`` (``options``: ``rng``,
    ``level``, ``warmup``, ``batches``, ``progress``, ... of
    :func:`~symq.window.simulation.simulate_window`)."""
    law = protocol.power_law()
    if law is not None and law.m > 0 and not protocol.bounded:
        return simulate_window(None, None, None, n_losses,
                               power_law=(law.alpha, law.k, law.gamma, law.l, law.beta),
                               **options)
    a, lam, d = protocol.numeric()
    return simulate_window(a, lam, d, n_losses, w_min=protocol.w_min, w_max=protocol.w_max,
                           **options)
