r"""Numerical inversion of a declared transform: density, distribution function and tail.

Two structurally different methods invert the same Laplace transform, and their disagreement is
the stated error (Abate & Whitt 2006, INFORMS J. Comput. 18:408-421: compare two
methods):

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
precision is never changed), or in complex double precision, vectorised over every node and
every ``t`` at once, when at most :data:`DOUBLE_DIGITS` digits are asked for.  The density of
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
           "DOUBLE_DIGITS"]

#: What can be inverted: the density (of the part without the atom at 0), the distribution
#: function and the tail (inverted directly, not as 1 - cdf).
WHAT = ("density", "cdf", "ccdf")
#: Up to this many digits asked for, both methods run vectorised in complex doubles.
DOUBLE_DIGITS = 8
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
        ``|Euler - second method|`` at each point: the stated error.
    second : numpy.ndarray
        The second method's values (fixed Talbot, or Euler with more terms).
    what : str
        ``"density"``, ``"cdf"`` or ``"ccdf"``.
    atom : float
        The mass at zero, :math:`\\lim_{s\\to\\infty} F^*(s)` (a density is that of the rest).
    terms : int
        :math:`M`.
    digits : int
        Working precision (decimal digits; 16 for complex doubles).
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
    if _has_delay(target, s):
        fn = compile_exprs(target, (s, *used), "mpmath")
        euler, second, label, dps = _with_de_hoog(fn, points, args, M)
    elif digits <= DOUBLE_DIGITS:
        fn = compile_exprs(target, (s, *used), "numpy")
        euler, second, label, dps = _double(fn, points, args, M)
    else:
        fn = compile_exprs(target, (s, *used), "mpmath")
        euler, second, label, dps = _multiple(fn, points, args, M)
    if not np.all(np.isfinite(euler)):
        raise NumericalFailure(f"the {what} of {transform.expr} has no finite value on the "
                               "Euler contour (a singularity in Re s > 0?)")
    error = np.abs(euler - second)
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


def _double(fn: Any, points: NDArray[np.float64], args: list[float], M: int
            ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, int]:
    """Both methods in complex doubles, every node of every point in one vectorised call."""
    beta, eta, scale = _euler_nodes(M)
    nodes = np.asarray(beta)[None, :] / points[:, None]
    with np.errstate(all="ignore"):
        euler = scale / points * (np.real(fn.scalar(nodes, *args)) @ np.asarray(eta))
        theta = np.pi * np.arange(1, M) / M
        cot = 1.0 / np.tan(theta)
        r = 2.0 * M / (5.0 * points)
        contour = r[:, None] * theta[None, :] * (cot + 1j)[None, :]
        sigma = theta + (theta * cot - 1.0) * cot
        values = np.exp(points[:, None] * contour) * fn.scalar(contour, *args) * (1 + 1j * sigma)
        head = 0.5 * np.real(fn.scalar(r.astype(complex), *args)) * np.exp(r * points)
        talbot = r / M * (head + np.real(values).sum(axis=1))
    if np.all(np.isfinite(talbot)):
        return euler, talbot, "fixed Talbot (Abate & Valko 2004)", 16
    more = math.ceil(1.5 * M)
    beta, eta, scale = _euler_nodes(more)
    nodes = np.asarray(beta)[None, :] / points[:, None]
    with np.errstate(all="ignore"):
        other = scale / points * (np.real(fn.scalar(nodes, *args)) @ np.asarray(eta))
    return euler, other, f"unified Euler with M = {more}", 16


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
