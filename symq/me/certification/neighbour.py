r"""The exact rational neighbour of an undecided transform with irrational poles.

Data given as floats (a fit rounded to doubles, coefficients typed with 16 digits) have, as exact
binary rationals, a denominator that is irreducible over :math:`\mathbb{Q}`: the exact
factorisation route does not apply, and a touching zero ends INCONCLUSIVE.  Such data are usually
a rounding of a transform with simple rational poles and coefficients.  :func:`rational_neighbour`
rounds each pole enclosure's centre and each Hermite coefficient to the simplest rational within
``tolerance`` (relative; continued fractions, denominators up to ``max_denominator``), rebuilds
the density :math:`\sum c\, t^j e^{z t}` from those, and certifies that exact transform.  The
answer for the user's data stays INCONCLUSIVE; the neighbour's certificate and the distance are
reported beside it, so that the user can decide whether the neighbour is the function they meant.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import sympy as sp

from symq.core.errors import SymqError

from .._context import mp
from .base import midpoint
from .exponential import TIME, laplace_of
from .verdict import Run

__all__: list[str] = []


def _simplest(x: Any, max_denominator: int, tolerance: float) -> tuple[Fraction, float] | None:
    """The simplest rational within ``tolerance`` (relative, absolute below 1) of the mpf x."""
    exact = Fraction(mp.nstr(x, mp.dps))
    scale = max(abs(exact), Fraction(1))
    for bound in (10, 100, 10 ** 3, max_denominator):
        q = exact.limit_denominator(bound)
        error = float(abs(q - exact) / scale)
        if error <= tolerance:
            return q, error
    return None


def rational_neighbour(run: Run, certify_exact: Callable[[Any], Any],
                       max_denominator: int = 10 ** 4, tolerance: float = 1e-10
                       ) -> tuple[Any, float] | None:
    """The certificate of the rounded transform and the largest relative rounding, or None.

    None when the poles were not enclosed, or a pole or coefficient has no rational within
    ``tolerance`` with denominator at most ``max_denominator``.
    """
    if not run.poles or not all(P.coeffs for P in run.poles):
        return None
    t = TIME
    density, worst = sp.Integer(0), 0.0
    for P in run.poles:
        values = [P.center] if P.real else [P.center.real, P.center.imag]
        rounded = [_simplest(v, max_denominator, tolerance) for v in values]
        coefficients = []
        for c in P.coeffs:
            parts = [midpoint(c)] if P.real else [midpoint(c.real), midpoint(c.imag)]
            coefficients.append([_simplest(v, max_denominator, tolerance) for v in parts])
        if any(r is None for r in rounded) or any(r is None for row in coefficients for r in row):
            return None
        worst = max([worst] + [e for _, e in rounded] + [e for row in coefficients for _, e in row])
        rate = sp.Rational(rounded[0][0])
        for j, row in enumerate(coefficients):
            if P.real:
                density += sp.Rational(row[0][0]) * t ** j * sp.exp(rate * t)
            else:
                omega = sp.Rational(rounded[1][0])
                density += 2 * t ** j * sp.exp(rate * t) * (
                    sp.Rational(row[0][0]) * sp.cos(omega * t)
                    - sp.Rational(row[1][0]) * sp.sin(omega * t))
    try:
        lst = laplace_of(density)
    except SymqError:  # the rounded density has no positive mass: no neighbour
        return None
    return certify_exact(lst), worst
