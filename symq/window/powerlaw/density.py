"""Time-stationary density of the power-law window law, with certified float accuracy.

``f(w) = g_U(mu_0 w^m)/(w^k I(1-k))`` where ``g_U(u) = sum_j c_j q^-j exp(-u q^-j)`` is the
density of ``U = sum_j q^j E_j`` (see :mod:`symq.window.powerlaw.law`).  Four evaluation paths:

* float with a running error bound (:meth:`_DensityPaths._gU_float`), accepted when the bound
  is below ``1e-11`` of the value;
* a second try in ``numpy.longdouble`` (3 more digits on x86);
* mpmath at the precision the cancellation needs (:meth:`_DensityPaths.pdf_mp`, also the
  fallback of :meth:`~symq.window.powerlaw.PowerLawWindow.pdf`);
* an independent saddle-point Laplace inversion (:meth:`_DensityPaths.pdf_laplace`), without
  cancellation, used for validation.

Cost (measured, one core): a float point is ``terms`` exponentials (12 for NewReno, 35 for
Scalable TCP); an mpmath point 0.1 to 0.5 ms.  ``10^5`` points spread over
``[0.2, 5] E[W]``: 0.07 s for NewReno (all float), 3.3 s for Scalable TCP (the left part,
``w < 0.4 E[W]``, needs mpmath).  Agreement with mpmath at 50 digits over
``[0.003, 16] E[W]``: 3e-13 (NewReno), 7e-13 (Scalable), 4e-13 (HighSpeed-like ``k = 0.8``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.precision import local_mp, working_dps

from .series import _EPS, _FLOAT_TOL, _LOG_TINY, _points, _vectorise_mp, exp_neg


class _DensityPaths:
    """The density of a power-law window law (mixin of ``PowerLawWindow``)."""

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
        """Time-stationary density ``f(w) = g_U(mu_0 w^m)/(w^k I(1-k))`` (Palm inversion).

        Float evaluation with an error bound; points whose bound exceeds ``1e-11`` relative are
        recomputed in mpmath (see the module notes).  ``f = 0`` for ``w <= 0`` and ``w = inf``.

        Examples
        --------
        >>> from symq.window.powerlaw import PowerLawWindow
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


def _log_tail(s, qJ: float, q: float, order: int = 7):
    """``sum_{j >= J0} log(1 + s q^j)`` for ``|s| q^J0 <= 1e-3`` (``qJ = q^J0``)."""
    out = 0.0
    for n in range(1, order + 1):
        out = out + (-1) ** (n + 1) * (s * qJ) ** n / (n * (1 - q ** n))
    return out

