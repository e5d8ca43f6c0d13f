"""symq: symbolic-numeric modelling of stochastic performance models.

Declare a model symbolically, derive its closed forms with sympy, compile a fast numeric
solver from the same declaration, and check published formulas against independent
evidence.  See ``symq list`` for the models and papers covered.
"""

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

__version__ = "0.1.0"

__all__ = [
    "Claim", "Derivation", "Evidence", "Exactness", "InvalidParameter", "NotConverged",
    "Parameter", "Result", "StabilityError", "Status", "SymqError", "Verdict", "compile",
    "__version__",
]
