"""The house drawn from the imports of ``symq.core``: no circles, no domain, no private names.

The graph is read from the source with :mod:`ast` (nothing is imported): a module points to every
symq module it imports anywhere in the file (a function body counts; only ``if TYPE_CHECKING:``
blocks are free), and to each package whose ``__init__`` such an import runs (importing
``symq.core.claimsfile.claim`` runs ``symq/core/claimsfile/__init__.py``).  The circles are the
strongly connected components of more than one module (Tarjan's algorithm).  DESIGN.md,
"Layout": the core knows no domain; imports run one way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "symq" / "core"
DOMAINS = ("laws", "me", "markov", "meanfield", "routing", "window", "dispatch", "papers", "cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path, typing_too: bool = False) -> list[tuple[str, str | None]]:
    """``(module, name)`` for each ``from module import name`` (``name`` None for a plain
    ``import module``) in the file, relative imports resolved."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and is_type_checking(child) and not typing_too:
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, None) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[:len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                found.extend((target, alias.name) for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text()))
    return [(target, name) for target, name in found if target.split(".")[0] == "symq"]


MODULES = {module_name(p): p for p in CORE.rglob("*.py")}


def resolve(target: str, name: str | None) -> str:
    """The module an import runs: ``from a.b import c`` is module ``a.b.c`` when one exists."""
    if name and f"{target}.{name}" in MODULES:
        return f"{target}.{name}"
    return target


def ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        own = ancestors(module) | {module}
        out: set[str] = set()
        for target, name in imports(path):
            run = resolve(target, name)
            out |= {m for m in ancestors(run) | {run} if m in MODULES and m not in own}
        edges[module] = out
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def test_the_circle_finder_finds_a_circle_and_a_self_free_chain():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_core_has_no_import_circles():
    assert circles(graph()) == []


def test_core_imports_no_domain_not_even_for_typing():
    found = [f"{module} imports {target}" for module, path in MODULES.items()
             for target, _ in imports(path, typing_too=True)
             if target.split(".")[1] in DOMAINS]
    assert found == []


def test_display_imports_no_symq_type():
    """Every type renders itself; the display helpers know only the printer."""
    assert {resolve(t, n) for t, n in imports(CORE / "display.py", typing_too=True)} \
        <= {"symq.core.printing"}


# Private names still imported across core modules, to be made public (none left).
PENDING: set[tuple[str, str, str]] = set()


def test_no_private_name_is_imported_across_core_modules():
    """A private name is shared only inside one sub-package (``symq.core.claimsfile``)."""
    found = []
    for module, path in MODULES.items():
        for target, name in imports(path, typing_too=True):
            if name and name.startswith("_") and not name.startswith("__") \
                    and resolve(target, name) == target:
                same = module.rsplit(".", 1)[0] == target.rsplit(".", 1)[0] != "symq.core"
                if not same and (module, target, name) not in PENDING:
                    found.append(f"{module} imports {target}.{name}")
    assert found == []


@pytest.mark.parametrize("name", ["ConfidenceInterval", "Claim", "Verdict", "Approximate",
                                  "SweepResult", "Result"])
def test_a_core_type_shows_in_jupyter_what_to_markdown_gives(name):
    from symq.core.approximate import Approximate
    from symq.core.claims import Claim
    from symq.core.display import MarkdownDisplay
    from symq.core.result import Result
    from symq.core.simstats import ConfidenceInterval
    from symq.core.sweep_result import SweepResult

    claim = Claim("one", "here", "1 == 1", lambda p: 1, lambda p: 1, [{}])
    made = {"ConfidenceInterval": ConfidenceInterval(1.5, 0.25, 0.99, 30, "batch_means"),
            "Claim": claim, "Verdict": claim.check(), "Approximate": Approximate(2.0, 1e-6, "x"),
            "SweepResult": SweepResult([{"a": 1}], [2.0], 0.1, "serial"),
            "Result": Result("m", {"a": 1}, {"ET": 2.0})}[name]
    assert isinstance(made, MarkdownDisplay)
    assert made._repr_markdown_() == made.to_markdown()


def test_a_type_without_to_markdown_shows_its_name_and_repr():
    from symq.core.display import MarkdownDisplay

    class Bare(MarkdownDisplay):
        def __repr__(self) -> str:
            return "Bare()"

    text = Bare()._repr_markdown_()
    assert text.startswith("**Bare**") and "| `repr` | Bare() |" in text


def test_the_lazy_table_and_the_type_checking_imports_name_the_same_names():
    """symq.core lists its public names once (``_EXPORTS``, from which ``__all__`` and the lazy
    imports come); the ``if TYPE_CHECKING:`` block for type checkers must import exactly those,
    each from the module the table names."""
    import symq.core as core

    tree = ast.parse(Path(core.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and is_type_checking(node))
    imported = {alias.name: node.module for node in block.body
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert imported == {name: module for module, names in core._EXPORTS.items()
                        for name in names}
    assert core.__all__ == sorted(imported)
