r"""Tail asymptotics of a declared transform from its dominant singularity.

If the rightmost singularity of an LST :math:`F^*` is a pole at :math:`-\eta < 0` of order
:math:`k`, with :math:`F^*(s) \sim a_k (s + \eta)^{-k}` there and no other singularity on the
line :math:`\mathrm{Re}\,s = -\eta`, then the density and the tail decay as

.. math::

    f(t) \sim \frac{a_k}{(k-1)!} t^{k-1} e^{-\eta t}, \qquad
    P(X > t) \sim \frac{a_k}{\eta (k-1)!} t^{k-1} e^{-\eta t}

(Feller 1971, XIII.5; Abate & Whitt 1997, Queueing Systems 25:173-233).  For the M/G/1
waiting time, :math:`\eta` is the root of Cramér-Lundberg's :math:`S^*(-\eta) = 1 + \eta/\lambda`.

:func:`tail_asymptotics` finds the pole and certifies it (:mod:`.certify`; the result's
``certified`` and ``certificate``):

* a rational transform: the real roots of the reduced denominator are isolated exactly in
  disjoint rational intervals, the rightmost one refined to a width of :math:`10^{-30}`, its
  order read from its irreducible factor; every other root is shown left of its vertical line,
  or on it (a complex pair there: the tail oscillates), by isolating rectangles or a resultant.
  Where that fails, the poles are the numerical roots at 50 digits, not certified;
* otherwise: the rightmost real zero of the denominator on :math:`(-200, 0)` by a scan and
  bisection, kept only where the numerator does not vanish, then proved in interval
  arithmetic at 40 digits (Moore, Kearfott & Cloud 2009, *Introduction to Interval Analysis*,
  SIAM, ch. 5-6): a sign change and a derivative free of zero on an interval of width
  :math:`10^{-30}` (one simple zero), a numerator free of zero there (a pole), and a
  denominator free of zero on a subdivision of the rest of the axis up to 0 (a zero at 0 shown
  removable).  A zero the scan missed right of its root is found so and certified in its place;
  where a step fails, the scanned pole is kept with ``certified=False`` and the reason.  For an
  LST of a nonnegative law the abscissa of convergence is a singularity on the real axis
  (Widder 1941, *The Laplace Transform*, ch. II), so the certified pole is the dominant one;
  other poles on its line are not examined here.

The order and :math:`a_k` come from the Laurent expansion at the pole (numerical, 50 digits).
The asymptote is checked against the numerical inversion of the tail at two large ``t``: the
ratios are reported (they tend to 1), not assumed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar

import mpmath
import numpy as np
import sympy as sp

from symq.core.compiler import compile as compile_exprs
from symq.core.errors import InvalidParameter, NumericalFailure
from symq.core.precision import working_dps
from symq.core.result import Exactness, ResultBase

from .certify import PoleCertificate, certify_rational_pole, certify_real_pole
from .inversion import invert
from .model import Transform

__all__ = ["TailAsymptotics", "tail_asymptotics", "PowerTail", "power_tail"]

#: How far left the real axis is scanned for the rightmost zero of a non-rational denominator.
SCAN_DEPTH = 200.0


@dataclass(frozen=True)
class TailAsymptotics(ResultBase):
    """The exponential decay of a law's tail from the dominant pole of its transform.

    Attributes
    ----------
    decay : float
        :math:`\\eta`: the pole is at :math:`-\\eta`.
    order : int
        The pole's order :math:`k`.
    density_prefactor, ccdf_prefactor : float
        :math:`a_k/(k-1)!` and :math:`a_k/(\\eta (k-1)!)`.
    oscillating : bool
        Another pole (a complex pair) lies on the line :math:`\\mathrm{Re}\\,s = -\\eta`: the
        tail oscillates and the prefactors above are not the whole asymptote.
    check_t : tuple of float
        Where the asymptote was compared with the inverted tail.
    check_ratio : tuple of float
        Inverted tail over the asymptote there (tends to 1).
    method, exactness
    certified : bool
        The pole is proved: an enclosure of width about :math:`10^{-30}`, its order and, for a
        rational transform, ``oscillating`` are exact (the prefactors stay numerical).
    certificate : PoleCertificate or None
        The enclosure ``[low, high]`` of :math:`-\\eta` and the proof, or why it failed.
    """

    summary: ClassVar[tuple[str, ...]] = ("decay", "order", "ccdf_prefactor")

    decay: float
    order: int
    density_prefactor: float
    ccdf_prefactor: float
    oscillating: bool
    check_t: tuple[float, ...]
    check_ratio: tuple[float, ...]
    method: str = ""
    exactness: Exactness = Exactness.NUMERIC
    certified: bool = False
    certificate: PoleCertificate | None = None

    def ccdf(self, t: Any) -> np.ndarray:
        """The asymptote of :math:`P(X > t)`."""
        t = np.asarray(t, dtype=float)
        return self.ccdf_prefactor * t ** (self.order - 1) * np.exp(-self.decay * t)


def _poles_rational(num: sp.Expr, den: sp.Expr, s: sp.Symbol) -> list[complex]:
    poly = sp.Poly(den, s)
    return [complex(r) for r in poly.nroots(n=50, maxsteps=200)
            if abs(complex(num.subs(s, r).evalf(30))) > 1e-30]


def _rightmost_real_zero(num: sp.Expr, den: sp.Expr, s: sp.Symbol) -> float | None:
    f = compile_exprs(den, (s,), "mpmath")
    g = compile_exprs(num, (s,), "mpmath")
    with working_dps(30) as mp:
        grid = [-mp.mpf(SCAN_DEPTH) * (k / 4000.0) ** 2 for k in range(1, 4001)]
        previous, value = mp.mpf(-1e-12), f(mp.mpf(-1e-12))
        for x in grid:
            current = f(x)
            if not mp.isfinite(current):
                return None
            if mp.sign(current) != mp.sign(value) or current == 0:
                low, high = x, previous            # bisection: f(low), f(high) differ in sign
                for _ in range(120):
                    mid = (low + high) / 2
                    if mp.sign(f(mid)) == mp.sign(current):
                        low = mid
                    else:
                        high = mid
                root = (low + high) / 2
                if abs(g(root)) > mp.mpf(10) ** -20:
                    return float(root)
            previous, value = x, current
    return None


def tail_asymptotics(transform: Transform, values: Mapping[str, Any] | None = None,
                     check_t: tuple[float, float] | None = None) -> TailAsymptotics:
    """The tail asymptote of the law of an LST from its dominant pole (module docstring).

    Parameters
    ----------
    transform : Transform
        An LST (or MGF).
    values : mapping, optional
        Parameter values.
    check_t : pair of float, optional
        Where the asymptote is compared with the inverted tail (default: 10 and 20 over the
        decay rate).

    Raises
    ------
    InvalidParameter
        A PGF; missing values.
    NumericalFailure
        No pole found in ``(-SCAN_DEPTH, 0)`` (a sub-exponential tail, or a branch point: the
        busy period's :math:`t^{-3/2} e^{-\\eta t}`).

    Examples
    --------
    >>> from symq.me.transforms import Transform, pollaczek_khinchine
    >>> w = pollaczek_khinchine(Transform("mu/(mu + s)", parameters=("mu",)), "lam")
    >>> r = tail_asymptotics(w, {"mu": 1.0, "lam": 0.5})
    >>> round(r.decay, 12), round(r.ccdf_prefactor, 12), r.order     # mu - lam, rho
    (0.5, 0.5, 1)
    """
    bound = transform.bind(dict(values or {}))
    if bound.free_parameters:
        raise InvalidParameter(bound.free_parameters[0], None, "a value")
    lst = bound.lst()
    s = next((x for x in lst.free_symbols if x.name == "s"), sp.Symbol("s", positive=True))
    free = sp.Symbol("s")
    expr = sp.nsimplify(lst.xreplace({s: free}), rational=True)
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    oscillating = False
    if den.is_polynomial(free) and num.is_polynomial(free):
        try:
            certificate = certify_rational_pole(num, den, free)
        except NumericalFailure as e:
            certificate = PoleCertificate(Fraction(0), Fraction(0), False, str(e))
        if certificate.certified:
            eta = -float(certificate.midpoint)
            oscillating = bool(certificate.on_line)
            how = "rightmost root of the reduced denominator, isolated exactly"
        else:
            poles = [p for p in _poles_rational(num, den, free) if p.real < -1e-14]
            if not poles:
                raise NumericalFailure(f"{transform.expr} has no pole in Re s < 0")
            lead = max(p.real for p in poles)
            on_line = [p for p in poles if abs(p.real - lead) <= 1e-10 * max(1.0, abs(lead))]
            oscillating = any(abs(p.imag) > 1e-10 for p in on_line)
            eta = -lead
            how = ("rightmost root of the reduced denominator (numerical roots; not certified: "
                   f"{certificate.reason})")
    else:
        root = _rightmost_real_zero(num, den, free)
        if root is None:
            raise NumericalFailure(f"no pole of {transform.expr} found on (-{SCAN_DEPTH:g}, 0): "
                                   "a sub-exponential tail or a branch point, which this "
                                   "function does not treat")
        try:
            certificate = certify_real_pole(num, den, free, root, retries=3)
        except NumericalFailure as e:
            certificate = PoleCertificate(Fraction(root), Fraction(root), False, str(e))
        if certificate.certified:
            eta = -float(certificate.midpoint)
            how = ("rightmost real zero of the denominator (scan and bisection), certified by "
                   "interval arithmetic")
        else:
            eta = -root
            how = ("rightmost real zero of the denominator (scan and bisection; not certified: "
                   f"{certificate.reason})")
    eta, order, lead_coefficient = _laurent(expr, den, free, eta)
    certified = certificate.certified and certificate.order == order \
        and abs(eta + float(certificate.midpoint)) <= 1e-14 * max(1.0, eta)
    if certificate.certified and not certified:
        certificate = replace(certificate, certified=False, reason=(
            f"the Laurent step found the pole at {-eta:.17g} of order {order}, not the certified "
            f"one of order {certificate.order} in [{float(certificate.low):.17g}, "
            f"{float(certificate.high):.17g}]"))
        how = f"{how}; certificate withdrawn: {certificate.reason}"
    elif certified:
        how = f"{how}; pole enclosed in an interval of width {certificate.width:.1e}"
    density = lead_coefficient / math.factorial(order - 1)
    ccdf_prefactor = density / eta
    if check_t is None:
        check_t = (10.0 / eta, 20.0 / eta)
    inverted = invert(bound, list(check_t), what="ccdf", digits=10)
    asymptote = ccdf_prefactor * np.asarray(check_t) ** (order - 1) \
        * np.exp(-eta * np.asarray(check_t))
    ratio = tuple(float(v / a) for v, a in zip(inverted.value, asymptote, strict=True))
    return TailAsymptotics(eta, order, density, ccdf_prefactor, oscillating,
                           tuple(float(t) for t in check_t), ratio,
                           f"dominant pole: {how}; Laurent coefficient at 50 digits",
                           certified=certified, certificate=certificate)


def _laurent(expr: sp.Expr, den: sp.Expr, s: sp.Symbol, eta: float
             ) -> tuple[float, int, float]:
    """The pole ``-eta`` refined at 50 digits, its order ``k`` and the coefficient ``a_k`` of
    ``(s + eta)^{-k}``, from ``(s + eta)^k F(s)`` next to the pole."""
    f = compile_exprs(expr, (s,), "mpmath")
    g = compile_exprs(den, (s,), "mpmath")
    with working_dps(50) as mp:
        try:
            pole = mp.re(mp.findroot(g, mp.mpf(-eta), tol=mp.mpf(10) ** -45))
        except (ValueError, ZeroDivisionError):     # a multiple root: Newton is slow there
            pole = -mp.mpf(eta)
        for k in range(1, 6):
            h = mp.mpf(10) ** -15
            values = [(mp.mpf(d) * h) ** k * f(pole + mp.mpf(d) * h) for d in (1, 2)]
            if all(mp.isfinite(v) for v in values) and \
                    abs(values[0] - values[1]) <= mp.mpf(10) ** -8 * max(abs(values[0]), 1e-300):
                # (s + eta)^k F(s) is analytic at the pole: its value there is a_k
                a = mp.mpf(2) * values[0] - values[1]          # Richardson in h
                if abs(a) > mp.mpf(10) ** -30:
                    return float(-pole), k, float(mpmath.re(a))
    raise NumericalFailure(f"the pole of {expr} at {-eta:.12g} has no order up to 5")


@dataclass(frozen=True)
class PowerTail(ResultBase):
    """A regularly varying tail from the branch point of the transform at zero.

    Attributes
    ----------
    index : float
        :math:`a`: :math:`P(X > t) \\sim C t^{-a}`, moments of order :math:`\\ge a` infinite.
    prefactor : float
        :math:`C = (-1)^{n+1} c / \\Gamma(1 - a)` for the expansion term :math:`c\\, s^a`,
        :math:`n < a < n + 1`.
    check_t, check_ratio : tuple of float
        The inverted tail over the asymptote at two large ``t`` (tends to 1).
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("index", "prefactor")

    index: float
    prefactor: float
    check_t: tuple[float, ...]
    check_ratio: tuple[float, ...]
    method: str = ("Tauberian theorem for a regularly varying tail (Bingham, Goldie & Teugels "
                   "1987, ch. 8)")
    exactness: Exactness = Exactness.NUMERIC

    def ccdf(self, t: Any) -> np.ndarray:
        """The asymptote :math:`C t^{-a}`."""
        return self.prefactor * np.asarray(t, dtype=float) ** -self.index


def power_tail(transform: Transform, values: Mapping[str, Any] | None = None,
               check_t: tuple[float, float] = (1e3, 1e4)) -> PowerTail:
    r"""The power-law tail of a law whose transform has the term :math:`c\,s^a` (``a`` not an
    integer) at zero: :math:`P(X > t) \sim (-1)^{n+1} c\, t^{-a} / \Gamma(1 - a)`,
    :math:`n < a < n+1` (Bingham, Goldie & Teugels 1987, ch. 8, under regular
    variation; the ratio to the inverted tail at ``check_t`` is reported, not assumed).

    Raises
    ------
    NumericalFailure
        The expansion at zero has no such term (light tail: see :func:`tail_asymptotics`), or
        the term has a logarithm or an integer exponent (a slowly varying factor this function
        does not treat).

    Examples
    --------
    >>> r = power_tail(Transform("1/(1 + sqrt(s))"))       # P(X > t) ~ 1/sqrt(pi t)
    >>> round(r.index, 12), round(r.prefactor, 12)
    (0.5, 0.564189583548)
    """
    from .moments import MAX_ORDER, moment_expressions

    bound = transform.bind(dict(values or {}))
    _, bad = moment_expressions(bound, MAX_ORDER)
    if bad is None:
        raise NumericalFailure(f"{transform.expr} has no non-analytic term at zero up to order "
                               f"{MAX_ORDER}: its tail is not a power law")
    exponent, text = bad
    s = bound.variable
    term = sp.sympify(0)
    expansion = sp.series(bound.lst(), s, 0, int(float(exponent)) + 2).removeO()
    for piece in sp.Add.make_args(sp.expand(expansion)):
        coeff, power = piece.as_coeff_exponent(s)
        if power == exponent and not coeff.has(s):
            term += coeff
    a = float(exponent)
    if term == 0 or a.is_integer() or term.has(sp.log(s)):
        raise NumericalFailure(f"the term {text} is not c s^a with a non-integer a")
    n = int(np.floor(a))
    prefactor = float((-1) ** (n + 1) * term / sp.gamma(1 - sp.nsimplify(exponent)))
    inverted = invert(bound, list(check_t), what="ccdf", digits=10)
    asymptote = prefactor * np.asarray(check_t) ** -a
    ratio = tuple(float(v / w) for v, w in zip(inverted.value, asymptote, strict=True))
    return PowerTail(a, prefactor, tuple(float(t) for t in check_t), ratio)
