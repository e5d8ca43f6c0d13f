"""Claims of Angius, Horváth, Halawani, Barukab, Ahmad, Balbo (2014): ME distributions by moments
and behaviour around zero.

The paper's abstract claims: classical Padé moment matching can give an
ME function that is not a density; extending it with the behaviour of the density around zero
can avoid negative results, approximate the shape better, and sometimes yields an ME whose
nonnegativity can be verified; the resulting MEs give more accurate results inside stochastic
models.  Each claim is checked against independent evidence: 50-digit mpmath evaluation of the
fitted densities, exact rational moments, numpy's float root finder, quadrature of the lognormal
target, and an M/G/1 simulation with lognormal service.

Target used throughout: the lognormal distribution with mean 1 (moments
:math:`m_k = e^{k(k-1)\\sigma^2/2}`, all derivatives of the density vanish at 0).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from scipy import integrate, stats

from symq.core.claims import Claim, Evidence, Inconclusive
from symq.core.registry import PaperSpec, register_paper
from symq.me import symbolic
from symq.me._context import rebind, to_global, working_dps
from symq.me.certification import Nonnegativity, certify
from symq.me.distribution import ME
from symq.me.fit import Target, fit
from symq.me.pade import pade_fit
from symq.me.queueing import mg1_waiting_time, simulate_mg1_waiting
from symq.me.transform import to_mpf
from symq.papers.me_pade_exact import exact_certification_claims

__all__ = ["PAPER", "build_claims"]

KEY = "me-pade"
ABSTRACT = "Angius, Horváth et al. 2014, abstract"

#: (sigma, order, J) of the lognormal cases: at sigma = 0.5 classical Padé of order 3 has
#: f(0) < 0, at sigma = 0.8 it has a pole in the right half plane (the failure modes the paper
#: warns of: a Padé solution need not be a density).
_CASES = ({"sigma": 0.5, "order": 3, "J": 2}, {"sigma": 0.8, "order": 3, "J": 1})
_ORDER_MAX = 4
_LAMBDA = sp.Rational(7, 10)


def _lognormal_moments(sigma: float, K: int, dps: int = 60) -> list[mpmath.mpf]:
    with working_dps(dps) as ctx:   # the thread's private context: mpmath.mp is not touched
        s2 = ctx.mpf(sigma) ** 2
        return to_global([+ctx.exp(k * (k - 1) * s2 / 2) for k in range(1, K + 1)])


def _lognormal(sigma: float) -> Any:
    return stats.lognorm(sigma, scale=np.exp(-sigma**2 / 2))


@functools.cache
def _classical(sigma: float, order: int) -> ME:
    return ME(pade_fit(_lognormal_moments(sigma, 2 * order - 1), order=order).lst)


@functools.cache
def _extended(sigma: float, order: int, J: int) -> ME:
    moments = _lognormal_moments(sigma, 2 * order - 1 - J)
    return ME(pade_fit(moments, order=order, zero=[0] * J).lst)


@functools.cache
def _best(sigma: float, method: str) -> ME:
    """Best certified fit (smallest L1 distance to the lognormal) up to order _ORDER_MAX."""
    target = Target(tuple(_lognormal_moments(sigma, 2 * _ORDER_MAX - 1)), (0,) * _ORDER_MAX,
                    pdf=_lognormal(sigma).pdf, name=f"lognormal(sigma={sigma})")
    me, _ = fit(target, order_max=_ORDER_MAX, method=method)
    return me


def _l1(me: ME, sigma: float) -> float:
    target = _lognormal(sigma)
    value, _ = integrate.quad(lambda t: abs(float(me.pdf(t)) - float(target.pdf(t))), 0, 30,
                              limit=500, points=[0.5, 1, 2, 4])
    return float(value)


def _grid_minimum(me: ME, upper: float = 40.0, n: int = 2001) -> mpmath.mpf:
    """Smallest 50-digit value of the density on a grid (supporting, not a proof)."""
    with working_dps(15) as ctx:    # 53 bits, whatever the user's global precision
        grid = to_global([ctx.mpf(upper) * k / (n - 1) for k in range(1, n)])
    values = me.pdf_mp(grid, dps=50)
    return min(values)


# ----------------------------------------------------------------------------- claims

def _improper_classical() -> Claim:
    def claimed(point: Mapping[str, Any]) -> float:
        certificate = certify(_classical(point["sigma"], point["order"]))
        if certificate.status is Nonnegativity.NEGATIVE:
            # independent: the witness's value by 50-digit partial fractions
            value = _classical(point["sigma"], point["order"]).pdf_mp(certificate.witness, dps=50)
            return 0.0 if value < 0 else 1.0
        if certificate.status is Nonnegativity.INVALID:
            # independent: numpy's float roots of the denominator show a pole with Re >= 0
            roots = np.roots([float(c) for c in reversed(_classical(point["sigma"],
                                                                    point["order"]).denominator)])
            return 0.0 if np.max(roots.real) >= 0 else 1.0
        return 1.0

    return Claim.predicate(
        "classical Padé gives an improper density, and the checker proves it", ABSTRACT,
        "for lognormal targets (mean 1, sigma 0.5 and 0.8), the order-3 fit of 5 moments is "
        "certified NEGATIVE (witness checked at 50 digits) or INVALID (right-half-plane pole, "
        "checked with numpy's roots)",
        lambda point: claimed(point) == 0.0,
        [{"sigma": c["sigma"], "order": c["order"]} for c in _CASES],
        evidence=(Evidence.CERTIFIED, Evidence.NUMERIC))


def _extension_certified() -> Claim:
    def holds(point: Mapping[str, Any]) -> bool:
        me = _extended(point["sigma"], point["order"], point["J"])
        certificate = certify(me)
        return (certificate.status is Nonnegativity.NONNEGATIVE
                and _grid_minimum(me) >= 0)

    return Claim.predicate(
        "the extension with behaviour at zero gives a certified density", ABSTRACT,
        "for the same targets and order, prescribing f(0) = 0 (sigma 0.8) or f(0) = f'(0) = 0 "
        "(sigma 0.5) gives a fit certified NONNEGATIVE; a 50-digit grid of 2000 points finds no "
        "negative value",
        holds, list(_CASES), evidence=(Evidence.CERTIFIED, Evidence.NUMERIC))


def _moments_reproduced() -> list[Claim]:
    def exact_sample(rng: np.random.Generator) -> list[dict[str, Any]]:
        points = []
        for _ in range(6):
            k = int(rng.integers(2, 4))
            weights = rng.integers(1, 9, size=k)
            rates = rng.integers(1, 12, size=k)
            points.append({"probs": tuple(sp.Rational(int(w), int(weights.sum())) for w in weights),
                           "rates": tuple(int(r) for r in rates)})
        return points

    def mixture_moments(point: Mapping[str, Any]) -> list[sp.Rational]:
        # independent: m_k = sum_i p_i k! / mu_i^k for a hyperexponential mixture
        return [sum(p * sp.factorial(k) / sp.Integer(mu) ** k
                    for p, mu in zip(point["probs"], point["rates"])) for k in range(1, 6)]

    def fitted_exact(point: Mapping[str, Any]) -> list[sp.Rational]:
        moments = mixture_moments(point)
        result = pade_fit(moments)
        return ME(result.lst).moments(len(moments))

    def exact_error(claimed: Any, reference: Any) -> float:
        return float(max(abs(a - b) for a, b in zip(claimed, reference)))

    def fitted_float(point: Mapping[str, Any]) -> list[mpmath.mpf]:
        me = _extended(point["sigma"], point["order"], point["J"]) if point["J"] else \
            _classical(point["sigma"], point["order"])
        K = 2 * point["order"] - 1 - point["J"]
        with working_dps(60) as ctx:
            return to_global([to_mpf(m, ctx) for m in me.moments(K)])

    def reference_float(point: Mapping[str, Any]) -> list[mpmath.mpf]:
        K = 2 * point["order"] - 1 - point["J"]
        return _lognormal_moments(point["sigma"], K)

    def mp_relative(claimed: Any, reference: Any) -> float:
        with working_dps(60):
            pairs = rebind(list(zip(claimed, reference)))
            return float(max(abs(a - b) / abs(b) for a, b in pairs))

    float_points = [{**c, "J": J} for c in _CASES for J in (0, c["J"])]
    return [
        Claim("fitted moments equal the input moments (exact)", ABSTRACT,
              "exact rational moments of random hyperexponential mixtures: the Padé fit's moments "
              "equal them exactly (mixture formula sum p_i k!/mu_i^k)",
              fitted_exact, mixture_moments, exact_sample, tolerance=0.0, error=exact_error,
              evidence=Evidence.EXACT, seed=7),
        Claim("fitted moments equal the input moments (50 digits)", ABSTRACT,
              "lognormal moments at 60 digits: the moments of the fitted rational transform equal "
              "the inputs to 1e-35 relative, classical and extended fits",
              fitted_float, reference_float, float_points, tolerance=1e-35, error=mp_relative,
              evidence=Evidence.NUMERIC),
    ]


def _closer_in_shape() -> Claim:
    return Claim(
        "the extension approximates the shape better", ABSTRACT,
        "among fits certified to be densities (orders <= 4), the best fit using behaviour at "
        "zero is closer to the lognormal target in L1 distance than the best classical fit: "
        "ratio L1(extended)/L1(classical) < 1",
        lambda point: _l1(_best(point["sigma"], "extended"), point["sigma"]),
        lambda point: _l1(_best(point["sigma"], "classical"), point["sigma"]),
        [{"sigma": c["sigma"]} for c in _CASES], tolerance=1.0,
        error=lambda ext, cla: ext / cla, evidence=Evidence.NUMERIC)


def _queue_accuracy() -> Claim:
    thresholds = np.array([0.25, 0.5, 1.0, 2.0, 4.0, 8.0])

    @functools.cache
    def simulated(sigma: float) -> tuple[np.ndarray, np.ndarray]:
        mu = -sigma**2 / 2
        result = simulate_mg1_waiting(lambda n, g: g.lognormal(mu, sigma, n), float(_LAMBDA),
                                      thresholds,
                                      n_jobs=4_000_000, rng=2014)
        return (np.array([c.mean for c in result.ccdf]),
                np.array([c.half_width for c in result.ccdf]))

    def error_of(me: ME, sigma: float) -> float:
        waiting = mg1_waiting_time(me, _LAMBDA)
        model = float(waiting.rho) * ME(waiting.positive_part).ccdf(thresholds)
        estimate, half_width = simulated(sigma)
        return float(np.sum(np.abs(model - estimate)))

    def ratio(point: Mapping[str, Any]) -> float:
        sigma = point["sigma"]
        extended = error_of(_best(sigma, "extended"), sigma)
        classical = error_of(_best(sigma, "classical"), sigma)
        _, half_width = simulated(sigma)
        if abs(classical - extended) < np.sum(half_width):
            raise Inconclusive(f"errors {extended:.4g} (extended) and {classical:.4g} (classical) "
                               f"differ by less than the simulation's half-widths "
                               f"{np.sum(half_width):.3g}")
        return extended / classical

    return Claim(
        "certified extended fits give more accurate queueing results", ABSTRACT,
        f"M/G/1 queue, lognormal service (mean 1), lambda = {_LAMBDA}: P(W > t) at "
        f"t = 0.25..8 from the Pollaczek-Khinchine transform of the best certified fit; the sum "
        f"of absolute errors against a 4e6-customer simulation is smaller with behaviour at "
        f"zero than with the best certified classical fit (ratio < 1)",
        ratio, None, [{"sigma": c["sigma"]} for c in _CASES], tolerance=1.0,
        error=lambda value, _: value, evidence=Evidence.SIMULATION)


def _known_densities() -> Claim:
    s = sp.Symbol("s")
    catalogue = {
        # name: (transform, expected status)
        "(2/3)(1+cos t)e^-t (touching zero)":
            (sp.Rational(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1)), "NONNEGATIVE"),
        "Erlang(4, 2)": ((2 / (s + 2)) ** 4, "NONNEGATIVE"),
        "hypoexponential(1, 3)": (3 / ((s + 1) * (s + 3)), "NONNEGATIVE"),
        "order 3, complex dominant pole": (26 / ((s + 2) * ((s + 1) ** 2 + 12)), "INVALID"),
        "right-half-plane pole": (sp.Rational(-2) / ((s - 1) * (s + 2)), "INVALID"),
        "f(0) < 0": ((6 - s) / ((s + 2) * (s + 3)), "NEGATIVE"),
    }

    def verdict(point: Mapping[str, Any]) -> str:
        return certify(ME.from_expr(catalogue[point["name"]][0])).status.value

    return Claim(
        "the checker decides densities that a PH conversion cannot",
        "symq.me.certification (exact rules and branch and bound); O'Cinneide 1990 (a PH "
        "representation exists only for densities positive on (0, inf))",
        "certify returns the known status on a catalogue including (2/3)(1+cos t)e^-t (a "
        "density with a zero at t = pi, which BuTools' CheckMEPositiveDensity reports as False)",
        verdict, lambda point: catalogue[point["name"]][1],
        [{"name": name} for name in catalogue], tolerance=0.0,
        error=lambda got, want: 0.0 if got == want else 1.0, evidence=Evidence.CERTIFIED)


def build_claims() -> list[Claim]:
    """All claims of the paper."""
    return [_improper_classical(), _extension_certified(), *_moments_reproduced(),
            _closer_in_shape(), _queue_accuracy(), _known_densities(),
            *exact_certification_claims()]


def figures(directory: Any) -> list[Any]:
    """Classical vs extended fits of the lognormal targets (``symq check --report``)."""
    from pathlib import Path

    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    from symq.me.plots import plot_density_comparison

    paths = []
    for case in _CASES:
        sigma, order, J = case["sigma"], case["order"], case["J"]
        fig = Figure(figsize=(6, 4))
        ax = fig.subplots()
        plot_density_comparison({f"classical order {order}": _classical(sigma, order),
                                 f"order {order}, {J} value(s) at zero": _extended(sigma, order, J),
                                 "best certified": _best(sigma, "auto")},
                                _lognormal(sigma).pdf, upper=4.0, ax=ax)
        ax.set_title(f"ME fits of a lognormal (sigma = {sigma}, mean 1)")
        path = Path(directory) / f"me-pade-lognormal-{sigma}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        paths.append(path)
    return paths


PAPER = register_paper(PaperSpec(
    key=KEY,
    title="Constructing Matrix Exponential Distributions by Moments and Behavior around Zero",
    citation="A. Angius, A. Horváth, S. M. Halawani, O. Barukab, A. R. Ahmad, G. Balbo, "
             "Mathematical Problems in Engineering 2014, Article ID 610907",
    claims=build_claims,
    derivation=symbolic.derivation,
    models=("me-fit",),
    figures=figures,
))
