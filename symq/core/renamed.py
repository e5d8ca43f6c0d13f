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
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import InvalidParameter

__all__ = ["RenamedKeywordWarning", "former_attribute", "renamed_keys", "renamed_keywords"]

F = TypeVar("F", bound=Callable[..., Any])
V = TypeVar("V")


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


def renamed_keys(values: Mapping[str, V], renamed: Mapping[str, str], owner: str,
                 where: str = "") -> dict[str, V]:
    """``values`` with each key renamed (``renamed``: old name -> new name) under its new name.

    A model parameter or a declaration key renamed in the public API (issue 31: ``sizes=``, the
    job-size law, was ``service=`` or ``law=``) keeps its old name for one release: a value given
    under the old name is moved to the new one with a
    :class:`~symq.core.renamed.RenamedKeywordWarning` naming both.

    Parameters
    ----------
    values : mapping of str
        Values by name as given (command-line text, a claims-file table, parsed values).
    renamed : mapping of str to str
        Old name -> new name.
    owner : str
        What the names belong to, for the warning (``model mm1-ps``).
    where : str
        Key path of ``values`` as typed (``models.q``), prefixed to the name an error gives.

    Returns
    -------
    dict
        The values under the current names, in the order given.

    Raises
    ------
    InvalidParameter
        Naming the old name, when both the old and the new name are given.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     renamed_keys({"service": "exp", "m": 2}, {"service": "sizes"}, "model toy")
    {'sizes': 'exp', 'm': 2}
    >>> print(caught[0].message)
    service= is renamed sizes= (model toy); service= will be removed in the next release
    """
    if not any(old in values for old in renamed):
        return dict(values)
    out: dict[str, V] = {}
    for name, value in values.items():
        new = renamed.get(name)
        if new is None:
            out[name] = value
            continue
        key = f"{where}.{name}" if where else name
        if new in values:
            raise InvalidParameter(key, value, f"omitted when {new} is given",
                                   f"{name} is the former name of {new} in {owner}")
        warnings.warn(f"{name}= is renamed {new}= ({owner}); {name}= will be removed in the "
                      "next release", RenamedKeywordWarning, stacklevel=3)
        out[new] = value
    return out


def former_attribute(old: str, new: str,
                     convert: Callable[[Any], Any] = lambda value: value) -> property:
    """A read-only property ``old`` of a result that warns and reads the field ``new``.

    For a field renamed by issue 31 (``timings`` -> ``seconds``, ``mean_service`` ->
    ``mean_size``, ``service`` -> ``sizes``), kept for one release.  ``convert`` turns the new
    value into the old shape (``seconds`` -> ``{"total": seconds}``).

    Examples
    --------
    >>> import warnings
    >>> from symq.meanfield import solve_supermarket
    >>> r = solve_supermarket(1, 0.5)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r.timings == {"total": r.seconds}, caught[0].category.__name__
    (True, 'RenamedKeywordWarning')
    """

    def read(self: Any) -> Any:
        warnings.warn(f"{type(self).__name__}.{old} is now .{new}; {old} is read for one "
                      "release", RenamedKeywordWarning, stacklevel=2)
        return convert(getattr(self, new))

    return property(read, doc=f"Former name of :attr:`{new}` (warns).")
