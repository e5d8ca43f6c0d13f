"""Keyword parameters renamed in the public API: the old name kept one release, with a warning.

Issue 31 gave the job-size law one name across symq, ``sizes=`` (before: ``service=`` in
:mod:`symq.meanfield` and :mod:`symq.me`, ``law=`` in :mod:`symq.routing`).  A function whose
keyword was renamed is decorated with :func:`renamed_keywords`; a call with the old name still works
for one release and emits a :class:`RenamedKeywordWarning` that names the new keyword, so a user's
script keeps running and says what to change.

Examples
--------
>>> import warnings
>>> @renamed_keywords(service="sizes")
... def mean_size(sizes: float = 1.0) -> float:
...     return sizes
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     mean_size(service=2.0)
2.0
>>> print(caught[0].message)
mean_size(service=...) is renamed mean_size(sizes=...); service= will be removed in the next release
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import InvalidParameter

__all__ = ["RenamedKeywordWarning", "renamed_keywords"]

F = TypeVar("F", bound=Callable[..., Any])


class RenamedKeywordWarning(FutureWarning):
    """A keyword argument was passed under the name it had before it was renamed.

    A :class:`FutureWarning` (shown to users by default): the old name will be removed in the
    next release.
    """


def renamed_keywords(**renames: str) -> Callable[[F], F]:
    """Accept each old keyword ``old=`` of ``renames`` (``old="new"``) as ``new=``, with a warning.

    Parameters
    ----------
    **renames : str
        Old keyword name -> new keyword name of the decorated function.

    Returns
    -------
    callable
        A decorator.  The decorated function keeps its signature (``inspect.signature`` shows the
        new names only); a call that passes ``old=`` gets it as ``new=`` and a
        :class:`RenamedKeywordWarning`.

    Raises
    ------
    InvalidParameter
        At call time, naming the old keyword, when both the old and the new name are given.
    """

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                value = kwargs.pop(old)
                if new in kwargs:
                    raise InvalidParameter(old, value, f"omitted when {new}= is given",
                                           f"{old}= is the former name of {new}=")
                warnings.warn(f"{function.__name__}({old}=...) is renamed "
                              f"{function.__name__}({new}=...); {old}= will be removed in the "
                              "next release", RenamedKeywordWarning, stacklevel=2)
                kwargs[new] = value
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
