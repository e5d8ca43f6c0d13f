"""The HTML verdict report: self-contained, escaped, every formula and figure kept.

The page is parsed with the standard library's HTML parser (an independent reader of what was
written): no script and no resource outside the file, every figure embedded byte for byte,
every display formula of the derivation converted to a MathML element, and text from a claims
file (which a user typed) escaped, never markup.
"""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

from symq.core.claims import Evidence, Status, Verdict
from symq.core.derivation import Derivation
from symq.core.printing import markdown_to_html, math_to_mathml
from symq.core.report_html import write_html_report

PNG = b"\x89PNG\r\n\x1a\n"


class _Page(HTMLParser):
    """Tags, attributes and the open-tag stack (for balance) of a page."""

    VOID = {"meta", "img", "br", "hr", "link", "input", "mprescripts", "none", "mspace"}

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.stack: list[str] = []
        self.unbalanced: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.unbalanced.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _verdict(claim: str, status: Status, expected: Status = Status.HOLDS) -> Verdict:
    return Verdict("toy", claim, status, 0.25, (Evidence.NUMERIC,), "detail text", 0.01,
                   worst_point={"lam": 0.9}, tolerance=1e-6, n_points=3, expected=expected,
                   claimed_value=1.5, reference_value=1.25)


def test_rows_are_highlighted_by_outcome_and_user_text_is_escaped(tmp_path):
    hostile = "<script>alert(1)</script> & <img src=x>"
    verdicts = [_verdict("ok", Status.HOLDS), _verdict(hostile, Status.FAILS),
                _verdict("refuted", Status.FAILS, expected=Status.FAILS),
                _verdict("unsure", Status.INCONCLUSIVE)]
    page_path = write_html_report(tmp_path, verdicts, {}, {}, {"toy": "A <b>toy</b> paper"})
    page = _parse(page_path)
    assert not page.stack and not page.unbalanced
    assert not [t for t, _ in page.tags if t == "script"]
    assert not [a for t, a in page.tags if t == "img"]        # the hostile name stayed text
    rows = [a.get("class") for t, a in page.tags if t == "tr" and a.get("class")]
    assert rows == ["holds", "fails", "refuted", "inconclusive"]
    text = "".join(page.text)
    assert hostile in text and "A <b>toy</b> paper" in text   # shown as typed, not as markup
    assert "lam=0.9" in text and "claimed 1.5, reference 1.25" in text


def test_formulas_become_mathml_and_unreadable_tex_is_kept_verbatim():
    fraction = math_to_mathml(r"\frac{\lambda}{1 - \rho}", display=True)
    assert fraction.startswith("<math") and "<mfrac>" in fraction
    assert "&#x003BB;" in fraction or "\u03bb" in fraction
    broken = math_to_mathml(r"\frac{", display=False)
    assert broken == r'<code class="tex">\frac{</code>'
    html_text = markdown_to_html("# Title\n\nProse with $x_j$, *emphasis* and `code` < 1.\n\n"
                                 "$$\na^{2}\n$$\n", shift=2)
    assert html_text.startswith("<h3>Title</h3>")
    assert "<em>emphasis</em>" in html_text and "<code>code</code>" in html_text
    assert "&lt; 1." in html_text and html_text.count("<math") == 2


def test_a_paper_report_embeds_its_figures_and_every_derivation_formula(tmp_path):
    import sympy as sp

    lam, mu = sp.symbols("lambda mu", positive=True)
    derivation = Derivation("M/M/1", source="Kleinrock (1975), Section 3.2")
    derivation.add("mean sojourn time", sp.Eq(sp.Symbol("ET"), 1 / (mu - lam)),
                   "Little's law on $E[N] = \\rho/(1-\\rho)$.")
    derivation.add("utilisation", [sp.Eq(sp.Symbol("rho"), lam / mu), lam < mu])
    figure = tmp_path / "toy-figure.png"
    figure.write_bytes(PNG + b"not really an image, but bytes to carry")
    page_path = write_html_report(tmp_path, [_verdict("ok", Status.HOLDS)],
                                  {"toy": derivation}, {"toy": [figure]})
    page = _parse(page_path)
    images = [a["src"] for t, a in page.tags if t == "img"]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,")
    assert base64.b64decode(images[0].split(",", 1)[1]) == figure.read_bytes()
    blocks = [a for t, a in page.tags if t == "math" and a.get("display") == "block"]
    assert len(blocks) == len(re.findall(r"(?m)^\$\$$", derivation.to_markdown())) // 2 == 3
    links = [a.get("href", "") for t, a in page.tags] + [a.get("src", "") for t, a in page.tags]
    assert all(not link or link.startswith(("#", "data:")) for link in links)
