"""Limit claims (``lhs -> rhs``) are extrapolated with an error bar, never judged at their last
point; ``limit = { k = "oo" }`` works on a log grid.

Every expected value is a closed form: the sequences are written with their exact limit
(``1/3 + 7/(10 sqrt k) - 2/k -> 1/3``, ``sin(x)/x -> 1``), and the Halfin-Whitt limit
``sqrt(k) E[W] -> alpha(beta)/beta`` (Halfin & Whitt, Oper. Res. 29, 1981, Prop. 1) is checked
against ``alpha(beta) = 1/(1 + beta Phi(beta)/phi(beta))`` with the left side computed by the
textbook Erlang C formula at 50 digits.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from symq.core.claims import Status
from symq.core.claimsfile import build_claim
from symq.core.claimsfile.limits import extrapolate
from symq.core.claimsfile.quantities import FileContext
from symq.core.errors import InvalidParameter


def claim(table):
    return build_claim("claims[0]", table, FileContext("test"))


def limit_claim(statement, region, tolerance, target="oo", name="k"):
    return claim({"name": "limit", "statement": statement, "limit": {name: target},
                  "region": {name: region}, "tolerance": tolerance})


SLOW = "1/3 + 7/(10*sqrt(k)) - 2/k"  # -> 1/3 with error 0.7 k^(-1/2) (relative 2.1e-3 at 1e6)


def test_a_true_limit_with_error_k_to_the_minus_half_holds_below_the_last_error():
    """The last point's error (2.1e-3 relative at k = 1e6) exceeds the tolerance 1e-3: the old
    rule said fails; the extrapolated limit agrees with 1/3 over its whole error bar."""
    v = limit_claim(f"{SLOW} -> 1/3", "10:1e6", 1e-3).check()
    assert v.status is Status.HOLDS, v.detail
    last = max(v.points, key=lambda o: o.point["k"])
    assert last.point["k"] == 10**6 and last.error > 2e-3
    assert abs(float(v.claimed_value) - 1 / 3) < 1e-4
    assert "c t^0.4" in v.detail or "c t^0.5" in v.detail  # the fitted order, about 1/2
    assert "1/3" not in v.detail or "0.3333" in v.detail


def test_a_limit_off_by_one_percent_fails():
    v = limit_claim(f"{SLOW} -> 1/3*101/100", "10:1e6", 1e-3).check()
    assert v.status is Status.FAILS, v.detail
    assert v.max_error == pytest.approx(0.01, rel=0.05)


def test_a_limit_at_the_edge_of_the_band_is_inconclusive_and_says_what_would_decide():
    """The true limit lies exactly at relative distance 1e-3 from the claimed value: the error
    bar straddles the edge of the band."""
    v = limit_claim(f"{SLOW} -> 1/3*1001/1000", "10:1e6", 1e-3).check()
    assert v.status is Status.INCONCLUSIVE, v.detail
    assert "straddles" in v.detail and "k = 1e+07" in v.detail


def test_an_oscillating_sequence_is_inconclusive():
    v = limit_claim("1/3 + (-1)^k/sqrt(k) -> 1/3",
                    [11, 30, 101, 300, 1001, 3000, 10001, 30000], 1e-3).check()
    assert v.status is Status.INCONCLUSIVE, v.detail
    assert "oscillates" in v.detail


def test_a_sequence_that_has_not_settled_is_inconclusive_not_fails():
    """exp(-k/1e5) has not started to decay at k = 1e4: the limit 1/3 is true, but nothing
    on this grid shows it."""
    v = limit_claim("1/3 + exp(-k/100000) -> 1/3", "10:1e4", 1e-3).check()
    assert v.status is Status.INCONCLUSIVE, v.detail
    assert "add points nearer the limit" in v.detail


def test_too_few_points_for_an_error_bar_is_inconclusive():
    v = limit_claim(f"{SLOW} -> 1/3", [100, 1000, 10000, 100000], 1e-3).check()
    assert v.status is Status.INCONCLUSIVE, v.detail
    assert "needs 5" in v.detail


def test_the_range_toward_infinity_is_a_log_grid_of_two_points_per_decade():
    c = limit_claim(f"{SLOW} -> 1/3", "10:1e6", 1e-3)
    ks = [p["k"] for p in c.points()]
    assert ks == [round(10 ** (1 + i / 2)) for i in range(11)]
    assert all(isinstance(k, int) for k in ks)


def test_a_limit_at_minus_infinity():
    v = limit_claim("1/3 - 7/(10*sqrt(-k)) -> 1/3", "-10:-1e6", 1e-3, target="-oo").check()
    assert v.status is Status.HOLDS, v.detail


def test_a_finite_limit_from_both_sides_and_a_range_toward_it():
    xs = [-0.1, -0.01, -1e-3, -1e-4, -1e-5, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
    v = limit_claim("sin(x)/x -> 1", xs, 1e-10, target=0, name="x").check()
    assert v.status is Status.HOLDS, v.detail
    assert "2 sequences" in v.detail
    c = limit_claim("(1 + p)^(1/p) -> E", "1e-2:1e-7", 1e-6, target=0, name="p")
    ps = [p["p"] for p in c.points()]
    assert len(ps) == 11 and ps[0] == 1e-2 and ps[-1] == 1e-7
    assert all(a / b == pytest.approx(math.sqrt(10)) for a, b in zip(ps, ps[1:]))
    assert c.check().status is Status.HOLDS


def _sqrt_k_mean_wait(point):
    """sqrt(k) E[W] of M/M/k with mu = 1 and lam = k - beta sqrt(k): Erlang B by the upper
    incomplete gamma function, B = a^k e^-a / Gamma(k + 1, a), then C = B / (1 - rho (1 - B))
    and E[W] = C / (k - a), at 50 digits."""
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    k, beta = ctx.mpf(point["k"]), ctx.mpf(1)
    a = k - beta * ctx.sqrt(k)
    erlang_b = ctx.exp(k * ctx.log(a) - a - ctx.log(ctx.gammainc(k + 1, a)))
    erlang_c = erlang_b / (1 - (a / k) * (1 - erlang_b))
    return ctx.sqrt(k) * erlang_c / (k - a)


HALFIN_WHITT = "1/(beta*(1 + beta*(1 + erf(beta/sqrt(2)))/2*sqrt(2*pi)*exp(beta^2/2)))"


@pytest.mark.parametrize("factor, expected", [("1", Status.HOLDS), ("101/100", Status.FAILS)])
def test_halfin_whitt_square_root_staffing(factor, expected):
    """Halfin-Whitt (1981): sqrt(k) E[W] -> alpha(beta)/beta with an O(k^-1/2) error, still
    above the tolerance 1e-4 at k = 1e6; the limit holds, and is refuted when the constant is
    1% off."""
    c = claim({"name": "halfin-whitt", "statement": f"W -> {factor}*{HALFIN_WHITT}",
               "let": {"W": _sqrt_k_mean_wait}, "limit": {"k": "oo"},
               "region": {"k": "10:1e6", "beta": 1}, "tolerance": 1e-4})
    v = c.check()
    assert v.status is expected, v.detail
    if expected is Status.HOLDS:
        last = max(v.points, key=lambda o: o.point["k"])
        assert last.error > 2e-4  # the last point alone would have failed


def test_extrapolation_of_an_exact_power_law_is_exact():
    """y = L + c t^p on a geometric grid: Aitken's process recovers L to the working
    precision (L = 2/7, p = 0.7)."""
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    ts = [ctx.mpf(3) ** -i for i in range(1, 9)]
    ys = [ctx.mpf(2) / 7 + 5 * t ** ctx.mpf("0.7") for t in ts]
    ex = extrapolate(ts, ys)
    assert ex.ok and ex.order == pytest.approx(0.7, abs=1e-9)
    assert abs(ex.value - ctx.mpf(2) / 7) < ctx.mpf(10) ** -35 and ex.error < 1e-35


@pytest.mark.parametrize("region, target, key", [
    ([1, 10, 100], "oo", None),
    ([-1, 10, 100, 1000], "oo", "claims[0].region.k"),
    ([10, 100], "oo", "claims[0].region.k"),
    ([0, 0.1, 0.01, 0.001], 0, "claims[0].region.k"),
    ([1, 10, 100], "ooo", "claims[0].limit.k"),
])
def test_limit_input_errors_name_the_key(region, target, key):
    table = {"name": "l", "statement": "1/k -> 0", "limit": {"k": target},
             "region": {"k": region}}
    if key is None:
        claim(table)
        return
    with pytest.raises(InvalidParameter) as info:
        claim(table)
    assert info.value.name == key
