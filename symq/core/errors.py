"""Exceptions raised by symq.

Every error a user can trigger is a subclass of :class:`SymqError`.  Messages name the
parameter, the value received and the allowed domain, so that a user can fix the input
without reading the source.
"""

from __future__ import annotations

__all__ = [
    "SymqError",
    "InvalidParameter",
    "StabilityError",
    "NotConverged",
    "UnknownName",
    "DerivationTimeout",
    "MissingDependency",
    "InvalidMoments",
]


class SymqError(Exception):
    """Base class of every error raised on purpose by symq."""


class InvalidParameter(SymqError, ValueError):
    """A parameter value lies outside its declared domain.

    Parameters
    ----------
    name : str
        Name of the parameter.
    value : object
        The value received.
    domain : str
        Human-readable description of the allowed values.
    reason : str, optional
        Extra explanation appended to the message.
    """

    def __init__(self, name: str, value: object, domain: str, reason: str = "") -> None:
        self.name = name
        self.value = value
        self.domain = domain
        shown = value.tolist() if hasattr(value, "tolist") and hasattr(value, "shape") else value
        message = f"parameter {name}={shown!r} must be {domain}"
        if reason:
            message += f" ({reason})"
        super().__init__(message)


class StabilityError(SymqError, ValueError):
    """The model has no stationary regime for the given parameters (e.g. load >= capacity)."""


class NotConverged(SymqError, RuntimeError):
    """An iterative solver stopped before reaching its tolerance.

    Parameters
    ----------
    solver : str
        Name of the solver.
    residual : float
        The last residual reached.
    tolerance : float
        The tolerance that was requested.
    iterations : int
        Number of iterations performed.
    """

    def __init__(self, solver: str, residual: float, tolerance: float, iterations: int) -> None:
        self.solver = solver
        self.residual = residual
        self.tolerance = tolerance
        self.iterations = iterations
        super().__init__(
            f"{solver} did not converge: residual {residual:.3g} > tolerance {tolerance:.3g} "
            f"after {iterations} iterations"
        )


class UnknownName(SymqError, KeyError):
    """A model, paper or option name that symq does not know; the message lists the valid choices."""

    def __init__(self, kind: str, name: str, choices: list[str] | tuple[str, ...]) -> None:
        self.kind = kind
        self.name = name
        self.choices = tuple(choices)
        listed = ", ".join(self.choices) if self.choices else "(none registered)"
        super().__init__(f"unknown {kind} {name!r}; valid choices: {listed}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class DerivationTimeout(SymqError, TimeoutError):
    """A symbolic step exceeded its time budget."""


class MissingDependency(SymqError, ImportError):
    """An optional dependency needed for the requested feature is not installed."""


class InvalidMoments(SymqError, ValueError):
    """A moment sequence that no distribution (or no ME of the requested order) has.

    The message says which condition fails (positivity, Hankel/Stieltjes determinants,
    too few moments for the order, inconsistent values at zero).
    """
