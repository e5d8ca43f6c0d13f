r"""Job-size bins: edges (given, or quantiles of the size law) and the exact mean size per bin.

The response time conditioned on the job size, :math:`E[T \mid X \in [a, b))`, is estimated
per bin by the simulator (:func:`~symq.dispatch.simulation.simulate.simulate_dispatch` with
``size_bins=``) and shown by :mod:`symq.dispatch.simulation.fairness`.  A bin's natural abscissa is
the exact conditional mean size

.. math::

    E[X \mid a \le X < b] = \frac{E[X; X < b] - E[X; X < a]}{P(X < b) - P(X < a)},

from the law's partial moments (for a continuous law ``<`` and ``<=`` agree).

Examples
--------
>>> from symq.laws import Exponential
>>> e = size_edges(Exponential(1.0), 2)
>>> [round(float(x), 6) for x in e]             # the median log 2 splits the law in two
[0.0, 0.693147, inf]
>>> [round(float(c), 6) for c in bin_means(Exponential(1.0), e)]
[0.306853, 1.693147]
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from symq.core.errors import InvalidParameter
from symq.laws import Distribution

from .sizes import size_cdf

__all__ = ["size_edges", "bin_means", "bin_probabilities", "DEFAULT_BINS", "MAX_BINS"]

#: Default number of quantile bins.
DEFAULT_BINS = 10
#: Largest number of bins.
MAX_BINS = 1000

_DOMAIN = (f"a number of quantile bins in 1..{MAX_BINS}, or at least 2 strictly increasing bin "
           "edges >= 0 (the last may be inf)")


def _quantile(sizes: Distribution, q: float) -> float:
    """The size ``x`` with ``P(X <= x) = q`` (bracketed, then brentq on the cdf)."""
    hi = max(float(sizes.mean()), 1e-300)
    while float(size_cdf(sizes, hi)) < q:
        hi *= 2.0
        if hi > 1e300:
            return math.inf
    return float(optimize.brentq(lambda x: float(size_cdf(sizes, x)) - q, 0.0, hi, xtol=1e-14 * hi,
                                 rtol=1e-13))


def size_edges(sizes: Distribution, bins: int | ArrayLike = DEFAULT_BINS) -> np.ndarray:
    """Bin edges :math:`e_0 < \\dots < e_k`: the given ones, or the ``j/k`` quantiles of ``sizes``.

    Parameters
    ----------
    sizes : SizeLaw
        The job-size law (for quantile bins).
    bins : int or array_like
        ``k`` equiprobable bins (edges ``0``, the quantiles, ``inf``), or the edges.

    Raises
    ------
    InvalidParameter
        ``bins`` neither (named ``size_bins``).
    """
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        k = int(bins)
        if not 1 <= k <= MAX_BINS:
            raise InvalidParameter("size_bins", bins, _DOMAIN)
        inner = [_quantile(sizes, j / k) for j in range(1, k)]
        return np.array([0.0, *inner, math.inf])
    try:
        e = np.array(bins, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidParameter("size_bins", bins, _DOMAIN) from None
    if (e.size < 2 or e.size > MAX_BINS + 1 or np.any(np.isnan(e)) or e[0] < 0
            or np.any(np.diff(e) <= 0) or np.any(np.isinf(e[:-1]))):
        shown = e.tolist() if e.size <= 12 else f"<array of length {e.size}>"
        raise InvalidParameter("size_bins", shown, _DOMAIN)
    return e


def bin_probabilities(sizes: Distribution, edges: np.ndarray) -> np.ndarray:
    """:math:`P(e_{j} \\le X < e_{j+1})` per bin."""
    cdf = np.array([0.0 if e == 0 else (1.0 if math.isinf(e) else float(size_cdf(sizes, e)))
                    for e in edges])
    return np.diff(cdf)


def bin_means(sizes: Distribution, edges: np.ndarray) -> np.ndarray:
    """Exact :math:`E[X \\mid e_j \\le X < e_{j+1}]` per bin (``nan`` for a bin of
    probability 0)."""
    part = np.array([0.0 if e == 0 else (float(sizes.mean()) if math.isinf(e)
                                         else float(sizes.partial_moment(1, e))) for e in edges])
    p = bin_probabilities(sizes, edges)
    return np.where(p > 0, np.diff(part) / np.where(p > 0, p, 1.0), np.nan)
