"""The registry finds models and papers; names are matched case-insensitively."""

import pytest

from symq.core import registry
from symq.core.claims import Claim
from symq.core.errors import InvalidParameter, UnknownName
from symq.core.parameters import Parameter, PositiveReal
from symq.core.result import Result


def _solve(a, rng=None):
    return Result("toy-square", {"a": a}, {"square": a * a, "rng_given": rng is not None})


@pytest.fixture
def toy_model():
    spec = registry.register_model(registry.ModelSpec(
        "toy-square", "a squared", (Parameter("a", PositiveReal(), typical=2.0),), _solve))
    yield spec
    registry._MODELS.pop("toy-square", None)


def test_model_lookup_parse_and_run(toy_model):
    spec = registry.get_model("TOY-square")
    assert spec is toy_model and spec.accepts_rng
    params = spec.parse({"a": "3"})
    result = spec.run(params, rng=1)
    assert result["square"] == 9.0 and result["rng_given"]
    assert spec.summary_values(result) == {"square": 9.0, "rng_given": 1.0}
    with pytest.raises(InvalidParameter, match="toy-square has no parameter b"):
        spec.parse({"b": "1"})
    with pytest.raises(InvalidParameter, match="a=-1"):
        spec.run({"a": -1})


def test_a_solver_returning_a_typed_result_is_wrapped_by_the_registry():
    from dataclasses import dataclass

    from symq.core.errors import NumericalFailure
    from symq.core.result import Exactness, ResultBase

    @dataclass(frozen=True)
    class Square(ResultBase):
        square: float
        P_wait: float
        method: str = "multiplication"
        exactness: Exactness = Exactness.EXACT

    def solve(a):
        return Square(square=a * a, P_wait=a / 10)

    spec = registry.ModelSpec("typed-square", "a squared", (Parameter("a", PositiveReal()),),
                              solve)
    result = spec.run({"a": 3.0})
    assert result.values == {"square": 9.0, "P_wait": 0.3}
    assert result.params == {"a": 3.0} and result.method == "multiplication"
    assert result.seconds >= 0.0 and isinstance(result.outcome, Square)
    with pytest.raises(NumericalFailure, match="P_wait"):  # the checks see the typed values
        spec.run({"a": 20.0})


def test_unknown_names_list_the_choices(toy_model):
    with pytest.raises(UnknownName, match="valid choices: .*toy-square"):
        registry.get_model("nope")
    with pytest.raises(UnknownName, match="unknown paper 'nope'"):
        registry.get_paper("nope")


def test_paper_claims_are_tagged_with_the_paper_key():
    spec = registry.PaperSpec("toy-paper", "T", "C", claims=lambda: [
        Claim("c", "s", "x", lambda p: 1.0, lambda p: 1.0, [{}])])
    claims = spec.build_claims()
    assert claims[0].paper == "toy-paper"
    assert claims[0].check().paper == "toy-paper"


def test_plugins_register_the_builtin_papers():
    assert "ps-routing" in registry.papers()
    assert "ps-routing" in registry.models()
