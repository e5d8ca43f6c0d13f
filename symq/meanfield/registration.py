"""The models and model kinds of :mod:`symq.meanfield`, declared for the registry
(:mod:`symq.core.registry`).

Models: the JSQ(d) family (``supermarket``, ``refined-jsq``, ``jsq-ph``, ``refined-jsq-ph``,
``jsq-sim``) and attained-service load balancing (``attained``).  Model kind: ``population``, a
population process declared in a claims file.  This module is the one place that names them;
:func:`symq.core.registry.load_domains` registers them.
"""

from __future__ import annotations

from symq.core.registry import ModelKind, ModelSpec

from .attained.model import ATTAINED
from .declared import POPULATION
from .models import JSQ_PH, JSQ_SIM, REFINED_JSQ, REFINED_JSQ_PH, SUPERMARKET

__all__ = ["MODELS", "MODEL_KINDS"]

#: Models of ``symq solve`` / ``symq sweep``.
MODELS: tuple[ModelSpec, ...] = (SUPERMARKET, REFINED_JSQ, JSQ_PH, REFINED_JSQ_PH, JSQ_SIM,
                                 ATTAINED)
#: Kinds of model a claims file may declare.
MODEL_KINDS: tuple[ModelKind, ...] = (POPULATION,)
