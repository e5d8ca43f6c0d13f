"""BLAS threads limited to one around small-matrix work.

symq's numerics multiply, invert and exponentiate many small matrices (phase-type and
matrix-exponential laws of a few phases, the levels of a QBD, the states of a small CTMC).
A BLAS library (OpenBLAS, MKL) starts as many threads as there are cores for each call, and for a
4 x 4 matrix the threads cost far more than the arithmetic: on a 2-core machine
``exact_mean_response("sita-opt", 2, 0.7, ME.erlang(3, 3))`` takes 4.4 s with the library's
threads and 0.3 s with one, and 1,000 calls of ``scipy.linalg.expm`` on a 4 x 4 matrix 40 ms and
10 ms (``benchmarks/bench_blas_threads.py``; the same values either way).

:func:`limit_blas_threads` limits the BLAS libraries loaded in the process to one thread (or
``n``) for the duration of a call, through threadpoolctl's
:class:`threadpoolctl.ThreadpoolController`, and restores the libraries' own settings
afterwards.  It is a context manager and a decorator; :meth:`symq.core.registry.ModelSpec.run`
(``symq solve``, ``symq sweep``, the models of claims files) and ``symq check`` run under it.

- **Nested calls are cheap**: the outermost call sets the limit, the calls inside it only count
  (no library is asked again), and the last one out restores the settings.  The outermost limit
  holds for the calls inside it.
- **Only BLAS**: the OpenMP runtimes are left alone, so numba's own threads (``prange``, whatever
  its threading layer) keep their number; a BLAS built on OpenMP is still limited as a BLAS.
- **Opt-out**: users with big matrices, for which the BLAS threads pay, set the environment
  variable ``SYMQ_BLAS_THREADS`` to the number of threads (``SYMQ_BLAS_THREADS=8``) or to ``0``
  (or ``off``) to leave the libraries as they are; a call may pass ``threads=`` itself.

The limit belongs to the process (a BLAS library has one setting), so while a call runs under
it, other threads of the process that call BLAS run with the limit too.  The thread that set it
restores it when its outermost call leaves (threadpoolctl lets only that thread change OpenBLAS's
setting); a call of another thread that starts meanwhile changes nothing and runs with whatever
setting holds.

Examples
--------
>>> import numpy as np
>>> from symq.core.threads import limit_blas_threads
>>> with limit_blas_threads():
...     float(np.linalg.det(np.eye(3)))
1.0
>>> @limit_blas_threads()
... def trace_of_square(a):
...     return float(np.trace(a @ a))
>>> trace_of_square(np.eye(2))
2.0
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

from .errors import InvalidParameter

__all__ = ["ENVIRONMENT_VARIABLE", "BlasThreadLimit", "blas_thread_limit", "limit_blas_threads"]

#: The environment variable that sets the number of BLAS threads symq's calls run with
#: (default 1; ``0`` or ``off``: no limit, the libraries' own settings).
ENVIRONMENT_VARIABLE = "SYMQ_BLAS_THREADS"
_OFF = ("0", "off", "none", "no")


def blas_thread_limit(threads: int | None = None) -> int | None:
    """The number of BLAS threads a call of :func:`limit_blas_threads` runs with.

    Parameters
    ----------
    threads : int, optional
        A positive number of threads, or ``0`` for no limit.  By default the environment
        variable ``SYMQ_BLAS_THREADS`` decides (a positive integer, ``0`` or ``off``), and
        without it the limit is 1.

    Returns
    -------
    int or None
        The limit, or ``None`` when the libraries keep their own settings.

    Raises
    ------
    InvalidParameter
        ``threads`` or the environment variable is not a non-negative integer (or ``off``).

    Examples
    --------
    >>> blas_thread_limit(4), blas_thread_limit(0)
    (4, None)
    """
    name: str = "threads"
    value: Any = threads
    if threads is None:
        text = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
        if not text:
            return 1
        if text.lower() in _OFF:
            return None
        name, value = ENVIRONMENT_VARIABLE, text
        try:
            threads = int(text)
        except ValueError:
            threads = -1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise InvalidParameter(name, value, "a non-negative integer (0 or off: no limit)",
                               "the number of BLAS threads symq's small-matrix work runs with")
    return threads or None


class _Limits:
    """The process's one limit: the thread that set it, how many of its calls are inside it,
    and how to restore it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: int | None = None  # the thread that set the limit (threading.get_ident)
        self.depth = 0
        self.pid = os.getpid()
        self.limiter: Any = None
        self.controller: Any = None
        self.modules_seen = -1

    def controller_now(self) -> Any:
        """threadpoolctl's controller of the libraries loaded now; built again (1-2 ms) only
        when a module was imported since the last one (a new extension may load a BLAS)."""
        if self.controller is None or self.modules_seen != len(sys.modules):
            from threadpoolctl import ThreadpoolController

            self.controller = ThreadpoolController()
            self.modules_seen = len(sys.modules)
        return self.controller

    def enter(self, threads: int | None) -> None:
        me = threading.get_ident()
        with self.lock:
            if self.pid != os.getpid():  # a child process forked inside a limit: start afresh
                self.pid, self.owner, self.depth, self.limiter = os.getpid(), None, 0, None
            if self.owner is None:
                limiter = None
                if threads is not None:
                    limiter = self.controller_now().limit(limits=threads, user_api="blas")
                    limiter.__enter__()  # threadpoolctl: this thread controls OpenBLAS now
                self.owner, self.depth, self.limiter = me, 1, limiter
            elif self.owner == me:
                self.depth += 1
            # else: another thread's limit holds; it restores the settings when it leaves

    def leave(self) -> None:
        with self.lock:
            if self.pid != os.getpid() or self.owner != threading.get_ident():
                return
            self.depth -= 1
            if self.depth == 0:
                limiter, self.limiter, self.owner = self.limiter, None, None
                if limiter is not None:
                    limiter.__exit__(None, None, None)  # restores, gives the control back


_LIMITS = _Limits()


class BlasThreadLimit(contextlib.ContextDecorator):
    """A block or a function run with the BLAS libraries limited: made by
    :func:`limit_blas_threads`, reusable and re-entrant."""

    def __init__(self, threads: int | None = None) -> None:
        if threads is not None:
            blas_thread_limit(threads)  # bad input fails here, not at the first call
        self.threads = threads

    def __enter__(self) -> BlasThreadLimit:
        _LIMITS.enter(blas_thread_limit(self.threads))
        return self

    def __exit__(self, *exc: object) -> None:
        _LIMITS.leave()


def limit_blas_threads(threads: int | None = None) -> BlasThreadLimit:
    """Run a block or a function with the BLAS libraries limited to ``threads`` threads.

    Parameters
    ----------
    threads : int, optional
        Number of BLAS threads; ``0`` leaves the libraries as they are.  By default the
        environment variable ``SYMQ_BLAS_THREADS``, else 1 (see :func:`blas_thread_limit`).
        The value is read when the block is entered (or the decorated function called).

    Returns
    -------
    BlasThreadLimit
        A context manager that is also a decorator.

    Raises
    ------
    InvalidParameter
        ``threads`` is not a non-negative integer.

    Notes
    -----
    Inside another call of :func:`limit_blas_threads` (of any thread of the process) nothing
    is asked of the libraries: the outermost limit holds, until the outermost call of the
    thread that set it leaves.  The libraries' settings after that call are those before it.
    OpenMP runtimes, and so numba's threads, are not touched.
    """
    return BlasThreadLimit(threads)
