"""The models and model kinds of :mod:`symq.window`, declared for the registry
(:mod:`symq.core.registry`).

Models: ``awp`` (the stationary window law of an adaptive window protocol) and ``window-sim``
(its Monte Carlo simulation).  Model kinds: ``window`` and ``window-sim``, a protocol declared by
its increase, loss rate and window after a loss in a claims file.  This module is the one place
that names them; :func:`symq.core.registry.load_domains` registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from . import declared, simmodel  # noqa: F401 - see MODEL_KINDS
from .model import AWP
from .simmodel import WINDOW_SIM

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep``.
MODELS: tuple[ModelSpec, ...] = (AWP, WINDOW_SIM)
#: Kinds of model a claims file may declare.  The two window kinds are not yet bound to a name in
#: :mod:`~symq.window.declared` and :mod:`~symq.window.simmodel` (their import registers them);
#: once they are (``WINDOW_MODEL_KIND = ModelKind(...)``, ``WINDOW_SIM_KIND = ModelKind(...)``),
#: they are listed here: ``(declared.WINDOW_MODEL_KIND, simmodel.WINDOW_SIM_KIND)``.
MODEL_KINDS: tuple[ModelKind, ...] = ()
