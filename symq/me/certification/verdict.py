"""The vocabulary of the certifier: verdicts, control-flow signals and the state of one run.

Shared by the stages of :mod:`symq.me.certification`: each rule returns a :class:`_Verdict` (or
None when it does not apply), raises :class:`_NeedPrecision` when its numeric step cannot be
decided at the current precision (:func:`~symq.me.certification.certify` then retries at 2x and 4x
the digits), and checks the wall-time budget through :meth:`_Run.check_time`.
"""

from __future__ import annotations

import enum
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .._context import working_dps

if TYPE_CHECKING:  # pragma: no cover
    from .enclosures import _Pole
    from .exact import _Exact

__all__ = ["Nonnegativity"]


class Nonnegativity(str, enum.Enum):
    """Verdict of :func:`certify`."""

    NONNEGATIVE = "NONNEGATIVE"  #: f(t) >= 0 for all t > 0 (proved)
    NEGATIVE = "NEGATIVE"  #: f(witness) < 0 (proved by an interval enclosure)
    INVALID = "INVALID"  #: not the transform of a distribution (pole placement)
    INCONCLUSIVE = "INCONCLUSIVE"  #: no decision; see ``reason``

    def __str__(self) -> str:
        return self.value


class _NeedPrecision(Exception):
    """A numeric step could not be decided at the current precision."""

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(reason)
        self.method = method
        self.reason = reason


class _OutOfTime(Exception):
    pass


@contextmanager
def _precision(dps: int) -> Iterator[None]:
    """Run a block at ``dps`` digits in the calling thread's private real and interval contexts.

    ``mp`` and ``iv`` below resolve to those contexts; mpmath's global context is not touched.
    """
    with working_dps(dps, intervals=True):
        yield


@dataclass
class _Run:
    """Mutable state of one certification (report data, limits)."""

    ex: _Exact
    dps: int
    deadline: float | None
    max_boxes: int
    min_width: float
    poles: list["_Pole"] = field(default_factory=list)
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
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _OutOfTime


@dataclass
class _Verdict:
    status: Nonnegativity
    method: str
    reason: str | None = None
    witness: Any = None
    enclosure: tuple[Any, Any] | None = None
    proof: Any = None
