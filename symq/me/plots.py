"""Densities of ME fits against a target: data and (optional) matplotlib plot.

matplotlib is imported lazily; :func:`density_comparison_data` is the plot's data twin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from symq.core.plotting import axes_or_new

from .distribution import ME

__all__ = ["density_comparison_data", "plot_density_comparison"]


def density_comparison_data(fits: Mapping[str, ME], target_pdf: Callable[[np.ndarray], Any] | None,
                            upper: float, n: int = 400) -> dict[str, np.ndarray]:
    """Densities of named fits (and of the target) on ``n`` points of ``[0, upper]``."""
    t = np.linspace(0.0, upper, n)
    data = {"t": t}
    if target_pdf is not None:
        data["target"] = np.asarray(target_pdf(t), dtype=float)
    for name, me in fits.items():
        data[name] = np.asarray(me.pdf(t), dtype=float)
    return data


def plot_density_comparison(fits: Mapping[str, ME], target_pdf: Callable[[np.ndarray], Any] | None,
                            upper: float, ax: Any = None, n: int = 400) -> Any:
    """Plot the densities of ``fits`` and of the target; returns the matplotlib axes."""
    ax = axes_or_new(ax, "plot_density_comparison")
    data = density_comparison_data(fits, target_pdf, upper, n)
    if "target" in data:
        ax.plot(data["t"], data["target"], "k-", linewidth=2, label="target")
    for name in fits:
        ax.plot(data["t"], data[name], label=name)
    ax.axhline(0.0, color="grey", linewidth=0.6)
    if "target" in data:  # an improper fit (e.g. a right-half-plane pole) must not hide the rest
        top = float(np.max(data["target"]))
        ax.set_ylim(-0.6 * top, 1.4 * top)
    ax.set_xlabel("t")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    return ax
