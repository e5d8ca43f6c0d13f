"""One discretisation level of the embedded post-loss chain of a window protocol.

On a :class:`~symq.window.numeric.grid._Grid` the Volterra-type equation of the Palm laws
(see :mod:`symq.window.numeric.solver`) becomes a sparse triangular-banded linear system:
node-to-node recursion with Gauss-Legendre quadrature in every cell and ``F(d^{-1}(y))`` by cubic
Lagrange interpolation.  :func:`_solve_level` factorises it once and solves it twice, for the Palm
survival ``S = 1 - F`` and for the cdf ``F`` of the window just before a loss (both sums of
nonnegative terms, so that each keeps its relative accuracy where it is small).  The
``_*_at`` helpers interpolate these Palm laws and the post-loss law ``G(w) = F(d^{-1}(w))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from symq.core.errors import NotConverged

from .grid import _GW, _GX, _RW, _RX, _dinv_log, _Grid, _Profiles


@dataclass
class _Level:
    grid: _Grid
    S: NDArray[np.float64]          # Palm survival P0(W_pre > u) at the nodes
    F: NDArray[np.float64]          # Palm cdf P0(W_pre <= u) at the nodes (accurate when small)
    yq: NDArray[np.float64]         # quadrature points (cells x Q)
    wq: NDArray[np.float64]         # quadrature weights in w (cells x Q)
    aq: NDArray[np.float64]
    lq: NDArray[np.float64]
    dq: NDArray[np.float64]
    Dq: NDArray[np.float64]         # time weights (S - S_post)/a * wq
    atom_pre: float                 # P0(W_pre = w_max)
    E0T: float
    d_top: float                    # d(top of grid)
    capped: bool
    lam_cap: float

    def expect_raw(self, gq: NDArray[np.float64], g_cap: float) -> float:
        total = float(np.sum(self.Dq * gq))
        if self.capped:
            total += self.atom_pre * g_cap / self.lam_cap
        return total / self.E0T

    @property
    def mean(self) -> float:
        return self.expect_raw(self.yq, self.grid.u[-1])

    @property
    def loss_rate(self) -> float:
        return 1.0 / self.E0T


def _solve_level(prof: _Profiles, grid: _Grid, capped: bool) -> _Level:
    # exact end points (exp(log(x)) may differ from x in the last bit)
    if capped:
        grid.u[-1] = prof.w_max
    if prof.w_min > 0 and grid.t[0] == math.log(prof.w_min):
        grid.u[0] = prof.w_min
    t, h, u = grid.t, grid.h, grid.u
    nc = grid.n_cells
    # quadrature points of each cell and nested points for the hazard integrals
    tq = t[:-1, None] + h[:, None] * _GX[None, :]                       # (nc, Q)
    yq = np.exp(tq)
    # hazard: Lambda(y_ik) - Lambda(u_i) and Delta Lambda_i, with phi(t) = lam/a * e^t
    frac = np.concatenate([_GX, [1.0]])                                 # (Q+1,)
    tr = t[:-1, None, None] + h[:, None, None] * frac[None, :, None] * _RX[None, None, :]
    wr = np.exp(tr)
    ar, lr = prof.a(wr), prof.lam(wr)
    aq, lq, dq = prof.a(yq), prof.lam(yq), prof.d(yq)
    prof.validate(np.concatenate([wr.ravel(), yq.ravel(), u]),
                  dv=None, av=np.concatenate([ar.ravel(), aq.ravel(), prof.a(u)]),
                  lv=np.concatenate([lr.ravel(), lq.ravel(), prof.lam(u)]))
    phi_r = lr / ar * wr
    partial = h[:, None] * frac[None, :] * np.sum(phi_r * _RW[None, None, :], axis=2)  # (nc, Q+1)
    dLam = partial[:, -1]
    Lq = partial[:, :-1]
    phi_q = lq / aq * yq
    omega = _GW[None, :] * h[:, None] * phi_q * np.exp(-(dLam[:, None] - Lq))
    # G at the quadrature points: F(d^{-1}(y)) or 1 beyond d(top)
    d_top = float(prof.d(np.array([u[-1]]))[0])
    beyond = yq >= d_top
    inside = ~beyond
    xq_t = np.full(yq.shape, t[-1])
    if np.any(inside):
        xq_t[inside] = _dinv_log(prof, yq[inside], t[-1])
    idx, wts = grid.stencil(xq_t)                                     # (nc, Q, 4)
    # sparse system for the Palm survival S = 1 - F of W_pre at nodes 1..N (S_0 = 1):
    # S_{i+1} = e^{-dLam_i} S_i + sum_k omega_ik S(d^{-1}(y_ik)), S(d^{-1}(y)) = 0 beyond the top.
    # All terms are nonnegative, so small tail values keep their relative accuracy.
    rows = [np.arange(nc)]
    cols = [np.arange(nc)]
    vals = [np.ones(nc)]
    if nc > 1:
        rows.append(np.arange(1, nc))
        cols.append(np.arange(0, nc - 1))
        vals.append(-np.exp(-dLam[1:]))
    coef = -(omega * inside)[:, :, None] * wts                         # (nc, Q, 4)
    r = np.broadcast_to(np.arange(nc)[:, None, None], idx.shape)
    keep = idx > 0
    rows.append(r[keep])
    cols.append(idx[keep] - 1)
    vals.append(coef[keep])
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(nc, nc))
    rhs = -np.sum(np.where(idx == 0, coef, 0.0), axis=(1, 2))
    rhs[0] += math.exp(-dLam[0])
    # ... and the cdf F (F_0 = 0, F(d^{-1}(y)) = 1 beyond the top): same matrix, positive terms,
    # accurate where F is small (F + S = 1 up to the quadrature error of sum_k omega_ik)
    rhs_f = np.sum(omega * beyond, axis=1)
    lu = spla.splu(A)
    S = np.concatenate([[1.0], lu.solve(rhs)])
    F = np.concatenate([[0.0], lu.solve(rhs_f)])
    if not (np.all(np.isfinite(S)) and np.all(np.isfinite(F))):
        raise NotConverged("solve_window (embedded chain linear solve)", float("inf"), 0.0, 1)
    SGq = np.where(beyond, 0.0, np.sum(S[idx] * wts, axis=-1))
    Gq = np.where(beyond, 1.0, np.sum(F[idx] * wts, axis=-1))
    fi, fw = grid.stencil(tq)
    Sq = np.sum(S[fi] * fw, axis=-1)
    Fq = np.sum(F[fi] * fw, axis=-1)
    # G - F = S - S_post; use the form without cancellation
    diff = np.where(Fq < 0.5, Gq - Fq, Sq - SGq)
    wq = _GW[None, :] * h[:, None] * yq
    Dq = wq * diff / aq
    atom_pre = max(float(S[-1]), 0.0) if capped else 0.0
    lam_cap = float(prof.lam(np.array([u[-1]]))[0])
    E0T = float(np.sum(Dq)) + (atom_pre / lam_cap if capped else 0.0)
    return _Level(grid=grid, S=S, F=F, yq=yq, wq=wq, aq=aq, lq=lq, dq=dq, Dq=Dq,
                  atom_pre=atom_pre, E0T=E0T, d_top=d_top, capped=capped, lam_cap=lam_cap)


def _interpolate(lev: _Level, nodes: NDArray[np.float64], w: NDArray[np.float64]
                 ) -> NDArray[np.float64]:
    """A Palm law given at the grid nodes (``lev.S`` or ``lev.F``), at window values inside the
    grid (cubic interpolation in ``ln w``), clipped to [0, 1]."""
    idx, wts = lev.grid.stencil(np.log(w))
    return np.clip(np.sum(nodes[idx] * wts, axis=-1), 0.0, 1.0)


def _S_at(lev: _Level, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm survival ``P0(W_pre > w)`` at window values inside the grid (cubic interpolation)."""
    return _interpolate(lev, lev.S, w)


def _F_at(lev: _Level, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm cdf ``P0(W_pre <= w)`` at window values inside the grid (cubic interpolation)."""
    return _interpolate(lev, lev.F, w)


def _post_loss(lev: _Level, prof: _Profiles, w: NDArray[np.float64], nodes: NDArray[np.float64],
               above: float) -> NDArray[np.float64]:
    """A Palm law of the pre-loss window (given at the nodes) at ``d^{-1}(w)``: the same law of
    the post-loss window at ``w >=`` the grid bottom; ``above`` for ``w`` at or above
    ``d`` of the top of the grid."""
    out = np.full(w.shape, above)
    inside = w < lev.d_top
    if np.any(inside):
        out[inside] = _interpolate(lev, nodes, np.exp(_dinv_log(prof, w[inside], lev.grid.t[-1])))
    return out


def _G_at(lev: _Level, prof: _Profiles, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm cdf of the post-loss window, ``F(d^{-1}(w))``, at ``w >=`` the grid bottom."""
    return _post_loss(lev, prof, w, lev.F, 1.0)


def _time_gap(lev: _Level, prof: _Profiles, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``G(w) - F(w) = P0(Y <= w < W_pre)``, from whichever of F or S avoids cancellation."""
    out = np.empty(w.shape)
    F = _F_at(lev, w)
    low = F < 0.5
    if np.any(low):
        out[low] = _G_at(lev, prof, w[low]) - F[low]
    if np.any(~low):
        out[~low] = _S_at(lev, w[~low]) - _SG_at(lev, prof, w[~low])
    return out


def _SG_at(lev: _Level, prof: _Profiles, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Palm survival of the post-loss window, ``S(d^{-1}(w))``, at ``w >=`` the grid bottom."""
    return _post_loss(lev, prof, w, lev.S, 0.0)

