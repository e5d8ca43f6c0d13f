"""Closed-form stationary law of the power-law class of adaptive window protocols (q-series).

Altman, Avrachenkov, Kherani, Prabhu, *Performance analysis and stochastic stability of
congestion control protocols*, IEEE INFOCOM 2005; the class ``a = alpha w^k``,
``lam = gamma w^l``, ``d = beta w`` (NewReno, Scalable TCP, HighSpeed-like profiles), whose
pre-loss windows follow the ARMA recursion of Dumas, Guillemin, Robert (Adv. Appl. Prob. 34,
2002); derived in ``derivations/awp.md``, section "Power-law class".

* :mod:`~symq.window.powerlaw.law`: :class:`PowerLawWindow`, the law (a distribution), and the
  mean windows in closed form (:func:`mean_window`, :func:`mean_window_newreno`);
* :mod:`~symq.window.powerlaw.series`: the q-series engine (coefficients, float tables with
  running error bounds, mpmath sums, moments);
* :mod:`~symq.window.powerlaw.density`: the time-stationary density, certified in float, with
  mpmath and saddle-point Laplace paths;
* :mod:`~symq.window.powerlaw.cdf`: the time-stationary and pre-loss (Palm) distribution
  functions.
"""

from .law import OKM_CONSTANT, PowerLawWindow, mean_window, mean_window_newreno
from .series import qseries_coefficients

__all__ = ["OKM_CONSTANT", "PowerLawWindow", "mean_window", "mean_window_newreno",
           "qseries_coefficients"]
