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
        method="closed form", exactness=Exactness.EXACT, seconds=0.01,
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
    assert data["seconds"] == 0.01
    assert result["cost"] == 0.75


def test_symbolic_values_are_printed():
    x = sp.Symbol("x")
    assert to_jsonable(x**2) == "x**2"
    assert to_jsonable(sp.Integer(7)) == 7


def test_check_values_refuses_what_cannot_be_right():
    import numpy as np
    import pytest as _pytest

    from symq.core.errors import NumericalFailure
    from symq.core.result import check_values

    check_values("toy", {"ET": 1.5, "tail": [1.0, 0.5, 0.25], "P_wait": 0.5, "name": "x",
                         "nested": {"a": [1.0, 2.0]}})
    with _pytest.raises(NumericalFailure, match=r"toy: the solver returned ET = nan"):
        check_values("toy", {"ET": float("nan")})
    with _pytest.raises(NumericalFailure, match=r"nested.a\[1\] = inf"):
        check_values("toy", {"nested": {"a": [1.0, float("inf")]}})
    with _pytest.raises(NumericalFailure, match=r"V\[2\] = nan"):
        check_values("toy", {"V": np.array([0.0, 1.0, np.nan])})
    with _pytest.raises(NumericalFailure, match=r"probability P_wait\[0\] = 1.2, outside"):
        check_values("toy", {"P_wait": 1.2})
    with _pytest.raises(NumericalFailure, match=r"probability pi\[1\] = -0.1"):
        check_values("toy", {"pi": [0.5, -0.1]})
    with _pytest.raises(NumericalFailure, match="tail increases from 0.5 to 0.6 at level 2"):
        check_values("toy", {"tail": [1.0, 0.5, 0.6]})
    check_values("toy", {"threshold": float("inf")}, allow_infinite=("threshold",))


def test_registered_model_returning_nan_is_refused():
    import pytest as _pytest

    from symq.core import registry
    from symq.core.errors import NumericalFailure
    from symq.core.parameters import Parameter, PositiveReal

    spec = registry.ModelSpec("toy-nan", "nan", (Parameter("a", PositiveReal()),),
                              lambda a: Result("toy-nan", {"a": a}, {"ET": a * float("nan")}))
    with _pytest.raises(NumericalFailure, match="ET = nan"):
        spec.run({"a": 1.0})


def test_generic_result_prints_short_and_as_a_markdown_table():
    from symq.core.result import Result

    r = Result("supermarket", {"d": 2, "lam": 0.9}, {"ET": 2.6141117, "tail": [1.0, 0.9]},
               "closed form")
    assert str(r) == "supermarket: ET=2.61411 (closed form, numeric)"
    table = r._repr_markdown_()
    assert "| `ET` | 2.61411 |" in table and "tail" not in table  # vectors are not table rows


def test_former_timings_are_read_as_their_total_with_a_warning():
    import pytest as _pytest

    from symq.core.renamed import RenamedKeywordWarning

    with _pytest.warns(RenamedKeywordWarning, match="seconds"):
        result = Result("toy", {}, {"x": 1.0}, timings={"fit": 0.25, "certify": 0.5})
    assert result.seconds == 0.75
    positional = Result("toy", {}, {"x": 1.0}, "m", Exactness.EXACT, {"solve": 0.125})
    assert positional.seconds == 0.125


def test_a_typed_result_gives_the_registered_values():
    """Result.of takes the values from the typed fields: shown fields only, bookkeeping and
    ``None`` left out, method and exactness carried over."""
    from dataclasses import dataclass, field

    from symq.core.result import ResultBase

    @dataclass(frozen=True)
    class Toy(ResultBase):
        ET: float
        tail: np.ndarray
        heavy: float | None = None
        scratch: np.ndarray = field(default_factory=lambda: np.zeros(3), repr=False)
        method: str = "closed form"
        exactness: Exactness = Exactness.EXACT
        seconds: float = 0.5

    toy = Toy(ET=2.0, tail=np.array([1.0, 0.5]))
    result = Result.of("toy", {"lam": 0.5}, toy, seconds=9.0)
    assert list(result.values) == ["ET", "tail"]
    assert result["ET"] == 2.0 and result.outcome is toy
    assert (result.method, result.exactness, result.seconds) == ("closed form", Exactness.EXACT,
                                                                 0.5)
    assert json.loads(json.dumps(result.to_dict()))["results"] == {"ET": 2.0,
                                                                   "tail": [1.0, 0.5]}


def test_check_values_looks_inside_a_nested_typed_result():
    """A typed result held as a value (ps-routing's Allocations) is checked like the rest."""
    from dataclasses import dataclass

    import pytest as _pytest

    from symq.core.errors import NumericalFailure
    from symq.core.result import ResultBase, check_values

    @dataclass(frozen=True)
    class Part(ResultBase):
        cost: float
        method: str = "toy"
        exactness: Exactness = Exactness.EXACT

    check_values("toy", {"optimal": Part(cost=1.5)})
    with _pytest.raises(NumericalFailure, match=r"optimal\.cost = nan"):
        check_values("toy", {"optimal": Part(cost=float("nan"))})
