r"""Fairness of dispatching: mean response time conditioned on the job size, data and plot.

The optimal size-aware policies of Hyytiä & Righter (arXiv 2402.08142) unbalance the
backlogs on purpose, which suggests that short jobs gain and long jobs may lose; this module
measures it.  :func:`response_by_size_data` simulates each policy
once with size bins (:func:`~symq.dispatch.simulation.simulate.simulate_dispatch` with
``size_bins``) and returns, per bin, :math:`E[T \mid X \in \text{bin}]` with a batch-means interval
(a ratio estimator per batch: sum of T over the number of jobs of the bin), and the slowdown
:math:`E[T \mid X \in \text{bin}] / E[X \mid X \in \text{bin}]`.  The bins are given as edges
or are equiprobable bins of the size law; their abscissa is the exact conditional mean size
(:func:`~symq.dispatch.sizebins.bin_means`).

For a size-blind FCFS policy the waiting time does not depend on the own size, so
:math:`E[T \mid X = x] = x + E[W]`: RND (M/G/1 per server, Pollaczek-Khinchine) and LWL with
exponential sizes (M/M/m, Erlang C) give exact references (tests/dispatch/test_fairness.py).

The intervals are simultaneous by default: each is at the Bonferroni level
:math:`1 - (1 - \text{level})/(P k)` for ``P`` policies and ``k`` bins, so that all of them hold
together with probability at least ``level``.

:func:`plot_response_by_size` draws the data (matplotlib, imported inside the function).

Examples
--------
>>> from symq.laws import Exponential
>>> d = response_by_size_data(["rnd", "lwl"], 2, 0.5, Exponential(1.0), bins=4, n_jobs=200_000,
...                           rng=1)
>>> d.means.shape, d.centres.shape
((2, 4), (4,))
>>> bool(d.means[0, 0] > d.means[1, 0])       # RND waits longer than LWL for short jobs too
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, MissingDependency
from symq.core.randomness import RngLike, as_generator
from symq.core.result import Exactness, ResultBase
from symq.core.simstats import ConfidenceInterval

from ..policies import BoundPolicy, DispatchPolicy
from ..policies.checks import check_model
from ..sizebins import DEFAULT_BINS, bin_means, bin_probabilities, size_edges
from ..sizes import size_name
from .simulate import simulate_dispatch

__all__ = ["ResponseBySize", "response_by_size_data", "plot_response_by_size"]


@dataclass(frozen=True)
class ResponseBySize(ResultBase):
    """Mean response time by job size for several policies (:func:`response_by_size_data`).

    Attributes
    ----------
    policies : tuple of str
        Policy names, one row of the arrays each.
    edges : numpy.ndarray (k+1,)
        Bin edges.
    centres : numpy.ndarray (k,)
        Exact mean size per bin, :math:`E[X \\mid \\text{bin}]`.
    probabilities : numpy.ndarray (k,)
        :math:`P(X \\in \\text{bin})`.
    means, half_widths : numpy.ndarray (P, k)
        :math:`E[T \\mid X \\in \\text{bin}]` and the half widths of its intervals.
    slowdown, slowdown_half_widths : numpy.ndarray (P, k)
        ``means / centres`` and ``half_widths / centres``.
    jobs : numpy.ndarray (P, k)
        Post-warm-up jobs per bin.
    ET : tuple of ConfidenceInterval
        Each policy's overall mean response time (at ``level``).
    level : float
        Joint confidence of all the bin intervals (``joint=True``) or the level of each.
    bin_level : float
        Level of each bin interval.
    m : int
    rho : float
    sizes : str
        Name of the size law.
    speeds : numpy.ndarray or None
    n_jobs : int
        Jobs simulated per policy.
    method : str
    exactness : Exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("policies", "m", "rho", "sizes", "level")

    policies: tuple[str, ...]
    edges: np.ndarray
    centres: np.ndarray
    probabilities: np.ndarray
    means: np.ndarray
    half_widths: np.ndarray
    slowdown: np.ndarray
    slowdown_half_widths: np.ndarray
    jobs: np.ndarray
    ET: tuple[ConfidenceInterval, ...]
    level: float
    bin_level: float
    m: int
    rho: float
    sizes: str
    speeds: np.ndarray | None
    n_jobs: int
    method: str = "simulation (batch means of a ratio estimator per size bin)"
    exactness: Exactness = Exactness.SIMULATED

    def interval(self, policy: str, q: int) -> ConfidenceInterval:
        """The interval of bin ``q`` of ``policy`` (at :attr:`bin_level`)."""
        if policy not in self.policies:
            raise InvalidParameter("policy", policy, "one of " + ", ".join(self.policies))
        p = self.policies.index(policy)
        return ConfidenceInterval(float(self.means[p, q]), float(self.half_widths[p, q]),
                                  self.bin_level, self.ET[p].n, self.ET[p].method)


def _name(policy: Any) -> str:
    return policy.name if isinstance(policy, (DispatchPolicy, BoundPolicy)) else str(policy)


def response_by_size_data(policies: str | DispatchPolicy | BoundPolicy
                          | Sequence[str | DispatchPolicy | BoundPolicy], m: int, rho: float,
                          sizes: Any, bins: int | ArrayLike = DEFAULT_BINS, *,
                          n_jobs: int = 10**6, rng: RngLike = None, level: float = 0.95,
                          n_batches: int = 30, speeds: ArrayLike | None = None,
                          joint: bool = True) -> ResponseBySize:
    """Simulated :math:`E[T \\mid X \\in \\text{bin}]` per size bin for each policy.

    Parameters
    ----------
    policies : policy or sequence of policies
        Names of :data:`~symq.dispatch.policies.named.POLICY_NAMES`, policy objects (a score
        policy, ``get_policy("lookup", result=...)`` for a value-iteration policy) or bound
        policies, as :func:`~symq.dispatch.simulation.simulate.simulate_dispatch` takes them.
    m, rho, sizes, speeds
        As in :func:`~symq.dispatch.simulation.simulate.simulate_dispatch`.
    bins : int or array_like
        Number of equiprobable bins of the size law, or the bin edges
        (:func:`~symq.dispatch.sizebins.size_edges`).
    n_jobs, n_batches : int
        Run length and batches per policy (every bin needs jobs in every batch).
    rng : seed or Generator
        Each policy gets its own stream (``SeedSequence.spawn``); same seed, same data.
    level : float
        Confidence level: joint over all ``P k`` bin intervals (Bonferroni) if ``joint``,
        else the level of each interval.

    Returns
    -------
    ResponseBySize

    Raises
    ------
    InvalidParameter, StabilityError, UnknownName
        As :func:`~symq.dispatch.simulation.simulate.simulate_dispatch`; no policy; a bin without
        jobs in some batch (named ``size_bins``).
    """
    items = [policies] if isinstance(policies, (str, DispatchPolicy, BoundPolicy)) \
        else list(policies)
    if not items:
        raise InvalidParameter("policies", policies, "at least one dispatching policy")
    m, rho, law, _ = check_model(m, rho, sizes)
    edges = size_edges(law, bins)
    k = edges.size - 1
    level = float(level)
    if not 0.0 < level < 1.0:
        raise InvalidParameter("level", level, "a real number in (0, 1)")
    bin_level = 1.0 - (1.0 - level) / (len(items) * k) if joint else level
    seeds = np.random.SeedSequence(int(as_generator(rng).integers(0, 2**63 - 1))).spawn(len(items))
    centres = bin_means(law, edges)
    means, halves, jobs, ETs, spd = [], [], [], [], None
    for policy, seed in zip(items, seeds):
        est = simulate_dispatch(policy, m, rho, law, n_jobs=n_jobs, rng=np.random.default_rng(seed),
                                level=level, n_batches=n_batches, speeds=speeds, size_bins=edges,
                                size_level=bin_level)
        means.append([ci.mean for ci in est.ET_by_size])
        halves.append([ci.half_width for ci in est.ET_by_size])
        jobs.append(est.jobs_by_size)
        ETs.append(est.ET)
        spd = est.speeds
    means_a, halves_a = np.array(means), np.array(halves)
    return ResponseBySize(
        policies=tuple(_name(p) for p in items), edges=edges, centres=centres,
        probabilities=bin_probabilities(law, edges), means=means_a, half_widths=halves_a,
        slowdown=means_a / centres, slowdown_half_widths=halves_a / centres,
        jobs=np.array(jobs), ET=tuple(ETs), level=level, bin_level=bin_level, m=m, rho=rho,
        sizes=size_name(law), speeds=spd, n_jobs=int(n_jobs))


def plot_response_by_size(data: ResponseBySize, ax: Any = None, *, slowdown: bool = False,
                          logx: bool = True) -> Any:
    """Plot :math:`E[T \\mid x]` (or the slowdown) against the bins' mean sizes, one line with
    error bars per policy; returns the matplotlib Axes.

    Parameters
    ----------
    data : ResponseBySize
        From :func:`response_by_size_data`.
    ax : matplotlib Axes, optional
        Drawn into; a new figure otherwise.
    slowdown : bool
        Plot :math:`E[T \\mid x]/x` instead of :math:`E[T \\mid x]`.
    logx : bool
        Logarithmic size axis.

    Raises
    ------
    MissingDependency
        matplotlib is not installed.
    """
    if ax is None:
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise MissingDependency("plot_response_by_size needs matplotlib (pip install "
                                    "matplotlib); response_by_size_data gives the arrays") from None
        _, ax = plt.subplots()
    y = data.slowdown if slowdown else data.means
    err = data.slowdown_half_widths if slowdown else data.half_widths
    for p, name in enumerate(data.policies):
        ax.errorbar(data.centres, y[p], yerr=err[p], marker="o", capsize=3, label=name)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel("job size x (mean of the bin)")
    ax.set_ylabel("slowdown E[T | x] / x" if slowdown else "E[T | x]")
    ax.set_title(f"m={data.m}, rho={data.rho:g}, sizes {data.sizes}; {data.bin_level:.4g} "
                 "intervals" + (f" (joint {data.level:g})" if data.bin_level != data.level
                                else ""))
    ax.legend()
    return ax
