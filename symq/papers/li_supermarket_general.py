"""Claims on JSQ(d) with general sizes: the fitted-PH fixed point against simulating the true law.

Li (2010) treats JSQ(d) with *general* service times; symq's mean-field solver needs a
phase-type law.  These claims put the chain of :func:`symq.meanfield.service_fit.fit_phase_type`
(certified Padé fits of growing order with a CF1 form, or the two-moment acyclic PH) to the
test: its fixed point (:func:`symq.meanfield.jsq_ph.solve_jsq_ph`) is compared with a
simulation of N = 1000 servers whose job sizes are drawn from the *true* law
(:func:`symq.meanfield.attained.simulation.simulate_attained` with the queue-length score, which
is JSQ(d)).  The mean field underestimates the finite-N response time by O(1/N) (Gast and Van
Houdt 2018); at N = 1000 that gap is below the simulations' confidence intervals for
exponential and H2 service (the claims of :mod:`symq.papers.li_supermarket`).

The laws, all of mean 1: a lognormal with sigma = 1 (SCV e - 1), a Weibull of shape 1/2
(SCV 5), a Pareto of index 1.5 truncated to [1, 100] (rescaled), and a gamma of shape 2 (the
Erlang-2 law, for the extended fit).

For the lognormal the fits of order 2 to 4 give E[T] = 2.841, 2.860, 2.863 at d = 2, lam = 0.9;
two simulations of 1e7 jobs gave 2.821 ± 0.014 and 2.842 ± 0.021 (99%): the simulations
cannot tell these orders apart, so the lognormal is in the agreement claim only, not in the
claim on the order.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.stats as st

from symq.core.claims import Claim, Evidence, Inconclusive, Status, equivalence_error

__all__ = ["general_service_claims"]

SOURCE = "Li 2010 (arXiv 1008.3788), general service; symq's fitted-PH chain"
SERVERS = 1000
#: jobs per simulation: the full form runs the long ones; the quick form the short ones, at
#: points where the verdict is many half-widths clear of the boundary.
N_JOBS_LONG, N_JOBS_SHORT = 10_000_000, 1_000_000
#: Relative tolerance of the agreement claim (expected to fail): the full form's truncated
#: Pareto at d = 2, lam = 0.9 (2e7 jobs: the run length its batch-means diagnostics ask for)
#: is 8.6% below the fitted-PH value, resolved to 0.7%; the quick form's at lam = 0.85 (4e6 jobs)
#: 7% below, resolved to 1.1%.
AGREEMENT_TOLERANCE = 0.04
_TRUNCATED_PARETO = st.truncpareto(1.5, 100.0)


def _law(key: str) -> Any:
    """The job-size laws of the claims, each of mean 1."""
    if key == "lognormal":
        return st.lognorm(1.0, scale=math.exp(-0.5))
    if key == "weibull":
        return st.weibull_min(0.5, scale=0.5)              # mean scale * Gamma(3) = 1
    if key == "truncated pareto":
        return st.truncpareto(1.5, 100.0, scale=1.0 / _TRUNCATED_PARETO.mean())
    if key == "gamma":
        return st.gamma(2.0, scale=0.5)
    raise KeyError(key)


#: values at zero of the densities (for the extended fits): f(0) = 0, f'(0) = 1/scale^2 = 4.
_GAMMA_ZERO = (0, 4)


@functools.cache
def _fitted(key: str, order_max: int, method: str = "auto") -> Any:
    from symq.meanfield.service_fit import fit_phase_type

    zero = _GAMMA_ZERO if key == "gamma" else None
    return fit_phase_type(_law(key), order_max=order_max, method=method, zero=zero)


@functools.cache
def _fixed_point_ET(key: str, d: int, lam: float, order_max: int, method: str = "auto"
                    ) -> float:
    from symq.meanfield.jsq_ph import solve_jsq_ph

    fp = solve_jsq_ph(d, lam, _fitted(key, order_max, method).ph)
    if fp.residual > 1e-9:
        raise Inconclusive(f"the fixed point's residual is {fp.residual:.2g}")
    return fp.ET


@functools.cache
def _simulated(key: str, d: int, lam: float, n_jobs: int) -> Any:
    from symq.meanfield.attained.simulation import simulate_attained

    queue_length_score = np.arange(1.0, 401.0)[None, :]      # JSQ(d): the shortest probed queue
    return simulate_attained(SERVERS, d, lam, _law(key), queue_length_score, 1.0, n_jobs=n_jobs,
                             rng=2026 + 10 * d + int(100 * lam), level=0.99).ET


def _point(key: str, d: int, lam: float, n_jobs: int) -> dict[str, Any]:
    return {"law": key, "d": d, "lam": lam, "n_jobs": n_jobs}


def _sim(point: Mapping[str, Any]) -> Any:
    return _simulated(point["law"], point["d"], point["lam"], point["n_jobs"])


def _agreement_claim(quick: bool) -> Claim:
    if quick:
        points = [_point("lognormal", 2, 0.5, N_JOBS_SHORT),
                  _point("truncated pareto", 2, 0.85, 4_000_000)]
    else:
        points = [_point(key, d, lam, 2 * N_JOBS_LONG if (key, d, lam) == (
                      "truncated pareto", 2, 0.9) else N_JOBS_LONG)
                  for key in ("lognormal", "weibull", "truncated pareto")
                  for d, lam in ((2, 0.5), (2, 0.9), (5, 0.9))]
    return Claim(
        "the fitted-PH fixed point agrees with simulation of the true law at N = 1000", SOURCE,
        "JSQ(d) with lognormal (sigma 1), Weibull (shape 1/2) or truncated Pareto (1.5, "
        "[1, 100]) job sizes of mean 1: E[T] of the mean-field fixed point with the PH of "
        f"fit_phase_type(order_max=4) agrees within {AGREEMENT_TOLERANCE:.0%} with a "
        f"simulation of N = {SERVERS} servers sampling the true law (batch means, equivalence "
        "test at the 95% family level).  A finding: the fits reproduce up to 7 moments but "
        "not the shape JSQ(d) responds to (truncated Pareto, lam = 0.9: 8.6% off)",
        lambda p: _fixed_point_ET(p["law"], p["d"], p["lam"], 4), _sim, points,
        tolerance=AGREEMENT_TOLERANCE,
        error=equivalence_error(relative=AGREEMENT_TOLERANCE, n_points=len(points)),
        evidence=Evidence.SIMULATION, expected=Status.FAILS)


def _order_claim(quick: bool) -> Claim:
    def shrinks(point: Mapping[str, Any]) -> bool:
        ci = _sim(point)
        values = [_fixed_point_ET(point["law"], point["d"], point["lam"], k) for k in (1, 2, 3, 4)]
        # the error of a fit: its distance to the simulation's interval (0 inside it)
        errors = [max(ci.low - v, v - ci.high, 0.0) for v in values]
        return all(later < earlier or later == earlier == 0.0
                   for earlier, later in zip(errors, errors[1:]))

    return Claim.predicate(
        "the error shrinks as the fit order grows (a moment-determinate law)", SOURCE,
        "JSQ(d), Weibull job sizes of shape 1/2 (determined by their moments), lam = 0.9: "
        "the distance of E[T] of the fixed point with the PH of order_max = 1, 2, 3, 4 to the "
        f"99% interval of a simulation of N = {SERVERS} servers "
        "decreases strictly with the order until it is 0 (inside the interval), and stays 0",
        shrinks, [_point("weibull", 2, 0.9, 1_500_000)] if quick else
        [_point("weibull", d, 0.9, N_JOBS_LONG) for d in (2, 5)],
        evidence=Evidence.SIMULATION)


def _extended_claim(quick: bool) -> Claim:
    def at_least_as_good(point: Mapping[str, Any]) -> bool:
        ci = _sim(point)
        errors = [abs(_fixed_point_ET("gamma", point["d"], point["lam"], 4, method) - ci.mean)
                  for method in ("extended", "classical")]
        return errors[0] <= errors[1] + ci.half_width

    cases = ((2, 0.9),) if quick else ((2, 0.9), (5, 0.9))
    return Claim.predicate(
        "the extended fit does at least as well as the classical one", "Angius, Horvath et al. "
        "2014 (fits with prescribed behaviour at zero)",
        "JSQ(d), gamma job sizes of shape 2 (f(0) = 0, f'(0) = 4), lam = 0.9: the fixed point "
        "with fit_phase_type(method='extended') is no farther from the simulation's mean "
        "(plus the 99% half-width) than with method='classical' (order_max = 4).  The classical "
        "Pade fits of order >= 2 of these moments are not certified, so the classical chain "
        "gives its two-moment acyclic PH; the extended chain reproduces the Erlang-2 law.  The "
        "lognormal is not a case: its extended fits are invalid (sigma 1) or have complex "
        "poles (sigma 1/2), so only the classical chain applies",
        at_least_as_good, [_point("gamma", d, lam, N_JOBS_SHORT) for d, lam in cases],
        evidence=Evidence.SIMULATION)


def general_service_claims(quick: bool = False) -> list[Claim]:
    """The general-service claims (``quick``: fewer loads and laws, the same run lengths where
    a verdict needs them)."""
    return [_agreement_claim(quick), _order_claim(quick), _extended_claim(quick)]
