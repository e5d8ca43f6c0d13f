r"""A bistable population process and its metastability: Schlögl's model.

Schlögl (1972), "Chemical reaction models for non-equilibrium phase transitions", Z. Physik
253, 147-161: the reactions :math:`A + 2X \rightleftharpoons 3X`, :math:`X \rightleftharpoons B`
in a volume of size N give a birth-death chain for the number n of X with rates

.. math:: \lambda_n = N\beta(n/N),\quad \beta(x) = k_4 + k_1 x^2, \qquad
          \mu_n = N\delta(n/N),\quad \delta(x) = k_3 x + k_2 x^3,

a density-dependent population process (Kurtz 1970) whose mean-field drift
:math:`F = \beta - \delta = -k_2 (x - a)(x - b)(x - c)` has two stable equilibria a < c and an
unstable one b between them (:func:`schlogl_parameters` chooses the rates from a, b, c).  For
finite N the chain switches between the two: the mean time to go from a to c is computed
exactly (:func:`switching_time`, the birth-death first-passage sum), simulated
(:func:`simulate_switching`), and grows like :math:`e^{N \Delta V}` with the quasi-potential
:math:`\Delta V = \int_a^b \log(\delta(x)/\beta(x))\,dx` (the WKB / large-deviations rate of a
one-dimensional birth-death chain; Freidlin and Wentzell 1984, Ch. 4; :func:`quasi_potential`).
The stationary law of the chain is bimodal (:func:`stationary_law`): no single fixed point
describes it (Li 2016, stability *or metastability* of weakly interacting networks).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import sympy as sp
from numpy.typing import NDArray
from scipy import integrate
from scipy.special import logsumexp

from symq.core.errors import InvalidParameter, NotConverged, TruncationError
from symq.core.parameters import integer_value
from symq.core.randomness import RngLike
from symq.core.simrun import kernel_seed
from symq.core.simstats import ConfidenceInterval, replication_ci

from .population import PopulationProcess

__all__ = ["K1", "K2", "K3", "K4", "schlogl_process", "schlogl_parameters", "quasi_potential",
           "switching_time", "simulate_switching", "stationary_law"]

K1, K2, K3, K4 = sp.symbols("k_1 k_2 k_3 k_4", positive=True)
#: the default equilibria (a, b, c) of the claims
ROOTS = (sp.Rational(1, 5), sp.Integer(1), sp.Integer(3))


def schlogl_parameters(a: Any = ROOTS[0], b: Any = ROOTS[1], c: Any = ROOTS[2],
                       k2: Any = 1) -> dict[sp.Symbol, sp.Expr]:
    """Rates with drift ``-k2 (x - a)(x - b)(x - c)``: ``k1 = k2 (a + b + c)``,
    ``k3 = k2 (ab + bc + ca)``, ``k4 = k2 abc`` (exact when a, b, c are)."""
    a, b, c, k2 = (v if isinstance(v, sp.Basic) else sp.Rational(v) for v in (a, b, c, k2))
    if not (0 < a < b < c) or not k2 > 0:
        raise InvalidParameter("(a, b, c)", (a, b, c), "0 < a < b < c and k2 > 0")
    return {K1: k2 * (a + b + c), K2: k2, K3: k2 * (a * b + b * c + c * a), K4: k2 * a * b * c}


def schlogl_process(upper: float = 10.0) -> PopulationProcess:
    """Schlögl's model as a :class:`PopulationProcess` in ``x = n/N`` on ``[0, upper]``."""
    process = PopulationProcess(1, (K1, K2, K3, K4), bounds=(0.0, upper), name="Schlogl model")
    x, = process.variables
    process.add_transition((1,), K4 + K1 * x**2)
    process.add_transition((-1,), K3 * x + K2 * x**3)
    return process


def _rates(params: dict[sp.Symbol, Any]) -> tuple[float, float, float, float]:
    return tuple(float(params[k]) for k in (K1, K2, K3, K4))  # type: ignore[return-value]


def quasi_potential(params: dict[sp.Symbol, Any], start: float, end: float) -> float:
    """``int_start^end log(delta(x)/beta(x)) dx`` (adaptive quadrature, error below 1e-10)."""
    k1, k2, k3, k4 = _rates(params)
    value, _ = integrate.quad(lambda x: math.log((k3 * x + k2 * x**3) / (k4 + k1 * x * x)),
                                  start, end, epsabs=1e-13, epsrel=1e-12)
    return float(value)


def _log_rates(N: int, params: dict[sp.Symbol, Any], n_max: int
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    k1, k2, k3, k4 = _rates(params)
    x = np.arange(n_max + 1) / N
    return np.log(N * (k4 + k1 * x * x)), np.log(np.maximum(N * (k3 * x + k2 * x**3), 1e-300))


def _log_measure(N: int, params: dict[sp.Symbol, Any], n_max: int
                 ) -> NDArray[np.float64]:
    """``log pi_n`` (unnormalised), ``pi_n = prod_{m<n} lambda_m / mu_{m+1}``."""
    log_up, log_down = _log_rates(N, params, n_max)
    return np.concatenate([[0.0], np.cumsum(log_up[:-1] - log_down[1:])])


def _levels(N: int, value: float) -> int:
    return int(round(N * value))


def switching_time(N: int, params: dict[sp.Symbol, Any], start: float, target: float
                   ) -> float:
    """``log`` of the exact mean first-passage time from ``n = round(N start)`` up to
    ``round(N target)`` of the birth-death chain:
    ``T = sum_{k=i}^{j-1} (lambda_k pi_k)^{-1} sum_{l<=k} pi_l`` (Karlin and Taylor 1975,
    Ch. 4), summed in the log domain (the times reach ``e^{N Delta V}``)."""
    N = integer_value("N", N, 1)
    i, j = _levels(N, start), _levels(N, target)
    if not 0 <= i < j:
        raise InvalidParameter("target", target, f"a level above start = {start}")
    log_pi = _log_measure(N, params, j)
    log_up, _ = _log_rates(N, params, j)
    cumulative = np.logaddexp.accumulate(log_pi)
    return float(logsumexp(cumulative[i:j] - log_up[i:j] - log_pi[i:j]))


def stationary_law(N: int, params: dict[sp.Symbol, Any], tail: float = 1e-15
                   ) -> NDArray[np.float64]:
    """The stationary law of ``n`` on ``0..n_max``, ``n_max`` grown until the mass beyond it
    is below ``tail`` (the measure decays faster than geometrically there: ``mu_n / lambda_n``
    grows like n)."""
    N = integer_value("N", N, 1)
    n_max = 8 * N
    for _ in range(12):
        log_pi = _log_measure(N, params, n_max)
        law = np.exp(log_pi - logsumexp(log_pi))
        ratio = math.exp(log_pi[-1] - log_pi[-2])
        if law[-1] / max(1.0 - ratio, 1e-300) < tail and ratio < 1:
            return law
        n_max *= 2
    raise TruncationError(f"stationary law of the Schlogl chain (N = {N})", "n_max",
                          float(law[-1]), tail, n_max)


@numba.njit(cache=True)
def _switch_kernel(N, k1, k2, k3, k4, i, j, n_switches, seed, max_events):
    np.random.seed(seed)
    out = np.empty(n_switches)
    events = 0
    for s in range(n_switches):
        n, t = i, 0.0
        while n < j:
            events += 1
            if events > max_events:
                out[s] = -1.0
                return out
            x = n / N
            up = N * (k4 + k1 * x * x)
            total = up + N * (k3 * x + k2 * x * x * x)
            t += -math.log(1.0 - np.random.random()) / total
            n += 1 if np.random.random() * total < up else -1
        out[s] = t
    return out


def simulate_switching(N: int, params: dict[sp.Symbol, Any], start: float, target: float,
                       n_switches: int = 400, rng: RngLike = None, level: float = 0.99,
                       max_events: int = 10**9) -> ConfidenceInterval:
    """Mean first-passage time from ``round(N start)`` to ``round(N target)`` by Gillespie's
    algorithm: ``n_switches`` independent passages, a Student-t interval on their mean.

    Raises
    ------
    NotConverged
        When the passages need more than ``max_events`` jumps in all (the mean switching time
        grows like ``e^{N Delta V}``: use :func:`switching_time` for large N).
    """
    N = integer_value("N", N, 1)
    n_switches = integer_value("n_switches", n_switches, 2)
    i, j = _levels(N, start), _levels(N, target)
    if not 0 <= i < j:
        raise InvalidParameter("target", target, f"a level above start = {start}")
    seed = kernel_seed(rng)
    max_events = integer_value("max_events", max_events, 1)
    times = _switch_kernel(N, *_rates(params), i, j, n_switches, seed, max_events)
    if np.any(times < 0):
        done = int(np.argmax(times < 0))
        raise NotConverged(f"Schlogl switching simulation (N = {N}): {done} of {n_switches} "
                           f"passages within max_events = {max_events} jumps", float("inf"),
                           0.0, max_events)
    return replication_ci(times, level)
