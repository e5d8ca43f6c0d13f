r"""The lattice and the numba passes of value iteration with per-server speeds (``m <= 3``).

The model, the scheme and its derivation are stated in :mod:`symq.dispatch.vi.speed_solvers`
(Hyytiä & Righter, arXiv 2402.08142, Part 1, extended to servers of different speeds).  This
module holds what one application of :math:`T = E_A \circ E_X` needs on the full time lattice
:math:`u \in \{0, \delta, \dots, N\delta\}^m` in server order:

* :class:`SpeedGrid`: the validated parameters, the hat-kernel size atoms on the size lattice
  :math:`k\eta`, :math:`\eta = \delta s_{\min}`, and for every server ``i`` and atom ``k`` the
  time increment :math:`r_{ik}\delta = k\eta/s_i` split into lattice steps ``off`` and the
  fraction ``w`` of the linear interpolation along axis ``i``, the per-server tail curvatures
  :math:`c_i` and the exact exponential weights of the diagonal recursion;
* :func:`_ex_pass`: :math:`h(u) = \sum_k p_k\,\mathrm{choice}_i\{u_i + r_{ik}\delta +
  v(u + r_{ik}\delta e_i)\}` for the min over servers, the split in proportion to speeds, or
  least finishing time (an atom on which the latter's size threshold falls is split between
  the servers of its two halves);
* :func:`_ea_pass`: :math:`f(u) = a h(u) + b h(u^-) + q f(u^-)` with
  :math:`u^- = (u - \delta\mathbf 1)^+` (each face recurses along its positive components) and
  :math:`f(0) = h(0)`.

Every array is stored as a 3-d array with trailing axes of length 1 when ``m < 3``, so that one
kernel serves ``m = 1, 2, 3``: the predecessor :math:`(u - \delta\mathbf 1)^+` of a padded axis
is its only index 0.

Examples
--------
>>> from symq.laws import Exponential
>>> g = SpeedGrid.build((2.0, 1.0), 0.5, Exponential(1.0), 0.25, 8.0)
>>> g.m, g.N, round(g.lam, 6), g.curvatures.round(6).tolist()       # lam = rho (2 + 1) / E[X]
(2, 32, 1.5, [1.0, 0.5])
>>> g.r[0, :4].tolist(), g.r[1, :4].tolist()        # time steps of size atoms k * 0.25
([0.0, 0.5, 1.0, 1.5], [0.0, 1.0, 2.0, 3.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import real_value
from symq.core.resources import require_memory
from symq.laws import Distribution

from ..policies.speeds import SPEEDS_DOMAIN, arrival_rate, check_speeds
from ..sizes import as_sizes
from ..symbolic import tail_curvature_fn, wait_fn
from .grid import diagonal_weights, hat_atoms
from .passes import _PARALLEL_WORK, _KernelChoice, _renamed
from .planning import size_tail_point

__all__ = ["SpeedGrid", "MODE_OPT", "MODE_RND", "MODE_LWL", "M_SPEEDS", "check_speed_vector",
           "min_truncation_speeds", "speed_grid_bytes", "atoms_estimate"]

#: Modes of the E_X pass: the min over servers, the split in proportion to speeds, least
#: finishing time (ties to the lower index).
MODE_OPT, MODE_RND, MODE_LWL = 0, 1, 2
#: Largest number of servers of the full-lattice solver.
M_SPEEDS = 3


def check_speed_vector(speeds: ArrayLike) -> NDArray[np.float64]:
    """``speeds`` as a float array of ``1..3`` positive finite reals, else InvalidParameter."""
    try:
        s = np.array(speeds, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidParameter("speeds", speeds, SPEEDS_DOMAIN + f" with m = 1..{M_SPEEDS}") \
            from None
    if not 1 <= s.size <= M_SPEEDS:
        raise InvalidParameter("speeds", s.tolist() if s.size <= 12 else f"<{s.size} values>",
                               f"1 to {M_SPEEDS} positive finite reals (one per server)",
                               f"value iteration with speeds runs on the full lattice of "
                               f"(U/delta)^m states, implemented for m <= {M_SPEEDS}; the "
                               "simulator takes any m")
    check_speeds(s, s.size)
    return s


def min_truncation_speeds(speeds: NDArray[np.float64], rho: float, sizes: Any) -> float:
    r"""Smallest truncation ``U`` (time units) accepted with ``speeds``.

    Five times the larger of the slowest server's mean service time and its M/G/1 wait under
    the split in proportion to speeds (server ``i`` is then an M/G/1 queue of rate
    :math:`\lambda_i = \lambda s_i/\sum s`, service :math:`X/s_i`, load :math:`\rho`:
    Pollaczek-Khinchine in time units).
    """
    s = np.asarray(speeds, dtype=float)
    sizes = as_sizes(sizes)
    mean, second = float(sizes.mean()), float(sizes.moment(2))
    lam_i = arrival_rate(rho, mean, s, s.size) * s / s.sum()
    wait = max(float(wait_fn().scalar(li, second / si ** 2, rho)) for li, si in zip(lam_i, s))
    return 5.0 * max(mean / float(s.min()), wait)


def atoms_estimate(sizes: Distribution, delta: float, s_min: float, tail_tol: float = 1e-10) -> int:
    """Size atoms of the lattice of step ``delta * s_min`` before they are computed (from
    :func:`~symq.dispatch.vi.planning.size_tail_point`), for the memory and time estimates."""
    return int(math.ceil(size_tail_point(sizes, tail_tol) / (delta * s_min))) + 1


def speed_grid_bytes(m: int, N: int, K: int) -> float:
    """Bytes value iteration with speeds keeps alive on a lattice of ``(N+1)^m`` states.

    Per state: ``v``, ``Tv``, ``h``, two line copies, 2 x 4 Anderson rows, the mixed iterate
    and the warm-start interpolation (points and corner weights, about ``2m + 4``); per atom
    and line a dozen small arrays.
    """
    return 8.0 * (float(N + 1) ** m * (17 + 2 * m) + 12 * (K + N + 2))


@dataclass(frozen=True)
class SpeedGrid:
    r"""The discretised model with speeds: lattice, size atoms, increments, weights, tails.

    Attributes
    ----------
    speeds : numpy.ndarray
        :math:`s_1, \dots, s_m`.
    m : int
    rho, lam : float
        Load :math:`\lambda E[X]/\sum s` and arrival rate.
    delta, U : float
        Time-lattice step and truncation ``U = N delta`` (time units).
    N, K : int
        Steps of the time lattice; size atoms ``p[0..K]`` on the size lattice ``k eta``.
    eta : float
        Size-lattice step :math:`\delta s_{\min}`.
    p : numpy.ndarray
        Hat-kernel atoms (:func:`~symq.dispatch.vi.grid.hat_atoms` of step ``eta``).
    r, w : numpy.ndarray, shape (3, K + 1)
        :math:`r_{ik} = k s_{\min}/s_i` (time increment in lattice steps) and its fraction;
        rows ``i >= m`` are padding.
    off : numpy.ndarray, shape (3, K + 1)
        ``floor(r)``.
    kcut : numpy.ndarray, shape (3, N + 1)
        First atom whose target ``j + off[i, k]`` reaches ``N`` from coordinate ``j`` (the
        analytic tail from there on).
    lattice : numpy.ndarray of bool, shape (3,)
        Servers whose increments all fall on the lattice (``r[i, k] = k``: the slowest).
    curvatures : numpy.ndarray, shape (m,)
        :math:`c_i = \lambda_i/(2(1-\rho))`, :math:`\lambda_i = \lambda s_i/\sum s`.
    share : numpy.ndarray, shape (3,)
        :math:`s_i/\sum s` (padding 0).
    a, b, q : float
        Exact exponential weights of the diagonal recursion.
    mean : float
        :math:`E[X]`.
    """

    speeds: NDArray[np.float64] = field(repr=False)
    m: int
    rho: float
    lam: float
    delta: float
    U: float
    N: int
    K: int
    eta: float
    p: NDArray[np.float64] = field(repr=False)
    r: NDArray[np.float64] = field(repr=False)
    w: NDArray[np.float64] = field(repr=False)
    off: NDArray[np.int64] = field(repr=False)
    kcut: NDArray[np.int64] = field(repr=False)
    lattice: NDArray[np.bool_] = field(repr=False)
    curvatures: NDArray[np.float64] = field(repr=False)
    share: NDArray[np.float64] = field(repr=False)
    a: float
    b: float
    q: float
    mean: float

    @classmethod
    def build(cls, speeds: ArrayLike, rho: float, sizes: Any, delta: float, U: float,
              tail_tol: float = 1e-10) -> SpeedGrid:
        r"""Validate the parameters and discretise the model.

        The rules are those of :func:`~symq.dispatch.vi.speed_solvers.solve_optimal_speeds`.  The
        memory of the iteration on this grid is checked
        (:func:`symq.core.resources.require_memory`) before the atoms or any state array is
        allocated.
        """
        s = check_speed_vector(speeds)
        m = int(s.size)
        rho = real_value("rho", rho, "a real number in (0, 1) (the load lam E[X] / sum(speeds))",
                         lambda x: x > 0)
        if rho >= 1:
            raise StabilityError(f"load rho={rho!r} must be < 1 for a stationary regime with "
                                 f"speeds={s.tolist()}")
        delta, U = (real_value(name, val, "a finite real number > 0", lambda x: x > 0)
                    for name, val in (("delta", delta), ("U", U)))
        sizes = as_sizes(sizes)
        mean, second = float(sizes.mean()), float(sizes.moment(2))
        if not (math.isfinite(mean) and mean > 0 and math.isfinite(second) and second > 0):
            raise InvalidParameter("sizes", getattr(sizes, "name", sizes),
                                   "a law with finite positive first and second moments")
        s_min = float(s.min())
        if delta * s_min > 0.5 * mean:
            raise InvalidParameter("delta", delta, f"<= E[X]/(2 min(speeds)) = "
                                   f"{0.5 * mean / s_min:g}", "the size lattice of step "
                                   "delta min(speeds) needs at least two steps per mean size")
        ratio = U / delta
        N = int(round(ratio)) if ratio < 2.0 ** 31 else -1
        if N < 0 or abs(N * delta - U) > 1e-9 * max(U, 1.0):
            raise InvalidParameter("U", U, f"an integer multiple of delta={delta!r}")
        if N < 8:
            raise InvalidParameter("delta", delta, f"<= U/8 = {U / 8:g}", "the lattice needs "
                                   f"at least 8 steps: decrease delta or increase U={U:g}")
        lam = arrival_rate(rho, mean, s, m)
        lam_i = lam * s / s.sum()
        u_min = min_truncation_speeds(s, rho, sizes)
        if U < u_min * (1 - 1e-9):
            raise InvalidParameter("U", U, f">= {u_min:.4g} for rho={rho:g} and "
                                   f"speeds={s.tolist()}", "5 x the larger of the slowest "
                                   "server's mean service time and its M/G/1 wait under the "
                                   "split in proportion to speeds: increase U")
        eta = delta * s_min
        K_est = atoms_estimate(sizes, delta, s_min, tail_tol)
        states = float(N + 1) ** m
        require_memory("delta", delta, speed_grid_bytes(m, N, K_est),
                       what=f"{states:.3g} lattice states x {K_est} size atoms",
                       limit=f"coarse enough to fit: lower U={U:g} or raise delta")
        p = hat_atoms(sizes, eta, tail_tol)
        K = p.size - 1
        k = np.arange(K + 1, dtype=float)
        r = np.zeros((M_SPEEDS, K + 1))
        r[:m] = (k[None, :] * s_min) / s[:, None]
        off = np.floor(r).astype(np.int64)
        w = r - off
        snap = w > 1 - 1e-12                         # a lattice point up to rounding
        off[snap] += 1
        w[snap] = 0.0
        w[w < 1e-12] = 0.0
        kcut = np.full((M_SPEEDS, N + 1), K + 1, dtype=np.int64)
        for i in range(m):
            kcut[i] = np.searchsorted(off[i], N - np.arange(N + 1), side="left")
        lattice = np.zeros(M_SPEEDS, dtype=np.bool_)
        lattice[:m] = np.all(r[:m] == k[None, :], axis=1)
        curv = np.array([float(tail_curvature_fn().scalar(li, rho)) for li in lam_i])
        share = np.zeros(M_SPEEDS)
        share[:m] = s / s.sum()
        a, b, q = diagonal_weights(lam, delta)
        s.setflags(write=False)
        return cls(speeds=s, m=m, rho=rho, lam=lam, delta=delta, U=N * delta, N=N, K=K,
                   eta=eta, p=p, r=r, w=w, off=off, kcut=kcut, lattice=lattice,
                   curvatures=curv, share=share, a=a, b=b, q=q, mean=mean)

    def shape3(self) -> tuple[int, int, int]:
        """The padded 3-d shape of the stored arrays."""
        n = self.N + 1
        return tuple(n if i < self.m else 1 for i in range(M_SPEEDS))  # type: ignore[return-value]

    def points(self) -> NDArray[np.float64]:
        """The lattice points in time units, shape ``(N+1,)*m + (m,)`` (server order)."""
        g = np.arange(self.N + 1) * self.delta
        return np.stack(np.meshgrid(*([g] * self.m), indexing="ij"), axis=-1)


@numba.njit(cache=True, fastmath=True)
def _server_costs(row, pos, r, off, w, kc, on_lattice, curv, delta, N,
                  c):  # pragma: no cover - numba
    """c[k] = u_i + x_k/s_i + v(u + (x_k/s_i) e_i) along one line ``row`` of axis i at ``pos``.

    Linear interpolation between lattice points for ``k < kc``; beyond ``U`` the analytic tail
    v(U + t, y) = v(U, y) + c_i((U + t)^2 - U^2), exact at the (fractional) target.
    """
    if on_lattice:                                  # r[k] = k: contiguous, vectorises
        for k in range(kc):
            c[k] = (pos + k) * delta + row[pos + k]
    else:
        for k in range(kc):
            j = pos + off[k]
            c[k] = (pos + r[k]) * delta + row[j] + w[k] * (row[j + 1] - row[j])
    top = row[N]
    cd2 = curv * delta * delta
    for k in range(kc, c.size):
        t = pos + r[k]
        c[k] = t * delta + top + cd2 * (t * t - N * N)


def _ex_pass_py(V, L0, L1, m, N, p, r, off, w, kcut, lattice, curv, share, delta, mode,
                h):  # pragma: no cover - numba
    """h(u) = sum_k p_k choice_i c_i(u, k) on the padded 3-d lattice.

    ``L0[j, l, :]`` and ``L1[i, l, :]`` are the lines of ``V`` along axes 0 and 1 (contiguous
    copies); the lines along axis 2 are ``V[i, j, :]``.  ``mode``: 0 min over servers, 1 split
    in proportion to speeds (``share``), 2 least finishing time.  Mode 2 at an atom ``k > 0``
    where finishing times tie exactly (the policy's size threshold on the lattice) gives half
    the atom to the slowest tied server (its half ``x < k eta``) and half to the fastest (its
    half ``x > k eta``); at ``k = 0`` the fastest tied server; equal speeds: the lower index.
    """
    n0, n1, n2 = V.shape
    K1 = p.size
    for i in numba.prange(n0):
        c = np.empty(K1)
        best = np.empty(K1)          # the min (mode 0); the fastest tied server's cost (mode 2)
        low = np.empty(K1)           # mode 2: the slowest tied server's cost
        key = np.empty(K1)           # mode 2: the least finishing time (lattice steps)
        fast = np.empty(K1)
        slow = np.empty(K1)
        for j in range(n1):
            for l in range(n2):
                tot = 0.0
                for a in range(m):
                    if a == 0:
                        row = L0[j, l]
                        pos = np.int64(i)        # the parallel loop's index may be unsigned
                    elif a == 1:
                        row = L1[i, l]
                        pos = np.int64(j)
                    else:
                        row = V[i, j]
                        pos = np.int64(l)
                    _server_costs(row, pos, r[a], off[a], w[a], kcut[a, pos],
                                  lattice[a], curv[a], delta, N, c)
                    sa = share[a]
                    if mode == 1:
                        s = 0.0
                        for k in range(K1):
                            s += p[k] * c[k]
                        tot += sa * s
                    elif mode == 0:
                        if a == 0:
                            best[:] = c
                        else:
                            for k in range(K1):
                                best[k] = min(best[k], c[k])
                    else:
                        for k in range(K1):
                            t = pos + r[a, k]
                            if a == 0 or t < key[k]:
                                key[k] = t
                                best[k] = c[k]
                                low[k] = c[k]
                                fast[k] = sa
                                slow[k] = sa
                            elif t == key[k]:
                                if sa > fast[k]:
                                    fast[k] = sa
                                    best[k] = c[k]
                                if sa < slow[k]:
                                    slow[k] = sa
                                    low[k] = c[k]
                if mode == 0:
                    for k in range(K1):
                        tot += p[k] * best[k]
                elif mode == 2:
                    tot = p[0] * best[0]
                    for k in range(1, K1):
                        tot += p[k] * 0.5 * (best[k] + low[k])
                h[i, j, l] = tot


_ex_pass = numba.njit(cache=True, parallel=True, fastmath=True)(
    _renamed(_ex_pass_py, "_ex_pass_speeds"))
_ex_pass_serial = numba.njit(cache=True, fastmath=True)(
    _renamed(_ex_pass_py, "_ex_pass_speeds_serial"))


@numba.njit(cache=True)
def _ea_pass(h, a, b, q, out):  # pragma: no cover - numba
    """f(u) = a h(u) + b h(u-) + q f(u-), u- = (u - 1)^+ componentwise, f(0) = h(0)."""
    n0, n1, n2 = h.shape
    for i in range(n0):
        pi = max(i - 1, 0)
        for j in range(n1):
            pj = max(j - 1, 0)
            for l in range(n2):
                if i == 0 and j == 0 and l == 0:
                    out[0, 0, 0] = h[0, 0, 0]
                    continue
                pl = max(l - 1, 0)
                out[i, j, l] = a * h[i, j, l] + b * h[pi, pj, pl] + q * out[pi, pj, pl]


class _SpeedOperator:
    """T v = E_A[choice E_X ...] on one :class:`SpeedGrid` (padded 3-d arrays)."""

    def __init__(self, grid: SpeedGrid, mode: int) -> None:
        self.grid = grid
        self.mode = mode
        shape = grid.shape3()
        self.h = np.empty(shape)
        n0, n1, n2 = shape
        self.L0 = np.empty((n1, n2, n0))
        self.L1 = np.empty((n0, n2, n1)) if grid.m >= 2 else np.empty((1, 1, 1))
        work = n0 * n1 * n2 * (grid.K + 1) * grid.m
        self._builds = _KernelChoice(work >= _PARALLEL_WORK)

    def __call__(self, v: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        g = self.grid
        self.L0[...] = np.moveaxis(v, 0, -1)
        if g.m >= 2:
            self.L1[...] = np.moveaxis(v, 1, -1)
        self._builds.run(lambda par: (_ex_pass if par else _ex_pass_serial)(
            v, self.L0, self.L1, g.m, g.N, g.p, g.r, g.off, g.w, g.kcut, g.lattice, g.curvatures,
            g.share, g.delta, self.mode, self.h))
        _ea_pass(self.h, g.a, g.b, g.q, out)
