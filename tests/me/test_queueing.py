"""M/ME/1 waiting times: exact Pollaczek-Khinchine transforms against closed forms and simulation."""

import numpy as np
import pytest
import sympy as sp

from symq.core.errors import InvalidParameter, StabilityError
from symq.me.distribution import ME
from symq.me.queueing import mg1_waiting_time, simulate_mg1_waiting
from symq.me.transform import RationalLST, s


def test_mm1_waiting_time_is_exact():
    # M/M/1, mu = 1, lam = 1/2: P(W > t) = rho e^{-(mu - lam) t}, W | W > 0 ~ exp(1/2)
    waiting = mg1_waiting_time(RationalLST.from_expr(1 / (s + 1)), sp.Rational(1, 2))
    assert waiting.rho == sp.Rational(1, 2)
    assert sp.simplify(waiting.positive_part.expr - sp.Rational(1, 2) / (s + sp.Rational(1, 2))) == 0


@pytest.mark.parametrize("service", [4 / (s + 2) ** 2,
                                     sp.Rational(1, 3) * 2 / (s + 2) + sp.Rational(2, 3) * 4 / (s + 4),
                                     6 / ((s + 1) * (s + 2) * (s + 3))])
def test_mean_wait_is_pollaczek_khinchine(service):
    lst = RationalLST.from_expr(service)
    m1, m2 = lst.moments(2)
    lam = sp.Rational(1, 2) / m1                      # rho = 1/2
    expected = lam * m2 / (2 * (1 - lam * m1))        # P-K mean, computed independently
    assert mg1_waiting_time(lst, lam).mean() == expected


def test_waiting_time_ccdf_agrees_with_simulation():
    service = ME.erlang(2, 2)                         # mean 1, SCV 1/2
    lam = 0.7
    thresholds = [0.5, 1.0, 2.0, 4.0]
    waiting = mg1_waiting_time(service, sp.Rational(7, 10))
    exact = float(waiting.rho) * ME(waiting.positive_part).ccdf(np.array(thresholds))
    sim = simulate_mg1_waiting(lambda n, g: g.gamma(2.0, 0.5, n), lam, thresholds,
                               n_customers=1_000_000, rng=11, level=0.999)
    for ci, value in zip(sim["ccdf"], exact):
        assert ci.contains(value), (ci, value)
    assert sim["mean_wait"].contains(float(waiting.mean()))


def test_errors():
    with pytest.raises(StabilityError, match="rho"):
        mg1_waiting_time(RationalLST.from_expr(1 / (s + 1)), 1)
    with pytest.raises(InvalidParameter, match="lam"):
        mg1_waiting_time(RationalLST.from_expr(1 / (s + 1)), -1)
    with pytest.raises(InvalidParameter, match="service"):
        mg1_waiting_time("exp", sp.Rational(1, 2))
