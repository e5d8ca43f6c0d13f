"""Registration by declaration (issue 31): each domain declares its models and model kinds in
its ``registration`` module, the registry finds them without importing the papers, and a new
model kind is one module plus one registration line.  Also the fast start: ``import symq`` and
``symq --version`` load no numeric library (structural checks on ``sys.modules``, no timings).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import symq
from symq.core import registry
from symq.core.parameters import Parameter, PositiveReal
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import Exactness, Result

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numba", "scipy", "scipy.stats", "sympy", "numpy")


def python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter that imports symq from this tree."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False,
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


# ----------------------------------------------------------------------------- fast start

@pytest.mark.parametrize("argv", [None, ["--version"], ["--help"]],
                         ids=["import symq", "symq --version", "symq --help"])
def test_import_and_version_and_help_load_no_numeric_library(argv):
    run = "" if argv is None else f"""
        from symq.cli import main
        try:
            main({argv!r})
        except SystemExit:
            pass
    """
    proc = python("""
        import sys
        import symq
    """ + run + f"""
        print()
        print(sorted(m for m in {HEAVY!r} + ("symq.core.registry", "symq.papers")
                     if m in sys.modules))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]", proc.stdout
    if argv == ["--version"]:
        assert proc.stdout.startswith(f"symq {symq.__version__}")


def test_lazy_exports_resolve_to_the_defining_objects_whatever_is_imported_first():
    proc = python("""
        import symq.core.sweep                      # the submodule first ...
        import symq.core
        from symq.core import sweep                 # ... the function still wins
        from symq.core.sweep import sweep as defined
        import symq
        from symq.core.compiler import compile as compiled
        print(symq.core.sweep is defined, sweep is defined, symq.compile is compiled,
              symq.core.compile is compiled)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"] * 4


def test_every_lazy_export_is_the_object_of_its_module():
    from symq import core

    assert set(core.__all__) == set(core._MODULE_OF)
    for name, module in core._MODULE_OF.items():
        defined = getattr(importlib.import_module(f"symq.core.{module}"), name)
        assert getattr(core, name) is defined, name
    for name in set(symq.__all__) - {"__version__"}:
        assert getattr(symq, name) is getattr(core, name), name
    assert set(symq.__all__) <= set(dir(symq)) and set(core.__all__) <= set(dir(core))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        core.nope  # noqa: B018 - the attribute access is the test


def test_the_parser_default_of_max_points_is_the_sweep_limit():
    from symq.cli import DEFAULT_MAX_POINTS, build_parser
    from symq.core.sweep import MAX_POINTS

    args = build_parser().parse_args(["sweep", "supermarket", "lam=0.1:0.9:3"])
    assert args.max_points == DEFAULT_MAX_POINTS == MAX_POINTS


# ----------------------------------------------------------------------------- declaration

def declared() -> dict[str, tuple[tuple[ModelSpec, ...], tuple[ModelKind, ...]]]:
    out = {}
    for name in registry.registration_modules():
        module = importlib.import_module(name)
        out[name] = (module.MODELS, module.MODEL_KINDS)
    return out


def test_the_domains_are_found_without_the_papers():
    names = registry.registration_modules()
    assert {f"symq.{d}.registration" for d in ("me", "meanfield", "routing", "window",
                                                "dispatch")} <= set(names)
    assert not any(n.startswith("symq.papers") for n in names)


def test_each_declared_spec_is_registered_as_built_in_and_declared_once():
    models, kinds = registry.models(), registry.model_kinds()
    seen: list[str] = []
    for name, (specs, declared_kinds) in declared().items():
        assert isinstance(specs, tuple) and isinstance(declared_kinds, tuple), name
        for spec in specs:
            assert models[spec.name] is spec and spec.source == registry.BUILT_IN
            seen.append(spec.name)
        for kind in declared_kinds:
            assert kinds[kind.kind] is kind
    assert len(seen) == len(set(seen))
    built_in = sorted(n for n, s in models.items() if s.source == registry.BUILT_IN)
    assert sorted(seen) == built_in  # every built-in model is declared by its domain


def test_a_claims_file_with_a_model_kind_runs_without_the_papers(tmp_path, monkeypatch,
                                                                 capsys):
    """``symq check FILE`` of a file that declares a model of a registered kind runs, with
    loading symq's papers made an error (it would be exit status 1, an internal error)."""
    path = tmp_path / "sis.toml"
    path.write_text(textwrap.dedent('''
        [paper]
        key = "sis-only"
        title = "An SIS epidemic declared as a population process"

        [models.sis]
        kind = "population"
        parameters = { beta = "positive", gamma = "positive" }
        variables = ["i"]
        transitions = [{ jump = [1], rate = "beta*i*(1 - i)" }, { jump = [-1], rate = "gamma*i" }]
        initial = [0.5]

        [[claims]]
        name = "endemic equilibrium"
        source = "beta i (1 - i) = gamma i at the fixed point"
        statement = "i == 1 - gamma/beta"
        let.i = "sis:i"
        tolerance = 1e-10
        region = { beta = [2, 4], gamma = 1 }
    '''))

    def no_papers() -> None:
        raise AssertionError("symq.papers imported for a claims file")

    from symq.cli import main

    monkeypatch.setattr(registry, "_load_own_papers", no_papers)
    monkeypatch.setattr(registry, "_LOADED", False)
    outputs = []
    for argv in (["check", str(path), "--json", "-q"], ["derive", str(path)]):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, err
        outputs.append(out)
    (verdict,) = json.loads(outputs[0])
    assert verdict["status"] == "holds" and verdict["n_points"] == 2
    assert "beta" in outputs[1]  # the derivation of the declared model
    with pytest.raises(AssertionError, match="symq.papers imported"):  # the guard works
        registry.papers()


@pytest.fixture
def restored_registry():
    """The registry's tables and flags as they were, after the test."""
    registry.load_plugins()
    tables = [(t, dict(t)) for t in (registry._MODELS, registry._KINDS, registry._PAPERS)]
    yield
    for table, copy in tables:
        table.clear()
        table.update(copy)


def _toy_solve(a: float) -> Result:
    return Result("toy", {"a": a}, {"b": 2 * a}, "doubling", Exactness.EXACT, {})


def test_registering_the_same_spec_twice_is_a_no_op_and_another_replaces(restored_registry):
    spec = ModelSpec("toy-twice", "doubles", (Parameter("a", PositiveReal()),), _toy_solve)
    assert registry.register_model(spec) is spec
    assert registry.register_model(spec) is spec and registry.models()["toy-twice"] is spec
    other = ModelSpec("toy-twice", "doubles again", spec.parameters, _toy_solve)
    assert registry.register_model(other) is other and registry.get_model("toy-twice") is other
    builtin = registry.get_model("supermarket")
    assert registry.register_model(builtin) is builtin  # what a domain's import-time call does
    assert registry.get_model("supermarket") is builtin


def test_a_new_domain_with_a_model_kind_is_one_module_and_one_registration_line(
        tmp_path, monkeypatch, restored_registry):
    """A package ``symq.toy`` (outside the tree, on symq's path) with a module declaring the
    kind and a registration module naming it: the kind is found, declared in a claims file
    and solved, with no other edit."""
    package = tmp_path / "toykind"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "declared.py").write_text(textwrap.dedent('''
        from symq.core.parameters import Parameter, PositiveReal
        from symq.core.registry import ModelKind, ModelSpec
        from symq.core.result import Exactness, Result


        def declare_mm1(name, table, parameters, where):
            """An M/M/1 queue with the declared service rate: E[T] = 1/(mu - lam)."""
            mu = float(table["mu"])

            def solve(lam):
                return Result(name, {"lam": lam}, {"ET": 1 / (mu - lam)}, "closed form",
                              Exactness.EXACT, {})

            return ModelSpec(name, "M/M/1", (Parameter("lam", PositiveReal()),), solve)


        MM1 = ModelKind(kind="toy-mm1", summary="an M/M/1 queue", declare=declare_mm1,
                        keys={"mu": "service rate"}, outputs=("ET",))
    '''))
    (package / "registration.py").write_text("from .declared import MM1\n\n"
                                             "MODELS = ()\nMODEL_KINDS = (MM1,)\n")
    monkeypatch.setattr(symq, "__path__", [*symq.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_DOMAINS_LOADED", False)
    try:
        assert "symq.toykind.registration" in registry.registration_modules()
        kind = registry.get_model_kind("toy-mm1")
        spec = kind.declare("q", {"mu": 2.0}, (), "models.q")
        assert spec.run({"lam": 1.5})["ET"] == pytest.approx(1 / (2.0 - 1.5), rel=1e-15)
    finally:
        for name in [m for m in sys.modules if m.startswith("symq.toykind")]:
            del sys.modules[name]


# ----------------------------------------------------------------------------- display

def test_a_model_kind_renders_its_keys_and_outputs():
    kind = ModelKind("toy", "a | toy kind", lambda *a: None, keys={"x": "the x"},
                     outputs=("y", "z"))
    assert kind._repr_markdown_() == ("**toy** (model kind of claims files): a \\| toy kind\n\n"
                                      "| key | meaning |\n|---|---|\n| `x` | the x |\n\n"
                                      "results: `y`, `z`")
