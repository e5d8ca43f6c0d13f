"""The pipeline machinery shared by every symq model.

declare (:mod:`~symq.core.parameters`) -> derive (:mod:`~symq.core.derivation`) ->
compile (:mod:`~symq.core.compiler`) -> solve (:mod:`~symq.core.result`) ->
verify (:mod:`~symq.core.claims`, :mod:`~symq.core.simstats`), plus sweeps
(:mod:`~symq.core.sweep`) and the model/paper registry (:mod:`~symq.core.registry`).

The protocols every domain shares: results (:class:`~symq.core.result.ResultBase` and the
glossary :mod:`~symq.core.glossary`), distributions (:mod:`symq.laws`, the layer above core),
simulation runs (:mod:`~symq.core.simrun`).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

#: The public names by the module that defines them; each is imported on first use (:pep:`562`),
#: so that importing one module of :mod:`symq.core` (the errors, for the command line's
#: ``--version``) does not load sympy, scipy.stats or numba.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "claims": ("Claim", "Evidence", "Inconclusive", "Status", "Verdict", "absolute_error",
               "ci_error", "equivalence_error", "mixed_error", "relative_error",
               "symbolic_error"),
    "compiler": ("CompiledFunction", "compile"),
    "derivation": ("Derivation", "Step"),
    "errors": ("DerivationTimeout", "InvalidMoments", "InvalidParameter", "NotConverged",
               "NumericalFailure", "ResourceLimit", "StabilityError", "SymqError",
               "TruncationError", "UnknownName"),
    "formula": ("parse_formula",),
    "glossary": ("GLOSSARY",),
    "parameters": ("Choice", "Domain", "IntegerAtLeast", "Interval", "NonNegativeReal",
                   "Parameter", "PositiveReal", "PositiveVector", "validate_parameters"),
    "registry": ("ModelKind", "ModelSpec", "PaperSpec", "get_model", "get_model_kind",
                 "get_paper", "load_plugins", "model_kinds", "models", "papers",
                 "register_model", "register_model_kind", "register_paper"),
    "randomness": ("as_generator",),
    "result": ("Exactness", "Result", "ResultBase", "to_jsonable"),
    "simrun": ("RunPlan", "kernel_seed", "run_chunked", "seed_numba"),
    "simstats": ("ConfidenceInterval", "batch_means", "ratio_batch_means", "replication_ci"),
    "sweep": ("sweep",),
    "threads": ("limit_blas_threads",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "GLOSSARY",
    "Choice",
    "Claim",
    "CompiledFunction",
    "ConfidenceInterval",
    "Derivation",
    "DerivationTimeout",
    "Domain",
    "Evidence",
    "Exactness",
    "Inconclusive",
    "IntegerAtLeast",
    "Interval",
    "InvalidMoments",
    "InvalidParameter",
    "ModelKind",
    "ModelSpec",
    "NonNegativeReal",
    "NotConverged",
    "NumericalFailure",
    "PaperSpec",
    "Parameter",
    "PositiveReal",
    "PositiveVector",
    "ResourceLimit",
    "Result",
    "ResultBase",
    "RunPlan",
    "StabilityError",
    "Status",
    "Step",
    "SymqError",
    "TruncationError",
    "UnknownName",
    "Verdict",
    "absolute_error",
    "as_generator",
    "batch_means",
    "ci_error",
    "compile",
    "equivalence_error",
    "get_model",
    "get_model_kind",
    "get_paper",
    "kernel_seed",
    "limit_blas_threads",
    "load_plugins",
    "mixed_error",
    "model_kinds",
    "models",
    "papers",
    "parse_formula",
    "ratio_batch_means",
    "register_model",
    "register_model_kind",
    "register_paper",
    "relative_error",
    "replication_ci",
    "run_chunked",
    "seed_numba",
    "sweep",
    "symbolic_error",
    "to_jsonable",
    "validate_parameters",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, eagerly
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
    from .randomness import as_generator
    from .registry import (
        ModelKind,
        ModelSpec,
        PaperSpec,
        get_model,
        get_model_kind,
        get_paper,
        load_plugins,
        model_kinds,
        models,
        papers,
        register_model,
        register_model_kind,
        register_paper,
    )
    from .result import Exactness, Result, ResultBase, to_jsonable
    from .simrun import RunPlan, kernel_seed, run_chunked, seed_numba
    from .simstats import (
        ConfidenceInterval,
        batch_means,
        ratio_batch_means,
        replication_ci,
    )
    from .sweep import sweep
    from .threads import limit_blas_threads


def __getattr__(name: str) -> object:
    """A public name of :mod:`symq.core`, imported from its module on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """:mod:`symq.core`, whose exported function ``sweep`` stays the function when the
    submodule :mod:`symq.core.sweep` is imported (the import system binds a submodule as an
    attribute of its package; the eager imports this package once made rebound the function)."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and name in _MODULE_OF:
            return  # the exported object of that name wins over the submodule
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
