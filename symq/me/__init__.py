"""Matrix-exponential (ME) distributions: Padé moment matching with behaviour at zero, and
certified nonnegativity.

Angius, Horváth, Halawani, Barukab, Ahmad, Balbo, "Constructing Matrix Exponential Distributions by
Moments and Behavior around Zero", Mathematical Problems in Engineering 2014, Article ID 610907.

* :mod:`~symq.me.transform`: exact rational Laplace transforms N(s)/D(s);
* :mod:`~symq.me.distribution`: the :class:`ME` distribution (pdf, cdf, moments, sampling, scipy),
  a facade over :mod:`~symq.me.polynomials` (the one polynomial/series/poles/Hermite engine),
  :mod:`~symq.me.evaluation` (float64 and mpmath values), :mod:`~symq.me.sampling` (density
  check, quantiles, variates), :mod:`~symq.me.realisation` (exact (alpha, A) forms) and
  :mod:`~symq.me.scipy_adapter`;
* :mod:`~symq.me.pade`: classical and two-point Padé moment matching (exact or mpmath), on
  :mod:`~symq.me.moments` (parsing, Stieltjes conditions, moment order) and
  :mod:`~symq.me.linalg`;
* :mod:`~symq.me.certification`: certified nonnegativity by interval arithmetic and exact rules;
* :mod:`~symq.me.fit`: try classical and extended fits over orders, keep the certified ones;
* :mod:`~symq.me.queueing`: M/ME/1 waiting times (Pollaczek-Khinchine) and an M/G/1 Lindley
  simulator on the run core of :mod:`symq.core.simrun`;
* :mod:`~symq.me.gg1`: the GI/G/1 queue: the exact GI/M/1 waiting time, Kingman's and
  Marshall's bounds, Kingman's approximation, the Lindley simulation of any pair of laws;
  :mod:`~symq.me.gg1_spectral`: the exact GI/G/1 waiting time for rational service (spectral
  factorisation); :mod:`~symq.me.phph1`: the PH/PH/1 queue by matrix-geometric methods;
  :mod:`~symq.me.gg1_sim`: the registered ``gg1-sim`` model (two named laws, simulated beside
  both exact routes);
* :mod:`~symq.me.transforms`: transforms declared by their formula (LST, MGF, PGF): exact
  moments with their existence, inversion by two methods with the error stated, the
  Pollaczek-Khinchine transform and other exact operations;
* :mod:`~symq.me.symbolic`: the derivation printed by ``symq derive me-pade``;
* :mod:`~symq.me.model`: the registered ``me-fit`` model.

Examples
--------
>>> from symq.me import ME, from_moments, certify
>>> erlang = ME.erlang(3, 3)
>>> fitted = from_moments(erlang.moments(5))
>>> fitted == erlang, certify(fitted).status.value
(True, 'NONNEGATIVE')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .certification import Certificate, Nonnegativity, certify
from .distribution import ME, NotADistribution
from .fit import Candidate, FitReport, NoCertifiedFit, Target, fit
from .gg1 import GG1References, GIM1Waiting, gg1_references, gi_m1_waiting, simulate_gg1_waiting
from .gg1_spectral import GG1Waiting, gi_g1_waiting
from .model import MODEL
from .pade import PadeResult, moment_order, pade_fit, stieltjes_check
from .phase_type import to_phase_type
from .phph1 import PHPH1Waiting, ph_ph1_waiting
from .queueing import WaitingTime, WaitingTimeEstimate, mg1_waiting_time, simulate_mg1_waiting
from .transform import RationalLST, to_rational


def from_moments(moments: Sequence[Any], order: int | None = None, zero: Sequence[Any] = (),
                 *, dps: int = 50) -> ME:
    """The ME distribution of a (two-point) Padé fit; same as :meth:`ME.from_moments`.

    The result is not certified: call :func:`certify` (or use :func:`fit`, which keeps only
    certified fits) before using it as a density.
    """
    return ME.from_moments(moments, order=order, zero=zero, dps=dps)


__all__ = [
    "ME", "NotADistribution", "RationalLST", "to_rational",
    "from_moments", "pade_fit", "PadeResult", "moment_order", "stieltjes_check",
    "certify", "Certificate", "Nonnegativity",
    "fit", "Target", "Candidate", "FitReport", "NoCertifiedFit",
    "mg1_waiting_time", "WaitingTime", "simulate_mg1_waiting", "WaitingTimeEstimate",
    "to_phase_type", "MODEL",
    "gi_m1_waiting", "GIM1Waiting", "gg1_references", "GG1References", "simulate_gg1_waiting",
    "gi_g1_waiting", "GG1Waiting", "ph_ph1_waiting", "PHPH1Waiting",
]
