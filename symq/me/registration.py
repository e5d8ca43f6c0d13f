"""The models of :mod:`symq.me`, declared for the registry (:mod:`symq.core.registry`).

``me-fit`` (Padé moment matching with certified nonnegativity), ``mg1-sim`` (the M/G/1 FCFS
simulation beside the Pollaczek-Khinchine mean) and ``gg1-sim`` (a GI/G/1 simulation beside
its exact wait by spectral factorisation and by a PH/PH/1 QBD); the claims-file kind
``transform`` (a transform declared by its formula, :mod:`symq.me.transforms.declared`) and
``gg1`` (a GI/G/1 queue by its two transforms, :mod:`symq.me.gg1_declared`).  This module is the one
place that names them; :func:`symq.core.registry.load_domains` registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from .gg1_declared import GG1
from .gg1_sim import GG1_SIM
from .mg1 import MG1_SIM
from .model import MODEL
from .transforms.declared import TRANSFORM

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep``.
MODELS: tuple[ModelSpec, ...] = (MODEL, MG1_SIM, GG1_SIM)
#: Kinds of model a claims file may declare.
MODEL_KINDS: tuple[ModelKind, ...] = (TRANSFORM, GG1)
