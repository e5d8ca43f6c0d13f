"""The one conversion of a job-size law: :func:`as_law`.

Every domain that takes job sizes accepts one argument, ``sizes`` (with ``mean`` and ``scv`` for a
name), and converts it here, once, at its public boundary, into a
:class:`~symq.laws.protocol.Distribution`, whose capabilities (``partial_moment``,
``phase_type()``, ``sample``, ``moment``, ``is_exponential``) the model then asks for.
:func:`symq.laws.conversion.as_phase_type` and :func:`symq.laws.conversion.as_sampler`, the
conversions of the models that need a phase-type form or only samples, are built on it.  It
accepts:

* a name of :data:`~symq.laws.named.SIZE_LAWS`: :func:`~symq.laws.named.size_law` with ``mean``
  (default 1) and ``scv``;
* a symq :class:`~symq.laws.protocol.Distribution` (``PhaseType``, ``ME``, the named laws, ...):
  itself;
* a frozen ``scipy.stats.expon`` with ``loc = 0``: an :class:`~symq.laws.continuous.Exponential`
  on the same frozen object;
* another frozen scipy distribution, or a scipy new-API distribution: a
  :class:`~symq.laws.phase_type.ScipyLaw` on it;
* a pair ``(alpha, A)``: a :class:`~symq.laws.phase_type.PhaseType`.

A wrapped scipy object is used as is: the same numbers and the same random stream.

Examples
--------
>>> as_law("h2", scv=4.0)
Hyperexponential([0.887298..., 0.112701...], [1.774596..., 0.225403...])
>>> from scipy import stats
>>> as_law(stats.expon(scale=2.0)), as_law(stats.expon(scale=2.0), mean=2.0).is_exponential
(Exponential(mean=2.0), True)
>>> as_law(([1.0], [[-2.0]])).mean()
0.5
"""

from __future__ import annotations

import math
from typing import Any

from symq.core.errors import InvalidParameter
from symq.core.parameters import PositiveReal

from .continuous import Exponential
from .named import SIZE_LAWS, size_law
from .phase_type import PhaseType, ScipyLaw, validate_ph
from .protocol import Distribution, NoPhaseType, describe_law

__all__ = ["as_law", "convert_law", "as_phase_type", "as_sampler", "ACCEPTED_LAWS"]

#: What :func:`as_law` accepts, as its messages say it.
ACCEPTED_LAWS = ("a job-size law: a name of the vocabulary (" + ", ".join(SIZE_LAWS) + "), a "
                 "symq Distribution (PhaseType, ME, Exponential, ...), a frozen scipy.stats "
                 "distribution, a scipy new-API distribution or a pair (alpha, A)")


def convert_law(law: Any, name: str = "sizes") -> Distribution | None:
    """The law object ``law`` as a :class:`Distribution`, or ``None`` if it is not one that
    :func:`as_law` knows (names aside).

    A :class:`Distribution` is returned as is; a pair ``(alpha, A)`` is checked
    (:func:`~symq.laws.phase_type.validate_ph`, whose errors name ``alpha``, ``A`` or ``name``)
    and becomes a :class:`PhaseType`; a frozen ``scipy.stats.expon`` with ``loc = 0`` becomes an
    :class:`~symq.laws.continuous.Exponential` on the same object, any other frozen scipy
    distribution (``rvs`` and ``cdf``) or new-API one (``sample`` and ``icdf``) a
    :class:`ScipyLaw` whose messages name ``name``.
    """
    if isinstance(law, Distribution):
        return law
    if isinstance(law, (tuple, list)):
        if len(law) != 2:
            return None
        alpha, A = law
        return PhaseType._validated(*validate_ph(alpha, A, name))
    if hasattr(law, "rvs") and hasattr(law, "cdf"):
        family = getattr(getattr(law, "dist", None), "name", None)
        if family == "expon" and float(law.support()[0]) == 0.0:
            return Exponential.from_scipy(law)
        return ScipyLaw(law, name)
    if hasattr(law, "sample") and hasattr(law, "icdf"):
        return ScipyLaw(law, name)
    return None


def as_law(law: Any, name: str = "sizes", *, mean: float | None = None,
           scv: float | None = None) -> Distribution:
    """The one conversion of a job-size law (the module docstring lists what it accepts).

    Parameters
    ----------
    law : str, Distribution, scipy distribution or (alpha, A)
        The law: a name of :data:`~symq.laws.named.SIZE_LAWS` (case-insensitive), or a law
        object, which fixes its own mean and variability.
    name : str
        The caller's parameter name, for messages.
    mean : float, optional
        The mean of a named law (default 1).  With a law object it must be omitted or equal to
        the law's mean to 1e-12 relative.
    scv : float, optional
        The SCV of a named law (:func:`~symq.laws.named.size_law`: omitted for ``exp`` and
        ``det``, required otherwise); refused with a law object.

    Returns
    -------
    Distribution

    Raises
    ------
    InvalidParameter
        Naming ``name`` for an unknown name or object (the message lists what is accepted), an
        invalid pair ``(alpha, A)`` (naming ``alpha`` or ``A``), or a law object without a
        finite positive mean when ``mean`` is given; naming ``mean`` for a mean that is not
        positive or contradicts the law's; naming ``scv`` for an SCV the named law cannot have or
        given with a law object.

    Examples
    --------
    >>> as_law("lognormal", mean=2.0, scv=3.0).name
    'lognormal'
    >>> as_law(as_law("exp"), mean=2.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidParameter: parameter mean=2.0 must be omitted or equal to the mean 1 ...
    """
    if isinstance(law, str):
        if law.strip().lower() not in SIZE_LAWS:
            raise InvalidParameter(name, law, "one of " + ", ".join(SIZE_LAWS))
        return size_law(law, 1.0 if mean is None else mean, scv)
    converted = convert_law(law, name)
    if converted is None:
        raise InvalidParameter(name, describe_law(law), ACCEPTED_LAWS)
    if mean is not None:
        label = str(describe_law(law))
        try:
            law_mean = float(converted.moment(1))
        except (TypeError, ValueError):
            law_mean = math.nan
        if not (math.isfinite(law_mean) and law_mean > 0):
            raise InvalidParameter(name, describe_law(law), "a law of job sizes with a finite "
                                   "positive mean", f"E[X] = {law_mean}")
    if scv is not None:
        raise InvalidParameter("scv", scv, f"omitted when {name} is a law object",
                               "the law fixes its own variability")
    if mean is not None:
        given = float(PositiveReal().coerce("mean", mean))
        if not math.isclose(given, law_mean, rel_tol=1e-12):
            raise InvalidParameter("mean", mean, f"omitted or equal to the mean {law_mean:.12g} "
                                   f"of the law {label}")
    return converted


def _no_phase_type(law: Any, name: str, why: str) -> InvalidParameter:
    return InvalidParameter(
        name, describe_law(law), "a phase-type law: a symq.laws.phase_type.PhaseType, a pair "
        "(alpha, A), a "
        "hyper-Erlang/Erlang/H2 from the constructors, or an ME law with a phase-type form", why)


def as_phase_type(law: Any, name: str = "sizes") -> PhaseType:
    """The one conversion of a job-size law into a :class:`PhaseType`.

    The law is converted by :func:`symq.laws.conversion.as_law`, then asked for its
    :meth:`~symq.laws.protocol.Distribution.phase_type`.

    Parameters
    ----------
    law : PhaseType, (alpha, A) pair, or any law with a phase-type form
        The job-size law: a :class:`PhaseType` (returned as is), a pair ``(alpha, A)``, an
        exponential, Erlang or hyperexponential law (symq's, or a frozen ``scipy.stats.expon``),
        or an ME law, converted by Cumani's series form (CF1,
        :func:`symq.me.phase_type.to_phase_type`), which exists when its poles are real and its
        entry weights nonnegative.
    name : str
        The caller's parameter name, for messages.

    Raises
    ------
    InvalidParameter
        Naming ``name`` when the law has no phase-type form (a scipy distribution, an ME law with
        complex poles or a negative weight) or the representation is invalid.

    Examples
    --------
    >>> from symq.me import ME
    >>> as_phase_type(ME.erlang(2, 4)).mean()
    0.5
    """
    if isinstance(law, PhaseType):
        return law
    converted = law if not isinstance(law, Distribution) \
        and callable(getattr(law, "phase_type", None)) else convert_law(law, name)
    if converted is None:
        raise _no_phase_type(law, name, "not a job-size law")
    try:
        ph = converted.phase_type()
    except NoPhaseType:
        raise _no_phase_type(law, name, "this model needs a phase-type representation and the "
                             "law has none; fit one (symq.me.fit, or hyper_erlang(k, mean, scv)) "
                             "or use a simulator, which samples any law") from None
    except InvalidParameter as exc:   # the law's own reason: an ME law with complex poles, ...
        raise _no_phase_type(law, name, f"this {type(law).__name__} law has no phase-type form: "
                             f"{exc}") from None
    return ph if isinstance(ph, PhaseType) else PhaseType(*ph)


def as_sampler(law: Any, name: str = "sizes") -> Distribution:
    """A job-size law a simulator can draw from: ``sample(shape, rng=)`` and ``mean()``.

    Accepts everything :func:`as_phase_type` accepts, any symq :class:`Distribution` (returned as
    is), frozen scipy distributions (``scipy.stats.lognorm(0.8)``) and scipy's new-API
    distributions, converted by :func:`symq.laws.conversion.as_law` (a frozen
    ``scipy.stats.expon`` with ``loc = 0`` becomes an :class:`~symq.laws.continuous.Exponential`
    on the same frozen object, other scipy laws a :class:`ScipyLaw`: the same numbers and random
    stream as the scipy object).

    Raises
    ------
    InvalidParameter
        Naming ``name`` for anything else, or a law without a finite mean.
    """
    if isinstance(law, Distribution):
        return law
    if isinstance(law, (tuple, list)):
        return as_phase_type(law, name)
    sampler = convert_law(law, name) if (hasattr(law, "rvs") and hasattr(law, "cdf")) \
        or (hasattr(law, "sample") and hasattr(law, "icdf")) else None
    if sampler is None:
        raise InvalidParameter(name, describe_law(law),
                               "a job-size law: a symq distribution (PhaseType, ME), "
                               "a pair (alpha, A) or a scipy distribution")
    sampler._raw_moment(1)
    return sampler
