"""Exact event-sampling Monte Carlo of adaptive window protocols, one loss cycle at a time.

The model is the piecewise-deterministic Markov process of Altman, Avrachenkov, Kherani,
Prabhu, *Performance analysis and stochastic stability of congestion control protocols*, IEEE
INFOCOM 2005, Section II; each loss cycle is sampled exactly by inverting the cumulative loss
hazard (no time discretisation; ``derivations/awp.md``, sections "Power-law class" and "General
profiles"), and estimates are batch-means confidence intervals of the simulation-run core
(:mod:`symq.core.simrun`, :mod:`symq.core.simoutput`).

* :mod:`~symq.window.simulation.simulator`: :func:`simulate_window` and its result
  :class:`WindowEstimate`;
* :mod:`~symq.window.simulation.kernels`: the numba kernels (tabulated and power-law paths);
* :mod:`~symq.window.simulation.tables`: the integral tables of the tabulated path;
* :mod:`~symq.window.simulation.montecarlo`: :func:`simulate_protocol`, the bridge from a
  declared :class:`~symq.window.protocol.WindowProtocol`.
"""

from .montecarlo import simulate_protocol
from .simulator import WindowEstimate, simulate_window

__all__ = ["WindowEstimate", "simulate_protocol", "simulate_window"]
