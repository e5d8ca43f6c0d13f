"""Stochastic ordering of the stationary windows of two protocols (cdf dominance).

Altman, Avrachenkov, Kherani, Prabhu (INFOCOM 2005) order the stationary laws of protocols that
differ in their window bounds (Section III of the paper).  The simple version checked here:
coupling two protocols on the same loss epochs, a larger floor or cap gives a pathwise larger
window, hence ``W_1 <=_st W_2``, i.e.
``F_1(w) >= F_2(w)`` for every ``w``.  :func:`compare` checks that dominance for any two solved
protocols on a grid covering both laws, and reports the largest violation.

Examples
--------
>>> from symq.window.protocol import newreno
>>> result = compare(newreno(1e-2, w_max=15.0), newreno(1e-2))
>>> result.first_below, result.max_violation < 1e-6
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from symq.core.result import Exactness, ResultBase

from .protocol import WindowProtocol
from .solve import WindowLaw, solve_protocol

__all__ = ["Ordering", "compare"]


@dataclass(frozen=True)
class Ordering(ResultBase):
    """Result of :func:`compare` (a :class:`~symq.core.result.ResultBase`).

    Attributes
    ----------
    first_below : bool
        ``W_1 <=_st W_2``: ``F_1(w) >= F_2(w) - tol`` on the whole grid.
    second_below : bool
        ``W_2 <=_st W_1``.
    max_violation : float
        ``max_w (F_2(w) - F_1(w))``, the largest violation of ``W_1 <=_st W_2`` (``<= 0`` when
        it holds strictly).
    grid : ndarray
        Windows where the cdfs were compared.
    cdf_first, cdf_second : ndarray
    means : tuple of float
    method : str
        ``"cdfs compared on a grid"``.
    exactness : Exactness
        ``numeric``.
    """

    first_below: bool
    second_below: bool
    max_violation: float
    grid: NDArray[np.float64]
    cdf_first: NDArray[np.float64]
    cdf_second: NDArray[np.float64]
    means: tuple[float, float]
    method: str = "cdfs compared on a grid"
    exactness: Exactness = Exactness.NUMERIC

    summary: ClassVar[tuple[str, ...]] = ("first_below", "second_below", "max_violation")


def compare(first: WindowProtocol | WindowLaw, second: WindowProtocol | WindowLaw,
            points: int = 400, tol: float = 1e-6) -> Ordering:
    """Compare two protocols' stationary window laws in the usual stochastic order.

    Parameters
    ----------
    first, second : WindowProtocol or WindowLaw
        Protocols (solved with :func:`~symq.window.solve.solve_protocol`) or solved laws.
    points : int
        Grid size (log-spaced from 1e-3 to 20 times the larger mean, and up to the caps).
    tol : float
        Allowed numerical slack on the cdfs.
    """
    laws = [x if isinstance(x, WindowLaw) else solve_protocol(x) for x in (first, second)]
    top = 20.0 * max(law.mean_window for law in laws)
    bottom = 1e-3 * min(law.mean_window for law in laws)
    grid = np.geomspace(bottom, top, points)
    caps = [law.protocol.w_max for law in laws if np.isfinite(law.protocol.w_max)]
    if caps:
        grid = np.unique(np.concatenate([grid, np.array(caps) * (1 - 1e-9)]))
    f1, f2 = (np.clip(np.asarray(law.cdf(grid), dtype=float), 0.0, 1.0) for law in laws)
    violation = float(np.max(f2 - f1))
    return Ordering(first_below=violation <= tol, second_below=float(np.max(f1 - f2)) <= tol,
                    max_violation=violation, grid=grid, cdf_first=f1, cdf_second=f2,
                    means=(laws[0].mean_window, laws[1].mean_window))
