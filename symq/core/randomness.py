"""Random number generators from the ``rng`` argument every stochastic function takes.

DESIGN.md: every stochastic function takes ``rng`` (a seed or a numpy Generator); the same seed
gives the same result; parallel work uses ``SeedSequence.spawn`` (see :mod:`symq.core.sweep`).
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import InvalidParameter

__all__ = ["RngLike", "as_generator"]

RngLike = None | int | np.random.SeedSequence | np.random.Generator


def as_generator(rng: RngLike) -> np.random.Generator:
    """A numpy Generator from ``None`` (fresh entropy), a seed, a SeedSequence or a Generator.

    Raises
    ------
    InvalidParameter
        For anything else (negative or non-integer seeds included).

    Examples
    --------
    >>> as_generator(7).random() == as_generator(7).random()
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise InvalidParameter(
        "rng", rng, "None, a nonnegative integer seed, a SeedSequence or a numpy Generator"
    )
