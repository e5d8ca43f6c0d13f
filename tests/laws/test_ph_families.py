"""Job-size helpers: hyper-Erlang and ME -> PH conversion, against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.laws import (
    hyper_erlang,
    hyperexponential2,
    ph_from_me,
    ph_moments,
)
from symq.me import ME


@pytest.mark.parametrize("k, scv, f", [(1, 4.0, 0.5), (2, 10.0, 0.5), (3, 2.0, 0.2), (4, 0.5, 0.7)])
def test_hyper_erlang_has_requested_mean_and_scv(k: int, scv: float, f: float) -> None:
    alpha, A = hyper_erlang(k, 2.0, scv, f)
    m1, m2 = ph_moments((alpha, A), 2)
    assert m1 == pytest.approx(2.0, rel=1e-12)
    assert m2 / m1 ** 2 - 1.0 == pytest.approx(scv, rel=1e-10)
    assert alpha.size == 2 * k


def test_hyper_erlang_branch_means_follow_f() -> None:
    # branch 1 carries the fraction f of the mean: p * (k / rate) = f * mean
    k, mean, f = 3, 1.0, 0.2
    alpha, A = hyper_erlang(k, mean, 6.0, f)
    p, rate = alpha[0], -A[0, 0]
    assert p * k / rate == pytest.approx(f * mean, rel=1e-12)


def test_hyper_erlang_with_one_phase_is_the_h2() -> None:
    a1, A1 = hyper_erlang(1, 1.0, 5.0, 0.3)
    a2, A2 = hyperexponential2(1.0, 5.0, 0.3)
    np.testing.assert_allclose(a1, a2, rtol=1e-14)
    np.testing.assert_allclose(A1, A2, rtol=1e-14)


def test_hyper_erlang_bad_input() -> None:
    with pytest.raises(InvalidParameter, match="scv"):
        hyper_erlang(2, 1.0, 0.4)  # below 1/k
    with pytest.raises(InvalidParameter, match="parameter k"):
        hyper_erlang(0, 1.0, 2.0)
    with pytest.raises(InvalidParameter, match="parameter f"):
        hyper_erlang(2, 1.0, 2.0, 1.0)


def _ph_pdf(alpha: np.ndarray, A: np.ndarray, t: float) -> float:
    exit_vector = -A.sum(axis=1)
    return float(alpha @ scipy.linalg.expm(A * t) @ exit_vector)


@pytest.mark.parametrize("law", [
    ME.hyperexponential([sp.Rational(1, 4), sp.Rational(3, 4)], [1, 4]),
    ME.erlang(3, 2),
    ME.hyperexponential([sp.Rational(1, 5), sp.Rational(3, 10), sp.Rational(1, 2)], [1, 3, 10]),
    # hypoexponential with a repeated pole plus a mixture component
    ME.from_expr(sp.Rational(1, 2) * (2 / (sp.Symbol("s") + 2)) ** 2
                 + sp.Rational(1, 2) * 5 / (sp.Symbol("s") + 5)),
])
def test_ph_from_me_reproduces_moments_and_density(law: ME) -> None:
    alpha, A = ph_from_me(law)
    exact = [float(m) for m in law.moments(4)]
    np.testing.assert_allclose(ph_moments((alpha, A), 4), exact, rtol=1e-11)
    for t in (0.0, 0.3, 1.0, 4.0):
        assert _ph_pdf(alpha, A, t) == pytest.approx(float(law.pdf_mp(t)), rel=1e-10, abs=1e-14)


def test_ph_from_me_rejects_complex_poles() -> None:
    s = sp.Symbol("s")
    with pytest.raises(InvalidParameter, match="complex"):
        ph_from_me(ME.from_expr(2 / (s ** 2 + 2 * s + 2)))


def test_ph_from_me_rejects_negative_entry_weight() -> None:
    # 1.2 x (Exp(1) * Exp(4)) - 0.2 x Exp(4): a unit-mass ME function, not a PH (f(0) < 0)
    s = sp.Symbol("s")
    expr = sp.Rational(6, 5) * 4 / ((s + 1) * (s + 4)) - sp.Rational(1, 5) * 4 / (s + 4)
    with pytest.raises(InvalidParameter, match="negative"):
        ph_from_me(ME.from_expr(expr))


def test_ph_from_me_rejects_other_types() -> None:
    with pytest.raises(InvalidParameter, match="parameter me"):
        ph_from_me(([1.0], [[-1.0]]))
