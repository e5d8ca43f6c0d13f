r"""Plots of the supermarket model JSQ(d): data functions and (optional) matplotlib plots.

Each ``plot_*`` function has a ``*_data`` twin that returns the arrays it draws (a dict of numpy
arrays and scalars); matplotlib is imported only inside the plot functions, and only to create a
figure when no ``ax`` is given.

* :func:`jsq_tail_data` / :func:`plot_jsq_tail`: the queue-length tail :math:`u_k` of the
  mean-field fixed point, :math:`u_k = \lambda^{(d^k-1)/(d-1)}` (Vvedenskaya, Dobrushin,
  Karpelevich 1996; Mitzenmacher 2001, Theorem 3.6), against :math:`\lambda^k` for ``d = 1``;
* :func:`jsq_response_data` / :func:`plot_jsq_response`: :math:`E[T]` against the load from
  the mean field, the refined mean field :math:`\pi + V/N` (Gast & Van Houdt, SIGMETRICS 2018,
  Theorem 1) and a finite-N simulation with confidence intervals;
* :func:`lyapunov_data` / :func:`plot_lyapunov`: the distance
  :math:`V(t) = \sum_k |u_k(t) - u_k^*|` along trajectories of the mean-field ODE, the
  Lyapunov function of the stability discussion of Li (Special Matrices 4, 2016).

Examples
--------
>>> data = jsq_tail_data((1, 2), lam=0.5, K=3)
>>> data["u"].tolist()          # lam^k and lam^(2^k - 1)
[[0.5, 0.25, 0.125], [0.5, 0.125, 0.0078125]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.plotting import axes_or_new
from symq.core.randomness import RngLike, as_generator

from .nonlinear import relative_entropy_trajectory
from .simulation import simulate_jsq
from .supermarket import refined_jsq, solve_supermarket

__all__ = ["jsq_tail_data", "plot_jsq_tail", "jsq_response_data", "plot_jsq_response",
           "lyapunov_data", "plot_lyapunov"]

#: the labels of the default initial states of :func:`relative_entropy_trajectory`.
_DEFAULT_STATES = ("empty", "3 jobs at every server", "u_k = 0.95^k")



def _integers(name: str, values: Sequence[Any], minimum: int) -> list[int]:
    values = list(np.atleast_1d(np.asarray(values, dtype=object)))
    if not values:
        raise InvalidParameter(name, values, f"a non-empty sequence of integers >= {minimum}")
    return [integer_value(name, v, minimum) for v in values]


def _loads(name: str, values: ArrayLike) -> np.ndarray:
    out = np.atleast_1d(np.asarray(values, dtype=float))
    if out.ndim != 1:
        raise InvalidParameter(name, values, "a sequence of per-server loads in (0, 1)")
    return out


def jsq_tail_data(ds: Sequence[int] = (1, 2, 3), lam: float = 0.9, K: int = 20
                  ) -> dict[str, Any]:
    r"""Tail :math:`u_1, \dots, u_K` of the JSQ(d) mean-field fixed point for several ``d``.

    :math:`u_k` is the fraction of servers with at least ``k`` jobs, from
    :func:`~symq.meanfield.supermarket.solve_supermarket` (closed form
    :math:`\lambda^{(d^k-1)/(d-1)}`, Vvedenskaya, Dobrushin, Karpelevich 1996; Mitzenmacher
    2001; :math:`\lambda^k` for ``d = 1``, the M/M/1 queue).

    Parameters
    ----------
    ds : sequence of int
        Numbers of probed queues, each ``>= 1``.
    lam : float
        Per-server arrival rate, ``0 < lam < 1`` (unit-rate exponential service).
    K : int
        Number of levels.

    Returns
    -------
    dict
        ``k`` (levels ``1..K``), ``u`` (shape ``(len(ds), K)``; levels where the solver stops
        listing, :math:`u_k < 10^{-16}`, are 0), ``d`` and ``lam``.
    """
    ds = _integers("ds", ds, 1)
    K = integer_value("K", K, 1)
    u = np.zeros((len(ds), K))
    for row, d in enumerate(ds):
        tail = solve_supermarket(d, lam).tail[:K]
        u[row, :tail.size] = tail
    return {"k": np.arange(1, K + 1), "u": u, "d": np.array(ds), "lam": float(lam)}


def plot_jsq_tail(ds: Sequence[int] = (1, 2, 3), lam: float = 0.9, K: int = 20,
                  ax: Any = None, **kwargs: Any) -> Any:
    """Plot :func:`jsq_tail_data` on a log scale, one line per ``d``; returns the axes.

    ``kwargs`` go to ``ax.plot`` (e.g. ``marker``).
    """
    data = jsq_tail_data(ds, lam, K)
    ax = axes_or_new(ax, "plot_jsq_tail")
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("markersize", 3)
    for d, u in zip(data["d"], data["u"]):
        shown = u > 0
        label = f"d = {d}" + (" (M/M/1)" if d == 1 else "")
        ax.plot(data["k"][shown], u[shown], label=label, **kwargs)
    ax.set_yscale("log")
    ax.set_xlabel("queue length k")
    ax.set_ylabel("u_k: fraction of servers with at least k jobs")
    ax.set_title(f"JSQ(d) mean-field fixed point, lam = {data['lam']:g}")
    ax.legend(fontsize=8)
    return ax


def jsq_response_data(d: int = 2, N: int = 100, loads: ArrayLike | None = None,
                      sim_loads: ArrayLike = (0.5, 0.7, 0.9), *, n_jobs: int | None = 400_000,
                      rng: RngLike = None, level: float = 0.95) -> dict[str, Any]:
    r"""Mean response time of JSQ(d) against the load: mean field, refined, simulation.

    * ``ET``: mean field, :func:`~symq.meanfield.supermarket.solve_supermarket`
      (:math:`\sum_k u_k / \lambda`);
    * ``ET_N``: refined mean field :math:`\pi + V/N` (Gast & Van Houdt, SIGMETRICS 2018,
      Theorem 1; :func:`~symq.meanfield.supermarket.refined_jsq`), ``NaN`` where the expansion
      leaves the domain of occupancy vectors (``refined_valid`` false);
    * ``sim_*``: batch-means estimate of a run of :func:`~symq.meanfield.simulation.simulate_jsq`
      with ``N`` servers at each load of ``sim_loads``, beside the two approximations at the
      same loads (``ET_at_sim``, ``ET_N_at_sim``).

    Parameters
    ----------
    d : int
        Queues probed per arrival (with replacement).
    N : int
        Number of servers of the refined mean field and of the simulation.
    loads : array_like, optional
        Loads of the mean-field curves (default 19 points on ``[0.05, 0.95]``).
    sim_loads : array_like
        Loads simulated (empty: none).
    n_jobs : int or None
        Departures of each simulation (at least ``3334``; the cost of the data grows
        linearly in it); ``None`` skips the simulation.
    rng : int, SeedSequence, Generator or None
        Randomness of the simulations (the same seed gives the same data).
    level : float
        Confidence level of the intervals.

    Returns
    -------
    dict
        ``lam``, ``ET``, ``ET_N``, ``refined_valid``; ``sim_lam``, ``sim_ET``,
        ``sim_half_width``, ``ET_at_sim``, ``ET_N_at_sim`` (empty when not simulated); ``d``,
        ``N``, ``n_jobs``, ``level``.

    Raises
    ------
    StabilityError, InvalidParameter
        A load outside ``(0, 1)``, bad ``d``, ``N``, ``n_jobs`` or ``level``.
    """
    d = integer_value("d", d, 1)
    N = integer_value("N", N, 1)
    level = real_value("level", level, "a number in (0, 1)", lambda v: 0 < v < 1)
    lam = _loads("loads", np.linspace(0.05, 0.95, 19) if loads is None else loads)
    sim_lam = _loads("sim_loads", sim_loads) if n_jobs is not None else np.empty(0)
    et, et_n, valid = _approximations(d, N, lam)
    gen = as_generator(rng)
    runs = [simulate_jsq(N, d, x, n_jobs=n_jobs, rng=gen, level=level).ET for x in sim_lam]
    et_sim, et_n_sim, _ = _approximations(d, N, sim_lam)
    return {"lam": lam, "ET": et, "ET_N": et_n, "refined_valid": valid, "sim_lam": sim_lam,
            "sim_ET": np.array([ci.mean for ci in runs]),
            "sim_half_width": np.array([ci.half_width for ci in runs]),
            "ET_at_sim": et_sim, "ET_N_at_sim": et_n_sim,
            "d": d, "N": N, "n_jobs": 0 if n_jobs is None else int(n_jobs), "level": level}


def _approximations(d: int, N: int, lam: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean-field and refined ``E[T]`` at the loads ``lam`` (refined: ``NaN`` where invalid)."""
    et = np.array([solve_supermarket(d, x).ET for x in lam])
    refined = [refined_jsq(d, x, N) for x in lam]
    valid = np.array([r.refined_valid for r in refined], dtype=bool)
    return et, np.where(valid, [r.ET_N for r in refined], np.nan), valid


def plot_jsq_response(d: int = 2, N: int = 100, loads: ArrayLike | None = None,
                      sim_loads: ArrayLike = (0.5, 0.7, 0.9), *, n_jobs: int | None = 400_000,
                      rng: RngLike = None, level: float = 0.95, data: dict[str, Any] | None = None,
                      ax: Any = None, **kwargs: Any) -> Any:
    """Plot :func:`jsq_response_data`: mean field (solid), refined (dashed), simulation (error
    bars); returns the axes.

    ``data`` (the dict of :func:`jsq_response_data`) is drawn as given instead of being
    computed (a table and a plot from one simulation); ``kwargs`` go to the mean-field line
    (e.g. ``color``).
    """
    if data is None:
        data = jsq_response_data(d, N, loads, sim_loads, n_jobs=n_jobs, rng=rng, level=level)
    ax = axes_or_new(ax, "plot_jsq_response")
    d, N = data["d"], data["N"]
    (line,) = ax.plot(data["lam"], data["ET"], label=f"mean field, d = {d}", **kwargs)
    ax.plot(data["lam"], data["ET_N"], "--", color=line.get_color(),
            label=f"refined mean field, d = {d}, N = {N}")
    if data["sim_lam"].size:
        ax.errorbar(data["sim_lam"], data["sim_ET"], yerr=data["sim_half_width"], fmt="o",
                    color=line.get_color(), markersize=3, capsize=2,
                    label=f"simulation, d = {d}, N = {N} ({data['level']:.0%} CI)")
    ax.set_xlabel("per-server load lam")
    ax.set_ylabel("mean response time E[T]")
    ax.legend(fontsize=8)
    return ax


def lyapunov_data(d: int = 2, lam: float = 0.9, *, K: int = 20, t_final: float = 30.0,
                  n_times: int = 200, initial_states: Sequence[ArrayLike] | None = None
                  ) -> dict[str, Any]:
    r"""Distance to the fixed point along trajectories of the JSQ(d) mean-field ODE.

    :math:`V(t) = \sum_k |u_k(t) - u_k^*|` and the relative entropy of the queue-length law
    with respect to the fixed point, along the ``K``-level ODE
    :math:`\dot u_k = \lambda (u_{k-1}^d - u_k^d) - (u_k - u_{k+1})` from each initial state
    (:func:`~symq.meanfield.nonlinear.relative_entropy_trajectory`); the Lyapunov functions of
    the stability discussion of Li (Special Matrices 4, 2016) and Mitzenmacher (2001).

    Parameters
    ----------
    d, lam : int, float
        JSQ(d) at per-server load ``0 < lam < 1``.
    K : int
        Truncation of the ODE.
    t_final, n_times : float, int
        Output times ``linspace(0, t_final, n_times)``.
    initial_states : sequence of array_like, optional
        Tails ``u_1..u_K``; default: the empty system, 3 jobs at every server,
        :math:`u_k = 0.95^k`.

    Returns
    -------
    dict
        ``t``, ``V`` and ``relative_entropy`` (shape ``(states, n_times)``), ``labels``,
        ``max_increase`` (largest increase of ``V`` between output times), ``d``, ``lam``.
    """
    check = relative_entropy_trajectory(d, lam, initial_states, K=integer_value("K", K, 1),
                                        t_final=t_final, n_times=n_times)
    labels = _DEFAULT_STATES if initial_states is None else tuple(
        f"initial state {i + 1}" for i in range(len(check.l1)))
    return {"t": check.t, "V": np.array(check.l1), "relative_entropy":
            np.array(check.relative_entropy), "labels": np.array(labels),
            "max_increase": check.max_increase, "d": int(d), "lam": float(lam)}


def plot_lyapunov(d: int = 2, lam: float = 0.9, *, K: int = 20, t_final: float = 30.0,
                  n_times: int = 200, initial_states: Sequence[ArrayLike] | None = None,
                  ax: Any = None, **kwargs: Any) -> Any:
    """Plot ``V(t)`` of :func:`lyapunov_data` on a log scale, one line per initial state;
    returns the axes.  ``kwargs`` go to ``ax.plot``."""
    data = lyapunov_data(d, lam, K=K, t_final=t_final, n_times=n_times,
                         initial_states=initial_states)
    ax = axes_or_new(ax, "plot_lyapunov")
    for v, label in zip(data["V"], data["labels"]):
        shown = v > 0
        ax.plot(data["t"][shown], v[shown], label=f"from {label}", **kwargs)
    ax.set_yscale("log")
    ax.set_xlabel("time t")
    ax.set_ylabel("V(t) = sum_k |u_k(t) - u_k*|")
    ax.set_title(f"JSQ({data['d']}) mean-field ODE, lam = {data['lam']:g}")
    ax.legend(fontsize=8)
    return ax
