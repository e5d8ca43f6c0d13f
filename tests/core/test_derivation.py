"""Derivation records render every formula through sympy.latex."""

import pytest
import sympy as sp

from symq.core.derivation import Derivation, equations


def test_steps_render_as_markdown_with_sympy_latex():
    x, mu = sp.symbols("x mu", positive=True)
    d = Derivation("Toy", source="Paper, eq. (1)", summary="A toy derivation.")
    d.section("Part A")
    eq = d.add("stationarity", sp.Eq(sp.diff(x**2 - mu * x, x), 0), "Set the derivative to zero.")
    d.add("solution", sp.Eq(x, sp.solve(eq, x)[0]), "Solve for x.")
    text = d.to_markdown()
    assert text.startswith("# Toy\n")
    assert "## Part A" in text and "### 1. stationarity" in text and "### 2. solution" in text
    assert sp.latex(sp.Eq(x, mu / 2)) in text
    assert "*Source:* Paper, eq. (1)" in text
    assert len(d) == 2
    assert d["solution"].content == sp.Eq(x, mu / 2)
    with pytest.raises(KeyError, match="stationarity"):
        d["nope"]


def test_multiple_formulas_in_one_step_and_unevaluated_equations():
    a = sp.Symbol("a")
    d = Derivation("T")
    d.add("both", equations([(a, a), (a + 1, 1 + a)]), "")
    text = d.to_markdown()
    assert text.count("$$") == 4      # two display blocks
    assert "a = a" in text            # Eq(a, a) would have evaluated to True
