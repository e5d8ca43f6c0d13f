"""Every public result, estimate, model and declaration of symq has a rich Jupyter display.

Each class has a builder below that makes a real instance with a cheap solver call (small
parameters, short simulations) and returns the strings its display must show: its main value
rounded to 6 significant digits, compared where cheap with a value computed here independently
(M/M/1 and M/M/2 response times, the closed-form supermarket tail, Pollaczek-Khinchine, the drift
balance of NewReno, the square-root assignment).  An automatic walk of every ``__all__`` of symq
fails when a public class that displays itself, or a dataclass with ``to_dict``, has no builder
here: the list cannot fall behind the code.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy as sp

import symq
from symq.core.approximate import Approximate
from symq.core.simstats import ConfidenceInterval

LAM = 0.7


def g(x: float) -> str:
    """A number as the displays round it."""
    return f"{x:.6g}"


def supermarket_ET(d: int, lam: float) -> float:
    """E[T] = sum_k lam^((d^k - 1)/(d - 1) - 1) (Vvedenskaya, Dobrushin, Karpelevich 1996)."""
    return sum(lam ** ((d ** k - 1) / (d - 1)) for k in range(1, 40)) / lam


def by(obj: Any, shows: Callable[[Any], list[str]]) -> tuple[Any, list[str]]:
    """``(obj, shows(obj))``: an instance and what its display must show."""
    return obj, shows(obj)


def exponential_ph() -> Any:
    from symq.laws import PhaseType

    return PhaseType([1.0], [[-1.0]], name="Exp(1)")


# ------------------------------------------------------------------ builders: (object, must show)
def _core() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    from symq.core import registry
    from symq.core.claims import Claim, Verdict
    from symq.core.claimsfile import load_claims_file
    from symq.core.claimsfile.loader import LoadedFile
    from symq.core.compiler import CompiledFunction
    from symq.core.compiler import compile as symq_compile
    from symq.core.derivation import Derivation, Step
    from symq.core.parameters import Parameter, PositiveReal
    from symq.core.result import Result
    from symq.core.sweep import SweepResult, grid, sweep
    from symq.laws import Deterministic, Empirical, Hyperexponential
    from symq.meanfield.supermarket import derivation as built

    derivation = functools.lru_cache(maxsize=None)(built)

    def claim():
        c = Claim("M/M/1 mean number", "textbook", "E[N] = rho/(1 - rho)",
                  lambda p: p["rho"] / (1 - p["rho"]),
                  lambda p: sum(k * (1 - p["rho"]) * p["rho"] ** k for k in range(2000)),
                  [{"rho": 0.5}], tolerance=1e-9)
        return c, ["**M/M/1 mean number**"]

    def verdict():
        v = claim()[0].check()
        return v, ["holds"]

    def result():
        r = registry.get_model("supermarket").run({"d": 2, "lam": LAM})
        return r, [g(supermarket_ET(2, LAM))]

    def sweep_result():
        s = sweep(lambda p, rng: {"ET": 1 / (1 - p["lam"])}, grid(lam=[0.1, 0.5]), processes=1)
        return s, ["**SweepResult**", g(1 / 0.9), "| 0.5 | 2 |"]

    def step():
        s = derivation().steps[0]
        return s, [r"\lambda"]

    def compiled():
        lam = sp.Symbol("lam")
        return symq_compile(lam / (1 - lam), (lam,)), [r"\frac{\lambda}{1 - \lambda}", "def "]

    return {
        Claim: claim,
        registry.ModelSpec: lambda: (registry.get_model("supermarket"),
                                     ["**supermarket**", "`lam`"]),
        registry.PaperSpec: lambda: (registry.get_paper("awp"), ["**awp**", "symq derive awp"]),
        registry.ModelKind: lambda: (registry.get_model_kind("window"), ["**window**",
                                                                          "`increase`"]),
        Verdict: verdict,
        Result: result,
        SweepResult: sweep_result,
        ConfidenceInterval: lambda: (ConfidenceInterval(2.0, 0.1, 0.95, 10, "batch_means"),
                                     ["2.00 ± 0.10"]),
        Approximate: lambda: (Approximate(2.0, 1e-6, "a quadrature"),
                              ["**2.0 ± 1.0e-6**", "a quadrature"]),
        Deterministic: lambda: (Deterministic(2.0), ["| `mean` | 2 |", "| `scv` | 0 |"]),
        # mean 12/4 = 3, variance (1 + 4 + 9 + 36)/4 - 3^2 = 3.5
        Empirical: lambda: (Empirical([1.0, 2.0, 3.0, 6.0]), ["| `mean` | 3 |",
                                                              "| `variance` | 3.5 |"]),
        Hyperexponential: lambda: (Hyperexponential([0.5, 0.5], [1.0, 2.0]),
                                   [f"| `mean` | {g(0.5 / 1 + 0.5 / 2)} |"]),
        Derivation: lambda: (derivation(), [r"\lambda", "### 1. Mean-field ODE"]),
        Step: step,
        CompiledFunction: compiled,
        Parameter: lambda: (Parameter("lam", PositiveReal(), typical=0.5,
                                      description="arrival rate"), ["`lam`", "arrival rate"]),
        LoadedFile: lambda: (load_claims_file(Path(__file__).resolve().parent.parent / "examples"
                                              / "claims" / "priority_mg1.toml"),
                             ["**LoadedFile**", "`cobham-1954`", "| `np-low` |",
                              "Kleinrock's conservation law"]),
    }


def _me() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    from symq.laws import PhaseType, ScipyLaw
    from symq.me import (
        ME,
        Candidate,
        Certificate,
        FitReport,
        PadeResult,
        RationalLST,
        Target,
        WaitingTime,
        WaitingTimeEstimate,
        certify,
        fit,
        mg1_waiting_time,
        pade_fit,
        simulate_mg1_waiting,
    )
    from symq.me import model as me_model
    from symq.me.certification.factorisation import ExactProof
    from symq.me.mg1 import MG1Simulation, solve_mg1_sim

    s = sp.Symbol("s")

    def pade():
        r = pade_fit([1, "3/2", 3])              # Erlang(2, 2): 4/(s + 2)^2
        return r, [f"$f^*(s) = {sp.latex(4 / (s**2 + 4 * s + 4))}$"]

    def report():
        _, rep = fit(ME.erlang(2, 2).moments(3), order_max=2)
        return rep, ["**(chosen)**"]

    def candidate():
        _, rep = fit(ME.erlang(2, 2).moments(3), order_max=2)
        return rep.best, ["NONNEGATIVE", "| `order` | 2 |"]

    def waiting():
        # M/M/1, lam = 1/2, mu = 1: E[W] = rho/(mu - lam) = 1, W | W > 0 ~ Exp(mu - lam)
        w = mg1_waiting_time(ME.exponential(1), sp.Rational(1, 2))
        return w, ["| `EW` | 1 |", sp.latex(sp.Rational(1, 2) / (s + sp.Rational(1, 2)))]

    def waiting_sim():
        est = simulate_mg1_waiting(ME.exponential(1), 0.5, [1.0], n_jobs=4000, n_batches=5, rng=3)
        return est, [str(est.EW), "| `P(W > 1)` |"]

    def me_fit():
        # moments 1, 3/2, 3 are Erlang(2, 2)'s: f*(s) = 4/(s + 2)^2, a double pole at -2
        r = me_model.solve((1, Fraction(3, 2), 3))
        return r, ["| `order` | 2 |", "NONNEGATIVE", "re=-2, im=0, multiplicity=2"]

    def mg1_sim():
        # M/M/1, lam = 1/2, mu = 1: E[W] = rho/(mu - lam) = 1, E[T] = 1/(mu - lam) = 2
        r = solve_mg1_sim(0.5, n_jobs=4000, n_batches=5, rng=3)
        return r, [f"| `EW_exact` | {g(0.5 / (1 - 0.5))} |", f"| `ET_exact` | {g(1 / (1 - 0.5))} |"]

    from symq.me.transforms import Inversion, Transform, TransformMoments, invert, moments

    def transform():
        return (Transform("mu/(mu + s)", parameters=("mu",)),
                ["**Transform**", r"\frac{\mu}{\mu + s}"])

    def transform_moments():
        # Exp(2): E X^k = k!/2^k
        r = moments(Transform("mu/(mu + s)", parameters=("mu",)), 3, {"mu": 2})
        return r, ["**TransformMoments**", "[0.5, 0.5, 0.75]"]

    def inversion():
        # the tail of Exp(1) at t = 1 is e^{-1} = 0.367879...
        r = invert(Transform("1/(1 + s)"), [1.0], what="ccdf", digits=8)
        return r, ["**Inversion**", "0.367879"]

    def transform_outputs():
        from symq.me.transforms.declared import DeclaredTransform, TransformOutputs

        solver = DeclaredTransform("mm1", "models.mm1", {
            "transform": "mu/(mu + s)", "operation": "waiting-time",
            "outputs": {"EW": "moment:1"}}, ("mu", "lam"))
        r = solver(mu=1.0, lam=0.5)
        assert isinstance(r, TransformOutputs)
        return r, ["**TransformOutputs**", "| `values` | EW=1 |"]      # rho/(mu - lam) = 1

    from symq.me.transforms.declared import TransformOutputs

    def gi_m1():
        from symq.me.gg1 import GIM1Waiting, gi_m1_waiting

        # Poisson arrivals: M/M/1 with sigma = rho = 1/2, E W = rho/(mu - lam) = 1
        r = gi_m1_waiting(Transform("lam/(lam + s)", parameters=("lam",)), 1.0, {"lam": 0.5})
        assert isinstance(r, GIM1Waiting)
        return r, ["**GIM1Waiting**", "| `sigma` | 0.5 |", "| `EW` | 1 |"]

    def gg1_refs():
        from symq.me.gg1 import gg1_references

        # M/M/1 at rho = 1/2: K_u = (1/2)(4 + 1)/(2 (1/2)) = 2.5; Marshall = E W = 1
        return gg1_references(2.0, 4.0, 1.0, 1.0), ["| `kingman_upper` | 2.5 |",
                                                     "| `marshall` | 1 |"]

    def transform_fit():
        from symq.me.transforms import fit_transform

        # Erlang(2, rate 2): the fit is the law itself, order 2, certified
        r = fit_transform(Transform("(2/(2 + s))^2"), order_max=2)
        return r, ["**TransformFit**", "| `order` | 2 |", "NONNEGATIVE"]

    def tails():
        from symq.me.transforms import pollaczek_khinchine, tail_asymptotics

        # M/M/1 waiting time: P(W > t) = rho exp(-(mu - lam) t), rho = 1/2, decay 1/2
        w = pollaczek_khinchine(Transform("mu/(mu + s)", parameters=("mu",)), "lam")
        r = tail_asymptotics(w, {"mu": 1.0, "lam": 0.5})
        return r, ["**TailAsymptotics**", "| `decay` | 0.5 |", "| `ccdf_prefactor` | 0.5 |"]

    def power():
        from symq.me.transforms import power_tail

        # 1/(1 + sqrt(s)): P(X > t) ~ t^{-1/2}/sqrt(pi), 1/sqrt(pi) = 0.564190
        r = power_tail(Transform("1/(1 + sqrt(s))"))
        return r, ["**PowerTail**", "| `index` | 0.5 |", "0.56419"]

    def gg1_spectral():
        from symq.me.gg1_spectral import gi_g1_waiting

        # M/M/1 by spectral factorisation: E W = rho/(mu - lam) = 1, P(W > 0) = rho = 1/2
        r = gi_g1_waiting(Transform("lam/(lam + s)", parameters=("lam",)),
                          Transform("mu/(mu + s)", parameters=("mu",)), {"lam": 0.5, "mu": 1.0})
        return r, ["**GG1Waiting**", "| `EW` | 1 |", "| `P_wait` | 0.5 |"]

    def gg1_outputs():
        from symq.me.gg1_declared import DeclaredGG1

        # M/M/1 declared by its two transforms: sigma = rho = 1/2, E W = 1
        r = DeclaredGG1("models.mm1", {"interarrival": "lam/(lam + s)", "service_rate": "mu"},
                        ("lam", "mu"))(lam=0.5, mu=1.0)
        return r, ["**GG1Outputs**", "| `sigma` | 0.5 |", "| `EW` | 1 |"]

    def pole_certificate():
        import sympy as sp

        from symq.me.transforms.certify import certify_rational_pole

        s = sp.Symbol("s")        # poles -1 and -2: the rightmost, -1, isolated exactly
        r = certify_rational_pole(sp.Integer(2), s**2 + 3 * s + 2, s)
        return r, ["**PoleCertificate**", "| `certified` | True |", "| `low` | -1 |"]

    def phph1():
        from symq.laws import Exponential
        from symq.me.phph1 import ph_ph1_waiting

        # M/M/1 as a QBD: E W = rho/(mu - lam) = 1, P(W > 0) = rho = 1/2
        r = ph_ph1_waiting(Exponential(2.0), Exponential(1.0))
        return r, ["**PHPH1Waiting**", "| `P_wait` | 0.5 |"]

    def gg1_sim():
        from symq.me.gg1_sim import solve_gg1_sim

        # M/M/1 at load 1/2: the exact E W is 1 by both routes
        r = solve_gg1_sim(0.5, n_jobs=200_000, rng=1)
        return r, ["**GG1Simulation**", "| `EW_exact` | 1 |", "| `EW_matrix` | 1 |"]

    from symq.me.gg1 import GG1References, GIM1Waiting
    from symq.me.gg1_declared import GG1Outputs
    from symq.me.gg1_sim import GG1Simulation
    from symq.me.gg1_spectral import GG1Waiting
    from symq.me.phph1 import PHPH1Waiting
    from symq.me.transforms import PowerTail, TailAsymptotics, TransformFit
    from symq.me.transforms.certify import PoleCertificate

    return {
        PowerTail: power,
        PHPH1Waiting: phph1,
        PoleCertificate: pole_certificate,
        GG1Simulation: gg1_sim,
        GG1Waiting: gg1_spectral,
        TransformFit: transform_fit,
        TailAsymptotics: tails,
        GG1Outputs: gg1_outputs,
        GIM1Waiting: gi_m1,
        GG1References: gg1_refs,
        TransformOutputs: transform_outputs,
        Transform: transform,
        TransformMoments: transform_moments,
        Inversion: inversion,
        ME: lambda: (ME.erlang(2, 3), [r"\frac{9}{s^{2} + 6 s + 9}", "| `mean` | 2/3 |"]),
        RationalLST: lambda: (ME.erlang(2, 3).lst, [r"\frac{9}{s^{2} + 6 s + 9}"]),
        PadeResult: pade,
        FitReport: report,
        Candidate: candidate,
        Target: lambda: (Target((1, 3, 15)), ["**Target**", "[1, 3, 15]"]),
        Certificate: lambda: (certify(ME.erlang(2, 3)), ["NONNEGATIVE"]),
        # e^{-t}(1 - (4/3) e^{-t})^2: the square in x = e^{-t}, touching at ln(4/3) = 0.28768...
        ExactProof: lambda: (certify(RationalLST.from_expr(
            sp.Rational(27, 7) * (1 / (s + 1) - sp.Rational(8, 3) / (s + 2)
                                 + sp.Rational(16, 9) / (s + 3)))).proof,
            ["**Exact proof", "(4*x - 3)^2: even power", "0.2876820725"]),
        WaitingTime: waiting,
        WaitingTimeEstimate: waiting_sim,
        me_model.MEFit: me_fit,
        MG1Simulation: mg1_sim,
        PhaseType: lambda: (PhaseType([0.3, 0.7], [[-2.0, 1.0], [0.0, -3.0]], name="demo"),
                            # mean alpha (-A)^{-1} 1 = 0.3 (1/2 + 1/6) + 0.7/3
                            [g(0.3 * (0.5 + 1 / 6) + 0.7 / 3), r"\alpha"]),
        ScipyLaw: lambda: (ScipyLaw(__import__("scipy").stats.expon(scale=2.0), name="exp"),
                           ["| `mean` | 2 |"]),
    }


def _dispatch() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    from symq.dispatch import (
        DispatchEstimate,
        DispatchPolicy,
        DispatchVIEstimate,
        ExactResult,
        ResponseBySize,
        RichardsonResult,
        ScorePolicy,
        VIResult,
        evaluate_policy,
        exact_mean_response,
        get_policy,
        response_by_size_data,
        richardson,
        score_policy,
        simulate_dispatch,
        solve_accurate,
    )
    from symq.dispatch.vi.by_size import VIResponseBySize, response_by_size_vi
    from symq.laws import Exponential

    X = Exponential(1.0)

    def vi():
        r = evaluate_policy("rnd", 2, 0.5, X, delta=0.4, U=12.0, tol=1e-8)
        assert abs(r.ET - 2.0) < 0.05                  # two M/M/1 queues at load 1/2
        return r, [f"{g(r.ET)} in [{g(r.ET_low)}, {g(r.ET_high)}]"]

    def rich():
        r = richardson(evaluate_policy, "rnd", 2, 0.5, X, delta=0.4, U=12.0, tol=1e-8)
        assert abs(r.ET - 2.0) <= r.error_estimate
        return r, [f"{g(r.ET)} ± {r.error_estimate:.2g}"]

    def accurate():
        r = solve_accurate(2, 0.5, X, policy="rnd", rtol=1e-2)
        assert abs(r.ET - 2.0) <= 3 * r.error_estimate
        return r, [f"{g(r.ET)} ± {r.error_estimate:.2g}"]

    def estimate():
        e = simulate_dispatch("lwl", 2, 0.5, X, n_jobs=20_000, n_batches=10, rng=4, level=0.999)
        assert e.ET.contains(1 / (1 - 0.25))            # M/M/2 at load 1/2
        return e, [str(e.ET)]

    def by_size_vi():
        r = response_by_size_vi("rnd", 2, 0.5, X, bins=3, delta=0.4, U=12.0)
        return r, [g(r.ET)]

    def by_size():
        r = response_by_size_data("lwl", 2, 0.5, X, bins=2, n_jobs=20_000, n_batches=5, rng=2)
        return r, [str(r.ET[0])]

    def exact():
        r = exact_mean_response("lwl", 2, 0.5, X)
        return r, [g(1 / (1 - 0.25))]                   # M/M/2 (Erlang C)

    def generic():
        from symq.dispatch.vi import GenericDispatchSolution, solve_generic
        from symq.laws import Uniform

        r = solve_generic(0.3, Uniform(0.0, 2.0), 0.5, 8.0, "pi")
        assert isinstance(r, GenericDispatchSolution)
        # 17 * 18 / 2 = 153 sorted backlog pairs (U / delta = 16), then 153 x 5 size atoms
        return r, ["**GenericDispatchSolution**", "| `n_states` | 918 |"]

    from symq.dispatch.vi import GenericDispatchSolution

    return {
        GenericDispatchSolution: generic,
        ExactResult: exact, VIResult: vi, RichardsonResult: rich, DispatchVIEstimate: accurate,
        DispatchEstimate: estimate, VIResponseBySize: by_size_vi, ResponseBySize: by_size,
        DispatchPolicy: lambda: (get_policy("lwl"), ["**DispatchPolicy** lwl"]),
        ScorePolicy: lambda: (score_policy("mine", "u + beta*x", {"beta": 0.5}),
                              [r"\beta x + u_{i}"]),
    }


def _meanfield() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    from symq.markov.level_reduction import QBDSolution
    from symq.meanfield import (
        FixedPoint,
        JSQEstimate,
        JSQPHFixedPoint,
        PopulationProcess,
        PopulationStability,
        RefinedJSQ,
        RefinedTerms,
        SupermarketFixedPoint,
        TailScan,
        Trajectory,
        bistable,
        jsq_exponential_qbd,
        jsq_process,
        refined_jsq,
        relative_entropy_trajectory,
        simulate_jsq,
        solve_jsq_ph,
        solve_supermarket,
        tail_regime_scan,
    )
    from symq.meanfield.attained import (
        AttainedEstimate,
        AttainedFixedPoint,
        Policy,
        get_policy,
        simulate_policy,
        solve_attained,
    )
    from symq.meanfield.convergence import (
        ConvergenceRate,
        MG1Comparison,
        convergence_rate,
        mg1_comparison,
    )
    from symq.meanfield.declared import _parse
    from symq.meanfield.declared_solve import Declaration
    from symq.meanfield.equilibria import (
        Equilibrium,
        EquilibriumSet,
        LimitCycle,
        LimitSetSurvey,
        equilibria,
        limit_sets,
    )
    from symq.meanfield.expansion import MeanFieldExpansion, TransientExpansion
    from symq.meanfield.nonlinear import LyapunovCheck, NonlinearFixedPoint
    from symq.meanfield.service_fit import PHApproximation, fit_phase_type

    def schlogl_set():
        return equilibria(bistable.schlogl_process(), bistable.schlogl_parameters())

    def hopf_cycle():
        mu, w = sp.Rational(1, 25), 2
        process = PopulationProcess(2, name="Hopf")
        x, y = process.variables
        u, v = x - sp.Rational(1, 2), y - sp.Rational(1, 2)
        r2 = u**2 + v**2
        process.add_transition((1, 0), mu * u - w * v - r2 * u)
        process.add_transition((0, 1), w * u + mu * v - r2 * v)
        survey = limit_sets(process, grid=2, t_max=60.0)
        assert survey.cycles, survey.counts
        return survey.cycles[0], [g(survey.cycles[0].period)]
    from symq.core.parameters import Parameter, PositiveReal
    from symq.laws import Empirical
    from symq.meanfield.supermarket import LAM as LAM_SYMBOL

    ET = supermarket_ET(2, LAM)
    pp = jsq_process(2, 8)
    point = {LAM_SYMBOL: LAM}

    def fixed_point():
        fp = pp.fixed_point(np.zeros(8), point)
        assert abs(fp.x[0] - LAM) < 1e-9               # u_1 = lam
        return fp, ["**FixedPoint**", g(fp.residual)]

    def attained():
        r = solve_attained("SQ", 2, LAM, exponential_ph(), delta=0.5, rep_max=5.0, B=20)
        assert abs(r.ET - ET) < 1e-3                   # SQ(d) with Exp(1) sizes is JSQ(d)
        return r, [g(r.ET)]

    def attained_sim():
        r = simulate_policy("SQ", 20, 2, LAM, exponential_ph(), n_jobs=8000, rng=1, n_batches=5)
        return r, [str(r.ET)]

    def refined():
        r = refined_jsq(2, LAM, 50)
        assert abs(r.ET - ET) < 1e-9                   # the mean-field part is the closed form
        return r, [g(r.ET_N)]

    def jsq_ph():
        r = solve_jsq_ph(2, LAM, exponential_ph())
        assert abs(r.ET - ET) < 1e-8                   # PH = Exp(1): the supermarket model
        return r, [g(r.ET)]

    def declaration():
        decl = _parse("sis", {"variables": ["i"], "transitions": [
            {"jump": [1], "rate": "beta*i*(1 - i)"}, {"jump": [-1], "rate": "gamma*i"}]},
            tuple(Parameter(n, PositiveReal(), typical=1.0) for n in ("beta", "gamma")),
            "models.sis")
        return decl, ["**Declaration** sis", r"\beta"]

    return {
        SupermarketFixedPoint: lambda: (solve_supermarket(2, LAM), [g(ET)]),
        RefinedJSQ: refined,
        JSQPHFixedPoint: jsq_ph,
        JSQEstimate: lambda: by(simulate_jsq(20, 2, LAM, n_jobs=8000, n_batches=5, rng=1),
                                lambda e: [str(e.ET)]),
        TailScan: lambda: by(tail_regime_scan(2, 0.5, 2.0, phases=(3, 5, 7)),
                             lambda t: [g(t.ET[0])]),
        PopulationProcess: lambda: (pp, [r"\lambda", "transition(s)"]),
        FixedPoint: fixed_point,
        PopulationStability: lambda: by(pp.stability(pp.fixed_point(np.zeros(8), point).x, point),
                                        lambda s: [g(s.max_real)]),
        RefinedTerms: lambda: by(pp.refined_terms(pp.fixed_point(np.zeros(8), point).x, point),
                                 lambda r: [g(r.max_real)]),
        MeanFieldExpansion: lambda: by(pp.refined(pp.fixed_point(np.zeros(8), point).x, point,
                                                  order=2), lambda r: [g(r.max_real)]),
        TransientExpansion: lambda: (pp.refined_transient(np.zeros(8), [0.5, 1.0], point),
                                     ["**TransientExpansion**"]),
        Trajectory: lambda: (pp.ode(np.zeros(8), [0.0, 1.0], point), ["**Trajectory**"]),
        NonlinearFixedPoint: lambda: by(jsq_exponential_qbd(2, 0.5).fixed_point(
            [np.array([1.0])]), lambda f: [g(f.residual)]),
        QBDSolution: _qbd_solution,
        LyapunovCheck: lambda: by(relative_entropy_trajectory(2, 0.5, K=4, t_final=1.0,
                                                              n_times=5),
                                  lambda c: [g(c.max_increase)]),
        AttainedFixedPoint: attained,
        AttainedEstimate: attained_sim,
        Policy: lambda: (get_policy("LAS"), ["**Policy** LAS"]),
        Declaration: declaration,
        EquilibriumSet: lambda: by(schlogl_set(), lambda e: ["stable", "unstable"]),
        Equilibrium: lambda: by(schlogl_set().equilibria[1], lambda e: ["unstable"]),
        LimitSetSurvey: lambda: by(limit_sets(bistable.schlogl_process(),
                                              bistable.schlogl_parameters(), grid=2, t_max=20.0),
                                   lambda v: ["equilibrium"]),
        LimitCycle: hopf_cycle,
        ConvergenceRate: lambda: by(convergence_rate(2, 0.5, starts=("empty",)),
                                    lambda c: [g(c.rate_predicted)]),
        MG1Comparison: lambda: by(mg1_comparison(1, 0.5, levels=3),
                                  lambda m: [g(m.max_relative_difference)]),
        PHApproximation: lambda: by(fit_phase_type(Empirical([0.5, 1.0, 1.5, 3.0]), order_max=1),
                                    lambda a: [a.method, g(a.distance)]),
    }


def _qbd_solution() -> tuple[Any, list[str]]:
    from symq.markov.level_reduction import LevelDependentQBD

    # M/M/1 at load 1/2 as a QBD with one phase: p_k = (1/2)^k / 2
    qbd = LevelDependentQBD(1, 1, up=lambda k: np.array([[0.5]]), local=lambda k: np.array(
        [[-0.5 if k == 0 else -1.5]]), down=lambda k: np.array([[1.0]]))
    sol = qbd.solve_truncated(30)
    assert abs(float(sol.levels[1][0]) - 0.25) < 1e-8
    return sol, ["**QBDSolution**", g(sol.top_mass)]


def _routing() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    from symq.routing import (
        Allocation,
        ClosedForms,
        FarmEstimate,
        NumericSolution,
        PiecewiseLoads,
        PSQueueEstimate,
        ServerFarm,
        UnboundedFamily,
        closed_forms,
        minimize_social_cost,
        piecewise_loads,
        simulate_farm,
        simulate_ps_queue,
        social_optimum,
        unbounded_family,
    )
    from symq.routing.declared import DeclaredCost, _analyse, _formula

    # C = (4, 2, 1), w = (1, 2, 4), rho = 5 > 4: every server used, sqrt(w_j C_j) = 2, so
    # J* = (sum sqrt(w C))^2 / (sum C - rho) - sum w = 36/2 - 7 = 11
    farm = ([4.0, 2.0, 1.0], [1.0, 2.0, 4.0], 5.0)

    def ps():
        e = simulate_ps_queue(0.5, 1.0, n_jobs=5000, n_batches=5, rng=1)
        return e, [str(e.ET)]

    def declared_cost():
        names = ("x", "C", "w")
        cost = _formula("models.ps.cost", "w*x/(C - x)", names)
        return _analyse(cost, _formula("models.ps.capacity", "C", names[1:]), ("C", "w")), [
            r"\frac{w x}{C - x}"]

    h = 4.0
    return {
        Allocation: lambda: (social_optimum(*farm), ["| `cost` | 11 |"]),
        NumericSolution: lambda: (minimize_social_cost(*farm), [g(11.0)]),
        UnboundedFamily: lambda: (unbounded_family(h), [g((h + 1) * (math.sqrt(h) + 1) / (
            2 * h + math.sqrt(h) + 1))]),
        ClosedForms: lambda: (closed_forms(), [sp.latex(closed_forms().opt_cost)]),
        PiecewiseLoads: lambda: (piecewise_loads((4, 2, 1), (1, 2, 4)), ["[2, 4]"]),
        PSQueueEstimate: ps,
        FarmEstimate: lambda: by(simulate_farm([2.0, 1.0], [1.0, 1.0], [1.0, 0.5],
                                               n_jobs_per_server=4000, n_batches=5, rng=1),
                                 lambda e: [str(e.social_cost)]),
        ServerFarm: lambda: (ServerFarm(farm[0], farm[1]), ["[0.25, 1, 4]"]),
        DeclaredCost: declared_cost,
    }


def _window() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    from symq.core.parameters import Parameter, PositiveReal
    from symq.window import (
        DeclaredWindow,
        MIMDFloor,
        Ordering,
        PowerLawParameters,
        PowerLawWindow,
        WindowEstimate,
        WindowLaw,
        WindowProtocol,
        WindowSolution,
        WindowStability,
        compare,
        newreno,
        scalable,
        simulate_protocol,
        solve_protocol,
        solve_window,
        stability,
    )
    from symq.window.declared import parse_window

    p = 1e-2
    tcp = newreno(p)
    # drift balance E[a(W)] = E[lam(W) b(W) W]: 1 = p/2 E[W^2], so E[W^2] = 2/p = 200

    def numeric():
        sol = solve_window(lambda w: np.ones_like(w), lambda w: p * w, lambda w: w / 2,
                           rtol=1e-4)
        assert abs(sol.mean_square_window / (2 / p) - 1) < 1e-3
        return sol, [f"{g(sol.mean_window)} (relative error"]

    def estimate():
        e = simulate_protocol(tcp, n_losses=5000, n_batches=5, rng=1)
        return e, [str(e.mean_window)]

    def power_law():
        law = PowerLawWindow(1.0, 0.0, p, 1.0, 0.5)     # NewReno's profiles
        assert float(law.moment(2)) == pytest.approx(2 / p, rel=1e-9)
        return law, [f"| `mean` | {g(float(law.mean()))} |"]

    def declared():
        d = parse_window("my-tcp", {"increase": "1", "loss": "p*w", "after_loss": "c*w"},
                         (Parameter("c", PositiveReal(), typical=0.5),), "models.my-tcp")
        return d, ["**DeclaredWindow** my-tcp", r"\lambda{\left(w \right)} = p w"]

    return {
        WindowLaw: lambda: (solve_protocol(tcp), ["| `mean_square_window` | 200 |"]),
        WindowSolution: numeric,
        WindowStability: lambda: (stability(tcp), ["stable"]),
        WindowEstimate: estimate,
        Ordering: lambda: (compare(newreno(p), scalable(p), points=20), ["**Ordering**"]),
        WindowProtocol: lambda: (tcp, [r"\lambda{\left(w \right)} = 0.01 w"]),
        PowerLawParameters: lambda: (tcp.power_law(), ["| `gamma` | 0.01 |"]),
        PowerLawWindow: power_law,
        MIMDFloor: lambda: (MIMDFloor(0.1, 1.0, 0.5, 1.0), ["| `support` | [1, inf) |"]),
        DeclaredWindow: declared,
    }


def _laws() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    """The named laws of :mod:`symq.laws.continuous`: the title (class and vocabulary name),
    mean, variance, SCV and support of :func:`symq.laws.protocol.distribution_markdown`, from the
    textbook moments of each family."""
    from symq.laws.continuous import (
        Erlang,
        Exponential,
        Gamma,
        Lognormal,
        Lomax,
        Pareto,
        Uniform,
        Weibull,
    )

    def row(key: str, value: float) -> str:
        return f"| `{key}` | {g(value)} |"

    return {
        # Exp(mean 2): variance mean^2
        Exponential: lambda: (Exponential(2.0), ["**Exponential** exp", row("mean", 2.0),
                                                 row("variance", 4.0), row("scv", 1.0),
                                                 "| `support` | [0, inf) |"]),
        # Erlang(3, mean 3): rate k/m = 1, variance k/rate^2 = 3, SCV 1/k
        Erlang: lambda: (Erlang(3, 3.0), ["**Erlang** erlang", row("mean", 3.0),
                                          row("variance", 3.0), row("scv", 1 / 3)]),
        # Gamma(shape 2, mean 4): variance m^2/a = 8, SCV 1/a
        Gamma: lambda: (Gamma(2.0, 4.0), ["**Gamma** gamma", row("variance", 8.0),
                                          row("scv", 0.5)]),
        # lognormal of mean 1, SCV 1/2: variance c^2 m^2
        Lognormal: lambda: (Lognormal(1.0, 0.5), ["**Lognormal** lognormal", row("mean", 1.0),
                                                  row("variance", 0.5)]),
        # Weibull(shape 2, mean 1): variance m^2 (Gamma(2)/Gamma(3/2)^2 - 1) = 4/pi - 1
        Weibull: lambda: (Weibull(2.0, 1.0), ["**Weibull** weibull", row("mean", 1.0),
                                              row("variance", 4 / math.pi - 1)]),
        # Pareto(shape 3, mean 3/2): x_m = m (a - 1)/a = 1, variance x_m^2 a/((a-1)^2 (a-2))
        Pareto: lambda: (Pareto(3.0, 1.5), ["**Pareto** pareto", row("variance", 0.75),
                                            "| `support` | [1, inf) |"]),
        # Lomax(shape 3, mean 1): s = m (a - 1) = 2, variance s^2 a/((a-1)^2 (a-2)) = 3
        Lomax: lambda: (Lomax(3.0, 1.0), ["**Lomax** lomax", row("mean", 1.0),
                                          row("variance", 3.0)]),
        # uniform on [1, 3]: mean 2, variance (b - l)^2/12 = 1/3
        Uniform: lambda: (Uniform(1.0, 3.0), ["**Uniform** uniform", row("mean", 2.0),
                                              row("variance", 1 / 3), "| `support` | [1, 3] |"]),
    }


def _registered() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    """The typed results of the registered models, as ``symq solve`` gets them."""
    from symq.core import registry
    from symq.dispatch.declared import DispatchSimulation
    from symq.dispatch.model import DispatchSolution
    from symq.meanfield.attained.model import AttainedPolicyMeans
    from symq.meanfield.results import JSQPHComparison
    from symq.routing.model import FarmRouting, PSSimComparison
    from symq.window.model import ProtocolSolution
    from symq.window.simmodel import ProtocolSimulation

    def solved(name: str, **given: Any) -> Any:
        spec = registry.get_model(name)
        params = {p.name: p.typical for p in spec.parameters
                  if p.required and p.typical is not None}
        return spec.run({**params, **given}, rng=1).outcome

    def dispatch():
        r = solved("dispatch", m=2, rho=0.5, policy="lwl")
        return r, [g(1 / (1 - 0.25))]                      # M/M/2 (Erlang C)

    def dispatch_sim():
        r = solved("dispatch-sim", m=1, rho=0.5, policy="rnd", n_jobs=20_000)
        assert r.ET.contains(2.0)                          # M/M/1 at load 1/2
        return r, ["**DispatchSimulation**"]

    def jsq_ph():
        r = solved("jsq-ph", d=2, lam=0.5, scv=1.0)
        return r, ["**JSQPHComparison**"]

    return {
        DispatchSolution: dispatch, DispatchSimulation: dispatch_sim, JSQPHComparison: jsq_ph,
        AttainedPolicyMeans: lambda: (solved("attained"), ["**AttainedPolicyMeans**"]),
        FarmRouting: lambda: (solved("ps-routing"), ["**FarmRouting**"]),
        PSSimComparison: lambda: (solved("ps-sim", n_jobs=20_000), ["**PSSimComparison**"]),
        ProtocolSolution: lambda: (solved("awp", protocol="newreno", p=0.01),
                                   ["**ProtocolSolution**"]),
        ProtocolSimulation: lambda: (solved("window-sim", protocol="newreno", p=0.01,
                                            n_losses=20_000),
                                     ["**ProtocolSimulation**"]),
    }


def _markov() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    import scipy.sparse as sps

    from symq.markov import (
        ExactStationaryLaw,
        Jump,
        MarkovChain,
        MatrixGeometricLaw,
        QBDStationaryLaw,
        StateVariable,
        StationaryLaw,
        exact_stationary,
        qbd_stationary,
        solve_qbd,
        stationary,
    )
    from symq.markov.library import mm1k
    from symq.markov.passage import PassageTime, passage_time
    from symq.markov.sensitivity import StationarySensitivity, sensitivity
    from symq.markov.simulation import CTMCEstimate, simulate_ctmc
    from symq.markov.symbolic import SymbolicStationaryLaw, symbolic_stationary
    from symq.markov.transient import TransientLaw, transient

    def law():
        # M/M/1/3 at rho = 1/2: pi proportional to 1, 1/2, 1/4, 1/8; P(full) = 1/15
        r = stationary(mm1k(3), {"lam": 1.0, "mu": 2.0})
        assert abs(r["P_block"] - 1 / 15) < 1e-14
        return r, ["**StationaryLaw**", "| `n_states` | 4 |"]

    def exact():
        r = exact_stationary(mm1k(3), {"lam": 1, "mu": 2})
        return r, ["**ExactStationaryLaw**", "| `n_states` | 4 |"]

    def simulated():
        Q = sps.csr_matrix([[0.0, 1.0], [2.0, 0.0]])      # two states, pi = (2/3, 1/3)
        r = simulate_ctmc(Q, {"P1": [0.0, 1.0]}, n_events=200_000, rng=1)
        assert r["P1"].contains(1 / 3)
        return r, ["**CTMCEstimate**"]

    def transient_law():
        # M/M/1/1 is a two-state chain: P(full at t) = lam/(lam+mu) (1 - e^{-(lam+mu) t})
        r = transient(mm1k(1), {"lam": 1.0, "mu": 2.0}, 0.5)
        assert abs(r["P_block"] - (1 - math.exp(-1.5)) / 3) < 1e-10
        return r, ["**TransientLaw**", "| `t` | 0.5 |", "| `terms` |"]

    def passage():
        # M/M/1/3 from 0 up to 3: T(0->1) = 1, T(1->2) = 1 + 2*1, T(2->3) = 1 + 2*3; sum 11
        r = passage_time(mm1k(3), {"lam": 1.0, "mu": 2.0}, "n == 3")
        assert abs(r.mean - 11.0) < 1e-12
        return r, ["**PassageTime**", "| `mean` | 11 |"]

    def symbolic():
        # M/M/1/2: pi proportional to mu^2, lam mu, lam^2 (birth-death products)
        r = symbolic_stationary(mm1k(2))
        lam, mu = sp.symbols("lam mu", real=True)
        assert sp.simplify(r["P_block"] - lam**2 / (lam**2 + lam * mu + mu**2)) == 0
        return r, ["**SymbolicStationaryLaw**", "| `n_states` | 3 |", "| `reversible` | True |"]

    def stationary_sensitivity():
        # M/M/1/1: P_block = lam/(lam + mu), d/dlam = mu/(lam + mu)^2 = 2/9 at lam = 1, mu = 2
        r = sensitivity(mm1k(1), {"lam": 1.0, "mu": 2.0}, "lam")
        assert abs(r["P_block"] - 2 / 9) < 1e-14
        return r, ["**StationarySensitivity**", "| `parameter` | lam |"]

    def qbd_blocks():
        # M/M/1 at rho = 1/2 as a one-phase QBD: R = rho = 1/2, E[N] = rho/(1 - rho) = 1
        def one(x):
            return np.array([[x]])

        r = solve_qbd(one(-1.0), one(1.0), one(2.0), one(1.0), one(-3.0), one(2.0))
        assert abs(r.eta - 0.5) < 1e-13 and abs(r.mean_level - 1.0) < 1e-12
        return r, ["**MatrixGeometricLaw**", "| `eta` | 0.5 |"]

    def qbd_declared():
        mm1 = MarkovChain([StateVariable("n", 0, None)],
                          [Jump("lam", {"n": "n + 1"}), Jump("mu", {"n": "n - 1"}, guard="n > 0")],
                          parameters=("lam", "mu"), outputs={"EN": "n"})
        r = qbd_stationary(mm1, {"lam": 1.0, "mu": 2.0})
        assert abs(r["EN"] - 1.0) < 1e-12            # rho/(1 - rho), rho = 1/2
        return r, ["**QBDStationaryLaw**", "| `mean_level` | 1 |"]

    def mdp_solution():
        from symq.markov.mdp import MDPSolution, solve_mdp
        from symq.markov.mdp.library import naor

        # Naor (1969): rho = 1/1.2, R mu / C = 12 lies between f(4) = 8.47 and f(5) = 12.06
        r = solve_mdp(naor(), {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0})
        assert isinstance(r, MDPSolution) and r["threshold"] == 4
        return r, ["**MDPSolution**", "| `n_states` | 65 |"]

    def stationary_policy():
        from symq.markov.mdp import solve_mdp
        from symq.markov.mdp.library import naor

        r = solve_mdp(naor(), {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0}).policy
        assert r.action(n=3) == "admit" and r.action(n=4) == "reject"
        return r, ["**StationaryPolicy**", "| `n_states` | 65 |"]

    from symq.markov.mdp import MDPSolution, StationaryPolicy

    return {MDPSolution: mdp_solution, StationaryPolicy: stationary_policy,
            MatrixGeometricLaw: qbd_blocks, QBDStationaryLaw: qbd_declared,
            StationaryLaw: law, ExactStationaryLaw: exact, CTMCEstimate: simulated,
            TransientLaw: transient_law, PassageTime: passage, SymbolicStationaryLaw: symbolic,
            StationarySensitivity: stationary_sensitivity}


def builders() -> dict[type, Callable[[], tuple[Any, list[str]]]]:
    out: dict[type, Callable[[], tuple[Any, list[str]]]] = {}
    for part in (_core, _me, _laws, _dispatch, _meanfield, _routing, _window, _markov,
                 _registered):
        out.update(part())
    return out


BUILDERS = builders()

#: Public classes without a display of their own, and why.
EXEMPT = {
    "ResultBase": "the base of the results (every subclass is built here)",
    "Distribution": "the abstract base of the laws (its subclasses are built here)",
    "NamedScipyLaw": "the abstract base of the named scipy laws (its subclasses are built here)",
    "FileClaim": "a Claim read from a claims file: Claim's display (built here)",
    "MarkdownDisplay": "the display mixin (every type using it is built here)",
    "DeclaredFixedPoint": "a claims-file kind's result: ResultBase's display (built here)",
    "DeclaredRouting": "a claims-file kind's result: ResultBase's display (built here)",
    "DispatchScoreResult": "a claims-file kind's result: ResultBase's display (built here)",
}


# ------------------------------------------------------------------ the walk
def public_classes() -> dict[str, type]:
    """Classes listed in an ``__all__`` of a symq module, defined in symq."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(symq.__path__, "symq."):
        if info.name.startswith("symq.__main__"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if inspect.isclass(value) and value.__module__.startswith("symq."):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def rich(cls: type) -> bool:
    return any(hasattr(cls, m) for m in ("_repr_markdown_", "_repr_latex_"))


def must_display(cls: type) -> bool:
    """A result-like dataclass (``to_dict``) or a class that already displays itself."""
    return (dataclasses.is_dataclass(cls) and hasattr(cls, "to_dict")) or rich(cls)


def test_every_public_dataclass_with_to_dict_has_a_rich_display():
    missing = [name for name, cls in public_classes().items()
               if dataclasses.is_dataclass(cls) and hasattr(cls, "to_dict") and not rich(cls)]
    assert not missing, f"give these a _repr_markdown_ (symq.core.display): {missing}"


def test_every_displayed_public_class_is_built_by_this_test():
    built = set(BUILDERS)
    missing = [name for name, cls in public_classes().items()
               if must_display(cls) and cls not in built and cls.__name__ not in EXEMPT]
    assert not missing, f"add a builder to tests/test_rich_display.py for: {missing}"


LONG_NUMBER = re.compile(r"\d{16,}")


def display(obj: Any) -> str:
    text = obj._repr_markdown_() if hasattr(obj, "_repr_markdown_") else obj._repr_latex_()
    assert isinstance(text, str) and text.strip()
    return text


@pytest.mark.parametrize("cls", list(BUILDERS), ids=lambda c: c.__name__)
def test_each_instance_shows_its_main_values_rounded(cls):
    obj, expected = BUILDERS[cls]()
    assert isinstance(obj, cls)
    text = display(obj)
    assert text.startswith(("**", "$", "#", "2.00")), text[:80]   # a bold title (or math)
    assert not LONG_NUMBER.search(text), LONG_NUMBER.search(text)
    for piece in expected:
        assert piece in text, (piece, text)
    if hasattr(obj, "_repr_latex_") and not isinstance(obj, sp.Basic):
        assert not LONG_NUMBER.search(obj._repr_latex_())


# ------------------------------------------------------------------ decimal fits, derivations
def test_a_fit_from_decimal_moments_prints_short_and_keeps_its_exact_coefficients():
    from symq.me import ME, from_moments, pade_fit

    X = from_moments((0.7, 1.13, 2.9))
    exact = X.lst.numerator + X.lst.denominator
    assert max(len(str(c)) for c in exact) > 40        # the fit's rationals are long
    for text in (repr(X), X._repr_latex_(), X._repr_markdown_(), X.lst._repr_latex_(),
                 pade_fit((0.7, 1.13, 2.9))._repr_markdown_()):
        assert not LONG_NUMBER.search(text), text
    assert len(repr(X)) < 80
    # the shown coefficients are the exact ones rounded to 6 digits; the exact ones are kept
    b0 = X.lst.numerator[0]
    assert g(float(b0)) in repr(X)
    assert ME.from_transform(*(tuple(sp.Rational(c) for c in X.to_dict()[k])
                               for k in ("numerator", "denominator"))) == X
    assert float(X.mean()) == pytest.approx(0.7, rel=1e-12)
    # small exact rationals stay exact
    assert "3/2" in repr(ME.from_expr(sp.Rational(3, 2) / (sp.Symbol("s") + sp.Rational(3, 2))))


def test_a_derivation_prints_lambda_subscripts_and_no_bare_true():
    from symq.core.derivation import Derivation
    from symq.meanfield.supermarket import derivation as built

    derivation = functools.lru_cache(maxsize=None)(built)

    md = derivation().to_markdown()
    assert r"\lambda" in md and "lam " not in md and "{lam}" not in md
    assert "u_{k}" in md and r"u{\left(k" not in md
    assert r"\text{True}" not in md and "$$\nTrue\n$$" not in md
    # a relation sympy evaluates to True is stated in words, never printed as True
    der = Derivation("t")
    der.add("identity", sp.Eq(sp.Symbol("x") + 1, 1 + sp.Symbol("x")))
    text = der.to_markdown()
    assert "True" not in text.replace("true", "") and "holds identically" in text


def test_no_committed_derivation_prints_lam_or_a_bare_true():
    """The files ``symq derive`` wrote (kept current by tests/test_derivations_current.py)."""
    from pathlib import Path

    files = sorted((Path(__file__).resolve().parent.parent / "derivations").glob("*.md"))
    assert files
    for path in files:
        blocks = re.findall(r"^\$\$\n(.*?)\n\$\$$", path.read_text(), flags=re.M | re.S)
        assert blocks, path.name
        for block in blocks:
            assert block.strip() not in ("True", r"\text{True}"), path.name
            assert not re.search(r"(?<![A-Za-z\\])lam(?![A-Za-z])", block), (path.name, block)
            assert not re.search(r"[a-z]\{\\left\((?:k|j)(?: [+-] 1)? \\right\)\}", block), (
                path.name, block)                    # u(k) is written u_k


def _visible(html_text: str) -> str:
    """The text of an HTML display outside MathML, code and tags."""
    text = re.sub(r"<math.*?</math>|<code.*?</code>|<pre.*?</pre>", " ", html_text, flags=re.S)
    return re.sub(r"<[^>]+>", " ", text)


def test_every_displayed_public_type_has_an_html_display():
    """Jupyter prefers HTML: every public type with a Markdown or LaTeX display gives one too
    (:class:`symq.core.display.MarkdownDisplay`, or :func:`symq.core.display.html_display`)."""
    displayed = {name: cls for name, cls in public_classes().items() if must_display(cls)}
    missing = {name for name, cls in displayed.items() if not hasattr(cls, "_repr_html_")}
    assert len(displayed) > 120
    assert not missing, f"give these a _repr_html_ (symq.core.display.MarkdownDisplay): {missing}"


#: A formula of a Markdown display: ``$$...$$`` or ``$...$`` on one line (code spans removed).
_FORMULA = re.compile(r"\$\$[^$]+\$\$|\$[^$\n]+\$")
#: A Markdown table rule (``|---|---|``).
_RULE = re.compile(r"\|?[\s:|-]+\|?")


def _formulas(markdown_text: str) -> int:
    """How many formulas a display's Markdown has: ``$$`` blocks and one-line ``$...$``."""
    text = re.sub(r"`[^`\n]*`", " ", markdown_text)
    blocks = re.findall(r"^\$\$\n.*?\n\$\$$", text, flags=re.M | re.S)
    text = re.sub(r"^\$\$\n.*?\n\$\$$", " ", text, flags=re.M | re.S)
    return len(blocks) + len(_FORMULA.findall(text))


@pytest.mark.parametrize("cls", [pytest.param(cls, id=cls.__name__) for cls in BUILDERS])
def test_the_html_display_shows_the_markdown_one_with_mathml(cls):
    """Each displayed type also gives HTML (Jupyter prefers it), from its Markdown display (its
    LaTeX one where it has no Markdown): the same title, the same table rows with the same
    names, every formula as one MathML element, no TeX delimiters or table pipes left over."""
    import html as html_module

    obj, _ = BUILDERS[cls]()
    assert hasattr(obj, "_repr_html_"), f"{cls.__name__} has no _repr_html_"
    source = obj._repr_markdown_() if hasattr(obj, "_repr_markdown_") else obj._repr_latex_()
    shown = obj._repr_html_()
    assert shown.startswith('<div class="symq-display">') and shown.endswith("</div>")
    visible = html_module.unescape(_visible(shown))
    assert "|---" not in visible and "$" not in visible, visible[:300]
    assert "\\(" not in visible and "\\[" not in visible, visible[:300]
    assert not any(re.fullmatch(r"\s*\|.*\|\s*", line) for line in visible.splitlines()), \
        visible[:300]                                # no Markdown table row left as text
    # every formula is one MathML element (or, where latex2mathml cannot read it, kept as TeX
    # in a code element: nothing dropped)
    n_formulas = _formulas(source)
    converted = shown.count("<math") + shown.count('class="tex"')
    assert converted == n_formulas, (converted, n_formulas, source[:300])
    # the title: a bold first line is a <strong> one
    title = re.match(r"\*\*([^*]+)\*\*", source)
    if title:
        assert f"<strong>{html_module.escape(title.group(1))}</strong>" in shown, title.group(1)
    # the tables: one HTML row per Markdown row, each named row's name shown
    rows = [line for line in source.splitlines() if line.lstrip().startswith("|")
            and not _RULE.fullmatch(line.strip())]
    assert shown.count("<tr>") == len(rows), (shown.count("<tr>"), len(rows))
    for row in rows:
        if row.startswith("| `"):
            name = row.split("`")[1]
            assert html_module.escape(name) in shown, name
