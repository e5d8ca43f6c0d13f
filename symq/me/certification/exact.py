r"""Exact preprocessing and the exact rules of the certifier.

Step 1 and the exact rules of the procedure of :mod:`symq.me.certification`, in rational
arithmetic on :math:`N/D`: the data every later stage uses (:class:`ExactData`: coefficients,
:math:`f^{(j)}(0)`, factorisation of :math:`D` over :math:`\mathbb{Q}`), the Routh-Hurwitz test,
and the rules that decide without any search: the sign of the first nonzero derivative at zero,
all-real poles (rules (a) and (c)), order 3 with a constant numerator (rule (b)) and the exact test
of a complex pair sharing the dominant real part with a rational pole (rule (d)).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import sympy as sp

from .._context import mp
from ..polynomials import horner, taylor_coefficients
from ..transform import RationalLST
from .base import ExactData, Pole, certain_sign, fraction_of, lower_end, upper_end
from .enclosures import enclose_poles
from .intervals import taylor_enclosure, taylor_guard
from .verdict import Decision, NeedPrecision, Nonnegativity, Run

__all__ = ["exact_data", "rule_all_real", "rule_hurwitz", "rule_initial_sign", "rule_order3",
           "shared_pair_exact"]


# ====================================================================== exact data
def exact_data(lst: RationalLST) -> ExactData:
    """The exact data of ``lst`` (step 1 of the procedure): coefficients as fractions, the
    derivatives at zero, the first nonzero one and the factorisation of D over Q."""
    n = lst.order
    b = [fraction_of(x) for x in lst.numerator] + [Fraction(0)] * (n - len(lst.numerator))
    a = [fraction_of(x) for x in lst.denominator]
    deg_num = max(k for k, c in enumerate(b) if c != 0)
    d = [fraction_of(x) for x in lst.derivatives_at_zero(n)]
    jstar = next(j for j, v in enumerate(d) if v != 0)  # = n - 1 - deg N (b_{n-1-j} = 0 below)
    _, factor_list = lst.D.factor_list()
    factors = []
    for poly, mult in factor_list:
        coefficients = [fraction_of(c) for c in reversed(poly.all_coeffs())]
        lead = coefficients[-1]
        factors.append(([c / lead for c in coefficients], int(mult)))
    return ExactData(b, a, n, deg_num, d, jstar, factors)


def _routh_hurwitz(a: Sequence[Fraction]) -> bool:
    """True iff every root of the monic polynomial has negative real part (exact Routh array).

    A polynomial with positive leading coefficient is Hurwitz iff the first column of its
    Routh array is strictly positive; a zero or negative entry means a root with Re >= 0.
    """
    n = len(a) - 1
    desc = list(reversed(a))
    width = n // 2 + 2
    prev = desc[0::2] + [Fraction(0)] * (width - len(desc[0::2]))
    cur = desc[1::2] + [Fraction(0)] * (width - len(desc[1::2]))
    if prev[0] <= 0:
        return False
    for k in range(1, n + 1):
        if cur[0] <= 0:
            return False
        if k == n:
            break
        nxt = [(cur[0] * prev[j + 1] - prev[0] * cur[j + 1]) / cur[0] for j in range(width - 1)]
        prev, cur = cur, nxt + [Fraction(0)]
    return True


def _imaginary_axis_root(a: Sequence[Fraction]) -> bool:
    """Exact: does the real polynomial have a root iy, y real?  (gcd of Re and Im of D(iy))."""
    g = _imaginary_axis_gcd(a)
    return g.degree() > 0 and g.count_roots() > 0


def _imaginary_axis_gcd(a: Sequence[Fraction]) -> sp.Poly:
    """gcd over Q of Re p(iy) and Im p(iy) as a polynomial in y; its real roots give p(iy) = 0."""
    re_part = [Fraction(0)] * len(a)
    im_part = [Fraction(0)] * len(a)
    for k, c in enumerate(a):
        sign = 1 if k % 4 in (0, 1) else -1
        (re_part if k % 2 == 0 else im_part)[k] = sign * c
    y = sp.Symbol("y")

    def poly(coefficients: list[Fraction]) -> sp.Poly:
        return sp.Poly([sp.Rational(c.numerator, c.denominator) for c in reversed(coefficients)],
                       y, domain=sp.QQ)

    return sp.gcd(poly(re_part), poly(im_part))

# ====================================================================== the exact rules
def rule_initial_sign(run: Run) -> Decision | None:
    r"""Step 1: if the first nonzero :math:`f^{(j)}(0)` is negative, f < 0 near 0.

    The witness is the Taylor-guard length h (pole-free, :func:`taylor_guard`); its enclosure
    comes from the Taylor polynomial and the remainder bound.
    """
    ex = run.ex
    if ex.d[ex.jstar] > 0:
        return None
    h, C, alpha = taylor_guard(ex)
    enc = taylor_enclosure(ex, h, C, alpha)
    if not upper_end(enc) < 0:  # cannot happen mathematically; keep the answer honest
        return Decision(Nonnegativity.INCONCLUSIVE, "f^(j*)(0) < 0",
                        reason=f"f^({ex.jstar})(0) < 0 but no witness was enclosed")
    return Decision(Nonnegativity.NEGATIVE, "f^(j*)(0) < 0", witness=h,
                    enclosure=(lower_end(enc), upper_end(enc)))


def rule_hurwitz(run: Run) -> Decision | None:
    r"""Exact Routh-Hurwitz test: a pole with Re >= 0 is not a distribution (step 1).

    The transform of a density on :math:`[0, \infty)` is analytic in :math:`\operatorname{Re} s > 0`
    and bounded on the imaginary axis, so every pole must lie in the open left half plane.
    """
    ex = run.ex
    if _routh_hurwitz(ex.a):
        return None
    if _imaginary_axis_root(ex.a):
        reason = "pole on the imaginary axis: the transform is not that of a distribution"
    else:
        reason = "pole in the right half plane: the transform is not that of a distribution"
    try:
        poles = enclose_poles(ex, run.dps)
        worst = max(poles, key=lambda P: P.re_lo)
        run.poles = poles
        reason += f" (pole near {mp.nstr(worst.center, 8)})"
    except NeedPrecision:
        pass
    return Decision(Nonnegativity.INVALID, "Routh-Hurwitz test", reason=reason)


def rule_all_real(run: Run) -> Decision | None:
    r"""Exact rules (a) and (c): all poles real.

    * constant numerator: f is a convolution of exponential densities (hypoexponential);
    * every Hermite coefficient :math:`\ge 0` (exactly, for rational poles) or certainly
      > 0: a positive combination of :math:`t^j e^{-\lambda t}`;
    * simple poles, coefficients ordered by decay rate with one sign change, dominant
      coefficient > 0 and :math:`f(0) \ge 0`: by Descartes' rule for exponential sums
      (Pólya-Szegő) f has at most one real zero counted with multiplicity, so none in
      :math:`(0, \infty)`.
    """
    ex, poles = run.ex, run.poles
    if not all(P.real for P in poles):
        return None
    if ex.deg_num == 0:
        return Decision(Nonnegativity.NONNEGATIVE,
                        "all poles real, constant numerator (hypoexponential)")
    signs = []
    for P in poles:
        values = P.exact_coeffs if P.exact_coeffs is not None else P.coeffs
        signs.append([certain_sign(v) for v in values])
    if all(sg is not None and sg >= 0 for row in signs for sg in row):
        return Decision(Nonnegativity.NONNEGATIVE, "all poles real, residues positive")
    if all(P.multiplicity == 1 for P in poles):
        ordered = [sg[0] for _, sg in sorted(zip(poles, signs), key=lambda x: -x[0].center)]
        if any(sg is None or sg == 0 for sg in ordered):
            raise NeedPrecision("Descartes sign rule", "residue signs not certain")
        changes = sum(1 for u, v in zip(ordered, ordered[1:]) if u != v)
        if changes == 1 and ordered[0] > 0 and ex.d[0] >= 0:
            return Decision(Nonnegativity.NONNEGATIVE, "Descartes sign rule")
    return None


def rule_order3(run: Run) -> Decision | None:
    r"""Exact rule (b): an ME(3) with constant numerator is a density iff the dominant pole is real.

    The theorem is derived in derivations/me-pade.md, steps 11-12 (with
    :math:`f(0) = f'(0) = 0` the density is a positive multiple of
    :math:`e^{-\lambda t}[\omega - e^{-\delta t}(\delta \sin \omega t + \omega \cos \omega t)]`,
    which is nonnegative iff :math:`\delta = \sigma - \lambda \ge 0`).

    Exact: with :math:`D(u - a_2/3) = u^3 + pu + q`, a negative discriminant means one real
    root :math:`r'` (of sign :math:`-q`) and a pair with real part :math:`-r'/2`, so the
    real pole is (weakly) dominant iff :math:`q \le 0`.  All poles are in the open left half
    plane (Routh-Hurwitz was checked before).
    """
    ex = run.ex
    if ex.n != 3 or ex.deg_num != 0:
        return None
    a0, a1, a2 = ex.a[0], ex.a[1], ex.a[2]
    p = a1 - a2 * a2 / 3
    q = 2 * a2 ** 3 / 27 - a2 * a1 / 3 + a0
    disc = -4 * p ** 3 - 27 * q ** 2
    if disc >= 0 or q <= 0:
        return Decision(Nonnegativity.NONNEGATIVE, "order 3 constant numerator")
    return Decision(Nonnegativity.INVALID, "order 3 constant numerator",
                    reason="complex dominant pole: f changes sign infinitely often")

def shared_pair_exact(ex: ExactData, R: Pole) -> tuple[Fraction, Fraction, Fraction] | None:
    r"""Exact test that a complex pair shares the real part of the rational simple pole R.

    With :math:`P(u) = D(u - \lambda)` and :math:`Q = P/u`, the poles on the line
    :math:`\operatorname{Re} = -\lambda` other than :math:`-\lambda` are the imaginary roots of
    Q, the common real roots y of Re Q(iy) and Im Q(iy).  Returns
    :math:`(c_1, |c_{pair}|^2, \omega^2)` exactly when they are exactly one simple pair
    :math:`\pm i\omega`, else None.
    """
    lam = -R.exact
    P = taylor_coefficients(ex.a, -lam, ex.n + 1)  # ascending coefficients of D(u - lambda)
    if P[0] != 0 or P[1] == 0:
        return None
    Q = P[1:]
    g = _imaginary_axis_gcd(Q)
    if g.degree() != 2:
        return None
    g = g.monic()
    coeffs = [fraction_of(c) for c in reversed(g.all_coeffs())]  # y^2 + c1 y + c0
    if coeffs[1] != 0 or not coeffs[0] < 0:
        return None
    w = -coeffs[0]  # omega^2
    # the pair must be simple: u^2 + w must not divide Q / (u^2 + w)
    u = sp.Symbol("u")
    Qp = sp.Poly([sp.Rational(c.numerator, c.denominator) for c in reversed(Q)], u, domain=sp.QQ)
    quotient, rem = sp.div(Qp, sp.Poly(u ** 2 + sp.Rational(w.numerator, w.denominator), u))
    if not rem.is_zero:
        return None
    if quotient.eval(sp.I * sp.sqrt(sp.Rational(w.numerator, w.denominator))) == 0:
        return None

    def at_i_omega(poly: Sequence[Fraction]) -> Fraction:
        """|poly(i omega)|^2 exactly: with u^2 = -w the value is A + i omega B."""
        A = sum((c * (-w) ** (k // 2) for k, c in enumerate(poly) if k % 2 == 0), Fraction(0))
        B = sum((c * (-w) ** (k // 2) for k, c in enumerate(poly) if k % 2 == 1), Fraction(0))
        return A * A + w * B * B

    N_shift = taylor_coefficients(ex.b, -lam, ex.n)
    dP = [k * c for k, c in enumerate(P)][1:]
    c1 = horner(ex.b, -lam) / horner([k * c for k, c in enumerate(ex.a)][1:], -lam)
    cpair2 = at_i_omega(N_shift) / at_i_omega(dP)
    return c1, cpair2, w
