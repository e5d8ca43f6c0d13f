r"""Fast numeric social optimum and Wardrop equilibrium by a prefix scan over the closed forms.

The closed forms of :mod:`symq.routing.symbolic` are compiled once (numpy backend) and
evaluated on prefix-sum arrays:

1. sort the servers by :math:`r_j = w_j/C_j` (stable);
2. form the prefix sums :math:`\Sigma_C(m), \Sigma_s(m), \Sigma_w(m)`;
3. evaluate the entry thresholds :math:`\theta_m` of every prefix at once; server m+1 is used
   iff :math:`\rho > \theta_m` (equivalently :math:`r_{m+1} < \mu(S=\{1..m+1\})` for the
   optimum, :math:`r_{m+1} < c(S=\{1..m+1\})` for the equilibrium), so the active set is the
   prefix of length :math:`1 + \#\{m : \theta_m < \rho\}`;
4. evaluate the multiplier, the loads and the cost of that prefix.

Cost :math:`O(K \log K)` (the sort); :math:`K = 10^5` servers take a few milliseconds.

The price of anarchy :math:`J^{NE}/J^*` (paper, price-of-anarchy section), its heavy-traffic limit
:math:`\Sigma_C\Sigma_w/\Sigma_s^2`, the bound :math:`|S^{OPT}|` for equal holding costs
(Haviv & Roughgarden 2007) and the two-server family with PoA :math:`\sim \sqrt h/2` are
evaluated from the same compiled closed forms.

References
----------
Altman, Ayesta, Prabhu (2011), centralised-routing section (optimum) and decentralised-routing
section (equilibrium); the derivations are in ``derivations/ps-routing.md`` (sections "Social
optimum" and "Wardrop equilibrium via a potential", printed by ``symq derive ps-routing``).

Examples
--------
>>> opt = social_optimum([4, 2, 1], [1, 2, 4], 5)
>>> opt.loads.round(6).tolist(), round(opt.cost, 12), opt.active
([3.333333, 1.333333, 0.333333], 11.0, [0, 1, 2])
>>> wardrop_equilibrium([4, 2, 1], [1, 2, 4], 5).active
[0, 1]
>>> round(price_of_anarchy([4, 2, 1], [1, 2, 4], 5), 12)   # 15/11
1.363636363636
>>> round(heavy_traffic_poa([4, 2, 1], [1, 2, 4]), 12)     # 49/36
1.361111111111
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from symq.core.compiler import CompiledFunction, compile
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import Interval
from symq.core.result import Exactness, ResultBase

from . import symbolic
from .farm import ServerFarm, as_farm

__all__ = [
    "Allocation", "social_optimum", "wardrop_equilibrium", "thresholds", "KINDS",
    "price_of_anarchy", "heavy_traffic_poa", "poa_bound_equal_costs", "unbounded_family",
    "UnboundedFamily",
]

#: The two solution concepts.
KINDS: tuple[str, str] = ("optimal", "equilibrium")


@dataclass(frozen=True, eq=False)
class Allocation(ResultBase):
    r"""Loads of a farm under one routing (social optimum or Wardrop equilibrium).

    Attributes
    ----------
    loads : numpy.ndarray
        Work rate :math:`x_j` sent to each server, in the input server order;
        :math:`0 \le x_j < C_j`, :math:`\sum_j x_j = \rho`.
    cost : float
        Social cost :math:`J = \sum_j w_j x_j/(C_j - x_j)`.
    active : list of int
        Sorted indices (input order) of the servers with positive load.
    multiplier : float
        :math:`\mu` (common marginal cost) for the optimum, :math:`c` (common cost per unit of
        work) for the equilibrium.
    kind : str
        ``"optimal"`` or ``"equilibrium"``.
    method : str
        ``"closed form (prefix scan)"``: the closed forms on the prefix of servers in use.
    exactness : Exactness
        ``numeric``: the closed forms evaluated in floating point.
    """

    summary: ClassVar[tuple[str, ...]] = ("kind", "cost", "multiplier", "active")

    loads: np.ndarray
    cost: float
    active: list[int]
    multiplier: float
    kind: str
    method: str = "closed form (prefix scan)"
    exactness: Exactness = Exactness.NUMERIC

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"loads", "cost", "active", "multiplier"}`` (the kind is the
        caller's: the key under which the allocation is stored)."""
        return {"loads": self.loads.tolist(), "cost": float(self.cost),
                "active": list(self.active), "multiplier": float(self.multiplier)}


@dataclass(frozen=True)
class _Kernels:
    opt_threshold: CompiledFunction
    opt_t: CompiledFunction
    opt_mu: CompiledFunction
    opt_load: CompiledFunction
    opt_cost: CompiledFunction
    ne_threshold: CompiledFunction
    ne_c: CompiledFunction
    ne_load: CompiledFunction
    ne_cost: CompiledFunction


@functools.lru_cache(maxsize=1)
def kernels() -> _Kernels:
    """The closed forms of :func:`symq.routing.symbolic.closed_forms`, compiled once."""
    f = symbolic.closed_forms()
    S = symbolic.SYMBOLS
    SC, Ss, Sw, rho, r = S["Sigma_C"], S["Sigma_s"], S["Sigma_w"], S["rho"], S["r_next"]
    return _Kernels(
        opt_threshold=compile(f.opt_threshold, (SC, Ss, r)),
        opt_t=compile(f.opt_t, (SC, Ss, rho)),
        opt_mu=compile(f.opt_mu, (SC, Ss, rho)),
        opt_load=compile(f.opt_load, (S["C_j"], S["w_j"], S["t"])),
        opt_cost=compile(f.opt_cost, (SC, Ss, Sw, rho)),
        ne_threshold=compile(f.ne_threshold, (SC, Sw, r)),
        ne_c=compile(f.ne_c, (SC, Sw, rho)),
        ne_load=compile(f.ne_load, (S["C_j"], S["w_j"], S["c"])),
        ne_cost=compile(f.ne_cost, (SC, Sw, rho)),
    )


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise InvalidParameter("kind", kind, "one of " + ", ".join(KINDS))
    return kind


@dataclass(frozen=True)
class _Scan:
    order: np.ndarray
    C: np.ndarray        # sorted
    w: np.ndarray        # sorted
    r: np.ndarray        # sorted
    SC: np.ndarray       # prefix sums, SC[m-1] = sum of the first m capacities
    Ss: np.ndarray
    Sw: np.ndarray


def _scan(farm: ServerFarm) -> _Scan:
    order = farm.order
    C, w = farm.C[order], farm.w[order]
    return _Scan(order=order, C=C, w=w, r=w / C, SC=np.cumsum(C), Ss=np.cumsum(np.sqrt(w * C)),
                 Sw=np.cumsum(w))


def _thresholds(scan: _Scan, kind: str) -> np.ndarray:
    k = kernels()
    if scan.C.size == 1:
        return np.zeros(0)
    if kind == "optimal":
        theta = k.opt_threshold(scan.SC[:-1], scan.Ss[:-1], scan.r[1:])
    else:
        theta = k.ne_threshold(scan.SC[:-1], scan.Sw[:-1], scan.r[1:])
    return np.maximum(theta, 0.0)   # theta_m >= 0; ties can round to -1e-16


def thresholds(C: ArrayLike | ServerFarm, w: ArrayLike | None = None, kind: str = "optimal"
               ) -> np.ndarray:
    r"""Entry thresholds of the servers, in the order of increasing :math:`r_j = w_j/C_j`.

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs (or a :class:`ServerFarm` as ``C``).
    kind : {"optimal", "equilibrium"}
        :math:`\theta^{OPT}_m = \sum_{j\le m} C_j(1 - \sqrt{r_j/r_{m+1}})` or
        :math:`\theta^{NE}_m = \sum_{j\le m} C_j(1 - r_j/r_{m+1})` (step "Entry threshold"
        of the optimum and of the equilibrium in ``derivations/ps-routing.md``).

    Returns
    -------
    numpy.ndarray
        Length K, non-decreasing; entry k is the total work rate above which server
        ``ServerFarm(C, w).order[k]`` is used (entry 0 is 0: the cheapest server is always
        used).

    Examples
    --------
    >>> thresholds([4, 2, 1], [1, 2, 4], "equilibrium").tolist()
    [0.0, 3.0, 5.25]
    """
    scan = _scan(as_farm(C, w))
    return np.concatenate([[0.0], _thresholds(scan, _kind(kind))])


def _prepare(C: ArrayLike | ServerFarm, w: ArrayLike | None, rho: float | None
             ) -> tuple[ServerFarm, float, _Scan]:
    """Validate the farm and the load (accepting ``(farm, rho)`` as well) and scan it."""
    if rho is None and isinstance(C, ServerFarm):
        rho, w = w, None
    farm = as_farm(C, w)
    rho = farm.check_load(rho)
    return farm, rho, _scan(farm)


def _active_count(theta: np.ndarray, rho: float) -> int:
    return 1 + int(np.count_nonzero(theta < rho))


def _precision_error(rho: float, farm: ServerFarm) -> StabilityError:
    return StabilityError(
        f"total work rate rho={rho:.17g} is too close to sum(C)={farm.capacity:.17g}: the "
        "allocation cannot be resolved in double precision (use piecewise_loads for exact values)")


#: Largest active prefix the light-load form evaluates (it sums m^2 pairwise terms).
_LIGHT_MAX = 2048


def _light(scan: _Scan, m: int, rho: float, kind: str) -> tuple[np.ndarray, float, float] | None:
    """Loads, cost and multiplier of the closed forms, rearranged for a light load.

    The closed forms write a load as ``C_j - (something close to C_j)`` when ``rho`` is small
    against the active capacity ``Sigma_C``: at ``rho = 1e-10`` the load keeps 6 digits, at
    ``rho = 1e-300`` none (it rounds to 0).  Expanding ``Sigma`` as sums over the active
    servers gives the same quantities without that cancellation:

    * optimum, ``a_j = sqrt(w_j C_j)``, ``t = (Sigma_C - rho)/Sigma_s``:
      ``x_j = (sum_i C_i C_j (sqrt(r_i) - sqrt(r_j)) + a_j rho)/Sigma_s``,
      ``C_j - x_j = a_j t``, ``J = sum_j w_j x_j/(a_j t)``, ``mu = 1/t^2``;
    * equilibrium, ``c = Sigma_w/(Sigma_C - rho)``:
      ``x_j = (sum_i C_i C_j (r_i - r_j) + w_j rho)/Sigma_w``, ``J = c rho``.

    None when ``rho`` is not light (``rho > Sigma_C/2``: the closed forms are accurate there)
    or the prefix is too long.
    """
    C, w, r = scan.C[:m], scan.w[:m], scan.r[:m]
    SC = float(scan.SC[m - 1])
    if not rho <= 0.5 * SC or m > _LIGHT_MAX:
        return None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if kind == "optimal":
            a, Ss = np.sqrt(w * C), float(scan.Ss[m - 1])
            root = np.sqrt(r)
            offset = (C[:, None] * C[None, :] * (root[None, :] - root[:, None])).sum(axis=1)
            loads = (offset + a * rho) / Ss
            t = (SC - rho) / Ss
            cost = float(np.sum(w * loads / (a * t)))
            multiplier = 1.0 / t ** 2
        else:
            Sw = float(scan.Sw[m - 1])
            offset = (C[:, None] * C[None, :] * (r[None, :] - r[:, None])).sum(axis=1)
            loads = (offset + w * rho) / Sw
            multiplier = Sw / (SC - rho)
            cost = multiplier * rho
    return loads, cost, float(multiplier)


def _finish(farm: ServerFarm, scan: _Scan, m: int, sorted_loads: np.ndarray, cost: float,
            multiplier: float, kind: str, rho: float, light: bool = False) -> Allocation:
    sorted_loads = np.clip(sorted_loads, 0.0, None)
    loads = np.zeros(farm.K)
    loads[scan.order[:m]] = sorted_loads
    finite = np.all(np.isfinite(loads)) and np.isfinite(cost) and np.isfinite(multiplier)
    # the light-load form has no cancellation: a cost of 0 there is J rounded (below 5e-324)
    positive = cost > 0 or (light and cost == 0 and rho > 0)
    if not (finite and np.all(loads < farm.C) and positive and multiplier > 0):
        raise _precision_error(rho, farm)
    loads.setflags(write=False)
    active = np.flatnonzero(loads > 0).tolist()
    return Allocation(loads=loads, cost=float(cost), active=active, multiplier=float(multiplier),
                      kind=kind)


def social_optimum(C: ArrayLike | ServerFarm, w: ArrayLike | None = None, rho: float | None = None
                   ) -> Allocation:
    r"""Loads minimising the social cost :math:`J = \sum_j w_j x_j/(C_j - x_j)`.

    Closed form of the KKT conditions (Altman, Ayesta, Prabhu 2011, centralised-routing section;
    derived in ``derivations/ps-routing.md``, section "Social optimum"): on the active prefix S,
    :math:`x_j^* = C_j - \sqrt{w_j C_j}\,(\Sigma_C - \rho)/\Sigma_s` and
    :math:`J^* = \Sigma_s^2/(\Sigma_C - \rho) - \Sigma_w`.

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs (or a :class:`ServerFarm` as ``C`` and ``w=None``).
    rho : float
        Total work rate, ``0 < rho < sum(C)``.

    Returns
    -------
    Allocation
        ``multiplier`` is the common marginal cost :math:`\mu`.

    Raises
    ------
    InvalidParameter
        Bad capacities, costs or work rate.
    StabilityError
        If ``rho >= sum(C)``, or if rho is so close to sum(C) that some load rounds to its
        capacity in double precision.

    Examples
    --------
    >>> social_optimum([1.0, 1.0], [1.0, 1.0], 1.0).loads.tolist()
    [0.5, 0.5]
    """
    farm, rho, scan = _prepare(C, w, rho)
    k = kernels()
    m = _active_count(_thresholds(scan, "optimal"), rho)
    SC, Ss, Sw = scan.SC[m - 1], scan.Ss[m - 1], scan.Sw[m - 1]
    light = _light(scan, m, rho, "optimal")
    if light is not None:
        return _finish(farm, scan, m, *light, "optimal", rho, light=True)
    t = k.opt_t(SC, Ss, rho)
    loads = k.opt_load(scan.C[:m], scan.w[:m], t)
    return _finish(farm, scan, m, loads, k.opt_cost(SC, Ss, Sw, rho), k.opt_mu(SC, Ss, rho),
                   "optimal", rho)


def wardrop_equilibrium(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                        rho: float | None = None) -> Allocation:
    r"""Loads of the Wardrop equilibrium of selfish (non-atomic) jobs.

    Closed form of the minimiser of the Beckmann potential
    :math:`\Phi = \sum_j w_j \ln(C_j/(C_j - x_j))` (Altman, Ayesta, Prabhu 2011,
    decentralised-routing section; derived in ``derivations/ps-routing.md``, section "Wardrop
    equilibrium via a potential"): on the active prefix, :math:`c = \Sigma_w/(\Sigma_C - \rho)`,
    :math:`x_j = C_j - w_j/c` and :math:`J^{NE} = c\rho`.

    Parameters
    ----------
    C, w : array_like
        Capacities and holding costs (or a :class:`ServerFarm` as ``C`` and ``w=None``).
    rho : float
        Total work rate, ``0 < rho < sum(C)``.

    Returns
    -------
    Allocation
        ``multiplier`` is the common cost per unit of work :math:`c`.

    Raises
    ------
    InvalidParameter, StabilityError
        As :func:`social_optimum`.

    Examples
    --------
    >>> wardrop_equilibrium([1.0, 1.0], [1.0, 4.0], 0.5).loads.tolist()
    [0.5, 0.0]
    """
    farm, rho, scan = _prepare(C, w, rho)
    k = kernels()
    m = _active_count(_thresholds(scan, "equilibrium"), rho)
    SC, Sw = scan.SC[m - 1], scan.Sw[m - 1]
    light = _light(scan, m, rho, "equilibrium")
    if light is not None:
        return _finish(farm, scan, m, *light, "equilibrium", rho, light=True)
    c = k.ne_c(SC, Sw, rho)
    loads = k.ne_load(scan.C[:m], scan.w[:m], c)
    return _finish(farm, scan, m, loads, k.ne_cost(SC, Sw, rho), c, "equilibrium", rho)


# ----------------------------------------------------------------------------- price of anarchy

_H = Interval(1.0, float("inf"), left_open=True, right_open=True)


def price_of_anarchy(C: ArrayLike | ServerFarm, w: ArrayLike | None = None,
                     rho: float | None = None) -> float:
    r"""Price of anarchy :math:`J^{NE}/J^*` at total work rate ``rho`` (paper,
    price-of-anarchy section).

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
    return poa_of(wardrop_equilibrium(farm, rho), social_optimum(farm, rho), rho)


def poa_of(equilibrium: Allocation, optimum: Allocation, rho: float) -> float:
    """``J^NE/J^*`` of two allocations at total work rate ``rho``.

    Equal allocations have equal costs (a ratio of 1, also when the costs are below the
    smallest double, as at ``rho = 5e-324``); a cost that underflows otherwise is refused.
    """
    if np.array_equal(equilibrium.loads, optimum.loads):
        return 1.0
    if not optimum.cost > 0:
        raise InvalidParameter("rho", rho, "a larger total work rate",
                               "the costs of the allocations are below the smallest double")
    return equilibrium.cost / optimum.cost


@functools.lru_cache(maxsize=1)
def _heavy_traffic_kernel():
    S = symbolic.SYMBOLS
    return compile(symbolic.closed_forms().heavy_traffic_poa,
                   (S["Sigma_C"], S["Sigma_s"], S["Sigma_w"]))


def heavy_traffic_poa(C: ArrayLike | ServerFarm, w: ArrayLike | None = None) -> float:
    r"""Limit of the price of anarchy as :math:`\rho \to \sum_j C_j`.

    :math:`\lim \mathrm{PoA} = (\sum_j C_j)(\sum_j w_j)/(\sum_j \sqrt{w_j C_j})^2 \ge 1`, with
    equality iff all :math:`w_j/C_j` are equal (Cauchy-Schwarz).  The limit is derived with
    ``sympy.limit`` in :mod:`symq.routing.symbolic` (step "Heavy-traffic limit" of
    ``derivations/ps-routing.md``).

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
    social optimum, and the bound is tight (Haviv & Roughgarden, Oper. Res. Lett. 35(4), 2007,
    recalled in the paper's price-of-anarchy section).

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


@dataclass(frozen=True, eq=False)
class UnboundedFamily(ResultBase):
    r"""The two-server instance with unbounded price of anarchy, from the closed forms.

    Attributes
    ----------
    h : float
        Cost ratio, ``h > 1``.
    C, w : numpy.ndarray
        The instance: :math:`C = (1, 1)`, :math:`w = (1, h)`.
    rho : float
        Total work rate :math:`1 - 1/h`.
    x_opt, x_ne : numpy.ndarray
        Optimal and equilibrium loads.
    J_opt, J_ne : float
        Optimal cost :math:`(2h^{3/2} - h - 1)/(h + 1)` and equilibrium cost :math:`h - 1`.
    poa : float
        :math:`(h+1)(\sqrt h+1)/(2h+\sqrt h+1)`.
    poa_asymptotic : float
        :math:`\sqrt h/2`.
    method : str
        ``"closed form"``.
    exactness : Exactness
        ``numeric``: the closed forms in ``h`` evaluated in floating point.
    """

    summary: ClassVar[tuple[str, ...]] = ("h", "rho", "J_opt", "J_ne", "poa")

    h: float
    C: np.ndarray
    w: np.ndarray
    rho: float
    x_opt: np.ndarray
    x_ne: np.ndarray
    J_opt: float
    J_ne: float
    poa: float
    poa_asymptotic: float
    method: str = "closed form"
    exactness: Exactness = Exactness.NUMERIC


def unbounded_family(h: float) -> UnboundedFamily:
    r"""The two-server instance with unbounded price of anarchy and its closed forms.

    :math:`C = (1, 1)`, :math:`w = (1, h)`, :math:`\rho = 1 - 1/h` (steps "Unbounded family" of
    ``derivations/ps-routing.md``; an explicit instance of the paper's unbounded PoA with
    unequal holding costs, price-of-anarchy section): the equilibrium sends everything
    to server 1 (:math:`J^{NE} = h - 1`) while the optimum uses both servers,
    so :math:`\mathrm{PoA}(h) = (h+1)(\sqrt h+1)/(2h+\sqrt h+1) \sim \sqrt h/2`.

    Parameters
    ----------
    h : float
        Cost ratio, ``h > 1``.

    Returns
    -------
    UnboundedFamily
        The instance, the optimal and equilibrium loads and costs, the PoA and its asymptote,
        all from the closed forms derived in :mod:`symq.routing.symbolic`.

    Raises
    ------
    InvalidParameter
        If ``h <= 1`` or is not finite.

    Examples
    --------
    >>> fam = unbounded_family(4.0)
    >>> fam.rho, fam.J_ne, round(fam.poa, 12)     # 5*3/11
    (0.75, 3.0, 1.363636363636)
    """
    h = float(_H.coerce("h", h))
    keys, kernel = _family_kernel()
    values = dict(zip(keys, (float(v) for v in kernel(h))))
    return UnboundedFamily(
        h=h, C=np.array([1.0, 1.0]), w=np.array([1.0, h]), rho=values["rho"],
        x_opt=np.array([values["x1"], values["x2"]]), x_ne=np.array([values["rho"], 0.0]),
        J_opt=values["J_opt"], J_ne=values["J_ne"], poa=values["poa"],
        poa_asymptotic=values["asymptotic"],
    )
