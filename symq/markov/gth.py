"""The Grassmann-Taksar-Heyman elimination: a stationary law accurate in every entry.

Grassmann, Taksar & Heyman, "Regenerative analysis and steady state distributions for Markov
chains", Operations Research 33 (1985) 1107-1116.  Gaussian elimination on the rates of an
irreducible generator in which every pivot is the sum of the off-diagonal rates left in its
row, so no subtraction happens: each entry of the result has a small *relative* error, also a
probability of 1e-20 next to ones of order 1 (a sparse LU with one equation replaced has a small
residual, i.e. a small *absolute* error, and may return 0 or a few correct digits for such an
entry).  Dense, ``n^3/3`` multiply-adds: used up to :data:`GTH_MAX_STATES` states.

Examples
--------
>>> import numpy as np
>>> Q = np.array([[-1.0, 1.0, 0.0], [2.0, -3.0, 1.0], [0.0, 2.0, -2.0]])   # M/M/1/2, rho = 1/2
>>> (7 * gth_stationary(Q)).round(12)      # (4, 2, 1)/7
array([4., 2., 1.])
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

__all__ = ["gth_stationary", "GTH_MAX_STATES"]

#: Largest chain solved by GTH (about 0.1-0.5 s at this size); larger ones by sparse LU.
GTH_MAX_STATES = 1500


@numba.njit(cache=True)
def _gth(a: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    n = a.shape[0]
    for k in range(n - 1, 0, -1):
        s = 0.0
        for j in range(k):
            s += a[k, j]
        for i in range(k):
            a[i, k] /= s
        for i in range(k):
            f = a[i, k]
            if f != 0.0:
                for j in range(k):
                    a[i, j] += f * a[k, j]
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        t = 0.0
        for i in range(k):
            t += pi[i] * a[i, k]
        pi[k] = t
    return pi / pi.sum()


def gth_stationary(generator: NDArray[np.float64]) -> NDArray[np.float64]:
    """The stationary law of an irreducible generator by GTH elimination.

    Parameters
    ----------
    generator : ndarray
        ``(n, n)`` dense generator; only its off-diagonal rates are read (nonnegative, finite,
        irreducible: checked by the caller).

    Returns
    -------
    ndarray
        ``pi`` with ``pi Q = 0``, ``sum(pi) = 1``, every entry in [0, 1] and accurate to a few
        units of round-off relative to itself.
    """
    a = np.array(generator, dtype=float, copy=True)
    np.fill_diagonal(a, 0.0)
    if a.shape[0] == 1:
        return np.ones(1)
    return _gth(a)
