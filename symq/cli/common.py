"""What the ``symq`` subcommands share: exit statuses, output checks, ``key=value`` parsing."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import InvalidParameter, OutputError

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_UNEXPECTED",
    "check_writable_directory",
    "check_writable_file",
    "one_line",
    "split_assignments",
]

EXIT_OK, EXIT_INTERNAL = 0, 1
#: Exit status of ``symq check`` when a verdict contradicts its claim's ``expected`` verdict (a
#: claim expected to hold fails, or one expected to fail holds) and nothing worse happened (an
#: internal error: 1; a claim that is bad input: 2).  Inconclusive verdicts contradict nothing:
#: they leave the status 0.
EXIT_UNEXPECTED = 4


def check_writable_directory(option: str, directory: Path) -> None:
    """Create ``directory`` if needed and prove it writable, before any work starts."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise OutputError(f"{option} {str(directory)!r} cannot be written: "
                          f"{exc.strerror or exc}") from None


def check_writable_file(option: str, path: Path) -> None:
    """The folder of ``path`` must exist and be writable, and ``path`` not be a folder."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"{option} {str(path)!r} is a folder, not a file")
    if not parent.is_dir():
        raise OutputError(f"{option} {str(path)!r} cannot be written: the folder "
                          f"{str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"{option} {str(path)!r} cannot be written: permission denied")


def split_assignments(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidParameter(item, item, "written as key=value", "malformed argument")
        if not value:
            raise InvalidParameter(key, value, "written as key=value with a value",
                                   "empty value")
        if key in out:
            raise InvalidParameter(key, value, "given once", "repeated parameter")
        out[key] = value
    return out


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line, at most 2000 characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:1990] + " ..."
