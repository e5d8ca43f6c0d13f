r"""Certified enclosures of the dominant real pole :math:`-\eta` of a transform :math:`N/D`.

The transform is reduced by :func:`sympy.cancel` and bound to numbers
(:func:`~symq.me.transforms.tails.tail_asymptotics`).

* :func:`certify_rational_pole` (:math:`D` a polynomial over the rationals): the real roots of
  its square-free part :math:`Q` are isolated in disjoint rational intervals (sympy's
  Vincent-Akritas-Strzebonski isolation), the rightmost refined to a width of :math:`10^{-30}`,
  its order read from its irreducible factor.  Each non-real root is placed left of the line
  :math:`\mathrm{Re}\,s = -\eta` by an isolating rectangle or, where one meets the line,
  exactly: :math:`R(x) = \mathrm{res}_s(Q(s), Q(2x - s))` has the roots :math:`(z_i + z_j)/2`,
  so no real root of :math:`R` beyond :math:`-\eta` means no pole to the right, and the
  multiplicity of :math:`-\eta` in :math:`R` is one plus the number of other poles on the line.
* :func:`certify_real_pole` (numbers, ``s``, ``+``, ``*``, powers, ``exp``, ``log``,
  ``sqrt``): interval arithmetic at 40 digits (inclusion, natural and mean-value extensions,
  subdivision: Moore, Kearfott & Cloud 2009, *Introduction to Interval Analysis*, SIAM,
  ch. 5-6).  :math:`D` changes sign across an interval of width :math:`10^{-30}` around the
  bisected root and :math:`D' \ne 0` there (one simple zero), :math:`N \ne 0` (a pole), and
  :math:`D \ne 0` on a subdivision of the rest of :math:`(-\eta, 0]` but for a zero at 0 shown
  removable (:math:`N(0) = D(0) = 0` exactly, :math:`D' \ne 0` next to it).  A root, logarithm
  or negative power of an interval reaching 0 is refused, so :math:`N, D` are analytic on
  :math:`[-\eta, 0]`.  For the LST of a nonnegative law the abscissa of convergence is a
  singularity on the real axis (Widder 1941, *The Laplace Transform*, ch. II), hence
  :math:`-\eta`.  Poles off the axis on that line are not examined.

No certificate is claimed unless every step succeeded; ``reason`` says what failed and where.

Examples
--------
>>> import sympy as sp
>>> s = sp.Symbol("s")
>>> c = certify_rational_pole(sp.Integer(2), s**2 + 3*s + 2, s)     # poles -1, -2
>>> c.certified, c.low, c.high, c.order, c.on_line
(True, Fraction(-1, 1), Fraction(-1, 1), 1, 0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar

import mpmath
import sympy as sp

from symq.core.errors import NumericalFailure
from symq.core.precision import local_iv, local_mp, working_dps
from symq.core.result import Exactness, ResultBase

__all__ = ["PoleCertificate", "certify_rational_pole", "certify_real_pole", "interval_function"]

#: Decimal digits of the interval arithmetic.
DIGITS = 40
#: Half-width of the final enclosure, relative to ``max(1, |pole|)``.
HALF_WIDTH = 1e-30
#: Smallest piece of the exclusion subdivision, relative to ``max(1, |s|)``.
MIN_PIECE = 1e-12
#: Most pieces of the exclusion subdivision.
MAX_PIECES = 20000
#: Highest degree of the square-free denominator for the exact resultant check.
MAX_RESULTANT_DEGREE = 8


@dataclass(frozen=True)
class PoleCertificate(ResultBase):
    """What is proved about the rightmost real pole :math:`-\\eta` (module docstring).

    Attributes
    ----------
    low, high : Fraction
        The pole lies in ``[low, high]`` (exact binary or rational ends).
    certified : bool
        Every step of the proof succeeded; if False, ``[low, high]`` proves nothing.
    reason : str
        What was proved, or which step failed and where.
    pieces : int
        Interval pieces of the exclusion subdivision (0 for a rational transform).
    order : int or None
        The pole's order, exact for a rational transform, 1 for a certified non-rational one.
    on_line : int or None
        Other poles on the line :math:`\\mathrm{Re}\\,s = -\\eta` (rational transforms only).
    suspect : float or None
        Where a zero of the denominator right of the pole could not be excluded.
    method, exactness
        How it was proved; ``exact`` (rational isolation) or ``certified`` (interval
        arithmetic) when certified, ``numeric`` otherwise.
    """

    summary: ClassVar[tuple[str, ...]] = ("certified", "low", "high", "order")

    low: Fraction
    high: Fraction
    certified: bool
    reason: str
    pieces: int = 0
    order: int | None = None
    on_line: int | None = None
    suspect: float | None = None
    method: str = "exact root isolation, or interval arithmetic at 40 digits"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def width(self) -> float:
        """``high - low``."""
        return float(self.high - self.low)

    @property
    def midpoint(self) -> Fraction:
        """``(low + high) / 2``."""
        return (self.low + self.high) / 2

    def contains(self, x: Any) -> bool:
        """Whether the number ``x`` (int, float, Fraction, sympy or mpmath real) is in
        ``[low, high]``, compared exactly."""
        return bool(self.low <= _exact(x) <= self.high)

    def __str__(self) -> str:
        state = "certified" if self.certified else f"not certified: {self.reason}"
        return (f"pole in [{float(self.low):.12g}, {float(self.high):.12g}] (width "
                f"{self.width:.2g}, {state})")


# ================================================================ interval evaluation
class _Domain(Exception):
    """An interval left the domain where a node is analytic (a branch point or a pole)."""


def _exact(x: Any) -> Fraction:
    if hasattr(x, "_mpf_"):
        p, q = mpmath.libmp.to_rational(x._mpf_)
        return Fraction(int(p), int(q))
    if isinstance(x, sp.Rational):
        return Fraction(int(x.p), int(x.q))
    return Fraction(x)


def _ends(x: Any) -> tuple[Any, Any]:
    make = local_mp().make_mpf
    return make(x._mpi_[0]), make(x._mpi_[1])


def _excludes_zero(x: Any) -> bool:
    lo, hi = _ends(x)
    return bool(lo > 0 or hi < 0)


def _positive(x: Any, what: str) -> Any:
    if not _ends(x)[0] > 0:
        raise _Domain(f"{what} of an interval reaching zero or below")
    return x


def _constant(value: sp.Rational) -> Callable[[Any], Any]:
    p, q = int(value.p), int(value.q)
    return lambda x: local_iv().mpf(p) / q if q != 1 else local_iv().mpf(p)


def interval_function(expr: sp.Expr, s: sp.Symbol) -> Callable[[Any], Any]:
    """Compile ``expr`` into a map from an interval of ``s`` to an enclosure of its range (in
    the thread's interval context); a ``log``, ``sqrt``, fractional or negative power of an
    interval where it is not analytic raises an internal domain error.

    Raises
    ------
    NumericalFailure
        A node other than numbers, ``s``, ``+``, ``*``, powers, ``exp`` and ``log``.
    """
    if expr == s:
        return lambda x: x
    if isinstance(expr, sp.Float):
        return _constant(sp.Rational(expr))
    if isinstance(expr, sp.Rational):
        return _constant(expr)
    if expr in (sp.pi, sp.E):
        return (lambda x: local_iv().pi) if expr is sp.pi else (lambda x: local_iv().e)
    if isinstance(expr, (sp.Add, sp.Mul)):
        parts = [interval_function(a, s) for a in expr.args]
        add = isinstance(expr, sp.Add)

        def combine(x: Any) -> Any:
            total = parts[0](x)
            for part in parts[1:]:
                total = total + part(x) if add else total * part(x)
            return total
        return combine
    if isinstance(expr, (sp.exp, sp.log)):
        inner = interval_function(expr.args[0], s)
        if isinstance(expr, sp.exp):
            return lambda x: local_iv().exp(inner(x))
        return lambda x: local_iv().log(_positive(inner(x), "log"))
    if isinstance(expr, sp.Pow):
        base, exponent = expr.args
        f = interval_function(base, s)
        if exponent.is_Integer:
            n = int(exponent)
            if n >= 0:
                return lambda x: f(x) ** n

            def reciprocal(x: Any) -> Any:
                value = f(x)
                if not _excludes_zero(value):
                    raise _Domain("a negative power of an interval containing zero")
                return 1 / value ** (-n)
            return reciprocal
        if exponent.is_Rational:
            p, q = int(exponent.p), int(exponent.q)
            if q == 2:
                return lambda x: local_iv().sqrt(_positive(f(x), "sqrt")) ** p
            return lambda x: local_iv().exp(local_iv().log(_positive(f(x), "a power")) * p / q)
        if base.is_number and base.is_positive:
            g = interval_function(exponent, s)
            return lambda x: local_iv().exp(g(x) * local_iv().log(_positive(f(x), "log")))
    raise NumericalFailure(f"cannot enclose {type(expr).__name__} ({expr}) in interval "
                           "arithmetic: only numbers, s, +, *, powers, exp, log and sqrt")


# ================================================================ non-rational: intervals
def certify_real_pole(num: sp.Expr, den: sp.Expr, s: sp.Symbol, guess: float,
                      retries: int = 0) -> PoleCertificate:
    """Prove that ``den`` has exactly one zero, simple and not a zero of ``num``, near
    ``guess < 0`` and none in ``(guess, 0)`` except a removable one at 0 (module docstring).

    Parameters
    ----------
    num, den : sympy expressions
        Numerator and denominator in ``s``, numbers bound.
    s : Symbol
    guess : float
        A zero of ``den`` (a bisected root, to about 1e-12 relative).
    retries : int
        If a zero of ``den`` right of ``guess`` cannot be excluded, start again from there, up
        to this many times; a certificate found so is for that zero (default: none).

    Raises
    ------
    NumericalFailure
        ``num`` or ``den`` has a node :func:`interval_function` does not treat.

    Examples
    --------
    >>> import sympy as sp
    >>> s = sp.Symbol("s")       # M/D/1, lam = 1/2, d = 1: exp(eta) = 1 + 2 eta
    >>> c = certify_real_pole(s * sp.exp(s), 2*s*sp.exp(s) - sp.exp(s) + 1, s, -1.2564312)
    >>> c.certified, round(float(c.low), 12), c.width < 1e-29
    (True, -1.256431208626, True)
    """
    f, df, g = (interval_function(e, s) for e in (den, sp.diff(den, s), num))
    zero_at_0 = sp.simplify(den.subs(s, 0)) == 0 and sp.simplify(num.subs(s, 0)) == 0
    with working_dps(DIGITS, intervals=True) as mp:
        first = _certify_real(f, df, g, mp.mpf(guess), zero_at_0, mp)
        suspect = first.suspect
        for _ in range(retries if suspect is not None else 0):
            retry = _certify_real(f, df, g, mp.mpf(suspect), zero_at_0, mp)
            if retry.certified:
                return replace(retry, reason=f"{retry.reason}; found right of the guess "
                               f"{guess:.17g}, where den's zeros were missed")
            if retry.suspect is None:
                break
            suspect = retry.suspect
    return first


def _certify_real(f: Callable[[Any], Any], df: Callable[[Any], Any], g: Callable[[Any], Any],
                  guess: Any, zero_at_0: bool, mp: Any) -> PoleCertificate:
    iv = local_iv()

    def box(a: Any, b: Any) -> Any:
        return iv.mpf([a, b])

    def sign(x: Any) -> int | None:
        try:
            value = f(box(x, x))
        except _Domain:
            return None
        return (1 if _ends(value)[0] > 0 else -1) if _excludes_zero(value) else None

    def fail(low: Any, high: Any, why: str, pieces: int = 0, suspect: Any = None
             ) -> PoleCertificate:
        return PoleCertificate(_exact(low), _exact(high), False, why, pieces,
                               suspect=None if suspect is None else float(suspect))

    scale = max(mp.mpf(1), abs(guess))
    if guess >= 0:
        return fail(guess, guess, "the guess is not negative")
    for h in (1e-12, 1e-9, 1e-6):             # a bracket: opposite signs at its ends
        a, b = guess - h * scale, guess + h * scale
        sa, sb = sign(a), sign(b)
        if sa is not None and sb is not None and sa != sb:
            break
    else:
        return fail(guess, guess, "no sign change of den shown across the guess "
                    f"{float(guess):.17g} (an even zero, no zero, or not analytic there)")
    while b - a > 2 * HALF_WIDTH * scale:     # bisection on certain signs only
        m = (a + b) / 2
        sm = sign(m)
        if sm is None:
            break
        a, b = (m, b) if sm == sa else (a, m)
    try:
        f(box(a, b))                          # analytic on [a, b]
        if not _excludes_zero(df(box(a, b))):
            return fail(a, b, "den' may vanish on the enclosure: a multiple or clustered zero")
        if not _excludes_zero(g(box(a, b))):
            return fail(a, b, "num may vanish on the enclosure: possibly removable")
    except _Domain as e:
        return fail(a, b, f"not analytic on the enclosure: {e}")
    start = b                                 # den monotone on [a, b + r]: no other zero
    for r in (1e-3, 1e-6, 1e-9):
        right = b + r * scale
        if right < b / 2:
            try:
                if _excludes_zero(df(box(a, right))):
                    f(box(a, right)), g(box(a, right))
                    start = right
                    break
            except _Domain:
                pass
    pieces, stack = 0, [(start, mp.mpf(0))]
    while stack:                              # from 0 leftwards: the first failure is rightmost
        lo, hi = stack.pop()
        pieces += 1
        X = box(lo, hi)
        why = "den may vanish"
        try:
            value = f(X)
            g(X)
            ok = _excludes_zero(value)
            if not ok:
                m = (lo + hi) / 2
                slope = df(X)
                ok = _excludes_zero(f(box(m, m)) + slope * (X - m))     # mean-value form
                if not ok and hi == 0 and zero_at_0:
                    ok = _excludes_zero(slope)   # monotone: 0 is its only zero, removable
        except _Domain as e:
            ok, why = False, f"not analytic: {e}"
        if ok:
            continue
        if pieces >= MAX_PIECES:
            return fail(a, b, f"{why} somewhere right of the pole: {MAX_PIECES} pieces used",
                        pieces)
        if hi - lo <= MIN_PIECE * max(1, abs(lo)):
            where = f"[{float(lo):.17g}, {float(hi):.17g}]"
            return fail(a, b, f"{why} on {where} (right of the pole), after {pieces} pieces",
                        pieces, (lo + hi) / 2)
        m = (lo + hi) / 2
        stack += [(lo, m), (m, hi)]
    return PoleCertificate(
        _exact(a), _exact(b), True,
        f"interval arithmetic at {DIGITS} digits: den changes sign on [low, high] and den' "
        f"excludes 0 there (one simple zero), num excludes 0 (a pole); den excludes 0 on "
        f"(high, 0){' but for a removable zero at 0' if zero_at_0 else ''} ({pieces} pieces); "
        "num and den analytic on [low, 0]; the line Re s = low is not examined off the axis",
        pieces, order=1, exactness=Exactness.CERTIFIED)


# ================================================================ rational: exact
def _multiplicity(p: sp.Poly, factor: sp.Poly) -> int:
    k = 0
    while True:
        q, r = p.div(factor)
        if not r.is_zero:
            return k
        p, k = q, k + 1


def certify_rational_pole(num: sp.Expr, den: sp.Expr, s: sp.Symbol) -> PoleCertificate:
    """Isolate the rightmost real pole of ``num/den`` exactly and place every other pole
    relative to its vertical line (module docstring).

    Raises
    ------
    NumericalFailure
        ``num`` or ``den`` is not a polynomial in ``s`` with rational coefficients.
    """
    try:
        D, N = sp.Poly(den, s, domain=sp.QQ), sp.Poly(num, s, domain=sp.QQ)
    except (sp.PolynomialError, sp.polys.polyerrors.CoercionFailed) as e:
        raise NumericalFailure(f"{den} is not a polynomial with rational coefficients") from e
    zero = Fraction(0)

    def fail(why: str, low: Fraction = zero, high: Fraction = zero) -> PoleCertificate:
        return PoleCertificate(low, high, False, why)

    if D.degree() < 1:
        return fail("the transform has no pole")
    if D.gcd(N).degree() > 0:
        return fail("num and den share a factor: not reduced")
    Q = D.sqf_part()
    if Q.count_roots(0, None) > 0:
        return fail("a pole at s >= 0: not the LST of a law")
    negative = sorted((iv for iv, _ in Q.intervals()), key=lambda iv: iv[0])
    if not negative:
        return fail("no real pole: the rightmost singularity of an LST is real (Widder)")
    a, b = negative[-1]
    while Q.count_roots(a, b) > 1:            # closed ends: make [a, b] isolate the root
        a, b = Q.refine_root(a, b, eps=(b - a) / 4)
    F = next(p for p, _ in Q.factor_list()[1] if p.count_roots(a, b) > 0)
    order = _multiplicity(D, F)
    width = sp.Rational(HALF_WIDTH) * max(1, abs(a))
    a, b = F.refine_root(a, b, eps=width)
    low, high = _exact(a), _exact(b)
    what = f"the rightmost real root of the reduced denominator, a root of {F.as_expr()}"
    left = 0
    complex_roots = Q.degree() - Q.count_roots()
    for eps in (None, sp.Rational(1, 10**3)):
        rects = Q.intervals(all=True, eps=eps)[1] if complex_roots else []
        spans = [(sp.re(u), sp.re(v)) for (u, v), _ in rects]
        if any(lo > b for lo, _ in spans):
            return fail("a non-real pole right of the real one: not the LST of a law "
                        "(Widder)", low, high)
        left = sum(1 for _, hi in spans if hi < a)
        if left == complex_roots:
            return PoleCertificate(low, high, True, f"{what}, isolated exactly; every other "
                                   "pole lies left of its line (isolating rectangles)",
                                   order=order, on_line=0, exactness=Exactness.EXACT)
    if Q.degree() > MAX_RESULTANT_DEGREE:
        return fail(f"a pole on or near the line Re s = {float(low):.6g}: the exact check "
                    f"is limited to degree {MAX_RESULTANT_DEGREE}", low, high)
    x = sp.Dummy("x")
    R = sp.Poly(sp.resultant(Q.as_expr(), Q.as_expr().subs(s, 2 * x - s), s), x)
    Rs = R.sqf_part()
    Fx = sp.Poly(F.as_expr().subs(s, x), x)
    while Rs.count_roots(a, b) > 1:
        width /= 2**20
        a, b = F.refine_root(a, b, eps=width)
    if Rs.count_roots(a, None) > 1:
        return fail("a pole right of the line of the real one (resultant): not the LST of a "
                    "law (Widder)", low, high)
    on_line = _multiplicity(R, Fx) - 1
    return PoleCertificate(low, high, True, f"{what}, isolated exactly; no pole to its right "
                           f"and {on_line} others on its line (resultant of Q(s), Q(2x - s))",
                           order=order, on_line=on_line, exactness=Exactness.EXACT)
