"""Numba kernels of the exact event-sampling window simulator, one loss cycle at a time.

From the post-loss window ``y`` the next pre-loss window is
``W_pre = Lambda^{-1}(Lambda(y) + E)`` with ``E ~ Exp(1)`` and the cumulative hazard
``Lambda(w) = int^w lam(u)/a(u) du``; the cycle's time and areas are increments of
``H(w) = int^w du/a(u)`` and ``G_r(w) = int^w u^r/a(u) du`` (see
:mod:`symq.window.simulation.simulator`).
Two kernels run cycles until a given count and accumulate per-batch sums:

* :func:`_table_kernel` reads ``Lambda``, ``H``, ``G_1``, ``G_2`` (and observables) from the
  tables of :mod:`symq.window.simulation.tables` and inverts ``Lambda`` by binary search for the
  cell and a closed form inside it;
* :func:`_power_kernel` samples the power-law class ``a = alpha w^k``, ``lam = gamma w^l``,
  ``d = beta w`` in closed form: ``W_pre^m = y^m + alpha m E/gamma`` (``m = l - k + 1 != 0``) or
  ``W_pre = y exp(alpha E/gamma)`` (``m = 0``) (:func:`power_pre_loss`), with the integrals of
  :func:`power_integral`, or :func:`integer_power_integral` for an integer ``k`` (a difference
  times a sum of positive terms: no ``exp``/``expm1``, a few roundings; measured against
  50-digit mpmath in ``tests/window/test_integer_power.py``).  These hand-written fast paths are
  the closed forms that sympy derives (:func:`symq.window.symbolic.power_law_cycle`); a test
  compares them with their compiled form at random points.  NewReno's class (``k = 0``,
  ``l = 1``, no cap, no observables) runs a loop of its own with the same values.

Both keep their state (post-loss window, counters, status) in arrays so that a run can be split
into chunks with the same result (:func:`symq.core.simrun.run_chunked`); they draw from numba's
random stream, seeded by :func:`symq.core.simrun.seed_numba`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["INTEGER_EXPONENT_MAX", "integer_power_integral", "power_integral",
           "power_pre_loss"]

_OK = 0
_ESCAPED_UP = 1
_COLLAPSED = 2
_OFF_GRID = 3


@numba.njit(cache=True)
def _frac(e: float, x: float, h: float, den: float) -> float:
    """Fraction of a cell integral between its left node and ``ln w = lw_i + x``."""
    if abs(e * h) < 1e-9:
        return x / h
    return math.expm1(e * x) / den


@numba.njit(cache=True)
def _locate(w: float, lw: np.ndarray, lw0: float, h: float) -> tuple[int, float]:
    """Cell index ``i`` and offset ``x = ln w - lw[i]`` in ``[0, h]`` (w inside the grid)."""
    n = lw.shape[0]
    lnw = math.log(w)
    i = int((lnw - lw0) / h)
    if i < 0:
        i = 0
    if i > n - 2:
        i = n - 2
    x = lnw - lw[i]
    if x < 0.0:
        x = 0.0
    if x > h:
        x = h
    return i, x


@numba.njit(cache=True)
def _cum(cum: np.ndarray, cell: np.ndarray, expo: np.ndarray, den: np.ndarray, k: int, i: int,
         x: float, h: float) -> float:
    """Tabulated cumulative integral number ``k`` at ``ln w = lw[i] + x``."""
    return cum[k, i] + cell[k, i] * _frac(expo[k, i], x, h, den[k, i])


@numba.njit(cache=True)
def _record(acc, ring, b, col, hold, w, pos):
    """Adds a cycle's time at the cap ``hold`` and its pre-loss window ``w`` to batch ``b``
    (columns ``col`` and ``col + 1`` of ``acc``) and ``w`` to the ring of the last pre-loss
    windows at ``pos``; returns the next ring position."""
    acc[b, col] += hold
    acc[b, col + 1] += w
    ring[pos] = w
    pos += 1
    if pos == ring.shape[0]:
        pos = 0
    return pos


@numba.njit(cache=True)
def _save(y_state, counters, y, done, pos, status):
    """Stores a kernel's state (post-loss window, cycles done, ring position, status) so that
    the next chunk continues the run; returns ``status``."""
    y_state[0] = y
    counters[0] = done
    counters[1] = pos
    counters[2] = status
    return status


@numba.njit(cache=True)
def _table_kernel(lw, lw0, h, cum, cell, expo, den, ld, w_min, has_cap, w_cap, lam_cap, gcap,
                  n_warm, per_batch, stop_at, y_state, counters, acc, ring):
    """General profile: cycles until ``stop_at`` losses, from tables of the integrals.

    Tables (rows of ``cum``/``cell``/``expo``/``den``): 0 hazard ``lam/a``, 1 time ``1/a``,
    2 area ``w/a``, 3 ``w^2/a``, 4.. observables ``g/a``.  ``acc[b]`` columns: rows 1..J-1 of
    the tables (time, area, area2, observables), then cap time, then the sum of pre-loss windows.
    ``counters = [cycles done, ring position, status]``; ``y_state[0]`` the post-loss window.
    """
    n = lw.shape[0]
    J = cum.shape[0]
    last_haz = cum[0, n - 1]
    y = y_state[0]
    done = counters[0]
    pos = counters[1]
    status = _OK
    while done < stop_at:
        iy, xy = _locate(y, lw, lw0, h)
        target = _cum(cum, cell, expo, den, 0, iy, xy, h) + np.random.exponential(1.0)
        hold = 0.0
        if target >= last_haz:
            if not has_cap:
                status = _ESCAPED_UP
                break
            j = n - 2
            xw = h
            w = w_cap
            hold = np.random.exponential(1.0) / lam_cap
        else:
            lo = iy
            hi = n - 1  # cum[0, lo] <= target < cum[0, hi]
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if cum[0, mid] <= target:
                    lo = mid
                else:
                    hi = mid
            j = lo
            f = (target - cum[0, j]) / cell[0, j]
            e = expo[0, j]
            if abs(e * h) < 1e-9:
                xw = f * h
            else:
                xw = math.log1p(f * den[0, j]) / e
            if xw < 0.0:
                xw = 0.0
            if xw > h:
                xw = h
            w = math.exp(lw[j] + xw)
        if done >= n_warm:
            b = (done - n_warm) // per_batch
            for k in range(1, J):
                if j == iy:
                    v = cell[k, j] * (_frac(expo[k, j], xw, h, den[k, j])
                                      - _frac(expo[k, j], xy, h, den[k, j]))
                else:
                    v = _cum(cum, cell, expo, den, k, j, xw, h) - _cum(cum, cell, expo, den, k, iy,
                                                                     xy, h)
                acc[b, k - 1] += v + gcap[k] * hold
            pos = _record(acc, ring, b, J - 1, hold, w, pos)
        y = math.exp(ld[j] + (ld[j + 1] - ld[j]) * (xw / h))
        if y < w_min:
            y = w_min
        done += 1
        if y < math.exp(lw0):
            status = _COLLAPSED
            break
    return _save(y_state, counters, y, done, pos, status)


@numba.njit(cache=True)
def power_integral(y: float, w: float, lr: float, e: float) -> float:
    """``int_y^w u^(e-1) du`` with ``lr = ln(w/y)``, accurate for ``w`` close to ``y``.

    The route of every real exponent ``e`` (``y^e expm1(e lr)/e``); the power-law kernel takes
    :func:`integer_power_integral` where ``e`` is a small nonzero integer.
    """
    if e == 0.0:
        return lr
    return math.exp(e * math.log(y)) * math.expm1(e * lr) / e


#: Largest ``|e|`` of an integer exponent that :func:`_power_kernel` integrates by
#: :func:`integer_power_integral` (a sum of ``|e|`` terms) rather than by ``exp``/``expm1``.
INTEGER_EXPONENT_MAX = 8


@numba.njit(cache=True)
def integer_power_integral(y: float, w: float, n: int) -> float:
    """``int_y^w u^(n-1) du = (w^n - y^n)/n`` for an integer ``n != 0`` and ``y, w > 0``.

    The difference ``w - y`` (rounded once) times a sum of positive terms,
    ``w^n - y^n = (w - y) sum_{i<n} w^i y^(n-1-i)`` and, for ``n = -m < 0``,
    ``y^-m - w^-m = (w - y)/(w y) sum_{i<m} w^-i y^-(m-1-i)``: no cancellation, so the relative
    error stays within a few units in the last place for every ``w`` and ``y`` (about
    ``2|n| + 5`` rounding errors; ``tests/window/test_fast_paths.py`` measures it against
    50-digit mpmath), also for ``w`` close to ``y``, without ``exp``, ``log`` or ``expm1``.
    """
    if n == 1:
        return w - y
    if n == 2:
        return (w - y) * (w + y) / 2
    if n == 3:  # the sum below, written out: the same operations
        return (w - y) * ((w + y) * w + y * y) / 3
    if n > 0:
        a, b, count = w, y, n
    else:
        a, b, count = 1.0 / w, 1.0 / y, -n
    s = 1.0
    bp = 1.0
    for _ in range(count - 1):
        bp *= b
        s = s * a + bp
    if n > 0:
        return (w - y) * s / n
    return (w - y) * (a * b) * s / count


@numba.njit(cache=True)
def power_pre_loss(y: float, ev: float, alpha: float, gamma: float, m: float, c: float,
                    inv_m: float) -> float:
    """Next pre-loss window of the power-law class from ``y`` and an ``Exp(1)`` draw ``ev``.

    The root of ``Lambda(W_pre) - Lambda(y) = ev``: ``(y^m + c ev)^(1/m)`` with
    ``c = alpha m/gamma`` and ``inv_m = 1/m``, or ``y exp(alpha ev/gamma)`` for ``m = 0``
    (:func:`symq.window.symbolic.power_law_cycle`; ``m = 1, 2`` without ``exp``/``log``).
    Returns ``-1`` when ``m < 0`` and the hazard left is below ``ev``: no further loss.
    """
    if m == 0.0:
        return y * math.exp(alpha * ev / gamma)
    if m == 1.0:
        return y + c * ev
    if m == 2.0:
        return math.sqrt(y * y + c * ev)
    v = math.exp(m * math.log(y)) + c * ev
    if v <= 0.0:
        return -1.0
    return math.exp(inv_m * math.log(v))


@numba.njit(cache=True, inline="always")
def _power_cycles(alpha, k, gamma, l, beta, w_min, has_cap, w_max, lam_cap, w_lo, w_hi,
                  n_warm, per_batch, stop_at, y_state, counters, acc, ring,
                  lw, lw0, h, cum, cell, expo, den, gcap, aimd):
    """The loop of :func:`_power_kernel`; ``aimd`` (a constant where it is inlined) selects the
    loop of ``k = 0, m = 2`` without cap or observables, whose pre-loss window, time and areas
    are the closed forms written out (the same operations as the general routes)."""
    m = l - k + 1.0
    c = alpha * m / gamma
    inv_m = 1.0 / m if m != 0.0 else 0.0
    whole = k == math.floor(k) and abs(k) <= INTEGER_EXPONENT_MAX - 3
    n1 = int(1.0 - k) if whole else 0
    n2 = int(2.0 - k) if whole else 0
    n3 = int(3.0 - k) if whole else 0
    need_lr = not whole or n1 == 0 or n2 == 0 or n3 == 0
    J = cum.shape[0]
    n_ring = ring.shape[0]
    y = y_state[0]
    done = counters[0]
    pos = counters[1]
    status = _OK
    b = (done - n_warm) // per_batch if done >= n_warm else 0
    next_b = n_warm + (b + 1) * per_batch  # the first cycle of slice b + 1
    while done < stop_at:
        ev = np.random.exponential(1.0)
        if aimd:
            w = math.sqrt(y * y + c * ev)
            hold = 0.0
        else:
            w = power_pre_loss(y, ev, alpha, gamma, m, c, inv_m)
            if w < 0.0:
                status = _ESCAPED_UP
                break
            hold = 0.0
            if has_cap and w > w_max:
                w = w_max
                hold = np.random.exponential(1.0) / lam_cap
        if w > w_hi:
            status = _ESCAPED_UP
            break
        if done >= n_warm:
            if done >= next_b:
                b += 1
                next_b += per_batch
            if aimd:  # no cap: the terms of the time at the cap are 0
                i1 = w - y
                acc[b, 0] += i1 / alpha
                acc[b, 1] += i1 * (w + y) / 2 / alpha
                acc[b, 2] += i1 * ((w + y) * w + y * y) / 3 / alpha
                acc[b, 4] += w
                ring[pos] = w
                pos += 1
                if pos == n_ring:
                    pos = 0
            else:
                lr = math.log(w / y) if need_lr else 0.0
                if whole:
                    i1 = lr if n1 == 0 else integer_power_integral(y, w, n1)
                    i2 = lr if n2 == 0 else integer_power_integral(y, w, n2)
                    i3 = lr if n3 == 0 else integer_power_integral(y, w, n3)
                else:
                    i1 = power_integral(y, w, lr, 1.0 - k)
                    i2 = power_integral(y, w, lr, 2.0 - k)
                    i3 = power_integral(y, w, lr, 3.0 - k)
                acc[b, 0] += i1 / alpha + hold
                acc[b, 1] += i2 / alpha + w * hold
                acc[b, 2] += i3 / alpha + w * w * hold
                if J > 4:
                    if y < w_lo or w > math.exp(lw[lw.shape[0] - 1]):
                        status = _OFF_GRID
                        break
                    iy, xy = _locate(y, lw, lw0, h)
                    j, xw = _locate(w, lw, lw0, h)
                    for r in range(4, J):
                        acc[b, r - 1] += (_cum(cum, cell, expo, den, r, j, xw, h)
                                          - _cum(cum, cell, expo, den, r, iy, xy, h)
                                          + gcap[r] * hold)
                pos = _record(acc, ring, b, J - 1, hold, w, pos)
        y = beta * w
        if y < w_min:
            y = w_min
        done += 1
        if y < w_lo:
            status = _COLLAPSED
            break
    return _save(y_state, counters, y, done, pos, status)


@numba.njit(cache=True)
def _power_kernel(alpha, k, gamma, l, beta, w_min, has_cap, w_max, lam_cap, w_lo, w_hi,
                  n_warm, per_batch, stop_at, y_state, counters, acc, ring,
                  lw, lw0, h, cum, cell, expo, den, gcap):
    """Power-law profile ``a = alpha w^k, lam = gamma w^l, d = beta w``: exact cycles.

    Observables (rows 4.. of the tables, if any) are integrated with the tables; ``acc`` columns
    as in :func:`_table_kernel`.  An integer ``k`` (``|r - k| <= INTEGER_EXPONENT_MAX`` for the
    exponents ``r - k`` of the time and the areas) takes :func:`integer_power_integral`, and
    ``ln(w/y)`` is computed only where an exponent is 0 or not an integer.  The AIMD class with
    losses per packet (``k = 0``, ``l = 1``: NewReno) without cap or observables runs a loop of
    its own (:func:`_power_cycles`), with the same values.
    """
    if k == 0.0 and l == 1.0 and not has_cap and cum.shape[0] == 4:
        return _power_cycles(alpha, k, gamma, l, beta, w_min, has_cap, w_max, lam_cap, w_lo,
                             w_hi, n_warm, per_batch, stop_at, y_state, counters, acc, ring,
                             lw, lw0, h, cum, cell, expo, den, gcap, True)
    return _power_cycles(alpha, k, gamma, l, beta, w_min, has_cap, w_max, lam_cap, w_lo, w_hi,
                         n_warm, per_batch, stop_at, y_state, counters, acc, ring,
                         lw, lw0, h, cum, cell, expo, den, gcap, False)
