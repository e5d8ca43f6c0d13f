"""The derivation of the window model printed by ``symq derive awp`` (``derivations/awp.md``).

Altman, Avrachenkov, Kherani, Prabhu (IEEE INFOCOM 2005) set up the window process and its
stationary Kolmogorov equation in their Section II; the rest of the record is symq's own
derivation of what its solvers use, each formula produced by sympy
(:mod:`symq.window.symbolic`):

* *Model and stationary Kolmogorov equation*: level crossing, its delay-differential form, the
  mean drift balance;
* *Power-law class*: the exact loss cycle (cumulative hazard, next pre-loss window, cycle
  integrals), the q-series law of the pre-loss window (Dumas, Guillemin, Robert 2002) and the
  time averages by Palm inversion;
* *Stability*: the drift of ``ln W`` and its limits for the power-law class;
* *Multiplicative increase, constant losses and a floor*: the exponent ``theta`` and the Pareto
  law;
* *General profiles*: the embedded post-loss chain and Palm inversion of the numerical solver.

Docstrings of :mod:`symq.window` cite these sections by name.
"""

from __future__ import annotations

import sympy as sp

from symq.core.derivation import Derivation
from symq.core.printing import latex

from .protocol import W, newreno
from .symbolic import (
    F,
    U,
    delay_equation,
    kolmogorov_equation,
    log_drift,
    mimd_floor_law,
    power_law_cycle,
    power_law_palm,
    power_law_series,
    power_law_stability,
)

__all__ = ["derivation"]


def _model(der: Derivation) -> None:
    der.section("Model and stationary Kolmogorov equation (paper, Section II)")
    a, lam = sp.Function("a"), sp.Function("lambda")
    generic = sp.Eq(a(W) * F(W), sp.Integral(lam(U) * F(U), (U, W, sp.Function("d^{-1}")(W))))
    der.add("Stationary Kolmogorov equation (level crossing)", generic,
            "The rate of up-crossings of level $w$ (the drift $a(w)$ times the density) equals "
            "the rate of losses from windows $u > w$ that land at or below $w$.")
    tcp = newreno(sp.Rational(1, 10 ** 4))
    der.add("NewReno (a = 1, λ = p w, d = w/2), p = 1e-4", kolmogorov_equation(tcp),
            r"The upper limit $w/\beta = 2w$ comes from sympy's inversion of $d$.")
    der.add("Delay-differential form", delay_equation(tcp), "Differentiate in w.")
    der.add("Mean drift balance", sp.Eq(sp.Function("E")(a(W)),
                                        sp.Function("E")(lam(W) * sp.Function("b")(W) * W)),
            "Taking expectations of the generator applied to $g(w) = w$.")


def _power_law(der: Derivation) -> None:
    der.section("Power-law class: exact loss cycle and q-series law")
    cycle = power_law_cycle()
    y = sp.Symbol("y", positive=True)
    der.add("Cumulative loss hazard over a cycle",
            sp.Eq(sp.Function("Lambda")(W) - sp.Function("Lambda")(y), cycle["hazard"]),
            r"$a = \alpha w^k$, $\lambda = \gamma w^l$, $d = \beta w$, $m = l - k + 1 \ne 0$: "
            r"the integral of $\lambda/a$ from the post-loss window $y$.")
    der.add("Next pre-loss window",
            [sp.Eq(sp.Symbol("W_pre"), cycle["pre_loss"]),
             sp.Eq(sp.Symbol("W_pre"), cycle["pre_loss_m0"])],
            "The loss hazard accumulated over a cycle is an Exp(1) draw $E$: sympy solves "
            r"$\Lambda(W_{pre}) - \Lambda(y) = E$ (first line $m \ne 0$, second $m = 0$).  The "
            "simulator samples cycles exactly with these roots.")
    der.add("Time and areas of a cycle",
            sp.Eq(sp.Integral(sp.Symbol("u") ** (sp.Symbol("e") - 1) / sp.Symbol("alpha"),
                              (sp.Symbol("u"), y, sp.Symbol("W_pre"))),
                  cycle["integral"].subs(W, sp.Symbol("W_pre"))),
            "The window spends $du/a(u)$ near $u$: $e = 1 - k$ gives the cycle length, "
            "$e = 2 - k$ and $3 - k$ the integrals of $W$ and $W^2$ over the cycle.")
    series = power_law_series()
    der.add("Pre-loss recursion (ARMA)", [series["U"], series["scale"], series["recursion"]],
            r"With $y = \beta W_{pre}$ of the previous cycle, $U = \mu_0 W_{pre}^m$ follows "
            r"$U' = q U + E$ with $q = \beta^m$ (Dumas, Guillemin, Robert, Adv. Appl. Prob. 34, "
            r"2002): $U = \sum_j q^j E_j$.")
    der.add("Survival function of U", [series["survival"], series["coefficients"]],
            "A sum of independent exponentials of rates $q^{-j}$ (hypoexponential law); the "
            "coefficients $c_j$ sum to 1.")
    palm = power_law_palm()
    der.add("Time averages by Palm inversion", [palm["cycle"], palm["I"], palm["moment"]],
            r"Integral of $W^s$ over a stationary cycle ($e = s - k + 1$, $y = \beta W_{pre}$ in "
            r"law) divided by the mean cycle length ($s = 0$); $I(0) = \ln(1/\beta)$.")


def _stability(der: Derivation) -> None:
    der.section("Stability: the drift of ln W")
    der.add("Generator applied to ln w", sp.Eq(sp.Symbol("L ln w"), log_drift()),
            r"$L g = a g' + \lambda (g(d) - g)$.  Without a cap the window escapes when "
            r"$\lim a/(w \lambda) > \lim \ln(w/d)$ as $w \to \infty$; without a floor it "
            r"collapses when $\lim a/(w \lambda) < \lim \ln(w/d)$ as $w \to 0$.  "
            r"$E[L \ln W] = 0$ is the log-drift balance of a stationary law.")
    law = power_law_stability()
    index = sp.Symbol("a") / (W * sp.Symbol("lambda"))
    der.add("Stability index of the power-law class", sp.Eq(index, law["index"], evaluate=False),
            r"$a = \alpha w^k$, $\lambda = \gamma w^l$, $d = \beta w$; the window is pulled "
            r"back at infinity iff this limit is below $\ln(1/\beta) = "
            + latex(law["threshold"]) + "$.")
    der.add("Limits for m = l - k + 1 = 1, 0, -1",
            sp.Tuple(law["m = 1"], law["m = 0"], law["m = -1"]),
            "$m > 0$: stable (NewReno, Scalable with per-packet losses); $m = 0$: stable iff "
            r"$\alpha < \gamma \ln(1/\beta)$ and a floor exists (Scalable with time-based "
            "losses); $m < 0$: transient.")


def _mimd_floor(der: Derivation) -> None:
    der.section("Multiplicative increase, constant losses and a floor")
    law = mimd_floor_law()
    der.add("Level crossing in log scale", law["level_crossing"],
            r"$Z = \ln(W/w_{min})$ grows at speed $a$, a loss subtracts $\ln(1/\beta)$, "
            "reflected at 0 (a Lindley recursion, the workload of a D/M/1-type queue); the trial "
            r"density $\theta e^{-\theta z}$.")
    der.add("Exponent of the stationary law", law["theta"],
            r"Dividing out $e^{-\theta z}$: a positive root exists iff "
            r"$\lambda \ln(1/\beta) > a$.")
    der.add("Pareto moments", law["moment"],
            r"$W = w_{min} e^Z$: $E[W^s]$ is finite iff $s < \theta$; the mean exists iff "
            r"$\theta > 1$, i.e. $a < \lambda (1 - \beta)$.")


def _general(der: Derivation) -> None:
    der.section("General profiles: embedded post-loss chain and Palm inversion")
    lam_h = sp.Function("Lambda")
    u, y = sp.Symbol("u", positive=True), sp.Symbol("y", positive=True)
    prob = sp.Function("P_y")
    der.add("Pre-loss window given the post-loss window",
            sp.Eq(prob(sp.Symbol("W_pre") > u), sp.exp(-(lam_h(u) - lam_h(y)))),
            r"$P_y$ is the probability given the post-loss window $Y = y$, for $u \ge y$, with "
            r"the cumulative hazard $\Lambda(w) = \int^w \lambda/a$; the next post-loss window "
            r"is $\max(d(W_{pre}), w_{min})$.  Exact sampling: "
            r"$W_{pre} = \Lambda^{-1}(\Lambda(y) + E)$.")
    cdf_pre, cdf_post = sp.Function("F"), sp.Function("G")
    a, e0t = sp.Function("a"), sp.Function("E_0")(sp.Symbol("T"))
    der.add("Palm inversion",
            sp.Eq(sp.Function("f")(W), (cdf_post(W) - cdf_pre(W)) / (a(W) * e0t)),
            "$F$ and $G$ are the Palm cdfs of the window just before and just after a loss, "
            "$E_0[T]$ the mean time between losses: the density of the time-stationary window.")


def derivation() -> Derivation:
    """The derivation printed by ``symq derive awp``."""
    der = Derivation(
        title="Adaptive window protocols under window-dependent losses",
        source="E. Altman, K. Avrachenkov, A. Kherani, B. Prabhu, IEEE INFOCOM 2005",
        summary=r"$dW/dt = a(W)$ between losses; losses at rate $\lambda(W)$; a loss takes $W$ "
                "to $d(W) = (1 - b(W)) W$; time in round-trip times.",
    )
    for part in (_model, _power_law, _stability, _mimd_floor, _general):
        part(der)
    return der
