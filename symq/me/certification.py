r"""Certified nonnegativity of matrix-exponential (ME) densities.

A rational Laplace transform :math:`f^*(s) = N(s)/D(s)` with :math:`N(0) = D(0)` is the
transform of a probability density only if its inverse :math:`f(t)` is nonnegative on
:math:`(0, \infty)`.  Angius, Horváth et al. (Math. Probl. Eng. 2014, ID 610907) note that "there
is no known, numerically stable method to check the nonnegativity of general ME functions";
BuTools' ``CheckMEPositiveDensity`` answers ``False`` (meaning *inconclusive*) for valid densities
such as :math:`\tfrac23 (1 + \cos t) e^{-t}`.  :func:`certify` decides the question with a
certificate, following note me_pade.md §3.2-§3.3:

1. exact preprocessing on the rational :math:`N/D`: the Routh-Hurwitz test (a pole with
   :math:`\operatorname{Re} \ge 0` is not a distribution: INVALID, checked first),
   derivatives :math:`f^{(j)}(0)` (a negative first nonzero one gives a witness near zero) and
   an exact factorisation of :math:`D` over :math:`\mathbb{Q}` (multiplicities, rational poles);
2. certified pole disks (the classical bound :math:`|z - z_k| \le n |p(z_k)| / |p'(z_k)|` evaluated
   in interval arithmetic, disjointness, real roots centred on the real axis);
3. exact rules before any search (§3.3 and §1.4): all poles real with nonnegative residues,
   all poles real with a constant numerator (a hypoexponential), Descartes' rule of signs,
   the order-3 constant-numerator theorem, and the exact test :math:`c_1 \ge 2|c_{pair}|` when a
   complex pair shares the dominant real part with a real pole;
4. otherwise residues as complex intervals (Hermite form :math:`t^j e^{zt}`), an explicit tail
   bound :math:`T`, a Taylor guard on :math:`(0, h]` and branch-and-bound on :math:`[h, T]` with
   the intersection of the natural interval extension and the mean-value form.

The answer is tri-state plus ``INVALID``: ``NONNEGATIVE`` is a proof (modulo the correctness of
``mpmath.iv`` outward rounding and of exact rational arithmetic), ``NEGATIVE`` carries a witness
:math:`t` and an interval enclosure of :math:`f(t)` whose upper end is negative, ``INVALID`` means
that the transform is not that of a distribution (a pole with nonnegative real part, or a
complex dominant pole), ``INCONCLUSIVE`` says why no decision was reached (e.g. a tangential zero
that no exact rule covers).

Examples
--------
>>> from symq.me.transform import RationalLST
>>> import sympy as sp
>>> s = sp.Symbol("s")
>>> touching = RationalLST.from_expr(sp.Rational(2, 3) * (1 / (s + 1) + (s + 1) / ((s + 1)**2 + 1)))
>>> cert = certify(touching)          # f(t) = (2/3)(1 + cos t) e^{-t}, zero at t = pi
>>> cert.status.value, cert.method
('NONNEGATIVE', 'dominant pair exact test')
>>> certify(([2, -1], [2, 3, 1])).status.value   # f(0) = -1 < 0
'NEGATIVE'
"""

from __future__ import annotations

import enum
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator, Sequence

import mpmath
import numpy as np
import sympy as sp
from mpmath.libmp import to_float

from symq.core.errors import InvalidParameter

from ._context import iv, is_mpf, mp, to_global, working_dps
from .transform import RationalLST, to_mpf as _to_mpf


def to_mpf(value: Any) -> Any:
    """An exact rational in the calling thread's private context (at its current precision)."""
    return _to_mpf(value, mp)

__all__ = ["Nonnegativity", "Certificate", "certify"]


# ====================================================================== public result types
class Nonnegativity(str, enum.Enum):
    """Verdict of :func:`certify`."""

    NONNEGATIVE = "NONNEGATIVE"  #: f(t) >= 0 for all t > 0 (proved)
    NEGATIVE = "NEGATIVE"  #: f(witness) < 0 (proved by an interval enclosure)
    INVALID = "INVALID"  #: not the transform of a distribution (pole placement)
    INCONCLUSIVE = "INCONCLUSIVE"  #: no decision; see ``reason``


@dataclass(frozen=True)
class Certificate:
    """Outcome of :func:`certify`.

    Attributes
    ----------
    status : Nonnegativity
        The verdict.
    method : str
        The rule that decided (or the stage that gave up), e.g. ``"Descartes sign rule"``,
        ``"order 3 constant numerator"``, ``"dominant pair exact test"``, ``"branch and bound"``,
        ``"f^(j*)(0) < 0"``, ``"Routh-Hurwitz test"``.
    tail_bound : float or None
        For a NONNEGATIVE answer by branch and bound: the time T beyond which f > 0 was proved
        analytically (note §3.2 step 5); None when an exact rule decided.
    boxes : int
        Number of boxes examined by branch and bound.
    witness : mpmath.mpf or None
        For NEGATIVE: a time t > 0 with f(t) < 0.
    enclosure : tuple of mpmath.mpf or None
        For NEGATIVE: an interval (lo, hi) containing f(witness), with hi < 0.
    reason : str or None
        For INVALID and INCONCLUSIVE: why.
    poles : tuple of (complex, float)
        Disks (center, radius) each containing exactly one distinct pole (conjugates listed
        separately), rounded outward to double precision.  Empty when the decision came before
        the pole enclosures.
    multiplicities : tuple of int
        Multiplicity of each pole in ``poles`` (exact, from the factorisation of D).
    residues : tuple of tuple of (complex, float)
        For each pole, enclosures of the Hermite coefficients :math:`c_0, \\dots, c_{m-1}` of
        :math:`\\sum_j c_j t^j e^{zt}` in the density.
    seconds : float
        Wall time spent.
    dps : int
        Decimal precision at which the decision was reached.
    """

    status: Nonnegativity
    method: str
    tail_bound: float | None = None
    boxes: int = 0
    witness: Any = None
    enclosure: tuple[Any, Any] | None = None
    reason: str | None = None
    poles: tuple[tuple[complex, float], ...] = ()
    multiplicities: tuple[int, ...] = ()
    residues: tuple[tuple[tuple[complex, float], ...], ...] = ()
    seconds: float = 0.0
    dps: int = 0

    @property
    def is_density(self) -> bool | None:
        """True for NONNEGATIVE, False for NEGATIVE or INVALID, None for INCONCLUSIVE."""
        if self.status is Nonnegativity.NONNEGATIVE:
            return True
        if self.status is Nonnegativity.INCONCLUSIVE:
            return None
        return False

    def __bool__(self) -> bool:
        raise TypeError("a Certificate has no truth value (it is tri-state); "
                        "use cert.is_density or compare cert.status")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (numbers as floats, complex numbers as [re, im]).

        The enclosure is rounded outward (lower end down, upper end up) to doubles.
        """
        def cplx(z: complex) -> list[float]:
            return [float(z.real), float(z.imag)]

        enclosure = None
        if self.enclosure is not None:
            lo, hi = self.enclosure
            enclosure = [_float_down(lo), _float_up(hi)]
        return {
            "status": self.status.value,
            "is_density": self.is_density,
            "method": self.method,
            "tail_bound": self.tail_bound,
            "boxes": self.boxes,
            "witness": None if self.witness is None else float(self.witness),
            "enclosure": enclosure,
            "reason": self.reason,
            "poles": [{"center": cplx(c), "radius": r, "multiplicity": m}
                      for (c, r), m in zip(self.poles, self.multiplicities)],
            "residues": [[{"center": cplx(c), "radius": r} for c, r in coeffs]
                         for coeffs in self.residues],
            "seconds": self.seconds,
            "dps": self.dps,
        }

    def __str__(self) -> str:
        text = f"{self.status.value} ({self.method})"
        if self.status is Nonnegativity.NEGATIVE:
            text += (f": f({mpmath.nstr(self.witness, 8)}) in "
                     f"[{mpmath.nstr(self.enclosure[0], 6)}, {mpmath.nstr(self.enclosure[1], 6)}]")
        elif self.reason:
            text += f": {self.reason}"
        elif self.tail_bound is not None:
            text += f": tail bound T = {self.tail_bound:.4g}, {self.boxes} boxes"
        return text


# ====================================================================== small numeric helpers
class _NeedPrecision(Exception):
    """A numeric step could not be decided at the current precision."""

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(reason)
        self.method = method
        self.reason = reason


class _OutOfTime(Exception):
    pass


@contextmanager
def _precision(dps: int) -> Iterator[None]:
    """Run a block at ``dps`` digits in the calling thread's private real and interval contexts.

    ``mp`` and ``iv`` below resolve to those contexts; mpmath's global context is not touched.
    """
    with working_dps(dps, intervals=True):
        yield


def _fr(x: sp.Rational) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _ivq(q: Fraction) -> Any:
    """An interval enclosing the rational q."""
    if q.denominator == 1:
        return iv.mpf(q.numerator)
    return iv.mpf(q.numerator) / iv.mpf(q.denominator)


def _lo(x: Any) -> mpmath.mpf:
    return mp.make_mpf(x._mpi_[0])


def _hi(x: Any) -> mpmath.mpf:
    return mp.make_mpf(x._mpi_[1])


def _mid(x: Any) -> mpmath.mpf:
    return (_lo(x) + _hi(x)) / 2


def _float_down(x: Any) -> float:
    x = mp.mpf(x)
    return to_float(x._mpf_, rnd="d")


def _float_up(x: Any) -> float:
    x = mp.mpf(x)
    return to_float(x._mpf_, rnd="u")


def _re(box: Any) -> Any:
    return box.real if isinstance(box, iv.mpc) else box


def _horner(coefficients: Sequence[Any], x: Any) -> Any:
    """Evaluate an ascending coefficient list at x (any arithmetic: Fraction, iv, mp)."""
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x + c
    return acc


def _taylor_coefficients(p: Sequence[Any], z: Any, count: int) -> list[Any]:
    """:math:`p^{(j)}(z)/j!` for j < count, by repeated synthetic division."""
    work = list(p)
    out: list[Any] = []
    for _ in range(count):
        n = len(work) - 1
        if n < 0:
            out.append(0)
            continue
        acc = work[n]
        quotient: list[Any] = [None] * n
        for i in range(n - 1, -1, -1):
            quotient[i] = acc
            acc = acc * z + work[i]
        out.append(acc)
        work = quotient
    return out


def _hermite(z: Any, m: int, num: Sequence[Any], den: Sequence[Any]) -> list[Any]:
    r"""Hermite coefficients of the pole z of multiplicity m.

    With :math:`N/D = \sum_l A_l (s - z)^{-l} + \dots` the density contains
    :math:`\sum_{j<m} c_j t^j e^{zt}`, :math:`c_j = A_{j+1}/j!` (note §3.2 step 4).  Computed
    from the Taylor coefficients of N and of :math:`D/(s-z)^m` at z; with an interval box
    for z the result encloses the coefficients at the true pole.
    """
    nt = _taylor_coefficients(num, z, m)
    dt = _taylor_coefficients(den, z, 2 * m)[m:]
    q: list[Any] = []
    for j in range(m):
        acc = nt[j]
        for i in range(1, j + 1):
            acc = acc - dt[i] * q[j - i]
        q.append(acc / dt[0])
    return [q[m - 1 - j] / math.factorial(j) for j in range(m)]


def _sign(x: Any) -> int | None:
    """Sign of an exact Fraction, or the certain sign of a real interval (None if unknown)."""
    if isinstance(x, Fraction):
        return (x > 0) - (x < 0)
    if _lo(x) > 0:
        return 1
    if _hi(x) < 0:
        return -1
    return None


# ====================================================================== exact preprocessing
@dataclass
class _Exact:
    """Exact data of N/D (note §3.2 step 1)."""

    b: list[Fraction]  # numerator, ascending, length n
    a: list[Fraction]  # denominator, ascending, length n + 1, monic
    n: int
    deg_num: int
    d: list[Fraction]  # f(0), f'(0), ..., f^(n-1)(0)
    jstar: int
    factors: list[tuple[list[Fraction], int]]  # irreducible monic factors over Q, multiplicity


def _exact_data(lst: RationalLST) -> _Exact:
    n = lst.order
    b = [_fr(x) for x in lst.numerator] + [Fraction(0)] * (n - len(lst.numerator))
    a = [_fr(x) for x in lst.denominator]
    deg_num = max(k for k, c in enumerate(b) if c != 0)
    d = [_fr(x) for x in lst.derivatives_at_zero(n)]
    jstar = next(j for j, v in enumerate(d) if v != 0)  # = n - 1 - deg N (note §1.2)
    _, factor_list = lst.D.factor_list()
    factors = []
    for poly, mult in factor_list:
        coefficients = [_fr(c) for c in reversed(poly.all_coeffs())]
        lead = coefficients[-1]
        factors.append(([c / lead for c in coefficients], int(mult)))
    return _Exact(b, a, n, deg_num, d, jstar, factors)


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


# ====================================================================== Taylor guard at zero
def _taylor_guard(ex: _Exact) -> tuple[mpmath.mpf, Any, Any]:
    r"""A pole-free Taylor bound near zero (note §3.2 step 7).

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
    last_row = sum((abs(_ivq(ex.a[j])) * R ** (j - n + 1) for j in range(n)), iv.mpf(0))
    alpha = iv.mpf(max(_hi(R), _hi(last_row)))
    C = sum((abs(_ivq(ex.b[j])) * R ** (j - n + 1) for j in range(n)), iv.mpf(0))
    k = ex.jstar
    dk = abs(_ivq(ex.d[k]))
    h = iv.mpf(1) / alpha
    h2 = iv.mpf(k + 1) * dk / (iv.mpf(6) * C * alpha ** (k + 1))
    h_lo = min(_lo(h), _lo(h2))
    return mp.mpf(h_lo), C, alpha


def _taylor_enclosure(ex: _Exact, t: mpmath.mpf, C: Any, alpha: Any) -> Any:
    """Interval containing f(t) from the first nonzero Taylor term and the remainder bound."""
    k = ex.jstar
    T = iv.mpf(t)
    main = _ivq(ex.d[k]) * T ** k / math.factorial(k)
    remainder = C * alpha ** (k + 1) * iv.exp(alpha * T) * T ** (k + 1) / math.factorial(k + 1)
    return main + remainder * iv.mpf([-1, 1])


# ====================================================================== pole enclosures
@dataclass
class _Pole:
    center: Any  # mpf (real) or mpc (upper half plane representative)
    radius: mpmath.mpf
    multiplicity: int
    real: bool
    box: Any  # iv.mpf or iv.mpc containing the pole
    exact: Fraction | None = None  # the pole itself when rational
    coeffs: list[Any] = field(default_factory=list)  # Hermite coefficients (intervals)
    exact_coeffs: list[Fraction] | None = None

    @property
    def weight(self) -> int:
        """2 for an upper-half-plane pole standing for itself and its conjugate, else 1."""
        return 1 if self.real else 2

    @property
    def re_lo(self) -> mpmath.mpf:
        return _lo(_re(self.box))

    @property
    def re_hi(self) -> mpmath.mpf:
        return _hi(_re(self.box))


def _approximate_roots(p: list[Fraction], dps: int, use_polyroots: bool) -> list[Any]:
    """Approximate roots of a monic rational polynomial (numpy + Newton polish, or polyroots)."""
    d = len(p) - 1
    coeffs_mp = [to_mpf(c) for c in reversed(p)]
    if not use_polyroots:
        try:
            start = np.roots([float(c) for c in reversed(p)])
            if not np.all(np.isfinite(start)):
                raise ValueError
        except (ValueError, OverflowError, np.linalg.LinAlgError):
            use_polyroots = True
    if use_polyroots:
        return list(mp.polyroots(coeffs_mp, maxsteps=200 + 20 * d, extraprec=2 * dps * 4))
    dcoeffs_mp = [c * (d - k) for k, c in enumerate(coeffs_mp[:-1])]
    eps = mp.mpf(10) ** (-dps)
    roots = []
    for r in start:
        z = mp.mpc(float(r.real), float(r.imag)) if r.imag != 0 else mp.mpf(float(r.real))
        for _ in range(100):
            dp = mp.polyval(dcoeffs_mp, z)
            if dp == 0:
                break
            step = mp.polyval(coeffs_mp, z) / dp
            z -= step
            if abs(step) <= eps * (1 + abs(z)):
                break
        roots.append(z)
    return roots


def _disk(center: Any, real: bool, p_iv: list[Any], dp_iv: list[Any], d: int
          ) -> mpmath.mpf | None:
    """Radius 2 d |p(c)|/|p'(c)| (upper bound) of a disk about c holding a root of p."""
    Z = iv.mpf(center) if real else iv.mpc(iv.mpf(center.real), iv.mpf(center.imag))
    P, Q = _horner(p_iv, Z), _horner(dp_iv, Z)
    q_low = _lo(abs(Q))
    if not q_low > 0:
        return None
    return _hi(iv.mpf(2 * d) * iv.mpf(_hi(abs(P))) / iv.mpf(q_low))


def _enclose_factor(p: list[Fraction], mult: int, dps: int, use_polyroots: bool
                    ) -> list[_Pole] | None:
    d = len(p) - 1
    p_iv = [_ivq(c) for c in p]
    if d == 1:
        root = -p[0]
        c = to_mpf(root)
        radius = _disk(c, True, p_iv, [iv.mpf(1)], 1)
        box = iv.mpf(c) + iv.mpf([-radius, radius])
        return [_Pole(c, radius, mult, True, box, exact=root)]
    dp_iv = [_ivq(c * k) for k, c in enumerate(p)][1:]
    try:
        approx = _approximate_roots(p, dps, use_polyroots)
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
            poles.append(_Pole(c, radius, mult, True, box))
            n_real += 1
        elif z.imag > 0:
            radius = _disk(z, False, p_iv, dp_iv, d)
            if radius is None:
                return None
            R = iv.mpf([-radius, radius])
            box = iv.mpc(iv.mpf(z.real) + R, iv.mpf(z.imag) + R)
            poles.append(_Pole(z, radius, mult, False, box))
            n_upper += 1
    if n_real + 2 * n_upper != d:
        return None
    return poles


def _disjoint(poles: list[_Pole]) -> bool:
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
            if not _lo(abs(diff)) > _hi(iv.mpf(ri) + iv.mpf(rj)):
                return False
    return True


def _enclose_poles(ex: _Exact, dps: int) -> list[_Pole]:
    r"""Certified disjoint disks, one per distinct pole (note §3.2 step 2).

    Each irreducible factor p of D (degree d, simple roots) gets, for every approximate root
    c, the disk :math:`|z - c| \le 2 d |p(c)|/|p'(c)|`, which contains a root of p.  Real
    approximations are centred on the real axis.  When all disks are pairwise disjoint (and
    there are d of them per factor) each contains exactly one root, and a disk centred on the
    real axis contains a real root (conjugate symmetry).

    Raises
    ------
    _NeedPrecision
        When the disks cannot be separated at this precision.
    """
    for use_polyroots in (False, True):
        poles: list[_Pole] = []
        ok = True
        for p, mult in ex.factors:
            found = _enclose_factor(p, mult, dps, use_polyroots)
            if found is None:
                ok = False
                break
            poles.extend(found)
        if ok and _disjoint(poles):
            return poles
    raise _NeedPrecision("pole enclosure", "could not separate the poles by disjoint disks")


def _attach_coefficients(ex: _Exact, poles: list[_Pole]) -> None:
    """Hermite coefficients: exact for rational poles, interval enclosures for all."""
    b_iv = [_ivq(c) for c in ex.b]
    a_iv = [_ivq(c) for c in ex.a]
    for P in poles:
        if P.exact is not None:
            P.exact_coeffs = _hermite(P.exact, P.multiplicity, ex.b, ex.a)
            P.coeffs = [_ivq(c) for c in P.exact_coeffs]
        else:
            P.coeffs = _hermite(P.box, P.multiplicity, b_iv, a_iv)
        for c in P.coeffs:
            parts = (c.real, c.imag) if isinstance(c, iv.mpc) else (c,)
            if not all(mp.isfinite(_lo(x)) and mp.isfinite(_hi(x)) for x in parts):
                raise _NeedPrecision("residues", "residue enclosures are not finite")


# ====================================================================== interval evaluation
class _Evaluator:
    r"""Enclosures of :math:`g(t) = e^{-\mu t} f(t)`, which has the sign of f (note §3.2 step 6).

    Factoring out the dominant exponential keeps the natural interval extension tight for
    large t (the dominant term becomes an almost constant function of t).  Clusters of close
    poles (see :func:`_clusters`) are enclosed both term by term and in Newton form, and the
    two enclosures are intersected.
    """

    def __init__(self, poles: list[_Pole], mu: mpmath.mpf,
                 clusters: Sequence[tuple[list[_Pole], list[_Pole]]] = ()) -> None:
        self.mu = mu
        self.M = iv.mpf(mu)
        clustered = {id(P) for members, _ in clusters for P in members}
        self.plain = [self._term(P) for P in poles if id(P) not in clustered]
        self.clusters = [([self._term(P) for P in members], [self._term(P) for P in newton])
                         for members, newton in clusters]

    def _term(self, P: _Pole) -> tuple[bool, int, Any, list[Any], list[Any]]:
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
                g += (_horner(c, I) if len(c) > 1 else c[0]) * E
                if derivative:
                    dg += (_horner(dc, I) if len(dc) > 1 else dc[0]) * E
            else:
                E = iv.exp(iv.mpc(w.real * I, w.imag * I))
                g += weight * ((_horner(c, I) if len(c) > 1 else c[0]) * E).real
                if derivative:
                    dg += weight * ((_horner(dc, I) if len(dc) > 1 else dc[0]) * E).real
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
        return max(_lo(g), _lo(mv)), gm


def _intersect(x: Any, y: Any) -> Any:
    lo, hi = max(_lo(x), _lo(y)), min(_hi(x), _hi(y))
    if lo > hi:  # both contain the true value, so this cannot happen; stay safe
        return x
    return iv.mpf([lo, hi])


def _hull(boxes: Sequence[Any], real: bool) -> Any:
    if real:
        return iv.mpf([min(_lo(b) for b in boxes), max(_hi(b) for b in boxes)])
    re = iv.mpf([min(_lo(b.real) for b in boxes), max(_hi(b.real) for b in boxes)])
    im = iv.mpf([min(_lo(b.imag) for b in boxes), max(_hi(b.imag) for b in boxes)])
    return iv.mpc(re, im)


def _poly_mul(p: Sequence[Any], q: Sequence[Any]) -> list[Any]:
    out: list[Any] = [0] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            out[i + j] = out[i + j] + x * y
    return out


def _rest_denominator(members: list[_Pole], poles: list[_Pole]) -> list[Any]:
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
            rest = _poly_mul(rest, factor)
    return rest


def _intersect_any(x: Any, y: Any) -> Any:
    if isinstance(x, iv.mpc) or isinstance(y, iv.mpc):
        x, y = (v if isinstance(v, iv.mpc) else iv.mpc(v, 0) for v in (x, y))
        return iv.mpc(_intersect(x.real, y.real), _intersect(x.imag, y.imag))
    return _intersect(x, y)


def _newton_form(members: list[_Pole], poles: list[_Pole], b_iv: list[Any]) -> list[_Pole]:
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
        nt = _taylor_coefficients(b_iv, B, order + 1)
        dt = _taylor_coefficients(rest, B, order + 1)
        q: list[Any] = []
        for r in range(order + 1):
            acc = nt[r]
            for i in range(1, r + 1):
                acc = acc - dt[i] * q[r - i]
            q.append(acc / dt[0])
        beta[j] = _intersect_any(beta[j], q[order])
    zero = iv.mpf(0) if real else iv.mpc(0, 0)
    pseudo = []
    for j in range(k):
        box = _hull(Z[: j + 1], real)
        coeffs = [zero] * j + [beta[j] / math.factorial(j)]
        center = _mid(box) if real else mp.mpc(_mid(box.real), _mid(box.imag))
        pseudo.append(_Pole(center, mp.mpf(0), j + 1, real, box, coeffs=coeffs))
    return pseudo


def _clusters(poles: list[_Pole], scale: mpmath.mpf, b_iv: list[Any]
              ) -> list[tuple[list[_Pole], list[_Pole]]]:
    """Groups of simple poles (real with real, upper-half-plane with upper) closer than
    ``0.05 * scale`` to each other (single linkage), with their Newton forms."""
    out = []
    tau = scale / 20
    for real in (True, False):
        cands = [P for P in poles if P.real == real and P.multiplicity == 1]
        parent = list(range(len(cands)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i in range(len(cands)):
            for j in range(i + 1, len(cands)):
                if abs(mp.mpc(cands[i].center) - mp.mpc(cands[j].center)) <= tau:
                    parent[find(i)] = find(j)
        groups: dict[int, list[_Pole]] = {}
        for i, P in enumerate(cands):
            groups.setdefault(find(i), []).append(P)
        for members in groups.values():
            if len(members) > 1:
                members.sort(key=lambda P: -P.re_hi)
                out.append((members, _newton_form(members, poles, b_iv)))
    return out


# ====================================================================== tail bound
def _tail_bound(margin: mpmath.mpf, dominant: _Pole, others: list[_Pole], m: int,
                group: Sequence[_Pole] = ()) -> mpmath.mpf | None:
    r"""T such that the dominant term wins for all t >= T (note §3.2 step 5).

    With the dominant real pole :math:`z_1` (multiplicity m, leading Hermite coefficient at
    least ``margin`` > 0 in absolute value) and :math:`\delta_k = \min \operatorname{Re} z_1 -
    \max \operatorname{Re} z_k`, for :math:`t \ge T \ge \max_{k,j} (j-m+1)/\delta_k`

    .. math::

        \Big|\frac{e^{-z_1 t} f(t)}{t^{m-1}} - c_{1,m-1}\Big| \le
        \sum_{j<m-1} |c_{1j}| T^{j-m+1} + \sum_{k \ge 2} \sum_j |c_{kj}| T^{j-m+1}
        e^{-\delta_k T} =: S(T),

    each term being nonincreasing in t.  T is doubled until :math:`S(T) \le` margin/2 and then
    refined by bisection.  ``group`` lists poles on the dominant vertical line whose joint
    contribution is already accounted for in ``margin`` (rule (d)).
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
        mags = [iv.mpf(_hi(abs(c))) * P.weight for c in P.coeffs]
        for j in range(len(mags)):
            if j - m + 1 > 0:
                t_min = max(t_min, mp.mpf(j - m + 1) / delta)
        terms.append((iv.mpf(delta), mags))
    own = [iv.mpf(_hi(abs(c))) for c in dominant.coeffs[: m - 1]]
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
        return _hi(total)

    if not terms and not own:
        return mp.mpf(0)
    deltas = [_lo(dl) for dl, _ in terms]
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


# ====================================================================== the rules
@dataclass
class _Run:
    """Mutable state of one certification (report data, limits)."""

    ex: _Exact
    dps: int
    deadline: float | None
    max_boxes: int
    min_width: float
    poles: list[_Pole] = field(default_factory=list)
    boxes: int = 0
    tail: float | None = None

    def check_time(self) -> None:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _OutOfTime


@dataclass
class _Verdict:
    status: Nonnegativity
    method: str
    reason: str | None = None
    witness: Any = None
    enclosure: tuple[Any, Any] | None = None


def _rule_initial_sign(run: _Run) -> _Verdict | None:
    r"""Note §3.2 step 1: if the first nonzero :math:`f^{(j)}(0)` is negative, f < 0 near 0.

    The witness is the Taylor-guard length h (pole-free, :func:`_taylor_guard`); its enclosure
    comes from the Taylor polynomial and the remainder bound.
    """
    ex = run.ex
    if ex.d[ex.jstar] > 0:
        return None
    h, C, alpha = _taylor_guard(ex)
    enc = _taylor_enclosure(ex, h, C, alpha)
    if not _hi(enc) < 0:  # cannot happen mathematically; keep the answer honest
        return _Verdict(Nonnegativity.INCONCLUSIVE, "f^(j*)(0) < 0",
                        reason=f"f^({ex.jstar})(0) < 0 but no witness was enclosed")
    return _Verdict(Nonnegativity.NEGATIVE, "f^(j*)(0) < 0", witness=h,
                    enclosure=(_lo(enc), _hi(enc)))


def _rule_hurwitz(run: _Run) -> _Verdict | None:
    """Exact Routh-Hurwitz test: a pole with Re >= 0 is not a distribution (note §1.2)."""
    ex = run.ex
    if _routh_hurwitz(ex.a):
        return None
    if _imaginary_axis_root(ex.a):
        reason = "pole on the imaginary axis: the transform is not that of a distribution"
    else:
        reason = "pole in the right half plane: the transform is not that of a distribution"
    try:
        poles = _enclose_poles(ex, run.dps)
        worst = max(poles, key=lambda P: P.re_lo)
        run.poles = poles
        reason += f" (pole near {mp.nstr(worst.center, 8)})"
    except _NeedPrecision:
        pass
    return _Verdict(Nonnegativity.INVALID, "Routh-Hurwitz test", reason=reason)


def _rule_all_real(run: _Run) -> _Verdict | None:
    r"""Rules for all-real poles (note §3.3 (a), (c)).

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
        return _Verdict(Nonnegativity.NONNEGATIVE,
                        "all poles real, constant numerator (hypoexponential)")
    signs = []
    for P in poles:
        values = P.exact_coeffs if P.exact_coeffs is not None else P.coeffs
        signs.append([_sign(v) for v in values])
    if all(sg is not None and sg >= 0 for row in signs for sg in row):
        return _Verdict(Nonnegativity.NONNEGATIVE, "all poles real, residues positive")
    if all(P.multiplicity == 1 for P in poles):
        ordered = [sg[0] for _, sg in sorted(zip(poles, signs), key=lambda x: -x[0].center)]
        if any(sg is None or sg == 0 for sg in ordered):
            raise _NeedPrecision("Descartes sign rule", "residue signs not certain")
        changes = sum(1 for u, v in zip(ordered, ordered[1:]) if u != v)
        if changes == 1 and ordered[0] > 0 and ex.d[0] >= 0:
            return _Verdict(Nonnegativity.NONNEGATIVE, "Descartes sign rule")
    return None


def _rule_order3(run: _Run) -> _Verdict | None:
    r"""Note §1.4: an ME(3) with constant numerator is a density iff the dominant pole is real.

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
        return _Verdict(Nonnegativity.NONNEGATIVE, "order 3 constant numerator")
    return _Verdict(Nonnegativity.INVALID, "order 3 constant numerator",
                    reason="complex dominant pole: f changes sign infinitely often")


def _dominant_group(poles: list[_Pole]) -> list[_Pole]:
    """Poles that may have the largest real part (their real-part intervals reach the max)."""
    floor = max(P.re_lo for P in poles)
    return [P for P in poles if P.re_hi >= floor]


def _shared_pair_exact(ex: _Exact, R: _Pole) -> tuple[Fraction, Fraction, Fraction] | None:
    r"""Exact test that a complex pair shares the real part of the rational simple pole R.

    With :math:`P(u) = D(u - \lambda)` and :math:`Q = P/u`, the poles on the line
    :math:`\operatorname{Re} = -\lambda` other than :math:`-\lambda` are the imaginary roots of
    Q, the common real roots y of Re Q(iy) and Im Q(iy).  Returns
    :math:`(c_1, |c_{pair}|^2, \omega^2)` exactly when they are exactly one simple pair
    :math:`\pm i\omega`, else None.
    """
    lam = -R.exact
    P = _taylor_coefficients(ex.a, -lam, ex.n + 1)  # ascending coefficients of D(u - lambda)
    if P[0] != 0 or P[1] == 0:
        return None
    Q = P[1:]
    g = _imaginary_axis_gcd(Q)
    if g.degree() != 2:
        return None
    g = g.monic()
    coeffs = [_fr(c) for c in reversed(g.all_coeffs())]  # y^2 + c1 y + c0
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

    N_shift = _taylor_coefficients(ex.b, -lam, ex.n)
    dP = [k * c for k, c in enumerate(P)][1:]
    c1 = _horner(ex.b, -lam) / _horner([k * c for k, c in enumerate(ex.a)][1:], -lam)
    cpair2 = at_i_omega(N_shift) / at_i_omega(dP)
    return c1, cpair2, w


def _evaluation_terms(run: _Run, mu: mpmath.mpf, excluded: Sequence[_Pole] = ()
                      ) -> tuple[_Evaluator, list[_Pole]]:
    """The evaluator of g = e^{-mu t} f and the term list for tail bounds (clusters in Newton
    form)."""
    scale = abs(mu) if mu != 0 else mp.mpf(1)
    clusters = _clusters(run.poles, scale, [_ivq(c) for c in run.ex.b])
    skip = {id(P) for P in excluded}
    # tail terms: Newton form for clusters away from the dominant line, single poles otherwise
    newton_clusters = [(members, newton) for members, newton in clusters
                       if not any(id(P) in skip for P in members)]
    replaced = {id(P) for members, _ in newton_clusters for P in members}
    terms = [P for P in run.poles if id(P) not in replaced]
    terms += [Q for _, newton in newton_clusters for Q in newton]
    return _Evaluator(run.poles, mu, clusters), terms


def _witness_search(run: _Run, ev: _Evaluator, times: Iterator[mpmath.mpf]
                    ) -> _Verdict | None:
    """The first t in ``times`` whose enclosure of f(t) is certainly negative."""
    for t in times:
        run.check_time()
        enc = ev.f_point(t)
        if _hi(enc) < 0:
            return _Verdict(Nonnegativity.NEGATIVE, "", witness=t, enclosure=(_lo(enc), _hi(enc)))
    return None


def _rule_dominant_pair(run: _Run, R: _Pole, pair: _Pole
                        ) -> tuple[_Verdict | None, mpmath.mpf | None, mpmath.mpf | None]:
    r"""Note §3.2 step 3b / §3.3 (d): one real pole and one pair on the dominant line.

    :math:`e^{\lambda t} (c_1 e^{-\lambda t} + 2 \operatorname{Re} c_p e^{(-\lambda + i\omega) t})
    = c_1 + 2|c_p| \cos(\omega t + \varphi)`, which is :math:`\ge 0` for all t iff
    :math:`c_1 \ge 2|c_p|` (exact rational test on :math:`c_1^2` and :math:`|c_p|^2`).  With no
    other pole this decides.  With other poles:

    * :math:`c_1 > 2|c_p|` leaves the margin :math:`c_1 - 2|c_p|` for the tail bound;
    * :math:`c_1 = 2|c_p|`: the dominant group G is :math:`\ge 0` with zeros at
      :math:`t_k = (\pi - \varphi + 2\pi k)/\omega`, so the sign of f there is the sign of the
      rest R.  If R has a strictly dominant real pole with a positive residue, R > 0 beyond its
      own tail bound T and f = G + R > 0 there; branch and bound covers [h, T].  If that
      residue is negative, f(t_k) = R(t_k) < 0 for large k;
    * :math:`c_1 < 2|c_p|`: f < 0 near :math:`t_k` for large k.

    Returns
    -------
    verdict, margin, T
        A verdict; or a lower bound of :math:`c_1 - 2|c_p|` for the general path; or a tail
        bound T already established (touching case).
    """
    ex = run.ex
    if R.exact is None or R.multiplicity != 1 or pair.multiplicity != 1:
        raise _NeedPrecision("dominant pair exact test",
                             "a complex pair and a real pole (nearly) share the dominant real "
                             "part; no exact test applies (irrational or multiple pole)")
    shared = _shared_pair_exact(ex, R)
    if shared is None:
        raise _NeedPrecision("dominant pole", "a complex pair and the dominant real pole have "
                             "nearly equal real parts; not separated at this precision")
    c1, cp2, w = shared
    others = len(run.poles) > 2
    ok = c1 > 0 and c1 * c1 >= 4 * cp2
    strict = c1 > 0 and c1 * c1 > 4 * cp2
    method = "dominant pair exact test"
    if ok and not others:
        return _Verdict(Nonnegativity.NONNEGATIVE, method), None, None
    if strict:
        margin = _ivq(c1) - 2 * iv.sqrt(_ivq(cp2))
        return None, _lo(margin), None

    cp = pair.coeffs[0]
    phi = mp.arg(mp.mpc(_mid(cp.real), _mid(cp.imag)))
    omega = mp.sqrt(to_mpf(w))
    period = 2 * mp.pi / omega
    first = (mp.pi - phi) % (2 * mp.pi) / omega
    if not first > 0:
        first += period

    def touching_times(start: mpmath.mpf) -> Iterator[mpmath.mpf]:
        k0 = max(0, int(mp.ceil((start - first) / period)))
        return (first + (k0 + k) * period for k in range(200))

    if ok:  # c1 = 2|c_pair| with other poles
        rest = [P for P in run.poles if P is not R and P is not pair]
        group = _dominant_group(rest)
        undecided = _Verdict(Nonnegativity.INCONCLUSIVE, method,
                             reason="touching zeros: c_1 = 2|c_pair| on the dominant line and the "
                                    "remaining poles have no strictly dominant real pole")
        if len(group) != 1 or not group[0].real:
            return undecided, None, None
        R2 = group[0]
        m2 = R2.multiplicity
        lead = R2.exact_coeffs[m2 - 1] if R2.exact_coeffs is not None else R2.coeffs[m2 - 1]
        sign = _sign(lead)
        if sign is None:
            raise _NeedPrecision(method, "sign of the residue of the second pole not certain")
        lead_iv = _ivq(lead) if isinstance(lead, Fraction) else lead
        ev, terms = _evaluation_terms(run, R.center, [R, pair, R2])
        T = _tail_bound(_lo(abs(lead_iv)), R2, terms, m2, group=[R, pair])
        if T is None:
            raise _NeedPrecision(method, "no tail bound for the remaining poles")
        if sign > 0:
            return None, None, T
        verdict = _witness_search(run, ev, touching_times(T))
        if verdict is None:
            return undecided, None, None
        verdict.method = method
        return verdict, None, None

    # c1 < 2|c_pair|: f < 0 near t_k for large k
    ev, terms = _evaluation_terms(run, R.center, [R, pair])
    margin_iv = 2 * iv.sqrt(_ivq(cp2)) - _ivq(c1)
    start = mp.mpf(0)
    if others and _lo(margin_iv) > 0:
        T = _tail_bound(_lo(margin_iv), R, terms, 1, group=[pair])
        start = T if T is not None else start
    verdict = _witness_search(run, ev, touching_times(start))
    if verdict is None:
        return _Verdict(Nonnegativity.INCONCLUSIVE, method,
                        reason="c_1 < 2|c_pair| but no witness was enclosed"), None, None
    verdict.method = method
    return verdict, None, None


def _branch_and_bound(run: _Run, ev: _Evaluator, h: mpmath.mpf, T: mpmath.mpf) -> _Verdict:
    """Note §3.2 step 6: prove g > 0 on [h, T] or find a certified negative value."""
    stack = [(h, T)] if h < T else []
    min_width = mp.mpf(run.min_width)
    while stack:
        a, b = stack.pop()
        run.boxes += 1
        if run.boxes > run.max_boxes:
            return _Verdict(Nonnegativity.INCONCLUSIVE, "branch and bound",
                            reason=f"more than max_boxes={run.max_boxes} boxes needed "
                                   f"(last box [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}])")
        if run.boxes % 16 == 0:
            run.check_time()
        m = mp.sqrt(a * b) if a > 0 and b > 4 * a else (a + b) / 2
        low, gm = ev.box(a, b, m)
        if low > 0:
            continue
        if _hi(gm) < 0:
            enc = ev.f_point(m)
            return _Verdict(Nonnegativity.NEGATIVE, "branch and bound", witness=m,
                            enclosure=(_lo(enc), _hi(enc)))
        if b - a < min_width:
            return _Verdict(Nonnegativity.INCONCLUSIVE, "branch and bound",
                            reason=f"possible zero near t={mp.nstr(m, 12)} "
                                   f"(box width below min_width={run.min_width:g})")
        stack.append((m, b))
        stack.append((a, m))
    return _Verdict(Nonnegativity.NONNEGATIVE, "branch and bound")


def _hunt_witness(run: _Run) -> _Verdict | None:
    """Search [h, 60/|Re z_1|] for a certified negative value when no rule could decide.

    Used only to turn an INCONCLUSIVE answer into NEGATIVE; it never proves nonnegativity.
    """
    if not run.poles or not all(P.coeffs for P in run.poles):
        return None
    mu = max(P.re_lo for P in run.poles)
    if not mu < 0:
        return None
    h, _, _ = _taylor_guard(run.ex)
    ev, _ = _evaluation_terms(run, mp.mpf(mu))
    scan = _Run(run.ex, run.dps, run.deadline, run.max_boxes, run.min_width, run.poles)
    verdict = _branch_and_bound(scan, ev, h, 60 / abs(mu))
    run.boxes += scan.boxes
    if verdict.status is Nonnegativity.NEGATIVE:
        verdict.method = "branch and bound (witness search)"
        return verdict
    return None


def _decide(run: _Run) -> _Verdict:
    """Rules in the order of note §3.2/§3.3 at the current precision."""
    ex = run.ex
    run.poles = _enclose_poles(ex, run.dps)
    _attach_coefficients(ex, run.poles)
    verdict = _rule_all_real(run) or _rule_order3(run)
    if verdict is not None:
        return verdict
    run.check_time()

    group = _dominant_group(run.poles)
    real_group = [P for P in group if P.real]
    complex_group = [P for P in group if not P.real]
    if not real_group:
        return _Verdict(Nonnegativity.INVALID, "dominant pole",
                        reason="complex dominant pole: f changes sign infinitely often")
    if len(real_group) > 1 or len(complex_group) > 1:
        raise _NeedPrecision("dominant pole", "several poles (nearly) share the dominant real "
                                              "part")
    R = real_group[0]
    m = R.multiplicity
    pair_group: list[_Pole] = []
    T_touching = None
    if complex_group:
        verdict, margin, T_touching = _rule_dominant_pair(run, R, complex_group[0])
        if verdict is not None:
            return verdict
        pair_group = complex_group
    else:
        lead = R.exact_coeffs[m - 1] if R.exact_coeffs is not None else R.coeffs[m - 1]
        sign = _sign(lead)
        if sign is None:
            raise _NeedPrecision("dominant residue", "sign of the dominant residue not certain")
        lead_iv = _ivq(lead) if isinstance(lead, Fraction) else lead
        margin = _lo(abs(lead_iv))
        if sign < 0:
            ev, terms = _evaluation_terms(run, R.center, [R])
            T = _tail_bound(margin, R, terms, m)
            if T is None:
                raise _NeedPrecision("dominant residue", "no tail bound")
            T = max(T, mp.mpf(2) ** -10)
            verdict = _witness_search(run, ev, (T * 2 ** k for k in range(60)))
            if verdict is None:
                return _Verdict(Nonnegativity.INCONCLUSIVE, "dominant residue negative",
                                reason="dominant residue < 0 but no witness was enclosed")
            verdict.method = "dominant residue negative"
            return verdict

    ev, terms = _evaluation_terms(run, R.center, [R, *pair_group])
    if T_touching is not None:
        T = T_touching
    else:
        T = _tail_bound(margin, R, terms, m, group=pair_group)
    if T is None:
        raise _NeedPrecision("tail bound", "no tail bound could be established")
    run.tail = float(T)
    h, _, _ = _taylor_guard(ex)
    verdict = _branch_and_bound(run, ev, h, T)
    if T_touching is not None:
        verdict.method = "dominant pair exact test + branch and bound"
    return verdict


# ====================================================================== front door
def _as_lst(obj: Any) -> RationalLST:
    if isinstance(obj, RationalLST):
        return obj
    inner = getattr(obj, "lst", None)
    if isinstance(inner, RationalLST):
        return inner
    if isinstance(obj, sp.Expr):
        return RationalLST.from_expr(obj)
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        return RationalLST.from_coefficients(obj[0], obj[1])
    raise InvalidParameter(
        "obj", type(obj).__name__,
        "a RationalLST, an object with a .lst RationalLST, a sympy rational function of s, or "
        "a pair (numerator, denominator) of ascending coefficient sequences")


def _report(run: _Run) -> dict[str, Any]:
    poles, mults, residues = [], [], []

    def disk(x: Any) -> tuple[complex, float]:
        if isinstance(x, iv.mpc):
            re, im = x.real, x.imag
        else:
            re, im = x, iv.mpf(0)
        cr, ci = float(_mid(re)), float(_mid(im))
        dr = max(abs(_lo(re) - cr), abs(_hi(re) - cr))
        di = max(abs(_lo(im) - ci), abs(_hi(im) - ci))
        return complex(cr, ci), _float_up(mp.sqrt(dr * dr + di * di))

    for P in run.poles:
        copies = [False] if P.real else [False, True]
        for conj in copies:
            c, r = disk(P.box)
            poles.append((c.conjugate() if conj else c, r))
            mults.append(P.multiplicity)
            coeffs = []
            for x in P.coeffs:
                cc, rr = disk(x)
                coeffs.append((cc.conjugate() if conj else cc, rr))
            residues.append(tuple(coeffs))
    return {"poles": tuple(poles), "multiplicities": tuple(mults), "residues": tuple(residues)}


def certify(obj: Any, *, dps: int = 40, max_boxes: int = 20000, min_width: float = 1e-12,
            time_budget: float | None = None) -> Certificate:
    r"""Decide, with a certificate, whether an ME transform has a nonnegative density.

    Parameters
    ----------
    obj : RationalLST, object with ``.lst``, sympy expression or (numerator, denominator)
        The exact rational Laplace transform :math:`N(s)/D(s)` (ascending coefficients for the
        pair form; floats are taken at their exact binary value).
    dps : int
        Working decimal precision of the interval arithmetic (note §3.2 step 2 asks
        ``dps >= 40``).  Undecided numeric steps are retried at 2x and 4x this precision.
    max_boxes : int
        Budget of branch-and-bound boxes; beyond it the answer is INCONCLUSIVE.
    min_width : float
        Smallest box width in t; a box of this width that is neither proved positive nor
        proved negative gives INCONCLUSIVE ("possible zero near t").
    time_budget : float or None
        Wall-time budget in seconds (INCONCLUSIVE when exceeded), None for no limit.

    Returns
    -------
    Certificate
        ``status`` NONNEGATIVE (proof), NEGATIVE (witness t and an enclosure of f(t) with a
        negative upper end), INVALID (a pole with Re >= 0, or a complex dominant pole) or
        INCONCLUSIVE (with the reason).

    Raises
    ------
    InvalidParameter
        For input that is not a normalised rational transform (see
        :meth:`RationalLST.from_coefficients`) and for out-of-range options.

    Notes
    -----
    Rules, in order (Angius, Horváth et al. 2014; note me_pade.md §3.2-§3.3, §1.4):

    1. exact Routh-Hurwitz test; failure -> INVALID (pole with Re >= 0).  It comes first:
       such a transform is not that of a distribution at all, whatever f does near 0;
    2. exact :math:`f^{(j)}(0)`; the first nonzero one negative -> NEGATIVE near 0;
    3. certified pole disks; residues/Hermite coefficients (exact for rational poles);
    4. all poles real: constant numerator, nonnegative coefficients, Descartes' rule;
    5. order 3 with constant numerator: dominant pole real <=> density (exact);
    6. complex dominant pole -> INVALID; a pair sharing the dominant line with a real pole:
       exact test :math:`c_1 \ge 2|c_{pair}|`;
    7. dominant residue < 0 -> NEGATIVE at large t; else tail bound T, Taylor guard h and
       branch-and-bound on [h, T].

    A tangential zero that no exact rule covers cannot be certified by interval methods and
    ends INCONCLUSIVE.  All arithmetic runs in the calling thread's private mpmath contexts
    (:mod:`symq.core.precision`): mpmath's global precision is never changed and concurrent calls
    from several threads give the same certificates as serial ones.

    Examples
    --------
    >>> certify(([6], [6, 11, 6, 1])).method    # hypoexponential with rates 1, 2, 3
    'all poles real, constant numerator (hypoexponential)'
    >>> certify(([2, 1], [2, -1, 1])).status.value   # poles 1/2 ± i sqrt(7)/2
    'INVALID'
    """
    lst = _as_lst(obj)
    if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or not 15 <= dps <= 2000:
        raise InvalidParameter("dps", dps, "an integer in [15, 2000]")
    if isinstance(max_boxes, bool) or not isinstance(max_boxes, (int, np.integer)) \
            or max_boxes < 1:
        raise InvalidParameter("max_boxes", max_boxes, "a positive integer")
    try:
        min_width_ok = float(min_width) > 0 and math.isfinite(float(min_width))
    except (TypeError, ValueError):
        min_width_ok = False
    if not min_width_ok:
        raise InvalidParameter("min_width", min_width, "a positive finite number")
    if time_budget is not None:
        try:
            budget_ok = float(time_budget) > 0
        except (TypeError, ValueError):
            budget_ok = False
        if not budget_ok:
            raise InvalidParameter("time_budget", time_budget,
                                   "a positive number of seconds or None")

    start = time.perf_counter()
    deadline = None if time_budget is None else start + float(time_budget)
    ex = _exact_data(lst)
    verdict: _Verdict | None = None
    run = _Run(ex, int(dps), deadline, int(max_boxes), float(min_width))
    last: _NeedPrecision | None = None
    try:
        with _precision(run.dps):
            verdict = _rule_hurwitz(run) or _rule_initial_sign(run)
        if verdict is None:
            for factor in (1, 2, 4):
                run.dps = int(dps) * factor
                run.boxes = 0
                run.tail = None
                try:
                    with _precision(run.dps):
                        verdict = _decide(run)
                    break
                except _NeedPrecision as exc:
                    last = exc
            if verdict is None:
                assert last is not None
                verdict = _Verdict(Nonnegativity.INCONCLUSIVE, last.method,
                                   reason=f"{last.reason} (tried up to dps={run.dps})")
            if (verdict.status is Nonnegativity.INCONCLUSIVE
                    and verdict.method != "branch and bound"):
                try:
                    with _precision(run.dps):
                        verdict = _hunt_witness(run) or verdict
                except _OutOfTime:  # keep the reason of the INCONCLUSIVE answer
                    pass
    except _OutOfTime:
        verdict = _Verdict(Nonnegativity.INCONCLUSIVE, "time budget",
                           reason=f"time budget of {float(time_budget):g} s exceeded")
    with _precision(run.dps):
        report = _report(run)
    nonneg_bb = (verdict.status is Nonnegativity.NONNEGATIVE
                 and verdict.method.endswith("branch and bound"))
    return Certificate(
        status=verdict.status,
        method=verdict.method,
        tail_bound=run.tail if nonneg_bb else None,
        boxes=run.boxes,
        witness=to_global(verdict.witness),
        enclosure=to_global(verdict.enclosure),
        reason=verdict.reason,
        seconds=time.perf_counter() - start,
        dps=run.dps,
        **report,
    )
