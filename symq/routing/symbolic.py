r"""Symbolic derivation of the social optimum, the Wardrop equilibrium and the price of anarchy.

Everything here is derived with sympy from the model's defining data (the holding-cost rate
:math:`w_j x_j/(C_j - x_j)` of an M/G/1-PS server, Altman, Ayesta, Prabhu 2011, model section):

* social optimum (paper, centralised-routing section): ``diff`` gives the marginal cost,
  ``solve`` the KKT stationarity condition, summing over the active prefix gives the multiplier,
  the optimal loads, the optimal cost and the entry thresholds;
* Wardrop equilibrium (paper, decentralised-routing section): ``integrate`` gives the Beckmann
  potential :math:`\Phi`, whose KKT conditions are the Wardrop conditions; ``solve`` gives the
  common cost per unit of work, the loads, the cost and the thresholds;
* price of anarchy (paper, price-of-anarchy section): closed form, heavy-traffic ``limit``, and an
  explicit two-server family whose PoA grows without bound (the paper's claim that the PoA is
  unbounded with unequal holding costs).

The exact evaluation of these closed forms on a concrete farm (piecewise loads in
:math:`\rho`, exact KKT residuals) is in :mod:`symq.routing.exact`; the recorded derivation with
a worked example on a farm (``symq derive ps-routing``) in :mod:`symq.routing.derive`.

Closed forms are written with prefix aggregates over the active set :math:`S = \{1..m\}`
(servers sorted by :math:`r_j = w_j/C_j`): :math:`\Sigma_C = \sum_S C_j`,
:math:`\Sigma_s = \sum_S s_j` with :math:`s_j = \sqrt{w_j C_j}`, :math:`\Sigma_w = \sum_S w_j`,
so that :mod:`symq.routing.solve` compiles them once and evaluates them on prefix-sum arrays.
Each derived result is checked against the expected form inside the derivation (a failing
check raises :class:`~symq.core.errors.SymqError`).

Examples
--------
>>> forms = closed_forms()
>>> forms.opt_cost
Sigma_s**2/(Sigma_C - rho) - Sigma_w
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sp

from symq.core.errors import SymqError
from symq.core.result import Exactness, ResultBase

from . import farm as _farm

__all__ = [
    "ClosedForms",
    "closed_forms",
    "equation",
    "record_closed_forms",
    "SYMBOLS",
]

SOURCE = ("E. Altman, U. Ayesta, B. J. Prabhu, Load balancing in processor sharing systems, "
          "Telecommunication Systems 47(1-2):35-48, 2011")

# ----------------------------------------------------------------------------- symbols

_pos = {"positive": True, "real": True}
x_j = sp.Symbol("x_j", nonnegative=True, real=True)
C_j = sp.Symbol("C_j", **_pos)
w_j = sp.Symbol("w_j", **_pos)
s_j = sp.Symbol("s_j", **_pos)
r_j = sp.Symbol("r_j", **_pos)
u = sp.Symbol("u", nonnegative=True, real=True)
d_j = sp.Symbol("d_j", **_pos)          # slack C_j - x_j
mu = sp.Symbol("mu", **_pos)
t = sp.Symbol("t", **_pos)
c = sp.Symbol("c", **_pos)
rho = _farm.rho.symbol
Sigma_C = sp.Symbol("Sigma_C", **_pos)
Sigma_s = sp.Symbol("Sigma_s", **_pos)
Sigma_w = sp.Symbol("Sigma_w", **_pos)
r_next = sp.Symbol("r_{m+1}", **_pos)
q = sp.Symbol("q", **_pos)
h = sp.Symbol("h", **_pos)
M = sp.Symbol("M", **_pos)
J, J_opt, J_ne, PoA = sp.symbols("J J^* J^NE PoA", **_pos)
theta_opt = sp.Symbol("theta^OPT_m", real=True)
theta_ne = sp.Symbol("theta^NE_m", real=True)
_j = sp.Symbol("j", integer=True, positive=True)
_m = sp.Symbol("m", integer=True, positive=True)
_K = sp.Symbol("K", integer=True, positive=True)
_C = sp.IndexedBase("C", **_pos)
_w = sp.IndexedBase("w", **_pos)
_x = sp.IndexedBase("x", nonnegative=True, real=True)

#: The symbols of the closed forms, by name (the arguments used by :mod:`symq.routing.solve`).
SYMBOLS: dict[str, sp.Symbol] = {
    "x_j": x_j, "C_j": C_j, "w_j": w_j, "s_j": s_j, "mu": mu, "t": t, "c": c, "rho": rho,
    "Sigma_C": Sigma_C, "Sigma_s": Sigma_s, "Sigma_w": Sigma_w, "r_next": r_next, "h": h,
}


def _tagged_aggregates(tag: str) -> tuple[sp.Symbol, sp.Symbol, sp.Symbol]:
    """Aggregates of a named active set (``Sigma^OPT_C`` ...), for the PoA formula."""
    C_, s_, w_ = (sp.Symbol(f"Sigma^{tag}_{k}", **_pos) for k in ("C", "s", "w"))
    return C_, s_, w_


# ----------------------------------------------------------------------------- helpers

class _Silent:
    """A stand-in for :class:`Derivation` that records nothing (used by :func:`closed_forms`)."""

    def add(self, title: str, content: Any, prose: str = "") -> Any:
        return content

    def section(self, heading: str) -> None:
        return None


def _check(derived: sp.Expr, expected: sp.Expr, what: str) -> None:
    """Raise unless sympy proves ``derived == expected``."""
    difference = sp.simplify(derived - expected)
    if difference != 0:
        raise SymqError(f"derivation check failed for {what}: difference {difference}")


def equation(lhs: Any, rhs: Any) -> sp.Eq:
    """``lhs = rhs`` as an unevaluated sympy equation (as a derivation prints it)."""
    return sp.Eq(lhs, rhs, evaluate=False)


def _prefix_sum(expr: sp.Expr) -> sp.Expr:
    r"""Sum a per-server expression over the active prefix by linearity of summation.

    Each additive term must be a coefficient (free of server data) times one of
    :math:`C_j, s_j, w_j, 1`; the sums are replaced by :math:`\Sigma_C, \Sigma_s, \Sigma_w, m`.
    """
    aggregates = {C_j: Sigma_C, s_j: Sigma_s, w_j: Sigma_w, sp.Integer(1): _m}
    total = sp.Integer(0)
    for term in sp.Add.make_args(sp.expand(expr)):
        coefficient, data = term.as_independent(C_j, s_j, w_j, as_Add=False)
        if data not in aggregates:
            raise SymqError(f"cannot sum the term {term} by linearity")
        total += coefficient * aggregates[data]
    return total


def _indexed(expr: sp.Expr) -> sp.Expr:
    return expr.subs({s_j: sp.sqrt(_w[_j] * _C[_j]), C_j: _C[_j], w_j: _w[_j], x_j: _x[_j]})


def _kept_root(roots: list[sp.Expr], upper: sp.Expr, what: str) -> sp.Expr:
    """The unique root strictly below ``upper`` (loads below capacity, rho below Sigma_C)."""
    kept = [root for root in roots if sp.simplify(upper - root).is_positive]
    if len(kept) != 1:
        raise SymqError(f"derivation: expected one admissible root for {what}, got {roots}")
    return kept[0]


# ----------------------------------------------------------------------------- derivation steps

def _derive_model(d: Any) -> dict[str, sp.Expr]:
    d.section("Model: PS servers with holding costs (paper, model section)")
    cost_j = w_j * x_j / (C_j - x_j)
    d.add("Social cost", equation(J, sp.Sum(_indexed(cost_j), (_j, 1, _K))),
          "M/G/1-PS insensitivity gives $E[N_j] = x_j/(C_j - x_j)$ whatever the job-size law, so "
          "the holding-cost rate is this sum (paper, model section).")
    selfish_j = w_j / (C_j - x_j)
    d.add("Selfish cost per unit of work", equation(sp.Symbol("cost_j"), selfish_j),
          "A job of size $s$ at server $j$ has mean sojourn $s/(C_j - x_j)$; the size factors "
          "out, so every job ranks the servers by this cost (paper, model section).")
    return {"cost_j": cost_j, "selfish_j": selfish_j}


def _derive_optimum(d: Any, model: dict[str, sp.Expr]) -> dict[str, sp.Expr]:
    d.section("Social optimum (paper, centralised-routing section)")
    cost_j = model["cost_j"]
    marginal = sp.simplify(sp.diff(cost_j, x_j))
    _check(marginal, w_j * C_j / (C_j - x_j) ** 2, "the marginal cost")
    d.add("Marginal cost", equation(sp.Derivative(cost_j, x_j), marginal),
          "Differentiate the holding-cost rate of server $j$ (paper, centralised-routing "
          "section).")
    curvature = sp.factor(sp.diff(marginal, x_j))
    _check(curvature, 2 * w_j * C_j / (C_j - x_j) ** 3, "the curvature")
    d.add("Strict convexity", equation(sp.Derivative(cost_j, (x_j, 2)), curvature),
          r"Positive for $0 \le x_j < C_j$: $J$ is strictly convex and the optimum is unique.")
    d.add("KKT conditions",
          [equation(marginal, mu), sp.GreaterThan(w_j / C_j, mu, evaluate=False)],
          r"Minimise $J$ subject to $\sum_j x_j = \rho$: equal marginal costs $\mu$ on used "
          r"servers (first line), $r_j = w_j/C_j \ge \mu$ on unused ones (second line), paper, "
          "centralised-routing section.")
    roots = sp.solve(sp.Eq(marginal, mu), x_j)
    x_mu = _kept_root(roots, C_j, "the optimal load")
    d.add("Solve the stationarity condition", equation(x_j, x_mu),
          "sympy.solve returns two roots; the one below the capacity $C_j$ is kept.")
    x_t = sp.expand(x_mu.subs(mu, 1 / t ** 2)).subs(sp.sqrt(C_j) * sp.sqrt(w_j), s_j)
    _check(x_t.subs(s_j, sp.sqrt(w_j * C_j)), x_mu.subs(mu, 1 / t ** 2), "the substitution t")
    d.add("Substitute t = 1/sqrt(mu)", [equation(t, 1 / sp.sqrt(mu)),
                                        equation(s_j, sp.sqrt(w_j * C_j)), equation(x_j, x_t)],
          r"With $t$ in place of $\mu$ the loads are linear in $t$ on a fixed active set $S$.")
    total = _prefix_sum(x_t)
    d.add("Prefix aggregates",
          [equation(Sigma_C, sp.Sum(_C[_j], (_j, 1, _m))),
           equation(Sigma_s, sp.Sum(sp.sqrt(_w[_j] * _C[_j]), (_j, 1, _m))),
           equation(Sigma_w, sp.Sum(_w[_j], (_j, 1, _m)))],
          r"The used set is a prefix $S = \{1, \dots, m\}$ of the servers sorted by "
          r"$r_j = w_j/C_j$: by the KKT conditions a server is used iff $r_j < \mu$ (paper, "
          "centralised-routing section).")
    d.add("Work conservation on S", equation(sp.Sum(_x[_j], (_j, 1, _m)), total),
          r"Sum the loads over $S$ by linearity; this must equal $\rho$.")
    t_star = sp.solve(sp.Eq(total, rho), t)[0]
    mu_star = sp.simplify(1 / t_star ** 2)
    _check(t_star, (Sigma_C - rho) / Sigma_s, "the multiplier t")
    d.add("Multiplier", [equation(t, t_star), equation(mu, mu_star)],
          r"Solve the work-conservation equation for $t$; $\mu = 1/t^2$.")
    x_star = x_t.subs(t, t_star)
    d.add("Optimal loads", equation(sp.Symbol("x_j^*"), x_star),
          r"Square-root assignment for $j \in S$; $x_j^* = 0$ outside $S$ (paper, "
          "centralised-routing section).")
    per_server = sp.simplify(cost_j.subs(x_j, x_t).subs(s_j, sp.sqrt(w_j * C_j)))
    per_server = sp.expand(per_server).subs(sp.sqrt(C_j) * sp.sqrt(w_j), s_j)
    _check(per_server, s_j / t - w_j, "the cost of one server at the optimum")
    d.add("Cost of a used server", equation(cost_j.subs(x_j, sp.Symbol("x_j^*")), per_server),
          "Substitute the optimal load into $w_j x_j/(C_j - x_j)$ and simplify.")
    cost_star = sp.simplify(_prefix_sum(per_server).subs(t, t_star))
    _check(cost_star, Sigma_s ** 2 / (Sigma_C - rho) - Sigma_w, "the optimal cost")
    cost_star = Sigma_s ** 2 / (Sigma_C - rho) - Sigma_w
    d.add("Optimal cost", equation(J_opt, cost_star),
          "Sum over $S$ and substitute $t$; sympy checks the result against "
          r"$J^* = (\sum_j \sqrt{w_j C_j})^2/(\sum_j C_j - \rho) - \sum_j w_j$.")
    threshold = _kept_root(sp.solve(sp.Eq(mu_star, r_next), rho), Sigma_C, "the threshold")
    _check(threshold, Sigma_C - Sigma_s / sp.sqrt(r_next), "the optimal threshold")
    contribution = C_j - sp.sqrt(w_j * C_j) / sp.sqrt(r_next)
    _check(contribution, C_j * (1 - sp.sqrt((w_j / C_j) / r_next)), "the threshold terms")
    d.add("Entry threshold",
          [equation(theta_opt, threshold),
           equation(theta_opt,
                    sp.Sum(_C[_j] * (1 - sp.sqrt(_w[_j] / _C[_j] / r_next)), (_j, 1, _m)))],
          r"Server $m+1$ is used once $\mu(S = \{1, \dots, m\})$ reaches $r_{m+1}$: solve "
          r"$\mu = r_{m+1}$ for $\rho$ ($s_j = C_j \sqrt{r_j}$ gives the second form).")
    unit = x_star.subs({s_j: sp.sqrt(C_j), Sigma_s: sp.Sum(sp.sqrt(_C[_j]), (_j, 1, _m))})
    d.add("Equal holding costs w = 1", equation(sp.Symbol("x_j^*"), unit),
          "With $w_j = 1$ this is the square-root assignment of Kleinrock and of Bell & Stidham "
          "(Management Science 29(7), 1983).")
    return {"marginal": marginal, "x_t": x_t, "t": t_star, "mu": mu_star,
            "load": x_t.subs(s_j, sp.sqrt(C_j * w_j)), "cost": cost_star, "threshold": threshold}


def _derive_equilibrium(d: Any, model: dict[str, sp.Expr]) -> dict[str, sp.Expr]:
    d.section("Wardrop equilibrium via a potential (paper, decentralised-routing section)")
    selfish = model["selfish_j"]
    d.add("Wardrop conditions",
          [equation(selfish, c), sp.GreaterThan(w_j / C_j, c, evaluate=False)],
          "Every used server offers the same cost $c$ per unit of work, unused ones cost at "
          "least $c$ at zero load (paper, decentralised-routing section).")
    integral = sp.integrate(selfish.subs(x_j, u), (u, 0, C_j - d_j))
    potential_d = w_j * sp.log(C_j / d_j)
    if sp.simplify(sp.expand_log(integral - potential_d, force=True)) != 0:
        raise SymqError(f"derivation check failed for the potential: {integral}")
    potential = w_j * sp.log(C_j / (C_j - x_j))
    d.add("Beckmann potential",
          [equation(sp.Symbol("Phi_j"), sp.Integral(selfish.subs(x_j, u), (u, 0, x_j))),
           equation(sp.Symbol("Phi_j"), potential)],
          "Integrate the selfish cost (sympy.integrate with the slack $C_j - x_j > 0$); "
          r"$\Phi = \sum_j \Phi_j$ (paper, decentralised-routing section).")
    gradient = sp.simplify(sp.diff(potential, x_j))
    _check(gradient, selfish, "the gradient of the potential")
    curvature = sp.simplify(sp.diff(potential, x_j, 2))
    _check(curvature, w_j / (C_j - x_j) ** 2, "the curvature of the potential")
    d.add("Potential gradient and curvature",
          [equation(sp.Derivative(potential, x_j), gradient),
           equation(sp.Derivative(potential, (x_j, 2)), curvature)],
          r"The gradient is the selfish cost, so the KKT conditions of $\min \Phi$ subject to "
          r"$\sum_j x_j = \rho$ are the Wardrop conditions; $\Phi$ is strictly convex, so the "
          "equilibrium is its unique minimiser (paper, decentralised-routing section).")
    x_c = _kept_root(sp.solve(sp.Eq(gradient, c), x_j), C_j, "the equilibrium load")
    d.add("Solve the Wardrop condition", equation(x_j, x_c),
          "Linear in $1/c$ on a fixed active set.")
    total = _prefix_sum(x_c)
    d.add("Work conservation on S", equation(sp.Sum(_x[_j], (_j, 1, _m)), total),
          r"Sum over the prefix $S = \{1, \dots, m\}$ of the $r$-ordering: by the Wardrop "
          "conditions a server is used iff $r_j < c$.")
    c_star = sp.solve(sp.Eq(total, rho), c)[0]
    _check(c_star, Sigma_w / (Sigma_C - rho), "the equilibrium cost per unit of work")
    d.add("Cost per unit of work", equation(c, c_star), "Solve work conservation for $c$.")
    x_ne = x_c.subs(c, c_star)
    d.add("Equilibrium loads", equation(sp.Symbol("x_j^NE"), x_ne),
          r"For $j \in S^{NE}$; $x_j^{NE} = 0$ outside (paper, decentralised-routing section).")
    per_server = sp.simplify(model["cost_j"].subs(x_j, x_c))
    _check(per_server, c * x_c, "the cost of one server at equilibrium")
    cost_ne = sp.simplify(_prefix_sum(sp.expand(per_server)).subs(c, c_star))
    _check(cost_ne, rho * Sigma_w / (Sigma_C - rho), "the equilibrium cost")
    cost_ne = rho * Sigma_w / (Sigma_C - rho)
    d.add("Equilibrium cost", [equation(model["cost_j"].subs(x_j, sp.Symbol("x_j^NE")), c * x_j),
                               equation(J_ne, cost_ne)],
          r"$w_j x_j/(C_j - x_j) = c x_j$ on used servers, so $J^{NE} = c \rho$: every job pays "
          "$c$ per unit of work.")
    threshold = sp.solve(sp.Eq(c_star, r_next), rho)[0]
    _check(threshold, Sigma_C - Sigma_w / r_next, "the equilibrium threshold")
    d.add("Entry threshold",
          [equation(theta_ne, threshold),
           equation(theta_ne, sp.Sum(_C[_j] * (1 - _w[_j] / _C[_j] / r_next), (_j, 1, _m)))],
          r"Server $m+1$ is used once $c(S = \{1, \dots, m\})$ reaches $r_{m+1}$: solve "
          r"$c = r_{m+1}$ for $\rho$.")
    gap = sp.sqrt(q) * (1 - sp.sqrt(q))
    _check(sp.sqrt(q) - q, gap, "the threshold gap")
    d.add("Subset property",
          [equation(theta_ne - theta_opt,
               sp.Sum(_C[_j] * (sp.sqrt(q) - q).subs(q, _w[_j] / _C[_j] / r_next), (_j, 1, _m))),
           equation(sp.sqrt(q) - q, gap)],
          r"With $q = r_j/r_{m+1} \in (0, 1]$, $\sqrt{q} - q \ge 0$: "
          r"$\theta^{OPT}_m \le \theta^{NE}_m$, the optimum opens every server at a lower load, "
          r"so $S^{NE} \subseteq S^{OPT}$ (the paper's subset property, decentralised-routing "
          "section).")
    return {"selfish": gradient, "potential": potential, "c": c_star,
            "load": x_c, "cost": cost_ne, "threshold": threshold}


def _derive_anarchy(d: Any, opt: dict[str, sp.Expr], ne: dict[str, sp.Expr]) -> dict[str, Any]:
    d.section("Price of anarchy (paper, price-of-anarchy section)")
    C_o, s_o, w_o = _tagged_aggregates("OPT")
    C_n, _, w_n = _tagged_aggregates("NE")
    poa = (ne["cost"].subs({Sigma_C: C_n, Sigma_w: w_n})
           / opt["cost"].subs({Sigma_C: C_o, Sigma_s: s_o, Sigma_w: w_o}))
    d.add("Price of anarchy", equation(PoA, poa),
          r"$\mathrm{PoA} = J^{NE} / J^*$, each with the aggregates of its own active set "
          "(paper, price-of-anarchy section).")
    all_used = sp.simplify(ne["cost"] / opt["cost"])
    limit = sp.limit(all_used, rho, Sigma_C, "-")
    _check(limit, Sigma_C * Sigma_w / Sigma_s ** 2, "the heavy-traffic limit")
    d.add("Heavy-traffic limit",
          [equation(PoA, all_used), equation(sp.Limit(PoA, rho, Sigma_C, "-"), limit)],
          r"Near $\rho = \sum_j C_j$ every server is used in both solutions; sympy.limit gives "
          r"the limit, $\ge 1$ by Cauchy-Schwarz with equality iff all $r_j$ are equal.")
    unit = limit.subs({Sigma_w: _K, Sigma_s: sp.Sum(sp.sqrt(_C[_j]), (_j, 1, _K)),
                       Sigma_C: sp.Sum(_C[_j], (_j, 1, _K))})
    d.add("Equal holding costs w = 1", equation(sp.Limit(PoA, rho, Sigma_C, "-"), unit),
          "Below $K$, and tending to $K$ when one capacity dominates: the tight case of the "
          r"bound $\mathrm{PoA} \le \lvert S^{OPT} \rvert$ (Haviv & Roughgarden, Oper. Res. "
          "Lett. 35(4), 2007, recalled in the paper's price-of-anarchy section).")

    # the family C = (1, 1), w = (1, h), rho = 1 - 1/h
    rho_h = 1 - 1 / h
    d.add("Unbounded family: instance",
          [equation(sp.Symbol("C"), sp.Matrix([[1, 1]])),
           equation(sp.Symbol("w"), sp.Matrix([[1, h]])), equation(rho, rho_h)],
          "Two servers of equal speed, the second one $h > 1$ times more expensive: an explicit "
          "instance of the paper's unbounded PoA with unequal holding costs.")
    e = sp.Symbol("epsilon", **_pos)   # h = (1 + epsilon)^2 > 1
    theta_ne_1 = ne["threshold"].subs({Sigma_C: 1, Sigma_w: 1, r_next: h})
    theta_opt_1 = opt["threshold"].subs({Sigma_C: 1, Sigma_s: 1, r_next: h})
    _check(theta_ne_1, rho_h, "the family's equilibrium threshold")
    margin = sp.factor((rho_h - theta_opt_1).subs(h, (1 + e) ** 2))
    if not margin.is_positive:
        raise SymqError(f"derivation check failed: the family's optimum uses one server ({margin})")
    d.add("Unbounded family: active sets",
          [equation(sp.Symbol("theta^NE_1"), theta_ne_1),
           equation(sp.Symbol("theta^OPT_1"), theta_opt_1)],
          r"$\rho$ equals $\theta^{NE}_1$ (the boundary case $c = h = w_2/C_2$: only server 1 "
          r"is used at equilibrium) and exceeds $\theta^{OPT}_1$ (both servers are used at the "
          "optimum).")
    c_h = sp.simplify(ne["c"].subs({Sigma_C: 1, Sigma_w: 1, rho: rho_h}))
    j_ne = sp.simplify(ne["cost"].subs({Sigma_C: 1, Sigma_w: 1, rho: rho_h}))
    _check(j_ne, h - 1, "the family's equilibrium cost")
    d.add("Unbounded family: equilibrium", [equation(c, c_h), equation(J_ne, j_ne)],
          "All the traffic goes to server 1.")
    aggregates = {Sigma_C: 2, Sigma_s: 1 + sp.sqrt(h), Sigma_w: 1 + h, rho: rho_h}
    t_h = opt["t"].subs(aggregates)
    x1 = sp.simplify(opt["load"].subs({C_j: 1, w_j: 1, t: t_h}))
    x2 = sp.simplify(opt["load"].subs({C_j: 1, w_j: h, t: t_h}))
    j_opt = sp.simplify(opt["cost"].subs(aggregates))
    x1_note = (h ** sp.Rational(3, 2) - 1) / (h ** sp.Rational(3, 2) + h)
    x2_note = (sp.sqrt(h) - 1) / (h + sp.sqrt(h))
    j_note = (2 * h ** sp.Rational(3, 2) - h - 1) / (h + 1)
    _check(x1, x1_note, "the family's x_1*")
    _check(x2, x2_note, "the family's x_2*")
    _check(j_opt, j_note, "the family's J*")
    d.add("Unbounded family: optimum",
          [equation(sp.Symbol("x_1^*"), x1_note), equation(sp.Symbol("x_2^*"), x2_note),
           equation(J_opt, j_note)],
          "Substitute the instance into the optimal loads and cost; sympy checks them against the "
          "simplified forms shown.")
    poa_h = sp.simplify(j_ne / j_opt)
    poa_note = (h + 1) * (sp.sqrt(h) + 1) / (2 * h + sp.sqrt(h) + 1)
    _check(poa_h, poa_note, "the family's PoA")
    d.add("Unbounded family: price of anarchy",
          [equation(PoA, j_ne / j_note), equation(PoA, poa_note)],
          "The ratio simplifies to the second form (checked by sympy).")
    growth = sp.limit(poa_note / sp.sqrt(h), h, sp.oo)
    if growth != sp.Rational(1, 2):
        raise SymqError(f"derivation check failed: PoA/sqrt(h) -> {growth}")
    in_rho = (sp.sqrt(h) / 2).subs(h, 1 / (1 - rho))
    d.add("Unbounded family: asymptotics",
          [equation(sp.Limit(PoA / sp.sqrt(h), h, sp.oo), growth),
           equation(sp.Symbol("PoA_asympt"), in_rho)],
          r"$\mathrm{PoA} \sim \sqrt{h}/2$ grows without bound; with $h = 1/(1 - \rho)$, "
          r"$\mathrm{PoA} \sim 1/(2 \sqrt{1 - \rho})$ as $\rho \to 1$: the PoA is unbounded "
          "(paper, price-of-anarchy section).")
    variant = {Sigma_C: 1 + M, Sigma_s: 1 + M * sp.sqrt(h), Sigma_w: 1 + h * M, rho: rho_h}
    j_variant = sp.limit(opt["cost"].subs(variant), M, sp.oo)
    _check(j_variant, 2 * (sp.sqrt(h) - 1), "the variant's limit cost")
    poa_variant = sp.simplify(j_ne / j_variant)
    _check(poa_variant, (sp.sqrt(h) + 1) / 2, "the variant's limit PoA")
    d.add("Variant C = (1, M), w = (1, hM)",
          [equation(sp.Limit(J_opt, M, sp.oo), j_variant),
           equation(sp.Limit(PoA, M, sp.oo), (sp.sqrt(h) + 1) / 2)],
          r"Same $\rho$ and same equilibrium ($r = (1, h)$); a large expensive server.")
    return {"poa": poa, "heavy_traffic": limit, "family": {
        "rho": rho_h, "x1": x1_note, "x2": x2_note, "J_opt": j_note, "J_ne": j_ne,
        "poa": poa_note, "asymptotic": sp.sqrt(h) / 2}}


# ----------------------------------------------------------------------------- public API

@dataclass(frozen=True)
class ClosedForms(ResultBase):
    r"""The closed forms derived by this module (sympy expressions).

    Attributes
    ----------
    opt_t, opt_mu : sympy.Expr
        :math:`t = (\Sigma_C - \rho)/\Sigma_s` and :math:`\mu = 1/t^2`.
    opt_load : sympy.Expr
        :math:`x_j^* = C_j - \sqrt{w_j C_j}\, t` as a function of ``C_j, w_j, t``.
    opt_cost : sympy.Expr
        :math:`J^* = \Sigma_s^2/(\Sigma_C - \rho) - \Sigma_w`.
    opt_threshold : sympy.Expr
        :math:`\theta^{OPT}_m = \Sigma_C - \Sigma_s/\sqrt{r_{m+1}}`.
    marginal_cost : sympy.Expr
        :math:`w_j C_j/(C_j - x_j)^2`.
    ne_c, ne_load, ne_cost, ne_threshold : sympy.Expr
        :math:`c = \Sigma_w/(\Sigma_C - \rho)`, :math:`x_j = C_j - w_j/c`,
        :math:`J^{NE} = \rho\Sigma_w/(\Sigma_C - \rho)`, :math:`\theta^{NE}_m = \Sigma_C -
        \Sigma_w/r_{m+1}`.
    selfish_cost, potential : sympy.Expr
        :math:`w_j/(C_j - x_j)` and :math:`w_j \ln(C_j/(C_j - x_j))`.
    poa : sympy.Expr
        PoA with the aggregates of each active set.
    heavy_traffic_poa : sympy.Expr
        :math:`\Sigma_C\Sigma_w/\Sigma_s^2` over all servers.
    family : dict
        The unbounded family as functions of ``h``: ``rho, x1, x2, J_opt, J_ne, poa,
        asymptotic``.
    method : str
        ``"symbolic derivation (sympy)"``.
    exactness : Exactness
        ``exact``.
    """

    summary: ClassVar[tuple[str, ...]] = ("opt_cost", "ne_cost", "heavy_traffic_poa")

    opt_t: sp.Expr
    opt_mu: sp.Expr
    opt_load: sp.Expr
    opt_cost: sp.Expr
    opt_threshold: sp.Expr
    marginal_cost: sp.Expr
    ne_c: sp.Expr
    ne_load: sp.Expr
    ne_cost: sp.Expr
    ne_threshold: sp.Expr
    selfish_cost: sp.Expr
    potential: sp.Expr
    poa: sp.Expr
    heavy_traffic_poa: sp.Expr
    family: dict
    method: str = "symbolic derivation (sympy)"
    exactness: Exactness = Exactness.EXACT


def record_closed_forms(d: Any) -> ClosedForms:
    """Derive the closed forms (model, social optimum, Wardrop equilibrium, price of anarchy),
    recording each step in ``d`` (a :class:`~symq.core.derivation.Derivation`, or a stand-in
    that records nothing); each is checked against its expected form on the way."""
    model = _derive_model(d)
    opt = _derive_optimum(d, model)
    ne = _derive_equilibrium(d, model)
    anarchy = _derive_anarchy(d, opt, ne)
    return ClosedForms(
        opt_t=opt["t"], opt_mu=opt["mu"], opt_load=opt["load"], opt_cost=opt["cost"],
        opt_threshold=opt["threshold"], marginal_cost=opt["marginal"],
        ne_c=ne["c"], ne_load=ne["load"], ne_cost=ne["cost"], ne_threshold=ne["threshold"],
        selfish_cost=ne["selfish"], potential=ne["potential"],
        poa=anarchy["poa"], heavy_traffic_poa=anarchy["heavy_traffic"], family=anarchy["family"],
    )


@functools.lru_cache(maxsize=1)
def closed_forms() -> ClosedForms:
    """Derive (once per process) and return the closed forms.

    Returns
    -------
    ClosedForms
        The same expressions as :func:`derivation` records, derived by the same code.
    """
    return record_closed_forms(_Silent())
