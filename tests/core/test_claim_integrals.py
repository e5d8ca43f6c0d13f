"""Integrals in claims (issue 30, item 6): ``integral(f, x, a, b)`` by tanh-sinh and
Gauss-Legendre quadrature; expected values are closed forms (mpmath at 50 digits)."""

from __future__ import annotations

import pytest

from symq.core.approximate import Approximate
from symq.core.claims import Status
from symq.core.claimsfile.claim import build_claim
from symq.core.claimsfile.quantities import FileContext, evaluate_expression
from symq.core.errors import InvalidParameter
from symq.core.formula import parse_formula
from symq.core.precision import working_dps


def claim(table):
    return build_claim("claims[0]", table, FileContext())


def value(text, **point):
    expr = parse_formula("x", text, tuple(point), sums=True)
    return evaluate_expression(expr, point, set(), "x")


def test_exponential_and_cauchy_integrals_to_many_digits():
    with working_dps(50) as ctx:
        assert abs(value("integral(exp(-t), t, 0, oo)") - 1) < ctx.mpf(10) ** -25
        assert abs(value("integral(1/(1+t^2), t, 0, oo)") - ctx.pi / 2) < ctx.mpf(10) ** -25
        assert abs(value("integral(exp(-t^2), t, -oo, oo)") - ctx.sqrt(ctx.pi)) \
            < ctx.mpf(10) ** -25
    v = claim({"name": "pi/2", "statement": "integral(1/(1+x^2), x, 0, oo) == pi/2"}).check()
    assert v.status is Status.HOLDS, v.detail


def test_an_erlang_tail_integral_and_a_wrong_constant():
    # E[S] of an Erlang-2 with rate mu per phase: int_0^oo e^{-mu t}(1 + mu t) dt = 2/mu
    region = {"mu": [0.5, 1.0, 3.0]}
    v = claim({"name": "erlang mean", "region": region,
               "statement": "integral(exp(-mu*t)*(1 + mu*t), t, 0, oo) == 2/mu"}).check()
    assert v.status is Status.HOLDS, v.detail
    wrong = claim({"name": "erlang mean, wrong", "region": region, "tolerance": 1e-6,
                   "statement": "integral(exp(-mu*t)*(1 + mu*t), t, 0, oo) == 2.01/mu"}).check()
    assert wrong.status is Status.FAILS, wrong.detail


def test_bounds_in_the_parameters():
    # int_0^a t e^{-t} dt = 1 - (1 + a) e^{-a}
    v = claim({"name": "incomplete gamma", "region": {"a": [0.5, 2.0, 7.0]},
               "statement": "integral(t*exp(-t), t, 0, a) == 1 - (1 + a)*exp(-a)"}).check()
    assert v.status is Status.HOLDS, v.detail


def test_a_divergent_integral_is_undecided_never_a_number():
    v = claim({"name": "log divergence", "statement": "integral(1/t, t, 1, oo) == 10",
               "tolerance": 1e-3}).check()
    assert v.status is Status.INCONCLUSIVE and "does not converge" in v.detail
    with pytest.raises(Exception) as info:
        value("integral(1/t, t, 1, oo)")
    assert "does not converge" in str(info.value)


def test_the_integration_variable_is_bound_and_nesting_is_refused():
    expr = parse_formula("x", "integral(exp(-lam*t), t, 0, oo)", ("lam",), sums=True)
    assert {s.name for s in expr.free_symbols} == {"lam"}
    for text, reason in [("integral(integral(t*s, t, 0, 1), s, 0, 1)", "inside an integral"),
                         ("sum(integral(t^k, t, 0, 1), k, 0, 3)", "inside a sum"),
                         ("integral(t, lam, 0, 1)", "already a name"),
                         ("integral(t, t, 0)", r"integral\(f, x, a, b\)")]:
        with pytest.raises(InvalidParameter, match=reason):
            parse_formula("x", text, ("lam",), sums=True)


def test_an_integral_costs_evaluations_counted_in_the_claims_budget():
    from symq.core.claimsfile.integrals import INTEGRAL_COST
    from symq.core.claimsfile.quantities import SUM_TERM_BUDGET

    points = SUM_TERM_BUDGET // INTEGRAL_COST + 1
    with pytest.raises(InvalidParameter, match="need"):
        claim({"name": "too many", "statement": "integral(exp(-a*t), t, 0, oo) == 1/a",
               "region": {"a": f"1:2:{points}"}}).check()


def test_lambertw_in_an_integrand_is_the_fifty_digit_principal_branch():
    # W_0(t e^t) = t for t >= 0, so the integral over [0, 1] is 1/2
    got = value("integral(lambertw(t*exp(t)), t, 0, 1)")
    got = got.value if isinstance(got, Approximate) else got
    with working_dps(50) as ctx:
        assert abs(got - ctx.mpf(1) / 2) < ctx.mpf(10) ** -25


def test_a_value_with_an_error_bar_is_written_to_json_with_its_bar(tmp_path, capsys):
    # int_0^oo exp(-sqrt(t)) dt = 2 (substitute t = u^2: 2 int_0^oo u e^{-u} du); the
    # quadratures disagree slightly on this cusp, so the value carries a bar into --json
    import json

    from symq.cli import main

    path = tmp_path / "bar.toml"
    path.write_text('[paper]\ntitle = "t"\nauthors = ["a"]\nyear = 2026\n\n[[claims]]\n'
                    'name = "cusp"\nstatement = "integral(exp(-sqrt(t)), t, 0, oo) == 2"\n'
                    'tolerance = 1e-6\n')
    assert main(["check", str(path), "--json"]) == 0
    (verdict,) = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "holds"
    left = verdict["claimed_value"]
    if isinstance(left, dict):  # an Approximate: value and bar, the bar covering the truth
        assert abs(left["value"] - 2.0) <= left["error"] + 1e-15
    else:
        assert abs(left - 2.0) < 1e-12
