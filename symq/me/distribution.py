r"""Matrix-exponential (ME) distributions as objects with the verbs of scipy's distribution API.

An ME distribution (Angius, Horváth, Halawani, Barukab, Ahmad, Balbo, "Constructing Matrix
Exponential Distributions by Moments and Behavior around Zero", Math. Probl. Eng. 2014, ID 610907,
Section 2; note me_pade.md §1.2) has

.. math::

    f(t) = \alpha e^{At}(-A)\mathbf 1, \qquad F(t) = 1 - \alpha e^{At}\mathbf 1, \qquad
    f^*(s) = \frac{N(s)}{D(s)}.

The defining datum of :class:`ME` is the exact rational transform
:class:`~symq.me.transform.RationalLST`; everything else is derived from it:

* **exact** (sympy rationals): moments, central moments, derivatives at zero, the transform, an
  exact :math:`(\alpha, A)` realisation (note §1.5);
* **high precision** (mpmath): poles with multiplicities detected exactly from the square-free
  factorisation of :math:`D`, the Hermite (partial-fraction) coefficients
  :math:`f^*(s) = \sum_k \sum_j c_{k,j} (s - p_k)^{-(j+1)}`, so that
  :math:`f(t) = \sum_k \sum_j c_{k,j} t^j e^{p_k t} / j!`, and :meth:`ME.pdf_mp` etc.;
* **float64, vectorised**: :meth:`ME.pdf`, :meth:`ME.cdf`, :meth:`ME.ccdf`, :meth:`ME.icdf`,
  :meth:`ME.iccdf`, :meth:`ME.sample`, and :meth:`ME.to_scipy` through
  :func:`scipy.stats.make_distribution`.

How the float values are computed
---------------------------------
For :math:`0 \le t \le \tau = 1/(2\rho)`, :math:`\rho = \max_k |p_k|`, the Taylor series at zero
with the exact derivatives :math:`f^{(j)}(0)` (40 terms; truncation below :math:`10^{-40}` of the
size of the terms) — this keeps full *relative* accuracy near zero even when
:math:`f(0) = f'(0) = \dots = 0`, where the partial fractions cancel.  For :math:`t > \tau` the
Hermite form, with the ccdf in the same form
:math:`\bar F(t) = \sum_k \sum_i e_{k,i} t^i e^{p_k t}/i!`,
:math:`e_{k,i} = \sum_{j \ge i} c_{k,j} (-p_k)^{-(j-i+1)}`, so that tail probabilities keep their
relative accuracy.  Where the terms cancel (nearly multiple poles give huge, cancelling
:math:`c_{k,j}`), the value is recomputed from :func:`scipy.linalg.expm` of the companion matrix
of the ODE :math:`D(\tfrac{d}{dt}) \bar F = 0` (state :math:`\bar F, \bar F', \dots`; time scaled
by :math:`\rho`, matrix shifted by the dominant decay rate so that the error is relative in the
tail), and the value with the smaller a-priori error bound is kept.  An ME *function* is not always a density: ``pdf`` and ``cdf`` return its
values, negative ones included (the Padé fits of the paper may be invalid); ``icdf``, ``iccdf``,
``sample`` and ``to_scipy`` first check that it behaves as a distribution (:meth:`ME.check_density`)
and raise :class:`NotADistribution` otherwise.  Certified nonnegativity is the job of
:mod:`symq.me.certification`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import mpmath
import numpy as np
import scipy.linalg
import sympy as sp

from symq.core.errors import InvalidParameter, NotConverged, SymqError

from ._context import is_mpc, is_mpf, mp, rebind, to_global, working_dps
from .transform import RationalLST, s, to_mpf, to_rational

__all__ = ["ME", "NotADistribution"]

_EPS = float(np.finfo(float).eps)
#: Number of Taylor terms of the float path near t = 0.
_TAYLOR_TERMS = 40
#: Working digits of the poles/residues behind the float path.
_FLOAT_DPS = 30
#: A term sum larger than this multiple of the value is "cancelling": try the expm path too.
_CANCELLATION = 1e4
#: Points per block of the vectorised evaluation.
_CHUNK = 32768
#: Mass tolerance for float input of probability vectors.
_MASS_TOL = 1e-12


class NotADistribution(SymqError, ValueError):
    """The ME function is not (numerically) a probability density.

    Raised by the verbs that need a distribution (``icdf``, ``iccdf``, ``sample``, ``to_scipy``)
    when a pole has a nonnegative real part, the dominant pole is complex, the leading tail
    coefficient is negative, or the density is negative (beyond round-off) on the sampling grid.
    The message names the failing condition.
    """


# ---------------------------------------------------------------------------------------------
# small exact / mpmath helpers
# ---------------------------------------------------------------------------------------------

def _to_mp(value: Any) -> Any:
    """An exact rational in the calling thread's private context, at its current precision."""
    return to_mpf(value, mp)


def _is_float_like(x: Any) -> bool:
    return isinstance(x, (float, np.floating, sp.Float)) or is_mpf(x)


def _taylor_shift(coeffs: Sequence[Any], p: Any, count: int) -> list[Any]:
    """First ``count`` Taylor coefficients of :math:`P(p + h)` in :math:`h` (ascending input)."""
    work = list(reversed(coeffs))  # descending
    out = []
    for _ in range(count):
        if not work:
            out.append(mp.mpf(0))
            continue
        acc = work[0]
        quotient = [acc]
        for c in work[1:]:
            acc = acc * p + c
            quotient.append(acc)
        out.append(quotient.pop())  # remainder = value of the current polynomial at p
        work = quotient
    return out


def _series_mul(a: Sequence[Any], b: Sequence[Any], count: int) -> list[Any]:
    out = [mp.mpf(0)] * count
    for i in range(min(count, len(a))):
        for j in range(min(count - i, len(b))):
            out[i + j] += a[i] * b[j]
    return out


def _series_inv(a: Sequence[Any], count: int) -> list[Any]:
    inv = [1 / a[0]]
    for k in range(1, count):
        acc = mp.mpf(0)
        for i in range(1, min(k, len(a) - 1) + 1):
            acc += a[i] * inv[k - i]
        inv.append(-acc / a[0])
    return inv


def _series_pow(a: Sequence[Any], m: int, count: int) -> list[Any]:
    out: list[Any] = [mp.mpf(1)] + [mp.mpf(0)] * (count - 1)
    for _ in range(m):
        out = _series_mul(out, a, count)
    return out


def _taylor_terms_for(digits: int) -> int:
    """Smallest m with 2^-m / m! < 10^-digits (Taylor truncation at u = t/tau <= 1/2)."""
    m, log10_term = 0, 0.0
    while log10_term > -digits - 2 or m < 8:
        m += 1
        log10_term -= math.log10(2 * m)
    return m


def _finite_array(t: Any, name: str) -> tuple[np.ndarray, bool]:
    arr = np.asarray(t, dtype=float)
    if np.isnan(arr).any():
        raise InvalidParameter(name, t, "real numbers (NaN is not allowed)")
    return arr, arr.ndim == 0


class ME:
    r"""A matrix-exponential distribution given by its exact rational LST :math:`N(s)/D(s)`.

    Immutable; equality and hashing are by the exact (normalised) transform.

    Parameters
    ----------
    lst : RationalLST
        The Laplace-Stieltjes transform (strictly proper, :math:`N(0) = D(0)`, reduced).

    Notes
    -----
    Convention (Angius, Horváth et al. 2014, Section 2; note me_pade.md §1.2):
    :math:`f(t) = \alpha e^{At}(-A)\mathbf 1`, :math:`F(t) = 1 - \alpha e^{At}\mathbf 1`, no atom at
    zero.  An object of this class is an ME *function* with total mass one; it is a distribution
    only if :math:`f \ge 0`, which :meth:`check_density` tests numerically and
    :mod:`symq.me.certification` certifies.

    Examples
    --------
    >>> X = ME.erlang(2, 3)
    >>> X.mean, X.variance
    (2/3, 2/9)
    >>> float(X.cdf(1.0))  # 1 - 4 e^{-3}
    0.8008517265285442
    """

    __slots__ = ("_lst", "_cache")

    def __init__(self, lst: RationalLST) -> None:
        if not isinstance(lst, RationalLST):
            raise InvalidParameter("lst", lst, "a RationalLST (use ME.from_transform or "
                                   "ME.from_expr for coefficients or expressions)")
        object.__setattr__(self, "_lst", lst)
        object.__setattr__(self, "_cache", {})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ME objects are immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (ME, (self._lst,))

    # ================================================================== constructors
    @classmethod
    def from_transform(cls, numerator: Iterable[Any], denominator: Iterable[Any]) -> "ME":
        """From ascending coefficient lists of :math:`N` and :math:`D` (exact or float).

        Floats are converted exactly (:func:`~symq.me.transform.to_rational`); the fraction is
        reduced and :math:`D` made monic.

        Raises
        ------
        InvalidParameter
            See :meth:`RationalLST.from_coefficients`.
        """
        return cls(RationalLST.from_coefficients(numerator, denominator))

    @classmethod
    def from_expr(cls, expr: Any) -> "ME":
        """From a sympy rational function of ``s`` such as ``2/((s + 1)*(s + 2))``."""
        return cls(RationalLST.from_expr(expr))

    @classmethod
    def from_matrix(cls, alpha: Any, A: Any) -> "ME":
        r"""From a representation :math:`(\alpha, A)`, :math:`f(t) = \alpha e^{At}(-A)\mathbf 1`.

        Computed exactly: :math:`D(s) = \det(sI - A)` and
        :math:`N(s) = \alpha\,\mathrm{adj}(sI - A)(-A)\mathbf 1`, with the adjugate from the
        Faddeev-LeVerrier recursion :math:`M_{n-1} = I`, :math:`M_{k-1} = A M_k + a_k I`; the
        fraction is then cancelled to its minimal form, so the order may be lower than the size
        of ``A`` (note §1.2).

        Parameters
        ----------
        alpha : array_like or sympy.Matrix
            Initial row vector, shape ``(n,)`` or ``(1, n)``.  Must sum to 1: an atom at zero is
            not supported.  Float entries are converted exactly; if any entry is a float the sum
            may differ from 1 by at most 1e-12 and ``alpha`` is then divided by its exact sum.
        A : array_like or sympy.Matrix
            Square ``(n, n)`` invertible matrix.

        Raises
        ------
        InvalidParameter
            Wrong shapes, non-finite entries, ``sum(alpha) != 1`` or singular ``A``.
        """
        alpha_entries = list(alpha) if isinstance(alpha, sp.MatrixBase) else None
        if alpha_entries is None:
            arr = np.asarray(alpha, dtype=object)
            if arr.ndim == 2 and arr.shape[0] == 1:
                arr = arr[0]
            if arr.ndim != 1 or arr.size == 0:
                raise InvalidParameter("alpha", alpha,
                                       "a non-empty row vector of shape (n,) or (1, n)")
            alpha_entries = list(arr)
        elif not (alpha.rows == 1 or alpha.cols == 1):
            raise InvalidParameter("alpha", alpha, "a row vector of shape (1, n)")
        n = len(alpha_entries)
        if isinstance(A, sp.MatrixBase):
            shape, A_entries = A.shape, [[A[i, j] for j in range(A.cols)] for i in range(A.rows)]
        else:
            A_arr = np.asarray(A, dtype=object)
            if A_arr.ndim != 2:
                raise InvalidParameter("A", A, f"a square matrix of shape ({n}, {n})")
            shape, A_entries = A_arr.shape, [list(row) for row in A_arr]
        if tuple(shape) != (n, n):
            raise InvalidParameter("A", A, f"a square matrix of shape ({n}, {n}) matching alpha",
                                   f"got shape {tuple(shape)}")
        floats = any(_is_float_like(x) for x in alpha_entries) or any(
            _is_float_like(x) for row in A_entries for x in row)
        a_vec = [to_rational(x, "alpha") for x in alpha_entries]
        A_q = [[to_rational(x, "A") for x in row] for row in A_entries]
        total = sum(a_vec, sp.Integer(0))
        if total != 1:
            scale = max(sum((abs(x) for x in a_vec), sp.Integer(0)), sp.Integer(1))
            if floats and abs(total - 1) <= _MASS_TOL * scale:
                a_vec = [x / total for x in a_vec]
            else:
                raise InvalidParameter(
                    "alpha", alpha, "a row vector whose entries sum to 1",
                    f"sum(alpha) = {total}: an atom at zero of mass 1 - sum(alpha) = {1 - total} "
                    "is not supported by ME (no atom)")
        M = sp.Matrix(A_q)
        charpoly = M.charpoly(s)
        a = [sp.Rational(charpoly.nth(k)) for k in range(n + 1)]  # ascending, a[n] = 1
        if a[0] == 0:
            raise InvalidParameter("A", A, "an invertible matrix", "det A = 0")
        w = [-sum(A_q[i], sp.Integer(0)) for i in range(n)]  # (-A) 1
        row = list(a_vec)  # r_{n-1} = alpha M_{n-1} = alpha
        b = [sp.Integer(0)] * n
        b[n - 1] = sum((row[i] * w[i] for i in range(n)), sp.Integer(0))
        for k in range(n - 1, 0, -1):
            # r_{k-1} = r_k A + a_k alpha
            row = [sum((row[i] * A_q[i][j] for i in range(n)), sp.Integer(0)) + a[k] * a_vec[j]
                   for j in range(n)]
            b[k - 1] = sum((row[i] * w[i] for i in range(n)), sp.Integer(0))
        return cls(RationalLST.from_coefficients(b, a))

    @classmethod
    def from_moments(cls, moments: Iterable[Any], order: int | None = None,
                     zero: Iterable[Any] = (), *, dps: int = 50) -> "ME":
        """Classical or two-point Padé fit to moments (and values at zero).

        Delegates to :func:`symq.me.pade.pade_fit`; the result is not certified, so call
        :func:`symq.me.certify` (or use :func:`symq.me.fit`) before using it as a density.
        """
        from .pade import pade_fit

        return cls(pade_fit(list(moments), order=order, zero=list(zero), dps=dps).lst)

    @classmethod
    def exponential(cls, rate: Any) -> "ME":
        r"""Exponential distribution, :math:`f^*(s) = \lambda/(s + \lambda)`."""
        lam = cls._positive(rate, "rate")
        return cls(RationalLST.from_coefficients([lam], [lam, 1]))

    @classmethod
    def erlang(cls, k: int, rate: Any) -> "ME":
        r"""Erlang distribution with ``k`` phases, :math:`f^*(s) = (\lambda/(s + \lambda))^k`."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidParameter("k", k, "an integer >= 1")
        lam = cls._positive(rate, "rate")
        den = sp.Poly((s + lam) ** int(k), s)
        return cls(RationalLST.from_coefficients([lam ** int(k)], reversed(den.all_coeffs())))

    @classmethod
    def hyperexponential(cls, probs: Sequence[Any], rates: Sequence[Any]) -> "ME":
        r"""Mixture of exponentials, :math:`f^*(s) = \sum_i p_i \lambda_i/(s + \lambda_i)`.

        ``probs`` must be nonnegative and sum to 1 (exactly, or within 1e-12 for float input,
        which is then renormalised exactly); ``rates`` positive.  Equal rates merge.
        """
        probs, rates = list(probs), list(rates)
        if len(probs) == 0 or len(probs) != len(rates):
            raise InvalidParameter("probs", probs, f"a non-empty vector of the same length as "
                                   f"rates ({len(rates)})")
        p = [to_rational(x, "probs") for x in probs]
        if any(x < 0 for x in p):
            raise InvalidParameter("probs", probs, "nonnegative probabilities")
        lam = [cls._positive(r, "rates") for r in rates]
        total = sum(p, sp.Integer(0))
        if total != 1:
            if any(_is_float_like(x) for x in probs) and abs(total - 1) <= _MASS_TOL:
                p = [x / total for x in p]
            else:
                raise InvalidParameter("probs", probs, "probabilities summing to 1",
                                       f"sum = {total}")
        D = sp.Poly(1, s, domain=sp.QQ)
        for r in lam:
            D = D * sp.Poly(s + r, s, domain=sp.QQ)
        N = sp.Poly(0, s, domain=sp.QQ)
        for pi, r in zip(p, lam):
            N = N + sp.Poly(pi * r, s, domain=sp.QQ) * sp.div(D, sp.Poly(s + r, s, domain=sp.QQ))[0]
        return cls(RationalLST.from_coefficients(reversed(N.all_coeffs()),
                                                 reversed(D.all_coeffs())))

    @staticmethod
    def _positive(value: Any, name: str) -> sp.Rational:
        q = to_rational(value, name)
        if not q > 0:
            raise InvalidParameter(name, value, "a positive number")
        return q

    # ================================================================== exact properties
    @property
    def lst(self) -> RationalLST:
        """The defining exact transform."""
        return self._lst

    @property
    def order(self) -> int:
        """The order n = deg D of the (minimal) transform."""
        return self._lst.order

    @property
    def numerator(self) -> tuple[sp.Rational, ...]:
        """Ascending coefficients :math:`b_0, b_1, \\dots` of :math:`N(s)`."""
        return self._lst.numerator

    @property
    def denominator(self) -> tuple[sp.Rational, ...]:
        """Ascending coefficients :math:`a_0, \\dots, a_{n-1}, 1` of :math:`D(s)` (monic)."""
        return self._lst.denominator

    @property
    def transform(self) -> sp.Expr:
        """:math:`f^*(s) = N(s)/D(s)` as a sympy expression in ``s``."""
        return self._lst.expr

    def moments(self, K: int) -> list[sp.Rational]:
        """Exact raw moments :math:`m_1, \\dots, m_K` (note §1.2, :math:`m_k = k!\\,r_k`)."""
        self._check_order(K, "K")
        return self._lst.moments(int(K)) if int(K) > 0 else []

    def moment(self, order: int = 1, kind: str = "raw") -> sp.Expr:
        r"""Exact moment, following ``scipy.stats`` (new API) semantics for ``kind``.

        Parameters
        ----------
        order : int
            Nonnegative integer.
        kind : {"raw", "central", "standardized"}
            ``raw`` :math:`E[X^k]`; ``central`` :math:`E[(X - \mu)^k]`; ``standardized``
            :math:`E[(X - \mu)^k]/\sigma^k` (so order 3 is the skewness and order 4 the
            non-excess kurtosis).

        Returns
        -------
        sympy.Expr
            A Rational for ``raw`` and ``central``; for ``standardized`` an exact algebraic
            number (a Rational for even orders).  Moments are the coefficients of the transform
            at 0; for an ME function that is not a density but has all poles in Re < 0 they are
            still :math:`\int_0^\infty t^k f(t)\,dt`.
        """
        self._check_order(order, "order")
        k = int(order)
        if kind not in ("raw", "central", "standardized"):
            raise InvalidParameter("kind", kind, "one of 'raw', 'central', 'standardized'")
        m = [sp.Integer(1)] + (self._lst.moments(k) if k > 0 else [])
        if kind == "raw":
            return m[k]
        mu = m[1] if k >= 1 else self.mean
        central = sum((sp.binomial(k, i) * m[i] * (-mu) ** (k - i) for i in range(k + 1)),
                      sp.Integer(0))
        if kind == "central":
            return sp.Rational(central)
        var = self.variance
        if var <= 0:
            raise NotADistribution(f"variance {var} <= 0: the standardized moment is undefined "
                                   "(the ME function is not a density)")
        return sp.Rational(central) / var ** sp.Rational(k, 2)

    @staticmethod
    def _check_order(order: Any, name: str) -> None:
        ok = (isinstance(order, (int, np.integer)) and not isinstance(order, bool)) or (
            isinstance(order, (float, np.floating)) and float(order).is_integer())
        if not ok or order < 0:
            raise InvalidParameter(name, order, "a nonnegative integer")

    @property
    def mean(self) -> sp.Rational:
        """Exact mean :math:`m_1`."""
        return self._lst.moments(1)[0]

    @property
    def variance(self) -> sp.Rational:
        """Exact variance :math:`m_2 - m_1^2`."""
        m1, m2 = self._lst.moments(2)
        return m2 - m1**2

    @property
    def scv(self) -> sp.Rational:
        """Exact squared coefficient of variation :math:`\\sigma^2/m_1^2`."""
        return self.variance / self.mean**2

    def derivatives_at_zero(self, J: int) -> list[sp.Rational]:
        r"""Exact :math:`f(0), \dots, f^{(J-1)}(0)` (expansion at infinity, note §1.2, §1.4)."""
        self._check_order(J, "J")
        return self._lst.derivatives_at_zero(int(J))

    # ================================================================== poles and residues
    def _factors(self) -> list[tuple[tuple[sp.Rational, ...], int, int]]:
        """Square-free factors of D: (ascending coefficients, multiplicity, real-root count)."""
        if "factors" not in self._cache:
            _, factors = sp.sqf_list(self._lst.D)
            out = []
            for poly, mult in factors:
                poly = sp.Poly(poly, s, domain=sp.QQ)
                poly = poly.monic()
                coeffs = tuple(sp.Rational(c) for c in reversed(poly.all_coeffs()))
                out.append((coeffs, int(mult), int(poly.count_roots())))
            self._cache["factors"] = out
        return self._cache["factors"]

    def _pole_data(self, dps: int) -> list[tuple[Any, int, int]]:
        """Poles at ``dps`` working digits: (pole, multiplicity, factor index), dominant first.

        Real roots (their number known exactly by Sturm counting) are returned as mpf, complex
        ones as exact conjugate pairs of mpc.
        """
        key = ("poles", dps)
        if key in self._cache:
            return rebind(self._cache[key])
        out: list[tuple[Any, int, int]] = []
        with working_dps(dps):
            for index, (coeffs, mult, n_real) in enumerate(self._factors()):
                desc = [_to_mp(c) for c in reversed(coeffs)]
                roots = None
                for attempt in range(5):
                    try:
                        roots = mp.polyroots(desc, maxsteps=100 * 2**attempt,
                                                 extraprec=(dps + 20) * (attempt + 1))
                        break
                    except mp.NoConvergence:
                        continue
                if roots is None:
                    raise NotConverged("mpmath.polyroots", float("nan"), 10.0**-dps, 1600)
                roots = [mp.mpc(r) for r in roots]
                roots.sort(key=lambda z: abs(z.imag))
                real = [mp.mpf(r.real) for r in roots[:n_real]]
                rest = sorted(roots[n_real:], key=lambda z: -z.imag)[: (len(roots) - n_real) // 2]
                for r in real:
                    out.append((r, mult, index))
                for r in rest:
                    z = mp.mpc(r.real, abs(r.imag))
                    out.append((z, mult, index))
                    out.append((mp.conj(z), mult, index))
        out.sort(key=lambda e: (-mp.re(e[0]), abs(mp.im(e[0])), -mp.im(e[0])))
        self._cache[key] = out
        return out

    def poles(self, dps: int = 30) -> list[tuple[mpmath.mpf | mpmath.mpc, int]]:
        """Poles of :math:`f^*` (roots of :math:`D`) with their exact multiplicities.

        Multiplicities come from the square-free factorisation of :math:`D` over the rationals
        (``sympy.sqf_list``), never from numerical clustering; each square-free factor is solved
        with ``mpmath.polyroots``.

        Parameters
        ----------
        dps : int
            Decimal digits of the returned values.

        Returns
        -------
        list of (mpf or mpc, int)
            Sorted by decreasing real part (dominant pole first); real poles are ``mpf``,
            complex poles come in exact conjugate pairs (positive imaginary part first).
        """
        self._check_dps(dps)
        data = self._pole_data(dps + 10)
        with working_dps(dps):
            return to_global([(+p, mult) for p, mult, _ in data])

    @staticmethod
    def _check_dps(dps: Any) -> None:
        if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or dps < 5:
            raise InvalidParameter("dps", dps, "an integer >= 5")

    def _hermite(self, dps: int) -> list[tuple[Any, int, list[Any], list[Any]]]:
        """(pole, multiplicity, pdf coefficients c_j, ccdf coefficients e_i) at ``dps`` digits."""
        key = ("hermite", dps)
        if key in self._cache:
            return rebind(self._cache[key])
        factors = self._factors()
        out = []
        with working_dps(dps):
            num = [_to_mp(c) for c in self._lst.numerator]
            facs = [[_to_mp(c) for c in coeffs] for coeffs, _, _ in factors]
            done: dict[Any, list[Any]] = {}
            for p, mult, index in self._pole_data(dps):
                if is_mpc(p) and p.imag < 0:
                    c = [mp.conj(x) for x in done[(index, mp.conj(p))]]
                else:
                    L = mult
                    den = _series_pow(_taylor_shift(facs[index], p, L + 1)[1:], mult, L)
                    for other, (_, m_other, _) in enumerate(factors):
                        if other != index:
                            den = _series_mul(den, _series_pow(
                                _taylor_shift(facs[other], p, L), m_other, L), L)
                    G = _series_mul(_taylor_shift(num, p, L), _series_inv(den, L), L)
                    c = [G[mult - 1 - j] for j in range(mult)]
                    if is_mpf(p):
                        c = [mp.re(x) for x in c]
                    done[(index, p)] = c
                q = -p
                e = [sum((c[j] / q ** (j - i + 1) for j in range(i, mult)), mp.mpf(0))
                     for i in range(mult)]
                if is_mpf(p):
                    e = [mp.re(x) for x in e]
                out.append((p, mult, c, e))
        self._cache[key] = out
        return out

    def residues(self, dps: int = 30) -> list[tuple[mpmath.mpf | mpmath.mpc,
                                                    tuple[mpmath.mpf | mpmath.mpc, ...]]]:
        r"""Hermite partial-fraction coefficients :math:`c_{k,j}` of each pole.

        :math:`f^*(s) = \sum_k \sum_{j=0}^{\mu_k - 1} c_{k,j}/(s - p_k)^{j+1}`, hence
        :math:`f(t) = \sum_k \sum_j c_{k,j} t^j e^{p_k t}/j!`.  For a simple pole
        :math:`c_{k,0} = N(p_k)/D'(p_k)`; for a pole of multiplicity :math:`\mu` on the
        square-free factor :math:`P` (:math:`D = P^\mu R`), :math:`c_{k,j}` is the coefficient
        of :math:`h^{\mu-1-j}` of the power series
        :math:`N(p+h) / [(P(p+h)/h)^\mu R(p+h)]`, computed at ``dps + 15`` digits.

        Returns
        -------
        list of (pole, tuple of coefficients)
            In the order of :meth:`poles`; the tuple holds :math:`c_{k,0}, \dots, c_{k,\mu_k-1}`
            (mpf for real poles).
        """
        self._check_dps(dps)
        data = self._hermite(dps + 15)
        with working_dps(dps):
            return to_global([(+p, tuple(+x for x in c)) for p, _, c, _ in data])

    # ================================================================== float form
    def _float_form(self) -> dict[str, Any]:
        if "float" in self._cache:
            return self._cache["float"]
        herm = self._hermite(_FLOAT_DPS + 15)
        with working_dps(_FLOAT_DPS + 15):
            rho = max(float(abs(p)) for p, _, _, _ in herm)
            tau = 0.5 / rho
            d = self._lst.derivatives_at_zero(_TAYLOR_TERMS)
            tau_mp = mp.mpf(tau)
            q = [float(_to_mp(dj) * tau_mp**j / mp.factorial(j)) for j, dj in enumerate(d)]
            Q = [0.0] + [float(_to_mp(dj) * tau_mp ** (j + 1) / mp.factorial(j + 1))
                         for j, dj in enumerate(d)]
            re, im, power, weight, cpdf, cccdf = [], [], [], [], [], []
            for p, mult, c, e in herm:
                if is_mpc(p) and p.imag < 0:
                    continue
                w = 2.0 if is_mpc(p) else 1.0
                for j in range(mult):
                    re.append(float(mp.re(p)))
                    im.append(float(mp.im(p)))
                    power.append(j)
                    weight.append(w)
                    cpdf.append(complex(c[j]))
                    cccdf.append(complex(e[j]))
            # companion realisation, in u = rho t, of the ODE D(d/dt) G = 0 that the ccdf G obeys:
            # state z = (g, g', ..., g^(n-1)) with g(u) = G(t); f(t) = -rho g'(u) = -rho (C z)_0
            n = self.order
            a = self._lst.denominator
            C = np.zeros((n, n))
            for i in range(n - 1):
                C[i, i + 1] = 1.0
            rho_mp = mp.mpf(rho)
            for k in range(n):
                C[n - 1, k] = -float(_to_mp(a[k]) / rho_mp ** (n - k))
            z0 = np.array([1.0] + [float(-_to_mp(d[j]) / rho_mp ** (j + 1)) for j in range(n - 1)])
        power_arr = np.array(power, dtype=float)
        form = {
            "rho": rho, "tau": tau,
            "q": np.array(q), "qabs": np.abs(np.array(q)),
            "Q": np.array(Q), "Qabs": np.abs(np.array(Q)),
            "re": np.array(re), "im": np.array(im), "power": power_arr,
            "lfact": np.array([math.lgamma(j + 1) for j in power]),
            "weight": np.array(weight),
            "cpdf": np.array(cpdf), "cccdf": np.array(cccdf),
            "C": C, "z0": z0,
            "shift": -max(re) / rho,  # dominant decay rate in units of rho
        }
        self._cache["float"] = form
        return form

    def _eval(self, t: np.ndarray) -> tuple[np.ndarray, ...]:
        """pdf, cdf, ccdf and absolute error bounds of pdf and ccdf at finite ``t >= 0`` (1-D)."""
        if t.size > _CHUNK:  # bound the (points x terms) work arrays
            parts = [self._eval_chunk(t[i:i + _CHUNK]) for i in range(0, t.size, _CHUNK)]
            return tuple(np.concatenate(column) for column in zip(*parts))
        return self._eval_chunk(t)

    def _eval_chunk(self, t: np.ndarray) -> tuple[np.ndarray, ...]:
        F = self._float_form()
        pdf = np.empty_like(t)
        cdf = np.empty_like(t)
        ccdf = np.empty_like(t)
        err_pdf = np.empty_like(t)
        err_ccdf = np.empty_like(t)
        small = t <= F["tau"]
        if small.any():
            u = t[small] / F["tau"]
            poly = np.polynomial.polynomial.polyval
            pdf[small] = poly(u, F["q"])
            cdf[small] = poly(u, F["Q"])
            ccdf[small] = 1.0 - cdf[small]
            err_pdf[small] = 8 * _EPS * poly(u, F["qabs"])
            err_ccdf[small] = 8 * _EPS * (poly(u, F["Qabs"]) + 1.0)
        large = ~small
        if large.any():
            tl = t[large]
            with np.errstate(over="ignore", invalid="ignore"):
                expo = (np.multiply.outer(tl, F["re"]) + np.multiply.outer(np.log(tl), F["power"])
                        - F["lfact"])
                mag = np.exp(expo) * F["weight"]
                phase = np.multiply.outer(tl, F["im"])
                cos, sin = np.cos(phase), np.sin(phase)
                cp, ce = F["cpdf"], F["cccdf"]
                p_val = (mag * (cp.real * cos - cp.imag * sin)).sum(axis=1)
                c_val = (mag * (ce.real * cos - ce.imag * sin)).sum(axis=1)
                p_abs = (mag * np.abs(cp)).sum(axis=1)
                c_abs = (mag * np.abs(ce)).sum(axis=1)
            e_p = 8 * _EPS * p_abs * (1 + np.abs(np.multiply.outer(tl, F["re"])).max(axis=1))
            e_c = 8 * _EPS * c_abs * (1 + np.abs(np.multiply.outer(tl, F["re"])).max(axis=1))
            bad = (p_abs > _CANCELLATION * np.abs(p_val)) | (c_abs > _CANCELLATION * np.abs(c_val))
            bad &= np.isfinite(p_abs) & np.isfinite(c_abs)
            if bad.any():
                x_p, x_c, x_ep, x_ec = self._eval_expm(tl[bad])
                use_p = x_ep < e_p[bad]
                use_c = x_ec < e_c[bad]
                idx = np.flatnonzero(bad)
                p_val[idx[use_p]], e_p[idx[use_p]] = x_p[use_p], x_ep[use_p]
                c_val[idx[use_c]], e_c[idx[use_c]] = x_c[use_c], x_ec[use_c]
            pdf[large], ccdf[large], cdf[large] = p_val, c_val, 1.0 - c_val
            err_pdf[large], err_ccdf[large] = e_p, e_c
        return pdf, cdf, ccdf, err_pdf, err_ccdf

    def _eval_expm(self, t: np.ndarray) -> tuple[np.ndarray, ...]:
        """pdf and ccdf from expm of the companion realisation (fallback for cancelling terms)."""
        F = self._float_form()
        u = t * F["rho"]
        z0 = F["z0"]
        # shift by the dominant decay rate, exp(Cu) = exp(-shift u) exp((C + shift I) u), so that
        # the absolute error of the shifted expm becomes a relative error in the tail
        C = F["C"] + F["shift"] * np.eye(len(z0))
        E = scipy.linalg.expm(C[None, :, :] * u[:, None, None])
        decay = np.exp(-F["shift"] * u)
        z = (E @ z0) * decay[:, None]
        pdf = -F["rho"] * (z @ F["C"][0])
        norm_E = np.abs(E).sum(axis=1).max(axis=1)
        scale = (8 * _EPS * (1 + np.abs(C).sum(axis=0).max() * u) * norm_E * np.abs(z0).sum()
                 * decay)
        return pdf, z[:, 0], F["rho"] * np.abs(F["C"][0]).sum() * scale, scale

    def _numeric(self, t: Any, what: str) -> Any:
        arr, scalar = _finite_array(t, "t")
        flat = arr.ravel()
        out = np.empty_like(flat)
        neg = flat < 0
        inf = np.isinf(flat) & ~neg
        fin = ~neg & ~inf
        out[neg] = {"pdf": 0.0, "cdf": 0.0, "ccdf": 1.0}[what]
        out[inf] = {"pdf": 0.0, "cdf": 1.0, "ccdf": 0.0}[what]
        if fin.any():
            pdf, cdf, ccdf, _, _ = self._eval(flat[fin])
            values = {"pdf": pdf, "cdf": cdf, "ccdf": ccdf}[what]
            if not np.isfinite(values).all():
                where = flat[fin][~np.isfinite(values)][0]
                reason = self._pole_problem() or "the partial-fraction terms overflow"
                raise NotADistribution(f"{what}(t) is not finite at t={where!r}: {reason}")
            out[fin] = values
        out = out.reshape(arr.shape)
        return out[()] if scalar else out

    def pdf(self, t: Any) -> Any:
        r"""Density :math:`f(t) = \alpha e^{At}(-A)\mathbf 1` (0 for t < 0), vectorised, float64.

        Values of the ME *function*: negative where the function is negative.  Accuracy: absolute
        error a few ulps of :math:`\sum_{k,j} |c_{k,j}| t^j e^{\Re p_k t}/j!` (a few ulps of
        :math:`f` itself when all terms have one sign); relative accuracy near ``t = 0`` from the
        Taylor series with exact derivatives.  NaN input raises :class:`InvalidParameter`.
        """
        return self._numeric(t, "pdf")

    def cdf(self, t: Any) -> Any:
        r""":math:`F(t) = \int_0^t f` (0 for t < 0, 1 at +inf), vectorised, float64."""
        return self._numeric(t, "cdf")

    def ccdf(self, t: Any) -> Any:
        r""":math:`1 - F(t)`, with relative accuracy in the tail (Hermite form of the ccdf)."""
        return self._numeric(t, "ccdf")

    # ================================================================== high precision
    def _mp_eval(self, t: Any, what: str, dps: int) -> mpmath.mpf:
        if isinstance(t, sp.Rational):
            t_exact: Any = t
        elif isinstance(t, sp.Basic):
            t_exact = t if t.is_number else None
            if t_exact is None:
                raise InvalidParameter("t", t, "a real number")
        else:
            t_exact = t
        guard = 20
        while True:
            P = dps + guard
            with working_dps(P):
                tm = _to_mp(t_exact) if isinstance(t_exact, sp.Rational) else mp.mpf(
                    sp.N(t_exact, P + 5) if isinstance(t_exact, sp.Basic) else t_exact)
                if mp.isnan(tm):
                    raise InvalidParameter("t", t, "a real number (not NaN)")
                if tm < 0:
                    return to_global(mp.mpf({"pdf": 0, "cdf": 0, "ccdf": 1}[what]))
                if mp.isinf(tm):
                    return to_global(mp.mpf({"pdf": 0, "cdf": 1, "ccdf": 0}[what]))
                herm = self._hermite(P)
                rho = max(abs(p) for p, _, _, _ in herm)
                tau = 1 / (2 * rho)
                if tm <= tau:
                    J = _taylor_terms_for(P) + 2 * self.order
                    d = self._lst.derivatives_at_zero(J)
                    value = mp.mpf(0)
                    size = mp.mpf(0)
                    for j, dj in enumerate(d):
                        if what == "pdf":
                            term = _to_mp(dj) * tm**j / mp.factorial(j)
                        else:
                            term = _to_mp(dj) * tm ** (j + 1) / mp.factorial(j + 1)
                        value += term
                        size += abs(term)
                    if what == "ccdf":
                        value, size = 1 - value, 1 + size
                else:
                    value = mp.mpf(0)
                    size = mp.mpf(0)
                    for p, mult, c, e in herm:
                        coeffs = c if what == "pdf" else e
                        ex = mp.exp(p * tm)
                        for j in range(mult):
                            term = coeffs[j] * tm**j / mp.factorial(j) * ex
                            value += mp.re(term)
                            size += abs(term)
                    if what == "cdf":
                        value, size = 1 - value, 1 + size
                lost = size / abs(value) if value != 0 else (mp.inf if size != 0 else 1)
            if lost <= mp.mpf(10) ** (guard - 5) or guard >= 4 * dps + 200:
                with working_dps(dps):
                    return to_global(+value)
            guard *= 2

    def _mp_vector(self, t: Any, what: str, dps: int) -> Any:
        self._check_dps(dps)
        if isinstance(t, (list, tuple, np.ndarray)):
            return [self._mp_eval(x, what, dps) for x in np.asarray(t, dtype=object).ravel()]
        return self._mp_eval(t, what, dps)

    def pdf_mp(self, t: Any, dps: int = 50) -> Any:
        r"""The density at ``dps`` significant digits (mpmath), from the same Hermite form.

        ``t`` may be a number (exact sympy Rationals and strings are taken exactly) or a sequence
        (then a list is returned).  The working precision is raised automatically until the
        cancellation between terms costs fewer than the guard digits, so the result carries
        ``dps`` correct digits except within :math:`10^{-dps}` of an exact zero of :math:`f`.
        """
        return self._mp_vector(t, "pdf", dps)

    def cdf_mp(self, t: Any, dps: int = 50) -> Any:
        """:math:`F(t)` at ``dps`` digits; see :meth:`pdf_mp`."""
        return self._mp_vector(t, "cdf", dps)

    def ccdf_mp(self, t: Any, dps: int = 50) -> Any:
        """:math:`1 - F(t)` at ``dps`` digits; see :meth:`pdf_mp`."""
        return self._mp_vector(t, "ccdf", dps)

    # ================================================================== validity, inversion
    def _pole_problem(self) -> str | None:
        """Necessary pole conditions of a density (note §1.2, §1.3), or None if they hold."""
        herm = self._hermite(_FLOAT_DPS + 15)
        with working_dps(_FLOAT_DPS):
            rho = max(abs(p) for p, _, _, _ in herm)
            tol = rho * mp.mpf(10) ** (-_FLOAT_DPS + 5)
            for p, _, _, _ in herm:
                if mp.re(p) >= -tol:
                    return (f"pole {mp.nstr(p, 10)} has real part >= 0, so f*(s) is not the "
                            "transform of a distribution")
            top = max(mp.re(p) for p, _, _, _ in herm)
            real = [(p, mult, c) for p, mult, c, _ in herm
                    if is_mpf(p) and p >= top - tol]
            if not real:
                dominant = [mp.nstr(p, 10) for p, _, _, _ in herm if mp.re(p) >= top - tol]
                return (f"the dominant pole {dominant[0]} is complex, so f changes sign infinitely "
                        "often")
            p, mult, c = real[0]
            if c[mult - 1] < 0:
                return (f"the leading tail coefficient {mp.nstr(c[mult - 1], 10)} of the "
                        f"dominant pole {mp.nstr(p, 10)} is negative, so f < 0 for large t")
        return None

    def _table(self) -> dict[str, Any]:
        """Sampling grid with cdf/ccdf values; raises NotADistribution if f is not a density."""
        if "table" in self._cache:
            table = self._cache["table"]
            if isinstance(table, NotADistribution):
                raise table
            return table
        try:
            table = self._build_table()
        except NotADistribution as exc:
            self._cache["table"] = exc
            raise
        self._cache["table"] = table
        return table

    def _build_table(self) -> dict[str, Any]:
        prefix = "ME is not a distribution: "
        problem = self._pole_problem()
        if problem:
            raise NotADistribution(prefix + problem)
        F = self._float_form()
        herm = self._hermite(_FLOAT_DPS + 15)
        lam = -max(float(mp.re(p)) for p, _, _, _ in herm)
        im_max = max(abs(float(mp.im(p))) for p, _, _, _ in herm)
        t_end = max(abs(float(self.mean)), 1.0 / lam)
        for _ in range(400):
            _, _, ccdf, _, _ = self._eval(np.array([t_end]))
            if ccdf[0] <= 1e-16:
                break
            t_end *= 1.5
        else:
            raise NotConverged("ME sampling grid (ccdf <= 1e-16)", float(ccdf[0]), 1e-16, 400)
        t_lo = min(1e-3 * F["tau"], 1e-8 * t_end)
        decades = math.log10(t_end / t_lo)
        n_uniform = int(min(max(16 * t_end * im_max / (2 * math.pi), 4096), 2**16))
        grid = np.unique(np.concatenate([
            [0.0], np.geomspace(t_lo, t_end, int(64 * decades) + 2),
            np.linspace(0.0, t_end, n_uniform)]))
        pdf, cdf, ccdf, err_pdf, err_ccdf = self._eval(grid)
        if not (np.isfinite(pdf).all() and np.isfinite(ccdf).all()):
            raise NotADistribution(prefix + "non-finite values on the sampling grid")
        negative = pdf < -(err_pdf + 1e-300)
        if negative.any():
            i = int(np.argmin(np.where(negative, pdf / (err_pdf + 1e-300), 0)))
            raise NotADistribution(prefix + f"the density is negative, f({grid[i]:.6g}) = "
                                   f"{pdf[i]:.6g} (round-off bound {err_pdf[i]:.2g})")
        drop = np.diff(cdf) < -(err_ccdf[1:] + err_ccdf[:-1] + 1e-300)
        if drop.any():
            i = int(np.flatnonzero(drop)[0])
            raise NotADistribution(prefix + f"the cdf decreases between t={grid[i]:.6g} and "
                                   f"t={grid[i + 1]:.6g}")
        return {"t": grid, "cdf": np.maximum.accumulate(np.clip(cdf, 0.0, 1.0)),
                "ccdf": np.minimum.accumulate(np.clip(ccdf, 0.0, 1.0)), "t_end": t_end,
                "lam": lam}

    def check_density(self) -> None:
        """Check numerically that the ME function is a probability density; raise if not.

        Tests the necessary pole conditions (all poles in Re < 0, a real dominant pole with a
        positive leading coefficient; note §1.2-§1.3), then the sign of :math:`f` and the
        monotonicity of :math:`F` on the sampling grid (about 5000-70000 points up to the
        time where :math:`1 - F \\le 10^{-16}`), each beyond its float round-off bound.
        This is a numerical check, not a certificate: see :mod:`symq.me.certification`.

        Raises
        ------
        NotADistribution
            Naming the failing condition (and a point t where f < 0).
        """
        self._table()

    def _solve(self, target: np.ndarray, tail: bool) -> np.ndarray:
        """Solve cdf(t) = target (tail=False) or ccdf(t) = target (tail=True), 0 < target <= 1/2."""
        table = self._table()
        grid = table["t"]
        if tail:
            values = table["ccdf"]
            # values[idx - 1] > target >= values[idx]
            idx = np.searchsorted(-values, -target, side="left")
        else:
            values = table["cdf"]
            # values[idx - 1] < target <= values[idx]
            idx = np.searchsorted(values, target, side="left")
        idx = np.clip(idx, 1, None)
        beyond = idx >= len(grid)
        lo = grid[np.minimum(idx, len(grid) - 1) - 1].copy()
        hi = grid[np.minimum(idx, len(grid) - 1)].copy()
        if beyond.any():  # only possible in the tail
            lo[beyond] = table["t_end"]
            hi_b = np.full(int(beyond.sum()), table["t_end"])
            need = np.ones(hi_b.shape, dtype=bool)
            for _ in range(2000):
                if not need.any():
                    break
                hi_b[need] *= 2.0
                _, _, cc, _, _ = self._eval(hi_b[need])
                sub = np.flatnonzero(need)
                need[sub[cc <= target[beyond][need]]] = False
            hi[beyond] = hi_b
        t = 0.5 * (lo + hi)
        inside = ~beyond & (idx < len(grid))
        if inside.any():  # interpolation within the table bracket
            v_lo, v_hi = values[idx[inside] - 1], values[idx[inside]]
            with np.errstate(divide="ignore", invalid="ignore"):
                if tail:
                    frac = (np.log(v_lo) - np.log(target[inside])) / (np.log(v_lo) - np.log(v_hi))
                else:
                    frac = (target[inside] - v_lo) / (v_hi - v_lo)
            frac = np.where(np.isfinite(frac), np.clip(frac, 0.0, 1.0), 0.5)
            t[inside] = lo[inside] + frac * (hi[inside] - lo[inside])
        # Newton on phi = log(target) - log ccdf(t) in t (tail: ccdf ~ C e^{-lambda t}), or on
        # phi = log cdf(t) - log(target) in x = log t (cdf ~ c t^k near 0); bisection (geometric
        # in the lower branch) whenever the step leaves the bracket or |phi| does not halve.
        active = np.arange(len(target))
        result = t.copy()
        log_target = np.log(target)
        previous = np.full(len(target), np.inf)  # |phi| of the previous iterate
        for iteration in range(400):
            if active.size == 0:
                return result
            ta = t[active]
            pdf, cdf, ccdf, _, _ = self._eval(ta)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                if tail:
                    positive = np.where(ccdf > 0, ccdf, 1.0)
                    phi = np.where(ccdf > 0, log_target[active] - np.log(positive), np.inf)
                    newton = ta - phi * ccdf / pdf
                else:
                    phi = np.where(cdf > 0, np.log(np.where(cdf > 0, cdf, 1)) - log_target[active],
                                   -np.inf)
                    newton = ta * np.exp(-phi * cdf / (ta * pdf))
                exact = phi == 0
                lo[active] = np.where(phi < 0, ta, lo[active])
                hi[active] = np.where(phi > 0, ta, hi[active])
            la, ha = lo[active], hi[active]
            slow = np.abs(phi) > 0.5 * previous[active]
            previous[active] = np.abs(phi)
            ok = np.isfinite(newton) & (newton > la) & (newton < ha) & ~(slow & (iteration >= 2))
            if tail:
                middle = 0.5 * (la + ha)
            else:
                middle = np.where(la > 0, np.sqrt(la * ha), ha * 2.0**-32)
            t_new = np.where(ok, newton, middle)
            t_new = np.where(exact, ta, t_new)
            done = exact | (np.abs(t_new - ta) <= 2 * _EPS * np.abs(t_new)) | (
                ha - la <= 4 * _EPS * ha)
            t[active] = t_new
            result[active[done]] = t_new[done]
            active = active[~done]
        width = float(np.max(hi[active] - lo[active]))
        raise NotConverged("ME inversion (safeguarded Newton)", width, 4 * _EPS, 400)

    def _invert(self, y: Any, name: str, upper: bool) -> Any:
        arr, scalar = _finite_array(y, name)
        if ((arr < 0) | (arr > 1)).any():
            raise InvalidParameter(name, y, "probabilities in [0, 1]")
        flat = arr.ravel()
        self._table()
        out = np.empty_like(flat)
        # lower/upper tail probabilities, each exact where it is <= 1/2
        lower_end, upper_end = (flat == 1, flat == 0) if upper else (flat == 0, flat == 1)
        out[lower_end] = 0.0
        out[upper_end] = np.inf
        inner = ~lower_end & ~upper_end
        if upper:
            use_cdf = inner & (flat >= 0.5)
            use_ccdf = inner & (flat < 0.5)
            cdf_target, ccdf_target = 1.0 - flat[use_cdf], flat[use_ccdf]
        else:
            use_cdf = inner & (flat <= 0.5)
            use_ccdf = inner & (flat > 0.5)
            cdf_target, ccdf_target = flat[use_cdf], 1.0 - flat[use_ccdf]
        if use_cdf.any():
            out[use_cdf] = self._solve(cdf_target, tail=False)
        if use_ccdf.any():
            out[use_ccdf] = self._solve(ccdf_target, tail=True)
        out = out.reshape(arr.shape)
        return out[()] if scalar else out

    def icdf(self, p: Any) -> Any:
        r"""Quantile :math:`F^{-1}(p)` for p in [0, 1], vectorised.

        A bracket from the sampling table (monotone cdf checked by :meth:`check_density`), then
        safeguarded Newton steps on :math:`F(t) = p` for :math:`p \le 1/2` and on
        :math:`\log \bar F(t) = \log(1 - p)` otherwise, to a few ulps in t.

        Raises
        ------
        NotADistribution
            If the ME function is not a density (see :meth:`check_density`).
        """
        return self._invert(p, "p", upper=False)

    def iccdf(self, q: Any) -> Any:
        r"""Inverse of the ccdf, :math:`\bar F^{-1}(q)`: accurate for tiny tail probabilities q."""
        return self._invert(q, "q", upper=True)

    def sample(self, shape: int | tuple[int, ...] = (), rng: Any = None) -> Any:
        r"""Random variates by exact inversion of the cdf.

        With :math:`U` uniform on [0, 1) from ``numpy.random.default_rng(rng)``, returns
        :math:`F^{-1}(U)` for :math:`U < 1/2` and :math:`\bar F^{-1}(1 - U)` otherwise (both ends
        at full float resolution), solved by :meth:`icdf`/:meth:`iccdf` to a few ulps: the sample
        is the exact inversion of :math:`F` up to float64 rounding (no interpolation error).  The
        same seed gives the same sample.  Valid for any ME density, PH or not.

        Raises
        ------
        NotADistribution
            If the ME function is not a density (see :meth:`check_density`).
        """
        gen = np.random.default_rng(rng)
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        shape = tuple(int(k) for k in shape)
        if any(k < 0 for k in shape):
            raise InvalidParameter("shape", shape, "nonnegative integers")
        self._table()
        u = gen.random(shape).ravel()
        out = np.empty_like(u)
        low = u < 0.5
        if low.any():
            out[low] = self.icdf(u[low])
        if (~low).any():
            out[~low] = self.iccdf(1.0 - u[~low])
        out = out.reshape(shape)
        return out[()] if shape == () else out

    # ================================================================== realisations
    def to_matrix(self) -> tuple[sp.Matrix, sp.Matrix]:
        r"""An exact representation :math:`(\alpha, A)`, :math:`f(t) = \alpha e^{At}(-A)\mathbf 1`.

        Companion construction of note me_pade.md §1.5: :math:`A_c` with ones on the
        superdiagonal and last row :math:`(-a_0, \dots, -a_{n-1})`, :math:`\beta = (b_0, \dots,
        b_{n-1})`, :math:`v = (-A_c)^{-1} e_n = e_1/a_0`, :math:`T = I + (v - \mathbf 1) e_1^T`,
        :math:`A = T^{-1} A_c T`, :math:`\alpha = \beta T` (so :math:`\alpha\mathbf 1 = 1`).
        Representations are not unique; compare transforms, not matrices.

        Returns
        -------
        (sympy.Matrix, sympy.Matrix)
            ``alpha`` of shape (1, n) and ``A`` of shape (n, n), exact rationals.
        """
        n = self.order
        a = self._lst.denominator
        beta = sp.Matrix([[self._lst.numerator[k] if k < len(self._lst.numerator) else 0
                           for k in range(n)]])
        Ac = sp.zeros(n, n)
        for i in range(n - 1):
            Ac[i, i + 1] = 1
        for k in range(n):
            Ac[n - 1, k] = -a[k]
        v = sp.zeros(n, 1)
        v[0] = 1 / a[0]
        e1 = sp.zeros(1, n)
        e1[0] = 1
        T = sp.eye(n) + (v - sp.ones(n, 1)) * e1
        A = T.inv() * Ac * T
        alpha = beta * T
        return alpha, A

    def to_matrix_float(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`to_matrix` as float64 numpy arrays (``alpha`` of shape (n,), ``A`` (n, n))."""
        alpha, A = self.to_matrix()
        return (np.array([float(x) for x in alpha], dtype=float),
                np.array(A.tolist(), dtype=float))

    def to_scipy(self) -> Any:
        """A ``scipy.stats`` distribution (new infrastructure) built by ``make_distribution``.

        Its ``pdf``, ``cdf``, ``ccdf``, ``icdf``, ``iccdf``, ``moment`` and ``sample`` are this
        object's; scipy supplies everything else (``logpdf``, ``median``, ``entropy``, plots,
        shifting/scaling ``X * 2 + 1``).

        Raises
        ------
        NotADistribution
            If the ME function is not a density (see :meth:`check_density`).
        """
        if "scipy" not in self._cache:
            self.check_density()
            from scipy import stats

            self._cache["scipy"] = stats.make_distribution(MatrixExponential(self))()
        return self._cache["scipy"]

    # ================================================================== dunder
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ME):
            return NotImplemented
        return self._lst == other._lst

    def __hash__(self) -> int:
        return hash(("ME", self._lst))

    def __repr__(self) -> str:
        return f"ME({self.transform})"

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle f^*(s) = {sp.latex(self.transform)}$"


def _nan_passing(me_method: Any, x: Any) -> np.ndarray:
    """Apply an ME method, passing NaN through as scipy's infrastructure expects."""
    x = np.asarray(x, dtype=float)
    nan = np.isnan(x)
    if not nan.any():
        return np.asarray(me_method(x))
    out = np.full(x.shape, np.nan)
    out[~nan] = me_method(x[~nan])
    return out


class MatrixExponential:
    """``scipy.stats.make_distribution`` protocol (interface version 1.16.0) for an :class:`ME`.

    No shape parameters (scipy accepts an empty tuple); support :math:`[0, \\infty)`.
    """

    __make_distribution_version__ = "1.16.0"
    parameters: tuple = ()
    support = {"endpoints": (0.0, np.inf), "inclusive": (True, False)}

    def __init__(self, me: ME) -> None:
        self.me = me

    def pdf(self, x: Any) -> np.ndarray:
        return _nan_passing(self.me.pdf, x)

    def cdf(self, x: Any) -> np.ndarray:
        return _nan_passing(self.me.cdf, x)

    def ccdf(self, x: Any) -> np.ndarray:
        return _nan_passing(self.me.ccdf, x)

    def icdf(self, p: Any) -> np.ndarray:
        return _nan_passing(self.me.icdf, p)

    def iccdf(self, p: Any) -> np.ndarray:
        return _nan_passing(self.me.iccdf, p)

    def moment(self, order: Any, kind: str = "raw") -> float:
        return float(self.me.moment(int(order), kind))

    def sample(self, shape: Any, *, rng: Any = None) -> np.ndarray:
        shape = tuple(shape) if np.iterable(shape) else shape
        return np.asarray(self.me.sample(shape, rng=rng), dtype=float)
