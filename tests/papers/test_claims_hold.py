"""Every claim of every registered paper holds (the main job, ``symq check``, as a test)."""

import pytest

from symq.core import registry
from symq.core.claims import Status

PAPERS = list(registry.papers())


@pytest.mark.parametrize("key", PAPERS)
def test_every_claim_holds(key):
    verdicts = [claim.check() for claim in registry.get_paper(key).build_claims()]
    assert verdicts
    failing = [(v.claim, str(v.status), v.detail) for v in verdicts if v.status is not Status.HOLDS]
    assert not failing
