r"""Pole enclosures: certified disjoint disks around the poles and enclosures of their residues.

Step 2 and step 4 of the procedure of :mod:`symq.me.certification`.  Each irreducible factor
:math:`p` of :math:`D` over :math:`\mathbb{Q}` (degree :math:`d`, simple roots) gets, for every
approximate root :math:`c` (:func:`symq.me.polynomials.newton_roots`, else
:func:`~symq.me.polynomials.polyroots`), the disk :math:`|z - c| \le 2 d |p(c)|/|p'(c)|`, which
contains a root of :math:`p` (the classical bound :math:`n|p(c)/p'(c)|`, doubled), evaluated in
interval arithmetic.  Pairwise disjoint disks hold exactly one root each, and a disk centred on
the real axis holds a real root (complex roots come in conjugate pairs).  The Hermite coefficients
of each pole are then enclosed by evaluating :func:`symq.me.polynomials.hermite_coefficients` on
the pole's interval box (exactly for rational poles).

The module also holds the small interval helpers (end points, midpoints, certain signs) the other
stages use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import mpmath

from .._context import iv, mp, to_mp
from ..polynomials import hermite_coefficients, horner, newton_roots, polyroots
from .base import ExactData, Pole, iv_rational, lower_end, upper_end
from .verdict import NeedPrecision

__all__ = ["attach_coefficients", "enclose_poles"]


def _hermite(z: Any, m: int, num: Sequence[Any], den: Sequence[Any]) -> list[Any]:
    r"""Coefficients :math:`c_0, \dots, c_{m-1}` of :math:`\sum_j c_j t^j e^{zt}` in the density.

    With :math:`N/D = \sum_l A_l (s - z)^{-l} + \dots` (pole z of multiplicity m),
    :math:`c_j = A_{j+1}/j!` (:func:`symq.me.polynomials.hermite_coefficients` on the whole
    denominator).  With an interval box for z the result encloses the coefficients at the true
    pole.
    """
    return [c / math.factorial(j)
            for j, c in enumerate(hermite_coefficients(z, m, num, [(den, 1, m)]))]


# ====================================================================== pole enclosures
def _disk(center: Any, real: bool, p_iv: list[Any], dp_iv: list[Any], d: int
          ) -> mpmath.mpf | None:
    """Radius 2 d |p(c)|/|p'(c)| (upper bound) of a disk about c holding a root of p."""
    Z = iv.mpf(center) if real else iv.mpc(iv.mpf(center.real), iv.mpf(center.imag))
    P, Q = horner(p_iv, Z), horner(dp_iv, Z)
    q_low = lower_end(abs(Q))
    if not q_low > 0:
        return None
    return upper_end(iv.mpf(2 * d) * iv.mpf(upper_end(abs(P))) / iv.mpf(q_low))


def _enclose_factor(p: list[Fraction], mult: int, dps: int, use_polyroots: bool
                    ) -> list[Pole] | None:
    d = len(p) - 1
    p_iv = [iv_rational(c) for c in p]
    if d == 1:
        root = -p[0]
        c = to_mp(root)
        radius = _disk(c, True, p_iv, [iv.mpf(1)], 1)
        box = iv.mpf(c) + iv.mpf([-radius, radius])
        return [Pole(c, radius, mult, True, box, exact=root)]
    dp_iv = [iv_rational(c * k) for k, c in enumerate(p)][1:]
    try:
        approx = None if use_polyroots else newton_roots(p, dps)
        if approx is None:
            approx = polyroots([to_mp(c) for c in reversed(p)], 200 + 20 * d, 2 * dps * 4)
    except (mp.NoConvergence, ZeroDivisionError, ValueError):
        return None
    tol = mp.mpf(10) ** (-(dps // 2))
    poles = []
    n_real = n_upper = 0
    for z in approx:
        z = mp.mpc(z)
        if abs(z.imag) <= tol * (1 + abs(z)):
            c = mp.mpf(z.real)
            radius = _disk(c, True, p_iv, dp_iv, d)
            if radius is None:
                return None
            box = iv.mpf(c) + iv.mpf([-radius, radius])
            poles.append(Pole(c, radius, mult, True, box))
            n_real += 1
        elif z.imag > 0:
            radius = _disk(z, False, p_iv, dp_iv, d)
            if radius is None:
                return None
            R = iv.mpf([-radius, radius])
            box = iv.mpc(iv.mpf(z.real) + R, iv.mpf(z.imag) + R)
            poles.append(Pole(z, radius, mult, False, box))
            n_upper += 1
    if n_real + 2 * n_upper != d:
        return None
    return poles


def _disjoint(poles: list[Pole]) -> bool:
    """Pairwise disjointness of all disks, conjugate images included."""
    disks = []
    for P in poles:
        c = mp.mpc(P.center)
        disks.append((c, P.radius))
        if not P.real:
            disks.append((mp.mpc(c.real, -c.imag), P.radius))
    for i in range(len(disks)):
        ci, ri = disks[i]
        for j in range(i + 1, len(disks)):
            cj, rj = disks[j]
            diff = iv.mpc(iv.mpf(ci.real) - iv.mpf(cj.real), iv.mpf(ci.imag) - iv.mpf(cj.imag))
            if not lower_end(abs(diff)) > upper_end(iv.mpf(ri) + iv.mpf(rj)):
                return False
    return True


def enclose_poles(ex: ExactData, dps: int) -> list[Pole]:
    r"""Certified disjoint disks, one per distinct pole (step 2 of the procedure).

    Each irreducible factor p of D (degree d, simple roots) gets, for every approximate root
    c, the disk :math:`|z - c| \le 2 d |p(c)|/|p'(c)|`, which contains a root of p.  Real
    approximations are centred on the real axis.  When all disks are pairwise disjoint (and
    there are d of them per factor) each contains exactly one root, and a disk centred on the
    real axis contains a real root (conjugate symmetry).

    Raises
    ------
    NeedPrecision
        When the disks cannot be separated at this precision.
    """
    for use_polyroots in (False, True):
        poles: list[Pole] = []
        ok = True
        for p, mult in ex.factors:
            found = _enclose_factor(p, mult, dps, use_polyroots)
            if found is None:
                ok = False
                break
            poles.extend(found)
        if ok and _disjoint(poles):
            return poles
    raise NeedPrecision("pole enclosure", "could not separate the poles by disjoint disks")


def attach_coefficients(ex: ExactData, poles: list[Pole]) -> None:
    """Hermite coefficients: exact for rational poles, interval enclosures for all."""
    b_iv = [iv_rational(c) for c in ex.b]
    a_iv = [iv_rational(c) for c in ex.a]
    for P in poles:
        if P.exact is not None:
            P.exact_coeffs = _hermite(P.exact, P.multiplicity, ex.b, ex.a)
            P.coeffs = [iv_rational(c) for c in P.exact_coeffs]
        else:
            P.coeffs = _hermite(P.box, P.multiplicity, b_iv, a_iv)
        for c in P.coeffs:
            parts = (c.real, c.imag) if isinstance(c, iv.mpc) else (c,)
            if not all(mp.isfinite(lower_end(x)) and mp.isfinite(upper_end(x)) for x in parts):
                raise NeedPrecision("residues", "residue enclosures are not finite")
