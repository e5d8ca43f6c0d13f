"""Claims and verdicts: checking a formula against an independent computation.

A :class:`Claim` states something a paper (or symq itself) asserts, and how to test it:
the claimed value at a parameter point, an independent reference computation at the same
point, a parameter sample, an error measure and a tolerance.  :meth:`Claim.check` evaluates
both sides over the sample and returns a :class:`Verdict`:

* ``holds``: the largest error is within the tolerance at every point;
* ``fails``: some point exceeds it; the worst point and its error are reported;
* ``inconclusive``: the evidence could not decide (a side raised :class:`Inconclusive`,
  or produced no finite number), with the reason.

A claim never raises because the claim is false: a failing claim is a finding.
"""

from __future__ import annotations

import enum
import math
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import sympy as sp

from .errors import SymqError
from .result import to_jsonable

__all__ = [
    "Status",
    "Evidence",
    "Inconclusive",
    "Verdict",
    "Claim",
    "relative_error",
    "absolute_error",
    "mixed_error",
    "symbolic_error",
    "ci_error",
]


class Status(str, enum.Enum):
    """Outcome of checking a claim."""

    HOLDS = "holds"
    FAILS = "fails"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value


class Evidence(str, enum.Enum):
    """Kind of independent evidence a claim is checked with."""

    SYMBOLIC = "symbolic"        #: sympy proves an identity
    CLOSED_FORM = "closed form"  #: compared with an independently derived closed form
    NUMERIC = "numeric"          #: compared with a numerical solver / optimiser
    CERTIFIED = "certified"      #: interval arithmetic
    SIMULATION = "simulation"    #: Monte Carlo with a confidence interval
    EXACT = "exact"              #: exact rational arithmetic

    def __str__(self) -> str:
        return self.value


class Inconclusive(SymqError):
    """Raised inside a claim's computation when the evidence cannot decide at a point."""


# ----------------------------------------------------------------------------- error measures

def _arrays(claimed: Any, reference: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(claimed, dtype=float)
    b = np.asarray(reference, dtype=float)
    if a.shape != b.shape:
        raise Inconclusive(f"claimed shape {a.shape} differs from reference shape {b.shape}")
    return a, b


def absolute_error(claimed: Any, reference: Any) -> float:
    """Largest absolute difference between claimed and reference values."""
    a, b = _arrays(claimed, reference)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)))


def relative_error(claimed: Any, reference: Any) -> float:
    """Largest |claimed - reference| / |reference| (exact zeros compare absolutely)."""
    a, b = _arrays(claimed, reference)
    if a.size == 0:
        return 0.0
    scale = np.where(b == 0, 1.0, np.abs(b))
    return float(np.max(np.abs(a - b) / scale))


def mixed_error(scale: float = 1.0) -> Callable[[Any, Any], float]:
    """Error |a - b| / max(|b|, scale): relative for large values, absolute near zero."""

    def error(claimed: Any, reference: Any) -> float:
        a, b = _arrays(claimed, reference)
        if a.size == 0:
            return 0.0
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), scale)))

    error.__name__ = f"mixed_error(scale={scale:g})"
    return error


def symbolic_error(claimed: Any, reference: Any) -> float:
    """0 when sympy proves ``claimed == reference``; otherwise the numeric gap or inf.

    Both sides are sympy expressions or numbers; text is refused (parse it first with
    :func:`symq.core.formula.parse_formula`, which never evaluates it).
    """
    for side in (claimed, reference):
        if isinstance(side, str):
            raise TypeError("symbolic_error compares sympy expressions, not text; parse text "
                            "with symq.core.formula.parse_formula")
    difference = sp.simplify(sp.sympify(claimed) - sp.sympify(reference))
    if difference == 0:
        return 0.0
    if difference.is_number:
        return float(abs(difference))
    raise Inconclusive(f"sympy could not reduce the difference to zero: {difference}")


def ci_error(estimate: Any, value: Any) -> float:
    """Distance of ``value`` from a confidence interval's mean, in half-widths.

    ``estimate`` is a :class:`symq.core.simstats.ConfidenceInterval` (anything with
    ``mean`` and ``half_width``).  An error <= 1 means the value lies inside the interval.
    """
    mean = float(estimate.mean)
    half = float(estimate.half_width)
    gap = abs(float(value) - mean)
    if half <= 0:
        return 0.0 if gap == 0 else math.inf
    return gap / half


# ----------------------------------------------------------------------------- verdicts

@dataclass
class Verdict:
    """The outcome of :meth:`Claim.check`."""

    paper: str
    claim: str
    status: Status
    max_error: float | None
    evidence: tuple[Evidence, ...]
    detail: str
    seconds: float
    worst_point: dict[str, Any] | None = None
    tolerance: float | None = None
    n_points: int = 0
    source: str = ""
    expected: Status = Status.HOLDS

    @property
    def holds(self) -> bool:
        return self.status is Status.HOLDS

    def to_dict(self) -> dict[str, Any]:
        """JSON form used by ``symq check --json``."""
        return {
            "paper": self.paper,
            "claim": self.claim,
            "status": str(self.status),
            "max_error": to_jsonable(self.max_error),
            "evidence": ", ".join(str(e) for e in self.evidence),
            "detail": self.detail,
            "seconds": round(self.seconds, 4),
            "source": self.source,
            "tolerance": to_jsonable(self.tolerance),
            "n_points": self.n_points,
            "worst_point": to_jsonable(self.worst_point),
            "expected": str(self.expected),
        }


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=6, threshold=8)
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in point.items())


# ----------------------------------------------------------------------------- claims

Sample = Sequence[Mapping[str, Any]] | Callable[[np.random.Generator], Sequence[Mapping[str, Any]]]


@dataclass
class Claim:
    """A checkable statement.

    Parameters
    ----------
    name : str
        Short identifier, unique within its paper ("closed-form optimum").
    source : str
        Where the statement comes from: paper, equation or section.
    statement : str or sympy object
        The statement, printed in reports.
    claimed : callable(point) -> value
        The claimed value (usually symq's closed form) at a parameter point.
    reference : callable(point) -> value, optional
        An independent computation of the same quantity.  When ``None``, ``error`` is
        called with ``(claimed_value, None)`` (for predicates).
    sample : sequence of dict, or callable(rng) -> sequence of dict
        Parameter points at which both sides are evaluated.
    tolerance : float
        Largest accepted error.
    error : callable(claimed_value, reference_value) -> float
        Error measure; default :func:`relative_error`.
    evidence : Evidence or tuple of Evidence
        Kind of evidence used.
    paper : str
        Key of the paper the claim belongs to (set by the paper registry).
    seed : int
        Seed of the generator passed to a callable sample.
    expected : Status
        The verdict symq's own analysis expects: ``HOLDS`` for claims symq confirms, ``FAILS``
        for a paper's statement that symq refutes (the failure is then the finding).  The
        verdict is computed the same way either way; ``expected`` only documents it.
    """

    name: str
    source: str
    statement: Any
    claimed: Callable[[Mapping[str, Any]], Any]
    reference: Callable[[Mapping[str, Any]], Any] | None
    sample: Sample
    tolerance: float = 1e-9
    error: Callable[[Any, Any], float] = relative_error
    evidence: Evidence | tuple[Evidence, ...] = Evidence.NUMERIC
    paper: str = ""
    seed: int = 0
    notes: str = field(default="", repr=False)
    expected: Status = Status.HOLDS

    @classmethod
    def predicate(cls, name: str, source: str, statement: Any,
                  holds_at: Callable[[Mapping[str, Any]], bool], sample: Sample, *,
                  evidence: Evidence | tuple[Evidence, ...] = Evidence.NUMERIC,
                  **kwargs: Any) -> "Claim":
        """A claim that a property holds at every sample point (error 0 or 1)."""

        def error(value: Any, _: Any) -> float:
            return 0.0 if bool(value) else 1.0

        return cls(name, source, statement, holds_at, None, sample, tolerance=0.0, error=error,
                   evidence=evidence, **kwargs)

    @property
    def evidences(self) -> tuple[Evidence, ...]:
        if isinstance(self.evidence, Evidence):
            return (self.evidence,)
        return tuple(self.evidence)

    def points(self) -> list[Mapping[str, Any]]:
        """The parameter sample, drawn with ``seed`` when it is random."""
        if callable(self.sample):
            return list(self.sample(np.random.default_rng(self.seed)))
        return list(self.sample)

    def check(self) -> Verdict:
        """Evaluate the claim over its sample and return a :class:`Verdict`."""
        start = time.perf_counter()
        worst_error = -1.0
        worst_point: Mapping[str, Any] | None = None
        worst_values: tuple[Any, Any] = (None, None)
        n = 0

        def verdict(status: Status, detail: str, max_error: float | None,
                    point: Mapping[str, Any] | None) -> Verdict:
            return Verdict(
                paper=self.paper, claim=self.name, status=status, max_error=max_error,
                evidence=self.evidences, detail=detail, seconds=time.perf_counter() - start,
                worst_point=dict(point) if point is not None else None,
                tolerance=self.tolerance, n_points=n, source=self.source,
                expected=self.expected,
            )

        try:
            points = self.points()
        except Inconclusive as exc:
            return verdict(Status.INCONCLUSIVE, f"could not draw the sample: {exc}", None, None)
        if not points:
            return verdict(Status.INCONCLUSIVE, "empty parameter sample", None, None)
        for point in points:
            try:
                claimed = self.claimed(point)
                reference = self.reference(point) if self.reference is not None else None
                err = float(self.error(claimed, reference))
            except Inconclusive as exc:
                return verdict(Status.INCONCLUSIVE, f"at {_point_text(point)}: {exc}", None, point)
            except SymqError as exc:
                return verdict(Status.INCONCLUSIVE,
                               f"at {_point_text(point)}: {type(exc).__name__}: {exc}", None, point)
            n += 1
            if math.isnan(err):
                return verdict(Status.INCONCLUSIVE,
                               f"at {_point_text(point)}: the error is NaN", None, point)
            if err > worst_error:
                worst_error, worst_point, worst_values = err, point, (claimed, reference)
        if worst_error <= self.tolerance:
            detail = f"max error {worst_error:.3g} <= tolerance {self.tolerance:.3g} over {n} points"
            return verdict(Status.HOLDS, detail, worst_error, worst_point)
        detail = (f"error {worst_error:.3g} > tolerance {self.tolerance:.3g} at "
                  f"{_point_text(worst_point or {})}")
        if self.reference is not None:
            detail += f": claimed {_short(worst_values[0])}, reference {_short(worst_values[1])}"
        return verdict(Status.FAILS, detail, worst_error, worst_point)


def internal_error_verdict(claim: Claim, exc: BaseException, seconds: float) -> Verdict:
    """A verdict for a claim whose check crashed (a bug in symq, not a finding)."""
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return Verdict(paper=claim.paper, claim=claim.name, status=Status.INCONCLUSIVE,
                   max_error=None, evidence=claim.evidences,
                   detail=f"internal error: {last}", seconds=seconds, source=claim.source)
