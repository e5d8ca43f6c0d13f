"""Docstrings, comments and derivation texts cite what a user can read: a paper's section,
equation or theorem, or symq's own documentation; never an internal note."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATTERN = re.compile(r"\b[Nn]ote (§|[A-Z][0-9]|part |section |sections )|reference note|"
                     r"\bnotes? §|\bnotes? [a-z_]+\.md")
FILES = sorted([*ROOT.glob("symq/**/*.py"), *ROOT.glob("derivations/*.md"),
                *ROOT.glob("examples/**/*.py"), *ROOT.glob("benchmarks/**/*.py"),
                *(p for p in ROOT.glob("docs/**/*.md") if "papers" not in p.parts),
                ROOT / "docs" / "conf.py", ROOT / "README.md"])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_citation_of_an_internal_note(path):
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if PATTERN.search(line)]
    assert not hits, "cite the paper or docs/ instead of an internal note:\n" + "\n".join(hits)


def test_the_pattern_catches_the_old_forms():
    for text in ("(note A3)", "note §1.2", "reference note section 1.3", "Note §3.2 step 6",
                 "(reference note part B2)", "note B4"):
        assert PATTERN.search(text), text
    assert not PATTERN.search("Note that the load is below 1")
