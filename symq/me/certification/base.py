r"""The base of the certifier: interval primitives and the data every stage shares.

The bottom layer of :mod:`symq.me.certification` (no import of any other stage): the end points,
midpoint and certain sign of ``mpmath.iv`` intervals, exact rationals as intervals, the exact data
of a transform :math:`N/D` (:class:`ExactData`, step 1 of the procedure) and a certified pole
enclosure (:class:`Pole`, steps 2 and 4).  Layers above it:
:mod:`~symq.me.certification.verdict` (the vocabulary of a run),
:mod:`~symq.me.certification.enclosures`, :mod:`~symq.me.certification.intervals`,
:mod:`~symq.me.certification.exact`, then the searches and the certificate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

from .._context import iv, mp

__all__ = ["ExactData", "Pole", "certain_sign", "fraction_of", "iv_rational", "lower_end",
           "midpoint", "upper_end"]


# ====================================================================== interval primitives
def fraction_of(x: sp.Rational) -> Fraction:
    """The sympy rational ``x`` as a :class:`fractions.Fraction` (exactly)."""
    return Fraction(int(x.p), int(x.q))


def iv_rational(q: Fraction) -> Any:
    """An interval enclosing the rational q."""
    if q.denominator == 1:
        return iv.mpf(q.numerator)
    return iv.mpf(q.numerator) / iv.mpf(q.denominator)


def lower_end(x: Any) -> mpmath.mpf:
    """The lower end of the real interval ``x`` (an mpf of the calling thread's context)."""
    return mp.make_mpf(x._mpi_[0])


def upper_end(x: Any) -> mpmath.mpf:
    """The upper end of the real interval ``x`` (an mpf of the calling thread's context)."""
    return mp.make_mpf(x._mpi_[1])


def midpoint(x: Any) -> mpmath.mpf:
    """The midpoint of the real interval ``x``."""
    return (lower_end(x) + upper_end(x)) / 2


def _re(box: Any) -> Any:
    return box.real if isinstance(box, iv.mpc) else box


def certain_sign(x: Any) -> int | None:
    """Sign of an exact Fraction, or the certain sign of a real interval (None if unknown)."""
    if isinstance(x, Fraction):
        return (x > 0) - (x < 0)
    if lower_end(x) > 0:
        return 1
    if upper_end(x) < 0:
        return -1
    return None


# ====================================================================== shared data
@dataclass
class ExactData:
    """Exact data of N/D (step 1 of the procedure)."""

    b: list[Fraction]  # numerator, ascending, length n
    a: list[Fraction]  # denominator, ascending, length n + 1, monic
    n: int
    deg_num: int
    d: list[Fraction]  # f(0), f'(0), ..., f^(n-1)(0)
    jstar: int
    factors: list[tuple[list[Fraction], int]]  # irreducible monic factors over Q, multiplicity


@dataclass
class Pole:
    """A certified enclosure of one distinct pole (step 2 of the procedure) with its Hermite
    coefficients (step 4): a disk about ``center`` of radius ``radius`` holding exactly one
    root of D (a real one when ``real``), its interval ``box``, and the coefficients
    :math:`c_j` of :math:`t^j e^{zt}` as intervals (exact ``Fraction`` values too when the pole
    is rational).  A complex pole stands for itself and its conjugate (``weight`` 2)."""

    center: Any  # mpf (real) or mpc (upper half plane representative)
    radius: mpmath.mpf
    multiplicity: int
    real: bool
    box: Any  # iv.mpf or iv.mpc containing the pole
    exact: Fraction | None = None  # the pole itself when rational
    coeffs: list[Any] = field(default_factory=list)  # Hermite coefficients (intervals)
    exact_coeffs: list[Fraction] | None = None

    @property
    def weight(self) -> int:
        """2 for an upper-half-plane pole standing for itself and its conjugate, else 1."""
        return 1 if self.real else 2

    @property
    def re_lo(self) -> mpmath.mpf:
        """Lower end of the real part of the enclosure."""
        return lower_end(_re(self.box))

    @property
    def re_hi(self) -> mpmath.mpf:
        """Upper end of the real part of the enclosure."""
        return upper_end(_re(self.box))
