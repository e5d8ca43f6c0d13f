"""The verdict corpus (``benchmarks/verdict_corpus``): no true claim fails, no false claim holds.

The corpus holds claims whose truth is known exactly (each states it as ``expected``, with the
exact value or closed form in a comment); ``benchmarks/bench_verdicts.py`` runs all of it (about
two minutes) and prints the confusion table of issue 30.  The suite keeps a quick subset: the
deterministic claims (exact rationals, 50-digit sums, limits, integrals) and two short
simulations, one of them a false claim checked by a run too short to resolve it (it must be
inconclusive or fail, never hold).

The truths themselves are checked here against independent computations (mpmath at 40 digits,
the Erlang B recursion, the G/M/1 root), so that a wrong label cannot hide a wrong verdict.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import mpmath as mp
import pytest

from symq.core.claims import Status
from symq.core.claimsfile import load_claims_file

CORPUS = Path(__file__).resolve().parent.parent / "benchmarks" / "verdict_corpus"

#: file stem -> claim names of the quick subset (None: every claim of the file).
QUICK = {
    "erlang_c": None,
    "series": ["M/M/1 heavy-traffic constant as a series, swapped for the M/D/1 constant 1/2",
               "supermarket heavy traffic: t E[T] -> 1/log(d) as t = 1/log(1/(1 - lam)) -> 0",
               "supermarket heavy traffic with the constant swapped: t E[T] -> log(d)",
               "supermarket E[T] as a series equals the mean-field solver"],
    "integrals": ["Weibull mean misprinted as s Gamma(1/k)",
                  "Lomax second moment as twice the integral of x times the tail",
                  "Lomax second moment misprinted without the factor 2"],
    "halfin_whitt": ["Halfin-Whitt: sqrt(k) E[W_k] -> alpha(beta)/beta",
                     ("Halfin-Whitt with phi and Phi swapped: sqrt(k) E[W_k] -> "
                      "[1 + beta phi/Phi]^(-1)/beta"),
                     "Erlang C at k = 2000 servers, rho = 1 - 1/sqrt(k): the waiting probability"],
    "mm1": ["M/M/1 is the supermarket model with d = 1 (mean field, deterministic)"],
    "pk": ["misprinted P-K: (1 + scv) instead of (1 + scv)/2, against the exact mean"],
    "approximations": [
        "E2/M/1 exact mean wait (round robin to 2 servers) against the exact dispatch model",
        "M/G/1 heavy-traffic form as the exact E[T], Erlang-2 sizes, rho = 0.9, short run"],
    "ps": ["the FCFS Pollaczek-Khinchine E[T] read as the PS mean, H2 sizes (scv 4)"],
}


def _truths(path: Path) -> dict[str, str]:
    with path.open("rb") as fh:
        return {c["name"]: c["expected"] for c in tomllib.load(fh)["claims"]}


def _quick_cases() -> list[tuple[str, str]]:
    cases = []
    for stem, names in QUICK.items():
        truths = _truths(CORPUS / f"{stem}.toml")
        for name in names or truths:
            assert name in truths, (stem, name)
            cases.append((stem, name))
    return cases


CASES = _quick_cases()


def test_every_corpus_claim_states_its_truth_with_a_reason():
    files = sorted(CORPUS.glob("*.toml"))
    assert len(files) >= 8
    truths = [t for f in files for t in _truths(f).values()]
    assert set(truths) == {"holds", "fails"} and truths.count("fails") >= 15
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("expected"):      # the exact reason, in a comment
                assert "#" in line and len(line.split("#", 1)[1].strip()) > 5, (path, number)


def test_the_quick_subset_covers_deterministic_and_simulation_evidence():
    assert len(CASES) >= 20
    assert sum(_truths(CORPUS / f"{s}.toml")[n] == "fails" for s, n in CASES) >= 8


@pytest.fixture(scope="module")
def built():
    """Each file of the quick subset loaded once: claim name -> claim."""
    out = {}
    for stem in QUICK:
        loaded = load_claims_file(CORPUS / f"{stem}.toml")
        out[stem] = {c.name: c for c in loaded.paper.build_claims()}
        out[stem]["__errors__"] = [str(e) for e in loaded.errors]
    return out


@pytest.mark.parametrize("stem, name", CASES, ids=[f"{s}:{n[:50]}" for s, n in CASES])
def test_no_true_claim_fails_and_no_false_claim_holds(built, stem: str, name: str):
    claims = built[stem]
    assert name in claims, (name, claims["__errors__"])    # the claim builds
    truth = _truths(CORPUS / f"{stem}.toml")[name]
    verdict = claims[name].check()
    assert not verdict.detail.startswith("internal error"), verdict.detail
    wrong = Status.FAILS if truth == "holds" else Status.HOLDS
    assert verdict.status is not wrong, (name, truth, verdict.detail)
    if verdict.status is Status.INCONCLUSIVE:      # says why, and what would decide
        assert verdict.detail
        if "sim" in str(verdict.evidence).lower():
            assert "longer" in verdict.detail, verdict.detail
        if claims[name].relation.op == "->":
            assert "nearer the limit" in verdict.detail, verdict.detail


# ----------------------------------------------------------------------------- the truths

def _erlang_b(k: int, a: mp.mpf) -> mp.mpf:
    b = mp.mpf(1)
    for j in range(1, k + 1):                      # B_j = a B_{j-1}/(j + a B_{j-1})
        b = a * b / (j + a * b)
    return b


def test_the_halfin_whitt_values_in_the_corpus_are_right():
    with mp.workdps(40):
        k, beta = 2000, mp.mpf(1)
        a = k * (1 - beta / mp.sqrt(k))
        b = _erlang_b(k, a)
        c = k * b / (k - a * (1 - b))
        assert abs(c - mp.mpf("2220375730264717546529407497508474861101") / mp.mpf(10) ** 40) \
            < mp.mpf(10) ** -35
        alpha = 1 / (1 + beta * mp.ncdf(beta) / mp.npdf(beta))
        swapped = 1 / (1 + beta * mp.npdf(beta) / mp.ncdf(beta))
        # sqrt(k) E[W] = C/beta: 0.59% from the limit at k = 2000 (beyond 1e-3), and the
        # swapped constant is far from the limit
        assert 5e-3 < abs(c / beta / (alpha / beta) - 1) < 7e-3
        assert abs(swapped / alpha - 1) > 1


def test_the_approximations_are_off_by_more_than_their_tolerance():
    for rho, off in ((0.7, 0.085), (0.8, 0.05), (0.9, 0.02)):
        sigma = (1 + 4 * rho - mp.sqrt(1 + 8 * rho)) / 2
        # sigma solves the G/M/1 root equation for Erlang-2 interarrivals at rate rho
        assert abs(sigma - (2 * rho / (2 * rho + 1 - sigma)) ** 2) < 1e-12
        exact, kingman = sigma / (1 - sigma), 0.75 * rho / (1 - rho)
        assert abs(kingman - exact) / max(kingman, exact) > off      # beyond the 2% band
    exact_et = 1 + 0.8 * 1.5 / (2 * 0.2)                                # P-K, Erlang-2, rho 0.8
    assert exact_et == pytest.approx(4.0) and abs(3.75 - exact_et) / exact_et > 0.06
    assert 0.05 / 1.05 > 0.02                      # the P-K factor 1.05 misprint
