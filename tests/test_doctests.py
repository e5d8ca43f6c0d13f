"""The examples in the docstrings of symq's modules run and print what they show."""

import doctest
import importlib
import pkgutil

import pytest

import symq.core
import symq.dispatch
import symq.laws
import symq.markov
import symq.me
import symq.meanfield
import symq.routing
import symq.window

PACKAGES = (symq.core, symq.dispatch, symq.laws, symq.markov, symq.me, symq.meanfield,
            symq.routing, symq.window)


def _modules_with_examples():
    names = []
    for package in PACKAGES:
        modules = [package.__name__] + [
            info.name for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
        for name in modules:
            module = importlib.import_module(name)
            if any(test.examples for test in doctest.DocTestFinder().find(module)):
                names.append(module.__name__)
    return names


MODULES = _modules_with_examples()


def test_packages_have_docstring_examples():
    assert {"symq.core.compiler", "symq.core.parameters", "symq.core.sweep",
            "symq.me", "symq.laws.continuous"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
