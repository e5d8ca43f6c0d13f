r"""The named continuous job-size laws, each computing through one frozen scipy object.

One class per name of the vocabulary :data:`symq.laws.named.SIZE_LAWS` that scipy tabulates:
:class:`Exponential` (``exp``), :class:`Erlang` (``erlang``), :class:`Gamma` (``gamma``),
:class:`Lognormal` (``lognormal``), :class:`Weibull` (``weibull``), :class:`Pareto` (``pareto``),
:class:`Lomax` (``lomax``) and :class:`Uniform` (``uniform``).  Each is a
:class:`~symq.laws.phase_type.ScipyLaw` holding the frozen ``scipy.stats`` object (``law.dist``)
that :func:`symq.laws.named.size_law` has always built, so the density, distribution function,
tail, quantiles, the first two moments and the samples (``dist.rvs`` with the caller's generator)
are scipy's, number for number and draw for draw.  What the classes add are closed forms:

* raw moments of order 3 and more (:math:`E[X^k]`, ``inf`` refused as
  :class:`~symq.laws.protocol.InfiniteMoment`);
* partial moments :math:`E[X^k; X \le x]` by the regularised incomplete gamma function
  :math:`P(a, y)` (exponential, Erlang, gamma, Weibull), the normal distribution function
  (lognormal), powers (Pareto, uniform) and the regularised incomplete beta function (Lomax):

  ==============  ==========================================================================
  law             :math:`E[X^k; X \le x]`
  ==============  ==========================================================================
  gamma(a, θ)     :math:`\theta^k \frac{\Gamma(a+k)}{\Gamma(a)} P(a+k, x/\theta)`
  Weibull(c, λ)   :math:`\lambda^k \Gamma(1+k/c)\, P(1+k/c, (x/\lambda)^c)`
  lognormal       :math:`e^{k\mu + k^2\sigma^2/2}\, \Phi((\ln x - \mu - k\sigma^2)/\sigma)`
  Pareto(a, m)    :math:`a m^k \frac{1 - (m/x)^{a-k}}{a-k}` (:math:`a m^k \ln(x/m)` at
                  :math:`a = k`), :math:`x \ge m`
  Lomax(a, s)     :math:`s^k\, a B(k+1, a-k)\, I_{u}(k+1, a-k)`, :math:`u = x/(s+x)`, for
                  :math:`a > k`
  uniform         :math:`\frac{\min(x, b)^{k+1} - l^{k+1}}{(k+1)(b-l)}`, :math:`x \ge l`
  ==============  ==========================================================================

* the exponential law's phase-type form and :attr:`Exponential.is_exponential`; the Erlang law's
  phase-type form (:func:`symq.laws.ph_families.erlang`).

Each class has a ``name`` equal to its vocabulary key, a readable repr, and
:meth:`NamedScipyLaw.from_scipy`, which wraps a given frozen object of its family (what
:func:`symq.laws.conversion.as_law` does for a frozen ``scipy.stats.expon``).

Examples
--------
>>> law = Gamma(2.0, mean=3.0)
>>> law
Gamma(shape=2.0, mean=3.0)
>>> float(law.mean()), float(law.moment(3))      # theta^3 a (a+1) (a+2), theta = 1.5
(3.0, 81.0)
>>> round(float(law.partial_moment(1, 3.0)), 12)   # E[X; X <= 3] = 3 (1 - 5 e^{-2})
0.969970751451
"""

from __future__ import annotations

import abc
import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import PositiveReal

from .phase_type import PhaseType, ScipyLaw
from .protocol import InfiniteMoment, _order, describe_law

__all__ = ["NamedScipyLaw", "Exponential", "Erlang", "Gamma", "Lognormal", "Weibull", "Pareto",
           "Lomax", "Uniform", "NAMED_SCIPY_LAWS"]

#: ``y`` beyond which ``e^{-y} (1 + y + y^2/2)`` is below the smallest double (exactly 0).
_EXP_TAIL = 800.0


def _positive(name: str, value: Any) -> float:
    return float(PositiveReal().coerce(name, value))


def _points(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=float)


def _shaped(out: NDArray[np.float64], points: NDArray[np.float64]) -> Any:
    return out[()] if points.ndim == 0 else out


class NamedScipyLaw(ScipyLaw):
    """Base of the named laws: a :class:`~symq.laws.phase_type.ScipyLaw` on a frozen object of
    one scipy family, with the family's parameters read back (``shapes``, ``loc``, ``scale``)
    for the closed forms.

    Subclasses set ``family`` (the scipy name) and ``name`` (the vocabulary key), build the
    frozen object in ``__init__`` and implement ``_moment_closed_form`` and ``_partial``.
    """

    #: The scipy family (``expon``, ``gamma``, ...).
    family: ClassVar[str] = ""
    #: Whether the family may be shifted (``loc != 0``).
    shifted: ClassVar[bool] = False

    def _wrap(self, dist: Any, shown: dict[str, float]) -> None:
        ScipyLaw.__init__(self, dist, self.name)  # the class's vocabulary name
        self._parameter = "sizes"
        shapes, loc, scale = dist.dist._parse_args(*dist.args, **dist.kwds)
        self.shapes: tuple[float, ...] = tuple(float(v) for v in shapes)
        self.loc, self.scale = float(loc), float(scale)
        self._shown = shown

    @classmethod
    def from_scipy(cls, dist: Any) -> NamedScipyLaw:
        """The law on the given frozen scipy object of this class's family (used as is: the
        same numbers and random stream).

        Raises
        ------
        InvalidParameter
            Naming ``dist`` for an object of another family, or shifted (``loc != 0``) where
            the family is not (every one but ``uniform``).
        """
        family = getattr(getattr(dist, "dist", None), "name", None)
        if not hasattr(dist, "rvs") or family != cls.family:
            raise InvalidParameter("dist", describe_law(dist),
                                   f"a frozen scipy.stats.{cls.family} distribution")
        law = cls.__new__(cls)
        law._wrap(dist, {})
        if law.loc != 0.0 and not cls.shifted:
            raise InvalidParameter("dist", describe_law(dist),
                                   f"a frozen scipy.stats.{cls.family} distribution with loc = 0")
        law._shown = law._parameters()
        return law

    @abc.abstractmethod
    def _parameters(self) -> dict[str, float]:
        """The constructor's parameters, computed from the frozen object (for the repr)."""

    def __repr__(self) -> str:
        shown = self._shown or self._parameters()
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamedScipyLaw):
            return NotImplemented
        return type(self) is type(other) and (self.shapes, self.loc, self.scale) == \
            (other.shapes, other.loc, other.scale)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.shapes, self.loc, self.scale))

    # -- moments ------------------------------------------------------------------------------
    def _raw_moment(self, order: int) -> float:
        """``E[X^order]``: orders 1 and 2 from scipy's closed-form mean and variance (the numbers
        symq has always used), higher orders from the family's closed form."""
        if order <= 2:
            return ScipyLaw._raw_moment(self, order)
        value = float(self._moment_closed_form(order))
        if not math.isfinite(value):
            raise InfiniteMoment(self._parameter, describe_law(self.dist), "a law with a finite "
                                 f"moment of order {order}", f"E[X^{order}] = {value}")
        return value

    @abc.abstractmethod
    def _moment_closed_form(self, order: int) -> float:
        """``E[X^order]`` of the family in closed form (``inf`` where it diverges)."""

    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        r"""The partial moment :math:`E[X^k; X \le x]` in closed form (module docstring),
        vectorised over ``x``: 0 below the support, :math:`E[X^k]` (``inf`` where infinite) at
        ``x = inf``, NaN passed through; ``order = 0`` is the cdf."""
        order = _order(order)
        points = _points(x)
        if order == 0:
            return self.cdf(points)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.asarray(self._partial(order, np.maximum(points, 0.0)), dtype=float)
        out = np.where(np.isnan(points), np.nan, np.where(points < self.loc, 0.0, out))
        return _shaped(out, points)

    @abc.abstractmethod
    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``E[X^order; X <= x]`` of the family in closed form, for ``x >= 0``."""

    def _full(self, order: int) -> float:
        try:
            return float(self.moment(order))
        except InfiniteMoment:
            return math.inf


def _gamma_partial(full: float, shape: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
    """``full * P(shape, y)``, exactly ``full`` at ``y = inf``."""
    from scipy import special

    return np.where(np.isinf(y), full, full * special.gammainc(shape, y))


class Exponential(NamedScipyLaw):
    r"""The exponential law with mean ``mean`` (``exp``; ``scipy.stats.expon(scale=mean)``).

    Its partial moments of orders 1 and 2 are the explicit forms
    :math:`E[X; X \le x] = m(1 - e^{-y}(1 + y))` and
    :math:`E[X^2; X \le x] = 2m^2(1 - e^{-y}(1 + y + y^2/2))`, :math:`y = x/m` (as
    :func:`symq.dispatch.sizes.exponential`), higher orders
    :math:`k!\, m^k P(k+1, y)`.  :meth:`phase_type` is the one-phase ``PH([1], [[-1/m]])``.

    Parameters
    ----------
    mean : float
        :math:`E[X] > 0`.

    Examples
    --------
    >>> law = Exponential(2.0)
    >>> law, law.is_exponential, round(float(law.partial_moment(1, 2.0)), 12)
    (Exponential(mean=2.0), True, 0.528482235314)
    """

    name = "exp"
    family = "expon"

    def __init__(self, mean: float) -> None:
        from scipy import stats

        mean = _positive("mean", mean)
        self._wrap(stats.expon(scale=mean), {"mean": mean})

    def _parameters(self) -> dict[str, float]:
        return {"mean": self.scale}

    @property
    def is_exponential(self) -> bool:
        """True."""
        return True

    def phase_type(self) -> PhaseType:
        """The one-phase law ``PH([1], [[-1/mean]])``."""
        return PhaseType([1.0], [[-1.0 / self.scale]], name=repr(self))

    def _moment_closed_form(self, order: int) -> float:
        return math.factorial(order) * self.scale ** order

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        mean, rate = self.scale, 1.0 / self.scale
        y = rate * x
        if order == 1:      # y e^{-y} -> 0 (also at x = inf)
            tail = np.where(y < _EXP_TAIL, y * np.exp(-np.minimum(y, _EXP_TAIL)), 0.0)
            return mean * (-np.expm1(-y) - tail)
        if order == 2:
            z = np.minimum(y, _EXP_TAIL)
            tail = np.where(y < _EXP_TAIL, np.exp(-z) * (z + z * z / 2), 0.0)
            return 2 * mean ** 2 * (-np.expm1(-y) - tail)
        return _gamma_partial(self._full(order), order + 1.0, y)


class Gamma(NamedScipyLaw):
    r"""The gamma law of shape :math:`a` and mean :math:`m` (``gamma``; scale
    :math:`\theta = m/a`, SCV :math:`1/a`), ``scipy.stats.gamma(a, scale=m/a)``.

    Parameters
    ----------
    shape : float
        :math:`a > 0`.
    mean : float
        :math:`E[X] > 0`.

    Examples
    --------
    >>> Gamma(0.5, 2.0).variance()     # a theta^2 = 0.5 * 16
    8.0
    """

    name = "gamma"
    family = "gamma"

    def __init__(self, shape: float, mean: float) -> None:
        from scipy import stats

        shape, mean = _positive("shape", shape), _positive("mean", mean)
        self._wrap(stats.gamma(shape, scale=mean / shape), {"shape": shape, "mean": mean})

    def _parameters(self) -> dict[str, float]:
        return {"shape": self.shapes[0], "mean": self.shapes[0] * self.scale}

    def _moment_closed_form(self, order: int) -> float:
        from scipy import special

        return self.scale ** order * float(special.poch(self.shapes[0], order))

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return _gamma_partial(self._full(order), self.shapes[0] + order, x / self.scale)


class Erlang(Gamma):
    r"""The Erlang law of ``k`` phases and mean :math:`m` (``erlang``; SCV :math:`1/k`),
    ``scipy.stats.erlang(k, scale=m/k)``.  :meth:`phase_type` is the chain of ``k`` phases of
    rate :math:`k/m` (:func:`symq.laws.ph_families.erlang`).

    Parameters
    ----------
    k : int
        Number of phases, ``>= 1``.
    mean : float
        :math:`E[X] > 0`.

    Examples
    --------
    >>> law = Erlang(3, 1.5)
    >>> law, law.phase_type().order
    (Erlang(k=3, mean=1.5), 3)
    """

    name = "erlang"
    family = "erlang"

    def __init__(self, k: int, mean: float) -> None:
        from scipy import stats

        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidParameter("k", k, "an integer >= 1 (the number of phases)")
        mean = _positive("mean", mean)
        self._wrap(stats.erlang(int(k), scale=mean / int(k)), {"k": int(k), "mean": mean})

    def _parameters(self) -> dict[str, float]:
        k = int(round(self.shapes[0]))
        return {"k": k, "mean": k * self.scale}

    def phase_type(self) -> PhaseType:
        """``k`` phases in series, each of rate ``1/scale`` (an integer shape; a frozen
        ``erlang`` with a non-integer shape has none)."""
        k = self.shapes[0]
        if k != round(k):
            return super().phase_type()
        rate = 1.0 / self.scale
        m = int(k)
        A = -rate * np.eye(m) + rate * np.eye(m, k=1)
        return PhaseType(np.eye(1, m)[0], A, name=repr(self))


class Lognormal(NamedScipyLaw):
    r"""The lognormal law of mean :math:`m` and SCV :math:`c^2` (``lognormal``):
    :math:`\ln X \sim N(\mu, \sigma^2)` with :math:`\sigma^2 = \ln(1 + c^2)`,
    :math:`\mu = \ln m - \sigma^2/2`; ``scipy.stats.lognorm(sigma, scale=e^mu)``.

    Parameters
    ----------
    mean : float
        :math:`E[X] > 0`.
    scv : float
        :math:`c^2 > 0`.

    Examples
    --------
    >>> law = Lognormal(1.0, 3.0)
    >>> round(float(law.moment(3)), 10)     # e^{3 mu + 9 sigma^2/2} = (1 + c^2)^3
    64.0
    """

    name = "lognormal"
    family = "lognorm"

    def __init__(self, mean: float, scv: float) -> None:
        from scipy import stats

        mean, scv = _positive("mean", mean), _positive("scv", scv)
        sigma2 = math.log1p(scv)
        self._wrap(stats.lognorm(math.sqrt(sigma2), scale=mean * math.exp(-0.5 * sigma2)),
                   {"mean": mean, "scv": scv})

    def _parameters(self) -> dict[str, float]:
        s2 = self.shapes[0] ** 2
        return {"mean": self.scale * math.exp(s2 / 2), "scv": math.expm1(s2)}

    def _moment_closed_form(self, order: int) -> float:
        s = self.shapes[0]
        return self.scale ** order * math.exp(order * order * s * s / 2)

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        from scipy import special

        s = self.shapes[0]
        z = (np.log(x / self.scale) - order * s * s) / s
        return np.where(np.isinf(x), self._full(order), self._full(order) * special.ndtr(z))


class Weibull(NamedScipyLaw):
    r"""The Weibull law of shape :math:`c` and mean :math:`m` (``weibull``): scale
    :math:`\lambda = m/\Gamma(1 + 1/c)`, :math:`P(X > x) = e^{-(x/\lambda)^c}`;
    ``scipy.stats.weibull_min(c, scale=lambda)``.  :func:`symq.laws.named.weibull_shape` gives
    the shape of a given SCV.

    Parameters
    ----------
    shape : float
        :math:`c > 0`.
    mean : float
        :math:`E[X] > 0`.

    Examples
    --------
    >>> law = Weibull(1.0, 2.0)        # the exponential law of mean 2, by scipy's Weibull
    >>> round(float(law.partial_moment(1, 2.0)), 12)
    0.528482235314
    """

    name = "weibull"
    family = "weibull_min"

    def __init__(self, shape: float, mean: float) -> None:
        from scipy import special, stats

        k, mean = _positive("shape", shape), _positive("mean", mean)
        self._wrap(stats.weibull_min(k, scale=mean / math.exp(special.gammaln(1.0 + 1.0 / k))),
                   {"shape": k, "mean": mean})

    def _parameters(self) -> dict[str, float]:
        c = self.shapes[0]
        return {"shape": c, "mean": self.scale * math.gamma(1.0 + 1.0 / c)}

    def _moment_closed_form(self, order: int) -> float:
        from scipy import special

        c = self.shapes[0]
        return self.scale ** order * math.exp(special.gammaln(1.0 + order / c))

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        c = self.shapes[0]
        return _gamma_partial(self._full(order), 1.0 + order / c, (x / self.scale) ** c)


def _power_integral(c: float, log_ratio: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`\int_0^{L} e^{-c t} dt = (1 - e^{-cL})/c` (``L`` at ``c = 0``), ``L >= 0``."""
    if c == 0.0:
        return log_ratio
    return np.where(np.isinf(log_ratio), 1.0 / c if c > 0 else np.inf,
                    -np.expm1(-c * log_ratio) / c)


class Pareto(NamedScipyLaw):
    r"""The classical Pareto law of shape :math:`a` and mean :math:`m` (``pareto``): on
    :math:`[x_m, \infty)` with :math:`P(X > x) = (x_m/x)^a`, :math:`x_m = m(a-1)/a`, mean finite
    for :math:`a > 1`; ``scipy.stats.pareto(a, scale=x_m)``.  :math:`E[X^k]` is finite for
    :math:`k < a` only.

    Parameters
    ----------
    shape : float
        :math:`a > 1`.
    mean : float
        :math:`E[X] > 0`.

    Examples
    --------
    >>> law = Pareto(2.5, 1.0)
    >>> law.support()[0], float(law.partial_moment(3, np.inf))   # E[X^3] infinite: a <= 3
    (0.6, inf)
    """

    name = "pareto"
    family = "pareto"

    def __init__(self, shape: float, mean: float) -> None:
        from scipy import stats

        a, mean = _positive("shape", shape), _positive("mean", mean)
        if not a > 1.0:
            raise InvalidParameter("shape", shape, "a real number > 1 for a Pareto law",
                                   "the mean a x_m/(a - 1) is infinite for a <= 1")
        self._wrap(stats.pareto(a, scale=mean * (a - 1.0) / a), {"shape": a, "mean": mean})

    def _parameters(self) -> dict[str, float]:
        a = self.shapes[0]
        return {"shape": a, "mean": a * self.scale / (a - 1.0) if a > 1 else math.inf}

    def _moment_closed_form(self, order: int) -> float:
        a = self.shapes[0]
        return a * self.scale ** order / (a - order) if a > order else math.inf

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        a, xm = self.shapes[0], self.scale
        log_ratio = np.log(np.maximum(x, xm) / xm)
        return a * xm ** order * _power_integral(a - order, log_ratio)


class Lomax(NamedScipyLaw):
    r"""The Lomax (Pareto II) law of shape :math:`a` and mean :math:`m` (``lomax``): on
    :math:`[0, \infty)` with :math:`P(X > x) = (1 + x/s)^{-a}`, :math:`s = m(a-1)`;
    ``scipy.stats.lomax(a, scale=s)``.  :math:`E[X^k] = s^k k!\,\Gamma(a-k)/\Gamma(a)` for
    :math:`k < a`, infinite otherwise.  The partial moment of an order :math:`k \ge a` (finite
    for finite ``x``) is the binomial sum
    :math:`a s^k \sum_j \binom kj (-1)^{k-j} \frac{(1+y)^{j-a} - 1}{j-a}`, :math:`y = x/s`,
    where :math:`y \ge 1`, and the hypergeometric form
    :math:`a s^k \frac{u^{k+1}}{k+1} {}_2F_1(k+1, 1-a+k; k+2; u)` below.

    Parameters
    ----------
    shape : float
        :math:`a > 1`.
    mean : float
        :math:`E[X] > 0`.

    Examples
    --------
    >>> law = Lomax(3.0, 1.0)
    >>> law, float(law.variance())     # s^2 a/((a-1)^2 (a-2)) = 4 * 3/4
    (Lomax(shape=3.0, mean=1.0), 3.0)
    """

    name = "lomax"
    family = "lomax"

    def __init__(self, shape: float, mean: float) -> None:
        from scipy import stats

        a, mean = _positive("shape", shape), _positive("mean", mean)
        if not a > 1.0:
            raise InvalidParameter("shape", shape, "a real number > 1 for a Lomax law",
                                   "the mean s/(a - 1) is infinite for a <= 1")
        self._wrap(stats.lomax(a, scale=mean * (a - 1.0)), {"shape": a, "mean": mean})

    def _parameters(self) -> dict[str, float]:
        a = self.shapes[0]
        return {"shape": a, "mean": self.scale / (a - 1.0) if a > 1 else math.inf}

    def _moment_closed_form(self, order: int) -> float:
        from scipy import special

        a = self.shapes[0]
        if not a > order:
            return math.inf
        return self.scale ** order * math.factorial(order) * math.exp(
            special.gammaln(a - order) - special.gammaln(a))

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        from scipy import special

        a, s, k = self.shapes[0], self.scale, order
        y = x / s
        if a > k:
            u = np.where(np.isinf(y), 1.0, y / (1.0 + y))
            return np.where(np.isinf(y), self._full(k),
                            self._full(k) * special.betainc(k + 1.0, a - k, u))
        u = y / (1.0 + y)
        small = a * u ** (k + 1) / (k + 1) * special.hyp2f1(k + 1.0, 1.0 - a + k, k + 2.0, u)
        log1p_y = np.log1p(y)
        large = np.zeros_like(y)
        for j in range(k + 1):
            c = j - a
            term = log1p_y if c == 0 else np.expm1(c * log1p_y) / c
            large = large + math.comb(k, j) * (-1.0) ** (k - j) * term
        large = a * large
        return s ** k * np.where(np.isinf(y), np.inf, np.where(y < 1.0, small, large))


class Uniform(NamedScipyLaw):
    r"""The uniform law on :math:`[l, b]` (``uniform``): mean :math:`(l+b)/2`, SCV
    :math:`(b-l)^2/(3(l+b)^2)`; ``scipy.stats.uniform(loc=l, scale=b-l)``.

    Parameters
    ----------
    low : float
        :math:`l \ge 0`.
    high : float
        :math:`b > l`.

    Examples
    --------
    >>> law = Uniform(0.0, 2.0)
    >>> law, float(law.partial_moment(1, 1.0))     # int_0^1 t/2 dt
    (Uniform(low=0.0, high=2.0), 0.25)
    """

    name = "uniform"
    family = "uniform"
    shifted = True

    def __init__(self, low: float, high: float) -> None:
        from scipy import stats

        try:
            lo, hi = float(low), float(high)
        except (TypeError, ValueError):
            raise InvalidParameter("low", (low, high), "two real numbers 0 <= low < high") \
                from None
        if not (math.isfinite(lo) and lo >= 0.0):
            raise InvalidParameter("low", low, "a finite real number >= 0 (a job size)")
        if not (math.isfinite(hi) and hi > lo):
            raise InvalidParameter("high", high, f"a finite real number > low = {lo!r}")
        self._wrap(stats.uniform(loc=lo, scale=hi - lo), {"low": lo, "high": hi})

    def _parameters(self) -> dict[str, float]:
        return {"low": self.loc, "high": self.loc + self.scale}

    def _moment_closed_form(self, order: int) -> float:
        low, high = self.loc, self.loc + self.scale
        return (high ** (order + 1) - low ** (order + 1)) / ((order + 1) * (high - low))

    def _partial(self, order: int, x: NDArray[np.float64]) -> NDArray[np.float64]:
        low, high = self.loc, self.loc + self.scale
        top = np.clip(x, low, high)
        out = (top ** (order + 1) - low ** (order + 1)) / ((order + 1) * (high - low))
        return np.where(x >= high, self._full(order), out)


#: The named scipy-backed law classes, by vocabulary key.
NAMED_SCIPY_LAWS: dict[str, type[NamedScipyLaw]] = {
    cls.name: cls for cls in (Exponential, Erlang, Gamma, Lognormal, Weibull, Pareto, Lomax,
                              Uniform)}
