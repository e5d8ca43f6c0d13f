"""Tests of the (alpha, A) realisations and of the pole / Hermite-residue data of
symq.me.distribution.ME.

Representations are not unique (and the float companion form is ill-conditioned): round trips are
checked through transforms, moments and pdf values, never by comparing matrices.  Residues are
checked against sympy's ``apart`` for rational poles.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.linalg
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.me.distribution import ME
from symq.me.transform import s

R = sp.Rational

# a PH(3): start in phase 1 or 2, phase 1 -> 2 -> 3 -> absorption, with feedback 3 -> 1
ALPHA = sp.Matrix([[R(1, 2), R(1, 2), 0]])
A_PH = sp.Matrix([[-3, 2, 0], [0, -2, R(3, 2)], [R(1, 2), 0, -4]])


def lst_by_sympy_inverse(alpha, A):
    n = A.shape[0]
    expr = (alpha * (s * sp.eye(n) - A).inv() * (-A) * sp.ones(n, 1))[0, 0]
    return sp.cancel(sp.together(expr))


def test_from_matrix_exact_equals_sympy_inverse():
    X = ME.from_matrix(ALPHA, A_PH)
    assert X.order == 3
    assert sp.simplify(X.transform - lst_by_sympy_inverse(ALPHA, A_PH)) == 0
    # moments m_k = k! alpha (-A)^{-k} 1 (derivations/me-pade.md, steps 1-2)
    Minv = (-A_PH).inv()
    assert X.moments(4) == [sp.factorial(k) * (ALPHA * Minv**k * sp.ones(3, 1))[0, 0]
                            for k in range(1, 5)]
    # derivatives at zero f^{(j)}(0) = alpha A^j (-A) 1
    assert X.derivatives_at_zero(4) == [(ALPHA * A_PH**j * (-A_PH) * sp.ones(3, 1))[0, 0]
                                        for j in range(4)]


def test_from_matrix_float_input_and_pdf_vs_expm():
    alpha, A = np.array([0.5, 0.5, 0.0]), np.array(A_PH.tolist(), dtype=float)
    X = ME.from_matrix(alpha, A)
    assert X == ME.from_matrix(ALPHA, A_PH)  # these floats are exact dyadic rationals
    ts = np.array([0.0, 0.05, 0.5, 1.0, 3.0, 10.0])
    ref = np.array([alpha @ scipy.linalg.expm(A * t) @ (-A) @ np.ones(3) for t in ts])
    assert np.allclose(X.pdf(ts), ref, rtol=1e-13, atol=0)
    # decimal floats: alpha sums to 1 only up to rounding; accepted and renormalised exactly
    Y = ME.from_matrix([0.1, 0.2, 0.7], A)
    assert Y.lst(0) == 1


def test_from_matrix_reduces_to_minimal_order():
    X = ME.from_matrix(sp.Matrix([[1, 0]]), sp.Matrix([[-1, 0], [0, -2]]))
    assert X == ME.exponential(1) and X.order == 1
    # Erlang(2) written as a 3-state PH with an unreachable phase
    Y = ME.from_matrix([1, 0, 0], [[-2, 2, 0], [0, -2, 0], [0, 0, -5]])
    assert Y == ME.erlang(2, 2)


@pytest.mark.parametrize("X", [
    ME.from_matrix(ALPHA, A_PH),
    ME.erlang(4, R(5, 2)),
    ME.from_expr(R(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1))),
    ME.from_transform([2, -1], [2, 3, 1]),  # not a density: the realisation still exists
    ME.from_expr(6 / ((s + 1) * (s + 2) * (s + 3))),
], ids=["ph3", "erlang4", "cos", "invalid", "hypo3"])
def test_to_matrix_round_trip(X):
    alpha, A = X.to_matrix()
    n = X.order
    assert alpha.shape == (1, n) and A.shape == (n, n)
    assert sum(alpha) == 1  # no atom
    assert ME.from_matrix(alpha, A) == X
    assert sp.simplify(lst_by_sympy_inverse(alpha, A) - X.transform) == 0
    # the float companion realisation is ill-conditioned (its entries are the coefficients of D,
    # whose size grows with the order): expm of it loses digits,
    # the pdf of X does not, so the tolerance here is the realisation's
    a_f, A_f = X.to_matrix_float()
    ts = np.linspace(0.01, 4, 9)
    ref = np.array([a_f @ scipy.linalg.expm(A_f * t) @ (-A_f) @ np.ones(n) for t in ts])
    assert np.allclose(X.pdf(ts), ref, rtol=1e-8, atol=1e-12)


def test_from_matrix_errors():
    with pytest.raises(InvalidParameter, match="atom"):
        ME.from_matrix([R(1, 2), R(1, 4)], sp.Matrix([[-1, 0], [0, -2]]))
    with pytest.raises(InvalidParameter, match="parameter A=.*invertible"):
        ME.from_matrix([1, 0], [[-1, 1], [1, -1]])
    with pytest.raises(InvalidParameter, match="parameter A=.*shape"):
        ME.from_matrix([1, 0], [[-1, 0, 0], [0, -1, 0]])
    with pytest.raises(InvalidParameter, match="parameter alpha="):
        ME.from_matrix([[1, 0], [0, 1]], [[-1, 0], [0, -1]])
    with pytest.raises(InvalidParameter, match="parameter A="):
        ME.from_matrix([1.0], [[float("inf")]])


def test_poles_multiplicities_exact():
    X = ME.from_expr(10 / ((s + 1) ** 3 * (s + 2) * (s**2 + 2 * s + 5)))
    poles = X.poles(dps=40)
    assert [m for _, m in poles] == [3, 1, 1, 1]
    assert poles[0][0] == -1 and isinstance(poles[0][0], mpmath.mpf)
    assert poles[1][0] == mpmath.mpc(-1, 2) and poles[2][0] == mpmath.mpc(-1, -2)
    assert poles[3][0] == -2
    assert X.lst(0) == 1


@pytest.mark.parametrize("expr", [
    R(36) / ((s + 1) ** 3 * (s + 2) * (s + 3) ** 2) * (1 + s),
    R(24) * (s**2 + 3 * s + 1) / ((s + 2) ** 4 * (s + R(3, 2))),
    R(6) / ((s + 1) * (s + 2) * (s + 3)),
])
def test_residues_against_sympy_apart(expr):
    expr = sp.cancel(expr / expr.subs(s, 0))  # normalise the mass to 1
    X = ME.from_expr(expr)
    parts = sp.Add.make_args(sp.apart(expr, s))
    expected: dict = {}
    for term in parts:  # c / (s - p)^(j+1)
        _, den = sp.fraction(sp.together(term))
        ((p, m),) = sp.roots(sp.Poly(den, s)).items()
        expected[(p, m - 1)] = sp.cancel(term * (s - p) ** m)
    got = X.residues(dps=50)
    assert sum(len(c) for _, c in got) == len(expected) == X.order
    with mpmath.workdps(60):
        compare_residues(got, expected)


def compare_residues(got, expected):
    for pole, coeffs in got:
        p = sp.nsimplify(float(pole))
        assert abs(pole - mpmath.mpf(p.p) / p.q) < mpmath.mpf(10) ** -48
        for j, c in enumerate(coeffs):
            ref = expected[(p, j)]
            assert abs(c - mpmath.mpf(ref.p) / ref.q) < mpmath.mpf(10) ** -45 * max(1, abs(ref))


def test_complex_residues_of_cos_example():
    # (2/3)[1/(s+1) + (s+1)/((s+1)^2+1)] = (2/3)/(s+1) + (1/3)/(s+1-i) + (1/3)/(s+1+i)
    X = ME.from_expr(R(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1)))
    res = X.residues(dps=40)
    assert [p for p, _ in res] == [-1, mpmath.mpc(-1, 1), mpmath.mpc(-1, -1)]
    with mpmath.workdps(50):
        third = mpmath.mpf(1) / 3
        for (_, (c,)), ref in zip(res, [2 * third, third, third]):
            assert abs(c - ref) < mpmath.mpf(10) ** -39
