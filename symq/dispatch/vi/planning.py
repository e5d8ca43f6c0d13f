"""Planning value iteration before anything is allocated: grid checks, size and time estimates.

:func:`validate_grid` checks the discretisation parameters and names them as the caller's user
typed them (``names``: e.g. ``{"U": "umax"}`` for the ``dispatch`` model); :func:`plan_optimal`
estimates the memory and the time of value iteration on the grids ``delta, delta/2, ...`` and
refuses, with :class:`~symq.core.errors.ResourceLimit`, a request that does not fit (the message
gives the smallest ``delta`` or the largest ``U`` that does).  The solvers of
:mod:`symq.dispatch.vi.solvers` call these first.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from symq.core.errors import InvalidParameter, ResourceLimit, StabilityError
from symq.core.parameters import integer_value, real_value
from symq.core.resources import format_bytes, largest_fitting, memory_budget

from ..simplex import M_MAX, n_sorted_states
from ..sizes import as_sizes
from ..symbolic import wait_fn

__all__ = ["validate_grid", "plan_optimal", "min_truncation", "grid_bytes", "grid_work",
           "vi_iterations", "size_tail_point", "VI_TIME_LIMIT", "VI_RATE"]

#: Largest share of :math:`E[X^2]` the size lattice may leave out: the waiting times of the
#: dispatching policies grow with the second moment of the sizes (Pollaczek-Khinchine for each
#: server), so a lattice that ends where the ccdf is small but the second moment is not (a
#: Pareto law of shape near 2 keeps 10% of :math:`E[X^2]` beyond a ccdf of 1e-10) would give a
#: value iteration of another, lighter law.
SECOND_MOMENT_TOL = 1e-6


def size_tail_point(sizes: Any, tail_tol: float = 1e-10) -> float:
    r"""A size ``x`` (a power of 1.5 times ``E[X]``) with ``ccdf(x) < tail_tol`` and
    :math:`E[X^2; X > x] \le` :data:`SECOND_MOMENT_TOL` :math:`E[X^2]`.

    The size lattice of :func:`hat_atoms` ends near it, so ``x / delta`` estimates the number of
    size atoms before they are computed (:func:`plan_optimal`).

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for a law whose mean or second moment is not finite, or whose tail (of
        the ccdf or of the second moment) reaches beyond ``1e6 E[X]``: too heavy for the size
        lattice (simulation handles such laws).
    """
    sizes = as_sizes(sizes)
    mean = float(sizes.mean())
    name = getattr(sizes, "name", sizes)
    if not (math.isfinite(mean) and mean > 0):
        raise InvalidParameter("sizes", name, "a law with a finite positive mean")
    second = float(sizes.moment(2))
    if not (math.isfinite(second) and second > 0):
        raise InvalidParameter("sizes", name, "a law with a finite second moment for value "
                               "iteration", "the mean response time of every policy is "
                               "infinite or undetermined without it")

    def left_out(x: float) -> float:
        return (second - float(sizes.partial_moment(2, x))) / second

    x = mean
    while not (float(sizes.ccdf(x)) < tail_tol and left_out(x) <= SECOND_MOMENT_TOL):
        x *= 1.5
        if x > 1e6 * mean:
            ccdf, share = float(sizes.ccdf(x)), left_out(x)
            raise InvalidParameter(
                "sizes", name, "a law with a tail that vanishes within 1e6 E[X] for value "
                "iteration (simulation takes any law)",
                f"beyond {x:g} = {x / mean:.3g} E[X] the ccdf is {ccdf:.3g} and the sizes "
                f"still hold a share {share:.3g} of E[X^2] (at most {tail_tol:g} and "
                f"{SECOND_MOMENT_TOL:g} are needed): too heavy a tail for the size lattice")
    return x

_DEFAULT_NAMES = {"m": "m", "rho": "rho", "delta": "delta", "U": "U"}

#: Wall-time cap of one value-iteration run estimated by :func:`plan_optimal` (seconds); the
#: environment variable ``SYMQ_VI_TIME_LIMIT`` overrides it at each call (:func:`_time_limit`),
#: so that a job queue or a notebook server can refuse long runs up front.
VI_TIME_LIMIT = 3600.0


def _time_limit() -> float:
    """Seconds of value iteration allowed: ``SYMQ_VI_TIME_LIMIT`` or :data:`VI_TIME_LIMIT`."""
    text = os.environ.get("SYMQ_VI_TIME_LIMIT", "").strip()
    if not text:
        return VI_TIME_LIMIT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InvalidParameter("SYMQ_VI_TIME_LIMIT", text, "a positive number of seconds")
    return value
#: (state, size atom, server) evaluations per second assumed by the time estimate: about what
#: the numba E_X pass reaches on two shared cores (a conservative figure).
VI_RATE = 2e9


def _names(names: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(_DEFAULT_NAMES)
    if names:
        out.update(names)
    return out


def _is_real(val: Any) -> bool:
    return not isinstance(val, bool) and isinstance(val, (numbers.Real, np.floating))


def validate_grid(m: Any, rho: Any, sizes: Any, delta: Any, U: Any, *,
                  names: Mapping[str, str] | None = None, max_step: float = 0.5
                  ) -> tuple[int, float, float, float, int, float, float, float]:
    r"""Check ``m, rho, sizes, delta, U`` for the VI grid; no array is allocated.

    Rules: ``m`` in 1..6 (the sorted-state reduction); :math:`0 < \rho < 1`; ``delta`` and
    ``U`` finite and positive, ``U`` an integer multiple of ``delta`` with at least 8 steps;
    ``delta <= max_step E[X]`` (``E[X]/2``); ``U >= 5 max(E[X], W)`` with ``W`` the M/G/1
    wait of an equal random split.  ``names`` gives the names to use in the messages (see
    :meth:`DispatchGrid.build`).

    Returns
    -------
    (m, rho, delta, U, N, mean, second_moment, lam)
    """
    nm = _names(names)
    m = integer_value(nm["m"], m, 1, "number of servers")
    if m > M_MAX:
        raise InvalidParameter(nm["m"], m, f"1..{M_MAX} for value iteration",
                               f"the sorted-state VI grid is implemented for m <= {M_MAX} "
                               "servers; the heuristics (policy=rnd, lwl, jiq, sita-e, ...) "
                               "take any m")
    rho = real_value(nm["rho"], rho, "a real number in (0, 1) (per-server load)",
                     lambda r: r > 0)
    if rho >= 1:
        raise StabilityError(f"per-server load {nm['rho']}={rho!r} must be < 1 for a "
                             f"stationary regime with {nm['m']}={m} servers")
    delta, U = (real_value(nm[key], val, "a finite real number > 0", lambda v: v > 0)
                for key, val in (("delta", delta), ("U", U)))
    sizes = as_sizes(sizes)
    mean, second = float(sizes.mean()), float(sizes.moment(2))
    if not (math.isfinite(mean) and mean > 0 and math.isfinite(second) and second > 0):
        raise InvalidParameter("sizes", getattr(sizes, "name", sizes),
                               "a law with finite positive first and second moments")
    if delta > max_step * mean:
        raise InvalidParameter(nm["delta"], delta, f"<= E[X]/2 = {0.5 * mean:g}",
                               "the size lattice needs at least two steps per mean size")
    ratio = U / delta
    if not ratio < 2.0 ** 52:
        raise InvalidParameter(nm["U"], U, f"a modest multiple of {nm['delta']}={delta!r}",
                               f"{nm['U']}/{nm['delta']} = {ratio:.3g} grid steps per server")
    N = int(round(ratio))
    if abs(N * delta - U) > 1e-9 * max(U, 1.0):
        raise InvalidParameter(nm["U"], U, f"an integer multiple of {nm['delta']}={delta!r}")
    if N < 8:
        raise InvalidParameter(nm["delta"], delta, f"<= {nm['U']}/8 = {U / 8:g}",
                               f"too coarse relative to {nm['U']}={U:g}: the grid needs at "
                               f"least 8 steps; decrease {nm['delta']} or increase {nm['U']}")
    lam = rho * m / mean
    u_min = min_truncation(m, rho, sizes)
    if U < u_min * (1 - 1e-9):
        raise InvalidParameter(nm["U"], U, f">= {u_min:.4g} for {nm['rho']}={rho:g}",
                               f"truncation too small for the load: increase {nm['U']} (about "
                               "5 x the mean M/G/1 waiting time, more at high load)")
    return m, rho, delta, U, N, mean, second, lam


def min_truncation(m: int, rho: float, sizes: Any) -> float:
    """Smallest truncation ``U`` accepted: ``5 max(E[X], W)``, ``W`` the M/G/1 wait of RND."""
    sizes = as_sizes(sizes)
    mean, second = float(sizes.mean()), float(sizes.moment(2))
    lam = rho * m / mean
    wait = float(wait_fn().scalar(lam / m, second, rho))     # Pollaczek-Khinchine, rate lam/m
    return 5.0 * max(mean, wait)


#: States interpolated at a time on the simplex (``m >= 3``) by the warm starts of
#: :mod:`~symq.dispatch.vi.multigrid`, compiled
#: (:func:`~symq.dispatch.simplex.values_at_states`): only a block's lattice coordinates are
#: held beside the result.  The interpolation through
#: :meth:`~symq.dispatch.vi.iteration.VIResult.value` over whole arrays needed 192-360 bytes
#: per state for m = 3..6 (measured with :mod:`tracemalloc`), more than the iteration.
INTERPOLATION_BLOCK = 1 << 18


def grid_bytes(m: int, N: int, K: int, levels: int = 1, N2: int | None = None) -> float:
    """Bytes value iteration keeps alive on one grid with ``N`` steps and ``K + 1`` atoms.

    Counted (float64): the stored value ``v``, its warm start, ``Tv``, the E_X result ``h``
    (full arrays for ``m <= 2``), the Anderson ring buffers (2 x 4 packed copies) and the
    packed step, the extended rows of the ``m = 2`` kernel or the predecessor ranks of the
    simplex (``m >= 3``) and, with ``levels = 2``, the previous (coarse) grid's value kept
    by :func:`richardson`.  For ``m <= 2`` about ``m + 2`` values per state for the
    warm-start interpolation are added; on the simplex (``m >= 3``) the interpolation holds
    the coordinates of one block of :data:`INTERPOLATION_BLOCK` states.  A decision table
    (int8, ``K + 1`` per state: a fixed policy's, or policy iteration's) is added by
    :func:`plan_optimal` where one is used.  ``N2``: the cap of a capped simplex (``m >= 3``),
    whose states alone are stored (:func:`~symq.dispatch.simplex.n_sorted_states`).
    """
    sorted_n = n_sorted_states(m, N, N2 if m >= 3 else None)
    if m == 1:
        stored, extra = N + 1, 0
    elif m == 2:
        stored, extra = (N + 1) ** 2, (N + 1) * (N + 1 + K)
    else:
        stored, extra = sorted_n, sorted_n
    iteration = 4 * stored + 10 * sorted_n + extra      # with the warm start beside v
    if m <= 2:
        floats = iteration + (m + 2) * sorted_n
    else:
        floats = iteration + m * min(sorted_n, INTERPOLATION_BLOCK)
    floats += 8 * (K + 1)
    if levels >= 2:
        floats += stored / 2 ** m
    return 8.0 * floats


def grid_work(m: int, N: int, K: int) -> float:
    """(state, size atom, server) evaluations of one E_X sweep on a grid (sorted states)."""
    return float(math.comb(N + m, m)) * (K + 1) * m


def vi_iterations(rho: float) -> float:
    """Rough sweep count of relative VI per grid: ``50 / (1 - rho)^1.4`` (102 at ``rho = 0.4``,
    1 256 at ``rho = 0.9``).

    Calibrated on :func:`~symq.dispatch.vi.accuracy.solve_accurate`'s grids with the
    coarse-grid correction and warm starts (sweeps of the grid and its correction grid
    together, the first grid started cold): 15-101 per grid at ``rho = 0.4`` (m = 3, 4) and
    270-1 093 at ``rho = 0.9`` (m = 3, 4); the previous ``80 / (1 - rho)^1.4`` (2 010 at
    0.9) had been fitted to plain VI and refused m = 4 at rho = 0.9, planned at 1.5 h, which
    ran in 10 minutes.  Used only to refuse runs of hours.
    """
    return 50.0 / (1.0 - rho) ** 1.4


def format_seconds(t: float) -> str:
    """``42.0`` -> ``'42 s'``, ``5400`` -> ``'1.5 h'``."""
    if not math.isfinite(t):
        return "an unbounded time"
    if t < 120:
        return f"{t:.2g} s"
    if t < 7200:
        return f"{t / 60:.3g} min"
    return f"{t / 3600:.3g} h"


def _round_sig(x: float, up: bool, digits: int = 3) -> float:
    """``x`` rounded up (or down) to ``digits`` significant digits (a limit that still fits)."""
    if not (math.isfinite(x) and x > 0):
        return x
    scale = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return (math.ceil(x / scale - 1e-9) if up else math.floor(x / scale + 1e-9)) * scale


def plan_optimal(m: int, rho: float, sizes: Any, delta: float, U: float, *, levels: int = 2,
                 names: Mapping[str, str] | None = None, blame: str = "delta",
                 time_limit: float | None = None, table: bool = False,
                 tail_tol: float = 1e-10, U2: float | None = None) -> dict[str, float]:
    r"""Estimate memory and time of value iteration on the grids ``delta, delta/2, ...``.

    Called before anything is allocated (by :func:`solve_optimal`, :func:`evaluate_policy`
    with ``levels=1`` and by the ``dispatch`` model for the Richardson pair ``delta, delta/2``):
    the grid has :math:`\binom{N+m}{m}` sorted states, ``N = U/delta``, and about
    ``x_tail/delta`` size atoms (``x_tail`` from :func:`size_tail_point`); memory is
    :func:`grid_bytes` of the largest grid (with the coarse value alive), time is
    :func:`grid_work` x :func:`vi_iterations` / :data:`VI_RATE` summed over the grids, plus a
    fifth of the first grid for its multigrid warm-start levels.

    Parameters
    ----------
    m, rho, sizes, delta, U
        As in :func:`solve_optimal`.
    levels : int
        Number of grids ``delta / 2^k`` (2 for :func:`richardson`'s pair).
    names : mapping, optional
        Names the user typed (see :meth:`DispatchGrid.build`), e.g. ``{"U": "umax"}``.
    blame : {"delta", "U"}
        The parameter named when the run does not fit; the message gives the smallest
        ``delta`` (or the largest ``U``) that fits.
    time_limit : float, optional
        Seconds allowed (default :data:`VI_TIME_LIMIT`).
    table : bool
        Add the ``int8`` decision table of a fixed policy.
    U2 : float, optional
        A cap on the second-largest backlog (``m >= 3``): memory and time count the states
        within it only (:func:`~symq.dispatch.simplex.n_sorted_states`), the only ones
        stored.

    Returns
    -------
    dict
        ``bytes`` (peak estimate), ``seconds`` (estimate), ``states`` (sorted states of the
        finest grid), ``atoms`` (size atoms of the finest grid).

    Raises
    ------
    ResourceLimit
        When the memory (:func:`symq.core.resources.memory_budget`) or the time limit would be
        exceeded; the message names ``delta`` or ``U`` as in ``names``, its value, what it
        needs and the value that fits.
    """
    nm = _names(names)
    sizes = as_sizes(sizes)
    huge = (_is_real(delta) and _is_real(U) and 0 < delta < math.inf and 0 < U
            and not U / delta <= 2.0 ** 40)
    if huge:   # no grid of 2^40 steps per server fits anywhere: find the largest U that does
        validate_grid(m, rho, sizes, delta, min_truncation(m, rho, sizes) * 2, names=names)
        blame, U_asked, U = "U", U, delta * 2.0 ** 40
    m, rho, delta, U, N, mean, _, _ = validate_grid(m, rho, sizes, delta, U, names=names)
    limit_s = _time_limit() if time_limit is None else float(time_limit)
    x_tail = size_tail_point(sizes, tail_tol)
    iters = vi_iterations(rho)

    def cost(d: float, u: float) -> tuple[float, float, float, int]:
        peak = secs = 0.0
        states, K = 0.0, 0
        for lev in range(levels):
            dl = d / 2 ** lev
            n = max(int(round(u / dl)), 1)
            n2 = int(round(U2 / dl)) if U2 is not None and m >= 3 else None
            K = int(math.ceil(x_tail / dl)) + 1
            b = grid_bytes(m, n, K, levels=2 if lev else 1, N2=n2)
            states = float(n_sorted_states(m, n, n2))
            if table:
                b += states * (K + 1)
            peak = max(peak, b)
            w = grid_work(m, n, K) * iters / VI_RATE * states / math.comb(n + m, m)
            secs += w * (1.2 if lev == 0 else 1.0)
        return peak, secs, states, K

    budget = memory_budget()
    peak, secs, states, K = cost(delta, U)
    info = {"bytes": peak, "seconds": secs, "states": states, "atoms": K + 1}
    if peak <= budget and secs <= limit_s and not huge:
        return info

    def fits(d: float, u: float) -> bool:
        b, t, _, _ = cost(d, u)
        return b <= budget and t <= limit_s

    finest = delta / 2 ** (levels - 1)
    if huge:
        states, peak, secs = math.inf, math.inf, math.inf
        U, asked = delta * 2.0 ** 40, U_asked
    else:
        asked = U
    grid_text = (f"{states:.3g} sorted states x {K + 1} size atoms on the finest grid "
                 f"{nm['delta']}={finest:g}" + (f" ({nm['delta']}/{2 ** (levels - 1)})"
                                               if levels > 1 else ""))
    if huge:
        steps = asked / delta
        shown = f"{steps:.3g}" if math.isfinite(steps) else "more than 1e308"
        grid_text = (f"{nm['U']}/{nm['delta']} = {shown} grid steps per server, "
                     "more than any memory holds")
        needed = grid_text
    else:
        needed = (f"{grid_text}: about {format_bytes(peak)} of a memory budget of "
                  f"{format_bytes(budget)} and about {format_seconds(secs)} of value iteration "
                  f"(refused beyond {format_seconds(limit_s)}, estimated at {VI_RATE:.0e} "
                  "evaluations per second)")
    if blame == "U":
        u_min = min_truncation(m, rho, sizes)
        lo = max(u_min, 8 * delta)
        if lo < U and fits(delta, lo):
            best = largest_fitting(lambda u: 0.0 if fits(delta, u) else math.inf, lo, U, 1,
                                   decreasing=False)
            best = math.floor(best / delta) * delta
            shown = _round_sig(best, up=False, digits=4)
            limit = (f"<= {shown:.4g} to fit at {nm['delta']}={delta:g} (a multiple of "
                     f"{nm['delta']}, >= {u_min:.4g} for this load)")
        else:
            limit = (f"smaller, but no {nm['U']} >= {lo:.4g} (the least for this load and "
                     f"{nm['delta']}) fits at {nm['delta']}={delta:g}: raise {nm['delta']} "
                     f"or lower {nm['rho']}")
        raise ResourceLimit(nm["U"], asked, needed, limit)
    hi = 0.5 * mean
    if delta < hi and fits(hi, U):
        best = largest_fitting(lambda d: 0.0 if fits(d, U) else math.inf, delta, hi, 1,
                               decreasing=True)
        shown = _round_sig(best, up=True)
        limit = (f">= {shown:.3g} to fit at {nm['U']}={U:g} ({nm['U']}/{nm['delta']} an "
                 "integer)")
    else:
        limit = (f"larger, but no {nm['delta']} <= E[X]/2 = {hi:g} fits at {nm['U']}={U:g}: "
                 f"lower {nm['U']} or {nm['rho']}")
    raise ResourceLimit(nm["delta"], delta, needed, limit)
