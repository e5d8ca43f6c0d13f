"""symq: symbolic-numeric modelling of stochastic performance models.

Declare a model symbolically, derive its closed forms with sympy, compile a fast numeric
solver from the same declaration, and check published formulas against independent
evidence.  See ``symq list`` for the models and papers covered.

The names below are imported on first use (:pep:`562`), so that ``import symq`` and
``symq --version`` do not load sympy, scipy or numba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = [
    "Claim",
    "Derivation",
    "Evidence",
    "Exactness",
    "InvalidParameter",
    "NotConverged",
    "Parameter",
    "Result",
    "StabilityError",
    "Status",
    "SymqError",
    "Verdict",
    "__version__",
    "compile",
]

#: The public names, each re-exported from :mod:`symq.core` on first use.
_FROM_CORE = frozenset(__all__) - {"__version__"}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs: the same names, eagerly
    from .core import (
        Claim,
        Derivation,
        Evidence,
        Exactness,
        InvalidParameter,
        NotConverged,
        Parameter,
        Result,
        StabilityError,
        Status,
        SymqError,
        Verdict,
        compile,
    )


def __getattr__(name: str) -> object:
    """A public name of :mod:`symq.core`, imported on first use (:pep:`562`)."""
    if name in _FROM_CORE:
        value = getattr(importlib.import_module(".core", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
