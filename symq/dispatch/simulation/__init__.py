"""Simulation of size-aware dispatching to m parallel FCFS servers, and fairness by job size.

* :mod:`~symq.dispatch.simulation.simulate`: the numba discrete-event simulator of every policy
  of :mod:`symq.dispatch.policies` (with server speeds, size bins), :func:`simulate_dispatch`
  and its :class:`DispatchEstimate` (batch means or replications, Law 2015, Section 9.5), on
  :mod:`~symq.dispatch.simulation.kernel` (the numba kernel and one run of it);
* :mod:`~symq.dispatch.simulation.fairness`: mean response time conditioned on the job size,
  data and plot (:func:`response_by_size_data`), for the unbalancing optimal policies of
  Hyytiä & Righter (arXiv 2402.08142).

Examples
--------
>>> from symq.laws import Exponential
>>> est = simulate_dispatch("rnd", 2, 0.5, Exponential(1.0), n_jobs=100_000, rng=1)
>>> abs(est.ET.mean - 2.0) < 0.1     # M/M/1 per server: 1/(1 - rho)
True
"""

from .fairness import ResponseBySize, plot_response_by_size, response_by_size_data
from .simulate import DispatchEstimate, simulate_dispatch

__all__ = ["simulate_dispatch", "DispatchEstimate", "response_by_size_data",
           "plot_response_by_size", "ResponseBySize"]
