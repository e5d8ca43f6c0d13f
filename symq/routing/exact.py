r"""Exact evaluation of the closed forms on a concrete farm: piecewise loads and KKT residuals.

The closed forms of :mod:`symq.routing.symbolic` (social optimum, Wardrop equilibrium) are
evaluated in exact arithmetic (rationals and radicals) on the prefix aggregates of every active
prefix of a concrete farm:

* :func:`piecewise_loads` gives the loads as ``Piecewise`` functions of the total work rate
  :math:`\rho`, glued at the exact entry thresholds;
* :func:`kkt_residuals` gives the exact residuals of the KKT conditions of the social optimum
  (paper, centralised-routing section) or of the Wardrop conditions (decentralised-routing
  section) at a load vector, and :func:`exact_zero` decides whether an algebraic number is 0.

Examples
--------
>>> pw = piecewise_loads([4, 2, 1], [1, 2, 4])
>>> pw.at(5, "optimal")
(10/3, 4/3, 1/3)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.result import Exactness, ResultBase

from .farm import ServerFarm
from .symbolic import C_j, Sigma_C, Sigma_s, Sigma_w, c, closed_forms, r_next, rho, t, w_j, x_j

__all__ = ["PiecewiseLoads", "piecewise_loads", "kkt_residuals", "kkt_holds_exactly", "exact_zero"]


def _exact(name: str, value: Any) -> sp.Expr:
    """An exact sympy number: ints and Fractions exactly, floats by their decimal repr."""
    if isinstance(value, sp.Basic):
        if not value.is_number or not value.is_real:
            raise InvalidParameter(name, value, "a real number")
        return value
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        return sp.Integer(int(value))
    if isinstance(value, (numbers.Real, np.floating)) and not isinstance(value, bool):
        return sp.Rational(repr(float(value)))
    raise InvalidParameter(name, value, "a real number")


def _exact_farm(C: Sequence[Any], w: Sequence[Any]) -> tuple[list[sp.Expr], list[sp.Expr]]:
    Cx = [_exact(f"C[{k}]", v) for k, v in enumerate(C)]
    wx = [_exact(f"w[{k}]", v) for k, v in enumerate(w)]
    ServerFarm([float(v) for v in Cx], [float(v) for v in wx])   # positivity, lengths
    return Cx, wx


@dataclass(frozen=True)
class PiecewiseLoads(ResultBase):
    """Exact loads of a concrete farm as ``Piecewise`` functions of the total work rate.

    Attributes
    ----------
    rho : sympy.Symbol
        The work-rate symbol.
    order : tuple of int
        Servers sorted by ``r_j = w_j / C_j`` (stable).
    thresholds_optimal, thresholds_equilibrium : tuple of sympy.Expr
        ``theta_1 .. theta_{K-1}``: the (m+1)-th server of ``order`` is used iff rho > theta_m.
    pieces_optimal, pieces_equilibrium : tuple of tuple of sympy.Expr
        ``pieces[m-1]`` are the loads (original server order) when the first m servers of
        ``order`` are used.
    optimal, equilibrium : tuple of sympy.Piecewise
        One ``Piecewise`` per server (original order) over ``0 < rho < sum(C)``.
    method : str
        ``"closed form (piecewise in rho)"``.
    exactness : Exactness
        ``exact``: sympy expressions with exact coefficients.
    """

    summary: ClassVar[tuple[str, ...]] = ("order", "thresholds_optimal", "thresholds_equilibrium")

    rho: sp.Symbol
    order: tuple[int, ...]
    thresholds_optimal: tuple[sp.Expr, ...]
    thresholds_equilibrium: tuple[sp.Expr, ...]
    pieces_optimal: tuple[tuple[sp.Expr, ...], ...]
    pieces_equilibrium: tuple[tuple[sp.Expr, ...], ...]
    optimal: tuple[sp.Expr, ...]
    equilibrium: tuple[sp.Expr, ...]
    method: str = "closed form (piecewise in rho)"
    exactness: Exactness = Exactness.EXACT

    def at(self, value: Any, kind: str = "optimal") -> tuple[sp.Expr, ...]:
        """Exact loads at ``rho = value`` (a rational is kept exact).

        Parameters
        ----------
        value : number
            Total work rate, ``0 < value < sum(C)``.
        kind : {"optimal", "equilibrium"}
        """
        exact = _exact("rho", value)
        loads = self.optimal if _kind(kind) == "optimal" else self.equilibrium
        return tuple(load.subs(self.rho, exact) for load in loads)


def _kind(kind: str) -> str:
    if kind not in ("optimal", "equilibrium"):
        raise InvalidParameter("kind", kind, "one of optimal, equilibrium")
    return kind


def piecewise_loads(C: Sequence[Any], w: Sequence[Any], rho_symbol: sp.Symbol | None = None
                    ) -> PiecewiseLoads:
    r"""Exact piecewise-linear loads of a concrete farm, for the optimum and the equilibrium.

    The closed forms of :func:`~symq.routing.symbolic.closed_forms` are evaluated on the exact
    prefix aggregates of every active prefix; the pieces are glued at the exact thresholds (loads
    are linear in :math:`\rho` between consecutive thresholds, and adjacent pieces agree at
    them).

    Parameters
    ----------
    C, w : sequence of numbers
        Capacities and holding costs (ints, Fractions, sympy numbers kept exact; floats are
        read through their decimal representation).
    rho_symbol : sympy.Symbol, optional
        The work-rate symbol (default: the model's ``rho``).

    Returns
    -------
    PiecewiseLoads

    Examples
    --------
    >>> pw = piecewise_loads([1, 1], [1, 4])
    >>> pw.thresholds_optimal, pw.thresholds_equilibrium
    ((1/2,), (3/4,))
    """
    Cx, wx = _exact_farm(C, w)
    var = rho if rho_symbol is None else rho_symbol
    forms = closed_forms()
    K = len(Cx)
    r = [wx[k] / Cx[k] for k in range(K)]
    order = tuple(sorted(range(K), key=lambda k: r[k]))
    s = [sp.sqrt(wx[k] * Cx[k]) for k in range(K)]
    pieces_opt, pieces_ne, th_opt, th_ne = [], [], [], []
    SC = Ss = Sw = sp.Integer(0)
    for m in range(1, K + 1):
        k_new = order[m - 1]
        SC, Ss, Sw = SC + Cx[k_new], Ss + s[k_new], Sw + wx[k_new]
        prefix = order[:m]
        t_m = forms.opt_t.subs({Sigma_C: SC, Sigma_s: Ss, rho: var})
        c_m = forms.ne_c.subs({Sigma_C: SC, Sigma_w: Sw, rho: var})
        opt_loads = [sp.Integer(0)] * K
        ne_loads = [sp.Integer(0)] * K
        for k in prefix:
            opt_loads[k] = sp.expand(forms.opt_load.subs({C_j: Cx[k], w_j: wx[k], t: t_m}))
            ne_loads[k] = sp.expand(forms.ne_load.subs({C_j: Cx[k], w_j: wx[k], c: c_m}))
        pieces_opt.append(tuple(opt_loads))
        pieces_ne.append(tuple(ne_loads))
        if m < K:
            r_up = r[order[m]]
            th_opt.append(sp.radsimp(forms.opt_threshold.subs({Sigma_C: SC, Sigma_s: Ss,
                                                                r_next: r_up})))
            th_ne.append(sp.simplify(forms.ne_threshold.subs({Sigma_C: SC, Sigma_w: Sw,
                                                              r_next: r_up})))

    def glue(pieces: list[tuple[sp.Expr, ...]], thresholds: list[sp.Expr]) -> tuple[sp.Expr, ...]:
        out = []
        for k in range(K):
            args = [(pieces[m][k], sp.Le(var, thresholds[m])) for m in range(K - 1)]
            args.append((pieces[K - 1][k], True))
            out.append(sp.Piecewise(*args))
        return tuple(out)

    return PiecewiseLoads(
        rho=var, order=order, thresholds_optimal=tuple(th_opt), thresholds_equilibrium=tuple(th_ne),
        pieces_optimal=tuple(pieces_opt), pieces_equilibrium=tuple(pieces_ne),
        optimal=glue(pieces_opt, th_opt), equilibrium=glue(pieces_ne, th_ne),
    )


_X = sp.Dummy("X")


def _as_number(value: Any) -> sp.Expr:
    """A sympy number from a sympy expression, an int, a Fraction or a float; never from text.

    Text is refused (``sympify`` of a string would parse it: DESIGN.md, Security).
    """
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Rational, float,
                                                                     np.integer, np.floating)):
        raise InvalidParameter("value", value, "a sympy expression or a real number (not text)")
    if isinstance(value, (numbers.Rational, np.integer)):
        fraction = Fraction(int(value)) if isinstance(value, np.integer) else Fraction(value)
        return sp.Rational(fraction.numerator, fraction.denominator)
    return sp.Float(float(value))


def exact_zero(value: Any) -> bool:
    """Whether a number built from rationals and radicals is exactly zero.

    A 30-digit evaluation screens out non-zero values; a candidate zero is then proved by
    cancellation (radicals as independent generators) or, failing that, by its minimal
    polynomial being ``X`` (rigorous for algebraic numbers).

    Parameters
    ----------
    value : sympy.Expr
        The number (an expression free of symbols).
    """
    value = _as_number(value)
    if value.is_Rational:
        return bool(value == 0)
    if value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        return False
    if not value.is_number:
        return bool(sp.simplify(value) == 0)
    approx = value.evalf(30)
    if approx.is_Number and abs(approx) > sp.Float("1e-20"):
        return False
    if sp.cancel(sp.together(value)) == 0:
        return True
    return sp.minimal_polynomial(value, _X) == _X


def kkt_residuals(C: Sequence[Any], w: Sequence[Any], rho_value: Any, loads: Sequence[Any],
                  kind: str = "optimal") -> list[sp.Expr]:
    r"""Exact residuals of the KKT (or Wardrop) conditions at a load vector, in sympy.

    For ``kind="optimal"`` the per-server function is the marginal cost
    :math:`g_j = w_j C_j/(C_j - x_j)^2` (paper, centralised-routing section); for
    ``"equilibrium"`` it is the selfish cost :math:`g_j = w_j/(C_j - x_j)` (Wardrop conditions,
    paper, decentralised-routing section).  With
    :math:`\mu` the value of :math:`g` on the first used server, the residuals are

    * :math:`\sum_j x_j - \rho` (work conservation),
    * :math:`g_j - \mu` for every other used server (stationarity),
    * :math:`\max(0, \mu - w_j/C_j)` for every unused server (dual feasibility),
    * :math:`\max(0, -x_j)` for every server, and :math:`\infty` for a server with
      :math:`x_j \ge C_j` (bounds; the stationarity residuals are then omitted),

    each simplified exactly.  All are zero iff the loads are the optimum (equilibrium).

    Parameters
    ----------
    C, w : sequence of numbers
        The farm (kept exact, see :func:`piecewise_loads`).
    rho_value : number
        Total work rate.
    loads : sequence of numbers or sympy expressions
        The loads to check.
    kind : {"optimal", "equilibrium"}

    Returns
    -------
    list of sympy.Expr
    """
    Cx, wx = _exact_farm(C, w)
    if len(loads) != len(Cx):
        raise InvalidParameter("loads", loads, f"a vector of length {len(Cx)}")
    forms = closed_forms()
    g = forms.marginal_cost if _kind(kind) == "optimal" else forms.selfish_cost
    rv = _exact("rho", rho_value) if not isinstance(rho_value, sp.Symbol) else rho_value
    x = [_exact(f"loads[{k}]", v) if not isinstance(v, sp.Basic) else v
         for k, v in enumerate(loads)]
    used = [k for k in range(len(x)) if not exact_zero(x[k])]
    feasible = [_positive(Cx[k] - x[k]) for k in range(len(x))]
    residuals: list[sp.Expr] = [sum(x) - rv]
    for k in range(len(x)):   # bounds 0 <= x_k < C_k
        residuals.append(sp.Integer(0) if k not in used or _positive(x[k]) else -x[k])
        residuals.append(sp.Integer(0) if feasible[k] else sp.oo)
    if used and all(feasible):
        value = [g.subs({C_j: Cx[k], w_j: wx[k], x_j: x[k]}) for k in range(len(x))]
        ref = value[used[0]]
        residuals += [value[k] - ref for k in used[1:]]
        for k in range(len(x)):
            if k not in used:   # dual feasibility: r_k >= mu
                gap = ref - wx[k] / Cx[k]
                residuals.append(sp.Integer(0) if exact_zero(gap) or not _positive(gap) else gap)
    return [sp.Integer(0) if exact_zero(res) else res for res in residuals]


def _positive(value: sp.Expr) -> bool:
    """Whether an algebraic number is > 0 (exact zero test, then a 30-digit sign)."""
    return not exact_zero(value) and bool(_as_number(value).evalf(30) > 0)


def kkt_holds_exactly(C: Sequence[Any], w: Sequence[Any], rho_value: Any, loads: Sequence[Any],
                      kind: str = "optimal") -> bool:
    """Whether every residual of :func:`kkt_residuals` is exactly zero."""
    return all(res == 0 for res in kkt_residuals(C, w, rho_value, loads, kind))
