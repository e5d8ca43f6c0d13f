"""The claims of each source paper, registered for ``symq check`` and ``symq derive``.

Every submodule of this package is imported on load and registers one paper with
:func:`symq.core.registry.register_paper`; adding a paper means adding a module here, with
no edit of the CLI.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
