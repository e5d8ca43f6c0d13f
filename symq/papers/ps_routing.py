"""Claims of Altman, Ayesta, Prabhu, "Load balancing in processor sharing systems" (2011).

Each claim compares symq's closed forms (derived in :mod:`symq.routing.symbolic`, evaluated by
:mod:`symq.routing.solve`) with an independent computation: scipy.optimize minimisers of the
social cost and of the potential (:mod:`symq.routing.numeric`), exact rational/algebraic
arithmetic in sympy, or sympy identities.

The claim list is assembled from the builders in :data:`CLAIM_BUILDERS`; a new group of claims
(e.g. insensitivity checked by simulation) is added by appending a builder with
:func:`claim_group`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from symq.core.claims import Claim, Evidence, mixed_error, relative_error, symbolic_error
from symq.core.registry import PaperSpec, register_paper
from symq.routing import derive, exact, numeric, solve, symbolic

__all__ = ["PAPER", "build_claims", "CLAIM_BUILDERS", "claim_group"]

KEY = "ps-routing"
SECTION_2 = "Altman, Ayesta, Prabhu 2011, model section"
SECTION_3 = "Altman, Ayesta, Prabhu 2011, centralised-routing section"
SECTION_4 = "Altman, Ayesta, Prabhu 2011, decentralised-routing section"
SECTION_5 = "Altman, Ayesta, Prabhu 2011, price-of-anarchy section"
#: symq's own piecewise form of the closed forms (not a statement of the paper).
PIECEWISE = "symq derivation, derivations/ps-routing.md, section \"Example: the typical farm\""

#: Functions returning lists of claims; :func:`build_claims` concatenates them in order.
CLAIM_BUILDERS: list[Callable[[], list[Claim]]] = []


def claim_group(builder: Callable[[], list[Claim]]) -> Callable[[], list[Claim]]:
    """Register a function that builds a group of claims (decorator)."""
    CLAIM_BUILDERS.append(builder)
    return builder


def build_claims() -> list[Claim]:
    """All claims of the paper, in the order of :data:`CLAIM_BUILDERS`."""
    claims: list[Claim] = []
    for builder in CLAIM_BUILDERS:
        claims.extend(builder())
    return claims


# ----------------------------------------------------------------------------- samples

def _farm(rng: np.random.Generator, K: int, equal_costs: bool = False) -> dict[str, Any]:
    C = rng.uniform(0.2, 5.0, K)
    w = np.ones(K) if equal_costs else np.exp(rng.normal(0.0, 1.0, K))
    return {"C": C, "w": w, "rho": float(C.sum() * rng.uniform(0.02, 0.98))}


def _random_farms(
        n: int, k_min: int = 2, k_max: int = 8, *, equal_costs: bool = False,
        large: int | None = None) -> Callable[[np.random.Generator], list[dict[str, Any]]]:
    def sample(rng: np.random.Generator) -> list[dict[str, Any]]:
        points = [_farm(rng, int(rng.integers(k_min, k_max + 1)), equal_costs) for _ in range(n)]
        if large is not None:
            points.append(_farm(rng, large, equal_costs))
        return points

    return sample


def _cost_and_loads_error(claimed: Any, reference: Any) -> float:
    """max(|J - J_ref|/J_ref, max_j |x_j - x_ref_j|/rho) for vectors (J, x/rho)."""
    a, b = np.asarray(claimed, dtype=float), np.asarray(reference, dtype=float)
    return float(max(abs(a[0] - b[0]) / abs(b[0]), np.max(np.abs(a[1:] - b[1:]))))


def _vector(cost: float, loads: np.ndarray, rho: float) -> np.ndarray:
    return np.concatenate([[cost], np.asarray(loads) / rho])


# ----------------------------------------------------------------------------- optimum, equilibrium

@claim_group
def _numeric_claims() -> list[Claim]:
    def optimum(p: Mapping[str, Any]) -> np.ndarray:
        a = solve.social_optimum(p["C"], p["w"], p["rho"])
        return _vector(a.cost, a.loads, p["rho"])

    def optimum_scipy(p: Mapping[str, Any]) -> np.ndarray:
        r = numeric.minimize_social_cost(p["C"], p["w"], p["rho"])
        return _vector(r.cost, r.loads, p["rho"])

    def equilibrium(p: Mapping[str, Any]) -> np.ndarray:
        a = solve.wardrop_equilibrium(p["C"], p["w"], p["rho"])
        return _vector(a.cost, a.loads, p["rho"])

    def equilibrium_scipy(p: Mapping[str, Any]) -> np.ndarray:
        r = numeric.minimize_potential(p["C"], p["w"], p["rho"])
        return _vector(r.cost, r.loads, p["rho"])

    def wardrop_residual(p: Mapping[str, Any]) -> float:
        C, w = np.asarray(p["C"]), np.asarray(p["w"])
        x = solve.wardrop_equilibrium(C, w, p["rho"]).loads
        used = x > 0
        cost = w[used] / (C[used] - x[used])              # selfish cost per unit of work
        level = float(np.min(cost))
        spread = (float(np.max(cost)) - level) / level
        unused_gap = np.max(np.maximum(0.0, level - w[~used] / C[~used]) / level, initial=0.0)
        return max(spread, float(unused_gap))

    def poa(p: Mapping[str, Any]) -> float:
        return solve.price_of_anarchy(p["C"], p["w"], p["rho"])

    def poa_scipy(p: Mapping[str, Any]) -> float:
        return (numeric.minimize_potential(p["C"], p["w"], p["rho"]).cost
                / numeric.minimize_social_cost(p["C"], p["w"], p["rho"]).cost)

    return [
        Claim("closed-form social optimum", SECTION_3,
              "x_j* = C_j - sqrt(w_j C_j)(Sigma_S C - rho)/Sigma_S sqrt(wC) on the prefix S of the "
              "r = w/C order, J* = (Sigma_S sqrt(wC))^2/(Sigma_S C - rho) - Sigma_S w, equal the "
              "minimiser of J found by scipy.optimize (error: max(rel. error of J, "
              "max|dx|/rho))",
              optimum, optimum_scipy, _random_farms(40, large=50), tolerance=1e-8,
              error=_cost_and_loads_error, evidence=Evidence.NUMERIC, seed=11),
        Claim("equilibrium minimises the potential", SECTION_4,
              "x_j^NE = C_j - w_j (Sigma_S C - rho)/Sigma_S w, J^NE = c rho, equal the minimiser "
              "of Phi = sum_j w_j ln(C_j/(C_j - x_j)) found by scipy.optimize",
              equilibrium, equilibrium_scipy, _random_farms(40, large=50), tolerance=1e-8,
              error=_cost_and_loads_error, evidence=Evidence.NUMERIC, seed=12),
        Claim("Wardrop conditions", SECTION_4,
              "at the closed-form equilibrium every used server has the same cost w_j/(C_j - x_j) "
              "= c and every unused server has w_j/C_j >= c (relative violation)",
              wardrop_residual, None, _random_farms(100, k_max=12, large=200), tolerance=1e-10,
              error=lambda value, _: float(value), evidence=Evidence.NUMERIC, seed=13),
        Claim("price of anarchy", SECTION_5,
              "PoA = J^NE/J* from the closed forms equals the ratio of the scipy minima",
              poa, poa_scipy, _random_farms(30), tolerance=1e-8, error=relative_error,
              evidence=Evidence.NUMERIC, seed=14),
    ]


# ----------------------------------------------------------------------------- exact arithmetic

#: Rational farms and work rates, including exact thresholds (theta^OPT = (2, 4) and
#: theta^NE = (3, 21/4) for the first farm).
_RATIONAL_POINTS: tuple[dict[str, Any], ...] = tuple(
    {"C": C, "w": w, "rho": Fraction(r)}
    for C, w, rhos in (
        ((4, 2, 1), (1, 2, 4), ("1/2", "2", "3", "7/2", "4", "5", "21/4", "13/2")),
        ((1, 1), (1, 4), ("1/4", "1/2", "3/4", "3/2")),
        ((3, Fraction(5, 2), 1, 2), (1, 2, Fraction(7, 3), 5), ("1/3", "4", "7", "8")),
        ((2, 2, 2), (1, 1, 1), ("1", "5")),
        ((5, 1, 3), (2, 2, 2), ("1", "4", "8")),
    )
    for r in rhos
)


@functools.cache
def _piecewise(C: tuple, w: tuple) -> exact.PiecewiseLoads:
    return exact.piecewise_loads(C, w)


@claim_group
def _exact_claims() -> list[Claim]:
    def nonzero_residuals(p: Mapping[str, Any]) -> int:
        pw = _piecewise(tuple(p["C"]), tuple(p["w"]))
        count = 0
        for kind in ("optimal", "equilibrium"):
            loads = pw.at(p["rho"], kind)
            count += sum(res != 0 for res in exact.kkt_residuals(p["C"], p["w"], p["rho"],
                                                                     loads, kind))
        return count

    def exact_loads(p: Mapping[str, Any]) -> np.ndarray:
        pw = _piecewise(tuple(p["C"]), tuple(p["w"]))
        return np.array([float(v) for kind in ("optimal", "equilibrium")
                         for v in pw.at(p["rho"], kind)])

    def float_loads(p: Mapping[str, Any]) -> np.ndarray:
        C = [float(v) for v in p["C"]]
        w = [float(v) for v in p["w"]]
        rho = float(p["rho"])
        return np.concatenate([solve.social_optimum(C, w, rho).loads,
                               solve.wardrop_equilibrium(C, w, rho).loads])

    return [
        Claim("exact KKT conditions", f"{SECTION_3}; {SECTION_4}",
              "the Piecewise closed-form loads at rational rho satisfy the KKT conditions of min J "
              "and the Wardrop conditions exactly (number of non-zero exact residuals, proved "
              "zero by minimal polynomials)",
              nonzero_residuals, None, list(_RATIONAL_POINTS), tolerance=0.0,
              error=lambda value, _: float(value), evidence=Evidence.EXACT),
        Claim("exact loads equal the prefix scan", PIECEWISE,
              "the exact Piecewise loads (one piece per active set, glued at exact thresholds) "
              "equal the floating-point prefix scan, including at the thresholds",
              exact_loads, float_loads, list(_RATIONAL_POINTS), tolerance=1e-13,
              error=mixed_error(1.0), evidence=(Evidence.EXACT, Evidence.CLOSED_FORM)),
    ]


# ----------------------------------------------------------------------------- structural claims

@claim_group
def _structural_claims() -> list[Claim]:
    def subset(p: Mapping[str, Any]) -> bool:
        opt = set(solve.social_optimum(p["C"], p["w"], p["rho"]).active)
        ne = set(solve.wardrop_equilibrium(p["C"], p["w"], p["rho"]).active)
        th_opt = solve.thresholds(p["C"], p["w"], "optimal")
        th_ne = solve.thresholds(p["C"], p["w"], "equilibrium")
        return ne <= opt and bool(np.all(th_opt <= th_ne + 1e-12 * float(np.sum(p["C"]))))

    def haviv_roughgarden(p: Mapping[str, Any]) -> bool:
        value = solve.price_of_anarchy(p["C"], p["w"], p["rho"])
        bound = len(solve.social_optimum(p["C"], p["w"], p["rho"]).active)
        return 1.0 - 1e-12 <= value <= bound * (1.0 + 1e-12)

    def near_capacity(p: Mapping[str, Any]) -> float:
        return solve.price_of_anarchy(p["C"], p["w"], float(np.sum(p["C"])) * (1.0 - 1e-7))

    def limit(p: Mapping[str, Any]) -> float:
        return solve.heavy_traffic_poa(p["C"], p["w"])

    def tight(p: Mapping[str, Any]) -> bool:
        K = p["K"]
        C = np.array([1e12] + [1.0] * (K - 1))
        value = solve.price_of_anarchy(C, np.ones(K), float(C.sum()) - 0.01)
        return K * (1.0 - 1e-4) < value <= K * (1.0 + 1e-12)

    def all_servers(rng: np.random.Generator) -> list[dict[str, Any]]:
        return [_farm(rng, int(rng.integers(1, 9))) for _ in range(30)]

    return [
        Claim.predicate("equilibrium servers are a subset of optimal servers", SECTION_4,
                        "S^NE is a subset of S^OPT, and theta^OPT_m <= theta^NE_m for every m",
                        subset, _random_farms(200, 1, 12), evidence=Evidence.CLOSED_FORM, seed=21),
        Claim.predicate("PoA <= |S_OPT| for equal holding costs", SECTION_5,
                        "with w = 1, 1 <= PoA <= number of servers used by the optimum "
                        "(Haviv & Roughgarden 2007)",
                        haviv_roughgarden, _random_farms(300, 1, 10, equal_costs=True),
                        evidence=Evidence.CLOSED_FORM, seed=22),
        Claim("heavy-traffic limit of the PoA", SECTION_5,
              "PoA -> (sum C)(sum w)/(sum sqrt(wC))^2 as rho -> sum C (sympy limit), compared with "
              "the PoA at rho = (1 - 1e-7) sum C",
              limit, near_capacity, all_servers, tolerance=1e-5, error=relative_error,
              evidence=Evidence.CLOSED_FORM, seed=23),
        Claim.predicate("PoA bound is tight", SECTION_5,
                        "w = 1, C = (1e12, 1, ..., 1), rho = sum C - 0.01: K(1 - 1e-4) < PoA "
                        "<= K = |S^OPT|, so the bound PoA <= |S^OPT| cannot be improved",
                        tight, [{"K": K} for K in (2, 3, 5, 8)], evidence=Evidence.CLOSED_FORM),
    ]


# ----------------------------------------------------------------------------- unbounded PoA

_H_SWEEP = (1.25, 1.5, 2.0, 4.0, 10.0, 30.0, 100.0, 1000.0)


@claim_group
def _unbounded_claims() -> list[Claim]:
    def family(p: Mapping[str, Any]) -> np.ndarray:
        f = solve.unbounded_family(p["h"])
        return np.array([f.J_opt, f.J_ne, f.poa, *f.x_opt])

    def family_scipy(p: Mapping[str, Any]) -> np.ndarray:
        h = p["h"]
        C, w, rho = np.array([1.0, 1.0]), np.array([1.0, h]), 1.0 - 1.0 / h
        opt = numeric.minimize_social_cost(C, w, rho)
        ne = numeric.minimize_potential(C, w, rho)
        return np.array([opt.cost, ne.cost, ne.cost / opt.cost, *opt.loads])

    def grows(p: Mapping[str, Any]) -> bool:
        h = p["h"]
        value = solve.price_of_anarchy([1.0, 1.0], [1.0, h], 1.0 - 1.0 / h) / np.sqrt(h)
        return 0.5 < value < 0.5 + 1.0 / np.sqrt(h)

    h = symbolic.SYMBOLS["h"]
    forms = symbolic.closed_forms()

    def derived_poa(_: Mapping[str, Any]) -> sp.Expr:
        S = symbolic.SYMBOLS
        rho_h = 1 - 1 / h
        j_ne = forms.ne_cost.subs({S["Sigma_C"]: 1, S["Sigma_w"]: 1, S["rho"]: rho_h})
        j_opt = forms.opt_cost.subs({S["Sigma_C"]: 2, S["Sigma_s"]: 1 + sp.sqrt(h),
                                     S["Sigma_w"]: 1 + h, S["rho"]: rho_h})
        return j_ne / j_opt

    def stated_poa(_: Mapping[str, Any]) -> sp.Expr:
        return (h + 1) * (sp.sqrt(h) + 1) / (2 * h + sp.sqrt(h) + 1)

    def growth_limit(_: Mapping[str, Any]) -> sp.Expr:
        return sp.limit(derived_poa({}) / sp.sqrt(h), h, sp.oo)

    return [
        Claim("unbounded family: closed forms", SECTION_5,
              "C = (1, 1), w = (1, h), rho = 1 - 1/h: J* = (2h^(3/2) - h - 1)/(h + 1), "
              "J^NE = h - 1, PoA = (h+1)(sqrt h+1)/(2h+sqrt h+1), x* = ((h^(3/2)-1)/(h^(3/2)+h), "
              "(sqrt h-1)/(h+sqrt h)) equal the scipy minima",
              family, family_scipy, [{"h": v} for v in _H_SWEEP], tolerance=1e-8,
              error=relative_error, evidence=Evidence.NUMERIC),
        Claim("unbounded family: PoA formula", SECTION_5,
              "J^NE/J* of the general closed forms on the family simplifies to "
              "(h+1)(sqrt h+1)/(2h+sqrt h+1)",
              derived_poa, stated_poa, [{"h": "symbolic"}], tolerance=0.0,
              error=symbolic_error, evidence=Evidence.SYMBOLIC),
        Claim("unbounded family: PoA/sqrt(h) -> 1/2", SECTION_5,
              "sympy: lim_{h -> oo} PoA(h)/sqrt(h) = 1/2, so the PoA is unbounded with unequal "
              "holding costs",
              growth_limit, lambda _: sp.Rational(1, 2), [{"h": "symbolic"}], tolerance=0.0,
              error=symbolic_error, evidence=Evidence.SYMBOLIC),
        Claim.predicate("PoA grows without bound", SECTION_5,
                        "on the family, 1/2 < PoA(h)/sqrt(h) < 1/2 + 1/sqrt(h) for h = 10..1e8 "
                        "(prefix-scan closed forms of the general farm)",
                        grows, [{"h": 10.0 ** k} for k in range(1, 9)],
                        evidence=Evidence.CLOSED_FORM),
    ]


_SIM_FARMS = (((4.0, 2.0, 1.0), (1.0, 2.0, 4.0), 3.5), ((1.0, 1.0), (1.0, 3.0), 1.2))
_SIM_LAWS = ("exponential", "deterministic", "hyperexponential")
_SIM_SCV = {"exponential": 1.0, "deterministic": 0.0, "hyperexponential": 4.0}
#: The point label of each law -> ``sizes=`` and ``scv=`` of the simulator
#: (:data:`symq.laws.SIZE_LAWS`).
_SIM_SIZES = {"exponential": ("exp", None), "deterministic": ("det", None),
              "hyperexponential": ("h2", _SIM_SCV["hyperexponential"])}
#: Relative tolerance of the insensitivity claim: the runs (2e6 jobs per server) resolve about
#: 3% at the 95% family level over the 12 points; the FCFS value of the H2 cases lies 87% to
#: 110% above.
_SIM_TOLERANCE = 0.05


def _fcfs_cost(C: np.ndarray, w: np.ndarray, loads: np.ndarray, scv: float) -> float:
    """Pollaczek-Khinchine holding-cost rate if the servers were FCFS (not insensitive)."""
    u = loads / C
    used = u > 0
    number = u[used] + u[used] ** 2 * (1 + scv) / (2 * (1 - u[used]))
    return float(np.sum(w[used] * number))


@claim_group
def _simulation_claims() -> list[Claim]:
    from symq.core.claims import Inconclusive, equivalence_error
    from symq.routing.simulation import simulate_farm

    def point_loads(point: Mapping[str, Any]) -> np.ndarray:
        solver = solve.social_optimum if point["kind"] == "optimal" else solve.wardrop_equilibrium
        return solver(point["C"], point["w"], point["rho"]).loads

    def closed_form(point: Mapping[str, Any]) -> float:
        C, w, x = np.asarray(point["C"]), np.asarray(point["w"]), point_loads(point)
        return float(np.sum(w * x / (C - x)))

    def simulated(point: Mapping[str, Any]) -> Any:
        C, w, x = np.asarray(point["C"]), np.asarray(point["w"]), point_loads(point)
        sizes, scv = _SIM_SIZES[point["law"]]
        estimate = simulate_farm(C, w, x, sizes=sizes, n_jobs_per_server=2_000_000,
                                 rng=point["seed"], scv=scv, level=0.999)
        ci = estimate.social_cost
        if point["law"] == "hyperexponential" and ci.contains(
                _fcfs_cost(C, w, x, _SIM_SCV["hyperexponential"])):
            raise Inconclusive(f"simulation cannot tell PS from FCFS: {ci}")
        return ci

    points = [{"C": C, "w": w, "rho": rho, "kind": kind, "law": law, "seed": 1000 + i}
              for i, (C, w, rho, kind, law) in enumerate(
                  (C, w, rho, kind, law) for C, w, rho in _SIM_FARMS
                  for kind in ("optimal", "equilibrium") for law in _SIM_LAWS)]

    return [Claim(
        "insensitivity by simulation", SECTION_2,
        "E[N_j] = x_j/(C_j - x_j) whatever the job-size law, so the social cost of any routing "
        f"depends on the sizes only through rho: the closed-form J agrees within "
        f"{_SIM_TOLERANCE:.0%} with an M/G/1-PS simulation for exponential, deterministic and H2 "
        "(SCV 4) sizes (batch means, equivalence test at the 95% family level over the "
        f"{len(points)} points), and for H2 the 99.9% interval excludes the FCFS "
        "(Pollaczek-Khinchine) value",
        lambda point: closed_form(point), simulated, points, tolerance=_SIM_TOLERANCE,
        error=equivalence_error(relative=_SIM_TOLERANCE, n_points=len(points)),
        evidence=Evidence.SIMULATION)]


def figures(directory: Any) -> list[Any]:
    """PoA against the load for a few farms (``symq check --report``)."""
    from pathlib import Path

    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    from symq.routing.plots import plot_poa_curve

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for C, w in (([4, 2, 1], [1, 1, 1]), ([4, 2, 1], [1, 2, 4]), ([1, 1], [1, 10])):
        plot_poa_curve(C, w, ax=ax, n=120)
    ax.legend(fontsize=8)
    ax.set_title("Price of anarchy against the load (dotted: heavy-traffic limit)")
    path = Path(directory) / "ps-routing-poa.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return [path]


PAPER = register_paper(PaperSpec(
    key=KEY,
    title="Load balancing in processor sharing systems",
    citation="E. Altman, U. Ayesta, B. J. Prabhu, Telecommunication Systems 47(1-2):35-48, 2011",
    claims=build_claims,
    derivation=derive.derivation,
    models=("ps-routing",),
    figures=figures,
))
