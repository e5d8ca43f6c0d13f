"""The models and model kinds of :mod:`symq.dispatch`, declared for the registry
(:mod:`symq.core.registry`).

Models: ``dispatch`` (value iteration and exact policies for size-aware dispatching) and
``dispatch-sim`` (its simulation).  Model kind: ``dispatch-score``, a dispatching policy
declared by a score formula in a claims file.  This module is the one place that names them;
:func:`symq.core.registry.load_domains` registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from .declared import DISPATCH_SCORE, DISPATCH_SIM
from .model import DISPATCH

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep``.
MODELS: tuple[ModelSpec, ...] = (DISPATCH, DISPATCH_SIM)
#: Kinds of model a claims file may declare.
MODEL_KINDS: tuple[ModelKind, ...] = (DISPATCH_SCORE,)
