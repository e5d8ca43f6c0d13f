"""Refined mean field of JSQ(d) with phase-type service, FCFS: ``E[X^N] ~ pi + V/N``.

The finite-N system is a density-dependent population process in the variables ``x_{k,j}``
(fraction of servers with at least ``k`` jobs whose job in service is in phase ``j``,
``k = 1..K``).  A server with exactly ``l`` jobs in phase ``j`` counts in ``x_{1..l, j}``, so
its events move a whole column of the occupancy:

* arrival to an idle server: ``+e_{1,j'}`` at rate ``lam (1 - u_1^d) alpha_{j'}``;
* arrival to a server with ``k - 1 >= 1`` jobs in phase ``j``: ``+e_{k,j}`` at rate
  ``lam h_d(u_{k-1}, u_k) (x_{k-1,j} - x_{k,j})`` (the shortest of ``d`` probes has ``k - 1``
  jobs with probability ``u_{k-1}^d - u_k^d``; among those servers the phase is ``j`` with
  probability ``(x_{k-1,j} - x_{k,j})/(u_{k-1} - u_k)``);
* phase change ``j -> j'`` at a server with ``l`` jobs: ``-e_{1..l,j} + e_{1..l,j'}`` at rate
  ``A_{jj'} (x_{l,j} - x_{l+1,j})``;
* service completion at a server with ``l`` jobs in phase ``j``, next job starting in ``j'``:
  ``-e_{1..l,j} + e_{1..l-1,j'}`` at rate ``a_j alpha_{j'} (x_{l,j} - x_{l+1,j})``
  (``l = 1``: ``-e_{1,j}`` at rate ``a_j (x_{1,j} - x_{2,j})``).

Arrivals to a queue of ``K`` jobs are lost (truncation).  Its drift is the mean-field ODE of
:mod:`~symq.meanfield.jsq_ph`; the fixed point comes from the cavity iteration
(:func:`~symq.meanfield.jsq_ph.solve_jsq_ph`) and is checked against this drift; the ``1/N``
term is Gast & Van Houdt's (SIGMETRICS 2018, Theorem 1), computed by
:meth:`~symq.meanfield.population.PopulationProcess.refined_terms`.

Examples
--------
>>> from symq.laws import hyperexponential2
>>> r = refined_jsq_ph(2, 0.7, hyperexponential2(1.0, 4.0), N=100)
>>> r.ET_N > r.ET  # finite systems are slower than the mean field
True
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import sympy as sp

from symq.core.errors import NotConverged, ResourceLimit, TruncationError
from symq.core.parameters import integer_value
from symq.core.renamed import renamed_keywords
from symq.core.resources import require_memory
from symq.core.result import Exactness, check_probability, check_tail
from symq.laws import as_phase_type

from .jsq_ph import solve_jsq_ph
from .population import PopulationProcess
from .probes import probe_polynomial as _hd
from .results import RefinedJSQ, refined_validity
from .sizes import PhaseTypeLaw
from .supermarket import LAM, check_parameters

__all__ = ["jsq_ph_process", "refined_jsq_ph"]

#: Levels above which the dense Lyapunov solve of the refined term gets slow.
MAX_DIMENSION = 600
#: the truncation level is the first with ``u_K`` below this.
TAIL_REFINED = 1e-12
#: mass of ``EQ`` allowed beyond the truncation, relative to ``EQ``.
TOL_REFINED = 1e-9


def _number(value: float) -> sp.Expr:
    return sp.Float(float(value), 17) if value != 0 else sp.Integer(0)


@functools.lru_cache(maxsize=16)
def _process(d: int, K: int, alpha: tuple[float, ...], A: tuple[tuple[float, ...], ...]
             ) -> PopulationProcess:
    m = len(alpha)
    T = np.array(A)
    exit_rates = -T.sum(axis=1)
    names = [f"x_{k}_{j}" for k in range(1, K + 1) for j in range(1, m + 1)]
    xs = sp.symbols(names, real=True)
    x = ([[sp.Integer(1)] * m] + [list(xs[k * m:(k + 1) * m]) for k in range(K)]
         + [[sp.Integer(0)] * m])
    u = [sp.Add(*row) for row in x]  # u[0] = 1 is a placeholder, u[K+1] = 0
    u[0] = sp.Integer(1)
    process = PopulationProcess(xs, [LAM], name=f"JSQ({d}) with {m}-phase service, K={K}")
    n = K * m

    def index(k: int, j: int) -> int:  # level k = 1..K, phase j = 0..m-1
        return (k - 1) * m + j

    for j in range(m):
        if alpha[j] > 0:
            jump = [0] * n
            jump[index(1, j)] = 1
            process.add_transition(jump, LAM * (1 - u[1] ** d) * _number(alpha[j]))
    for k in range(2, K + 1):
        for j in range(m):
            jump = [0] * n
            jump[index(k, j)] = 1
            process.add_transition(jump, LAM * _hd(u[k - 1], u[k], d) * (x[k - 1][j] - x[k][j]))
    for level in range(1, K + 1):
        for j in range(m):
            exactly = x[level][j] - x[level + 1][j]  # servers with exactly `level` jobs, phase j
            for j2 in range(m):
                if j2 != j and T[j, j2] > 0:
                    jump = [0] * n
                    for k in range(1, level + 1):
                        jump[index(k, j)] -= 1
                        jump[index(k, j2)] += 1
                    process.add_transition(jump, _number(T[j, j2]) * exactly)
            if exit_rates[j] <= 0:
                continue
            if level == 1:
                jump = [0] * n
                jump[index(1, j)] = -1
                process.add_transition(jump, _number(exit_rates[j]) * exactly)
                continue
            for j2 in range(m):
                if alpha[j2] > 0:
                    jump = [0] * n
                    for k in range(1, level + 1):
                        jump[index(k, j)] -= 1
                    for k in range(1, level):
                        jump[index(k, j2)] += 1
                    process.add_transition(jump, _number(exit_rates[j] * alpha[j2]) * exactly)
    return process


@renamed_keywords(service="sizes")
def jsq_ph_process(d: int, K: int, sizes: PhaseTypeLaw) -> PopulationProcess:
    """The finite-N JSQ(d) system with PH service as a population process (module docstring).

    Variables ``x_{k,j}`` ordered level by level (``k = 1..K``, then phase), parameter
    :data:`~symq.meanfield.supermarket.LAM`; ``sizes`` is a job-size law with a phase-type
    form (:func:`symq.laws.as_phase_type`).  Cached per ``(d, K, alpha, A)``.

    Raises
    ------
    InvalidParameter
        ``d`` or ``K`` not an integer ``>= 1`` / ``>= 2``, or an invalid PH law.
    """
    d = integer_value("d", d, 1)
    K = integer_value("K", K, 2)
    law = as_phase_type(sizes, "sizes")
    return _process(int(d), int(K), tuple(law.alpha.tolist()), tuple(map(tuple, law.A.tolist())))


@renamed_keywords(service="sizes")
def refined_jsq_ph(d: int, lam: float, sizes: PhaseTypeLaw, N: int,
                   K: int | None = None) -> RefinedJSQ:
    """Refined mean field of JSQ(d) with PH service: ``E[x^N] ~ pi + V/N`` (Gast & Van Houdt 2018).

    Parameters
    ----------
    d : int
        Probes per arrival, ``>= 1``.
    lam : float
        Per-server arrival rate, ``lam E[X] < 1``.
    sizes : PhaseType, (alpha, A) or ME with a phase-type form
        The job-size law (converted by :func:`symq.laws.as_phase_type`).
    N : int
        Number of servers, ``>= 1``.
    K : int, optional
        Truncation; default: the level where the fixed point's tail falls below ``1e-12``
        (from the adaptive :func:`~symq.meanfield.jsq_ph.solve_jsq_ph`), at least 4.

    Returns
    -------
    RefinedJSQ
        ``pi`` and ``V`` (shape ``(K, m)``), ``u`` (the tail),
        ``EQ``, ``EQ_N = sum(pi + V/N)``, ``ET``, ``ET_N`` (per server, Little), ``K``,
        ``drift_residual`` (``max|F(pi)|`` of this process's drift at the cavity fixed point:
        an independent check of both), ``max_real_eigenvalue`` of ``DF(pi)`` (both ``None``
        at ``d = 1``, where ``V = 0`` exactly and the process is not built),
        ``truncation_bound`` (mass of ``EQ`` beyond ``K`` in the adaptively truncated fixed
        point, checked to be below ``1e-9 EQ``), ``refined_valid`` and ``refined_invalid``:
        ``False`` and the reason when ``pi + V/N`` is not an occupancy (an entry outside
        ``[0, 1]``, a level of mass above 1, or not non-increasing in the level; small ``N``
        at high load): ``EQ_N`` is then outside the domain of the expansion (the method
        says so too).

    Raises
    ------
    StabilityError
        ``lam E[X] >= 1``, or an unstable fixed point.
    InvalidParameter
        Bad ``d``, ``lam``, ``N``, ``K`` or ``sizes``.
    NotConverged
        If the cavity fixed point does not annihilate this process's drift (``> 1e-9``).
    TruncationError
        The tail needs more than ``600 / m`` levels (lower ``lam`` or the SCV), or a given
        ``K`` leaves out more than ``1e-9 EQ``.
    """
    d, lam = check_parameters(d, lam, N)
    law = as_phase_type(sizes, "sizes")
    mean, m = law.mean(), law.order
    begin = time.perf_counter()
    full = solve_jsq_ph(d, lam, law)  # adaptive: u_K < 1e-16
    given = K is not None
    if not given:
        below = np.flatnonzero(full.u < TAIL_REFINED)
        K = max(int(below[0]) + 1 if below.size else full.K, 4)
    K = integer_value("K", K, 2)
    # mass of EQ beyond K in the (adaptively truncated) fixed point, and its last level
    left_out = float(full.u[int(K):].sum()) + (float(full.u[-1]) if int(K) >= full.K else 0.0)
    if K * m > MAX_DIMENSION and given:
        raise ResourceLimit("K", K, f"a dense Lyapunov solve of dimension K*m = {K * m} > "
                            f"{MAX_DIMENSION}",
                            f"at most {MAX_DIMENSION // m} levels for {m} phases")
    if K * m > MAX_DIMENSION:
        raise TruncationError(
            "refined-jsq-ph", "queue-length levels x phases (dense Lyapunov dimension)",
            float(full.u[min(MAX_DIMENSION // m, full.K) - 1]), TAIL_REFINED,
            f"K={MAX_DIMENSION // m} levels of {m} phases",
            f"the tail needs K={K} levels (K*m <= {MAX_DIMENSION}); lower lam or scv")
    if left_out > TOL_REFINED * max(full.EQ, 1e-300):
        raise TruncationError("refined-jsq-ph", "queue-length levels (mass of EQ left out)",
                              left_out / full.EQ, TOL_REFINED, f"K={K}", "raise K")
    require_memory("K", K, 12.0 * 8 * (K * m) ** 2, what=f"dense {K * m} x {K * m} Lyapunov solve")
    fp = solve_jsq_ph(d, lam, law, K=int(K))
    if d == 1:
        # one probe: every arrival joins a uniformly chosen server, so the N queues are
        # independent stationary M/PH/1 queues and E[x^N] = pi for every N (V = 0 exactly);
        # the drift is linear in x, so the second-order term vanishes too.  Skipping the
        # symbolic process also avoids its cost, which grows fast with K*m.
        residual: float | None = None
        V = np.zeros((int(K), m))
        max_real: float | None = None
        end = time.perf_counter()
    else:
        process = jsq_ph_process(d, int(K), law)
        params = {LAM: lam}
        pi = fp.x.ravel()
        residual = float(np.max(np.abs(process.F(pi, process.parameter_values(params)))))
        if not residual <= 1e-9:
            raise NotConverged("refined_jsq_ph: the cavity fixed point in the population drift",
                               residual, 1e-9, fp.iterations)
        terms = process.refined_terms(pi, params)
        end = time.perf_counter()
        V = terms.V.reshape(int(K), m)
        max_real = terms.max_real
    eq = float(fp.u.sum())
    eq_n = eq + float(V.sum()) / N
    if not all(math.isfinite(v) for v in (eq, eq_n)):
        raise NotConverged("refined_jsq_ph (non-finite result)", float("inf"), 0.0, 1)
    check_tail("refined-jsq-ph", "u", fp.u)
    check_probability("refined-jsq-ph", "pi", fp.x)
    valid, why = refined_validity(fp.x, V, int(N))
    method = (f"cavity fixed point + refined mean field (Gast & Van Houdt 2018, Thm 1), "
              f"K={K} levels, {m} phases")
    if d == 1:
        method = (f"d = 1: independent M/PH/1 queues, E[x^N] = pi for every N (V = 0); cavity "
                  f"fixed point, K={K} levels, {m} phases")
    if not valid:
        method += f"; REFINED ESTIMATE INVALID: {why}"
    return RefinedJSQ(
        d=d, lam=lam, N=int(N), pi=fp.x, V=V, u=fp.u, EQ=eq, EQ_N=eq_n, ET=eq / lam,
        ET_N=eq_n / lam, EW=eq / lam - mean, EW_N=eq_n / lam - mean, K=int(K),
        truncation_bound=left_out, max_real_eigenvalue=max_real, drift_residual=residual,
        refined_valid=valid, refined_invalid=why, method=method, exactness=Exactness.NUMERIC,
        seconds=end - begin)
