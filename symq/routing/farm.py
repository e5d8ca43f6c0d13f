r"""A farm of heterogeneous processor-sharing servers and its declared parameters.

Server :math:`j` has capacity (speed) :math:`C_j > 0` and holding cost :math:`w_j > 0` per job
per unit time; Poisson traffic brings work at total rate :math:`\rho`.  A stationary regime
exists iff :math:`\rho < \sum_j C_j` (Altman, Ayesta, Prabhu 2011, model section).

Examples
--------
>>> farm = ServerFarm([4, 2, 1], [1, 2, 4])
>>> farm.K, float(farm.capacity)
(3, 7.0)
>>> farm.check_load(7)
Traceback (most recent call last):
...
symq.core.errors.StabilityError: total work rate rho=7 must be < sum(C)=7 for a stationary regime
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.display import MarkdownDisplay
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import Parameter, PositiveReal, PositiveVector

__all__ = ["C", "w", "rho", "ServerFarm", "as_farm"]

#: Server capacities :math:`C_j` (work per unit time).
C = Parameter("C", PositiveVector(), typical=(4.0, 2.0, 1.0),
              description="server capacities C_j (work served per unit time)")
#: Holding costs :math:`w_j` (cost per job per unit time at server j).
w = Parameter("w", PositiveVector(), typical=(1.0, 2.0, 4.0),
              description="holding costs w_j (cost per job per unit time at server j)")
#: Total work rate :math:`\rho = \sum_i \lambda_i E[X_i]`.
rho = Parameter("rho", PositiveReal(), typical=5.0,
                description="total work rate rho = sum_i lambda_i E[X_i], must be < sum(C)")

_C, _W, _RHO = C, w, rho  # aliases: methods below have arguments with the same names


#: Range of capacities and holding costs: products and squares of sums stay normal doubles.
_SMALLEST, _LARGEST = 1e-100, 1e100


def _fmt(value: float) -> str:
    return f"{value:.12g}"


@dataclass(frozen=True, eq=False)
class ServerFarm(MarkdownDisplay):
    r"""K processor-sharing servers with capacities ``C`` and holding costs ``w``.

    Parameters
    ----------
    C : array_like
        Capacities :math:`C_j > 0`.
    w : array_like
        Holding costs :math:`w_j > 0`, same length as ``C``.

    Raises
    ------
    InvalidParameter
        For an empty farm, a non-positive or non-finite entry, or lengths that differ.

    Notes
    -----
    The arrays are stored as read-only float arrays.  :attr:`order` sorts the servers by the
    cost per unit of work at zero load, :math:`r_j = w_j / C_j` (stable sort); both the social
    optimum and the Wardrop equilibrium use a prefix of this order (Altman, Ayesta, Prabhu
    2011, centralised- and decentralised-routing sections).
    """

    C: np.ndarray
    w: np.ndarray

    def __post_init__(self) -> None:
        capacities = _C.validate(self.C)
        costs = _W.validate(self.w)
        if costs.size != capacities.size:
            raise InvalidParameter(
                "w", self.w, f"a vector of the same length as C ({capacities.size})",
                f"has length {costs.size}",
            )
        capacities = np.array(capacities, dtype=float)
        costs = np.array(costs, dtype=float)
        for name, given, values in (("C", self.C, capacities), ("w", self.w, costs)):
            # the closed forms multiply and square C_j, w_j, w_j/C_j and their sums: keep
            # every intermediate a finite, normal double
            outside = np.flatnonzero((values < _SMALLEST) | (values > _LARGEST))
            if outside.size:
                i = int(outside[0])
                raise InvalidParameter(
                    name, given, f"a vector of positive real numbers in [{_SMALLEST:g}, "
                    f"{_LARGEST:g}]", f"entry {i} is {values[i]:g}: the closed forms square "
                    "products and sums of C and w, beyond the range of doubles; rescale the "
                    "units of time or cost")
        capacities.setflags(write=False)
        costs.setflags(write=False)
        object.__setattr__(self, "C", capacities)
        object.__setattr__(self, "w", costs)

    @property
    def K(self) -> int:
        """Number of servers."""
        return int(self.C.size)

    @property
    def capacity(self) -> float:
        r"""Total capacity :math:`\sum_j C_j`."""
        return float(np.sum(self.C))

    @property
    def r(self) -> np.ndarray:
        r"""Cost per unit of work at zero load, :math:`r_j = w_j / C_j`."""
        return self.w / self.C

    @property
    def order(self) -> np.ndarray:
        """Server indices sorted by :attr:`r` (stable, so ties keep their input order)."""
        return np.argsort(self.r, kind="stable")

    def check_load(self, rho: Any) -> float:
        r"""Validate a total work rate for this farm.

        Parameters
        ----------
        rho : float
            Total work rate.

        Returns
        -------
        float
            ``rho`` as a float.

        Raises
        ------
        InvalidParameter
            If ``rho`` is not a positive finite real number.
        StabilityError
            If :math:`\rho \ge \sum_j C_j` (no stationary regime).
        """
        value = float(_RHO.validate(rho))
        total = self.capacity
        if value >= total:
            raise StabilityError(
                f"total work rate rho={_fmt(value)} must be < sum(C)={_fmt(total)} "
                "for a stationary regime"
            )
        return value

    def __repr__(self) -> str:
        return f"ServerFarm(C={self.C.tolist()!r}, w={self.w.tolist()!r})"

    def to_markdown(self) -> str:
        """The farm as Markdown: capacities, holding costs, their ratios and order."""
        from symq.core.display import markdown

        return markdown(f"**ServerFarm**: {self.K} processor-sharing servers, capacities $C_j$, "
                        "holding costs $w_j$", [("C", self.C), ("w", self.w), ("r = w/C", self.r),
                                                ("order", self.order),
                                                ("sum(C)", self.capacity)])


def as_farm(C_: ArrayLike | ServerFarm, w_: ArrayLike | None = None) -> ServerFarm:
    """Return a :class:`ServerFarm` (``C_`` may already be one, then ``w_`` must be ``None``)."""
    if isinstance(C_, ServerFarm):
        if w_ is not None:
            raise InvalidParameter("w", w_, "omitted when a ServerFarm is given")
        return C_
    return ServerFarm(C_, w_)
