r"""Interval evaluation of the density, Taylor guard near zero and tail bounds.

Steps 5-7 of the procedure of :mod:`symq.me.certification`:

* :class:`Evaluator` encloses :math:`g(t) = e^{-\mu t} f(t)` (the sign of f) and :math:`g'` over
  an interval of t, from the Hermite coefficient enclosures; clusters of close poles are also
  enclosed in Newton (divided-difference) form and the two enclosures intersected;
* :func:`taylor_guard` gives an :math:`h > 0` such that f has the sign of its first nonzero
  derivative at zero on :math:`(0, h]`, without pole enclosures;
* :func:`tail_bound` gives a time T beyond which the dominant pole's term outweighs all others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mpmath
import numpy as np

from .._context import iv, mp
from ..polynomials import horner, poly_mul, series_div, taylor_coefficients
from .base import ExactData, Pole, iv_rational, lower_end, midpoint, upper_end

__all__ = ["Evaluator", "pole_clusters", "tail_bound", "taylor_enclosure", "taylor_guard"]


# ====================================================================== Taylor guard at zero
def taylor_guard(ex: ExactData) -> tuple[mpmath.mpf, Any, Any]:
    r"""A pole-free Taylor bound near zero (step 7 of the procedure).

    With the companion realisation :math:`f(t) = c e^{At} e_n` (c = numerator coefficients) and
    the diagonal similarity :math:`S = \mathrm{diag}(\rho^0, \dots, \rho^{n-1})`,
    :math:`|f^{(m)}(u)| \le C \alpha^m e^{\alpha u}` with
    :math:`\alpha = \max(\rho, \sum_j |a_j| \rho^{j-n+1})` and
    :math:`C = \sum_j |b_j| \rho^{j-n+1}`.  Hence, for :math:`j^*` the first nonzero derivative
    and :math:`0 < t \le h = \min(1/\alpha, (j^*+1)|d_{j^*}| / (6 C \alpha^{j^*+1}))`,
    :math:`|f(t) - d_{j^*} t^{j^*}/j^*!| \le |d_{j^*}| t^{j^*} / (2\, j^*!)`: f has the sign of
    :math:`d_{j^*}` on :math:`(0, h]`.  This needs no pole enclosure (and holds even for poles
    in the right half plane).

    Returns
    -------
    h, C, alpha
        h as an mpf; C and alpha as intervals.
    """
    n = ex.n
    # rho: positive root of rho^n = sum |a_j| rho^j (Cauchy bound), any positive value is valid
    try:
        cauchy = [1.0] + [-abs(float(ex.a[j])) for j in range(n - 1, -1, -1)]
        rho = max(r.real for r in np.roots([float(c) for c in cauchy])
                  if abs(r.imag) < 1e-9 and r.real > 0)
        rho = mp.mpf(float(rho)) * (1 + mp.mpf(2) ** -20)
    except (ValueError, np.linalg.LinAlgError, OverflowError):
        rho = mp.mpf(1)
    if not (mp.isfinite(rho) and rho > 0):
        rho = mp.mpf(1)
    R = iv.mpf(rho)
    last_row = sum((abs(iv_rational(ex.a[j])) * R ** (j - n + 1) for j in range(n)), iv.mpf(0))
    alpha = iv.mpf(max(upper_end(R), upper_end(last_row)))
    C = sum((abs(iv_rational(ex.b[j])) * R ** (j - n + 1) for j in range(n)), iv.mpf(0))
    k = ex.jstar
    dk = abs(iv_rational(ex.d[k]))
    h = iv.mpf(1) / alpha
    h2 = iv.mpf(k + 1) * dk / (iv.mpf(6) * C * alpha ** (k + 1))
    h_lo = min(lower_end(h), lower_end(h2))
    return mp.mpf(h_lo), C, alpha


def taylor_enclosure(ex: ExactData, t: mpmath.mpf, C: Any, alpha: Any) -> Any:
    """Interval containing f(t) from the first nonzero Taylor term and the remainder bound."""
    k = ex.jstar
    T = iv.mpf(t)
    main = iv_rational(ex.d[k]) * T ** k / math.factorial(k)
    remainder = C * alpha ** (k + 1) * iv.exp(alpha * T) * T ** (k + 1) / math.factorial(k + 1)
    return main + remainder * iv.mpf([-1, 1])


# ====================================================================== interval evaluation
class Evaluator:
    r"""Enclosures of :math:`g(t) = e^{-\mu t} f(t)`, which has the sign of f (step 6).

    Factoring out the dominant exponential keeps the natural interval extension tight for
    large t (the dominant term becomes an almost constant function of t).  Clusters of close
    poles (see :func:`pole_clusters`) are enclosed both term by term and in Newton form, and the
    two enclosures are intersected.
    """

    def __init__(self, poles: list[Pole], mu: mpmath.mpf,
                 clusters: Sequence[tuple[list[Pole], list[Pole]]] = ()) -> None:
        self.mu = mu
        self.M = iv.mpf(mu)
        clustered = {id(P) for members, _ in clusters for P in members}
        self.plain = [self._term(P) for P in poles if id(P) not in clustered]
        self.clusters = [([self._term(P) for P in members], [self._term(P) for P in newton])
                         for members, newton in clusters]

    def _term(self, P: Pole) -> tuple[bool, int, Any, list[Any], list[Any]]:
        c = P.coeffs
        m = len(c)
        w = P.box - self.M if P.real else iv.mpc(P.box.real - self.M, P.box.imag)
        dc = [w * c[j] + ((j + 1) * c[j + 1] if j + 1 < m else 0) for j in range(m)]
        return P.real, P.weight, w, c, dc

    @staticmethod
    def _sum(terms: list[tuple[bool, int, Any, list[Any], list[Any]]], I: Any,
             derivative: bool) -> tuple[Any, Any]:
        g = iv.mpf(0)
        dg = iv.mpf(0)
        for real, weight, w, c, dc in terms:
            if real:
                E = iv.exp(w * I)
                g += (horner(c, I) if len(c) > 1 else c[0]) * E
                if derivative:
                    dg += (horner(dc, I) if len(dc) > 1 else dc[0]) * E
            else:
                E = iv.exp(iv.mpc(w.real * I, w.imag * I))
                g += weight * ((horner(c, I) if len(c) > 1 else c[0]) * E).real
                if derivative:
                    dg += weight * ((horner(dc, I) if len(dc) > 1 else dc[0]) * E).real
        return g, dg

    def natural(self, I: Any, derivative: bool = True) -> tuple[Any, Any]:
        """Natural interval extensions of g and g' over I."""
        g, dg = self._sum(self.plain, I, derivative)
        for separate, newton in self.clusters:
            g1, d1 = self._sum(separate, I, derivative)
            g2, d2 = self._sum(newton, I, derivative)
            g += _intersect(g1, g2)
            if derivative:
                dg += _intersect(d1, d2)
        return g, dg

    def point(self, t: mpmath.mpf) -> Any:
        """Enclosure of g(t) at a point."""
        return self.natural(iv.mpf(t), derivative=False)[0]

    def f_point(self, t: mpmath.mpf) -> Any:
        """Enclosure of f(t) = e^{mu t} g(t) at a point."""
        return iv.exp(self.M * iv.mpf(t)) * self.point(t)

    def box(self, a: mpmath.mpf, b: mpmath.mpf, m: mpmath.mpf) -> tuple[mpmath.mpf, Any]:
        """Lower bound of g on [a, b] (natural extension ∩ mean-value form) and g(m)."""
        I = iv.mpf([a, b])
        g, dg = self.natural(I)
        gm = self.point(m)
        mv = gm + dg * (I - iv.mpf(m))
        return max(lower_end(g), lower_end(mv)), gm


def _intersect(x: Any, y: Any) -> Any:
    lo, hi = max(lower_end(x), lower_end(y)), min(upper_end(x), upper_end(y))
    if lo > hi:  # both contain the true value, so this cannot happen; stay safe
        return x
    return iv.mpf([lo, hi])


def _hull(boxes: Sequence[Any], real: bool) -> Any:
    if real:
        return iv.mpf([min(lower_end(b) for b in boxes), max(upper_end(b) for b in boxes)])
    re = iv.mpf([min(lower_end(b.real) for b in boxes), max(upper_end(b.real) for b in boxes)])
    im = iv.mpf([min(lower_end(b.imag) for b in boxes), max(upper_end(b.imag) for b in boxes)])
    return iv.mpc(re, im)


def _rest_denominator(members: list[Pole], poles: list[Pole]) -> list[Any]:
    r"""Interval coefficients of :math:`D(s) / \prod_{members} (s - z_i)` (D is monic)."""
    inside = {id(P) for P in members}
    rest: list[Any] = [iv.mpf(1)]
    for P in poles:
        if P.real:
            factor = [-P.box, iv.mpf(1)]
        elif id(P) in inside:  # keep the conjugate of an upper-half-plane member
            factor = [-iv.mpc(P.box.real, -P.box.imag), iv.mpf(1)]
        else:
            re, im = P.box.real, P.box.imag
            factor = [re * re + im * im, -2 * re, iv.mpf(1)]
        power = 0 if (P.real and id(P) in inside) else P.multiplicity
        for _ in range(power):
            rest = poly_mul(rest, factor)
    return rest


def _intersect_any(x: Any, y: Any) -> Any:
    if isinstance(x, iv.mpc) or isinstance(y, iv.mpc):
        x, y = (v if isinstance(v, iv.mpc) else iv.mpc(v, 0) for v in (x, y))
        return iv.mpc(_intersect(x.real, y.real), _intersect(x.imag, y.imag))
    return _intersect(x, y)


def _newton_form(members: list[Pole], poles: list[Pole], b_iv: list[Any]) -> list[Pole]:
    r"""Newton (divided-difference) form of a cluster of close simple poles.

    :math:`\sum_i c_i e^{z_i t} = \sum_j \beta_j\, e^{\cdot t}[z_1, \dots, z_j]` with
    :math:`\beta_j = h[z_j, \dots, z_k]`, :math:`h = N / (D / \prod_i (s - z_i))`: the
    numerator of the cluster's partial fractions is interpolated by h at the nodes.  Two
    enclosures of :math:`\beta_j` are intersected: the divided-difference table of
    :math:`h(z_i) = c_i \prod_{l \ne i} (z_i - z_l)` and, by the Hermite-Genocchi formula,
    :math:`h^{(k-j)}(\operatorname{hull}(z_j..z_k))/(k-j)!` (no cancellation when the poles
    nearly coincide).  Again by Hermite-Genocchi the divided difference of :math:`e^{zt}`
    lies in :math:`t^{j-1}/(j-1)! \cdot \operatorname{hull}\{e^{\zeta t}: \zeta \in
    \operatorname{hull}(z_1..z_j)\}`, so term j is a pseudo-pole with box
    :math:`\operatorname{hull}(z_1..z_j)` and Hermite coefficient :math:`\beta_j/(j-1)!`.
    """
    k = len(members)
    Z = [P.box for P in members]
    real = members[0].real
    Q = []
    for i in range(k):
        acc = members[i].coeffs[0]
        for l in range(k):
            if l != i:
                acc = acc * (Z[i] - Z[l])
        Q.append(acc)
    table = list(Q)  # table[a] = h[z_a .. z_{a+level}]
    beta: list[Any] = [None] * k
    beta[k - 1] = table[k - 1]
    for level in range(1, k):
        table = [(table[a + 1] - table[a]) / (Z[a + level] - Z[a]) for a in range(k - level)]
        beta[k - 1 - level] = table[k - 1 - level]
    rest = _rest_denominator(members, poles)
    for j in range(k - 1):
        order = k - 1 - j
        B = _hull(Z[j:], real)
        q = series_div(taylor_coefficients(b_iv, B, order + 1),
                       taylor_coefficients(rest, B, order + 1), order + 1)
        beta[j] = _intersect_any(beta[j], q[order])
    zero = iv.mpf(0) if real else iv.mpc(0, 0)
    pseudo = []
    for j in range(k):
        box = _hull(Z[: j + 1], real)
        coeffs = [zero] * j + [beta[j] / math.factorial(j)]
        center = midpoint(box) if real else mp.mpc(midpoint(box.real), midpoint(box.imag))
        pseudo.append(Pole(center, mp.mpf(0), j + 1, real, box, coeffs=coeffs))
    return pseudo


def pole_clusters(poles: list[Pole], scale: mpmath.mpf, b_iv: list[Any]
              ) -> list[tuple[list[Pole], list[Pole]]]:
    """Groups of simple poles (real with real, upper-half-plane with upper) closer than
    ``0.05 * scale`` to each other (single linkage), with their Newton forms."""
    out = []
    tau = scale / 20
    for real in (True, False):
        cands = [P for P in poles if P.real == real and P.multiplicity == 1]
        parent = list(range(len(cands)))
        for i in range(len(cands)):
            for j in range(i + 1, len(cands)):
                if abs(mp.mpc(cands[i].center) - mp.mpc(cands[j].center)) <= tau:
                    parent[_root(parent, i)] = _root(parent, j)
        groups: dict[int, list[Pole]] = {}
        for i, P in enumerate(cands):
            groups.setdefault(_root(parent, i), []).append(P)
        for members in groups.values():
            if len(members) > 1:
                members.sort(key=lambda P: -P.re_hi)
                out.append((members, _newton_form(members, poles, b_iv)))
    return out


def _root(parent: list[int], i: int) -> int:
    """The representative of ``i`` in the union-find forest ``parent`` (path halving)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


# ====================================================================== tail bound
def tail_bound(margin: mpmath.mpf, dominant: Pole, others: list[Pole], m: int,
                group: Sequence[Pole] = ()) -> mpmath.mpf | None:
    r"""T such that the dominant term wins for all t >= T (step 5 of the procedure).

    With the dominant real pole :math:`z_1` (multiplicity m, leading Hermite coefficient at
    least ``margin`` > 0 in absolute value) and :math:`\delta_k = \min \operatorname{Re} z_1 -
    \max \operatorname{Re} z_k`, for :math:`t \ge T \ge \max_{k,j} (j-m+1)/\delta_k`

    .. math::

        \Big|\frac{e^{-z_1 t} f(t)}{t^{m-1}} - c_{1,m-1}\Big| \le
        \sum_{j<m-1} |c_{1j}| T^{j-m+1} + \sum_{k \ge 2} \sum_j |c_{kj}| T^{j-m+1}
        e^{-\delta_k T} =: S(T),

    each term being nonincreasing in t.  T is doubled until :math:`S(T) \le` margin/2 and then
    refined by bisection.  ``group`` lists poles on the dominant vertical line whose joint
    contribution is already accounted for in ``margin`` (exact rule (d)).
    """
    excluded = {id(dominant)} | {id(P) for P in group}
    terms = []
    t_min = mp.mpf(0)
    for P in others:
        if id(P) in excluded:
            continue
        delta = dominant.re_lo - P.re_hi
        if not delta > 0:
            return None
        mags = [iv.mpf(upper_end(abs(c))) * P.weight for c in P.coeffs]
        for j in range(len(mags)):
            if j - m + 1 > 0:
                t_min = max(t_min, mp.mpf(j - m + 1) / delta)
        terms.append((iv.mpf(delta), mags))
    own = [iv.mpf(upper_end(abs(c))) for c in dominant.coeffs[: m - 1]]
    half = margin / 2

    def S(T: mpmath.mpf) -> mpmath.mpf:
        TT = iv.mpf(T)
        total = iv.mpf(0)
        for j, c in enumerate(own):
            total += c * TT ** (j - m + 1)
        for delta, mags in terms:
            E = iv.exp(-delta * TT)
            for j, c in enumerate(mags):
                total += c * TT ** (j - m + 1) * E
        return upper_end(total)

    if not terms and not own:
        return mp.mpf(0)
    deltas = [lower_end(dl) for dl, _ in terms]
    T = max(t_min, 1 / min(deltas) if deltas else mp.mpf(1), mp.mpf(2) ** -20)
    for _ in range(400):
        if S(T) <= half:
            break
        T *= 2
    else:
        return None
    lo, hi = max(T / 2, t_min), T
    if lo > 0 and lo < hi:
        for _ in range(12):
            mid = (lo + hi) / 2
            if S(mid) <= half:
                hi = mid
            else:
                lo = mid
    return hi
