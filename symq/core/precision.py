"""Thread-local arbitrary-precision contexts.

mpmath's module-level functions share one global context (``mpmath.mp``); ``mpmath.workdps``
changes its precision for *every* thread while the block runs, so two threads that raise the
precision see each other's setting, and a user's own mpmath code sees symq's.  symq never touches
that context: every high-precision computation runs in a private context of the calling thread,
obtained here.

Examples
--------
>>> from symq.core.precision import working_dps
>>> with working_dps(30) as ctx:
...     print(ctx.mpf(1) / 3)
0.333333333333333333333333333333
>>> import mpmath; mpmath.mp.dps   # the global context is untouched
15
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mpmath
from mpmath.ctx_iv import MPIntervalContext
from mpmath.ctx_mp_python import _mpc, _mpf

__all__ = ["local_mp", "local_iv", "working_dps", "is_mpf", "is_mpc", "is_mpnumber"]

_LOCAL = threading.local()


def local_mp() -> mpmath.MPContext:
    """The calling thread's private mpmath context (created at 53 bits on first use)."""
    ctx = getattr(_LOCAL, "mp", None)
    if ctx is None:
        ctx = _LOCAL.mp = mpmath.MPContext()
    return ctx


def local_iv() -> MPIntervalContext:
    """The calling thread's private interval-arithmetic context."""
    ctx = getattr(_LOCAL, "iv", None)
    if ctx is None:
        ctx = _LOCAL.iv = MPIntervalContext()
    return ctx


@contextmanager
def working_dps(dps: int, *, intervals: bool = False) -> Iterator[mpmath.MPContext]:
    """Run a block at ``dps`` decimal digits in the thread's private context, and yield it.

    The previous precision of that context is restored on exit, so calls nest.  With
    ``intervals=True`` the thread's interval context is set to the same precision too.
    """
    ctx = local_mp()
    old = ctx.prec
    ivc = local_iv() if intervals else None
    old_iv = ivc.prec if ivc is not None else None
    ctx.dps = int(dps)
    if ivc is not None:
        ivc.dps = int(dps)
    try:
        yield ctx
    finally:
        ctx.prec = old
        if ivc is not None:
            ivc.prec = old_iv


def is_mpf(x: Any) -> bool:
    """Whether ``x`` is an mpmath real of any context (``isinstance(x, mpmath.mpf)`` is not)."""
    return isinstance(x, _mpf)


def is_mpc(x: Any) -> bool:
    """Whether ``x`` is an mpmath complex of any context."""
    return isinstance(x, _mpc)


def is_mpnumber(x: Any) -> bool:
    """Whether ``x`` is an mpmath real or complex of any context."""
    return isinstance(x, (_mpf, _mpc))
