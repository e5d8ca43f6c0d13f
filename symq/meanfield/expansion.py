r"""Size expansion of a population process to order ``1/N^2``: steady state and transient.

For a density-dependent population process (:class:`~symq.meanfield.population.PopulationProcess`:
jumps ``x -> x + l/N`` at rate ``N beta_l(x)``, drift ``F``), the mean of the occupancy vector
expands as

.. math:: E[X^N] = \pi + V/N + V_2/N^2 + o(1/N^2),

in steady state (``pi`` an exponentially stable fixed point) and along a trajectory from a
deterministic initial state (``pi`` replaced by the mean-field solution ``phi(t)``; ``V(t)``,
``V_2(t)`` start at 0).  ``V`` is the refined term of Gast & Van Houdt, "A refined mean field
approximation", Proc. ACM SIGMETRICS 2018, Theorem 1; ``V_2`` (``A`` in the paper) is the
``1/N^2`` term of Gast, Bortolussi & Tribastone, "Size expansions of mean field
approximation: transient and steady-state analysis", Performance Evaluation 129 (2019).

Derivation (the moment equations the paper closes; written out in ``docs/guide/nonlinear.md``,
section "The 1/N^2 term").  With ``Y = X^N - phi(t)`` and the exact generator, for every
monomial ``g`` of ``Y``, ``d E[g]/dt = E[L^N g]``; Taylor expanding ``F``, ``Q`` and ``R``
around ``phi`` and keeping the terms of order ``1/N`` and ``1/N^2`` of the moments

* ``E[Y] = v/N + a/N^2``, ``E[Y Y^T] = w/N + c/N^2``, ``E[Y_j Y_k Y_l] = d_jkl/N^2``,
* ``E[Y_j Y_k Y_l Y_m] = (w_jk w_lm + w_jl w_km + w_jm w_kl)/N^2`` (Gaussian at this order),

gives, with ``A = DF``, ``B = D^2F``, ``D3 = D^3F``, ``D4 = D^4F`` (all at ``phi``),
``Q = sum_l l l^T beta_l``, ``R = sum_l l (x) l (x) l beta_l`` and their derivatives,

* ``w' = A w + w A^T + Q``;  ``v' = A v + (1/2) B:w``;
* ``d'_jkl = sum_3 [(A d)_jkl + (1/2) sum_mn B_jmn e_mnkl + Q_jk v_l + sum_m DQ_jk,m w_ml]
  + R_jkl`` (``sum_3``: the three places of the single index);
* ``c' = A c + c A^T + H + H^T + sum_m DQ_.,.,m v_m + (1/2) sum_mn D2Q_..mn w_mn``,
  ``H_jk = (1/2) sum_mn B_jmn d_mnk + (1/2) (sum_mnp D3_jmnp w_mn w_pk)``;
* ``a' = A a + (1/2) B:c + (1/6) D3:d + (1/8) sum D4_imnpq w_mn w_pq``.

The steady state sets every derivative to 0: two Lyapunov equations (``w``, ``c``), two
linear solves (``v``, ``a``) and one three-mode Sylvester equation for ``d``, solved slice by
slice in the complex Schur basis of ``A`` (LAPACK ``trsyl``, ``O(n^4)``).  The transient
integrates the same equations with the mean-field ODE.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg
import sympy as sp
from numpy.typing import ArrayLike, NDArray
from scipy.integrate import solve_ivp

from symq.core.errors import InvalidParameter, NotConverged, StabilityError
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase

from .conservation import conservation

if TYPE_CHECKING:
    from .population import PopulationProcess

__all__ = ["MeanFieldExpansion", "TransientExpansion", "expansion_steady_state",
           "expansion_transient", "functional_terms", "output_times"]

#: Relative residual accepted of each linear, Lyapunov and Sylvester solve of the expansion.
SOLVE_RESIDUAL = 1e-8


@dataclass(frozen=True)
class MeanFieldExpansion(ResultBase):
    r"""Steady-state size expansion :math:`E[X^N] = \pi + V/N + V_2/N^2 + o(1/N^2)`.

    Gast & Van Houdt (SIGMETRICS 2018, Theorem 1) for ``V``; Gast, Bortolussi & Tribastone
    (Performance Evaluation 2019) for ``V2`` (their ``A``).

    Attributes
    ----------
    pi : ndarray
        The fixed point (the mean-field limit).
    V : ndarray
        The ``1/N`` term.
    V2 : ndarray or None
        The ``1/N^2`` term (``None`` for ``order = 1``).
    W : ndarray
        ``lim N Cov(X^N)``: the solution of ``A W + W A^T + Q = 0``.
    W2 : ndarray or None
        The ``1/N^2`` term of ``E[(X^N - pi)(X^N - pi)^T] = W/N + W2/N^2`` (order 2).
    M3 : ndarray or None
        The ``1/N^2`` term of the third moments ``E[(X^N - pi)^{(x)3}] = M3/N^2`` (order 2).
    max_real : float
        Largest real part of the eigenvalues of ``DF(pi)`` (negative).
    residual : float
        Largest relative residual of the solves (Lyapunov, linear, Sylvester).
    method : str
    exactness : Exactness
        ``numeric``.
    """

    pi: NDArray[np.float64]
    V: NDArray[np.float64]
    V2: NDArray[np.float64] | None
    W: NDArray[np.float64]
    W2: NDArray[np.float64] | None
    M3: NDArray[np.float64] | None
    max_real: float
    residual: float
    method: str = ("size expansion of the stationary mean (Gast & Van Houdt 2018, Thm 1; "
                   "Gast, Bortolussi & Tribastone 2019): Lyapunov, Sylvester and linear solves")
    exactness: Exactness = Exactness.NUMERIC

    @property
    def order(self) -> int:
        """1 (``V`` only) or 2 (also ``V2``)."""
        return 1 if self.V2 is None else 2

    def mean(self, N: int) -> NDArray[np.float64]:
        """``pi + V/N`` (order 1) or ``pi + V/N + V2/N^2`` (order 2): the estimate of
        ``E[X^N]``."""
        return _estimate(self.pi, self.V, self.V2, N)


@dataclass(frozen=True)
class TransientExpansion(ResultBase):
    r"""Transient size expansion :math:`E[X^N(t)] = \phi(t) + V(t)/N + V_2(t)/N^2 + o(1/N^2)`
    from the deterministic initial state ``x0`` (Gast, Bortolussi & Tribastone 2019).

    Attributes
    ----------
    t : ndarray, shape (m,)
    x : ndarray, shape (m, n)
        The mean-field solution ``phi(t)``.
    V : ndarray, shape (m, n)
        The ``1/N`` term ``V(t)``.
    V2 : ndarray, shape (m, n), or None
        The ``1/N^2`` term (``None`` for ``order = 1``).
    W : ndarray, shape (m, n, n)
        ``lim N Cov(X^N(t))``.
    W2 : ndarray, shape (m, n, n), or None
        The ``1/N^2`` term of ``E[(X^N(t) - phi(t))(X^N(t) - phi(t))^T]`` (order 2).
    M3 : ndarray, shape (m, n, n, n), or None
        The ``1/N^2`` term of the third moments about ``phi(t)`` (order 2).
    method : str
    exactness : Exactness
    """

    t: NDArray[np.float64]
    x: NDArray[np.float64]
    V: NDArray[np.float64]
    V2: NDArray[np.float64] | None
    W: NDArray[np.float64]
    W2: NDArray[np.float64] | None
    M3: NDArray[np.float64] | None
    method: str = "transient size expansion (Gast, Bortolussi & Tribastone 2019): moment ODEs"
    exactness: Exactness = Exactness.NUMERIC

    @property
    def order(self) -> int:
        """1 (``V`` only) or 2 (also ``V2``)."""
        return 1 if self.V2 is None else 2

    def mean(self, N: int) -> NDArray[np.float64]:
        """The estimate of ``E[X^N(t)]`` at every time (shape (m, n))."""
        return _estimate(self.x, self.V, self.V2, N)


def output_times(t: float | ArrayLike) -> NDArray[np.float64]:
    """The output times of an ODE solve: a positive final time, or increasing times ``>= 0``
    (as an array); :class:`InvalidParameter` naming ``t`` otherwise."""
    times = np.atleast_1d(np.asarray(t, dtype=float))
    if times.ndim != 1 or not np.all(np.isfinite(times)) or np.any(times < 0) \
            or np.any(np.diff(times) <= 0) or times[-1] <= 0:
        raise InvalidParameter("t", t, "a positive final time or increasing times >= 0")
    return times


def _estimate(base: NDArray[np.float64], V: NDArray[np.float64],
              V2: NDArray[np.float64] | None, N: Any) -> NDArray[np.float64]:
    """``base + V/N (+ V2/N^2)`` for a population size ``N >= 1``."""
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise InvalidParameter("N", N, "an integer >= 1 (the population size)")
    out = base + V / N
    return out if V2 is None else out + V2 / int(N) ** 2


def _order(order: Any) -> int:
    if isinstance(order, bool) or order not in (1, 2):
        raise InvalidParameter("order", order, "1 (the 1/N term) or 2 (the 1/N^2 term)")
    return int(order)


# ---------------------------------------------------------------------- symbolic tensors
def _differentiate(process: PopulationProcess, entries: dict[tuple[int, ...], sp.Expr]
                   ) -> dict[tuple[int, ...], sp.Expr]:
    """Every non-zero first derivative of every entry: key ``(*entry, variable index)``."""
    index = {v: j for j, v in enumerate(process.variables)}
    out: dict[tuple[int, ...], sp.Expr] = {}
    for key, expr in entries.items():
        for v in sorted(expr.free_symbols & index.keys(), key=index.get):
            derivative = sp.diff(expr, v)
            if derivative != 0:
                out[(*key, index[v])] = derivative
    return out


def _tensor_entries(process: PopulationProcess, name: str) -> dict[tuple[int, ...], sp.Expr]:
    """The non-zero entries of ``D3F``, ``D4F``, ``DQ``, ``D2Q`` or ``R`` (derived once)."""
    cache = process._derived
    key = f"expansion:{name}"
    if key not in cache:
        if name == "D3":
            cache[key] = _differentiate(process, process._entries_hessian())
        elif name == "D4":
            cache[key] = _differentiate(process, _tensor_entries(process, "D3"))
        elif name == "DQ":
            cache[key] = _differentiate(process, process._entries_diffusion())
        elif name == "D2Q":
            cache[key] = _differentiate(process, _tensor_entries(process, "DQ"))
        else:  # R: the third moment of the jumps
            terms: dict[tuple[int, ...], list[sp.Expr]] = {}
            for (jump, rate), support in zip(process.transitions, process._supports):
                for i in support:
                    for j in support:
                        for k in support:
                            terms.setdefault((i, j, k), []).append(
                                jump[i] * jump[j] * jump[k] * rate)
            cache[key] = {k: sp.Add(*v) for k, v in terms.items() if sp.Add(*v) != 0}
    return cache[key]


def _values(process: PopulationProcess, name: str, entries: dict, x: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Indices (shape (nnz, rank)) and values of a sparse tensor at ``x``."""
    from .population import scalar_call

    key = name if name == "H" else f"expansion:{name}"   # the Hessian is compiled once
    positions, func = process._compiled_entries(key, entries)
    if func is None:
        return np.zeros((0, 1), dtype=np.int64), np.zeros(0)
    return np.array(positions, dtype=np.int64), scalar_call(func, x, p)


def _dense(process: PopulationProcess, name: str, entries: dict, x: NDArray[np.float64],
           p: NDArray[np.float64], rank: int) -> NDArray[np.float64]:
    n = process.dimension
    out = np.zeros((n,) * rank)
    idx, vals = _values(process, name, entries, x, p)
    if vals.size:
        np.add.at(out, tuple(idx.T), vals)
    return out


class _Tensors:
    """The drift's derivatives and the jump moments at one point, for the moment equations."""

    def __init__(self, process: PopulationProcess, x: NDArray[np.float64],
                 p: NDArray[np.float64], order: int) -> None:
        self.A = process.DF(x, p)
        self.Q = process.Q(x, p)
        self.B = _dense(process, "H", process._entries_hessian(), x, p, 3)
        if order == 2:
            self.D3 = _values(process, "D3", _tensor_entries(process, "D3"), x, p)
            self.D4 = _values(process, "D4", _tensor_entries(process, "D4"), x, p)
            self.DQ = _dense(process, "DQ", _tensor_entries(process, "DQ"), x, p, 3)
            self.D2Q = _values(process, "D2Q", _tensor_entries(process, "D2Q"), x, p)
            self.R = _dense(process, "R", _tensor_entries(process, "R"), x, p, 3)

    def reduce(self, P: NDArray[np.float64]) -> None:
        """Move every tensor to the coordinates ``y`` of ``x = x* + P y`` (``P``: orthonormal
        basis of the jumps' span, :mod:`symq.meanfield.conservation`): each index, whether a
        component of ``F`` or a direction of a derivative, is contracted with ``P``."""
        def dense(T: NDArray[np.float64]) -> NDArray[np.float64]:
            letters = "ijklm"[:T.ndim]
            out = "abcde"[:T.ndim]
            spec = ",".join(f"{i}{o}" for i, o in zip(letters, out))
            return np.einsum(f"{letters},{spec}->{out}", T, *[P] * T.ndim, optimize=True)

        def sparse(entries: tuple[NDArray[np.int64], NDArray[np.float64]]
                   ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
            idx, vals = entries
            if not vals.size:
                return entries
            rank = idx.shape[1]
            out = "abcde"[:rank]
            spec = ",".join(f"z{o}" for o in out)
            T = np.einsum(f"z,{spec}->{out}", vals, *[P[idx[:, k]] for k in range(rank)],
                          optimize=True)
            keep = np.argwhere(np.abs(T) > 1e-14 * max(float(np.max(np.abs(T))), 1e-300))
            return keep.astype(np.int64), T[tuple(keep.T)]

        self.A, self.Q, self.B = P.T @ self.A @ P, P.T @ self.Q @ P, dense(self.B)
        if hasattr(self, "D3"):
            self.D3, self.D4, self.D2Q = sparse(self.D3), sparse(self.D4), sparse(self.D2Q)
            self.DQ, self.R = dense(self.DQ), dense(self.R)

    # first order
    def half_B(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(1/2) sum_jk B_ijk w_jk``."""
        return 0.5 * np.einsum("ijk,jk->i", self.B, w)

    # second order
    def source_d(self, v: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
        """The source of the third-moment equation (all but ``sum_3 A d``)."""
        first = np.einsum("j,kl->jkl", self.half_B(w), w) \
            + np.einsum("jmn,mk,nl->jkl", self.B, w, w, optimize=True)
        pair = np.einsum("jk,l->jkl", self.Q, v) + np.einsum("jkm,ml->jkl", self.DQ, w)
        return (first + first.transpose(1, 0, 2) + first.transpose(1, 2, 0)
                + pair + pair.transpose(0, 2, 1) + pair.transpose(1, 2, 0) + self.R)

    def source_c(self, v: NDArray[np.float64], w: NDArray[np.float64],
                 d: NDArray[np.float64]) -> NDArray[np.float64]:
        """The source of the second-moment equation at order ``1/N^2``."""
        n = w.shape[0]
        h = 0.5 * np.einsum("jmn,mnk->jk", self.B, d)
        idx, vals = self.D3
        if vals.size:
            m3 = np.zeros((n, n))
            np.add.at(m3, (idx[:, 0], idx[:, 3]), vals * w[idx[:, 1], idx[:, 2]])
            h += 0.5 * m3 @ w
        out = h + h.T + np.einsum("jkm,m->jk", self.DQ, v)
        idx, vals = self.D2Q
        if vals.size:
            np.add.at(out, (idx[:, 0], idx[:, 1]), 0.5 * vals * w[idx[:, 2], idx[:, 3]])
        return out

    def source_a(self, w: NDArray[np.float64], c: NDArray[np.float64],
                 d: NDArray[np.float64]) -> NDArray[np.float64]:
        """The source of the mean equation at order ``1/N^2`` (all but ``A a``)."""
        out = self.half_B(c)
        idx, vals = self.D3
        if vals.size:
            np.add.at(out, idx[:, 0], vals * d[idx[:, 1], idx[:, 2], idx[:, 3]] / 6.0)
        idx, vals = self.D4
        if vals.size:
            np.add.at(out, idx[:, 0],
                      vals * w[idx[:, 1], idx[:, 2]] * w[idx[:, 3], idx[:, 4]] / 8.0)
        return out


def _three_mode(A: NDArray[np.float64], d: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_3 A x_i d``: ``A`` applied to each of the three indices of ``d``."""
    return (np.einsum("jm,mkl->jkl", A, d) + np.einsum("km,jml->jkl", A, d)
            + np.einsum("lm,jkm->jkl", A, d))


def _solve_three_mode(A: NDArray[np.float64], G: NDArray[np.float64]) -> NDArray[np.float64]:
    """Solve ``sum_3 A x_i d + G = 0`` in the complex Schur basis ``A = U T U^H``: each slice
    of the last index is a triangular Sylvester equation (LAPACK ``ztrsyl``), from the last
    slice to the first (``O(n^4)``)."""
    T, U = scipy.linalg.schur(A.astype(complex), output="complex")
    Uh = U.conj().T
    rhs = -np.einsum("aj,bk,cl,jkl->abc", Uh, Uh, Uh, G.astype(complex), optimize=True)
    (trsyl,) = scipy.linalg.get_lapack_funcs(("trsyl",), (T,))
    n = A.shape[0]
    D = np.zeros((n, n, n), dtype=complex)
    eye = np.eye(n)
    for r in range(n - 1, -1, -1):
        right = rhs[:, :, r] - np.einsum("q,jkq->jk", T[r, r + 1:], D[:, :, r + 1:])
        X, scale, info = trsyl(T + T[r, r] * eye, T.conj(), right, trana="N", tranb="C")
        if info < 0:
            raise NotConverged("three-mode Sylvester equation of the 1/N^2 term (LAPACK trsyl "
                               f"argument {-info})", float("inf"), SOLVE_RESIDUAL, r)
        D[:, :, r] = X / scale
    d = np.einsum("ja,kb,lc,abc->jkl", U, U, U, D, optimize=True)
    return np.ascontiguousarray(d.real)


def _relative(residual: NDArray[np.float64], scale: NDArray[np.float64]) -> float:
    return float(np.max(np.abs(residual), initial=0.0)
                 / max(float(np.max(np.abs(scale), initial=0.0)), 1e-300))


def expansion_steady_state(process: PopulationProcess, pi: ArrayLike,
                           params: Mapping[Any, float] | None = None, *, order: int = 2
                           ) -> MeanFieldExpansion:
    """The steady-state expansion ``E[X^N] = pi + V/N + V2/N^2`` at a fixed point ``pi``.

    Parameters
    ----------
    process : PopulationProcess
    pi : array_like
        An exponentially stable fixed point (:meth:`PopulationProcess.fixed_point`).
    params : mapping
        Parameter values (keys: symbols or names).
    order : {1, 2}, default 2
        1: ``V`` only (Gast & Van Houdt 2018, Theorem 1); 2: also ``V2`` (Gast, Bortolussi &
        Tribastone 2019).

    Raises
    ------
    StabilityError
        ``DF(pi)`` has an eigenvalue with non-negative real part.
    NotConverged
        A solve left a relative residual above :data:`SOLVE_RESIDUAL` (ill-conditioned).
    """
    order = _order(order)
    pi = process._state(pi, "pi")
    p = process.parameter_values(params)
    n = process.dimension
    require_memory("pi", f"{n} variables", 8.0 * (6 if order == 2 else 2) * n ** 3,
                   what=f"{'third-moment' if order == 2 else 'Hessian'} tensors of {n}^3",
                   limit="fewer variables (or order=1)")
    t = _Tensors(process, pi, p, order)
    P = conservation(process).basis
    if P is not None:        # conserved quantities: solve in the span of the jumps
        t.reduce(P)
    A = t.A
    max_real = float(np.max(np.linalg.eigvals(A).real))
    if not max_real < 0:
        raise StabilityError(f"the fixed point of the {process.name} is not exponentially stable "
                             f"(max real part of the eigenvalues of DF(pi) = {max_real:.3g} >= 0"
                             + ("" if P is None else ", on the span of the jumps") + "); "
                             "the refined mean field needs a stable fixed point")
    W = scipy.linalg.solve_continuous_lyapunov(A, -t.Q)
    W = 0.5 * (W + W.T)
    residuals = [_relative(A @ W + W @ A.T + t.Q, t.Q)]
    bw = t.half_B(W)
    V = -np.linalg.solve(A, bw)
    residuals.append(_relative(A @ V + bw, bw) if np.any(bw) else 0.0)
    V2 = C = d = None
    if order == 2:
        G = t.source_d(V, W)
        d = _solve_three_mode(A, G)
        residuals.append(_relative(_three_mode(A, d) + G, G))
        Hc = t.source_c(V, W, d)
        C = scipy.linalg.solve_continuous_lyapunov(A, -Hc)
        C = 0.5 * (C + C.T)
        residuals.append(_relative(A @ C + C @ A.T + Hc, Hc))
        s = t.source_a(W, C, d)
        V2 = -np.linalg.solve(A, s)
        residuals.append(_relative(A @ V2 + s, s) if np.any(s) else 0.0)
    residual = max(residuals)
    if P is not None:        # back to the variables
        V, W = P @ V, P @ W @ P.T
        if V2 is not None and C is not None and d is not None:
            V2, C = P @ V2, P @ C @ P.T
            d = np.einsum("ia,jb,kc,abc->ijk", P, P, P, d, optimize=True)
    values = [V, W] + ([] if V2 is None else [V2])
    if not all(np.all(np.isfinite(a)) for a in values) or not residual <= SOLVE_RESIDUAL:
        raise NotConverged(f"size expansion of the {process.name} (order {order}; the relative "
                           "residual of its solves)", residual, SOLVE_RESIDUAL, 1)
    return MeanFieldExpansion(pi=pi, V=V, V2=V2, W=W, W2=C, M3=d, max_real=max_real,
                              residual=residual)


def expansion_transient(process: PopulationProcess, x0: ArrayLike, t: float | ArrayLike,
                        params: Mapping[Any, float] | None = None, *, order: int = 2,
                        rtol: float = 1e-8, atol: float = 1e-10) -> TransientExpansion:
    """The transient expansion ``E[X^N(t)] = phi(t) + V(t)/N + V2(t)/N^2`` from ``X^N(0) = x0``.

    Integrates the mean-field ODE with the moment equations of the module docstring
    (``n + n + n^2`` unknowns for ``order = 1``; ``+ n + n^2 + n^3`` for ``order = 2``) with
    :func:`scipy.integrate.solve_ivp` (``DOP853``, explicit: the moment equations are as stiff
    as the mean-field ODE).

    Parameters
    ----------
    process : PopulationProcess
    x0 : array_like
        The deterministic initial occupancy.
    t : float or array_like
        Final time, or increasing output times ``>= 0``.
    params : mapping
    order : {1, 2}, default 2
    rtol, atol : float
        Tolerances of the integrator.

    Raises
    ------
    NotConverged
        The integrator failed or gave a non-finite value.
    """
    order = _order(order)
    x0 = process._state(x0)
    p = process.parameter_values(params)
    times = output_times(t)
    n = process.dimension
    require_memory("x0", f"{n} variables", 8.0 * 12 * n ** (3 if order == 2 else 2),
                   what="the moment equations", limit="fewer variables (or order=1)")
    sizes = [n, n, n * n] + ([n, n * n, n ** 3] if order == 2 else [])
    cuts = np.cumsum(sizes)[:-1]

    def rhs(_t: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
        parts = np.split(y, cuts)
        x, v, w = parts[0], parts[1], parts[2].reshape(n, n)
        ts = _Tensors(process, x, p, order)
        A = ts.A
        out = [process.F(x, p), A @ v + ts.half_B(w), (A @ w + w @ A.T + ts.Q).ravel()]
        if order == 2:
            a, c, d = parts[3], parts[4].reshape(n, n), parts[5].reshape(n, n, n)
            out += [A @ a + ts.source_a(w, c, d),
                    (A @ c + c @ A.T + ts.source_c(v, w, d)).ravel(),
                    (_three_mode(A, d) + ts.source_d(v, w)).ravel()]
        return np.concatenate(out)

    y0 = np.concatenate([x0, np.zeros(int(np.sum(sizes)) - n)])
    sol = solve_ivp(rhs, (0.0, float(times[-1])), y0, method="DOP853", rtol=rtol, atol=atol,
                    t_eval=times)
    if not sol.success or not np.all(np.isfinite(sol.y)):
        raise NotConverged(f"solve_ivp(DOP853) of the moment equations of the {process.name}",
                           float("inf"), rtol, int(sol.nfev))
    y = sol.y.T
    m = y.shape[0]
    parts = np.split(y, cuts, axis=1)
    second = order == 2
    return TransientExpansion(t=sol.t, x=parts[0], V=parts[1], W=parts[2].reshape(m, n, n),
                              V2=parts[3] if second else None,
                              W2=parts[4].reshape(m, n, n) if second else None,
                              M3=parts[5].reshape(m, n, n, n) if second else None)


def functional_terms(derivatives: Mapping[tuple[int, ...], float], V: NDArray[np.float64],
                     W: NDArray[np.float64], V2: NDArray[np.float64] | None = None,
                     W2: NDArray[np.float64] | None = None, M3: NDArray[np.float64] | None = None
                     ) -> tuple[float, float]:
    """The ``1/N`` and ``1/N^2`` terms of ``E[h(X^N)]`` for a smooth functional ``h``.

    ``E[h(X^N)] = h(pi) + (Dh V + (1/2) D2h:W)/N + (Dh V2 + (1/2) D2h:W2 + (1/6) D3h:M3
    + (1/8) sum D4h_jklm W_jk W_lm)/N^2``: the Taylor expansion of ``h`` around ``pi`` (or
    ``phi(t)``) with the moments of the module docstring (the fourth moments Gaussian at this
    order).

    Parameters
    ----------
    derivatives : mapping
        The non-zero partial derivatives of ``h`` at the point, keyed by their index tuple
        (``(j,)``, ``(j, k)``, ... every ordering present); the value ``()`` is ignored.
    V, W, V2, W2, M3 : ndarray
        The expansion's terms (``V2``, ``W2``, ``M3`` ``None`` for order 1).

    Returns
    -------
    (float, float)
        The ``1/N`` term and the ``1/N^2`` term (``nan`` for order 1).
    """
    first = 0.0
    second = 0.0 if V2 is not None and W2 is not None and M3 is not None else math.nan
    for index, value in derivatives.items():
        if len(index) == 1:
            first += value * V[index[0]]
            if V2 is not None:
                second += value * V2[index[0]]
        elif len(index) == 2:
            first += 0.5 * value * W[index]
            if W2 is not None:
                second += 0.5 * value * W2[index]
        elif len(index) == 3 and M3 is not None:
            second += value * M3[index] / 6.0
        elif len(index) == 4 and V2 is not None:
            j, k, l, m = index
            second += value * W[j, k] * W[l, m] / 8.0
    return float(first), float(second)
