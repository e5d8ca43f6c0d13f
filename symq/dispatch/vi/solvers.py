r"""Relative value iteration for size-aware dispatching: solvers of the optimal and fixed policies.

:func:`solve_optimal` and :func:`evaluate_policy` are assembled from
:mod:`~symq.dispatch.vi.planning` (grid checks, memory and time estimates),
:mod:`~symq.dispatch.vi.grid` (lattice, size atoms, sorted states), :mod:`~symq.dispatch.vi.passes`
(the numba operator), :mod:`~symq.dispatch.vi.iteration` (relative VI, :class:`VIResult`) and
:mod:`~symq.dispatch.vi.multigrid` (warm starts, Richardson extrapolation).

Model (Hyytiä & Righter, arXiv:2402.08142): ``m``
identical unit-speed FCFS servers, Poisson arrivals of rate :math:`\lambda = \rho m / E[X]`,
i.i.d. sizes known at dispatch, state = backlog vector :math:`u`, cost = response time per job.
The average-cost Bellman equations per arrival epoch are

.. math::

    w(u) = E_X\bigl[\min_i \{u_i + X + v(u + X e_i)\}\bigr] - g, \qquad
    v(u) = E_A\bigl[w((u - A\mathbf 1)^+)\bigr], \qquad v(0) = 0,

with :math:`A \sim \mathrm{Exp}(\lambda)` and :math:`g = E[T]` the optimal mean response time.

Numerical scheme:

* grid :math:`u \in \{0, \delta, \dots, N\delta\}^m`, :math:`U = N\delta`; sizes on the same
  lattice by the mean-preserving hat kernel
  :math:`p_k = \int f(x)\max(0, 1 - |x - k\delta|/\delta)\,dx`
  (:func:`~symq.dispatch.vi.grid.hat_atoms`);
* operator :math:`T = E_A \circ \min E_X` in two passes: a numba pass over (state, size atom),
  and the :math:`O(1)`-per-state recursion along diagonals with exact exponential weights
  :math:`f(u) = a h(u) + b h(u - \delta\mathbf 1) + q f(u - \delta\mathbf 1)`,
  :math:`q = e^{-\lambda\delta}`, :math:`b = (1 - q(1 + \lambda\delta))/(\lambda\delta)`,
  :math:`a = 1 - q - b`; on a face the recursion runs along the positive components and
  :math:`f(0) = h(0)`;
* fixed analytic tail beyond ``U``: :math:`v(U + s, y) = v(U, y) + c_M((U+s)^2 - U^2)`,
  :math:`c_M = (\lambda/m)/(2(1-\rho))` (the RND curvature);
* symmetry reduction: only sorted states :math:`u_1 \le \dots \le u_m` are computed
  (``m = 1..6``; ``m >= 3`` on the packed colex simplex of :mod:`~symq.dispatch.simplex`);
* relative VI with Odoni bounds :math:`\min(Tv - v) \le g \le \max(Tv - v)` at every step,
  multigrid warm starts (coarse :math:`\delta` first) and Richardson extrapolation in
  :math:`\delta` (:func:`~symq.dispatch.vi.multigrid.richardson`).

Performance.  The E_X pass is exact brute force over (sorted state, atom) pairs, with no
threshold or prefix-sum shortcut; for ``m = 2`` both candidate values are read from
contiguous rows of the symmetric value array (:math:`v(i+k, j) = v(j, i+k)`) extended by the
fixed tail, so the inner loop vectorises.  Iteration counts are cut by two exact devices that
only change the iterate, never the fixed point or the certificate: multigrid warm starts
and Anderson mixing (memory 3) of the relative-VI steps.  The Odoni bounds hold for any
iterate, so the stopping rule stays certified.  Measured on two (shared) cores:

* ``m = 2``, :math:`\rho = 0.4`, Exp(1), ``delta = 0.05``, ``U = 24``, span < 1e-10: about
  0.8 s on an idle machine, 2-3 s when the cores are shared (65 iterations on the finest
  grid after 52 + 40 + 39 on ``delta = 0.4, 0.2, 0.1``; 115 921 sorted states x 462 atoms);
* ``m = 3, 4``, :math:`\rho = 0.4`: the accuracy-matched defaults of
  :func:`~symq.dispatch.vi.accuracy.solve_accurate` run in a few seconds (benchmarks/
  bench_dispatch_many.py);
* :math:`\rho = 0.9` needs 1 000-2 000 iterations per grid and a much larger ``U``.

The same machinery evaluates a fixed policy (:func:`evaluate_policy`): ``"rnd"`` (equal random
split), ``"lwl"`` (least work left), any decision table / vectorised callable on the sorted
states, or a policy object (a user-defined score policy of
:func:`~symq.dispatch.policies.policy.score_policy`, SITA, FPI, a lookup table) whose decisions are
tabulated on the full two-server lattice (:func:`full_table`, mode ``MODE_FULL`` of
:mod:`~symq.dispatch.vi.passes`), since such a policy need not be symmetric in the servers.
Decisions are taken at the lattice sizes :math:`k\delta`: a decision that jumps at a size on
the lattice (a SITA threshold ``h = k delta``) is resolved to one side of the jump, an
:math:`O(\delta)` error; a threshold between two lattice sizes keeps the :math:`O(\delta^2)`
error.

Storage of :attr:`~symq.dispatch.vi.iteration.VIResult.v`: ``m = 1``: shape ``(N+1,)``;
``m = 2``: the full symmetric ``(N+1, N+1)`` array (only the triangle :math:`i \le j` is
computed, the rest is mirrored);
``m >= 3``: the packed sorted simplex in colex order (:func:`~symq.dispatch.vi.grid.sorted_states`
gives its coordinates, :mod:`~symq.dispatch.simplex` its ranks).

Examples
--------
One server: the value is the M/G/1 value :math:`\lambda u^2/(2(1-\rho))` and ``ET`` is
Pollaczek-Khinchine, :math:`1/(1-\rho) = 2` at :math:`\rho = 1/2`:

>>> from symq.laws import Exponential
>>> r = solve_optimal(1, 0.5, Exponential(1.0), delta=0.1, U=20.0)
>>> abs(r.ET - 2.0) < 1e-2, r.ET_low <= r.ET <= r.ET_high
(True, True)
>>> round(float(r.value([4.0])) / 16.0, 2)       # lam / (2 (1 - rho)) = 0.5
0.5
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.laws import Distribution

from ..policies import BoundPolicy, DispatchPolicy
from ..policies.decisions import JIQ, JSQ, RND, RR
from ..sizes import as_sizes
from .boundary import TailLike
from .coarse_correction import corrected_iteration, correction_grid
from .grid import DispatchGrid, sorted_states
from .iteration import VIResult, _iterate
from .multigrid import _coarse_levels, _interpolate_to
from .passes import MODE_FULL, MODE_JIQ, MODE_OPT, MODE_RND, MODE_TABLE
from .planning import plan_optimal
from .policy_iteration import policy_iteration

__all__ = ["evaluate_policy", "lwl_table", "full_table", "solve_optimal"]


@dataclass(frozen=True)
class _Stop:
    """Stopping rules of every grid, and whether the coarse-grid correction is used (see
    :func:`solve_optimal`)."""

    tol: float
    tol_g: float | None = None
    span_cap: float | None = None
    span_rtol: float | None = None
    max_iter: int = 20000
    coarse_tol: float = 1e-5
    coarse_correction: bool = True

    def checked(self) -> _Stop:
        real_value("tol", self.tol, "a real number > 0", lambda t: t > 0)
        if self.span_rtol is not None:
            real_value("span_rtol", self.span_rtol, "a real number in (0, 1)",
                       lambda t: 0 < t < 1)
        integer_value("max_iter", self.max_iter, 1)
        return self


def _solve(m: int, rho: float, sizes: Any, delta: float, U: float, mode: int,
           table_fn: Callable[[DispatchGrid], NDArray[np.int8] | None], policy: str,
           stop: _Stop, progress: bool, warm_start: VIResult | None, multigrid: bool,
           method: str = "vi", tail: TailLike = None,
           U2: float | None = None) -> VIResult:
    t0 = time.perf_counter()
    sizes = as_sizes(sizes)            # once: every grid below uses the same law
    if method not in ("vi", "pi"):
        raise InvalidParameter("method", method, "'vi' (value iteration) or 'pi' (policy "
                               "iteration)")
    # the plan counts the states within a cap (a cap that is not a number in (0, U) is
    # refused by DispatchGrid.build below)
    planned_cap = U2 if isinstance(U2, (int, float)) and 0 < U2 < U else None
    plan_optimal(m, rho, sizes, delta, U, levels=1, table=mode in (MODE_TABLE, MODE_FULL)
                 or method == "pi", U2=planned_cap)
    grid = DispatchGrid.build(m, rho, sizes, delta, U, tail=tail, U2=U2)
    if grid.capped and (mode != MODE_OPT or method != "vi"):
        raise InvalidParameter("U2", U2, "None except for the optimal policy by value "
                               "iteration (a cap restricts the decisions)")
    cap = grid.U2 if grid.capped else None
    stop = stop.checked()
    levels: list[tuple[float, int, float]] = []
    prev = warm_start
    total = 0
    symmetric = mode != MODE_FULL
    label = f"{'PI' if method == 'pi' else 'VI'}[{policy}]"
    if prev is None and multigrid:
        for d in _coarse_levels(grid.delta, grid.U, grid.mean_size, 30):
            if cap is not None and abs(round(cap / d) * d - cap) > 1e-9 * cap:
                continue             # the cap is not on this level's lattice
            cg = DispatchGrid.build(m, rho, sizes, d, grid.U, tail=tail, U2=cap)
            v0 = None if prev is None else _interpolate_to(prev, cg)
            v, g, gl, gh, it, sp = _iterate(cg, mode, table_fn(cg), v0,
                                            max(stop.tol, stop.coarse_tol), None, None,
                                            stop.max_iter, progress, label,
                                            span_rtol=stop.span_rtol)
            total += it
            levels.append((d, it, g))
            prev = VIResult(ET=g, ET_low=gl, ET_high=gh, v=v, delta=cg.delta,
                            U=cg.U, m=m, lam=cg.lam, rho=cg.rho, iterations=it, residual=sp,
                            policy=policy, c_M=cg.c_M, tail_slope=cg.tail_slope,
                            tail_cross=cg.tail_cross, symmetric=symmetric, U2=cap)
    v0 = None if prev is None else _interpolate_to(prev, grid)
    if method == "pi" and mode == MODE_OPT:
        v, g, gl, gh, it, sp = policy_iteration(grid, v0, stop.tol, stop.span_rtol,
                                                max_sweeps=stop.max_iter, label=label)
    elif stop.coarse_correction and stop.tol_g is None and (
            coarse := correction_grid(grid, sizes)) is not None:
        v, g, gl, gh, it, sp, coarse_it = corrected_iteration(
            grid, mode, table_fn, v0, stop.tol, span_rtol=stop.span_rtol,
            max_iter=stop.max_iter, label=label, coarse=coarse, progress=progress)
        total += coarse_it
        levels.append((coarse.delta, coarse_it, g))
    else:
        v, g, gl, gh, it, sp = _iterate(grid, mode, table_fn(grid), v0, stop.tol, stop.tol_g,
                                        stop.span_cap, stop.max_iter, progress, label,
                                        span_rtol=stop.span_rtol)
    total += it
    levels.append((grid.delta, it, g))
    return VIResult(ET=g, ET_low=gl, ET_high=gh, v=v, delta=grid.delta,
                    U=grid.U, m=grid.m, U2=cap,
                    lam=grid.lam, rho=grid.rho, iterations=it, residual=sp, policy=policy,
                    c_M=grid.c_M, tail_slope=grid.tail_slope, tail_cross=grid.tail_cross,
                    symmetric=symmetric,
                    total_iterations=total,
                    seconds=time.perf_counter() - t0, levels=levels,
                    method=("policy iteration (GMRES evaluation, Odoni bounds)"
                            if method == "pi" and mode == MODE_OPT else
                            "relative value iteration (Odoni bounds, Anderson mixing)"))


def solve_optimal(m: int, rho: float, sizes: Any, delta: float = 0.05, U: float = 24.0,
                  tol: float = 1e-10, max_iter: int = 20000, progress: bool = False,
                  warm_start: VIResult | None = None, *, tol_g: float | None = None,
                  span_cap: float | None = None, multigrid: bool = True,
                  coarse_tol: float = 1e-5, span_rtol: float | None = None,
                  method: str = "vi", tail: TailLike = None,
                  coarse_correction: bool = True, U2: float | None = None) -> VIResult:
    r"""Optimal size-aware dispatching by relative value iteration.

    Parameters
    ----------
    m : int
        Number of identical unit-speed FCFS servers, 1 to 6 (sorted states: about
        :math:`(U/\delta)^m/m!` of them).
    rho : float
        Per-server load :math:`\lambda E[X]/m \in (0, 1)`.
    sizes : job-size law
        A :class:`~symq.laws.PhaseType` or ``(alpha, A)`` pair, an :class:`~symq.me.ME`
        law, a frozen scipy distribution, a name (``"exp"``, ``"uniform"``, ``"h2"``) or a
        :class:`~symq.dispatch.sizes.SizeLaw`; converted by
        :func:`~symq.dispatch.sizes.as_size_law`.
    delta : float
        Lattice step (at most ``E[X]/2`` and ``U/8``).
    U : float
        Truncation, a multiple of ``delta``; at least ``5 max(E[X], W)`` with ``W`` the mean
        M/G/1 wait under an equal random split.  Check it by enlarging: the optimal policy at
        high load needs a much larger ``U``.
    tol : float
        Stop when the Odoni span ``max(Tv - v) - min(Tv - v) < tol``.
    max_iter : int
        Iteration budget per grid.
    progress : bool
        Show a tqdm bar.
    warm_start : VIResult, optional
        Initial iterate (interpolated onto this grid); disables the multigrid levels.
    tol_g, span_cap : float, optional
        Also stop when ``|g_n - g_{n-1}| < tol_g`` and ``span < span_cap`` (cheaper at high
        load).
    multigrid : bool
        Warm start from coarser grids ``2 delta, 4 delta, ...`` (at least 30 steps, step at
        most ``E[X]/2``), each solved to ``max(tol, coarse_tol)``.
    coarse_tol : float
    span_rtol : float, optional
        Also stop when the span is below ``span_rtol * g`` (every grid): the accuracy-matched
        rule of :func:`~symq.dispatch.vi.accuracy.solve_accurate`.
    method : {"vi", "pi"}
        Value iteration (default) or policy iteration with GMRES policy evaluation
        (:mod:`~symq.dispatch.vi.policy_iteration`) on this grid; the coarse warm-start grids use
        VI.  Both stop on the same certified Odoni span.
    tail : Tail or (float, float), optional
        The value beyond ``U`` (:class:`~symq.dispatch.vi.boundary.Tail`), or its
        ``(curvature, slope)``: a coordinate ``U + s`` adds ``curvature ((U + s)^2 - U^2) +
        slope s`` to the value at ``U`` (plus the Tail's cross term).  Default: the equal
        random split's curvature ``(lam/m)/(2(1 - rho))`` and slope 0;
        :func:`~symq.dispatch.vi.boundary.fit_boundary` fits one to a solution.
    coarse_correction : bool
        Correct the iterate from the grid of step ``2 delta``
        (:mod:`~symq.dispatch.vi.coarse_correction`) on grids of an even number of steps and
        at least :data:`~symq.dispatch.vi.coarse_correction.MIN_STATES` states, unless
        ``tol_g`` is given; the fixed point and the certified bracket
        are those of plain value iteration.
    U2 : float, optional
        A cap on the second-largest backlog (``m >= 3``; a multiple of ``delta`` up to
        ``U``): the optimal policy among those that never make the second-largest backlog
        exceed ``U2``, computed on the states within the cap only (at high load the optimal
        policy keeps one long queue, so a cap well below ``U`` changes ``g`` little and
        removes most states).  ``g`` is at least the uncapped value; check the cap by
        raising it (:attr:`~symq.dispatch.vi.iteration.VIResult.U2`).

    Returns
    -------
    VIResult

    Raises
    ------
    InvalidParameter, StabilityError
        Bad ``m``, ``rho``, ``delta``, ``U`` or ``sizes``.
    NotConverged
        Iteration budget exhausted (the message gives the last Odoni bounds).

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> r = solve_optimal(2, 0.4, Exponential(1.0), delta=0.2, U=24.0, tol=1e-8)
    >>> r.ET_low <= r.ET <= r.ET_high < 1 / (1 - 0.4 ** 2)    # beats LWL (M/M/2)
    True
    """
    stop = _Stop(tol, tol_g, span_cap, span_rtol, max_iter, coarse_tol, coarse_correction)
    return _solve(m, rho, sizes, delta, U, MODE_OPT, lambda g: None, "optimal", stop, progress,
                  warm_start, multigrid, method, tail, U2=U2)


def lwl_table(grid: DispatchGrid) -> NDArray[np.int8]:
    """Decision table of least-work-left: every job to the smallest sorted backlog (index 0)."""
    return np.zeros((grid.n_states, grid.K + 1), dtype=np.int8)


def _table_from_callable(choose: Callable[..., Any], grid: DispatchGrid,
                         chunk: int = 4096) -> NDArray[np.int8]:
    states = sorted_states(grid.m, grid.N).astype(float) * grid.delta
    xs = np.arange(grid.K + 1) * grid.delta
    table = np.empty((states.shape[0], grid.K + 1), dtype=np.int8)
    for s in range(0, states.shape[0], chunk):
        u = states[s:s + chunk, None, :]
        res = np.asarray(choose(u, xs[None, :]))
        res = np.broadcast_to(res, (u.shape[0], xs.size))
        if not np.issubdtype(res.dtype, np.integer) or res.min() < 0 or res.max() >= grid.m:
            raise InvalidParameter("policy", choose, f"a callable returning server indices "
                                   f"0..{grid.m - 1}")
        table[s:s + chunk] = res
    return table


def full_table(policy: BoundPolicy, grid: DispatchGrid) -> NDArray[np.int8]:
    """Decision table of a deterministic policy on the full lattice (``m = 2``, server order).

    Row ``i (N+1) + j`` holds, for each size atom ``k delta``, the server (0 or 1) the policy
    chooses at backlogs ``(i delta, j delta)``: the table of :data:`MODE_FULL`, for policies
    that are not symmetric in the servers (a score of the server index ``i``; any score or
    lookup with ties to the lowest index).
    """
    N, K = grid.N, grid.K
    g = np.arange(N + 1) * grid.delta
    xs = np.tile(np.arange(K + 1) * grid.delta, N + 1)
    second = np.repeat(g, K + 1)
    table = np.empty(((N + 1) ** 2, K + 1), dtype=np.int8)
    for i in range(N + 1):
        u = np.stack([np.full(second.size, g[i]), second], axis=1)
        table[i * (N + 1):(i + 1) * (N + 1)] = policy.decide(u, xs).reshape(N + 1, K + 1)
    return table


def _evaluate_object(policy: DispatchPolicy | BoundPolicy, m: int, rho: float, sizes: Distribution,
                     delta: float, U: float, stop: _Stop, progress: bool,
                     warm_start: VIResult | None, multigrid: bool) -> VIResult:
    """:func:`evaluate_policy` of a policy object: on the full lattice (``m = 2``)."""
    if isinstance(policy, BoundPolicy):
        if policy.m != m or abs(policy.rho - rho) > 1e-12:
            raise InvalidParameter("policy", policy.name,
                                   f"a policy bound to m={m}, rho={rho} (it has m={policy.m}, "
                                   f"rho={policy.rho})")
        bound = policy
    else:
        bound = policy.bind(m, rho, sizes)
    if bound.speeds is not None and not np.all(bound.speeds == bound.speeds[0]):
        raise InvalidParameter("policy", bound.name, "a policy bound to identical servers",
                               "servers of different speeds have their own value iteration "
                               "(symq.dispatch.vi.speed_solvers) or simulate_dispatch(speeds=...)")
    if bound.code == JIQ:                  # backlog-only: the JIQ mode of the passes
        return _solve(m, rho, sizes, delta, U, MODE_JIQ if m > 1 else MODE_RND,
                      lambda g: None, bound.name, stop, progress, warm_start, multigrid)
    if bound.code in (RR, JSQ) or bound.counts:
        raise InvalidParameter("policy", bound.name, "a policy that decides from the backlogs "
                               "u and the size x (and the server index)",
                               "the value-iteration state holds the backlogs only, not the "
                               "round-robin pointer or the job counts n; simulate it instead "
                               "(simulate_dispatch)")
    if bound.code == RND or m == 1:      # one server: every policy is the M/G/1 queue
        mode, table_fn = MODE_RND, (lambda g: None)
    elif m == 2:
        mode, table_fn = MODE_FULL, (lambda g: full_table(bound, g))
    else:
        raise InvalidParameter("m", m, "1 or 2 for the value-iteration evaluation of policy "
                               f"{bound.name!r}", "its decision table lives on the full "
                               "two-server lattice; simulate it for more servers")
    return _solve(m, rho, sizes, delta, U, mode, table_fn, bound.name, stop, progress,
                  warm_start, multigrid)


#: The named fixed policies of :func:`evaluate_policy`: (mode, table builder); one server has
#: no choice (the M/G/1 queue, mode RND).
_NAMED = {"rnd": (MODE_RND, None), "lwl": (MODE_TABLE, "lwl"), "jiq": (MODE_JIQ, None)}


def evaluate_policy(policy: str | Callable[..., Any] | NDArray[Any] | DispatchPolicy
                    | BoundPolicy, m: int, rho: float,
                    sizes: Any, delta: float = 0.05, U: float = 24.0, tol: float = 1e-10,
                    max_iter: int = 20000, progress: bool = False,
                    warm_start: VIResult | None = None, *, multigrid: bool = True,
                    coarse_tol: float = 1e-5, span_rtol: float | None = None,
                    coarse_correction: bool = True) -> VIResult:
    r"""Relative value and mean response time of a FIXED policy on the VI grid.

    The min over servers of the optimality operator is replaced by the policy's choice
    (a built-in calibration against exact values).

    Parameters
    ----------
    policy : {"rnd", "lwl", "jiq"}, DispatchPolicy, BoundPolicy, callable or array
        ``"rnd"``: equal random split (the expectation over the choice, exact value
        :math:`\sum_i (\lambda/m)u_i^2/(2(1-\rho))`, :math:`g = 1/(1-\rho)` for Exp(1));
        ``"lwl"``: least work left (M/G/m; Erlang C for exponential sizes);
        ``"jiq"``: join-idle-queue, an idle server (backlog 0) if there is one, else the equal
        random split (a backlog-only policy, so its value on the grid is exact up to the
        discretisation);
        a policy object (a score policy of :func:`~symq.dispatch.policies.policy.score_policy`, or a
        built-in one such as ``get_policy("sita", h=1.5)``, bound or not) that decides from the
        backlogs and the size: its decision table (:func:`full_table`) is evaluated on the full
        lattice (``m = 2``; ``m = 1`` is the M/G/1 queue), since it need not be symmetric in
        the servers; RR, JSQ and scores that read ``n`` are refused (the state holds no
        pointer or job counts);
        a callable ``choose(u, x)`` with ``u`` of shape ``(S, 1, m)`` (sorted backlogs) and
        ``x`` of shape ``(1, K+1)`` returning server indices ``(S, K+1)`` into the sorted
        ``u`` (evaluated once on the grid); or a ready table of shape ``(n_states, K+1)``
        in :func:`~symq.dispatch.vi.grid.sorted_states` order (only without multigrid).
    m, rho, sizes, delta, U, tol, max_iter, progress, warm_start, multigrid, coarse_tol, span_rtol
        As in :func:`solve_optimal`.
    coarse_correction : bool
        As in :func:`solve_optimal` (not with a ready table, which fits one grid only).

    Returns
    -------
    VIResult

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> r = evaluate_policy("lwl", 2, 0.5, Exponential(1.0), delta=0.1, U=20.0, tol=1e-9)
    >>> abs(r.ET - 1 / (1 - 0.25)) < 2e-3             # M/M/2: 1/(1 - rho^2)
    True
    """
    stop = _Stop(tol, None, None, span_rtol, max_iter, coarse_tol, coarse_correction)
    if isinstance(policy, (DispatchPolicy, BoundPolicy)):
        return _evaluate_object(policy, m, rho, sizes, delta, U, stop, progress, warm_start,
                                multigrid)
    if isinstance(policy, str):
        key = policy.lower()
        if key not in _NAMED:
            raise InvalidParameter("policy", policy, "'rnd', 'lwl', 'jiq', a policy object, a "
                                   "callable or a decision table")
        mode, table = _NAMED[key]
        if m == 1:
            mode, table = MODE_RND, None
        return _solve(m, rho, sizes, delta, U, mode,
                      lwl_table if table == "lwl" else (lambda g: None), key, stop, progress,
                      warm_start, multigrid)
    if callable(policy):
        if m == 1:
            return _solve(m, rho, sizes, delta, U, MODE_RND, lambda g: None, "table", stop,
                          progress, warm_start, multigrid)
        return _solve(m, rho, sizes, delta, U, MODE_TABLE,
                      lambda g: _table_from_callable(policy, g), "table", stop, progress,
                      warm_start, multigrid)
    table = np.asarray(policy)

    def fixed(g: DispatchGrid) -> NDArray[np.int8]:
        if table.shape != (g.n_states, g.K + 1) or not np.issubdtype(table.dtype, np.integer) \
                or table.min() < 0 or table.max() >= g.m:
            raise InvalidParameter("policy", f"array{table.shape}",
                                   f"a decision table of shape ({g.n_states}, {g.K + 1}) with "
                                   f"server indices 0..{g.m - 1}")
        return np.ascontiguousarray(table, dtype=np.int8)

    # a table is given for one grid only: no coarse-grid correction either
    return _solve(m, rho, sizes, delta, U, MODE_TABLE, fixed, "table",
                  dataclasses.replace(stop, coarse_correction=False), progress, warm_start,
                  False)
