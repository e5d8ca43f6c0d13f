"""The examples in the docstrings of the core modules run and print what they show."""

import doctest
import importlib
import pkgutil

import pytest

import symq.core


def _modules_with_examples():
    names = []
    for info in pkgutil.iter_modules(symq.core.__path__):
        module = importlib.import_module(f"symq.core.{info.name}")
        if any(test.examples for test in doctest.DocTestFinder().find(module)):
            names.append(module.__name__)
    return names


MODULES = _modules_with_examples()


def test_core_has_docstring_examples():
    assert {"symq.core.compiler", "symq.core.parameters", "symq.core.sweep"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
