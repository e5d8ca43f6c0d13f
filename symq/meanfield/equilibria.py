"""All equilibria of a polynomial mean-field drift, certified, and a survey of its limit sets.

For a :class:`~symq.meanfield.population.PopulationProcess` whose drift ``F`` is polynomial or
rational in the variables once the parameters are substituted, :func:`equilibria` returns *every*
fixed point ``F(x) = 0`` in a box, with a certificate that none is missed:

1. parameters enter as exact rationals (``sympy.Rational(float)``, the exact binary value);
   each ``F_i = num_i / den_i``;
2. a reduced lex Groebner basis of ``<num_1, ..., num_n>``; by the elimination theorem (Cox,
   Little, O'Shea, *Ideals, Varieties, and Algorithms*, Ch. 3 Section 1 Theorem 2) its last
   element generates the elimination ideal in the last variable.  A system that is not
   zero-dimensional (a continuum of equilibria) is refused;
3. a basis in *shape position* ``{x_i - g_i(t), h(t)}`` gives every solution as ``g(t)`` at a
   root of ``h``.  Otherwise each rational root of the eliminant is substituted and the smaller
   system solved recursively; an irreducible factor of higher degree is adjoined, the ideal made
   radical (Seidenberg's lemma: the square-free parts of the univariate eliminants) and a generic
   linear form ``t = sum c_i x_i`` brings it into shape position (the shape lemma, ibid. Ch. 2-3);
4. real roots of ``h`` are isolated exactly (sympy's intervals on each irreducible factor over
   Q); ``g_i(t)`` is enclosed in 200-bit interval arithmetic (mpmath ``iv``); box membership and
   poles are decided exactly (an irrational algebraic number never equals a rational bound;
   ``den(g(t)) = 0`` iff its remainder modulo the minimal polynomial is 0);
5. each point is polished by Newton and verified by the Krawczyk test ``K(X) in int(X)``
   (a unique zero in ``X``); a multiple equilibrium (singular Jacobian) keeps its algebraic
   enclosure and is flagged.

Equilibria are classified by the eigenvalues of ``DF``: ``"stable"``, ``"unstable"``, ``"saddle"``
or ``"non-hyperbolic"`` (a real part within the tolerance of 0: not guessed).  :func:`limit_sets`
integrates the ODE from a grid of initial states and classifies where each trajectory ends (an
equilibrium, a limit cycle found by recurrence with its period and amplitude, or unresolved): an
approximation of the Birkhoff centre of the mean-field flow, which carries the limits of the
stationary laws of the finite-``N`` chains (Li, "Nonlinear Markov processes in big networks",
Special Matrices 4 (2016) 202-217, section on stability and the Birkhoff centre).

Examples
--------
>>> import sympy as sp
>>> from symq.meanfield import PopulationProcess
>>> x = sp.Symbol("x")
>>> p = PopulationProcess([x])
>>> cubic = -(x - sp.Rational(1, 5)) * (x - sp.Rational(1, 2)) * (x - sp.Rational(4, 5))
>>> p.add_transition([1], cubic + 2 * x)
>>> p.add_transition([-1], 2 * x)
>>> [e.exact[0] for e in equilibria(p).equilibria]
[1/5, 1/2, 4/5]
>>> [e.classification for e in equilibria(p).equilibria]
['stable', 'unstable', 'stable']
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from mpmath.ctx_iv import MPIntervalContext
from numpy.typing import NDArray
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

from symq.core.errors import InvalidParameter, NotConverged, SymqError
from symq.core.result import Exactness, ResultBase

__all__ = ["Equilibrium", "EquilibriumSet", "LimitCycle", "LimitSetSurvey", "equilibria",
           "limit_sets", "NonPolynomialDrift", "ContinuumOfEquilibria"]

_PREC = 200  # bits of the interval enclosures
#: a private interval context at that precision (mpmath.iv's precision is global state)
_IV = MPIntervalContext()
_IV.prec = _PREC
_ROOT_EPS = sp.Rational(1, 10**40)


class NonPolynomialDrift(SymqError, ValueError):
    """The drift is not a rational function of the variables (e.g. it contains ``exp(x)``)."""


class ContinuumOfEquilibria(SymqError, ValueError):
    """The equations ``F(x) = 0`` are not zero-dimensional: the equilibria form a continuum."""


@dataclass(frozen=True)
class Equilibrium(ResultBase):
    """One certified equilibrium ``F(x) = 0``.

    Attributes
    ----------
    x : ndarray
        The equilibrium in floats (Newton-polished).
    exact : tuple of sympy numbers
        Exact coordinates: rationals, or polynomials in a ``CRootOf`` of the eliminant.
    enclosure : ndarray, shape (n, 2)
        A box that certainly contains the equilibrium (the Krawczyk box when ``krawczyk``,
        else the interval enclosure of the algebraic solution, widened to contain ``x``).
    krawczyk : bool
        Whether the Krawczyk test proved a unique zero in ``enclosure`` (false for a multiple
        equilibrium, where ``DF`` is singular).
    residual : float
        ``max_i |F_i(x)|``.
    eigenvalues : ndarray
        Eigenvalues of ``DF(x)``.
    classification : str
        ``"stable"``, ``"unstable"``, ``"saddle"`` or ``"non-hyperbolic"``.
    method : str
    exactness : Exactness
        ``certified``: exact algebraic coordinates and a guaranteed enclosure.
    """

    summary = ("classification", "residual", "krawczyk")
    x: NDArray[np.float64]
    exact: tuple
    enclosure: NDArray[np.float64]
    krawczyk: bool
    residual: float
    eigenvalues: NDArray[np.complex128]
    classification: str
    method: str = ("exact elimination (lex Groebner basis, shape lemma), interval enclosure, "
                   "Newton polish and Krawczyk test")
    exactness: Exactness = Exactness.CERTIFIED


@dataclass(frozen=True)
class EquilibriumSet(ResultBase):
    """Every equilibrium of a polynomial (rational) drift in a box, with its certificate.

    Attributes
    ----------
    equilibria : tuple of Equilibrium
        Sorted lexicographically by ``x``.
    box : ndarray, shape (n, 2)
        The box searched (closed).
    eliminant_degree : int
        Total degree of the univariate polynomials ``h`` of the branches (with multiplicity).
    real_solutions : int
        Real solutions of the numerator system in all of ``R^n``.
    outside_box : int
        Real solutions left out because they lie outside the box.
    at_poles : int
        Real solutions left out because a denominator of ``F`` vanishes there.
    shape_variable : str
        The variables of the ``h`` (``;``-separated): a variable, or ``"t = ..."`` for a generic
        linear form.
    certificate : str
        How completeness is certified.
    seconds : float
        Wall time.
    method : str
    exactness : Exactness
        ``certified``: no equilibrium in the box is missed.
    """

    summary = ("real_solutions", "outside_box", "eliminant_degree")
    equilibria: tuple
    box: NDArray[np.float64]
    eliminant_degree: int
    real_solutions: int
    outside_box: int
    at_poles: int
    shape_variable: str
    certificate: str
    seconds: float
    method: str = ("every real solution of the exact polynomial system (lex Groebner basis, "
                   "exact real-root isolation), certified one by one")
    exactness: Exactness = Exactness.CERTIFIED

    def __len__(self) -> int:
        return len(self.equilibria)

    @property
    def points(self) -> NDArray[np.float64]:
        """The equilibria as an array of shape (m, n)."""
        n = self.box.shape[0]
        return np.array([e.x for e in self.equilibria], dtype=float).reshape(-1, n)


@dataclass(frozen=True)
class LimitCycle(ResultBase):
    """A periodic orbit found by recurrence: period, amplitude (half range per coordinate)."""

    summary = ("period", "amplitude")
    period: float
    amplitude: float
    half_ranges: NDArray[np.float64]
    center: NDArray[np.float64]
    orbit: NDArray[np.float64]
    method: str = "mean-field ODE integrated until the state recurs"
    exactness: Exactness = Exactness.NUMERIC


@dataclass(frozen=True)
class LimitSetSurvey(ResultBase):
    """Where the trajectories from a grid of initial states end: an approximate Birkhoff centre.

    Attributes
    ----------
    equilibria : EquilibriumSet
        The certified equilibria the trajectories are compared with.
    starts : ndarray, shape (m, n)
        The initial states.
    outcomes : tuple of str
        Per start: ``"equilibrium i"``, ``"cycle j"`` or ``"unresolved"``.
    counts : dict
        Number of starts per outcome.
    cycles : tuple of LimitCycle
        The distinct limit cycles found.
    method : str
    exactness : Exactness
        ``numeric`` (the trajectories are integrated; the equilibria are certified).
    """

    summary = ("counts",)
    equilibria: EquilibriumSet
    starts: NDArray[np.float64]
    outcomes: tuple
    counts: dict
    cycles: tuple
    method: str = ("mean-field ODE from a grid of initial states, each end classified against "
                   "the certified equilibria and by recurrence")
    exactness: Exactness = Exactness.NUMERIC


# ---------------------------------------------------------------------- exact system
def _exact(value: float) -> sp.Rational:
    return sp.Rational(float(value))


def _box(process: Any, box: Any) -> list[tuple[sp.Rational, sp.Rational]]:
    n = process.dimension
    raw = process.bounds if box is None else box
    arr = np.asarray(raw, dtype=float)
    if arr.shape == (2,):
        arr = np.tile(arr, (n, 1))
    if arr.shape != (n, 2) or not np.all(np.isfinite(arr)) or np.any(arr[:, 0] > arr[:, 1]):
        raise InvalidParameter("box", box, f"a pair (low, high) or {n} pairs with low <= high")
    return [(_exact(lo), _exact(hi)) for lo, hi in arr]


def _rational_system(process: Any, params: Any) -> tuple[list[sp.Poly], list[sp.Poly]]:
    """Numerators and denominators of ``F_i`` with exact rational parameter values (a sympy
    Rational or Integer given in ``params`` as it is, a float as its exact binary value)."""
    values = process.parameter_values(params)
    subs = {s: _exact(v) for s, v in zip(process.parameters, values)}
    for key, value in dict(params or {}).items():   # exact sympy rationals are kept exact
        symbol = next((s for s in process.parameters if key == s or key == str(s)), None)
        if symbol is not None and isinstance(value, sp.Rational):
            subs[symbol] = value
    xs = process.variables
    nums, dens = [], []
    for i, entry in enumerate(process.drift):
        expr = sp.sympify(entry).xreplace(subs)
        expr = expr.xreplace({f: sp.Rational(f) for f in expr.atoms(sp.Float)})
        num, den = sp.fraction(sp.together(expr))
        polys = []
        for part in (num, den):
            try:
                poly = sp.Poly(sp.expand(part), *xs, domain=sp.QQ)
            except (sp.PolynomialError, sp.CoercionFailed, sp.GeneratorsError) as exc:
                raise NonPolynomialDrift(
                    f"equilibria: component {i} of the drift of the {process.name}, "
                    f"F_{i} = {entry}, is not a polynomial or rational function of "
                    f"{', '.join(map(str, xs))} ({exc}); the Groebner-basis method needs one"
                ) from None
            polys.append(poly)
        nums.append(polys[0])
        dens.append(polys[1])
    return nums, dens


def _shape(G: Sequence[sp.Expr], others: Sequence[sp.Symbol], t: sp.Symbol
           ) -> tuple[dict, sp.Poly] | None:
    """``({x_i: g_i(t)}, h(t))`` when the basis ``G`` is ``{x_i - g_i(t), h(t)}``, else None."""
    found: dict = {}
    h = None
    for g in G:
        syms = g.free_symbols
        if syms <= {t}:
            if h is not None:
                return None
            h = sp.Poly(g, t, domain=sp.QQ)
            continue
        lead = [v for v in others if v in syms]
        if len(lead) != 1 or not syms <= {lead[0], t}:
            return None
        v = lead[0]
        pv = sp.Poly(g, v)
        if pv.degree() != 1 or not pv.coeffs()[0].is_number or v in found:
            return None
        found[v] = sp.Poly(-pv.nth(0) / pv.coeffs()[0], t, domain=sp.QQ)
    if h is None or len(found) != len(others):
        return None
    return found, h


def _branches(exprs: list, xs: Sequence[sp.Symbol], fixed: dict) -> list:
    """The solutions of ``exprs = 0`` as branches ``(fixed, g, h, t, label)`` in shape position.

    ``fixed`` maps variables to exact rationals; the other variables are ``g[v](t)`` (or ``t``
    itself) at the roots of ``h``.  A rational root of the last eliminant is substituted and the
    smaller system solved recursively; the rest is brought into shape position.
    """
    xs = list(xs)
    G = sp.groebner(exprs, *xs, order="lex", domain=sp.QQ)
    if list(G.exprs) == [1]:
        return []
    if not G.is_zero_dimensional:
        raise ContinuumOfEquilibria(
            "equilibria: F(x) = 0 is not zero-dimensional (its lex Groebner basis "
            f"{list(G.exprs)} leaves a variable free): the equilibria form a continuum, which "
            "this method cannot list; fix a conserved quantity (declare the reduced process) "
            "or change the parameters")
    got = _shape(G.exprs, xs[:-1], xs[-1])
    if got is not None:
        return [(dict(fixed), got[0], got[1], xs[-1], str(xs[-1]))]
    last = xs[-1]
    h = sp.Poly([g for g in G.exprs if g.free_symbols <= {last}][-1], last, domain=sp.QQ)
    out = []
    for factor, _m in h.factor_list()[1]:
        if factor.degree() == 1:
            r = -factor.nth(0) / factor.nth(1)
            sub = [q.eval(last, r).as_expr() for q in G.polys]
            sub = [e for e in sub if e != 0]
            out += _branches(sub, xs[:-1], {**fixed, last: sp.Rational(r)})
        else:
            out += _generic(list(G.exprs) + [factor.as_expr()], xs, fixed)
    return out


def _generic(exprs: list, xs: list, fixed: dict) -> list:
    """Radical (Seidenberg's lemma) and a generic linear form ``t``: shape position."""
    extra = []
    for v in xs:
        order = [w for w in xs if w != v] + [v]
        Gv = sp.groebner(exprs, *order, order="lex", domain=sp.QQ)
        uni = [g for g in Gv.exprs if g.free_symbols <= {v}]
        extra.append(sp.Poly(uni[-1], v).sqf_part().as_expr())
    t = sp.Dummy("t")
    for trial in range(8):
        coeffs = [1] + [(k + 2 + trial) for k in range(len(xs) - 1)]
        form = sum(c * v for c, v in zip(coeffs, xs))
        Gt = sp.groebner(exprs + extra + [t - form], *xs, t, order="lex", domain=sp.QQ)
        got = _shape(Gt.exprs, xs, t)
        if got is not None:
            return [(dict(fixed), got[0], got[1], t, f"t = {form}")]
    raise NotConverged("equilibria: shape position by a linear change of variables",
                       float("nan"), 0.0, 8)


# ---------------------------------------------------------------------- intervals
def _iv_rational(q: Any) -> Any:
    q = sp.Rational(q)
    return _IV.mpf(int(q.p)) / int(q.q)


def _iv_poly(terms: list, X: Sequence[Any]) -> Any:
    total = _IV.mpf(0)
    for coeff, exps in terms:
        term = coeff
        for xi, e in zip(X, exps):
            if e:
                term = term * xi**e
        total = total + term
    return total


def _terms(poly: sp.Poly) -> list:
    return [(_iv_rational(c), m) for m, c in poly.terms()]


def _float_interval(iv: Any) -> tuple[float, float]:
    lo, hi = float(iv.a), float(iv.b)
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


def _krawczyk(num_terms: list, jac_terms: list, y: NDArray[np.float64], J: NDArray[np.float64]
              ) -> NDArray[np.float64] | None:
    """A box around ``y`` in which the Krawczyk test proves a unique zero, or None."""
    n = y.size
    try:
        Y = np.linalg.inv(J)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(Y)):
        return None
    yi = [_IV.mpf(float(v)) for v in y]
    Fy = [_iv_poly(t, yi) for t in num_terms]
    scale = max(1.0, float(np.max(np.abs(y))))
    for radius in (1e-13, 1e-11, 1e-9, 1e-7, 1e-5):
        r = radius * scale
        X = [_IV.mpf([float(v) - r, float(v) + r]) for v in y]
        JX = [[_iv_poly(jac_terms[i][j], X) for j in range(n)] for i in range(n)]
        ok = True
        for i in range(n):
            K = yi[i] - sum((_IV.mpf(float(Y[i, j])) * Fy[j] for j in range(n)),
                            _IV.mpf(0))
            for j in range(n):
                M = _IV.mpf(1.0 if i == j else 0.0) - sum(
                    (_IV.mpf(float(Y[i, k])) * JX[k][j] for k in range(n)), _IV.mpf(0))
                K = K + M * (X[j] - yi[j])
            if not (K.a > X[i].a and K.b < X[i].b):
                ok = False
                break
        if ok:
            return np.array([_float_interval(Xi) for Xi in X])
    return None


def _classify(eig: NDArray[np.complex128], tol: float) -> str:
    re = eig.real
    cut = tol * max(1.0, float(np.max(np.abs(eig), initial=0.0)))
    if np.any(np.abs(re) <= cut):
        return "non-hyperbolic"
    if np.all(re < 0):
        return "stable"
    if np.all(re > 0):
        return "unstable"
    return "saddle"


def _newton(process: Any, x: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    res = float(np.max(np.abs(process.F(x, p))))
    for _ in range(8):
        try:
            step = np.linalg.solve(process.DF(x, p), process.F(x, p))
        except np.linalg.LinAlgError:
            break
        trial = x - step
        r = float(np.max(np.abs(process.F(trial, p))))
        if not np.all(np.isfinite(trial)) or r >= res:
            break
        x, res = trial, r
    return x


# ---------------------------------------------------------------------- public
def equilibria(process: Any, params: Mapping[Any, float] | None = None, *,
               box: Any = None, tol: float = 1e-9) -> EquilibriumSet:
    """Every equilibrium ``F(x) = 0`` of a polynomial (or rational) drift in a box, certified.

    Parameters
    ----------
    process : PopulationProcess
        The process; its drift must be a rational function of the variables once the parameter
        values are substituted.  Declare the reduced process when a conservation law holds.
    params : mapping, optional
        Parameter values (keys: symbols or names), as in ``PopulationProcess.parameter_values``;
        they enter as the exact rationals of their binary values.
    box : (low, high) or sequence of n pairs, optional
        The closed box searched; default :attr:`PopulationProcess.bounds` in every coordinate.
    tol : float
        Relative tolerance on a real part of an eigenvalue of ``DF`` below which an equilibrium
        is reported ``"non-hyperbolic"``.

    Returns
    -------
    EquilibriumSet

    Raises
    ------
    NonPolynomialDrift
        If a component of the drift is not a rational function of the variables.
    ContinuumOfEquilibria
        If ``F(x) = 0`` is not zero-dimensional.

    Notes
    -----
    Lex Groebner basis and elimination theorem (Cox, Little, O'Shea, *Ideals, Varieties, and
    Algorithms*, Chapters 2-3), exact real-root isolation, interval enclosures and the Krawczyk
    test; see the module docstring.
    """
    start = time.perf_counter()
    xs = process.variables
    n = len(xs)
    bounds = _box(process, box)
    p = process.parameter_values(params)
    nums, dens = _rational_system(process, params)
    found = []
    real_total = outside = poles = degree = 0
    labels = []
    branches = _branches([q.as_expr() for q in nums], xs, {})
    num_terms = [_terms(q) for q in nums]
    jac_terms = [[_terms(q.diff(v)) for v in xs] for q in nums]
    for fixed, g, h, t, label in branches:
        degree += h.degree()
        labels.append(label)
        for factor, _mult in h.factor_list()[1]:
            factor = sp.Poly(factor, t, domain=sp.QQ)
            coords = [sp.Poly(fixed[v], t, domain=sp.QQ) if v in fixed
                      else g.get(v, sp.Poly(t, t, domain=sp.QQ)) for v in xs]
            reduced = [c.rem(factor) for c in coords]
            den_zero = any(sp.Poly(d.as_expr().subs({v: c.as_expr() for v, c in zip(xs, coords)},
                                                    simultaneous=True), t, domain=sp.QQ)
                           .rem(factor).is_zero for d in dens)
            if factor.degree() == 1:
                root = -factor.nth(0) / factor.nth(1)
                roots = [(root, root, root)]
            else:
                roots = [(a, b, sp.CRootOf(factor, k))
                         for k, ((a, b), _m) in enumerate(factor.intervals())]
            for a, b, symbolic in roots:
                real_total += 1
                if den_zero:
                    poles += 1
                    continue
                eps = _ROOT_EPS
                for _refine in range(20):
                    if a != b:
                        a, b = factor.refine_root(a, b, eps=eps)
                    T = _IV.mpf([_iv_rational(a).a, _iv_rational(b).b])
                    encl, inside, decided = [], True, True
                    for red, (lo, hi) in zip(reduced, bounds):
                        if red.degree() <= 0:  # an exact rational coordinate
                            val = red.nth(0)
                            encl.append(_iv_rational(val))
                            inside &= bool(lo <= val <= hi)
                            continue
                        iv = _iv_poly(_terms(red), [T])
                        encl.append(iv)
                        if iv.b < _iv_rational(lo).a or iv.a > _iv_rational(hi).b:
                            inside = False
                        elif not (iv.a > _iv_rational(lo).b and iv.b < _iv_rational(hi).a):
                            decided = False
                    if decided or not inside:
                        break
                    eps = eps / 10**20
                if not inside:
                    outside += 1
                    continue
                exact = tuple(sp.Rational(r.nth(0)) if r.degree() <= 0
                              else r.as_expr().subs(t, symbolic) for r in reduced)
                x0 = np.array([float(mpmath.mpf(e.mid)) for e in encl])
                x = _newton(process, x0, p)
                J = process.DF(x, p)
                Jn = np.array([[float(mpmath.mpf(_iv_poly(jac_terms[i][j],
                                                          [_IV.mpf(float(v)) for v in x]).mid))
                                for j in range(n)] for i in range(n)])
                kbox = _krawczyk(num_terms, jac_terms, x, Jn)
                verified = kbox is not None
                if kbox is None:
                    kbox = np.array([_float_interval(e) for e in encl])
                    kbox[:, 0] = np.minimum(kbox[:, 0], x)
                    kbox[:, 1] = np.maximum(kbox[:, 1], x)
                eig = np.linalg.eigvals(J)
                found.append(Equilibrium(
                    x=x, exact=exact, enclosure=kbox, krawczyk=verified,
                    residual=float(np.max(np.abs(process.F(x, p)))),
                    eigenvalues=eig, classification=_classify(eig, tol)))
    found.sort(key=lambda e: tuple(e.x))
    cert = ("lex Groebner basis split into shape-position branches; real roots of the eliminants "
            "isolated exactly; "
            "box membership and poles decided exactly; each point verified by the Krawczyk test "
            "when krawczyk is true, else enclosed by interval evaluation of the algebraic solution")
    return EquilibriumSet(equilibria=tuple(found),
                          box=np.array([[float(lo), float(hi)] for lo, hi in bounds]),
                          eliminant_degree=int(degree), real_solutions=real_total,
                          outside_box=outside, at_poles=poles,
                          shape_variable="; ".join(dict.fromkeys(labels)),
                          certificate=cert, seconds=time.perf_counter() - start)


def limit_sets(process: Any, params: Mapping[Any, float] | None = None, *, grid: int = 5,
               t_max: float = 200.0, max_starts: int = 256, box: Any = None,
               tol: float = 1e-4, found: EquilibriumSet | None = None,
               rtol: float = 1e-9, atol: float = 1e-12) -> LimitSetSurvey:
    """Integrate the ODE from a grid of initial states and classify where each trajectory ends.

    Parameters
    ----------
    process : PopulationProcess
        The process (polynomial or rational drift: its equilibria are computed first).
    params : mapping, optional
        Parameter values.
    grid : int
        Points per axis (cell centres of the box); the total is capped at ``max_starts`` by
        lowering the points per axis.
    t_max : float
        Integration horizon; the second half of each trajectory is searched for recurrence.
    box : optional
        As in :func:`equilibria`.
    tol : float
        Distance (relative to the box width) within which a trajectory has reached an
        equilibrium, and recurrence tolerance of a cycle.
    found : EquilibriumSet, optional
        Equilibria already computed by :func:`equilibria` (same parameters).

    Returns
    -------
    LimitSetSurvey
        Counts per attractor: an approximation of the Birkhoff centre (Li 2016, Section 5).
    """
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 1:
        raise InvalidParameter("grid", grid, "an integer >= 1")
    if not (isinstance(t_max, (int, float)) and math.isfinite(t_max) and t_max > 0):
        raise InvalidParameter("t_max", t_max, "a positive finite time")
    eqs = found if found is not None else equilibria(process, params, box=box)
    n = process.dimension
    p = process.parameter_values(params)
    lo, hi = eqs.box[:, 0], eqs.box[:, 1]
    width = float(np.max(hi - lo)) or 1.0
    per_axis = int(grid)
    while per_axis > 1 and per_axis**n > max_starts:
        per_axis -= 1
    axes = [lo[i] + (np.arange(per_axis) + 0.5) / per_axis * (hi[i] - lo[i]) for i in range(n)]
    starts = np.array(np.meshgrid(*axes, indexing="ij")).reshape(n, -1).T
    pts = eqs.points
    stable = [i for i, e in enumerate(eqs.equilibria) if e.classification == "stable"]
    close = tol * width

    def near(_t: float, y: NDArray[np.float64]) -> float:
        if not stable:
            return 1.0
        return float(np.min(np.linalg.norm(pts[stable] - y, axis=1))) - close / 10
    near.terminal = True  # type: ignore[attr-defined]

    def rhs(_t: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
        return process.F(y, p)

    cycles: list[LimitCycle] = []
    outcomes = []
    for x0 in starts:
        sol = solve_ivp(rhs, (0.0, float(t_max)), x0, method="LSODA", dense_output=True,
                        events=near, rtol=rtol, atol=atol, jac=lambda _t, y: process.DF(y, p))
        outcomes.append(_outcome(sol, pts, close, cycles, float(t_max)))
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o] = counts.get(o, 0) + 1
    return LimitSetSurvey(equilibria=eqs, starts=starts, outcomes=tuple(outcomes), counts=counts,
                          cycles=tuple(cycles))


def _outcome(sol: Any, pts: NDArray[np.float64], close: float, cycles: list, t_max: float) -> str:
    if sol.status == -1 or not np.all(np.isfinite(sol.y)):
        return "unresolved"
    end = sol.y[:, -1]
    if len(pts):
        dist = np.linalg.norm(pts - end, axis=1)
        if np.min(dist) <= close:
            return f"equilibrium {int(np.argmin(dist))}"
    for j, c in enumerate(cycles):
        if np.min(np.linalg.norm(c.orbit - end, axis=1)) <= 10 * close:
            return f"cycle {j}"
    t_end = float(sol.t[-1])
    if t_end < t_max:
        return "unresolved"
    ts = np.linspace(t_max / 2, t_max, 8001)
    ys = sol.sol(ts).T
    d = np.linalg.norm(ys - end, axis=1)
    away = np.flatnonzero(d > 10 * close)
    if away.size == 0:
        return "unresolved"  # not moving: slow approach to something
    last_away = away[-1]
    cand = [k for k in range(1, last_away) if d[k] <= d[k - 1] and d[k] <= d[k + 1]
            and d[k] < close * 10 and np.any(d[k:last_away] > 10 * close)]
    if not cand:
        return "unresolved"
    k = cand[-1]
    dt = ts[1] - ts[0]
    res = minimize_scalar(lambda s: float(np.linalg.norm(sol.sol(s) - end)),
                          bounds=(ts[k] - dt, ts[k] + dt), method="bounded",
                          options={"xatol": 1e-10})
    period = t_end - float(res.x)
    if period <= 0:
        return "unresolved"
    orbit = sol.sol(np.linspace(t_end - period, t_end, 401)).T
    if len(pts) and np.min(np.linalg.norm(orbit[:, None, :] - pts[None], axis=2)) <= close:
        return "unresolved"
    before = sol.sol(np.linspace(max(t_end - 2 * period, 0.0), t_end - period, 401)).T
    half = (orbit.max(axis=0) - orbit.min(axis=0)) / 2
    half_before = (before.max(axis=0) - before.min(axis=0)) / 2
    if np.max(np.abs(half - half_before)) > 10 * close:
        return "unresolved"  # amplitude still changing
    cycles.append(LimitCycle(period=period, amplitude=float(np.max(half)), half_ranges=half,
                             center=orbit.mean(axis=0), orbit=orbit))
    return f"cycle {len(cycles) - 1}"
