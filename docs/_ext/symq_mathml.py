"""A Sphinx math renderer that writes MathML at build time: math that shows offline.

``sphinx.ext.mathjax`` loads MathJax from a CDN when the page is opened, so a reader without
network (a laptop on a plane, a cluster node) sees raw ``\\(\\alpha\\)``.  This renderer converts
each formula once, at build time, with ``latex2mathml`` (the converter symq's HTML report uses);
browsers render MathML natively.  A formula the converter cannot read fails the build (with
``-W``) naming its document and line, rather than shipping raw TeX.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _mathml(self: Any, node: nodes.Element, latex: str, display: bool) -> str:
    from latex2mathml.converter import convert

    try:
        return convert(latex.strip(), display="block" if display else "inline")
    except Exception as exc:  # noqa: BLE001 - the converter's errors are many and untyped
        logger.warning("MathML conversion failed (%s: %s) for: %s", type(exc).__name__, exc,
                       latex, location=node)
        return f'<code class="math-unconverted">{self.encode(latex)}</code>'


def visit_math(self: Any, node: nodes.Element) -> None:
    self.body.append(_mathml(self, node, node.astext(), display=False))
    raise nodes.SkipNode


def visit_math_block(self: Any, node: nodes.Element) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})</span>')
    self.body.append(_mathml(self, node, node.astext(), display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
