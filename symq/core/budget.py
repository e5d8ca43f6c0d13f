"""Time budgets for symbolic work (DESIGN.md: never a silent multi-minute hang).

Generic sympy ``solve``, ``integrate`` or ``simplify`` can run for minutes on an unlucky
expression.  :func:`time_budget` bounds such work and raises
:class:`~symq.core.errors.DerivationTimeout` naming what ran out of time.

The budget counts the CPU time of the process (``ITIMER_VIRTUAL``, user time), not the wall
clock: the time the machine gives other processes does not count, so whether a bounded step
finishes (and so a verdict that rests on it) does not depend on how loaded the machine is.
It uses ``SIGVTALRM``, so it is enforced in the main thread of a POSIX process; in other
threads (e.g. Dask workers) and on Windows the block runs without a bound.

Examples
--------
>>> with time_budget(5.0, "a quick simplification"):
...     import sympy as sp
...     sp.simplify(sp.sin(sp.Symbol("x")) ** 2 + sp.cos(sp.Symbol("x")) ** 2)
1
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator

from .errors import DerivationTimeout, InvalidParameter

__all__ = ["time_budget"]


@contextlib.contextmanager
def time_budget(seconds: float, what: str) -> Iterator[None]:
    """Run the ``with`` block for at most ``seconds`` of the process's CPU time.

    Parameters
    ----------
    seconds : float
        The budget, > 0.
    what : str
        What the block computes, for the error message.

    Raises
    ------
    DerivationTimeout
        When the block is still running after ``seconds``.
    """
    if not seconds > 0:
        raise InvalidParameter("seconds", seconds, "a positive number of seconds")
    enforce = (hasattr(signal, "SIGVTALRM")
               and threading.current_thread() is threading.main_thread())
    if not enforce:
        yield
        return

    expired = False

    def expire(signum: int, frame: object) -> None:
        nonlocal expired
        expired = True
        raise DerivationTimeout(f"{what} exceeded its time budget of {seconds:g} s")

    previous = signal.signal(signal.SIGVTALRM, expire)
    start = time.process_time()
    remaining, interval = signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    if 0 < remaining < seconds:  # an enclosing budget ends first: keep its deadline
        signal.setitimer(signal.ITIMER_VIRTUAL, remaining, interval)
        signal.signal(signal.SIGVTALRM, previous)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)
        if remaining > 0:  # an enclosing budget was running: restore what is left of it
            left = max(remaining - (time.process_time() - start), 1e-3)
            signal.setitimer(signal.ITIMER_VIRTUAL, left, interval)
    if expired:  # the alarm's exception was swallowed (a weakref callback, a broad except)
        raise DerivationTimeout(f"{what} exceeded its time budget of {seconds:g} s (the block "
                                "ran on after the alarm)")
