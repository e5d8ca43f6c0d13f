r"""Optimal size-aware dispatching to two servers: decision regions and value function, data, plot.

Hyytiä & Righter, "Optimal size-aware dispatching rules via value iteration and some numerical
investigations" (arXiv 2402.08142), figures of the optimal policy for two identical FCFS
servers: a job of size :math:`x` arriving at backlogs :math:`u = (u_1, u_2)` joins
:math:`\arg\min_i \{u_i + x + v(u + x e_i)\}`
(:meth:`~symq.dispatch.vi.iteration.VIResult.decision`), short jobs the shorter queue and long jobs
the longer one; the relative value along the diagonal grows like :math:`c u^2` with :math:`c \approx
0.56` at :math:`\rho = 0.4`, against the value :math:`\lambda u^2 / (2(1 - \rho))` of the equal
random split (Hyytiä, Penttinen, Aalto, EJOR 2012).  Both need a
:class:`~symq.dispatch.vi.iteration.VIResult` from
:func:`~symq.dispatch.vi.solvers.solve_optimal` (or a fixed policy's from
:func:`~symq.dispatch.vi.solvers.evaluate_policy`).  :func:`decision_regions_data` and
:func:`value_diagonal_data` are the data twins of :func:`plot_decision_regions` and
:func:`plot_value_diagonal`; matplotlib is imported only inside the latter, and only to create
a figure when no ``ax`` is given.

Examples
--------
>>> from symq.dispatch import solve_optimal
>>> from symq.laws import Exponential
>>> result = solve_optimal(2, 0.4, Exponential(1.0), delta=0.25, U=16.0)
>>> data = decision_regions_data(result, x=[0.1], u_max=4.0, n=5)
>>> data["choice"][0].tolist()   # rows u1 = 0..4, columns u2: a short job joins the shorter queue
[[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.plotting import axes_or_new

from .vi.iteration import VIResult

__all__ = ["decision_regions_data", "plot_decision_regions", "value_diagonal_data",
           "plot_value_diagonal"]



def _result(result: Any, m: int | None = None) -> VIResult:
    if not isinstance(result, VIResult):
        raise InvalidParameter("result", type(result).__name__, "a VIResult (from solve_optimal "
                               "or evaluate_policy)")
    if m is not None and result.m != m:
        raise InvalidParameter("result", f"VIResult with m={result.m}",
                               f"a VIResult of m = {m} servers")
    return result


def _upper(result: VIResult, u_max: float | None, default: float) -> float:
    if u_max is None:
        return min(default, result.U)
    return real_value("u_max", u_max, "a backlog > 0", lambda v: v > 0)


def decision_regions_data(result: VIResult, x: ArrayLike = (0.5, 1.0, 2.0, 4.0),
                          u_max: float | None = None, n: int = 161) -> dict[str, Any]:
    r"""Server chosen by a two-server policy for each job size and pair of backlogs.

    Parameters
    ----------
    result : VIResult
        Value iteration with ``m = 2`` (:func:`~symq.dispatch.vi.solvers.solve_optimal`).
    x : array_like
        Job sizes.
    u_max : float, optional
        Largest backlog of the grid (default ``min(8, U)``).
    n : int
        Grid points per backlog axis.

    Returns
    -------
    dict
        ``u`` (the backlog grid ``linspace(0, u_max, n)``), ``x``, ``choice`` (shape
        ``(len(x), n, n)``: 0 for server 1, 1 for server 2, at ``u1 = u[i]``, ``u2 = u[j]``
        for ``choice[k, i, j]``; ties to server 1), ``delta`` and ``rho`` of the result.
    """
    result = _result(result, 2)
    sizes = np.atleast_1d(np.asarray(x, dtype=float))
    if sizes.ndim != 1 or not np.all(np.isfinite(sizes)) or np.any(sizes <= 0):
        raise InvalidParameter("x", x, "a sequence of job sizes > 0")
    grid = np.linspace(0.0, _upper(result, u_max, 8.0), integer_value("n", n, 2))
    u1, u2 = np.meshgrid(grid, grid, indexing="ij")
    states = np.stack([u1, u2], axis=-1)
    choice = np.array([result.decision(states, np.full(u1.shape, size)) for size in sizes])
    return {"u": grid, "x": sizes, "choice": choice, "delta": result.delta, "rho": result.rho}


def plot_decision_regions(result: VIResult, x: float = 1.0, u_max: float | None = None,
                          n: int = 161, ax: Any = None, **kwargs: Any) -> Any:
    """Plot the decision regions of :func:`decision_regions_data` for one job size ``x``
    (blue: server 1, red: server 2; dotted: ``u1 = u2``); returns the axes.

    ``kwargs`` go to ``ax.pcolormesh`` (e.g. ``cmap``).
    """
    data = decision_regions_data(result, [x], u_max, n)
    ax = axes_or_new(ax, "plot_decision_regions")
    kwargs.setdefault("cmap", "coolwarm")
    grid = data["u"]
    ax.pcolormesh(grid, grid, data["choice"][0].T, shading="auto", vmin=0, vmax=1, **kwargs)
    ax.plot(grid, grid, "k:", linewidth=0.8)
    ax.set_xlabel("backlog u1")
    ax.set_ylabel("backlog u2")
    ax.set_title(f"job size x = {float(data['x'][0]):g}")
    return ax


def value_diagonal_data(result: VIResult, u_max: float | None = None, n: int = 121
                        ) -> dict[str, Any]:
    r"""Relative value :math:`v(u, \dots, u)` along the diagonal, with two quadratics.

    Parameters
    ----------
    result : VIResult
        Value iteration (any number of servers).
    u_max : float, optional
        Largest backlog (default ``min(12, U)``).
    n : int
        Points.

    Returns
    -------
    dict
        ``u``, ``v`` (the interpolated relative value, :meth:`VIResult.value`), ``c`` (least
        squares :math:`v \approx c u^2` on ``[2, min(10, U/2)]``,
        :meth:`VIResult.diagonal_constant`), ``quadratic`` (:math:`c u^2`) and ``rnd``
        (:math:`\lambda u^2/(2(1-\rho))`, the value of the equal random split: M/G/1 queues,
        Hyytiä, Penttinen, Aalto, EJOR 2012).
    """
    result = _result(result)
    grid = np.linspace(0.0, _upper(result, u_max, 12.0), integer_value("n", n, 2))
    v = result.value(np.repeat(grid[:, None], result.m, axis=1))
    c = result.diagonal_constant(2.0, min(10.0, result.U / 2))
    return {"u": grid, "v": v, "c": c, "quadratic": c * grid ** 2,
            "rnd": result.lam * grid ** 2 / (2.0 * (1.0 - result.rho)), "rho": result.rho,
            "m": result.m}


def plot_value_diagonal(result: VIResult, u_max: float | None = None, n: int = 121,
                        ax: Any = None, **kwargs: Any) -> Any:
    """Plot :func:`value_diagonal_data`: ``v(u, u)``, its fitted ``c u^2`` and the random
    split's value; returns the axes.  ``kwargs`` go to the line of ``v``."""
    data = value_diagonal_data(result, u_max, n)
    ax = axes_or_new(ax, "plot_value_diagonal")
    ax.plot(data["u"], data["v"], label=f"v(u, u), {result.policy}", **kwargs)
    ax.plot(data["u"], data["quadratic"], "--", label=f"{data['c']:.3f} u^2 (least squares)")
    ax.plot(data["u"], data["rnd"], ":", label="random split: lam u^2 / (2 (1 - rho))")
    ax.set_xlabel("backlog u of every server")
    ax.set_ylabel("relative value")
    ax.legend(fontsize=8)
    return ax
