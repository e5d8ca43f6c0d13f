"""Job-size and interarrival laws: one protocol, one vocabulary, one conversion.

The layer between :mod:`symq.core` and the domains (design: "Layout").  Every domain that takes job
sizes accepts one *law* and converts it here:

* :class:`Distribution` — the protocol, with scipy's new-API verbs as methods (``pdf``, ``cdf``,
  ``ccdf``, ``icdf``, ``moment(order, kind)``, ``mean()``, ``variance()``, ``sample(shape, rng=)``,
  ``to_scipy()``) and the capabilities a domain asks of a law (``phase_type()`` where a phase-type
  form exists);
* :class:`PhaseType` — the phase-type law ``PH(alpha, A)`` (Neuts 1981); the matrix-exponential law
  :class:`symq.me.ME` is a law too and keeps its Padé and certification machinery in :mod:`symq.me`;
* the named laws, one class and one constructor each (:class:`Exponential`, :class:`Deterministic`,
  :class:`Erlang`, :class:`Hyperexponential`, :class:`Gamma`, :class:`Lognormal`, :class:`Weibull`,
  :class:`Pareto`, :class:`Lomax`, :class:`Uniform`, :class:`Empirical`, :class:`ScipyLaw`), and
  their one vocabulary: :func:`size_law` builds, for each name of :data:`SIZE_LAWS`, the law with a
  given mean and squared coefficient of variation, and :func:`size_parameters` declares the
  matching ``sizes``, ``mean`` and ``scv`` parameters of a model;
* the capabilities, methods of every law: ``partial_moment(k, x)`` (exact where a closed form
  exists, checked quadrature otherwise), ``phase_type()`` (or :class:`NoPhaseType`),
  ``sample(shape, rng=)``, exact ``moment(k)``, ``is_exponential``;
* :func:`as_law` — the one conversion a domain applies once, at its public boundary (a name, a law
  object, a scipy distribution, a pair ``(alpha, A)``), and :func:`as_phase_type` and
  :func:`as_sampler`, built on it.

This package knows no domain: it imports only :mod:`symq.core`.
"""

from .continuous import (
    Erlang,
    Exponential,
    Gamma,
    Lognormal,
    Lomax,
    NamedScipyLaw,
    Pareto,
    Uniform,
    Weibull,
)
from .conversion import as_law, as_phase_type, as_sampler
from .named import (
    FIXED_SCV,
    SIZE_LAWS,
    Deterministic,
    Empirical,
    Hyperexponential,
    law_scv,
    size_law,
    size_parameters,
    weibull_shape,
)
from .ph_families import (
    erlang,
    hyper_erlang,
    hyperexponential2,
    ph_from_me,
    ph_moments,
    ph_stationary_phase,
    stationary_phase,
    subgenerator_expm,
)
from .phase_type import PhaseType, ScipyLaw, validate_ph
from .protocol import (
    MOMENT_KINDS,
    Distribution,
    InfiniteMoment,
    NoPhaseType,
    ScipyAdapter,
    describe_law,
    distribution_markdown,
    probabilities_in_unit_interval,
)

__all__ = [
    "Distribution", "MOMENT_KINDS", "ScipyAdapter", "distribution_markdown",
    "probabilities_in_unit_interval", "NoPhaseType", "InfiniteMoment",
    "PhaseType", "ScipyLaw", "as_phase_type", "as_sampler", "describe_law", "validate_ph",
    "as_law",
    "Exponential", "Erlang", "Gamma", "Lognormal", "Weibull", "Pareto", "Lomax", "Uniform",
    "NamedScipyLaw",
    "SIZE_LAWS", "FIXED_SCV", "Deterministic", "Empirical", "Hyperexponential", "law_scv",
    "size_law", "size_parameters", "weibull_shape",
    "erlang", "hyper_erlang", "hyperexponential2", "ph_from_me", "ph_moments",
    "ph_stationary_phase", "stationary_phase", "subgenerator_expm",
]
