"""Claims files: check a formula from your own paper with ``symq check FILE``.

A claims file declares a paper and claims about it, in TOML (nothing in it runs as code) or in
Python.  Each claim states a relation between formulas and references to symq models (built in,
from a plugin, or declared in the file), a parameter region and a tolerance; ``symq check FILE``
checks it with the same verdicts as the built-in papers.  ``symq new-claims NAME`` writes a
starting file.

Modules: :mod:`~.loader` (reading files), :mod:`~.claim` (a claim's keys), :mod:`~.quantities`
(formulas and references), :mod:`~.region` (parameter regions), :mod:`~.compare` (tolerances,
inequalities, confidence intervals), :mod:`~.explain` (counterexamples and holding regions),
:mod:`~.declarations` (declared parameters and models), :mod:`~.template`.
"""

from ..tolerance import Tolerance
from .claim import FileClaim, build_claim
from .loader import (
                     ClaimsFileError,
                     LoadedFile,
                     claims_files,
                     is_claims_path,
                     is_explicit_path,
                     load_claims_file,
                     python_claims_files,
                     shadowed_path_note,
)
from .region import Region, parse_region
from .template import new_claims_text

__all__ = [
                     "ClaimsFileError",
                     "FileClaim",
                     "LoadedFile",
                     "Region",
                     "Tolerance",
                     "build_claim",
                     "claims_files",
                     "is_claims_path",
                     "is_explicit_path",
                     "load_claims_file",
                     "new_claims_text",
                     "parse_region",
                     "python_claims_files",
                     "shadowed_path_note",
]
