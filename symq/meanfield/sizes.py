"""The job-size law as the public mean-field functions accept it (issue 31: one name, ``sizes``).

Each public function takes ``sizes`` in one of these forms and converts it once, at its boundary
(:func:`symq.laws.as_phase_type` for the solvers, :func:`symq.laws.as_sampler` for the simulator
that can sample any law); the functions inside take the converted
:class:`~symq.laws.PhaseType` or :class:`~symq.laws.Distribution`.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias, Union, runtime_checkable

from numpy.typing import ArrayLike

from symq.laws import Distribution

__all__ = ["PhaseTypeLaw", "SampledLaw", "ScipyFrozenLaw"]


@runtime_checkable
class ScipyFrozenLaw(Protocol):
    """A frozen :mod:`scipy.stats` distribution (``scipy.stats.lognorm(0.8)``): what
    :func:`symq.laws.as_sampler` reads of it."""

    def rvs(self, *args: Any, **kwargs: Any) -> Any:
        """Draws (scipy's ``rvs``)."""

    def mean(self) -> Any:
        """The mean (scipy's ``mean``)."""


#: A job-size law with a phase-type form: a :class:`~symq.laws.PhaseType`, an ``ME`` or another
#: :class:`~symq.laws.Distribution` whose ``phase_type()`` exists, or a pair ``(alpha, A)``.
PhaseTypeLaw: TypeAlias = Union[Distribution, tuple[ArrayLike, ArrayLike]]  # noqa: UP007

#: Any job-size law a simulator can sample: a :data:`PhaseTypeLaw`, any symq
#: :class:`~symq.laws.Distribution` or a frozen scipy distribution.
SampledLaw: TypeAlias = Union[Distribution, tuple[ArrayLike, ArrayLike],  # noqa: UP007
                              ScipyFrozenLaw]
