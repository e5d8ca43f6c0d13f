"""GI/G/1 (symq.me.gg1): the GI/M/1 root against exact algebra and the M/M/1 closed form, the
Lindley simulation of two non-Poisson queues against the exact waiting time, and the order of
Kingman's and Marshall's bounds around exact values."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter, StabilityError
from symq.laws import Deterministic, Erlang, Exponential
from symq.me.gg1 import gg1_references, gi_m1_waiting, simulate_gg1_waiting
from symq.me.transforms import Transform

ERLANG2 = Transform("(2*lam/(2*lam + s))^2", parameters=("lam",))


def test_poisson_arrivals_give_the_m_m_1_queue():
    r = gi_m1_waiting(Transform("lam/(lam + s)", parameters=("lam",)), 2.0, {"lam": 1.5})
    assert r.sigma == pytest.approx(0.75, rel=1e-14)                  # sigma = rho
    assert r.EW == pytest.approx(0.75 / (2.0 - 1.5), rel=1e-13)       # rho/(mu - lam)


def test_erlang_arrivals_root_is_the_exact_algebraic_one():
    lam, mu = sp.Rational(4, 5), sp.Integer(1)
    x = sp.Symbol("x")
    # sigma (2 lam + mu (1 - sigma))^2 = 4 lam^2 has the root 1; the other root in (0, 1)
    roots = [r for r in sp.Poly(x * (2 * lam + mu * (1 - x)) ** 2 - 4 * lam ** 2, x).nroots(
        n=30) if r.is_real and 0 < r < 1]
    assert len(roots) == 1
    r = gi_m1_waiting(ERLANG2, 1.0, {"lam": 0.8})
    assert r.sigma == pytest.approx(float(roots[0]), rel=1e-14)
    assert r.residual < 1e-15


@pytest.mark.parametrize("law, transform, seed", [
    (Erlang(2, 1 / 0.8), ERLANG2, 1),
    (Deterministic(1 / 0.8), Transform("exp(-s/lam)", parameters=("lam",)), 2),
])
def test_lindley_simulation_covers_the_exact_gi_m_1_waiting_time(law, transform, seed):
    exact = gi_m1_waiting(transform, 1.0, {"lam": 0.8})
    est = simulate_gg1_waiting(law, Exponential(1.0), [1.0, 3.0], n_jobs=300_000, rng=seed)
    assert est.lam == pytest.approx(0.8)
    assert est.EW.contains(exact.EW), (str(est.EW), exact.EW)
    for ci, p in zip(est.ccdf, exact.ccdf([1.0, 3.0]), strict=True):
        assert ci.contains(float(p)), (str(ci), p)


def test_bounds_lie_around_exact_means_in_marshalls_directions():
    # M/M/1: Marshall's bound and Kingman's approximation are exact (P-K)
    mm1 = gg1_references(2.0, 4.0, 1.0, 1.0)
    assert mm1.marshall == pytest.approx(1.0) and mm1.kingman_approximation == pytest.approx(1.0)
    # E2/M/1 (IFR arrivals): Marshall below, Kingman above the exact mean
    lam = 0.8
    exact = gi_m1_waiting(ERLANG2, 1.0, {"lam": lam}).EW
    ref = gg1_references(1 / lam, 1 / (2 * lam ** 2), 1.0, 1.0)
    assert ref.marshall <= exact <= ref.kingman_upper
    assert abs(ref.kingman_approximation - exact) > 0.1         # an approximation, not exact
    # H2/M/1 (DFR arrivals, mean 1/lam, scv 4.6): Marshall's bound is an upper one
    p, r1, r2 = 0.9, 1.8 * lam, 0.2 * lam          # mean (0.5 + 0.5)/lam
    h2 = Transform(f"{p}*{r1}/({r1} + s) + {1 - p}*{r2}/({r2} + s)")
    mean = p / r1 + (1 - p) / r2
    var = 2 * (p / r1 ** 2 + (1 - p) / r2 ** 2) - mean ** 2
    exact_h2 = gi_m1_waiting(h2, 1.0).EW
    ref_h2 = gg1_references(mean, var, 1.0, 1.0)
    assert exact_h2 <= ref_h2.marshall <= ref_h2.kingman_upper


def test_bad_input():
    with pytest.raises(StabilityError, match="rho"):
        gi_m1_waiting(ERLANG2, 1.0, {"lam": 1.2})
    with pytest.raises(InvalidParameter, match="mu"):
        gi_m1_waiting(ERLANG2, -1.0, {"lam": 0.5})
    with pytest.raises(InvalidParameter, match="interarrival"):
        gi_m1_waiting(Transform("exp(lam*(z - 1))", kind="pgf", parameters=("lam",)), 1.0)
    with pytest.raises(StabilityError, match="rho"):
        gg1_references(1.0, 1.0, 1.5, 1.0)
    with pytest.raises(InvalidParameter, match="var_service"):
        gg1_references(2.0, 1.0, 1.0, -1.0)
    with pytest.raises(StabilityError, match="GI/G/1"):
        simulate_gg1_waiting(Erlang(2, 1.0), Exponential(1.5), n_jobs=100_000, rng=1)  # means
    assert np.isfinite(gg1_references(2.0, 0.0, 1.0, 0.0).kingman_upper)   # D/D/1: 0


SERVICE_E2 = Transform("(2*mu/(2*mu + s))^2", parameters=("mu",))


def test_spectral_factorisation_reduces_to_p_k_and_to_the_gi_m_1_root():
    from symq.me.gg1_spectral import gi_g1_waiting

    # M/E2/1: Pollaczek-Khinchine, lam E S^2 / (2 (1 - rho)) with E S^2 = 1.5/mu^2
    mg1 = gi_g1_waiting(Transform("lam/(lam + s)", parameters=("lam",)), SERVICE_E2,
                        {"lam": 0.7, "mu": 1.0})
    assert mg1.EW == pytest.approx(0.7 * 1.5 / (2 * 0.3), rel=1e-12)
    assert mg1.P_wait == pytest.approx(0.7, rel=1e-12)                    # PASTA: rho
    # E2/M/1 and D/M/1 (a non-rational A*, Newton's roots): the root of sigma = A*(mu(1-sigma))
    exp_service = Transform("mu/(mu + s)", parameters=("mu",))
    for arrivals in (ERLANG2, Transform("exp(-s/lam)", parameters=("lam",))):
        spectral = gi_g1_waiting(arrivals, exp_service, {"lam": 0.8, "mu": 1.0})
        root = gi_m1_waiting(arrivals, 1.0, {"lam": 0.8})
        assert spectral.EW == pytest.approx(root.EW, rel=1e-10)
        assert spectral.P_wait == pytest.approx(root.sigma, rel=1e-10)


@pytest.mark.parametrize("law, arrivals, seed", [
    (Erlang(2, 1 / 0.8), ERLANG2, 3),
    (Deterministic(1 / 0.8), Transform("exp(-s/lam)", parameters=("lam",)), 4),
])
def test_spectral_factorisation_against_the_lindley_simulation(law, arrivals, seed):
    from symq.me.gg1_spectral import gi_g1_waiting

    exact = gi_g1_waiting(arrivals, SERVICE_E2, {"lam": 0.8, "mu": 1.0})
    est = simulate_gg1_waiting(law, Erlang(2, 1.0), n_jobs=300_000, rng=seed)
    assert est.EW.contains(exact.EW), (str(est.EW), exact.EW)
    # the waiting-time transform it returns is a law: its mean is E W again
    from symq.me.transforms import moments

    assert moments(exact.waiting, 1).moments[0] == pytest.approx(exact.EW, rel=1e-9)
