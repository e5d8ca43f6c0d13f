r"""Dispatching policies for m parallel FCFS servers, by name, in a form numba kernels can run.

A job of size ``x`` arrives to backlogs ``u = (u_1, ..., u_m)`` (unfinished work per server) and
job counts ``n``; a policy picks the server.  Policies (Hyytiä & Righter, arXiv 2402.08142):

============  ==================================================================================
``rnd``       uniform random server.
``rr``        round-robin.
``jsq``       fewest jobs, ties uniformly at random.
``lwl``       least backlog (least work left); ties to the lowest index.
``jiq``       join-idle-queue: an idle server (backlog 0) if any, ties uniformly at random
              among the idle ones, else a uniformly random server (the report's remark that
              JIQ may capture the essential behaviour of larger systems).
``jiq-jsq``   an idle server if any (as ``jiq``), else JSQ (fewest jobs).  An idle server is
              one with the fewest (zero) jobs, so this is JSQ in law (also with speeds); it
              differs from ``jsq`` only in its random draws.
``sita``      size interval task assignment: thresholds ``h_1 < ... < h_{m-1}``, server ``j``
              (1-based) takes ``h_{j-1} <= x < h_j``; ``h=`` for ``m = 2`` or ``thresholds=``.
``sita-e``    SITA with equal loads (:func:`~symq.dispatch.exact.sita_e_thresholds`).
``sita-opt``  SITA with thresholds minimising the exact E[T]
              (:func:`~symq.dispatch.exact.sita_opt_thresholds`).
``fpi-rnd``   first policy iteration from the equal random split: argmin of
              :math:`a_i(u_i, x) = u_i + x + \lambda_i x (2u_i + x) / (2(1-\rho_i))` with
              :math:`\lambda_i = \lambda/m`, :math:`\rho_i = \rho`; it equals LWL (Hyytiä 2013).
``fpi-sita``  the same cost with SITA's rates :math:`\lambda_i = \lambda P(\text{class } i)` and
              loads :math:`\rho_i = \lambda E[X; \text{class } i]` (``h=``/``thresholds=``,
              default SITA-E).
``score``     a user-defined index policy: the job goes to :math:`\arg\min_i s(u_i, n_i, x, i)`
              for a score ``s`` given as a formula or a numba function
              (:func:`~symq.dispatch.score.score_policy`, :meth:`DispatchPolicy.from_score`).
``lookup``    a policy given by a post-assignment relative value ``v`` on the backlog grid of
              step ``delta``, tail curvature ``c_M`` beyond ``U = N delta``:
              :math:`v(\dots, U+s, \dots) = v(\dots, U, \dots) + c_M((U+s)^2 - U^2)`; decision
              :math:`\arg\min_i \{u_i + x + v(u + x e_i)\}` (ties to the lowest index), the
              optimality operator of the Bellman equation (report, Part 1).  For ``m = 2``
              ``v`` is the full ``(N+1, N+1)`` table (bilinear interpolation); for any ``m``
              it may be the packed sorted-simplex value of identical servers (1-D, colex order,
              length :math:`\binom{N+m}{m}`, :mod:`symq.dispatch.simplex`; multilinear
              interpolation by :func:`~symq.dispatch.simplex.simplex_value`).
============  ==================================================================================

Per-server speeds
-----------------
``bind(..., speeds=s)`` gives server ``i`` speed :math:`s_i > 0`: it drains its backlog (work)
at rate :math:`s_i`, a job of size ``x`` sent to it leaves after :math:`T = (u_i + x)/s_i`, and
the load is :math:`\rho = \lambda E[X]/\sum_i s_i` (:mod:`symq.dispatch.speeds`).  With
speeds the policies mean:

* ``rnd``: server ``i`` with probability :math:`s_i/\sum s` (equal loads :math:`\rho`; each
  server is an M/G/1 queue of rate :math:`\lambda s_i/\sum s` and service times
  :math:`x/s_i`: Pollaczek-Khinchine per server);
* ``lwl``: least finishing time :math:`\arg\min_i (u_i + x)/s_i` (ties lowest index);
* ``jsq``: fewest jobs, ties to the faster server, then uniformly at random;
* ``jiq``: the fastest idle server (ties at random), else as ``rnd`` (proportional to speed);
  ``jiq-jsq``: the fastest idle server, else as ``jsq``.  JIQ with unequal speeds can be
  unstable below :math:`\rho = 1` (a slow server gets the random fallback share whenever the
  fast ones are busy); it is not refused, as no closed stability condition is known;
* ``sita``: as before, with given thresholds (``sita-e`` and ``sita-opt`` need equal speeds:
  their thresholds are computed for identical servers); ``rr``: as before.  Both are refused
  (:class:`~symq.core.errors.StabilityError`) when a server's load
  :math:`\lambda E[X; \text{class } i]/s_i` (SITA) or :math:`\lambda E[X]/(m s_i)` (RR) is
  ``>= 1``;
* ``fpi-rnd`` / ``fpi-sita``: the FPI cost in time units, :math:`a_i(u_i/s_i, x/s_i)` with
  the base policy's per-server rates and loads (``fpi-rnd`` no longer equals LWL);
* ``lookup``: the costs in time units, :math:`\arg\min_i \{(u_i + x)/s_i + v(u + x e_i)\}`, with
  ``v`` indexed by the backlogs in work (a full ``m = 2`` table; the packed sorted simplex is
  symmetric and needs equal speeds);
* score policies see time units: ``u`` is :math:`u_i/s_i` (the time to drain server ``i``) and
  ``x`` is :math:`x/s_i` (the job's service time there), so the score ``u + x`` is LWL.

:func:`get_policy` returns a :class:`DispatchPolicy` (name and parameters);
:meth:`DispatchPolicy.bind` fixes ``m``, ``rho``, the size law and the speeds and returns a
:class:`BoundPolicy`: an integer code plus the parameter arrays that
:func:`~symq.dispatch.decisions.choose_server` (a numba function, also used by the simulator)
needs.  Ties in ``lwl``, ``fpi-*``, ``lookup`` and score policies go to the lowest index.

Examples
--------
>>> from symq.dispatch.sizes import exponential
>>> pol = get_policy("fpi-rnd").bind(2, 0.5, exponential(1.0))
>>> pol.decide([[3.0, 1.0], [0.5, 2.0]], [1.0, 4.0]).tolist()
[1, 0]
>>> get_policy("sita", h=1.5).bind(2, 0.5, exponential(1.0)).decide([[0, 0], [0, 0]], [1.0, 2.0]).tolist()
[0, 1]
>>> get_policy("jiq").bind(3, 0.5, exponential(1.0)).decide([[2.0, 0.0, 1.0]], [1.0]).tolist()
[1]
>>> get_policy("lwl").bind(2, 0.5, exponential(1.0), speeds=[3, 1]).decide([[2.0, 0.0]], [1.0]).tolist()
[0]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import math

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, UnknownName
from symq.core.parameters import integer_value, real_value
from symq.core.randomness import RngLike, as_generator

from . import exact as _exact
from . import speeds as _speeds
# the decision functions live in .decisions; their names are re-exported here
from . import decisions as _decisions
from .decisions import (FPI, JIQ, JIQ_JSQ, JSQ, LOOKUP, LOOKUP_SIMPLEX, LWL, RND, RR, SCORE,
                        SITA, choose_server, decide_many, lookup_value)
from .simplex import binomial_table, n_sorted_states
from .sizes import as_size_law
from .symbolic import fpi_index_fn, tail_curvature_fn

__all__ = ["POLICY_NAMES", "DispatchPolicy", "BoundPolicy", "get_policy", "choose_server",
           "lookup_value", "rnd_value_table", "RND", "RR", "JSQ", "LWL", "SITA", "FPI", "LOOKUP",
           "SCORE", "JIQ", "JIQ_JSQ", "LOOKUP_SIMPLEX"]

#: Policy names accepted by :func:`get_policy` (case-insensitive).
POLICY_NAMES = ("rnd", "rr", "jsq", "lwl", "jiq", "jiq-jsq", "sita", "sita-e", "sita-opt",
                "fpi-rnd", "fpi-sita", "lookup")

#: The kernels' FPI index (compared with its compiled symbolic form by the tests).
_fpi_cost = _decisions._fpi_cost

_ALLOWED = {
    "rnd": (), "rr": (), "jsq": (), "lwl": (), "jiq": (), "jiq-jsq": (), "sita-e": (),
    "sita-opt": (), "fpi-rnd": (),
    "sita": ("h", "thresholds"), "fpi-sita": ("h", "thresholds"),
    "lookup": ("v", "delta", "c_M", "result"),
}


# --------------------------------------------------------------------------------------------
# policy objects
# --------------------------------------------------------------------------------------------


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
        Integer code for :func:`~symq.dispatch.decisions.choose_server`.
    thresholds : float64 array (m-1,) or empty
        SITA thresholds (``sita*``; for ``fpi-sita`` the base SITA thresholds).
    lam_i, rho_i : float64 arrays (m,)
        Per-server rates and loads of the base static policy (``fpi-*``).
    v : float64 array (N+1, N+1)
        Value table (``lookup`` with ``m = 2``; a dummy 2x2 array otherwise).
    delta, c_M : float
        Grid step and tail curvature (``lookup``).
    score : numba function or None
        The compiled score ``s(u, n, x, i, p)`` of a score policy
        (:data:`~symq.dispatch.score.SCORE_SIGNATURE`).
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

    def arrays(self) -> tuple[Any, ...]:
        """``(thresholds, lam_i, rho_i, v, delta, c_M, vp, B, spd, cum)`` as passed to
        :func:`~symq.dispatch.decisions.choose_server` (``spd`` empty for unit speeds)."""
        spd = np.empty(0) if self.speeds is None else self.speeds
        return (self.thresholds, self.lam_i, self.rho_i, self.v, self.delta, self.c_M, self.vp,
                self.B, spd, self.cum)

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
        if np.any(U < 0) or np.any(X < 0) or not (np.all(np.isfinite(U)) and np.all(np.isfinite(X))):
            raise InvalidParameter("u", "<array>", "finite nonnegative backlogs and sizes")
        N = (np.zeros(U.shape, dtype=np.int64) if n is None
             else np.ascontiguousarray(np.asarray(n, dtype=np.int64).reshape(U.shape)))
        if self.code == SCORE:
            if self.speeds is None:
                from .score import decide_scores
                return decide_scores(self, U, N, X)
            from .score import nan_score
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


@dataclass(frozen=True)
class DispatchPolicy:
    """A dispatching policy by name with its parameters; :meth:`bind` makes it runnable."""

    name: str
    params: dict = field(default_factory=dict)

    def _repr_markdown_(self) -> str:  # Jupyter
        from symq.core.display import markdown

        return markdown(f"**{type(self).__name__}** {self.name}: a dispatching policy "
                        "(`.bind(m, rho, sizes)` makes it runnable)", list(self.params.items()))

    @classmethod
    def from_score(cls, name: str, score: Any, parameters: Any = (), *,
                   uses_counts: bool | None = None, description: str = "") -> DispatchPolicy:
        """A user-defined index policy: the job goes to the server of least ``score``.

        Shorthand for :func:`symq.dispatch.score.score_policy` (see there for ``score``,
        ``parameters`` and ``uses_counts``).

        Examples
        --------
        >>> from symq.dispatch.sizes import exponential
        >>> pol = DispatchPolicy.from_score("lwl-ish", "u + beta*x", {"beta": 0.0})
        >>> pol.bind(2, 0.5, exponential()).decide([[3.0, 1.0]], [1.0]).tolist()
        [1]
        """
        from .score import score_policy
        return score_policy(name, score, parameters, uses_counts=uses_counts,
                            description=description)

    def bind(self, m: int, rho: float, sizes: Any, speeds: ArrayLike | None = None
             ) -> BoundPolicy:
        """Fix the number of servers, the load, the size law and the server speeds.

        ``speeds`` (``m`` positive reals, default all 1) change what the policies mean as the
        module docstring states; the load is then :math:`\\rho = \\lambda E[X]/\\sum_i s_i`.

        Raises
        ------
        InvalidParameter
            Bad ``m``, thresholds, value table, speeds; a two-dimensional ``lookup`` table
            with ``m != 2``; unequal speeds with ``sita-e``, ``sita-opt``, ``fpi-sita``
            without thresholds or a packed (symmetric) ``lookup`` value.
        StabilityError
            ``rho >= 1``, or a static policy (SITA, RR with speeds, the base SITA of
            ``fpi-sita``) that overloads a server.
        """
        m, rho, sizes, lam = _exact._check_common(m, rho, sizes)
        spd = _speeds.check_speeds(speeds, m)
        key = self.name
        empty = np.empty(0)
        dummy_v = np.zeros((2, 2))
        if spd is None:
            rates = np.full(m, lam / m)
        else:
            lam = _speeds.arrival_rate(rho, sizes.mean, spd, m)
            rates = lam * spd / spd.sum()
        loads = np.full(m, rho)
        cum = _speeds.cumulative_shares(spd)

        def make(code: int, thr: np.ndarray = empty, lam_i: np.ndarray = rates,
                 rho_i: np.ndarray = loads, v: np.ndarray = dummy_v, delta: float = 1.0,
                 c_M: float = 0.0, **more: Any) -> BoundPolicy:
            return BoundPolicy(key, m, rho, lam, code, np.ascontiguousarray(thr, dtype=float),
                               np.ascontiguousarray(lam_i, dtype=float),
                               np.ascontiguousarray(rho_i, dtype=float),
                               np.ascontiguousarray(v, dtype=float), float(delta), float(c_M),
                               speeds=spd, cum=cum, **more)

        if key in ("rnd", "rr", "jsq", "lwl", "jiq", "jiq-jsq", "fpi-rnd"):
            if key == "rr" and spd is not None:
                _speeds.check_stable(key, _speeds.static_loads(np.full(m, 1.0 / m), rho, spd, m),
                                     rho, "round-robin (1/m of the jobs to each server)")
            code = {"rnd": RND, "rr": RR, "jsq": JSQ, "lwl": LWL, "jiq": JIQ, "jiq-jsq": JIQ_JSQ,
                    "fpi-rnd": FPI}[key]
            return make(code, counts=key == "jiq-jsq")
        if key in ("sita", "sita-e", "sita-opt", "fpi-sita"):
            return self._bind_sita(m, rho, sizes, spd, make)
        return self._bind_lookup(m, spd, make)

    def _bind_sita(self, m: int, rho: float, sizes: Any, spd: np.ndarray | None,
                   make: Any) -> BoundPolicy:
        key, p = self.name, self.params
        given = p.get("thresholds", p.get("h"))
        if key in ("sita-e", "sita-opt") or (key == "fpi-sita" and given is None):
            if not _speeds.equal_speeds(spd):
                raise InvalidParameter("speeds", spd.tolist(), "equal speeds for policy "
                                       f"{key}" + (" without thresholds" if key == "fpi-sita"
                                                   else ""),
                                       "its thresholds are computed for identical servers; "
                                       "give thresholds (policy sita or fpi-sita)")
        if key == "sita-opt":
            thr = _exact.sita_opt_thresholds(m, rho, sizes)
        elif given is None:
            if key == "sita":
                raise InvalidParameter("thresholds", None,
                                       f"{m - 1} increasing SITA thresholds (h= for m=2)")
            thr = _exact.sita_e_thresholds(m, rho, sizes)
        else:
            thr = _exact._check_thresholds(m, given)
        _, lam_j, rho_j, _ = _exact.sita_class_stats(m, rho, sizes, thr)
        if spd is not None:   # class rates and work rates scale with lam = rho sum(s) / E[X]
            f = float(spd.sum()) / m
            lam_j, rho_j = lam_j * f, rho_j * f / spd
        what = (f"the base SITA with thresholds={np.asarray(thr).tolist()}" if key == "fpi-sita"
                else f"SITA with thresholds={np.asarray(thr).tolist()}")
        _speeds.check_stable(key, rho_j, rho, what)
        if key != "fpi-sita":
            return make(SITA, thr)
        return make(FPI, thr, lam_j, rho_j)

    def _bind_lookup(self, m: int, spd: np.ndarray | None, make: Any) -> BoundPolicy:
        p = self.params
        v = np.asarray(p["v"], dtype=float)
        if v.ndim == 2:
            if m != 2:
                raise InvalidParameter("m", m, "2 for the lookup policy with a two-dimensional "
                                       "table (a packed sorted-simplex value serves any m)")
            return make(LOOKUP, v=v, delta=p["delta"], c_M=p["c_M"])
        if p.get("m", m) != m:
            raise InvalidParameter("m", m, f"{p['m']}, the number of servers of the value "
                                   "the lookup policy was built from")
        N = p.get("N")
        if N is None:
            N = _packed_steps(v.size, m)
        if N < 1 or n_sorted_states(m, N) != v.size:
            raise InvalidParameter("v", f"<array of length {v.size}>", "a packed "
                                   f"sorted-simplex value of length C(N+m, m) for m={m}, N >= 1"
                                   + (f" (N={N} gives {n_sorted_states(m, N)})"
                                      if p.get("N") is not None else ""))
        if not _speeds.equal_speeds(spd):
            raise InvalidParameter("speeds", spd.tolist(), "equal speeds for a lookup policy of a "
                                   "packed sorted-simplex value", "the value of identical "
                                   "servers is symmetric; unequal speeds need a full table")
        return make(LOOKUP_SIMPLEX, delta=p["delta"], c_M=p["c_M"], vp=v,
                    B=binomial_table(m, N))


def _packed_steps(length: int, m: int) -> int:
    """The ``N`` with ``C(N+m, m) = length`` (or the first ``N`` beyond it)."""
    N = max(int((math.factorial(m) * length) ** (1.0 / m)) - m, 1)
    while N > 1 and n_sorted_states(m, N) > length:
        N -= 1
    while n_sorted_states(m, N) < length:
        N += 1
    return N


def bind_policy(policy: DispatchPolicy, m: int, rho: float, sizes: Any,
                speeds: ArrayLike | None = None) -> BoundPolicy:
    """``policy.bind(m, rho, sizes, speeds=speeds)``, also for a policy whose ``bind`` takes no
    speeds (a score policy): its arrival rate ``lam`` (the first score parameter) is then the
    one of the speeds, and the kernels give its score time units."""
    if type(policy).bind is DispatchPolicy.bind:
        return policy.bind(m, rho, sizes, speeds=speeds)
    bound = policy.bind(m, rho, sizes)
    spd = _speeds.check_speeds(speeds, bound.m)
    if spd is None:
        return bound
    if bound.code != SCORE:
        raise InvalidParameter("speeds", spd.tolist(), "omitted for this policy object",
                               f"{type(policy).__name__}.bind takes no speeds")
    lam = _speeds.arrival_rate(bound.rho, as_size_law(sizes).mean, spd, bound.m)
    p = np.array(bound.score_params, dtype=float)
    p[0] = lam
    return dataclasses.replace(bound, lam=lam, score_params=p, lam_i=lam * spd / spd.sum(),
                               speeds=spd, cum=_speeds.cumulative_shares(spd))


def get_policy(name: str, **params: Any) -> DispatchPolicy:
    """A dispatching policy by name (case-insensitive), see :data:`POLICY_NAMES`.

    Parameters
    ----------
    name : str
        One of ``rnd, rr, jsq, lwl, jiq, jiq-jsq, sita, sita-e, sita-opt, fpi-rnd, fpi-sita,
        lookup``.
    **params
        ``sita``/``fpi-sita``: ``h`` (``m = 2``) or ``thresholds``.  ``lookup``: ``v`` (a square
        array ``(N+1, N+1)``, ``N >= 1``, for ``m = 2``; or a 1-D packed sorted-simplex value
        of length :math:`\\binom{N+m}{m}` in colex order, any ``m``), ``delta`` (> 0), ``c_M``
        (>= 0, tail curvature); or ``result``: a value-iteration result such as
        :class:`symq.dispatch.iteration.VIResult`: with ``m = 2`` (or no ``m``) its
        ``export_table() -> (v, delta, c_M)`` is read; otherwise its attributes ``m``, ``v``
        (packed, colex order), ``N``, ``delta``, ``c_M`` and, if present, ``symmetric``
        (which must be true).

    Raises
    ------
    UnknownName
        For an unknown policy, listing the choices.
    InvalidParameter
        For a parameter the policy does not take or a bad value.

    Examples
    --------
    >>> get_policy("LWL")
    DispatchPolicy(name='lwl', params={})
    """
    key = str(name).strip().lower()
    if key not in _ALLOWED:
        raise UnknownName("dispatching policy", str(name), POLICY_NAMES)
    for k in params:
        if k not in _ALLOWED[key]:
            allowed = ", ".join(_ALLOWED[key]) or "no parameters"
            raise InvalidParameter(k, params[k], f"not given: policy {key!r} takes {allowed}")
    if key in ("sita", "fpi-sita") and "h" in params and "thresholds" in params:
        raise InvalidParameter("h", params["h"], "omitted when thresholds= is given")
    if key == "lookup":
        params = _lookup_params(params)
    return DispatchPolicy(key, dict(params))


_RESULT_DOMAIN = ("a value-iteration result given alone (without v, delta, c_M): with "
                  "export_table() for m = 2, or with m, v (packed), N, delta, c_M for any m")


def _lookup_params(params: dict[str, Any]) -> dict[str, Any]:
    """The checked parameters of ``lookup`` (a value table or a packed value; from a result)."""
    extra: dict[str, Any] = {}
    if "result" in params:
        result = params["result"]
        rm = getattr(result, "m", None)
        if len(params) > 1:
            raise InvalidParameter("result", result, _RESULT_DOMAIN)
        if rm is None or rm == 2:
            if not hasattr(result, "export_table"):
                raise InvalidParameter("result", result, _RESULT_DOMAIN)
            v, delta, c_M = result.export_table()
        else:
            if not all(hasattr(result, a) for a in ("v", "N", "delta", "c_M")):
                raise InvalidParameter("result", result, _RESULT_DOMAIN)
            if getattr(result, "symmetric", True) is not True:
                raise InvalidParameter("result", result, "a value on the sorted states "
                                       "(symmetric=True) for m != 2")
            v, delta, c_M = result.v, result.delta, result.c_M
            extra = {"m": integer_value("result.m", rm, 1),
                     "N": integer_value("result.N", result.N, 1)}
        params = {"v": v, "delta": delta, "c_M": c_M}
    for k in ("v", "delta", "c_M"):
        if k not in params:
            raise InvalidParameter(k, None, "given for the lookup policy (v, delta, c_M)")
    domain = ("a square array of reals (N+1, N+1) with N >= 1, or a packed sorted-simplex value "
              "(1-D)")
    try:
        v = np.array(params["v"], dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter("v", "<object>", domain) from None
    if not ((v.ndim == 2 and v.shape[0] == v.shape[1] and v.shape[0] >= 2)
            or (v.ndim == 1 and v.size >= 2)):
        raise InvalidParameter("v", f"<array of shape {v.shape}>", domain)
    if not np.all(np.isfinite(v)):
        raise InvalidParameter("v", "<array>", "an array of finite values")
    delta = real_value("delta", params["delta"], "a finite real number > 0", lambda d: d > 0)
    c_M = real_value("c_M", params["c_M"], "a finite real number >= 0", lambda c: c >= 0)
    v.setflags(write=False)
    return {"v": v, "delta": delta, "c_M": c_M, **extra}


def rnd_value_table(m: int, rho: float, sizes: Any, N: int, delta: float) -> tuple[np.ndarray, float]:
    """The additive RND value ``v(u) = sum_i (lam/m) u_i^2 / (2(1-rho))`` on the grid (m = 2).

    Returns ``(v, c_M)`` with ``c_M = (lam/m)/(2(1-rho))``: a calibration table for ``lookup``
    whose one-step improvement is FPI-RND = LWL.
    """
    m, rho, sizes, lam = _exact._check_common(m, rho, sizes)
    if m != 2:
        raise InvalidParameter("m", m, "2 (two-dimensional table)")
    c = float(tail_curvature_fn().scalar(lam / m, rho))
    g = np.arange(int(N) + 1) * float(delta)
    return c * (g[:, None] ** 2 + g[None, :] ** 2), c
