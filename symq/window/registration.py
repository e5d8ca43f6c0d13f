"""The models and model kinds of :mod:`symq.window`, declared for the registry
(:mod:`symq.core.registry`).

Models: ``awp`` (the stationary window law of an adaptive window protocol) and ``window-sim``
(its Monte Carlo simulation).  Model kinds: ``window`` and ``window-sim``, a protocol declared by
its increase, loss rate and window after a loss in a claims file.  This module is the one place
that names them; :func:`symq.core.registry.load_domains` registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from .declared import WINDOW_MODEL_KIND
from .model import AWP
from .simmodel import WINDOW_SIM, WINDOW_SIM_KIND

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep``.
MODELS: tuple[ModelSpec, ...] = (AWP, WINDOW_SIM)
#: Kinds of model a claims file may declare.
MODEL_KINDS: tuple[ModelKind, ...] = (WINDOW_MODEL_KIND, WINDOW_SIM_KIND)
