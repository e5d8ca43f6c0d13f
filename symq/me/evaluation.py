r"""Numerical values of an ME function: float64 (vectorised, with error bounds) and mpmath.

The density, distribution function and tail of an ME law with exact transform
:math:`f^*(s) = N(s)/D(s)` (:class:`~symq.me.transform.RationalLST`), as used by
:class:`~symq.me.distribution.ME`.  The poles and Hermite coefficients come from
:mod:`symq.me.polynomials`; the exact derivatives :math:`f^{(j)}(0)` from the expansion of the
transform at infinity (derivations/me-pade.md, step 3).

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
tail), and the value with the smaller a-priori error bound is kept.

The mpmath values (:func:`mp_value`) use the same two forms at raised working precision, raised
again until the cancellation between terms costs fewer digits than the guard.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import scipy.linalg
import sympy as sp

from symq.core.errors import InvalidParameter, SymqError

from ._context import is_mpc, is_mpf, mp, to_global, to_mp, working_dps
from .polynomials import hermite_form
from .transform import RationalLST

__all__ = ["NotADistribution", "FLOAT_DPS", "float_form", "float_values", "numeric",
           "mp_value", "mp_values", "finite_array", "pole_problem"]

EPS = float(np.finfo(float).eps)
#: Number of Taylor terms of the float path near t = 0.
TAYLOR_TERMS = 40
#: Working digits of the poles/residues behind the float path.
FLOAT_DPS = 30
#: A term sum larger than this multiple of the value is "cancelling": try the expm path too.
CANCELLATION = 1e4
#: Points per block of the vectorised evaluation.
CHUNK = 32768


class NotADistribution(SymqError, ValueError):
    """The ME function is not (numerically) a probability density.

    Raised by the verbs that need a distribution (``icdf``, ``iccdf``, ``sample``, ``to_scipy``)
    when a pole has a nonnegative real part, the dominant pole is complex, the leading tail
    coefficient is negative, or the density is negative (beyond round-off) on the sampling grid.
    The message names the failing condition.
    """


def finite_array(t: Any, name: str) -> tuple[np.ndarray, bool]:
    """``t`` as a float array (and whether it was a scalar); NaN raises InvalidParameter."""
    arr = np.asarray(t, dtype=float)
    if np.isnan(arr).any():
        raise InvalidParameter(name, t, "real numbers (NaN is not allowed)")
    return arr, arr.ndim == 0


def pole_problem(lst: RationalLST, cache: dict[Any, Any]) -> str | None:
    """The first failing necessary pole condition of a density, or None if they all hold.

    A density needs every pole in :math:`\\operatorname{Re} s < 0`, a real dominant pole (a
    complex one makes f change sign infinitely often) and a positive leading tail coefficient
    of that pole (else f < 0 for large t); derivations/me-pade.md, steps 11-12, shows the
    order-3 case.
    """
    herm = hermite_form(lst, cache, FLOAT_DPS + 15)
    with working_dps(FLOAT_DPS):
        rho = max(abs(p) for p, _, _, _ in herm)
        tol = rho * mp.mpf(10) ** (-FLOAT_DPS + 5)
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


# ====================================================================== float64
def float_form(lst: RationalLST, cache: dict[Any, Any]) -> dict[str, Any]:
    """The float64 data of the evaluation (Taylor and Hermite coefficients, companion matrix)."""
    if "float" in cache:
        return cache["float"]
    herm = hermite_form(lst, cache, FLOAT_DPS + 15)
    with working_dps(FLOAT_DPS + 15):
        rho = max(float(abs(p)) for p, _, _, _ in herm)
        tau = 0.5 / rho
        d = lst.derivatives_at_zero(TAYLOR_TERMS)
        tau_mp = mp.mpf(tau)
        q = [float(to_mp(dj) * tau_mp**j / mp.factorial(j)) for j, dj in enumerate(d)]
        Q = [0.0] + [float(to_mp(dj) * tau_mp ** (j + 1) / mp.factorial(j + 1))
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
        n = lst.order
        a = lst.denominator
        C = np.zeros((n, n))
        for i in range(n - 1):
            C[i, i + 1] = 1.0
        rho_mp = mp.mpf(rho)
        for k in range(n):
            C[n - 1, k] = -float(to_mp(a[k]) / rho_mp ** (n - k))
        z0 = np.array([1.0] + [float(-to_mp(d[j]) / rho_mp ** (j + 1)) for j in range(n - 1)])
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
    cache["float"] = form
    return form


def float_values(lst: RationalLST, cache: dict[Any, Any], t: np.ndarray
                 ) -> tuple[np.ndarray, ...]:
    """pdf, cdf, ccdf and absolute error bounds of pdf and ccdf at finite ``t >= 0`` (1-D)."""
    if t.size > CHUNK:  # bound the (points x terms) work arrays
        parts = [_chunk(lst, cache, t[i:i + CHUNK]) for i in range(0, t.size, CHUNK)]
        return tuple(np.concatenate(column) for column in zip(*parts))
    return _chunk(lst, cache, t)


def _chunk(lst: RationalLST, cache: dict[Any, Any], t: np.ndarray) -> tuple[np.ndarray, ...]:
    F = float_form(lst, cache)
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
        err_pdf[small] = 8 * EPS * poly(u, F["qabs"])
        err_ccdf[small] = 8 * EPS * (poly(u, F["Qabs"]) + 1.0)
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
        e_p = 8 * EPS * p_abs * (1 + np.abs(np.multiply.outer(tl, F["re"])).max(axis=1))
        e_c = 8 * EPS * c_abs * (1 + np.abs(np.multiply.outer(tl, F["re"])).max(axis=1))
        bad = (p_abs > CANCELLATION * np.abs(p_val)) | (c_abs > CANCELLATION * np.abs(c_val))
        bad &= np.isfinite(p_abs) & np.isfinite(c_abs)
        if bad.any():
            x_p, x_c, x_ep, x_ec = _expm_values(F, tl[bad])
            use_p = x_ep < e_p[bad]
            use_c = x_ec < e_c[bad]
            idx = np.flatnonzero(bad)
            p_val[idx[use_p]], e_p[idx[use_p]] = x_p[use_p], x_ep[use_p]
            c_val[idx[use_c]], e_c[idx[use_c]] = x_c[use_c], x_ec[use_c]
        pdf[large], ccdf[large], cdf[large] = p_val, c_val, 1.0 - c_val
        err_pdf[large], err_ccdf[large] = e_p, e_c
    return pdf, cdf, ccdf, err_pdf, err_ccdf


def _expm_values(F: dict[str, Any], t: np.ndarray) -> tuple[np.ndarray, ...]:
    """pdf and ccdf from expm of the companion realisation (fallback for cancelling terms)."""
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
    scale = (8 * EPS * (1 + np.abs(C).sum(axis=0).max() * u) * norm_E * np.abs(z0).sum()
             * decay)
    return pdf, z[:, 0], F["rho"] * np.abs(F["C"][0]).sum() * scale, scale


def numeric(lst: RationalLST, cache: dict[Any, Any], t: Any, what: str) -> Any:
    """``what`` in {"pdf", "cdf", "ccdf"} at ``t`` (any shape; 0/1 limits for t < 0 and inf)."""
    arr, scalar = finite_array(t, "t")
    flat = arr.ravel()
    out = np.empty_like(flat)
    neg = flat < 0
    inf = np.isinf(flat) & ~neg
    fin = ~neg & ~inf
    out[neg] = {"pdf": 0.0, "cdf": 0.0, "ccdf": 1.0}[what]
    out[inf] = {"pdf": 0.0, "cdf": 1.0, "ccdf": 0.0}[what]
    if fin.any():
        pdf, cdf, ccdf, _, _ = float_values(lst, cache, flat[fin])
        values = {"pdf": pdf, "cdf": cdf, "ccdf": ccdf}[what]
        if not np.isfinite(values).all():
            where = flat[fin][~np.isfinite(values)][0]
            reason = pole_problem(lst, cache) or "the partial-fraction terms overflow"
            raise NotADistribution(f"{what}(t) is not finite at t={where!r}: {reason}")
        out[fin] = values
    out = out.reshape(arr.shape)
    return out[()] if scalar else out


# ====================================================================== mpmath
def _taylor_terms_for(digits: int) -> int:
    """Smallest m with 2^-m / m! < 10^-digits (Taylor truncation at u = t/tau <= 1/2)."""
    m, log10_term = 0, 0.0
    while log10_term > -digits - 2 or m < 8:
        m += 1
        log10_term -= math.log10(2 * m)
    return m


def mp_value(lst: RationalLST, cache: dict[Any, Any], t: Any, what: str, dps: int
             ) -> mpmath.mpf:
    """``what`` in {"pdf", "cdf", "ccdf"} at one ``t`` to ``dps`` significant digits."""
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
            tm = to_mp(t_exact) if isinstance(t_exact, sp.Rational) else mp.mpf(
                sp.N(t_exact, P + 5) if isinstance(t_exact, sp.Basic) else t_exact)
            if mp.isnan(tm):
                raise InvalidParameter("t", t, "a real number (not NaN)")
            if tm < 0:
                return to_global(mp.mpf({"pdf": 0, "cdf": 0, "ccdf": 1}[what]))
            if mp.isinf(tm):
                return to_global(mp.mpf({"pdf": 0, "cdf": 1, "ccdf": 0}[what]))
            herm = hermite_form(lst, cache, P)
            rho = max(abs(p) for p, _, _, _ in herm)
            tau = 1 / (2 * rho)
            if tm <= tau:
                J = _taylor_terms_for(P) + 2 * lst.order
                d = lst.derivatives_at_zero(J)
                value = mp.mpf(0)
                size = mp.mpf(0)
                for j, dj in enumerate(d):
                    if what == "pdf":
                        term = to_mp(dj) * tm**j / mp.factorial(j)
                    else:
                        term = to_mp(dj) * tm ** (j + 1) / mp.factorial(j + 1)
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


def mp_values(lst: RationalLST, cache: dict[Any, Any], t: Any, what: str, dps: int) -> Any:
    """:func:`mp_value` at a number, or a list of values at each entry of a sequence."""
    if isinstance(t, (list, tuple, np.ndarray)):
        return [mp_value(lst, cache, x, what, dps) for x in np.asarray(t, dtype=object).ravel()]
    return mp_value(lst, cache, t, what, dps)
