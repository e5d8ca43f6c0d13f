"""Tables of the integrals of the window simulator's general (tabulated) path.

For vectorised profiles ``a``, ``lam``, ``d`` the kernels of
:mod:`symq.window.simulation.kernels` need ``Lambda = int lam/a``, ``H = int 1/a``,
``G_1 = int w/a``, ``G_2 = int w^2/a`` (and ``int g/a`` for observables ``g``).  They are
tabulated on a logarithmic grid with 10-point Gauss-Legendre quadrature in ``ln w`` per cell
(the 5-point rule gives the reported error estimate, and cells where the two disagree are
integrated adaptively by :func:`scipy.integrate.quad_vec`).  Inside a cell an integrand times
``w`` is modelled as ``exp(e x)`` through its end values, so that values and the inverse of
``Lambda`` are closed forms; this is exact for the power-law class and has an ``O(h^3)`` error
per cell otherwise.  The decrease map is interpolated log-log linearly (exact for
``d = beta w``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.integrate import quad_vec

from symq.core.errors import InvalidParameter

_GL_ORDER = 10
#: At most this many cells are re-integrated adaptively (scipy quad_vec).
_MAX_ADAPTIVE_CELLS = 400


@dataclass
class _Tables:
    lw: np.ndarray
    lw0: float
    h: float
    cum: np.ndarray
    cell: np.ndarray
    expo: np.ndarray
    den: np.ndarray
    ld: np.ndarray
    error: float


def _evaluate(name: str, func: Callable, w: np.ndarray, *, positive: bool) -> np.ndarray:
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(func(w), dtype=float)
        out = np.broadcast_to(out, w.shape).astype(float)
    except Exception as exc:  # noqa: BLE001 - the user's callable may raise anything: told as InvalidParameter
        raise InvalidParameter(name, func, "a vectorised callable of the window (numpy array in, "
                               "array of the same shape out)",
                               f"calling it on the grid raised {type(exc).__name__}: "
                               f"{exc}") from None
    bad = ~np.isfinite(out)
    if positive:
        bad |= ~(out > 0)
    if bad.any():
        where = float(w.flat[int(np.argmax(bad))])
        value = float(out.flat[int(np.argmax(bad))])
        domain = "finite and > 0" if positive else "finite"
        raise InvalidParameter(name, func, f"a callable with values {domain} on the grid",
                               f"{name}({where:.6g}) = {value!r}; narrow the grid")
    return out


def _exponents(g_nodes: np.ndarray, h: float) -> np.ndarray:
    """Exponent ``e`` of the in-cell model ``g(w) w ~ exp(e x)`` (0 -> linear in ``ln w``)."""
    left, right = g_nodes[:-1], g_nodes[1:]
    same = (left * right) > 0
    with np.errstate(all="ignore"):
        e = np.where(same, np.log(np.abs(right) / np.abs(left)) / h + 1.0, 0.0)
    return np.where(np.isfinite(e), e, 0.0)


def _build_tables(a: Callable, lam: Callable, d: Callable | None, observables: list[Callable],
                  lo: float, hi: float, per_decade: int, w_min: float) -> _Tables:
    decades = math.log10(hi) - math.log10(lo)  # hi / lo may overflow
    n = max(int(math.ceil(decades * per_decade)) + 1, 3)
    lw0, lw1 = math.log(lo), math.log(hi)
    lw = np.linspace(lw0, lw1, n)
    h = (lw1 - lw0) / (n - 1)
    nodes = np.exp(lw)
    nodes[0], nodes[-1] = lo, hi

    def integrands(w: np.ndarray) -> list[np.ndarray]:
        av = _evaluate("a", a, w, positive=True)
        lv = _evaluate("lam", lam, w, positive=True)
        rows = [lv / av, 1.0 / av, w / av, w * w / av]
        for idx, g in enumerate(observables):
            rows.append(_evaluate(f"time_averages[{idx}]", g, w, positive=False) / av)
        return rows

    def cell_integrals(order: int) -> np.ndarray:
        xg, wg = np.polynomial.legendre.leggauss(order)
        xg = 0.5 * (xg + 1.0) * h
        wg = 0.5 * wg * h
        pts = np.exp(lw[:-1, None] + xg[None, :])
        return np.array([(g * pts) @ wg for g in integrands(pts)])

    cells = cell_integrals(_GL_ORDER)
    coarse = cell_integrals(_GL_ORDER // 2)
    err = np.abs(cells - coarse)
    # error control: cells where the two rules disagree (kinks, jumps) are integrated adaptively
    flagged = np.flatnonzero(np.any(err > 1e-11 * np.abs(cells) + 1e-300, axis=0))
    if flagged.size > _MAX_ADAPTIVE_CELLS:
        flagged = flagged[np.argsort(-np.max(err[:, flagged] / (np.abs(cells[:, flagged])
                                                                + 1e-300), axis=0))]
        flagged = np.sort(flagged[:_MAX_ADAPTIVE_CELLS])

    for i in flagged:
        scale = np.where(np.abs(cells[:, i]) > 0, np.abs(cells[:, i]), 1.0)

        def in_log(x: float, scale: np.ndarray = scale) -> np.ndarray:
            w = np.array([math.exp(x)])
            return np.array([g[0] for g in integrands(w)]) * (w[0] / scale)

        value, abserr = quad_vec(in_log, lw[i], lw[i + 1], epsabs=1e-13 * h, epsrel=1e-13,
                                 norm="max", limit=400)
        cells[:, i] = value * scale
        err[:, i] = np.maximum(abserr, 1e-16) * scale
    J = cells.shape[0]
    cum = np.zeros((J, n))
    cum[:, 1:] = np.cumsum(cells, axis=1)
    with np.errstate(all="ignore"):
        rel = np.cumsum(err[:4], axis=1) / np.abs(cum[:4, 1:])
    rel = rel[np.isfinite(rel)]
    error = float(np.max(rel)) if rel.size else 0.0
    node_vals = integrands(nodes)
    expo = np.array([_exponents(g, h) for g in node_vals])
    with np.errstate(all="ignore"):
        den = np.expm1(expo * h)
    if d is None:
        raise InvalidParameter("d", d, "a vectorised callable of the window")
    dv = _evaluate("d", d, nodes, positive=False)
    if np.any(dv >= nodes) or np.any(dv < 0):
        i = int(np.argmax((dv >= nodes) | (dv < 0)))
        raise InvalidParameter("d", d, "a decrease map with 0 <= d(w) < w",
                               f"d({nodes[i]:.6g}) = {dv[i]!r}")
    if np.any(np.diff(dv) < -1e-12 * np.abs(dv[1:])):
        i = int(np.argmax(np.diff(dv) < -1e-12 * np.abs(dv[1:])))
        raise InvalidParameter("d", d, "a nondecreasing decrease map",
                               f"d({nodes[i]:.6g}) > d({nodes[i + 1]:.6g})")
    if w_min <= 0 and np.any(dv <= 0):
        raise InvalidParameter("d", d, "a decrease map with d(w) > 0 on the grid when w_min = 0")
    ld = np.log(np.maximum(dv, 1e-300))
    return _Tables(lw, lw0, h, np.ascontiguousarray(cum), np.ascontiguousarray(cells),
                   np.ascontiguousarray(expo), np.ascontiguousarray(den), ld, error)


def _empty_tables() -> _Tables:
    z2 = np.zeros((4, 2))
    z1 = np.zeros((4, 1))
    return _Tables(np.array([0.0, 1.0]), 0.0, 1.0, z2, z1, z1, z1.copy(), np.zeros(2), 0.0)
