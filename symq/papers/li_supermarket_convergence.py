"""Claims on the convergence of the JSQ(d) mean-field ODE and on its fixed point versus M/G/1.

Q.-L. Li, "Doubly Exponential Solution for Randomized Load Balancing Models with General Service
Times" (arXiv 1008.3788, 2010) states that the current location of the supermarket model
converges exponentially to its fixed point, and compares the doubly exponential fixed point with
the single-server queue.  :func:`convergence_claims` checks

* (a) the exponential convergence, measured by integrating the ODE from several starts, at the
  rate given by the spectral abscissa of the drift's Jacobian at the fixed point
  (:func:`symq.meanfield.convergence.convergence_rate`), for exponential service (``d = 2, 3``,
  ``lam = 0.5, 0.9``) and phase-type service (H2 with SCV 4, Erlang-2; ``d = 2``);
* (b) that for ``d = 1`` the fixed point is the M/PH/1 queue-length tail (Neuts' explicit
  matrix-geometric form, independent of the cavity iteration);
* (c) that for ``d >= 2`` it is not: ``u_k / P_MG1(Q >= k)`` is below 1 and decreasing at
  ``k = 2..5`` (the doubly exponential decay against the geometric one).

``convergence_claims(quick=True)`` integrates from two starts (empty, heavy) at five points;
the full form from four starts (two random) at eight points.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from symq.core.claims import Claim, Evidence, Inconclusive, relative_error
from symq.laws import erlang, hyperexponential2
from symq.meanfield.convergence import convergence_rate, mg1_comparison

__all__ = ["convergence_claims"]

SOURCE = "Li 2010 (arXiv 1008.3788), exponential convergence to the fixed point"
SOURCE_MG1 = "Li 2010 (arXiv 1008.3788), fixed point vs the M/G/1 queue; Neuts 1981, Ch. 3 (M/PH/1)"

#: the service laws of the claims, by the name used in the sample points.
SERVICES = ("exp", "H2(scv=4)", "Erlang-2")


def _service(name: str) -> Any:
    if name == "exp":
        return None
    if name == "H2(scv=4)":
        return hyperexponential2(1.0, 4.0)
    if name == "Erlang-2":
        return erlang(2, 1.0)
    raise Inconclusive(f"unknown service {name!r}")


@functools.cache
def _rate(d: int, lam: float, service: str, quick: bool) -> Any:
    starts = ("empty", "heavy") if quick else ("empty", "heavy", "random")
    return convergence_rate(d, lam, _service(service), starts=starts, n_random=2, rtol=1e-9)


def _rate_claim(quick: bool) -> Claim:
    points: list[dict[str, Any]] = [{"d": d, "lam": lam, "service": "exp"}
                                    for d in (2, 3) for lam in (0.5, 0.9)]
    points += [{"d": 2, "lam": 0.9, "service": s} for s in ("H2(scv=4)", "Erlang-2")]
    if not quick:
        points += [{"d": 2, "lam": 0.5, "service": s} for s in ("H2(scv=4)", "Erlang-2")]
    if quick:
        points = [p for p in points if not (p["d"] == 3 and p["lam"] == 0.5)]

    def measured(point: Mapping[str, Any]) -> np.ndarray:
        r = _rate(point["d"], point["lam"], point["service"], quick)
        if not r.abscissa_converged:
            raise Inconclusive(f"the spectral abscissa has not converged in K: {r.method}")
        return np.array(list(r.rates.values()))

    def predicted(point: Mapping[str, Any]) -> np.ndarray:
        r = _rate(point["d"], point["lam"], point["service"], quick)
        return np.full(len(r.rates), r.rate_predicted)

    return Claim(
        "the mean-field ODE converges exponentially at the Jacobian's spectral abscissa", SOURCE,
        "from the empty system, a heavy start (5 jobs per server)"
        + ("" if quick else " and two random starts")
        + ", ||x(t) - pi||_2 decays like exp(-r t) with r = -max Re eig DF(pi) (log-linear fit "
        "where the distance is 1e-13..1e-6 of its start; abscissa converged in the truncation K)",
        measured, predicted, points, tolerance=0.05, error=relative_error,
        evidence=Evidence.NUMERIC)


def _mg1_claim() -> Claim:
    def fixed_point(point: Mapping[str, Any]) -> np.ndarray:
        return mg1_comparison(1, point["lam"], _service(point["service"])).u

    def mg1(point: Mapping[str, Any]) -> np.ndarray:
        return mg1_comparison(1, point["lam"], _service(point["service"])).mg1_tail

    return Claim(
        "d = 1: the fixed point is the M/G/1 queue-length tail", SOURCE_MG1,
        "with one probe u_k (cavity QBD iteration) equals P(Q >= k) of M/PH/1 "
        "((1 - rho) alpha R^k (I - R)^{-1} 1, R = lam (lam I - lam 1 alpha - A)^{-1}), k = 1..8",
        fixed_point, mg1, [{"lam": lam, "service": s} for s in SERVICES for lam in (0.5, 0.9)],
        tolerance=1e-9, error=relative_error, evidence=(Evidence.NUMERIC, Evidence.CLOSED_FORM))


def _differs_claim() -> Claim:
    def below_and_decreasing(point: Mapping[str, Any]) -> bool:
        ratio = mg1_comparison(point["d"], point["lam"], _service(point["service"]),
                               levels=5).ratio[1:5]
        return bool(np.all(ratio < 1.0) and np.all(np.diff(ratio) < 0) and np.all(ratio > 0))

    return Claim.predicate(
        "d >= 2: the fixed point's tail falls faster than the M/G/1 tail", SOURCE_MG1,
        "u_k / P_MG1(Q >= k) at k = 2..5 is positive, below 1 and decreasing (both equal rho at "
        "k = 1): the doubly exponential tail against the geometric one",
        below_and_decreasing,
        [{"d": 2, "lam": lam, "service": s} for s in SERVICES for lam in (0.5, 0.9)],
        evidence=Evidence.NUMERIC)


def convergence_claims(quick: bool = False) -> list[Claim]:
    """The claims (a) exponential convergence, (b) ``d = 1`` is M/G/1, (c) ``d >= 2`` is not.

    ``quick=True`` (the test-suite form) integrates from two starts at five points instead of
    four starts at eight points (about 1 s against 3 s).
    """
    return [_rate_claim(quick), _mg1_claim(), _differs_claim()]
