"""The ME package's view of the thread-local mpmath contexts of :mod:`symq.core.precision`.

Every high-precision step of :mod:`symq.me` runs in the calling thread's private context
(``with working_dps(dps): ...``); mpmath's global context ``mpmath.mp`` is never changed, so the
package is safe to call from several threads and leaves a user's own precision alone.

* :data:`mp` and :data:`iv` stand for the calling thread's private real and interval contexts:
  ``mp.mpf(1)``, ``mp.polyroots(...)``, ``iv.exp(...)`` compute at the precision that the
  innermost ``working_dps`` block of *this* thread set (53 bits outside any block).
* mpmath arithmetic rounds to the context of its left operand, so a number made in another
  thread (e.g. one cached on a shared :class:`~symq.me.distribution.ME`) must be re-bound to the
  current thread's context before it is used: :func:`rebind` does that without rounding.
* Values handed back to the user are re-bound to the global context (:func:`to_global`, no
  rounding), so they are ordinary ``mpmath.mpf``/``mpc`` objects, as before.
* :func:`to_mp` converts an exact rational to a number of this thread's context, correctly
  rounded to its current precision.
"""

from __future__ import annotations

from typing import Any

import mpmath

from symq.core.precision import is_mpc, is_mpf, local_iv, local_mp, working_dps

from .transform import to_mpf

__all__ = ["mp", "iv", "rebind", "to_global", "to_mp", "working_dps", "is_mpf", "is_mpc"]


class _ThreadContext:
    """Attribute access resolves to the calling thread's private context."""

    __slots__ = ("_get",)

    def __init__(self, get: Any) -> None:
        object.__setattr__(self, "_get", get)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:  # pragma: no cover - guard
        raise AttributeError("set the precision with symq.core.precision.working_dps")

    def __repr__(self) -> str:
        return f"<thread-local context at {self._get().prec} bits>"


#: The calling thread's private real/complex context.
mp = _ThreadContext(local_mp)
#: The calling thread's private interval context.
iv = _ThreadContext(local_iv)


def _move(x: Any, ctx: Any) -> Any:
    if is_mpf(x):
        return ctx.make_mpf(x._mpf_)
    if is_mpc(x):
        return ctx.make_mpc(x._mpc_)
    if isinstance(x, list):
        return [_move(v, ctx) for v in x]
    if isinstance(x, tuple):
        return tuple(_move(v, ctx) for v in x)
    return x


def rebind(x: Any) -> Any:
    """``x`` (a number or nested lists/tuples of them) as numbers of this thread's context.

    The binary value is kept exactly; only the context that rounds later arithmetic changes.
    """
    return _move(x, local_mp())


def to_global(x: Any) -> Any:
    """``x`` as numbers of mpmath's global context, exactly (for values returned to users)."""
    return _move(x, mpmath.mp)


def to_mp(value: Any) -> Any:
    """An exact rational (sympy Rational, Fraction or int) in the calling thread's private
    context, correctly rounded to its current precision."""
    return to_mpf(value, local_mp())
