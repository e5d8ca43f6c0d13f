"""The claims of each source paper, registered for ``symq check`` and ``symq derive``.

Every submodule of this package is imported on load and registers one paper with
:func:`symq.core.registry.register_paper`; a built-in paper is a module here, with no edit of the
CLI.  A paper of your own needs no edit of symq at all: write a claims file and run
``symq check FILE`` (:mod:`symq.core.claimsfile`), or publish a package with a ``symq.plugins``
entry point (:mod:`symq.core.registry`).
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
