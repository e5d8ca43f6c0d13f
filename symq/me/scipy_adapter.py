"""The ``scipy.stats.make_distribution`` adapter of an :class:`~symq.me.distribution.ME` law.

:meth:`ME.to_scipy <symq.me.distribution.ME.to_scipy>` goes through the shared path of
:class:`symq.laws.Distribution` (:class:`~symq.laws.ScipyAdapter`, then
:func:`scipy.stats.make_distribution`); this subclass adds the law's own inverse tail
``iccdf``, which keeps full relative accuracy for tiny tail probabilities where scipy's generic
``icdf(1 - q)`` would not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from symq.laws.protocol import ScipyAdapter, nan_passing

__all__ = ["MEScipyAdapter"]


class MEScipyAdapter(ScipyAdapter):
    """:class:`~symq.laws.ScipyAdapter` with the ME law's exact inverse tail."""

    def iccdf(self, p: Any) -> NDArray[np.float64]:
        return nan_passing(self.law.iccdf, p)
