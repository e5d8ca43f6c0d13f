"""The ``me-fit`` model: ``symq solve me-fit moments=M [zero=Z] [order=n]``.

:data:`MODEL` is a plain :class:`~symq.core.registry.ModelSpec`; importing this module registers
nothing (:mod:`symq.me.registration` names it, and ``mg1-sim`` of :mod:`symq.me.mg1`, for the
registry).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import mpmath
import sympy as sp

from symq.core.errors import InvalidParameter
from symq.core.parameters import IntegerAtLeast, Parameter, RationalVector
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result, ResultBase

from ._context import working_dps
from .certification import Nonnegativity, certify
from .distribution import ME
from .pade import pade_fit
from .transform import exact_text

__all__ = ["MODEL", "PARAMETERS", "MEFit", "solve", "MAX_ORDER", "MAX_DPS"]

#: Largest order accepted from the command line: exact Hankel solves and certification of
#: higher orders take more than seconds (order 30 takes about a second).
MAX_ORDER = 30
#: Largest working precision accepted (a 1000-digit solve of order 30 takes seconds).
MAX_DPS = 1000
#: Moments (and nonzero values at zero) must lie in 10^-MAX_EXPONENT .. 10^MAX_EXPONENT, so that
#: the fitted transform and its moments can be shown as floats.
MAX_EXPONENT = 300

PARAMETERS = (
    Parameter("moments", RationalVector(), typical=(1, 3, 15),
              description="raw moments m1, m2, ... (decimals or fractions such as 2/3)"),
    Parameter("zero", RationalVector(positive=False), required=False,
              description="prescribed f(0), f'(0), ... (the density's behaviour around zero)"),
    Parameter("order", IntegerAtLeast(1, maximum=MAX_ORDER), required=False,
              description="ME order n; default (k + J + 1)/2 for k moments and J zero values"),
    Parameter("dps", IntegerAtLeast(16, maximum=MAX_DPS), required=False, default=50,
              description="working digits of the mpmath solve for inexact input"),
)


def _float_of(q: Any, what: str, moments: tuple) -> float:
    """A fitted coefficient as a float; refuse a time scale that floats cannot show."""
    value = float(sp.Rational(q)) if abs(sp.Rational(q)) < sp.Integer(10) ** 308 else math.inf
    if not math.isfinite(value) or (value == 0.0 and q != 0):
        raise InvalidParameter(
            "moments", _brief_list(moments), "moments whose fitted transform has coefficients in "
            "the floating-point range", f"the {what} coefficient {_short(q)} is outside "
            "1e-308..1e308: rescale time (e.g. give the moments in other units)")
    return value


def _short(v: Any) -> str:
    q = sp.Rational(v)
    if abs(q.p) < 10**15 and q.q < 10**15:
        return str(q)
    with working_dps(15) as ctx:   # huge exact values: scientific notation, no str(int)
        return ctx.nstr(ctx.mpf(int(q.p)) / int(q.q), 6)


def _brief_list(values: Any) -> str:
    values = list(values)
    text = ",".join(_short(v) for v in values[:4])
    return text + (f",... ({len(values)} values)" if len(values) > 4 else "")


def _check_sizes(moments: tuple, zero: tuple | None) -> None:
    """Guards on the work before it starts: number of values and magnitude of the moments."""
    k, J = len(moments), len(zero or ())
    if k + J > 2 * MAX_ORDER - 1:
        raise InvalidParameter(
            "moments", _brief_list(moments), f"at most {2 * MAX_ORDER - 1} values in moments= and "
            f"zero= together (order <= {MAX_ORDER})", f"{k} moments and {J} values at zero given")
    bound = sp.Integer(10) ** MAX_EXPONENT
    for i, m in enumerate(moments):
        if not (1 / bound <= abs(m) <= bound):
            raise InvalidParameter(
                "moments", _brief_list(moments), f"moments between 1e-{MAX_EXPONENT} and "
                f"1e{MAX_EXPONENT}", f"entry {i} (m{i + 1}) is outside: rescale time")
    for j, d in enumerate(zero or ()):
        if d != 0 and not (1 / bound <= abs(d) <= bound):
            raise InvalidParameter(
                "zero", _brief_list(zero), f"values 0 or between 1e-{MAX_EXPONENT} and "
                f"1e{MAX_EXPONENT} in absolute value", f"entry {j} is outside: rescale time")


def _complex(z: Any) -> dict[str, float]:
    z = mpmath.mpc(z)   # a conversion only: the global precision is read, never set
    return {"re": float(z.real), "im": float(z.imag)}


@dataclass(frozen=True)
class MEFit(ResultBase):
    """A Padé fit of an ME distribution with its certificate (the ``me-fit`` model).

    Attributes
    ----------
    order : int
        The fitted order (after exact cancellation of common factors).
    numerator, denominator : tuple of float
        Coefficients of the transform in ascending powers of s (denominator monic).
    numerator_exact, denominator_exact : tuple of str
        The same coefficients as exact rationals (text).
    poles : tuple of dict
        ``{"re", "im", "multiplicity"}`` of each distinct pole.
    certificate : str
        The verdict: ``NONNEGATIVE``, ``NEGATIVE``, ``INVALID`` or ``INCONCLUSIVE``.
    certificate_method : str
        The rule that decided it.
    moments_used, zero_used : int
        Moments and values at zero the fit matches.
    fitted_moments : tuple of float
        The fit's moments, as many as were given (a fit reproducing only some is visible).
    reason : str or None
        Why, for INVALID and INCONCLUSIVE (None otherwise).
    witness : float or None
        For NEGATIVE: a time t with f(t) < 0.
    witness_enclosure : tuple of float or None
        For NEGATIVE: an interval containing f(witness).
    method : str
    exactness : Exactness
        That of the fit (``exact`` for exact data, ``numeric`` for a float solve).
    seconds : float
        Time of the fit and its certificate.
    """

    summary: ClassVar[tuple[str, ...]] = ("order", "certificate", "certificate_method")

    order: int
    numerator: tuple[float, ...]
    denominator: tuple[float, ...]
    numerator_exact: tuple[str, ...]
    denominator_exact: tuple[str, ...]
    poles: tuple[dict[str, float], ...]
    certificate: str
    certificate_method: str
    moments_used: int
    zero_used: int
    fitted_moments: tuple[float, ...]
    reason: str | None = None
    witness: float | None = None
    witness_enclosure: tuple[float, float] | None = None
    method: str = "Padé (Hankel / two-point) + certified nonnegativity"
    exactness: Exactness = Exactness.EXACT
    seconds: float = 0.0


def solve(moments: tuple, zero: tuple | None = None, order: int | None = None,
          dps: int = 50) -> MEFit:
    """Padé fit (classical, or two-point with values at zero) and its certificate.

    Returns
    -------
    MEFit
        ``numerator``/``denominator`` (ascending powers of s, denominator monic, floats) with
        their exact rational forms, ``poles``, ``certificate`` (NONNEGATIVE, NEGATIVE, INVALID or
        INCONCLUSIVE), ``witness`` when NEGATIVE, and the fitted moments.
    """
    _check_sizes(tuple(moments), zero)
    start = time.perf_counter()
    fitted = pade_fit(moments, order=order, zero=zero or (), dps=dps)
    me = ME(fitted.lst)
    certificate = certify(me)
    negative = certificate.status is Nonnegativity.NEGATIVE
    return MEFit(
        order=me.order,
        numerator=tuple(_float_of(c, "numerator", moments) for c in me.numerator),
        denominator=tuple(_float_of(c, "denominator", moments) for c in me.denominator),
        numerator_exact=tuple(exact_text(c) for c in me.numerator),
        denominator_exact=tuple(exact_text(c) for c in me.denominator),
        poles=tuple({**_complex(p), "multiplicity": k} for p, k in me.poles()),
        certificate=certificate.status.value,
        certificate_method=certificate.method,
        moments_used=fitted.moments_used,
        zero_used=fitted.zero_used,
        # all given moments, so that a fit that reproduces only some of them is visible
        fitted_moments=tuple(float(m) for m in me.moments(max(len(moments), 1))),
        reason=certificate.reason or None,
        witness=float(certificate.witness) if negative else None,
        witness_enclosure=((float(certificate.enclosure[0]), float(certificate.enclosure[1]))
                           if negative and certificate.enclosure is not None else None),
        exactness=fitted.exactness,
        seconds=time.perf_counter() - start,
    )


def _scalar_outputs(result: Result) -> dict[str, float]:
    word = result.values["certificate"]
    return {"order": float(result.values["order"]),
            "nonnegative": 1.0 if word == Nonnegativity.NONNEGATIVE.value else 0.0}


MODEL = ModelSpec(
    name="me-fit",
    summary="matrix-exponential distribution by (two-point) Padé moment matching, with a "
            "certified nonnegativity check (Angius, Horváth et al. 2014)",
    parameters=PARAMETERS,
    solve=solve,
    scalar_outputs=_scalar_outputs,
    paper="me-pade",
    outputs=("order", "numerator", "denominator", "numerator_exact", "denominator_exact",
             "poles", "certificate", "certificate_method", "moments_used", "zero_used",
             "fitted_moments", "reason", "witness", "witness_enclosure"),
)
