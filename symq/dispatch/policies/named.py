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
``sita-e``    SITA with equal loads (:func:`~symq.dispatch.policies.exact.sita_e_thresholds`).
``sita-opt``  SITA with thresholds minimising the exact E[T]
              (:func:`~symq.dispatch.policies.exact.sita_opt_thresholds`).
``fpi-rnd``   first policy iteration from the equal random split: argmin of
              :math:`a_i(u_i, x) = u_i + x + \lambda_i x (2u_i + x) / (2(1-\rho_i))` with
              :math:`\lambda_i = \lambda/m`, :math:`\rho_i = \rho`; it equals LWL (Hyytiä 2013).
``fpi-sita``  the same cost with SITA's rates :math:`\lambda_i = \lambda P(\text{class } i)` and
              loads :math:`\rho_i = \lambda E[X; \text{class } i]` (``h=``/``thresholds=``,
              default SITA-E).
``score``     a user-defined index policy: the job goes to :math:`\arg\min_i s(u_i, n_i, x, i)`
              for a score ``s`` given as a formula or a numba function
              (:func:`~symq.dispatch.policies.policy.score_policy`,
              :meth:`~symq.dispatch.policies.policy.DispatchPolicy.from_score`).
``lookup``    a policy given by a post-assignment relative value ``v`` on the backlog grid of
              step ``delta``, tail curvature ``c_M`` and slope :math:`\beta` (``tail_slope``,
              default 0) beyond ``U = N delta``: :math:`v(\dots, U+s, \dots) = v(\dots, U,
              \dots) + c_M((U+s)^2 - U^2) + \beta s`; decision
              :math:`\arg\min_i \{u_i + x + v(u + x e_i)\}` (ties to the lowest index), the
              optimality operator of the Bellman equation (report, Part 1).  For ``m = 2``
              ``v`` is the full ``(N+1, N+1)`` table (bilinear interpolation); for any ``m``
              it may be the packed sorted-simplex value of identical servers (1-D, colex order,
              length :math:`\binom{N+m}{m}`, :mod:`symq.dispatch.simplex`; multilinear
              interpolation by :func:`~symq.dispatch.simplex.simplex_value`), or the capped
              simplex of a capped value iteration (``result`` with ``N2``), whose states
              beyond the cap are never chosen.
============  ==================================================================================

Per-server speeds
-----------------
``bind(..., speeds=s)`` gives server ``i`` speed :math:`s_i > 0`: it drains its backlog (work)
at rate :math:`s_i`, a job of size ``x`` sent to it leaves after :math:`T = (u_i + x)/s_i`, and
the load is :math:`\rho = \lambda E[X]/\sum_i s_i` (:mod:`symq.dispatch.policies.speeds`).  With
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

:func:`get_policy` returns a :class:`~symq.dispatch.policies.policy.DispatchPolicy` (name and
parameters); :meth:`~symq.dispatch.policies.policy.DispatchPolicy.bind` fixes ``m``, ``rho``, the
size law and the speeds and returns a :class:`~symq.dispatch.policies.bound.BoundPolicy`: an
integer code plus the parameter arrays that
:func:`~symq.dispatch.policies.decisions.choose_server` (a numba function, also used by the
simulator) needs.  Ties in ``lwl``, ``fpi-*``, ``lookup`` and score policies go to the lowest index.

Examples
--------
>>> from symq.laws import Exponential
>>> pol = get_policy("fpi-rnd").bind(2, 0.5, Exponential(1.0))
>>> pol.decide([[3.0, 1.0], [0.5, 2.0]], [1.0, 4.0]).tolist()
[1, 0]
>>> sita = get_policy("sita", h=1.5).bind(2, 0.5, Exponential(1.0))
>>> sita.decide([[0, 0], [0, 0]], [1.0, 2.0]).tolist()
[0, 1]
>>> get_policy("jiq").bind(3, 0.5, Exponential(1.0)).decide([[2.0, 0.0, 1.0]], [1.0]).tolist()
[1]
>>> lwl = get_policy("lwl").bind(2, 0.5, Exponential(1.0), speeds=[3, 1])
>>> lwl.decide([[2.0, 0.0]], [1.0]).tolist()
[0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from symq.core.errors import InvalidParameter, UnknownName
from symq.core.parameters import integer_value, real_value

from ..symbolic import tail_curvature_fn
from .checks import check_model
from .policy import DispatchPolicy

__all__ = ["POLICY_NAMES", "get_policy", "rnd_value_table"]

#: Policy names accepted by :func:`get_policy` (case-insensitive).
POLICY_NAMES = ("rnd", "rr", "jsq", "lwl", "jiq", "jiq-jsq", "sita", "sita-e", "sita-opt",
                "fpi-rnd", "fpi-sita", "lookup")

_ALLOWED = {
    "rnd": (), "rr": (), "jsq": (), "lwl": (), "jiq": (), "jiq-jsq": (), "sita-e": (),
    "sita-opt": (), "fpi-rnd": (),
    "sita": ("h", "thresholds"), "fpi-sita": ("h", "thresholds"),
    "lookup": ("v", "delta", "c_M", "tail_slope", "tail_cross", "result"),
}


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
        (>= 0, tail curvature), ``tail_slope`` (a finite real, default 0: the linear term
        :math:`\\beta s` of the tail beyond ``U``,
        :func:`~symq.dispatch.policies.decisions.lookup_value`), ``tail_cross`` (a 1-D array
        of finite reals, default none: the tail's cross term at the other backlogs' sums
        ``0, delta, 2 delta, ...``, :class:`~symq.dispatch.vi.boundary.Tail`); or ``result``: a
        value-iteration result such as :class:`symq.dispatch.vi.iteration.VIResult`: with
        ``m = 2`` (or no ``m``) its ``export_table() -> (v, delta, c_M)`` is read; otherwise its
        attributes ``m``, ``v`` (packed, colex order), ``N``, ``delta``, ``c_M`` and, if
        present, ``symmetric`` (which must be true); in both cases its ``tail_slope`` and
        ``tail_cross`` if it has them (else none).

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
            if getattr(result, "N2", None) is not None:      # a capped simplex
                extra["N2"] = integer_value("result.N2", result.N2, 0)
        params = {"v": v, "delta": delta, "c_M": c_M,
                  "tail_slope": getattr(result, "tail_slope", 0.0)}
        if getattr(result, "tail_cross", None) is not None:
            params["tail_cross"] = result.tail_cross
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
    slope = real_value("tail_slope", params.get("tail_slope", 0.0), "a finite real number")
    if params.get("tail_cross") is not None:
        cross_domain = "a 1-D array of finite reals (the tail's cross term)"
        try:
            cross = np.array(params["tail_cross"], dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameter("tail_cross", "<object>", cross_domain) from None
        if cross.ndim != 1 or not np.all(np.isfinite(cross)):
            raise InvalidParameter("tail_cross", f"<array of shape {cross.shape}>",
                                   cross_domain)
        cross.setflags(write=False)
        extra["tail_cross"] = cross
    v.setflags(write=False)
    return {"v": v, "delta": delta, "c_M": c_M, "tail_slope": slope, **extra}


def rnd_value_table(m: int, rho: float, sizes: Any, N: int,
                    delta: float) -> tuple[np.ndarray, float]:
    """The additive RND value ``v(u) = sum_i (lam/m) u_i^2 / (2(1-rho))`` on the grid (m = 2).

    Returns ``(v, c_M)`` with ``c_M = (lam/m)/(2(1-rho))``: a calibration table for ``lookup``
    whose one-step improvement is FPI-RND = LWL.
    """
    m, rho, sizes, lam = check_model(m, rho, sizes)
    if m != 2:
        raise InvalidParameter("m", m, "2 (two-dimensional table)")
    c = float(tail_curvature_fn().scalar(lam / m, rho))
    g = np.arange(int(N) + 1) * float(delta)
    return c * (g[:, None] ** 2 + g[None, :] ** 2), c
