"""compile(): numpy and mpmath callables agree with independent evaluations."""

import math as _math

import mpmath
import numba as _numba
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as _st

from symq.core import compiler
from symq.core.compiler import compile as symq_compile
from symq.core.errors import SymqError
from symq.core.parameters import Parameter, PositiveReal

x, y = sp.symbols("x y", positive=True)


def test_numpy_backend_matches_sympy_evalf_on_a_grid():
    expr = sp.exp(-x) * sp.sin(y) / (1 + x**2) + sp.sqrt(x * y)
    f = symq_compile(expr, (x, y))
    xs = np.linspace(0.1, 3, 7)
    ys = np.linspace(0.2, 2, 7)
    got = f(xs, ys)
    expected = [float(expr.evalf(30, subs={x: a, y: b})) for a, b in zip(xs, ys)]
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_broadcasting_and_constant_outputs_have_the_broadcast_shape():
    f = symq_compile([x + y, sp.Integer(3)], (x, y))
    a, b = f(np.arange(4.0).reshape(4, 1), np.arange(3.0))
    assert a.shape == (4, 3) and b.shape == (4, 3)
    np.testing.assert_array_equal(b, 3.0)
    assert np.ndim(f(1.0, 2.0)[0]) == 0


def test_mpmath_backend_reaches_50_digits():
    expr = sp.log(1 + x) - x + x**2 / 2   # cancellation-prone near 0
    f = symq_compile(expr, (x,), backend="mpmath")
    with mpmath.workdps(80):
        x0 = mpmath.mpf("1e-5")
        exact = mpmath.log(1 + x0) - x0 + x0**2 / 2   # ~ x0^3/3 = 3.3e-16
    value = f(x0, dps=50)
    # 50 working digits keep ~38 significant digits of this cancellation-prone value
    assert abs(value - exact) < mpmath.mpf("1e-50")


def test_source_is_exposed_and_uses_cse():
    expr = (x + y) ** 2 + sp.sin(x + y) + sp.cos(x + y)
    f = symq_compile(expr, (x, y))
    assert "def " in f.source and "x0" in f.source  # cse introduced a temporary


def test_cache_returns_the_same_object():
    compiler.clear_cache()
    f1 = symq_compile(x * y + 1, (x, y))
    f2 = symq_compile(x * y + 1, (x, y))
    f3 = symq_compile(x * y + 1, (x, y), backend="mpmath")
    assert f1 is f2 and f1 is not f3
    info = compiler.cache_info()
    assert info["hits"] == 1 and info["misses"] == 2 and info["size"] == 2


def test_parameters_are_accepted_as_arguments():
    rho = Parameter("rho", PositiveReal())
    f = symq_compile(rho.symbol / (1 - rho.symbol), (rho,))
    assert f(0.5) == pytest.approx(1.0)


def test_errors():
    with pytest.raises(SymqError, match="backend='julia'"):
        symq_compile(x, (x,), backend="julia")
    with pytest.raises(SymqError, match="not given as arguments: y"):
        symq_compile(x + y, (x,))
    f = symq_compile(x + 1, (x,))
    with pytest.raises(SymqError, match="called with 2 values"):
        f(1.0, 2.0)


def test_cancel_form_removes_removable_singularities():
    expr = (x**2 - 1) / (x - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        assert np.isnan(symq_compile(expr, (x,))(1.0))
    assert symq_compile(expr, (x,), form="cancel")(1.0) == 2.0


def test_horner_form_agrees_with_exact_rationals():
    expr = (3 * x**4 - 2 * x**3 + x - 7) / (x**2 + x + 1)
    f = symq_compile(expr, (x,), form="horner")
    assert "x**4" not in f.source          # nested multiplication, not powers
    points = [sp.Rational(k, 7) for k in range(-20, 21)]
    exact = [expr.subs(x, p) for p in points]  # exact rational arithmetic
    got = f(np.array([float(p) for p in points]))
    np.testing.assert_allclose(got, [float(e) for e in exact], rtol=1e-14, atol=1e-14)
    with pytest.raises(SymqError, match="form='nested'"):
        symq_compile(expr, (x,), form="nested")


def test_scalar_fast_path_agrees_with_the_front_door():
    f = symq_compile([x * y, sp.exp(-x)], (x, y))
    fast = f.scalar(0.3, 2.0)
    slow = f(0.3, 2.0)
    assert np.allclose(np.asarray(fast, dtype=float).ravel(), np.asarray(slow, dtype=float).ravel())
    with pytest.raises(SymqError, match="called with 1 values"):
        f.scalar(0.3)


# --------------------------------------------------------------------------------------------
# numba backend
# --------------------------------------------------------------------------------------------

_X, _Y = sp.symbols("x y", positive=True)
_EXPR = sp.exp(-_X) * sp.sqrt(_Y) + sp.log(1 + _X * _Y) / (1 + _Y ** 2) + sp.Max(_X, _Y) ** 3


@settings(max_examples=60, deadline=None)
@given(_st.floats(0.01, 20.0), _st.floats(0.01, 20.0))
def test_numba_backend_equals_50_digit_mpmath(x, y):
    fast = symq_compile(_EXPR, (_X, _Y), backend="numba")
    exact = symq_compile(_EXPR, (_X, _Y), backend="mpmath")
    reference = float(exact(x, y, dps=50))
    assert fast.function(x, y) == pytest.approx(reference, rel=1e-13)
    assert float(fast(x, y)) == pytest.approx(reference, rel=1e-13)


def test_numba_backend_broadcasts_and_runs_inside_kernels():
    fast = symq_compile(_EXPR, (_X, _Y), backend="numba")
    xs = np.linspace(0.1, 3.0, 7)
    vector = fast(xs, 2.0)
    assert vector.shape == (7,)
    expected = [_math.exp(-x) * _math.sqrt(2.0) + _math.log(1 + 2 * x) / 5.0 + max(x, 2.0) ** 3
                for x in xs]
    assert np.allclose(vector, expected, rtol=1e-14)
    inner = fast.function

    @_numba.njit
    def total(values):
        s = 0.0
        for v in values:
            s += inner(v, 2.0)
        return s

    assert total(xs) == pytest.approx(sum(expected), rel=1e-13)


def test_numba_backend_tuple_outputs():
    pair = symq_compile([_X + _Y, _X * _Y], (_X, _Y), backend="numba")
    assert pair.function(2.0, 3.0) == (5.0, 6.0)
    s, p = pair(np.array([1.0, 2.0]), 3.0)
    assert s.tolist() == [4.0, 5.0] and p.tolist() == [3.0, 6.0]


def test_indexed_arguments_read_their_entries_from_arrays():
    """``x[0]``, ``p[1]`` of IndexedBase arguments: the compiled function takes the arrays and
    reads the entries (the declared-rate simulator's form); an index of another base is still
    refused."""
    x, p, z = sp.IndexedBase("x"), sp.IndexedBase("p"), sp.IndexedBase("z")
    f = symq_compile([x[0] * p[1] + x[1], sp.Float(3.0) * p[0]], [x, p], backend="numba")
    values = f.function(np.array([2.0, 5.0]), np.array([7.0, 11.0]))
    assert [float(v) for v in values] == [2.0 * 11.0 + 5.0, 21.0]
    with pytest.raises(SymqError, match="z"):
        symq_compile(x[0] + z[0], [x, p])
