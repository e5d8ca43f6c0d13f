"""Distribution functions of the power-law window law: time-stationary and pre-loss (Palm).

``P(W > w) = mu_0^-rho/(m I(1-k)) sum_j c_j q^(j(rho-1)) Gamma(rho, mu_0 w^m q^-j)`` with
``rho = (1-k)/m`` (the term-by-term integral of the density), and the pre-loss law
``P(W_pre^m > v) = sum_j c_j exp(-mu_j v)`` (see :mod:`symq.window.powerlaw.law`).  The float paths
use ``scipy.special.gammaincc`` (good to ~1e-13) with an error bound and accept a result at
``1e-10``; they fall back to ``mpmath.gammainc``, which is slower (a few ms per point).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from symq.core.precision import local_mp, working_dps

from .series import (
    _CDF_TOL,
    _EPS,
    _FLOAT_TOL,
    _LOG_TINY,
    _points,
    _vectorise_mp,
    exp_neg,
)


def _cdf_mp(w: Any, inside: Callable[[Any], Any]) -> Any:
    """An mpmath cdf, vectorised over ``w``: 0 at ``w <= 0``, 1 at ``w = inf``, ``inside(w)``
    (``w`` an mpf) in between."""
    def one(wv):
        ctx = local_mp()
        wv = ctx.mpf(wv)
        if not wv > 0:
            return ctx.mpf(0)
        if wv == ctx.inf:
            return ctx.mpf(1)
        return inside(wv)
    return _vectorise_mp(one, w)


class _DistributionFunctions:
    """The cdfs of a power-law window law (mixin of ``PowerLawWindow``)."""

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
        with working_dps(digits + 10):
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
        >>> from symq.window.powerlaw import PowerLawWindow
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
        return _cdf_mp(w, lambda wv: self._ccdf_mp_one(wv, int(dps), complement=True))

    def pre_loss_cdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Law of the window just before a loss (Palm): ``P(W_pre <= w)``.

        ``P(W_pre^m > v) = sum_j c_j exp(-mu_j v)``, ``mu_j = gamma/(alpha m q^j)``
        (``derivations/awp.md``, step "Survival function of U"), evaluated like :meth:`pdf`.

        Examples
        --------
        >>> from symq.window.powerlaw import PowerLawWindow
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
        def at(wv):
            def make_phi():
                m, _, mu0 = self._mp_params()
                x = mu0 * wv ** m
                return lambda j, q, qj: -exp_neg(x, qj)
            with working_dps(int(dps) + 10):
                return self._mp_sum(make_phi, int(dps) + 3, const=1, what="pre-loss series")
        return _cdf_mp(w, at)

