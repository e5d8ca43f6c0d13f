"""The law of a finite CTMC at a time ``t`` by uniformisation, with a rigorous truncation bound.

Uniformisation (Jensen 1953; Grassmann 1977): with ``Lambda >= max_i q_i`` (the largest exit
rate) the matrix ``P = I + Q / Lambda`` is stochastic and

    pi(t) = sum_k Pois(k; Lambda t) pi0 P^k.

Each ``pi0 P^k`` is a probability vector, so keeping only the terms ``k`` in a window
``[L, R]`` changes ``pi(t)`` by the Poisson mass outside the window, in the L1 norm: that mass is
the result's ``error_bound``, computed by :func:`scipy.stats.poisson` (``cdf(L - 1) + sf(R)``),
rigorous up to floating-point rounding.  The window leaves out at most ``eps / 2`` on each side
(scipy's ``ppf`` and ``isf``, checked by ``cdf`` and ``sf``); the weights inside are computed as
in Fox & Glynn (1988, "Computing Poisson probabilities", CACM 31:440-445): from the mode outward
by the ratios of neighbouring terms (no underflow or overflow, no loss of relative accuracy), then
scaled to the mass inside the window.  An output ``f`` with ``|f| <= f_max`` is
then off by at most ``error_bound * f_max`` (the result's ``value_error``).  ``P`` is applied as
``I + Q / Lambda`` with its diagonal clipped at 0, so every vector stays non-negative.

The expected cumulative value over ``[0, t]``, ``E int_0^t f(X_s) ds``, comes from the same
vectors: ``(1 / Lambda) sum_k P(N > k) pi0 P^k f`` with ``N ~ Pois(Lambda t)``; stopping at
``k = R`` leaves out at most ``t * P(N > R) * f_max`` (the result's ``cumulative_error``;
``E (N - R - 1)^+ <= Lambda t P(N > R)``).

The cost is about ``R * nnz(Q)`` with ``R ~ Lambda t + c sqrt(Lambda t)``.  A time whose cost
exceeds :data:`MAX_WORK` is refused (:class:`~symq.core.errors.ResourceLimit`, a subclass of
:class:`~symq.core.errors.InvalidParameter` naming ``t``) with the largest ``t`` that fits.

Examples
--------
Two states, ``0 -> 1`` at rate ``a = 1`` and ``1 -> 0`` at ``b = 2``, from state 0: the law at
``t`` is ``pi + (p0 - pi) exp(-(a + b) t)`` with ``pi = (2/3, 1/3)``:

>>> from symq.markov.chain import Jump, MarkovChain, StateVariable
>>> chain = MarkovChain([StateVariable("x", 0, 1)],
...                     [Jump("a", {"x": "1"}, "x == 0"), Jump("b", {"x": "0"}, "x == 1")],
...                     parameters=("a", "b"), outputs={"up": "x == 1"})
>>> import math
>>> law = transient(chain, {"a": 1.0, "b": 2.0}, 0.5)
>>> round(law["up"], 9), round((1 - math.exp(-1.5)) / 3, 9)
(0.258956613, 0.258956613)
>>> law.error_bound <= 1e-10
True
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

import numpy as np
import scipy.sparse as sps
from scipy.stats import poisson

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.core.parameters import real_value
from symq.core.resources import largest_fitting, require_memory
from symq.core.result import Exactness, ResultBase

from .chain import MarkovChain
from .results import OutputsByName
from .statespace import StateSpace, build_state_space, evaluate

__all__ = ["TransientLaw", "transient", "poisson_window", "initial_law", "output_vectors",
           "MAX_WORK", "MAX_TIMES",
           "TERM_OVERHEAD"]

#: Largest cost accepted for one call, in entries touched: ``(R + 1)`` products, each costing
#: ``nnz(P) + n (1 + n_outputs)`` plus :data:`TERM_OVERHEAD` (about ten seconds in all).
MAX_WORK = 1e10
#: The cost of one product's Python overhead, in entries touched (about 15 microseconds).
TERM_OVERHEAD = 20_000
#: Most times in one call.
MAX_TIMES = 10_000

#: An initial law as given: ``None`` (the chain's initial state), a state (a mapping variable ->
#: value or a sequence of integers) or a probability vector over the reachable states.
Initial: TypeAlias = "Mapping[str, int] | Sequence[int] | np.ndarray | None"


@dataclass(frozen=True)
class TransientLaw(OutputsByName, ResultBase):
    """The law of a finite CTMC at time ``t`` and its outputs then (transient analysis).

    With one time ``t`` (a number) every field below is for that time; with an array of times,
    ``t``, ``error_bound`` and each entry of ``values``, ``cumulative``, ``value_error`` and
    ``cumulative_error`` are arrays over the times and ``pi`` has one row per time.

    Attributes
    ----------
    t : float or numpy.ndarray
        The time(s).
    pi : numpy.ndarray
        The probability of each state at ``t`` (in [0, 1]; the sum is ``1 - error_bound`` up
        to rounding: the truncated Poisson mass is not put back).
    states : numpy.ndarray
        ``(n_states, n_variables)`` integers: the state of each entry of ``pi``.
    variables : tuple of str
        The names of the columns of ``states``.
    values : dict
        Each declared output at ``t``: a reward's mean, an event's probability, a label's
        instantaneous firing rate.
    cumulative : dict
        Each declared output integrated over ``[0, t]``: ``E int_0^t r(X_s) ds`` for a reward,
        the expected time spent in the event for a condition, the expected number of firings for
        a throughput.
    error_bound : float or numpy.ndarray
        The L1 distance between ``pi`` and the exact law is at most this: the Poisson mass
        outside the window ``[L, R]`` (``<= eps``).
    value_error, cumulative_error : dict
        Bounds on the error of each entry of ``values`` (``error_bound * max|f|``) and of
        ``cumulative`` (``t * P(N > R) * max|f|``), ``f`` the output's function of the state.
    terms : int
        ``R``: the number of products by ``P`` (for the largest time).
    uniformisation_rate : float
        ``Lambda``, the largest exit rate.
    method, exactness, seconds
        How the law was obtained and its wall time.
    """

    summary: ClassVar[tuple[str, ...]] = ("t", "error_bound", "terms")
    reported: ClassVar[tuple[str, ...]] = ("error_bound",)

    t: float | np.ndarray
    pi: np.ndarray
    states: np.ndarray
    variables: tuple[str, ...]
    values: dict[str, Any]
    cumulative: dict[str, Any]
    error_bound: float | np.ndarray
    value_error: dict[str, Any] = field(default_factory=dict)
    cumulative_error: dict[str, Any] = field(default_factory=dict)
    terms: int = 0
    uniformisation_rate: float = 0.0
    method: str = "uniformisation"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    def __str__(self) -> str:
        if np.ndim(self.t):
            return (f"TransientLaw({np.size(self.t)} times in [{np.min(self.t):.6g}, "
                    f"{np.max(self.t):.6g}], outputs={list(self.values)}, "
                    f"error_bound<={np.max(self.error_bound):.2g})")
        shown = ", ".join(f"{k}={v:.6g}" for k, v in list(self.values.items())[:6])
        more = ", ..." if len(self.values) > 6 else ""
        sep = ", " if shown else ""
        return (f"TransientLaw(t={self.t:.6g}{sep}{shown}{more}, "
                f"error_bound={self.error_bound:.2g})")


def poisson_window(mean: float, eps: float) -> tuple[int, int, np.ndarray, float]:
    """The window ``[L, R]`` of a Poisson law of mean ``mean`` leaving out at most ``eps / 2``
    on each side, its weights and the mass left out.

    Returns
    -------
    L, R : int
        The window: ``P(N < L) <= eps / 2`` and ``P(N > R) <= eps / 2``.
    weights : numpy.ndarray
        ``P(N = k)`` for ``k = L..R`` (Fox and Glynn's ratios from the mode, scaled to the
        mass inside).
    outside : float
        ``P(N < L) + P(N > R)`` by scipy's ``cdf`` and ``sf``.

    Examples
    --------
    >>> L, R, w, outside = poisson_window(43.4, 1e-12)
    >>> (L, R), outside <= 1e-12
    ((6, 98), True)
    """
    if mean == 0:
        return 0, 0, np.ones(1), 0.0
    half = eps / 2
    low = max(int(poisson.ppf(half, mean)), 0)
    while low > 0 and poisson.cdf(low - 1, mean) > half:
        low -= 1
    high = max(int(poisson.isf(half, mean)), low)
    while poisson.sf(high, mean) > half:
        high += 1
    outside = (float(poisson.cdf(low - 1, mean)) if low > 0 else 0.0) \
        + float(poisson.sf(high, mean))
    # Fox & Glynn: from the mode outward by the ratios of neighbours, then scaled to the mass
    # inside (each weight to a relative error of about its distance from the mode times 1e-16)
    mode = min(max(int(mean), low), high)
    weights = np.empty(high - low + 1)
    weights[mode - low] = 1.0
    weights[mode - low + 1:] = np.cumprod(mean / np.arange(mode + 1, high + 1))
    weights[:mode - low] = np.cumprod(np.arange(mode, low, -1) / mean)[::-1]
    weights *= (1.0 - outside) / weights.sum()
    return low, high, weights, outside


def initial_law(space: StateSpace, initial: Initial) -> np.ndarray:
    """The initial law on ``space``'s states: ``None`` (the chain's initial state), a state
    (mapping or sequence of integers, reachable from the chain's initial state) or a probability
    vector of length ``n_states``.

    Raises
    ------
    InvalidParameter
        ``initial`` names an unreachable or malformed state, or is not a probability vector.
    """
    n = space.n_states
    law = np.zeros(n)
    if initial is None:
        law[space.initial] = 1.0
        return law
    if isinstance(initial, np.ndarray) and initial.dtype.kind == "f":
        if initial.shape != (n,) or not np.all(np.isfinite(initial)) or initial.min() < 0 \
                or abs(initial.sum() - 1.0) > 1e-9:
            raise InvalidParameter("initial", initial if initial.size <= 8 else
                                   f"array of shape {initial.shape}",
                                   f"a probability vector over the {n} reachable states "
                                   "(finite, >= 0, summing to 1), or a state")
        return initial / initial.sum()
    chain = space.chain
    names = [v.name for v in chain.variables]
    if isinstance(initial, Mapping):
        extra = sorted(set(initial) - set(names))
        if extra:
            raise InvalidParameter("initial", dict(initial), "a state: variable -> value",
                                   f"{extra[0]} is not a state variable")
        values = [initial.get(v.name, v.low) for v in chain.variables]
    elif isinstance(initial, (Sequence, np.ndarray)) and not isinstance(initial, str):
        values = list(initial)
    else:
        raise InvalidParameter("initial", initial, "a state (a mapping variable -> value or "
                               f"{len(names)} integers) or a probability vector")
    if len(values) != len(names) or not all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in values):
        raise InvalidParameter("initial", values, f"{len(names)} integers, one per state "
                               f"variable ({', '.join(names)})")
    hit = np.flatnonzero(np.all(space.states == np.asarray(values, dtype=np.int64), axis=1))
    if hit.size == 0:
        raise InvalidParameter("initial", chain.describe(values), "a state reachable from the "
                               f"chain's initial state ({space.describe(space.initial)})",
                               "declare it as the chain's initial state: "
                               "MarkovChain(..., initial=...)")
    law[int(hit[0])] = 1.0
    return law


def output_vectors(space: StateSpace) -> dict[str, np.ndarray]:
    """Each declared output as a function of the state: a reward's value, an event's indicator,
    a label's total firing rate (finite everywhere, else :class:`InvalidParameter` naming
    ``outputs.NAME``)."""
    chain: MarkovChain = space.chain
    vectors: dict[str, np.ndarray] = {}
    for name, out in chain.outputs.items():
        if out.kind == "throughput":
            vectors[name] = sum((space.jump_rates[j] for j, jump in enumerate(chain.jumps)
                                 if jump.label == out.label), np.zeros(space.n_states))
        elif out.kind == "probability":
            vectors[name] = (evaluate(out.expr, chain, space.states, space.params) != 0
                             ).astype(float)
        else:
            with np.errstate(all="ignore"):  # checked just below
                reward = evaluate(out.expr, chain, space.states, space.params)
            bad = ~np.isfinite(reward)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise InvalidParameter(f"outputs.{name}", float(reward[k]), "a finite reward "
                                       "at every reachable state",
                                       f"at the state {space.describe(k)}")
            vectors[name] = reward
    return vectors


def _times(t: Any) -> tuple[np.ndarray, bool]:
    """The times as a 1-D float array and whether one number was given."""
    if isinstance(t, (list, tuple, np.ndarray)):
        array = np.asarray(t, dtype=object).ravel() if np.ndim(t) else np.asarray([t])
        if np.ndim(t) > 1 or array.size == 0 or array.size > MAX_TIMES:
            raise InvalidParameter("t", t if array.size <= 8 else f"{array.size} times",
                                   f"a time >= 0 or a 1-D array of 1 to {MAX_TIMES} times")
        out = np.array([real_value(f"t[{i}]", x, "a finite time >= 0", lambda v: v >= 0)
                        for i, x in enumerate(array)])
        return out, np.ndim(t) == 0
    return np.array([real_value("t", t, "a finite time >= 0", lambda v: v >= 0)]), True


def _work(rate: float, t: float, eps: float, per_term: float) -> float:
    """The cost of the products by ``P`` up to the right end of the window for time ``t``."""
    mean = rate * t
    if mean == 0:
        return per_term
    high = float(poisson.isf(eps / 2, mean))
    if not high >= mean:  # scipy gives nan for a huge mean
        high = mean
    return (high + 2) * per_term


def transient(chain: MarkovChain, params: Mapping[str, Any] | None, t: Any, *,
              initial: Initial = None, eps: float = 1e-10) -> TransientLaw:
    """The law of ``chain`` at time ``t`` (or at each of several times) by uniformisation.

    Parameters
    ----------
    chain : MarkovChain
        The declaration.
    params : mapping
        A value for every declared parameter.
    t : float or array_like
        A time ``>= 0``, or a 1-D array of times (one product sequence serves them all; the
        result's fields become arrays over the times).
    initial : mapping, sequence of int or numpy.ndarray, optional
        The law at time 0: a state (default the chain's initial state; another one must be
        reachable from it) or a probability vector (floats) over the reachable states, in the
        order of ``build_state_space(chain, params).states``.
    eps : float
        In (0, 1): the largest Poisson mass left out, hence the largest L1 error of the law.

    Returns
    -------
    TransientLaw

    Raises
    ------
    InvalidParameter
        ``t`` negative, not finite or not a number; ``eps`` outside (0, 1); a bad ``initial``.
    ResourceLimit
        ``Lambda t`` needs more than :data:`MAX_WORK` (the message gives the largest ``t``
        that fits), or the laws for all the times do not fit in memory.
    """
    started = time.perf_counter()
    eps = real_value("eps", eps, "a number in (0, 1)", lambda e: 0 < e < 1)
    times, scalar = _times(t)
    space = build_state_space(chain, params)
    n = space.n_states
    p0 = initial_law(space, initial)
    vectors = output_vectors(space)
    names = list(vectors)
    F = np.column_stack([vectors[k] for k in names]) if names else np.zeros((n, 0))
    fmax = np.abs(F).max(axis=0) if n else np.zeros(len(names))
    require_memory("t", times.size, times.size * n * 8.0 * 2,
                   what=f"the laws at {times.size} times over {n} states",
                   limit=lambda budget: f"at most {max(int(budget // (16 * n)), 1)} times")

    exits = -space.generator.diagonal()
    rate = float(exits.max()) if n else 0.0
    if rate > 0:
        PT = (sps.identity(n, format="csr") + space.generator.T.tocsr() / rate).tocsr()
        PT.data = np.maximum(PT.data, 0.0)  # 1 - q_i/Lambda may round below 0
    else:
        PT = sps.identity(n, format="csr")
    per_term = float(PT.nnz + n * (1 + len(names)) + TERM_OVERHEAD)
    t_max = float(times.max())
    if _work(rate, t_max, eps, per_term) > MAX_WORK:
        fits = largest_fitting(lambda s: _work(rate, s, eps, per_term), 0.0, t_max,
                               int(MAX_WORK))
        raise ResourceLimit(
            "t", t if scalar else t_max,
            f"about {_work(rate, t_max, eps, per_term):.3g} operations (Lambda t = "
            f"{rate * t_max:.3g} Poisson terms times {PT.nnz} transitions) of a budget of "
            f"{MAX_WORK:.3g}",
            f"at most {fits:.6g} (the largest time that fits; for long times the stationary "
            "law, symq.markov.stationary, may be what is wanted)")

    windows = [poisson_window(rate * s, eps) for s in times]
    lows = np.array([w[0] for w in windows])
    highs = np.array([w[1] for w in windows])
    outside = np.array([w[3] for w in windows])
    terms = int(highs.max())
    pi = np.zeros((times.size, n))
    sums = np.zeros((terms + 1, len(names)))  # pi0 P^k f for each output f
    v = p0.copy()
    for k in range(terms + 1):
        if k:
            v = PT @ v
        sums[k] = v @ F
        for j in np.flatnonzero((lows <= k) & (highs >= k)):
            pi[j] += windows[j][2][k - lows[j]] * v
    np.clip(pi, 0.0, 1.0, out=pi)

    values: dict[str, np.ndarray] = {}
    cumulative: dict[str, np.ndarray] = {}
    for o, name in enumerate(names):
        at = pi @ F[:, o]
        if chain.outputs[name].kind == "probability":
            at = np.clip(at, 0.0, 1.0)
        values[name] = at
        if rate > 0:
            cumulative[name] = np.array([
                poisson.sf(np.arange(highs[j] + 1), rate * s) @ sums[:highs[j] + 1, o] / rate
                for j, s in enumerate(times)])
        else:
            cumulative[name] = times * sums[0, o]
    left = np.array([s * poisson.sf(highs[j], rate * s) if rate > 0 else 0.0
                     for j, s in enumerate(times)])

    def pick(array: np.ndarray) -> Any:
        return float(array[0]) if scalar else array

    method = (f"uniformisation (Lambda = {rate:.6g}, Poisson window [{int(lows.min())}, "
              f"{terms}] from scipy.stats.poisson, outside mass <= eps = {eps:.3g})")
    return TransientLaw(
        t=pick(times), pi=pi[0] if scalar else pi, states=space.states,
        variables=tuple(v.name for v in chain.variables),
        values={k: pick(a) for k, a in values.items()},
        cumulative={k: pick(a) for k, a in cumulative.items()},
        error_bound=pick(outside),
        value_error={k: pick(outside * fmax[o]) for o, k in enumerate(names)},
        cumulative_error={k: pick(left * fmax[o]) for o, k in enumerate(names)},
        terms=terms, uniformisation_rate=rate, method=method,
        seconds=time.perf_counter() - started)

