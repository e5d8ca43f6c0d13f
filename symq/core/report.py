"""Markdown reports of claim verdicts (``symq check --report DIR``)."""

from __future__ import annotations

import datetime as _dt
import platform
import re
from collections.abc import Sequence
from pathlib import Path

from .claims import Status, Verdict
from .derivation import Derivation

__all__ = ["verdict_table", "write_report", "unexpected_line"]

_MARK = {Status.HOLDS: "holds", Status.FAILS: "**fails**", Status.INCONCLUSIVE: "*inconclusive*"}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _error(verdict: Verdict) -> str:
    """The largest error with its units ("0.0042 relative", "0.4 half-widths")."""
    if verdict.max_error is None:
        return ""
    units = verdict.units.split(" of ")[0]  # "half-widths of the 95% interval" -> half-widths
    return f"{verdict.max_error:.3g}" + (f" {units}" if units else "")


def _status(verdict: Verdict, markdown: bool) -> str:
    """The status, flagged when it contradicts the claim's ``expected`` verdict."""
    text = _MARK[verdict.status] if markdown else str(verdict.status)
    if verdict.unexpected:
        text += f" (UNEXPECTED: expected {verdict.expected})"
    elif verdict.status is Status.FAILS and verdict.expected is Status.FAILS:
        text += " (as expected)"         # a refutation the file states: a finding, not a bug
    return text


def unexpected_line(verdicts: Sequence[Verdict]) -> str:
    """The line that names the verdicts contradicting ``expected`` ("" when none does)."""
    bad = [f"{v.paper}: {v.claim} ({v.status}, expected {v.expected})"
           for v in verdicts if v.unexpected]
    if not bad:
        return ""
    return f"{len(bad)} verdict(s) contradict the claim's expected verdict: " + "; ".join(bad)


def verdict_table(verdicts: Sequence[Verdict], markdown: bool = False) -> str:
    """A table of verdicts, plain text for the terminal or Markdown for reports."""
    headers = ("paper", "claim", "status", "max error", "evidence", "seconds", "detail")
    rows = [
        (v.paper, v.claim, _status(v, markdown), _error(v), ", ".join(map(str, v.evidence)),
         f"{v.seconds:.2f}", v.detail)
        for v in verdicts
    ]
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        for row in rows:
            lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
        flagged = unexpected_line(verdicts)
        if flagged:
            lines += ["", f"**{flagged}**"]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers[:-1])]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    lines = [fmt.format(*headers), fmt.format(*("-" * w for w in widths), "-" * 6)]
    lines += [fmt.format(*row) for row in rows]
    counts = {s: sum(v.status is s for v in verdicts) for s in Status}
    lines.append("")
    lines.append(f"{len(verdicts)} claims: {counts[Status.HOLDS]} hold, "
                 f"{counts[Status.FAILS]} fail, {counts[Status.INCONCLUSIVE]} inconclusive")
    refuted = [v.claim for v in verdicts if v.status is Status.FAILS and v.expected is Status.FAILS]
    if refuted:
        lines.append(f"refuted as symq expects (a finding, not a bug): {'; '.join(refuted)}")
    flagged = unexpected_line(verdicts)
    if flagged:
        lines.append(flagged)
    return "\n".join(lines)


def write_report(directory: str | Path, verdicts: Sequence[Verdict],
                 derivations: dict[str, Derivation], figures: dict[str, list[Path]],
                 titles: dict[str, str] | None = None) -> Path:
    """Write ``report.md`` (verdicts, figures, derivations) into ``directory``.

    Parameters
    ----------
    directory : path
        Created if needed; figures are expected inside it.
    verdicts : sequence of Verdict
        The verdicts, all papers together.
    derivations : dict
        Derivation per paper key.
    figures : dict
        Figure files per paper key (may be empty when matplotlib is missing).
    titles : dict, optional
        Paper titles by key.

    Returns
    -------
    Path
        The report file.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    titles = titles or {}
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# symq check report", "",
             f"Generated {now} with Python {platform.python_version()}.", "",
             "## Verdicts", "", verdict_table(verdicts, markdown=True), ""]
    unsettled = [v for v in verdicts if v.status is not Status.HOLDS or v.unexpected]
    if unsettled:  # what a referee needs: compared what, where, counterexample, holding region
        lines += ["## Claims that do not hold", ""]
        for v in unsettled:
            lines += ["```", v.explanation(), "```", ""]
    keys = list(dict.fromkeys([v.paper for v in verdicts] + list(derivations)))
    for key in keys:
        lines += [f"## {key}: {titles.get(key, '')}".rstrip(": "), ""]
        for path in figures.get(key, []):
            rel = Path(path).relative_to(directory) if Path(path).is_absolute() else Path(path)
            lines += [f"![{rel.stem}]({rel.as_posix()})", ""]
        if key in derivations:
            body = re.sub(r"(?m)^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ",
                          derivations[key].to_markdown())
            lines += [body, ""]
    path = directory / "report.md"
    path.write_text("\n".join(lines))
    return path
