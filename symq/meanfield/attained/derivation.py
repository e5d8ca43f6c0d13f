"""Symbolic steps of the attained-service analysis (Hellemans & Van Houdt, IEEE/ACM ToN 2021).

Three facts the cavity analysis rests on, derived and checked with sympy:

1. the arrival rate of a busy class under a ranking with uniform ties,
   ``lam d sum_i C(d-1, i) w^i v^(d-1-i)/(i+1) = lam ((v+w)^d - v^d)/w`` (the authors'
   ``find_lambdas.m``), and its SQ(d) special case;
2. the mean residual life ``E[X - a | X > a]`` of the two-phase hyperexponential, which is
   nondecreasing in the age ``a`` (why a long-running job signals a long residual, and why
   LEW(d) differs from SQ(d) only when sizes are not exponential);
3. the per-layer dynamics ``exp((L (+) A) Delta) = exp(L Delta) (x) exp(A Delta)`` (Kronecker
   sum of commuting terms), which the solver uses.

The solver keeps fast numeric forms of these (:func:`~symq.meanfield.probes.probe_polynomial`,
:func:`~symq.meanfield.attained.policies.mean_residual_life` for any phase-type law, the
uniformised birth-process exponential); tests compare them with the compiled forms of the
expressions below at random points.

Examples
--------
>>> class_rate_identity(4)
True
>>> d = derivation()
>>> "Class arrival rate" in d.to_markdown()
True
"""

from __future__ import annotations

import sympy as sp

from symq.core.derivation import Derivation

__all__ = ["class_rate_sum", "class_rate_closed_form", "class_rate_identity",
           "h2_mean_residual_life", "h2_mrl_derivative_numerator", "derivation"]

LAM, V, W = sp.symbols("lambda v w", positive=True)
AGE = sp.Symbol("a", nonnegative=True)
P_BRANCH = sp.Symbol("p", positive=True)
MU1, MU2 = sp.symbols("mu_1 mu_2", positive=True)


def class_rate_sum(d: int) -> sp.Expr:
    """``lam d sum_{i=0}^{d-1} C(d-1, i) w^i v^(d-1-i) / (i+1)``: the arrival rate per unit mass.

    A tagged server of class ``c`` is probed ``i + 1`` times out of ``d`` or once among ``i + 1``
    probes of the same score; ``w`` is the mass of its score, ``v`` the mass of worse scores
    (every other probe must land there).
    """
    i = sp.Symbol("i", integer=True, nonnegative=True)
    return LAM * d * sp.summation(sp.binomial(d - 1, i) * W ** i * V ** (d - 1 - i) / (i + 1),
                                  (i, 0, d - 1))


def class_rate_closed_form(d: int | sp.Expr) -> sp.Expr:
    """``lam ((v + w)^d - v^d)/w`` (Hellemans & Van Houdt 2021, ``find_lambdas.m``)."""
    return LAM * ((V + W) ** d - V ** d) / W


def class_rate_identity(d: int) -> bool:
    """Whether sympy proves :func:`class_rate_sum` ``==`` :func:`class_rate_closed_form` for
    ``d``."""
    return sp.simplify(sp.expand(class_rate_sum(d) - class_rate_closed_form(d))) == 0


def h2_mean_residual_life() -> sp.Expr:
    """``E[X - a | X > a]`` of H2: ``(p e^{-mu1 a}/mu1 + (1-p) e^{-mu2 a}/mu2) / P(X > a)``."""
    s1, s2 = P_BRANCH * sp.exp(-MU1 * AGE), (1 - P_BRANCH) * sp.exp(-MU2 * AGE)
    return (s1 / MU1 + s2 / MU2) / (s1 + s2)


def h2_mrl_derivative_numerator() -> sp.Expr:
    """Numerator of ``d/da E[X - a | X > a]`` for H2, simplified.

    sympy returns ``-p (p - 1) (mu1 - mu2)^2`` times a positive exponential factor, which is
    ``>= 0`` for ``0 < p < 1`` (the denominator is a square).
    """
    mrl = h2_mean_residual_life()
    num, _den = sp.fraction(sp.together(sp.diff(mrl, AGE)))
    return sp.factor(sp.simplify(num))


def derivation() -> Derivation:
    """The derivation printed by ``symq derive attained-service``."""
    der = Derivation(
        title="Load balancing with attained-service reporting: the cavity analysis",
        source="T. Hellemans, B. Van Houdt, IEEE/ACM Transactions on Networking (2021), "
               "arXiv 2011.08250",
        summary="A dispatcher probes $d$ servers (with replacement); each reports its queue "
                "length $l$ and the age layer $k$ of its job in service; the job joins the probed "
                r"server with the smallest score $\xi(k, l)$, idle servers first, ties uniformly "
                "at random.",
    )
    d = sp.Symbol("d", integer=True, positive=True)
    failed = [k for k in range(1, 9) if not class_rate_identity(k)]
    checked = ("the difference simplifies to $0$ for every one" if not failed else
               "it does not hold for " + ", ".join(f"$d = {k}$" for k in failed))
    der.add("Class arrival rate",
            sp.Eq(sp.Symbol("lambda_c"), class_rate_closed_form(d)),
            "$w$ = mass of the busy cells with the score of class $c$, $v$ = mass of the cells "
            "with a larger score.  sympy checks the sum over the number of probes landing in the "
            rf"class against this closed form for $d = 1, \dots, 8$: {checked}.")
    u_l, u_next = sp.symbols("u_l u_{l+1}", positive=True)
    sq = sp.simplify(class_rate_closed_form(d).subs({W: u_l - u_next, V: u_next}))
    der.add("SQ(d) special case", sp.Eq(sp.Symbol("lambda_l"), sq),
            "Classes are queue lengths: $w = u_l - u_{l+1}$, $v = u_{l+1}$, with "
            r"$u_l = P(Q \ge l)$.")
    der.add("Mean residual life of H2", sp.Eq(sp.Symbol("m(a)"), h2_mean_residual_life()),
            "The LEW(d) score is $m(b_k) + (l - 1) E[X]$ with $b_k$ the lower boundary of layer "
            "$k$.")
    der.add("Its derivative has the sign of", h2_mrl_derivative_numerator(),
            "Nonnegative: the residual grows with the age (decreasing failure rate), so an old "
            r"job signals a long residual; for $\mu_1 = \mu_2$ (exponential) it vanishes and "
            "LEW(d) ranks like SQ(d).")
    der.add("Dynamics inside one layer",
            sp.Eq(sp.Symbol("Lambda_k"), sp.Symbol(r"e^{L_k \Delta} \otimes e^{A \Delta}")),
            r"The $(l, \text{phase})$ chain has sub-generator $F_k = L_k \oplus A$ (Kronecker "
            "sum, $L_k$ the bidiagonal arrival part); the two terms commute, so the exponential "
            "factorises.")
    return der
