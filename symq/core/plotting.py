"""The one place the plot functions of every domain get their matplotlib axes.

matplotlib is optional (``pip install 'symq[plot]'``) and imported only here, only when a plot
function is called without an axes: every ``plot_*(..., ax=None)`` draws on ``ax`` when given
one (then pyplot is never imported, and the caller's backend and figures are left alone) and
on a new pyplot figure otherwise.  Each ``plot_*`` has a ``*_data`` twin that returns the
arrays, for users without matplotlib.
"""

from __future__ import annotations

from typing import Any

from .errors import MissingDependency

__all__ = ["axes_or_new"]


def axes_or_new(ax: Any, who: str) -> Any:
    """``ax``, or the axes of a new pyplot figure.

    Parameters
    ----------
    ax : matplotlib axes or None
        Where to draw.
    who : str
        The plot function, named in the error when matplotlib is missing.

    Raises
    ------
    MissingDependency
        ``ax`` is None and matplotlib is not installed.
    """
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependency(f"{who} needs matplotlib (pip install 'symq[plot]'); its "
                                "*_data twin gives the arrays") from None
    return plt.subplots()[1]
