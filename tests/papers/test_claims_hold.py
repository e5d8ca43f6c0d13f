"""Every claim of every registered paper gets the verdict symq expects (``symq check`` as a test).

The suite checks each paper's quick form (``build_claims(quick=True)``: the same claims on smaller
samples and shorter simulations); ``symq check`` runs the full form.

Most claims are expected to hold; a paper's statement that symq refutes is declared with
``expected=Status.FAILS`` and must fail.
"""

import pytest

from symq.core import registry

PAPERS = list(registry.papers())


@pytest.mark.parametrize("key", PAPERS)
def test_every_claim_holds(key):
    verdicts = [claim.check() for claim in registry.get_paper(key).build_claims(quick=True)]
    assert verdicts
    unexpected = [(v.claim, str(v.status), v.detail) for v in verdicts
                  if v.status is not v.expected]
    assert not unexpected
