r"""The two families of grids :func:`~symq.dispatch.vi.accuracy.solve_accurate` runs.

Identical servers solve on the sorted grids of :mod:`symq.dispatch.vi.solvers` (with the
fitted tail of :mod:`symq.dispatch.vi.boundary` and, for the optimal policy on three servers
or more, the cap on the second-largest backlog); servers of different speeds on the full time
lattice of :mod:`symq.dispatch.vi.speed_solvers`.  :class:`Lattice` is what the accuracy flow
needs of either: one grid's solve, its memory check and its time estimate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from symq.core.resources import require_memory
from symq.laws import Distribution

from .boundary import TailLike
from .iteration import VIResult
from .planning import VI_RATE, min_truncation, plan_optimal, vi_iterations
from .solvers import evaluate_policy, solve_optimal
from .speed_passes import atoms_estimate, min_truncation_speeds, speed_grid_bytes
from .speed_solvers import evaluate_policy_speeds, solve_optimal_speeds

__all__ = ["Lattice", "identical_lattice", "speeds_lattice"]


@dataclass(frozen=True)
class Lattice:
    """What :func:`~symq.dispatch.vi.accuracy.solve_accurate` needs of a family of grids:
    identical servers (the sorted grids of :mod:`symq.dispatch.vi.solvers`) or servers of
    different speeds (the full time lattice of :mod:`symq.dispatch.vi.speed_solvers`).

    ``unit`` scales the default steps and truncation (``E[X]``, or ``E[X]/min(speeds)``, the
    mean service time on the slowest server), ``u_min`` is the least truncation accepted.
    """

    unit: float
    u_min: float
    #: ``solve(delta, U, warm, span_rtol, tail, U2)``: one grid (``tail`` and the cap ``U2``
    #: as :func:`~symq.dispatch.vi.solvers.solve_optimal` takes them, or None)
    solve: Callable[[float, float, VIResult | None, float, tuple[float, float] | None,
                     float | None], VIResult]
    #: ``check(d1, U, U_big, U2)``: refuse grids that do not fit in memory (the finest at
    #: ``U``, the coarse one at the largest truncation check; ``U2``: their cap, or None)
    check: Callable[[float, float, float, float | None], None]
    #: ``seconds(delta, U, U2)``: estimated time of one grid (``U2``: the cap, or None)
    seconds: Callable[[float, float, float | None], float]
    #: whether the tail beyond U is fitted to the solution (:mod:`~symq.dispatch.vi.boundary`)
    fits_tail: bool = False
    #: whether the second-largest backlog may be capped (the optimal policy, m >= 3)
    caps: bool = False


def identical_lattice(m: int, rho: float, law: Distribution, key: str, method: str,
                      progress: bool, names: dict[str, str] | None, blame: str,
                      correction: bool) -> Lattice:
    """The sorted grids of ``m`` identical servers for the policy ``key`` (``"optimal"`` by
    ``method`` ``"vi"`` or ``"pi"``, or a fixed one), with or without the coarse-grid
    correction; ``names``/``blame`` name the parameters in the memory and time refusals."""
    table = method == "pi"

    def solve(delta: float, top_u: float, warm: VIResult | None, span_rtol: float,
              tail: TailLike = None, cap: float | None = None
              ) -> VIResult:
        stop = dict(tol=1e-14, span_rtol=span_rtol, coarse_correction=correction)
        if key == "optimal":
            return solve_optimal(m, rho, law, delta=delta, U=top_u, warm_start=warm,
                                 method=method, progress=progress, tail=tail, U2=cap, **stop)
        return evaluate_policy(key, m, rho, law, delta=delta, U=top_u, warm_start=warm,
                               progress=progress, **stop)

    def check(d1: float, top_u: float, big_u: float, cap: float | None = None) -> None:
        plan_optimal(m, rho, law, d1, top_u, levels=2, names=names, table=table, blame=blame,
                     U2=cap)
        plan_optimal(m, rho, law, d1, big_u, levels=1, names=names, table=table, blame=blame,
                     U2=cap)

    def seconds(delta: float, top_u: float, cap: float | None = None) -> float:
        return plan_optimal(m, rho, law, delta, top_u, levels=1, time_limit=math.inf,
                            U2=cap)["seconds"]

    return Lattice(float(law.mean()), min_truncation(m, rho, law), solve, check, seconds,
                    fits_tail=key == "optimal", caps=key == "optimal" and m >= 3
                    and method == "vi")


def speeds_lattice(speeds: np.ndarray, rho: float, law: Distribution, key: str,
                   progress: bool, names: dict[str, str], blame: str) -> Lattice:
    """The full time lattice of servers of the given ``speeds`` for the policy ``key``."""
    m = int(speeds.size)
    mean = float(law.mean())
    # the response time is at least the service time on the fastest server
    g_floor = mean / float(speeds.max())
    s_min = float(speeds.min())

    def solve(delta: float, top_u: float, warm: VIResult | None, span_rtol: float,
              tail: TailLike = None, cap: float | None = None
              ) -> VIResult:
        options = dict(delta=delta, U=top_u, tol=span_rtol * g_floor, max_iter=50_000,
                       warm_start=warm, multigrid=warm is None, progress=progress)
        if key == "optimal":
            return solve_optimal_speeds(speeds, rho, law, **options)
        return evaluate_policy_speeds(key, speeds, rho, law, **options)

    def size(delta: float, top_u: float) -> tuple[int, int]:
        return int(round(top_u / delta)), atoms_estimate(law, delta, s_min)

    def check(d1: float, top_u: float, big_u: float, cap: float | None = None) -> None:
        for delta, u in ((d1 / 2, top_u), (d1, big_u)):
            n, atoms = size(delta, u)
            require_memory(names[blame], d1 if blame == "delta" else top_u,
                           speed_grid_bytes(m, n, atoms),
                           what=f"{float(n + 1) ** m:.3g} lattice states x {atoms} size atoms "
                                f"({names['U']}={u:g}, step {delta:g})",
                           limit="coarser" if blame == "delta" else "smaller")

    def seconds(delta: float, top_u: float, cap: float | None = None) -> float:
        n, atoms = size(delta, top_u)
        return float(n + 1) ** m * atoms * m * vi_iterations(rho) / VI_RATE

    return Lattice(mean / s_min, min_truncation_speeds(speeds, rho, law), solve, check, seconds)
