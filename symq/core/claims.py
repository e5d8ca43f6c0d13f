"""Claims and verdicts: checking a formula against an independent computation.

A :class:`Claim` states something a paper (or symq itself) asserts, and how to test it:
the claimed value at a parameter point, an independent reference computation at the same
point, a parameter sample, an error measure and a tolerance.  :meth:`Claim.check` evaluates
both sides over the sample and returns a :class:`Verdict`:

* ``holds``: the largest error is within the tolerance at every point;
* ``fails``: some point exceeds it; the worst point, both values there and its error are
  reported (a failing point is a finding even when other points were inconclusive);
* ``inconclusive``: the evidence could not decide (a side raised :class:`Inconclusive`,
  or produced no finite number) at some point and no point failed, with the reason.

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
    "PointOutcome",
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
    HIGH_PRECISION = "50-digit"  #: evaluated with 50 significant digits (mpmath)

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
    """Largest ``|claimed - reference| / |reference|`` (exact zeros compare absolutely)."""
    a, b = _arrays(claimed, reference)
    if a.size == 0:
        return 0.0
    scale = np.where(b == 0, 1.0, np.abs(b))
    return float(np.max(np.abs(a - b) / scale))


def mixed_error(scale: float = 1.0) -> Callable[[Any, Any], float]:
    """Error ``|a - b| / max(|b|, scale)``: relative for large values, absolute near zero."""

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
    compared: str = ""
    claimed_value: Any = None
    reference_value: Any = None
    counterexample: dict[str, Any] | None = None
    holds_region: str = ""
    n_inconclusive: int = 0
    side_names: tuple[str, str] = ("claimed", "reference")

    @property
    def holds(self) -> bool:
        return self.status is Status.HOLDS

    def _repr_markdown_(self) -> str:  # Jupyter
        from .display import verdict_markdown

        return verdict_markdown(self)

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
            "claimed_value": to_jsonable(self.claimed_value),
            "reference_value": to_jsonable(self.reference_value),
            "compared": self.compared,
            "counterexample": to_jsonable(self.counterexample),
            "holds_region": self.holds_region,
            "n_inconclusive": self.n_inconclusive,
            "expected": str(self.expected),
        }

    def explanation(self) -> str:
        """Several lines a referee reads: what was compared, where, the worst point with both
        values, the tolerance, the evidence, the counterexample and where the claim holds."""
        lines = [f"{self.paper}: {self.claim}: {self.status}"]
        if self.source:
            lines.append(f"  source: {self.source}")
        if self.compared:
            lines.append(f"  compared: {self.compared}")
        lines.append(f"  evidence: {', '.join(str(e) for e in self.evidence)}; "
                     f"{self.n_points} points" + (f", {self.n_inconclusive} inconclusive"
                                                  if self.n_inconclusive else ""))
        if self.tolerance is not None:
            lines.append(f"  tolerance: {self.tolerance:.3g}")
        if self.worst_point is not None:
            lines.append(f"  worst point: {_point_text(self.worst_point)}")
        if self.claimed_value is not None or self.reference_value is not None:
            first, second = self.side_names
            lines.append(f"  values there: {first} {_short(self.claimed_value)}, "
                         f"{second} {_short(self.reference_value)}")
        if self.counterexample is not None:
            lines.append(f"  smallest counterexample: {_point_text(self.counterexample)}")
        if self.holds_region:
            lines.append(f"  holds: {self.holds_region}")
        lines.append(f"  detail: {self.detail}")
        return "\n".join(lines)


#: Exact integers and rationals wider than this many bits are shown (and stored in verdicts)
#: as 17-digit floats: Python refuses decimal strings of more than 4300 digits.
MAX_SHOWN_BITS = 1000


def displayable(value: Any) -> Any:
    """``value``, or a 17-digit sympy Float of it when it is an exact integer or rational too
    wide to print (``1001^4096``: 12,289 digits); the comparison that used the exact value is
    already made."""
    if isinstance(value, (int, sp.Rational)) and not isinstance(value, bool):
        p, q = (int(value.p), int(value.q)) if isinstance(value, sp.Rational) else (value, 1)
        if max(abs(p).bit_length(), q.bit_length()) > MAX_SHOWN_BITS:
            from .precision import working_dps

            with working_dps(20) as ctx:
                return sp.Float(ctx.nstr(ctx.mpf(p) / q, 17), 17)
    return value


def _short(value: Any) -> str:
    value = displayable(value)
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

    def _repr_markdown_(self) -> str:  # Jupyter
        from .display import claim_markdown

        return claim_markdown(self)

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
        outcomes: list[PointOutcome] = []

        def verdict(status: Status, detail: str, max_error: float | None,
                    worst: "PointOutcome | None" = None) -> Verdict:
            n_bad = sum(o.error is None for o in outcomes)
            return Verdict(
                paper=self.paper, claim=self.name, status=status, max_error=max_error,
                evidence=self.evidences, detail=detail, seconds=time.perf_counter() - start,
                worst_point=dict(worst.point) if worst is not None else None,
                tolerance=self.tolerance, n_points=len(outcomes) - n_bad, source=self.source,
                expected=self.expected, compared=self.compared_text(),
                claimed_value=worst.claimed if worst is not None else None,
                reference_value=worst.reference if worst is not None else None,
                n_inconclusive=n_bad, side_names=self.side_names,
            )

        try:
            points = self.points()
        except Inconclusive as exc:
            return verdict(Status.INCONCLUSIVE, f"could not draw the sample: {exc}", None)
        if not points:
            return verdict(Status.INCONCLUSIVE, "empty parameter sample", None)
        for point in points:
            outcomes.append(self.evaluate(point))
        decided = [o for o in outcomes if o.error is not None]
        undecided = [o for o in outcomes if o.error is None]
        worst = max(decided, key=lambda o: o.error) if decided else None  # type: ignore[arg-type]
        if worst is not None and worst.error > self.tolerance:  # type: ignore[operator]
            detail = (f"error {worst.error:.3g} > tolerance {self.tolerance:.3g} at "
                      f"{_point_text(worst.point)}")
            if self.reference is not None:
                first, second = self.side_names
                detail += f": {first} {_short(worst.claimed)}, {second} {_short(worst.reference)}"
            if undecided:
                detail += f" ({len(undecided)} points inconclusive)"
            result = verdict(Status.FAILS, detail, worst.error, worst)
            return self.explain(result, outcomes)
        if undecided:
            first = undecided[0]
            where = f"at {_point_text(first.point)}: " if first.point else ""
            return verdict(Status.INCONCLUSIVE, f"{where}{first.reason}", None, first)
        assert worst is not None
        detail = (f"max error {worst.error:.3g} <= tolerance {self.tolerance:.3g} over "
                  f"{len(decided)} points")
        return self.explain(verdict(Status.HOLDS, detail, worst.error, worst), outcomes)

    def evaluate(self, point: Mapping[str, Any]) -> "PointOutcome":
        """Both sides and the error at one point; an undecided point carries the reason."""
        try:
            claimed = self.claimed(point)
            reference = self.reference(point) if self.reference is not None else None
            err = float(self.error(claimed, reference))
        except Inconclusive as exc:
            return PointOutcome(point, None, None, None, str(exc))
        except SymqError as exc:
            return PointOutcome(point, None, None, None, f"{type(exc).__name__}: {exc}")
        if math.isnan(err):
            return PointOutcome(point, claimed, reference, None, "the error is NaN")
        return PointOutcome(point, claimed, reference, err, "")

    #: How verdicts name the two values compared.
    side_names = ("claimed", "reference")

    def compared_text(self) -> str:
        """What the claim compares (overridden by claims that know more)."""
        return ""

    def explain(self, verdict: Verdict, outcomes: Sequence["PointOutcome"]) -> Verdict:
        """Add a counterexample or the region where the claim holds (hook for subclasses)."""
        return verdict


@dataclass(frozen=True)
class PointOutcome:
    """The evaluation of a claim at one point: both values, the error (None: undecided) and,
    when undecided, the reason."""

    point: Mapping[str, Any]
    claimed: Any
    reference: Any
    error: float | None
    reason: str


def internal_error_verdict(claim: Claim, exc: BaseException, seconds: float) -> Verdict:
    """A verdict for a claim whose check crashed (a bug in symq, not a finding)."""
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return Verdict(paper=claim.paper, claim=claim.name, status=Status.INCONCLUSIVE,
                   max_error=None, evidence=claim.evidences,
                   detail=f"internal error: {last}", seconds=seconds, source=claim.source)
