r"""Stationary window densities of adaptive window protocols: data and (optional) plot.

The stationary (time-average) density :math:`f` of the window of TCP NewReno, Scalable TCP,
HighSpeed TCP or any :class:`~symq.window.protocol.WindowProtocol`, from
:func:`~symq.window.solve.solve_protocol` (the q-series closed form of the power-law class, the
MIMD law with a floor, or the numerical solver of the stationary Kolmogorov equation; Altman,
Avrachenkov, Kherani, Prabhu, IEEE INFOCOM 2005).  On a logarithmic window axis the plot shows
:math:`w f(w)`, the density of :math:`\ln W`, so that areas stay comparable across protocols
whose windows differ by orders of magnitude.  :func:`window_density_data` is the data twin of
:func:`plot_window_densities`; matplotlib is imported only inside the latter, and only to
create a figure when no ``ax`` is given.

Examples
--------
>>> from symq.window.protocol import newreno
>>> data = window_density_data([newreno(1e-4)], n=200)
>>> data["pdf"].shape, str(data["names"][0])
((1, 200), 'NewReno')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.plotting import axes_or_new

from .protocol import WindowProtocol
from .solve import WindowLaw, solve_protocol

__all__ = ["window_density_data", "plot_window_densities"]

_Protocols = WindowProtocol | WindowLaw | Sequence[WindowProtocol | WindowLaw] | Mapping[
    str, WindowProtocol | WindowLaw]



def _laws(protocols: _Protocols) -> tuple[list[str], list[WindowLaw]]:
    """Names and solved laws of a protocol, a law, a sequence of them or a name -> item map."""
    if isinstance(protocols, (WindowProtocol, WindowLaw)):
        protocols = [protocols]
    items = list(protocols.items()) if isinstance(protocols, Mapping) else \
        [(None, p) for p in protocols]
    if not items:
        raise InvalidParameter("protocols", protocols, "a non-empty sequence of window "
                               "protocols or solved laws (WindowProtocol or WindowLaw)")
    names, laws = [], []
    for name, item in items:
        if isinstance(item, WindowProtocol):
            item = solve_protocol(item)
        if not isinstance(item, WindowLaw):
            raise InvalidParameter("protocols", item, "window protocols (WindowProtocol) or "
                                   "laws from solve_protocol (WindowLaw)")
        names.append(str(name) if name is not None else item.protocol.name)
        laws.append(item)
    return names, laws


def window_density_data(protocols: _Protocols, w: ArrayLike | None = None, n: int = 600,
                        coverage: float = 1e-4) -> dict[str, Any]:
    r"""Stationary densities :math:`f(w)` of the windows of several protocols on one grid.

    Parameters
    ----------
    protocols : WindowProtocol, WindowLaw, a sequence or a mapping of them
        _Protocols are solved by :func:`~symq.window.solve.solve_protocol`; solved laws are
        used as they are; a mapping gives the names (default: each protocol's name).
    w : array_like, optional
        Windows (packets) at which the densities are evaluated.  Default: ``n`` points
        spaced geometrically from the smallest ``coverage`` quantile to the largest
        ``1 - coverage`` quantile of the laws.
    n : int
        Points of the default grid.
    coverage : float
        Probability left out at each end of the default grid, in ``(0, 0.5)``.

    Returns
    -------
    dict
        ``w``; ``names``; ``pdf`` and ``w_pdf`` (:math:`f(w)` and :math:`w f(w)`, the density
        of :math:`\ln W`; shape ``(len(protocols), len(w))``, the atom at a cap ``w_max``
        excluded); ``mean`` (:math:`E[W]`) and ``atom_at_cap`` (:math:`P(W = w_{max})`) per
        protocol.
    """
    names, laws = _laws(protocols)
    if w is None:
        n = integer_value("n", n, 2)
        eps = real_value("coverage", coverage, "a probability in (0, 0.5)", lambda v: 0 < v < 0.5)
        ends = np.array([law.icdf(np.array([eps, 1.0 - eps])) for law in laws], dtype=float)
        low, high = float(np.min(ends[:, 0])), float(np.max(ends[:, 1]))
        grid = np.geomspace(low, high, n) if low > 0 else np.linspace(low, high, n)
    else:
        grid = np.atleast_1d(np.asarray(w, dtype=float))
        if grid.ndim != 1 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
            raise InvalidParameter("w", w, "a sequence of finite windows >= 0")
    pdf = np.array([np.asarray(law.pdf(grid), dtype=float) for law in laws])
    return {"w": grid, "names": np.array(names), "pdf": pdf, "w_pdf": grid * pdf,
            "mean": np.array([law.mean_window for law in laws]),
            "atom_at_cap": np.array([law.atom_at_cap for law in laws])}


def plot_window_densities(protocols: _Protocols, w: ArrayLike | None = None, n: int = 600,
                          coverage: float = 1e-4, *, log: bool = True, ax: Any = None,
                          **kwargs: Any) -> Any:
    r"""Plot :func:`window_density_data`, one line per protocol; returns the axes.

    ``log=True``: :math:`w f(w)` against a logarithmic window axis (the density of
    :math:`\ln W`); ``log=False``: :math:`f(w)` on linear axes.  ``kwargs`` go to ``ax.plot``.
    """
    data = window_density_data(protocols, w, n, coverage)
    ax = axes_or_new(ax, "plot_window_densities")
    values = data["w_pdf"] if log else data["pdf"]
    for name, row, mean in zip(data["names"], values, data["mean"]):
        ax.plot(data["w"], row, label=f"{name} (E[W] = {mean:.4g})", **kwargs)
    if log:
        ax.set_xscale("log")
        ax.set_ylabel("w f(w)  (density of log W)")
    else:
        ax.set_ylabel("density f(w)")
    ax.set_xlabel("window w (packets)")
    ax.legend(fontsize=8)
    return ax
