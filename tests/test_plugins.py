"""Plugins (issue 13): a package installed with pip is found by ``symq list`` and checked by
``symq check``; a broken plugin is one warning line and breaks nothing.

The end-to-end test builds two tiny packages in a temporary directory, installs them with
``pip install --target`` (offline: ``--no-index --no-build-isolation``; each package carries a
PEP 517 backend of a few lines written with the standard library, because setuptools cannot
build a wheel here without the ``wheel`` package), and runs ``python -m symq`` with the target on
``PYTHONPATH``.  The demo plugin's claim is honest: the M/M/1 mean response time 1/(mu - lam)
against symq's supermarket model at d = 1 (one queue per arrival: M/M/1 with mu = 1), and the
test checks the values of its worst point against 1/(1 - lam) itself.  The unit tests call
``registry._load_entry_point`` with hand-made entry points and restore the registry afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
import warnings
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from symq.core import registry
from symq.core.registry import PluginFailure, PluginWarning

ROOT = Path(__file__).resolve().parents[1]
GROUP = "symq.plugins"

# A PEP 517 backend (build_wheel only) that packs the package and the metadata of the
# [project] table of pyproject.toml, entry points included, into a pure-Python wheel.
BACKEND = r'''
"""A minimal PEP 517 backend for the test packages (standard library only)."""
import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _record(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    stem = name.replace("-", "_")
    info = f"{stem}-{version}.dist-info"
    files = {f"{path.relative_to(HERE).as_posix()}": path.read_bytes()
             for path in sorted((HERE / stem).rglob("*.py"))}
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files[f"{info}/METADATA"] = metadata.encode()
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: symq-tests\n"
                              b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    groups = project.get("entry-points", {})
    files[f"{info}/entry_points.txt"] = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
        for group, eps in groups.items()).encode()
    lines = [_record(k, v) for k, v in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(lines) + "\n").encode()
    wheel = f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w") as archive:
        for k, v in files.items():
            archive.writestr(k, v)
    return wheel
'''

PYPROJECT = '''
[build-system]
requires = []
build-backend = "tiny_backend"
backend-path = ["."]

[project]
name = "{name}"
version = "0.1"

[project.entry-points."symq.plugins"]
{entry} = "{value}"
'''

DEMO = '''
"""A symq plugin: one paper with one claim (M/M/1 mean response time)."""
from symq.core.claims import Claim, Evidence
from symq.core.registry import PaperSpec, get_model


def mm1_response_time(point):
    """E[T] = 1/(mu - lam) of the M/M/1 queue."""
    return 1 / (point["mu"] - point["lam"])


def supermarket_d1(point):
    """The supermarket model at d = 1 (unit service rate): one M/M/1 queue per server."""
    return float(get_model("supermarket").run({"d": 1, "lam": point["lam"]}).values["ET"])


def register():
    claim = Claim("M/M/1 mean response time", "Kleinrock 1975, Queueing Systems I, ch. 3",
                  "E[T] = 1/(mu - lam)", mm1_response_time, supermarket_d1,
                  [{"lam": lam, "mu": 1.0} for lam in (0.25, 0.5, 0.9)], tolerance=1e-9,
                  evidence=Evidence.NUMERIC)
    return PaperSpec("demo-key", "Demo plugin paper", "symq test suite",
                     lambda: [claim], models=("supermarket",))
'''

BROKEN = '''
raise ImportError("symq_broken_plugin needs the package no_such_dependency")
'''

DEMO_SOURCE = "plugin demo (symq_demo_plugin:register, package symq-demo-plugin)"
BROKEN_ERROR = "ImportError: symq_broken_plugin needs the package no_such_dependency"


def make_package(root: Path, name: str, entry: str, value: str, code: str) -> Path:
    package = root / name
    module = name.replace("-", "_")
    (package / module).mkdir(parents=True)
    (package / module / "__init__.py").write_text(textwrap.dedent(code))
    (package / "tiny_backend.py").write_text(BACKEND)
    (package / "pyproject.toml").write_text(PYPROJECT.format(name=name, entry=entry, value=value))
    return package


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder where pip installed the demo plugin and the broken plugin."""
    root = tmp_path_factory.mktemp("plugins")
    packages = [make_package(root, "symq-demo-plugin", "demo", "symq_demo_plugin:register", DEMO),
                make_package(root, "symq-broken-plugin", "broken", "symq_broken_plugin:register",
                             BROKEN)]
    target = root / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--no-cache-dir", "--disable-pip-version-check", "-q", "--target", str(target),
         *map(str, packages)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PIP_NO_INPUT": "1"})
    assert proc.returncode == 0, proc.stderr
    entry_points = (target / "symq_demo_plugin-0.1.dist-info" / "entry_points.txt").read_text()
    assert 'demo = symq_demo_plugin:register' in entry_points
    return target


def symq(site: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SYMQ_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    return subprocess.run([sys.executable, "-m", "symq", *argv], capture_output=True, text=True,
                          env=env, cwd=site.parent, timeout=120)


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("symq: warning:")]


def assert_one_broken_warning(stderr: str) -> None:
    (line,) = warning_lines(stderr)
    assert "'broken'" in line and "symq_broken_plugin:register" in line and BROKEN_ERROR in line
    assert "Traceback" not in stderr and "symq: error" not in stderr, stderr


def built_in_papers() -> list[str]:
    return [key for key, spec in registry.papers().items() if spec.source == registry.BUILT_IN]


def test_installed_plugin_is_listed_and_checked_and_a_broken_one_is_one_warning(site):
    listed = symq(site, "list")
    assert listed.returncode == 0, listed.stderr
    assert_one_broken_warning(listed.stderr)
    demo = [line for line in listed.stdout.splitlines() if line.strip().startswith("demo-key ")]
    assert len(demo) == 1 and "Demo plugin paper" in demo[0] and f"[{DEMO_SOURCE}]" in demo[0]
    for key in built_in_papers():
        assert any(line.strip().startswith(f"{key} ") and line.endswith("[built in]")
                   for line in listed.stdout.splitlines()), key

    as_json = symq(site, "list", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert_one_broken_warning(as_json.stderr)
    data = json.loads(as_json.stdout)
    sources = {p["key"]: p["source"] for p in data["papers"]}
    assert sources["demo-key"] == DEMO_SOURCE
    assert all(sources[key] == registry.BUILT_IN for key in built_in_papers())
    (failure,) = data["plugin_failures"]
    assert "'broken'" in failure and BROKEN_ERROR in failure

    checked = symq(site, "check", "demo-key", "--json")
    assert checked.returncode == 0, checked.stderr
    assert_one_broken_warning(checked.stderr)
    (verdict,) = json.loads(checked.stdout)
    assert verdict["paper"] == "demo-key" and verdict["claim"] == "M/M/1 mean response time"
    assert verdict["status"] == "holds" and verdict["n_points"] == 3, verdict
    lam = verdict["worst_point"]["lam"]
    assert lam in (0.25, 0.5, 0.9)
    assert verdict["claimed_value"] == pytest.approx(1 / (1 - lam), rel=1e-12)
    assert verdict["reference_value"] == pytest.approx(1 / (1 - lam), rel=1e-9)


# ----------------------------------------------------------------------------- unit tests

@pytest.fixture
def clean_registry():
    """The registry as it was (papers, models, kinds, failures) after the test."""
    registry.load_plugins()  # before the snapshot: the built-in papers stay registered
    saved = [(table, dict(table)) for table in (registry._PAPERS, registry._MODELS,
                                                registry._KINDS)]
    failures = list(registry._FAILURES)
    yield
    for table, copy in saved:
        table.clear()
        table.update(copy)
    registry._FAILURES[:] = failures


@pytest.fixture
def plugin_modules(tmp_path, monkeypatch):
    """Importable modules written for one test (names unique to it; removed afterwards)."""
    names: list[str] = []

    def write(code: str) -> str:
        name = f"symq_fake_plugin_{uuid.uuid4().hex[:10]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(code))
        names.append(name)
        return name

    monkeypatch.syspath_prepend(str(tmp_path))
    yield write
    for name in names:
        sys.modules.pop(name, None)


SPECS = '''
from symq.core.parameters import Parameter, PositiveReal
from symq.core.registry import ModelSpec, PaperSpec
from symq.core.result import Exactness, Result


def solve(x):
    return Result("fake-model", {"x": x}, {"y": 2 * x}, "doubling", Exactness.EXACT, {})


SPEC = PaperSpec("fake-attribute", "Fake paper", "nobody", lambda: [])
SPECS = [PaperSpec("fake-listed", "Listed paper", "nobody", lambda: []),
         ModelSpec("fake-model", "doubles x", (Parameter("x", PositiveReal(), typical=1.0),),
                   solve)]


def make():
    return PaperSpec("fake-called", "Called paper", "nobody", lambda: [])


def make_list():
    return [PaperSpec("fake-called-list", "Called list", "nobody", lambda: [])]


NOT_A_SPEC = 42
'''


def load(name: str, value: str) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry._load_entry_point(EntryPoint(name, value, GROUP))
    assert registry._LOADING_SOURCE is None
    return [w for w in caught if issubclass(w.category, PluginWarning)]


@pytest.mark.parametrize("attribute, registered", [
    ("SPEC", {"fake-attribute": "paper"}),
    ("SPECS", {"fake-listed": "paper", "fake-model": "model"}),
    ("make", {"fake-called": "paper"}),
    ("make_list", {"fake-called-list": "paper"}),
])
def test_entry_point_module_attr_forms_register_with_their_source(clean_registry, plugin_modules,
                                                                  attribute, registered):
    module = plugin_modules(SPECS)
    value = f"{module}:{attribute}"
    assert load("fake", value) == []
    source = f"plugin fake ({value})"  # a hand-made entry point has no distribution
    for key, what in registered.items():
        table = registry._PAPERS if what == "paper" else registry._MODELS
        assert table[key].source == source
    assert registry.plugin_failures() == []
    if "fake-model" in registered:  # a registered model is solvable like a built-in one
        result = registry.get_model("fake-model").run({"x": 1.5})
        assert result.values["y"] == 3.0


def test_entry_point_naming_a_module_registers_what_its_import_registers(clean_registry,
                                                                         plugin_modules):
    module = plugin_modules('''
        from symq.core.registry import PaperSpec, register_paper
        register_paper(PaperSpec("fake-module", "Module paper", "nobody", lambda: []))
    ''')
    assert load("mod", module) == []
    assert registry._PAPERS["fake-module"].source == f"plugin mod ({module})"


@pytest.mark.parametrize("code, attribute, error", [
    ('raise ImportError("needs no_such_dependency")\n', "register",
     "ImportError: needs no_such_dependency"),
    (SPECS, "no_such_attribute", "AttributeError"),
    (SPECS, "NOT_A_SPEC", "is a int, not a module, a PaperSpec"),
], ids=["import error", "missing attribute", "not a spec"])
def test_a_failing_entry_point_is_recorded_and_warned_once(clean_registry, plugin_modules, code,
                                                           attribute, error):
    module = plugin_modules(code)
    papers_before, models_before = dict(registry._PAPERS), dict(registry._MODELS)
    failures_before = len(registry.plugin_failures())
    value = f"{module}:{attribute}"
    caught = load("broken", value)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"plugin 'broken' ({value}) failed to load and is skipped: ")
    assert error in message
    failures = registry.plugin_failures()
    assert len(failures) == failures_before + 1
    failure = failures[-1]
    assert isinstance(failure, PluginFailure)
    assert (failure.name, failure.value) == ("broken", value) and error in failure.error
    assert str(failure) == message and "\n" not in message
    assert registry._PAPERS == papers_before and registry._MODELS == models_before

