r"""Named job-size laws with a given mean and squared coefficient of variation (SCV).

Registered models that take a job-size law by name (``sizes=h2 mean=1 scv=4`` on the command line
or in a claims file) build it here: :func:`size_law` returns, for each name of :data:`SIZE_LAWS`, a
law with mean ``mean`` and SCV :math:`c^2 = \operatorname{Var}[X]/E[X]^2` equal to ``scv``.  The
returned objects are symq :class:`~symq.laws.protocol.Distribution` objects, one class per name
(the table), each with its capabilities (``partial_moment``, ``phase_type()`` where one exists,
``sample``, exact moments); the scipy-backed ones compute through the same frozen ``scipy.stats``
object as always (``law.dist``).  :func:`symq.laws.conversion.as_law` accepts a name, a law
object or a scipy distribution.  :func:`size_parameters` declares the matching ``sizes``,
``mean`` and ``scv`` parameters once for every model.

=============  ============================================================  ====================
name           law                                                           SCV
=============  ============================================================  ====================
``exp``        exponential                                                   1
               :class:`~symq.laws.continuous.Exponential`
``det``        point mass at the mean, :class:`Deterministic`                0
``erlang``     Erlang-k, :math:`k = 1/c^2`                                   ``1/k``, k integer
               :class:`~symq.laws.continuous.Erlang`
``h2``         two-phase hyperexponential with balanced means,               :math:`\ge 1`
               :class:`Hyperexponential`
``gamma``      gamma with shape :math:`1/c^2`                                :math:`> 0`
               :class:`~symq.laws.continuous.Gamma`
``lognormal``  lognormal, :math:`\sigma^2 = \ln(1 + c^2)`                    :math:`> 0`
               :class:`~symq.laws.continuous.Lognormal`
``weibull``    Weibull, shape solved from                                    :math:`> 0`
               :math:`\Gamma(1+2/k)/\Gamma(1+1/k)^2 = 1 + c^2`,
               :class:`~symq.laws.continuous.Weibull`
``pareto``     classical Pareto on :math:`[x_m, \infty)`, shape              :math:`> 0`
               :math:`a = 1 + \sqrt{1 + 1/c^2} > 2`,
               :class:`~symq.laws.continuous.Pareto`
``lomax``      Pareto II on :math:`[0, \infty)`, shape                       :math:`> 1`
               :math:`a = 2c^2/(c^2-1) > 2`,
               :class:`~symq.laws.continuous.Lomax`
``uniform``    uniform on :math:`[m - h, m + h]`,                            :math:`(0, 1/3]`
               :math:`h = m\sqrt{3c^2}`,
               :class:`~symq.laws.continuous.Uniform`
=============  ============================================================  ====================

Heavy tails and simulation: a Pareto law of shape :math:`a \le 3` (``pareto`` with
:math:`c^2 \ge 1/3`, ``lomax`` with :math:`c^2 \ge 3`) has an infinite third moment, so the M/G/1
waiting time has an infinite variance and batch-means confidence intervals of a simulation are not
trustworthy; the mean (Pollaczek-Khinchine) is still finite.

This module knows no domain: the phase-type form of the ``h2`` law is
:meth:`Hyperexponential.phase_type`, a :class:`~symq.laws.phase_type.PhaseType`.

Examples
--------
>>> law = size_law("weibull", mean=2.0, scv=3.0)
>>> law.name, round(float(law.mean()), 12), round(float(law.variance() / law.mean() ** 2), 9)
('weibull', 2.0, 3.0)
>>> size_law("h2", 1.0, 0.5)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
symq.core.errors.InvalidParameter: parameter scv=0.5 must be a real number >= 1 for sizes=h2 (...)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from symq.core.errors import MISSING, InvalidParameter
from symq.core.parameters import Choice, NonNegativeReal, Parameter, PositiveReal
from symq.core.randomness import RngLike, as_generator

from .continuous import Erlang, Exponential, Gamma, Lognormal, Lomax, Pareto, Uniform, Weibull
from .phase_type import PhaseType
from .protocol import Distribution, _order, probabilities_in_unit_interval

__all__ = ["SIZE_LAWS", "FIXED_SCV", "Deterministic", "Empirical", "Hyperexponential", "size_law",
           "law_scv",
           "size_parameters", "weibull_shape"]

#: Names of the laws :func:`size_law` builds.
SIZE_LAWS: tuple[str, ...] = ("exp", "det", "erlang", "h2", "gamma", "lognormal", "weibull",
                              "pareto", "lomax", "uniform")

#: Laws whose SCV is fixed by the name (``scv`` may be omitted or must equal it).
FIXED_SCV: dict[str, float] = {"exp": 1.0, "det": 0.0}

#: Bracket of the Weibull shape ``k`` searched by :func:`weibull_shape` (SCV about 1e66 to 1.6e-10).
_WEIBULL_SHAPES = (0.02, 1e5)


class Deterministic(Distribution):
    """The point mass at ``value``: every job has the same size (SCV 0).

    A point mass has no density: :meth:`pdf` is 0 off the atom and ``inf`` on it.  Sampling draws
    nothing from the generator.

    Parameters
    ----------
    value : float
        The size, ``> 0``.

    Examples
    --------
    >>> law = Deterministic(2.5)
    >>> law.mean(), law.variance(), float(law.cdf(2.5))
    (2.5, 0.0, 1.0)
    >>> law.partial_moment(2, [2.0, 2.5]).tolist()      # E[X^2; X <= x]: the atom counts at x
    [0.0, 6.25]
    """

    #: The vocabulary key.
    name = "det"

    def __init__(self, value: float) -> None:
        self.value = float(PositiveReal().coerce("mean", value))

    def __repr__(self) -> str:
        return f"Deterministic({self.value!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deterministic):
            return NotImplemented
        return self.value == other.value

    def __hash__(self) -> int:
        return hash(("Deterministic", self.value))

    def support(self) -> tuple[float, float]:
        return (self.value, self.value)

    def pdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        out = np.where(points == self.value, np.inf, 0.0)
        return out[()] if points.ndim == 0 else out

    def cdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        out = np.where(points >= self.value, 1.0, 0.0)
        return out[()] if points.ndim == 0 else out

    def icdf(self, p: ArrayLike) -> Any:
        probabilities = probabilities_in_unit_interval(p)
        out = np.full(probabilities.shape, self.value)
        return out[()] if probabilities.ndim == 0 else out

    def _raw_moment(self, order: int) -> float:
        return self.value ** order

    def variance(self) -> float:
        return 0.0

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        out = np.full(shape, self.value)
        return float(out) if out.ndim == 0 else out

    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        r""":math:`E[X^k; X \le x] = v^k` for :math:`x \ge v`, 0 below (exact; NaN passed)."""
        order = _order(order)
        points = np.asarray(x, dtype=float)
        out = np.where(np.isnan(points), np.nan,
                       np.where(points >= self.value, self.value ** order, 0.0))
        return out[()] if points.ndim == 0 else out


class Empirical(Distribution):
    r"""The empirical law of a trace of measured job sizes :math:`x_1, \dots, x_n`.

    Each size has probability :math:`1/n`: :math:`F(x) = \#\{i : x_i \le x\}/n`,
    :math:`E[X^k] = \frac1n \sum_i x_i^k`, and sampling draws from the trace with replacement
    (the bootstrap), so that a simulator fed with this law replays the measured sizes in a
    random order.  A discrete law has no density: :meth:`pdf` is ``inf`` on the sizes of the
    trace and 0 elsewhere.

    Parameters
    ----------
    sizes : array_like
        At least two finite sizes ``>= 0``, not all 0.
    name : str
        A label (for instance the trace's file name).

    Examples
    --------
    >>> law = Empirical([1.0, 2.0, 3.0, 6.0])
    >>> law.mean(), law.moment(2), float(law.cdf(2.5))
    (3.0, 12.5, 0.5)
    """

    def __init__(self, sizes: ArrayLike, name: str = "trace") -> None:
        try:
            values = np.asarray(sizes, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidParameter("sizes", sizes, "a 1-D array of job sizes >= 0") from None
        if values.ndim != 1 or values.size < 2:
            raise InvalidParameter("sizes", f"<array of shape {values.shape}>",
                                   "a 1-D array of at least 2 job sizes >= 0")
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise InvalidParameter("sizes", f"<trace with the size {values[np.argmax(bad)]!r}>",
                                   "a 1-D array of finite job sizes >= 0")
        if not values.any():
            raise InvalidParameter("sizes", "<trace of zeros>", "job sizes >= 0, not all 0")
        self.sizes = np.sort(values)
        self.sizes.setflags(write=False)
        self.name = str(name)

    def __repr__(self) -> str:
        return f"Empirical(<{self.sizes.size} sizes of {self.name}>)"

    def support(self) -> tuple[float, float]:
        return (float(self.sizes[0]), float(self.sizes[-1]))

    def pdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        index = np.searchsorted(self.sizes, points)
        hit = (index < self.sizes.size) & (self.sizes[np.minimum(index, self.sizes.size - 1)]
                                           == points)
        out = np.where(hit, np.inf, 0.0)
        return out[()] if points.ndim == 0 else out

    def cdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        out = np.searchsorted(self.sizes, points, side="right") / self.sizes.size
        return out[()] if points.ndim == 0 else out

    def icdf(self, p: ArrayLike) -> Any:
        """The smallest size ``x`` of the trace with ``F(x) >= p``."""
        probabilities = probabilities_in_unit_interval(p)
        index = np.ceil(probabilities * self.sizes.size).astype(np.int64) - 1
        out = self.sizes[np.clip(index, 0, self.sizes.size - 1)]
        return out[()] if probabilities.ndim == 0 else out

    def _raw_moment(self, order: int) -> float:
        return float(np.mean(self.sizes ** order))

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        out = as_generator(rng).choice(self.sizes, size=shape)
        return float(out) if np.ndim(out) == 0 else out

    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        r""":math:`E[X^k; X \le x] = \frac1n \sum_{x_i \le x} x_i^k`: the exact sum over the
        sorted trace (cumulative sums; NaN passed through)."""
        order = _order(order)
        points = np.asarray(x, dtype=float)
        sums = np.concatenate([[0.0], np.cumsum(self.sizes ** order)]) / self.sizes.size
        index = np.searchsorted(self.sizes, np.nan_to_num(points, nan=-1.0), side="right")
        out = np.where(np.isnan(points), np.nan, sums[index])
        return out[()] if points.ndim == 0 else out


class Hyperexponential(Distribution):
    r"""A mixture of exponentials: phase :math:`i` with probability :math:`p_i` and rate
    :math:`\mu_i`; density :math:`\sum_i p_i \mu_i e^{-\mu_i x}`,
    :math:`E[X^k] = k! \sum_i p_i \mu_i^{-k}`.

    :meth:`balanced` builds the two-phase law with balanced means of a given mean and SCV (the
    ``h2`` of :func:`size_law`).  Sampling draws the phase, then an exponential holding time, from
    one generator (the same stream as :meth:`symq.laws.phase_type.PhaseType.sample` for this law).
    The partial moments are
    :math:`E[X^k; X \le x] = k! \sum_i p_i \mu_i^{-k} P(k+1, \mu_i x)` (regularised
    incomplete gamma function, as :func:`symq.dispatch.sizes.hyperexponential2`): exact in
    floating point for every SCV, no ``mean - tail`` cancellation.

    Parameters
    ----------
    probabilities : array_like
        :math:`p_i > 0`, summing to 1.
    rates : array_like
        :math:`\mu_i > 0`, same length.
    name : str
        A label; the vocabulary key ``h2`` by default.

    Examples
    --------
    >>> law = Hyperexponential.balanced(2.0, 4.0)
    >>> round(law.mean(), 12), round(law.variance() / law.mean() ** 2, 12)
    (2.0, 4.0)
    >>> law.phase_type().order, law.name
    (2, 'h2')
    """

    def __init__(self, probabilities: ArrayLike, rates: ArrayLike, name: str = "h2") -> None:
        p = np.array(probabilities, dtype=float, ndmin=1)
        mu = np.array(rates, dtype=float, ndmin=1)
        if p.ndim != 1 or mu.shape != p.shape or not np.all(np.isfinite(p)) \
                or np.any(p <= 0) or abs(p.sum() - 1.0) > 1e-12:
            raise InvalidParameter("probabilities", probabilities, "positive numbers summing to 1,"
                                   " one per rate")
        if not (np.all(np.isfinite(mu)) and np.all(mu > 0)):
            raise InvalidParameter("rates", rates, "positive finite rates")
        p.setflags(write=False)
        mu.setflags(write=False)
        self.probabilities, self.rates, self.name = p, mu, name

    @classmethod
    def balanced(cls, mean: float, scv: float) -> Hyperexponential:
        r"""Two phases with balanced means, :math:`p_1/\mu_1 = p_2/\mu_2 = m/2`:
        :math:`p_{1,2} = \tfrac12\big(1 \pm \sqrt{(c^2-1)/(c^2+1)}\big)`, :math:`\mu_i = 2p_i/m`
        (Whitt, "Approximating a point process by a renewal process", 1982, Section 3)."""
        p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
        p2 = 1.0 - p1
        if p2 <= 0.0:
            raise InvalidParameter("scv", scv, "a real number >= 1 small enough that both phases "
                                   "have a positive probability in floating point")
        return cls([p1, p2], [2.0 * p1 / mean, 2.0 * p2 / mean])

    def __repr__(self) -> str:
        return f"Hyperexponential({self.probabilities.tolist()}, {self.rates.tolist()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hyperexponential):
            return NotImplemented
        return bool(np.array_equal(self.probabilities, other.probabilities)
                    and np.array_equal(self.rates, other.rates))

    def __hash__(self) -> int:
        return hash((self.probabilities.tobytes(), self.rates.tobytes()))

    @property
    def is_exponential(self) -> bool:
        """True for one phase."""
        return self.rates.size == 1

    def phase_type(self) -> PhaseType:
        """The law as a :class:`~symq.laws.phase_type.PhaseType`: ``alpha = p``,
        ``A = -diag(mu)`` (``alpha, A = law.phase_type()`` unpacks it)."""
        return PhaseType(self.probabilities.copy(), np.diag(-self.rates), name=self.name)

    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        r""":math:`E[X^k; X \le x] = k! \sum_i p_i \mu_i^{-k} P(k+1, \mu_i x)`, vectorised
        (0 for ``x < 0``, NaN passed through)."""
        from scipy import special

        order = _order(order)
        points = np.asarray(x, dtype=float)
        inside = np.maximum(points, 0.0)
        with np.errstate(over="ignore"):    # mu x = inf: P(k+1, inf) = 1, the right limit
            y = np.multiply.outer(self.rates, inside.ravel())
        terms = (self.probabilities * math.factorial(order) / self.rates ** order)[:, None] \
            * special.gammainc(order + 1, y)
        out = np.sum(terms, axis=0).reshape(points.shape)
        out = np.where(np.isnan(points), np.nan, out)
        return out[()] if points.ndim == 0 else out

    def pdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        inside = np.maximum(points, 0.0)[..., None]
        with np.errstate(over="ignore"):  # rate * x beyond the largest double: exp(-inf) = 0
            out = np.where(points >= 0, np.sum(self.probabilities * self.rates
                                               * np.exp(-self.rates * inside), axis=-1), 0.0)
        return out[()] if points.ndim == 0 else out

    def ccdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        inside = np.maximum(points, 0.0)[..., None]
        with np.errstate(over="ignore"):  # rate * x beyond the largest double: exp(-inf) = 0
            out = np.sum(self.probabilities * np.exp(-self.rates * inside), axis=-1)
        return out[()] if points.ndim == 0 else out

    def cdf(self, x: ArrayLike) -> Any:
        points = np.asarray(x, dtype=float)
        inside = np.maximum(points, 0.0)[..., None]
        out = -np.sum(self.probabilities * np.expm1(-self.rates * inside), axis=-1)
        return out[()] if points.ndim == 0 else out

    def _raw_moment(self, order: int) -> float:
        return math.factorial(order) * float(np.sum(self.probabilities / self.rates ** order))

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        generator = as_generator(rng)
        size = int(np.prod(shape)) if np.iterable(shape) else int(shape)
        cumulative = np.cumsum(self.probabilities)
        cumulative[-1] = 1.0
        phase = np.minimum(np.searchsorted(cumulative, generator.random(size), side="right"),
                           self.rates.size - 1)
        out = (generator.exponential(1.0, size=size) / self.rates[phase]).reshape(
            shape if np.iterable(shape) else (size,))
        return float(out) if shape == () else out


def weibull_shape(scv: float) -> float:
    r"""The Weibull shape :math:`k` with SCV ``scv``: the root of
    :math:`\ln\Gamma(1+2/k) - 2\ln\Gamma(1+1/k) = \ln(1 + c^2)` (decreasing in :math:`k`).

    Raises
    ------
    InvalidParameter
        Naming ``scv`` when it lies outside what shapes in ``[0.02, 1e5]`` reach.
    """
    from scipy import optimize, special

    def gap(log_k: float) -> float:
        k = math.exp(log_k)
        return (special.gammaln(1 + 2 / k) - 2 * special.gammaln(1 + 1 / k)) - math.log1p(scv)

    low, high = (math.log(v) for v in _WEIBULL_SHAPES)
    if not gap(low) > 0 > gap(high):
        reach = [math.expm1(gap(v) + math.log1p(scv)) for v in (high, low)]
        raise InvalidParameter("scv", scv, f"a real number in [{reach[0]:.3g}, {reach[1]:.3g}] "
                               "for sizes=weibull", "no Weibull shape in [0.02, 1e5] has this SCV")
    return math.exp(optimize.brentq(gap, low, high, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def _key(name: Any) -> str:
    if not isinstance(name, str) or name.strip().lower() not in SIZE_LAWS:
        raise InvalidParameter("sizes", name, "one of " + ", ".join(SIZE_LAWS))
    return name.strip().lower()


def law_scv(name: str, scv: float | None = None) -> float:
    """The SCV of the law ``name`` with the given ``scv`` (checked as :func:`size_law` does):
    1 for ``exp`` and 0 for ``det`` when ``scv`` is omitted.

    Examples
    --------
    >>> law_scv("exp"), law_scv("h2", 4)
    (1.0, 4.0)
    """
    key = _key(name)
    if key in FIXED_SCV:
        fixed = FIXED_SCV[key]
        if scv is not None and not math.isclose(float(NonNegativeReal().coerce("scv", scv)),
                                                fixed, rel_tol=1e-12, abs_tol=1e-12):
            raise InvalidParameter("scv", scv, f"omitted or {fixed:g} for sizes={key}",
                                   f"the {'exponential' if key == 'exp' else 'deterministic'} "
                                   f"law has SCV {fixed:g}")
        return fixed
    if scv is None:
        raise InvalidParameter("scv", MISSING, f"the SCV of sizes={key}, a nonnegative real "
                               "number (this law's SCV is free)")
    value = float(NonNegativeReal().coerce("scv", scv))
    if key == "erlang":
        k = round(1.0 / value) if value > 0 else 0
        if k < 1 or not math.isclose(1.0 / k, value, rel_tol=1e-9):
            near = sorted({max(k, 1), k + 1})
            raise InvalidParameter("scv", scv, "1/k for an integer k >= 1 for sizes=erlang",
                                   "nearest: " + ", ".join(f"1/{j} = {1 / j:.6g}" for j in near))
        return 1.0 / k
    if key in ("h2", "lomax") and not value >= (1.0 if key == "h2" else 1.0 + 1e-12):
        strict = "> 1" if key == "lomax" else ">= 1"
        why = ("a hyperexponential law is at least as variable as the exponential" if key == "h2"
               else "a Lomax law of finite variance has shape a = 2 scv/(scv - 1) > 2")
        raise InvalidParameter("scv", scv, f"a real number {strict} for sizes={key}", why)
    if key == "uniform" and not 0.0 < value <= 1.0 / 3.0:
        raise InvalidParameter("scv", scv, "a real number in (0, 1/3] for sizes=uniform",
                               "a uniform law on [0, 2m] has SCV 1/3, the largest of a "
                               "nonnegative uniform; SCV 0 is sizes=det")
    if not value > 0:
        raise InvalidParameter("scv", scv, f"a positive real number for sizes={key}",
                               "SCV 0 is sizes=det")
    return value


def size_law(name: str, mean: float = 1.0, scv: float | None = None) -> Distribution:
    r"""The job-size law called ``name`` with mean ``mean`` and SCV ``scv``.

    Parameters
    ----------
    name : str
        One of :data:`SIZE_LAWS` (case-insensitive); the table of the module docstring gives
        each law and the SCVs it reaches.
    mean : float, default 1
        :math:`E[X] > 0`.
    scv : float, optional
        :math:`c^2 = \operatorname{Var}[X]/E[X]^2`; may be omitted for ``exp`` (1) and ``det``
        (0), required otherwise.

    Returns
    -------
    Distribution
        The law's class of the module table, whose ``name`` is the (lower-case) key:
        :class:`~symq.laws.continuous.Exponential`, :class:`Deterministic`,
        :class:`~symq.laws.continuous.Erlang`, :class:`Hyperexponential` (balanced means),
        :class:`~symq.laws.continuous.Gamma`, :class:`~symq.laws.continuous.Lognormal`,
        :class:`~symq.laws.continuous.Weibull`, :class:`~symq.laws.continuous.Pareto`,
        :class:`~symq.laws.continuous.Lomax`, :class:`~symq.laws.continuous.Uniform`.  The
        scipy-backed ones hold the frozen ``scipy.stats`` object ``law.dist`` that this function
        has always returned (same parameters, numbers and random stream).

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for an unknown name, ``mean`` for a mean that is not positive, ``scv``
        for an SCV the law cannot have (``scv < 1`` for ``h2``, ``scv > 1/3`` for ``uniform``,
        not ``1/k`` for ``erlang``, given and not 1 for ``exp``, missing for a free law, ...).

    Examples
    --------
    >>> size_law("erlang", 3.0, 0.25)
    Erlang(k=4, mean=3.0)
    >>> size_law("erlang", 3.0, 0.25).dist.kwds
    {'scale': 0.75}
    >>> float(size_law("uniform", 1.0, 1 / 3).support()[0])
    0.0
    """
    key = _key(name)
    mean = float(PositiveReal().coerce("mean", mean))
    c2 = law_scv(key, scv)
    if key == "exp":
        return Exponential(mean)
    if key == "det":
        return Deterministic(mean)
    if key == "h2":
        return Hyperexponential.balanced(mean, c2)
    if key == "erlang":
        return Erlang(round(1.0 / c2), mean)
    from scipy import stats

    if key == "gamma":     # the frozen object as built since the first release (scale m c^2)
        return Gamma.from_scipy(stats.gamma(1.0 / c2, scale=mean * c2))
    if key == "lognormal":
        return Lognormal(mean, c2)
    if key == "weibull":
        return Weibull(weibull_shape(c2), mean)
    if key == "pareto":    # mean a x_m/(a-1), SCV 1/(a(a-2))
        return Pareto(1.0 + math.sqrt(1.0 + 1.0 / c2), mean)
    if key == "lomax":     # mean s/(a-1), SCV a/(a-2)
        return Lomax(2.0 * c2 / (c2 - 1.0), mean)
    half = mean * math.sqrt(3.0 * c2)   # uniform on [m - h, m + h]: SCV h^2/(3 m^2)
    return Uniform.from_scipy(stats.uniform(loc=max(mean - half, 0.0), scale=2.0 * half))


def size_parameters(default: str = "exp", typical_scv: float | None = None
                    ) -> tuple[Parameter, Parameter, Parameter]:
    """The parameters ``sizes``, ``mean`` and ``scv`` of a model that takes a named job-size law.

    Parameters
    ----------
    default : str
        The law used when ``sizes`` is omitted.
    typical_scv : float, optional
        A typical SCV (for ``symq list`` and claim samples).

    Returns
    -------
    tuple of Parameter
        ``sizes`` (a :class:`~symq.core.parameters.Choice` of :data:`SIZE_LAWS`, default
        ``default``), ``mean`` (positive, default 1) and ``scv`` (nonnegative, optional: the
        law's own for ``exp``/``det``).  Pass the three values to :func:`size_law`.

    Examples
    --------
    >>> [p.name for p in size_parameters()]
    ['sizes', 'mean', 'scv']
    """
    _key(default)
    return (
        Parameter("sizes", Choice(SIZE_LAWS), typical=default, required=False, default=default,
                  description="job-size law: " + ", ".join(SIZE_LAWS)),
        Parameter("mean", PositiveReal(), typical=1.0, required=False, default=1.0,
                  description="mean job size E[X]"),
        Parameter("scv", NonNegativeReal(), typical=typical_scv, required=False,
                  description="squared coefficient of variation Var[X]/E[X]^2 of the sizes "
                  "(omit for exp and det; 1/k for erlang, >= 1 for h2, <= 1/3 for uniform)"),
    )
