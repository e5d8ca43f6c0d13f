"""Output checks shared by the mean-field solvers: no silent wrong answer.

Every solver of :mod:`symq.meanfield` passes what it returns through these checks before
returning: a probability outside ``[0, 1]``, a tail ``u_k = P(Q >= k)`` that increases, or a mean
that is not finite is a numerical failure, reported as
:class:`~symq.core.errors.NumericalFailure` (CLI exit status 3) rather than returned; the checks
are those of :mod:`symq.core.result` that guard every registered model.

:func:`refined_validity` is different: the refined mean-field estimate ``pi + V/N`` of Gast and
Van Houdt (SIGMETRICS 2018, Theorem 1) is an expansion in ``1/N`` and need not be a probability
vector for small ``N`` at high load.  That is not a solver failure but the edge of the
approximation's domain of validity; the solvers report it in the result (fields
``refined_valid`` and ``refined_invalid``) instead of refusing the whole solve.

Examples
--------
>>> check_tail("demo", [0.5, 0.25, 0.125])
>>> refined_validity([0.5, 0.25], [10.0, 0.0], N=5)
(False, 'pi + V/N has component 1 = 2.5 > 1 (N = 5 is too small for the 1/N expansion at this load)')
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core import result
from symq.core.errors import NumericalFailure

__all__ = ["check_tail", "check_probability", "check_means", "refined_validity", "SLACK"]

#: round-off allowed outside ``[0, 1]`` and on monotonicity.
SLACK = 1e-9


def check_probability(solver: str, name: str, values: ArrayLike) -> None:
    """Every entry of ``values`` finite and in ``[0, 1]``
    (:func:`symq.core.result.check_probability`)."""
    result.check_probability(solver, name, values)


def check_tail(solver: str, tail: ArrayLike, name: str = "tail") -> None:
    """Probabilities in ``[0, 1]`` and non-increasing (``u_k = P(Q >= k)``;
    :func:`symq.core.result.check_tail`)."""
    result.check_tail(solver, name, np.asarray(tail, dtype=float).ravel())


def check_means(solver: str, **means: Any) -> None:
    """Every given mean is a finite real number ``>= 0`` (up to round-off)."""
    for name, value in means.items():
        v = float(value)
        if not math.isfinite(v) or v < -SLACK * max(1.0, abs(v)):
            raise NumericalFailure(f"{solver}: the solver returned the mean {name} = {v!r}, "
                                   "not a finite number >= 0")


def refined_validity(pi: ArrayLike, V: ArrayLike, N: int,  # noqa: N803
                     ) -> tuple[bool, str]:
    """Whether ``pi + V/N`` is a valid occupancy: entries in ``[0, 1]``, non-increasing in the level.

    Parameters
    ----------
    pi, V : array_like
        Fixed point and ``1/N`` term, shape ``(K,)`` or ``(K, m)`` (level first).
    N : int
        Number of servers.

    Returns
    -------
    (bool, str)
        ``(True, "")`` or ``(False, reason)``; ``reason`` names the first violation.
    """
    est = np.asarray(pi, dtype=float) + np.asarray(V, dtype=float) / N
    if est.ndim == 1:
        est = est[:, None]
    if not np.all(np.isfinite(est)):
        return False, "pi + V/N has a non-finite entry"
    hint = f"N = {N} is too small for the 1/N expansion at this load"
    flat_lo = np.unravel_index(int(np.argmin(est)), est.shape)
    if est[flat_lo] < -SLACK:
        return False, (f"pi + V/N has component {flat_lo[0] + 1} = {est[flat_lo]:.3g} < 0 ({hint})")
    flat_hi = np.unravel_index(int(np.argmax(est)), est.shape)
    if est[flat_hi] > 1.0 + SLACK:
        return False, (f"pi + V/N has component {flat_hi[0] + 1} = {est[flat_hi]:.3g} > 1 ({hint})")
    total = est.sum(axis=1)
    if total.size and total.max() > 1.0 + SLACK:
        k = int(np.argmax(total))
        return False, f"pi + V/N has level {k + 1} of total mass {total[k]:.3g} > 1 ({hint})"
    if est.shape[0] > 1:
        rise = np.diff(est, axis=0)
        k, j = np.unravel_index(int(np.argmax(rise)), rise.shape)
        if rise[k, j] > SLACK:
            return False, (f"pi + V/N is not monotone: level {k + 2} exceeds level {k + 1} by "
                           f"{rise[k, j]:.3g} ({hint})")
    return True, ""
