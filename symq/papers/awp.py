"""Claims of Altman, Avrachenkov, Kherani, Prabhu on adaptive window protocols (INFOCOM 2005).

"Performance analysis and stochastic stability of congestion control protocols": the window
grows at ``a(W)`` per round-trip time, losses are Poisson at rate ``lam(W)``, a loss takes
``W`` to ``(1 - b(W)) W``.  The checks pit three independent computations against each other
(the q-series closed form of the power-law class, the general numerical solver, exact-event
Monte Carlo), compare NewReno with Ott-Kemperman-Mathis and with the square-root formula of
Padhye et al., test the stability condition against simulation, the ordering by window bounds,
and the reach of the one-parameter HighSpeed family.  Not checked: the paper's own statements
beyond its abstract (the derivations, ``derivations/awp.md``, are symq's own), timeouts in
Padhye's full formula.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from symq.core.claims import Claim, Evidence, Inconclusive, equivalence_error, relative_error
from symq.core.registry import PaperSpec, register_paper
from symq.window import protocol as presets
from symq.window.derivation import derivation
from symq.window.ordering import compare
from symq.window.simulation import simulate_protocol
from symq.window.solve import solve_protocol
from symq.window.symbolic import stability

__all__ = ["PAPER", "build_claims"]

KEY = "awp"
SOURCE = "Altman, Avrachenkov, Kherani, Prabhu, IEEE INFOCOM 2005"
OKM = "Ott, Kemperman, Mathis (1996): E[W] ~ 1.31/sqrt(p) for NewReno with random losses"
PADHYE = "Padhye, Firoiu, Towsley, Kurose, SIGCOMM 1998 (square-root formula, no timeouts)"


def _protocol(point: Mapping[str, Any]) -> presets.WindowProtocol:
    name = point["protocol"]
    options = {k: v for k, v in point.items() if k not in ("protocol", "p", "S")}
    if name == "highspeed-family":
        return presets.highspeed_family(point["S"], point["p"], **options)
    if name == "aimd-time":
        return presets.newreno(point["p"], loss_model="time", **options)
    if name == "mimd-time":
        return presets.scalable(point["p"], loss_model="time", **options)
    return presets.PRESETS[name](point["p"], **options)


def _key(point: Mapping[str, Any]) -> tuple:
    return tuple(sorted(point.items()))


@functools.cache
def _law(key: tuple, method: str) -> Any:
    return solve_protocol(_protocol(dict(key)), method=method)


@functools.cache
def _simulated(key: tuple, n_losses: int = 1_000_000) -> Any:
    est = simulate_protocol(_protocol(dict(key)), n_losses=n_losses, rng=2005, level=0.99)
    if est.escaped:
        raise Inconclusive(f"the simulated window escaped: {est.escape_reason}")
    return est


_POWER_LAW = [{"protocol": "newreno", "p": p} for p in (1e-2, 1e-4, 1e-6)] + [
    {"protocol": "scalable", "p": p} for p in (1e-3, 1e-5)] + [
    {"protocol": "aimd-time", "p": 0.05},
    {"protocol": "highspeed-family", "S": 0.835, "p": 1e-4}]


#: Relative tolerance of the simulation claims: the full form's 1e6 loss cycles resolve about
#: 0.5% (family level 95%), the quick form's 2e5 about 1.1%.
SIM_TOLERANCE, SIM_TOLERANCE_QUICK = 0.01, 0.02

_GENERAL = [{"protocol": "highspeed", "p": 1e-5}, {"protocol": "highspeed", "p": 1e-6},
            {"protocol": "newreno", "p": 1e-3, "w_max": 40.0},
            {"protocol": "mimd-time", "p": 0.12, "w_min": 1.0}]


def _agreement_claims(quick: bool = False) -> list[Claim]:
    n_losses = 200_000 if quick else 1_000_000
    tol = SIM_TOLERANCE_QUICK if quick else SIM_TOLERANCE
    return [
        Claim(
            "closed form = numerical solver", SOURCE + ", stationary Kolmogorov equation",
            "E[W] from the q-series closed form of the power-law class a = alpha w^k, "
            "lam = gamma w^l, d = beta w equals E[W] from the general numerical solver "
            "(embedded post-loss chain, Palm inversion) for NewReno, Scalable TCP, AIMD with "
            "time-based losses and the HighSpeed family S = 0.835 (relative error)",
            lambda p: _law(_key(p), "closed form").mean_window,
            lambda p: _law(_key(p), "numeric").mean_window,
            _POWER_LAW, tolerance=1e-6, error=relative_error, evidence=Evidence.NUMERIC),
        Claim(
            "closed form = simulation", SOURCE,
            f"E[W] of the closed form agrees within {tol:.0%} with the simulated E[W] of "
            f"{n_losses:.0e} exactly sampled loss cycles: the batch-means interval at the 95% "
            "family level (Bonferroni over the points) lies within the band (equivalence test)",
            lambda p: _law(_key(p), "closed form").mean_window,
            lambda p: _simulated(_key(p), n_losses).mean_window,
            _POWER_LAW, tolerance=tol,
            error=equivalence_error(relative=tol, n_points=len(_POWER_LAW)),
            evidence=Evidence.SIMULATION),
        Claim(
            "numerical solver = simulation for general profiles", SOURCE,
            "HighSpeed TCP (RFC 3649 profiles a(w), b(w)), NewReno with a window cap and "
            f"Scalable TCP with time-based losses and a floor: E[W] of the numerical solver "
            f"agrees within {tol:.0%} with the simulation (tabulated exact-event sampling; "
            "equivalence test at the 95% family level)",
            lambda p: _law(_key(p), "numeric").mean_window,
            lambda p: _simulated(_key(p), n_losses).mean_window,
            _GENERAL, tolerance=tol, error=equivalence_error(relative=tol, n_points=len(_GENERAL)),
            evidence=Evidence.SIMULATION),
        Claim(
            "rate conservation E[a(W)] = E[lam(W) b(W) W]", SOURCE,
            "the solved stationary laws balance the mean drift (relative defect, quadrature of "
            "the density)",
            lambda p: _law(_key(p), "auto").drift_balance, lambda p: 0.0,
            [{"protocol": "newreno", "p": 1e-4}, {"protocol": "scalable", "p": 1e-4},
             {"protocol": "highspeed", "p": 1e-5}, {"protocol": "newreno", "p": 1e-3,
                                                    "w_max": 40.0}],
            tolerance=1e-5, error=lambda value, ref: abs(value - ref),
            evidence=Evidence.NUMERIC),
    ]


def _tcp_claims() -> list[Claim]:
    def okm(point: Mapping[str, Any]) -> float:
        return _law(_key({"protocol": "newreno", "p": point["p"]}), point["method"]).mean_window * \
            math.sqrt(point["p"])

    def square_root(point: Mapping[str, Any]) -> float:
        return math.sqrt(3.0 / (2.0 * point["p"]))

    return [
        Claim(
            "NewReno: E[W] sqrt(p) tends to the Ott-Kemperman-Mathis constant", OKM,
            "E[W] sqrt(p) of the fluid model with per-packet losses p (closed form and numerical "
            "solver) equals the published 1.31 to its printed rounding (absolute error)",
            okm, lambda p: 1.31,
            [{"p": p, "method": m} for p in (1e-2, 1e-4, 1e-6) for m in ("closed form",
                                                                         "numeric")],
            tolerance=0.005, error=lambda a, b: abs(a - b), evidence=Evidence.CLOSED_FORM),
        Claim(
            "the square-root formula is within 10% of the random-loss mean window", PADHYE,
            "sqrt(3/(2p)) (periodic losses, one ACK per packet) vs E[W] of NewReno with "
            "Poisson per-packet losses: the formula is the periodic-loss value and underestimates "
            "the mean window by about 6.5% at every p (relative error)",
            square_root,
            lambda p: _law(_key({"protocol": "newreno", "p": p["p"]}), "auto").mean_window,
            [{"p": p} for p in (1e-2, 1e-4, 1e-6)], tolerance=0.1, error=relative_error,
            evidence=Evidence.CLOSED_FORM),
    ]


_STABILITY_CASES = [
    {"protocol": "newreno", "p": 1e-3},
    {"protocol": "highspeed", "p": 1e-5},
    {"protocol": "mimd-time", "p": 0.12, "w_min": 1.0},   # lam > a/ln(8/7) = 0.0749
    {"protocol": "mimd-time", "p": 0.05, "w_min": 1.0},   # lam < 0.0749: escapes
    {"protocol": "highspeed-family", "S": 1.25, "p": 0.05, "loss_model": "time"},  # m < 0
]


def _stability_claims() -> list[Claim]:
    def agrees(point: Mapping[str, Any]) -> bool:
        tcp = _protocol(point)
        verdict = stability(tcp)
        est = simulate_protocol(tcp, n_losses=200_000, rng=7, level=0.99)
        if verdict.status == "stable":
            return not est.escaped
        if verdict.status == "transient":
            return bool(est.escaped)
        raise Inconclusive(f"verdict {verdict.status}: not comparable with the escape test")

    return [Claim.predicate(
        "the stability condition separates stable from unstable protocols", SOURCE,
        "lim a(w)/(w lam(w)) vs lim ln(w/d(w)) (sympy limits) says stable or transient; "
        "2e5 simulated loss cycles stay bounded exactly for the stable ones (NewReno, "
        "HighSpeed, Scalable with time-based losses above a/ln(1/beta) and a floor) and escape "
        "for the transient ones (Scalable below the threshold, HighSpeed family S = 1.25 with "
        "time-based losses)",
        agrees, _STABILITY_CASES, evidence=(Evidence.SYMBOLIC, Evidence.SIMULATION))]


def _ordering_claims(quick: bool = False) -> list[Claim]:
    def ordered(point: Mapping[str, Any]) -> bool:
        small = _protocol({**point["base"], **point["smaller"]})
        large = _protocol({**point["base"], **point["larger"]})
        return compare(small, large).first_below

    cases = [
        {"base": {"protocol": "newreno", "p": 1e-3}, "smaller": {"w_max": 30.0},
         "larger": {"w_max": 60.0}},
        {"base": {"protocol": "newreno", "p": 1e-3}, "smaller": {"w_max": 30.0}, "larger": {}},
        {"base": {"protocol": "newreno", "p": 1e-3}, "smaller": {}, "larger": {"w_min": 20.0}},
        {"base": {"protocol": "mimd-time", "p": 0.12}, "smaller": {"w_min": 1.0},
         "larger": {"w_min": 2.0}},
        {"base": {"protocol": "highspeed", "p": 1e-5}, "smaller": {"w_max": 500.0},
         "larger": {}},
    ]
    if quick:  # a cap against a cap, floors, and window-dependent losses (not the uncapped solves)
        cases = [cases[0], cases[3], cases[4]]
    return [Claim.predicate(
        "a larger window bound gives a stochastically larger window", SOURCE,
        "the stationary cdf of the protocol with the smaller cap (or floor) lies above the "
        "other's everywhere (numerical solver, 400 windows, slack 1e-6), with window-dependent "
        "losses too",
        ordered, cases, evidence=Evidence.NUMERIC)]


def _family_claims() -> list[Claim]:
    def slope(point: Mapping[str, Any]) -> float:
        low = _law(_key({"protocol": "highspeed-family", "S": point["S"], "p": 1e-5}), "numeric")
        high = _law(_key({"protocol": "highspeed-family", "S": point["S"], "p": 1e-3}), "numeric")
        return -math.log(high.mean_window / low.mean_window) / math.log(1e-3 / 1e-5)

    def ends(point: Mapping[str, Any]) -> float:
        family = _law(_key({"protocol": "highspeed-family", "S": point["S"], "p": 1e-4}),
                      "auto").mean_window
        return family

    def reference(point: Mapping[str, Any]) -> float:
        if point["S"] == 0.5:
            return _law(_key({"protocol": "newreno", "p": 1e-4}), "auto").mean_window
        # S = 1: multiplicative increase a w with halving, lam = p w: E[W] = a/(p ln 2)
        alpha = 2 * 0.5 / 1.5 * math.sqrt(1.5)
        return alpha / (1e-4 * math.log(2.0))

    return [
        Claim(
            "the HighSpeed family's response exponent is its one parameter", SOURCE,
            "E[W] ~ p^-S for the family a(w) = 2b/(2-b) C^(1/S) w^(2-1/S): the numerical solver "
            "at p = 1e-5 and 1e-3 gives slope S (NewReno-like S = 1/2, RFC 3649 S = 0.835, "
            "Scalable-like S = 1; absolute error)",
            slope, lambda p: p["S"], [{"S": s} for s in (0.5, 0.7, 0.835, 1.0)],
            tolerance=1e-4, error=lambda a, b: abs(a - b), evidence=Evidence.NUMERIC),
        Claim(
            "the HighSpeed family spans NewReno and Scalable-like behaviour", SOURCE,
            "S = 1/2 is NewReno's law (same E[W]); S = 1 is multiplicative increase with "
            "E[W] = a/(p ln(1/beta)) (log-drift balance; relative error)",
            ends, reference, [{"S": 0.5}, {"S": 1.0}], tolerance=1e-8, error=relative_error,
            evidence=Evidence.CLOSED_FORM),
    ]


def _mimd_floor_claim() -> Claim:
    def theta_law(point: Mapping[str, Any]) -> float:
        return _law(_key(point), "closed form").mean_window

    points = [{"protocol": "mimd-time", "p": lam, "w_min": 1.0} for lam in (0.12, 0.3)]
    return Claim(
        "multiplicative increase, constant losses, floor: E[W] = w_min theta/(theta-1)", SOURCE,
        "Scalable TCP with time-based losses above the stability threshold and a floor: "
        "ln(W/w_min) ~ Exp(theta), a theta = lam (1 - beta^theta) (derivations/awp.md); the "
        f"closed-form mean agrees within {SIM_TOLERANCE:.0%} with a simulation of 1e6 loss "
        "cycles (equivalence test at the 95% family level)",
        theta_law, lambda p: _simulated(_key(p)).mean_window, points, tolerance=SIM_TOLERANCE,
        error=equivalence_error(relative=SIM_TOLERANCE, n_points=len(points)),
        evidence=Evidence.SIMULATION)


def build_claims(quick: bool = False) -> list[Claim]:
    """Agreement of three solvers, TCP formulas, stability, ordering, HighSpeed family.

    ``quick=True`` (the test suite) simulates 2e5 loss cycles instead of 1e6 and checks the
    stochastic ordering on three of its five pairs.
    """
    return [*_agreement_claims(quick), *_tcp_claims(), *_stability_claims(),
            *_ordering_claims(quick), *_family_claims(), _mimd_floor_claim()]


def figures(directory: Any, *, quick: bool = False) -> list[Any]:
    """Stationary window densities of NewReno, Scalable TCP and HighSpeed TCP at per-packet
    loss probability p = 1e-5 (``symq check --report``); ``quick=True``: the two closed forms
    (NewReno, Scalable TCP) at p = 1e-3 on fewer points (the test suite).
    """
    from pathlib import Path

    import numpy as np
    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    from symq.window.plots import plot_window_densities

    p = 1e-3 if quick else 1e-5
    grid = np.geomspace(0.1 / math.sqrt(p), 0.25 / p, 100 if quick else 500)
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    protocols = [presets.newreno(p), presets.scalable(p)]
    plot_window_densities(protocols if quick else [*protocols, presets.highspeed(p)], w=grid,
                          ax=ax)
    ax.set_title(f"Stationary window laws, per-packet loss probability p = {p:g}")
    path = Path(directory) / f"{KEY}-window-densities.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return [path]


PAPER = register_paper(PaperSpec(
    key=KEY,
    title="Performance analysis and stochastic stability of congestion control protocols",
    citation="E. Altman, K. Avrachenkov, A. Kherani, B. Prabhu, IEEE INFOCOM 2005",
    claims=build_claims,
    derivation=derivation,
    models=("awp",),
    figures=figures,
))
