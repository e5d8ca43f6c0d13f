"""The documentation site builds with warnings as errors and holds what the README promises.

``sphinx-build -W -b html docs OUT`` (the README's command) must succeed: a malformed docstring,
a broken cross-reference or a derivation page that does not render fails the suite.  The pages
are then checked against their sources: every ``derivations/*.md`` written by ``symq derive``
has a page with its text, and the API reference documents the public functions.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra (sphinx, numpydoc, myst-parser) is "
                                     "part of the test extra; without it there is no site")
pytest.importorskip("numpydoc", reason="part of the test extra")
pytest.importorskip("myst_nb", reason="part of the test extra (it executes the notebooks)")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    # two reader processes: the build is a third of the suite's longest tests
    command = [sys.executable, "-m", "sphinx", "-W", "-q", "-j", "2", "-b", "html",
               str(ROOT / "docs"), str(out)]
    env = {**os.environ, "SYMQ_DOCS_QUICK": "1"}   # the papers' quick figures in the gallery
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _text(page: Path) -> str:
    """The visible text of an HTML page (tags dropped, entities decoded, spaces collapsed)."""
    raw = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
    return " ".join(html.unescape(raw).split())


def test_the_site_builds_without_warnings_and_links_its_parts(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    for page in ("getting-started.html", "claims.html", "notebooks/index.html",
                 "derivations/index.html", "api/index.html"):
        assert (site / page).exists() and page in index, page


def test_every_derivation_has_its_page(site):
    sources = sorted((ROOT / "derivations").glob("*.md"))
    assert sources
    for source in sources:
        page = site / "derivations" / "papers" / (source.stem + ".html")
        title = next(line for line in source.read_text().splitlines() if line.startswith("# "))
        assert title[2:].strip() in _text(page), source.name


def test_the_api_reference_documents_public_functions(site):
    page = site / "api" / "generated" / "symq.dispatch.vi.accuracy.html"
    text = _text(page)
    assert "solve_accurate" in text and "error_estimate" in text
    assert "Hyytiä" in text                         # the docstrings' citations are rendered
    # the numpydoc sections become definition lists, not raw underlined text
    assert "Parameters" in text and "----------" not in text


def test_the_notebooks_ran_and_their_numbers_agree_with_independent_values(site):
    """The notebooks are stored without outputs: what the pages show was computed by this build.
    Each notebook prints a value beside an independent one; the test reads both off the page."""
    me = _text(site / "notebooks" / "me-fit-and-queue.html")
    assert "Traceback" not in me and "NEGATIVE" in me and "NONNEGATIVE" in me
    fit, pk = re.search(r"E\[W\] from the fit ([0-9.]+), Pollaczek-Khinchine ([0-9.]+)",
                        me).groups()
    assert abs(float(fit) - float(pk)) < 1e-9          # the fit matches m1, m2: same mean wait
    for fitted, mean, half in re.findall(r"P\(W > [0-9.]+\): fit ([0-9.]+), simulation "
                                         r"([0-9.]+) ± ([0-9.]+)", me):
        assert abs(float(fitted) - float(mean)) <= float(half), (fitted, mean, half)  # 99% CI
    lb = _text(site / "notebooks" / "load-balancing.html")
    assert "Traceback" not in lb
    solved = re.search(r"u_k, k = 1..6: \[([^\]]+)\]", lb).group(1).split()
    closed = re.search(r"closed form : \[([^\]]+)\]", lb).group(1).split()
    assert [float(x) for x in solved] == pytest.approx([float(x) for x in closed], abs=1e-8)
    assert len(re.findall(r"lam 0\.\d+: mean field", lb)) == 5
    for page in ("me-fit-and-queue.html", "load-balancing.html"):     # the figure was drawn
        assert "<img" in (site / "notebooks" / page).read_text(encoding="utf-8"), page


def test_the_user_guide_has_a_page_per_domain_and_the_dask_page(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "guide/index.html" in index and "dask.html" in index
    for name in ("me", "attained", "routing", "window", "supermarket", "nonlinear", "dispatch"):
        page = site / "guide" / f"{name}.html"
        raw = page.read_text(encoding="utf-8")
        assert 'class="math' in raw and "derivations/papers/" in raw, name
        assert "api/generated/symq." in raw and "symq check" in _text(page), name
        # every API cross-reference resolves to a link (an unresolved one is bare code)
        assert raw.count('<code class="xref py') == len(re.findall(
            r'<a class="reference internal"[^>]*>\s*<code class="xref py', raw)), name
    dask = _text(site / "dask.html")
    assert "--scheduler" in dask and "LocalCluster" in dask


def test_the_gallery_shows_the_main_figure_of_every_paper(site):
    from symq.core import registry

    page = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]+src="([^"]+\.png)"', page)
    built_in = [k for k, s in registry.papers().items() if s.source == registry.BUILT_IN]
    assert len(built_in) >= 7
    for key in built_in:                   # every paper draws its figure (the report's too)
        assert registry.get_paper(key).figures is not None, key
        assert f"symq check {key} --report" in _text(site / "gallery" / "index.html"), key
        assert any(Path(src).name.startswith(f"{key}-") for src in images), key
    for src in images:                     # each is a real PNG copied into the site
        data = (site / "gallery" / src).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, src


class _VisibleProse(HTMLParser):
    """The text a reader sees as prose: code, signatures, scripts and MathML left out."""

    SKIP = {"code", "pre", "script", "style", "math", "textarea"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        self.stack.append(tag in self.SKIP or "pre" in classes or "sig" in classes
                          or any(c.startswith("sig-") for c in classes))

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not any(self.stack):
            self.parts.append(data)


RAW_MARKUP = [(re.compile(r"\\\(|\\\)|\\\[|\\\]"), "a TeX delimiter"),
              (re.compile(r"\$\$"), "a TeX display delimiter"),
              (re.compile(r"\\(?:frac|alpha|lambda|rho|mathrm|sum|infty|sqrt)\b"),
               "a TeX command"),
              (re.compile(r"\|\s*-{3,}\s*\|"), "a Markdown table rule")]


def test_math_and_tables_render_without_network(site):
    """No page shows raw TeX or Markdown table pipes as prose: formulas are MathML written at
    build time (no MathJax from a CDN), notebook outputs rendered as MyST."""
    found = []
    for page in sorted(site.rglob("*.html")):
        parser = _VisibleProse()
        parser.feed(page.read_text(encoding="utf-8"))
        text = "".join(parser.parts)
        for pattern, what in RAW_MARKUP:
            match = pattern.search(text)
            if match:
                where = text[max(0, match.start() - 40):match.end() + 40].replace("\n", " ")
                found.append(f"{page.relative_to(site)}: {what}: ...{where}...")
    assert not found, "\n".join(found[:20])
    guide = (site / "guide" / "transforms.html").read_text(encoding="utf-8")
    assert guide.count("<math") > 20
    assert not re.search(r"<script[^>]*(mathjax|https?:)", guide, re.IGNORECASE)
