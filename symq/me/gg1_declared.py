"""The GI/G/1 queue declared in a claims file: the model kind ``gg1``.

A declaration gives the interarrival law and the service law by their Laplace-Stieltjes
transforms (formulas in ``s`` and the parameters, :data:`EXAMPLE`: Erlang-2 arrivals to an
exponential server).  The model reports the load, Kingman's upper bound, Marshall's bound and
Kingman's approximation of the mean wait from the two laws' exact moments
(:func:`symq.me.gg1.gg1_references`), and, when the service is exponential (``service_rate``
names its rate instead of a ``service`` formula), the exact GI/M/1 waiting time
(:func:`symq.me.gg1.gi_m1_waiting`): ``EW``, ``sigma`` (the probability of waiting) and
``decay`` (:math:`P(W > t) = \\sigma e^{-\\mathrm{decay}\\, t}`).  Text is parsed, never
evaluated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sp

from symq.core.claimsfile.declarations import check_keys
from symq.core.errors import MISSING, InvalidParameter
from symq.core.parameters import Parameter
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import Exactness, ResultBase

from .gg1 import gg1_references, gi_m1_waiting
from .gg1_spectral import gi_g1_waiting
from .transforms import Transform, moments

__all__ = ["GG1", "declare_gg1", "GG1Outputs", "KEYS", "EXAMPLE"]

KEYS: dict[str, str] = {
    "interarrival": "the interarrival time's LST, a formula in s and the parameters",
    "service": "the service time's LST (or give service_rate for exponential service)",
    "service_rate": "the parameter that is the exponential service rate (GI/M/1: the exact "
                    "waiting time is reported)",
}

EXAMPLE = '''\
[models.e2m1]
kind = "gg1"
parameters = { lam = "positive", mu = "positive" }
interarrival = "(2*lam/(2*lam + s))^2"
service_rate = "mu"
'''


@dataclass(frozen=True)
class GG1Outputs(ResultBase):
    """The GI/G/1 values at a parameter point.

    Attributes
    ----------
    rho : float
        :math:`E[S]/E[A]`.
    kingman_upper, marshall, kingman_approximation : float
        As in :class:`~symq.me.gg1.GG1References`.
    EW, sigma, decay : float or None
        The exact GI/M/1 waiting time (exponential service only; ``EW`` also for a rational
        service transform).
    P_wait : float or None
        :math:`P(W > 0)` (a rational service transform).
    method, exactness
    """

    summary: ClassVar[tuple[str, ...]] = ("rho", "EW", "kingman_upper")

    rho: float
    kingman_upper: float
    marshall: float
    kingman_approximation: float
    EW: float | None = None
    sigma: float | None = None
    decay: float | None = None
    P_wait: float | None = None
    method: str = "exact moments of the declared transforms; GI/M/1 root (exponential service)"
    exactness: Exactness = Exactness.NUMERIC


class DeclaredGG1:
    """Computes the declared queue's values at a parameter point."""

    def __init__(self, where: str, table: Mapping[str, Any],
                 parameters: tuple[str, ...]) -> None:
        text = table.get("interarrival", MISSING)
        if not isinstance(text, str):
            raise InvalidParameter(f"{where}.interarrival", text, KEYS["interarrival"])
        self.interarrival = Transform(text, "lst", parameters, f"{where}.interarrival")
        service, rate = table.get("service"), table.get("service_rate")
        if (service is None) == (rate is None):
            raise InvalidParameter(f"{where}.service", service, "exactly one of service (an "
                                   "LST) and service_rate (a parameter name)")
        if rate is not None:
            if rate not in parameters:
                raise InvalidParameter(f"{where}.service_rate", rate, "a declared parameter: "
                                       + ", ".join(parameters))
            self.rate: str | None = rate
            service = f"{rate}/({rate} + s)"
        else:
            self.rate = None
            if not isinstance(service, str):
                raise InvalidParameter(f"{where}.service", service, KEYS["service"])
        self.service = Transform(service, "lst", parameters, f"{where}.service")
        b, e = sp.fraction(sp.cancel(sp.together(self.service.expr)))
        self.rational = bool(b.is_polynomial(self.service.variable)
                             and e.is_polynomial(self.service.variable)
                             and e.has(self.service.variable))

    def __call__(self, **values: Any) -> GG1Outputs:
        ea, va = _mean_and_variance(self.interarrival, values)
        es, vs = _mean_and_variance(self.service, values)
        ref = gg1_references(ea, va, es, vs)
        exact: dict[str, float] = {}
        if self.rate is not None:
            r = gi_m1_waiting(self.interarrival, float(values[self.rate]),
                              {p: values[p] for p in self.interarrival.parameters})
            exact = {"EW": r.EW, "sigma": r.sigma, "decay": r.decay, "P_wait": r.sigma}
        elif self.rational:
            g = gi_g1_waiting(self.interarrival, self.service, values)
            exact = {"EW": g.EW, "P_wait": g.P_wait}
        return GG1Outputs(ref.rho, ref.kingman_upper, ref.marshall, ref.kingman_approximation,
                          **exact)


def _mean_and_variance(transform: Transform, values: Mapping[str, Any]) -> tuple[float, float]:
    """The mean and the variance (a round-off below zero, a deterministic law's, is zero)."""
    m = moments(transform, 2, {p: values[p] for p in transform.parameters})
    mean, variance = m.moments[0], m.cumulants[1]
    if -1e-12 * mean * mean <= variance < 0.0:
        variance = 0.0
    return mean, variance


def declare_gg1(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                where: str) -> ModelSpec:
    """Build the model a ``kind = "gg1"`` declaration describes.

    Raises
    ------
    InvalidParameter
        Naming ``where.key`` for an unknown or missing key, a formula that does not parse or is
        not an LST, both or neither of ``service`` and ``service_rate``.

    Examples
    --------
    >>> from symq.core.parameters import Parameter, PositiveReal
    >>> import tomllib
    >>> table = tomllib.loads(EXAMPLE)["models"]["e2m1"]
    >>> ps = tuple(Parameter(p, PositiveReal()) for p in ("lam", "mu"))
    >>> spec = declare_gg1("e2m1", {k: v for k, v in table.items()
    ...                    if k not in ("kind", "parameters")}, ps, "models.e2m1")
    >>> round(spec.run({"lam": 0.8, "mu": 1.0})["sigma"], 6)
    0.739853
    """
    check_keys(where, table, KEYS, "a gg1 model")
    solver = DeclaredGG1(where, table, tuple(p.name for p in parameters))
    outputs = ("rho", "kingman_upper", "marshall", "kingman_approximation")
    if solver.rate is not None:
        outputs += ("EW", "sigma", "decay", "P_wait")
    elif solver.rational:
        outputs += ("EW", "P_wait")
    return ModelSpec(
        name=name,
        summary=("declared GI/" + ("M" if solver.rate else "G") + "/1 queue: "
                 + ", ".join(outputs)),
        parameters=parameters,
        solve=solver,
        source=f"declared ({where}, kind gg1)",
        outputs=outputs,
    )


GG1 = ModelKind(
    kind="gg1",
    summary=("a GI/G/1 FCFS queue by the LSTs of its interarrival and service laws: the load, "
             "Kingman's and Marshall's bounds and Kingman's approximation; the exact GI/M/1 "
             "waiting time for exponential service"),
    declare=declare_gg1,
    keys=KEYS,
    outputs=("rho", "kingman_upper", "marshall", "kingman_approximation", "EW", "sigma",
             "decay", "P_wait"),
    example=EXAMPLE,
)
