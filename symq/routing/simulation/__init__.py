r"""Event-by-event simulation of M/G/1 processor-sharing servers and of PS server farms.

Independent evidence, with confidence intervals, of the *insensitivity* of the M/G/1
processor-sharing queue on which the routing model of Altman, Ayesta and Prabhu (2011) rests:
with :math:`x = \lambda E[X] < C`, :math:`E[T] = E[X]/(C - x)` and
:math:`E[N] = x/(C - x)` whatever the job-size law, so a farm's social cost is
:math:`J = \sum_j w_j x_j / (C_j - x_j)` (the formulas and references:
:mod:`~symq.routing.simulation.queue`).

* :mod:`~symq.routing.simulation.sizes`: the job-size law ``sizes`` (a name of
  :data:`symq.laws.SIZE_LAWS` or a law object), converted once, and
  :func:`~symq.routing.simulation.sizes.draw_sizes`;
* :mod:`~symq.routing.simulation.queue`: one M/G/1-PS queue on the virtual-time kernel of
  :mod:`symq.routing.kernel`, :func:`~symq.routing.simulation.queue.simulate_ps_queue` and its
  :class:`~symq.routing.simulation.queue.PSQueueEstimate`;
* :mod:`~symq.routing.simulation.farm`: a farm of PS servers under Bernoulli routing, one
  queue per used server, :func:`~symq.routing.simulation.farm.simulate_farm` and its
  :class:`~symq.routing.simulation.farm.FarmEstimate`.

Examples
--------
>>> est = simulate_ps_queue(lam=0.5, C=1.0, sizes="det", n_jobs=50_000, rng=1)
>>> exact = 1.0 / (1.0 - 0.5)          # E[T] = E[X]/(C - x)
>>> abs(est.ET.mean - exact) < 0.1
True
"""

from .farm import FarmEstimate, simulate_farm
from .queue import IDLE_CAP, PSQueueEstimate, simulate_ps_queue
from .sizes import FORMER_H2_SCV, RENAMED_LAWS, draw_sizes

__all__ = [
    "PSQueueEstimate",
    "FarmEstimate",
    "draw_sizes",
    "simulate_ps_queue",
    "simulate_farm",
    "IDLE_CAP",
    "RENAMED_LAWS",
    "FORMER_H2_SCV",
]
