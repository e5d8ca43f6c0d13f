"""Adaptive window protocols (TCP variants) under window-dependent losses.

Altman, Avrachenkov, Kherani, Prabhu, "Performance analysis and stochastic stability of
congestion control protocols", IEEE INFOCOM 2005; symq's own derivations are in
``derivations/awp.md`` (``symq derive awp``).

* :mod:`~symq.window.protocol`: :class:`WindowProtocol` declared with sympy profiles, presets
  NewReno, Scalable TCP, HighSpeed TCP (RFC 3649) and the one-parameter HighSpeed family;
* :mod:`~symq.window.symbolic`: the stationary Kolmogorov (level-crossing) equation, the drift
  identity, stability by sympy limits;
* :mod:`~symq.window.powerlaw` (sub-package): the q-series closed form of the power-law class
  ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w`` (the law, its series engine, density
  and distribution functions); :mod:`~symq.window.mimd`: multiplicative increase with constant
  losses and a floor;
* :mod:`~symq.window.numeric` (sub-package): the general numerical solver (embedded post-loss
  chain, Palm inversion, error control: solver, grid, level, extent, and the result);
* :mod:`~symq.window.solve`: :func:`solve_protocol`, one front door to the three;
* :mod:`~symq.window.simulation` (sub-package): exact-event Monte Carlo (the simulator, its
  numba kernels and integral tables, and :func:`simulate_protocol` for a declared protocol);
* :mod:`~symq.window.ordering`: stochastic ordering of two protocols' windows;
* :mod:`~symq.window.plots`: stationary window densities, data and (optional) matplotlib plot;
* :mod:`~symq.window.model`: the registered ``awp`` model; :mod:`~symq.window.simmodel`: the
  registered simulation model ``window-sim``;
* :mod:`~symq.window.declared` (sub-package): the model kind ``window`` a claims file declares,
  and its derivation (``window-sim`` in :mod:`~symq.window.simmodel`).

Examples
--------
>>> from symq.window import newreno, solve_protocol
>>> round(solve_protocol(newreno(1e-4)).mean(), 3)
130.983
"""

from .declared import DeclaredWindow, declare_window
from .mimd import MIMDFloor
from .model import AWP, protocol_from_options, solve_awp
from .numeric import WindowSolution, solve_window
from .ordering import Ordering, compare
from .plots import plot_window_densities, window_density_data
from .powerlaw import PowerLawWindow
from .protocol import (
    PRESETS,
    PowerLawParameters,
    W,
    WindowProtocol,
    general,
    highspeed,
    highspeed_family,
    newreno,
    scalable,
)
from .simmodel import WINDOW_SIM, declare_window_sim, solve_window_sim
from .simulation import WindowEstimate, simulate_protocol, simulate_window
from .solve import WindowLaw, solve_protocol
from .symbolic import (
    WindowStability,
    delay_equation,
    drift_identity,
    kolmogorov_equation,
    stability,
)

__all__ = [
    "W", "WindowProtocol", "PowerLawParameters", "newreno", "scalable", "highspeed",
    "highspeed_family", "general", "PRESETS",
    "kolmogorov_equation", "delay_equation", "drift_identity", "WindowStability", "stability",
    "PowerLawWindow", "MIMDFloor", "solve_window", "WindowSolution", "solve_protocol", "WindowLaw",
    "simulate_window", "WindowEstimate", "simulate_protocol", "compare", "Ordering",
    "AWP", "solve_awp", "protocol_from_options", "WINDOW_SIM", "solve_window_sim",
    "DeclaredWindow", "declare_window", "declare_window_sim",
    "window_density_data", "plot_window_densities",
]
