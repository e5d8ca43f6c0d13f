"""Phase-type representations of matrix-exponential laws (Cumani's canonical form CF1).

An :class:`~symq.me.distribution.ME` law whose transform has only real poles has the bidiagonal
representation of Cumani's CF1 (phases in series, rates ascending); it is a phase-type (PH)
law of its own order exactly when every entry weight is nonnegative (Cumani 1982).  Used by the
domains that need PH job sizes (mean-field load balancing, dispatching).

Examples
--------
>>> from symq.me import ME
>>> alpha, A = to_phase_type(ME.erlang(2, 3))
>>> alpha.tolist(), A.tolist()
([1.0, 0.0], [[-3.0, 3.0], [0.0, -3.0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import sympy as sp
from numpy.typing import NDArray

from symq.core.errors import InvalidParameter

from ._context import is_mpc, mp, rebind, working_dps
from .polynomials import synthetic_division

__all__ = ["RationalTransformLaw", "to_phase_type"]


@runtime_checkable
class RationalTransformLaw(Protocol):
    """What the CF1 construction reads of a law with a rational transform ``N(s)/D(s)`` (a
    :class:`~symq.me.distribution.ME` is one): the numerator's coefficients and the poles."""

    @property
    def numerator(self) -> Sequence[sp.Rational]:
        """Coefficients of ``N``, ascending, exact."""

    def poles(self, dps: int = 30) -> list[tuple[Any, int]]:
        """The poles of the transform with their multiplicities, at ``dps`` digits."""


def to_phase_type(me: RationalTransformLaw, dps: int = 30
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A phase-type representation of a :class:`symq.me.ME` law, where one exists in series form.

    If every pole of the transform is real, the law has the bidiagonal representation of
    Cumani's canonical form CF1: phases in series with rates ``mu_1 <= ... <= mu_n`` (the
    negated poles, ascending, with multiplicity), entered at phase ``i`` with weight
    ``beta_i``.  The transform of entering at ``i`` is ``prod_{j>=i} mu_j/(s + mu_j)``, so
    ``N(s) = sum_i beta_i (prod_{j>=i} mu_j) prod_{j<i} (s + mu_j)``: the ``beta_i`` are the
    Newton divided differences of ``N`` at the nodes ``-mu_1, -mu_2, ...``, computed here in
    mpmath with ``dps`` digits.  The law is an acyclic PH exactly when all ``beta_i >= 0``
    (Cumani 1982); the representation then has the order of the ME.

    Parameters
    ----------
    me : symq.me.ME
        The matrix-exponential law.
    dps : int, default 30
        Working decimal digits.

    Returns
    -------
    alpha, A : ndarray
        Initial vector and bidiagonal sub-generator (float64).

    Raises
    ------
    InvalidParameter
        ``me`` is not an :class:`~symq.me.ME` (no rational transform), has complex poles (no
        series representation; this converter does not search for a larger cyclic PH), or some
        ``beta_i < 0`` (the law is not an acyclic PH of its own order).

    Examples
    --------
    >>> from symq.me import ME
    >>> mixture = ME.hyperexponential([0.25, 0.75], [1, 4])     # 1/4 Exp(1) + 3/4 Exp(4)
    >>> alpha, A = to_phase_type(mixture)
    >>> alpha.tolist(), A.tolist()
    ([0.1875, 0.8125], [[-1.0, 1.0], [0.0, -4.0]])
    """
    if not isinstance(me, RationalTransformLaw):
        raise InvalidParameter("me", me, "a symq.me.ME distribution")
    with working_dps(int(dps) + 10):
        rates: list[Any] = []
        for pole, mult in rebind(me.poles(dps=int(dps) + 10)):
            if is_mpc(pole):
                raise InvalidParameter(
                    "me", me, "an ME law whose transform has only real poles",
                    f"pole {mp.nstr(pole, 8)} is complex: the series (CF1) form does not "
                    "exist; a PH representation, if any, needs more phases")
            rates.extend([-pole] * int(mult))
        rates.sort()
        n = len(rates)
        coeffs = [mp.mpf(sp_rational.p) / sp_rational.q for sp_rational in me.numerator]
        coeffs += [mp.mpf(0)] * (n - len(coeffs))
        beta = []
        for i in range(n):
            # synthetic division of N by (s - node): remainder N(node), quotient carries on
            coeffs, remainder = synthetic_division(coeffs, -rates[i])
            tail_product = mp.fprod(rates[i:])
            beta.append(remainder / tail_product)
        scale = max(mp.fsum(abs(b) for b in beta), mp.mpf(1))
        worst = min(beta)
        if worst < -mp.mpf(10) ** (-int(dps) + 5) * scale:
            raise InvalidParameter(
                "me", me, "an ME law that is an acyclic PH (all CF1 entry weights >= 0)",
                f"the CF1 entry weight {mp.nstr(worst, 6)} is negative: the law is not a "
                "PH of its own order")
        alpha = np.array([max(float(b), 0.0) for b in beta])
        mu = np.array([float(r) for r in rates])
    alpha /= alpha.sum()
    A = -np.diag(mu) + np.diag(mu[:-1], k=1)
    return alpha, A
