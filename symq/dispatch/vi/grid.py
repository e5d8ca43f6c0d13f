r"""The value-iteration grid of size-aware dispatching: lattice, size atoms, sorted states.

Hyytiä & Righter (arXiv 2402.08142, Part 1: "state-space truncation and discretization") solve
the average-cost Bellman equations of dispatching to ``m`` FCFS servers on a lattice of
backlogs.  This module builds that lattice once per grid:

* backlogs :math:`u \in \{0, \delta, \dots, N\delta\}^m`, :math:`U = N\delta`, and job sizes on
  the same lattice by the mean-preserving hat kernel (:func:`hat_atoms`);
* only sorted states :math:`u_1 \le \dots \le u_m` are stored (identical servers:
  :math:`v(u) = v(\mathrm{sort}(u))`), in the order of :func:`sorted_states`; for ``m >= 3``
  the packed simplex in colex order of :mod:`symq.dispatch.simplex`;
* :class:`DispatchGrid` holds the grid, the size atoms, the exact exponential weights of the
  diagonal :math:`E_A` recursion (:mod:`symq.dispatch.vi.passes`) and the curvature of the fixed
  analytic tail beyond ``U``.

Examples
--------
>>> sorted_states(2, 1).tolist()
[[0, 0], [0, 1], [1, 1]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import real_value
from symq.core.resources import require_memory
from symq.core.threads import limit_blas_threads
from symq.laws import Distribution, Exponential

from ..simplex import M_MAX, colex_states, n_sorted_states
from ..sizes import as_sizes, size_cdf
from ..symbolic import tail_curvature_fn
from .boundary import Tail, TailLike, as_tail
from .planning import SECOND_MOMENT_TOL, _names, grid_bytes, size_tail_point, validate_grid

__all__ = ["DispatchGrid", "diagonal_weights", "hat_atoms", "sorted_states"]

@limit_blas_threads()    # phase-type partial moments: one expm per grid point
def hat_atoms(sizes: Any, delta: float, tail_tol: float = 1e-10) -> NDArray[np.float64]:
    r"""Mean-preserving hat-kernel atoms of a size law on the lattice :math:`k\delta`.

    :math:`p_k = \int f(x)\max(0, 1 - |x - k\delta|/\delta)\,dx`, computed
    from the cdf and the partial mean :math:`M(x) = E[X; X \le x]` only:

    .. math::

        p_k = \frac{M_k - M_{k-1} - (k-1)\delta(F_k - F_{k-1})}{\delta}
            + \frac{(k+1)\delta(F_{k+1} - F_k) - (M_{k+1} - M_k)}{\delta}.

    The lattice is truncated at the first :math:`K\delta` with ``ccdf < tail_tol`` and at most
    :data:`~symq.dispatch.vi.planning.SECOND_MOMENT_TOL` of :math:`E[X^2]` beyond, and the
    atoms are renormalised, so :math:`\sum_k k\delta p_k = E[X]` up to ``~tail_tol``.

    Parameters
    ----------
    sizes : job-size law
        Converted by :func:`~symq.dispatch.sizes.as_size_law` (its ``cdf``, ``ccdf``,
        ``partial_mean`` and ``mean`` are used).
    delta : float
        Lattice step.
    tail_tol : float
        Truncation level of the size tail.

    Returns
    -------
    numpy.ndarray
        ``p[0..K]``, nonnegative, summing to one.

    Examples
    --------
    >>> from symq.laws import Exponential
    >>> p = hat_atoms(Exponential(1.0), 0.1)
    >>> mean = float((p * 0.1 * np.arange(p.size)).sum())
    >>> bool(abs(p.sum() - 1) < 1e-15), round(mean, 8)
    (True, 1.0)
    """
    sizes = as_sizes(sizes)
    delta = float(delta)
    x = size_tail_point(sizes, tail_tol)
    # the first grid point where size_tail_point's two conditions hold (bisection on the
    # lattice: ccdf < tail_tol and at most SECOND_MOMENT_TOL of E[X^2] beyond)
    second = float(sizes.moment(2))
    lo, hi = 0, int(math.ceil(x / delta))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(sizes.ccdf(mid * delta)) < tail_tol and (
                second - float(sizes.partial_moment(2, mid * delta))
                <= SECOND_MOMENT_TOL * second):
            hi = mid
        else:
            lo = mid
    K = max(hi, 1)
    grid = delta * np.arange(-1, K + 2, dtype=float)
    F = np.where(grid < 0, 0.0, size_cdf(sizes, np.maximum(grid, 0.0)))
    M = np.where(grid < 0, 0.0,
                 np.asarray(sizes.partial_moment(1, np.maximum(grid, 0.0)), dtype=float))
    k = np.arange(K + 1, dtype=float)
    # index k in (F, M) is at position k + 1
    Fm, F0, Fp = F[0:K + 1], F[1:K + 2], F[2:K + 3]
    Mm, M0, Mp = M[0:K + 1], M[1:K + 2], M[2:K + 3]
    left = (M0 - Mm - (k - 1) * delta * (F0 - Fm)) / delta
    right = ((k + 1) * delta * (Fp - F0) - (Mp - M0)) / delta
    p = left + right
    _tail_atoms(sizes, delta, F[1:] if not isinstance(sizes, Exponential) else None, p)
    p = np.maximum(p, 0.0)
    p /= p.sum()
    return p


#: Where :func:`hat_atoms` switches to the ccdf's cell integrals: cells whose left end has
#: ``ccdf`` at most this.  Below it the differences of the cdf and partial mean lose nothing;
#: beyond it they leave an absolute round-off of about ``eps k`` in atom ``k``, far above the
#: atoms of a heavy tail (a Pareto law's atoms near ``1e4 E[X]`` are ~1e-14 and came out ~1e-12,
#: six times its second moment on the lattice).
TAIL_SWITCH = 1e-3
#: Gauss-Legendre nodes per cell for the ccdf's integral over a tail cell.
_GL_NODES = 16


def _tail_atoms(sizes: Distribution, delta: float, F: NDArray[np.float64] | None,
                p: NDArray[np.float64]) -> None:
    r"""Recompute, in place, the atoms of the far tail of an unbounded law from cell integrals
    of the ccdf :math:`S`, which keep their relative accuracy where :math:`S` is small.

    The hat-kernel atom is the second difference of the stop-loss transform:
    :math:`p_k = (I_{k-1} - I_k)/\delta`, :math:`I_j = \int_{j\delta}^{(j+1)\delta} S(x)\,dx`
    (integrate :math:`\int f h_k` by parts).  :math:`I_j` is computed by 16-point
    Gauss-Legendre on each cell from the first cell whose left end has ``ccdf <=``
    :data:`TAIL_SWITCH` on; the law must be smooth there (unbounded support: exponential,
    phase-type, gamma, lognormal, Weibull, Pareto and Lomax laws are; laws of bounded support
    and empirical laws keep the differences, their atoms are not small).
    """
    if not math.isinf(float(sizes.support()[1])):
        return
    K = p.size - 1
    if F is None:         # the exponential law: its ccdf in closed form
        ccdf_grid = np.exp(-np.arange(K + 1) * delta / float(sizes.mean()))
    else:
        ccdf_grid = 1.0 - F[:K + 1]
    small = np.flatnonzero(ccdf_grid <= TAIL_SWITCH)
    if small.size == 0 or small[0] + 1 > K:
        return
    j0 = int(small[0])
    nodes, weights = np.polynomial.legendre.leggauss(_GL_NODES)
    cells = np.arange(j0, K + 1, dtype=float)[:, None]
    x = (cells + 0.5 * (nodes + 1.0)[None, :]) * delta
    S = np.asarray(sizes.ccdf(x.ravel()), dtype=float).reshape(x.shape)
    integral = 0.5 * delta * (S @ weights)            # I_j, j = j0..K
    p[j0 + 1:] = (integral[:-1] - integral[1:]) / delta


def diagonal_weights(lam: float, delta: float) -> tuple[float, float, float]:
    r"""Exact weights ``(a, b, q)`` of the diagonal :math:`E_A` recursion on step ``delta``.

    :math:`f(u) = a h(u) + b h(u - \delta\mathbf 1) + q f(u - \delta\mathbf 1)` with
    :math:`q = e^{-x}`, :math:`b = (1 - q(1 + x))/x`, :math:`a = 1 - q - b`, :math:`x =
    \lambda\delta` (the exponential kernel integrated against the linear interpolant; the
    derivation is in :mod:`symq.dispatch.vi.solvers`); a series for ``b`` when ``x`` is tiny.

    Examples
    --------
    >>> a, b, q = diagonal_weights(2.0, 0.1)
    >>> round(a + b + q, 15)
    1.0
    """
    x = lam * delta
    q = math.exp(-x)
    b = -math.expm1(-x) / x - q if x > 1e-4 else x / 2 - x * x / 3 + x ** 3 / 8
    return -math.expm1(-x) - b, b, q


def sorted_states(m: int, N: int) -> NDArray[np.int64]:
    """Lattice coordinates of the stored (sorted) states, in storage order.

    ``m = 1``: ``0..N``; ``m = 2``: pairs ``i <= j`` row by row; ``m >= 3``: sorted tuples
    in colex order (the packed simplex of :attr:`~symq.dispatch.vi.iteration.VIResult.v`, ranked
    by :mod:`symq.dispatch.simplex`).

    Examples
    --------
    >>> sorted_states(2, 2).tolist()
    [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]]
    """
    if m == 1:
        return np.arange(N + 1, dtype=np.int64)[:, None]
    if m == 2:
        i, j = np.triu_indices(N + 1)
        return np.stack([i, j], axis=1).astype(np.int64)
    if 3 <= m <= M_MAX:
        return colex_states(m, N)
    raise InvalidParameter("m", m, f"1..{M_MAX} for the reduced VI grid")


def _cap_steps(m: int, U2: Any, delta: float, U: float, nm: Mapping[str, str]) -> int:
    """Steps of the cap ``U2`` on the second-largest backlog, validated."""
    name = nm.get("U2", "U2")
    if m < 3:
        raise InvalidParameter(name, U2, "None for m < 3 (a cap on the second-largest "
                               "backlog needs three servers or more)")
    U2 = real_value(name, U2, f"a real number in (0, {nm['U']}={U:g}]",
                    lambda x: 0 < x <= U * (1 + 1e-12))
    n2 = int(round(U2 / delta))
    if n2 < 1 or abs(n2 * delta - U2) > 1e-9 * max(U2, 1.0):
        raise InvalidParameter(name, U2, f"a positive multiple of {nm['delta']}={delta!r}")
    return min(n2, int(round(U / delta)))


@dataclass(frozen=True)
class DispatchGrid:
    r"""The discretised model: grid, size atoms, arrival weights and tail curvature.

    Attributes
    ----------
    m : int
        Number of servers.
    rho : float
        Per-server load :math:`\lambda E[X]/m`.
    lam : float
        Arrival rate.
    delta, U : float
        Lattice step and truncation, ``U = N delta``.
    N, K : int
        Number of steps of the state grid and of the size lattice.
    p : numpy.ndarray
        Hat-kernel size atoms ``p[0..K]`` (:func:`hat_atoms`).
    a, b, q : float
        Exact exponential weights of the diagonal recursion.
    c_M : float
        Tail curvature: by default the equal random split's :math:`(\lambda/m)/(2(1-\rho))`,
        or the curvature fitted by :func:`~symq.dispatch.vi.boundary.fit_tail`.
    size_name : str
    mean_size : float
    tail_slope : float
        Linear coefficient ``b`` of the tail: beyond ``U`` a coordinate adds
        :math:`c_M((U + s)^2 - U^2) + b s` (0 unless fitted).
    N2 : int
        Steps of the cap ``U2 = N2 delta`` on the second-largest backlog (``m >= 3``; ``N``:
        no cap).  With a cap the grid holds the optimal policy among those that never make
        the second-largest backlog exceed ``U2``: only the sorted states with
        :math:`u_{m-1} \le U_2` are stored, ranked densely (the capped simplex of
        :mod:`symq.dispatch.simplex`), a set that such policies and the drain never leave.
    tail_cross : numpy.ndarray, optional
        The cross term :math:`\varphi(i\delta)`, ``i = 0..(m-1)N``, of the tail
        (:class:`~symq.dispatch.vi.boundary.Tail`): beyond ``U`` a coordinate's slope is
        ``tail_slope + tail_cross[i]`` where the other coordinates sum to ``i`` steps.  None:
        no cross term.
    """

    m: int
    rho: float
    lam: float
    delta: float
    U: float
    N: int
    K: int
    p: NDArray[np.float64] = field(repr=False)
    a: float
    b: float
    q: float
    c_M: float
    size_name: str
    mean_size: float
    tail_slope: float = 0.0
    N2: int = -1
    tail_cross: NDArray[np.float64] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.N2 < 0:
            object.__setattr__(self, "N2", self.N)

    @property
    def capped(self) -> bool:
        """Whether the second-largest backlog is capped below ``U``."""
        return self.m >= 3 and self.N2 < self.N

    @property
    def U2(self) -> float:
        """The cap on the second-largest backlog, ``N2 delta``."""
        return self.N2 * self.delta

    def rank_chunks(self, chunks: int = 1) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(starts, ends)``: the stored ranks ``0 .. n_states - 1`` in ``chunks`` contiguous
        pieces of about equal size (the parallel kernels' load balance)."""
        total = self.n_states
        bounds = np.linspace(0, total, max(1, min(chunks, total)) + 1).round().astype(np.int64)
        return bounds[:-1], bounds[1:]

    @classmethod
    def build(cls, m: int, rho: float, sizes: Any, delta: float, U: float,
              tail_tol: float = 1e-10, *, names: Mapping[str, str] | None = None,
              tail: TailLike = None,
              correction_level: bool = False, U2: float | None = None) -> DispatchGrid:
        """Validate the parameters and discretise (the rules of
        :func:`~symq.dispatch.vi.solvers.solve_optimal`).

        ``correction_level``: a grid that only carries the coarse-grid correction of a finer
        one (:mod:`~symq.dispatch.vi.coarse_correction`), whose step may reach ``E[X]``.
        ``U2``: the cap on the second-largest backlog (``m >= 3``, a multiple of ``delta`` in
        ``(0, U]``; see :attr:`N2`).

        ``names`` maps ``"delta"``, ``"U"``, ``"m"``, ``"rho"`` to the names the caller's user
        typed (the ``dispatch`` model passes ``{"U": "umax"}``), so errors name those.
        ``tail`` (a :class:`~symq.dispatch.vi.boundary.Tail` or a pair ``(curvature, slope)``)
        replaces the equal split's tail beyond ``U`` (fitted by
        :func:`~symq.dispatch.vi.boundary.fit_boundary`).  The memory of one grid is checked
        (:func:`symq.core.resources.require_memory`) before the size atoms or any state array
        is allocated.
        """
        sizes = as_sizes(sizes)
        fitted = as_tail(tail)
        m, rho, delta, U, N, mean, second, lam = validate_grid(
            m, rho, sizes, delta, U, names=names, max_step=1.0 if correction_level else 0.5)
        K_est = int(math.ceil(size_tail_point(sizes, tail_tol) / delta)) + 1
        nm = _names(names)
        N2 = N if U2 is None else _cap_steps(m, U2, delta, U, nm)
        require_memory(nm["delta"], delta, grid_bytes(m, N, K_est, levels=1, N2=N2),
                       what=f"{n_sorted_states(m, N, N2):.3g} sorted states x {K_est} size "
                            "atoms",
                       limit=f"coarse enough to fit: lower {nm['U']}={U:g} or raise "
                             f"{nm['delta']}")
        p = hat_atoms(sizes, delta, tail_tol)
        a, b, q = diagonal_weights(lam, delta)
        cross = None
        if fitted is None:     # the equal split's M/G/1 value
            c_M, slope = float(tail_curvature_fn().scalar(lam / m, rho)), 0.0
        else:
            c_M, slope = fitted.curvature, fitted.slope
            if m >= 2:
                cross = fitted.cross_slopes(delta, (m - 1) * N + 1)
        return cls(m=m, rho=rho, lam=lam, delta=delta, U=N * delta, N=N, K=p.size - 1, p=p,
                   a=a, b=b, q=q, c_M=c_M, size_name=str(getattr(sizes, "name", "sizes")),
                   mean_size=mean, tail_slope=slope, N2=N2, tail_cross=cross)

    @property
    def n_states(self) -> int:
        """Number of stored (sorted) states (within the cap, if any)."""
        return n_sorted_states(self.m, self.N, self.N2 if self.m >= 3 else None)

    @property
    def lattice_mean(self) -> float:
        """:math:`\\sum_k k\\delta p_k` (equals ``E[X]`` up to the tail truncation)."""
        return float((self.p * self.delta * np.arange(self.K + 1)).sum())

    def tail_increments(self) -> NDArray[np.float64]:
        """Tail increments ``c_M((U + s delta)^2 - U^2) + tail_slope s delta``, ``s = 0..K``."""
        s = np.arange(self.K + 1, dtype=float)
        curved = self.c_M * self.delta ** 2 * ((self.N + s) ** 2 - self.N ** 2)
        return curved if self.tail_slope == 0.0 else curved + self.tail_slope * self.delta * s

    def cross_increments(self) -> NDArray[np.float64]:
        """``tail_cross * delta``: the tail's extra increment per step beyond ``U``, per step of
        the other coordinates' sum (zeros without a cross term; one entry for ``m = 1``)."""
        if self.tail_cross is None:
            return np.zeros(max(self.m - 1, 1) * self.N + 1)
        return self.tail_cross * self.delta

    @property
    def tail(self) -> Tail:
        """The grid's tail as a :class:`~symq.dispatch.vi.boundary.Tail` (its cross term on
        this grid's knots)."""
        if self.tail_cross is None:
            return Tail(self.c_M, self.tail_slope)
        return Tail(self.c_M, self.tail_slope, self.delta,
                    tuple(float(x) for x in self.tail_cross))

    def shape(self) -> tuple[int, ...]:
        """Shape of the stored value array."""
        if self.m == 1:
            return (self.N + 1,)
        if self.m == 2:
            return (self.N + 1, self.N + 1)
        return (self.n_states,)            # the packed sorted simplex (m >= 3)
