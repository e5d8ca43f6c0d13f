"""The sympy derivation: KKT identities checked independently, exact piecewise loads, residuals."""

from fractions import Fraction

import pytest
import sympy as sp

from symq.core import get_paper
from symq.routing import derive, exact
from symq.routing.exact import exact_zero, kkt_residuals, piecewise_loads
from symq.routing.symbolic import SYMBOLS, closed_forms

S = SYMBOLS


def test_derivation_is_deterministic_and_complete():
    first = derive.derivation().to_markdown()
    assert derive.derivation().to_markdown() == first
    for heading in ("## Model:", "## Social optimum", "## Wardrop equilibrium",
                    "## Price of anarchy", "## Example"):
        assert heading in first
    d = derive.derivation()
    for title in ("Marginal cost", "KKT conditions", "Multiplier", "Optimal cost",
                  "Beckmann potential", "Cost per unit of work", "Equilibrium cost",
                  "Subset property", "Heavy-traffic limit", "Unbounded family: asymptotics"):
        assert d[title].prose  # every step cites where it comes from
    assert all(s.prose for s in d)
    assert get_paper("ps-routing").derivation().to_markdown() == first


def _two_servers():
    C1, C2, w1, w2 = sp.symbols("C1 C2 w1 w2", positive=True)
    return C1, C2, w1, w2


def test_optimal_loads_satisfy_the_kkt_conditions_symbolically():
    # independent check on two generic servers: equal marginal costs and work conservation
    f = closed_forms()
    C1, C2, w1, w2 = _two_servers()
    rho = S["rho"]
    aggregates = {S["Sigma_C"]: C1 + C2, S["Sigma_s"]: sp.sqrt(w1 * C1) + sp.sqrt(w2 * C2),
                  S["rho"]: rho}
    t = f.opt_t.subs(aggregates)
    x1 = f.opt_load.subs({S["C_j"]: C1, S["w_j"]: w1, S["t"]: t})
    x2 = f.opt_load.subs({S["C_j"]: C2, S["w_j"]: w2, S["t"]: t})
    assert sp.simplify(x1 + x2 - rho) == 0
    marginal = [sp.diff(w * x / (C - x), x) for C, w in ((C1, w1), (C2, w2)) for x in [S["x_j"]]]
    m1 = marginal[0].subs(S["x_j"], x1)
    m2 = marginal[1].subs(S["x_j"], x2)
    assert sp.simplify(m1 - m2) == 0
    assert sp.simplify(m1 - f.opt_mu.subs(aggregates)) == 0
    cost = w1 * x1 / (C1 - x1) + w2 * x2 / (C2 - x2)
    aggregates[S["Sigma_w"]] = w1 + w2
    assert sp.simplify(cost - f.opt_cost.subs(aggregates)) == 0


def test_equilibrium_loads_satisfy_the_wardrop_conditions_symbolically():
    f = closed_forms()
    C1, C2, w1, w2 = _two_servers()
    rho = S["rho"]
    aggregates = {S["Sigma_C"]: C1 + C2, S["Sigma_w"]: w1 + w2, S["rho"]: rho}
    c = f.ne_c.subs(aggregates)
    x1 = f.ne_load.subs({S["C_j"]: C1, S["w_j"]: w1, S["c"]: c})
    x2 = f.ne_load.subs({S["C_j"]: C2, S["w_j"]: w2, S["c"]: c})
    assert sp.simplify(x1 + x2 - rho) == 0
    assert sp.simplify(w1 / (C1 - x1) - w2 / (C2 - x2)) == 0
    cost = w1 * x1 / (C1 - x1) + w2 * x2 / (C2 - x2)
    assert sp.simplify(cost - f.ne_cost.subs(aggregates)) == 0


def test_potential_gradient_is_the_selfish_cost():
    f = closed_forms()
    assert sp.simplify(sp.diff(f.potential, S["x_j"]) - f.selfish_cost) == 0
    assert f.potential.subs(S["x_j"], 0) == 0


def test_thresholds_make_the_entering_server_indifferent():
    # at theta^OPT, mu of the prefix equals r_{m+1}; at theta^NE, c equals r_{m+1}
    f = closed_forms()
    at_opt = f.opt_mu.subs(S["rho"], f.opt_threshold)
    at_ne = f.ne_c.subs(S["rho"], f.ne_threshold)
    assert sp.simplify(at_opt - S["r_next"]) == 0 and sp.simplify(at_ne - S["r_next"]) == 0


def test_heavy_traffic_and_family_closed_forms():
    f = closed_forms()
    SC, Ss, Sw, rho = S["Sigma_C"], S["Sigma_s"], S["Sigma_w"], S["rho"]
    ratio = (rho * Sw / (SC - rho)) / (Ss ** 2 / (SC - rho) - Sw)
    assert sp.simplify(f.heavy_traffic_poa - sp.cancel(sp.together(ratio)).subs(rho, SC)) == 0
    h = S["h"]
    assert f.family["poa"].subs(h, 4) == sp.Rational(15, 11)
    assert f.family["J_opt"].subs(h, 4) == sp.Rational(11, 5)
    assert sp.limit(f.family["poa"] / sp.sqrt(h), h, sp.oo) == sp.Rational(1, 2)


def test_piecewise_loads_of_the_typical_farm():
    # thresholds by hand: theta^OPT = (2, 4), theta^NE = (3, 21/4) (see test_closed_forms)
    pw = piecewise_loads([4, 2, 1], [1, 2, 4])
    assert pw.thresholds_optimal == (2, 4)
    assert pw.thresholds_equilibrium == (3, sp.Rational(21, 4))
    assert pw.at(5) == (sp.Rational(10, 3), sp.Rational(4, 3), sp.Rational(1, 3))
    assert pw.at(5, "equilibrium") == (sp.Rational(11, 3), sp.Rational(4, 3), 0)
    assert pw.at(Fraction(1, 2)) == (sp.Rational(1, 2), 0, 0)
    assert pw.order == (0, 1, 2)
    # loads are linear in rho on each piece: on (2, 4], x_1 = 1 + rho/2 (t = (6 - rho)/4)
    rho = pw.rho
    assert sp.expand(pw.pieces_optimal[1][0] - (1 + rho / 2)) == 0


@pytest.mark.parametrize("C, w", [((3, Fraction(5, 2), 1, 2), (1, 2, Fraction(7, 3), 5)),
                                  ((1, 2, 3), (3, 2, 1)),
                                  ((2, 2), (1, 1))])
def test_adjacent_pieces_agree_at_the_thresholds(C, w):
    pw = piecewise_loads(C, w)
    for pieces, ths in ((pw.pieces_optimal, pw.thresholds_optimal),
                        (pw.pieces_equilibrium, pw.thresholds_equilibrium)):
        for m, theta in enumerate(ths):
            for left, right in zip(pieces[m], pieces[m + 1]):
                assert exact_zero((left - right).subs(pw.rho, theta))
        # the entering server has load exactly zero at its threshold
        for m, theta in enumerate(ths):
            assert exact_zero(pieces[m + 1][pw.order[m + 1]].subs(pw.rho, theta))


def test_piecewise_loads_are_nondecreasing_in_rho():
    pw = piecewise_loads((3, Fraction(5, 2), 1, 2), (1, 2, Fraction(7, 3), 5))
    grid = [Fraction(k, 4) for k in range(1, 34)]           # up to 33/4 < sum C = 17/2
    for kind in ("optimal", "equilibrium"):
        rows = [[float(v) for v in pw.at(r, kind)] for r in grid]
        for a, b in zip(rows, rows[1:]):
            assert all(y >= x - 1e-15 for x, y in zip(a, b))


def test_kkt_residuals_are_exactly_zero_only_at_the_solution():
    C, w = (3, Fraction(5, 2), 1, 2), (1, 2, Fraction(7, 3), 5)
    pw = piecewise_loads(C, w)
    for rho in (Fraction(1, 3), 4, 7):
        for kind in ("optimal", "equilibrium"):
            assert exact.kkt_holds_exactly(C, w, rho, pw.at(rho, kind), kind)
    x = list(pw.at(4))
    x[0] += sp.Rational(1, 100)
    x[1] -= sp.Rational(1, 100)
    residuals = kkt_residuals(C, w, 4, x)
    assert residuals[0] == 0 and any(r != 0 for r in residuals)
    # the equilibrium is not socially optimal when the r_j differ
    assert not exact.kkt_holds_exactly(C, w, 7, pw.at(7, "equilibrium"), "optimal")
    # dual feasibility: an idle cheap server (r_1 = 1/4 < c = 2) violates the conditions
    residuals = kkt_residuals((4, 2, 1), (1, 2, 4), 1, (0, 1, 0), "equilibrium")
    assert residuals[0] == 0 and sp.Rational(7, 4) in residuals
    # a server at capacity is infeasible
    assert sp.oo in kkt_residuals((4, 2, 1), (1, 2, 4), 2, (0, 2, 0), "equilibrium")


def test_exact_zero():
    assert exact_zero(sp.sqrt(2) + sp.sqrt(3) - sp.sqrt(5 + 2 * sp.sqrt(6)))
    assert not exact_zero(sp.sqrt(2) - sp.Rational(141421356, 100000000))
    assert exact_zero(sp.Integer(0)) and not exact_zero(sp.Rational(1, 10**30))
