"""What a failing claim shows a referee: the smallest counterexample and where the claim holds.

:func:`smallest_counterexample` starts from the failing point nearest the low corner of the
region and, for claims whose evidence is deterministic, moves each numeric coordinate toward its
lower bound (bisection on a continuous axis, stepping down on an integer one) while the claim
still fails, within an evaluation and time budget.  "Smallest" is measured in the region's own
coordinates: the sum over axes of ``(value - low)/(high - low)``.

:func:`holding_region` describes the points where the claim held: on one axis it gives the
intervals of holding values (and, for a deterministic claim, locates the boundary between a
holding and a failing grid value by bisection); on several axes it names the values of each axis
at which every point held or every point failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from .region import Axis, Region

if TYPE_CHECKING:  # pragma: no cover
    from ..claims import PointOutcome

__all__ = ["SHRINK_EVALUATIONS", "SHRINK_SECONDS", "holding_region", "smallest_counterexample"]

#: Most extra evaluations spent shrinking a counterexample or locating a boundary.
SHRINK_EVALUATIONS = 24
#: Most seconds spent on them.
SHRINK_SECONDS = 20.0


def _position(region: Region, point: dict[str, Any]) -> float:
    total = 0.0
    for axis in region.axes:
        if axis.numeric and axis.high is not None and axis.low is not None and axis.high > axis.low:
            total += (float(point[axis.name]) - axis.low) / (axis.high - axis.low)
    return total


def _fmt(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


class _Budget:
    def __init__(self) -> None:
        self.left = SHRINK_EVALUATIONS
        self.deadline = time.perf_counter() + SHRINK_SECONDS

    def take(self) -> bool:
        if self.left <= 0 or time.perf_counter() > self.deadline:
            return False
        self.left -= 1
        return True


def smallest_counterexample(region: Region, outcomes: Sequence[PointOutcome],
                            fails: Callable[[dict[str, Any]], bool | None],
                            tolerance: float, deterministic: bool) -> dict[str, Any] | None:
    """The smallest failing point found (see the module docstring); None if none failed.

    ``fails(point)`` re-evaluates the claim at a new point: True when it fails there, False
    when it holds, None when undecided.
    """
    failing = [dict(o.point) for o in outcomes if o.error is not None and o.error > tolerance]
    if not failing:
        return None
    best = min(failing, key=lambda p: _position(region, p))
    if not deterministic:
        return best
    budget = _Budget()
    for axis in region.axes:
        if not axis.numeric or axis.low is None or best[axis.name] == axis.low:
            continue
        if region.where:  # moving a coordinate could leave the region
            break
        best = _shrink_axis(axis, best, fails, budget)
    return best


def _shrink_axis(axis: Axis, point: dict[str, Any], fails: Callable[[dict[str, Any]], Any],
                 budget: _Budget) -> dict[str, Any]:
    name = axis.name
    if axis.integer:
        candidates = sorted({v for v in (axis.values or range(int(cast(float, axis.low)),
                                                               int(point[name])))
                             if v < point[name]})
        for value in candidates:  # the smallest value that still fails
            if not budget.take():
                break
            trial = {**point, name: value}
            if fails(trial):
                return trial
        return point
    low, high = float(cast(float, axis.low)), float(point[name])
    trial = {**point, name: low}
    if budget.take() and fails(trial):
        return trial
    for _ in range(6):
        if not budget.take():
            break
        middle = (low + high) / 2
        trial = {**point, name: middle}
        if fails(trial):
            high = middle
        else:
            low = middle
    return {**point, name: high}


def _decided_error(outcome: PointOutcome) -> float:
    """The error of a point that was decided (the callers keep only those: ``error`` set)."""
    if outcome.error is None:
        raise AssertionError("an undecided point among the decided ones")
    return outcome.error


def holding_region(region: Region, outcomes: Sequence[PointOutcome], tolerance: float,
                   holds: Callable[[dict[str, Any]], bool | None], deterministic: bool) -> str:
    """Where the claim held among the evaluated points (see the module docstring)."""
    decided = [o for o in outcomes if o.error is not None]
    if not decided:
        return ""
    good = [o for o in decided if _decided_error(o) <= tolerance]
    if len(good) == len(decided):
        return f"at all {len(decided)} points"
    if not good:
        return f"at none of the {len(decided)} points"
    varying = [a for a in region.axes if len({o.point[a.name] for o in decided}) > 1]
    head = f"at {len(good)} of {len(decided)} points"
    if len(varying) == 1 and varying[0].numeric:
        return head + "; " + _one_axis(varying[0], decided, tolerance, holds, deterministic)
    parts = []
    for axis in varying:
        values = sorted({o.point[axis.name] for o in decided}, key=lambda v: (str(type(v)), v))
        always = [v for v in values
                  if all(_decided_error(o) <= tolerance
                         for o in decided if o.point[axis.name] == v)]
        never = [v for v in values
                 if all(_decided_error(o) > tolerance
                        for o in decided if o.point[axis.name] == v)]
        if always:
            parts.append(f"every point with {axis.name} in {{{', '.join(map(_fmt, always))}}} "
                         "holds")
        if never:
            parts.append(f"every point with {axis.name} in {{{', '.join(map(_fmt, never))}}} "
                         "fails")
    return head + ("; " + "; ".join(parts) if parts else "")


def _one_axis(axis: Axis, decided: Sequence[PointOutcome], tolerance: float,
              holds: Callable[[dict[str, Any]], bool | None], deterministic: bool) -> str:
    ordered = sorted(decided, key=lambda o: o.point[axis.name])
    runs: list[tuple[bool, list[Any]]] = []
    for o in ordered:
        ok = _decided_error(o) <= tolerance
        if runs and runs[-1][0] == ok:
            runs[-1][1].append(o)
        else:
            runs.append((ok, [o]))
    texts = []
    budget = _Budget()
    for i, (ok, members) in enumerate(runs):
        low, high = members[0].point[axis.name], members[-1].point[axis.name]
        span = f"{axis.name} = {_fmt(low)}" if low == high else \
            f"{axis.name} in [{_fmt(low)}, {_fmt(high)}]"
        texts.append(f"{'holds' if ok else 'fails'} at {span}")
        if deterministic and not axis.integer and i + 1 < len(runs):
            boundary = _boundary(axis.name, members[-1], runs[i + 1][1][0], ok, holds, budget)
            if boundary:
                texts.append(boundary)
    return "; ".join(texts)


def _boundary(name: str, last: PointOutcome, first: PointOutcome, ok: bool,
              holds: Callable[[dict[str, Any]], bool | None], budget: _Budget) -> str:
    a, b = float(last.point[name]), float(first.point[name])
    for _ in range(8):
        if not budget.take():
            break
        middle = (a + b) / 2
        verdict = holds({**dict(last.point), name: middle})
        if verdict is None:
            return ""
        if verdict == ok:
            a = middle
        else:
            b = middle
    return f"(the switch lies in [{a:.6g}, {b:.6g}])"
