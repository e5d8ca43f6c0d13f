"""The registered ``me-fit`` model: ``symq solve me-fit moments=... [zero=...] [order=n]``."""

from __future__ import annotations

import time
from typing import Any

import mpmath

from symq.core.parameters import IntegerAtLeast, Parameter, RationalVector
from symq.core.registry import ModelSpec, register_model
from symq.core.result import Exactness, Result

from .certification import Nonnegativity, certify
from .distribution import ME
from .pade import pade_fit

__all__ = ["MODEL", "PARAMETERS", "solve"]

PARAMETERS = (
    Parameter("moments", RationalVector(), typical=(1, 3, 15),
              description="raw moments m1, m2, ... (decimals or fractions such as 2/3)"),
    Parameter("zero", RationalVector(positive=False), required=False,
              description="prescribed f(0), f'(0), ... (the density's behaviour around zero)"),
    Parameter("order", IntegerAtLeast(1), required=False,
              description="ME order n; default (k + J + 1)/2 for k moments and J zero values"),
    Parameter("dps", IntegerAtLeast(16), required=False, default=50,
              description="working digits of the mpmath solve for inexact input"),
)


def _complex(z: Any) -> dict[str, float]:
    z = mpmath.mpc(z)
    return {"re": float(z.real), "im": float(z.imag)}


def solve(moments: tuple, zero: tuple | None = None, order: int | None = None,
          dps: int = 50) -> Result:
    """Padé fit (classical, or two-point with values at zero) and its certificate.

    Returns
    -------
    Result
        ``numerator``/``denominator`` (ascending powers of s, denominator monic, floats) with
        their exact rational forms, ``poles``, ``certificate`` (NONNEGATIVE, NEGATIVE, INVALID or
        INCONCLUSIVE), ``witness`` when NEGATIVE, and the fitted moments.
    """
    timings: dict[str, float] = {}
    start = time.perf_counter()
    fitted = pade_fit(moments, order=order, zero=zero or (), dps=dps)
    timings["fit"] = time.perf_counter() - start
    me = ME(fitted.lst)
    start = time.perf_counter()
    certificate = certify(me)
    timings["certify"] = time.perf_counter() - start
    values: dict[str, Any] = {
        "order": me.order,
        "numerator": [float(c) for c in me.numerator],
        "denominator": [float(c) for c in me.denominator],
        "numerator_exact": [str(c) for c in me.numerator],
        "denominator_exact": [str(c) for c in me.denominator],
        "poles": [{**_complex(p), "multiplicity": k} for p, k in me.poles()],
        "certificate": certificate.status.value,
        "certificate_method": certificate.method,
        "moments_used": fitted.moments_used,
        "zero_used": fitted.zero_used,
        "fitted_moments": [float(m) for m in me.moments(max(fitted.moments_used, 1))],
    }
    if certificate.reason:
        values["reason"] = certificate.reason
    if certificate.status is Nonnegativity.NEGATIVE:
        values["witness"] = float(certificate.witness)
        values["witness_enclosure"] = [float(v) for v in certificate.enclosure]
    return Result("me-fit", {"moments": moments, "zero": zero, "order": order, "dps": dps},
                  values, method="Padé (Hankel / two-point) + certified nonnegativity",
                  exactness=Exactness.EXACT if fitted.exact else Exactness.NUMERIC,
                  timings=timings)


def _scalar_outputs(result: Result) -> dict[str, float]:
    word = result.values["certificate"]
    return {"order": float(result.values["order"]),
            "nonnegative": 1.0 if word == Nonnegativity.NONNEGATIVE.value else 0.0}


MODEL = register_model(ModelSpec(
    name="me-fit",
    summary="matrix-exponential distribution by (two-point) Padé moment matching, with a "
            "certified nonnegativity check (Angius, Horváth et al. 2014)",
    parameters=PARAMETERS,
    solve=solve,
    scalar_outputs=_scalar_outputs,
    paper="me-pade",
))
