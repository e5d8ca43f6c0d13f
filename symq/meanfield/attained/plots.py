r"""Waiting time of the attained-service dispatching policies against the load: data and plot.

The main figure of Hellemans & Van Houdt, "Improved load balancing in large scale systems using
attained service time reporting" (IEEE/ACM ToN 2021, arXiv 2011.08250, Fig. 2): the mean-field
mean waiting time :math:`E[W]` of SQ(d), SQ(d)-RTB, SQ(d)-RE, SQ(d)-RTB-RE, LAS(d), LAS(d)-QTB,
RE(d) and LEW(d) against the arrival rate, ``d = 5`` probes and hyperexponential job sizes
(mean 1, SCV 10, balanced means), from the cavity queue with age layers
(:func:`~symq.meanfield.attained.cavity.solve_attained`).  :func:`attained_policies_data` is the
data twin of :func:`plot_attained_policies`; matplotlib is imported only inside the latter,
and only to create a figure when no ``ax`` is given.

Examples
--------
>>> data = attained_policies_data(("SQ", "LEW"), d=1, loads=(0.5,), delta=0.5, rep_max=2.0)
>>> [round(float(v), 5) for v in data["EW"][:, 0]]   # d = 1: M/G/1, lam (1 + SCV)/(2 (1 - lam))
[5.5, 5.5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, TruncationError
from symq.core.parameters import integer_value
from symq.core.plotting import axes_or_new
from symq.core.renamed import renamed_keywords
from symq.laws import PhaseType, as_phase_type, hyperexponential2

from ..sizes import PhaseTypeLaw
from .cavity import solve_attained
from .policies import POLICY_NAMES, Policy

__all__ = ["attained_policies_data", "plot_attained_policies"]



def _solve(policy: str | Policy, d: int, lam: float, sizes: PhaseType, delta: float,
           rep_max: float, B: int) -> Any:
    """:func:`solve_attained`, the queue truncation doubled from ``B`` (up to ``4 B``) until the
    mass at the truncation level is negligible."""
    for levels in (B, 2 * B, 4 * B):
        try:
            return solve_attained(policy, d, lam, sizes, delta=delta, rep_max=rep_max,
                                  B=levels, truncation="raise")
        except TruncationError:
            if levels == 4 * B:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


@renamed_keywords(service="sizes")
def attained_policies_data(policies: Sequence[str | Policy] = POLICY_NAMES, d: int = 5,
                           loads: ArrayLike = (0.3, 0.5, 0.7, 0.8, 0.9),
                           sizes: PhaseTypeLaw | None = None,
                           *, delta: float = 0.25, rep_max: float = 20.0, B: int = 40
                           ) -> dict[str, Any]:
    r"""Mean-field :math:`E[W]` and :math:`E[T]` of each policy at each load.

    Parameters
    ----------
    policies : sequence of str or Policy
        Built-in names (:data:`~symq.meanfield.attained.policies.POLICY_NAMES`) or policies.
    d : int
        Servers probed per arrival.
    loads : array_like
        Per-server arrival rates ``lam`` (the load is ``lam E[X]``, below 1).
    sizes : job-size law, optional
        Default: H2 with mean 1, SCV 10 and balanced means, the paper's Fig. 2
        (:func:`~symq.laws.hyperexponential2`).
    delta, rep_max : float
        Width of the age layers and the largest reported age (the paper: 0.1 and 40; coarser
        layers are cheaper and move :math:`E[W]` by well under 1% here).
    B : int
        Queue-length truncation, doubled (up to ``4 B``) where it holds more than
        :data:`~symq.meanfield.attained.cavity.TRUNCATION_RTOL` of the mass.

    Returns
    -------
    dict
        ``lam``, ``policies`` (names), ``EW`` and ``ET`` (shape ``(len(policies), len(loads))``),
        ``reduction`` (``1 - EW / EW`` of SQ(d), ``NaN`` when SQ is not among the policies),
        ``d``, ``mean`` (:math:`E[X]`).

    Raises
    ------
    InvalidParameter, StabilityError, TruncationError
        From :func:`~symq.meanfield.attained.cavity.solve_attained` (the truncation still
        holds mass at ``4 B``: raise ``B``).
    """
    policies = list(policies)
    if not policies:
        raise InvalidParameter("policies", policies, "a non-empty sequence of policies",
                               f"built-in names: {', '.join(POLICY_NAMES)}")
    lam = np.atleast_1d(np.asarray(loads, dtype=float))
    if lam.ndim != 1 or lam.size == 0:
        raise InvalidParameter("loads", loads, "a non-empty sequence of arrival rates")
    B = integer_value("B", B, 2)
    law = hyperexponential2(1.0, 10.0, 0.5) if sizes is None else as_phase_type(sizes, "sizes")
    results = [[_solve(p, d, x, law, delta, rep_max, B) for x in lam] for p in policies]
    names = [row[0].policy for row in results]
    ew = np.array([[r.EW for r in row] for row in results])
    et = np.array([[r.ET for r in row] for row in results])
    upper = [n.upper() for n in names]
    reduction = 1.0 - ew / ew[upper.index("SQ")] if "SQ" in upper else np.full(ew.shape, np.nan)
    return {"lam": lam, "policies": np.array(names), "EW": ew, "ET": et,
            "reduction": reduction, "d": int(results[0][0].d), "mean": float(results[0][0].mean)}


@renamed_keywords(service="sizes")
def plot_attained_policies(policies: Sequence[str | Policy] = POLICY_NAMES, d: int = 5,
                           loads: ArrayLike = (0.3, 0.5, 0.7, 0.8, 0.9),
                           sizes: PhaseTypeLaw | None = None,
                           *, delta: float = 0.25, rep_max: float = 20.0, B: int = 40,
                           relative: bool = False, data: dict[str, Any] | None = None,
                           ax: Any = None, **kwargs: Any) -> Any:
    r"""Plot :func:`attained_policies_data`, one line per policy; returns the axes.

    ``relative=False``: :math:`E[W]` on a log scale; ``relative=True``: the relative reduction
    :math:`1 - E[W]/E[W_{SQ(d)}]` (Hellemans & Van Houdt 2021, Fig. 2).  ``data`` (the dict
    of :func:`attained_policies_data`) is drawn as given instead of being computed, so that
    both views of one computation cost one solve.  ``kwargs`` go to ``ax.plot``.
    """
    if data is None:
        data = attained_policies_data(policies, d, loads, sizes, delta=delta,
                                      rep_max=rep_max, B=B)
    ax = axes_or_new(ax, "plot_attained_policies")
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("markersize", 3)
    values = data["reduction"] if relative else data["EW"]
    for name, row in zip(data["policies"], values):
        ax.plot(data["lam"], row, label=str(name), **kwargs)
    ax.set_xlabel("arrival rate per server lam")
    if relative:
        ax.set_ylabel("relative reduction of E[W] over SQ(d)")
        ax.axhline(0.0, color="grey", linewidth=0.6)
    else:
        ax.set_yscale("log")
        ax.set_ylabel("mean waiting time E[W]")
    ax.set_title(f"attained-service policies, d = {data['d']} (mean field)")
    ax.legend(fontsize=7)
    return ax
