"""Memory guards: estimate what an allocation needs before making it.

Solvers whose arrays grow with a parameter (grid steps, truncation levels, age layers, phases)
call :func:`require_memory` with their own size estimate before allocating.  What does not fit
in the budget is refused with a :class:`~symq.core.errors.ResourceLimit` that names the parameter
as the user typed it, its value and the largest (or smallest) value that fits.

The budget is half the machine's memory (or of its container's limit), or the number of bytes
in the environment variable ``SYMQ_MEMORY_LIMIT`` when set (read at each call, so a job queue can
lower it per process).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from .errors import ResourceLimit

__all__ = ["memory_budget", "require_memory", "largest_fitting", "format_bytes"]

#: The budget used when the operating system does not say how much memory is available.
_FALLBACK_BYTES = 4 * 2**30


def _physical_bytes() -> int:
    """The machine's memory, or the container's limit when lower (cgroup v2 or v1)."""
    total = _FALLBACK_BYTES * 2
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
                    break
    except OSError:
        try:
            total = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < total:
            total = int(text)
    return total


def memory_budget() -> int:
    """Bytes one symq allocation may take: ``SYMQ_MEMORY_LIMIT`` or half the machine's memory.

    Half the installed memory (or of the container's limit), not of what is free at the moment:
    the same input gets the same answer however busy the machine is.
    """
    text = os.environ.get("SYMQ_MEMORY_LIMIT", "").strip()
    if text:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if math.isfinite(value) and value > 0:
            return int(value)
    return _physical_bytes() // 2


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``; ``inf`` -> ``'an unbounded amount'``."""
    if not math.isfinite(n):
        return "an unbounded amount"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def largest_fitting(bytes_for: Callable[[float], float], lo: float, hi: float, budget: int,
                    *, integer: bool = False, decreasing: bool = False) -> float:
    """The value in [lo, hi] nearest ``hi`` whose allocation ``bytes_for(value)`` fits ``budget``.

    With ``decreasing=True`` the size falls as the value grows (a grid step): the answer is the
    smallest value that fits.  Bisection in log scale for positive reals, exact for integers.
    Returns ``lo`` (or ``hi`` when decreasing), the end nearest to fitting, if nothing in the
    range fits.
    """
    def fits(v: float) -> bool:
        return bytes_for(v) <= budget

    # invariant: ``good`` fits and ``bad`` does not; bisect (in log scale for positive reals)
    good, bad = (hi, lo) if decreasing else (lo, hi)
    if fits(bad):
        return bad
    if not fits(good):
        return good
    for _ in range(200):
        if integer and abs(bad - good) <= 1:
            break
        if not integer and max(good, bad) <= min(good, bad) * (1 + 1e-3):
            break
        if integer:
            middle = (good + bad) // 2
        else:
            middle = math.sqrt(good * bad) if good > 0 and bad > 0 else (good + bad) / 2
        if fits(middle):
            good = middle
        else:
            bad = middle
    return good


def require_memory(name: str, value: object, nbytes: float, *, what: str = "",
                   limit: str | Callable[[int], str] = "") -> None:
    """Raise :class:`ResourceLimit` if an allocation of ``nbytes`` does not fit the budget.

    Parameters
    ----------
    name : str
        The parameter that drives the size, as the user typed it (``"delta"``, ``"B"``).
    value : object
        Its value.
    nbytes : float
        The estimated size in bytes (``inf`` or ``nan`` never fits).
    what : str
        What would be allocated, e.g. ``"1.8e+12 grid states"``.
    limit : str or callable
        The value that fits, e.g. ``"at least 0.004"``, or a function of the budget in bytes
        returning that text (called only when the allocation is refused).

    Examples
    --------
    >>> require_memory("n", 10, 80.0)
    >>> require_memory("n", 10**15, 8e15, what="1e15 floats", limit="at most 1e9")
    Traceback (most recent call last):
    ...
    symq.core.errors.ResourceLimit: parameter n=1000000000000000 must be at most 1e9
    (it needs 1e15 floats (7.11 PiB) of a budget of ...)
    """
    budget = memory_budget()
    if math.isfinite(nbytes) and nbytes <= budget:
        return
    needed = f"{what} ({format_bytes(nbytes)})" if what else format_bytes(nbytes)
    text = limit(budget) if callable(limit) else limit
    if not text:
        text = f"small enough to fit in {format_bytes(budget)}"
    raise ResourceLimit(name, value, f"{needed} of a budget of {format_bytes(budget)}", text)
