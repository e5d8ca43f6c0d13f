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
    "TruncationError",
    "ResourceLimit",
    "RunTooShort",
    "Inconclusive",
    "OutputError",
    "NumericalFailure",
    "SchedulerUnreachable",
    "EXIT_USAGE",
    "MISSING",
    "EXIT_RUNTIME",
]

#: Exit status of the CLI for bad input (a value outside its domain, an unknown name).
EXIT_USAGE = 2
#: Exit status of the CLI for a run-time failure: a solver that did not converge or would have
#: truncated beyond the accuracy asked for, an output path that cannot be written, a scheduler
#: that cannot be reached.
EXIT_RUNTIME = 3


class SymqError(Exception):
    """Base class of every error raised on purpose by symq.

    ``exit_status`` is the status the command line exits with when this error ends a command:
    :data:`EXIT_USAGE` (2) for bad input, :data:`EXIT_RUNTIME` (3) for run-time failures.
    """

    exit_status: int = EXIT_USAGE


class _Missing:
    """The value of a required parameter that was not given."""

    def __repr__(self) -> str:
        return "<missing>"


#: Pass as ``value`` to :class:`InvalidParameter` for a required parameter that was not given.
MISSING = _Missing()


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
        self.reason = reason
        shown = value.tolist() if hasattr(value, "tolist") and hasattr(value, "shape") else value
        if value is MISSING:
            message = f"parameter {name}=<missing> must be given: {domain}"
            reason = ""
        else:
            message = f"parameter {name}={shown!r} must be {domain}"
        if reason:
            message += f" ({reason})"
        super().__init__(message)


class StabilityError(SymqError, ValueError):
    """The model has no stationary regime for the given parameters (e.g. load >= capacity)."""


class NotConverged(SymqError, RuntimeError):
    """An iterative solver stopped before reaching its tolerance (CLI exit status 3).

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

    exit_status = EXIT_RUNTIME

    def __init__(self, solver: str, residual: float, tolerance: float, iterations: int,
                 advice: str = "") -> None:
        self.solver = solver
        self.residual = residual
        self.tolerance = tolerance
        self.iterations = iterations
        message = (f"{solver} did not converge: residual {residual:.3g} > tolerance "
                   f"{tolerance:.3g} after {iterations} iterations")
        if advice:
            message += f"; {advice}"
        super().__init__(message)


class TruncationError(NotConverged):
    """A truncation (levels, layers, grid, series) would leave out more than the accuracy asked for.

    Parameters
    ----------
    solver : str
        Name of the solver.
    quantity : str
        What was truncated and what the bound measures, e.g. ``"queue-length levels (tail mass)"``.
    left_out : float
        The mass or error bound beyond the truncation that was reached.
    tolerance : float
        The accuracy asked for.
    reached : object
        The largest truncation tried (e.g. the number of levels).
    advice : str
        What the user can change (a parameter as they type it, and which way).
    """

    def __init__(self, solver: str, quantity: str, left_out: float, tolerance: float,
                 reached: object, advice: str = "") -> None:
        message = (f"{solver}: truncation at {quantity} = {reached} leaves out {left_out:.3g} "
                   f"> tolerance {tolerance:.3g}")
        if advice:
            message += f"; {advice}"
        SymqError.__init__(self, message)  # NotConverged's own message is about iterations
        self.solver, self.residual, self.tolerance, self.iterations = solver, left_out, tolerance, 0
        self.quantity = quantity
        self.left_out = left_out
        self.reached = reached


class UnknownName(SymqError, KeyError):
    """A model, paper or option name that symq does not know; the message lists the valid
    choices."""

    def __init__(self, kind: str, name: str, choices: list[str] | tuple[str, ...]) -> None:
        self.kind = kind
        self.name = name
        self.choices = tuple(choices)
        listed = ", ".join(self.choices) if self.choices else "(none registered)"
        super().__init__(f"unknown {kind} {name!r}; valid choices: {listed}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class ResourceLimit(InvalidParameter):
    """A parameter asks for more memory (or states) than this machine can hold.

    The message names the parameter as the user typed it, its value, what it would need and the
    largest (or smallest) value that fits.

    Parameters
    ----------
    name : str
        The parameter as the user typed it.
    value : object
        The value received.
    needed : str
        What the value needs, e.g. ``"1.9e+12 states (15 TiB) of a budget of 11 GiB"``.
    limit : str
        The value that fits, e.g. ``"delta >= 0.004"``.
    """

    def __init__(self, name: str, value: object, needed: str, limit: str) -> None:
        InvalidParameter.__init__(self, name, value, limit, f"it needs {needed}")
        self.needed = needed
        self.limit = limit


class Inconclusive(SymqError):
    """Raised inside a claim's computation when the evidence cannot decide at a point (also
    importable from :mod:`symq.core.claims`)."""


class RunTooShort(InvalidParameter):
    """A simulation run too short to estimate at its load (its batches would not outlast the
    relaxation time, so its interval would not cover).

    On the command line this is bad input (exit status 2, naming ``n_jobs`` or the load as
    typed); as the evidence of a claim it is *inconclusive*: the claim is neither true nor false
    at that run length, and the verdict states the run that would decide.

    Parameters
    ----------
    name, value, domain, reason
        As for :class:`InvalidParameter`.
    jobs_needed : float, optional
        The run length (in the simulator's unit, e.g. jobs) that the rule asks for, when known.
    """

    def __init__(self, name: str, value: object, domain: str, reason: str = "",
                 jobs_needed: float | None = None) -> None:
        super().__init__(name, value, domain, reason)
        self.jobs_needed = jobs_needed


class NumericalFailure(SymqError, ArithmeticError):
    """A solver produced a number that cannot be right (NaN, infinity, a probability outside
    [0, 1]); raised instead of returning it (CLI exit status 3)."""

    exit_status = EXIT_RUNTIME


class OutputError(SymqError, OSError):
    """An output path (``-o FILE``, ``--report DIR``) that cannot be written (CLI exit status 3)."""

    exit_status = EXIT_RUNTIME


class SchedulerUnreachable(SymqError, ConnectionError):
    """A Dask scheduler address that is malformed or cannot be reached in the time allowed
    (CLI exit status 3)."""

    exit_status = EXIT_RUNTIME


class DerivationTimeout(SymqError, TimeoutError):
    """A symbolic step exceeded its time budget."""


class MissingDependency(SymqError, ImportError):
    """An optional dependency needed for the requested feature is not installed."""


class InvalidMoments(SymqError, ValueError):
    """A moment sequence that no distribution (or no ME of the requested order) has.

    The message says which condition fails (positivity, Hankel/Stieltjes determinants,
    too few moments for the order, inconsistent values at zero).
    """
