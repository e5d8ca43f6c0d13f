"""The symbolic stationary law against closed forms written here (birth-death products, Erlang
B), against the exact rational solve on chains that are not reversible, and the float tests of
reversibility and product form."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import DerivationTimeout, InvalidParameter, ResourceLimit
from symq.core.result import Exactness
from symq.markov import (
    Jump,
    MarkovChain,
    StateVariable,
    erlang_loss,
    exact_stationary,
    mm1k,
    tandem,
)
from symq.markov.symbolic import (
    SOLVE_METHOD,
    TREE_METHOD,
    is_reversible,
    product_form,
    symbolic_stationary,
)

lam, mu, a = sp.symbols("lam mu a", real=True)


def _two_queues(K1=3, K2=2):
    """Two independent M/M/1/K queues: reversible, product form."""
    return MarkovChain(
        [StateVariable("x", 0, K1), StateVariable("y", 0, K2)],
        [Jump("l1", {"x": "x + 1"}, f"x < {K1}"), Jump("m1", {"x": "x - 1"}, "x > 0"),
         Jump("l2", {"y": "y + 1"}, f"y < {K2}"), Jump("m2", {"y": "y - 1"}, "y > 0")],
        parameters=("l1", "m1", "l2", "m2"), outputs={"both_full": f"x == {K1} and y == {K2}",
                                                      "Ex": "x"})


def _cycle(symmetric=True):
    """A 3-state cycle 0 -> 1 -> 2 -> 0 at rate f (and back at rate b when ``symmetric``):
    Kolmogorov's criterion fails unless f == b."""
    jumps = [Jump("f", {"s": "1"}, "s == 0"), Jump("f", {"s": "2"}, "s == 1"),
             Jump("f", {"s": "0"}, "s == 2")]
    if symmetric:
        jumps += [Jump("b", {"s": "2"}, "s == 0"), Jump("b", {"s": "0"}, "s == 1"),
                  Jump("b", {"s": "1"}, "s == 2")]
    params = ("f", "b") if symmetric else ("f",)
    return MarkovChain([StateVariable("s", 0, 2)], jumps, parameters=params,
                       outputs={"P0": "s == 0", "Es": "s"})


@pytest.mark.parametrize("K", [1, 4, 7])
def test_mm1k_law_is_the_geometric_closed_form(K):
    law = symbolic_stationary(mm1k(K))
    rho = lam / mu
    norm = sum(rho ** k for k in range(K + 1))
    assert law.n_states == K + 1
    for n, p in enumerate(law.pi):
        assert sp.simplify(p - rho ** n / norm) == 0
    assert sp.simplify(law["P_block"] - rho ** K / norm) == 0
    assert sp.simplify(law["EN"] - sum(k * rho ** k for k in range(K + 1)) / norm) == 0
    assert law.reversible and law.method == TREE_METHOD
    assert law.exactness == Exactness.EXACT


def test_erlang_b_for_three_servers_from_the_symbolic_solve():
    law = symbolic_stationary(erlang_loss(3))
    B = law["P_block"].subs(lam, a * mu)
    expected = (a ** 3 / 6) / (1 + a + a ** 2 / 2 + a ** 3 / 6)
    assert sp.simplify(B - expected) == 0
    assert law.reversible
    # carried load = throughput = a (1 - B) mu
    assert sp.simplify(law["X"].subs(lam, a * mu) - a * mu * (1 - expected)) == 0


def test_two_independent_queues_give_the_product_of_two_geometric_laws():
    chain = _two_queues()
    law = symbolic_stationary(chain)
    l1, m1, l2, m2 = chain.parameter_symbols
    r1, r2 = l1 / m1, l2 / m2
    z = sum(r1 ** i for i in range(4)) * sum(r2 ** j for j in range(3))
    for (x, y), p in zip(law.states, law.pi, strict=True):
        assert sp.simplify(p - r1 ** int(x) * r2 ** int(y) / z) == 0
    assert law.reversible  # the grid has cycles: the non-tree edges close


@pytest.mark.parametrize("chain,point", [
    (tandem(2, 2), {"lam": Fraction(3, 2), "mu1": 2, "mu2": Fraction(1, 3)}),
    (tandem(1, 3), {"lam": 5, "mu1": Fraction(7, 4), "mu2": 2}),
    (_cycle(), {"f": 3, "b": Fraction(1, 2)}),
    (_cycle(symmetric=False), {"f": Fraction(5, 3)}),
])
def test_non_reversible_chains_are_solved_and_match_the_exact_solve(chain, point):
    law = symbolic_stationary(chain)
    exact = exact_stationary(chain, point)
    table = {s: sp.Rational(Fraction(point[str(s)])) for s in chain.parameter_symbols}
    assert law.reversible is False and law.method == SOLVE_METHOD
    np.testing.assert_array_equal(law.states, exact.states)
    assert [p.xreplace(table) for p in law.pi] == list(exact.pi)
    for name, value in law.values.items():
        assert value.xreplace(table) == exact[name]
    assert law.at(point) == dict(exact.values)


def test_the_cycle_law_is_uniform_where_the_rates_agree():
    chain = _cycle()
    same = MarkovChain(chain.variables, chain.declared, parameters=("f", "b"),
                       outputs={"P0": "s == 0"})
    law = symbolic_stationary(same)
    assert not law.reversible  # f != b identically
    f = sp.Symbol("f", real=True)
    assert sp.simplify(law["P0"].subs(sp.Symbol("b", real=True), f) - sp.Rational(1, 3)) == 0


def test_rates_that_are_not_rational_functions_keep_a_closed_form():
    chain = MarkovChain([StateVariable("n", 0, 2)],
                        [Jump("sqrt(lam)", {"n": "n + 1"}, "n < 2"),
                         Jump("mu*n", {"n": "n - 1"}, "n > 0")],
                        parameters=("lam", "mu"), outputs={"P2": "n == 2"})
    law = symbolic_stationary(chain)
    r = sp.sqrt(lam) / mu
    expected = (r ** 2 / 2) / (1 + r + r ** 2 / 2)
    assert law.reversible
    assert sp.simplify(law["P2"] - expected) == 0


def test_a_guard_that_uses_a_parameter_is_refused_by_name():
    chain = MarkovChain([StateVariable("n", 0, 5)],
                        [Jump("lam", {"n": "n + 1"}, "n < K", label="arrive"),
                         Jump("mu", {"n": "n - 1"}, "n > 0")], parameters=("lam", "mu", "K"))
    with pytest.raises(InvalidParameter, match=r"arrive\.guard.*parameter K"):
        symbolic_stationary(chain)


def test_an_update_or_event_that_uses_a_parameter_is_refused():
    chain = MarkovChain([StateVariable("n", 0, 5)],
                        [Jump("lam", {"n": "min(n + j, 5)"}, "n < 5"),
                         Jump("mu", {"n": "n - 1"}, "n > 0")], parameters=("lam", "mu", "j"))
    with pytest.raises(InvalidParameter, match=r"jumps\[0\]\.update\.n"):
        symbolic_stationary(chain)
    event = MarkovChain([StateVariable("n", 0, 2)],
                        [Jump("lam", {"n": "n + 1"}, "n < 2"),
                         Jump("mu", {"n": "n - 1"}, "n > 0")], parameters=("lam", "mu"),
                        outputs={"busy": "n > mu"})
    with pytest.raises(InvalidParameter, match=r"outputs\.busy"):
        symbolic_stationary(event)


def test_too_many_states_is_a_resource_limit_naming_max_states():
    with pytest.raises(ResourceLimit, match="max_states"):
        symbolic_stationary(mm1k(80))
    with pytest.raises(ResourceLimit, match="max_states = 3"):
        symbolic_stationary(mm1k(5), max_states=3)
    with pytest.raises(ResourceLimit, match="max_states = 12"):
        symbolic_stationary(mm1k(12), max_states=12)
    assert symbolic_stationary(mm1k(12), max_states=13).n_states == 13   # the bound is inclusive


def test_a_slow_solve_stops_at_its_time_budget():
    with pytest.raises(DerivationTimeout, match="timeout=0.05"):
        symbolic_stationary(tandem(4, 4), timeout=0.05)


def test_bad_options_are_refused():
    with pytest.raises(InvalidParameter, match="timeout"):
        symbolic_stationary(mm1k(2), timeout=0)
    with pytest.raises(InvalidParameter, match="max_states"):
        symbolic_stationary(mm1k(2), max_states=0)


def test_transient_states_get_probability_zero():
    chain = MarkovChain([StateVariable("n", 0, 3)],
                        [Jump("a", {"n": "1"}, "n == 0"),
                         Jump("lam", {"n": "n + 1"}, "n == 1 or n == 2"),
                         Jump("mu", {"n": "n - 1"}, "n >= 2")], parameters=("a", "lam", "mu"))
    law = symbolic_stationary(chain)
    assert law.pi[0] == 0 and law.n_transient == 1
    r = lam / mu
    assert sp.simplify(law.pi[1] - 1 / (1 + r + r ** 2)) == 0


def test_float_reversibility_test():
    assert is_reversible(mm1k(6), {"lam": 1.0, "mu": 3.0})
    assert is_reversible(erlang_loss(4), {"lam": 2.0, "mu": 0.5})
    assert is_reversible(_two_queues(), {"l1": 1.0, "m1": 2.0, "l2": 0.3, "m2": 0.9})
    assert not is_reversible(tandem(2, 3), {"lam": 1.0, "mu1": 2.0, "mu2": 1.5})
    assert not is_reversible(_cycle(), {"f": 2.0, "b": 1.0})
    assert is_reversible(_cycle(), {"f": 1.5, "b": 1.5})


def test_product_form_test():
    assert product_form(_two_queues(), {"l1": 1.0, "m1": 2.0, "l2": 0.3, "m2": 0.9})
    assert not product_form(tandem(2, 3), {"lam": 1.0, "mu1": 2.0, "mu2": 1.5})
    assert product_form(mm1k(4), {"lam": 1.0, "mu": 2.0})  # one variable


def test_the_result_displays_and_serialises():
    law = symbolic_stationary(mm1k(2))
    text = law._repr_markdown_()
    assert text.startswith("**SymbolicStationaryLaw**") and "| `n_states` | 3 |" in text
    data = law.to_dict()
    assert data["reversible"] is True and data["n_states"] == 3
    assert set(law.outputs()) == {"EN", "EN_queue", "P_block", "X", "X_in", "n_states",
                                  "reversible"}
