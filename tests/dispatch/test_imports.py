"""The house drawn from the imports of ``symq.dispatch``: sub-packages by concept, no circles.

The graph is read from the source with the helpers of ``tests/core/test_core_imports.py`` (an
import inside a function counts; only ``if TYPE_CHECKING:`` blocks are free; importing a module
of a sub-package also runs the sub-package's ``__init__``).  DESIGN.md, "Layout": a domain that
grows past a dozen modules gets sub-packages by concept; a private name is shared only inside
one sub-package.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("core_imports",
                                               ROOT / "tests" / "core" / "test_core_imports.py")
house = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(house)

DISPATCH = ROOT / "symq" / "dispatch"
MODULES = {house.module_name(p): p for p in DISPATCH.rglob("*.py")}
SUB_PACKAGES = ("vi", "policies", "simulation")


def resolve(target: str, name: str | None) -> str:
    """The module an import runs: ``from a.b import c`` is module ``a.b.c`` when one exists."""
    return f"{target}.{name}" if name and f"{target}.{name}" in MODULES else target


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        own = house.ancestors(module) | {module}
        out: set[str] = set()
        for target, name in house.imports(path):
            run = resolve(target, name)
            out |= {m for m in house.ancestors(run) | {run} if m in MODULES and m not in own}
        edges[module] = out
    return edges


def sub_package(module: str) -> str:
    """``vi``, ``policies``, ``simulation`` or ``""`` (the top level of symq.dispatch)."""
    parts = module.split(".")
    return parts[2] if len(parts) >= 3 and parts[2] in SUB_PACKAGES else ""


def test_the_sub_packages_exist_and_hold_their_modules():
    assert {"symq.dispatch.vi.solvers", "symq.dispatch.vi.accuracy",
            "symq.dispatch.policies.named", "symq.dispatch.policies.exact",
            "symq.dispatch.simulation.simulate"} <= set(MODULES)
    top = {m for m in MODULES if m.count(".") == 2 and m.split(".")[2] not in SUB_PACKAGES}
    assert len(top) <= 10, sorted(top)


def test_dispatch_has_no_import_circles():
    assert house.circles(graph()) == []


@pytest.mark.parametrize("lower, upper", [("policies", "vi"), ("policies", "simulation"),
                                          ("vi", "simulation"), ("simulation", "vi")])
def test_the_sub_packages_import_one_way(lower, upper):
    """Policies are below value iteration and simulation, which do not import each other."""
    found = [f"{m} imports {t}" for m, targets in graph().items() for t in targets
             if sub_package(m) == lower and sub_package(t) == upper]
    assert found == []


def test_no_private_name_is_imported_across_dispatch_sub_packages():
    """A private name is shared only inside one sub-package (not across the top level)."""
    found = []
    for module, path in MODULES.items():
        for target, name in house.imports(path, typing_too=True):
            if name and name.startswith("_") and not name.startswith("__") \
                    and target.startswith("symq.dispatch") and resolve(target, name) == target:
                if not (sub_package(module) and sub_package(module) == sub_package(target)
                        and module.count(".") > 2):
                    found.append(f"{module} imports {target}.{name}")
    assert found == []


def test_importing_the_models_registers_nothing():
    """Registration is declared, not an import side effect: ``symq.dispatch.registration`` lists
    the models and the kind, and only :func:`symq.core.registry.load_domains` registers them."""
    import subprocess
    import sys

    code = ("import symq.core.registry as r; import symq.dispatch, symq.dispatch.model, "
            "symq.dispatch.declared; print(sorted(r._MODELS), sorted(r._KINDS)); "
            "from symq.dispatch import registration as g; "
            "print([s.name for s in g.MODELS], [k.kind for k in g.MODEL_KINDS])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""}, check=True).stdout
    assert out.splitlines() == ["[] []", "['dispatch', 'dispatch-sim'] ['dispatch-score']"]
