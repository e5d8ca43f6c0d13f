r"""The runnable form of a dispatching policy: :class:`BoundPolicy`, what the kernels take.

A :class:`~symq.dispatch.policies.policy.DispatchPolicy` bound to ``m`` servers, the load
:math:`\rho`, a job-size law and (optionally) server speeds becomes a :class:`BoundPolicy`: an
integer code of :mod:`~symq.dispatch.policies.decisions` plus the parameter arrays that
:func:`~symq.dispatch.policies.decisions.choose_server` needs (thresholds, per-server rates and
loads, a value table, a compiled score).  The simulator
(:func:`~symq.dispatch.simulation.simulate.simulate_dispatch`) and the value-iteration decision
tables read it; :meth:`BoundPolicy.decide` asks it for decisions from Python.  What each policy
means is stated in :mod:`symq.dispatch.policies.named` (Hyytiä & Righter, arXiv 2402.08142).

Examples
--------
>>> from symq.dispatch.policies import get_policy
>>> from symq.laws import Exponential
>>> bound = get_policy("lwl").bind(2, 0.5, Exponential(1.0))
>>> isinstance(bound, BoundPolicy), bound.lam
(True, 1.0)
>>> bound.decide([[3.0, 1.0]], [1.0]).tolist()
[1]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter
from symq.core.randomness import RngLike, as_generator

from ..symbolic import fpi_index_fn
from . import speeds as _speeds
from .decisions import FPI, JIQ_JSQ, JSQ, SCORE, decide_many
from .score import decide_scores, nan_score

__all__ = ["BoundPolicy"]


@dataclass(frozen=True)
class BoundPolicy:
    """A policy with ``m``, ``rho``, the size law and the speeds fixed: what the simulator runs.

    Attributes
    ----------
    name : str
    m : int
    rho, lam : float
        Load :math:`\\lambda E[X]/\\sum_i s_i` and total arrival rate ``rho sum(s) / E[X]``
        (``rho m / E[X]`` for unit speeds).
    code : int
        Integer code for :func:`~symq.dispatch.policies.decisions.choose_server`.
    thresholds : float64 array (m-1,) or empty
        SITA thresholds (``sita*``; for ``fpi-sita`` the base SITA thresholds).
    lam_i, rho_i : float64 arrays (m,)
        Per-server rates and loads of the base static policy (``fpi-*``).
    v : float64 array (N+1, N+1)
        Value table (``lookup`` with ``m = 2``; a dummy 2x2 array otherwise).
    delta, c_M : float
        Grid step and tail curvature (``lookup``).
    tail_slope : float
        Linear term of the look-up tail beyond ``U``
        (:func:`~symq.dispatch.policies.decisions.lookup_value`; ``lookup``, default 0).
    tail_cross : float64 array
        The tail's cross term at the other backlogs' sums ``0, delta, 2 delta, ...``
        (:class:`~symq.dispatch.vi.boundary.Tail`; ``lookup``, default empty: none).
    score : numba function or None
        The compiled score ``s(u, n, x, i, p)`` of a score policy
        (:data:`~symq.dispatch.policies.score.SCORE_SIGNATURE`).
    score_params : float64 array
        Its ``p``: ``(lam, rho, m, declared parameters...)``.
    counts : bool
        Whether the policy reads the job counts ``n`` (JSQ, JIQ-JSQ, a score using ``n``): the
        simulator then tracks them and value iteration cannot evaluate it.
    vp : float64 array
        Packed sorted-simplex value (``lookup`` of a 1-D value, any ``m``; dummy otherwise).
    B : int64 array
        Its binomial table :func:`~symq.dispatch.simplex.binomial_table` ``(m, N)``.
    speeds : float64 array (m,) or None
        Server speeds; ``None`` for unit speeds.
    cum : float64 array
        Cumulative speed shares (random choices with speeds); empty for unit speeds.
    """

    name: str
    m: int
    rho: float
    lam: float
    code: int
    thresholds: np.ndarray = field(repr=False)
    lam_i: np.ndarray = field(repr=False)
    rho_i: np.ndarray = field(repr=False)
    v: np.ndarray = field(repr=False)
    delta: float = 1.0
    c_M: float = 0.0
    score: Any = field(default=None, repr=False)
    score_params: np.ndarray = field(default_factory=lambda: np.zeros(3), repr=False)
    counts: bool = False
    vp: np.ndarray = field(default_factory=lambda: np.zeros(1), repr=False)
    B: np.ndarray = field(default_factory=lambda: np.zeros((1, 1), dtype=np.int64), repr=False)
    speeds: np.ndarray | None = None
    cum: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    tail_slope: float = 0.0
    tail_cross: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    def arrays(self) -> tuple[Any, ...]:
        """``(thresholds, lam_i, rho_i, v, delta, c_M, vp, B, spd, cum, tail_slope,
        tail_cross)`` as passed
        to :func:`~symq.dispatch.policies.decisions.choose_server` (``spd`` empty for unit
        speeds)."""
        spd = np.empty(0) if self.speeds is None else self.speeds
        return (self.thresholds, self.lam_i, self.rho_i, self.v, self.delta, self.c_M, self.vp,
                self.B, spd, self.cum, float(self.tail_slope),
                np.ascontiguousarray(self.tail_cross, dtype=np.float64))

    @property
    def tracks_counts(self) -> bool:
        """Whether the simulator must keep the job counts (JSQ, JIQ-JSQ, a score reading ``n``)."""
        return self.code in (JSQ, JIQ_JSQ) or self.counts

    def decide(self, u: ArrayLike, x: ArrayLike, n: ArrayLike | None = None,
               rng: RngLike = None) -> np.ndarray:
        """Chosen servers (0-based) for backlog rows ``u`` (shape (k, m)) and sizes ``x`` (k,).

        ``n`` are the job counts (JSQ, JIQ-JSQ; default zeros).  For ``rr`` row ``k`` gets
        server ``k mod m``.
        """
        U = np.ascontiguousarray(np.atleast_2d(np.asarray(u, dtype=float)))
        X = np.ascontiguousarray(np.atleast_1d(np.asarray(x, dtype=float)))
        if U.shape != (X.size, self.m):
            raise InvalidParameter("u", f"<array of shape {U.shape}>",
                                   f"an array of shape ({X.size}, {self.m}) matching x")
        if np.any(U < 0) or np.any(X < 0) or not (np.all(np.isfinite(U))
                                                  and np.all(np.isfinite(X))):
            raise InvalidParameter("u", "<array>", "finite nonnegative backlogs and sizes")
        N = (np.zeros(U.shape, dtype=np.int64) if n is None
             else np.ascontiguousarray(np.asarray(n, dtype=np.int64).reshape(U.shape)))
        if self.code == SCORE:
            if self.speeds is None:
                return decide_scores(self.name, self.score, self.score_params, U, N, X)
            out = _speeds.decide_scores_speeds(self.score, self.score_params, U, N, self.speeds,
                                               X)
            if out.size and out.min() < 0:
                k = int(np.argmin(out))
                raise nan_score(self.name, f"u={U[k].tolist()}, n={N[k].tolist()}, "
                                f"x={float(X[k])!r}")
            return out
        seed = int(as_generator(rng).integers(0, 2**32 - 1))
        return decide_many(self.code, U, N, X, *self.arrays(), seed)

    def fpi_costs(self, u: ArrayLike, x: float) -> np.ndarray:
        """FPI costs :math:`a_i(u_i, x)` for one state (``fpi-*`` policies, unit speeds)."""
        if self.code != FPI:
            raise InvalidParameter("policy", self.name, "an fpi-* policy for fpi_costs")
        if self.speeds is not None:
            s = self.speeds
            return fpi_index_fn()(np.asarray(u, dtype=float) / s, float(x) / s, self.lam_i,
                                  self.rho_i)
        return fpi_index_fn()(np.asarray(u, dtype=float), float(x), self.lam_i, self.rho_i)
