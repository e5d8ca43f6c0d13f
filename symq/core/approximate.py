"""A value known only within an error bar: an accelerated sum or a quadrature, and the comparison
that respects the bar.

An infinite sum (:mod:`symq.core.claimsfile.series`) or an integral
(:mod:`symq.core.claimsfile.integrals`) is computed by two methods; their disagreement (with each
method's own error estimate) is the error bar.  When that bar is negligible (below
:data:`NEGLIGIBLE` of the value, far below any tolerance a claim can state) the value is a plain
50-digit number; otherwise it is an :class:`Approximate` ``value ± error``, and a formula of it
carries the bar on (first order: each approximate input moved by its bar, the changes added).

The comparison (:func:`approximate_point_error`, called by
:func:`symq.core.tolerance.point_error` when a side is :class:`Approximate`) decides
only what the bar allows: the claim holds at the point when it holds with both sides moved apart
by their bars (the least favourable values), fails when it fails with both sides moved towards
each other (the most favourable values), and is undecided otherwise (:class:`Inconclusive`,
naming the value, its bar and how it was computed).  An :class:`Approximate` used anywhere as a
plain number (``float``, mpmath) raises :class:`Inconclusive` rather than letting its bar be
ignored.

Examples
--------
>>> from symq.core.tolerance import Tolerance, point_error
>>> a = Approximate(2.0, 1e-6, "a test")
>>> error = approximate_point_error(a, "==", 2.0000001, Tolerance(relative=1e-3), 1, point_error)
>>> f"{error:.2g}"   # the least favourable error, within the tolerance: holds
'5.5e-07'
>>> approximate_point_error(a, "==", 2.0000001, Tolerance(relative=1e-9), 1, point_error)
Traceback (most recent call last):
...
symq.core.errors.Inconclusive: the left side = 2.0 ± 1.0e-6 (a test): its error bar is too wide
for the tolerance (the error at the point lies between 0 and 5.5e-07, the bound is 1e-09)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .display import MarkdownDisplay
from .errors import Inconclusive
from .precision import local_mp

__all__ = ["NEGLIGIBLE", "Approximate", "approximate_point_error", "settle"]

#: Relative error bar below which a value is returned as a plain number.
NEGLIGIBLE = 1e-25


@dataclass(frozen=True)
class Approximate(MarkdownDisplay):
    """``value ± error``: a number computed by two methods whose disagreement is ``error``.

    Attributes
    ----------
    value : mpmath.mpf
        The estimate (the better method's).
    error : mpmath.mpf
        The error bar, >= 0 (absolute).
    how : str
        How it was computed ("the infinite sum ... by Euler-Maclaurin and Levin").
    """

    value: Any
    error: Any
    how: str

    def __str__(self) -> str:
        ctx = local_mp()
        return f"{ctx.nstr(ctx.mpf(self.value), 15)} ± {ctx.nstr(ctx.mpf(self.error), 2)}"

    __repr__ = __str__

    def to_markdown(self) -> str:
        """``**value ± error** (how)`` (Jupyter's display)."""
        return f"**{self}** ({self.how})"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``symq check --json``, reports): the value, its error bar and how."""
        return {"value": float(self.value), "error": float(self.error), "how": self.how}

    def _refuse(self) -> Any:
        raise Inconclusive(f"{self} ({self.how}) carries an error bar that this comparison "
                           "cannot take into account")

    def __float__(self) -> float:
        return self._refuse()

    @property
    def _mpf_(self) -> Any:  # mpmath reads numbers through this: never silently
        return self._refuse()


def settle(value: Any, error: Any, how: str) -> Any:
    """``value`` when ``error`` is negligible (below :data:`NEGLIGIBLE` of it), else
    ``Approximate(value, error, how)``."""
    ctx = local_mp()
    if abs(error) <= NEGLIGIBLE * max(abs(value), ctx.mpf(10) ** -300):
        return value
    return Approximate(value, ctx.mpf(abs(error)), how)


def _toward(a: Any, b: Any, ea: Any) -> Any:
    """``a`` moved by at most ``ea`` toward ``b`` (not past it)."""
    step = min(ea, abs(a - b))
    return a - step if a > b else a + step


def approximate_point_error(lhs: Any, op: str, rhs: Any, tolerance: Any, n_points: int,
                            plain: Callable[..., float]) -> float:
    """The error of ``lhs OP rhs`` when a side is :class:`Approximate` (see the module notes).

    Parameters
    ----------
    lhs, rhs
        The sides; an :class:`Approximate` one is replaced by its most and least favourable
        values, the other is passed as it is (a number or a confidence interval).
    op : str
        ``==``, ``->``, ``<=``, ``<``, ``>=``, ``>``.
    tolerance
        A :class:`~symq.core.tolerance.Tolerance`.
    n_points : int
        Points of the claim (for the family level of confidence intervals).
    plain : callable
        ``point_error`` for sides without error bars.

    Returns
    -------
    float
        The least favourable error when even it is within ``tolerance.bound(op)`` (holds), else
        the most favourable error when even it exceeds the bound (fails).

    Raises
    ------
    Inconclusive
        When the bar straddles the bound.
    """
    if op in (">=", ">"):
        lhs, rhs, op = rhs, lhs, {">=": "<=", ">": "<"}[op]
    ctx = local_mp()
    centre = [ctx.mpf(s.value) if isinstance(s, Approximate) else s for s in (lhs, rhs)]
    bars = [ctx.mpf(s.error) if isinstance(s, Approximate) else ctx.mpf(0) for s in (lhs, rhs)]
    numbers = [not hasattr(c, "half_width") for c in centre]
    a, b = centre
    if op in ("==", "->"):
        if all(numbers):
            worst = (a + bars[0], b - bars[1]) if a >= b else (a - bars[0], b + bars[1])
            best_a = _toward(a, b, bars[0])
            best = (best_a, _toward(b, best_a, bars[1]))
        else:  # the other side is an interval: move the number away from / toward its mean
            other = b if numbers[1] else a
            anchor = other.mean if hasattr(other, "mean") else other
            i = 0 if numbers[0] and isinstance(lhs, Approximate) else 1
            x, e = centre[i], bars[i]
            far = x + e if x >= anchor else x - e
            near = _toward(x, ctx.mpf(anchor), e)
            worst = (far, b) if i == 0 else (a, far)
            best = (near, b) if i == 0 else (a, near)
    else:  # lhs <= rhs: worst raises lhs and lowers rhs
        worst = (a + bars[0] if numbers[0] else a, b - bars[1] if numbers[1] else b)
        best = (a - bars[0] if numbers[0] else a, b + bars[1] if numbers[1] else b)
    bound = tolerance.bound(op)
    high = plain(worst[0], op, worst[1], tolerance, n_points)
    if high <= bound:
        return high
    low = plain(best[0], op, best[1], tolerance, n_points)
    if low > bound:
        return low
    shown = "; ".join(f"the {side} = {s} ({s.how})" for side, s in
                      (("left side", lhs), ("right side", rhs)) if isinstance(s, Approximate))
    raise Inconclusive(f"{shown}: its error bar is too wide for the tolerance (the error at the "
                       f"point lies between {low:.2g} and {high:.2g}, the bound is {bound:.2g})")
