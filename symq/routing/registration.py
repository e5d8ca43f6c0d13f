"""The models and model kinds of :mod:`symq.routing`, declared for the registry
(:mod:`symq.core.registry`).

Models: ``ps-routing`` (social optimum, Wardrop equilibrium, price of anarchy of a PS server
farm) and ``ps-sim`` (its simulation).  Model kind: ``routing-cost``, a farm declared by its
cost functions in a claims file.  This module is the one place that names them;
:func:`symq.core.registry.load_domains` registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from .declared import ROUTING_COST
from .model import MODEL, PS_SIM

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep``.
MODELS: tuple[ModelSpec, ...] = (MODEL, PS_SIM)
#: Kinds of model a claims file may declare.
MODEL_KINDS: tuple[ModelKind, ...] = (ROUTING_COST,)
