"""Sphinx configuration of the symq documentation (``sphinx-build -W -b html docs docs/_build/html``).

The pages are MyST Markdown; the API reference is generated from the numpydoc docstrings
(autosummary); the derivation pages include the files of ``derivations/`` that
``symq derive`` writes, so that the site and the repository cannot disagree.
"""

from __future__ import annotations

import importlib.metadata

project = "symq"
author = "symq developers"
copyright = "2026, symq developers"
release = importlib.metadata.version("symq")
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "**/_generated_examples"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# the derivation pages (written by ``symq derive``) go from the title to ###-sections
suppress_warnings = ["myst.header"]

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "ignore-module-all": True}
autodoc_typehints = "none"            # the numpydoc Parameters sections give the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"symq {release}"
html_static_path: list[str] = []


def _derivation_pages() -> None:
    """One page per ``derivations/*.md`` (the files ``symq derive`` writes), included as is."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    out = here / "derivations" / "papers"
    out.mkdir(exist_ok=True)
    for source in sorted((here.parent / "derivations").glob("*.md")):
        page = out / source.name
        text = f"```{{include}} ../../../derivations/{source.name}\n```\n"
        if not page.exists() or page.read_text() != text:
            page.write_text(text)


_derivation_pages()
