"""Results of solving a model: values, method, exactness and timings, JSON-ready."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import sympy as sp

__all__ = ["Exactness", "Result", "to_jsonable"]


class Exactness(str, enum.Enum):
    """How a value was obtained."""

    EXACT = "exact"          #: closed form or exact arithmetic
    NUMERIC = "numeric"      #: floating-point numerical method
    CERTIFIED = "certified"  #: interval arithmetic with a guaranteed enclosure
    SIMULATED = "simulated"  #: Monte Carlo estimate (with a confidence interval)

    def __str__(self) -> str:
        return self.value


def to_jsonable(value: Any) -> Any:
    """Convert numpy, sympy, mpmath and symq objects into plain JSON types.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` or ``"nan"`` so that the
    output is strict JSON.
    """
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict())
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (complex, np.complexfloating)):
        return {"re": to_jsonable(value.real), "im": to_jsonable(value.imag)}
    if isinstance(value, sp.Basic):
        if value.is_Integer:
            return int(value)
        if value.is_number and value.is_real:
            return to_jsonable(float(value))
        return str(value)
    if value is None or isinstance(value, str):
        return value
    try:  # mpmath numbers and similar
        return to_jsonable(float(value))
    except (TypeError, ValueError):
        return str(value)


@dataclass
class Result:
    """The outcome of solving a model.

    Parameters
    ----------
    model : str
        Registered model name.
    params : dict
        The validated parameters.
    values : dict
        Named results (floats, arrays, nested dicts).
    method : str
        The method used ("closed form", "SLSQP", "simulation", ...).
    exactness : Exactness
        How the values were obtained.
    timings : dict
        Seconds spent per phase.
    """

    model: str
    params: dict[str, Any]
    values: dict[str, Any]
    method: str = ""
    exactness: Exactness = Exactness.NUMERIC
    timings: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form: ``{"model", "params", "results", "method", "exactness", "timings"}``."""
        return {
            "model": self.model,
            "params": to_jsonable(self.params),
            "results": to_jsonable(self.values),
            "method": self.method,
            "exactness": str(self.exactness),
            "timings": to_jsonable(self.timings),
        }
