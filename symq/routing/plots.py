"""Price of anarchy against the load: data and (optional) matplotlib plot.

Altman, Ayesta, Prabhu (2011), Section on the price of anarchy: PoA(rho) = J^NE / J* as the
total work rate rho grows from 0 to the capacity sum(C).  matplotlib is imported lazily.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from symq.core.plotting import axes_or_new

from .solve import heavy_traffic_poa, price_of_anarchy, social_optimum, wardrop_equilibrium

__all__ = ["poa_curve_data", "plot_poa_curve"]


def poa_curve_data(C: Sequence[float], w: Sequence[float], n: int = 200,
                   upto: float = 0.995) -> dict[str, np.ndarray | float]:
    """PoA and the number of used servers over loads rho in (0, upto * sum(C)).

    Parameters
    ----------
    C, w : sequence of float
        Capacities and holding costs.
    n : int
        Number of load values.
    upto : float
        Largest load as a fraction of the capacity sum(C) (must be < 1).

    Returns
    -------
    dict
        ``rho`` (loads), ``poa``, ``n_opt`` and ``n_ne`` (used servers), and
        ``heavy_traffic`` (the limit of PoA as rho -> sum(C)).
    """
    total = float(np.sum(C))
    rho = np.linspace(total / n, upto * total, n)
    poa = np.array([price_of_anarchy(C, w, r) for r in rho])
    n_opt = np.array([len(social_optimum(C, w, r).active) for r in rho])
    n_ne = np.array([len(wardrop_equilibrium(C, w, r).active) for r in rho])
    return {"rho": rho, "poa": poa, "n_opt": n_opt, "n_ne": n_ne,
            "heavy_traffic": heavy_traffic_poa(C, w)}


def plot_poa_curve(C: Sequence[float], w: Sequence[float], ax: Any = None, n: int = 200,
                   label: str | None = None, **kwargs: Any) -> Any:
    """Plot PoA against the normalised load rho / sum(C); returns the matplotlib axes."""
    ax = axes_or_new(ax, "plot_poa_curve")
    data = poa_curve_data(C, w, n=n)
    label = label or f"C={list(C)}, w={list(w)}"
    (line,) = ax.plot(data["rho"] / np.sum(C), data["poa"], label=label, **kwargs)
    ax.axhline(data["heavy_traffic"], color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_xlabel(r"load $\rho / \sum_j C_j$")
    ax.set_ylabel("price of anarchy")
    return ax
