r"""Numerical inversion of a declared transform: density, distribution function and tail.

Two structurally different methods invert the same Laplace transform, and their disagreement is
the stated error (Abate & Whitt 2006, INFORMS J. Comput. 18:408-421: compare two
methods), or Euler's distance from itself at three more terms where that is larger: the
errors of two methods can cross at a point and their difference vanish there, which made the
stated error up to 200 times too small at single points before this second estimate was
added:

* **the unified Euler algorithm** (Abate & Whitt 2006): a Fourier series on
  the Bromwich line :math:`\mathrm{Re}\,s = M \ln 10 / (3t)`, summed by Euler's binomial
  averaging,

  .. math::

      f(t) \approx \frac{10^{M/3}}{t} \sum_{k=0}^{2M} \eta_k
      \,\mathrm{Re}\,\hat f\Big(\frac{\beta_k}{t}\Big), \quad
      \beta_k = \frac{M \ln 10}{3} + i\pi k,

  :math:`\eta_k = (-1)^k \xi_k`, :math:`\xi_0 = 1/2`, :math:`\xi_k = 1` (:math:`1 \le k \le
  M`), :math:`\xi_{2M} = 2^{-M}`, :math:`\xi_{2M-k} = \xi_{2M-k+1} + 2^{-M}\binom{M}{k}`;
  its contour stays in :math:`\mathrm{Re}\,s > 0`;
* **the fixed Talbot contour** (Abate & Valkó 2004, Int. J. Numer. Meth. Eng. 60:979-993):
  :math:`r = 2M/(5t)`, :math:`\theta_k = k\pi/M`, :math:`s(\theta) = r\theta(
  \cot\theta + i)`,

  .. math::

      f(t) \approx \frac{r}{M}\Big[\tfrac12 \hat f(r) e^{rt} + \sum_{k=1}^{M-1}
      \mathrm{Re}\big(e^{t s(\theta_k)} \hat f(s(\theta_k)) (1 + i\sigma(\theta_k))\big)\Big],
      \quad \sigma(\theta) = \theta + (\theta\cot\theta - 1)\cot\theta;

  its contour enters :math:`\mathrm{Re}\,s < 0`, so it needs the transform analytic there but
  for the negative real axis; where it gives no finite value, Euler at :math:`\lceil 3M/2
  \rceil` terms is the second method;
* for a transform with a delay factor :math:`e^{-cs}` (the law is not smooth at the delays,
  which neither method above resolves: both missed the M/D/1 waiting-time distribution at
  :math:`t = 1.5` by :math:`3.6 \cdot 10^{-4}` while agreeing to :math:`2 \cdot 10^{-5}`),
  the second method is de Hoog, Knight & Stokes' continued fraction (1982), whose difference
  from Euler is then the stated error.

Both give about :math:`0.6M` significant digits with about :math:`M` digits of working
precision; they run in a private mpmath context at :math:`M + 15` digits (the global mpmath
precision is never changed), or vectorised over every node and every ``t`` at once: in
complex double precision when at most :data:`DOUBLE_DIGITS` digits are asked for, and in
numpy's extended precision (``longdouble``, 64-bit mantissa on x86-64) up to
:data:`EXTENDED_DIGITS` where the platform has it and the compiled transform keeps it (Euler
loses about :math:`M/3` digits to cancellation: :math:`10^{M/3}\epsilon` is
:math:`2 \cdot 10^{-13}` at 10 digits in extended precision, against :math:`2 \cdot 10^{-10}`
in doubles).  The density of
a law with an atom at zero (:math:`\lim_{s\to\infty} F^*(s) = a > 0`, the waiting time of a
queue) is that of its continuous part; the atom is reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from symq.core.compiler import compile as compile_exprs
from symq.core.errors import InvalidParameter, NumericalFailure
from symq.core.precision import working_dps
from symq.core.result import Exactness, ResultBase

from .model import NotATransform, Transform

__all__ = ["Inversion", "invert", "mass_at_zero", "multiple_euler", "checked_request", "WHAT",
           "DOUBLE_DIGITS", "EXTENDED_DIGITS"]

#: What can be inverted: the density (of the part without the atom at 0), the distribution
#: function and the tail (inverted directly, not as 1 - cdf).
WHAT = ("density", "cdf", "ccdf")
#: Up to this many digits asked for, both methods run vectorised in complex doubles.
DOUBLE_DIGITS = 8
#: Up to this many, in numpy's extended precision where it has a 64-bit mantissa or more.
EXTENDED_DIGITS = 10
#: Units of round-off charged to each evaluated term by the vectorised paths (the compiled
#: transform's own evaluation error, a few operations deep, and the node's rounding).
ROUNDOFF_ULPS = 2
#: Euler at ``M + FINER_TERMS`` terms, about 10^(-0.6 * 3) times as far from the law as at
#: ``M``: its distance from Euler at ``M`` estimates the latter's error.
FINER_TERMS = 3
#: Whether ``numpy.longdouble`` is wider than a double on this platform (not on Windows or
#: Apple silicon, where it is a double: the mpmath path is taken there).
EXTENDED = bool(np.finfo(np.longdouble).eps <= 1.1e-19)
_PI = np.longdouble("3.14159265358979323846264338327950288")
_LN10 = np.longdouble("2.30258509299404568401799145468436421")
_ATOMS: dict[str, sp.Expr] = {}


@dataclass(frozen=True)
class Inversion(ResultBase):
    """Values of a density, distribution function or tail from its transform, with an error.

    Attributes
    ----------
    t : numpy.ndarray
        The points.
    value : numpy.ndarray
        The unified Euler algorithm's values.
    error : numpy.ndarray
        The stated error at each point: the larger of ``|Euler - second method|`` and
        ``|Euler at M - Euler at M + 3|`` (and, on the vectorised paths, the round-off bound).
    second : numpy.ndarray
        The second method's values (fixed Talbot, or Euler with more terms).
    what : str
        ``"density"``, ``"cdf"`` or ``"ccdf"``.
    atom : float
        The mass at zero, :math:`\\lim_{s\\to\\infty} F^*(s)` (a density is that of the rest).
    terms : int
        :math:`M`.
    digits : int
        Working precision (decimal digits; 16 for complex doubles, 19 for extended).
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("what", "terms", "atom")
    uncertainty: ClassVar[Mapping[str, str]] = {"value": "error"}

    t: NDArray[np.float64]
    value: NDArray[np.float64]
    error: NDArray[np.float64]
    second: NDArray[np.float64] = field(repr=False)
    what: str = "density"
    atom: float = 0.0
    terms: int = 0
    digits: int = 16
    method: str = ""
    exactness: Exactness = Exactness.NUMERIC

    @property
    def max_error(self) -> float:
        """The largest stated error over the points."""
        return float(np.max(self.error)) if self.error.size else 0.0


def _euler_nodes(M: int) -> tuple[list[complex], list[float], float]:
    """``beta_k``, ``eta_k`` and the factor ``10^{M/3}`` of the unified Euler algorithm."""
    xi = [0.0] * (2 * M + 1)
    xi[0] = 0.5
    for k in range(1, M + 1):
        xi[k] = 1.0
    xi[2 * M] = 2.0 ** -M
    for k in range(1, M):
        xi[2 * M - k] = xi[2 * M - k + 1] + 2.0 ** -M * math.comb(M, k)
    eta = [(-1) ** k * xi[k] for k in range(2 * M + 1)]
    beta = [complex(M * math.log(10) / 3, math.pi * k) for k in range(2 * M + 1)]
    return beta, eta, 10.0 ** (M / 3)


def _atom(transform: Transform, lst: sp.Expr, s: sp.Symbol) -> sp.Expr:
    key = sp.srepr(lst)
    hit = _ATOMS.get(key)
    if hit is None:
        try:
            hit = sp.limit(lst, s, sp.oo)
        except (NotImplementedError, ValueError, TypeError):   # pragma: no cover - sympy
            raise NumericalFailure(f"the mass at zero of {transform.expr} (its limit at "
                                   "s -> oo) could not be derived: invert the cdf or the ccdf "
                                   "instead") from None
        _ATOMS[key] = hit
    return hit


def checked_request(t: Any, what: str, digits: int, most: int) -> NDArray[np.float64]:
    """The points of an inversion request, with ``what`` and ``digits`` (``2..most``) checked.

    Raises
    ------
    InvalidParameter
        An unknown ``what``, ``digits`` out of range, a point that is not finite and > 0.
    """
    if what not in WHAT:
        raise InvalidParameter("what", what, "one of " + ", ".join(WHAT))
    if isinstance(digits, bool) or not isinstance(digits, int) or not 2 <= digits <= most:
        raise InvalidParameter("digits", digits, f"an integer in 2..{most}")
    points = np.atleast_1d(np.asarray(t, dtype=float))
    if points.ndim != 1 or not np.all(np.isfinite(points)) or np.any(points <= 0):
        raise InvalidParameter("t", t, "finite points > 0")
    return points


def mass_at_zero(transform: Transform, values: Mapping[str, Any] | None = None) -> float:
    r"""The atom at zero, :math:`P(X = 0) = \lim_{s\to\infty} F^*(s)` (exact limit, rounded).

    Raises
    ------
    InvalidParameter
        A PGF, a missing or undeclared parameter value.
    NumericalFailure
        sympy cannot find the limit.
    """
    numbers = transform.check(dict(values or {}))
    lst = transform.lst()
    s = next((x for x in lst.free_symbols if x.name == "s"), sp.Symbol("s", positive=True))
    atom = _atom(transform, lst, s)
    return float(atom.xreplace({x: numbers[x.name] for x in atom.free_symbols}))


def _target(transform: Transform, what: str) -> tuple[sp.Expr, sp.Symbol, sp.Expr]:
    lst = transform.lst()
    s = next((x for x in lst.free_symbols if x.name == "s"), sp.Symbol("s", positive=True))
    if what == "cdf":
        return lst / s, s, sp.Integer(0)
    if what == "ccdf":
        return (1 - lst) / s, s, sp.Integer(0)
    atom = _atom(transform, lst, s)
    return lst - atom, s, atom


def invert(transform: Transform, t: Any, values: Mapping[str, Any] | None = None,
           what: str = "density", digits: int = 10) -> Inversion:
    r"""Invert ``transform`` at the points ``t`` by two methods; their difference is the error.

    Parameters
    ----------
    transform : Transform
        An LST or an MGF (of a law on :math:`[0, \infty)`).
    t : float or array of float
        Points, each finite and ``> 0``.
    values : mapping, optional
        A value for every parameter the formula uses.
    what : {"density", "cdf", "ccdf"}
    digits : int
        Significant digits aimed at (``M = ceil(digits / 0.6) + 2`` terms), 2 to 40.

    Returns
    -------
    Inversion

    Raises
    ------
    InvalidParameter
        A point that is not finite and positive, an unknown ``what``, ``digits`` out of range,
        a PGF, a missing parameter value.
    NotATransform
        The inverted density is negative, or the distribution function or tail leaves
        ``[0, 1]``, by more than ten times the stated error (negative mass).
    NumericalFailure
        The transform gives no finite value on the Euler contour.

    Examples
    --------
    >>> from symq.me.transforms import Transform
    >>> r = invert(Transform("1/(1 + s)"), [0.5, 2.0], what="ccdf")
    >>> bool(abs(r.value[1] - math.exp(-2)) < 1e-9 and r.max_error < 1e-8)
    True
    """
    points = checked_request(t, what, digits, 40)
    numbers = transform.check(dict(values or {}))
    target, s, atom = _target(transform, what)
    used = tuple(transform.symbols[p] for p in transform.free_parameters)
    args = [numbers[p.name] for p in used]
    atom_value = float(atom.xreplace(dict(zip(used, args, strict=True)))) if atom != 0 else 0.0
    M = math.ceil(digits / 0.6) + 2
    roundoff: NDArray[np.float64] | float = 0.0     # Euler's other error estimate
    if _has_delay(target, s):
        fn = compile_exprs(target, (s, *used), "mpmath")
        euler, second, label, dps = _with_de_hoog(fn, points, args, M)
        roundoff = np.abs(euler - multiple_euler(fn, points, args, M + FINER_TERMS))
    else:
        fast = compile_exprs(target, (s, *used), "numpy")
        extended = DOUBLE_DIGITS < digits <= EXTENDED_DIGITS and EXTENDED \
            and _keeps_extended(fast, args)
        if digits <= DOUBLE_DIGITS or extended:
            euler, second, label, dps, roundoff = _double(fast, points, args, M, extended)
        else:
            fn = compile_exprs(target, (s, *used), "mpmath")
            euler, second, label, dps = _multiple(fn, points, args, M)
            roundoff = np.abs(euler - multiple_euler(fn, points, args, M + FINER_TERMS))
    if not np.all(np.isfinite(euler)):
        raise NumericalFailure(f"the {what} of {transform.expr} has no finite value on the "
                               "Euler contour (a singularity in Re s > 0?)")
    error = np.maximum(np.abs(euler - second), roundoff)
    _check_mass(transform, what, points, euler, error, atom_value)
    return Inversion(points, euler, error, second, what, atom_value, M, dps,
                     f"unified Euler (Abate & Whitt 2006) vs {label}, M = {M}")


def _check_mass(transform: Transform, what: str, points: NDArray[np.float64],
                value: NDArray[np.float64], error: NDArray[np.float64], atom: float) -> None:
    """A density below zero, or a distribution function or tail outside ``[0, 1]``, by more
    than ten times the stated error: not the transform of a probability law."""
    slack = 10.0 * error + 1e-12
    low = value < -slack
    high = (value > 1 + slack) if what != "density" else np.zeros_like(low)
    bad = np.flatnonzero(low | high)
    if bad.size:
        k = int(bad[0])
        raise NotATransform(transform.name, str(transform.expr), "the transform of a "
                            "probability law (a nonnegative density, a distribution function "
                            "in [0, 1])", f"its inverted {what} is {value[k]:.6g} +- "
                            f"{error[k]:.2g} at t={points[k]:g}: negative mass")


def _keeps_extended(fn: Any, args: list[float]) -> bool:
    """Whether the compiled transform computes in extended precision (a scipy special
    function would quietly drop to doubles)."""
    probe = np.full(2, np.clongdouble(1 + 1j))
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(fn.scalar(probe, *args))
    except (TypeError, ValueError):
        return False
    return bool(out.dtype == np.clongdouble)


def _extended_euler_nodes(M: int) -> tuple[NDArray[Any], NDArray[Any], Any]:
    """:func:`_euler_nodes` in extended precision (``eta_k`` from exact integers)."""
    xi: list[Any] = [np.longdouble(0.5)] + [np.longdouble(1)] * M + [np.longdouble(0)] * M
    total, power = 1, np.longdouble(2 ** M)
    xi[2 * M] = 1 / power
    for k in range(1, M):
        total += math.comb(M, k)
        xi[2 * M - k] = np.longdouble(total) / power
    eta = np.array([x if k % 2 == 0 else -x for k, x in enumerate(xi)], dtype=np.longdouble)
    beta = (np.longdouble(M) * _LN10 / 3
            + 1j * _PI * np.arange(2 * M + 1, dtype=np.longdouble)).astype(np.clongdouble)
    return beta, eta, np.longdouble(10) ** (np.longdouble(M) / 3)


def _vector_euler(fn: Any, t: NDArray[Any], args: list[float], M: int, extended: bool
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unified Euler at every point at once, and its round-off bound."""
    if extended:
        beta, eta, scale = _extended_euler_nodes(M)
        t = t.astype(np.longdouble)
    else:
        b, e, scale = _euler_nodes(M)
        beta, eta = np.asarray(b), np.asarray(e)
    ulps = ROUNDOFF_ULPS * float(np.finfo(t.dtype).eps)
    with np.errstate(all="ignore"):
        terms = np.real(fn.scalar(beta[None, :] / t[:, None], *args))
        value = scale / t * (terms @ eta)
        roundoff = ulps * scale / t * (np.abs(terms) @ np.abs(eta))
    return value.astype(float), roundoff.astype(float)


def _vector_talbot(fn: Any, t: NDArray[Any], args: list[float], M: int, extended: bool
                   ) -> NDArray[np.float64]:
    """Fixed Talbot at every point at once."""
    pi = _PI if extended else np.pi
    t = t.astype(np.longdouble) if extended else t
    with np.errstate(all="ignore"):
        theta = pi * np.arange(1, M, dtype=t.dtype) / M
        cot = 1 / np.tan(theta)
        r = 2 * M / (5 * t)
        contour = r[:, None] * theta[None, :] * (cot + 1j)[None, :]
        sigma = theta + (theta * cot - 1) * cot
        values = np.exp(t[:, None] * contour) * fn.scalar(contour, *args) * (1 + 1j * sigma)
        head = np.real(fn.scalar(r + 0j, *args)) * np.exp(r * t) / 2
        value = r / M * (head + np.real(values).sum(axis=1))
    return value.astype(float)


def _double(fn: Any, points: NDArray[np.float64], args: list[float], M: int,
            extended: bool = False) -> tuple[NDArray[np.float64], NDArray[np.float64], str, int,
                                             NDArray[np.float64]]:
    """Euler and Talbot in complex doubles (or extended precision), every node of every point
    in one vectorised call, and last the error bound beside ``|Euler - Talbot|``: Euler's
    distance from Euler at ``M + FINER_TERMS`` terms (in extended precision where the platform
    has it) and the round-off of the value reported (:data:`ROUNDOFF_ULPS` units of the working
    precision on every term, summed in absolute value).  Two estimates of Euler's error,
    because either alone can vanish at a point where the errors it compares happen to cross."""
    euler, euler_roundoff = _vector_euler(fn, points, args, M, extended)
    talbot = _vector_talbot(fn, points, args, M, extended)
    finer, _ = _vector_euler(fn, points, args, M + FINER_TERMS,
                             EXTENDED and _keeps_extended(fn, args))
    bound = np.maximum(np.abs(euler - finer), euler_roundoff)
    digits = 19 if extended else 16
    if np.all(np.isfinite(talbot)):
        return euler, talbot, "fixed Talbot (Abate & Valko 2004)", digits, bound
    more = math.ceil(1.5 * M)
    other, _ = _vector_euler(fn, points, args, more, extended)
    return euler, other, f"unified Euler with M = {more}", digits, bound


def _has_delay(expr: sp.Expr, s: sp.Symbol) -> bool:
    """Whether the transform has a factor ``exp(c s)`` (a deterministic delay): its law is not
    smooth at the delays, which Euler summation does not resolve, and the Talbot contour, deep
    in ``Re s < 0``, meets ``exp(-c s)`` growing without bound."""
    return any(e.args[0].has(s) for e in expr.atoms(sp.exp))


def _with_de_hoog(fn: Any, points: NDArray[np.float64], args: list[float], M: int
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, int]:
    """Euler against de Hoog, Knight & Stokes (1982, SIAM J. Sci. Stat. Comput. 3:357-366;
    mpmath's implementation, in the thread's private context), whose continued-fraction
    acceleration resolves the points where a delay makes the law non-smooth."""
    dps = M + 15
    euler = multiple_euler(fn, points, args, M)
    other = np.empty(points.size)
    with working_dps(dps) as mp:
        params = [mp.mpf(a) for a in args]
        for i, point in enumerate(points):
            other[i] = float(mp.invertlaplace(lambda z: fn(z, *params), mp.mpf(point),
                                              method="dehoog"))
    return euler, other, "de Hoog, Knight & Stokes (1982)", dps


def _mp_euler(mp: Any, M: int) -> tuple[list[Any], list[Any], Any]:
    """``beta_k``, ``eta_k`` and ``10^{M/3}`` of the unified Euler algorithm in ``mp``."""
    xi = [mp.mpf(1) / 2] + [mp.mpf(1)] * M + [mp.mpf(0)] * M
    xi[2 * M] = mp.mpf(2) ** -M
    for k in range(1, M):
        xi[2 * M - k] = xi[2 * M - k + 1] + mp.mpf(2) ** -M * mp.binomial(M, k)
    eta = [x if k % 2 == 0 else -x for k, x in enumerate(xi)]
    beta = [mp.mpf(M) * mp.ln(10) / 3 + mp.mpc(0, 1) * mp.pi * k for k in range(2 * M + 1)]
    return beta, eta, mp.mpf(10) ** (mp.mpf(M) / 3)


def _multiple(fn: Any, points: NDArray[np.float64], args: list[float], M: int
              ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, int]:
    """Both methods at ``M + 15`` digits in the thread's private mpmath context."""
    dps = M + 15
    euler = multiple_euler(fn, points, args, M)
    talbot = np.empty(points.size)
    with working_dps(dps) as mp:
        theta = [mp.pi * k / M for k in range(1, M)]
        cot = [mp.cot(x) for x in theta]
        weight = [mp.mpc(1, x + (x * c - 1) * c) for x, c in zip(theta, cot, strict=True)]
        params = [mp.mpf(a) for a in args]
        try:
            for i, point in enumerate(points):
                tt = mp.mpf(point)
                r = mp.mpf(2 * M) / (5 * tt)
                total = mp.re(fn(mp.mpc(r), *params)) * mp.exp(r * tt) / 2
                for x, c, w in zip(theta, cot, weight, strict=True):
                    z = r * x * mp.mpc(c, 1)
                    total += mp.re(mp.exp(tt * z) * fn(z, *params) * w)
                talbot[i] = float(r / M * total)
        except (ZeroDivisionError, ValueError, OverflowError):
            talbot[:] = np.nan
    if np.all(np.isfinite(talbot)):
        return euler, talbot, "fixed Talbot (Abate & Valko 2004)", dps
    more = math.ceil(1.5 * M)
    return euler, multiple_euler(fn, points, args, more), f"unified Euler with M = {more}", dps


def multiple_euler(fn: Any, points: NDArray[np.float64], args: list[float], M: int
                   ) -> NDArray[np.float64]:
    """The unified Euler algorithm at ``M + 15`` digits, ``fn(s, *args)`` evaluated in the
    thread's private mpmath context (a compiled transform, or a fixed point such as the busy
    period's)."""
    out = np.empty(points.size)
    with working_dps(M + 15) as mp:
        beta, eta, scale = _mp_euler(mp, M)
        params = [mp.mpf(a) for a in args]
        for i, point in enumerate(points):
            tt = mp.mpf(point)
            acc = mp.fsum(e * mp.re(fn(b / tt, *params)) for b, e in zip(beta, eta, strict=True))
            out[i] = float(scale / tt * acc)
    return out
