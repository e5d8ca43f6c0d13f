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

A claim never raises because the claim is false: a failing claim is a finding.  The verdict
keeps the outcome at every point (:attr:`Verdict.points`: both values, the error, the point's
own verdict and, when undecided, why), and says whether it contradicts the claim's
``expected`` verdict (:attr:`Verdict.unexpected`; ``symq check`` flags it and exits with
status 4).  When a point's error carries the resolution of simulation evidence (a
:class:`~symq.core.tolerance.PointError`), the verdict's detail states it: "this run
detects differences >= 0.8%".
"""

from __future__ import annotations

import enum
import math
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import sympy as sp

from .claim_measures import (
    absolute_error,
    ci_error,
    equivalence_error,
    mixed_error,
    relative_error,
    symbolic_error,
)
from .display import MarkdownDisplay, short_text
from .errors import Inconclusive, SymqError
from .result import to_jsonable
from .threads import limit_blas_threads

__all__ = [
    "Claim",
    "Evidence",
    "Inconclusive",
    "PointOutcome",
    "Status",
    "Verdict",
    "absolute_error",
    "ci_error",
    "equivalence_error",
    "mixed_error",
    "relative_error",
    "symbolic_error",
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


# ----------------------------------------------------------------------------- verdicts

@dataclass
class Verdict(MarkdownDisplay):
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
    points: list[PointOutcome] = field(default_factory=list)
    units: str = ""

    @property
    def holds(self) -> bool:
        return self.status is Status.HOLDS

    @property
    def unexpected(self) -> bool:
        """Whether the verdict contradicts ``expected`` (holds where symq expects it to fail,
        or fails where it expects it to hold); an inconclusive verdict contradicts nothing."""
        return self.status is not Status.INCONCLUSIVE and self.status is not self.expected

    def to_markdown(self) -> str:
        """The verdict as a heading line (paper and claim) and a two-column table: status,
        error and tolerance, evidence, worst point, both sides there, detail, source, time
        (Jupyter's display)."""
        rows: list[tuple[str, Any]] = [("status", self._status_line())]
        if self.max_error is not None:
            tol = "" if self.tolerance is None else f" (tolerance {self.tolerance:.3g})"
            rows.append(("max error", f"{self.max_error:.3g}{tol}"))
            if self.units:
                rows.append(("error units", self.units))
        rows.append(("evidence", ", ".join(str(e) for e in self.evidence)))
        rows.append(("points", self.n_points))
        if self.worst_point:
            rows.append(("worst point", self.worst_point))
        shown = pair_text(self.claimed_value, self.reference_value)
        if self.claimed_value is not None:
            rows.append((self.side_names[0], shown[0]))
        if self.reference_value is not None:
            rows.append((self.side_names[1], shown[1]))
        if self.counterexample:
            rows.append(("counterexample", self.counterexample))
        rows.append(("detail", self.detail))
        if self.source:
            rows.append(("source", self.source))
        rows.append(("time", f"{self.seconds:.2f} s"))
        title = f"**{short_text(self.paper)}**: {short_text(self.claim)}" if self.paper else \
            f"**{short_text(self.claim)}**"
        body = "\n".join(f"| {name} | {short_text(value)} |" for name, value in rows)
        return f"{title}\n\n| | |\n|---|---|\n{body}"

    def _status_line(self) -> str:
        status, expected = str(self.status), str(self.expected)
        if not self.unexpected:
            if self.status is self.expected and expected == "fails":
                return "fails, as expected (a statement symq refutes)"
            return status
        return f"**{status.upper()}** (expected: {expected})"

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
            "unexpected": self.unexpected,
            "units": self.units,
            "points": [o.as_json(self.tolerance) for o in self.points],
        }

    def explanation(self) -> str:
        """Several lines a referee reads: what was compared, where, the worst point with both
        values, the tolerance, the evidence, the counterexample and where the claim holds."""
        expected = "fail" if self.expected is Status.FAILS else "hold"
        flag = f" (UNEXPECTED: symq expects it to {expected})" if self.unexpected else ""
        lines = [f"{self.paper}: {self.claim}: {self.status}{flag}"]
        if self.source:
            lines.append(f"  source: {self.source}")
        if self.compared:
            lines.append(f"  compared: {self.compared}")
        lines.append(f"  evidence: {', '.join(str(e) for e in self.evidence)}; "
                     f"{self.n_points} points" + (f", {self.n_inconclusive} inconclusive"
                                                  if self.n_inconclusive else ""))
        if self.tolerance is not None:
            lines.append(f"  tolerance: {self.tolerance:.3g}" + (f" {self.units}" if self.units
                                                                  else ""))
        if self.worst_point is not None:
            lines.append(f"  worst point: {_point_text(self.worst_point)}")
        if self.claimed_value is not None or self.reference_value is not None:
            first, second = self.side_names
            a, b = pair_text(self.claimed_value, self.reference_value)
            lines.append(f"  values there: {first} {a}, {second} {b}")
        if self.counterexample is not None:
            lines.append(f"  smallest counterexample: {_point_text(self.counterexample)}")
        if self.holds_region:
            lines.append(f"  holds: {self.holds_region}")
        lines.append(f"  detail: {self.detail}")
        if self.points:
            lines.append(f"  points ({len(self.points)}):")
            lines += ["    " + row for row in points_table(self.points, self.tolerance,
                                                             self.side_names)]
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


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a real number (not an interval, array or text)."""
    value = displayable(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer,
                                                         sp.Number)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


#: Most significant digits :func:`pair_text` shows (values that differ only beyond them differ
#: by rounding noise, relative 1e-12).
PAIR_DIGITS = 12


def pair_text(a: Any, b: Any) -> tuple[str, str]:
    """Both values with enough significant digits (6 to :data:`PAIR_DIGITS`) to show that they
    differ: 0.9999999999 and 1 are not both printed as 1."""
    x, y = _number(a), _number(b)
    if x is None or y is None or x == y or hasattr(a, "witness") or hasattr(b, "witness"):
        return _short(a), _short(b)
    for digits in range(6, PAIR_DIGITS + 1):
        first, second = f"{x:.{digits}g}", f"{y:.{digits}g}"
        if first != second:
            return first, second
    return first, second


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in point.items())


def _at(point: Mapping[str, Any] | None) -> str:
    """" at x=1, y=2" (nothing for a claim without parameters)."""
    return f" at {_point_text(point)}" if point else ""


def points_table(outcomes: Sequence[PointOutcome], tolerance: float | None,
                 side_names: tuple[str, str] = ("claimed", "reference")) -> list[str]:
    """The per-point table of ``symq check --explain``: the point, both sides, the error and
    the verdict at the point (with the reason when it is undecided)."""
    headers = ("point", *side_names, "error", "verdict")
    rows = []
    for o in outcomes:
        a, b = pair_text(o.claimed, o.reference)
        error = "" if o.error is None else f"{o.error:.3g}"
        resolution = getattr(o.error, "resolution", None)
        if resolution is not None:
            error += f" (detects >= {100 * resolution:.2g}%)"
        status = str(o.status(tolerance))
        if o.reason:
            status += f": {o.reason}"
        rows.append((_point_text(o.point) or "-", a if o.error is not None or o.claimed is not None
                     else "-", b if o.error is not None or o.reference is not None else "-",
                     error or "-", status))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers[:-1])]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    return [fmt.format(*headers), fmt.format(*("-" * w for w in widths), "-" * 7)] + \
        [fmt.format(*r) for r in rows]


def _resolution_text(outcomes: Sequence[PointOutcome]) -> str:
    """"this run detects differences >= 0.8%" (the coarsest point), when the errors carry the
    resolution of simulation evidence."""
    relative = [r for o in outcomes if (r := getattr(o.error, "resolution", None)) is not None]
    if relative:
        return f"this run detects differences >= {100 * max(relative):.2g}%"
    absolute = [r for o in outcomes
                if (r := getattr(o.error, "absolute_resolution", None)) is not None]
    if absolute:
        return f"this run detects differences >= {max(absolute):.2g} (absolute)"
    halves = []  # a claim that compares a value with an interval (ci_error): its half-width
    for o in outcomes:
        for estimate, value in ((o.reference, o.claimed), (o.claimed, o.reference)):
            other = _number(value)
            if hasattr(estimate, "half_width") and other:
                halves.append(float(estimate.half_width) / abs(other))
    if halves:
        return f"this run detects differences >= {100 * max(halves):.2g}%"
    return ""


# ----------------------------------------------------------------------------- claims

Sample = Sequence[Mapping[str, Any]] | Callable[[np.random.Generator], Sequence[Mapping[str, Any]]]


@dataclass
class Claim(MarkdownDisplay):
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

    def __repr__(self) -> str:
        """One line: the class, the claim's name, paper and statement (the Markdown display
        has the rest; the fields hold functions and sampled points, thousands of characters)."""
        return (f"{type(self).__name__}({self.name!r}, paper={self.paper!r}, "
                f"statement={self.statement!r})")

    def to_markdown(self) -> str:
        """The claim before it is checked (Jupyter's display): name, source, statement,
        tolerance, evidence, points, expected verdict."""
        evidence = self.evidence if isinstance(self.evidence, tuple) else (self.evidence,)
        sample = self.sample if isinstance(self.sample, (list, tuple)) else None
        rows: list[tuple[str, Any]] = [
            ("source", self.source), ("statement", self.statement),
            ("tolerance", f"{self.tolerance:.3g}"),
            ("evidence", ", ".join(str(e) for e in evidence)),
            ("points", len(sample) if sample is not None else "drawn at random"),
            ("expected", str(self.expected)),
        ]
        body = "\n".join(f"| {name} | {short_text(value)} |" for name, value in rows)
        return (f"**{short_text(self.name)}** (not checked yet: `.check()`)\n\n| | |\n|---|---|\n"
                f"{body}")

    @classmethod
    def predicate(cls, name: str, source: str, statement: Any,
                  holds_at: Callable[[Mapping[str, Any]], bool], sample: Sample, *,
                  evidence: Evidence | tuple[Evidence, ...] = Evidence.NUMERIC,
                  **kwargs: Any) -> Claim:
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

    @limit_blas_threads()
    def check(self) -> Verdict:
        """Evaluate the claim over its sample and return a :class:`Verdict` (one BLAS thread
        for the small matrices of the solvers: :func:`symq.core.threads.limit_blas_threads`)."""
        start = time.perf_counter()
        outcomes: list[PointOutcome] = []

        def verdict(status: Status, detail: str, max_error: float | None,
                    worst: PointOutcome | None = None) -> Verdict:
            n_bad = sum(o.error is None for o in outcomes)
            return Verdict(
                paper=self.paper, claim=self.name, status=status, max_error=max_error,
                evidence=self.evidences, detail=detail, seconds=time.perf_counter() - start,
                worst_point=dict(worst.point) if worst is not None else None,
                tolerance=self.tolerance, n_points=len(outcomes) - n_bad, source=self.source,
                expected=self.expected, compared=self.compared_text(),
                claimed_value=worst.claimed if worst is not None else None,
                reference_value=worst.reference if worst is not None else None,
                n_inconclusive=n_bad, side_names=self.side_names, points=list(outcomes),
                units=self.error_units(outcomes),
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
        worst = max(decided, key=lambda o: cast(float, o.error)) if decided else None
        units = self.error_units(outcomes)
        unit = f" {units}" if units else ""
        resolution = _resolution_text(decided)
        if worst is not None and worst.error > self.tolerance:  # type: ignore[operator]
            detail = (f"error {worst.error:.3g}{unit} > tolerance {self.tolerance:.3g}"
                      f"{_at(worst.point)}")
            if self.reference is not None or worst.reference is not None:
                first, second = self.side_names
                a, b = pair_text(worst.claimed, worst.reference)
                detail += f": {first} {a}, {second} {b}"
            if undecided:
                detail += f" ({len(undecided)} points inconclusive)"
            if resolution:
                detail += f"; {resolution}"
            result = verdict(Status.FAILS, detail, worst.error, worst)
            return self.explain(result, outcomes)
        if undecided:
            pending = undecided[0]
            where = f"at {_point_text(pending.point)}: " if pending.point else ""
            more = f" ({len(undecided)} of {len(outcomes)} points undecided)" \
                if len(outcomes) > 1 else ""
            return verdict(Status.INCONCLUSIVE, f"{where}{pending.reason}{more}", None, pending)
        assert worst is not None
        detail = (f"max error {worst.error:.3g}{unit} <= tolerance {self.tolerance:.3g} over "
                  f"{len(decided)} points")
        if resolution:
            detail += f"; {resolution}"
        return self.explain(verdict(Status.HOLDS, detail, worst.error, worst), outcomes)

    def error_units(self, outcomes: Sequence[PointOutcome] = ()) -> str:
        """The units of the error and the tolerance, for the verdict's text: those of a claims
        file's tolerance (``relative``, ``absolute``), of the standard error measures, or
        ``half-widths`` when the error is :func:`ci_error` of a simulation side (checked on the
        outcomes)."""
        spec = getattr(self, "tolerance_spec", None)
        if spec is not None and callable(getattr(spec, "units", None)):
            return str(spec.units())
        stated = getattr(self.error, "units", None)  # equivalence_error
        if isinstance(stated, str):
            return stated
        known = {relative_error: "relative", absolute_error: "absolute"}
        if self.error in known:
            return known[self.error]
        for o in outcomes:
            if o.error is None:
                continue
            for estimate, value in ((o.reference, o.claimed), (o.claimed, o.reference)):
                if hasattr(estimate, "half_width") and hasattr(estimate, "mean"):
                    try:
                        if math.isclose(ci_error(estimate, value), o.error, rel_tol=1e-12):
                            return f"half-widths of the {100 * estimate.level:g}% interval"
                    except (TypeError, ValueError):
                        pass
        return ""

    def evaluate(self, point: Mapping[str, Any]) -> PointOutcome:
        """Both sides and the error at one point; an undecided point carries the reason."""
        try:
            claimed = self.claimed(point)
            reference = self.reference(point) if self.reference is not None else None
            raw = self.error(claimed, reference)
            # a float subclass (PointError) keeps the resolution of simulation evidence
            err = raw if isinstance(raw, float) else float(raw)
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

    def explain(self, verdict: Verdict, outcomes: Sequence[PointOutcome]) -> Verdict:
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

    def status(self, tolerance: float | None) -> Status:
        """The verdict at this point: holds when the error is within ``tolerance``."""
        if self.error is None:
            return Status.INCONCLUSIVE
        if tolerance is None:
            return Status.HOLDS
        return Status.HOLDS if self.error <= tolerance else Status.FAILS

    def as_json(self, tolerance: float | None) -> dict[str, Any]:
        """JSON form (``symq check --json``: a verdict's ``points``), given the verdict's
        tolerance (which decides the point's status)."""
        return {
            "point": to_jsonable(dict(self.point)),
            "claimed": to_jsonable(displayable(self.claimed)),
            "reference": to_jsonable(displayable(self.reference)),
            "error": to_jsonable(None if self.error is None else float(self.error)),
            "status": str(self.status(tolerance)),
            "reason": self.reason,
            "resolution": to_jsonable(getattr(self.error, "resolution", None)),
        }


def internal_error_verdict(claim: Claim, exc: BaseException, seconds: float) -> Verdict:
    """A verdict for a claim whose check crashed (a bug in symq, not a finding)."""
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return Verdict(paper=claim.paper, claim=claim.name, status=Status.INCONCLUSIVE,
                   max_error=None, evidence=claim.evidences,
                   detail=f"internal error: {last}", seconds=seconds, source=claim.source)
