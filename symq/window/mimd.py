"""MIMD window with constant-rate losses and a floor: a D/M/1 queue in log scale.

Altman, Avrachenkov, Kherani, Prabhu, *Performance analysis and stochastic stability of
congestion control protocols*, IEEE INFOCOM 2005 (their Section III relates the window under
multiplicative decrease to the workload of a queue); derived in ``derivations/awp.md``, section
"Multiplicative increase, constant losses and a floor".  The window grows multiplicatively,
``dW/dt = a W`` (time in round-trip times), losses form a Poisson process of constant rate
``lam`` and a loss sets ``W -> max(beta W, w_min)``.

In log scale ``Z = ln(W/w_min)`` grows at speed ``a`` and a loss subtracts
``delta = ln(1/beta)`` with reflection at 0, so the post-loss values follow the Lindley
recursion ``Z' = max(0, Z + a T - delta)`` with ``T ~ Exp(lam)``.  Level crossing,
``a f(z) = lam P(z < Z <= z + delta)``, gives the time-stationary law

* ``Z ~ Exp(theta)`` where ``theta > 0`` solves ``a theta = lam (1 - beta^theta)``;
* ``W = w_min e^Z`` is Pareto: ``P(W > w) = (w/w_min)^-theta`` for ``w >= w_min``;
* ``E[W^s] = w_min^s theta/(theta - s)`` for ``s < theta`` (infinite otherwise).

The positive root exists iff ``lam ln(1/beta) > a`` (the log-drift ``a - lam ln(1/beta)`` is
negative): otherwise ``W -> infinity`` and there is no stationary law.  The mean is finite iff
``theta > 1``, i.e. iff ``a < lam (1 - beta)``; between the two conditions the process is
stable but ``E[W] = infinity``.

The root has the closed form ``theta = lam/a + W_0(-z e^-z)/delta`` with ``z = lam delta/a``
(Lambert ``W`` on its principal branch; the other branch gives the trivial root 0), polished by
Newton steps on ``a theta - lam (1 - beta^theta)``.

Examples
--------
>>> m = MIMDFloor(a=1.0, lam=5.0, beta=0.5, w_min=1.0)
>>> m.stable, m.mean_exists
(True, True)
>>> bool(abs(m.theta - 5 * (1 - 0.5 ** m.theta)) < 1e-12)
True
>>> round(m.mean(), 10) == round(m.theta / (m.theta - 1), 10)
True
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import lambertw

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import real_value as _real
from symq.laws import Distribution, probabilities_in_unit_interval

__all__ = ["MIMDFloor", "mimd_theta"]


def mimd_theta(a: float, lam: float, beta: float) -> float:
    """Positive root ``theta`` of ``a theta = lam (1 - beta^theta)``.

    ``derivations/awp.md``, step "Exponent of the stationary law".

    Parameters
    ----------
    a : float
        Multiplicative increase rate per RTT, ``> 0``.
    lam : float
        Constant loss rate per RTT, ``> 0``.
    beta : float
        Decrease factor, in ``(0, 1)``.

    Returns
    -------
    float
        The exponent of the stationary law of ``ln(W/w_min)``.

    Raises
    ------
    InvalidParameter
        A parameter outside its domain.
    StabilityError
        ``lam <= a/ln(1/beta)``: no positive root (the window drifts to infinity).

    Examples
    --------
    >>> th = mimd_theta(1.0, 2.0, 0.5)   # stable: 2 ln 2 = 1.386 > 1
    >>> bool(0 < th < 2) and abs(th - 2 * (1 - 0.5 ** th)) < 1e-13
    True
    """
    a = _real("a", a, "a finite real number > 0", lambda v: v > 0)
    lam = _real("lam", lam, "a finite real number > 0", lambda v: v > 0)
    beta = _real("beta", beta, "a real number in (0, 1)", lambda v: 0 < v < 1)
    delta = -math.log(beta)
    z = lam * delta / a
    if not z > 1.0:
        raise StabilityError(
            f"MIMD with constant loss rate is unstable: lam={lam!r} must be > a/ln(1/beta) = "
            f"{a / delta!r} (a={a!r}, beta={beta!r}); the log-window drift a - lam ln(1/beta) = "
            f"{a - lam * delta!r} is >= 0, so W -> infinity and there is no stationary law")
    arg = -z * math.exp(-z)
    theta = lam / a + float(lambertw(arg, 0).real) / delta
    if not theta > 0 or not math.isfinite(theta):  # z extremely close to 1: fall back to bisection
        theta = 0.0
    # Newton polish on h(t) = lam(1 - e^{-delta t})/t - a (positive root is simple)

    def h(t: float) -> float:
        return lam * (-math.expm1(-delta * t)) - a * t

    lo, hi = 0.0, lam / a  # h > 0 just right of 0, h(lam/a) < 0
    if theta <= 0 or theta >= hi:
        theta = 0.5 * hi
    for _ in range(200):
        val = h(theta)
        if val > 0:
            lo = max(lo, theta)
        else:
            hi = min(hi, theta)
        der = lam * delta * math.exp(-delta * theta) - a
        step = val / der if der != 0 else 0.0
        new = theta - step
        if not (lo < new < hi):
            new = 0.5 * (lo + hi)
        if abs(new - theta) <= 4e-16 * theta:
            theta = new
            break
        theta = new
    return theta


class MIMDFloor(Distribution):
    """Stationary law of MIMD (``dW/dt = a W``) with constant loss rate and a floor ``w_min``.

    ``derivations/awp.md``, section "Multiplicative increase, constant losses and a floor" (the
    log-window is the workload of a D/M/1-type queue; cf. Altman, Avrachenkov, Kherani, Prabhu,
    INFOCOM 2005, Section III).

    Parameters
    ----------
    a : float
        Multiplicative increase rate per RTT, ``> 0`` (Scalable TCP: ``a = 0.01``).
    lam : float
        Loss rate per RTT (Poisson, independent of the window), ``> 0``.
    beta : float
        Decrease factor in ``(0, 1)`` (Scalable TCP: ``0.875``).
    w_min : float
        Floor of the window after a loss, ``> 0``.

    Attributes
    ----------
    theta : float
        Root of ``a theta = lam (1 - beta^theta)``: ``ln(W/w_min) ~ Exp(theta)``.
    stable : bool
        Always ``True`` for a constructed object (unstable parameters raise).
    mean_exists : bool
        ``theta > 1``, i.e. ``a < lam (1 - beta)``.

    A :class:`~symq.laws.Distribution` of the time-stationary window (``pdf``,
    ``cdf``, ``ccdf``, ``icdf`` in closed form, ``moment``, ``mean()``, ``variance()``,
    ``sample``, ``to_scipy()``).

    Raises
    ------
    InvalidParameter
        A parameter outside its domain.
    StabilityError
        ``lam <= a/ln(1/beta)``.

    Examples
    --------
    >>> m = MIMDFloor(0.01, 0.1, 0.875, 10.0)   # Scalable TCP, lam(1-beta) = 0.0125 > a
    >>> m.mean_exists
    True
    >>> float(m.cdf(10.0)), float(m.pdf(5.0))
    (0.0, 0.0)
    """

    def __init__(self, a: float, lam: float, beta: float, w_min: float) -> None:
        self.a = _real("a", a, "a finite real number > 0", lambda v: v > 0)
        self.lam = _real("lam", lam, "a finite real number > 0", lambda v: v > 0)
        self.beta = _real("beta", beta, "a real number in (0, 1)", lambda v: 0 < v < 1)
        self.w_min = _real("w_min", w_min, "a finite real number > 0 (the floor is needed for "
                           "stability of MIMD with constant loss rate)", lambda v: v > 0)
        self.theta = mimd_theta(self.a, self.lam, self.beta)
        self.stable = True

    def __repr__(self) -> str:
        return (f"MIMDFloor(a={self.a!r}, lam={self.lam!r}, beta={self.beta!r}, "
                f"w_min={self.w_min!r}; theta={self.theta!r})")

    @property
    def delta(self) -> float:
        """``ln(1/beta)``, the decrease in log scale."""
        return -math.log(self.beta)

    @property
    def mean_exists(self) -> bool:
        """Whether ``E[W] < infinity`` (``theta > 1``, iff ``a < lam (1 - beta)``)."""
        return self.theta > 1.0

    def moment_exists(self, s: float) -> bool:
        """Whether ``E[W^s]`` is finite (``s < theta``)."""
        return float(s) < self.theta

    def pdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary density ``theta w_min^theta w^-(theta+1)`` on ``w > w_min``.

        Examples
        --------
        >>> MIMDFloor(1.0, 5.0, 0.5, 2.0).pdf([1.0, 2.0]).round(6).tolist()[0]
        0.0
        """
        w = np.asarray(w, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.theta / self.w_min * np.exp(
                -(self.theta + 1.0) * (np.log(w) - math.log(self.w_min)))
        return np.where(w > self.w_min, out, 0.0)

    def cdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary ``P(W <= w) = 1 - (w/w_min)^-theta`` for ``w >= w_min``."""
        w = np.asarray(w, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = -np.expm1(-self.theta * (np.log(w) - math.log(self.w_min)))
        return np.where(w > self.w_min, out, 0.0)

    def ccdf(self, w: ArrayLike) -> NDArray[np.float64]:
        """Time-stationary ``P(W > w)`` (Pareto tail, exact)."""
        w = np.asarray(w, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.exp(-self.theta * (np.log(w) - math.log(self.w_min)))
        return np.where(w > self.w_min, out, 1.0)

    def support(self) -> tuple[float, float]:
        """``(w_min, inf)``."""
        return (self.w_min, math.inf)

    def icdf(self, p: ArrayLike) -> NDArray[np.float64]:
        """Quantiles in closed form: ``w_min (1 - p)^(-1/theta)`` (``inf`` at ``p = 1``).

        Raises
        ------
        InvalidParameter
            A ``p`` outside [0, 1].

        Examples
        --------
        >>> m = MIMDFloor(1.0, 5.0, 0.5, 2.0)
        >>> bool(abs(m.cdf(m.icdf(0.3)) - 0.3) < 1e-14)
        True
        """
        q = probabilities_in_unit_interval(p)
        with np.errstate(divide="ignore"):
            out = self.w_min * np.exp(-np.log1p(-q) / self.theta)
        return out[()] if out.ndim == 0 else out

    def moment(self, order: float = 1, kind: str = "raw") -> float:
        """``E[W^s] = w_min^s theta/(theta - s)`` for a real ``s = order < theta`` (``raw``);
        ``central``/``standardized`` moments of an integer order as in
        :meth:`symq.laws.Distribution.moment`.

        A finite moment beyond the floating-point range (``w_min^s`` overflows, e.g.
        ``w_min = 0.1``, ``s = -400``) is returned as ``inf``, as numpy's power overflows.

        Raises
        ------
        InvalidParameter
            ``order >= theta``: the moment is infinite (the tail is Pareto with index
            ``theta``) although the process is stable; an unknown ``kind``.

        Examples
        --------
        >>> m = MIMDFloor(1.0, 5.0, 0.5, 1.0)
        >>> bool(abs(m.moment(0.0) - 1.0) < 1e-15)
        True
        >>> MIMDFloor(1.0, 400.0, 0.5, 0.1).moment(-400.0)   # 0.1^-400 theta/(theta + 400)
        inf
        """
        if kind != "raw":
            return Distribution.moment(self, order, kind)
        s = _real("order", order, "a finite real number", lambda v: True)
        if not s < self.theta:
            raise InvalidParameter(
                "order", order, f"< theta = {self.theta!r}",
                f"E[W^s] is infinite: the stationary window has a Pareto tail "
                f"P(W > w) = (w/w_min)^-theta; the process is stable but this moment does not "
                f"exist (a={self.a!r}, lam={self.lam!r}, beta={self.beta!r})")
        try:
            power = self.w_min ** s
        except OverflowError:  # the moment is finite but beyond the floating-point range
            return math.inf
        return power * self.theta / (self.theta - s)

    def _raw_moment(self, order: int) -> float:
        return self.mean() if order == 1 else self.moment(float(order))

    def mean(self) -> float:
        """``E[W] = w_min theta/(theta - 1)``.

        Raises
        ------
        StabilityError
            ``theta <= 1``, i.e. ``a >= lam (1 - beta)``: the process is stable but ``E[W]``
            is infinite (Pareto tail with index ``theta``).
        """
        if not self.mean_exists:
            raise StabilityError(
                f"the window is stable but E[W] is infinite: tail exponent theta = "
                f"{self.theta:.4g} <= 1 (P(W > w) = (w/w_min)^-theta); a finite mean needs "
                f"a < lam (1 - beta), i.e. lam={self.lam!r} > a/(1 - beta) = "
                f"{self.a / (1 - self.beta)!r} (a={self.a!r}, beta={self.beta!r})")
        return self.moment(1.0)

    def log_mean(self) -> float:
        """``E[ln(W/w_min)] = 1/theta``."""
        return 1.0 / self.theta
