"""Claims of Q.-L. Li, "Nonlinear Markov processes in big networks" (Special Matrices 4 (2016)).

Li models the mean-field limit of many weakly interacting block-structured Markov processes as a
nonlinear block-structured Markov process ``dx/dt = x Q(x)``; fixed points solve
``pi Q(pi) = 0`` and are computed with the UL-type RG-factorization (backward R-recursion) of the
level-dependent QBD ``Q(pi)``, iterated ``pi <- stat(Q(pi))``; stability is discussed through
Jacobians and Lyapunov / relative-entropy functions (Li 2016, abstract).  The checks use
the supermarket model JSQ(d) seen from a tagged server (``derivations/li-nonlinear.md`` §6) as
the concrete nonlinear QBD (:mod:`symq.meanfield.nonlinear`).  The relative entropy is checked
where it is a Lyapunov function (one probe: a linear chain) and refuted where it is not (JSQ(d),
d >= 2, heavy start).  Metastability is checked on Schlögl's bistable model
(:mod:`symq.meanfield.bistable`).  Not checked: the paper's general (non-QBD) block structures.

``build_claims(quick=True)`` (the form the test suite checks) states the same claims with the
Lyapunov trajectories of one case and the finite-N comparison at one system size; ``symq check``
runs the full form.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from symq.core.claims import (
    Claim,
    Evidence,
    Inconclusive,
    Status,
    equivalence_error,
    relative_error,
)
from symq.core.derivation import Derivation
from symq.core.registry import PaperSpec, register_paper
from symq.meanfield import nonlinear, supermarket
from symq.meanfield.simulation import simulate_jsq

__all__ = ["PAPER", "build_claims", "derivation"]

KEY = "li-nonlinear"
SOURCE = "Li 2016 (Special Matrices 4), fixed points via the UL-type RG-factorization"
STABILITY = "Li 2016, stability of the nonlinear Markov process (Jacobian, Lyapunov functions)"
LIMIT = "Li 2016, mean-field limit of N weakly interacting networks"
_CASES = [{"d": d, "lam": lam} for d in (2, 3) for lam in (0.5, 0.9)]
_K = 12  # ODE truncation: u_12 < 1e-16 for d >= 2, lam <= 0.9 (closed form)


@functools.cache
def _rg_fixed_point(d: int, lam: float) -> nonlinear.NonlinearFixedPoint:
    fp = nonlinear.jsq_exponential_qbd(d, lam).fixed_point([np.array([1 - lam]), np.array([lam])],
                                                            tol=1e-14)
    if fp.residual > 1e-12:
        raise Inconclusive(f"||pi - stat(Q(pi))|| = {fp.residual:.2g}")
    return fp


def _head(fp: nonlinear.NonlinearFixedPoint, n: int) -> np.ndarray:
    tail = fp.tail
    return np.concatenate([tail, np.zeros(max(0, n - tail.size))])[:n]


def _max_abs(a: Any, b: Any) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))


def _fixed_point_claims() -> list[Claim]:
    def ode(point: Mapping[str, Any]) -> np.ndarray:
        return supermarket.jsq_process(point["d"], _K).fixed_point(
            np.zeros(_K), {supermarket.LAM: point["lam"]}).x

    def closed(point: Mapping[str, Any]) -> np.ndarray:
        k = np.arange(1, _K + 1, dtype=float)
        d = point["d"]
        return point["lam"] ** ((float(d) ** k - 1) / (d - 1))

    def h2_rg(point: Mapping[str, Any]) -> float:
        from symq.laws import hyperexponential2
        alpha, A = hyperexponential2(1.0, point["scv"], 0.5)
        fp = nonlinear.jsq_ph_qbd(point["d"], point["lam"], (alpha, A)).fixed_point(
            [np.array([1.0])], tol=1e-13)
        return fp.mean_level / point["lam"]

    def h2_cavity(point: Mapping[str, Any]) -> float:
        from symq.laws import hyperexponential2
        from symq.meanfield.jsq_ph import solve_jsq_ph
        alpha, A = hyperexponential2(1.0, point["scv"], 0.5)
        return solve_jsq_ph(point["d"], point["lam"], (alpha, A)).ET

    return [
        Claim(
            "the RG-factorization fixed point is the mean-field ODE steady state", SOURCE,
            f"JSQ(d) with exponential service as a nonlinear birth-death QBD (arrival rate "
            f"lam h_d(u_k, u_(k+1)) at level k): iterating pi <- stat(Q(pi)) (backward "
            f"R-recursion, ||pi - stat(Q(pi))|| < 1e-12) gives u_1..u_{_K} equal to the fixed "
            f"point of the {_K}-level mean-field ODE (PopulationProcess.fixed_point), max "
            f"absolute error",
            lambda p: _head(_rg_fixed_point(p["d"], p["lam"]), _K), ode, _CASES,
            tolerance=1e-10, error=_max_abs, evidence=Evidence.NUMERIC),
        Claim(
            "the RG-factorization fixed point is doubly exponential", SOURCE + "; Vvedenskaya "
            "et al. 1996",
            f"the same fixed point equals u_k = lam^((d^k-1)/(d-1)), k = 1..{_K}, max absolute "
            f"error",
            lambda p: _head(_rg_fixed_point(p["d"], p["lam"]), _K), closed, _CASES,
            tolerance=1e-10, error=_max_abs, evidence=Evidence.CLOSED_FORM),
        Claim(
            "nonlinear QBD with phase-type service",
            SOURCE + "; Bramson, Lu, Prabhakar 2010 (tagged server)",
            "JSQ(d) with H2 service (mean 1, SCV 4, balanced means) as a nonlinear QBD with 2 "
            "phases per level: E[T] of the RG-factorization fixed point equals E[T] of the "
            "independent cavity solver solve_jsq_ph, relative error",
            h2_rg, h2_cavity, [{"d": d, "lam": lam, "scv": 4.0} for d in (2, 3)
                               for lam in (0.5, 0.9)],
            tolerance=1e-9, evidence=Evidence.NUMERIC),
    ]


def _stability_claims(quick: bool) -> list[Claim]:
    lyapunov_cases = [{"d": 2, "lam": 0.9}] if quick else _CASES

    def stable(point: Mapping[str, Any]) -> bool:
        pi = _head(_rg_fixed_point(point["d"], point["lam"]), _K)
        st = supermarket.jsq_process(point["d"], _K).stability(pi, {supermarket.LAM: point["lam"]})
        return st.stable

    def lyapunov(point: Mapping[str, Any]) -> bool:
        return nonlinear.relative_entropy_trajectory(point["d"], point["lam"], K=20, t_final=30.0,
                                                     n_times=200).nonincreasing

    return [
        Claim.predicate(
            "the fixed point is locally stable", STABILITY,
            f"every eigenvalue of the Jacobian of the {_K}-level JSQ(d) drift at the "
            f"RG-factorization fixed point has a negative real part (PopulationProcess.stability)",
            stable, _CASES, evidence=Evidence.NUMERIC),
        Claim.predicate(
            "a Lyapunov function decreases along trajectories", STABILITY,
            "V(t) = sum_k |u_k(t) - u_k*| (unweighted Mitzenmacher potential; the relative "
            "entropy of the queue-length law is not used: it is not monotone from heavy initial "
            "states) never increases by more than 1e-9 between 200 output times on [0, 30] "
            "along the 20-level JSQ(d) ODE (Radau, rtol 1e-11) from the empty state, all "
            "servers with 3 jobs, and u_k = 0.95^k",
            lyapunov, lyapunov_cases, evidence=Evidence.NUMERIC),
    ]


@functools.cache
def _simulated(N: int) -> Any:
    return simulate_jsq(N, 2, 0.8, n_jobs=2_000_000, rng=2016 + N, level=0.99).ET


def _simulation_claim(quick: bool) -> Claim:
    sizes = (100,) if quick else (100, 500, 1000)

    def error(mean_field: float, point_n: Any) -> float:
        ci, allowance = point_n
        if mean_field > ci.high:
            return float("inf")
        return max(0.0, (ci.low - mean_field) / allowance)

    def reference(point: Mapping[str, Any]) -> tuple[Any, float]:
        refined = supermarket.refined_jsq(2, 0.8, point["N"])
        return _simulated(point["N"]), 2.0 * (refined.ET_N - refined.ET)

    return Claim(
        "the nonlinear fixed point is the N -> infinity limit", LIMIT,
        f"JSQ(2), lam = 0.8, N = {', '.join(map(str, sizes))} servers: the mean-field E[T] "
        "(RG-factorization "
        "fixed point) is not above the 99% CI of a 2e6-job simulation, and lies below its lower "
        "end by at most the allowance 2 V_T/N (twice the refined-mean-field 1/N correction of "
        "Gast & Van Houdt 2018); error = max(0, ci.low - E[T]) / allowance (inf if above the CI)",
        lambda p: _rg_fixed_point(2, 0.8).mean_level / 0.8, reference,
        [{"N": N} for N in sizes], tolerance=1.0, error=error,
        evidence=Evidence.SIMULATION)


ENTROPY = ("Li 2016, relative entropy as a Lyapunov function; Budhiraja, Dupuis, Fischer, "
           "Ramanan 2015")


@functools.cache
def _entropy(d: int, lam: float, quick: bool) -> nonlinear.LyapunovCheck:
    return nonlinear.relative_entropy_trajectory(d, lam, K=30 if quick else 40,
                                                 t_final=40.0 if quick else 60.0,
                                                 n_times=200 if quick else 300)


def _increase(point: Mapping[str, Any], quick: bool) -> float:
    return max(_entropy(point["d"], point["lam"], quick).entropy_increase[0], 0.0)


def _entropy_claims(quick: bool) -> list[Claim]:
    linear_cases = [{"d": 1, "lam": 0.9}] if quick else [{"d": 1, "lam": lam}
                                                          for lam in (0.5, 0.7, 0.9)]
    heavy_cases = [{"d": 2, "lam": 0.9}] if quick else [{"d": d, "lam": 0.9} for d in (2, 3)]
    starts = ("from the empty state, all servers with 3 jobs, and u_k = 0.95^k, against the "
              "fixed point of the truncated ODE")

    def counterexample(value: float, increase: float) -> float:
        return increase

    return [
        Claim(
            "the relative entropy decreases for a linear Markov chain (d = 1)", ENTROPY,
            "the class where it is a Lyapunov function: with one probe the ODE is the forward "
            "equation of a linear Markov chain (the M/M/1/K queue, reversible), and "
            "D(p(t) || pi) of the queue-length law to its stationary law never increases "
            "(Cover and Thomas 2006, Section 4.4).  Checked on the output grid (Radau, rtol "
            "1e-11) " + starts + "; the largest increase between consecutive times is <= 1e-12",
            lambda p: 0.0, lambda p: _increase(p, quick), linear_cases, tolerance=1e-12,
            error=counterexample, evidence=Evidence.NUMERIC),
        Claim(
            "the relative entropy to the fixed point is a Lyapunov function of JSQ(d)", ENTROPY,
            "Li lists the relative entropy among the Lyapunov functions of nonlinear Markov "
            "processes; for JSQ(d), d >= 2 (nonlinear, no reversible fixed point) it is not "
            "one: along the ODE " + starts + ", the relative entropy of the queue-length law "
            "increases (the reference column gives the largest increase between consecutive "
            "output times; it comes from the heavy start u_k = 0.95^k)",
            lambda p: 0.0, lambda p: _increase(p, quick), heavy_cases, tolerance=1e-9,
            error=counterexample, evidence=Evidence.NUMERIC, expected=Status.FAILS),
    ]


METASTABLE = ("Li 2016, stability or metastability; Schlogl 1972 (the model); Freidlin and "
              "Wentzell 1984 (the quasi-potential)")


#: Passages of each switching simulation, and the relative tolerance of the claim that the exact
#: mean passage time is what they estimate (the runs resolve about 5% at the 95% family level;
#: 400 passages resolved only 13%).
SWITCHES, SWITCH_TOLERANCE = 2000, 0.10


def _metastability_claims(quick: bool) -> list[Claim]:
    from symq.meanfield import bistable

    params = bistable.schlogl_parameters()
    a, b, c = (float(r) for r in bistable.ROOTS)

    def equilibria(_: Mapping[str, Any]) -> list[tuple[Any, str]]:
        from symq.meanfield.equilibria import equilibria as all_equilibria

        found = all_equilibria(bistable.schlogl_process(), params)
        if not all(e.krawczyk for e in found.equilibria):
            raise Inconclusive("an equilibrium's enclosure did not pass the Krawczyk test")
        return [(e.exact[0], e.classification) for e in found.equilibria]

    def declared(_: Mapping[str, Any]) -> list[tuple[Any, str]]:
        return [(bistable.ROOTS[0], "stable"), (bistable.ROOTS[1], "unstable"),
                (bistable.ROOTS[2], "stable")]

    def slope(_: Mapping[str, Any]) -> float:
        sizes = (400, 800) if quick else (800, 1600)
        logs = [bistable.switching_time(N, params, a, c) for N in sizes]
        return (logs[1] - logs[0]) / (sizes[1] - sizes[0])

    def bimodal(point: Mapping[str, Any]) -> bool:
        law = bistable.stationary_law(point["N"], params)
        low = float(np.sum(law[np.arange(law.size) < b * point["N"]]))
        return min(low, 1.0 - low) > 0.05

    sizes = (20,) if quick else (10, 20, 40)
    return [
        Claim(
            "Schlogl's model has two stable equilibria and an unstable one", METASTABLE,
            "the drift -(x - 1/5)(x - 1)(x - 3) declared through its reaction rates "
            "(k1 = 21/5, k2 = 1, k3 = 19/5, k4 = 3/5) has exactly the equilibria 1/5, 1, 3 in "
            "[0, 10] (symq.meanfield.equilibria: Groebner basis, exact real-root isolation, "
            "Krawczyk-verified enclosures), stable, unstable, stable by the Jacobian",
            equilibria, declared, [{"rates": "k1..k4"}], tolerance=0.0,
            error=lambda got, want: 0.0 if got == want else 1.0, evidence=Evidence.SYMBOLIC),
        Claim(
            "the finite-N system switches between them: simulation vs exact passage time",
            METASTABLE,
            f"mean time from n = N/5 to n = 3N: the exact birth-death first-passage sum agrees "
            f"within {SWITCH_TOLERANCE:.0%} with a Gillespie simulation of {SWITCHES} passages "
            "(t-interval at the 95% family level, equivalence test)",
            lambda p: math.exp(bistable.switching_time(p["N"], params, a, c)),
            lambda p: bistable.simulate_switching(p["N"], params, a, c, n_switches=SWITCHES,
                                                  rng=1972 + p["N"]),
            [{"N": N} for N in sizes], tolerance=SWITCH_TOLERANCE,
            error=equivalence_error(relative=SWITCH_TOLERANCE, n_points=len(sizes)),
            evidence=Evidence.SIMULATION),
        Claim(
            "the mean switching time grows like exp(N Delta V)", METASTABLE,
            "d log T / dN of the exact passage time from 1/5 to 3 equals the quasi-potential "
            "Delta V = int_{1/5}^{1} log(delta/beta) dx = 0.10299 (relative error; the slope "
            "between N = 800 and 1600, or 400 and 800 in the quick form)",
            slope, lambda _: bistable.quasi_potential(params, a, b), [{"N": "large"}],
            tolerance=1e-3 if quick else 1e-4, error=relative_error,
            evidence=(Evidence.NUMERIC, Evidence.CLOSED_FORM)),
        Claim.predicate(
            "a fixed point alone does not describe the network", METASTABLE,
            "Li: a nonlinear Markov process may be metastable.  The exact stationary law of "
            "the N-system puts more than 5% of its mass on each side of the unstable point "
            "x = 1 at N = 20, 50, 100, while each stable fixed point is a single point.  (As N "
            "grows the law concentrates near the deeper well, x = 3: which stable point the "
            "system occupies is decided by the quasi-potentials, not by the fixed-point "
            "equation)",
            bimodal, [{"N": N} for N in ((100,) if quick else (20, 50, 100))],
            evidence=Evidence.NUMERIC),
    ]


def build_claims(quick: bool = False) -> list[Claim]:
    """Fixed point = ODE steady state, local stability, Lyapunov decrease, relative entropy
    (decreasing for d = 1, a declared refutation for d >= 2), finite-N limit.

    ``quick=True``: the same claims on fewer cases (for the test suite).
    """
    return [*_fixed_point_claims(), *_stability_claims(quick), *_entropy_claims(quick),
            *_metastability_claims(quick), _simulation_claim(quick)]


def derivation() -> Derivation:
    """Block-structured generator, UL-type R-recursion and the nonlinear fixed-point equation."""
    m = sp.Symbol("m", integer=True, positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    A0, A1 = (sp.MatrixSymbol(f"A_{i}^{{(k)}}", m, m) for i in range(2))
    A2n = sp.MatrixSymbol("A_2^{(k+1)}", m, m)
    A1K = sp.MatrixSymbol("A_1^{(K)}", m, m)
    R, U, Un = (sp.MatrixSymbol(n, m, m) for n in ("R_k", "U_k", "U_{k+1}"))
    UK = sp.MatrixSymbol("U_K", m, m)
    pk, pk1 = sp.MatrixSymbol("p_k", 1, m), sp.MatrixSymbol("p_{k+1}", 1, m)
    pi, Qpi = sp.MatrixSymbol("pi", 1, m), sp.MatrixSymbol("Q(pi)", m, m)
    lam, d = sp.symbols("lambda d", positive=True)
    u = sp.Function("u")
    der = Derivation(
        title="Nonlinear level-dependent QBD: UL-type RG-factorization and the fixed point",
        source="Q.-L. Li, Special Matrices 4 (2016); JSQ(d) as a tagged server (Bramson, Lu, "
               "Prabhakar 2010)",
        summary="Levels $k = 0, \\dots, K$, blocks $A_0$ (up), $A_1$ (local), $A_2$ (down) "
                "depending on the occupancy vector; the fixed point solves "
                "$\\pi Q(\\pi) = 0$.")
    der.add("Block-structured generator",
            sp.Eq(sp.Symbol("Q(x)"),
                  sp.Symbol("tridiag(A_2^{(k)}(x), A_1^{(k)}(x), A_0^{(k)}(x))")),
            "Row $k$ of the block-tridiagonal generator; rows sum to zero: "
            "$(A_0^{(k)} + A_1^{(k)} + A_2^{(k)}) \\mathbf{1} = 0$.")
    der.add("Truncation at level K", sp.Eq(UK, A1K + sp.MatrixSymbol("D_K", m, m)),
            "Jumps above $K$ are suppressed; their rates move to the diagonal: "
            "$D_K = \\operatorname{diag}(A_0^{(K)} \\mathbf{1})$.")
    der.add("Backward R-recursion (UL-type RG-factorization)",
            [sp.Eq(R, A0 * (-Un).inverse()), sp.Eq(U, A1 + R * A2n)],
            "For $k = K-1, \\dots, 0$: $R_k$ is the rate matrix of level $k+1$ seen from "
            "level $k$.")
    der.add("Stationary vector", [sp.Eq(sp.MatrixSymbol("p_0", 1, m) * sp.MatrixSymbol("U_0", m, m),
                                        sp.ZeroMatrix(1, m)), sp.Eq(pk1, pk * R)],
            "Boundary solve on the censored chain at level 0, forward products, normalise.")
    der.add("Nonlinear fixed point", [sp.Eq(pi * Qpi, sp.ZeroMatrix(1, m)),
                                      sp.Eq(sp.Symbol(r"\pi \mathbf{1}"), 1)],
            "Iterated as $\\pi \\leftarrow \\operatorname{stat}(Q(\\pi))$ (each step by the "
            "R-recursion).")
    der.add("JSQ(d) instance", sp.Eq(sp.Symbol("lambda_k"),
                                     lam * (u(k) ** d - u(k + 1) ** d) / (u(k) - u(k + 1))),
            "Tagged server: level = queue length, $u_k = \\sum_{i \\ge k} \\pi_i$; service "
            "rate 1 (or PH phases per level).")
    return der


def figures(directory: Any, *, quick: bool = False) -> list[Any]:
    """Distance to the fixed point along the JSQ(2) mean-field ODE at lam = 0.9 from three
    initial states (the Lyapunov function of the stability claims; ``symq check --report``);
    ``quick=True``: a shorter, coarser trajectory (the test suite).
    """
    from pathlib import Path

    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    from symq.meanfield.plots import plot_lyapunov

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    plot_lyapunov(2, 0.9, K=8 if quick else 20, t_final=1.0 if quick else 60.0,
                  n_times=10 if quick else 200, ax=ax)
    ax.set_title("JSQ(2), lam = 0.9: V(t) = sum_k |u_k(t) - u_k*| along the mean-field ODE")
    path = Path(directory) / f"{KEY}-lyapunov.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return [path]


PAPER = register_paper(PaperSpec(
    key=KEY,
    title="Nonlinear Markov Processes in Big Networks",
    citation="Q.-L. Li, Special Matrices 4 (2016)",
    claims=build_claims,
    derivation=derivation,
    models=(),
    figures=figures,
))
