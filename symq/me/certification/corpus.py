r"""A corpus of ME densities on the boundary of nonnegativity, with the truth known by construction.

Every case is written in the time domain as an exact expression in ``t`` and transformed exactly
(:math:`\mathcal{L}\{c\, t^j e^{z t}\} = c\, j!/(s - z)^{j+1}`, complex :math:`z` in conjugate
pairs), then normalised to total mass 1.  Two kinds:

* **touching** (truth: a density): squares of exponential polynomials times a positive part,
  products of shifted squares, trigonometric squares; each has a zero of even order in
  :math:`(0, \infty)` (or, for the trigonometric ones, infinitely many), the case interval
  arithmetic alone cannot certify;
* **dipping** (truth: not a density): a touching case minus :math:`\varepsilon` times a positive
  term, so that the density dips below zero by about :math:`\varepsilon` of its peak, for
  :math:`\varepsilon` down to :math:`10^{-30}`.

The corpus is the input of the ``me-pade`` claim on exact certification and of
``benchmarks/bench_certify_corpus.py``.

Examples
--------
>>> cases = corpus()
>>> case = next(c for c in cases if c.name == "x-square c=4/3")
>>> case.is_density, case.order
(True, 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..transform import RationalLST
from .exponential import TIME, laplace_of

__all__ = ["CorpusCase", "corpus", "laplace_of"]

t = TIME
Q = sp.Rational
_x = sp.exp(-t)  # the variable of the squares in e^{-t}


@dataclass(frozen=True)
class CorpusCase:
    r"""One density of the corpus.

    Attributes
    ----------
    name : str
        Short identifier, e.g. ``"t-squares K=2"`` or ``"x-dip eps=1e-30"``.
    family : str
        One of ``"x-square"``, ``"t-square"``, ``"trig-square"``, ``"mixed-square"`` and
        ``"zero at 0"`` (touching), or the same followed by ``" dip"`` (dipping).
    is_density : bool
        The truth, known by construction.
    density : sympy.Expr
        The unnormalised density as an expression in ``t``.
    lst : RationalLST
        Its exact Laplace transform, normalised to mass 1.
    depth : sympy.Rational or None
        For dipping cases: :math:`\varepsilon`.
    """

    name: str
    family: str
    is_density: bool
    density: sp.Expr
    lst: RationalLST
    depth: sp.Rational | None = None

    @property
    def order(self) -> int:
        """The order (degree of the denominator)."""
        return self.lst.order


def _case(name: str, family: str, density: sp.Expr, is_density: bool,
          depth: sp.Rational | None = None) -> CorpusCase:
    return CorpusCase(name, family, is_density, density, laplace_of(density), depth)


def _touching() -> list[CorpusCase]:
    x = _x
    cases = [
        # the three cases of the issue that interval arithmetic could not decide
        _case("x-square c=4/3", "x-square", x * (1 - Q(4, 3) * x) ** 2, True),
        _case("x-square c=3/2", "x-square", x * (1 - Q(3, 2) * x) ** 2, True),
        _case("x-square c=5, rate 1/2", "x-square",
              sp.exp(-t / 2) * (1 - 5 * sp.exp(-t / 2)) ** 2, True),
        _case("t-square (t-1)^2", "t-square", (t - 1) ** 2 * x, True),
        _case("trig 1+cos t", "trig-square", (1 + sp.cos(t)) * x, True),
        _case("trig sin^2 t", "trig-square", sp.sin(t) ** 2 * x, True),
        _case("trig (1-2cos t)^2", "trig-square", (1 - 2 * sp.cos(t)) ** 2 * x, True),
        _case("trig (1+cos t)^2, rate 1/2", "trig-square",
              (1 + sp.cos(t)) ** 2 * sp.exp(-t / 2), True),
        _case("trig (cos t - cos 2t)^2", "trig-square",
              (sp.cos(t) - sp.cos(2 * t)) ** 2 * x, True),
        _case("trig (1+cos t)^4", "trig-square", (1 + sp.cos(t)) ** 4 * x, True),
        _case("t-squares, two rates", "t-square", (t - 1) ** 2 * (x + x ** 3), True),
        _case("(t-1/2)^2 (t^2+1)", "t-square", (t - Q(1, 2)) ** 2 * (t ** 2 + 1) * x ** 2,
              True),
        _case("mixed (t-1+e^-t/2)^2", "mixed-square", x * (t - 1 + x / 2) ** 2, True),
        _case("mixed (t-2+e^-t)^2", "mixed-square", x * (t - 2 + x) ** 2, True),
        _case("mixed (t-1)^2 (1-3/2 e^-t)^2", "mixed-square",
              x * (t - 1) ** 2 * (1 - Q(3, 2) * x) ** 2, True),
        _case("mixed (1+cos t)(1-2e^-t)^2", "mixed-square",
              x * (1 + sp.cos(t)) * (1 - 2 * x) ** 2, True),
        _case("zero at 0: e^-t - e^-2t", "zero at 0", x - x ** 2, True),
    ]
    roots = [Q(4, 3), Q(2), Q(3), Q(5)]
    for K in (2, 3, 4):
        product = sp.prod([(1 - c * x) ** 2 for c in roots[:K]])
        cases.append(_case(f"x-squares K={K}", "x-square", x * product, True))
        cases.append(_case(f"t-squares K={K}", "t-square",
                           sp.prod([(t - k) ** 2 for k in range(1, K + 1)]) * x, True))
    cases.append(_case("x-square c=4/3 times (1+e^-t)", "x-square",
                       x * (1 + x) * (1 - Q(4, 3) * x) ** 2, True))
    cases.append(_case("t-square (t-1)^2 times (t+1)", "t-square",
                       (t + 1) * (t - 1) ** 2 * x, True))
    cases.append(_case("x-squares K=3 times (1+e^-t)", "x-square",
                       x * (1 + x) * sp.prod([(1 - c * x) ** 2 for c in roots[:3]]), True))
    cases.append(_case("t-squares K=3 times (t+1)", "t-square",
                       (t + 1) * sp.prod([(t - k) ** 2 for k in range(1, 4)]) * x, True))
    cases.append(_case("x-squares K=4 times (1+e^-t)", "x-square",
                       x * (1 + x) * sp.prod([(1 - c * x) ** 2 for c in roots]), True))
    cases.append(_case("t-squares K=4 times (t+1)", "t-square",
                       (t + 1) * sp.prod([(t - k) ** 2 for k in range(1, 5)]) * x, True))
    return cases


def _dipping() -> list[CorpusCase]:
    x = _x
    cases = [_case("dip at 0: e^-t - (1+1e-10) e^-2t", "zero at 0 dip",
                   x - (1 + Q(1, 10 ** 10)) * x ** 2, False, Q(1, 10 ** 10))]
    for k in (2, 6, 10, 20, 30):
        eps = Q(1, 10 ** k)
        tag = f"eps=1e-{k}"
        if k in (10, 30):  # the same dips at orders 4 and 8
            cases += [
                _case(f"x-dip times (1+e^-t) {tag}", "x-square dip",
                      x * (1 + x) * ((1 - Q(4, 3) * x) ** 2 - eps * x), False, eps),
                _case(f"t-dips K=3 times (t+1) {tag}", "t-square dip",
                      x * ((t + 1) * sp.prod([(t - j) ** 2 for j in range(1, 4)]) - eps),
                      False, eps),
            ]
        cases += [
            _case(f"x-dip {tag}", "x-square dip", x * ((1 - Q(4, 3) * x) ** 2 - eps * x),
                  False, eps),
            _case(f"t-dip {tag}", "t-square dip", x * ((t - 1) ** 2 - eps), False, eps),
            _case(f"trig-dip {tag}", "trig-square dip", x * (1 + sp.cos(t) - eps), False, eps),
            _case(f"mixed-dip {tag}", "mixed-square dip",
                  x * ((t - 1 + x / 2) ** 2 - eps * x), False, eps),
        ]
    return cases


@lru_cache(maxsize=1)
def _build() -> tuple[CorpusCase, ...]:
    return tuple(_touching() + _dipping())


def corpus() -> list[CorpusCase]:
    """The corpus: touching densities (truth NONNEGATIVE) and dipping ones (truth NEGATIVE).

    Built once per process (about a second of exact sympy work) and cached.
    """
    return list(_build())
