"""The vocabulary of the certifier: verdicts, control-flow signals and the state of one run.

Shared by the stages of :mod:`symq.me.certification`: each rule returns a :class:`Decision` (or
None when it does not apply), raises :class:`NeedPrecision` when its numeric step cannot be
decided at the current precision (:func:`~symq.me.certification.certify` then retries at 2x and 4x
the digits), and checks the wall-time budget through :meth:`Run.check_time`.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._context import working_dps
from .base import ExactData, Pole

__all__ = ["Decision", "NeedPrecision", "Nonnegativity", "OutOfTime", "Run", "at_precision"]


class Nonnegativity(str, enum.Enum):
    """Verdict of :func:`certify`."""

    NONNEGATIVE = "NONNEGATIVE"  #: f(t) >= 0 for all t > 0 (proved)
    NEGATIVE = "NEGATIVE"  #: f(witness) < 0 (proved by an interval enclosure)
    INVALID = "INVALID"  #: not the transform of a distribution (pole placement)
    INCONCLUSIVE = "INCONCLUSIVE"  #: no decision; see ``reason``

    def __str__(self) -> str:
        return self.value


class NeedPrecision(Exception):
    """A numeric step could not be decided at the current precision."""

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(reason)
        self.method = method
        self.reason = reason


class OutOfTime(Exception):
    """The wall-time budget of a certification ran out (raised by :meth:`Run.check_time`)."""


@contextmanager
def at_precision(dps: int) -> Iterator[None]:
    """Run a block at ``dps`` digits in the calling thread's private real and interval contexts.

    ``mp`` and ``iv`` below resolve to those contexts; mpmath's global context is not touched.
    """
    with working_dps(dps, intervals=True):
        yield


@dataclass
class Run:
    """Mutable state of one certification (report data, limits)."""

    ex: ExactData
    dps: int
    deadline: float | None
    max_boxes: int
    min_width: float
    poles: list[Pole] = field(default_factory=list)
    boxes: int = 0
    tail: float | None = None
    #: certifies another transform under the same limits (for the square-free part of G)
    sub_certify: Callable[..., Any] | None = None
    #: the exact factorisation route's answer, computed once per run (precision-independent)
    exact: Any = None
    exact_done: bool = False
    #: the factorisation of the exact route (precision-independent), once computed
    factored: Any = None
    factored_done: bool = False
    #: the boxes branch and bound proved positive (a partition of [h, T]), for the certificate
    partition: list[tuple[Any, Any]] = field(default_factory=list)
    #: re-check mode: the partition to check instead of searching (Certificate.verify)
    replay: tuple[tuple[Any, Any], ...] | None = None

    def check_time(self) -> None:
        """Raise :class:`OutOfTime` past the deadline."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfTime


@dataclass
class Decision:
    """The answer of one stage: the status, the rule or stage that gave it (``method``), why
    (for INCONCLUSIVE and INVALID), a witness t with an enclosure of f(t) (for NEGATIVE) and the
    exact route's proof when there is one."""

    status: Nonnegativity
    method: str
    reason: str | None = None
    witness: Any = None
    enclosure: tuple[Any, Any] | None = None
    proof: Any = None
