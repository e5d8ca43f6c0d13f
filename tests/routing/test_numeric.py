"""The scipy.optimize cross-check, its agreement with the closed forms, and the paper's claims."""

import numpy as np
import pytest

from symq.core import Status, get_paper
from symq.routing import (
    minimize_potential,
    minimize_social_cost,
    potential,
    social_cost,
    social_optimum,
    wardrop_equilibrium,
)


def test_social_cost_and_potential():
    # J = 1*1/(2-1) + 2*1/(4-1) = 5/3; Phi = ln 2 + 2 ln(4/3)
    assert social_cost([2, 4], [1, 2], [1, 1]) == pytest.approx(5 / 3)
    assert potential([2, 4], [1, 2], [1, 1]) == pytest.approx(np.log(2) + 2 * np.log(4 / 3))


def test_scipy_minimisers_on_the_hand_example():
    # hand-derived in test_closed_forms: optimum (10/3, 4/3, 1/3), J = 11; equilibrium
    # (11/3, 4/3, 0), J = 15
    opt = minimize_social_cost([4, 2, 1], [1, 2, 4], 5)
    ne = minimize_potential([4, 2, 1], [1, 2, 4], 5)
    assert np.allclose(opt.loads, [10 / 3, 4 / 3, 1 / 3], rtol=1e-10, atol=1e-12)
    assert np.allclose(ne.loads, [11 / 3, 4 / 3, 0], rtol=1e-10, atol=1e-12)
    assert opt.cost == pytest.approx(11, rel=1e-12) and ne.cost == pytest.approx(15, rel=1e-12)
    assert opt.residual <= 1e-10 and ne.residual <= 1e-10
    assert ne.objective == pytest.approx(potential([4, 2, 1], [1, 2, 4], ne.loads))


def test_scipy_single_and_equal_servers():
    assert minimize_social_cost([3.0], [2.0], 1.0).loads == pytest.approx([1.0])
    assert minimize_potential([1, 1, 1], [2, 2, 2], 1.5).loads == pytest.approx([0.5] * 3)


def test_without_polish_the_optimiser_alone_is_accurate_to_about_1e_6():
    opt = minimize_social_cost([4, 2, 1], [1, 2, 4], 5, polish=False)
    assert np.allclose(opt.loads, [10 / 3, 4 / 3, 1 / 3], atol=1e-5)


@pytest.mark.parametrize("K", [2, 5, 8, 50])
def test_closed_forms_agree_with_scipy(K):
    rng = np.random.default_rng(K)
    worst = 0.0
    for _ in range(5 if K < 50 else 2):
        C, w = rng.uniform(0.2, 5, K), np.exp(rng.normal(0, 1, K))
        rho = C.sum() * rng.uniform(0.05, 0.95)
        for closed, reference in ((social_optimum, minimize_social_cost),
                                  (wardrop_equilibrium, minimize_potential)):
            a, b = closed(C, w, rho), reference(C, w, rho)
            worst = max(worst, np.max(np.abs(a.loads - b.loads)) / rho, abs(a.cost / b.cost - 1))
    assert worst < 1e-9


def test_scipy_finds_the_threshold_case():
    # rho exactly at theta^NE_1 = 3 of the hand example: only server 1 is used
    ne = minimize_potential([4, 2, 1], [1, 2, 4], 3)
    assert ne.loads == pytest.approx([3, 0, 0], abs=1e-9)


CLAIMS = {claim.name: claim for claim in get_paper("ps-routing").build_claims()}


def test_paper_registration():
    paper = get_paper("ps-routing")
    assert paper.models == ("ps-routing",) and "Telecommunication Systems 47" in paper.citation
    assert len(CLAIMS) >= 12
    assert all(claim.paper == "ps-routing" for claim in CLAIMS.values())


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_every_claim_holds(name):
    verdict = CLAIMS[name].check()
    assert verdict.status is Status.HOLDS, verdict.detail


def test_claim_detects_a_wrong_formula():
    # the checker is not vacuous: a claim comparing a wrong optimum with scipy fails
    from dataclasses import replace
    claim = CLAIMS["closed-form social optimum"]
    wrong = replace(claim, claimed=lambda p: claim.claimed(p) * (1 + 1e-6))
    assert wrong.check().status is Status.FAILS
