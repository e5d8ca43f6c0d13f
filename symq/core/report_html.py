"""A self-contained HTML verdict report (``symq check --report DIR`` writes ``index.html``).

One file that opens in any current browser without a network: the styles are inline, the
figures are embedded as base64 PNG, and every formula is converted from the LaTeX that
:func:`sympy.latex` wrote to MathML (by ``latex2mathml``), which browsers render natively, so
no script is loaded.  The verdicts are a table per paper with failures that symq did not expect
in red, declared refutations (statements symq shows to be false, as it expects) in amber and
inconclusive verdicts in grey; each claim opens to its evidence: what was compared, the worst
point with both values there, the tolerance, the counterexample and where the claim holds.

The derivations are rendered from :meth:`symq.core.derivation.Derivation.to_markdown`, whose
Markdown is a small fixed subset (headings, paragraphs, ``$$`` blocks, inline ``$...$``,
emphasis and code), converted here block by block.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import platform
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .claims import Status, Verdict, pair_text, points_table
from .derivation import Derivation
from .printing import markdown_to_html, math_to_mathml

__all__ = ["write_html_report", "verdict_row_class"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 72rem; padding: 1rem 2rem; color: #1d1d1f; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; } .meta { color: #555; margin-top: 0; }
nav ul { columns: 2; } .counts span { margin-right: 1.2rem; font-weight: 600; }
table.verdicts { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1.5rem; }
table.verdicts th, table.verdicts td { border-bottom: 1px solid #ddd; padding: 0.3rem 0.5rem;
       text-align: left; vertical-align: top; font-size: 0.92rem; }
table.verdicts th { background: #f3f3f5; }
tr.holds td.status { color: #1a7f37; }
tr.fails { background: #ffe5e5; } tr.fails td.status { color: #b00020; font-weight: 700; }
tr.refuted { background: #fff4d6; } tr.refuted td.status { color: #8a5a00; }
tr.inconclusive { background: #eeeeee; } tr.inconclusive td.status { color: #555; }
tr.unexpected { background: #ffe5e5; } tr.unexpected td.status { color: #b00020; }
details summary { cursor: pointer; } dl.evidence { display: grid; margin: 0.3rem 0;
       grid-template-columns: max-content 1fr; gap: 0.15rem 0.8rem; font-size: 0.88rem; }
dl.evidence dt { color: #555; } dl.evidence dd { margin: 0; overflow-wrap: anywhere; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
section.derivation { border-left: 3px solid #d0d7de; padding-left: 1rem; margin: 1rem 0; }
div.math { margin: 0.6rem 0; overflow-x: auto; overflow-y: hidden; padding: 0.1rem 0; }
math { font-family: "Latin Modern Math", "STIX Two Math", math; }
code { background: #f3f3f5; padding: 0 0.2rem; } .tex { color: #8a5a00; }
"""

_LEGEND = {"holds": "holds", "fails": "fails (not expected)",
           "refuted": "fails, as symq expects (a declared refutation)",
           "inconclusive": "inconclusive", "unexpected": "holds, but symq expected it to fail"}


def verdict_row_class(verdict: Verdict) -> str:
    """The highlight of a verdict: ``holds``, ``fails`` (a failure symq did not expect),
    ``refuted`` (a failure it expects), ``inconclusive``, or ``unexpected`` (a claim that
    holds although symq declared it false)."""
    if verdict.status is Status.INCONCLUSIVE:
        return "inconclusive"
    if verdict.status is Status.FAILS:
        return "refuted" if verdict.expected is Status.FAILS else "fails"
    return "unexpected" if verdict.expected is Status.FAILS else "holds"


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    text = str(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _evidence(v: Verdict) -> str:
    rows: list[tuple[str, str]] = []
    if v.source:
        rows.append(("source", v.source))
    if v.compared:
        rows.append(("compared", v.compared))
    rows.append(("evidence", ", ".join(str(e) for e in v.evidence)
                 + f"; {v.n_points} points"
                 + (f", {v.n_inconclusive} inconclusive" if v.n_inconclusive else "")))
    if v.max_error is not None:
        units = f" {v.units}" if v.units else ""
        tol = "" if v.tolerance is None else f" (tolerance {v.tolerance:.3g}{units})"
        rows.append(("max error", f"{v.max_error:.3g}{units}{tol}"))
    if v.worst_point:
        rows.append(("worst point", _value(v.worst_point)))
    if v.claimed_value is not None or v.reference_value is not None:
        first, second = v.side_names
        a, b = pair_text(v.claimed_value, v.reference_value)
        rows.append(("values there", f"{first} {a}, {second} {b}"))
    if v.counterexample:
        rows.append(("counterexample", _value(v.counterexample)))
    if v.holds_region:
        rows.append(("holds", v.holds_region))
    rows.append(("detail", v.detail))
    items = "".join(f"<dt>{html.escape(k)}</dt><dd>"
                    + (_with_math(t) if k == "compared" else html.escape(t)) + "</dd>"
                    for k, t in rows)
    return f'<dl class="evidence">{items}</dl>' + _points(v)


_MATH = re.compile(r"\$([^$\n]+)\$")


def _with_math(text: str) -> str:
    """Escaped text whose ``$...$`` formulas (a claim written in LaTeX) are MathML."""
    out, last = [], 0
    for match in _MATH.finditer(text):
        out += [html.escape(text[last:match.start()]), math_to_mathml(match.group(1), False)]
        last = match.end()
    return "".join(out) + html.escape(text[last:])


#: Most points of a verdict listed in the report.
MAX_POINT_ROWS = 200


def _points(v: Verdict) -> str:
    """The per-point table: point, both sides, error, the verdict there (and why undecided)."""
    if not v.points:
        return ""
    lines = points_table(v.points[:MAX_POINT_ROWS], v.tolerance, v.side_names)
    more = (f"\n... {len(v.points) - MAX_POINT_ROWS} more points (symq check --json lists "
            "them all)" if len(v.points) > MAX_POINT_ROWS else "")
    return f'<pre class="points">{html.escape(chr(10).join(lines) + more)}</pre>'


def _verdict_table(verdicts: Sequence[Verdict]) -> str:
    head = ("<tr><th>claim</th><th>status</th><th>max error</th><th>evidence</th>"
            "<th>seconds</th></tr>")
    rows = []
    for v in verdicts:
        kind = verdict_row_class(v)
        error = "" if v.max_error is None else f"{v.max_error:.3g}"
        if v.units and error:
            error += " " + v.units.split(" of ")[0]
        rows.append(
            f'<tr class="{kind}"><td><details><summary>{html.escape(v.claim)}</summary>'
            f"{_evidence(v)}</details></td><td class=\"status\">{html.escape(_LEGEND[kind])}"
            f"</td><td>{error}</td><td>{html.escape(', '.join(map(str, v.evidence)))}</td>"
            f"<td>{v.seconds:.2f}</td></tr>")
    return f'<table class="verdicts">{head}{"".join(rows)}</table>'


def _figure(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    name = html.escape(Path(path).stem)
    return (f'<figure><img alt="{name}" src="data:image/png;base64,{data}">'
            f"<figcaption>{name}</figcaption></figure>")


def _anchor(key: str) -> str:
    return "paper-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


def write_html_report(directory: str | Path, verdicts: Sequence[Verdict],
                      derivations: Mapping[str, Derivation],
                      figures: Mapping[str, Sequence[Path]],
                      titles: Mapping[str, str] | None = None,
                      citations: Mapping[str, str] | None = None) -> Path:
    """Write ``index.html`` into ``directory``: the verdicts per paper, figures, derivations.

    Parameters
    ----------
    directory : path
        Created if needed.
    verdicts : sequence of Verdict
        All papers together, in the order they were checked.
    derivations : mapping
        Derivation per paper key.
    figures : mapping
        PNG files per paper key (embedded in the page; may be empty without matplotlib).
    titles, citations : mapping, optional
        Paper titles and bibliographic citations by key.

    Returns
    -------
    Path
        The page.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    titles, citations = titles or {}, citations or {}
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    counts = {kind: 0 for kind in _LEGEND}
    for v in verdicts:
        counts[verdict_row_class(v)] += 1
    keys = list(dict.fromkeys([v.paper for v in verdicts] + list(derivations)))
    nav = "".join(f'<li><a href="#{_anchor(k)}">{html.escape(k)}</a>: '
                  f"{html.escape(titles.get(k, ''))}</li>" for k in keys)
    count_line = "".join(f'<span class="{kind}">{n} {html.escape(_LEGEND[kind])}</span>'
                         for kind, n in counts.items() if n)
    body = [f"<h1>symq check report</h1><p class=\"meta\">{len(verdicts)} claims, generated "
            f"{now} with Python {platform.python_version()}.</p>",
            f'<p class="counts">{count_line}</p>', f"<nav><ul>{nav}</ul></nav>"]
    for key in keys:
        mine = [v for v in verdicts if v.paper == key]
        title = titles.get(key, "")
        body.append(f'<section id="{_anchor(key)}"><h2>{html.escape(key)}'
                    + (f": {html.escape(title)}" if title else "") + "</h2>")
        if key in citations:
            body.append(f'<p class="meta">{html.escape(citations[key])}</p>')
        if mine:
            body.append(_verdict_table(mine))
        body += [_figure(p) for p in figures.get(key, [])]
        if key in derivations:
            body.append('<section class="derivation"><details><summary>Derivation</summary>'
                        + markdown_to_html(derivations[key].to_markdown(), shift=2)
                        + "</details></section>")
        body.append("</section>")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>symq check report</title><style>{_STYLE}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")
    path = directory / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
