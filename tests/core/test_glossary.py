"""One glossary across domains: every public result type follows the result protocol
(:class:`symq.core.result.ResultBase`) and no field is named by a retired synonym."""

import dataclasses
import importlib
import inspect
import json
import pkgutil

import pytest

import symq
from symq.core.glossary import GLOSSARY, RETIRED
from symq.core.result import ResultBase

#: Suffixes of the names of result types (what a solver or a simulator returns).
RESULT_SUFFIXES = ("Result", "Estimate", "FixedPoint", "Solution", "Allocation", "Certificate",
                   "Report", "Terms", "Trajectory", "Scan", "Check", "Stability", "WaitingTime",
                   "Verdict")
#: Result-like names that are not results: the generic CLI record and declarations.
NOT_RESULTS = {"Result", "SweepResult", "Verdict"}


def _public_classes():
    found = {}
    for info in pkgutil.walk_packages(symq.__path__, "symq."):
        if info.name.startswith("symq.__main__"):
            continue
        module = importlib.import_module(info.name)
        for item in getattr(module, "__all__", ()):
            value = getattr(module, item, None)
            if inspect.isclass(value) and value.__module__.startswith("symq"):
                found[value] = f"{value.__module__}.{value.__qualname__}"
    return found


CLASSES = _public_classes()
RESULT_TYPES = sorted((path for cls, path in CLASSES.items() if cls is not ResultBase and (
                       issubclass(cls, ResultBase) or (cls.__name__.endswith(RESULT_SUFFIXES)
                                                          and cls.__name__ not in NOT_RESULTS))))
BY_PATH = {path: cls for cls, path in CLASSES.items()}


def test_the_glossary_names_are_not_retired():
    assert not set(GLOSSARY) & set(RETIRED)
    assert set(RETIRED.values()) <= set(GLOSSARY)


@pytest.mark.parametrize("path", RESULT_TYPES)
def test_result_types_follow_the_protocol(path):
    cls = BY_PATH[path]
    assert issubclass(cls, ResultBase), f"{path} does not subclass symq.core.result.ResultBase"
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, \
        f"{path} is not a frozen dataclass"
    retired = {f.name: RETIRED[f.name] for f in dataclasses.fields(cls) if f.name in RETIRED}
    assert not retired, f"{path} uses retired names (old -> glossary): {retired}"


def test_the_protocol_gives_json_text_and_markdown():
    import numpy as np

    from symq.core.simstats import batch_means

    @dataclasses.dataclass(frozen=True)
    class Example(ResultBase):
        summary = ("ET",)
        ET: float
        tail: np.ndarray
        ET_ci: object

    ci = batch_means(np.random.default_rng(1).exponential(size=3000), n_batches=10)
    result = Example(ET=2.0, tail=np.array([1.0, 0.5]), ET_ci=ci)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["tail"] == [1.0, 0.5] and data["ET_ci"]["n"] == 10
    assert str(result) == "Example(ET=2)"
    assert "| `ET_ci` |" in result._repr_markdown_()
