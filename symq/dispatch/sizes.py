"""Job-size laws as the dispatcher takes them: one conversion at its public functions.

The dispatching solvers and the simulator work on a :class:`symq.laws.Distribution` (its
``mean()``, ``moment(2)``, ``cdf``, ``ccdf``, ``partial_moment(1 or 2, x)`` and samples).  A
public function of :mod:`symq.dispatch` converts what it is given ONCE, with :func:`as_sizes`:

* a name of :data:`symq.laws.SIZE_LAWS` (:func:`named_sizes`, mean 1);
* anything :func:`symq.laws.as_law` accepts (a :class:`~symq.laws.PhaseType` or a pair
  ``(alpha, A)``, a frozen ``scipy.stats`` law, any symq :class:`~symq.laws.Distribution`); an
  :class:`symq.me.ME` law goes through its phase-type form where it has one.

A law whose partial moments would come from the checked per-point quadrature of
:meth:`symq.laws.Distribution.partial_moment` (a generic scipy law, an ME law without a
phase-type form) gets them tabulated once on a fine grid, so that value iteration on large grids
stays cheap; every other verb is the law's own.

Three choices keep the dispatcher's numbers as they were: ``h2`` by name is the balanced-means
:class:`~symq.laws.Hyperexponential` with the small phase probability computed without
cancellation, ``uniform`` without ``scv`` is uniform on (0, 2) with tabulated partial moments,
and the cdf of an exponential law is ``-expm1(-x/mean)`` in numpy (:func:`size_cdf`).

Examples
--------
>>> X = as_sizes("exp")
>>> X.mean(), X.moment(2)
(1.0, 2.0)
>>> round(float(X.partial_moment(1, 1.0)), 12)    # 1 - 2/e
0.264241117657
>>> from symq.me import ME
>>> as_sizes(ME.erlang(2, 4)).mean()                # through its phase-type form
0.5
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter
from symq.core.parameters import real_value
from symq.core.randomness import RngLike
from symq.laws import (
    SIZE_LAWS,
    Distribution,
    Exponential,
    Hyperexponential,
    as_law,
    as_phase_type,
    describe_law,
)
from symq.laws.phase_type import ScipyLaw

__all__ = ["as_sizes", "named_sizes", "size_cdf", "size_scv", "size_name"]

#: Largest SCV of the ``h2`` law by name: beyond it the long phase (mean about ``scv``,
#: probability about ``1/(2 scv)``) is outside what the exact formulas resolve in double
#: precision (``E[X^2] = 1 + scv`` must stay far below the float range).
_H2_SCV_MAX = 1e12
_DOMAIN = "a job-size law on [0, inf) with finite mean and variance"


def named_sizes(name: str = "exp", scv: float | None = None) -> Distribution:
    """The size law with mean 1 called ``name`` in :data:`symq.laws.SIZE_LAWS`, with SCV ``scv``.

    As :func:`symq.laws.size_law`, with the dispatching model's two defaults: ``h2`` without
    ``scv`` has SCV 4 (the paper's) and ``uniform`` without ``scv`` is uniform on (0, 2)
    (SCV 1/3, tabulated partial moments as ever).

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for an unknown name, ``scv`` for an SCV the law cannot have (or one
        missing where the law needs it).

    Examples
    --------
    >>> round(size_scv(named_sizes("weibull", 2.0)), 10)
    2.0
    >>> named_sizes("h2").probabilities.round(6).tolist()
    [0.887298, 0.112702]
    """
    key = str(name).strip().lower()
    if key not in SIZE_LAWS:
        raise InvalidParameter("sizes", name, "one of " + ", ".join(SIZE_LAWS))
    if key == "exp" and scv is None:
        return Exponential(1.0)
    if key == "uniform" and scv is None:
        import scipy.stats

        return _Tabulated(ScipyLaw(scipy.stats.uniform(0.0, 2.0), "sizes"), "uniform(0, 2)")
    if key == "h2":
        c2 = real_value("scv", 4.0 if scv is None else scv,
                        f"a real number in (1, {_H2_SCV_MAX:g}] for h2 sizes",
                        lambda c: 1 < c <= _H2_SCV_MAX)
        # balanced means, p_i / mu_i = 1/2; the small probability without cancellation
        small = (1.0 / (c2 + 1)) / (1.0 + math.sqrt((c2 - 1) / (c2 + 1)))
        probabilities = np.array([1.0 - small, small])
        return Hyperexponential(probabilities, 2.0 * probabilities)
    return as_law(key, "sizes", mean=1.0, scv=scv)


def as_sizes(law: Any, name: str = "sizes") -> Distribution:
    """The one conversion of a job-size law at the public functions of :mod:`symq.dispatch`.

    Parameters
    ----------
    law : str, Distribution, ME, scipy distribution or (alpha, A)
        A name of :data:`symq.laws.SIZE_LAWS` (:func:`named_sizes`), an :class:`symq.me.ME` law
        (its phase-type form where it has one), or anything :func:`symq.laws.as_law` accepts.
        A converted law is returned as is.
    name : str
        The caller's parameter name, for messages.

    Raises
    ------
    InvalidParameter
        Naming ``name`` for anything else, an invalid phase-type pair (naming ``alpha`` or
        ``A``), or a law off ``[0, inf)`` or without finite mean and variance.

    Examples
    --------
    >>> import scipy.stats
    >>> as_sizes(scipy.stats.uniform(0, 2)).moment(2)
    1.3333333333333333
    >>> as_sizes(([1.0], [[-2.0]])).mean()
    0.5
    """
    if isinstance(law, str):
        return named_sizes(law)
    from symq.me import ME

    if isinstance(law, ME):
        try:
            law = as_phase_type(law, name)
        except InvalidParameter:
            pass
    out = as_law(law, name)
    mean, second = _check(out, name)
    if type(out).partial_moment is Distribution.partial_moment:  # per-point quadrature
        return _Tabulated(out, mean=mean, second=second)
    return out


def _check(law: Distribution, name: str) -> tuple[float, float]:
    """The mean and second moment of a law on ``[0, inf)`` with both finite."""
    try:
        low = float(law.support()[0])
        mean, second = float(law.mean()), float(law.moment(2))
    except (TypeError, ValueError, InvalidParameter) as exc:
        raise InvalidParameter(name, describe_law(law), _DOMAIN, str(exc)) from None
    if low < 0 or not (math.isfinite(mean) and mean > 0 and math.isfinite(second)):
        raise InvalidParameter(name, describe_law(law), _DOMAIN)
    return mean, second


def size_cdf(law: Distribution, x: ArrayLike) -> NDArray[np.float64]:
    """``P(X <= x)`` for ``x >= 0`` as a float array; for an exponential law
    ``-expm1(-x/mean)`` with numpy's ``expm1`` (the dispatcher's numbers since its first
    release; scipy's differs in the last bit)."""
    if isinstance(law, Exponential):
        return -np.expm1(-(1.0 / law.scale) * np.asarray(x, dtype=float))
    return np.asarray(law.cdf(x), dtype=float)


def size_scv(law: Distribution) -> float:
    """The squared coefficient of variation ``E[X^2]/E[X]^2 - 1``."""
    return float(law.moment(2)) / float(law.mean()) ** 2 - 1.0


def size_name(law: Distribution) -> str:
    """The label of a size law in results and messages."""
    return repr(law)


class _Tabulated(Distribution):
    """A law whose partial moments of orders 1 and 2 are tabulated once (cumulative midpoint
    sums of the cdf increments on a geometric grid, scaled to the exact moments at the end) and
    interpolated; every other verb is the law's own."""

    def __init__(self, law: Distribution, label: str | None = None, *,
                 mean: float | None = None, second: float | None = None) -> None:
        self.law, self.label = law, label or repr(law)
        if isinstance(law, ScipyLaw) and getattr(law, "_frozen", False):  # scipy's own tail
            dist = law.dist
            mean, var = float(dist.mean()), float(dist.var())
            top, second, cdf = float(dist.isf(1e-14)), var + mean ** 2, dist.cdf
        else:
            if mean is None or second is None:
                mean, second = _check(law, "sizes")
            top = mean
            while not float(law.ccdf(top)) < 1e-14:
                top *= 2.0
                if top > 1e8 * mean:
                    raise InvalidParameter("sizes", describe_law(law),
                                           _DOMAIN + " and a vanishing tail",
                                           f"P(X > {top:g}) >= 1e-14")
            cdf = law.cdf
        self._mean, self._second = mean, second
        grid = np.concatenate([[0.0], np.geomspace(max(top, 1.0) * 1e-9, top, 20001)])
        mid = 0.5 * (grid[1:] + grid[:-1])
        mass = np.diff(np.asarray(cdf(grid), dtype=float))
        m1 = np.concatenate([[0.0], np.cumsum(mass * mid)])
        m2 = np.concatenate([[0.0], np.cumsum(mass * mid * mid)])
        self._grid, self._m1, self._m2 = grid, m1 * (mean / m1[-1]), m2 * (second / m2[-1])

    def __repr__(self) -> str:
        return self.label

    def pdf(self, x: ArrayLike) -> Any:
        return self.law.pdf(x)

    def cdf(self, x: ArrayLike) -> Any:
        return self.law.cdf(x)

    def ccdf(self, x: ArrayLike) -> Any:
        return self.law.ccdf(x)

    def icdf(self, p: ArrayLike) -> Any:
        return self.law.icdf(p)

    def support(self) -> tuple[float, float]:
        return self.law.support()

    def _raw_moment(self, order: int) -> Any:
        if order == 1:
            return self._mean
        return self._second if order == 2 else self.law.moment(order)

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        return self.law.sample(shape, rng=rng)

    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        if order not in (1, 2):
            return self.law.partial_moment(order, x)
        points = np.maximum(np.asarray(x, dtype=float), 0.0)
        return np.interp(points, self._grid, self._m1 if order == 1 else self._m2)


#: The names of the dispatcher's own law type and constructors, retired: what replaces each.
_RETIRED = {
    "exponential": "symq.laws.Exponential(mean)",
    "hyperexponential2": "symq.dispatch.sizes.named_sizes('h2', scv)",
    "get_sizes": "symq.dispatch.sizes.named_sizes(name, scv)",
    "as_size_law": "symq.dispatch.sizes.as_sizes(law)",
    "SizeLaw": "symq.laws.Distribution",
    "from_scipy": "symq.laws.as_law(dist)",
    "from_phase_type": "symq.laws.PhaseType(alpha, A)",
    "from_me": "symq.dispatch.sizes.as_sizes(me)",
    "from_distribution": "symq.dispatch.sizes.as_sizes(law)",
    "from_law": "symq.dispatch.sizes.as_sizes(law)",
    "SIZE_NAMES": "symq.laws.SIZE_LAWS",
}


def _exponential(mean: float = 1.0) -> Distribution:
    return Exponential(mean)


def _hyperexponential2(scv: float) -> Distribution:
    return named_sizes("h2", scv)


_FOR_ONE_RELEASE = {"exponential": _exponential, "hyperexponential2": _hyperexponential2,
                    "get_sizes": named_sizes, "as_size_law": as_sizes}


def __getattr__(attr: str) -> Any:
    """The retired names: the four constructors work for one release with a
    :class:`~symq.core.renamed.RenamedKeywordWarning`; the others name their replacement."""
    if attr in _FOR_ONE_RELEASE:
        from symq.core.renamed import RenamedKeywordWarning

        warnings.warn(f"symq.dispatch.sizes.{attr} is now {_RETIRED[attr]} (one job-size law "
                      "type, symq.laws.Distribution); the old name works for one release",
                      RenamedKeywordWarning, stacklevel=2)
        return _FOR_ONE_RELEASE[attr]
    if attr in _RETIRED:
        raise AttributeError(f"symq.dispatch.sizes.{attr} was retired: use {_RETIRED[attr]}")
    raise AttributeError(f"module 'symq.dispatch.sizes' has no attribute {attr!r}")
