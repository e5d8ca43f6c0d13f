r"""Price of anarchy: ratio of the equilibrium cost to the optimal cost.

:math:`\mathrm{PoA} = J^{NE}/J^*` (Altman, Ayesta, Prabhu 2011, Section 5; note A5), its
heavy-traffic limit :math:`\Sigma_C\Sigma_w/\Sigma_s^2` over all servers, the bound
:math:`\mathrm{PoA} \le |S^{OPT}|` for equal holding costs (Haviv & Roughgarden 2007), and the
two-server family whose PoA grows like :math:`\sqrt{h}/2`.

Examples
--------
>>> round(price_of_anarchy([4, 2, 1], [1, 2, 4], 5), 12)   # 15/11
1.363636363636
>>> round(heavy_traffic_poa([4, 2, 1], [1, 2, 4]), 12)     # 49/36
1.361111111111
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.compiler import compile
from symq.core.errors import InvalidParameter
from symq.core.parameters import Interval

from . import symbolic
from .farm import ServerFarm, as_farm
from .solve import social_optimum, wardrop_equilibrium

__all__ = ["price_of_anarchy", "heavy_traffic_poa", "poa_bound_equal_costs", "unbounded_family"]

_H = Interval(1.0, float("inf"), left_open=True, right_open=True)


def price_of_anarchy(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                     rho: float | None = None) -> float:
    r"""Price of anarchy :math:`J^{NE}/J^*` at total work rate ``rho`` (note A5).

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs (or a :class:`ServerFarm` as ``C`` and ``w=None``).
    rho : float
        Total work rate, ``0 < rho < sum(C)``.

    Returns
    -------
    float
        At least 1.
    """
    if rho is None and isinstance(C, ServerFarm):
        rho, w = w, None
    farm = as_farm(C, w)
    return wardrop_equilibrium(farm, rho).cost / social_optimum(farm, rho).cost


@functools.lru_cache(maxsize=1)
def _heavy_traffic_kernel():
    S = symbolic.SYMBOLS
    return compile(symbolic.closed_forms().heavy_traffic_poa, (S["Sigma_C"], S["Sigma_s"], S["Sigma_w"]))


def heavy_traffic_poa(C: ArrayLike | ServerFarm, w: ArrayLike | None = None) -> float:
    r"""Limit of the price of anarchy as :math:`\rho \to \sum_j C_j` (note A5).

    :math:`\lim \mathrm{PoA} = (\sum_j C_j)(\sum_j w_j)/(\sum_j \sqrt{w_j C_j})^2 \ge 1`, with
    equality iff all :math:`w_j/C_j` are equal (Cauchy-Schwarz).  The limit is derived with
    ``sympy.limit`` in :mod:`symq.routing.symbolic`.

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs (or a :class:`ServerFarm` as ``C``).

    Returns
    -------
    float
    """
    farm = as_farm(C, w)
    return float(_heavy_traffic_kernel()(np.sum(farm.C), np.sum(np.sqrt(farm.w * farm.C)),
                                         np.sum(farm.w)))


def poa_bound_equal_costs(C: ArrayLike | ServerFarm, rho: float) -> int:
    r"""The bound :math:`|S^{OPT}|` on the PoA when all holding costs are equal.

    For :math:`w \equiv 1` the price of anarchy is at most the number of servers used by the
    social optimum, and the bound is tight (Haviv & Roughgarden, Oper. Res. Lett. 35(4), 2007;
    note A5).

    Parameters
    ----------
    C : array_like
        Capacities (or a :class:`ServerFarm`; its costs are ignored and replaced by ones).
    rho : float
        Total work rate.

    Returns
    -------
    int
        Number of servers used by the social optimum with :math:`w \equiv 1`.
    """
    capacities = C.C if isinstance(C, ServerFarm) else C
    farm = ServerFarm(capacities, np.ones(np.size(capacities)))
    return len(social_optimum(farm, rho).active)


@functools.lru_cache(maxsize=1)
def _family_kernel():
    f = symbolic.closed_forms().family
    keys = ("rho", "x1", "x2", "J_opt", "J_ne", "poa", "asymptotic")
    return keys, compile([f[k] for k in keys], (symbolic.SYMBOLS["h"],))


def unbounded_family(h: float) -> dict[str, Any]:
    r"""The two-server instance with unbounded price of anarchy and its closed forms.

    :math:`C = (1, 1)`, :math:`w = (1, h)`, :math:`\rho = 1 - 1/h` (note A5): the equilibrium
    sends everything to server 1 (:math:`J^{NE} = h - 1`) while the optimum uses both servers,
    so :math:`\mathrm{PoA}(h) = (h+1)(\sqrt h+1)/(2h+\sqrt h+1) \sim \sqrt h/2`.

    Parameters
    ----------
    h : float
        Cost ratio, ``h > 1``.

    Returns
    -------
    dict
        ``C``, ``w``, ``rho`` (the instance), ``x_opt`` (optimal loads), ``x_ne`` (equilibrium
        loads), ``J_opt``, ``J_ne``, ``poa`` and ``poa_asymptotic`` (:math:`\sqrt h/2`), all
        from the closed forms derived in :mod:`symq.routing.symbolic`.

    Raises
    ------
    InvalidParameter
        If ``h <= 1`` or is not finite.

    Examples
    --------
    >>> fam = unbounded_family(4.0)
    >>> fam["rho"], fam["J_ne"], round(fam["poa"], 12)     # 5*3/11
    (0.75, 3.0, 1.363636363636)
    """
    h = float(_H.coerce("h", h))
    keys, kernel = _family_kernel()
    values = dict(zip(keys, (float(v) for v in kernel(h))))
    return {
        "h": h, "C": np.array([1.0, 1.0]), "w": np.array([1.0, h]), "rho": values["rho"],
        "x_opt": np.array([values["x1"], values["x2"]]), "x_ne": np.array([values["rho"], 0.0]),
        "J_opt": values["J_opt"], "J_ne": values["J_ne"], "poa": values["poa"],
        "poa_asymptotic": values["asymptotic"],
    }
