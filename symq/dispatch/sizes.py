"""Job-size laws for the dispatching models: the one conversion, and what the solvers need.

Every solver and simulator of :mod:`symq.dispatch` takes one *job-size law* and converts it in
one place, :func:`as_size_law`: a :class:`symq.laws.PhaseType` or a pair ``(alpha, A)`` (a
hyper-Erlang or H2 from the constructors), an :class:`symq.me.ME` law (fitted by
:func:`symq.me.fit`, through its phase-type form when it has one, through its distribution verbs
otherwise), a frozen ``scipy.stats`` distribution, any symq
:class:`~symq.laws.Distribution`, a name of :data:`SIZE_NAMES`, or a
:class:`SizeLaw`.

A :class:`SizeLaw` is the internal representation: the mean, the second moment, the cdf, the
partial moments ``E[X; X <= x]`` and ``E[X^2; X <= x]`` (for the mean-preserving hat-kernel
discretisation of value iteration and for SITA), and samples.  Constructors: :func:`exponential`,
:func:`hyperexponential2`, :func:`from_scipy` (any frozen continuous ``scipy.stats`` law with
finite variance), :func:`from_phase_type` (``(alpha, A)``, exact partial moments),
:func:`from_me` and :func:`from_distribution` (tabulated partial moments).

Examples
--------
>>> X = exponential(1.0)
>>> X.mean, X.second_moment
(1.0, 2.0)
>>> round(float(X.partial_mean(1.0)), 12)    # 1 - 2/e
0.264241117657
>>> from symq.me import ME
>>> as_size_law(ME.erlang(2, 4)).mean                # through its phase-type form
0.5
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value, real_value
from symq.core.randomness import RngLike, as_generator
from symq.laws import Distribution, PhaseType, as_phase_type, describe_law

__all__ = ["SizeLaw", "as_size_law", "exponential", "from_scipy", "from_phase_type", "from_me",
           "from_distribution", "from_law", "get_sizes", "hyperexponential2", "SIZE_NAMES", "H2_SCV_MAX"]


@dataclass(frozen=True)
class SizeLaw:
    """A job-size law on ``(0, inf)`` with finite second moment.

    Attributes
    ----------
    name : str
    mean, second_moment : float
    is_exponential : bool
        True for the exponential law (exact formulas for RR, LWL, JSQ need it).
    """

    name: str
    mean: float
    second_moment: float
    _cdf: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    _ccdf: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    _partial: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    _partial2: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    _sample: Callable[[int, np.random.Generator], NDArray[np.float64]] = field(repr=False)
    is_exponential: bool = False

    @property
    def scv(self) -> float:
        """Squared coefficient of variation."""
        return self.second_moment / self.mean ** 2 - 1.0

    def _repr_markdown_(self) -> str:  # Jupyter
        from symq.core.display import markdown

        return markdown(f"**SizeLaw** {self.name}: a job-size law of the dispatcher",
                        [("mean", self.mean), ("second_moment", self.second_moment),
                         ("scv", self.scv), ("is_exponential", self.is_exponential)])

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """``P(X <= x)``."""
        return self._cdf(np.maximum(np.asarray(x, dtype=float), 0.0))

    def ccdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """``P(X > x)`` (computed directly, accurate in the tail)."""
        return self._ccdf(np.maximum(np.asarray(x, dtype=float), 0.0))

    def partial_mean(self, x: ArrayLike) -> NDArray[np.float64]:
        """``E[X; X <= x]``."""
        return self._partial(np.maximum(np.asarray(x, dtype=float), 0.0))

    def partial_second_moment(self, x: ArrayLike) -> NDArray[np.float64]:
        """``E[X^2; X <= x]``."""
        return self._partial2(np.maximum(np.asarray(x, dtype=float), 0.0))

    def sample(self, n: int, rng: RngLike = None) -> NDArray[np.float64]:
        """``n`` independent sizes."""
        return self._sample(integer_value("n", n, 0), as_generator(rng))


#: ``y`` beyond which ``e^{-y} (1 + y + y^2/2)`` is below the smallest double (exactly 0).
_EXP_TAIL = 800.0


def exponential(mean: float = 1.0) -> SizeLaw:
    """Exponential sizes with the given mean (closed-form partial moments)."""
    mean = real_value("mean", mean, "a finite real number > 0", lambda v: v > 0)
    rate = 1.0 / mean

    def partial(x: NDArray[np.float64]) -> NDArray[np.float64]:
        # E[X; X <= x] = mean (1 - e^{-rx}(1 + rx)); y e^{-y} -> 0 (also at x = inf)
        y = rate * x
        with np.errstate(over="ignore", invalid="ignore"):
            tail = np.where(y < _EXP_TAIL, y * np.exp(-np.minimum(y, _EXP_TAIL)), 0.0)
        return mean * (-np.expm1(-y) - tail)

    def partial2(x: NDArray[np.float64]) -> NDArray[np.float64]:
        # E[X^2; X <= x] = 2 mean^2 (1 - e^{-rx}(1 + rx + (rx)^2/2)); the tail is 0 for large rx
        y = rate * x
        with np.errstate(over="ignore", invalid="ignore"):
            z = np.minimum(y, _EXP_TAIL)
            tail = np.where(y < _EXP_TAIL, np.exp(-z) * (z + z * z / 2), 0.0)
        return 2 * mean ** 2 * (-np.expm1(-y) - tail)

    return SizeLaw(name=f"exp(mean={mean:g})", mean=mean, second_moment=2 * mean ** 2,
                   _cdf=lambda x: -np.expm1(-rate * x), _ccdf=lambda x: np.exp(-rate * x),
                   _partial=partial, _partial2=partial2,
                   _sample=lambda n, g: g.exponential(mean, size=n), is_exponential=True)


def from_scipy(dist: Any, name: str | None = None, *, param: str = "dist") -> SizeLaw:
    """Sizes from a frozen continuous ``scipy.stats`` law on ``[0, inf)`` with finite variance.

    Partial moments come from ``dist.expect`` (quadrature) through a tabulated cumulative
    integral on a fine grid, so that vectorised calls stay cheap.  Errors name ``param``.
    """
    try:
        support = dist.support()
        mean, var = float(dist.mean()), float(dist.var())
    except AttributeError:
        raise InvalidParameter(param, describe_law(dist),
                               "a frozen scipy.stats continuous distribution") from None
    if support[0] < 0 or not (math.isfinite(mean) and math.isfinite(var) and mean > 0):
        raise InvalidParameter(param, describe_law(dist),
                               "a law on [0, inf) with finite mean and variance")
    grid, m1, m2 = _partial_tables(dist.cdf, float(dist.isf(1e-14)), mean, var + mean ** 2)
    return SizeLaw(name=name or dist.dist.name, mean=mean, second_moment=var + mean ** 2,
                   _cdf=lambda x: dist.cdf(x), _ccdf=lambda x: dist.sf(x),
                   _partial=lambda x: np.interp(x, grid, m1),
                   _partial2=lambda x: np.interp(x, grid, m2),
                   _sample=lambda n, g: dist.rvs(size=n, random_state=g))


def _partial_tables(cdf: Callable[[NDArray[np.float64]], Any], top: float, mean: float,
                    second: float) -> tuple[NDArray[np.float64], ...]:
    """Cumulative partial moments on a geometric grid up to ``top`` (midpoint rule on the cdf
    increments), scaled to the exact ``mean`` and ``second`` moment at the end."""
    grid = np.concatenate([[0.0], np.geomspace(max(top, 1.0) * 1e-9, top, 20001)])
    mid = 0.5 * (grid[1:] + grid[:-1])
    mass = np.diff(np.asarray(cdf(grid), dtype=float))
    m1 = np.concatenate([[0.0], np.cumsum(mass * mid)])
    m2 = np.concatenate([[0.0], np.cumsum(mass * mid * mid)])
    m1 *= mean / m1[-1]
    m2 *= second / m2[-1]
    return grid, m1, m2


def from_distribution(law: Distribution, name: str | None = None, *,
                      param: str = "sizes") -> SizeLaw:
    """Sizes from any law with symq's distribution verbs (an ME law without phase-type form, a
    symq :class:`~symq.laws.Distribution`): partial moments tabulated from its cdf
    as in :func:`from_scipy`, samples from its ``sample``.

    Raises
    ------
    InvalidParameter
        Naming ``param`` for a law off ``[0, inf)`` or without finite mean and variance.
    """
    domain = "a job-size law on [0, inf) with finite mean and variance"
    try:
        low = float(law.support()[0])
        mean, second = float(law.mean()), float(law.moment(2))
    except (TypeError, ValueError, InvalidParameter) as exc:
        raise InvalidParameter(param, describe_law(law), domain, str(exc)) from None
    if low < 0 or not (math.isfinite(mean) and mean > 0 and math.isfinite(second)):
        raise InvalidParameter(param, describe_law(law), domain)
    top = mean
    while not float(law.ccdf(top)) < 1e-14:
        top *= 2.0
        if top > 1e8 * mean:
            raise InvalidParameter(param, describe_law(law), domain + " and a vanishing tail",
                                   f"P(X > {top:g}) >= 1e-14")
    grid, m1, m2 = _partial_tables(law.cdf, top, mean, second)
    return SizeLaw(name=name or repr(law), mean=mean, second_moment=second,
                   _cdf=lambda x: np.asarray(law.cdf(x), dtype=float),
                   _ccdf=lambda x: np.asarray(law.ccdf(x), dtype=float),
                   _partial=lambda x: np.interp(x, grid, m1),
                   _partial2=lambda x: np.interp(x, grid, m2),
                   _sample=lambda n, g: np.asarray(law.sample(n, rng=g), dtype=float))


def _has_closed_partial(law: Distribution) -> bool:
    """True where ``law.partial_moment`` is a vectorised closed form (it overrides the checked
    quadrature of :meth:`symq.laws.Distribution.partial_moment`, one ``quad`` per point)."""
    return type(law).partial_moment is not Distribution.partial_moment


def from_law(law: Distribution, name: str | None = None, *, param: str = "sizes") -> SizeLaw:
    """Sizes from a :class:`symq.laws.Distribution` with a closed-form ``partial_moment`` (the
    named laws of :data:`symq.laws.SIZE_LAWS`: lognormal, Weibull, Erlang, gamma, uniform, ...):
    its cdf, ccdf, partial moments of orders 1 and 2 and samples, used directly.  A law whose
    partial moments would come from the per-point quadrature is tabulated once
    (:func:`from_distribution`) so that value iteration on large grids stays cheap.

    Raises
    ------
    InvalidParameter
        Naming ``param`` for a law off ``[0, inf)`` or without finite mean and variance.

    Examples
    --------
    >>> from symq.laws import as_law
    >>> X = from_law(as_law("lognormal", scv=4.0))
    >>> round(X.mean, 12), round(X.scv, 10)
    (1.0, 4.0)
    """
    if not _has_closed_partial(law):
        return from_distribution(law, name, param=param)
    domain = "a job-size law on [0, inf) with finite mean and variance"
    try:
        low = float(law.support()[0])
        mean, second = float(law.mean()), float(law.moment(2))
    except (TypeError, ValueError, InvalidParameter) as exc:
        raise InvalidParameter(param, describe_law(law), domain, str(exc)) from None
    if low < 0 or not (math.isfinite(mean) and mean > 0 and math.isfinite(second)):
        raise InvalidParameter(param, describe_law(law), domain)
    return SizeLaw(name=name or repr(law), mean=mean, second_moment=second,
                   _cdf=lambda x: np.asarray(law.cdf(x), dtype=float),
                   _ccdf=lambda x: np.asarray(law.ccdf(x), dtype=float),
                   _partial=lambda x: np.asarray(law.partial_moment(1, x), dtype=float),
                   _partial2=lambda x: np.asarray(law.partial_moment(2, x), dtype=float),
                   _sample=lambda n, g: np.asarray(law.sample(n, rng=g), dtype=float),
                   is_exponential=bool(law.is_exponential))


def from_phase_type(alpha: ArrayLike, A: ArrayLike, name: str = "PH") -> SizeLaw:
    """Sizes from a phase-type representation ``(alpha, A)`` (exact partial moments by expm)."""
    import scipy.linalg

    a = np.asarray(alpha, dtype=float)
    T = np.asarray(A, dtype=float)
    if a.ndim != 1 or T.shape != (a.size, a.size) or np.any(a < 0) \
            or abs(a.sum() - 1) > 1e-10 or np.any(np.diag(T) >= 0):
        raise InvalidParameter("A", (alpha, A), "a phase-type pair (alpha, A): alpha a "
                               "probability vector, A a sub-generator")
    law = PhaseType(a, T, name=name)
    inv = np.linalg.inv(-T)
    ones = np.ones(a.size)
    mean = float(a @ inv @ ones)
    second = float(2 * a @ inv @ inv @ ones)

    def each(x: NDArray[np.float64], f: Callable[[float], float]) -> NDArray[np.float64]:
        flat = np.array([f(float(v)) for v in np.ravel(x)])
        return flat.reshape(np.shape(x))

    def ccdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(law.ccdf(x), dtype=float)

    def partial1(x: float) -> float:
        # E[X; X > x] = alpha e^{Tx} (x I + (-T)^{-1}) 1
        e = a @ scipy.linalg.expm(T * x)
        return mean - float(e @ (x * ones + inv @ ones))

    def partial2(x: float) -> float:
        # E[X^2; X > x] = alpha e^{Tx} (x^2 + 2x (-T)^{-1} + 2 (-T)^{-2}) 1
        e = a @ scipy.linalg.expm(T * x)
        return second - float(e @ (x * x * ones + 2 * x * inv @ ones + 2 * inv @ inv @ ones))

    return SizeLaw(name=name, mean=mean, second_moment=second,
                   _cdf=lambda x: 1.0 - ccdf(x), _ccdf=ccdf,
                   _partial=lambda x: each(x, partial1), _partial2=lambda x: each(x, partial2),
                   _sample=lambda n, g: law.sample((n,), rng=g), is_exponential=a.size == 1)


def from_me(law: Any, name: str | None = None) -> SizeLaw:
    """Sizes from a :class:`symq.me.ME` law: through its phase-type form
    (:func:`symq.laws.as_phase_type`, Cumani's CF1 series form) when it has one, with exact
    partial moments; through its distribution verbs (:func:`from_distribution`) otherwise."""
    try:
        ph = as_phase_type(law, "sizes")
    except InvalidParameter:
        return from_distribution(law, name or repr(law))
    return from_phase_type(ph.alpha, ph.A, name=name or repr(law))


def as_size_law(law: Any, name: str = "sizes") -> SizeLaw:
    """The one conversion of a job-size law for the dispatching solvers and the simulator.

    Parameters
    ----------
    law : job-size law
        A :class:`SizeLaw` (returned as is); a name of :data:`SIZE_NAMES` (:func:`get_sizes`); a
        :class:`symq.laws.PhaseType` or a pair ``(alpha, A)`` such as a hyper-Erlang or H2
        from the constructors (exact partial moments, :func:`from_phase_type`); an
        :class:`symq.me.ME` law (:func:`from_me`); a frozen ``scipy.stats`` distribution
        (:func:`from_scipy`); or any symq :class:`~symq.laws.Distribution`
        (:func:`from_distribution`).
    name : str
        The caller's parameter name, for messages.

    Raises
    ------
    InvalidParameter
        Naming ``name`` for anything else, an invalid phase-type pair, or a law without finite
        mean and variance.

    Examples
    --------
    >>> import scipy.stats
    >>> as_size_law(scipy.stats.uniform(0, 2)).second_moment
    1.3333333333333333
    >>> as_size_law(([1.0], [[-2.0]])).mean
    0.5
    """
    if isinstance(law, SizeLaw):
        return law
    if isinstance(law, str):
        return get_sizes(law)
    if hasattr(law, "rvs") and hasattr(law, "dist"):
        if getattr(law.dist, "name", "") == "expon" and float(law.support()[0]) == 0.0:
            return exponential(float(law.mean()))      # closed forms (and the exact formulas)
        return from_scipy(law, param=name)
    from symq.me import ME

    if isinstance(law, ME):
        return from_me(law)
    if isinstance(law, (PhaseType, tuple, list)):
        ph = as_phase_type(law, name)
        return from_phase_type(ph.alpha, ph.A, name=ph.name)
    if isinstance(law, Distribution):
        return from_distribution(law, param=name)
    raise InvalidParameter(name, describe_law(law), "a job-size law: a symq.laws.PhaseType, a "
                           "pair (alpha, A), an ME law, a frozen scipy.stats distribution, a "
                           f"symq Distribution or one of {', '.join(SIZE_NAMES)}")


#: The names of the job-size laws built as before the laws' vocabulary (:func:`get_sizes` accepts
#: every name of :data:`symq.laws.SIZE_LAWS`).
SIZE_NAMES = ("exp", "uniform", "h2")


#: Largest SCV of the ``h2`` law by name: beyond it the long phase (mean about ``scv``, probability
#: about ``1/(2 scv)``) is outside what the exact formulas resolve in double precision
#: (``E[X^2] = 1 + scv`` must stay far below the float range).
H2_SCV_MAX = 1e12


def hyperexponential2(scv: float) -> SizeLaw:
    r"""Balanced-means two-phase hyperexponential law with mean 1 and the given SCV > 1.

    Phase ``i`` has probability :math:`p_i` and rate :math:`2 p_i` (each phase carries half
    the mean), :math:`p_{1,2} = (1 \pm \sqrt{(c^2-1)/(c^2+1)})/2`; the small probability is
    computed as :math:`(1/(c^2+1))/(1 + \sqrt{(c^2-1)/(c^2+1)})` without cancellation.  The
    partial moments use the regularised incomplete gamma function,
    :math:`E[X^k; X \le x] = \sum_i p_i\, k!\, r_i^{-k} P(k+1, r_i x)`, exact in floating
    point for every SCV (no ``mean - tail`` cancellation).

    Examples
    --------
    >>> X = hyperexponential2(4.0)
    >>> round(X.mean, 12), round(X.scv, 10)
    (1.0, 4.0)
    """
    from scipy import special

    scv = real_value("scv", scv, "a finite real number > 1", lambda c: c > 1)
    r = math.sqrt((scv - 1) / (scv + 1))
    p_small = (1.0 / (scv + 1)) / (1.0 + r)
    probs = np.array([1.0 - p_small, p_small])
    rates = 2.0 * probs
    second = float(np.sum(probs * 2.0 / rates ** 2))

    # r x overflows to inf for x near the largest double: e^{-inf} = 0 and P(k+1, inf) = 1 are
    # the right limits, so the overflow is silenced where it happens
    def cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore"):
            y = np.multiply.outer(rates, x.ravel())
        return -np.sum(probs[:, None] * np.expm1(-y), axis=0).reshape(x.shape)

    def ccdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        with np.errstate(over="ignore"):
            y = np.multiply.outer(rates, x.ravel())
        return np.sum(probs[:, None] * np.exp(-y), axis=0).reshape(x.shape)

    def partial(k: int) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
        def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
            x = np.asarray(x, dtype=float)
            with np.errstate(over="ignore"):
                y = np.multiply.outer(rates, x.ravel())
            terms = (probs * math.factorial(k) / rates ** k)[:, None] * special.gammainc(k + 1, y)
            return np.sum(terms, axis=0).reshape(x.shape)
        return f

    def sample(n: int, g: np.random.Generator) -> NDArray[np.float64]:
        phase = (g.random(n) < p_small).astype(np.int64)
        return g.exponential(1.0, size=n) / rates[phase]

    return SizeLaw(f"H2(scv={scv:g})", 1.0, second, cdf, ccdf, partial(1), partial(2), sample)


def get_sizes(name: str = "exp", scv: float | None = None) -> SizeLaw:
    """A size law with mean 1 by a name of the laws' vocabulary :data:`symq.laws.SIZE_LAWS`
    (``exp``, ``det``, ``erlang``, ``h2``, ``gamma``, ``lognormal``, ``weibull``, ``pareto``,
    ``lomax``, ``uniform``) and its SCV (:func:`symq.laws.size_law`).

    Two defaults keep the dispatching model's earlier meaning: ``h2`` without ``scv`` has SCV 4
    (the paper's), ``uniform`` without ``scv`` is uniform on (0, 2) (SCV 1/3, tabulated partial
    moments as before).  ``exp``, ``uniform`` and ``h2`` are built as before (:func:`exponential`,
    :func:`hyperexponential2`), so their values do not change; every other name goes through
    :func:`symq.laws.as_law` and :func:`from_law`.

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for an unknown name, ``scv`` for an SCV the law cannot have (or one
        missing where the law needs it).

    Examples
    --------
    >>> round(get_sizes("weibull", 2.0).scv, 10), get_sizes("weibull", 2.0).name
    (2.0, 'weibull(scv=2)')
    """
    import scipy.stats

    from symq.laws import SIZE_LAWS, as_law

    key = str(name).strip().lower()
    if key not in SIZE_LAWS:
        raise InvalidParameter("sizes", name, "one of " + ", ".join(SIZE_LAWS))
    if key == "exp" and scv is None:
        return exponential(1.0)
    if key == "uniform" and scv is None:
        return from_scipy(scipy.stats.uniform(0.0, 2.0), name="uniform(0, 2)")
    if key == "h2":
        c2 = 4.0 if scv is None else scv
        return hyperexponential2(real_value("scv", c2, f"a real number in (1, {H2_SCV_MAX:g}] "
                                            "for h2 sizes", lambda c: 1 < c <= H2_SCV_MAX))
    return from_law(as_law(key, "sizes", mean=1.0, scv=scv), name=_law_label(key, scv))


def _law_label(key: str, scv: float | None) -> str:
    """The readable name of a law of the vocabulary with mean 1, ``lognormal(scv=4)``."""
    return key if scv is None else f"{key}(scv={float(scv):g})"
