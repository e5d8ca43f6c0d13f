"""One distribution protocol for every symq law: job sizes, ME fits, window laws.

The verbs are those of scipy's new distribution infrastructure (``scipy.stats.make_distribution``,
SciPy 1.15): ``pdf``, ``cdf``, ``ccdf``, ``icdf``, ``moment(order, kind)``, ``mean()``,
``variance()``, ``sample(shape, rng=)``, ``support()``, as methods.  A law implements three things,
``pdf``, ``cdf`` and ``_raw_moment``; :class:`Distribution` derives the rest.  Subclasses override
a derived verb where they know better (an exact tail, an inverse in closed form, a sampler that
draws phases).

``to_scipy()`` returns a scipy ``ContinuousDistribution`` built by ``make_distribution`` from the
law's own ``pdf``/``cdf``/``icdf`` and moments, so scipy's machinery (``logpdf``, ``entropy``,
plotting, fitting diagnostics) works on any symq law without hand-written quadrature.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.display import MarkdownDisplay
from symq.core.errors import InvalidParameter, NumericalFailure, SymqError
from symq.core.randomness import RngLike, as_generator

__all__ = ["Distribution", "MOMENT_KINDS", "ScipyAdapter", "distribution_markdown",
           "probabilities_in_unit_interval", "nan_passing", "NoPhaseType", "InfiniteMoment",
           "describe_law", "QUADRATURE_RTOL"]

#: Kinds of moments, as in scipy's ``moment(order, kind)``.
MOMENT_KINDS = ("raw", "central", "standardized")


def _order(order: Any) -> int:
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 0:
        raise InvalidParameter("order", order, "an integer >= 0")
    return int(order)


def probabilities_in_unit_interval(p: ArrayLike) -> NDArray[np.float64]:
    """``p`` as a float array, checked to lie in [0, 1] (the argument of every ``icdf``).

    Raises
    ------
    InvalidParameter
        Naming ``p`` if an entry is not finite or lies outside [0, 1].
    """
    probabilities = np.asarray(p, dtype=float)
    if np.any(~np.isfinite(probabilities)) or np.any((probabilities < 0) | (probabilities > 1)):
        raise InvalidParameter("p", p, "probabilities in [0, 1]")
    return probabilities


#: Relative accuracy that :meth:`Distribution.partial_moment` asks of its quadrature; a result whose
#: error estimate exceeds ``100 * QUADRATURE_RTOL`` of the value is refused (NumericalFailure).
QUADRATURE_RTOL = 1e-11


class NoPhaseType(InvalidParameter):
    """The law has no phase-type form (raised by :meth:`Distribution.phase_type`).

    An :class:`~symq.core.errors.InvalidParameter` naming ``name`` (the caller's parameter, default
    ``law``), with what to do instead: fit a phase-type law (:func:`symq.me.fit`, or
    :func:`symq.laws.hyper_erlang` to the law's mean and SCV) or use a simulator, which samples any
    law.
    """

    def __init__(self, law: Any, name: str = "law") -> None:
        super().__init__(name, describe_law(law), "a law with a phase-type form",
                         f"a {type(law).__name__} law has no phase-type representation; fit one "
                         "(symq.me.fit, or symq.laws.hyper_erlang(k, mean, scv)) or use a "
                         "simulator, which samples any law")


class InfiniteMoment(InvalidParameter):
    """A moment of the law is infinite (a Pareto law of shape ``a <= order``, ...): an
    :class:`~symq.core.errors.InvalidParameter` naming the law's parameter."""


class Distribution(MarkdownDisplay, abc.ABC):
    """Base of symq's distributions (scipy new-API verbs as methods).

    A subclass implements

    * ``pdf(x)``: the density, vectorised over ``x`` (0 outside the support);
    * ``cdf(x)``: the distribution function, vectorised;
    * ``_raw_moment(order)``: ``E[X^order]`` for an integer ``order >= 1`` (a float, or an exact
      sympy/fractions number where the law is exact).

    and may override ``support()`` (default ``(0, inf)``), ``ccdf``, ``icdf`` and ``sample``.

    The capabilities a domain asks of a law are methods too, with defaults here and exact
    overrides in the laws that have them: :meth:`partial_moment` (``E[X^k; X <= x]``),
    :meth:`phase_type` (the law as a :class:`~symq.laws.phase_type.PhaseType`, or
    :class:`NoPhaseType`) and :attr:`is_exponential`.
    """

    # -- to implement -------------------------------------------------------------------------
    @abc.abstractmethod
    def pdf(self, x: ArrayLike) -> Any:
        """The density at ``x`` (vectorised; 0 outside the support)."""

    @abc.abstractmethod
    def cdf(self, x: ArrayLike) -> Any:
        """``P(X <= x)`` (vectorised)."""

    @abc.abstractmethod
    def _raw_moment(self, order: int) -> Any:
        """``E[X^order]`` for an integer ``order >= 1``."""

    # -- derived verbs ------------------------------------------------------------------------
    def support(self) -> tuple[float, float]:
        """The interval outside which the density vanishes (default ``(0, inf)``)."""
        return (0.0, math.inf)

    def ccdf(self, x: ArrayLike) -> Any:
        """The tail ``P(X > x) = 1 - cdf(x)`` (subclasses with an exact tail override it)."""
        return 1.0 - np.asarray(self.cdf(x), dtype=float)

    def moment(self, order: int = 1, kind: str = "raw") -> Any:
        """The moment of the given order: ``raw`` ``E[X^n]``, ``central`` ``E[(X - EX)^n]`` or
        ``standardized`` ``E[((X - EX)/sd)^n]``.

        Raises
        ------
        InvalidParameter
            For a negative or non-integer ``order`` or an unknown ``kind``.
        """
        order = _order(order)
        if kind not in MOMENT_KINDS:
            raise InvalidParameter("kind", kind, "one of " + ", ".join(MOMENT_KINDS))
        if order == 0:
            return 1
        if kind == "raw":
            return self._raw_moment(order)
        raw = [1] + [self._raw_moment(k) for k in range(1, max(order, 2) + 1)]
        mean = raw[1]
        central = sum(math.comb(order, k) * raw[k] * (-mean) ** (order - k)
                      for k in range(order + 1))
        if kind == "central":
            return central
        variance = raw[2] - mean ** 2
        if not isinstance(variance, (int, float, np.number)):   # sympy only for exact laws
            import sympy as sp

            if isinstance(variance, sp.Basic):
                return central / variance ** sp.Rational(order, 2)
        return central / float(variance) ** (order / 2)

    def mean(self) -> Any:
        """``E[X]``."""
        return self._raw_moment(1)

    def variance(self) -> Any:
        """``Var[X] = E[X^2] - E[X]^2``."""
        return self._raw_moment(2) - self._raw_moment(1) ** 2

    def icdf(self, p: ArrayLike) -> Any:
        """The quantile function: the smallest ``x`` with ``cdf(x) >= p``, for ``p`` in [0, 1].

        The default brackets each quantile and solves ``cdf(x) = p`` with Brent's method to
        about 1e-12 relative accuracy; subclasses with a closed form override it.

        Raises
        ------
        InvalidParameter
            If a ``p`` lies outside [0, 1].
        """
        probabilities = probabilities_in_unit_interval(p)
        low, high = self.support()
        flat = probabilities.ravel()
        out = np.empty_like(flat)
        for i, q in enumerate(flat):
            out[i] = self._quantile(float(q), low, high)
        return out.reshape(probabilities.shape)[()] if probabilities.ndim == 0 else \
            out.reshape(probabilities.shape)

    def _quantile(self, q: float, low: float, high: float) -> float:
        from scipy import optimize

        if q <= 0.0:
            return low
        if q >= 1.0:
            return high
        scale = float(self.mean()) if math.isinf(high) else high - low
        upper = low + max(scale, 1e-300)
        while math.isinf(high) and float(self.cdf(upper)) < q:
            upper = low + 2.0 * (upper - low)
            if not math.isfinite(upper):
                raise NumericalFailure(f"icdf: no quantile {q} found below {upper}")
        if not math.isinf(high):
            upper = high
        return float(optimize.brentq(lambda x: float(self.cdf(x)) - q, low, upper,
                                     xtol=1e-14 * max(1.0, abs(upper)), rtol=1e-13))

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        """Draw independent samples by inversion, ``icdf(U)`` with ``U`` uniform.

        Parameters
        ----------
        shape : int or tuple of int
            Shape of the returned array (``()``: one float).
        rng : None, int, SeedSequence or numpy Generator
            Randomness (:func:`symq.core.randomness.as_generator`); the same seed gives the same
            sample.
        """
        generator = as_generator(rng)
        uniforms = generator.random(shape)
        return self.icdf(uniforms)

    # -- capabilities -------------------------------------------------------------------------
    @property
    def is_exponential(self) -> bool:
        """True for a law that is exponential by its representation (an
        :class:`~symq.laws.continuous.Exponential`, a one-phase
        :class:`~symq.laws.phase_type.PhaseType` or hyperexponential law): the exact formulas of
        the dispatching policies (RR, LWL, JSQ) need it.  False by default."""
        return False

    def phase_type(self) -> Any:
        """The law as a :class:`~symq.laws.phase_type.PhaseType`, where it has one.

        Raises
        ------
        NoPhaseType
            By default: the law has no phase-type form (fit one, or use a simulator).
        """
        raise NoPhaseType(self)

    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        r"""The partial moment :math:`E[X^k; X \le x] = \int_{[0, x]} t^k \, dF(t)`, vectorised
        over ``x`` (0 below the support, ``moment(order)`` at and beyond its upper end, NaN
        passed through; ``order = 0`` is the cdf).

        The default integrates ``t^order pdf(t)`` with ``scipy.integrate.quad`` on the pieces
        ``[m 10^j, m 10^{j+1}]`` (``m`` the median), asking a relative accuracy of
        :data:`QUADRATURE_RTOL` (1e-11), so the result is good to about 1e-11 relative; it is
        checked, not trusted: where quad warns, or the summed error estimate exceeds
        ``100 * QUADRATURE_RTOL`` (1e-9) of the value, it raises instead of returning a number.
        Laws with a closed form override it.

        Raises
        ------
        InvalidParameter
            For a negative or non-integer ``order``.
        NumericalFailure
            Where the quadrature does not reach its accuracy.
        """
        order = _order(order)
        points = np.asarray(x, dtype=float)
        flat = points.ravel()
        out = np.empty(flat.shape)
        for i, v in enumerate(flat):
            out[i] = self._partial_by_quadrature(order, float(v))
        return out.reshape(points.shape)[()] if points.ndim == 0 else out.reshape(points.shape)

    def _full_moment(self, order: int) -> float:
        """``E[X^order]`` as a float, ``inf`` where it is infinite."""
        try:
            return float(self.moment(order))
        except InfiniteMoment:
            return math.inf

    def _partial_by_quadrature(self, order: int, x: float) -> float:
        import warnings

        from scipy import integrate

        low, high = (float(v) for v in self.support())
        if math.isnan(x):
            return math.nan
        if x < low:
            return 0.0
        if order == 0:
            return float(self.cdf(x))
        if x >= high:
            return self._full_moment(order)
        scale = float(self.icdf(0.5))
        if not (math.isfinite(scale) and scale > low):
            scale = low + 1.0
        cuts = [low]
        while cuts[-1] < x:
            cuts.append(min(x, scale if len(cuts) == 1 else 10.0 * cuts[-1]))
        total = error = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("error", integrate.IntegrationWarning)
            try:
                for a, b in zip(cuts[:-1], cuts[1:]):
                    value, err = integrate.quad(lambda t: t ** order * float(self.pdf(t)), a, b,
                                                limit=200, epsabs=0.0, epsrel=QUADRATURE_RTOL)
                    total += value
                    error += err
            except integrate.IntegrationWarning as exc:
                raise NumericalFailure(f"partial_moment({order}, {x!r}) of {describe_law(self)}: "
                                       f"quadrature failed: {' '.join(str(exc).split())}") from None
        if not error <= 100 * QUADRATURE_RTOL * abs(total) + 1e-300:
            raise NumericalFailure(f"partial_moment({order}, {x!r}) of {describe_law(self)}: "
                                   f"quadrature error estimate {error:.3g} of the value "
                                   f"{total:.6g} exceeds {100 * QUADRATURE_RTOL:g} relative")
        return total

    def to_markdown(self) -> str:
        """The law as Markdown: its name, mean, variance, SCV and support
        (:func:`distribution_markdown`); Jupyter shows it as Markdown and as HTML
        (:class:`~symq.core.display.MarkdownDisplay`)."""
        return distribution_markdown(self)

    # -- scipy --------------------------------------------------------------------------------
    def to_scipy(self) -> Any:
        """The law as a scipy ``ContinuousDistribution`` (``scipy.stats.make_distribution``).

        Its ``pdf``, ``cdf``, ``ccdf``, ``icdf``, ``moment`` and ``sample`` are this law's; scipy
        computes the rest (``logpdf``, ``median``, ``entropy``, ``X * 2 + 1``, ...).
        """
        from scipy import stats

        return stats.make_distribution(ScipyAdapter(self))()


def nan_passing(method: Any, x: Any) -> NDArray[np.float64]:
    """Apply a law's method elementwise-vectorised, passing NaN through as scipy expects."""
    x = np.asarray(x, dtype=float)
    nan = np.isnan(x)
    if not nan.any():
        return np.asarray(method(x), dtype=float)
    out = np.full(x.shape, np.nan)
    out[~nan] = method(x[~nan])
    return out


class ScipyAdapter:
    """The ``scipy.stats.make_distribution`` protocol (interface version 1.16.0) for a
    :class:`Distribution`: no shape parameters, the law's support, its verbs."""

    __make_distribution_version__ = "1.16.0"
    parameters: tuple = ()

    def __init__(self, law: Distribution) -> None:
        self.law = law
        low, high = (float(v) for v in law.support())
        self.support = {"endpoints": (low, high), "inclusive": (True, not math.isinf(high))}

    def pdf(self, x: Any) -> NDArray[np.float64]:
        return nan_passing(self.law.pdf, x)

    def cdf(self, x: Any) -> NDArray[np.float64]:
        return nan_passing(self.law.cdf, x)

    def ccdf(self, x: Any) -> NDArray[np.float64]:
        return nan_passing(self.law.ccdf, x)

    def icdf(self, p: Any) -> NDArray[np.float64]:
        return nan_passing(self.law.icdf, p)

    def moment(self, order: Any, kind: str = "raw") -> float:
        return float(self.law.moment(int(order), kind))

    def sample(self, shape: Any, *, rng: Any = None) -> NDArray[np.float64]:
        shape = tuple(shape) if np.iterable(shape) else shape
        return np.asarray(self.law.sample(shape, rng=rng), dtype=float)


def distribution_markdown(law: Any, title: str | None = None,
                          formulas: Sequence[tuple[str, Any]] = ()) -> str:
    """A law's Markdown display: its name, mean, variance, squared coefficient of variation and
    support, and ``formulas`` (label, sympy expression) in LaTeX.  A moment the law cannot give
    (infinite, or not computable) is left out."""
    from symq.core.display import cell, markdown, number_text

    rows: list[tuple[str, Any]] = []
    try:
        mean, variance = law.mean(), law.variance()
        rows += [("mean", mean), ("variance", variance)]
        if float(mean) != 0.0 and math.isfinite(float(variance)):
            rows.append(("scv", float(variance) / float(mean) ** 2))
    except (SymqError, ArithmeticError, ValueError, TypeError, NotImplementedError):
        pass
    low, high = law.support()
    rows.append(("support", f"[{number_text(low)}, {number_text(high)}" +
                 (")" if math.isinf(float(high)) else "]")))
    if title is None:
        name = getattr(law, "name", None)
        title = f"**{type(law).__name__}** {cell(name)}" if isinstance(name, str) and name \
            else f"**{cell(repr(law))}**"
    return markdown(title, rows, formulas)


class _Text(str):
    """Text shown as is (without quotes) as the value of an error message."""

    def __repr__(self) -> str:
        return str(self)


def describe_law(law: Any) -> str:
    """A short text for a law in messages: ``scipy.stats.lognorm(0.8)`` for a frozen scipy
    distribution (and for a symq law that computes through one, :class:`ScipyLaw` and the named
    laws built on it), the law's repr (cut at 80 characters) otherwise."""
    dist = getattr(law, "dist", None)
    if hasattr(law, "rvs") and dist is not None and hasattr(dist, "name"):
        args = [repr(a) for a in getattr(law, "args", ())]
        args += [f"{k}={v!r}" for k, v in getattr(law, "kwds", {}).items()]
        return _Text(f"scipy.stats.{dist.name}({', '.join(args)})")
    if isinstance(law, Distribution) and hasattr(dist, "rvs") \
            and hasattr(getattr(dist, "dist", None), "name"):
        return describe_law(dist)
    text = repr(law)
    return _Text(text if len(text) <= 80 else text[:77] + "...")
