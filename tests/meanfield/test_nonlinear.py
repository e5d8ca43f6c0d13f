"""Tests of symq.meanfield.nonlinear (Li 2016: nonlinear level-dependent QBDs, RG-factorization).

The linear level-dependent QBD it iterates (LevelDependentQBD) is tested in
tests/markov/test_level_reduction.py.  The references are computed here independently: the
doubly exponential closed form, the ODE fixed point of PopulationProcess and the cavity solver
of jsq_ph.
"""

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, NotConverged
from symq.laws import hyperexponential2
from symq.meanfield.jsq_ph import solve_jsq_ph
from symq.meanfield.nonlinear import (
    NonlinearQBD,
    jsq_exponential_qbd,
    jsq_ph_qbd,
    relative_entropy_trajectory,
    tails,
)
from symq.meanfield.supermarket import LAM, jsq_process


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_jsq_exponential_fixed_point(d, lam):
    fp = jsq_exponential_qbd(d, lam).fixed_point([np.array([1 - lam]), np.array([lam])], tol=1e-14)
    k = np.arange(1, fp.tail.size + 1, dtype=float)
    closed = lam ** ((float(d) ** k - 1) / (d - 1))
    assert np.max(np.abs(fp.tail - closed)) < 1e-11
    assert fp.residual < 1e-12 and fp.generator_residual < 1e-12
    K = 12
    ode = jsq_process(d, K).fixed_point(np.zeros(K), {LAM: lam})
    assert np.max(np.abs(fp.tail[:K] - ode.x)) < 1e-10


def test_jsq_ph_matches_cavity_solver():
    alpha, A = hyperexponential2(1.0, 4.0, 0.5)
    fp = jsq_ph_qbd(2, 0.8, (alpha, A)).fixed_point([np.array([1.0])], tol=1e-13)
    ref = solve_jsq_ph(2, 0.8, (alpha, A))
    n = min(fp.tail.size, ref.u.size)
    assert np.max(np.abs(fp.tail[:n] - ref.u[:n])) < 1e-9
    assert fp.mean_level / 0.8 == pytest.approx(ref.ET, rel=1e-9)


def test_damped_iteration_and_tails():
    fp = jsq_exponential_qbd(2, 0.7).fixed_point([np.array([1.0])], damping=0.3)
    assert fp.tail[0] == pytest.approx(0.7, abs=1e-10)
    assert tails([np.array([0.5]), np.array([0.25, 0.25])]).tolist() == [1.0, 0.5]


def test_lyapunov_nonincreasing():
    check = relative_entropy_trajectory(2, 0.9, K=20, t_final=30.0, n_times=200)
    assert check.nonincreasing
    assert all(v[-1] < 0.75 * v[0] for v in check.l1)   # and it does decrease
    assert check.max_increase < 0


def test_fixed_point_not_converged():
    with pytest.raises(NotConverged, match="residual"):
        jsq_exponential_qbd(2, 0.9).fixed_point([np.array([1.0])], max_iter=3)
    with pytest.raises(InvalidParameter):
        NonlinearQBD(42)


def test_relative_entropy_reference_is_the_mm1k_law_and_decreases_for_one_probe():
    # d = 1: the truncated ODE is the M/M/1/K forward equation; its stationary tail is
    # (lam^k - lam^(K+1)) / (1 - lam^(K+1)), and D(p(t) || pi) is nonincreasing (H-theorem)
    lam, K = 0.8, 25
    check = relative_entropy_trajectory(1, lam, K=K, t_final=30.0, n_times=150)
    k = np.arange(1, K + 1)
    mm1k = (lam**k - lam**(K + 1)) / (1 - lam**(K + 1))
    np.testing.assert_allclose(check.fixed_point, mm1k, rtol=0, atol=1e-13)
    assert check.entropy_increase[0] <= 1e-12


def test_relative_entropy_increases_from_a_heavy_start_for_two_probes():
    # li-nonlinear's declared refutation: from u_k = 0.95^k the relative entropy rises by far
    # more than the integration error (rtol 1e-11)
    K = 25
    heavy = 0.95 ** np.arange(1, K + 1)
    check = relative_entropy_trajectory(2, 0.9, initial_states=[heavy], K=K,
                                                  t_final=30.0, n_times=150)
    increase, which, when = check.entropy_increase
    assert which == 0 and increase > 0.1 and 0 < when < 30
