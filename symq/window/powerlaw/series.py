"""The q-series engine of the power-law window law: coefficients, float tables, mpmath sums.

For the power-law class (:mod:`symq.window.powerlaw.law`) the scaled pre-loss window
``U = mu_0 W_pre^m`` is the series ``sum_j q^j E_j`` of independent ``Exp(1)`` variables, whose
survival function is ``sum_j c_j exp(-u q^-j)`` with
``c_j = (-1)^j q^(j(j+1)/2) / ((q;q)_j (q;q)_inf)``.  This module holds what every evaluation
of the law shares: the coefficients (:func:`qseries_coefficients`), their float tables with the
data of the running error bounds (:meth:`_QSeriesCore._setup_float`), the mpmath sum at an
adaptive precision (:meth:`_QSeriesCore._mp_sum`), the moments ``E[U^s]`` and the Palm integrals
``I(e) = (1 - beta^e)/e E[W_pre^e]``.

Numerics
--------
The series alternates and ``|c_0| = 1/(q;q)_inf ~ exp(pi^2/(6 ln(1/q)))``: about 0.16 digits
are cancelled for NewReno (``q = 1/4``), 4.5 for Scalable TCP (``q = 0.875``) and 70 for
``q = 0.99``; near ``w -> 0`` the density is super-exponentially small and the cancellation is
total.  Every float evaluation therefore carries a running error bound
(``eps * sum |terms| * (argument size)``), and the mpmath sums raise their precision until the
cancellation (``log10 sum |terms| / |sum|``) leaves the requested digits.  Coefficients are
computed once in mpmath and rounded.  Points whose value provably lies below ``1e-320`` (bound
``g_U(u) <= P(U <= u/q) <= prod_j min(1, u q^-j-1)``, :meth:`_QSeriesCore._log_bound_U`) are
returned as 0 without mpmath work.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.parameters import real_value as _real
from symq.core.precision import local_mp, working_dps

__all__ = ["qseries_coefficients"]

_EPS = np.finfo(float).eps
_FLOAT_TOL = 1e-11          # accepted float error bound of densities, relative to the value
_CDF_TOL = 1e-10            # same for distribution functions (scipy's incomplete gamma is
                            # only good to ~1e-13 relative)
_MAX_DPS = 6000
_LOG_TINY = math.log(1e-320)


def _points(name: str, w: ArrayLike) -> NDArray[np.float64]:
    try:
        arr = np.asarray(w, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter(name, w, "real numbers") from None
    if np.isnan(arr).any():
        raise InvalidParameter(name, w, "real numbers (no NaN)")
    return arr


def qseries_coefficients(q: float, terms: int, dps: int = 30) -> list:
    """The coefficients ``c_j = (-1)^j q^(j(j+1)/2) / ((q;q)_j (q;q)_inf)``, ``j < terms``.

    Hypoexponential series of ``sum_j q^j E_j`` (``derivations/awp.md``, step "Survival function of
    U"); ``sum_j c_j = 1``.

    Parameters
    ----------
    q : float
        In ``(0, 1)``.
    terms : int
        Number of coefficients.
    dps : int, default 30
        mpmath decimal digits.

    Returns
    -------
    list of mpmath.mpf

    Examples
    --------
    >>> c = qseries_coefficients(0.25, 40, dps=40)
    >>> with working_dps(40) as ctx:
    ...     bool(abs(ctx.fsum(c) - 1) < ctx.mpf(10) ** -35)
    True
    """
    q = _real("q", q, "a real number in (0, 1)", lambda v: 0 < v < 1)
    with working_dps(dps) as ctx:
        qm = ctx.mpf(q)
        c = [1 / ctx.qp(qm)]
        qj = ctx.mpf(1)
        for _ in range(1, int(terms)):
            qj *= qm
            c.append(-c[-1] * qj / (1 - qj))
        return [+v for v in c]




class _QSeriesCore:
    """Coefficients and series sums of a power-law window law (base of ``PowerLawWindow``).

    Expects the attributes set by :class:`~symq.window.powerlaw.PowerLawWindow`: ``alpha``,
    ``k``, ``gamma``, ``l``, ``beta``, ``m``, ``q``, ``mu0``, ``_cancel_digits`` and
    ``_Icache``.
    """

    def _setup_float(self, terms: int | None) -> None:
        """Float coefficients: log|c_j|, signs; ``terms`` chosen from q when not given."""
        self._float_ok = self._cancel_digits < 250
        if not self._float_ok:
            self.terms = int(terms) if terms is not None else 0
            return
        dps = int(self._cancel_digits) + 40
        with working_dps(dps) as ctx:
            q = self._mp_params()[1]          # beta^m in mpmath, not the rounded float
            lq = ctx.log(q)
            c = 1 / ctx.qp(q)
            logc = [ctx.log(abs(c))]
            logmax = logc[0]
            qj = ctx.mpf(1)
            j = 0
            limit = 30 * math.log(10)
            while True:
                j += 1
                qj *= q
                c = -c * qj / (1 - qj)
                lc = ctx.log(abs(c))
                logc.append(lc)
                logmax = max(logmax, lc - j * lq)
                if (terms is None and lc - j * lq < logmax - limit
                        and lc - j * lq < logc[-2] - (j - 1) * lq):
                    break
                if terms is not None and j + 1 >= int(terms):
                    break
                if j > 100000:  # pragma: no cover - q pathologically close to 1
                    self._float_ok = False
                    break
            self._logc = np.array([float(v) for v in logc])
            # |c_j| and |c_j q^-j| rounded once from mpmath (relative error <= eps/2)
            self._absc = np.array([float(ctx.exp(v)) for v in logc])
            self._absb = np.array([float(ctx.exp(v - i * lq)) for i, v in enumerate(logc)])
            # extended precision (x87 long double where available) for moderate cancellation
            ld = np.longdouble
            self._absb_ld = np.array([ld(ctx.nstr(ctx.exp(v - i * lq), 30))
                                      for i, v in enumerate(logc)], dtype=ld)
            self._qinv_ld = np.array([ld(ctx.nstr(q ** -i, 30)) for i in range(len(logc))],
                                     dtype=ld)
            m_mp, _, mu0_mp = self._mp_params()
            self._mu0_ld = ld(ctx.nstr(mu0_mp, 30))
            self._m_ld = ld(ctx.nstr(m_mp, 30))
        n = len(self._logc)
        self.terms = n
        jj = np.arange(n)
        self._sgn = np.where(jj % 2 == 0, 1.0, -1.0)
        self._lq = math.log(self.q)
        self._qinv = np.exp(-jj * self._lq)            # q^-j
        self._logb = self._logc - jj * self._lq        # log |c_j q^-j|
        self._sum_err = 3.0 + math.log2(n)


    # ------------------------------------------------------------------ mpmath core
    def _mp_params(self):
        ctx = local_mp()   # at the precision of the caller's working_dps block
        m = ctx.mpf(self.l) - ctx.mpf(self.k) + 1
        q = ctx.mpf(self.beta) ** m
        mu0 = ctx.mpf(self.gamma) / (ctx.mpf(self.alpha) * m)
        return m, q, mu0

    def _c0(self, dps: int):
        """``1/(q;q)_inf`` at ``dps`` digits (cached: ``mpmath.qp`` is slow for q near 1)."""
        cache = self.__dict__.setdefault("_c0cache", {})
        if dps not in cache:
            with working_dps(dps) as ctx:
                cache[dps] = 1 / ctx.qp(self._mp_params()[1])
        return local_mp().mpf(cache[dps])   # in the calling thread's context (see _I0_mp)

    def _mp_sum(self, make_phi: Callable[[], Callable[[int, Any, Any], Any]], digits: int,
                const: int = 0, what: str = "series"):
        """``const + c_0 sum_j r_j phi(j)`` with ``r_j = c_j/c_0``, to ``digits`` digits.

        ``phi = make_phi()`` is built at the working precision (so that the inputs of a sum
        with cancellation are as precise as the sum) and ``phi(j, q, q^j)`` gives the factor of
        term ``j``.  The working precision is raised until the cancellation
        (``log10 sum|terms| / |sum|``) leaves ``digits`` digits.
        """
        dps = _quantise(digits + 12 + int(self._cancel_digits))
        while True:
            with working_dps(dps) as ctx:
                q = self._mp_params()[1]
                c0 = self._c0(dps)
                phi = make_phi()
                total = ctx.mpf(const)
                absum = abs(total)
                r = ctx.mpf(1)
                qj = ctx.mpf(1)
                j = 0
                maxabs = ctx.mpf(0)
                prev = None
                small = ctx.mpf(10) ** (-(dps + 5))
                while True:
                    t = c0 * r * phi(j, q, qj)
                    a = abs(t)
                    total += t
                    absum += a
                    maxabs = max(maxabs, a)
                    if j > 0 and a <= small * maxabs and (prev is None or a <= prev):
                        break
                    prev = a
                    j += 1
                    if j > 200000:  # pragma: no cover
                        raise NotConverged(what, float(a / maxabs), float(small), j)
                    qj *= q
                    r = -r * qj / (1 - qj)
                if total == 0:
                    lost = dps
                else:
                    lost = float(ctx.log10(absum / abs(total)))
                if dps - lost >= digits + 5:
                    with working_dps(digits + 5) as ctx:
                        return +total
                new = _quantise(max(int(dps * 1.5), int(lost + digits + 20)))
                if new > _MAX_DPS:
                    raise NotConverged(f"{what} (mpmath, {dps} digits)", float(lost), float(dps),
                                       j)
                dps = new

    def _EU_mp(self, s, digits: int):
        """``E[U^s]`` for ``U = sum_j q^j E_j`` and any real ``s`` (mpf)."""
        with working_dps(digits + 10) as ctx:
            s = ctx.mpf(s)
            n = -s
            if n >= 1 and n == ctx.floor(n):  # pole of Gamma(1+s) cancels a zero of the sum
                n = int(n)
                deriv = self._mp_sum(lambda: lambda j, q, qj: j * ctx.log(q) * qj ** s, digits + 5,
                                     what="moment series")
                return (-1) ** (n - 1) / ctx.factorial(n - 1) * deriv
            ssum = self._mp_sum(lambda: lambda j, q, qj: qj ** s, digits + 5, what="moment series")
            return ctx.gamma(1 + s) * ssum

    def _I_mp(self, e, digits: int):
        """``I(e) = (1 - beta^e)/e E[W_pre^e]``, ``I(0) = ln(1/beta)`` (Palm inversion)."""
        with working_dps(digits + 10) as ctx:
            e = ctx.mpf(e)
            m, _, mu0 = self._mp_params()
            b = ctx.mpf(self.beta)
            if e == 0:
                return -ctx.log(b)
            fac = -ctx.expm1(e * ctx.log(b)) / e
            return fac * mu0 ** (-e / m) * self._EU_mp(e / m, digits + 5)

    def _I0_mp(self, digits: int):
        """``I(1-k)`` (``alpha E_0[T]``), cached per precision."""
        key = digits
        if key not in self._Icache:
            ctx = local_mp()
            self._Icache[key] = self._I_mp(ctx.mpf(1) - ctx.mpf(self.k), digits)
        # re-created in the calling thread's context: a number of another thread's context
        # would compute at that context's precision when it is the left operand
        return local_mp().mpf(self._Icache[key])

    @functools.cached_property
    def _I0(self) -> float:
        return float(self._I0_mp(20))

    def _log_bound_U(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """``log prod_{j >= 0} min(1, u q^-j)``: an upper bound of ``log P(U <= u)``."""
        lq = math.log(self.q)
        out = np.zeros_like(u)
        pos = u > 0
        lu = np.log(np.where(pos, u, 1.0))
        # factors j = 0..J-1 with u q^-j < 1, J = ceil(log(1/u)/log(1/q))
        J = np.where(pos & (lu < 0), np.ceil(lu / lq), 0.0)
        out = J * lu - lq * J * (J - 1) / 2
        return np.where(pos, out, -np.inf)



def _quantise(dps: int) -> int:
    """Round a precision up to a multiple of 16 (fewer distinct precisions, better caching)."""
    return 16 * ((int(dps) + 15) // 16)


def exp_neg(x, qj):
    """``exp(-x/qj)`` in mpmath (helper of the series)."""
    return local_mp().exp(-x / qj)


def _vectorise(fn: Callable[[float], float], s: ArrayLike):
    arr = np.asarray(s)
    if arr.ndim == 0:
        return fn(arr.item())
    flat = [fn(v) for v in arr.ravel().tolist()]
    return np.array(flat, dtype=float).reshape(arr.shape)


def _vectorise_mp(fn, w):
    if isinstance(w, (list, tuple, np.ndarray)):
        arr = np.asarray(w, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for i, v in np.ndenumerate(arr):
            out[i] = fn(v)
        return out
    return fn(w)

