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

#: The public names: the table above, once (``tests/core/test_core_imports.py`` checks that the
#: ``TYPE_CHECKING`` block below, which type checkers and IDEs read, imports the same names).
__all__ = sorted(_MODULE_OF)

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, eagerly
    # (`X as X`: an explicit re-export, as the table above makes at run time)
    from .claims import (
        Claim as Claim,
    )
    from .claims import (
        Evidence as Evidence,
    )
    from .claims import (
        Inconclusive as Inconclusive,
    )
    from .claims import (
        Status as Status,
    )
    from .claims import (
        Verdict as Verdict,
    )
    from .claims import (
        absolute_error as absolute_error,
    )
    from .claims import (
        ci_error as ci_error,
    )
    from .claims import (
        equivalence_error as equivalence_error,
    )
    from .claims import (
        mixed_error as mixed_error,
    )
    from .claims import (
        relative_error as relative_error,
    )
    from .claims import (
        symbolic_error as symbolic_error,
    )
    from .compiler import (
        CompiledFunction as CompiledFunction,
    )
    from .compiler import (
        compile as compile,
    )
    from .derivation import (
        Derivation as Derivation,
    )
    from .derivation import (
        Step as Step,
    )
    from .errors import (
        DerivationTimeout as DerivationTimeout,
    )
    from .errors import (
        InvalidMoments as InvalidMoments,
    )
    from .errors import (
        InvalidParameter as InvalidParameter,
    )
    from .errors import (
        NotConverged as NotConverged,
    )
    from .errors import (
        NumericalFailure as NumericalFailure,
    )
    from .errors import (
        ResourceLimit as ResourceLimit,
    )
    from .errors import (
        StabilityError as StabilityError,
    )
    from .errors import (
        SymqError as SymqError,
    )
    from .errors import (
        TruncationError as TruncationError,
    )
    from .errors import (
        UnknownName as UnknownName,
    )
    from .formula import (
        parse_formula as parse_formula,
    )
    from .glossary import (
        GLOSSARY as GLOSSARY,
    )
    from .parameters import (
        Choice as Choice,
    )
    from .parameters import (
        Domain as Domain,
    )
    from .parameters import (
        IntegerAtLeast as IntegerAtLeast,
    )
    from .parameters import (
        Interval as Interval,
    )
    from .parameters import (
        NonNegativeReal as NonNegativeReal,
    )
    from .parameters import (
        Parameter as Parameter,
    )
    from .parameters import (
        PositiveReal as PositiveReal,
    )
    from .parameters import (
        PositiveVector as PositiveVector,
    )
    from .parameters import (
        validate_parameters as validate_parameters,
    )
    from .randomness import (
        as_generator as as_generator,
    )
    from .registry import (
        ModelKind as ModelKind,
    )
    from .registry import (
        ModelSpec as ModelSpec,
    )
    from .registry import (
        PaperSpec as PaperSpec,
    )
    from .registry import (
        get_model as get_model,
    )
    from .registry import (
        get_model_kind as get_model_kind,
    )
    from .registry import (
        get_paper as get_paper,
    )
    from .registry import (
        load_plugins as load_plugins,
    )
    from .registry import (
        model_kinds as model_kinds,
    )
    from .registry import (
        models as models,
    )
    from .registry import (
        papers as papers,
    )
    from .registry import (
        register_model as register_model,
    )
    from .registry import (
        register_model_kind as register_model_kind,
    )
    from .registry import (
        register_paper as register_paper,
    )
    from .result import (
        Exactness as Exactness,
    )
    from .result import (
        Result as Result,
    )
    from .result import (
        ResultBase as ResultBase,
    )
    from .result import (
        to_jsonable as to_jsonable,
    )
    from .simrun import (
        RunPlan as RunPlan,
    )
    from .simrun import (
        kernel_seed as kernel_seed,
    )
    from .simrun import (
        run_chunked as run_chunked,
    )
    from .simrun import (
        seed_numba as seed_numba,
    )
    from .simstats import (
        ConfidenceInterval as ConfidenceInterval,
    )
    from .simstats import (
        batch_means as batch_means,
    )
    from .simstats import (
        ratio_batch_means as ratio_batch_means,
    )
    from .simstats import (
        replication_ci as replication_ci,
    )
    from .sweep import (
        sweep as sweep,
    )
    from .threads import (
        limit_blas_threads as limit_blas_threads,
    )


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
