"""The model kinds of :mod:`symq.markov`, declared for the registry
(:mod:`symq.core.registry`).

Model kinds: ``ctmc``, a finite continuous-time Markov chain declared by guarded jumps in a
claims file, and ``mdp``, a Markov decision process declared by actions on guarded jumps.
This module is the one place that names them; :func:`symq.core.registry.load_domains`
registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from .declared import CTMC
from .mdp.declared import MDP

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep`` (none yet: a chain is declared by its user).
MODELS: tuple[ModelSpec, ...] = ()
#: Kinds of model a claims file may declare.
MODEL_KINDS: tuple[ModelKind, ...] = (CTMC, MDP)
