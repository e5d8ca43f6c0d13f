r"""General job sizes for the mean-field solvers: a phase-type law fitted to any law, with its
provenance.

The JSQ(d) cavity solver (:func:`symq.meanfield.jsq_ph.solve_jsq_ph`), the refined ``1/N`` term
and the attained-service analysis need a phase-type (PH) service law.  A researcher's job sizes
are a lognormal, a Weibull, a truncated Pareto or a measured trace.  :func:`fit_phase_type` is
the chain between the two:

1. the target's moments (closed forms for scipy's lognormal, Weibull, gamma and exponential
   families, the sample moments of a trace, the exact moments of a symq ``ME`` law);
2. the certified Padé fits of :func:`symq.me.fit` (classical, and with prescribed behaviour at
   zero), each certified nonnegative or rejected with the reason (Angius, Horváth et al. 2014);
3. among the certified fits, in the order :func:`symq.me.fit` ranks them, the first that has a
   phase-type form: Cumani's canonical form CF1 (:func:`symq.me.phase_type.to_phase_type`), which
   exists when the poles are real and the series weights nonnegative.  A fit with complex poles
   has no such form and is passed over *with that reason recorded*;
4. beside them, the two-moment acyclic PH of the same mean and SCV (an H2 with balanced means
   for SCV >= 1, a hyper-Erlang with the fewest phases for SCV < 1);
5. of these PH laws, the one that reproduces the most of the target's data (moments and values
   at zero), then the nearest in the Kolmogorov metric.

The :class:`PHApproximation` records which moments and values at zero the PH reproduces, the
certificate, the order, and its distance to the target in the Kolmogorov metric
:math:`\sup_t |F_{PH}(t) - F(t)|` (for a trace: against the empirical cdf, exactly).  The
error of the whole chain inside a queueing model is *measured* by the finite-N simulators, which
sample the true law (:func:`symq.meanfield.attained.simulation.simulate_attained`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.integrate import solve_ivp

from symq.core.errors import InvalidParameter, NotConverged, SymqError
from symq.core.renamed import renamed_keywords
from symq.core.result import Exactness, ResultBase
from symq.laws import Empirical, PhaseType, as_phase_type, describe_law

from .sizes import SampledLaw

__all__ = ["PHApproximation", "fit_phase_type", "kolmogorov_distance"]

#: quantile grid of :func:`kolmogorov_distance` for a continuous target.
_GRID = 4000


@dataclass(frozen=True)
class PHApproximation(ResultBase):
    """A phase-type law fitted to a job-size law, and how it was obtained.

    Attributes
    ----------
    ph : PhaseType
        The law to give to the mean-field solvers.
    target : str
        The law approximated.
    method : str
        The route: ``"exact"`` (the law is phase-type), ``"classical Pade + CF1"``,
        ``"extended Pade (J values at zero) + CF1"`` or ``"two-moment acyclic PH (...)"``.
    why : str
        Why this route, and what was passed over (e.g. a better-ranked fit with complex poles).
    order : int
        Number of phases.
    matched : tuple of str
        The moments (``m1``, ``m2``, ...) and values at zero (``f(0)``, ``f'(0)``, ...) the PH
        reproduces by construction.
    certificate : str
        The nonnegativity certificate of the ME fit (:func:`symq.me.certify`), or why none is
        needed (a PH density is nonnegative by construction).
    distance : float
        :math:`\\sup_t |F_{PH}(t) - F(t)|`, see :func:`kolmogorov_distance`.
    metric : str
        The name of that metric and how it was evaluated.
    seconds : float
        Time of the whole chain.
    exactness : Exactness
        ``exact`` for a law that is phase-type, ``numeric`` for a fit.
    """

    summary: ClassVar[tuple[str, ...]] = ("method", "order", "distance")

    ph: PhaseType
    target: str
    method: str
    why: str
    order: int
    matched: tuple[str, ...]
    certificate: str
    distance: float
    metric: str
    seconds: float
    exactness: Exactness = Exactness.NUMERIC

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the provenance and the PH as lists."""
        alpha, A = self.ph
        return {"target": self.target, "method": self.method,
                "exactness": str(self.exactness), "why": self.why,
                "order": self.order, "matched": list(self.matched),
                "certificate": self.certificate, "distance": self.distance,
                "metric": self.metric, "seconds": round(self.seconds, 4),
                "alpha": np.asarray(alpha).tolist(), "A": np.asarray(A).tolist()}


def _ph_cdf(ph: PhaseType, t: NDArray[np.float64]) -> NDArray[np.float64]:
    """``1 - alpha e^{A t} 1`` at many sorted points: one integration of ``v' = v A`` (Radau,
    tolerances 1e-12 absolute and 1e-10 relative) instead of one matrix exponential per point."""
    alpha, A = ph
    alpha, A = np.asarray(alpha, dtype=float), np.asarray(A, dtype=float)
    order = np.argsort(t)
    times = t[order]
    sol = solve_ivp(lambda _s, v: v @ A, (0.0, float(times[-1])), alpha, method="Radau",
                    t_eval=times, jac=A.T, rtol=1e-10, atol=1e-12)
    if not sol.success:
        raise NotConverged("the phase-type cdf (Radau)", float("inf"), 1e-10, sol.t.size)
    out = np.empty_like(times)
    out[order] = np.clip(1.0 - sol.y.sum(axis=0), 0.0, 1.0)
    return out


def kolmogorov_distance(ph: PhaseType, target: Any) -> tuple[float, str]:
    """:math:`\\sup_t |F_{PH}(t) - F(t)|` and a description of how it was evaluated.

    For an :class:`~symq.laws.Empirical` target the supremum is exact (up to the
    1e-10 to which the PH cdf is integrated): it is attained at a sample point, from one side
    or the other.  For a continuous target it is the maximum
    over the target's quantiles ``q_j = F^{-1}(j/m)``, ``m = 4000``; both cdfs are monotone, so
    the true supremum exceeds the grid maximum by at most ``1/m``.
    """
    if isinstance(target, Empirical):
        x = target.sizes
        n = x.size
        F = _ph_cdf(ph, x)
        upper = np.arange(1, n + 1) / n
        gap = max(float(np.max(np.abs(F - upper))), float(np.max(np.abs(F - upper + 1.0 / n))))
        return gap, f"Kolmogorov distance to the empirical cdf of {n} sizes (exact)"
    probabilities = np.arange(1, _GRID) / _GRID
    q = np.asarray(target.ppf(probabilities) if hasattr(target, "ppf")
                   else target.icdf(probabilities), dtype=float)
    gap = float(np.max(np.abs(_ph_cdf(ph, q) - probabilities)))
    return gap, (f"Kolmogorov distance, maximum over {_GRID - 1} quantiles of the target "
                 f"(the supremum is at most {1.0 / _GRID:g} larger)")


def _target(sizes: SampledLaw, order_max: int, name: str) -> tuple[Any, Any, str]:
    """(what symq.me.fit accepts, the law for distances, its description)."""
    from symq.me.distribution import ME
    from symq.me.fit import Target

    label = describe_law(sizes)
    if isinstance(sizes, Empirical):
        moments = tuple(float(sizes.moment(k)) for k in range(1, 2 * order_max))
        return Target(moments, name=label), sizes, label
    if isinstance(sizes, ME):
        moments = tuple(sizes.moments(2 * order_max - 1))
        return Target(moments, pdf=lambda t: np.asarray(sizes.pdf(t), dtype=float),
                      name=label), sizes, label
    if hasattr(sizes, "pdf") and hasattr(sizes, "moment") and hasattr(sizes, "ppf"):
        return sizes, sizes, label
    raise InvalidParameter(name, label, "a scipy distribution, a trace "
                           "(symq.laws.Empirical), a symq ME law or a phase-type law")


def _matched(candidate: Any, n_moments: int, n_zero: int) -> tuple[str, ...]:
    K = 2 * candidate.order - 1 - candidate.zero_used
    names = [f"m{k}" for k in range(1, min(K, n_moments) + 1)]
    names += [f"f^({j})(0)" for j in range(min(candidate.zero_used, n_zero))]
    return tuple(names)


def _two_moment_ph(mean: float, scv: float) -> tuple[PhaseType, str]:
    from symq.laws import hyper_erlang, hyperexponential2

    if scv >= 1.0:
        return hyperexponential2(mean, scv), "H2 with balanced means"
    k = max(2, math.ceil(1.0 / scv - 1e-12))
    return hyper_erlang(k, mean, scv), f"hyper-Erlang with {k} phases per branch"


@renamed_keywords(law="sizes")
def fit_phase_type(sizes: SampledLaw, order_max: int = 3, method: str = "auto", *,
                   zero: tuple[Any, ...] | None = None, name: str = "sizes"
                   ) -> PHApproximation:
    """A phase-type law for any job-size law, with its provenance (see the module docstring).

    Parameters
    ----------
    sizes : scipy distribution, Empirical, ME or phase-type law
        The job sizes.  A phase-type law (or an ME law with a PH form) is returned exactly.
    order_max : int
        Largest Padé order tried (a fit of order n uses 2n-1-J moments).
    method : {"auto", "classical", "extended"}
        Which Padé fits :func:`symq.me.fit` tries (``"extended"``: with J >= 1 prescribed values
        at zero; ``"auto"``: both).
    zero : tuple, optional
        Values f(0), f'(0), ... of the target density for the extended fits of a scipy target
        (default: ``order_max - 1`` zeros when the density vanishes at 0, none otherwise).
    name : str
        The caller's parameter name, for messages.

    Returns
    -------
    PHApproximation

    Raises
    ------
    InvalidParameter
        A law of another kind, a bad ``order_max`` or ``method``.
    InvalidMoments
        The target's moments are not finite up to order ``2 order_max - 1`` (a heavy tail: use a
        truncated law or a lower order).

    Examples
    --------
    >>> import scipy.stats as st
    >>> approx = fit_phase_type(st.lognorm(1.0, scale=0.6065306597126334), order_max=3)
    >>> approx.method, approx.order, approx.matched
    ('classical Pade + CF1', 3, ('m1', 'm2', 'm3', 'm4', 'm5'))
    """
    from symq.me.certification import Nonnegativity
    from symq.me.fit import fit

    start = time.perf_counter()
    try:
        exact = as_phase_type(sizes, name)
    except InvalidParameter:
        exact = None
    if exact is not None:
        distance, metric = (0.0, "exact (the law is phase-type)")
        return PHApproximation(exact, describe_law(sizes), "exact", "the law is phase-type",
                               exact.order, ("all",), "not needed (a phase-type law)",
                               distance, metric, time.perf_counter() - start,
                               Exactness.EXACT)
    target, reference, label = _target(sizes, order_max, name)
    if zero is None:
        zero = ()
        if hasattr(sizes, "pdf") and not isinstance(sizes, Empirical) and order_max > 1:
            with np.errstate(all="ignore"):
                at_zero = float(np.asarray(sizes.pdf(0.0)))
            if at_zero == 0.0:
                zero = (0,) * (order_max - 1)
    _, report = fit(target, order_max=order_max, method=method, zero=zero,
                    raise_if_none=False)
    n_moments, n_zero = len(report.target.moments), len(report.target.zero)
    certified = [c for c in report.candidates if c.status == Nonnegativity.NONNEGATIVE.value]
    if report.target.pdf is not None:
        certified.sort(key=lambda c: (c.distance, -(2 * c.order - 1 - c.zero_used)))
    else:
        certified.sort(key=lambda c: (-c.matched, -c.order))
    options: list[tuple[PhaseType, str, tuple[str, ...], str]] = []
    passed: list[str] = []
    for candidate in certified:
        try:
            ph = as_phase_type(candidate.me, name)
        except InvalidParameter as exc:
            passed.append(f"order {candidate.order}, J = {candidate.zero_used}: "
                          f"{exc.reason or exc.domain}")
            continue
        kind = ("classical Pade + CF1" if candidate.zero_used == 0 else
                f"extended Pade ({candidate.zero_used} values at zero) + CF1")
        options.append((ph, kind, _matched(candidate, n_moments, n_zero),
                        f"NONNEGATIVE: {candidate.reason}"))
    mean = float(report.target.moments[0])
    second = float(report.target.moments[1]) if n_moments > 1 else 2 * mean * mean
    scv = second / (mean * mean) - 1.0
    if scv > 0 and n_moments > 1:
        ph, shape = _two_moment_ph(mean, scv)
        options.append((ph, f"two-moment acyclic PH ({shape})", ("m1", "m2"),
                        "not needed (a phase-type law)"))
    if not options:
        raise SymqError(f"{name}: no phase-type law found for {label}: no certified fit has a "
                        f"phase-type form and the squared coefficient of variation {scv:g} "
                        "allows no two-moment PH")
    scored = [(option, *kolmogorov_distance(option[0], reference)) for option in options]
    (ph, kind, matched, certificate), distance, metric = min(
        scored, key=lambda item: (-len(item[0][2]), item[1]))
    why = (f"of {len(options)} phase-type laws (CF1 forms of the certified fits of "
           f"{len(report.candidates)} tried, and the two-moment PH), the one that reproduces the "
           f"most of the target's data ({len(matched)}), then the nearest in "
           f"{metric.split(',')[0]}")
    if passed:
        why += "; certified fits without a phase-type form: " + "; ".join(passed)
    return PHApproximation(ph, label, kind, why, ph.order, matched, certificate, distance,
                           metric, time.perf_counter() - start)
