"""The three MDP solvers against an exact brute force and against each other.

Independent evidence: every deterministic stationary policy of a small process is evaluated in
exact rationals (its generator built here by hand from the model's definition, not by symq's
builder), and the least gain (or discounted value) is the optimum; each solver's bracket must
contain it.  On the classic library models the three methods must meet within their stated
errors, and Naor's threshold must satisfy his equation (Naor 1969).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from symq.markov import Jump, StateVariable
from symq.markov.mdp import Action, MarkovDecisionProcess, evaluate_policy, solve_mdp
from symq.markov.mdp.library import cmu, naor, routing, service_rate
from symq.markov.mdp.solvers import linear_program, policy_iteration, value_iteration
from symq.markov.mdp.space import build_decision_space

F = Fraction  # short, for the rational tables below


def _solve_exact(a: list[list[F]], b: list[F]) -> list[F]:
    """Gauss-Jordan elimination in rationals."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if m[r][col] != 0)
        m[col], m[pivot] = m[pivot], m[col]
        inv = 1 / m[col][col]
        m[col] = [x * inv for x in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] for i in range(n)]


def _gain(q: list[list[F]], cost: list[F]) -> F:
    """Average cost of an irreducible (or unichain) generator: pi Q = 0, sum pi = 1."""
    n = len(cost)
    a = [[q[j][i] for j in range(n)] for i in range(n)]
    a[-1] = [F(1)] * n
    b = [F(0)] * (n - 1) + [F(1)]
    pi = _solve_exact(a, b)
    return sum((p * c for p, c in zip(pi, cost, strict=True)), F(0))


def _discounted(q: list[list[F]], cost: list[F], alpha: F, start: int) -> F:
    n = len(cost)
    a = [[(alpha if i == j else F(0)) - q[i][j] for j in range(n)] for i in range(n)]
    return _solve_exact(a, cost)[start]


# Naor's queue with room for K = 3, rational parameters: lam = 1, mu = 6/5, R = 3, C = 1.
LAM, MU, R, C, K = F(1), F(6, 5), F(3), F(1), 3


def _naor_finite() -> MarkovDecisionProcess:
    return MarkovDecisionProcess(
        [StateVariable("n", 0, K)],
        actions=[Action("admit", [Jump("lam", {"n": "n + 1"}, guard=f"n < {K}", cost="-R")]),
                 Action("reject")],
        jumps=[Jump("mu", {"n": "n - 1"}, guard="n > 0")],
        cost="C*n", parameters=("lam", "mu", "R", "C"))


def _naor_policy(admit: tuple[bool, ...]) -> tuple[list[list[F]], list[F]]:
    n = K + 1
    q = [[F(0)] * n for _ in range(n)]
    cost = [C * s for s in range(n)]
    for s in range(n):
        if s > 0:
            q[s][s - 1] += MU
        if admit[s] and s < K:
            q[s][s + 1] += LAM
            cost[s] -= R * LAM
    for s in range(n):
        q[s][s] = -sum(q[s][j] for j in range(n) if j != s)
    return q, cost


PARAMS = {"lam": float(LAM), "mu": float(MU), "R": float(R), "C": float(C)}


@pytest.fixture(scope="module")
def naor_space():
    return build_decision_space(_naor_finite(), PARAMS)


def test_brute_force_average_cost_lies_in_every_bracket(naor_space):
    gains = {p: _gain(*_naor_policy(p)) for p in itertools.product((True, False), repeat=K + 1)}
    best = min(gains.values())
    for method in (value_iteration, policy_iteration, linear_program):
        out = method(naor_space)
        assert out.low - 1e-12 <= float(best) <= out.high + 1e-12, method.__name__
        assert abs(out.value - float(best)) <= out.error + 1e-12
    # a loose value iteration: its wide bracket still covers the optimum
    loose = value_iteration(naor_space, rtol=1e-2)
    assert loose.high - loose.low > 1e-4
    assert loose.low <= float(best) <= loose.high


@pytest.mark.parametrize("alpha", [F(1, 10), F(2)])
def test_brute_force_discounted_value_lies_in_every_bracket(naor_space, alpha):
    values = [_discounted(*_naor_policy(p), alpha, 0)
              for p in itertools.product((True, False), repeat=K + 1)]
    best = float(min(values))
    for method in (value_iteration, policy_iteration, linear_program):
        out = method(naor_space, float(alpha))
        assert out.low - 1e-9 * abs(best) <= best <= out.high + 1e-9 * abs(best)


def test_evaluate_policy_matches_the_exact_gain_of_that_policy():
    admit_below_two = (True, True, False, False)
    exact = _gain(*_naor_policy(admit_below_two))
    value, bias = evaluate_policy(_naor_finite(), {"admit": "n < 2", "reject": "true"}, PARAMS)
    assert abs(value - float(exact)) < 1e-13
    value2, _ = evaluate_policy(_naor_finite(), lambda n: "admit" if n < 2 else "reject",
                                PARAMS)
    assert value2 == pytest.approx(value, abs=1e-14)


def _naor_f(v: float, rho: float) -> float:
    return (v * (1 - rho) - rho * (1 - rho**v)) / (1 - rho) ** 2


@pytest.mark.parametrize("lam,R", [(0.5, 4.0), (1.0, 10.0), (1.5, 25.0), (0.9, 7.0)])
def test_naor_threshold_solves_his_equation(lam, R):
    mu, c = 1.2, 1.0
    solution = solve_mdp(naor(), {"lam": lam, "mu": mu, "R": R, "C": c})
    n = solution["threshold"]
    rho, nu = lam / mu, R * mu / c
    assert _naor_f(n, rho) <= nu < _naor_f(n + 1, rho)      # n_o = floor(v_o), f(v_o) = nu
    assert n <= nu                                           # below the individual threshold
    # the gain is that of M/M/1/n (an independent closed form)
    p_full = (1 - rho) * rho**n / (1 - rho ** (n + 1))
    en = rho / (1 - rho) - (n + 1) * rho ** (n + 1) / (1 - rho ** (n + 1))
    assert solution.gain == pytest.approx(c * en - R * lam * (1 - p_full), rel=1e-10)
    assert solution.truncation_error is not None and solution.truncation_error < 1e-6


CASES = [
    (naor, {"lam": 1.0, "mu": 1.2, "R": 10.0, "C": 1.0}),
    (service_rate, {"lam": 1.0, "mu1": 1.2, "mu2": 2.5, "c1": 0.0, "c2": 3.0, "h": 1.0}),
    (cmu, {"lam1": 0.3, "lam2": 0.3, "mu1": 1.0, "mu2": 1.5, "c1": 2.0, "c2": 1.0}),
    (routing, {"lam": 1.2, "mu1": 2.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0}),
]


@pytest.mark.parametrize("model,params", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("alpha", [None, 0.5])
def test_the_three_methods_meet_within_their_stated_errors(model, params, alpha):
    mdp = model()
    bounds = {v: 16 for v in mdp.unbounded}
    space = build_decision_space(mdp, params, bounds)
    found = [m(space, alpha) for m in (value_iteration, policy_iteration, linear_program)]
    for a, b in itertools.combinations(found, 2):
        scale = max(abs(a.value), 1.0)
        assert abs(a.value - b.value) <= a.error + b.error + 1e-12 * scale, (a.method, b.method)
    # each method's policy has a gain at most its upper bound (Odoni: the greedy policy of a
    # potential does no worse than max_s m(s)), so its suboptimality is within the bracket
    for out in found:
        if alpha is None:
            from symq.markov.mdp.solvers import evaluate_pairs

            value, _, _ = evaluate_pairs(space, out.pairs, None)
            assert value <= out.high + 1e-9 * max(abs(value), 1.0), out.method


def test_the_truncation_is_enlarged_until_the_gain_settles():
    # routing at load 0.6: 8 is too small, the solve doubles until the gain moves by < 1e-6
    s = solve_mdp(routing(), {"lam": 1.2, "mu1": 1.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0},
                  truncation={"n1": 8, "n2": 8})
    assert s.truncation["n1"] >= 32
    assert s.truncation_error <= 1e-6 * abs(s.gain)
    # JSQ on identical servers lies between M/M/2 (a common queue, the best any routing can
    # do: 2 rho/(1 - rho^2) = 1.875) and random routing (two M/M/1 queues: 2 rho/(1 - rho) = 3)
    assert 1.875 < s.gain < 3.0
    assert s["mismatch_jsq"] == 0


def test_value_iteration_reports_its_bracket_and_policy_iteration_is_tight():
    params = CASES[0][1]
    vi = solve_mdp(naor(), params, method="vi", rtol=1e-6)
    pi = solve_mdp(naor(), params)
    assert vi.error > pi.error
    assert vi.low <= pi.gain <= vi.high
    assert np.array_equal(vi.policy.choice[:8], pi.policy.choice[:8])


def test_a_policy_simulated_by_the_markov_simulator_agrees_with_its_exact_gain():
    # evidence independent of the Bellman solvers: a Gillespie run of the policy's chain
    from symq.markov.mdp import simulate_policy

    params = {"lam": 1.2, "mu1": 2.0, "mu2": 1.0, "h1": 1.0, "h2": 1.0}
    solved = solve_mdp(routing(), params, truncation={"n1": 16, "n2": 16})
    exact, _ = evaluate_policy(routing(), "jsq", params, truncation=solved.truncation)
    assert solved.gain < exact                               # JSQ is not optimal here
    for policy, value in (("jsq", exact), (solved.policy, solved.gain)):
        est = simulate_policy(routing(), policy, params, truncation=solved.truncation,
                              n_events=400_000, level=0.999, rng=7)
        assert est["cost"].contains(value), (policy if isinstance(policy, str) else "optimal")
