"""The ME tests import their shared independent references from ``me_references``.

The suite runs with ``--import-mode=importlib``, which does not put test directories on
``sys.path``; this directory is added so that ``import me_references`` works in its tests.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
