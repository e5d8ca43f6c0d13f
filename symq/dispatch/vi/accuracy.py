r"""Value iteration at the accuracy the model can deliver: grids, truncation and stated error.

The value :math:`g` of the discretised, truncated MDP of Hyytiä & Righter (arXiv 2402.08142,
Part 1) differs from the mean response time of the continuous model by separate
amounts, and :func:`solve_accurate` measures each one instead of solving every grid to a span
of 1e-10:

* **bracket** -- the Odoni brackets :math:`\min(Tv - v) \le g_\delta \le \max(Tv - v)` of the
  grids, propagated through the extrapolation weights.  The coarse grid and the checks stop at
  a span below ``rtol/100`` of :math:`g`, the refinements at :data:`REFINEMENT_SPAN` of
  ``rtol`` (their brackets are the ones stated), so this error stays near a tenth of the
  accuracy asked for.  Each refinement after the first starts from the value of the two grids
  before it extrapolated in the step (:func:`~symq.dispatch.vi.multigrid.extrapolated_start`);
* **extrapolation** -- the discretisation error is :math:`g_\delta = g_0 + c_2\delta^2 +
  c_3\delta^3 + \dots` (the hat kernel is mean-preserving and adds :math:`\delta^2/6` to the
  size variance).  The steps are tried coarse to fine from :data:`STEP_FRACTIONS` of a coarse
  step :math:`d` (:math:`d, 4d/5, 2d/3, d/2`, those that divide :math:`U`).  From the three
  finest grids solved, :math:`\delta_1 > \delta_2 > \delta_3`, come the
  Richardson value of the two finest, :math:`g_0^{(2)} = (\delta_2^2 g_{\delta_3} -
  \delta_3^2 g_{\delta_2})/(\delta_2^2 - \delta_3^2)` (the reported
  :attr:`~DispatchVIEstimate.ET`), and the exact fit of :math:`g_0 + c_2\delta^2 +
  c_3\delta^3` through all three, :math:`g_0^{(3)}`; their difference, the size of the next
  term, is the extrapolation error estimate.  The expansion is clean enough at these steps
  that the close triple :math:`(d, 4d/5, 2d/3)` usually meets the accuracy asked for; when the
  sum of the errors does not, the grid :math:`d/2` is added and the triple
  :math:`(4d/5, 2d/3, d/2)` used (the next term estimated where the expansion is cleanest:
  on the five exact cases that needed four grids, LWL at m = 2, rho = 0.8, 0.9, 0.95 and
  m = 3, rho = 0.6, 0.8, the error over the stated one was 0.65-0.71, against 0.59-0.66 with
  the coarse grid in the triple, whose stated errors were 5-9% larger);
* **truncation** -- the fixed analytic tail beyond :math:`U` (for the optimal policy fitted to
  the coarse grid: :func:`~symq.dispatch.vi.boundary.fit_boundary` :data:`TAIL_REFITS` times in
  turn, then :func:`~symq.dispatch.vi.boundary.accelerated` to the refits' fixed point; the
  other policies keep the equal split's quadratic).  The coarsest grid is solved again
  with the truncations :math:`U + D` and :math:`U + 2D`, :math:`D = \max(4E[X], U/4)`; the
  changes :math:`d_1 = |g(U+D) - g(U)|`, :math:`d_2 = |g(U+2D) - g(U+D)|` decay geometrically
  with the backlog's tail, so the error of :math:`g(U)` is estimated by the geometric sum
  :math:`d_1/(1 - d_2/d_1)` (``2 (d_1 + d_2)`` when they do not decay).  When it exceeds a
  third of the accuracy asked for, :math:`U` is enlarged, the tail fitted again there
  (:data:`REFIT_ON_ENLARGE`) and the check repeated;
* **cap** -- for the optimal policy on three servers or more above :data:`HIGH_LOAD`, the
  grids cap the second-largest backlog at :math:`U_2` (default :math:`\max(U/3, 16 E[X])`,
  :data:`CAP_FRACTION`, :data:`CAP_LEAST`; see
  :meth:`~symq.dispatch.vi.grid.DispatchGrid.build`): the optimal policy keeps one long queue,
  so the cap changes little and removes most states.  It is checked like :math:`U` (caps
  :math:`U_2 + D_2`, :math:`U_2 + 2D_2` on the coarse grid at the final :math:`U`) and raised
  while its estimate exceeds a third of the accuracy asked for.

:attr:`~DispatchVIEstimate.error_estimate` is the sum of the four, and
``tests/dispatch/test_accuracy.py`` checks that it covers the exact values of LWL (Erlang C) and
the equal random split, and a much finer reference computation of the optimal policy.

Examples
--------
>>> from symq.laws import Exponential
>>> r = solve_accurate(2, 0.4, Exponential(1.0), policy="lwl", rtol=1e-3)
>>> exact = 1 / (1 - 0.4 ** 2)                       # M/M/2
>>> bool(abs(r.ET - exact) <= r.error_estimate < 1e-3 * exact)
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.core.parameters import real_value
from symq.core.result import Exactness, ResultBase

from ..sizes import as_sizes
from .boundary import FIT_SPAN_RTOL, TAIL_REFITS, Tail, accelerated, fit_boundary
from .iteration import VIResult
from .lattices import identical_lattice, speeds_lattice
from .multigrid import extrapolated_start
from .planning import (
    _time_limit,
    format_seconds,
    plan_optimal,
    validate_grid,
)
from .speed_passes import (
    check_speed_vector,
)

__all__ = ["DispatchVIEstimate", "solve_accurate", "default_cap", "default_steps",
           "default_truncation"]

#: Coarse lattice step per number of servers (in units of E[X]) at moderate load, and above
#: :data:`HIGH_LOAD`; the grids are d, 4d/5, 2d/3 and, where those do not meet the accuracy, d/2
#: (:data:`STEP_FRACTIONS`).  At high load the iteration counts grow like
#: the mixing time and U must be larger, so the grids are coarser: (0.4, 0.27, 0.2) instead of
#: (0.2, 0.13, 0.1) at m = 2 changes the extrapolated g at rho = 0.9 by less than 1e-4.
COARSE_STEP = {1: 0.2, 2: 0.2, 3: 0.4, 4: 0.5, 5: 0.5, 6: 0.5}
COARSE_STEP_HIGH = {1: 0.4, 2: 0.4, 3: 0.5, 4: 0.5, 5: 0.5, 6: 0.5}
HIGH_LOAD = 0.7
#: Policies :func:`solve_accurate` evaluates (the optimal one, or a fixed one on the grid), with
#: the leading powers of the step in their discretisation error: O(delta^2) where the decision
#: is continuous in the backlogs, O(delta) for JIQ, whose decision jumps at an empty queue
#: (the lattice resolves the probability of an idle server to O(delta) only).
ORDERS = {"optimal": (2, 3), "lwl": (2, 3), "rnd": (2, 3), "jiq": (1, 2)}
#: The lattice steps tried, as fractions of the coarse step ``d``, coarse to fine: the first
#: three always (a fraction whose step does not divide ``U`` is skipped: a given ``U`` that is a
#: multiple of ``2 d`` but not of ``4 d`` runs ``d, 2d/3, d/2``), the next ones only while the
#: stated error exceeds the accuracy asked for.  Measured at m = 2, rho = 0.9 on exact LWL
#: (Erlang C, U = 48): the triple (0.5, 0.4, 1/3) states 2.5e-3 for an error of 1.8e-3, the
#: triple (0.5, 1/3, 0.25) 1.1e-3 for 7.8e-4; at m = 3 the step 1/3 is a third of the work of 1/4.
STEP_FRACTIONS = (1.0, 4 / 5, 2 / 3, 1 / 2)
POLICIES = tuple(ORDERS)
#: The default cap on the second-largest backlog above :data:`HIGH_LOAD` (the optimal policy
#: on three or more identical servers): ``max(CAP_FRACTION U, CAP_LEAST E[X])`` of the initial
#: ``U``, rounded up to the lattice.  Measured at m = 3, rho = 0.9 (step 0.5, U = 48): g moves by
#: 4.9e-5 from the cap 24 to 16 and by 1.5e-3 from 16 to 12; the whole default computation
#: took 57 s at the cap 16 against 147 s at 24 (U/2, the previous default; alternated in one
#: run of ``benchmarks/bench_dispatch_many.py --cap-size``), with values 1.5e-4 apart and
#: stated errors of 2.4e-3 and 2.5e-3.  At rho = 0.8 (U = 32) the cap 12 (a stated cap error
#: of 4.7e-5, ET 2.2e-5 from the cap 16's) saved little (9 s against 11 s), whence the floor.
CAP_FRACTION = 1 / 3
CAP_LEAST = 16.0
#: Whether the tail is fitted again (with its refits, accelerated) when the truncation grows: a
#: tail fitted at U over-penalises the long queue further out, so g(U) then converges slowly
#: in U.  At m = 3, rho = 0.9 the default computation stops at U = 60 instead of 76 (44 s against
#: 63 s with the previous quadratic tail; ``benchmarks/bench_dispatch_many.py --tail``).
REFIT_ON_ENLARGE = True


def default_truncation(m: int, rho: float) -> float:
    """Backlog truncation ``U`` in units of ``E[X]`` before the check: larger at high load.

    At high load the optimal policy keeps one long queue (Hyytiä & Righter, Part 2), so it
    needs a much larger ``U`` than LWL; more servers at the same per-server load keep shorter
    backlogs.  With five and six servers at load 0.5 or less the start is ``8``: the check
    enlarges it where needed, and the check's largest grid (``U + 2D``) is then 16 instead of
    20: at six servers 2.8e6 states instead of 9.4e6 (108 s instead of 333 s at rho = 0.4).
    At m = 5, rho = 0.4, rtol 1e-4 the truncation error at ``U = 8`` is 1.5e-5, and ET is 2e-5
    from the value at ``U = 12``.
    """
    if rho <= 0.5:
        return 16.0 if m <= 2 else 12.0 if m <= 4 else 8.0
    if rho <= 0.8:
        return 48.0 if m <= 2 else 32.0
    return 64.0 if m <= 2 else 48.0


def default_cap(U: float, unit: float, step: float) -> float | None:
    """The default cap on the second-largest backlog at high load: ``max(U/3, 16 unit)``
    (:data:`CAP_FRACTION`, :data:`CAP_LEAST`; ``unit`` is ``E[X]``) rounded up to a multiple
    of ``4 step``, or None (no cap) where that reaches ``U``."""
    cap = _multiple(max(CAP_FRACTION * U, CAP_LEAST * unit), 4 * step)
    return None if cap >= U else cap


def default_steps(m: int, rho: float, coarse: float | None = None) -> tuple[float, ...]:
    """The lattice steps :data:`STEP_FRACTIONS` of ``d``, ``d`` from :data:`COARSE_STEP` (or
    :data:`COARSE_STEP_HIGH` above :data:`HIGH_LOAD`) unless ``coarse`` is given."""
    table = COARSE_STEP_HIGH if rho > HIGH_LOAD else COARSE_STEP
    d = table[m] if coarse is None else float(coarse)
    return tuple(d * f for f in STEP_FRACTIONS)


def _extrapolate(deltas: tuple[float, float, float], results: tuple[VIResult, ...],
                 powers: tuple[int, ...]) -> tuple[float, float, float]:
    """``(g2, bracket, extrapolation)`` of three grids, coarse first: the Richardson value of
    the two finest in the leading power, the Odoni brackets through its weights, and its
    distance from the exact fit through all three (see the module docstring)."""
    w2 = _weights(deltas[1:], powers[:1])
    g2 = float(w2 @ np.array([r.ET for r in results[1:]]))
    g3 = float(_weights(deltas, powers) @ np.array([r.ET for r in results]))
    bracket = float(sum(abs(w) * (r.ET_high - r.ET_low) for w, r in zip(w2, results[1:])))
    return g2, bracket, abs(g3 - g2)


def _divides(step: float, top_u: float) -> bool:
    """Whether ``top_u`` is a whole number of ``step``."""
    n = round(top_u / step)
    return abs(n * step - top_u) <= 1e-9 * top_u


def _multiple(x: float, step: float) -> float:
    """``x`` rounded up to a multiple of ``step``."""
    n = math.ceil(x / step - 1e-9)
    return round(n * step, 12)


def _tail_sum(first: float, second: float) -> float:
    """Truncation error at ``U`` from the changes ``first = |g(U+D) - g(U)|`` and
    ``second = |g(U+2D) - g(U+D)|``: the geometric sum ``first / (1 - r)``, ``r = second /
    first``, when the changes decay; ``2 (first + second)`` when they do not (then they are at
    the level of the iteration's own accuracy or the decay has not set in)."""
    if first > 0 and second < 0.8 * first:
        return first / (1 - second / first)
    return 2 * (first + second)


def _weights(deltas: tuple[float, ...], powers: tuple[int, ...]) -> np.ndarray:
    """Weights ``w`` with ``sum w_i g(delta_i) = g_0`` for ``g = g_0 + sum_p c_p delta^p``."""
    V = np.array([[1.0] + [d ** p for p in powers] for d in deltas])
    e = np.zeros(len(deltas))
    e[0] = 1.0
    return np.linalg.solve(V.T, e)


@dataclass(frozen=True)
class DispatchVIEstimate(ResultBase):
    r"""Mean response time from value iteration with its separate errors.

    Attributes
    ----------
    ET : float
        Richardson value :math:`g_0^{(2)}` of the two finest grids solved.
    error_estimate : float
        The stated uncertainty of :attr:`ET`: ``bracket + extrapolation + truncation + cap``.
    bracket : float
        Width of the Odoni brackets propagated through the extrapolation (the discretised
        MDPs only).
    extrapolation : float
        :math:`|g_0^{(3)} - g_0^{(2)}|`, the estimated error of the extrapolation in the step.
    truncation : float
        The geometric estimate from :math:`g(U), g(U+D), g(U+2D)` on the coarsest grid.
    cap : float
        The same estimate for the cap :attr:`U2` on the second-largest backlog (0 without
        a cap).
    U2 : float or None
        The final cap on the second-largest backlog (``m >= 3``, optimal policy), or None.
    policy : str
    m : int
    rho : float
    U : float
        Final truncation.
    deltas : tuple of float
        The three steps of the extrapolation: the three finest solved.
    grids : list of dict
        ``role`` (``coarse``; for the optimal policy on identical servers ``coarse, for the
        tail fit`` and ``coarse, fitted tail`` instead, :mod:`~symq.dispatch.vi.boundary`;
        ``truncation check``, ``cap check``, ``refinement``: the steps of
        :data:`STEP_FRACTIONS` after the coarse one, as many as the accuracy needed),
        ``delta``, ``U``, ``U2`` (the cap, or None), ``g``,
        ``g_bracket_discrete``, ``iterations`` (sweeps of all the grids behind it, the
        correction grid's included), ``seconds`` and ``tail`` (curvature, slope)
        per grid solved, in order.
    meets_rtol : bool
        Whether ``error_estimate <= rtol * ET``.
    fine : VIResult
        The finest grid solved (its value, decisions and look-up table).
    seconds : float
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "error_estimate", "policy", "m", "rho")
    uncertainty: ClassVar[Mapping[str, str]] = {"ET": "error_estimate"}

    ET: float
    error_estimate: float
    bracket: float
    extrapolation: float
    truncation: float
    policy: str
    m: int
    rho: float
    U: float
    deltas: tuple[float, ...]
    grids: list[dict[str, Any]] = field(repr=False)
    meets_rtol: bool
    fine: VIResult = field(repr=False)
    seconds: float = 0.0
    cap: float = 0.0
    U2: float | None = None
    method: str = ("value iteration on three or four grids, Richardson extrapolation, "
                   "truncation check")
    exactness: Exactness = Exactness.NUMERIC

    @property
    def error_parts(self) -> dict[str, float]:
        """The errors by name (their sum is :attr:`error_estimate`)."""
        return {"bracket": self.bracket, "extrapolation": self.extrapolation,
                "truncation": self.truncation, "cap": self.cap}


#: Smallest relative accuracy :func:`solve_accurate` accepts (its grids stop at rtol/100).
RTOL_MIN = 1e-10
#: Span of the refinement grids as a fraction of ``rtol g`` (the coarse grid and the checks
#: stop at ``rtol/100``): their brackets enter the stated error through the extrapolation
#: weights (about 3.6 for the steps 1/3, 1/4), so this keeps the bracket near a tenth of the
#: accuracy asked for.  Measured at m = 3, rho = 0.9 on the step 1/3: 404 sweeps against 550
#: at rtol/100, and no fewer at rtol/10.
REFINEMENT_SPAN = 1 / 30
#: ``solve``'s default ``at_cap`` inside :func:`solve_accurate`: the current cap.
_CAP = object()


def _defaults_refused(exc: ResourceLimit, m: int, rho: float, d1: float, U: float,
                      unit: float, u_min: float, nm: Mapping[str, str],
                      typed: Mapping[str, bool],
                      fits: Callable[[float, float], bool]) -> ResourceLimit:
    """``exc`` (which blames a grid parameter the user did not give) restated for the load.

    The step and the truncation the user did not give are defaults chosen from ``m`` and
    ``rho``; the message says so and names only changes that would fit (``fits(step, U)``).
    """
    chosen = [f"{nm['delta']}={d1:g}" if not typed[nm["delta"]] else "",
              f"{nm['U']}={U:g}" if not typed[nm["U"]] else ""]
    chosen = " and ".join(c for c in chosen if c)
    options = [f"lower {nm['rho']} or m"]
    coarsest = 0.5 * unit
    if not typed[nm["delta"]] and d1 < coarsest and fits(coarsest, U):
        options.append(f"give a coarser {nm['delta']}= (at most E[X]/2 = {coarsest:g})")
    least = math.ceil(u_min / (2 * d1)) * 2 * d1
    if not typed[nm["U"]] and least < U and fits(d1, least):
        options.append(f"give a smaller {nm['U']}= (at least {least:g} for this load)")
    return ResourceLimit(
        nm["rho"], rho, f"{exc.needed}; the defaults {chosen} are chosen for m={m}, "
        f"{nm['rho']}={rho:g}",
        "lower for value iteration to fit: " + ", or ".join(options))


def solve_accurate(m: int, rho: float, sizes: Any, *, policy: str = "optimal",
                   rtol: float = 1e-3, coarse: float | None = None, U: float | None = None,
                   method: str = "vi", max_enlarge: int = 3, progress: bool = False,
                   names: dict[str, str] | None = None,
                   speeds: Any = None, coarse_correction: bool = True,
                   U2: float | None = None) -> DispatchVIEstimate:
    r"""Mean response time of the optimal (or a fixed) policy with a measured error.

    Parameters
    ----------
    m : int
        Servers, 1 to 6 (1 to 3 with ``speeds``).
    rho : float
        Per-server load in (0, 1); with ``speeds``, :math:`\lambda E[X]/\sum_i s_i`.
    sizes : job-size law
        As in :func:`~symq.dispatch.vi.solvers.solve_optimal`.
    policy : {"optimal", "lwl", "rnd", "jiq"}
        The optimal policy, or a fixed one evaluated on the same grids (calibration); with
        ``speeds``, ``"lwl"`` is least finishing time and ``"rnd"`` the split in proportion
        to speeds (:func:`~symq.dispatch.vi.speed_solvers.evaluate_policy_speeds`), and ``"jiq"`` is
        not available.
    rtol : float
        Relative accuracy asked for: the span of each grid is stopped at ``rtol/100`` of ``g``
        and the truncation is enlarged until its estimate is below ``rtol/3`` of ``g``; a finer
        grid is added while the sum of the errors exceeds ``rtol`` of ``g`` and a step
        of :data:`STEP_FRACTIONS` is left.  :attr:`~DispatchVIEstimate.meets_rtol` says whether
        the sum met ``rtol``.
    coarse : float, optional
        The coarsest step ``d`` (grids :data:`STEP_FRACTIONS` of it); default
        :func:`default_steps` times ``E[X]`` (times ``E[X]/min(speeds)``, in time units, with
        ``speeds``).
    U : float, optional
        Truncation; default :func:`default_truncation` times the same unit (at least the
        minimum of :func:`~symq.dispatch.vi.planning.min_truncation`, or of
        :func:`~symq.dispatch.vi.speed_passes.min_truncation_speeds`).  A given ``U`` is checked
        but not enlarged.
    method : {"vi", "pi"}
        Value or policy iteration for the optimal policy (``"vi"`` only with ``speeds``).
    max_enlarge : int
        Enlargements of ``U`` allowed; an enlargement whose grids would not fit in memory or
        in the time limit is not made (the truncation estimate of the last ``U`` is reported
        and :attr:`~DispatchVIEstimate.meets_rtol` says whether ``rtol`` was met).
    names : dict, optional
        Names the user typed (``{"U": "umax", "delta": "delta"}``) for the error messages.
    speeds : sequence of m positive reals, optional
        Server speeds (:mod:`symq.dispatch.vi.speed_solvers`: the full time lattice, ``m <= 3``);
        default identical unit-speed servers (the sorted grids).
    U2 : float, optional
        Cap on the second-largest backlog (the optimal policy on ``m >= 3`` identical
        servers; :meth:`~symq.dispatch.vi.grid.DispatchGrid.build`): default a third of the
        initial ``U``, at least ``16 E[X]`` (:data:`CAP_FRACTION`, :data:`CAP_LEAST`), above
        :data:`HIGH_LOAD` (the optimal policy keeps one long queue), no cap otherwise.  It is
        checked like ``U``: the coarse grid solved again with the caps
        ``U2 + D2`` and ``U2 + 2 D2`` (at most ``U``, where there is no cap), the geometric
        estimate added to the stated error as ``cap``, and a default cap raised while that
        exceeds a third of ``rtol``.  ``U2 = U`` turns the cap off.
    coarse_correction : bool
        Correct each grid's iterate from the grid of twice its step
        (:mod:`~symq.dispatch.vi.coarse_correction`; identical servers): the same values and
        brackets, fewer sweeps; ``False`` runs plain value iteration (for comparison).

    Returns
    -------
    DispatchVIEstimate

    Raises
    ------
    InvalidParameter, ResourceLimit, StabilityError, NotConverged
    """
    t0 = time.perf_counter()
    law = as_sizes(sizes)
    key = str(policy).lower()
    if key not in POLICIES:
        raise InvalidParameter("policy", policy, "one of " + ", ".join(POLICIES))
    # each grid stops at an Odoni span of rtol/100 of g, which double precision resolves only
    # to about 1e-13 relative: a smaller rtol would iterate to max_iter and fail
    rtol = real_value("rtol", rtol, f"a real number in [{RTOL_MIN:g}, 0.1] (value iteration "
                      "in double precision resolves g to about 1e-13)",
                      lambda r: RTOL_MIN <= r <= 0.1)
    nm = {"U": "U", "delta": "delta", "rho": "rho", **(names or {})}
    blame = "U" if U is not None and coarse is None else "delta"
    if speeds is None:
        if not (isinstance(m, int) and m in COARSE_STEP):    # names m and its domain
            validate_grid(m, rho, law, 0.1 * float(law.mean()), 1e3 * float(law.mean()),
                          names=names)
        lattice = identical_lattice(m, rho, law, key, method, progress, names, blame,
                             bool(coarse_correction))
    else:
        spd = check_speed_vector(speeds)
        if spd.size != m:
            raise InvalidParameter("m", m, f"{spd.size}, the number of speeds given "
                                   f"({', '.join(f'{x:g}' for x in spd)})")
        if key == "jiq" or method != "vi":
            raise InvalidParameter("policy" if key == "jiq" else "method",
                                   key if key == "jiq" else method,
                                   "optimal, lwl or rnd by value iteration with speeds")
        lattice = speeds_lattice(spd, rho, law, key, progress, nm, blame)
    unit = lattice.unit
    steps = tuple(d * unit for d in default_steps(m, rho, None if coarse is None
                                                  else coarse / unit))
    d1 = steps[0]
    if speeds is None:
        # a probe of the step (a truncation the user did not give: at least the load's least)
        probe_u = max(1e3 * max(float(law.mean()), d1), lattice.u_min)
        try:
            validate_grid(m, rho, law, d1, probe_u, names=names)
        except InvalidParameter as exc:
            if exc.name != nm["U"] or coarse is None:
                raise
            raise InvalidParameter(nm["delta"], coarse, f"a step >= {probe_u / 2.0 ** 40:.3g}",
                                   f"{nm['U']}/{nm['delta']} grid steps per server would not "
                                   "fit in any memory") from None
    top = U is None
    if U is None:
        U = _multiple(max(default_truncation(m, rho) * unit, lattice.u_min), 4 * d1)
    else:                  # a given U: validated here, sized below (huge values, multiples)
        U = real_value(nm["U"], U, "a finite real number > 0", lambda u: 0 < u < math.inf)

    cap_name = nm.get("U2", "U2")
    cap: float | None = None
    if U2 is not None:
        if not lattice.caps:
            raise InvalidParameter(cap_name, U2, "None (a cap on the second-largest backlog "
                                   "is for the optimal policy on three or more identical "
                                   "servers, by value iteration)")
        cap = real_value(cap_name, U2, f"a real number in (0, {nm['U']}={U:g}]",
                         lambda x: 0 < x <= U * (1 + 1e-12))
        if not _divides(2 * d1, cap):
            raise InvalidParameter(cap_name, U2, f"a multiple of 2 {nm['delta']} = {2 * d1:g}")
        cap = None if cap >= U else cap
    elif lattice.caps and rho > HIGH_LOAD:
        cap = default_cap(U, unit, d1)

    if not top and speeds is None:     # a given U sized first, with the grids' cap
        plan_optimal(m, rho, law, d1, U, levels=2, names=names, table=method == "pi",
                     blame="U" if coarse is None else "delta", U2=cap)
    if not _divides(2 * d1, U):
        raise InvalidParameter(nm["U"], U, f"a multiple of 2 {nm['delta']} = {2 * d1:g}",
                               f"the grids {nm['delta']}, 2/3 and 1/2 of it must all divide "
                               f"{nm['U']}")

    def truncation_step(top_u: float) -> float:
        return _multiple(max(4 * unit, top_u / 4), 4 * d1)   # keeps the steps dividing U

    def plan(top_u: float, step1: float | None = None) -> None:
        """Refuse before allocating: memory of the largest grids, time of all the grids
        (every step of the sequence counted, as if the finest were needed)."""
        c1 = d1 if step1 is None else step1
        step = truncation_step(top_u)
        lattice.check(c1, top_u, top_u + 2 * step, cap)
        planned = [(c1, top_u), (c1, top_u + step), (c1, top_u + 2 * step)]
        planned += [(c1 * d / d1, top_u) for d in steps[1:] if _divides(c1 * d / d1, top_u)]
        seconds = sum(lattice.seconds(d, u, cap) for d, u in planned)
        if lattice.fits_tail:            # the refits of the tail (warm: an overestimate)
            seconds += TAIL_REFITS * lattice.seconds(c1, top_u, cap)
        allowed = _time_limit()
        if seconds > allowed:
            raise ResourceLimit(
                nm[blame], d1 if blame == "delta" else top_u,
                f"about {format_seconds(seconds)} of value iteration on its {len(planned)} grids "
                f"(refused beyond {format_seconds(allowed)}; "
                f"{nm['U']}={top_u:g} at {nm['rho']}={rho:g})",
                f"{'coarser' if blame == 'delta' else 'smaller'}, or a lower load")

    try:
        plan(U)
    except ResourceLimit as exc:
        typed = {nm["delta"]: coarse is not None, nm["U"]: not top}
        if typed.get(exc.name, True):
            raise

        def fits(step1: float, top_u: float) -> bool:
            try:
                plan(top_u, step1)
            except (ResourceLimit, InvalidParameter):
                return False
            return True

        raise _defaults_refused(exc, m, rho, d1, U, unit, lattice.u_min, nm, typed,
                                fits) from None
    grids: list[dict[str, Any]] = []

    tail: Tail | None = None

    def solve(delta: float, top_u: float, warm: VIResult | None, role: str,
              span_rtol: float | None = None, *, at_cap: Any = _CAP) -> VIResult:
        """One grid; ``at_cap``: another cap than the current one (None: no cap)."""
        grid_cap = cap if at_cap is _CAP else at_cap
        start = time.perf_counter()
        r = lattice.solve(delta, top_u, warm, rtol / 100 if span_rtol is None else span_rtol,
                          tail, grid_cap)
        grids.append({"role": role, "delta": delta, "U": top_u, "U2": grid_cap, "g": r.ET,
                      "g_bracket_discrete": [r.ET_low, r.ET_high],
                      "iterations": r.total_iterations,
                      "seconds": time.perf_counter() - start,
                      "tail": [r.c_M, r.tail_slope]})
        return r

    # the solves that only feed the fit stop at a looser span (the fit reads the shape of
    # v along one axis, which a span of FIT_SPAN_RTOL g resolves: the same tail to 1e-4)
    fit_span = max(FIT_SPAN_RTOL, rtol / 100)

    def fitted(top_u: float, first: VIResult) -> VIResult:
        """The tail fitted at ``top_u`` to ``first`` (a solve there) and refitted
        (:data:`TAIL_REFITS` fits, accelerated), and the coarse grid solved with it."""
        nonlocal tail
        fits: list[Tail] = []
        r = first
        for refit in range(TAIL_REFITS):
            fits.append(fit_boundary(r))
            tail = fits[-1]
            if refit < TAIL_REFITS - 1:
                r = solve(d1, top_u, r, "coarse, for the tail fit", fit_span)
        tail = accelerated(fits, top_u)      # the refits' fixed point
        return solve(d1, top_u, r, "coarse, fitted tail")

    if lattice.fits_tail:       # the tail beyond U fitted to the solution, then fixed
        coarse_r = fitted(U, solve(d1, U, None, "coarse, for the tail fit", fit_span))
    else:
        coarse_r = solve(d1, U, None, "coarse")
    truncation = math.inf
    for attempt in range(max_enlarge + 1):
        step_u = truncation_step(U)
        once = solve(d1, U + step_u, coarse_r, "truncation check")
        twice = solve(d1, U + 2 * step_u, once, "truncation check")
        truncation = _tail_sum(abs(once.ET - coarse_r.ET), abs(twice.ET - once.ET))
        if truncation <= rtol * abs(coarse_r.ET) / 3 or not top or attempt == max_enlarge:
            break
        try:
            plan(U + step_u)
        except ResourceLimit:   # the larger U does not fit: keep this one, its error stated
            break
        U, coarse_r = U + step_u, once
        if lattice.fits_tail and REFIT_ON_ENLARGE:
            coarse_r = fitted(U, once)
    # the cap on the second-largest backlog, checked like U at the final U
    cap_error = 0.0
    for attempt in range(max_enlarge + 1):
        if cap is None:
            break
        step2 = _multiple(max(4 * unit, cap / 4), 4 * d1)
        # the raised caps, None where they reach U (no cap)
        c1, c2 = (c if c < U else None for c in (cap + step2, cap + 2 * step2))
        once = solve(d1, U, coarse_r, "cap check", at_cap=c1)
        twice_g = once.ET if c1 is None else solve(d1, U, once, "cap check", at_cap=c2).ET
        cap_error = _tail_sum(abs(once.ET - coarse_r.ET), abs(twice_g - once.ET))
        if cap_error <= rtol * abs(coarse_r.ET) / 3 or U2 is not None \
                or attempt == max_enlarge:
            break
        cap, coarse_r = c1, once
        if cap is None:
            cap_error = 0.0
    # refinements coarse to fine until the errors meet rtol (the first two always)
    finer = [d for d in steps[1:] if _divides(d, U) and (cap is None or _divides(d, cap))]
    solved, used = [coarse_r], [d1]
    powers = ORDERS[key]
    for delta in finer:
        warm = extrapolated_start(solved[-2], solved[-1], delta, powers[0]) \
            if len(solved) >= 2 else solved[-1]
        solved.append(solve(delta, U, warm, "refinement", rtol * REFINEMENT_SPAN))
        used.append(delta)
        if len(solved) < 3:
            continue
        deltas = (used[-3], used[-2], used[-1])
        g2, bracket, extrapolation = _extrapolate(deltas, tuple(solved[-3:]), powers)
        total = bracket + extrapolation + truncation + cap_error
        if total <= rtol * abs(g2):
            break
    fine = solved[-1]
    return DispatchVIEstimate(
        ET=g2, error_estimate=total, bracket=bracket, extrapolation=extrapolation,
        truncation=truncation, cap=cap_error, U2=cap, policy=key, m=m, rho=float(rho), U=U,
        deltas=deltas,
        grids=grids, meets_rtol=total <= rtol * abs(g2), fine=fine,
        seconds=time.perf_counter() - t0)
