"""Each documented error of the markov domain, with a message naming what the user wrote."""

import time

import pytest
import sympy as sp

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.markov import (
    Jump,
    MarkovChain,
    ReducibleChain,
    StateVariable,
    build_state_space,
    exact_stationary,
    stationary,
    symbolic_stationary,
)


def _birth_death(up="lam", down="mu", up_guard="n < 4", down_guard="n > 0", high=4, **kw):
    return MarkovChain([StateVariable("n", 0, high)],
                       [Jump(up, {"n": "n + 1"}, up_guard, label="arrive"),
                        Jump(down, {"n": "n - 1"}, down_guard)],
                       parameters=("lam", "mu"), **kw)


def test_a_negative_rate_at_a_reachable_state_names_the_jump_and_the_state():
    chain = _birth_death(down="mu*(2 - n)")
    with pytest.raises(InvalidParameter, match=r"jumps\[1\]\.rate=-1\.0 .*state n=3"):
        stationary(chain, {"lam": 1.0, "mu": 1.0})
    chain = _birth_death(up="lam/(3 - n)")  # not finite at n = 3
    with pytest.raises(InvalidParameter, match=r"arrive\.rate=.*finite rate >= 0.*n=3"):
        stationary(chain, {"lam": 1.0, "mu": 1.0})


def test_an_update_out_of_bounds_names_the_jump_the_state_and_the_bound():
    chain = _birth_death(up_guard="true")
    with pytest.raises(InvalidParameter, match=r"arrive\.update\.n=5 .*state n=4.*n\.high = 4"):
        stationary(chain, {"lam": 1.0, "mu": 1.0})
    chain = _birth_death(down_guard="true")
    with pytest.raises(InvalidParameter, match=r"jumps\[1\]\.update\.n=-1 .*n\.low = 0"):
        stationary(chain, {"lam": 1.0, "mu": 1.0})


def test_a_non_integer_update_is_refused():
    chain = MarkovChain([StateVariable("n", 0, 4)], [Jump(1, {"n": "n + 1/2"}, "n < 4")])
    with pytest.raises(InvalidParameter, match=r"jumps\[0\]\.update\.n=0\.5 must be an integer"):
        build_state_space(chain)


def test_a_reducible_chain_lists_its_closed_classes():
    chain = MarkovChain([StateVariable("n", 0, 4)],
                        [Jump(1, {"n": "n + 1"}, "n == 2 or n == 3"),
                         Jump(1, {"n": "n - 1"}, "0 < n < 3")],
                        initial={"n": 2}, name="two ends")
    with pytest.raises(ReducibleChain, match=r"two ends is reducible: 2 closed classes.*"
                                             r"\{\(n=0\)\}.*\{\(n=4\)\}") as info:
        stationary(chain)
    assert info.value.classes == (("n=0",), ("n=4",))


def test_a_state_space_too_large_is_refused_before_building(monkeypatch):
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(10**8))
    chain = MarkovChain([StateVariable("x", 0, 100), StateVariable("y", 0, 10**7)],
                        [Jump(1, {"y": "y + 1"}, "y < 3"), Jump(1, {"y": "y - 1"}, "y > 0")])
    started = time.perf_counter()
    with pytest.raises(ResourceLimit, match=r"parameter y\.high=10000000 must be at most "
                                            r"(\d+)") as info:
        build_state_space(chain)
    assert time.perf_counter() - started < 2
    fits = int(info.value.limit.split()[2])
    smaller = MarkovChain([StateVariable("x", 0, 100), StateVariable("y", 0, fits)],
                          chain.declared)
    build_state_space(smaller)  # the bound it names does fit


@pytest.mark.parametrize("guard, reason", [("n < 4 &&", "syntax error"),
                                           ("n + 1", "arithmetic"),
                                           ("__import__('os') == 0", "not allowed")])
def test_bad_guard_text_names_the_jump(guard, reason):
    with pytest.raises(InvalidParameter, match=r"arrive\.guard=") as info:
        _birth_death(up_guard=guard)
    assert reason in str(info.value)


def test_an_unknown_symbol_names_the_jump_and_the_name():
    with pytest.raises(InvalidParameter, match=r"jumps\[1\]\.rate='nu' .*unknown name nu"):
        _birth_death(down="nu")
    with pytest.raises(InvalidParameter, match=r"arrive\.rate=.*unknown name x"):
        _birth_death(up=sp.Symbol("x") * 2)
    with pytest.raises(InvalidParameter, match=r"jumps\[0\]\.update=.*m.*state variable"):
        MarkovChain([StateVariable("n", 0, 2)], [Jump(1, {"m": "1"})])


def test_declaration_errors():
    level = MarkovChain([StateVariable("n", 0, None)], [Jump(1, {"n": "n + 1"})])
    for solve in (build_state_space, exact_stationary, symbolic_stationary):
        with pytest.raises(InvalidParameter, match=r"n\.high=None.*level-structured \(QBD\)"):
            solve(level)
    with pytest.raises(InvalidParameter, match=r"n\.high=-1 must be an integer >= low = 0"):
        StateVariable("n", 0, -1)
    with pytest.raises(InvalidParameter, match=r"initial\.n=7 must be an integer in \[0, 4\]"):
        _birth_death(initial={"n": 7})
    with pytest.raises(InvalidParameter, match=r"outputs\.X=.*throughput:LABEL.*arrive"):
        _birth_death(outputs={"X": "throughput:serve"})
    with pytest.raises(InvalidParameter, match="a name used once"):
        MarkovChain([StateVariable("lam", 0, 2)], [], parameters=("lam",))
    with pytest.raises(InvalidParameter, match="StateVariable.name='exp'"):
        StateVariable("exp", 0, 2)


def test_parameters_at_solve_time():
    chain = _birth_death()
    with pytest.raises(InvalidParameter, match="parameter mu=<missing>"):
        stationary(chain, {"lam": 1.0})
    with pytest.raises(InvalidParameter, match="parameter nu=1.0 must be a declared parameter"):
        stationary(chain, {"lam": 1.0, "mu": 1.0, "nu": 1.0})
    with pytest.raises(InvalidParameter, match="parameter lam=nan"):
        stationary(chain, {"lam": float("nan"), "mu": 1.0})
