"""Claims on exact certified nonnegativity (``me-pade``): the corpus of touching and dipping
densities.

Angius, Horváth et al. (2014, Sec. 1) state that "there is no known, numerically stable method to
check the nonnegativity of general ME functions".  For the class of rational ME densities whose
poles are rational or Gaussian rational (:math:`-a` or :math:`-a \\pm ib` with
:math:`a, b \\in \\mathbb{Q}`), which every exact fit with such poles and every density written from
exponential, polynomial and trigonometric terms with rational rates belongs to, symq's
:func:`~symq.me.certification.certify` decides the question exactly
(:mod:`symq.me.certification.factorisation`); the claims below check it on
:func:`~symq.me.certification.corpus.corpus`, whose truth is known by construction, and state the
refutation for that class.  Outside it (irrational poles, e.g. every float Padé fit) the numeric
stages apply and a touching zero can still end INCONCLUSIVE: the refutation is not claimed there.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import mpmath
import sympy as sp

from symq.core.claims import Claim, Evidence, Status
from symq.me.certification import Certificate, Nonnegativity, certify
from symq.me.certification.corpus import CorpusCase, corpus, t

__all__ = ["exact_certification_claims"]

INTRO = "Angius, Horváth et al. 2014, Sec. 1"


@functools.cache
def _cases() -> dict[str, CorpusCase]:
    return {case.name: case for case in corpus()}


@functools.cache
def _certificate(name: str) -> Certificate:
    return certify(_cases()[name].lst)


def _density_at(case: CorpusCase, time: Any, dps: int = 60) -> sp.Float:
    """The time-domain expression (not the transform) at ``time``, at ``dps`` digits (sympy's
    evaluation; mpmath's global precision is not touched)."""
    return sp.N(case.density.subs(t, sp.Float(mpmath.nstr(time, dps), dps)), dps)


def _checked_status(point: Mapping[str, Any]) -> str:
    """The verdict, if its evidence checks out independently; else what went wrong."""
    case, cert = _cases()[point["name"]], _certificate(point["name"])
    if cert.status is Nonnegativity.NONNEGATIVE:
        return cert.status.value if cert.verify() else "NONNEGATIVE, certificate does not verify"
    if cert.status is Nonnegativity.NEGATIVE:
        value = _density_at(case, cert.witness)
        return cert.status.value if value < 0 else f"NEGATIVE, but f(witness) = {value}"
    return f"{cert.status.value} ({cert.reason})"


def _points() -> list[dict[str, Any]]:
    return [{"name": name} for name in _cases()]


def _corpus_text() -> str:
    cases = list(_cases().values())
    touching = sum(c.is_density for c in cases)
    orders = sorted({c.order for c in cases})
    return (f"{len(cases)} densities of orders {orders[0]} to {orders[-1]}: {touching} valid ones "
            "with touching zeros (squares of exponential polynomials in e^-t and in t times a "
            "positive part, products of shifted squares, trigonometric squares such as "
            "(cos t - cos 2t)^2 e^-t, mixed ones such as (t - 1 + e^-t/2)^2 e^-t) and "
            f"{len(cases) - touching} that dip below zero by eps of the peak, eps = 1e-2 to 1e-30")


def exact_certification_claims() -> list[Claim]:
    """The positive claim on the corpus and the declared refutation of the paper's statement."""
    def truth(point: Mapping[str, Any]) -> str:
        return "NONNEGATIVE" if _cases()[point["name"]].is_density else "NEGATIVE"

    def undecided(point: Mapping[str, Any]) -> bool:
        return _checked_status(point) != truth(point)

    decides = Claim(
        "the checker decides every density of the touching/dipping corpus",
        "symq.me.certification (exact factorisation over Q in x = e^-t/q, u = tan(omega t/2); "
        "symq.me.certification.corpus)",
        "certify returns the truth, known by construction, on " + _corpus_text() + "; every "
        "NONNEGATIVE certificate re-verifies with Certificate.verify() (no search), and every "
        "NEGATIVE witness is checked on the time-domain expression at 60 digits",
        _checked_status, truth, _points(), tolerance=0.0,
        error=lambda got, want: 0.0 if got == want else 1.0,
        evidence=(Evidence.EXACT, Evidence.CERTIFIED, Evidence.HIGH_PRECISION))
    refuted = Claim.predicate(
        "there is no numerically stable method to check nonnegativity of ME functions", INTRO,
        "the paper: 'there is no known, numerically stable method to check the nonnegativity of "
        "general ME functions'.  Refuted for the class of rational ME densities whose poles are "
        "rational or Gaussian rational (-a, -a +- ib with a, b rational): there the density is a "
        "polynomial G(t, x, u)/(1 + u^2)^N in x = e^-t/q, u = tan(omega t/2), and the "
        "factorisation of G over Q with exact real-root counting decides it (touching zeros are "
        "even powers; the rest goes to interval arithmetic only when it has several variables, "
        "and in (t, x) or (x, u) it then has no touching zero).  The statement holds at a point "
        "if certify fails to decide it with a re-verified certificate; it fails at every point of "
        + _corpus_text() + ".  Not claimed for irrational poles",
        undecided, _points(), evidence=(Evidence.EXACT, Evidence.CERTIFIED),
        expected=Status.FAILS)
    return [decides, refuted]
