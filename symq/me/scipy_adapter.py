"""The ``scipy.stats.make_distribution`` protocol for an :class:`~symq.me.distribution.ME` law.

:meth:`ME.to_scipy <symq.me.distribution.ME.to_scipy>` hands this adapter to
:func:`scipy.stats.make_distribution`: scipy then calls the law's own ``pdf``, ``cdf``, ``ccdf``,
``icdf``, ``iccdf``, ``moment`` and ``sample`` and derives everything else (``logpdf``,
``median``, ``entropy``, shifting and scaling).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .distribution import ME

__all__ = ["MatrixExponential"]


def _nan_passing(me_method: Any, x: Any) -> np.ndarray:
    """Apply an ME method, passing NaN through as scipy's infrastructure expects."""
    x = np.asarray(x, dtype=float)
    nan = np.isnan(x)
    if not nan.any():
        return np.asarray(me_method(x))
    out = np.full(x.shape, np.nan)
    out[~nan] = me_method(x[~nan])
    return out


class MatrixExponential:
    """``scipy.stats.make_distribution`` protocol (interface version 1.16.0) for an :class:`ME`.

    No shape parameters (scipy accepts an empty tuple); support :math:`[0, \\infty)`.
    """

    __make_distribution_version__ = "1.16.0"
    parameters: tuple = ()
    support = {"endpoints": (0.0, np.inf), "inclusive": (True, False)}

    def __init__(self, me: "ME") -> None:
        self.me = me

    def pdf(self, x: Any) -> np.ndarray:
        return _nan_passing(self.me.pdf, x)

    def cdf(self, x: Any) -> np.ndarray:
        return _nan_passing(self.me.cdf, x)

    def ccdf(self, x: Any) -> np.ndarray:
        return _nan_passing(self.me.ccdf, x)

    def icdf(self, p: Any) -> np.ndarray:
        return _nan_passing(self.me.icdf, p)

    def iccdf(self, p: Any) -> np.ndarray:
        return _nan_passing(self.me.iccdf, p)

    def moment(self, order: Any, kind: str = "raw") -> float:
        return float(self.me.moment(int(order), kind))

    def sample(self, shape: Any, *, rng: Any = None) -> np.ndarray:
        shape = tuple(shape) if np.iterable(shape) else shape
        return np.asarray(self.me.sample(shape, rng=rng), dtype=float)
