"""Window protocols a claims file declares: the model kind ``window`` and its derivation.

A claims file declares an adaptive window protocol by its three profiles, formulas in the window
``w`` and its own parameters: growth ``dW/dt = a(W)``, Poisson losses of rate ``lam(W)``, the
window ``d(W)`` right after a loss (Altman, Avrachenkov, Kherani, Prabhu, *Performance analysis
and stochastic stability of congestion control protocols*, IEEE INFOCOM 2005, Section II).

* :mod:`~symq.window.declared.kind`: :func:`declare_window` (validation of the declaration,
  the :class:`~symq.core.registry.ModelSpec` solved on the ``awp`` model's path),
  :class:`DeclaredWindow`, :func:`parse_window` (shared with the kind ``window-sim`` of
  :mod:`symq.window.simmodel`);
* :mod:`~symq.window.declared.derivation`: :func:`protocol_derivation`, what ``symq derive
  FILE`` derives for a declared protocol (Kolmogorov equation, drift balances, stability limits,
  the closed forms of its class; ``derivations/awp.md``).
"""

from .derivation import power_form, protocol_derivation
from .kind import (
    KEYS,
    LOSS_PROBABILITY,
    WINDOW_KIND,
    WINDOW_MODEL_KIND,
    DeclaredWindow,
    declare_window,
    parse_window,
)

__all__ = [
    "KEYS",
    "LOSS_PROBABILITY",
    "WINDOW_KIND",
    "WINDOW_MODEL_KIND",
    "DeclaredWindow",
    "declare_window",
    "parse_window",
    "power_form",
    "protocol_derivation",
]
