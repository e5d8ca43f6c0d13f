"""The pipeline machinery shared by every symq model.

declare (:mod:`~symq.core.parameters`) -> derive (:mod:`~symq.core.derivation`) ->
compile (:mod:`~symq.core.compiler`) -> solve (:mod:`~symq.core.result`) ->
verify (:mod:`~symq.core.claims`, :mod:`~symq.core.simstats`), plus sweeps
(:mod:`~symq.core.sweep`) and the model/paper registry (:mod:`~symq.core.registry`).
"""

from .claims import (
    Claim,
    Evidence,
    Inconclusive,
    Status,
    Verdict,
    absolute_error,
    ci_error,
    mixed_error,
    relative_error,
    symbolic_error,
)
from .compiler import CompiledFunction, compile
from .derivation import Derivation, Step
from .errors import (
    DerivationTimeout,
    InvalidMoments,
    InvalidParameter,
    NotConverged,
    StabilityError,
    SymqError,
    UnknownName,
)
from .parameters import (
    Choice,
    Domain,
    IntegerAtLeast,
    Interval,
    NonNegativeReal,
    Parameter,
    PositiveReal,
    PositiveVector,
    validate_parameters,
)
from .registry import (
    ModelSpec,
    PaperSpec,
    get_model,
    get_paper,
    models,
    papers,
    register_model,
    register_paper,
)
from .result import Exactness, Result, to_jsonable

__all__ = [
    "Claim", "Evidence", "Inconclusive", "Status", "Verdict", "absolute_error", "ci_error",
    "mixed_error", "relative_error", "symbolic_error",
    "CompiledFunction", "compile",
    "Derivation", "Step",
    "DerivationTimeout", "InvalidMoments", "InvalidParameter", "NotConverged", "StabilityError", "SymqError",
    "UnknownName",
    "Choice", "Domain", "IntegerAtLeast", "Interval", "NonNegativeReal", "Parameter",
    "PositiveReal", "PositiveVector", "validate_parameters",
    "ModelSpec", "PaperSpec", "get_model", "get_paper", "models", "papers", "register_model",
    "register_paper",
    "Exactness", "Result", "to_jsonable",
]
