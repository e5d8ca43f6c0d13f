"""Sphinx configuration of the symq documentation.

Built with ``sphinx-build -W -b html docs docs/_build/html``.

The pages are MyST Markdown, the tutorials Jupyter notebooks executed by myst-nb at every build;
the API reference is generated from the numpydoc docstrings
(autosummary); the derivation pages include the files of ``derivations/`` that
``symq derive`` writes, so that the site and the repository cannot disagree.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "symq"
author = "symq developers"
copyright = "2026, symq developers"
release = importlib.metadata.version("symq")
version = release

extensions = [
    "myst_nb",                        # MyST Markdown pages and the notebooks, executed
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "symq_mathml",                    # formulas as MathML at build time (docs/_ext/):
]                                     # they render offline, unlike MathJax from a CDN
html_math_renderer = "mathml"
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**/_generated_examples", "**/.ipynb_checkpoints"]
# the tutorial notebooks are stored without outputs and executed at every build: a notebook
# whose cell raises fails the build (and the test suite, which builds the site)
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True
# a notebook's Markdown outputs (symq's results, verdicts and certificates display as Markdown
# tables with formulas) are rendered as MyST, not shown as raw CommonMark pipes
nb_render_markdown_format = "myst"
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


def _compile_numpydoc_template_once() -> None:
    """numpydoc 1.x builds a Jinja environment and compiles its docstring template anew for
    every object (about 60% of this build's time, 17 of 29 s); compile it once per builder.

    The wrapper does what ``numpydoc.docscrape_sphinx.get_doc_object`` does, with the template
    cached; if numpydoc's internals change, the original function is kept (a slower build).
    """
    from numpydoc import docscrape_sphinx as ds
    from numpydoc import numpydoc as nd

    needed = ("get_doc_object_orig", "SphinxClassDoc", "SphinxFunctionDoc", "SphinxObjDoc",
              "BuiltinTemplateLoader", "FileSystemLoader", "SandboxedEnvironment")
    if not all(hasattr(ds, name) for name in needed) or not hasattr(nd, "get_doc_object"):
        return
    import os

    templates: dict[int, object] = {}

    def get_doc_object(obj, what=None, doc=None, config=None, builder=None):
        config = {} if config is None else config
        key = id(builder)
        if key not in templates:
            dirs = [os.path.join(os.path.dirname(ds.__file__), "templates")]
            if builder is not None:
                loader = ds.BuiltinTemplateLoader()
                loader.init(builder, dirs=dirs)
            else:
                loader = ds.FileSystemLoader(dirs)
            env = ds.SandboxedEnvironment(loader=loader)
            templates[key] = env.get_template("numpydoc_docstring.rst")
        config["template"] = templates[key]
        return ds.get_doc_object_orig(obj, what=what, doc=doc, config=config,
                                      class_doc=ds.SphinxClassDoc,
                                      func_doc=ds.SphinxFunctionDoc, obj_doc=ds.SphinxObjDoc)

    ds.get_doc_object = nd.get_doc_object = get_doc_object


def setup(app) -> None:
    """Run after the extensions' own ``setup`` (numpydoc's rebinds ``get_doc_object``)."""
    _compile_numpydoc_template_once()


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


def _gallery() -> None:
    """The gallery page: the main figure of every paper, drawn now by the paper's ``figures``
    function (the one ``symq check --report`` uses), so that a figure the code can no longer
    draw fails the build."""
    import inspect
    import os
    from pathlib import Path

    from symq.core import registry

    # the test suite builds the site with SYMQ_DOCS_QUICK=1: the papers' quick figures (the
    # same code on fewer points, as their claims' quick forms); the README's build draws all
    quick = os.environ.get("SYMQ_DOCS_QUICK") == "1"

    here = Path(__file__).resolve().parent
    out = here / "gallery"
    (out / "figures").mkdir(parents=True, exist_ok=True)
    lines = ["# Gallery", "",
             "The main figure of each paper, drawn when this site is built by the same function "
             "that puts it into the report of `symq check KEY --report DIR`.  Each section "
             "names that function and the plot functions it calls; every `plot_*` function "
             "has a `*_data` twin that returns the arrays.", ""]
    for key in sorted(registry.papers()):
        spec = registry.get_paper(key)
        if spec.figures is None:
            continue
        module = inspect.getmodule(spec.figures).__name__
        lines += [f"## {spec.title}", "", f"*{spec.citation}*", "",
                  f"Drawn by `{module}.figures(directory)`; in the report of "
                  f"`symq check {key} --report DIR`.", ""]
        options = {"quick": True} if quick and "quick" in inspect.signature(
            spec.figures).parameters else {}
        for path in spec.figures(out / "figures", **options):
            name = Path(path).name
            lines += [f"```{{image}} figures/{name}", f":alt: {key}: {Path(path).stem}",
                      ":width: 90%", "```", ""]
    text = "\n".join(lines)
    page = out / "index.md"
    if not page.exists() or page.read_text() != text:
        page.write_text(text)


_derivation_pages()
_gallery()
