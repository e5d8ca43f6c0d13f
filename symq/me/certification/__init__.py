r"""Certified nonnegativity of matrix-exponential (ME) densities.

A rational Laplace transform :math:`f^*(s) = N(s)/D(s)` with :math:`N(0) = D(0)` is the
transform of a probability density only if its inverse :math:`f(t)` is nonnegative on
:math:`(0, \infty)`.  Angius, Horváth et al. (Math. Probl. Eng. 2014, ID 610907) note that "there
is no known, numerically stable method to check the nonnegativity of general ME functions";
BuTools' ``CheckMEPositiveDensity`` answers ``False`` (meaning *inconclusive*) for valid densities
such as :math:`\tfrac23 (1 + \cos t) e^{-t}` (it converts to a phase-type representation, which
exists only for densities that are positive on :math:`(0, \infty)` with a unique dominant pole,
O'Cinneide 1990).  :func:`certify` decides the question with a certificate.

The procedure
-------------
Every step works on the exact rational :math:`N/D` (a float fit is first rounded to rationals, and
the certificate refers to that rational function):

1. **Exact preprocessing** (:mod:`~symq.me.certification.exact`): the Routh-Hurwitz test (a pole
   with :math:`\operatorname{Re} \ge 0` is not a distribution: INVALID, checked first); the
   derivatives :math:`f^{(j)}(0)` from the expansion at infinity (derivations/me-pade.md, step
   3), where a negative first nonzero one gives a witness near zero (step 7); the factorisation
   of :math:`D` over :math:`\mathbb{Q}` (exact multiplicities, rational poles).
2. **Pole enclosures** (:mod:`~symq.me.certification.enclosures`): for each approximate root
   :math:`z_k` of an irreducible factor :math:`p` of degree :math:`d`, the disk
   :math:`|z - z_k| \le 2 d |p(z_k)|/|p'(z_k)|` (the classical bound, doubled) in interval
   arithmetic; pairwise disjoint disks hold one root each, disks centred on the real axis a real
   root.
3. **Dominant pole** (:mod:`~symq.me.certification.search`): a strictly dominant complex pole
   makes f change sign infinitely often (INVALID); a complex pair on the dominant vertical line
   of a real pole goes to exact rule (d).
4. **Hermite coefficients**: the coefficients :math:`c_{k,j}` of :math:`t^j e^{z_k t}` as
   (complex) intervals over the disks, exact for rational poles; a negative leading coefficient
   of the dominant real pole means f < 0 for large t (a witness is searched).
5. **Tail bound** (:mod:`~symq.me.certification.intervals`): a time :math:`T` beyond which the
   dominant term outweighs the sum of all others.
6. **Branch and bound** on :math:`[h, T]`: each box is enclosed by the intersection of the
   natural interval extension and the mean-value form of :math:`g = e^{-\mu t} f`; a box with a
   positive lower bound is accepted, a point enclosure with a negative upper end is a witness,
   a box narrower than ``min_width`` ends INCONCLUSIVE ("possible zero near t").
7. **Taylor guard** near zero: f has the sign of its first nonzero derivative
   :math:`d_{j^*}` on :math:`(0, h]`, by a bound that needs no pole enclosure, so the search
   starts at :math:`h`.
8. **Output**: NONNEGATIVE (a proof), NEGATIVE (witness and enclosure), INVALID or
   INCONCLUSIVE (with the reason).

Exact rules, tried before any search (:mod:`~symq.me.certification.exact`):

(a) all poles real: with a constant numerator f is a convolution of exponential densities (a
    hypoexponential); with every Hermite coefficient :math:`\ge 0`, a positive combination of
    :math:`t^j e^{-\lambda t}`;
(b) order 3 with a constant numerator (:math:`f(0) = f'(0) = 0`): a density iff the dominant pole
    is real (derivations/me-pade.md, steps 11-12);
(c) all poles real and simple: Descartes' rule of signs for exponential sums (Pólya-Szegő): the
    number of zeros of :math:`\sum_i c_i e^{-\lambda_i t}` is at most the number of sign changes of
    the :math:`c_i` ordered by decay rate, so one sign change with a positive dominant
    coefficient and :math:`f(0) \ge 0` leaves no zero in :math:`(0, \infty)`;
(d) one real pole and one simple complex pair on the dominant vertical line:
    :math:`e^{\lambda t} f(t) \to c_1 + 2|c_{pair}| \cos(\omega t + \varphi)`, exactly tested by
    :math:`c_1 \ge 2|c_{pair}|` in rational arithmetic.

(e) **exact factorisation** (:mod:`~symq.me.certification.factorisation`), for rational and
    Gaussian-rational poles: with :math:`x = e^{-t/q}` and :math:`u = \tan(\omega t/2)`,
    :math:`f = G(t, x, u)/(1 + u^2)^N` exactly (:mod:`~symq.me.certification.exponential`), and
    the factorisation of G over :math:`\mathbb{Q}` proves touching zeros (even powers), fixes the
    sign of odd factors in one variable by exact real-root counting, and decides a rest in one
    variable by root isolation (a sign change gives a rational witness point).  It runs before
    the tail bound when G has a repeated factor or a rest in at most one variable, and after any
    INCONCLUSIVE answer; a rest in several variables goes to the numeric stages.

Every verdict can be re-checked without a search by :meth:`Certificate.verify`
(:mod:`~symq.me.certification.recheck`); :mod:`~symq.me.certification.corpus` holds densities
with touching zeros and tiny dips whose truth is known by construction.

The answer is tri-state plus ``INVALID``: ``NONNEGATIVE`` is a proof (modulo the correctness of
``mpmath.iv`` outward rounding and of exact rational arithmetic), ``NEGATIVE`` carries a witness
:math:`t` and an interval enclosure of :math:`f(t)` whose upper end is negative, ``INVALID`` means
that the transform is not that of a distribution (a pole with nonnegative real part, or a
complex dominant pole), ``INCONCLUSIVE`` says why no decision was reached (e.g. a tangential zero
with irrational poles, or the time budget).

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

from .certificate import Certificate, certify
from .verdict import Nonnegativity

__all__ = ["Nonnegativity", "Certificate", "certify"]
