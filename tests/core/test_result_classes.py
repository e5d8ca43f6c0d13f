"""One result shape: every typed result of symq, checked the same way (as scipy checks every law).

Every public result is a frozen dataclass deriving from ResultBase with a ``method`` and an
``exactness`` field; no result keeps a retired name for time or mean size; and every built-in
model's solver returns a typed result whose fields are the ``MODEL:KEY`` values the model
promises (no hand-written adapter in between).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest

from symq.core import registry
from symq.core.result import Exactness, Result, ResultBase

registry.load_domains()


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found += _subclasses(sub)
    return found


RESULT_CLASSES = sorted({c for c in _subclasses(ResultBase)
                         if c.__module__.startswith("symq.")},
                        key=lambda c: f"{c.__module__}.{c.__qualname__}")


def test_the_domains_have_typed_results():
    assert len(RESULT_CLASSES) >= 40
    modules = {c.__module__.split(".")[1] for c in RESULT_CLASSES}
    assert {"dispatch", "meanfield", "me", "routing", "window"} <= modules


@pytest.mark.parametrize("cls", RESULT_CLASSES, ids=lambda c: c.__qualname__)
def test_every_result_is_frozen_and_says_how_it_was_obtained(cls):
    assert dataclasses.is_dataclass(cls), f"{cls.__qualname__} is not a dataclass"
    assert cls.__dataclass_params__.frozen, f"{cls.__qualname__} is not frozen"
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert "method" in fields and "exactness" in fields, (
        f"{cls.__module__}.{cls.__qualname__} lacks a method or an exactness field")
    hints = typing.get_type_hints(cls)
    assert hints["exactness"] is Exactness
    assert "timings" not in fields, "time is `seconds`"
    assert not {"mean_service", "mean_job_size"} & set(fields), "the mean job size is `mean_size`"


def _built_in_models():
    return [spec for spec in registry.models().values() if spec.source == registry.BUILT_IN]


@pytest.mark.parametrize("spec", _built_in_models(), ids=lambda s: s.name)
def test_every_built_in_model_returns_a_typed_result(spec):
    """The solver's return annotation is a ResultBase subclass, and every ``MODEL:KEY`` the
    model documents is one of that class's fields (so the registry derives the values)."""
    hints = typing.get_type_hints(inspect.unwrap(spec.solve))
    returned = hints.get("return")
    assert returned is not Result, f"{spec.name} still builds a Result by hand"
    assert inspect.isclass(returned) and issubclass(returned, ResultBase), (
        f"{spec.name}: solve is annotated to return {returned!r}, not a typed result")
    fields = {f.name for f in dataclasses.fields(returned) if f.repr}
    missing = [key for key in spec.outputs if key not in fields]
    assert not missing, f"{spec.name} documents {missing}, not fields of {returned.__name__}"
