"""The general numerical solver of an adaptive window protocol's stationary law.

Altman, Avrachenkov, Kherani, Prabhu, *Performance analysis and stochastic stability of
congestion control protocols*, IEEE INFOCOM 2005, Section II: between losses
``dW/dt = a(W)``, losses are Poisson with rate ``lam(W)``, a loss takes ``W`` to
``max(d(W), w_min)``.  For profiles outside the closed-form classes (:mod:`symq.window.powerlaw`,
:mod:`symq.window.mimd`) the stationary law is computed from the embedded post-loss chain, a
Volterra-type equation of the Palm laws, by Palm inversion with a-posteriori error control
(``derivations/awp.md``, section "General profiles").

* :mod:`~symq.window.numeric.solver`: :func:`solve_window`, the solver (refinement levels,
  extrapolation, error estimate);
* :mod:`~symq.window.numeric.grid`: the profiles' safe evaluation and the logarithmic grid;
* :mod:`~symq.window.numeric.level`: one discretisation level, a sparse banded linear system;
* :mod:`~symq.window.numeric.extent`: where the grid lies (extent, break points, tail check);
* :mod:`~symq.window.numeric.solution`: the result :class:`WindowSolution`, a distribution.
"""

from .solution import WindowSolution
from .solver import solve_window

__all__ = ["WindowSolution", "solve_window"]
