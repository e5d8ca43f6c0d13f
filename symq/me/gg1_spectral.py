r"""The GI/G/1 waiting time for a rational service transform, by spectral factorisation.

With a service LST :math:`B^*(s) = b(s)/e(s)`, :math:`\deg e = m`, and any interarrival LST
:math:`A^*`, the equation

.. math::

    e(s) = A^*(-s)\, b(s)

has, for :math:`\rho < 1`, exactly :math:`m` roots :math:`-\gamma_1, \dots, -\gamma_m` in
:math:`\mathrm{Re}\,s < 0`, and

.. math::

    W^*(s) = \frac{e(s)}{e(0)} \prod_{i=1}^m \frac{\gamma_i}{s + \gamma_i}, \qquad
    E[W] = \sum_i \frac{1}{\gamma_i} - \frac{e'(0)}{e(0)}

(Kleinrock 1975, *Queueing Systems* I, ch. 8, the spectral solution of Lindley's integral
equation; Asmussen 2003, *Applied Probability and Queues*, VIII.5).  GI/M/1 is :math:`m = 1`,
:math:`\gamma = \mu(1-\sigma)`.  The roots are polynomial roots at 30 digits when :math:`A^*`
is rational; otherwise Newton's method at 30 digits from starts around the poles of
:math:`B^*` and along the negative axis.  Fewer than :math:`m` distinct roots found is an
error, never a silent answer.  The waiting-time transform is returned as a
:class:`~symq.me.transforms.Transform`, so its moments, inversion and tail come from the same
machinery as any declared transform.

Examples
--------
>>> from symq.me.transforms import Transform
>>> arrivals = Transform("lam/(lam + s)", parameters=("lam",))      # M/E2/1
>>> service = Transform("(2*mu/(2*mu + s))^2", parameters=("mu",))
>>> r = gi_g1_waiting(arrivals, service, {"lam": 0.5, "mu": 1.0})
>>> round(r.EW, 12)               # Pollaczek-Khinchine: lam E S^2/(2 (1 - rho)) = 0.5*1.5/1
0.75
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import sympy as sp

from symq.core.compiler import compile as compile_exprs
from symq.core.errors import InvalidParameter, NumericalFailure, StabilityError
from symq.core.precision import working_dps
from symq.core.result import Exactness, ResultBase

from .transforms import Transform, moments
from .transforms.model import exact_value

__all__ = ["GG1Waiting", "gi_g1_waiting"]


@dataclass(frozen=True)
class GG1Waiting(ResultBase):
    """The exact GI/G/1 FCFS waiting time for a rational service transform.

    Attributes
    ----------
    EW : float
        :math:`\\sum_i 1/\\gamma_i - e'(0)/e(0)`.
    P_wait : float
        :math:`P(W > 0) = 1 - W^*(\\infty)`.
    rho : float
    gammas : tuple of complex
        The roots :math:`-\\gamma_i` of :math:`e(s) = A^*(-s) b(s)` in the left half-plane,
        negated.
    waiting : Transform
        :math:`W^*(s)` (numbers rounded to doubles), for moments, inversion and tails.
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("EW", "P_wait", "rho")

    EW: float
    P_wait: float
    rho: float
    gammas: tuple[complex, ...] = field(repr=False)
    waiting: Transform = field(repr=False)
    method: str = "spectral factorisation (Kleinrock 1975, ch. 8)"
    exactness: Exactness = Exactness.NUMERIC


def _bound_lst(transform: Transform, what: str, values: Mapping[str, Any],
               s: sp.Symbol) -> sp.Expr:
    if not isinstance(transform, Transform) or transform.kind != "lst":
        raise InvalidParameter(what, transform, "a Transform of kind 'lst'")
    own = {k: v for k, v in values.items() if k in transform.parameters}
    transform.check(own)
    expr = transform.expr.xreplace({transform.symbols[k]: exact_value(k, v)
                                    for k, v in own.items() if k in transform.symbols})
    expr = sp.nsimplify(expr, rational=True)
    return expr.xreplace({x: s for x in expr.free_symbols if x.name == "s"})


def gi_g1_waiting(interarrival: Transform, service: Transform,
                  values: Mapping[str, Any] | None = None) -> GG1Waiting:
    """The GI/G/1 waiting time for a rational service LST (module docstring).

    Raises
    ------
    InvalidParameter
        A transform that is not an LST, a service LST that is not rational in ``s`` (or has
        an atom at zero), missing values.
    StabilityError
        :math:`\\rho = E[S]/E[A] \\ge 1`.
    NumericalFailure
        Fewer than :math:`m` roots found in the left half-plane.
    """
    values = dict(values or {})
    s = sp.Symbol("s")
    a_expr = _bound_lst(interarrival, "interarrival", values, s)
    b_expr = _bound_lst(service, "service", values, s)
    ea = moments(interarrival, 1, {k: v for k, v in values.items()
                                   if k in interarrival.parameters}).moments[0]
    es = moments(service, 1, {k: v for k, v in values.items()
                              if k in service.parameters}).moments[0]
    rho = es / ea
    if rho >= 1.0:
        raise StabilityError(f"load rho = E[S]/E[A] = {rho:.6g} must be < 1")
    b, e = sp.fraction(sp.cancel(sp.together(b_expr)))
    if not (b.is_polynomial(s) and e.is_polynomial(s)):
        raise InvalidParameter("service", str(service.expr), "a rational LST b(s)/e(s)")
    b_poly, e_poly = sp.Poly(b, s), sp.Poly(e, s)
    m = e_poly.degree()
    if m < 1 or b_poly.degree() >= m:
        raise InvalidParameter("service", str(service.expr), "a rational LST with deg b < "
                               "deg e (no atom at zero)")
    roots = _left_roots(a_expr, b, e, s, m)
    gammas = tuple(complex(-r.real, 0.0) if abs(r.imag) <= 1e-12 * abs(r) else -r
                   for r in roots)                      # a real root with round-off kept real
    e0 = float(e_poly.eval(0))
    e1 = float(e_poly.diff(s).eval(0))
    mean = float(sum(1 / g for g in gammas).real) - e1 / e0
    atom = (float(e_poly.LC()) / e0 * math.prod(gammas)).real
    w = sp.Symbol("s", positive=True)
    roots_w = [sp.Float(g.real, 17) + sp.I * sp.Float(g.imag, 17) for g in gammas]
    factors = sp.Mul(*(g / (w + g) for g in roots_w))
    # a complex pair multiplies out to real coefficients
    waiting_expr = sp.expand_complex(e.xreplace({s: w}) / sp.Float(e0, 17) * factors)
    waiting = Transform(waiting_expr, "lst", (), "GI/G/1 waiting time")
    return GG1Waiting(mean, 1.0 - atom, rho, gammas, waiting)


def _left_roots(a_expr: sp.Expr, b: sp.Expr, e: sp.Expr, s: sp.Symbol, m: int
                ) -> list[complex]:
    """The ``m`` roots of ``e(s) = A*(-s) b(s)`` with negative real part."""
    a_minus = a_expr.xreplace({s: -s})
    p, q = sp.fraction(sp.cancel(sp.together(a_minus)))
    if p.is_polynomial(s) and q.is_polynomial(s):
        h = sp.Poly(sp.expand(e * q - p * b), s)
        found = [complex(r) for r in h.nroots(n=30, maxsteps=200)]
    else:
        found = _newton_roots(e - a_minus * b, e, s, m)
    scale = max(1.0, max((abs(r) for r in found), default=1.0))
    left = [r for r in found if r.real < -1e-12 * scale]
    distinct: list[complex] = []
    for r in sorted(left, key=lambda z: (z.real, z.imag)):
        if all(abs(r - d) > 1e-9 * scale for d in distinct):
            distinct.append(r)
    if len(distinct) != m:
        raise NumericalFailure(f"spectral factorisation found {len(distinct)} roots of "
                               f"e(s) = A*(-s) b(s) in Re s < 0 where there must be {m}: "
                               + ", ".join(f"{r:.6g}" for r in distinct))
    return distinct


def _newton_roots(h: sp.Expr, e: sp.Expr, s: sp.Symbol, m: int) -> list[complex]:
    """Roots of the analytic ``h`` in ``Re s < 0`` by Newton's method at 30 digits, from starts
    at and around the poles of ``B*`` (the roots of ``e``) and along the negative axis."""
    f = compile_exprs(h, (s,), "mpmath")
    df = compile_exprs(sp.diff(h, s), (s,), "mpmath")
    poles = [complex(r) for r in sp.Poly(e, s).nroots(n=20)]
    starts = [p * t for p in poles for t in (0.1, 0.3, 0.6, 0.9, 1.0)]
    starts += [complex(-x, 0) for x in (0.05, 0.2, 0.5, 1, 2, 5, 10)]
    found: list[complex] = []
    with working_dps(30) as mp:
        for start in starts:
            try:
                root = mp.findroot(lambda z: f(z), mp.mpc(start), df=lambda z: df(z),
                                   solver="newton", tol=mp.mpf(10) ** -25, maxsteps=200)
            except (ValueError, ZeroDivisionError):
                continue
            r = complex(root)
            if abs(complex(f(root))) < 1e-15 * max(1.0, abs(r)):
                found.append(r)
    return found
