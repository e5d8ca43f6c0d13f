"""The documentation site builds with warnings as errors and holds what the README promises.

``sphinx-build -W -b html docs OUT`` (the README's command) must succeed: a malformed docstring,
a broken cross-reference or a derivation page that does not render fails the suite.  The pages
are then checked against their sources: every ``derivations/*.md`` written by ``symq derive``
has a page with its text, and the API reference documents the public functions.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra (sphinx, numpydoc, myst-parser) is "
                                     "part of the test extra; without it there is no site")
pytest.importorskip("numpydoc", reason="part of the test extra")
pytest.importorskip("myst_parser", reason="part of the test extra")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    # two reader processes: the build is a third of the suite's longest tests
    command = [sys.executable, "-m", "sphinx", "-W", "-q", "-j", "2", "-b", "html",
               str(ROOT / "docs"), str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _text(page: Path) -> str:
    """The visible text of an HTML page (tags dropped, entities decoded, spaces collapsed)."""
    raw = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
    return " ".join(html.unescape(raw).split())


def test_the_site_builds_without_warnings_and_links_its_parts(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    for page in ("getting-started.html", "claims.html", "derivations/index.html",
                 "api/index.html"):
        assert (site / page).exists() and page in index, page


def test_every_derivation_has_its_page(site):
    sources = sorted((ROOT / "derivations").glob("*.md"))
    assert sources
    for source in sources:
        page = site / "derivations" / "papers" / (source.stem + ".html")
        title = next(line for line in source.read_text().splitlines() if line.startswith("# "))
        assert title[2:].strip() in _text(page), source.name


def test_the_api_reference_documents_public_functions(site):
    page = site / "api" / "generated" / "symq.dispatch.accuracy.html"
    text = _text(page)
    assert "solve_accurate" in text and "error_estimate" in text
    assert "Hyytiä" in text                         # the docstrings' citations are rendered
    # the numpydoc sections become definition lists, not raw underlined text
    assert "Parameters" in text and "----------" not in text
