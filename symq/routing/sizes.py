r"""Job-size laws of the processor-sharing simulator: named laws and the one conversion.

:func:`~symq.routing.simulation.simulate_ps_queue` and
:func:`~symq.routing.simulation.simulate_farm` take one *job-size law*: any law that
:func:`symq.laws.as_sampler` accepts (a :class:`~symq.laws.PhaseType`, a pair
``(alpha, A)``, an :class:`~symq.me.ME`, a frozen scipy distribution such as
``scipy.stats.lognorm(0.8)``, any symq :class:`~symq.laws.Distribution`), or one of
the names of :data:`SIZE_LAWS`, which :func:`size_law` maps to a law object.  :func:`as_size_law`
is the one place where the argument is converted; the simulators call nothing else.

Insensitivity of M/G/1-PS (Altman, Ayesta, Prabhu 2011, model section) says that the means
the simulator estimates depend on the law only through its mean, so the three named laws
(variability 0, 1 and, by default, SCV 4) are the natural test cases.  The point mass
:class:`~symq.laws.Deterministic` and the balanced H2 come from
:mod:`symq.laws`, whose :func:`~symq.laws.size_law` names more laws (Erlang,
gamma, lognormal, Weibull, Pareto, uniform) by mean and SCV; its laws are law objects here.

Examples
--------
>>> law = size_law("hyperexponential", mean=2.0, scv=4.0)
>>> round(law.mean(), 12), round(law.variance() / law.mean() ** 2, 12)
(2.0, 4.0)
>>> size_law("deterministic", mean=3.0).sample(3, rng=0).tolist()
[3.0, 3.0, 3.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from symq.core.errors import InvalidParameter, UnknownName
from symq.core.parameters import Interval, PositiveReal
from symq.laws import Deterministic, Hyperexponential
from symq.laws import PhaseType, as_sampler, describe_law

__all__ = ["SIZE_LAWS", "Deterministic", "size_law", "as_size_law", "SizeSampler"]

#: Names of the job-size laws that :func:`size_law` builds.
SIZE_LAWS: tuple[str, ...] = ("exponential", "deterministic", "hyperexponential")

#: Squared coefficient of variation of the named hyperexponential law when none is given.
DEFAULT_SCV = 4.0


def _hyperexponential(mean: float, scv: float) -> PhaseType:
    r"""Balanced-means H2 (:meth:`symq.laws.Hyperexponential.balanced`) as a
    :class:`~symq.laws.PhaseType`: :math:`p_{1,2} = (1 \pm \sqrt{(c^2-1)/(c^2+1)})/2`,
    :math:`\mu_i = 2 p_i/\text{mean}`."""
    alpha, A = Hyperexponential.balanced(mean, scv).phase_type()  # noqa: N806
    return PhaseType(alpha, A, name=f"H2(mean={mean:g}, scv={scv:g})")


def size_law(name: str, mean: float = 1.0, scv: float | None = None) -> Any:
    r"""The job-size law of a given name and mean.

    Parameters
    ----------
    name : {"exponential", "deterministic", "hyperexponential"}
        ``"exponential"``: ``scipy.stats.expon(scale=mean)`` (SCV 1).  ``"deterministic"``:
        :class:`Deterministic` (every size equals ``mean``, SCV 0).  ``"hyperexponential"``: a
        two-phase :class:`~symq.laws.PhaseType` with *balanced means*,
        :math:`p_1/\mu_1 = p_2/\mu_2 = \text{mean}/2`, and squared coefficient of variation
        ``scv``: :math:`p_{1,2} = \tfrac12\big(1 \pm \sqrt{(c^2-1)/(c^2+1)}\big)`,
        :math:`\mu_i = 2 p_i / \text{mean}`.
    mean : float, default 1.0
        Mean size, ``> 0``.
    scv : float, optional
        SCV :math:`c^2 = Var[X]/E[X]^2 \ge 1` of the hyperexponential law (default
        :data:`DEFAULT_SCV`); refused for the other laws.

    Returns
    -------
    a job-size law
        Accepted by :func:`symq.laws.as_sampler`.

    Raises
    ------
    UnknownName
        If ``name`` is not one of :data:`SIZE_LAWS` (the message lists them).
    InvalidParameter
        If ``mean <= 0``, ``scv < 1``, or ``scv`` is given for a law that has a fixed SCV.
    """
    if not isinstance(name, str) or name.strip().lower() not in SIZE_LAWS:
        raise UnknownName("job-size law", str(name), SIZE_LAWS)
    key = name.strip().lower()
    mean = float(PositiveReal().coerce("mean", mean))
    if key != "hyperexponential" and scv is not None:
        raise InvalidParameter("scv", scv, "omitted for the law " + repr(key),
                               "only the hyperexponential law has a free SCV")
    if key == "exponential":
        return stats.expon(scale=mean)
    if key == "deterministic":
        return Deterministic(mean)
    scv = float(Interval(1.0, math.inf).coerce("scv", DEFAULT_SCV if scv is None else scv))
    return _hyperexponential(mean, scv)


@dataclass(frozen=True)
class SizeSampler:
    """A converted job-size law: what the simulator draws from.

    Attributes
    ----------
    law : Distribution
        The law, as returned by :func:`symq.laws.as_sampler`.
    mean : float
        Its mean :math:`E[X] > 0`.
    label : str
        The name given (``"exponential"``) or a short description of the law object.
    """

    law: Any
    mean: float
    label: str

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` sizes from ``rng``: a float64 array, every entry ``> 0``.

        Raises
        ------
        InvalidParameter
            If the law produced a negative or non-finite size (not a law of job sizes).
        """
        sizes = np.asarray(self.law.sample(n, rng=rng), dtype=float).reshape(n)
        if not np.all(np.isfinite(sizes)) or np.any(sizes < 0):
            raise InvalidParameter("law", self.label, "a law of nonnegative finite job sizes",
                                   "a sampled size is negative or not finite")
        # a size of exactly 0 (probability ~0 for a continuous law) would give T/s = 0/0
        return np.maximum(sizes, np.finfo(float).tiny)


def as_size_law(law: Any, mean: float | None = None, scv: float | None = None) -> SizeSampler:
    """The one conversion of the simulators' ``law`` argument.

    Parameters
    ----------
    law : str or job-size law
        A name of :data:`SIZE_LAWS` (with ``mean`` and ``scv`` as in :func:`size_law`), or a law
        object accepted by :func:`symq.laws.as_sampler`, which fixes its own mean and
        variability.
    mean : float, optional
        Mean size of a named law (default 1).  With a law object it must be omitted or equal to
        the law's mean.
    scv : float, optional
        SCV of the named hyperexponential law; refused with a law object.

    Raises
    ------
    UnknownName
        For an unknown name.
    InvalidParameter
        Naming ``law``, ``mean`` or ``scv``: a law object without a finite positive mean, a
        ``mean`` that contradicts the law, an ``scv`` for a law object.

    Examples
    --------
    >>> from scipy import stats
    >>> as_size_law(stats.lognorm(0.5, scale=2.0)).label
    'scipy.stats.lognorm(0.5, scale=2.0)'
    >>> as_size_law("exponential", mean=3.0).mean
    3.0
    """
    if isinstance(law, str):
        given = 1.0 if mean is None else float(PositiveReal().coerce("mean", mean))
        sampler = as_sampler(size_law(law, given, scv), "law")
        return SizeSampler(sampler, given, law.strip().lower())   # the mean as given, exactly
    sampler = as_sampler(law, "law")
    label = str(describe_law(law))
    try:
        law_mean = float(sampler.moment(1))
    except (TypeError, ValueError):
        law_mean = math.nan
    if not (math.isfinite(law_mean) and law_mean > 0):
        raise InvalidParameter("law", describe_law(law), "a law of job sizes with a finite "
                               "positive mean", f"E[X] = {law_mean}")
    if scv is not None:
        raise InvalidParameter("scv", scv, "omitted when law is a law object",
                               "the law fixes its own variability")
    if mean is not None:
        given = float(PositiveReal().coerce("mean", mean))
        if not math.isclose(given, law_mean, rel_tol=1e-12):
            raise InvalidParameter("mean", mean, f"omitted or equal to the mean {law_mean:.12g} "
                                   f"of the law {label}")
    return SizeSampler(sampler, law_mean, label)
