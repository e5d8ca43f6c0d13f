r"""A certified ME fit of a declared transform, through :func:`symq.me.fit`.

The transform's exact moments (:mod:`symq.me.transforms.moments`) and the behaviour of its
density at zero, read from the expansion at :math:`s = \infty`,

.. math::

    F^*(s) - a = \sum_{j \ge 0} f^{(j)}(0)\, s^{-(j+1)}, \qquad a = P(X = 0)

(the initial-value theorem, term by term; Angius, Horváth et al. 2014), go to the
moment-matching fits of :mod:`symq.me.fit`, which keep only candidates certified nonnegative.
A law with an atom at zero (a queue's waiting time) is fitted by its continuous part
:math:`(F^* - a)/(1 - a)`, the atom reported beside it.  The L1 distance that ranks the
certified candidates uses the density inverted from the transform
(:func:`~symq.me.transforms.inversion.invert`).

Examples
--------
>>> from symq.me.transforms import Transform
>>> r = fit_transform(Transform("(2/(2 + s))^2"), order_max=2)      # Erlang(2, rate 2)
>>> r.order, r.status, r.atom
(2, 'NONNEGATIVE', 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from symq.core.errors import InvalidParameter, NumericalFailure
from symq.core.result import Exactness, ResultBase

from ..distribution import ME
from ..fit import FitReport, Target, fit
from .inversion import invert, mass_at_zero
from .model import Transform, exact_value
from .moments import moment_expressions

__all__ = ["TransformFit", "fit_transform"]


@dataclass(frozen=True)
class TransformFit(ResultBase):
    """The certified ME fit of a declared transform.

    Attributes
    ----------
    me : ME
        The fitted distribution of the continuous part (certified nonnegative).
    atom : float
        The mass at zero kept apart (0 for a law without one).
    order : int
        The order of the fit.
    status : str
        The certificate's verdict (``NONNEGATIVE``).
    unmatched : tuple of str
        Given moments and values at zero the fit does not reproduce.
    moments : tuple of str
        The exact moments fitted (of the continuous part).
    zero : tuple of str
        The exact values at zero fitted.
    report : FitReport
        Every candidate tried.
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("order", "status", "atom")

    me: ME = field(repr=False)
    atom: float
    order: int
    status: str
    unmatched: tuple[str, ...]
    moments: tuple[str, ...]
    zero: tuple[str, ...]
    report: FitReport = field(repr=False)
    method: str = "Padé moment matching with behaviour at zero, certified nonnegativity"
    exactness: Exactness = Exactness.EXACT


def _values_at_zero(expr: sp.Expr, s: sp.Symbol, count: int) -> tuple[sp.Expr, ...]:
    """``f(0), f'(0), ...``: the coefficients of ``s^{-1}, s^{-2}, ...`` of ``expr`` at
    infinity (``expr`` without its atom), or fewer where sympy cannot expand."""
    x = sp.Symbol("x", positive=True)
    try:
        series = sp.series(expr.xreplace({s: 1 / x}), x, 0, count + 1).removeO()
    except (NotImplementedError, ValueError, TypeError, ZeroDivisionError):
        return ()
    out = []
    for j in range(count):
        c = sp.expand(series).coeff(x, j + 1)
        if c.has(x) or not c.is_number:
            break
        out.append(sp.nsimplify(c) if c.is_Float else c)
    return tuple(out)


def fit_transform(transform: Transform, values: Mapping[str, Any] | None = None, *,
                  order_max: int = 4, zero_terms: int = 2) -> TransformFit:
    """Fit a certified ME distribution to the law of an LST (module docstring).

    Parameters
    ----------
    transform : Transform
        An LST (or MGF) whose parameters ``values`` fix.
    values : mapping, optional
        Parameter values (kept exact: a float is the rational it is).
    order_max : int
        Largest ME order tried (``2 order_max - 1`` moments are used).
    zero_terms : int
        Values of the density and its derivatives at zero offered to the fit.

    Raises
    ------
    InvalidParameter
        A PGF, missing values, an order out of 1..8, a law whose needed moments do not exist.
    NoCertifiedFit
        No candidate up to ``order_max`` certifies.
    """
    if isinstance(order_max, bool) or not isinstance(order_max, int) or not 1 <= order_max <= 8:
        raise InvalidParameter("order_max", order_max, "an integer in 1..8")
    values = dict(values or {})
    transform.check(values)
    bound = transform.bind({k: exact_value(k, v) for k, v in values.items()})
    lst = sp.nsimplify(bound.lst(), rational=True)     # decimals as written: 0.9 is 9/10
    s = next((x for x in lst.free_symbols if x.name == "s"), sp.Symbol("s", positive=True))
    atom_value = mass_at_zero(bound)
    atom = sp.nsimplify(atom_value) if atom_value else sp.Integer(0)
    if atom_value >= 1.0:
        raise InvalidParameter("transform", str(transform.expr), "a law with mass off zero")
    part = Transform((lst - atom) / (1 - atom), "lst", (), transform.name)
    exprs, bad = moment_expressions(part, 2 * order_max - 1)
    if bad is not None:
        raise InvalidParameter("order_max", order_max, "an order whose moments exist",
                               f"the moments of order {bad[0]} and above are infinite")
    zero = _values_at_zero((lst - atom) / (1 - atom), s, zero_terms) if zero_terms else ()

    def density(t: np.ndarray) -> np.ndarray:
        points = np.maximum(np.asarray(t, dtype=float), 1e-9)
        return invert(part, points, digits=8).value

    target = Target(tuple(sp.nsimplify(e) if e.is_Float else e for e in exprs), zero, density,
                    name=transform.name)
    me, report = fit(target, order_max=order_max)
    if me is None or report.best is None:                  # raise_if_none raised already
        raise NumericalFailure("no certified ME fit")       # pragma: no cover
    best = report.best
    return TransformFit(me, float(atom), best.order, best.status, best.unmatched,
                        tuple(str(e) for e in exprs), tuple(str(z) for z in zero), report)
