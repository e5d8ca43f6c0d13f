"""Result.to_dict() and to_jsonable() produce strict JSON from numpy/sympy/mpmath values."""

import json

import mpmath
import numpy as np
import sympy as sp

from symq.core.result import Exactness, Result, to_jsonable


def test_result_round_trips_through_strict_json():
    result = Result(
        model="toy", params={"C": np.array([4.0, 2.0]), "n": np.int64(3)},
        values={"loads": np.array([1.5, 0.5]), "cost": np.float64(0.75),
                "exact": sp.Rational(1, 3), "big": mpmath.mpf("2.5"), "inf": float("inf"),
                "nested": {"flag": np.bool_(True), "z": 1 + 2j}},
        method="closed form", exactness=Exactness.EXACT, timings={"solve": 0.01},
    )
    text = json.dumps(result.to_dict(), allow_nan=False)
    data = json.loads(text)
    assert data["results"]["loads"] == [1.5, 0.5]
    assert data["results"]["exact"] == 1 / 3
    assert data["results"]["big"] == 2.5
    assert data["results"]["inf"] == "inf"
    assert data["results"]["nested"] == {"flag": True, "z": {"re": 1.0, "im": 2.0}}
    assert data["params"] == {"C": [4.0, 2.0], "n": 3}
    assert data["exactness"] == "exact"
    assert result["cost"] == 0.75


def test_symbolic_values_are_printed():
    x = sp.Symbol("x")
    assert to_jsonable(x**2) == "x**2"
    assert to_jsonable(sp.Integer(7)) == 7
