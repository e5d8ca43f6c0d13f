"""Symbolic layer of size-aware dispatching: Bellman equations, M/G/1 value, FPI index.

Hyytiä & Righter (arXiv 2402.08142) and Hyytiä, Penttinen, Aalto (EJOR 2012):

* the pre- and post-assignment Bellman equations per arrival;
* the M/G/1-FCFS relative value of the backlog ``v(u) = lam u^2/(2(1 - rho))``: sympy checks
  that it solves the one-server Bellman equation with the constant ``g`` equal to the
  Pollaczek-Khinchine mean response time, for a symbolic size law (only ``E[X]`` and
  ``E[X^2]`` enter, and ``v`` itself depends on the law only through ``rho``: insensitivity);
* the first-policy-iteration index ``a_i(u, x) = u + x + lam_i x (2u + x)/(2(1 - rho_i))`` and
  the proof that FPI from an equal random split is LWL on identical servers (the index is
  increasing in the backlog);
* the curvature ``c_M = lam_i/(2(1 - rho_i))`` of that value, the fixed analytic tail of value
  iteration beyond the truncation ``U``.

The solvers evaluate these expressions through their compiled forms (:func:`symq.core.compile`,
numpy backend), never a copy typed by hand: :func:`mean_response_fn` (Pollaczek-Khinchine) and
:func:`wait_fn` give the exact RND and SITA values (:mod:`symq.dispatch.policies.exact`) and the
least truncation of value iteration, :func:`tail_curvature_fn` the tail of the value-iteration grid
and of the ``lookup`` policy, :func:`fpi_index_fn` the costs of the FPI policies.

Examples
--------
>>> result = verify_mg1_value()
>>> result["residual_depends_on_u"], result["g_is_pollaczek_khinchine"]
(False, True)
>>> fpi_from_rnd_is_lwl()
True
>>> float(mean_response_fn()(1.0, 0.5, 2.0, 0.5))      # M/M/1 at rho = 1/2: 1/(1 - rho)
2.0
"""

from __future__ import annotations

import functools
from typing import Any

import sympy as sp

from symq.core.compiler import CompiledFunction, compile
from symq.core.derivation import Derivation

__all__ = ["mg1_value", "mg1_wait", "pollaczek_khinchine", "verify_mg1_value", "fpi_index",
           "fpi_from_rnd_is_lwl", "tail_curvature", "bellman_equations", "derivation",
           "mean_response_fn", "wait_fn", "fpi_index_fn", "tail_curvature_fn"]

LAM, M1, M2 = sp.symbols("lambda m_1 m_2", positive=True)
U, X, T, G = sp.symbols("u x t g", positive=True)
RHO = sp.Symbol("rho", positive=True)
#: Arrival rate and load of one server under a static split (RND: lambda/m and rho).
LAM_I, RHO_I = sp.symbols("lambda_i rho_i", positive=True)


def mg1_value(lam: sp.Expr = LAM, rho: sp.Expr = RHO) -> sp.Expr:
    """``v(u) = lam u^2 / (2 (1 - rho))``."""
    return lam * U ** 2 / (2 * (1 - rho))


def mg1_wait(lam: sp.Expr = LAM, m2: sp.Expr = M2, rho: sp.Expr = RHO) -> sp.Expr:
    """Mean M/G/1-FCFS waiting time ``lam m_2/(2(1 - rho))`` (Pollaczek-Khinchine).

    Linear in ``m_2``: with the partial moment ``m_2 = E[X^2; class j]`` and the class rate
    ``lam_j`` it is the share ``p_j W_j`` of SITA's class ``j`` in the mean wait.
    """
    return lam * m2 / (2 * (1 - rho))


def pollaczek_khinchine(lam: sp.Expr = LAM, m1: sp.Expr = M1, m2: sp.Expr = M2,
                        rho: sp.Expr = RHO) -> sp.Expr:
    """Mean M/G/1-FCFS response time ``m_1 + lam m_2/(2(1 - rho))``.

    :func:`verify_mg1_value` shows that it is the constant ``g`` of the one-server Bellman
    equation with the value :func:`mg1_value`.
    """
    return m1 + mg1_wait(lam, m2, rho)


def verify_mg1_value() -> dict[str, Any]:
    """Check ``v(u) + g = E_A[(u - A)^+ + E X + v((u - A)^+ + X)]`` for one server.

    ``A ~ Exp(lam)``, ``X`` with moments ``m_1 = rho/lam`` and ``m_2``, ``0 < rho < 1``.  The
    expectation over ``A`` is ``int_0^u lam e^{-lam t} h(u - t) dt + e^{-lam u} h(0)`` with
    ``h(y) = y + m_1 + c (y^2 + 2 y m_1 + m_2)``.

    Returns
    -------
    dict
        ``residual`` (right side minus ``v(u)``, simplified), ``residual_depends_on_u``,
        ``g`` and ``g_is_pollaczek_khinchine`` (``g = rho/lam + lam m_2/(2(1 - rho))``).
    """
    return dict(_verify_mg1_value())


@functools.lru_cache(maxsize=1)
def _verify_mg1_value() -> dict[str, Any]:
    """The sympy work of :func:`verify_mg1_value`, done once per process."""
    c = sp.Symbol("c", positive=True)
    y = sp.Symbol("y", nonnegative=True)
    h = y + M1 + c * (y ** 2 + 2 * y * M1 + M2)
    expectation = sp.integrate(sp.expand(LAM * sp.exp(-LAM * T) * h.subs(y, U - T)), (T, 0, U)) \
        + sp.exp(-LAM * U) * h.subs(y, 0)
    # c = lam/(2(1 - rho)) with rho = lam m_1 < 1: write m_1 = rho/lam
    value = (LAM / (2 * (1 - RHO)))
    residual = sp.simplify(sp.expand(expectation - c * U ** 2).subs(c, value).subs(M1, RHO / LAM))
    pk = pollaczek_khinchine().subs(M1, RHO / LAM)
    return {"residual": residual, "residual_depends_on_u": residual.has(U),
            "g": residual, "g_is_pollaczek_khinchine": sp.simplify(residual - pk) == 0}


def fpi_index(lam_i: sp.Expr = LAM_I, rho_i: sp.Expr = RHO_I) -> sp.Expr:
    """``a_i(u, x) = u + x + v_i(u + x) - v_i(u)`` with the M/G/1 value of server ``i``, factored.

    Equals ``u + x + lam_i x (2u + x)/(2(1 - rho_i))``.
    """
    v = mg1_value(lam_i, rho_i)
    return sp.factor(v.subs(U, U + X) - v) + U + X


def tail_curvature(lam_i: sp.Expr = LAM_I, rho_i: sp.Expr = RHO_I) -> sp.Expr:
    """The coefficient ``c_M = lam_i/(2(1 - rho_i))`` of ``u^2`` in the M/G/1 value of one server.

    With the rate ``lam_i = lam/m`` and load ``rho_i = rho`` of an equal random split it is the
    curvature of the fixed analytic tail ``v(U + s, y) = v(U, y) + c_M((U + s)^2 - U^2)`` of value
    iteration beyond the truncation ``U`` (Hyytiä & Righter, arXiv 2402.08142, Part 1, on the
    truncation of the state space).
    """
    return sp.expand(mg1_value(lam_i, rho_i)).coeff(U, 2)


def fpi_from_rnd_is_lwl() -> bool:
    """True if sympy proves ``d a(u, x)/du > 0`` for ``0 < rho < 1``: FPI(RND) = LWL (Hyytiä 2013).

    With an equal random split every server has the same ``lam_i = lam/m`` and ``rho_i = rho``,
    so the FPI index is one increasing function of the backlog and its argmin is the least
    backlog.
    """
    lam_i = sp.Symbol("lambda_i", positive=True)
    s = sp.Symbol("s", positive=True)  # rho = 1/(1 + s) ranges over (0, 1)
    derivative = sp.diff(fpi_index(lam_i, 1 / (1 + s)), U)
    return bool(sp.simplify(derivative).is_positive)


@functools.cache
def mean_response_fn() -> CompiledFunction:
    """Compiled :func:`pollaczek_khinchine`: ``(m_1, lambda, m_2, rho) -> E[T]``."""
    return compile(pollaczek_khinchine(), (M1, LAM, M2, RHO))


@functools.cache
def wait_fn() -> CompiledFunction:
    """Compiled :func:`mg1_wait`: ``(lambda, m_2, rho) -> E[W]`` (vectorised over classes)."""
    return compile(mg1_wait(), (LAM, M2, RHO))


@functools.cache
def fpi_index_fn() -> CompiledFunction:
    """Compiled :func:`fpi_index`: ``(u, x, lambda_i, rho_i) -> a_i(u, x)``."""
    return compile(fpi_index(LAM_I, RHO_I), (U, X, LAM_I, RHO_I))


@functools.cache
def tail_curvature_fn() -> CompiledFunction:
    """Compiled :func:`tail_curvature`: ``(lambda_i, rho_i) -> c_M``."""
    return compile(tail_curvature(), (LAM_I, RHO_I))


def bellman_equations(m: int = 2) -> tuple[sp.Eq, sp.Eq]:
    """Pre- and post-assignment average-cost Bellman equations per arrival."""
    u = sp.symbols(f"u_1:{m + 1}", nonnegative=True)
    w, v = sp.Function("w"), sp.Function("v")
    A = sp.Symbol("A", positive=True)
    E_X, E_A = sp.Function("E_X"), sp.Function("E_A")
    choices = []
    for i in range(m):
        after = [u[j] + X if j == i else u[j] for j in range(m)]
        choices.append(u[i] + X + v(*after))
    pre = sp.Eq(w(*u), E_X(sp.Min(*choices)) - G)
    drained = [sp.Max(uj - A, 0) for uj in u]
    post = sp.Eq(v(*u), E_A(w(*drained)))
    return pre, post


def derivation() -> Derivation:
    """The derivation printed by ``symq derive hyytia-righter``."""
    der = Derivation(
        title="Optimal size-aware dispatching: Bellman equations and closed-form values",
        source=("E. Hyytiä, R. Righter, arXiv 2402.08142 (2024); Hyytiä, Penttinen, Aalto, "
                "EJOR 2012"),
        summary="$m$ FCFS servers, Poisson arrivals, sizes known at dispatch; state = backlogs "
                "$u$; a job sent to server $i$ has response time $u_i + x$.",
    )
    pre, post = bellman_equations(2)
    der.add("Pre-assignment value (two servers)", pre,
            "$g$ is the optimal mean response time per job; $v(0) = 0$ fixes the constant.")
    der.add("Post-assignment value", post,
            r"$A \sim \mathrm{Exp}(\lambda)$ is the time to the next arrival.")
    der.add("M/G/1 relative value", sp.Eq(sp.Function("v")(U), mg1_value()),
            r"Depends on the size law only through $\rho = \lambda E[X]$.")
    m = sp.Symbol("m", positive=True)
    curvature = sp.factor(tail_curvature(LAM / m, RHO))
    der.add("Curvature of the analytic tail beyond U", sp.Eq(sp.Symbol("c_M"), curvature),
            "The $u^2$ coefficient of the M/G/1 value of one server under an equal random split "
            r"($\lambda_i = \lambda/m$, $\rho_i = \rho$); value iteration continues $v$ beyond "
            "the truncation $U$ by $c_M((U + s)^2 - U^2)$, and the lookup policy uses the same "
            "tail.")
    check = verify_mg1_value()
    pk = ("equals the Pollaczek-Khinchine mean response time" if check["g_is_pollaczek_khinchine"]
          else "differs from the Pollaczek-Khinchine mean response time")
    der.add("Residual of the one-server Bellman equation with this v", check["residual"],
            r"sympy: the $e^{-\lambda u}$ terms cancel and the residual is a constant; sympy "
            rf"checks that it {pk} $m_1 + \lambda m_2/(2(1 - \rho))$, $m_1 = \rho/\lambda$.")
    der.add("Mean response time of a static split", sp.Eq(sp.Symbol("E[T]"),
                                                          pollaczek_khinchine()),
            "Pollaczek-Khinchine for one M/G/1 server; the exact values of RND (each server "
            r"has rate $\lambda/m$ and load $\rho$) and SITA (server $j$ has the sizes of class "
            r"$j$; its share of the mean wait is $\lambda_j E[X^2; j]/(2(1 - \rho_j))$) "
            "evaluate it.")
    der.add("First-policy-iteration index", sp.Eq(sp.Function("a_i")(U, X), fpi_index()),
            "$u + x + v_i(u + x) - v_i(u)$ with the M/G/1 value of server $i$ under a static "
            "split.")
    proved = ("sympy proves $da/du > 0$" if fpi_from_rnd_is_lwl() else
              "sympy cannot prove $da/du > 0$")
    der.add("FPI from an equal random split",
            sp.Eq(sp.Function("FPI")(sp.Symbol("RND")), sp.Symbol("LWL"), evaluate=False),
            rf"All servers share $\lambda_i$ and $\rho_i$; {proved}, so "
            r"$\arg\min_i a(u_i, x) = \arg\min_i u_i$: least work left.")
    return der
