"""Declared transforms (symq.me.transforms): moments against closed forms (Takács' M/G/1
moments, Poisson cumulants, exact rationals), inversion against exact densities and
distribution functions (the stated error within 10x of the actual one), mpmath's de Hoog
inversion at 40 digits as an oracle, and the checks that refuse what is not a transform."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter, StabilityError
from symq.me.transforms import (
    NotATransform,
    Transform,
    convolve,
    equilibrium,
    invert,
    mixture,
    moment_expressions,
    moments,
    pollaczek_khinchine,
    random_sum,
    sojourn_time,
    vacation_waiting_time,
)

EXP = Transform("mu/(mu + s)", parameters=("mu",))


def test_exponential_moments_are_k_factorial_over_mu_to_the_k_exactly():
    exprs, bad = moment_expressions(EXP, 6)
    mu = sp.Symbol("mu", positive=True)
    assert bad is None
    assert [sp.simplify(e - sp.factorial(k) / mu ** k) for k, e in enumerate(exprs, 1)] \
        == [0] * 6
    m = moments(EXP, 4, {"mu": 2})
    assert m.moments == (0.5, 0.5, 0.75, 1.5)
    assert m.cumulants == pytest.approx([0.5, 0.25, 0.25, 0.375])   # (k-1)!/mu^k


@pytest.mark.parametrize("service, moments_of_s", [
    ("mu/(mu + s)", lambda mu: [1 / mu, 2 / mu ** 2, 6 / mu ** 3]),
    ("exp(-mu*s)", lambda mu: [mu, mu ** 2, mu ** 3]),                      # deterministic
    ("(2*mu/(2*mu + s))**2", lambda mu: [1 / mu, 1.5 / mu ** 2, 3 / mu ** 3]),  # Erlang-2
])
def test_pollaczek_khinchine_moments_are_takacs(service, moments_of_s):
    lam, mu = 0.6, 1.25
    waiting = pollaczek_khinchine(Transform(service, parameters=("mu",)), "lam")
    m1, m2, m3 = moments_of_s(mu)
    rho = lam * m1
    ew = lam * m2 / (2 * (1 - rho))                        # Takács (1962)
    ew2 = 2 * ew ** 2 + lam * m3 / (3 * (1 - rho))
    got = moments(waiting, 2, {"mu": mu, "lam": lam}).moments
    assert got == pytest.approx([ew, ew2], rel=1e-12)
    # the sojourn time adds an independent service time
    t1 = moments(sojourn_time(Transform(service, parameters=("mu",)), "lam"), 1,
                 {"mu": mu, "lam": lam}).moments[0]
    assert t1 == pytest.approx(ew + m1, rel=1e-12)


def test_moments_of_order_ten_are_fast_after_the_first_call():
    waiting = pollaczek_khinchine(EXP, "lam")
    moments(waiting, 10, {"mu": 1.0, "lam": 0.3})
    m = moments(waiting, 10, {"mu": 1.0, "lam": 0.7})
    # M/M/1 waiting time: atom 1 - rho, else Exp(mu - lam): E W^k = rho k!/(mu - lam)^k
    expected = [0.7 * math.factorial(k) / 0.3 ** k for k in range(1, 11)]
    assert m.moments == pytest.approx(expected, rel=1e-9)


def test_a_heavy_tail_makes_the_moments_infinite_from_its_index():
    m = moments(Transform("1/(1 + sqrt(s))"), 3)
    assert m.first_infinite == 1 and m.moments == (math.inf,) * 3
    assert "sqrt(s)" in m.reason
    assert all(math.isnan(k) for k in m.cumulants)


def test_pgf_factorial_moments_and_cumulants_of_a_poisson_law():
    poisson = Transform("exp(lam*(z - 1))", kind="pgf", parameters=("lam",))
    m = moments(poisson, 4, {"lam": 2.5})
    assert m.factorial_moments == pytest.approx([2.5 ** k for k in range(1, 5)], rel=1e-12)
    assert m.cumulants == pytest.approx([2.5] * 4, rel=1e-12)      # every cumulant is lam


def test_convolution_and_mixture_moments():
    erlang = convolve(EXP, EXP)
    assert moments(erlang, 2, {"mu": 2}).moments == pytest.approx([1.0, 1.5])
    mixed = mixture("p", EXP, Transform("nu/(nu + s)", parameters=("nu",)))
    assert moments(mixed, 1, {"mu": 1, "nu": 4, "p": 0.2}).moments[0] == pytest.approx(0.4)
    with pytest.raises(StabilityError, match="weight p"):
        moments(mixed, 1, {"mu": 1, "nu": 4, "p": 1.5})


EXACT = {
    "density": lambda t: 2 * np.exp(-2 * t),
    "cdf": lambda t: 1 - np.exp(-2 * t),
    "ccdf": lambda t: np.exp(-2 * t),
}


@pytest.mark.parametrize("what", sorted(EXACT))
@pytest.mark.parametrize("digits", [6, 10])
def test_inversion_error_stated_agrees_with_the_exact_error_within_ten_times(what, digits):
    t = np.linspace(0.1, 8.0, 40)
    r = invert(EXP, t, {"mu": 2.0}, what=what, digits=digits)
    actual = float(np.max(np.abs(r.value - EXACT[what](t))))
    assert actual <= 10 * r.max_error
    assert r.max_error <= 10 * actual + 1e-14


def test_the_waiting_time_density_has_its_atom_apart():
    waiting = pollaczek_khinchine(EXP, "lam")
    t = np.array([0.25, 1.0, 4.0])
    r = invert(waiting, t, {"mu": 1.0, "lam": 0.5}, digits=10)
    assert r.atom == pytest.approx(0.5)                        # P(W = 0) = 1 - rho
    exact = 0.5 * 0.5 * np.exp(-0.5 * t)                       # rho (mu - lam) e^{-(mu-lam)t}
    assert np.max(np.abs(r.value - exact)) <= 10 * r.max_error + 1e-14


def test_m_d_1_distribution_against_erlang_formula_and_de_hoog():
    # Erlang (1909): P(W <= t) = (1 - rho) sum_{k <= t} (lam (k - t))^k / k! e^{-lam (k - t)}
    lam = 0.5

    def exact(t):
        return (1 - lam) * sum((lam * (k - t)) ** k / math.factorial(k)
                               * math.exp(-lam * (k - t)) for k in range(int(t) + 1))

    waiting = pollaczek_khinchine(Transform("exp(-d*s)", parameters=("d",)), "lam")
    t = np.array([0.5, 1.5, 3.7])
    r = invert(waiting, t, {"d": 1, "lam": lam}, what="cdf", digits=10)
    actual = np.abs(r.value - [exact(x) for x in t])
    # Euler does not resolve the kinks at the delays: its error is large, and stated
    assert "de Hoog" in r.method and np.all(actual <= 10 * r.error + 1e-13)
    assert np.all(r.error <= 10 * actual + 1e-13)


def test_inversion_against_mpmath_de_hoog_at_forty_digits():
    service = Transform("(2*mu/(2*mu + s))**2", parameters=("mu",))       # Erlang-2
    waiting = pollaczek_khinchine(service, "lam")
    r = invert(waiting, [0.7, 2.0], {"mu": 1.0, "lam": 0.8}, what="ccdf", digits=12)
    ctx = mpmath.MPContext()
    ctx.dps = 40
    lam = ctx.mpf("0.8")

    def ccdf(s):
        b = (2 / (2 + s)) ** 2
        return (1 - (1 - lam) * s / (s - lam + lam * b)) / s

    oracle = [float(ctx.invertlaplace(ccdf, x, method="dehoog")) for x in (0.7, 2.0)]
    assert np.max(np.abs(r.value - oracle)) <= 10 * r.max_error + 1e-15


def test_what_is_not_a_transform_is_refused_with_the_check_that_failed():
    with pytest.raises(NotATransform, match="it is 2 there"):
        Transform("2/(1 + s)")
    with pytest.raises(NotATransform, match="pole"):
        Transform("1/(1 - s)").check({})
    with pytest.raises(NotATransform, match="coefficient of z\\^0"):
        Transform("2*exp(lam*(z - 1)) - 1", kind="pgf", parameters=("lam",)).check(
            {"lam": 2.0})
    # F(0) = 1, real and decreasing on s > 0, but its density 2.4 e^{-2t} - 0.2 e^{-t} < 0
    # beyond t = ln 12
    negative = Transform("(1 + c)*2/(2 + s) - c/(1 + s)", parameters=("c",))
    with pytest.raises(NotATransform, match="negative mass"):
        invert(negative, [1.0, 4.0], {"c": 0.2})
    with pytest.raises(StabilityError, match="rho"):
        moments(pollaczek_khinchine(EXP, "lam"), 1, {"mu": 1.0, "lam": 1.2})


def test_bad_input_names_the_parameter():
    with pytest.raises(InvalidParameter, match="kind"):
        Transform("1/(1 + s)", kind="fourier")
    with pytest.raises(InvalidParameter, match="parameters"):
        Transform("1/(1 + s)", parameters=("s",))
    with pytest.raises(InvalidParameter, match="transform"):
        Transform("__import__('os')")
    with pytest.raises(InvalidParameter, match="mu"):
        moments(EXP, 2)
    with pytest.raises(InvalidParameter, match="nu"):
        moments(EXP, 2, {"mu": 1.0, "nu": 2.0})
    with pytest.raises(InvalidParameter, match="n"):
        moments(EXP, 0, {"mu": 1.0})
    with pytest.raises(InvalidParameter, match="t"):
        invert(EXP, [0.0, 1.0], {"mu": 1.0})
    with pytest.raises(InvalidParameter, match="what"):
        invert(EXP, [1.0], {"mu": 1.0}, what="pdf")
    with pytest.raises(InvalidParameter, match="digits"):
        invert(EXP, [1.0], {"mu": 1.0}, digits=80)
    with pytest.raises(InvalidParameter, match="arrival_rate"):
        pollaczek_khinchine(EXP, "mu")


def test_busy_period_moments_from_takacs_equation_match_the_m_m_1_closed_form():
    from symq.me.transforms.busy_period import busy_period_moments

    # the M/M/1 busy period's LST is known in closed form (Kleinrock 1975, ch. 5):
    # (lam + mu + s - sqrt((lam + mu + s)^2 - 4 lam mu)) / (2 lam); its series against
    # Takacs' recursion on the exponential service transform
    closed = Transform("(lam + mu + s - sqrt((lam + mu + s)^2 - 4*lam*mu))/(2*lam)",
                       parameters=("lam", "mu"))
    values = {"lam": 0.6, "mu": 1.0}
    by_series = moments(closed, 5, values).moments
    by_takacs = busy_period_moments(EXP, "lam", 5, values).moments
    assert by_takacs == pytest.approx(by_series, rel=1e-12)


def test_busy_period_moments_are_takacs_formulas_for_deterministic_service():
    from symq.me.transforms.busy_period import busy_period_moments

    lam, d = 0.7, 1.0
    rho = lam * d
    m = busy_period_moments(Transform("exp(-d*s)", parameters=("d",)), "lam", 3,
                            {"d": d, "lam": lam}).moments
    # Takacs (1962): E B = E S/(1 - rho), E B^2 = E S^2/(1 - rho)^3,
    # E B^3 = E S^3/(1 - rho)^4 + 3 lam (E S^2)^2/(1 - rho)^5
    assert m == pytest.approx([d / (1 - rho), d ** 2 / (1 - rho) ** 3,
                               d ** 3 / (1 - rho) ** 4 + 3 * lam * d ** 4 / (1 - rho) ** 5],
                              rel=1e-12)
    with pytest.raises(StabilityError, match="busy period"):
        busy_period_moments(Transform("exp(-d*s)", parameters=("d",)), "lam", 2,
                            {"d": 1.0, "lam": 1.0})


def test_tail_asymptotics_from_the_dominant_pole():
    from symq.me.transforms.tails import tail_asymptotics

    # M/D/1 (Cramer-Lundberg): eta solves exp(eta d) = 1 + eta/lam, and
    # P(W > t) ~ C exp(-eta t), C = (1 - rho)/(lam d exp(eta d) - 1)
    lam = 0.5
    ctx = mpmath.MPContext()
    ctx.dps = 30
    eta = ctx.findroot(lambda x: ctx.exp(x) - 1 - x / lam, 1.0)
    c = (1 - lam) / (lam * ctx.exp(eta) - 1)
    waiting = pollaczek_khinchine(Transform("exp(-d*s)", parameters=("d",)), "lam")
    r = tail_asymptotics(waiting, {"d": 1.0, "lam": lam})
    assert r.order == 1 and not r.oscillating
    assert r.decay == pytest.approx(float(eta), rel=1e-12)
    assert r.ccdf_prefactor == pytest.approx(float(c), rel=1e-10)
    assert all(abs(x - 1) < 1e-2 for x in r.check_ratio)
    # Erlang-2 of rate 2: density 4 t exp(-2t), a double pole at -2
    e2 = tail_asymptotics(Transform("(2*mu/(2*mu + s))^2", parameters=("mu",)), {"mu": 1.0})
    assert (e2.order, e2.decay) == (2, pytest.approx(2.0, rel=1e-12))
    assert e2.density_prefactor == pytest.approx(4.0, rel=1e-9)


def test_a_branch_point_is_not_reported_as_a_pole():
    from symq.core.errors import NumericalFailure
    from symq.me.transforms.tails import tail_asymptotics

    busy = Transform("(lam + mu + s - sqrt((lam + mu + s)^2 - 4*lam*mu))/(2*lam)",
                     parameters=("lam", "mu"))
    with pytest.raises(NumericalFailure, match="branch point|no pole"):
        tail_asymptotics(busy, {"lam": 0.5, "mu": 1.0})


S = sp.Symbol("s")


@pytest.mark.parametrize("formula, values, atom, expected", [
    ("(2/(2 + s))^2", {}, 0.0, 4 / (S + 2) ** 2),                          # Erlang(2, 2)
    ("0.9*1.8/(1.8 + s) + 0.1*0.2/(0.2 + s)", {}, 0.0,                      # H2, exactly
     sp.Rational(81, 50) / (S + sp.Rational(9, 5)) + sp.Rational(1, 50) / (S + sp.Rational(1, 5))),
    ("(1 - lam/mu)*s/(s - lam + lam*mu/(mu + s))", {"mu": 1, "lam": 0.5}, 0.5,
     sp.Rational(1, 2) / (S + sp.Rational(1, 2))),  # M/M/1 wait: atom 1 - rho, then Exp(1/2)
])
def test_certified_me_fit_recovers_the_law_of_the_transform(formula, values, atom, expected):
    from symq.me.transforms.fitting import fit_transform

    r = fit_transform(Transform(formula, parameters=tuple(values)), values, order_max=3)
    assert r.status == "NONNEGATIVE" and r.atom == pytest.approx(atom) and not r.unmatched
    got = r.me.lst.expr
    got = got.xreplace({x: S for x in got.free_symbols})
    assert sp.simplify(got - expected) == 0


def test_queue_length_pgf_gives_the_geometric_m_m_1_law_and_erlang_s_m_d_1_p1():
    from symq.me.transforms import probabilities, queue_length

    mm1 = queue_length(EXP, "lam")
    p = probabilities(mm1, 6, {"mu": 1.0, "lam": 0.4})
    assert p == pytest.approx([0.6 * 0.4 ** k for k in range(7)], rel=1e-13)
    md1 = queue_length(Transform("exp(-d*s)", parameters=("d",)), "lam")
    rho = 0.7
    p0, p1, p2 = probabilities(md1, 2, {"d": 1.0, "lam": rho})
    # Erlang / Prabhu: P1 = (1 - rho)(e^rho - 1), P2 = (1 - rho)(e^{2 rho} - e^rho (1 + rho))
    assert (p0, p1) == (pytest.approx(1 - rho), pytest.approx((1 - rho) * (math.exp(rho) - 1)))
    assert p2 == pytest.approx((1 - rho) * (math.exp(2 * rho) - math.exp(rho) * (1 + rho)),
                               rel=1e-12)
    with pytest.raises(InvalidParameter, match="kind"):
        probabilities(EXP, 2, {"mu": 1.0})


def test_power_tail_from_the_branch_point_at_zero():
    from scipy.special import erfcx

    from symq.me.transforms import power_tail

    # 1/(1 + sqrt(s)) is the LST of the law with P(X > t) = e^t erfc(sqrt(t)) ~ 1/sqrt(pi t)
    heavy = Transform("1/(1 + sqrt(s))")
    r = power_tail(heavy)
    assert r.index == pytest.approx(0.5) and r.prefactor == pytest.approx(1 / math.sqrt(math.pi))
    t = np.array([0.5, 10.0, 1e3])
    inverted = invert(heavy, t, what="ccdf", digits=10)
    exact = erfcx(np.sqrt(t))
    assert np.all(np.abs(inverted.value - exact) <= 10 * inverted.error + 1e-14)
    with pytest.raises(Exception, match="not a power law"):
        power_tail(EXP, {"mu": 1.0})


def test_busy_period_density_by_takacs_fixed_point_against_the_bessel_formula():
    from scipy.special import ive

    from symq.me.transforms.busy_period import invert_busy_period

    # M/M/1 busy period: f(t) = e^{-(lam + mu) t} I_1(2 t sqrt(lam mu)) / (t sqrt(rho))
    lam, mu = 0.5, 1.0
    t = np.array([0.5, 3.0, 8.0])
    r = invert_busy_period(EXP, "lam", t, {"mu": mu, "lam": lam}, digits=10)
    root = 2 * t * math.sqrt(lam * mu)
    exact = np.exp(-(lam + mu) * t + root) * ive(1, root) / (t * math.sqrt(lam / mu))
    actual = np.abs(r.value - exact)
    assert np.all(actual <= 10 * r.error + 1e-15) and r.max_error < 1e-10


POINTWISE = [
    (pollaczek_khinchine(Transform("mu/(mu + s)", parameters=("mu",)), "lam"),
     {"mu": 1.0, "lam": 0.5}, "density", lambda t: 0.25 * np.exp(-0.5 * t)),
    (Transform("(2/(2 + s))^2"), {}, "density", lambda t: 4 * t * np.exp(-2 * t)),
    (Transform("1/(1 + s)"), {}, "ccdf", lambda t: np.exp(-t)),
]


@pytest.mark.parametrize("digits", [4, 5, 7, 9, 10, 11])
def test_stated_error_covers_the_actual_error_at_every_point(digits):
    """Not only the largest: where the errors of Euler and Talbot cross, their difference
    vanishes; the stated error must still cover the actual one there (it fell 200x short at
    single points when it was |Euler - Talbot| alone)."""
    t = np.geomspace(0.01, 50.0, 60)
    for transform, values, what, exact in POINTWISE:
        r = invert(transform, t, values, what=what, digits=digits)
        actual = np.abs(r.value - exact(t))
        assert np.all(actual <= 10 * r.error + 1e-15), (what, digits, np.max(actual / r.error))


def test_random_sum_equilibrium_and_vacations_against_closed_forms():
    geometric = Transform("(1 - p)*z/(1 - p*z)", "pgf", ("p",))
    total = random_sum(geometric, Transform("mu/(mu + s)", parameters=("mu",)))
    # Exp((1 - p) mu) = Exp(1) at p = 1/2, mu = 2: E X^k = k!
    assert moments(total, 3, {"p": 0.5, "mu": 2}).moments == pytest.approx((1, 2, 6),
                                                                            rel=1e-14)
    # the residual life of D(2) is uniform on (0, 2): E X^k = 2^k/(k + 1)
    uniform = equilibrium(Transform("exp(-d*s)", parameters=("d",)))
    assert moments(uniform, 3, {"d": 2}).moments == pytest.approx((1, 4 / 3, 2), rel=1e-14)
    # M/M/1 with Exp(nu) vacations: rho/(mu - lam) + 1/nu
    w = vacation_waiting_time(Transform("mu/(mu + s)", parameters=("mu",)),
                              Transform("nu/(nu + s)", parameters=("nu",)), "lam")
    assert moments(w, 1, {"mu": 1, "nu": 4, "lam": 0.75}).moments[0] == pytest.approx(
        0.75 / 0.25 + 0.25, rel=1e-14)
    with pytest.raises(StabilityError):
        moments(w, 1, {"mu": 1, "nu": 4, "lam": 1.5})
    with pytest.raises(InvalidParameter, match="count"):
        random_sum(Transform("mu/(mu + s)", parameters=("mu",)), geometric)
    with pytest.raises(InvalidParameter, match="transform"):
        equilibrium(Transform("1/(1 + sqrt(s))"))          # no finite mean
