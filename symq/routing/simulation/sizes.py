r"""The job-size law of the PS simulators: its one conversion and the drawing of job sizes.

:func:`simulate_ps_queue <symq.routing.simulation.queue.simulate_ps_queue>` and
:func:`simulate_farm <symq.routing.simulation.farm.simulate_farm>` take one job-size law
``sizes`` (a name of :data:`symq.laws.SIZE_LAWS`, a :class:`~symq.laws.PhaseType`, an
:class:`~symq.me.ME`, a frozen scipy distribution, ...), converted once at the public boundary by
:func:`symq.laws.as_law` and :func:`symq.laws.as_sampler` and drawn in Python with numpy (the
kernel itself draws no random numbers, so it needs no seeding of numba's stream).  The names of
the laws before issue 31 (``"exponential"``, ``"deterministic"``, ``"hyperexponential"``, the
last with SCV 4 by default) are accepted for one release with a
:class:`~symq.core.renamed.RenamedKeywordWarning` that names the new name.

Examples
--------
>>> x = draw_sizes("det", mean=1.5, n=3, rng=0)
>>> x.tolist()
[1.5, 1.5, 1.5]
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.parameters import IntegerAtLeast, PositiveReal
from symq.core.randomness import RngLike, as_generator
from symq.core.renamed import RenamedKeywordWarning, renamed_keywords
from symq.laws import Distribution, as_law, as_sampler, describe_law

__all__ = ["draw_sizes", "RENAMED_LAWS", "FORMER_H2_SCV"]


#: The job-size law names of the simulators before issue 31 -> their names in
#: :data:`symq.laws.SIZE_LAWS`; accepted for one release with a
#: :class:`~symq.core.renamed.RenamedKeywordWarning`.
RENAMED_LAWS: dict[str, str] = {"exponential": "exp", "deterministic": "det",
                                "hyperexponential": "h2"}

#: SCV of the former name ``"hyperexponential"`` when none is given (its default before issue 31).
FORMER_H2_SCV = 4.0


@dataclass(frozen=True)
class _JobSizes:
    """A converted job-size law: what the simulator draws from.

    Attributes
    ----------
    law : Distribution
        The law, as returned by :func:`symq.laws.as_sampler`.
    mean : float
        Its mean :math:`E[X] > 0` (for a name, the ``mean`` as given).
    label : str
        The name given (``"h2"``) or a short description of the law object.
    """

    law: Distribution
    mean: float
    label: str

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` sizes from ``rng``: a float64 array, every entry ``> 0``.

        Raises
        ------
        InvalidParameter
            Naming ``sizes`` if the law produced a negative or non-finite size.
        """
        sizes = np.asarray(self.law.sample(n, rng=rng), dtype=float).reshape(n)
        if not np.all(np.isfinite(sizes)) or np.any(sizes < 0):
            raise InvalidParameter("sizes", self.label, "a law of nonnegative finite job sizes",
                                   "a sampled size is negative or not finite")
        # a size of exactly 0 (probability ~0 for a continuous law) would give T/s = 0/0
        return np.maximum(sizes, np.finfo(float).tiny)


def _job_sizes(sizes: object, mean: float | None, scv: float | None,
               caller: str) -> _JobSizes:
    """The one conversion of the simulators' ``sizes`` argument (:func:`symq.laws.as_law`).

    A name (with ``mean``, default 1, and ``scv``) keeps its ``mean`` exactly as given; a former
    name of :data:`RENAMED_LAWS` is mapped to its new name with a warning (``"hyperexponential"``
    without ``scv``: SCV :data:`FORMER_H2_SCV`).  A law object fixes its own mean (``mean``
    omitted or equal to it) and variability (``scv`` refused).

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` (an unknown name or object, a law without a finite positive mean),
        ``mean`` or ``scv``.
    """
    if isinstance(sizes, str):
        key = sizes.strip().lower()
        if key in RENAMED_LAWS:
            warnings.warn(f"{caller}(sizes={sizes!r}) is renamed {caller}(sizes="
                          f"{RENAMED_LAWS[key]!r}); {sizes!r} will be removed in the next release",
                          RenamedKeywordWarning, stacklevel=4)
            if key == "hyperexponential" and scv is None:
                scv = FORMER_H2_SCV
            key = RENAMED_LAWS[key]
        given = 1.0 if mean is None else float(PositiveReal().coerce("mean", mean))
        law = as_sampler(as_law(key, "sizes", mean=given, scv=scv), "sizes")
        return _JobSizes(law, given, sizes.strip().lower())   # the mean as given, exactly
    law = as_sampler(as_law(sizes, "sizes", mean=mean, scv=scv), "sizes")
    try:
        law_mean = float(law.moment(1))
    except (TypeError, ValueError):
        law_mean = math.nan
    if not (math.isfinite(law_mean) and law_mean > 0):
        raise InvalidParameter("sizes", describe_law(sizes), "a law of job sizes with a finite "
                               "positive mean", f"E[X] = {law_mean}")
    return _JobSizes(law, law_mean, str(describe_law(sizes)))


@renamed_keywords(law="sizes")
def draw_sizes(sizes: object, mean: float | None, n: int, rng: RngLike = None,
               scv: float | None = None) -> np.ndarray:
    r"""Draw ``n`` i.i.d. job sizes from a job-size law.

    Parameters
    ----------
    sizes : str or job-size law
        A name of :data:`symq.laws.SIZE_LAWS` or a law object (what :func:`symq.laws.as_law`
        accepts).  Formerly ``law=`` (accepted for one release, with a warning).
    mean : float or None
        Mean size of a named law (``None``: 1); omitted (``None``) or equal to the law's mean for
        a law object.
    n : int
        Number of sizes, ``>= 1``.
    rng : int, SeedSequence, numpy.random.Generator or None
        Source of randomness; the same seed gives the same sizes.
    scv : float, optional
        Squared coefficient of variation of a named law (:func:`symq.laws.size_law`).

    Returns
    -------
    numpy.ndarray
        ``float64`` array of shape ``(n,)``, all entries ``> 0``.

    Raises
    ------
    InvalidParameter
        Naming ``sizes`` for an unknown name (the message lists :data:`symq.laws.SIZE_LAWS`) or
        object, ``mean`` for ``mean <= 0``, ``n`` for ``n < 1``, ``scv`` for an SCV the law
        cannot have.

    Examples
    --------
    >>> x = draw_sizes("h2", mean=2.0, n=200_000, rng=0, scv=4.0)
    >>> round(float(x.mean()), 1)
    2.0
    """
    sampler = _job_sizes(sizes, mean, scv, "draw_sizes")
    n = IntegerAtLeast(1).coerce("n", n)
    return sampler.draw(n, as_generator(rng))
