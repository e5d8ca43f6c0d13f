"""The public API surface: every name in every ``__all__`` resolves, ``import *`` works, and
distinct public classes have distinct names across symq (one name per concept)."""

import importlib
import inspect
import pkgutil

import pytest

import symq

MODULES = sorted(info.name for info in pkgutil.walk_packages(symq.__path__, "symq.")
                 if not info.name.endswith(".__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_every_name_in_all_resolves(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        return
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ lists names it does not define: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    namespace: dict = {}
    exec(f"from {name} import *", namespace)


def test_distinct_public_classes_have_distinct_names():
    owners: dict[str, dict[int, str]] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for item in getattr(module, "__all__", ()):
            value = getattr(module, item, None)
            if inspect.isclass(value) and value.__module__.startswith("symq"):
                owners.setdefault(item, {})[id(value)] = f"{value.__module__}.{value.__qualname__}"
    clashes = {item: sorted(places.values()) for item, places in owners.items() if len(places) > 1}
    assert not clashes, f"one name for different classes: {clashes}"


def test_core_exports_the_shared_machinery():
    import symq.core as core

    for item in ("ConfidenceInterval", "sweep", "load_plugins", "ResultBase",
                 "RunPlan", "compile", "parse_formula"):
        assert item in core.__all__
    assert "Distribution" not in core.__all__  # laws are the layer above core: symq.laws


def test_laws_export_the_protocol_and_the_one_vocabulary():
    import symq.laws as laws

    for item in ("Distribution", "PhaseType", "size_law", "size_parameters", "SIZE_LAWS",
                 "as_phase_type", "as_sampler"):
        assert item in laws.__all__
