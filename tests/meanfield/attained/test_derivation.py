"""The attained-service solver computes what ``attained/derivation.py`` derives.

The cavity solver keeps fast numeric forms (the probe polynomial, the phase-type mean residual
life, the factorised layer exponential); each is compared here with the compiled symbolic form
of the derivation (:func:`symq.core.compile`) at random points.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.core.compiler import compile as symq_compile
from symq.core.precision import local_mp, working_dps
from symq.laws import subgenerator_expm
from symq.meanfield.attained import derivation as der
from symq.meanfield.attained.cavity import _birth_expm, _Ranking
from symq.meanfield.attained.policies import mean_residual_life

unit = st.floats(0.0, 1.0)


@settings(max_examples=80, deadline=None)
@given(d=st.integers(1, 8), lam=st.floats(0.05, 0.99), v=unit, w=st.floats(1e-3, 1.0))
def test_class_rate_is_the_derived_closed_form(d, lam, v, w):
    v = v * (1.0 - w)  # v + w <= 1: the masses of a class and of the worse classes
    closed = symq_compile(der.class_rate_closed_form(d), (der.LAM, der.V, der.W))
    summed = symq_compile(der.class_rate_sum(d), (der.LAM, der.V, der.W))
    # the solver: two score groups, the worse one of mass v, the tagged one of mass w
    table = np.array([[1.0, 2.0]])
    rates = _Ranking(table, d, lam).rates(np.array([[w, v]]))
    # the first column is the tagged class; the last column is the truncation (rate 0)
    assert rates[0, 0] == pytest.approx(float(closed(lam, v, w)), rel=1e-12, abs=1e-14)
    assert rates[0, 0] == pytest.approx(float(summed(lam, v, w)), rel=1e-12, abs=1e-14)


@settings(max_examples=60, deadline=None)
@given(p=st.floats(0.05, 0.95), mu1=st.floats(0.05, 20.0), mu2=st.floats(0.05, 20.0),
       age=st.floats(0.0, 10.0))
def test_mean_residual_life_is_the_derived_h2_form(p, mu1, mu2, age):
    symbolic = symq_compile(der.h2_mean_residual_life(), (der.P_BRANCH, der.MU1, der.MU2, der.AGE))
    expected = float(symbolic(p, mu1, mu2, age))
    numeric = float(mean_residual_life(([p, 1.0 - p], [[-mu1, 0.0], [0.0, -mu2]]), age))
    assert numeric == pytest.approx(expected, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(p=st.floats(0.05, 0.95), mu1=st.floats(0.05, 20.0), mu2=st.floats(0.05, 20.0),
       age=st.floats(0.0, 10.0))
def test_mean_residual_life_grows_as_derived(p, mu1, mu2, age):
    # the derivation's sign of d/da E[X - a | X > a]: the numerator is >= 0
    numerator = symq_compile(der.h2_mrl_derivative_numerator(),
                             (der.P_BRANCH, der.MU1, der.MU2, der.AGE))
    assert float(numerator(p, mu1, mu2, age)) >= 0.0


@settings(max_examples=40, deadline=None)
@given(rates=st.lists(st.floats(0.0, 5.0), min_size=2, max_size=6),
       mu=st.lists(st.floats(0.1, 5.0), min_size=1, max_size=3),
       delta=st.floats(0.01, 2.0))
def test_layer_exponential_factorises_as_derived(rates, mu, delta):
    # Lambda_k = exp((L_k (+) A) delta) = exp(L_k delta) (x) exp(A delta): the solver's
    # birth-process exponential (uniformisation) times scipy's expm of A, against expm of F_k
    row = np.array(rates)
    row[-1] = 0.0  # no arrivals at the truncation level B
    B, m = row.size, len(mu)
    A = -np.diag(mu) + np.diag(np.array(mu[:-1]) * 0.5, k=1)
    L = -np.diag(row) + np.diag(row[:-1], k=1)
    F = np.kron(L, np.eye(m)) + np.kron(np.eye(B), A)
    # the service factor as the solver computes it; the reference exp(F delta) at 30 digits
    # (scipy's expm loses 2e-4 on triangular A whose rates differ in the last bit)
    factorised = np.kron(_birth_expm(row[None, :], delta)[0], subgenerator_expm(A, delta))
    with working_dps(30):
        ctx = local_mp()
        exact = ctx.expm(ctx.matrix((F * delta).tolist()), method="taylor")
    np.testing.assert_allclose(factorised, np.array(exact.tolist(), dtype=float), atol=1e-12)
