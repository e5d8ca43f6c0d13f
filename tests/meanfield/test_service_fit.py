"""fit_phase_type: moments against closed forms, distances against scipy's KS statistic and a dense
grid, the chain into the JSQ(d) solver against Pollaczek-Khinchine of the true law."""

import math

import numpy as np
import pytest
import scipy.stats as st

from symq.core.errors import InvalidMoments, InvalidParameter
from symq.laws import Empirical, hyperexponential2
from symq.meanfield.jsq_ph import solve_jsq_ph
from symq.meanfield.service_fit import fit_phase_type, kolmogorov_distance

SIGMA = 1.0
LOGNORMAL = st.lognorm(SIGMA, scale=math.exp(-SIGMA**2 / 2))   # mean 1


def ph_raw_moment(ph, k):
    """k! alpha (-A)^{-k} 1, written out here."""
    alpha, A = ph
    M = np.linalg.inv(-np.asarray(A, dtype=float))
    return math.factorial(k) * float(alpha @ np.linalg.matrix_power(M, k) @ np.ones(len(alpha)))


def test_lognormal_fit_reproduces_the_closed_form_moments_it_claims():
    approx = fit_phase_type(LOGNORMAL, order_max=3)
    assert approx.method == "classical Pade + CF1"
    assert approx.matched == ("m1", "m2", "m3", "m4", "m5")
    assert approx.certificate.startswith("NONNEGATIVE")
    for k in range(1, 6):
        exact = math.exp(k * k * SIGMA**2 / 2 - k * SIGMA**2 / 2)   # E[X^k], mean-1 lognormal
        assert ph_raw_moment(approx.ph, k) == pytest.approx(exact, rel=1e-8)
    assert approx.order == approx.ph.order == 3


def test_weibull_shape_two_gets_the_two_moment_ph_with_gamma_function_moments():
    law = st.weibull_min(2.0)
    approx = fit_phase_type(law, order_max=3)
    # its Pade fits of order >= 2 have complex poles (no CF1 form); the order-1 fit matches m1 only
    assert approx.method.startswith("two-moment acyclic PH")
    assert ph_raw_moment(approx.ph, 1) == pytest.approx(math.gamma(1.5), rel=1e-10)
    assert ph_raw_moment(approx.ph, 2) == pytest.approx(math.gamma(2.0), rel=1e-10)


def test_kolmogorov_distance_of_a_trace_is_scipys_ks_statistic():
    sizes = LOGNORMAL.rvs(size=2000, random_state=3)
    approx = fit_phase_type(Empirical(sizes), order_max=2)
    ks = st.kstest(sizes, lambda x: np.asarray(approx.ph.cdf(x), dtype=float)).statistic
    assert approx.distance == pytest.approx(ks, abs=1e-9)   # the PH cdf is integrated to 1e-10
    assert "exact" in approx.metric


def test_kolmogorov_distance_of_a_continuous_law_within_the_stated_grid_error():
    ph = hyperexponential2(1.0, 4.0)
    gap, metric = kolmogorov_distance(ph, LOGNORMAL)
    t = np.concatenate([np.linspace(0, 5, 20001), np.geomspace(5, 400, 2001)])
    dense = float(np.max(np.abs(np.asarray(ph.cdf(t), dtype=float) - LOGNORMAL.cdf(t))))
    # the stated bound: sup <= grid maximum + 1/4000; the dense grid (step 2.5e-4, densities
    # below 1) is itself within 3e-4 of the sup
    assert dense <= gap + 1.0 / 4000 + 1e-9
    assert gap <= dense + 3e-4


def test_phase_type_input_is_returned_exactly():
    ph = hyperexponential2(1.0, 3.0)
    approx = fit_phase_type(ph)
    assert approx.method == "exact" and approx.ph is ph and approx.distance == 0.0


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_one_probe_mean_field_with_the_fitted_ph_is_pollaczek_khinchine_of_the_true_law(lam):
    # d = 1 is M/G/1 per server; E[T] depends on m1, m2 only, which the fit reproduces
    approx = fit_phase_type(LOGNORMAL, order_max=3)
    m1, m2 = 1.0, math.exp(SIGMA**2)
    expected = m1 + lam * m2 / (2 * (1 - lam * m1))
    assert solve_jsq_ph(1, lam, approx.ph).ET == pytest.approx(expected, rel=1e-8)


def test_bad_inputs_raise_one_clear_error():
    with pytest.raises(InvalidParameter, match="sizes"):
        fit_phase_type("lognormal")
    with pytest.raises(InvalidParameter, match="order_max"):
        fit_phase_type(LOGNORMAL, order_max=0)
    with pytest.raises(InvalidMoments):            # Pareto(2.5): m3 and above are infinite
        fit_phase_type(st.pareto(2.5), order_max=3)
