"""The registered ``dispatch`` model: ``symq solve dispatch policy=optimal m=2 rho=0.4 --json``.

``policy`` is one of ``rnd``, ``rr``, ``jsq``, ``jiq``, ``jiq-jsq``, ``lwl``, ``sita`` (with
``h=``), ``sita-e``, ``sita-opt``, ``fpi-rnd``, ``fpi-sita``, ``optimal``.  The mean response
time ``ET`` comes from

* an exact formula where one exists (``method: exact``: Pollaczek-Khinchine for RND and SITA,
  E_m/M/1 for round-robin, M/M/m for LWL and the JSQ CTMC with exponential sizes);
* value iteration for ``optimal`` with 1 to 6 servers (``method: value-iteration``,
  :func:`~symq.dispatch.vi.accuracy.solve_accurate`): grids ``delta, 4 delta/5, 2 delta/3``
  (and ``delta/2`` where those miss ``rtol``; default ``delta`` by ``m`` and the load) and a
  truncation ``umax`` by load with a fitted tail beyond it, checked by two larger ``umax`` and
  enlarged until its error is below ``rtol/3`` (Hyytiä & Righter, arXiv 2402.08142, Part 1),
  with

  - ``error_estimate``: the stated error of ``ET``, the sum of ``error_parts``: ``bracket``
    (the grids' Odoni brackets through the extrapolation weights), ``extrapolation`` (the
    next term of the expansion in the step), ``truncation`` (``|g(umax') - g(umax)|``) and
    ``cap`` (the same for the cap on the second-largest backlog, ``m >= 3`` at high load);
  - ``grids[i].g_bracket_discrete``: the Odoni bracket of each grid's DISCRETISED MDP, which
    certifies convergence of the iteration on that grid only: it is not the uncertainty of
    ``ET``;
* simulation otherwise (``method: simulation``, with a 99% confidence interval).

Every result also gives ``P_wait`` (the probability that an arriving job waits: exact for RND,
SITA, and LWL and round-robin with exponential sizes; simulated otherwise) and, with
``size_bins=k``, ``E[T | X in bin]`` for ``k`` equiprobable size bins
(``size_edges``, ``size_means``, ``ET_by_size``; exact for the policies that do not read the
size and for SITA, simulated otherwise).

``speeds=2,1`` gives the servers speeds (server ``i`` drains its work at rate ``s_i``; the load
is then ``rho = lam E[X]/sum(speeds)``): ``policy=optimal`` solves the value iteration with
speeds on the full time lattice (``m <= 3``, :mod:`symq.dispatch.vi.speed_solvers`) with the same
three errors, and every other policy is simulated with the speeds (what each policy does with them:
:mod:`symq.dispatch.policies.named`).

Parameters that the chosen policy or size law does not use (``scv`` with ``sizes=exp`` or ``det``,
``h`` without ``policy=sita``/``fpi-sita``, ``delta``/``umax``/``rtol`` without
``policy=optimal``) are
refused, and so are grids or CTMCs that would not fit in memory or would run for hours.

Examples
--------
>>> r = solve_dispatch("lwl", 2, 0.4)
>>> r.method, round(r.ET, 12)     # M/M/2: 1/(1 - rho^2)
('exact', 1.190476190476)
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from symq.core.errors import (
    MISSING,
    InvalidParameter,
    ResourceLimit,
    StabilityError,
    SymqError,
    TruncationError,
    UnknownName,
)
from symq.core.parameters import Choice, IntegerAtLeast, Parameter, PositiveReal, PositiveVector
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, ResultBase
from symq.core.simstats import ConfidenceInterval
from symq.laws import FIXED_SCV, SIZE_LAWS, Distribution

from .policies.exact import ExactResult, exact_mean_response, sita_class_stats
from .policies.speeds import check_speeds
from .simplex import M_MAX
from .sizebins import MAX_BINS, bin_means, bin_probabilities, size_edges
from .sizes import named_sizes, size_scv
from .vi.speed_passes import M_SPEEDS

__all__ = ["DISPATCH", "DispatchSolution", "solve_dispatch", "POLICY_CHOICES", "check_given",
           "check_m_for",
           "check_sita_h", "check_simulation", "user_error"]

POLICY_CHOICES = ("rnd", "rr", "jsq", "jiq", "jiq-jsq", "lwl", "sita", "sita-e", "sita-opt",
                  "fpi-rnd", "fpi-sita", "optimal")
#: Relative accuracy asked of ``policy=optimal`` when ``rtol=`` is not given.
DEFAULT_RTOL = 1e-3
#: Default SCV of ``sizes=h2`` when ``scv=`` is not given.
DEFAULT_SCV = 4.0
#: Internal parameter names of the solvers -> the names typed on the command line.
USER_NAMES = {"U": "umax", "thresholds": "h"}
#: Largest ``m`` for which the model simulates (``n_jobs`` x ``m`` steps).
SIM_WORK_LIMIT = 4e9
#: Largest ``m`` for SITA-opt's coordinate search (quadratic in ``m``) and SITA-E.
SITA_OPT_M_MAX, SITA_M_MAX = 12, 100_000
#: The mean job size of the ``dispatch`` model (its time unit).
MEAN_SIZE = 1.0

@dataclass(frozen=True)
class DispatchSolution(ResultBase):
    """The mean response time of one dispatching policy, as the ``dispatch`` model gives it.

    Which fields are set depends on the method (the module docstring): an exact formula gives
    ``ET`` only; simulation gives ``ET`` as a confidence interval with ``ET_half_width`` and
    ``level``; value iteration (``policy=optimal``) gives ``ET`` with ``error_estimate``,
    ``error_parts``, ``error_note``, ``meets_rtol``, ``umax`` and ``grids``.

    Attributes
    ----------
    ET : float or ConfidenceInterval
        Mean response time per job.
    ET_half_width : float or None
        Half width of the simulation interval.
    EW : float, ConfidenceInterval or None
        Mean waiting time per job (FCFS: a job's response time is its wait plus its own size,
        so with identical servers ``EW = ET - E[X] = ET - 1``, exact, with the error of
        ``ET``); the simulated interval when simulated; None for value iteration with speeds
        (the size is served at the speed of the server the policy picks).
    EW_half_width : float or None
        Half width of the simulated ``EW`` interval.
    P_wait : float or None
        Probability that an arriving job waits (finds the backlog of the server it is sent to
        positive).  Exact where a formula gives it: RND ``rho`` (each server an M/G/1 queue of
        load ``rho``, any size law); SITA :math:`\\sum_j p_j \\rho_j` (class ``j`` of
        probability :math:`p_j` sees an M/G/1 queue of load :math:`\\rho_j`); LWL (and FPI-RND,
        which is LWL) with exponential sizes Erlang C, :math:`(E[T] - 1) m (1 - \\rho)`;
        round-robin with exponential sizes the E_m/M/1 root :math:`\\sigma = 1 - 1/E[T]`.  The
        simulated fraction of waiting jobs when simulated (interval ``P_wait +-
        P_wait_half_width`` clipped to [0, 1]).  None for JSQ's CTMC and value iteration (the
        reason in ``notes``).
    P_wait_half_width : float or None
        Half width of the simulated ``P_wait`` interval (at ``level``).
    loads : list of float or None
        Per-server utilisations (work dispatched per unit time over the speed) of a simulation.
    size_edges : list of float or None
        With ``size_bins=k``: the edges :math:`0 = e_0 < \\dots < e_k = \\infty` of ``k``
        equiprobable size bins (the ``j/k`` quantiles of the size law,
        :func:`~symq.dispatch.sizebins.size_edges`).
    size_means : list of float or None
        :math:`E[X \\mid e_q \\le X < e_{q+1}]` per bin (exact, from the law's partial moments):
        the natural abscissa of ``ET_by_size``.
    ET_by_size : list of float or None
        :math:`E[T \\mid e_q \\le X < e_{q+1}]` per bin: exact where ``ET`` is exact (a
        size-blind policy, RND, RR, JSQ, LWL, FPI-RND: ``size_means + EW``; SITA: ``size_means``
        plus the Pollaczek-Khinchine wait of each class weighted by its share of the bin);
        simulated otherwise (batch means per bin).
    ET_by_size_half_width : list of float or None
        Half widths of the simulated per-bin intervals, each at ``size_level``.
    size_level : float or None
        Level of each bin's interval: ``1 - (1 - level)/k`` (Bonferroni: the ``k`` intervals
        hold jointly at ``level``).
    notes : str or None
        Why an output is None (``P_wait`` of JSQ and of value iteration).
    level : float or None
        Confidence level of the simulation interval.
    error_estimate : float or None
        Stated error of the value-iteration ``ET``: the sum of ``error_parts``.
    error_parts : dict or None
        ``bracket``, ``extrapolation``, ``truncation`` and ``cap``.
    error_note : str or None
        What ``error_estimate`` covers.
    meets_rtol : bool or None
        Whether ``error_estimate <= rtol * ET``.
    umax : float or None
        Final backlog truncation of value iteration.
    grids : list of dict or None
        ``role``, ``delta``, ``umax``, ``g``, ``g_bracket_discrete``, ``iterations`` per grid.
    method : str
        ``exact``, ``simulation`` or ``value-iteration``.
    exactness : Exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "error_estimate", "ET_half_width")
    uncertainty: ClassVar[dict[str, str]] = {"ET": "error_estimate", "EW": "error_estimate"}

    ET: float | ConfidenceInterval
    ET_half_width: float | None = None
    EW: float | ConfidenceInterval | None = None
    EW_half_width: float | None = None
    P_wait: float | None = None
    P_wait_half_width: float | None = None
    loads: list[float] | None = None
    size_edges: list[float] | None = None
    size_means: list[float] | None = None
    ET_by_size: list[float] | None = None
    ET_by_size_half_width: list[float] | None = None
    size_level: float | None = None
    notes: str | None = None
    level: float | None = None
    error_estimate: float | None = None
    error_parts: dict[str, float] | None = None
    error_note: str | None = None
    meets_rtol: bool | None = None
    umax: float | None = None
    grids: list[dict[str, Any]] | None = None
    method: str = "exact"
    exactness: Exactness = Exactness.EXACT


def user_error(exc: SymqError) -> SymqError:
    """The same error with internal names (``U``, ``thresholds``) replaced by the typed ones."""
    name = USER_NAMES.get(getattr(exc, "name", None), getattr(exc, "name", None))
    text = str(exc)
    # one SITA threshold is the h= typed for two servers
    text = re.sub(r"\bthresholds=\[([^\],]*)\]", r"h=\1", text)
    for inner, outer in USER_NAMES.items():
        text = re.sub(rf"\b{inner}=", f"{outer}=", text)
        text = re.sub(rf"\b{inner}/", f"{outer}/", text)
        text = re.sub(rf"(increase|lower|raise) {inner}\b", rf"\1 {outer}", text)
    if name == getattr(exc, "name", None) and text == str(exc):
        return exc
    out = SymqError.__new__(type(exc))
    out.__dict__.update(exc.__dict__)
    if isinstance(out, InvalidParameter):
        out.name = name
    out.args = (text,)
    return out


def _unused(name: str, value: Any, applies: str) -> InvalidParameter:
    return InvalidParameter(name, value, f"omitted here: {name}= applies only {applies}",
                            "a parameter the model would ignore is refused")


def check_given(key: str, sizes: str, scv: Any, h: Any, delta: Any, umax: Any,
                rtol: Any = None) -> None:
    """Refuse a parameter typed for policy ``key`` that the model would ignore.

    ``scv`` applies only to a size law of free SCV (not ``exp`` or ``det``), ``h`` to SITA and
    FPI-SITA, ``delta``, ``umax`` and
    ``rtol`` to ``policy=optimal`` (the ``dispatch`` and ``dispatch-sim`` models).

    Raises
    ------
    InvalidParameter
        Naming the first parameter given where it does not apply.
    """
    if scv is not None and str(sizes).strip().lower() in FIXED_SCV:
        raise _unused("scv", scv, "with a size law of free SCV (exp has SCV 1, det 0)")
    if h is not None and key not in ("sita", "fpi-sita"):
        raise _unused("h", h, "with policy=sita or policy=fpi-sita (the SITA threshold)")
    for name, value in (("delta", delta), ("umax", umax), ("rtol", rtol)):
        if value is not None and key != "optimal":
            raise _unused(name, value, "with policy=optimal (the value-iteration grid)")


def _solve_optimal(m: int, rho: float, law: Distribution, delta: float | None, umax: float | None,
                   rtol: float | None, speeds: Any = None,
                   progress: bool = False) -> DispatchSolution:
    from .vi.accuracy import solve_accurate

    names = {"U": "umax"}
    top = M_MAX if speeds is None else M_SPEEDS
    if isinstance(m, numbers.Integral) and not isinstance(m, bool) and m > top:
        grid = ("on the sorted backlog grid" if speeds is None else
                "with speeds on the full time lattice")
        raise InvalidParameter("m", m, f"1..{top} for policy=optimal"
                               + ("" if speeds is None else " with speeds"),
                               f"value iteration {grid} is implemented for m <= {top} servers; "
                               "the heuristics (policy=lwl, jiq, sita-opt, ...) take any m")
    est = solve_accurate(m, rho, law, rtol=DEFAULT_RTOL if rtol is None else rtol,
                         coarse=delta, U=umax, names=names, speeds=speeds, progress=progress)
    return DispatchSolution(
        ET=est.ET,
        EW=None if speeds is not None else est.ET - MEAN_SIZE,
        error_estimate=est.error_estimate,
        error_parts=est.error_parts,
        error_note=("error_estimate = bracket (Odoni brackets of the grids through the "
                    "extrapolation) + extrapolation (|3-grid fit - Richardson of the two "
                    "finest|) + truncation (|g(umax') - g(umax)| on the coarsest grid) + cap "
                    "(the same for the cap on the second-largest backlog, m >= 3 at high "
                    "load); g_bracket_discrete brackets each grid's discretised MDP only"),
        meets_rtol=est.meets_rtol,
        umax=est.U,
        grids=[{"role": g["role"], "delta": g["delta"], "umax": g["U"], "g": g["g"],
                "g_bracket_discrete": g["g_bracket_discrete"],
                "iterations": g["iterations"]} for g in est.grids],
        method="value-iteration", exactness=Exactness.NUMERIC)


def _exact_value(key: str, m: int, rho: float, law: Distribution,
                 thresholds: list[float] | None) -> ExactResult | None:
    """The exact mean response time, or ``None`` where there is no formula for this policy and
    size law (or, for JSQ, the CTMC is too large to solve): then the policy is simulated."""
    try:
        if key == "fpi-rnd":  # FPI from an equal split is LWL (symq.dispatch.symbolic)
            return exact_mean_response("lwl", m, rho, law)
        if key == "fpi-sita":
            return None
        return exact_mean_response(key, m, rho, law, thresholds=thresholds)
    except (TruncationError, UnknownName):   # no exact form for this policy: simulated
        return None
    except InvalidParameter as exc:
        if exc.name in ("policy", "sizes") or (key == "jsq" and exc.name == "m"):
            return None
        raise


def _erlang_c(m: int, rho: float, ET: float) -> float:
    """Erlang C, the probability of waiting in M/M/m at load ``rho`` (offered ``a = m rho``):
    the Erlang B recursion :math:`B_k = a B_{k-1}/(k + a B_{k-1})`,
    :math:`C = B_m/(1 - \\rho + \\rho B_m)`; beyond 100000 servers from the exact mean
    response time, :math:`C = (E[T] - 1) m (1 - \\rho)` (absolute error about
    :math:`10^{-16} m`)."""
    if m > 100_000:
        return min(max((ET - MEAN_SIZE) * m * (1.0 - rho), 0.0), 1.0)
    a, b = m * rho, 1.0
    for k in range(1, m + 1):
        b = a * b / (k + a * b)
    return b / (1.0 - rho + rho * b)


def _sita_classes(m: int, rho: float, law: Distribution, thresholds: tuple[float, ...]
                  ) -> tuple[float, Any]:
    """SITA's exact ``P_wait`` and the Pollaczek-Khinchine mean wait of each class: server
    ``j`` is an M/G/1 queue with arrival rate :math:`\\lambda p_j`, load :math:`\\rho_j =
    \\lambda E[X; j]` and :math:`W_j = \\lambda E[X^2; j]/(2(1 - \\rho_j))`."""
    import numpy as np

    p, _, rho_j, second = sita_class_stats(m, rho, law, list(thresholds))
    lam = m * rho / MEAN_SIZE
    wait = lam * second / (2.0 * (1.0 - rho_j))
    return float(np.dot(p, rho_j)), (np.concatenate([[0.0], thresholds, [math.inf]]), wait)


def _bins(law: Distribution, size_bins: int | None) -> tuple[Any, Any] | None:
    """The edges of ``size_bins`` equiprobable bins and the exact mean size in each."""
    if size_bins is None:
        return None
    import numpy as np

    edges = size_edges(law, size_bins)
    probs = bin_probabilities(law, edges)
    if np.any(np.diff(edges) <= 0) or np.any(probs <= 0):
        raise InvalidParameter("size_bins", size_bins, "fewer bins: each must hold a positive "
                               "probability of the size law", f"the {size_bins} equiprobable "
                               f"bins have edges {edges.tolist()} (a law with atoms has fewer "
                               "distinct quantiles)")
    return edges, bin_means(law, edges)


def _exact_by_size(key: str, law: Distribution, bins: tuple[Any, Any], EW: float,
                   classes: Any) -> list[float]:
    """:math:`E[T \\mid X \\in B]` of an exact policy: a size-blind one waits ``EW`` whatever
    the size; under SITA a job of bin ``B`` waits :math:`W_j` with probability
    :math:`P(X \\in B \\cap \\text{class } j)/P(X \\in B)`."""
    import numpy as np

    edges, means = bins
    if classes is None:
        return [float(x) + EW for x in means]
    bounds, wait = classes
    cdf = lambda x: 1.0 - float(law.ccdf(x)) if math.isfinite(x) else 1.0  # noqa: E731
    out = []
    for q in range(len(means)):
        lo, hi = float(edges[q]), float(edges[q + 1])
        share = np.array([max(cdf(min(hi, bounds[j + 1])) - cdf(max(lo, bounds[j])), 0.0)
                          if min(hi, bounds[j + 1]) > max(lo, bounds[j]) else 0.0
                          for j in range(wait.size)])
        out.append(float(means[q]) + float(share @ wait) / float(share.sum()))
    return out


def check_m_for(key: str, m: int, law: Distribution, n_jobs: int) -> None:
    """Refuse a number of servers too large for the SITA threshold searches of policy ``key``.

    Raises
    ------
    InvalidParameter
        ``m > SITA_OPT_M_MAX`` for ``sita-opt``, ``m > SITA_M_MAX`` for ``sita-e``, ``fpi-sita``.
    """
    if key == "sita-opt" and m > SITA_OPT_M_MAX:
        raise InvalidParameter("m", m, f"<= {SITA_OPT_M_MAX} for policy=sita-opt",
                               "its coordinate search costs ~m^2 evaluations per sweep; use "
                               "policy=sita-e for more servers")
    if key in ("sita-e", "fpi-sita") and m > SITA_M_MAX:
        raise InvalidParameter("m", m, f"<= {SITA_M_MAX} for policy={key}",
                               "one threshold per server is solved for")


def check_sita_h(key: str, m: int, h: float | None) -> None:
    """``h`` is the one threshold of SITA with two servers, required by ``policy=sita``."""
    if key in ("sita", "fpi-sita") and h is not None and m != 2:
        raise InvalidParameter("h", h, "given only with m=2 (one threshold between two "
                               "servers)", f"m={m} needs {max(m - 1, 0)} thresholds; use "
                               "policy=sita-e or sita-opt")
    if key == "sita" and h is None:
        raise InvalidParameter("h", MISSING, "the SITA threshold for policy=sita (m=2); "
                               "or use policy=sita-e or sita-opt")


def _check_load(m: int, rho: float) -> None:
    """A stationary regime needs ``rho < 1`` (checked before any formula sees the load)."""
    if not rho < 1:
        raise StabilityError(f"per-server load rho={float(rho)!r} must be < 1 for a stationary "
                             f"regime with m={m} servers")


def check_simulation(key: str, m: int, rho: float, law: Distribution, n_jobs: int,
                      sizes: str, scv_typed: float | None, n_batches: int = 30) -> None:
    """Refuse simulations that would take hours or whose confidence interval is not reliable."""
    _check_load(m, rho)
    if m * n_jobs > SIM_WORK_LIMIT:
        if SIM_WORK_LIMIT // n_jobs < 1 or m <= SIM_WORK_LIMIT // 1_000_000:  # n_jobs is too long
            raise InvalidParameter("n_jobs", n_jobs, f"<= {int(SIM_WORK_LIMIT // m)} with m={m} "
                                   f"for a simulated policy ({key} with sizes={sizes})",
                                   f"the simulation costs m steps per job, at most "
                                   f"{SIM_WORK_LIMIT:.0e} steps in all (about a minute)")
        raise InvalidParameter("m", m, f"<= {int(SIM_WORK_LIMIT // n_jobs)} for a simulated "
                               f"policy ({key} with sizes={sizes})",
                               f"the simulation of {n_jobs} jobs costs m steps per job")
    # batch means need batches much longer than the relaxation time ~(1 + scv)/(1 - rho)^2 jobs
    batch = 0.9 * n_jobs / n_batches
    scv = size_scv(law)
    need = 10 * (1 + scv) / (1 - rho) ** 2
    if 10 * (1 + scv) > batch and 10 * 2 > batch:  # no load would do: too many batches
        raise InvalidParameter("n_batches", n_batches,
                               f"<= {max(int(0.9 * n_jobs / max(10 * (1 + scv), 100)), 2)} for "
                               f"n_jobs={n_jobs}",
                               f"each batch must hold 100 jobs and be much longer than the "
                               f"relaxation time ~(1 + scv)/(1 - rho)^2 >= {1 + scv:.3g} jobs")
    if need > batch:
        exp_need = 10 * 2 / (1 - rho) ** 2
        if sizes == "h2" and exp_need <= batch:
            scv_max = batch * (1 - rho) ** 2 / 10 - 1
            raise InvalidParameter("scv", scv if scv_typed is None else scv_typed,
                                   f"<= {scv_max:.4g} for a simulated policy at "
                                   f"rho={rho:g}",
                                   f"{n_jobs} simulated jobs cannot resolve the relaxation time "
                                   f"~(1 + scv)/(1 - rho)^2 = {need / 10:.3g} jobs")
        rho_max = 1 - math.sqrt(10 * (1 + scv) / batch)
        raise InvalidParameter("rho", rho, f"<= {rho_max:.4g} for a simulated policy "
                               f"({key} with sizes={sizes})",
                               f"{n_jobs} simulated jobs cannot resolve the relaxation time "
                               f"~(1 + scv)/(1 - rho)^2 = {need / 10:.3g} jobs")


def solve_dispatch(policy: str, m: int, rho: float, sizes: str = "exp",
                   scv: float | None = None, h: float | None = None,
                   delta: float | None = None, umax: float | None = None,
                   n_jobs: int = 2_000_000, seed: int = 1, rng: Any = None,
                   rtol: float | None = None, speeds: Any = None,
                   progress: bool = False, size_bins: int | None = None) -> DispatchSolution:
    r"""Mean response time of one dispatching policy (the module docstring describes the methods).

    Parameters
    ----------
    policy : str
        One of :data:`POLICY_CHOICES`.
    m : int
        Number of servers.
    rho : float
        Load per server, in (0, 1).
    sizes : {"exp", "uniform", "h2"}
        Size law with mean 1.
    scv : float, optional
        SCV of ``sizes="h2"`` (default 4); refused with another law.
    h : float, optional
        The SITA threshold (``policy="sita"`` or ``"fpi-sita"``, ``m = 2``).
    delta, umax : float, optional
        Value-iteration step (the fine grid is ``delta/2``) and backlog truncation
        (``policy="optimal"`` only).
    n_jobs, seed, rng
        Simulation length and seed (``rng``, e.g. the CLI's ``--seed``, overrides ``seed``).
    rtol : float, optional
        Relative accuracy asked of ``policy="optimal"`` (default :data:`DEFAULT_RTOL`).
    speeds : sequence of m positive reals, optional
        Server speeds (default all 1): value iteration with speeds for ``policy="optimal"``
        (``m <= 3``), simulation with speeds for every other policy.
    progress : bool, default False
        tqdm bars on stderr for the value iteration of ``policy="optimal"`` (one per grid).
    size_bins : int, optional
        Also give :math:`E[T \mid X \in B]` for ``size_bins`` equiprobable size bins
        (``size_edges``, ``size_means``, ``ET_by_size``, with half widths when simulated);
        not with ``policy="optimal"``.

    Raises
    ------
    InvalidParameter, ResourceLimit, StabilityError, NotConverged
        With the parameter named as typed on the command line.
    """
    try:
        return _solve_dispatch(policy, m, rho, sizes, scv, h, delta, umax, rtol, n_jobs,
                               seed if rng is None else rng, speeds, progress, size_bins)
    except (InvalidParameter, StabilityError) as exc:
        raise user_error(exc) from None


def _solve_dispatch(policy: str, m: int, rho: float, sizes: str, scv: float | None,
                    h: float | None, delta: float | None, umax: float | None,
                    rtol: float | None, n_jobs: int,
                    seed: Any, speeds: Any = None, progress: bool = False,
                    size_bins: int | None = None) -> DispatchSolution:
    key = str(policy).lower()
    if key not in POLICY_CHOICES:
        raise InvalidParameter("policy", policy, "one of " + ", ".join(POLICY_CHOICES))
    check_given(key, sizes, scv, h, delta, umax, rtol)
    if size_bins is not None and key == "optimal":
        raise _unused("size_bins", size_bins, "to the policies other than optimal (value "
                      "iteration gives no stationary backlog law with a stated error; "
                      "symq.dispatch.vi.by_size.response_by_size_vi gives one grid's for m=2)")
    if size_bins is not None and not (isinstance(size_bins, numbers.Integral)
                                      and not isinstance(size_bins, bool)
                                      and 1 <= size_bins <= MAX_BINS):
        raise InvalidParameter("size_bins", size_bins, f"an integer in 1..{MAX_BINS}")
    _check_load(m, rho)
    size_key = str(sizes).lower()
    law = named_sizes(sizes, scv)
    bins = _bins(law, None if size_bins is None else int(size_bins))
    spd = None if speeds is None else check_speeds(speeds, m)
    out: DispatchSolution
    if key == "optimal":
        try:
            out = _solve_optimal(m, rho, law, delta, umax, rtol, spd, progress)
            out = replace(out, notes="P_wait: None, value iteration gives the mean response "
                          "time only")
        except InvalidParameter as exc:
            if exc.name in ("U", "umax") and umax is None and not isinstance(exc, ResourceLimit):
                # the truncation the load needs (not typed) is beyond any grid: name the law
                # or the load the user typed
                name, value = (("scv", DEFAULT_SCV if scv is None else scv)
                               if size_key == "h2" else ("rho", rho))
                raise InvalidParameter(name, value, "smaller for policy=optimal",
                                       f"value iteration needs a backlog truncation umax "
                                       f"{exc.domain}, beyond any grid that fits") from None
            if exc.name != "sizes" or size_key != "h2":
                raise
            raise InvalidParameter("scv", DEFAULT_SCV if scv is None else scv,
                                   "smaller for policy=optimal", str(exc)) from None
    else:
        check_sita_h(key, m, h)
        check_m_for(key, m, law, n_jobs)
        thresholds = None if h is None else [float(h)]
        # the exact formulas are for identical servers: with speeds, simulate
        exact = None if spd is not None else _exact_value(key, m, rho, law, thresholds)
        if exact is not None:
            et = float(exact.ET)
            notes = None
            classes = None
            if key == "rnd":
                p_wait: float | None = rho
            elif key in ("lwl", "fpi-rnd"):
                p_wait = _erlang_c(m, rho, et)
            elif key == "rr":
                p_wait = min(max(1.0 - MEAN_SIZE / et, 0.0), 1.0)
            elif exact.thresholds or key.startswith("sita"):
                p_wait, classes = _sita_classes(m, rho, law, exact.thresholds)
            else:
                p_wait = None
                notes = (f"P_wait: None, the exact solver of {key} (the CTMC of the job "
                         "counts) gives the mean response time only")
            by_size: dict[str, Any] = {} if bins is None else {
                "size_edges": [float(x) for x in bins[0]],
                "size_means": [float(x) for x in bins[1]],
                "ET_by_size": _exact_by_size(key, law, bins, et - MEAN_SIZE, classes)}
            out = DispatchSolution(ET=et, EW=et - MEAN_SIZE, P_wait=p_wait, method="exact",
                                   exactness=Exactness.EXACT, notes=notes, **by_size)
        else:
            from .policies import get_policy
            from .simulation.simulate import simulate_dispatch

            check_simulation(key, m, rho, law, n_jobs, size_key, scv)
            params = {} if h is None else {"h": float(h)}
            est = simulate_dispatch(get_policy(key, **params), m, rho, law, n_jobs=n_jobs,
                                    rng=seed, level=0.99, speeds=spd,
                                    size_bins=None if bins is None else bins[0])
            sim_bins: dict[str, Any] = {} if bins is None or est.ET_by_size is None else {
                "size_edges": [float(x) for x in bins[0]],
                "size_means": [float(x) for x in bins[1]],
                "ET_by_size": [float(c.mean) for c in est.ET_by_size],
                "ET_by_size_half_width": [float(c.half_width) for c in est.ET_by_size],
                "size_level": est.size_level}
            # the estimate stays an interval: a claim compares it as simulation evidence
            out = DispatchSolution(ET=est.ET, ET_half_width=float(est.ET.half_width),
                                   EW=est.EW, EW_half_width=float(est.EW.half_width),
                                   P_wait=float(est.P_wait.mean),
                                   P_wait_half_width=float(est.P_wait.half_width),
                                   loads=[float(x) for x in est.loads],
                                   level=0.99, method="simulation",
                                   exactness=Exactness.SIMULATED, **sim_bins)
    et_value = float(getattr(out.ET, "mean", out.ET))
    if not (math.isfinite(et_value) and et_value > 0):
        raise SymqError(f"dispatch: the mean response time came out as {et_value!r}; the "
                        f"parameters (m={m}, rho={rho}, sizes={sizes}) are beyond the solver's "
                        "numerical range")
    return out


DISPATCH = ModelSpec(
    name="dispatch",
    summary=("size-aware dispatching to m FCFS servers: mean response time of RND, RR, JSQ, "
             "LWL, SITA, FPI or the optimal policy by value iteration (Hyytiä & Righter 2024)"),
    parameters=(
        Parameter("policy", Choice(POLICY_CHOICES), typical="optimal",
                  description="dispatching policy: " + ", ".join(POLICY_CHOICES)),
        Parameter("m", IntegerAtLeast(1), typical=2, description="number of servers"),
        Parameter("rho", PositiveReal(), typical=0.4,
                  description="load per server, lam E[X]/m; must be < 1"),
        Parameter("sizes", Choice(SIZE_LAWS), required=False, default="exp",
                  description="job-size law with mean 1 (the model works in units of the mean "
                              "size; no mean parameter): " + ", ".join(SIZE_LAWS)),
        Parameter("scv", PositiveReal(), required=False,
                  description="SCV of the size law (omit for exp and det; required for the "
                              "others, except h2: default 4, the paper's, and uniform: default "
                              "uniform(0, 2), SCV 1/3; 1/k for erlang, > 1 for h2, <= 1/3 for "
                              "uniform)"),
        Parameter("h", PositiveReal(), required=False,
                  description="SITA threshold (policy=sita or fpi-sita, m = 2)"),
        Parameter("delta", PositiveReal(), required=False,
                  description="coarsest value-iteration step (policy=optimal; the grids are "
                              "delta, 2 delta/3, delta/2)"),
        Parameter("umax", PositiveReal(), required=False,
                  description="backlog truncation of value iteration (policy=optimal; default "
                              "by load, checked by one larger umax)"),
        Parameter("rtol", PositiveReal(), required=False,
                  description="relative accuracy asked of policy=optimal (default 1e-3): each "
                              "grid stops at a span of rtol/100 of g, umax grows until its "
                              "error is below rtol/3"),
        Parameter("speeds", PositiveVector(), required=False,
                  description="server speeds, m positive reals (default all 1; the load is "
                              "then rho = lam E[X]/sum(speeds)): value iteration with speeds "
                              "for policy=optimal (m <= 3), simulation for the others"),
        Parameter("size_bins", IntegerAtLeast(1), required=False,
                  description=f"also E[T | size bin] for this many equiprobable size bins "
                              f"(1..{MAX_BINS}; edges 0, the j/k quantiles of the size law, "
                              f"inf): outputs size_edges, size_means (E[X | bin], exact), "
                              f"ET_by_size (exact where ET is: size-blind policies "
                              f"size_means + EW, SITA per class; simulated otherwise, "
                              f"with ET_by_size_half_width at size_level = 1 - (1 - level)/k, "
                              f"jointly at level); not with policy=optimal"),
    ),
    solve=solve_dispatch,
    scalar_outputs=lambda r: {"ET": float(getattr(r.values["ET"], "mean", r.values["ET"]))},
    outputs=("ET", "ET_half_width", "EW", "EW_half_width", "P_wait", "P_wait_half_width",
             "loads", "size_edges", "size_means", "ET_by_size", "ET_by_size_half_width",
             "size_level", "notes", "level"),
    allow_infinite=("size_edges",),
    paper="hyytia-righter",
)
