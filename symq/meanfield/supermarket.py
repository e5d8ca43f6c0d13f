"""The supermarket model JSQ(d) with exponential service, on the population-process engine.

``N`` unit-rate exponential servers; jobs arrive at rate ``N lam`` and join the shortest of
``d`` queues sampled uniformly (with replacement).  ``u_k`` is the fraction of servers with at
least ``k`` jobs (``u_0 = 1``); the mean-field ODE is (Vvedenskaya, Dobrushin, Karpelevich,
"Queueing system with selection of the shortest of two queues: an asymptotic approach",
Problems Inform. Transmission 32(1), 1996; Mitzenmacher, "The power of two choices in
randomized load balancing", IEEE TPDS 12(10), 2001)::

    du_k/dt = lam (u_{k-1}^d - u_k^d) - (u_k - u_{k+1}),   k >= 1,

with fixed point ``u_k = lam^((d^k - 1)/(d - 1))`` (``d >= 2``) and ``u_k = lam^k`` (``d = 1``,
the M/M/1 queue).  The refined ``1/N`` term is Gast & Van Houdt, SIGMETRICS 2018, Theorem 1.

Examples
--------
>>> r = solve_supermarket(2, 0.9)
>>> round(r["ET"], 6)
2.614057
>>> solve_supermarket(1, 0.5)["EQ"]  # M/M/1: lam / (1 - lam)
1.0
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from symq.core.derivation import Derivation
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.result import Exactness, Result

from .population import PopulationProcess

__all__ = [
    "LAM", "check_parameters", "truncation_level", "closed_form_tail", "jsq_process",
    "closed_form_symbolic", "verify_closed_form", "derivation", "heavy_traffic_ET",
    "solve_supermarket", "refined_jsq",
]

#: the per-server arrival rate as a sympy symbol (a parameter of :func:`jsq_process`).
LAM = sp.Symbol("lam", positive=True)
#: smallest tail probability reported in ``tail``.
TAIL = 1e-16
#: largest truncation for the fixed point (d = 1 near lam = 1 needs thousands of levels).
CAP = 5000
#: largest truncation for the refined term (a dense Lyapunov solve, cost K^3).
CAP_REFINED = 400


def check_parameters(d: Any, lam: Any, N: Any = None) -> tuple[int, float]:  # noqa: N803
    """Validate ``d``, ``lam`` (and ``N``); return ``(d, lam)`` in canonical form.

    Raises
    ------
    InvalidParameter
        ``d`` not an integer >= 1, ``lam`` not a positive finite real, ``N`` not an integer >= 1.
    StabilityError
        ``lam >= 1`` (per-server load at least the unit service rate).
    """
    if isinstance(d, (float, np.floating)) and float(d).is_integer():
        d = int(d)
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
        raise InvalidParameter("d", d, "an integer >= 1", "the number of sampled queues")
    if d < 1:
        raise InvalidParameter("d", d, "an integer >= 1", "the number of sampled queues")
    try:
        lam_f = float(lam)
    except (TypeError, ValueError):
        raise InvalidParameter("lam", lam, "a real number in (0, 1)") from None
    if not (math.isfinite(lam_f) and lam_f > 0):
        raise InvalidParameter("lam", lam, "a real number in (0, 1)", "per-server arrival rate")
    if lam_f >= 1:
        raise StabilityError(f"arrival rate lam={lam_f:g} must be < 1 for d={int(d)}: the per-server "
                             "load of JSQ(d) with unit-rate exponential servers must be below 1")
    if N is not None:
        if isinstance(N, (float, np.floating)) and float(N).is_integer():
            N = int(N)  # noqa: N806
        if isinstance(N, (bool, np.bool_)) or not isinstance(N, (int, np.integer)) or N < 1:
            raise InvalidParameter("N", N, "an integer >= 1", "the number of servers")
    return int(d), lam_f


def _exponent(d: int, k: int | NDArray[np.int64]) -> Any:
    """``(d^k - 1)/(d - 1)`` (``k`` for ``d = 1``), in floating point."""
    if d == 1:
        return np.asarray(k, dtype=float)
    return (np.power(float(d), np.asarray(k, dtype=float)) - 1.0) / (d - 1.0)


def truncation_level(d: int, lam: float, tail: float = TAIL, cap: int = CAP) -> int:
    """Smallest ``K`` with closed-form ``u_K < tail``, at most ``cap``.

    Examples
    --------
    >>> truncation_level(2, 0.9)
    9
    """
    d, lam = check_parameters(d, lam)
    target = math.log(tail) / math.log(lam)  # the exponent needed: (d^K - 1)/(d - 1) > target
    if d == 1:
        level = math.floor(target) + 1
    else:
        level = math.floor(math.log1p((d - 1) * target) / math.log(d)) + 1
    return int(min(max(level, 1), cap))


def closed_form_tail(d: int, lam: float, K: int | None = None) -> NDArray[np.float64]:  # noqa: N803
    """``u_1, ..., u_K`` of the closed-form fixed point (``K`` from :func:`truncation_level`).

    ``u_k = lam^((d^k - 1)/(d - 1))`` (Vvedenskaya et al. 1996; Mitzenmacher 2001, Thm 3.x),
    ``u_k = lam^k`` for ``d = 1``; evaluated as ``exp(log(lam) * exponent)``.
    """
    d, lam = check_parameters(d, lam)
    K = truncation_level(d, lam) if K is None else int(K)  # noqa: N806
    if K < 1:
        raise InvalidParameter("K", K, "an integer >= 1")
    with np.errstate(over="ignore"):
        exponent = _exponent(d, np.arange(1, K + 1))
    return np.exp(math.log(lam) * exponent)


@functools.lru_cache(maxsize=64)
def jsq_process(d: int, K: int) -> PopulationProcess:  # noqa: N803
    """The JSQ(d) population process truncated at ``K`` levels (``u_{K+1} = 0``).

    Variables ``u_1..u_K``, parameter :data:`LAM`; transitions ``+e_k`` at rate
    ``lam (u_{k-1}^d - u_k^d)`` (an arrival joins a queue of length ``k - 1``) and ``-e_k``
    at rate ``u_k - u_{k+1}`` (a departure from a queue of length ``k``); monotone
    ``u_1 >= ... >= u_K``.  ``d`` is substituted before differentiation, so the rates are
    polynomials.  Cached per ``(d, K)``.
    """
    if K < 1:
        raise InvalidParameter("K", K, "an integer >= 1")
    u = sp.symbols(f"u_1:{K + 1}", real=True)
    process = PopulationProcess(u, [LAM], name=f"JSQ({d}) supermarket model, K={K}")
    level = [sp.Integer(1), *u, sp.Integer(0)]  # level[k] = u_k, u_0 = 1, u_{K+1} = 0
    for k in range(1, K + 1):
        jump = [0] * K
        jump[k - 1] = 1
        process.add_transition(jump, LAM * (level[k - 1] ** d - level[k] ** d))
        jump[k - 1] = -1
        process.add_transition(jump, level[k] - level[k + 1])
    process.declare_monotone(*range(K))
    return process


def closed_form_symbolic(k: sp.Expr | int, d: sp.Expr | int = sp.Symbol("d", positive=True),
                         lam: sp.Expr = LAM) -> sp.Expr:
    """``u_k = lam^((d^k - 1)/(d - 1))`` as a sympy expression (``lam^k`` when ``d == 1``)."""
    if d == 1:
        return lam ** k
    return lam ** ((d ** k - 1) / (d - 1))


def _normalise_lam_powers(expr: sp.Expr, lam: sp.Symbol) -> sp.Expr:
    """Combine powers of ``lam`` and bring their exponents into canonical form."""
    combined = sp.powsimp(sp.expand(expr), force=True)
    return combined.replace(lambda e: e.is_Pow and e.base == lam,
                            lambda e: lam ** sp.simplify(sp.expand(e.exp)))


def verify_closed_form() -> dict[str, sp.Expr]:
    """Substitute the closed form into the ODE right-hand side and simplify (symbolic ``lam``, ``d``).

    For generic level ``k >= 1`` the drift ``lam (u_{k-1}^d - u_k^d) - (u_k - u_{k+1})`` is
    built from ``u_{k-1}, u_k, u_{k+1}`` of the closed form, with ``d = 1 + m``, ``m > 0`` (every
    real ``d > 1``; integer ``d >= 2`` included) and ``lam > 0``.  The returned residuals are
    all ``0`` when the closed form is a fixed point.

    Returns
    -------
    dict
        ``"drift d>1"``: the simplified drift at level ``k``; ``"u_0"``: ``u_0 - 1``;
        ``"drift d=1"``: the same for ``u_k = lam^k``.
    """
    m = sp.Symbol("m", positive=True)
    k = sp.Symbol("k", integer=True, positive=True)
    d = 1 + m
    u = functools.partial(closed_form_symbolic, d=d, lam=LAM)
    drift = LAM * (u(k - 1) ** d - u(k) ** d) - (u(k) - u(k + 1))
    drift1 = LAM * (LAM ** (k - 1) - LAM ** k) - (LAM ** k - LAM ** (k + 1))
    return {
        "drift d>1": sp.simplify(_normalise_lam_powers(drift, LAM)),
        "u_0": sp.simplify(u(0) - 1),
        "drift d=1": sp.simplify(_normalise_lam_powers(drift1, LAM)),
    }


def derivation() -> Derivation:
    """The closed-form fixed point of JSQ(d), derived and checked with sympy."""
    d, k = sp.Symbol("d", positive=True), sp.Symbol("k", integer=True, positive=True)
    uk = sp.Function("u")
    der = Derivation(
        title="JSQ(d) supermarket model with exponential service: mean-field fixed point",
        source="Vvedenskaya, Dobrushin, Karpelevich 1996; Mitzenmacher 2001; "
               "Gast & Van Houdt, SIGMETRICS 2018 (Theorem 1) for the 1/N term",
        summary="u_k is the fraction of servers with at least k jobs; u_0 = 1.",
    )
    der.add("Mean-field ODE", sp.Eq(sp.Derivative(uk(k), sp.Symbol("t")),
                                    LAM * (uk(k - 1) ** d - uk(k) ** d) - (uk(k) - uk(k + 1))),
            "Arrivals join a queue of length k-1 with probability u_{k-1}^d - u_k^d; "
            "departures leave queues of length k at rate u_k - u_{k+1}.")
    der.add("Closed form", sp.Eq(uk(k), closed_form_symbolic(k, d)),
            "Candidate fixed point for d >= 2 (u_k = lam^k for d = 1).")
    exponents = [sp.Eq(sp.simplify(1 + d * (d ** (k - 1) - 1) / (d - 1) - (d ** k - 1) / (d - 1)), 0)]
    der.add("Exponent identity", [sp.Eq(1 + d * (d ** (k - 1) - 1) / (d - 1), (d ** k - 1) / (d - 1)),
                                  *exponents],
            "lam * u_{k-1}^d = u_k, hence the drift vanishes level by level.")
    residuals = verify_closed_form()
    der.add("Drift at the closed form", [sp.Eq(sp.Symbol("F_k"), residuals["drift d>1"]),
                                         sp.Eq(sp.Symbol("F_k^{(d=1)}"), residuals["drift d=1"])],
            "sympy simplification of the ODE right-hand side at the closed form (symbolic lam, d, k).")
    der.add("Metrics", [sp.Eq(sp.Symbol("E[Q]"), sp.Sum(uk(k), (k, 1, sp.oo))),
                        sp.Eq(sp.Symbol("E[T]"), sp.Symbol("E[Q]") / LAM),
                        sp.Eq(sp.Symbol("E[W]"), sp.Symbol("E[T]") - 1)],
            "Mean queue length per server, Little's law, waiting time (unit service time).")
    der.add("Heavy traffic", sp.Eq(sp.Symbol("E[T]"), sp.log(1 / (1 - LAM)) / sp.log(d)),
            "Asymptotic as lam -> 1 for d >= 2 (Mitzenmacher 2001).")
    return der


def heavy_traffic_ET(d: int, lam: float) -> float:  # noqa: N802
    """Heavy-traffic asymptote ``E[T] ~ log(1/(1 - lam)) / log d`` (``d >= 2``; Mitzenmacher 2001)."""
    d, lam = check_parameters(d, lam)
    if d < 2:
        raise InvalidParameter("d", d, "an integer >= 2", "the asymptote log(1/(1-lam))/log d needs d >= 2")
    return math.log(1.0 / (1.0 - lam)) / math.log(d)


def _metrics(d: int, lam: float, tail: NDArray[np.float64]) -> dict[str, Any]:
    eq = float(np.sum(tail))
    values: dict[str, Any] = {"ET": eq / lam, "EQ": eq, "EW": eq / lam - 1.0,
                              "P_wait": lam ** d, "tail": tail[tail >= TAIL].tolist()}
    if d >= 2:
        values["ET_heavy_traffic"] = heavy_traffic_ET(d, lam)
    return values


def solve_supermarket(d: int, lam: float, method: str = "closed form", K: int | None = None  # noqa: N803
                      ) -> Result:
    """Mean-field JSQ(d) with exponential service: ``ET``, ``EQ``, ``EW`` and the tail ``u_k``.

    Parameters
    ----------
    d : int
        Number of queues sampled per arrival (``d = 1``: random routing, M/M/1 queues).
    lam : float
        Per-server arrival rate, ``0 < lam < 1`` (unit service rate).
    method : {"closed form", "fixed point"}
        ``"closed form"``: ``u_k = lam^((d^k-1)/(d-1))`` summed until ``u_k < 1e-18``.
        ``"fixed point"``: the truncated ODE solved by :meth:`PopulationProcess.fixed_point`.
    K : int, optional
        Truncation for ``"fixed point"`` (default: :func:`truncation_level`).

    Returns
    -------
    Result
        ``values``: ``ET``, ``EQ`` (per server), ``EW``, ``P_wait = lam^d``, ``tail`` (``u_1, u_2,
        ...`` while ``u_k >= 1e-16``), ``ET_heavy_traffic`` (``d >= 2``), ``K``.

    Raises
    ------
    StabilityError
        ``lam >= 1``.
    InvalidParameter
        ``d`` not an integer >= 1, ``lam <= 0``, unknown ``method``.
    """
    d, lam = check_parameters(d, lam)
    start = time.perf_counter()
    if method == "closed form":
        K = truncation_level(d, lam, tail=1e-18, cap=10 ** 6) if K is None else int(K)  # noqa: N806
        tail = closed_form_tail(d, lam, K)
        how, exactness = "closed form (Vvedenskaya-Dobrushin-Karpelevich 1996)", Exactness.EXACT
    elif method == "fixed point":
        K = truncation_level(d, lam) if K is None else int(K)  # noqa: N806
        fp = jsq_process(d, K).fixed_point(np.zeros(K), {LAM: lam})
        tail = fp.x
        how = f"mean-field ODE (Radau) + guarded Newton, K={K} levels, residual {fp.residual:.1e}"
        exactness = Exactness.NUMERIC
    else:
        raise InvalidParameter("method", method, "'closed form' or 'fixed point'")
    values = _metrics(d, lam, tail)
    values["K"] = int(K)
    return Result(model="supermarket", params={"d": d, "lam": lam}, values=values, method=how,
                  exactness=exactness, timings={"solve": time.perf_counter() - start})


def refined_jsq(d: int, lam: float, N: int, K: int | None = None) -> Result:  # noqa: N803
    """Refined mean field of JSQ(d): ``E[X^N] ~ pi + V/N`` (Gast & Van Houdt 2018, Theorem 1).

    Parameters
    ----------
    d, lam : see :func:`solve_supermarket`
    N : int
        Number of servers (``N >= 1``).
    K : int, optional
        Truncation level; default :func:`truncation_level` capped at 400 (dense Lyapunov solve).

    Returns
    -------
    Result
        ``values``: ``pi`` (fixed point ``u_1..u_K``), ``V`` (the ``1/N`` term), ``EQ`` (mean
        field, per server), ``EQ_N = sum(pi + V/N)`` (refined, per server), ``ET``, ``ET_N``,
        ``K``, ``truncation_bound`` (closed-form ``u_K``, what truncation neglects),
        ``max_real_eigenvalue`` of ``DF(pi)``.

    Raises
    ------
    StabilityError, InvalidParameter
        As :func:`solve_supermarket`; ``N < 1``.
    """
    d, lam = check_parameters(d, lam, N)
    K = truncation_level(d, lam, cap=CAP_REFINED) if K is None else int(K)  # noqa: N806
    begin = time.perf_counter()
    process = jsq_process(d, K)
    params = {LAM: lam}
    fp = process.fixed_point(np.zeros(K), params)
    mid = time.perf_counter()
    terms = process.refined_terms(fp.x, params)
    end = time.perf_counter()
    pi, V = fp.x, terms.V  # noqa: N806
    eq, eq_n = float(np.sum(pi)), float(np.sum(pi + V / N))
    values = {
        "pi": pi.tolist(), "V": V.tolist(), "EQ": eq, "EQ_N": eq_n, "ET": eq / lam,
        "ET_N": eq_n / lam, "K": K, "truncation_bound": float(closed_form_tail(d, lam, K)[-1]),
        "max_real_eigenvalue": terms.max_real,
    }
    return Result(model="refined-jsq", params={"d": d, "lam": lam, "N": int(N)}, values=values,
                  method=f"refined mean field (Gast & Van Houdt 2018, Thm 1), K={K} levels",
                  exactness=Exactness.NUMERIC,
                  timings={"fixed_point": mid - begin, "refined": end - mid})
