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
>>> round(r.ET, 6)
2.614057
>>> solve_supermarket(1, 0.5).EQ  # M/M/1: lam / (1 - lam)
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

from symq.core.compiler import CompiledFunction
from symq.core.compiler import compile as symq_compile
from symq.core.derivation import Derivation
from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError
from symq.core.parameters import integer_value, real_value
from symq.core.printing import latex
from symq.core.resources import require_memory
from symq.core.result import Exactness, check_tail

from .expansion import MeanFieldExpansion, expansion_steady_state
from .population import PopulationProcess
from .results import RefinedJSQ, SupermarketFixedPoint, check_means, refined_validity

__all__ = [
    "LAM", "check_parameters", "truncation_level", "closed_form_tail", "closed_form_values",
    "jsq_process",
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


def check_parameters(d: Any, lam: Any, N: Any = None) -> tuple[int, float]:
    """Validate ``d``, ``lam`` (and ``N``); return ``(d, lam)`` in canonical form.

    Raises
    ------
    InvalidParameter
        ``d`` not an integer >= 1, ``lam`` not a positive finite real, ``N`` not an integer >= 1.
    StabilityError
        ``lam >= 1`` (per-server load at least the unit service rate).
    """
    d = integer_value("d", d, 1, "the number of sampled queues")
    lam_f = real_value("lam", lam, "a real number in (0, 1) (the per-server arrival rate)",
                       lambda v: v > 0)
    if lam_f >= 1:
        raise StabilityError(f"arrival rate lam={lam_f:g} must be < 1 for d={int(d)}: the "
                             "per-server load of JSQ(d) with unit-rate exponential servers must "
                             "be below 1")
    if N is not None:
        integer_value("N", N, 1, "the number of servers")
    return int(d), lam_f


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


def closed_form_tail(d: int, lam: float, K: int | None = None) -> NDArray[np.float64]:
    """``u_1, ..., u_K`` of the closed-form fixed point (``K`` from :func:`truncation_level`).

    ``u_k = lam^((d^k - 1)/(d - 1))`` (Vvedenskaya et al. 1996; Mitzenmacher 2001, Thm 3.x),
    ``u_k = lam^k`` for ``d = 1``; evaluated as ``exp(log(lam) * exponent)``.
    """
    d, lam = check_parameters(d, lam)
    K = truncation_level(d, lam) if K is None else int(K)
    if K < 1:
        raise InvalidParameter("K", K, "an integer >= 1")
    return closed_form_values(d, lam, np.arange(1, K + 1))


#: the level and the number of probes as real symbols of the compiled closed form.
_K_REAL = sp.Symbol("k", positive=True)
_D_REAL = sp.Symbol("d", positive=True)


@functools.cache
def _closed_form_kernel(single: bool) -> CompiledFunction:
    """:func:`closed_form_symbolic` compiled in ``(k, d, lam)`` (``single``: the ``d = 1`` form)."""
    expr = closed_form_symbolic(_K_REAL, 1 if single else _D_REAL, LAM)
    return symq_compile(expr, (_K_REAL, _D_REAL, LAM))


def closed_form_values(d: int, lam: float, k: Any) -> NDArray[np.float64]:
    """``u_k = lam^((d^k - 1)/(d - 1))`` (``lam^k`` for ``d = 1``) at the levels ``k`` (an array).

    The compiled form (:func:`symq.core.compile`) of :func:`closed_form_symbolic`, the
    expression that :func:`verify_closed_form` proves to annihilate the drift; no parameter
    checks (the callers give ``d >= 1`` and ``0 < lam < 1``, also ``lam = rho = lam E[X]`` of the
    phase-type models).  Levels where ``d^k`` overflows give ``u_k = 0``.

    Examples
    --------
    >>> closed_form_values(2, 0.5, [1, 2, 3]).tolist()
    [0.5, 0.125, 0.0078125]
    """
    with np.errstate(over="ignore"):
        return np.asarray(_closed_form_kernel(d == 1)(np.asarray(k, dtype=float), float(d),
                                                      float(lam)), dtype=float)


@functools.lru_cache(maxsize=64)
def jsq_process(d: int, K: int) -> PopulationProcess:
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


#: The symbol ``d`` of the symbolic closed form (positive).
D_SYMBOL = sp.Symbol("d", positive=True)


def closed_form_symbolic(k: sp.Expr | int, d: sp.Expr | int = D_SYMBOL,
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
    """Substitute the closed form into the ODE right-hand side and simplify (symbolic ``lam``,
    ``d``).

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
        summary="$u_k$ is the fraction of servers with at least $k$ jobs; $u_0 = 1$.",
    )
    der.add("Mean-field ODE", sp.Eq(sp.Derivative(uk(k), sp.Symbol("t")),
                                    LAM * (uk(k - 1) ** d - uk(k) ** d) - (uk(k) - uk(k + 1))),
            "Arrivals join a queue of length $k-1$ with probability $u_{k-1}^d - u_k^d$; "
            "departures leave queues of length $k$ at rate $u_k - u_{k+1}$.")
    der.add("Closed form", sp.Eq(uk(k), closed_form_symbolic(k, d)),
            r"Candidate fixed point for $d \ge 2$ ($u_k = \lambda^k$ for $d = 1$).")
    lhs, rhs = 1 + d * (d ** (k - 1) - 1) / (d - 1), (d ** k - 1) / (d - 1)
    difference = sp.simplify(lhs - rhs)
    der.add("Exponent identity", sp.Eq(lhs, rhs, evaluate=False),
            r"$\lambda u_{k-1}^d = u_k$, hence the drift vanishes level by level; sympy "
            f"simplifies the difference of the two sides to ${latex(difference)}$.")
    residuals = verify_closed_form()
    der.add("Drift at the closed form", [sp.Eq(sp.Symbol("F_k"), residuals["drift d>1"]),
                                         sp.Eq(sp.Symbol("F_k^{(d=1)}"), residuals["drift d=1"])],
            r"sympy simplification of the ODE right-hand side at the closed form (symbolic "
            r"$\lambda$, $d$, $k$).")
    der.add("Metrics", [sp.Eq(sp.Symbol("E[Q]"), sp.Sum(uk(k), (k, 1, sp.oo))),
                        sp.Eq(sp.Symbol("E[T]"), sp.Symbol("E[Q]") / LAM),
                        sp.Eq(sp.Symbol("E[W]"), sp.Symbol("E[T]") - 1)],
            "Mean queue length per server, Little's law, waiting time (unit service time).")
    der.add("Heavy traffic", sp.Eq(sp.Symbol("E[T]"), sp.log(1 / (1 - LAM)) / sp.log(d)),
            r"Asymptotic as $\lambda \to 1$ for $d \ge 2$ (Mitzenmacher 2001).")
    return der


def heavy_traffic_ET(d: int, lam: float) -> float:
    """Heavy-traffic asymptote ``E[T] ~ log(1/(1 - lam)) / log d`` (``d >= 2``; Mitzenmacher
    2001)."""
    d, lam = check_parameters(d, lam)
    if d < 2:
        raise InvalidParameter("d", d, "an integer >= 2",
                               "the asymptote log(1/(1-lam))/log d needs d >= 2")
    return math.log(1.0 / (1.0 - lam)) / math.log(d)


#: largest number of tail entries listed in a result (the rest is stated by ``tail_rest``).
MAX_TAIL = 10_000
#: default accuracy: the part of ``EQ`` left out by a truncation, relative to ``EQ``.
TOL = 1e-12
#: default accuracy of the refined model (relative change of ``EQ_N`` between truncations).
TOL_REFINED = 1e-9


def _tail_remainder(d: int, lam: float, K: int) -> float:
    """Bound on ``sum_{k > K} u_k`` of the closed form.

    For ``d = 1`` it is exact: ``lam^(K+1)/(1 - lam)``.  For ``d >= 2`` the ratios
    ``u_{k+1}/u_k = lam^(d^k)`` decrease in ``k``, so the remainder is at most
    ``u_{K+1} / (1 - lam^(d^(K+1)))`` (a geometric series with the first ratio).
    """
    log_lam = math.log(lam)
    u_next = float(closed_form_values(d, lam, K + 1))
    if d == 1:
        return u_next / -math.expm1(log_lam)
    if u_next == 0.0:
        return 0.0
    ratio_exp = float(d) ** (K + 1) if K + 1 < 1100 else math.inf  # u_{K+2}/u_{K+1} = lam^ratio_exp
    return u_next / -math.expm1(log_lam * ratio_exp)


def _listed_tail(tail: NDArray[np.float64], rest: float) -> tuple[NDArray[np.float64], int, float]:
    """The tail as listed in a result: ``u_k >= 1e-16``, at most :data:`MAX_TAIL` entries.

    Returns the listed entries, how many they are and the first value left out (a bound on
    every later one, the tail being non-increasing; ``0`` if none is left out).
    """
    keep = int(np.searchsorted(-tail, -TAIL, side="right"))  # tail is non-increasing
    keep = min(keep, MAX_TAIL)
    first_left_out = float(tail[keep]) if keep < tail.size else rest
    return np.array(tail[:keep], dtype=float), keep, first_left_out


def _levels_for(d: int, lam: float, tol: float, cap: int, solver: str, eq: float) -> int:
    """Smallest ``K >= truncation_level`` whose closed-form remainder is ``<= tol * eq``.

    Raises :class:`TruncationError` when it exceeds ``cap``.
    """
    if d == 1:  # lam^(K+1)/(1-lam) <= tol * eq  <=>  K + 1 >= log(tol eq (1-lam)) / log lam
        need = math.log(tol * eq * -math.expm1(math.log(lam))) / math.log(lam)
        level = max(int(math.ceil(need)), 1)
    else:
        level = 1
        while _tail_remainder(d, lam, level) > tol * eq:
            level += 1
    level = max(level, truncation_level(d, lam, cap=10 ** 12))
    if level > cap:
        raise TruncationError(
            solver, "queue-length levels (mass of EQ left out)", _tail_remainder(d, lam, cap) / eq,
            tol, f"K={cap}",
            f"lam={lam!r} needs {level} levels; lower lam"
            + (" or use the closed form" if solver.endswith("fixed point") else ""))
    return level


def _closed_form_mean(d: int, lam: float, tol: float, K: int | None
                      ) -> tuple[float, NDArray[np.float64], int, float]:
    """``EQ``, the listed part of the tail, the levels summed and the bound on what is left out."""
    if d == 1:
        eq = lam / (1.0 - lam)  # exact: 1 - lam is exact in floating point for lam >= 1/2
        levels = truncation_level(d, lam, cap=MAX_TAIL) if K is None else int(K)
        levels = min(levels, MAX_TAIL)
        tail = closed_form_tail(d, lam, levels)
        return eq, tail, levels, 0.0
    if K is None:
        K = 1
        while _tail_remainder(d, lam, K) > tol * float(np.sum(closed_form_tail(d, lam, K))):
            K += 1
        K = max(K, truncation_level(d, lam))
    tail = closed_form_tail(d, lam, int(K))
    eq = float(np.sum(tail))
    bound = _tail_remainder(d, lam, int(K))
    if bound > tol * eq:
        raise TruncationError("supermarket closed form",
                              "queue-length levels (mass of EQ left out)",
                              bound / eq, tol, f"K={K}", "raise K")
    return eq, tail, int(K), bound


def solve_supermarket(d: int, lam: float, method: str = "closed form", K: int | None = None,
                      tol: float = TOL) -> SupermarketFixedPoint:
    """Mean-field JSQ(d) with exponential service: ``ET``, ``EQ``, ``EW`` and the tail ``u_k``.

    Parameters
    ----------
    d : int
        Number of queues sampled per arrival (``d = 1``: random routing, M/M/1 queues).
    lam : float
        Per-server arrival rate, ``0 < lam < 1`` (unit service rate).
    method : {"closed form", "fixed point"}
        ``"closed form"``: ``u_k = lam^((d^k-1)/(d-1))``; for ``d = 1`` the exact
        ``EQ = lam/(1 - lam)``, for ``d >= 2`` the doubly exponential series summed until the
        bound on its remainder (see :func:`_tail_remainder`) is below ``tol * EQ``.
        ``"fixed point"``: the truncated ODE solved by :meth:`PopulationProcess.fixed_point`
        with ``K`` levels chosen the same way (at most :data:`CAP`).
    K : int, optional
        Truncation (default: chosen from ``tol``).
    tol : float, default 1e-12
        Accuracy: bound on the part of ``EQ`` left out by the truncation, relative to ``EQ``.

    Returns
    -------
    SupermarketFixedPoint
        ``ET``, ``EQ`` (per server), ``EW``, ``P_wait = lam^d``, ``tail`` (``u_1, u_2, ...``
        while ``u_k >= 1e-16``, at most :data:`MAX_TAIL` entries), ``tail_levels`` (entries
        listed), ``tail_rest`` (first value not listed: a bound on all later ones),
        ``truncation_bound`` (bound on the part of ``EQ`` left out; 0 when exact),
        ``ET_heavy_traffic`` (``None`` for ``d = 1``), ``K``, ``method``, ``exactness``.

    Raises
    ------
    StabilityError
        ``lam >= 1``.
    InvalidParameter
        ``d`` not an integer >= 1, ``lam <= 0``, unknown ``method``, bad ``tol``.
    TruncationError
        ``"fixed point"``: the levels needed for ``tol`` exceed :data:`CAP` (or the given ``K``
        is too small).
    """
    d, lam = check_parameters(d, lam)
    tol = _check_tol(tol)
    start = time.perf_counter()
    if method == "closed form":
        eq, tail, K, bound = _closed_form_mean(d, lam, tol, K)
        rest = float(closed_form_tail(d, lam, K + 1)[-1]) if tail.size == K else 0.0
        how, exactness = "closed form (Vvedenskaya-Dobrushin-Karpelevich 1996)", Exactness.EXACT
        if d == 1:
            how += "; EQ = lam/(1-lam) exactly, u_k = lam^k for every k"
        else:
            how += f", summed over K={K} levels (remainder <= {bound:.1e})"
    elif method == "fixed point":
        eq_exact = _closed_form_mean(d, lam, TOL, None)[0]
        if K is None:
            K = _levels_for(d, lam, tol, CAP, "supermarket fixed point", eq_exact)
        K = int(K)
        require_memory("lam", lam, 200.0 * 8 * K, what=f"{K} levels of the ODE",
                       limit="smaller (fewer levels)")
        bound = _tail_remainder(d, lam, K)
        if bound > tol * eq_exact:
            raise TruncationError("supermarket fixed point", "queue-length levels (mass of EQ left "
                                  "out)", bound / eq_exact, tol, f"K={K}", "raise K")
        x0 = np.clip(closed_form_tail(d, lam, K), 0.0, 1.0)
        fp = jsq_process(d, K).fixed_point(x0, {LAM: lam})
        tail = fp.x
        eq = float(np.sum(tail))
        rest = bound
        how = f"mean-field ODE (Radau) + guarded Newton, K={K} levels, residual {fp.residual:.1e}"
        exactness = Exactness.NUMERIC
    else:
        raise InvalidParameter("method", method, "'closed form' or 'fixed point'")
    check_tail("supermarket", "tail", tail)
    check_means("supermarket", EQ=eq)
    listed, levels, first_left_out = _listed_tail(tail, rest)
    return SupermarketFixedPoint(
        d=d, lam=lam, ET=eq / lam, EQ=eq, EW=eq / lam - 1.0, P_wait=lam ** d, tail=listed,
        tail_levels=levels, tail_rest=first_left_out, truncation_bound=float(bound), K=int(K),
        ET_heavy_traffic=heavy_traffic_ET(d, lam) if d >= 2 else None, method=how,
        exactness=exactness, seconds=time.perf_counter() - start)


def _check_tol(tol: Any) -> float:
    try:
        value = float(tol)
    except (TypeError, ValueError):
        raise InvalidParameter("tol", tol, "a real number in (1e-15, 1)") from None
    if not 1e-15 <= value < 1:
        raise InvalidParameter("tol", tol, "a real number in [1e-15, 1)")
    return value


def _refined_at(d: int, lam: float, N: int, K: int, order: int = 1
                ) -> tuple[Any, MeanFieldExpansion, float]:
    """Fixed point, size expansion (to ``order``) and the estimate of ``EQ`` at ``N`` of the
    process truncated at ``K`` levels."""
    require_memory("lam", lam, (12.0 * 8 * K * K) if order == 1 else 6.0 * 8 * K ** 3,
                   what=f"dense {K} x {K} Lyapunov solve" if order == 1
                   else f"{K}^3 third-moment tensors of the 1/N^2 term",
                   limit="smaller (fewer levels)")
    process = jsq_process(d, K)
    params = {LAM: lam}
    x0 = np.clip(closed_form_tail(d, lam, K), 0.0, 1.0)
    fp = process.fixed_point(x0, params)
    expansion = expansion_steady_state(process, fp.x, params, order=order)
    return fp, expansion, float(np.sum(expansion.mean(int(N))))


def refined_jsq(d: int, lam: float, N: int, K: int | None = None,
                tol: float = TOL_REFINED, order: int = 1) -> RefinedJSQ:
    """Refined mean field of JSQ(d): ``E[X^N] ~ pi + V/N`` (Gast & Van Houdt 2018, Theorem 1),
    with ``order = 2`` also ``+ V2/N^2`` (Gast, Bortolussi & Tribastone, Performance
    Evaluation 2019).

    For ``d = 1`` (random routing) the ``N`` queues are independent M/M/1 queues: the drift is
    linear, so ``V = 0`` and ``E[X^N] = pi`` exactly, ``pi_k = lam^k``, ``EQ = lam/(1-lam)``
    (no truncation).  For ``d >= 2`` the process is truncated at ``K`` levels, ``K`` grown
    (by a quarter, at least 2 levels) until ``EQ_N`` changes by at most ``tol * EQ_N`` and the
    closed-form mass beyond ``K`` is below ``tol * EQ``; the sum of both is
    ``truncation_bound``.

    Parameters
    ----------
    d, lam : see :func:`solve_supermarket`
    N : int
        Number of servers (``N >= 1``).
    K : int, optional
        Fixed truncation level (no growth; the bound is still checked).
    tol : float, default 1e-9
        Relative accuracy of ``EQ_N`` (``EQ_N2`` with ``order = 2``) asked for.
    order : {1, 2}, default 1
        2 adds the ``1/N^2`` term ``V2`` and ``EQ_N2``, ``ET_N2``, ``EW_N2``,
        ``refined2_valid`` (:func:`symq.meanfield.expansion.expansion_steady_state`).

    Returns
    -------
    RefinedJSQ
        ``pi`` (fixed point ``u_1..u_K``), ``V`` (the ``1/N`` term), ``EQ`` (mean field, per
        server), ``EQ_N = sum(pi + V/N)`` (refined, per server), ``ET``, ``ET_N``, ``EW``,
        ``EW_N``, ``K``, ``truncation_bound``, ``max_real_eigenvalue`` of ``DF(pi)``,
        ``drift_residual``, ``refined_valid`` and ``refined_invalid``: the refined estimate is
        only meaningful where ``pi + V/N`` is an occupancy vector (entries in ``[0, 1]``,
        non-increasing); otherwise (small ``N`` at high load) ``refined_valid`` is ``False``,
        ``refined_invalid`` says why and the method says so: ``EQ_N`` is then outside the
        domain of validity of the expansion and should not be used.

    Raises
    ------
    StabilityError, InvalidParameter
        As :func:`solve_supermarket`; ``N < 1``.
    TruncationError
        The levels needed exceed :data:`CAP_REFINED` (lower ``lam``), or a given ``K`` is too
        small.
    """
    d, lam = check_parameters(d, lam, N)
    tol = _check_tol(tol)
    if isinstance(order, bool) or order not in (1, 2):
        raise InvalidParameter("order", order, "1 (the 1/N term) or 2 (the 1/N^2 term)")
    begin = time.perf_counter()
    if d == 1:
        eq = lam / (1.0 - lam)
        levels = truncation_level(1, lam, cap=MAX_TAIL)
        pi = closed_form_tail(1, lam, levels)
        return RefinedJSQ(
            d=d, lam=lam, N=int(N), pi=pi, V=np.zeros(levels), u=pi, EQ=eq, EQ_N=eq,
            ET=eq / lam, ET_N=eq / lam, EW=eq / lam - 1.0, EW_N=eq / lam - 1.0, K=levels,
            truncation_bound=0.0, max_real_eigenvalue=-(1.0 - math.sqrt(lam)) ** 2,
            drift_residual=None, refined_valid=True, refined_invalid="",
            pi_rest=float(closed_form_values(1, lam, levels + 1)),
            **({} if order == 1 else {
                "V2": np.zeros(levels), "EQ_N2": eq, "ET_N2": eq / lam, "EW_N2": eq / lam - 1.0,
                "refined2_valid": True}),
            method=("d = 1: independent M/M/1 queues, V = 0 (and V2 = 0) and E[X^N] = pi "
                    "exactly (closed form; pi listed while lam^k >= 1e-16)"),
            exactness=Exactness.EXACT, seconds=time.perf_counter() - begin)
    eq_cf = _closed_form_mean(d, lam, TOL, None)[0]
    fixed = K is not None
    if fixed:
        K = int(K)
        if K < 1:
            raise InvalidParameter("K", K, "an integer >= 1")
    else:
        K = max(_levels_for(d, lam, tol, CAP_REFINED, "refined-jsq", eq_cf), 4)
    fp, terms, eq_n = _refined_at(d, lam, N, K, order)
    change = math.inf
    while not fixed:
        K2 = K + max(2, K // 4)
        if K2 > CAP_REFINED:
            raise TruncationError("refined-jsq", "queue-length levels (change of EQ_N)",
                                  change / abs(eq_n), tol, f"K={K}",
                                  f"lam={lam!r} is too close to 1 for {CAP_REFINED} levels; "
                                  "lower lam")
        fp2, terms2, eq_n2 = _refined_at(d, lam, N, K2, order)
        change = abs(eq_n2 - eq_n)
        K, fp, terms, eq_n = K2, fp2, terms2, eq_n2
        if change <= tol * abs(eq_n):
            break
    tail_mass = _tail_remainder(d, lam, K)
    bound = tail_mass + (0.0 if fixed else change)
    if fixed and tail_mass > tol * eq_cf:
        raise TruncationError("refined-jsq", "queue-length levels (mass of EQ left out)",
                              tail_mass / eq_cf, tol, f"K={K}", "raise K")
    end = time.perf_counter()
    pi, V = fp.x, terms.V
    check_tail("refined-jsq", "pi", pi)
    eq = float(np.sum(pi))
    check_means("refined-jsq", EQ=eq)
    if not math.isfinite(eq_n):
        raise NotConverged("refined-jsq (non-finite EQ_N)", float("inf"), tol, 1)
    valid, why = refined_validity(pi, V, int(N))
    method = f"refined mean field (Gast & Van Houdt 2018, Thm 1), K={K} levels"
    if not valid:
        method += f"; REFINED ESTIMATE INVALID: {why}"
    second: dict[str, Any] = {}
    if order == 2:
        valid2, why2 = refined_validity(pi, V, int(N), terms.V2)
        second = {"V2": terms.V2, "EQ_N2": eq_n, "ET_N2": eq_n / lam, "EW_N2": eq_n / lam - 1.0,
                  "refined2_valid": valid2, "refined2_invalid": why2}
        eq_n = float(np.sum(pi + V / N))
        method += ("; 1/N^2 term (Gast, Bortolussi & Tribastone 2019)"
                   + ("" if valid2 else f"; 1/N^2 ESTIMATE INVALID: {why2}"))
    return RefinedJSQ(**second,
        d=d, lam=lam, N=int(N), pi=pi, V=V, u=pi, EQ=eq, EQ_N=eq_n, ET=eq / lam,
        ET_N=eq_n / lam, EW=eq / lam - 1.0, EW_N=eq_n / lam - 1.0, K=int(K),
        truncation_bound=float(bound), max_real_eigenvalue=terms.max_real,
        drift_residual=float(fp.residual), refined_valid=valid, refined_invalid=why,
        method=method, exactness=Exactness.NUMERIC, seconds=end - begin)
