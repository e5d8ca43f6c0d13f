"""Every claim of every registered paper gets the verdict symq expects (``symq check`` as a test).

The suite checks each paper's quick form (``build_claims(quick=True)``: the same claims on smaller
samples and shorter simulations); ``symq check`` runs the full form.

Most claims are expected to hold; a paper's statement that symq refutes is declared with
``expected=Status.FAILS`` and must fail.

ps-routing is not checked here: ``tests/test_cli.py::test_check_ps_routing_every_claim_holds_and_
json_parses`` runs ``symq check ps-routing`` (its full form, a superset of the quick one) and
asserts that every claim holds, so checking the quick form here as well repeated the same claims.
"""

from pathlib import Path

import pytest

from symq.core import registry

#: Papers whose every claim another test checks in the full form (see the module docstring).
CHECKED_BY_THE_CLI = {"ps-routing"}
PAPERS = [key for key in registry.papers() if key not in CHECKED_BY_THE_CLI]


def test_the_papers_left_to_the_cli_are_registered_and_checked_there():
    cli_tests = (Path(__file__).resolve().parents[1] / "test_cli.py").read_text()
    for key in CHECKED_BY_THE_CLI:
        assert key in registry.papers(), key
        assert f'"check", "{key}"' in cli_tests, key


@pytest.mark.parametrize("key", PAPERS)
def test_every_claim_holds(key):
    verdicts = [claim.check() for claim in registry.get_paper(key).build_claims(quick=True)]
    assert verdicts
    unexpected = [(v.claim, str(v.status), v.detail) for v in verdicts
                  if v.status is not v.expected]
    assert not unexpected
