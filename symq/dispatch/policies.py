r"""Dispatching policies for m parallel FCFS servers, by name, in a form numba kernels can run.

A job of size ``x`` arrives to backlogs ``u = (u_1, ..., u_m)`` (unfinished work per server) and
job counts ``n``; a policy picks the server.  Policies (Hyytiä & Righter, arXiv 2402.08142):

``rnd``       uniform random server.
``rr``        round-robin.
``jsq``       fewest jobs, ties uniformly at random.
``lwl``       least backlog (least work left); ties to the lowest index.
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
``lookup``    a policy given by a post-assignment value table ``v`` of shape ``(N+1, N+1)`` on
              the backlog grid of step ``delta`` (``m = 2``), tail curvature ``c_M`` beyond
              ``U = N delta``: :math:`v(U+s, y) = v(U, y) + c_M((U+s)^2 - U^2)` (and symmetric);
              decision :math:`\arg\min_i \{u_i + x + v(u + x e_i)\}` with bilinear interpolation.

:func:`get_policy` returns a :class:`DispatchPolicy` (name and parameters);
:meth:`DispatchPolicy.bind` fixes ``m``, ``rho`` and the size law and returns a
:class:`BoundPolicy`: an integer code plus the parameter arrays that :func:`choose_server` (a
numba function, also used by the simulator) needs.  Ties in ``lwl``, ``fpi-*``, ``lookup`` and
score policies go to the lowest index.

Examples
--------
>>> from symq.dispatch.sizes import exponential
>>> pol = get_policy("fpi-rnd").bind(2, 0.5, exponential(1.0))
>>> pol.decide([[3.0, 1.0], [0.5, 2.0]], [1.0, 4.0]).tolist()
[1, 0]
>>> get_policy("sita", h=1.5).bind(2, 0.5, exponential(1.0)).decide([[0, 0], [0, 0]], [1.0, 2.0]).tolist()
[0, 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import InvalidParameter, StabilityError, UnknownName
from symq.core.parameters import real_value
from symq.core.randomness import RngLike, as_generator

from . import exact as _exact
from .symbolic import fpi_index_fn, tail_curvature_fn

__all__ = ["POLICY_NAMES", "DispatchPolicy", "BoundPolicy", "get_policy", "choose_server",
           "lookup_value", "rnd_value_table"]

#: Policy names accepted by :func:`get_policy` (case-insensitive).
POLICY_NAMES = ("rnd", "rr", "jsq", "lwl", "sita", "sita-e", "sita-opt", "fpi-rnd", "fpi-sita",
                "lookup")

# integer codes understood by choose_server (SCORE: the argmin of a compiled score, run by the
# callers through symq.dispatch.score)
RND, RR, JSQ, LWL, SITA, FPI, LOOKUP, SCORE = range(8)

_ALLOWED = {
    "rnd": (), "rr": (), "jsq": (), "lwl": (), "sita-e": (), "sita-opt": (), "fpi-rnd": (),
    "sita": ("h", "thresholds"), "fpi-sita": ("h", "thresholds"),
    "lookup": ("v", "delta", "c_M", "result"),
}


# --------------------------------------------------------------------------------------------
# numba decision functions
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def lookup_value(v: np.ndarray, delta: float, c_M: float, a: float, b: float) -> float:
    """Bilinear interpolation of the table ``v`` at backlogs ``(a, b)``, quadratic tail beyond U.

    ``v[i, j]`` is the value at ``(i delta, j delta)``, ``U = (v.shape[0] - 1) delta``; beyond
    ``U`` each coordinate adds ``c_M ((U + s)^2 - U^2)``.
    """
    n = v.shape[0] - 1
    U = n * delta
    extra = 0.0
    if a > U:
        extra += c_M * (a * a - U * U)
        a = U
    if b > U:
        extra += c_M * (b * b - U * U)
        b = U
    fa = a / delta
    ia = int(fa)
    if ia >= n:
        ia = n - 1
    fa -= ia
    fb = b / delta
    ib = int(fb)
    if ib >= n:
        ib = n - 1
    fb -= ib
    return (extra + (1.0 - fa) * ((1.0 - fb) * v[ia, ib] + fb * v[ia, ib + 1])
            + fa * ((1.0 - fb) * v[ia + 1, ib] + fb * v[ia + 1, ib + 1]))


@numba.njit(cache=True)
def _fpi_cost(u: float, x: float, lam_i: float, rho_i: float) -> float:
    """The FPI index :func:`symq.dispatch.symbolic.fpi_index` typed for numba kernels.

    A fast path of the compiled symbolic form :func:`symq.dispatch.symbolic.fpi_index_fn`:
    :func:`choose_server` and the simulator's kernel are cached machine code (``cache=True``),
    which a function generated at run time (the numba backend of :func:`symq.core.compile`)
    would not be; tests/dispatch/test_compiled_forms.py checks that this form equals the
    compiled symbolic index (numpy and numba backends) at random points.
    """
    return u + x + lam_i * x * (2.0 * u + x) / (2.0 * (1.0 - rho_i))


@numba.njit(cache=True)
def choose_server(code: int, u: np.ndarray, cnt: np.ndarray, x: float, rr_next: int,
                  thr: np.ndarray, lam_i: np.ndarray, rho_i: np.ndarray, v: np.ndarray,
                  delta: float, c_M: float) -> int:
    """Server index (0-based) chosen by policy ``code`` for a job of size ``x``.

    ``u`` are the backlogs, ``cnt`` the job counts (read by JSQ only), ``rr_next`` the
    round-robin pointer (the caller advances it).  RND and JSQ ties draw from numba's random
    stream.
    """
    m = u.shape[0]
    if code == RND:
        return np.random.randint(0, m)
    if code == RR:
        return rr_next % m
    if code == JSQ:
        best = 0
        ties = 1
        for i in range(1, m):
            if cnt[i] < cnt[best]:
                best = i
                ties = 1
            elif cnt[i] == cnt[best]:
                ties += 1
                if np.random.random() * ties < 1.0:
                    best = i
        return best
    if code == LWL:
        best = 0
        for i in range(1, m):
            if u[i] < u[best]:
                best = i
        return best
    if code == SITA:
        j = 0
        while j < m - 1 and x >= thr[j]:
            j += 1
        return j
    if code == FPI:
        best = 0
        best_cost = np.inf
        for i in range(m):
            c = _fpi_cost(u[i], x, lam_i[i], rho_i[i])
            if c < best_cost:
                best_cost = c
                best = i
        return best
    # LOOKUP, m = 2
    c0 = u[0] + x + lookup_value(v, delta, c_M, u[0] + x, u[1])
    c1 = u[1] + x + lookup_value(v, delta, c_M, u[0], u[1] + x)
    return 0 if c0 <= c1 else 1


@numba.njit(cache=True)
def _decide_many(code: int, U: np.ndarray, N: np.ndarray, X: np.ndarray, thr: np.ndarray,
                 lam_i: np.ndarray, rho_i: np.ndarray, v: np.ndarray, delta: float,
                 c_M: float, seed: int) -> np.ndarray:
    np.random.seed(seed)
    out = np.empty(X.shape[0], dtype=np.int64)
    for k in range(X.shape[0]):
        out[k] = choose_server(code, U[k], N[k], X[k], k, thr, lam_i, rho_i, v, delta, c_M)
    return out


# --------------------------------------------------------------------------------------------
# policy objects
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoundPolicy:
    """A policy with ``m``, ``rho`` and the size law fixed: what the simulator runs.

    Attributes
    ----------
    name : str
    m : int
    rho, lam : float
        Load per server and total arrival rate ``rho m / E[X]``.
    code : int
        Integer code for :func:`choose_server`.
    thresholds : float64 array (m-1,) or empty
        SITA thresholds (``sita*``; for ``fpi-sita`` the base SITA thresholds).
    lam_i, rho_i : float64 arrays (m,)
        Per-server rates and loads of the base static policy (``fpi-*``).
    v : float64 array (N+1, N+1)
        Value table (``lookup``; a dummy 2x2 array otherwise).
    delta, c_M : float
        Grid step and tail curvature (``lookup``).
    score : numba function or None
        The compiled score ``s(u, n, x, i, p)`` of a score policy
        (:data:`~symq.dispatch.score.SCORE_SIGNATURE`).
    score_params : float64 array
        Its ``p``: ``(lam, rho, m, declared parameters...)``.
    counts : bool
        Whether the policy reads the job counts ``n`` (JSQ, a score using ``n``): the
        simulator then tracks them and value iteration cannot evaluate it.
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

    def arrays(self) -> tuple[Any, ...]:
        """``(thresholds, lam_i, rho_i, v, delta, c_M)`` as passed to :func:`choose_server`."""
        return self.thresholds, self.lam_i, self.rho_i, self.v, self.delta, self.c_M

    @property
    def tracks_counts(self) -> bool:
        """Whether the simulator must keep the job counts (JSQ, a score that reads ``n``)."""
        return self.code == JSQ or self.counts

    def decide(self, u: ArrayLike, x: ArrayLike, n: ArrayLike | None = None,
               rng: RngLike = None) -> np.ndarray:
        """Chosen servers (0-based) for backlog rows ``u`` (shape (k, m)) and sizes ``x`` (k,).

        ``n`` are the job counts (JSQ; default zeros).  For ``rr`` row ``k`` gets server
        ``k mod m``.
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
            from .score import decide_scores
            return decide_scores(self, U, N, X)
        seed = int(as_generator(rng).integers(0, 2**32 - 1))
        return _decide_many(self.code, U, N, X, *self.arrays(), seed)

    def fpi_costs(self, u: ArrayLike, x: float) -> np.ndarray:
        """FPI costs :math:`a_i(u_i, x)` for one state (``fpi-*`` policies only)."""
        if self.code != FPI:
            raise InvalidParameter("policy", self.name, "an fpi-* policy for fpi_costs")
        return fpi_index_fn()(np.asarray(u, dtype=float), float(x), self.lam_i, self.rho_i)


@dataclass(frozen=True)
class DispatchPolicy:
    """A dispatching policy by name with its parameters; :meth:`bind` makes it runnable."""

    name: str
    params: dict = field(default_factory=dict)

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

    def bind(self, m: int, rho: float, sizes: Any) -> BoundPolicy:
        """Fix the number of servers, the load per server and the size law.

        Raises
        ------
        InvalidParameter
            Bad ``m``, thresholds, value table; ``lookup`` with ``m != 2``.
        StabilityError
            ``rho >= 1``, or an ``fpi-sita`` base SITA that overloads a server.
        """
        m, rho, sizes, lam = _exact._check_common(m, rho, sizes)
        key = self.name
        p = self.params
        empty = np.empty(0)
        dummy_v = np.zeros((2, 2))
        ones = np.full(m, lam / m)
        loads = np.full(m, rho)

        def make(code: int, thr: np.ndarray = empty, lam_i: np.ndarray = ones,
                 rho_i: np.ndarray = loads, v: np.ndarray = dummy_v, delta: float = 1.0,
                 c_M: float = 0.0) -> BoundPolicy:
            return BoundPolicy(key, m, rho, lam, code, np.ascontiguousarray(thr, dtype=float),
                               np.ascontiguousarray(lam_i, dtype=float),
                               np.ascontiguousarray(rho_i, dtype=float),
                               np.ascontiguousarray(v, dtype=float), float(delta), float(c_M))

        if key in ("rnd", "rr", "jsq", "lwl", "fpi-rnd"):
            code = {"rnd": RND, "rr": RR, "jsq": JSQ, "lwl": LWL, "fpi-rnd": FPI}[key]
            return make(code)
        if key in ("sita", "sita-e", "sita-opt", "fpi-sita"):
            if key == "sita-e":
                thr = _exact.sita_e_thresholds(m, rho, sizes)
            elif key == "sita-opt":
                thr = _exact.sita_opt_thresholds(m, rho, sizes)
            else:
                given = p.get("thresholds", p.get("h"))
                if given is None:
                    if key == "sita":
                        raise InvalidParameter("thresholds", None,
                                               f"{m - 1} increasing SITA thresholds (h= for m=2)")
                    thr = _exact.sita_e_thresholds(m, rho, sizes)
                else:
                    thr = _exact._check_thresholds(m, given)
            if key != "fpi-sita":
                return make(SITA, thr)
            _, lam_j, rho_j, _ = _exact.sita_class_stats(m, rho, sizes, thr)
            if np.any(rho_j >= 1.0):
                raise StabilityError(
                    f"fpi-sita: the base SITA with thresholds={np.asarray(thr).tolist()} overloads "
                    f"a server at rho={rho!r} (loads {np.round(rho_j, 6).tolist()} must be < 1)")
            return make(FPI, thr, lam_j, rho_j)
        # lookup
        if m != 2:
            raise InvalidParameter("m", m, "2 for the lookup policy (a two-dimensional table)")
        v = np.asarray(p["v"], dtype=float)
        return make(LOOKUP, v=v, delta=p["delta"], c_M=p["c_M"])


def get_policy(name: str, **params: Any) -> DispatchPolicy:
    """A dispatching policy by name (case-insensitive), see :data:`POLICY_NAMES`.

    Parameters
    ----------
    name : str
        One of ``rnd, rr, jsq, lwl, sita, sita-e, sita-opt, fpi-rnd, fpi-sita, lookup``.
    **params
        ``sita``/``fpi-sita``: ``h`` (``m = 2``) or ``thresholds``.  ``lookup``: ``v`` (square
        array ``(N+1, N+1)``, ``N >= 1``), ``delta`` (> 0), ``c_M`` (>= 0, tail curvature); or
        ``result``: an object with ``export_table() -> (v, delta, c_M)`` such as
        :class:`symq.dispatch.iteration.VIResult` with ``m = 2``.

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
    if key == "lookup" and "result" in params:
        result = params["result"]
        if len(params) > 1 or not hasattr(result, "export_table"):
            raise InvalidParameter("result", result, "a value-iteration result with "
                                   "export_table() (m = 2), given alone (without v, delta, c_M)")
        v, delta, c_M = result.export_table()
        params = {"v": v, "delta": delta, "c_M": c_M}
    if key == "lookup":
        for k in ("v", "delta", "c_M"):
            if k not in params:
                raise InvalidParameter(k, None, "given for the lookup policy (v, delta, c_M)")
        try:
            v = np.array(params["v"], dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameter("v", "<object>", "a square array of reals (N+1, N+1)") from None
        if v.ndim != 2 or v.shape[0] != v.shape[1] or v.shape[0] < 2:
            raise InvalidParameter("v", f"<array of shape {v.shape}>",
                                   "a square array of shape (N+1, N+1) with N >= 1")
        if not np.all(np.isfinite(v)):
            raise InvalidParameter("v", "<array>", "an array of finite values")
        delta = real_value("delta", params["delta"], "a finite real number > 0", lambda d: d > 0)
        c_M = real_value("c_M", params["c_M"], "a finite real number >= 0", lambda c: c >= 0)
        v.setflags(write=False)
        params = {"v": v, "delta": delta, "c_M": c_M}
    return DispatchPolicy(key, dict(params))


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
