"""The pipeline machinery shared by every symq model.

declare (:mod:`~symq.core.parameters`) -> derive (:mod:`~symq.core.derivation`) ->
compile (:mod:`~symq.core.compiler`) -> solve (:mod:`~symq.core.result`) ->
verify (:mod:`~symq.core.claims`, :mod:`~symq.core.simstats`), plus sweeps
(:mod:`~symq.core.sweep`) and the model/paper registry (:mod:`~symq.core.registry`).

The protocols every domain shares: results (:class:`~symq.core.result.ResultBase` and the
glossary :mod:`~symq.core.glossary`), distributions (:class:`~symq.core.distribution.Distribution`),
simulation runs (:mod:`~symq.core.simrun`).
"""

from .claims import (
    Claim,
    Evidence,
    Inconclusive,
    Status,
    Verdict,
    absolute_error,
    ci_error,
    equivalence_error,
    mixed_error,
    relative_error,
    symbolic_error,
)
from .compiler import CompiledFunction, compile
from .derivation import Derivation, Step
from .distribution import Distribution
from .errors import (
    DerivationTimeout,
    InvalidMoments,
    InvalidParameter,
    NotConverged,
    NumericalFailure,
    ResourceLimit,
    StabilityError,
    SymqError,
    TruncationError,
    UnknownName,
)
from .formula import parse_formula
from .glossary import GLOSSARY
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
    load_plugins,
    models,
    papers,
    register_model,
    register_paper,
)
from .randomness import as_generator
from .result import Exactness, Result, ResultBase, to_jsonable
from .simrun import RunPlan, kernel_seed, run_chunked, seed_numba
from .simstats import ConfidenceInterval, batch_means, ratio_batch_means, replication_ci
from .sweep import sweep

__all__ = [
    "Claim", "Evidence", "Inconclusive", "Status", "Verdict", "absolute_error", "ci_error",
    "equivalence_error", "mixed_error", "relative_error", "symbolic_error",
    "CompiledFunction", "compile",
    "Derivation", "Step",
    "Distribution",
    "DerivationTimeout", "InvalidMoments", "InvalidParameter", "NotConverged", "NumericalFailure",
    "ResourceLimit", "StabilityError", "SymqError", "TruncationError", "UnknownName",
    "parse_formula", "GLOSSARY",
    "Choice", "Domain", "IntegerAtLeast", "Interval", "NonNegativeReal", "Parameter",
    "PositiveReal", "PositiveVector", "validate_parameters",
    "ModelSpec", "PaperSpec", "get_model", "get_paper", "load_plugins", "models", "papers",
    "register_model", "register_paper",
    "as_generator",
    "Exactness", "Result", "ResultBase", "to_jsonable",
    "RunPlan", "kernel_seed", "run_chunked", "seed_numba",
    "ConfidenceInterval", "batch_means", "ratio_batch_means", "replication_ci",
    "sweep",
]
