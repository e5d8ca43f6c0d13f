"""Every paper's committed derivation file equals what ``symq derive PAPER`` prints now.

If this fails after a change of a derivation, regenerate with
``symq derive PAPER -o derivations/PAPER.md`` and review the diff.
"""

from pathlib import Path

import pytest

from symq.core import registry

DERIVATIONS = Path(__file__).resolve().parent.parent / "derivations"
PAPERS = [k for k, spec in registry.papers().items() if spec.derivation is not None]


def test_every_paper_has_a_derivation_file():
    assert PAPERS, "no paper with a derivation is registered"
    missing = [k for k in PAPERS if not (DERIVATIONS / f"{k}.md").exists()]
    assert not missing, f"generate with: symq derive KEY -o derivations/KEY.md for {missing}"


@pytest.mark.parametrize("key", PAPERS)
def test_derivation_file_is_current(key):
    committed = (DERIVATIONS / f"{key}.md").read_text()
    assert registry.get_paper(key).build_derivation().to_markdown() == committed, (
        f"derivations/{key}.md is stale: run symq derive {key} -o derivations/{key}.md")
