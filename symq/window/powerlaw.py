"""Closed-form stationary law of power-law adaptive window protocols (q-series).

Altman, Avrachenkov, Kherani, Prabhu, *Performance analysis and stochastic stability of
congestion control protocols*, IEEE INFOCOM 2005; reference note ``routing_window.md`` section
B4.  The window (time in RTTs) grows as ``dW/dt = alpha W^k``, losses are Poisson with intensity
``gamma W^l`` and a loss multiplies the window by ``beta``.  With ``m = l - k + 1 > 0`` the
pre-loss windows satisfy the ARMA recursion ``V' = q V + E/mu_0`` for ``V = W_pre^m``,
``q = beta^m``, ``mu_0 = gamma/(alpha m)`` and ``E ~ Exp(1)`` (Dumas, Guillemin, Robert, Adv.
Appl. Prob. 34, 2002), so ``U = mu_0 V = sum_j q^j E_j`` and

* ``P(U > u) = sum_j c_j exp(-u q^-j)``, ``c_j = (-1)^j q^(j(j+1)/2) / ((q;q)_j (q;q)_inf)``;
* ``E[U^s] = Gamma(1+s) sum_j c_j q^(j s)`` (an entire function of ``s``: every real moment of
  ``U`` is finite, the poles of ``Gamma`` at negative integers cancel with zeros of the sum);
* time averages ``E[W^s] = I(s-k+1)/I(1-k)`` with ``I(e) = (1-beta^e)/e E[W_pre^e]``,
  ``I(0) = ln(1/beta)`` (Palm inversion over a loss cycle);
* the time-stationary density ``f(w) = g_U(mu_0 w^m) / (w^k I(1-k))`` where
  ``g_U(u) = sum_j c_j q^-j exp(-u q^-j)`` is the density of ``U``.  (This is the note's
  ``sum_j (c_j - c_{j-1}) e^{-mu_j w^m}/(alpha w^k E_0[T])``: ``c_j - c_{j-1} = c_j q^-j``.)

Because the law of ``U`` has a density that vanishes faster than any power at 0 and a
Weibull-type tail, **every real moment** ``E[W^s]`` is finite when ``m > 0``.

Numerics
--------
The series alternates and ``|c_0| = 1/(q;q)_inf ~ exp(pi^2/(6 ln(1/q)))``: about 0.16 digits
are cancelled for NewReno (``q = 1/4``), 4.5 for Scalable TCP (``q = 0.875``) and 70 for
``q = 0.99``; near ``w -> 0`` the density is super-exponentially small and the cancellation is
total.  Every float evaluation therefore carries a running error bound
(``eps * sum |terms| * (argument size)``); a point whose bound exceeds ``1e-11`` of the value is
recomputed with mpmath at the precision the cancellation needs (the precision is raised until
the sum keeps the requested digits), after a second try in ``numpy.longdouble`` (3 more digits
on x86).  Coefficients are computed once in mpmath and rounded.  Points whose value provably
lies below ``1e-320`` (bound ``g_U(u) <= P(U <= u/q) <= prod_j min(1, u q^-j-1)``) are
returned as 0 without mpmath work.

Cost (measured, one core): a float point is ``terms`` exponentials (12 for NewReno, 35 for
Scalable TCP); an mpmath point 0.1 to 0.5 ms.  ``10^5`` points spread over
``[0.2, 5] E[W]``: 0.07 s for NewReno (all float), 3.3 s for Scalable TCP (the left part,
``w < 0.4 E[W]``, needs mpmath).  Agreement with mpmath at 50 digits over
``[0.003, 16] E[W]``: 3e-13 (NewReno), 7e-13 (Scalable), 4e-13 (HighSpeed-like ``k = 0.8``).
Distribution functions use ``scipy.special.gammaincc`` (good to ~1e-13) and accept a float
result at ``1e-10``; they fall back to ``mpmath.gammainc``, which is slower (a few ms).
:meth:`PowerLawWindow.pdf_laplace` is an independent float path (saddle-point Laplace
inversion, no cancellation) used for validation.

Examples
--------
>>> w = PowerLawWindow(alpha=1.0, k=0, gamma=0.5, l=0, beta=0.5)   # AIMD, constant loss rate
>>> round(w.mean(), 12)                                             # alpha/(lam (1 - beta))
4.0
>>> round(OKM_CONSTANT, 6)                                         # NewReno E[W] sqrt(p)
1.309833
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.parameters import real_value as _real
from symq.core.precision import local_mp, working_dps

__all__ = [
    "OKM_CONSTANT",
    "PowerLawWindow",
    "mean_window",
    "mean_window_newreno",
    "qseries_coefficients",
]

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

    Reference note B4 (hypoexponential series of ``sum_j q^j E_j``); ``sum_j c_j = 1``.

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


class PowerLawWindow:
    """Stationary window law for ``a(w) = alpha w^k``, ``lam(w) = gamma w^l``, ``d(w) = beta w``.

    Reference note B4 (Altman, Avrachenkov, Kherani, Prabhu, INFOCOM 2005; Dumas, Guillemin,
    Robert 2002 for the ARMA property).  Covers NewReno (``k=0, l=1``), AIMD with constant
    loss rate (``k=l=0``), Scalable TCP with packet losses (``k=l=1``) and HighSpeed-like
    profiles ``k = 2 - 1/S``, ``l = 1``.

    Parameters
    ----------
    alpha : float
        Increase coefficient, ``> 0``.
    k : float
        Increase exponent (real).
    gamma : float
        Loss intensity coefficient, ``> 0`` (``p`` for per-packet losses with ``l = 1``).
    l : float
        Loss exponent (real).
    beta : float
        Multiplicative decrease factor, in ``(0, 1)``.
    terms : int, optional
        Number of series terms used by the float paths; by default chosen from ``q`` so that
        the neglected coefficients are below ``1e-30`` of the largest one.  A user-given
        ``terms`` is trusted (no truncation check).  The mpmath paths always choose their own
        number of terms.

    Raises
    ------
    InvalidParameter
        A parameter outside its domain.
    StabilityError
        ``m = l - k + 1 <= 0``: ``m = 0`` (e.g. MIMD with constant loss rate) needs a floor
        ``w_min`` (see :class:`symq.window.mimd.MIMDFloor`); ``m < 0`` is transient (the total
        loss hazard ``int lam/a`` is finite, losses stop with positive probability).

    Examples
    --------
    >>> s = PowerLawWindow(0.01, 1, 1e-4, 1, 0.875)     # Scalable TCP, p = 1e-4
    >>> bool(abs(s.mean() - 0.01 / (1e-4 * math.log(1 / 0.875))) < 1e-9 * s.mean())
    True
    """

    def __init__(self, alpha: float, k: float, gamma: float, l: float, beta: float,
                 terms: int | None = None) -> None:
        self.alpha = _real("alpha", alpha, "a finite real number > 0", lambda v: v > 0)
        self.k = _real("k", k, "a finite real number", lambda v: True)
        self.gamma = _real("gamma", gamma, "a finite real number > 0", lambda v: v > 0)
        self.l = _real("l", l, "a finite real number", lambda v: True)
        self.beta = _real("beta", beta, "a real number in (0, 1)", lambda v: 0 < v < 1)
        m = self.l - self.k + 1.0
        if m == 0:
            raise StabilityError(
                f"power-law window with m = l - k + 1 = 0 (k={self.k!r}, l={self.l!r}) has no "
                "stationary law on (0, inf): ln W is a random walk over loss cycles; it needs a "
                "floor w_min and alpha < gamma ln(1/beta) (use MIMDFloor for the MIMD case)")
        if m < 0:
            raise StabilityError(
                f"power-law window with m = l - k + 1 = {m!r} < 0 (k={self.k!r}, l={self.l!r}) "
                "is transient: the loss hazard int lam(w)/a(w) dw is finite, so with positive "
                "probability there are no further losses and W -> infinity")
        self.m = m
        self.q = self.beta ** m
        if not 0 < self.q < 1:
            raise InvalidParameter("beta", beta, "a real number in (0, 1) with 0 < beta^m < 1",
                                   f"q = beta^m = {self.q!r} is not representable")
        self.mu0 = self.gamma / (self.alpha * m)
        self.rho = (1.0 - self.k) / m
        with working_dps(30) as ctx:
            self._cancel_digits = float(-ctx.log10(ctx.qp(ctx.mpf(self.q))))
        if terms is not None and (isinstance(terms, (bool, np.bool_))
                                  or not isinstance(terms, (int, np.integer)) or terms < 1):
            raise InvalidParameter("terms", terms, "an integer >= 1 or None")
        self._setup_float(terms)
        self._Icache: dict[int, Any] = {}

    # ------------------------------------------------------------------ set-up
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
                if terms is None and lc - j * lq < logmax - limit and lc - j * lq < logc[-2] - (j - 1) * lq:
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

    def __repr__(self) -> str:
        return (f"PowerLawWindow(alpha={self.alpha!r}, k={self.k!r}, gamma={self.gamma!r}, "
                f"l={self.l!r}, beta={self.beta!r}; m={self.m!r}, q={self.q!r}, "
                f"terms={self.terms})")

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
        """``I(e) = (1 - beta^e)/e E[W_pre^e]``, ``I(0) = ln(1/beta)`` (reference B4)."""
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

    # ------------------------------------------------------------------ moments
    def pre_loss_moment(self, r: ArrayLike) -> NDArray[np.float64] | float:
        """Palm moment ``E[W_pre^r] = Gamma(1+r/m) (alpha m/gamma)^(r/m) sum_j c_j beta^(j r)``.

        Reference note B4.  Finite for every real ``r`` (for ``r/m <= -1`` through the analytic
        continuation, the poles of ``Gamma`` being cancelled by zeros of the sum).

        Examples
        --------
        >>> w = PowerLawWindow(1.0, 0, 0.01, 1, 0.5)     # NewReno: W_pre^2 = (2/p) sum 4^-j E_j
        >>> round(w.pre_loss_moment(2) * 0.01 * (1 - 0.25) / 2, 12)
        1.0
        """
        def one(rv: float) -> float:
            rv = _real("r", rv, "a finite real number", lambda v: True)
            with working_dps(30) as ctx:
                m, _, mu0 = self._mp_params()
                val = mu0 ** (-ctx.mpf(rv) / m) * self._EU_mp(ctx.mpf(rv) / m, 20)
                return float(val)
        return _vectorise(one, r)

    def moment(self, s: ArrayLike) -> NDArray[np.float64] | float:
        """Time-stationary ``E[W^s] = I(s-k+1)/I(1-k)`` for real ``s`` (reference B4).

        Every real moment is finite when ``m > 0``; only a non-finite ``s`` is rejected.
        Computed in mpmath (20 significant digits, rounded to float).

        Raises
        ------
        InvalidParameter
            ``s`` not a finite real number.

        Examples
        --------
        >>> w = PowerLawWindow(1.0, 0, 0.5, 0, 0.5)    # AIMD, lam = 0.5: E[W^2] = 2 (2)^2/((1-1/2)(1-1/4))
        >>> round(w.moment(2), 10)
        21.3333333333
        """
        def one(sv: float) -> float:
            sv = _real("s", sv, "a finite real number (every real moment exists for m > 0)",
                       lambda v: True)
            with working_dps(30) as ctx:
                num = self._I_mp(ctx.mpf(sv) - ctx.mpf(self.k) + 1, 20)
                return float(num / self._I0_mp(20))
        return _vectorise(one, s)

    def mean(self) -> float:
        """Time-stationary ``E[W]`` (packets)."""
        return float(self.moment(1.0))

    def second_moment(self) -> float:
        """Time-stationary ``E[W^2]``."""
        return float(self.moment(2.0))

    def loss_rate(self) -> float:
        """Loss events per RTT, ``E[lam(W)] = 1/E_0[T] = alpha/I(1-k)`` (reference B3)."""
        return self.alpha / self._I0

    def mean_cycle(self) -> float:
        """Palm mean time between losses ``E_0[T] = I(1-k)/alpha`` (RTTs)."""
        return self._I0 / self.alpha

    def throughput(self, rtt: float = 1.0) -> float:
        """``E[W]/rtt`` (packets per time unit of ``rtt``)."""
        rtt = _real("rtt", rtt, "a finite real number > 0", lambda v: v > 0)
        return self.mean() / rtt

    # ------------------------------------------------------------------ bounds
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

    # ------------------------------------------------------------------ densities
    def _gU_float(self, x: NDArray[np.float64]):
        """Float ``g_U(x)`` and its error bound (``x`` 1-d, finite, > 0)."""
        out = np.empty_like(x)
        err = np.empty_like(x)
        step = max(1, 2_000_000 // self.terms)
        for i in range(0, x.size, step):
            xs = x[i:i + step, None]
            arg = xs * self._qinv
            with np.errstate(under="ignore", over="ignore"):
                t = self._absb * np.exp(-arg)
            out[i:i + step] = (self._sgn * t).sum(axis=1)
            # per term: coefficient (eps/2), exp (eps), argument (3 eps arg); summation
            err[i:i + step] = _EPS * (t * (self._sum_err + 3 * arg)).sum(axis=1)
        return out, err

    def _gU_longdouble(self, w: NDArray[np.float64]):
        """``g_U(mu_0 w^m)`` in ``numpy.longdouble`` (about 3 more digits on x86), error bound."""
        ld = np.longdouble
        eps = float(np.finfo(ld).eps)
        x = self._mu0_ld * np.power(w.astype(ld), self._m_ld)
        sgn = self._sgn.astype(ld)
        out = np.empty(w.size)
        err = np.empty(w.size)
        step = max(1, 500_000 // self.terms)
        for i in range(0, w.size, step):
            arg = x[i:i + step, None] * self._qinv_ld
            with np.errstate(under="ignore", over="ignore"):
                t = self._absb_ld * np.exp(-arg)
            g = (sgn * t).sum(axis=1)
            out[i:i + step] = g.astype(float)
            err[i:i + step] = (eps * (t * (self._sum_err + 3 * arg)).sum(axis=1)).astype(float) \
                + _EPS * np.abs(out[i:i + step])
        return out, err

    def _gU_saddle(self, x: NDArray[np.float64], h: float = 0.3, tau_max: float = 30.0):
        """Float ``g_U(x)`` by Laplace inversion on the saddle-point line, with error estimate.

        ``g_U(x) = (1/pi) int_0^inf Re[exp((sigma+it)x) phi(sigma+it)] dt`` with
        ``phi(s) = E[e^{-sU}] = prod_j 1/(1 + s q^j)`` and ``sigma > -1`` the saddle point of
        ``e^{sx} phi(s)`` (``sum_j q^j/(1 + sigma q^j) = x``).  On that line
        ``|phi(sigma+it)| <= phi(sigma)``: the integrand has no cancellation, so even
        super-exponentially small densities come out with full relative precision (unlike
        the q-series).  Trapezoid and midpoint rules of step ``h`` (in units of the saddle
        width) give the value (their mean) and an error estimate (half their difference).
        ``log phi`` uses ``J0`` explicit factors and a geometric-series tail.
        """
        q, lq = self.q, self._lq
        x = np.asarray(x, dtype=float)
        # saddle point: F(sigma) = sum q^j/(1+sigma q^j) - x is convex decreasing on (-1, inf)
        # and F(1/x - 1) >= 0, so Newton from there increases monotonically to the root
        sig = 1.0 / x - 1.0
        Jn = math.ceil(math.log(1e18 * max(1.0, float(np.max(1.0 / x)) * 1e3)) / -lq) + 1
        qj = q ** np.arange(Jn)
        ok = np.zeros(x.size, dtype=bool)
        for _ in range(200):
            d = 1.0 + sig[:, None] * qj
            F = (qj / d).sum(axis=1) - x
            Fp = -(qj ** 2 / d ** 2).sum(axis=1)
            new = sig - F / Fp
            ok = np.abs(new - sig) <= 1e-14 * np.maximum(1.0, np.abs(1 + sig))
            sig = np.maximum(new, sig)
            if ok.all():
                break
        d = 1.0 + sig[:, None] * qj
        scale = 1.0 / np.sqrt((qj ** 2 / d ** 2).sum(axis=1))      # width of the peak in t
        smax = float(np.max(np.abs(sig) + tau_max * scale))
        J0 = max(1, math.ceil(math.log(1e3 * max(smax, 1e-3)) / -lq))
        qJ = q ** J0
        qk = q ** np.arange(J0)
        L0 = np.log1p(sig[:, None] * qk).sum(axis=1) + _log_tail(sig, qJ, q)
        out = np.empty_like(x)
        err = np.empty_like(x)
        for label, offset in (("trap", 0.0), ("mid", 0.5)):
            tau = (np.arange(math.floor(tau_max / h)) + offset) * h
            wts = np.full(tau.size, h)
            if offset == 0.0:
                wts[0] = h / 2
            t = tau[None, :] * scale[:, None]
            sc = sig[:, None] + 1j * t
            Ls = np.log1p(sc[:, :, None] * qk).sum(axis=2) + _log_tail(sc, qJ, q)
            integ = np.exp(1j * t * x[:, None] - (Ls - L0[:, None])).real
            val = (integ * wts).sum(axis=1) * scale
            tail = np.abs(integ[:, -1])
            if label == "trap":
                trap, tail_t = val, tail
            else:
                mid = val
        pref = np.exp(sig * x - L0) / np.pi
        out = 0.5 * (trap + mid) * pref
        err = (0.5 * np.abs(trap - mid) + 1e3 * (tail_t + tail) * scale) * pref \
            + 1e-14 * np.abs(out)
        err = np.where(ok, err, np.inf)
        return out, err

    def _gU_mp(self, x, digits: int):
        return self._mp_sum(lambda: lambda j, q, qj: exp_neg(x, qj) / qj, digits,
                            what="density series")

    def pdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary density ``f(w) = g_U(mu_0 w^m)/(w^k I(1-k))`` (reference B4).

        Float evaluation with an error bound; points whose bound exceeds ``1e-11`` relative are
        recomputed in mpmath (see the module notes).  ``f = 0`` for ``w <= 0`` and ``w = inf``.

        Examples
        --------
        >>> w = PowerLawWindow(1.0, 0, 0.5, 0, 0.5)
        >>> from scipy.integrate import quad
        >>> round(quad(lambda x: float(w.pdf(x)), 0, 60, limit=200)[0], 9)
        1.0
        """
        warr = _points("w", w)
        flat = warr.ravel()
        out = np.zeros_like(flat)
        good = (flat > 0) & np.isfinite(flat)
        idx = np.nonzero(good)[0]
        if idx.size:
            wv = flat[idx]
            x = self.mu0 * wv ** self.m
            logpref = -self.k * np.log(wv) - math.log(self._I0)
            # provably below 1e-320: zero without further work
            bound = self._log_bound_U(x / self.q) + logpref
            live = bound > _LOG_TINY
            val = np.zeros_like(wv)
            need = np.zeros(wv.size, dtype=bool)
            if self._float_ok and live.any():
                g, e = self._gU_float(x[live])
                v = g * np.exp(logpref[live])
                li = np.nonzero(live)[0]
                val[li] = v
                need[li] = ~(e <= _FLOAT_TOL * np.abs(g)) | (g < 0)
                sel = np.nonzero(need)[0]
                if sel.size:   # second try in extended precision
                    g, e = self._gU_longdouble(wv[sel])
                    good = (e <= _FLOAT_TOL * np.abs(g)) & (g > 0)
                    val[sel[good]] = g[good] * np.exp(logpref[sel[good]])
                    need[sel[good]] = False
            else:
                need = live.copy()
            for i in np.nonzero(need)[0]:
                val[i] = float(self._pdf_mp_one(float(wv[i]), 17))
            out[idx] = val
        return out.reshape(warr.shape)

    def _pdf_mp_one(self, w: float, digits: int):
        with working_dps(digits + 10) as ctx:
            m, _, mu0 = self._mp_params()
            wm = ctx.mpf(w)
            x = mu0 * wm ** m
            g = self._gU_mp(x, digits + 3)
            return g / (wm ** ctx.mpf(self.k) * self._I0_mp(digits + 3))

    def pdf_laplace(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary density by saddle-point Laplace inversion (validation path).

        Independent of the q-series: ``E[e^{-sU}] = prod_j 1/(1 + s q^j)`` is inverted on the
        vertical line through the saddle point, where the integrand does not cancel, so the
        result keeps ~1e-13 relative precision even where the density is ``1e-100``.  About
        0.5 ms per point; returns ``nan`` where its own error estimate exceeds ``1e-11``
        relative: the right tail, and everywhere when ``q`` is small (NewReno, ``q = 1/4``:
        the law is close to one exponential and the integrand decays too slowly in ``t``).
        Meant for ``q >~ 0.6`` and ``w`` below the mean, exactly where the q-series cancels.
        """
        warr = _points("w", w)
        flat = warr.ravel()
        out = np.zeros_like(flat)
        idx = np.nonzero((flat > 0) & np.isfinite(flat))[0]
        if idx.size:
            wv = flat[idx]
            g, e = self._gU_saddle(self.mu0 * wv ** self.m)
            v = g / (wv ** self.k * self._I0)
            out[idx] = np.where(e <= _FLOAT_TOL * np.abs(g), v, np.nan)
        return out.reshape(warr.shape)

    def pdf_mp(self, w: Any, dps: int = 50):
        """mpmath twin of :meth:`pdf` with ``dps`` correct significant digits (validation).

        Returns an ``mpf`` for a scalar, an object array otherwise.
        """
        def one(wv):
            ctx = local_mp()
            wv = ctx.mpf(wv)
            if not wv > 0 or wv == ctx.inf:
                return ctx.mpf(0)
            return self._pdf_mp_one(wv, int(dps))
        return _vectorise_mp(one, w)

    # ------------------------------------------------------------------ distribution functions
    def _gammaincc_float(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        """Upper incomplete gamma ``Gamma(rho, y)`` (unregularised) for ``rho >= 0``."""
        rho = self.rho
        with np.errstate(under="ignore"):
            if rho == 0:
                return special.exp1(y)
            return special.gammaincc(rho, y) * special.gamma(rho)

    def _ccdf_float(self, x: NDArray[np.float64]):
        """``P(W > w)`` with ``x = mu0 w^m``, float, with error bound (``rho >= 0``)."""
        rho, lq = self.rho, self._lq
        jj = np.arange(self.terms)
        logcoef = self._logc + jj * (rho - 1) * lq - rho * math.log(self.mu0) \
            - math.log(self.m * self._I0)
        out = np.empty_like(x)
        err = np.empty_like(x)
        step = max(1, 2_000_000 // self.terms)
        for i in range(0, x.size, step):
            arg = x[i:i + step, None] * self._qinv
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                t = np.exp(logcoef) * self._gammaincc_float(arg)
            t = np.where(np.isfinite(t), t, np.inf)
            out[i:i + step] = (self._sgn * t).sum(axis=1)
            # measured: scipy's gammaincc*gamma to <= 8e-14 relative, exp1 to <= 2e-15
            gerr = 4e-15 if rho == 0 else 2e-13
            err[i:i + step] = gerr * t.sum(axis=1) + _EPS * (t * (4 + np.abs(logcoef))).sum(axis=1)
        return out, err

    def _ccdf_mp_one(self, w, digits: int, complement: bool):
        """``P(W > w)`` (or ``P(W <= w)`` if ``complement``) in mpmath."""
        wm = local_mp().mpf(w)
        sign = -1 if complement else 1

        def make_phi():
            ctx = local_mp()
            dps = ctx.dps
            m, _, mu0 = self._mp_params()
            rho = (1 - ctx.mpf(self.k)) / m
            x = mu0 * wm ** m
            pref = sign * mu0 ** (-rho) / (m * self._I0_mp(dps))
            return lambda j, q, qj: pref * qj ** (rho - 1) * ctx.gammainc(rho, x / qj)
        with working_dps(digits + 10) as ctx:
            return self._mp_sum(make_phi, digits + 3, const=1 if complement else 0,
                                what="distribution series")

    def _dist(self, w: ArrayLike, lower: bool) -> NDArray[np.float64]:
        warr = _points("w", w)
        flat = warr.ravel()
        out = np.empty_like(flat)
        out[flat <= 0] = 0.0 if lower else 1.0
        out[flat == np.inf] = 1.0 if lower else 0.0
        idx = np.nonzero((flat > 0) & np.isfinite(flat))[0]
        if idx.size:
            wv = flat[idx]
            x = self.mu0 * wv ** self.m
            val = np.zeros_like(wv)
            need = np.ones(wv.size, dtype=bool)
            if lower:
                # P(W <= w) <= mu0^-rho/(m I) B(x) x^rho/(N + rho), B bound of P(U <= x/q)
                lb = self._log_bound_U(x / self.q)
                N = np.ceil(np.log(np.maximum(self.q / np.maximum(x, 1e-300), 1.0)) / -self._lq)
                with np.errstate(divide="ignore", invalid="ignore"):
                    cb = lb + self.rho * np.log(x / self.mu0) - math.log(self.m * self._I0) \
                        - np.log(np.maximum(N + self.rho, 1e-300))
                tiny = (N + self.rho > 0.5) & (cb < _LOG_TINY)
                need &= ~tiny
            if self._float_ok and self.rho >= 0 and need.any():
                sel = np.nonzero(need)[0]
                s, e = self._ccdf_float(x[sel])
                v = 1.0 - s if lower else s
                val[sel] = v
                need[sel] = ~(e <= _CDF_TOL * np.abs(v)) | (v < 0) | (v > 1)
            for i in np.nonzero(need)[0]:
                val[i] = float(self._ccdf_mp_one(float(wv[i]), 17, complement=lower))
            out[idx] = np.clip(val, 0.0, 1.0)
        return out.reshape(warr.shape)

    def cdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary ``P(W <= w)``.

        ``P(W > w) = mu_0^-rho/(m I(1-k)) sum_j c_j q^(j(rho-1)) Gamma(rho, mu_0 w^m q^-j)``
        with ``rho = (1-k)/m`` (term-by-term integral of :meth:`pdf`).  Float with an error
        bound, mpmath fallback (``mpmath.gammainc``) as for :meth:`pdf`; ``k > 1`` always uses
        mpmath.

        Examples
        --------
        >>> w = PowerLawWindow(1.0, 0, 0.01, 1, 0.5)
        >>> w.cdf([0.0, np.inf]).tolist()
        [0.0, 1.0]
        """
        return self._dist(w, lower=True)

    def ccdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary ``P(W > w)`` (see :meth:`cdf`)."""
        return self._dist(w, lower=False)

    def cdf_mp(self, w: Any, dps: int = 50):
        """mpmath twin of :meth:`cdf` with ``dps`` significant digits."""
        def one(wv):
            ctx = local_mp()
            wv = ctx.mpf(wv)
            if not wv > 0:
                return ctx.mpf(0)
            if wv == ctx.inf:
                return ctx.mpf(1)
            return self._ccdf_mp_one(wv, int(dps), complement=True)
        return _vectorise_mp(one, w)

    def pre_loss_cdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Law of the window just before a loss (Palm): ``P(W_pre <= w)``.

        ``P(W_pre^m > v) = sum_j c_j exp(-mu_j v)``, ``mu_j = gamma/(alpha m q^j)``
        (reference B4), evaluated like :meth:`pdf`.

        Examples
        --------
        >>> w = PowerLawWindow(1.0, 0, 0.5, 0, 0.5)
        >>> w.pre_loss_cdf([0.0, np.inf]).tolist()
        [0.0, 1.0]
        """
        warr = _points("w", w)
        flat = warr.ravel()
        out = np.where(flat == np.inf, 1.0, 0.0)
        idx = np.nonzero((flat > 0) & np.isfinite(flat))[0]
        if idx.size:
            x = self.mu0 * flat[idx] ** self.m
            val = np.zeros_like(x)
            need = self._log_bound_U(x) > _LOG_TINY
            if self._float_ok and need.any():
                sel = np.nonzero(need)[0]
                arg = x[sel, None] * self._qinv
                with np.errstate(under="ignore", over="ignore"):
                    t = self._absc * np.exp(-arg)
                v = 1.0 - (self._sgn * t).sum(axis=1)
                e = _EPS * (2 + (t * (self._sum_err + 3 * arg)).sum(axis=1))
                val[sel] = v
                need[sel] = ~(e <= _FLOAT_TOL * np.abs(v)) | (v < 0) | (v > 1)
            for i in np.nonzero(need)[0]:
                val[i] = float(self.pre_loss_cdf_mp(float(flat[idx][i]), 17))
            out[idx] = np.clip(val, 0.0, 1.0)
        return out.reshape(warr.shape)

    def pre_loss_cdf_mp(self, w: Any, dps: int = 50):
        """mpmath twin of :meth:`pre_loss_cdf` (``dps`` significant digits)."""
        def one(wv):
            ctx = local_mp()
            wv = ctx.mpf(wv)
            if not wv > 0:
                return ctx.mpf(0)
            if wv == ctx.inf:
                return ctx.mpf(1)

            def make_phi():
                m, _, mu0 = self._mp_params()
                x = mu0 * wv ** m
                return lambda j, q, qj: -exp_neg(x, qj)
            with working_dps(int(dps) + 10) as ctx:
                return self._mp_sum(make_phi, int(dps) + 3, const=1, what="pre-loss series")
        return _vectorise_mp(one, w)


def _log_tail(s, qJ: float, q: float, order: int = 7):
    """``sum_{j >= J0} log(1 + s q^j)`` for ``|s| q^J0 <= 1e-3`` (``qJ = q^J0``)."""
    out = 0.0
    for n in range(1, order + 1):
        out = out + (-1) ** (n + 1) * (s * qJ) ** n / (n * (1 - q ** n))
    return out


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


# ---------------------------------------------------------------------- mean window sweeps
@functools.lru_cache(maxsize=256)
def _unit_mean(k: float, l: float, beta: float) -> float:
    """``E[W]`` at ``mu_0 = 1`` (``alpha = 1``, ``gamma = m``)."""
    m = l - k + 1.0
    return PowerLawWindow(1.0, k, m, l, beta).mean()


def mean_window(alpha: ArrayLike, k: float, gamma: ArrayLike, l: float,
                beta: float) -> NDArray[np.float64] | float:
    """``E[W]`` of the power-law window, vectorised over ``alpha`` and ``gamma``.

    Uses the scaling ``E[W] = (alpha m/gamma)^(1/m) E[W]|_{mu_0 = 1}`` (reference B4: the law of
    ``W`` is that of ``mu_0^(-1/m)`` times a law depending on ``(k, l, beta)`` only); the constant
    is computed once per ``(k, l, beta)`` by the q-series in mpmath.

    Parameters
    ----------
    alpha : float or array
        Increase coefficients, ``> 0``.
    k, l : float
        Exponents, ``m = l - k + 1 > 0``.
    gamma : float or array
        Loss coefficients, ``> 0`` (broadcast with ``alpha``).
    beta : float
        Decrease factor in ``(0, 1)``.

    Raises
    ------
    InvalidParameter
        A non-positive or non-finite ``alpha``/``gamma`` (the message gives the first bad
        entry and its index), or a bad scalar.
    StabilityError
        ``m <= 0``.

    Examples
    --------
    >>> mean_window(1.0, 0, np.array([0.5, 2.0]), 0, 0.5).tolist()   # alpha/(lam (1-beta))
    [4.0, 1.0]
    """
    k = _real("k", k, "a finite real number", lambda v: True)
    l = _real("l", l, "a finite real number", lambda v: True)
    beta = _real("beta", beta, "a real number in (0, 1)", lambda v: 0 < v < 1)
    a = _positive_array("alpha", alpha)
    g = _positive_array("gamma", gamma)
    m = l - k + 1.0
    if m <= 0:
        PowerLawWindow(1.0, k, 1.0, l, beta)  # raises the StabilityError with its message
    const = _unit_mean(k, l, beta)
    out = const * (a * (m / g)) ** (1.0 / m)
    if out.ndim == 0:
        return float(out)
    return out


def mean_window_newreno(p: ArrayLike) -> NDArray[np.float64] | float:
    """NewReno ``E[W] = OKM_CONSTANT/sqrt(p)`` for per-packet loss probabilities ``p``.

    ``alpha = 1``, ``k = 0``, ``lam(w) = p w``, ``beta = 1/2``;
    ``E[W] = sqrt(2/(pi p)) / ((1 - beta) sum_j c_j beta^j)`` with ``q = 1/4`` (reference B4,
    B6; Ott, Kemperman, Mathis 1996).  Vectorised: ``10^6`` values take a few milliseconds.

    Examples
    --------
    >>> bool(abs(mean_window_newreno(0.01) - 10 * OKM_CONSTANT) < 1e-12)
    True
    """
    g = _positive_array("p", p)
    out = _unit_mean(0.0, 1.0, 0.5) * np.sqrt(2.0 / g)
    return float(out) if out.ndim == 0 else out


def _positive_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, "real numbers > 0") from None
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        shown = arr.ravel()[i]
        raise InvalidParameter(name, float(shown), "finite real numbers > 0",
                               f"first bad entry at flat index {i}" if arr.ndim else "")
    return arr


def _okm_constant() -> float:
    """``lim sqrt(p) E[W]`` for NewReno, from the series ``sum_j c_j 2^-j`` at ``q = 1/4``."""
    with working_dps(40) as ctx:
        c = qseries_coefficients(0.25, 60, dps=40)
        s = ctx.fsum(cj * ctx.mpf(2) ** (-j) for j, cj in enumerate(c))
        return float(ctx.sqrt(2 / ctx.pi) / (ctx.mpf(1) / 2 * s))


#: NewReno constant ``lim_{p -> 0} E[W] sqrt(p)`` (exact for every ``p`` in the fluid model),
#: computed at import from the q-series; Ott, Kemperman and Mathis report 1.31.
OKM_CONSTANT: float = _okm_constant()
