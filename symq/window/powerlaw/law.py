"""Closed-form stationary law of power-law adaptive window protocols (q-series).

Altman, Avrachenkov, Kherani, Prabhu, *Performance analysis and stochastic stability of
congestion control protocols*, IEEE INFOCOM 2005; derived in ``derivations/awp.md``, section
"Power-law class".  The window (time in RTTs) grows as ``dW/dt = alpha W^k``, losses are Poisson
with intensity ``gamma W^l`` and a loss multiplies the window by ``beta``.  With
``m = l - k + 1 > 0`` the pre-loss windows satisfy the ARMA recursion ``V' = q V + E/mu_0`` for
``V = W_pre^m``, ``q = beta^m``, ``mu_0 = gamma/(alpha m)`` and ``E ~ Exp(1)`` (Dumas,
Guillemin, Robert, Adv. Appl. Prob. 34, 2002), so ``U = mu_0 V = sum_j q^j E_j`` and

* ``P(U > u) = sum_j c_j exp(-u q^-j)``, ``c_j = (-1)^j q^(j(j+1)/2) / ((q;q)_j (q;q)_inf)``;
* ``E[U^s] = Gamma(1+s) sum_j c_j q^(j s)`` (an entire function of ``s``: every real moment of
  ``U`` is finite, the poles of ``Gamma`` at negative integers cancel with zeros of the sum);
* time averages ``E[W^s] = I(s-k+1)/I(1-k)`` with ``I(e) = (1-beta^e)/e E[W_pre^e]``,
  ``I(0) = ln(1/beta)`` (Palm inversion over a loss cycle);
* the time-stationary density ``f(w) = g_U(mu_0 w^m) / (w^k I(1-k))`` where
  ``g_U(u) = sum_j c_j q^-j exp(-u q^-j)`` is the density of ``U``.  (Equivalently
  ``sum_j (c_j - c_{j-1}) e^{-mu_j w^m}/(alpha w^k E_0[T])``: ``c_j - c_{j-1} = c_j q^-j``.)

Because the law of ``U`` has a density that vanishes faster than any power at 0 and a
Weibull-type tail, **every real moment** ``E[W^s]`` is finite when ``m > 0``.

The numerics (cancellation of the alternating series, error bounds, mpmath fallbacks, cost) are
described in :mod:`symq.window.powerlaw.series`, :mod:`symq.window.powerlaw.density` and
:mod:`symq.window.powerlaw.cdf`; :meth:`PowerLawWindow.pdf_laplace` is an independent float
path (saddle-point Laplace inversion, no cancellation) used for validation.

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
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import real_value as _real
from symq.core.precision import working_dps
from symq.laws import Distribution

from .cdf import _DistributionFunctions
from .density import _DensityPaths
from .series import _QSeriesCore, _vectorise, qseries_coefficients

#: Most decimal digits the q-series of the law may cancel (``-log10 (q;q)_inf``): beyond it the
#: series needs thousands of digits and minutes (beta^m within about 2e-3 of 1).
MAX_CANCEL_DIGITS = 300

__all__ = [
    "OKM_CONSTANT",
    "PowerLawWindow",
    "mean_window",
    "mean_window_newreno",
    "qseries_coefficients",
]


def _check_scale(m: float, q: float, mu0: float) -> None:
    """Refuse, before any series is summed, a law whose q-series would cancel more than
    :data:`MAX_CANCEL_DIGITS` digits, or whose second pre-loss moment
    ``Gamma(1 + 2/m) mu0^(-2/m)`` (up to a bounded factor) leaves the floating-point range."""
    log_q = -math.log(q)
    cancel = math.pi ** 2 / (6.0 * log_q * math.log(10.0))  # -log10 (q;q)_inf as q -> 1
    if cancel > MAX_CANCEL_DIGITS:
        least = math.pi ** 2 / (6.0 * MAX_CANCEL_DIGITS * math.log(10.0)) / (log_q / m)
        raise InvalidParameter("m", m, f"an exponent m = l - k + 1 >= {least:.3g} (the loss "
                               "rate's power minus the increase's, plus 1)",
                               f"q = beta^m = {q:.9g} is so close to 1 that the window law's "
                               f"q-series would cancel about {cancel:.0f} digits (at most "
                               f"{MAX_CANCEL_DIGITS})")
    log10_second = (math.lgamma(1.0 + 2.0 / m) - (2.0 / m) * math.log(mu0)) / math.log(10.0)
    if log10_second > 307.0:
        raise InvalidParameter("m", m, "an exponent m = l - k + 1 for which the window's "
                               "moments stay below 1e308 (the floating-point range)",
                               f"E[W^2] would be about 1e{log10_second:.0f}")


class PowerLawWindow(_DistributionFunctions, _DensityPaths, _QSeriesCore, Distribution):
    """Stationary window law for ``a(w) = alpha w^k``, ``lam(w) = gamma w^l``, ``d(w) = beta w``.

    ``derivations/awp.md``, section "Power-law class" (the model of Altman, Avrachenkov, Kherani,
    Prabhu, INFOCOM 2005; Dumas, Guillemin, Robert 2002 for the ARMA property).  Covers NewReno
    (``k=0, l=1``), AIMD with constant loss rate (``k=l=0``), Scalable TCP with packet losses
    (``k=l=1``) and HighSpeed-like profiles ``k = 2 - 1/S``, ``l = 1``.

    A :class:`~symq.laws.Distribution` of the time-stationary window: ``pdf``,
    ``cdf``, ``ccdf``, ``icdf``, ``moment(order, kind)``, ``mean()``, ``variance()``,
    ``sample(shape, rng=)``, ``to_scipy()``; Palm laws by ``pre_loss_cdf``, ``pre_loss_moment``.

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
    >>> import math
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
        _check_scale(self.m, self.q, self.mu0)
        with working_dps(30) as ctx:
            self._cancel_digits = float(-ctx.log10(ctx.qp(ctx.mpf(self.q))))
        if terms is not None and (isinstance(terms, (bool, np.bool_))
                                  or not isinstance(terms, (int, np.integer)) or terms < 1):
            raise InvalidParameter("terms", terms, "an integer >= 1 or None")
        self._setup_float(terms)
        self._Icache: dict[int, Any] = {}


    def __repr__(self) -> str:
        return (f"PowerLawWindow(alpha={self.alpha!r}, k={self.k!r}, gamma={self.gamma!r}, "
                f"l={self.l!r}, beta={self.beta!r}; m={self.m!r}, q={self.q!r}, "
                f"terms={self.terms})")

    # ------------------------------------------------------------------ moments
    def pre_loss_moment(self, r: ArrayLike) -> NDArray[np.float64] | float:
        """Palm moment ``E[W_pre^r] = Gamma(1+r/m) (alpha m/gamma)^(r/m) sum_j c_j beta^(j r)``.

        ``derivations/awp.md``, step "Survival function of U".  Finite for every real ``r``
        (for ``r/m <= -1`` through the analytic continuation, the poles of ``Gamma`` being
        cancelled by zeros of the sum).

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

    def moment(self, order: ArrayLike = 1, kind: str = "raw") -> NDArray[np.float64] | float:
        """Time-stationary moment; ``raw``: ``E[W^s] = I(s-k+1)/I(1-k)`` for real ``s = order``.

        ``derivations/awp.md``, step "Time averages by Palm inversion".

        Every real raw moment is finite when ``m > 0`` (``order`` may be any finite real number
        or an array of them); ``central`` and ``standardized`` moments take an integer order
        (:meth:`symq.laws.Distribution.moment`).  Computed in mpmath (20 significant
        digits, rounded to float).

        Raises
        ------
        InvalidParameter
            ``order`` not a finite real number (an integer for ``central``/``standardized``),
            or an unknown ``kind``.

        Examples
        --------
        >>> # AIMD, lam = 0.5: E[W^2] = 2 (2)^2/((1-1/2)(1-1/4))
        >>> w = PowerLawWindow(1.0, 0, 0.5, 0, 0.5)
        >>> round(w.moment(2), 10)
        21.3333333333
        """
        if kind != "raw":
            return Distribution.moment(self, order, kind)

        def one(sv: float) -> float:
            sv = _real("order", sv, "a finite real number (every real moment exists for m > 0)",
                       lambda v: True)
            with working_dps(30) as ctx:
                num = self._I_mp(ctx.mpf(sv) - ctx.mpf(self.k) + 1, 20)
                return float(num / self._I0_mp(20))
        return _vectorise(one, order)

    def _raw_moment(self, order: int) -> float:
        return float(self.moment(float(order)))

    def mean(self) -> float:
        """Time-stationary ``E[W]`` (packets)."""
        return float(self.moment(1.0))

    def second_moment(self) -> float:
        """Time-stationary ``E[W^2]``."""
        return float(self.moment(2.0))

    def loss_rate(self) -> float:
        """Loss events per RTT, ``E[lam(W)] = 1/E_0[T] = alpha/I(1-k)`` (one loss per cycle)."""
        return self.alpha / self._I0

    def mean_cycle(self) -> float:
        """Palm mean time between losses ``E_0[T] = I(1-k)/alpha`` (RTTs)."""
        return self._I0 / self.alpha

    def throughput(self, rtt: float = 1.0) -> float:
        """``E[W]/rtt`` (packets per time unit of ``rtt``)."""
        rtt = _real("rtt", rtt, "a finite real number > 0", lambda v: v > 0)
        return self.mean() / rtt


# ---------------------------------------------------------------------- mean window sweeps
@functools.lru_cache(maxsize=256)
def _unit_mean(k: float, l: float, beta: float) -> float:
    """``E[W]`` at ``mu_0 = 1`` (``alpha = 1``, ``gamma = m``)."""
    m = l - k + 1.0
    return PowerLawWindow(1.0, k, m, l, beta).mean()


def mean_window(alpha: ArrayLike, k: float, gamma: ArrayLike, l: float,
                beta: float) -> NDArray[np.float64] | float:
    """``E[W]`` of the power-law window, vectorised over ``alpha`` and ``gamma``.

    Uses the scaling ``E[W] = (alpha m/gamma)^(1/m) E[W]|_{mu_0 = 1}`` (``derivations/awp.md``,
    section "Power-law class": the law of
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
    ``E[W] = sqrt(2/(pi p)) / ((1 - beta) sum_j c_j beta^j)`` with ``q = 1/4``
    (``derivations/awp.md``, section "Power-law class"; Ott, Kemperman, Mathis 1996 report
    1.31).  Vectorised: ``10^6`` values take a few milliseconds.

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
