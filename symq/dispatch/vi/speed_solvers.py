r"""Value iteration for size-aware dispatching to servers of different speeds (``m = 1, 2, 3``).

:func:`solve_optimal_speeds` computes the optimal policy and :func:`evaluate_policy_speeds` the
value of the split in proportion to speeds (``"rnd"``) or of least finishing time (``"lwl"``);
:func:`decisions_speeds` and :func:`costs_speeds` read the decision off a result.  The lattice
and the numba passes are in :mod:`symq.dispatch.vi.speed_passes`.

Model
-----
The model of Hyytiä & Righter (arXiv 2402.08142, Part 1: Poisson arrivals of rate
:math:`\lambda`, i.i.d. sizes known at dispatch, FCFS servers, cost = response time per job),
with server :math:`i` of speed :math:`s_i > 0` as in the simulator
(:mod:`symq.dispatch.policies.speeds`): a backlog of work :math:`b_i` drains at rate :math:`s_i`, a
job of size :math:`x` sent to server :math:`i` leaves after :math:`(b_i + x)/s_i`, and the load is
:math:`\rho = \lambda E[X]/\sum_i s_i`, i.e. :math:`\lambda = \rho \sum_i s_i / E[X]`
(:func:`~symq.dispatch.policies.speeds.arrival_rate`).

Every backlog is measured in TIME: :math:`u_i = b_i/s_i`, the time until server :math:`i` is
empty.  Between arrivals :math:`b_i` falls at rate :math:`s_i`, so :math:`u_i` falls at rate 1
(clipped at 0) whatever the speed: after an interarrival time :math:`A` the state is
:math:`(u - A\mathbf 1)^+`, exactly as for unit speeds.  A job of size :math:`x` sent to server
:math:`i` waits :math:`u_i`, is served for :math:`x/s_i`, so its response time is
:math:`u_i + x/s_i` and the state moves to :math:`u + (x/s_i) e_i`.  With :math:`v` the
relative value just after a dispatch and :math:`w` the one at an arrival,

.. math::

    w(u) = E_X\Bigl[\min_i \bigl\{u_i + X/s_i + v(u + (X/s_i) e_i)\bigr\}\Bigr] - g, \qquad
    v(u) = E_A\bigl[w((u - A\mathbf 1)^+)\bigr], \qquad v(0) = 0,

:math:`A \sim \mathrm{Exp}(\lambda)`, and :math:`g` is the optimal mean response time.  A fixed
policy replaces the min by its choice: the split with probabilities :math:`s_i/\sum s`
(``"rnd"``: the expectation over the split) or least finishing time
:math:`\arg\min_i\{u_i + x/s_i\}` (``"lwl"``, ties to the lower index).

Tail beyond ``U``.  Under the split in proportion to speeds server :math:`i` is an M/G/1 queue
of rate :math:`\lambda_i = \lambda s_i/\sum s` with service times :math:`X/s_i`, hence load
:math:`\lambda_i E[X]/s_i = \rho`.  The relative value of an M/G/1 FCFS queue of backlog
:math:`u` (in time units) is :math:`\lambda_i u^2/(2(1-\rho))` (Hyytiä, Penttinen & Aalto,
EJOR 2012, the value function of M/G/1), so beyond ``U`` the value continues by the fixed
analytic tail, component by component,

.. math::

    v(U + r, y) = v(U, y) + c_i\bigl((U + r)^2 - U^2\bigr), \qquad
    c_i = \frac{\lambda_i}{2(1-\rho)},

exact for that split and the same per-server curvature for every policy.

Discretisation
--------------
* Time lattice :math:`u \in \{0, \delta, \dots, N\delta\}^m`, :math:`U = N\delta`, the full
  lattice in server order (no symmetry: servers of different speeds are not exchangeable).
* :math:`E_A` is exactly the diagonal recursion of :mod:`symq.dispatch.vi.passes`: for
  :math:`A < \delta` the point :math:`(u - A\mathbf 1)^+` runs on the segment from :math:`u` to
  :math:`u^- = (u - \delta\mathbf 1)^+` (only the positive components decrease), along which
  :math:`h` is interpolated linearly, and for :math:`A \ge \delta` memorylessness gives
  :math:`q f(u^-)`:

  .. math::

      f(u) = a\,h(u) + b\,h(u^-) + q\,f(u^-), \quad q = e^{-\lambda\delta}, \quad
      b = \frac{1 - q(1 + \lambda\delta)}{\lambda\delta}, \quad a = 1 - q - b,

  with :math:`f(0) = h(0)`.  For ``m = 3`` each face (some :math:`u_i = 0`) recurses along its
  positive components, which is the componentwise :math:`(\cdot)^+` of the predecessor.
* Sizes: the mean-preserving hat atoms :math:`p_k` (:func:`~symq.dispatch.vi.grid.hat_atoms`) on
  the size lattice :math:`k\eta`, :math:`\eta = \delta s_{\min}`.  On server :math:`i` the atom
  takes the time :math:`k\eta/s_i = r_{ik}\delta`, :math:`r_{ik} = k s_{\min}/s_i`: the size law
  is resolved in time units by :math:`\eta/s_i \le \delta` on every server (never coarser than
  the state lattice), the slowest server's increments fall on the lattice, and for equal speeds
  the scheme is the unit-speed scheme exactly (below).  A finer size lattice would cost atoms
  without improving the :math:`O(\delta^2)` state interpolation; a coarser one (``delta *
  s_max``) would resolve the slow servers' service times more coarsely than their backlogs.
* :math:`v(u + r_{ik}\delta e_i)` falls between lattice points: it is interpolated linearly
  along axis :math:`i` (error :math:`w(1-w)\delta^2 v''/2`, :math:`O(\delta^2)` like the
  :math:`\eta^2/6` the hat kernel adds to the size variance); beyond ``U`` the tail is exact at
  the fractional target.  The fractions :math:`w_{ik}` depend on :math:`k` and the speed
  ratios only, so the error is :math:`O(\delta^2)` with a fixed coefficient and Richardson
  extrapolation in :math:`\delta` (:func:`~symq.dispatch.vi.multigrid.richardson`) applies.
* Least finishing time switches server at the size :math:`x^*` where finishing times tie,
  and its cost jumps there.  With :math:`\eta = \delta s_{\min}` that size often falls on an
  atom (:math:`x^* = 2(u_1 - u_2)` for speeds ``(2, 1)``); resolving the whole atom to one
  side would be an :math:`O(\delta)` error, so the atom is split: the half of its hat below
  :math:`x^*` goes to the slowest tied server, the half above to the fastest (at ``k = 0``,
  all of it to the fastest; equal speeds: the lower index).  The error stays
  :math:`O(\delta^2)` (successive differences in :math:`\delta` shrink by 4).
* Relative VI :math:`v \leftarrow Tv - (Tv)(0)` with the Odoni bounds
  :math:`\min(Tv - v) \le g \le \max(Tv - v)` (valid for any iterate) and Anderson mixing
  (memory 3) of the relative steps, as in :mod:`symq.dispatch.vi.iteration`; stop when the span
  is below ``tol``.  Coarse grids ``2 delta, 4 delta, ...`` (at least 30 steps) warm-start the
  fine one.

Equal speeds and time scaling.  With all speeds equal to :math:`c` and the same :math:`\rho`
and sizes, :math:`\lambda = \rho m c/E[X]`.  Measuring time in units of :math:`1/c`
(:math:`t' = ct`) turns the arrival rate into :math:`\rho m/E[X]` and the service time
:math:`x/c` of a job into :math:`x`: it is the unit-speed system with the same sizes and load,
and every response time is multiplied by :math:`c`, so :math:`g_c = g_1/c`.  The discrete
scheme obeys the same identity exactly: at step :math:`\delta` the speeds-``c`` grid has the
atoms of step :math:`\eta = c\delta`, increments :math:`r_{ik} = k` (on the lattice),
:math:`q = e^{-\lambda\delta} = e^{-(\lambda/c)(c\delta)}`, costs :math:`c` times smaller and
tail curvatures :math:`c_i = c \cdot c_M(\lambda/c)`, i.e. it is the unit-speed grid of step
:math:`c\delta` and truncation :math:`cU` with values divided by :math:`c`:
:math:`g_c(\delta, U) = g_1(c\delta, cU)/c`.

Performance, measured on two cores shared with other work (optimal policy, Exp(1) sizes,
``tol = 1e-9``, coarse levels included): ``m = 2``, speeds ``(2, 1)``, :math:`\rho = 0.6`,
``U = 12``: ``delta = 0.2`` (3 721 states x 117 atoms) 0.7 s, ``0.1`` (14 641 x 232) 1.8 s,
``0.05`` (58 081 x 462) 7.4 s; :math:`\rho = 0.9`, ``U = 48``: ``delta = 0.2`` 42 s (917
iterations after 579 on ``0.4``), ``0.1`` 205 s.  ``m = 3``, speeds ``(3, 1, 1)``,
:math:`\rho = 0.5`, ``U = 8``: ``delta = 0.5`` (4 913 x 48) 0.5 s, ``0.25`` (35 937 x 94)
3.9 s, ``0.125`` (274 625 x 186) 39 s.  About 2-3 ns per (state, atom, server).  Anderson
mixing cuts the iterations 2.8-fold at :math:`\rho = 0.6` (115 vs 324 plain relative-VI
steps, ``delta = 0.1``) and 6.4-fold at :math:`\rho = 0.9` (1 263 vs 8 053, ``delta = 0.2``).

Examples
--------
One server of speed 2 is M/M/1 of service rate 2: :math:`E[T] = 1/(2 - \lambda)`,
:math:`\lambda = 2\rho`:

>>> from symq.laws import Exponential
>>> r = evaluate_policy_speeds("rnd", [2.0], 0.5, Exponential(1.0), delta=0.05, U=10.0)
>>> abs(r.ET - 1 / (2 - 1.0)) < 1e-2
True
>>> r2 = solve_optimal_speeds([2.0, 1.0], 0.5, Exponential(1.0), delta=0.25, U=12.0, tol=1e-8)
>>> int(decisions_speeds(r2, [2.0, 1.0], [0.0, 0.0], 0.01))     # a tiny job: the fast server
0
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value

from ..sizes import as_sizes
from .iteration import VIResult, _FlatLayout, _relative_iteration
from .multigrid import _coarse_levels
from .speed_passes import (
    MODE_LWL,
    MODE_OPT,
    MODE_RND,
    SpeedGrid,
    _SpeedOperator,
    check_speed_vector,
)

__all__ = ["solve_optimal_speeds", "evaluate_policy_speeds", "decisions_speeds",
           "costs_speeds"]

_POLICIES = {"rnd": MODE_RND, "lwl": MODE_LWL}


def _run(grid: SpeedGrid, mode: int, v0: NDArray[np.float64] | None, tol: float,
         max_iter: int, label: str, progress: bool
         ) -> tuple[NDArray[np.float64], float, float, float, int, float]:
    """Relative VI (:func:`symq.dispatch.vi.iteration._relative_iteration`: Odoni bounds,
    Anderson mixing) of the full-lattice operator of ``grid`` on its padded 3-d arrays;
    returns ``(v, g, g_low, g_high, iterations, span)``."""
    return _relative_iteration(_SpeedOperator(grid, mode), _FlatLayout(grid.shape3()), v0, tol,
                               None, None, max_iter, progress, label, delta=grid.delta)


def _result(grid: SpeedGrid, v: NDArray[np.float64], g: float, lo: float, hi: float, it: int,
            span: float, policy: str, **extra: Any) -> VIResult:
    return VIResult(ET=g, ET_low=lo, ET_high=hi, v=v.reshape((grid.N + 1,) * grid.m),
                    delta=grid.delta, U=grid.U, m=grid.m, lam=grid.lam, rho=grid.rho,
                    iterations=it, residual=span, policy=policy,
                    c_M=float(grid.curvatures.mean()), symmetric=False,
                    curvatures=grid.curvatures.copy(), **extra)


def _warm(prev: VIResult, grid: SpeedGrid) -> NDArray[np.float64]:
    """``prev``'s value (per-server tails beyond its ``U``) at the lattice points of ``grid``."""
    if not isinstance(prev, VIResult) or prev.m != grid.m:
        raise InvalidParameter("warm_start", f"<VIResult of m={prev.m}>"
                               if isinstance(prev, VIResult) else type(prev).__name__,
                               f"a VIResult of the same {grid.m} server(s)")
    return prev.value(grid.points())


def _solve(mode: int, policy: str, speeds: ArrayLike, rho: float, sizes: Any, delta: float,
           U: float, tol: float, max_iter: int, warm_start: VIResult | None, multigrid: bool,
           coarse_tol: float, progress: bool) -> VIResult:
    t0 = time.perf_counter()
    sizes = as_sizes(sizes)
    grid = SpeedGrid.build(speeds, rho, sizes, delta, U)
    tol = real_value("tol", tol, "a real number > 0", lambda t: t > 0)
    max_iter = integer_value("max_iter", max_iter, 1)
    label = f"VI[{policy}, speeds={grid.speeds.tolist()}]"
    prev, levels, total = warm_start, [], 0
    if prev is None and multigrid:
        for d in _coarse_levels(grid.delta, grid.U, grid.mean / float(grid.speeds.min()), 30):
            cg = SpeedGrid.build(grid.speeds, grid.rho, sizes, d, grid.U)
            out = _run(cg, mode, None if prev is None else _warm(prev, cg),
                       max(tol, coarse_tol), max_iter, label, progress)
            total += out[4]
            levels.append((d, out[4], out[1]))
            prev = _result(cg, *out, policy)
    v0 = None if prev is None else _warm(prev, grid)
    v, g, lo, hi, it, sp = _run(grid, mode, v0, tol, max_iter, label, progress)
    levels.append((grid.delta, it, g))
    return _result(grid, v, g, lo, hi, it, sp, policy, total_iterations=total + it,
                   seconds=time.perf_counter() - t0, levels=levels,
                   method="relative value iteration on the full time lattice with speeds "
                          "(Odoni bounds, Anderson mixing)")


_COMMON_DOC = r"""
    speeds : array_like of 1 to 3 positive reals
        Server speeds :math:`s_i` (server ``i`` drains its work at rate ``s_i``), in the order
        of the axes of :attr:`VIResult.v`.
    rho : float
        Load :math:`\lambda E[X]/\sum_i s_i \in (0, 1)`.
    sizes : job-size law
        Converted by :func:`~symq.dispatch.sizes.as_size_law`.
    delta : float
        Step of the time lattice; at most ``E[X]/(2 min(speeds))`` (the size lattice of step
        ``delta * min(speeds)`` needs two steps per mean size) and ``U/8``.
    U : float
        Truncation in time units, a multiple of ``delta``; at least 5 times the larger of the
        slowest server's mean service time and its M/G/1 wait under the split in proportion
        to speeds (check it by enlarging: the optimal policy at high load needs more).
    tol : float
        Stop when the Odoni span ``max(Tv - v) - min(Tv - v) < tol``.
    max_iter : int
        Iteration budget per grid.
    warm_start : VIResult, optional
        Initial iterate (its value interpolated onto this lattice, with its per-server tails);
        disables the coarse levels.
    multigrid : bool
        Warm start from the coarser grids ``2 delta, 4 delta, ...`` (at least 30 steps), each
        solved to ``max(tol, coarse_tol)``.
    coarse_tol : float
        Span at which each coarse level stops.
    progress : bool
        Show a tqdm bar.

    Returns
    -------
    VIResult
        ``symmetric=False``; ``v`` of shape ``(N+1,)*m`` in server order (``v[i, j]`` at time
        backlogs ``(i delta, j delta)``); ``curvatures`` the per-server tails :math:`c_i`, so
        that :meth:`VIResult.value` extends ``v`` beyond ``U`` (``c_M`` is their mean
        :math:`(\lambda/m)/(2(1-\rho))`, the curvature of the identical-server grids); ``lam``
        the arrival rate.  Use :func:`decisions_speeds`, not :meth:`VIResult.decision`, for
        decisions (costs in time units).

    Raises
    ------
    InvalidParameter
        Bad ``speeds`` (or more than 3 of them), ``rho``, ``delta``, ``U``, ``sizes``, ``tol``,
        ``max_iter`` or ``warm_start``; :class:`~symq.core.errors.ResourceLimit` (a subclass)
        when the lattice does not fit in memory.
    StabilityError
        ``rho >= 1``.
    NotConverged
        Iteration budget exhausted (the message gives the last Odoni bounds).
"""


def solve_optimal_speeds(speeds: ArrayLike, rho: float, sizes: Any, delta: float = 0.1,
                         U: float = 24.0, tol: float = 1e-9, max_iter: int = 20000,
                         warm_start: VIResult | None = None, *, multigrid: bool = True,
                         coarse_tol: float = 1e-5, progress: bool = False) -> VIResult:
    r"""Optimal size-aware dispatching to servers of speeds ``speeds`` by relative VI.

    Solves the Bellman equations of :mod:`symq.dispatch.vi.speed_solvers` (Hyytiä & Righter, arXiv
    2402.08142, Part 1, with backlogs in time units) on the full time lattice.

    Parameters
    ----------
    {common}

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> r = solve_optimal_speeds([2.0, 1.0], 0.5, Exponential(1.0), delta=0.25, U=12.0)
    >>> l = evaluate_policy_speeds("lwl", [2.0, 1.0], 0.5, Exponential(1.0), delta=0.25, U=12.0)
    >>> r.ET_high < l.ET_low                       # the optimum beats least finishing time
    True
    """
    return _solve(MODE_OPT, "optimal", speeds, rho, sizes, delta, U, tol, max_iter, warm_start,
                  multigrid, coarse_tol, progress)


def evaluate_policy_speeds(policy: str, speeds: ArrayLike, rho: float, sizes: Any,
                           delta: float = 0.1, U: float = 24.0, tol: float = 1e-9,
                           max_iter: int = 20000, warm_start: VIResult | None = None, *,
                           multigrid: bool = True, coarse_tol: float = 1e-5,
                           progress: bool = False) -> VIResult:
    r"""Mean response time and relative value of a fixed policy with server speeds.

    Parameters
    ----------
    policy : {"rnd", "lwl"}
        ``"rnd"``: server ``i`` with probability :math:`s_i/\sum s` (the expectation over the
        split; every server is then M/G/1 with load :math:`\rho`, Pollaczek-Khinchine per
        server); ``"lwl"``: least finishing time :math:`\arg\min_i\{u_i + x/s_i\}` (ties to
        the lower index), the simulator's ``lwl`` with speeds (a size atom on which its
        threshold falls is split between the two sides: module docstring).
    {common}

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> r = evaluate_policy_speeds("rnd", [1.0], 0.5, Exponential(1.0), delta=0.1, U=12.0)
    >>> abs(r.ET - 2.0) < 1e-2                     # M/M/1: 1/(1 - rho)
    True
    """
    key = str(policy).lower() if isinstance(policy, str) else policy
    if key not in _POLICIES:
        raise InvalidParameter("policy", policy, "'rnd' (split in proportion to speeds) or "
                               "'lwl' (least finishing time)")
    return _solve(_POLICIES[key], key, speeds, rho, sizes, delta, U, tol, max_iter, warm_start,
                  multigrid, coarse_tol, progress)


solve_optimal_speeds.__doc__ = solve_optimal_speeds.__doc__.replace(
    "{common}", _COMMON_DOC.strip("\n").lstrip())
evaluate_policy_speeds.__doc__ = evaluate_policy_speeds.__doc__.replace(
    "{common}", _COMMON_DOC.strip("\n").lstrip())


def costs_speeds(result: VIResult, speeds: ArrayLike, u: ArrayLike,
                 x: ArrayLike) -> NDArray[np.float64]:
    r"""Cost :math:`u_i + x/s_i + v(u + (x/s_i) e_i)` of each server, shape ``(..., m)``.

    ``u`` (shape ``(..., m)``, server order) are backlogs in TIME units (the time until each
    server is empty), ``x`` sizes (work), broadcast against ``u[..., 0]``; ``v`` is
    ``result``'s value (:meth:`VIResult.value`, with its per-server tails beyond ``U``).
    """
    s = check_speed_vector(speeds)
    if not isinstance(result, VIResult) or result.m != s.size:
        shown = f"<VIResult of m={result.m}>" if isinstance(result, VIResult) \
            else type(result).__name__
        raise InvalidParameter("result", shown, f"a VIResult of {s.size} server(s) (one per "
                               "speed)")
    u = np.asarray(u, dtype=float)
    x = np.asarray(x, dtype=float)
    if u.shape[-1:] != (s.size,):
        raise InvalidParameter("u", u, f"backlog vectors with last axis {s.size}")
    if np.any(x < 0) or not np.all(np.isfinite(x)):
        raise InvalidParameter("x", x, "finite sizes >= 0")
    u, x = np.broadcast_arrays(u, x[..., None])
    t = x / s                                                  # service time on each server
    cand = u[..., None, :] + t[..., :, None] * np.eye(s.size)  # (..., server, component)
    return u + t + result.value(cand)


def decisions_speeds(result: VIResult, speeds: ArrayLike, u: ArrayLike,
                     x: ArrayLike) -> NDArray[np.int64]:
    r"""The server :math:`\arg\min_i\{u_i + x/s_i + v(u + (x/s_i) e_i)\}` (ties lowest index).

    The decision of the policy greedy with respect to ``result`` (the optimal one for a
    result of :func:`solve_optimal_speeds`); arguments as in :func:`costs_speeds`.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> r = solve_optimal_speeds([2.0, 1.0], 0.5, Exponential(1.0), delta=0.25, U=12.0)
    >>> decisions_speeds(r, [2.0, 1.0], [[0.0, 0.0], [3.0, 0.0]], 0.05).tolist()
    [0, 1]
    """
    return np.argmin(costs_speeds(result, speeds, u, x), axis=-1)
