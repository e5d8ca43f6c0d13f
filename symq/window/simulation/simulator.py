r"""Exact event-sampling Monte Carlo of an adaptive window protocol, one loss cycle at a time.

The model (Altman, Avrachenkov, Kherani, Prabhu, IEEE INFOCOM 2005, Section II) is a
piecewise-deterministic Markov process: the window grows at :math:`dW/dt = a(W) > 0`, losses form
a Poisson process of intensity :math:`\lambda(W) > 0`, and a loss takes :math:`W` to
:math:`\max(d(W), w_{\min})`; growth stops at an optional cap :math:`w_{\max}`.  Time is measured
in round-trip times.

Algorithm (``derivations/awp.md``, sections "Power-law class" and "General profiles")
-------------------------------------------------------------------------------------
Let :math:`\Lambda(w) = \int^w \lambda(u)/a(u)\,du` (cumulative hazard in window units),
:math:`H(w) = \int^w du/a(u)` (time), :math:`G_r(w) = \int^w u^r/a(u)\,du` (area of :math:`W^r`).
From the post-loss window :math:`y` the next pre-loss window is, with :math:`E \sim Exp(1)`,

.. math:: W_{pre} = \Lambda^{-1}(\Lambda(y) + E),

the cycle lasts :math:`T = H(W_{pre}) - H(y)` and :math:`\int_{cycle} W^r dt = G_r(W_{pre}) -
G_r(y)`.  If :math:`\Lambda(y) + E > \Lambda(w_{\max})` the window reaches the cap after
:math:`H(w_{\max}) - H(y)` and then stays there for an :math:`Exp(\lambda(w_{\max}))` time.  No
time discretisation is involved: every cycle is sampled exactly (up to the tables, below).

Two paths:

* **power law** (``power_law=(alpha, k, gamma, l, beta)``): :math:`a = \alpha w^k`,
  :math:`\lambda = \gamma w^l`, :math:`d = \beta w`, :math:`m = l - k + 1`.  Then
  :math:`W_{pre}^m = y^m + \alpha m E/\gamma` (:math:`m \ne 0`) or
  :math:`W_{pre} = y\,e^{\alpha E/\gamma}` (:math:`m = 0`), and the integrals are closed forms;
  e.g. NewReno (:math:`m = 2`) gives :math:`W_{pre} = \sqrt{y^2 + 2\alpha E/\gamma}`.  Floor and cap
  are supported.
* **tabulated** (general vectorised callables ``a, lam, d``): :math:`\Lambda, H, G_1, G_2` are
  tabulated on a logarithmic grid (``points_per_decade`` nodes per decade, default 200) with
  10-point Gauss-Legendre quadrature in :math:`\ln w` per cell (the 5-point rule gives the
  reported error estimate ``quadrature_error``).  Inside a cell the integrands are modelled as a
  power of :math:`w` through the two end values, so that values and the inverse of
  :math:`\Lambda` are closed forms (binary search for the cell); this interpolation is *exact* for
  the power-law class and has an :math:`O(h^3)` error per cell otherwise.  The decrease map is
  interpolated log-log linearly (exact for :math:`d = \beta w`).

Escape (instability)
--------------------
For unstable protocols the window leaves every bounded region: if :math:`\Lambda(\infty) <
\infty` (e.g. :math:`m < 0`, ``derivations/awp.md``, section "Stability"), with positive
probability no further loss occurs; with MIMD and a constant loss rate below
:math:`a/\ln(1/\beta)` the window grows geometrically.  The simulator stops when a pre-loss
window would exceed the upper end of the grid
(``grid[1]``, default :math:`10^{15}`) -- for the tabulated path: when :math:`\Lambda(y) + E`
exceeds the last table value and there is no cap -- and when a post-loss window falls below the
lower end ``grid[0]`` (default :math:`10^{-12}`; only possible without a floor, e.g. MIMD with a
constant loss rate above :math:`a/\ln(1/\beta)` and no floor, where :math:`W \to 0`).  It then
returns ``escaped=True`` with ``escape_reason`` and no estimates (``mean`` etc. are ``None``).

Runs and statistics: the run length, warm-up and batches are planned by
:class:`symq.core.simrun.RunPlan` (the batch-means rule of every symq simulator); the kernels are
seeded from ``rng`` (:func:`~symq.core.simrun.kernel_seed`, :func:`~symq.core.simrun.seed_numba`)
and run in chunks with a progress bar on request (:func:`~symq.core.simrun.run_chunked`).  Time
averages are renewal-reward ratios ``sum(area)/sum(time)`` over loss cycles (ratio batch means,
Law 2015, Section 9.5.3); the Palm (pre-loss) mean uses the same batches.  The cycles after the
plan's warm-up are summed in a few thousand slices of
equal cycle counts (the remainder joins the warm-up); :func:`symq.core.simoutput.analyse_ratio`
drops the rest of the transient by MSER and merges the slices into ``n_batches`` batches whose
ratios pass a lag-1 test, with a ``doubt`` on the interval when the run is too short for either
(Law 2015, Sections 9.5.1 and 9.5.3).

References
----------
E. Altman, K. E. Avrachenkov, A. A. Kherani, B. J. Prabhu, "Performance analysis and stochastic
stability of congestion control protocols", IEEE INFOCOM 2005.

V. Dumas, F. Guillemin, Ph. Robert, "A Markovian analysis of additive-increase
multiplicative-decrease algorithms", Adv. Appl. Prob. 34(1), 2002 (the sampling recursion
:math:`W_{pre}^m = (\beta W_{pre})^m + \alpha m E/\gamma`).

Examples
--------
NewReno with per-packet loss probability ``p``: :math:`E[W^2] = 2/p` exactly (mean drift balance).

>>> p = 1e-3
>>> est = simulate_window(None, None, None, 200_000, power_law=(1.0, 0, p, 1, 0.5), rng=1)
>>> est.mean_square_window.contains(2 / p) or est.mean_square_window.distance(2 / p) < 2
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value as _integer
from symq.core.parameters import real_value
from symq.core.randomness import RngLike
from symq.core.resources import require_memory
from symq.core.result import Exactness, ResultBase
from symq.core.simoutput import FINEST_BATCHES, analyse_ratio
from symq.core.simrun import (
    SIM_WORK_LIMIT,
    RunPlan,
    kernel_seed,
    run_chunked,
    seed_numba,
)
from symq.core.simstats import ConfidenceInterval

from ..protocol import PowerLawParameters
from .kernels import (
    _ESCAPED_UP,
    _OFF_GRID,
    _OK,
    _power_kernel,
    _table_kernel,
)
from .tables import _GL_ORDER, _build_tables, _empty_tables, _evaluate

__all__ = ["WindowEstimate", "simulate_window"]

#: Default logarithmic grid (window range) of the tables and of the escape test.
DEFAULT_GRID = (1e-12, 1e15)
#: Default number of grid nodes per decade of the tables.
DEFAULT_POINTS_PER_DECADE = 200

#: Kernel steps counted per loss cycle (a draw, an inversion, the integrals): at about 1e7
#: cycles a second, :data:`~symq.core.simrun.SIM_WORK_LIMIT` steps take about a minute.
_STEPS_PER_LOSS = 6
#: Longest run accepted (loss cycles), the work limit of every simulator
#: (:data:`~symq.core.simrun.SIM_WORK_LIMIT`): about a minute; a longer request is refused
#: before anything runs.
MAX_LOSSES = int(SIM_WORK_LIMIT // _STEPS_PER_LOSS)
#: Most batches accepted (the batch-means interval needs a few dozen; more only costs memory).
MAX_BATCHES = 10**6


def _slices(cycles: int, n_batches: int) -> int:
    """Slices of the run's sums: twice the finest level the output analysis tests (so that
    the MSER warm-up leaves it whole), a multiple of ``n_batches``, at least 8 cycles each."""
    most = max(cycles // 8, n_batches)
    per = max(2 * FINEST_BATCHES // n_batches, 1)
    return max(min(per * n_batches, most - most % n_batches), n_batches)


def _ratio(num: np.ndarray, den: np.ndarray, n_batches: int, level: float,
           run_length: int) -> ConfidenceInterval:
    """The interval of ``sum(num)/sum(den)`` from the run's slices: MSER warm-up and batches
    from the correlation (:func:`~symq.core.simoutput.analyse_ratio`; a ratio that is the same
    in every slice, 0 at a cap never reached, comes out exact, of half-width 0)."""
    return analyse_ratio(num, den, n_batches, level, run_length=run_length, unit="losses")


def _power_law(value: Any) -> tuple[float, float, float, float, float]:
    domain = "a tuple (alpha, k, gamma, l, beta) with alpha, gamma > 0, 0 < beta < 1"
    if all(hasattr(value, n) for n in ("alpha", "k", "gamma", "l", "beta")):
        items = [value.alpha, value.k, value.gamma, value.l, value.beta]
    else:
        try:
            items = list(value)
        except TypeError:
            raise InvalidParameter("power_law", value, domain) from None
    if len(items) != 5:
        raise InvalidParameter("power_law", value, domain, f"got {len(items)} entries")
    names = ("power_law.alpha", "power_law.k", "power_law.gamma", "power_law.l", "power_law.beta")
    out = []
    for nm, v in zip(names, items):
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise InvalidParameter(nm, v, "a finite real number") from None
        if not math.isfinite(v):
            raise InvalidParameter(nm, v, "a finite real number")
        out.append(v)
    alpha, k, gamma, l, beta = out
    if alpha <= 0:
        raise InvalidParameter("power_law.alpha", alpha, "a real number > 0")
    if gamma <= 0:
        raise InvalidParameter("power_law.gamma", gamma, "a real number > 0")
    if not 0 < beta < 1:
        raise InvalidParameter("power_law.beta", beta, "a real number in (0, 1)")
    return alpha, k, gamma, l, beta


def _times(ci: ConfidenceInterval | None, log_factor: float, what: str, gamma: float
           ) -> ConfidenceInterval | None:
    """``ci`` times ``exp(log_factor)``; refused (naming ``power_law.gamma``) on overflow."""
    if ci is None:
        return ci
    with np.errstate(over="ignore"):
        factor = math.exp(log_factor) if log_factor < 709.0 else math.inf
        mean, half = ci.mean * factor, ci.half_width * factor
    if not (math.isfinite(mean) and math.isfinite(half)):
        power = (math.log(abs(ci.mean) + ci.half_width) + log_factor) / math.log(10.0)
        raise InvalidParameter("power_law.gamma", gamma, "a loss rate for which the estimates "
                               "stay below 1e308", f"{what} would be about 1e{power:.0f}")
    return replace(ci, mean=mean, half_width=half)


def _rescaled(power_law: Any, n_losses: Any, *, w_min: Any, w_max: Any, w0: Any,
              **options: Any) -> WindowEstimate | None:
    r"""A power-law protocol simulated in units of its natural window, scaled back.

    With :math:`W = w^* V`, :math:`w^* = (\alpha m/\gamma)^{1/m}`, the window :math:`V`
    follows the same class with :math:`\alpha' = \alpha w^{*(k-1)}`, :math:`\gamma' =
    \gamma w^{*l}` (so :math:`\alpha' m/\gamma' = 1`), the same time and the same loss
    epochs: :math:`E[W] = w^* E[V]`, :math:`E[W^2] = w^{*2} E[V^2]`, the loss rate is
    unchanged.  The escape test then measures the window against its own scale, so a stable
    protocol at a tiny loss rate (NewReno at ``p = 1e-30``: :math:`w^* \approx 10^{15}`) is
    not mistaken for an unstable one.  ``None`` when no rescaling is needed or possible.
    """
    alpha, k, gamma, l_exp, beta = _power_law(power_law)
    m = l_exp - k + 1.0
    if not m > 0:
        return None
    log_w = (math.log(alpha) + math.log(m) - math.log(gamma)) / m
    if abs(log_w) < math.log(10.0):  # within a decade of 1: the plain run
        return None
    if log_w > 700.0:
        raise InvalidParameter(
            "power_law.gamma", gamma, "a loss rate whose windows stay below 1e300",
            f"the natural window (alpha m/gamma)^(1/m) is about 1e{log_w / math.log(10):.0f}")
    scale = math.exp(log_w)
    alpha_v = math.exp(math.log(alpha) + (k - 1.0) * log_w)
    gamma_v = math.exp(math.log(gamma) + l_exp * log_w)
    w_min_v = float(w_min) / scale if isinstance(w_min, (int, float)) else w_min
    w_max_v = float(w_max) / scale if isinstance(w_max, (int, float)) else w_max
    w0_v = float(w0) / scale if isinstance(w0, (int, float)) else w0
    est = simulate_window(None, None, None, n_losses, power_law=(alpha_v, k, gamma_v, l_exp, beta),
                          w_min=w_min_v, w_max=w_max_v, w0=w0_v, grid=DEFAULT_GRID, **options)
    if est.escaped:
        reason = (est.escape_reason or "") + (f" (windows in units of the natural window "
                                              f"{scale:.3g})")
        return replace(est, escape_reason=reason)
    sample = None if est.pre_loss_sample is None else est.pre_loss_sample * scale
    return replace(est, mean_window=_times(est.mean_window, log_w, "E[W]", gamma),
                   mean_square_window=_times(est.mean_square_window, 2 * log_w, "E[W^2]", gamma),
                   pre_loss_mean=_times(est.pre_loss_mean, log_w, "the pre-loss mean", gamma),
                   pre_loss_sample=sample)


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowEstimate(ResultBase):
    """Estimates from one run of :func:`simulate_window` (a :class:`~symq.core.result.ResultBase`).

    All interval estimates are ratio batch means over loss cycles after the warm-up (MSER)
    (:class:`~symq.core.simstats.ConfidenceInterval`); they are ``None`` when ``escaped`` is true.

    Attributes
    ----------
    mean_window : ConfidenceInterval or None
        Time-average window :math:`E[W]` (throughput in packets per RTT).
    mean_square_window : ConfidenceInterval or None
        Time average :math:`E[W^2]`.
    loss_rate : ConfidenceInterval or None
        Losses per unit time (per RTT); equals :math:`E[\\lambda(W)]` and :math:`1/E_0[T]`.
    pre_loss_mean : ConfidenceInterval or None
        Palm mean :math:`E_0[W_{pre}]` of the window just before a loss.
    pre_loss_sample : numpy.ndarray or None
        The last ``keep_pre_loss`` pre-loss windows after the warm-up, in simulation order
        (correlated; for distribution comparisons; not part of ``to_dict()``).
    time_fraction_at_cap : ConfidenceInterval or None
        Fraction of time spent at ``w_max`` (0 without a cap).
    escaped : bool
        The window left the grid (grew beyond ``grid[1]`` or, without a cap, no further loss was
        sampled; or collapsed below ``grid[0]``): the protocol is unstable.
    escape_reason : str or None
        Human-readable explanation when ``escaped``.
    n_losses : int
        Number of simulated loss cycles (including the warm-up; fewer if escaped).
    n_batches : int
        Batches of the batch-means intervals.
    events_per_second : float
        Loss cycles per second of wall-clock kernel time (tables and compilation excluded).
    time_averages : dict of str to ConfidenceInterval
        Time averages :math:`E[g(W)]` of the requested observables.
    method : str
        ``"power_law"`` (exact closed-form cycles) or ``"tabulated"``.
    quadrature_error : float or None
        Tabulated path: largest relative difference of the cumulative tables between the 10- and
        5-point Gauss-Legendre rules (an upper estimate of the table error).
    exactness : Exactness
        ``simulated``.
    """

    summary: ClassVar[tuple[str, ...]] = ("mean_window", "loss_rate", "n_losses", "escaped")

    mean_window: ConfidenceInterval | None
    mean_square_window: ConfidenceInterval | None
    loss_rate: ConfidenceInterval | None
    pre_loss_mean: ConfidenceInterval | None
    pre_loss_sample: np.ndarray | None = field(repr=False)
    time_fraction_at_cap: ConfidenceInterval | None
    escaped: bool
    escape_reason: str | None
    n_losses: int
    n_batches: int
    events_per_second: float
    time_averages: dict[str, ConfidenceInterval] = field(default_factory=dict)
    method: str = "tabulated"
    quadrature_error: float | None = None
    exactness: Exactness = Exactness.SIMULATED


def simulate_window(
    a: Callable[[np.ndarray], np.ndarray] | None,
    lam: Callable[[np.ndarray], np.ndarray] | None,
    d: Callable[[np.ndarray], np.ndarray] | None,
    n_losses: int = 10**6,
    *,
    w_min: float = 0.0,
    w_max: float = math.inf,
    w0: float | None = None,
    warmup: float = 0.1,
    rng: RngLike = None,
    level: float = 0.95,
    n_batches: int = 30,
    progress: bool = False,
    power_law: tuple[float, float, float, float, float] | None = None,
    time_averages: Mapping[str, Callable[[np.ndarray], np.ndarray]] | None = None,
    keep_pre_loss: int = 100_000,
    grid: tuple[float, float] | None = None,
    points_per_decade: int = DEFAULT_POINTS_PER_DECADE,
) -> WindowEstimate:
    """Simulate an adaptive window protocol exactly, loss cycle by loss cycle.

    Piecewise-deterministic model of Altman, Avrachenkov, Kherani, Prabhu (INFOCOM 2005):
    ``dW/dt = a(W)`` between losses, Poisson losses of rate ``lam(W)``, ``W -> max(d(W), w_min)``
    at a loss, growth stopped at ``w_max``.  See the module docstring for the algorithm.

    Parameters
    ----------
    a, lam, d : callable or None
        Vectorised numpy callables of the window: increase rate per RTT (> 0), loss intensity per
        RTT (> 0), decrease map (``0 <= d(w) < w``, nondecreasing).  May be ``None`` when
        ``power_law`` is given.
    n_losses : int, default 10**6
        Number of loss cycles to simulate (warm-up included); at least
        :data:`~symq.core.simrun.MIN_JOBS_PER_BATCH` of them per batch after the warm-up
        (:class:`symq.core.simrun.RunPlan`).
    w_min : float, default 0
        Floor applied after a loss, ``>= 0``.
    w_max : float, default inf
        Cap of the window, ``> w_min``; growth stops there until the next loss, whose rate is
        ``lam(w_max)``.
    w0 : float, optional
        Initial post-loss window; default ``(alpha m/gamma)^(1/m)`` on the power-law path with
        ``m > 0``, else 1, moved into ``[w_min, w_max]``.
    warmup : float, default 0.1
        Fraction of the cycles discarded, in ``[0, 1)``.
    rng : int, SeedSequence, numpy.random.Generator or None
        Randomness; the same seed gives the same result.
    level : float, default 0.95
        Confidence level.
    n_batches : int, default 30
        Number of batches of the ratio batch-means intervals, ``>= 2``.
    progress : bool, default False
        Show a tqdm bar (the run is split into chunks; the result is the same).
    power_law : tuple (alpha, k, gamma, l, beta), optional
        Select the exact path ``a = alpha w^k``, ``lam = gamma w^l``, ``d = beta w``; ``a``,
        ``lam``, ``d`` are then ignored (pass ``None``).  An object with these attributes (e.g.
        ``WindowProtocol.power_law()``) is accepted too.
    time_averages : mapping of str to callable, optional
        Observables ``g``; the result holds the time averages ``E[g(W)]`` (tabulated
        ``int g/a dw``, also on the power-law path), e.g. ``{"drift": a}``.
    keep_pre_loss : int, default 100000
        Number of last pre-loss windows returned in ``pre_loss_sample`` (0 for none).
    grid : (float, float), optional
        Window range ``(lo, hi)`` of the tables and of the escape test; default
        ``(1e-12, 1e15)``, with ``lo`` replaced by ``w_min`` if ``w_min > 0`` and ``hi`` by
        ``w_max`` if finite.  The callables must be finite on it.
    points_per_decade : int, default 200
        Resolution of the logarithmic grid of the tables, ``>= 10``.

    Returns
    -------
    WindowEstimate

    Raises
    ------
    InvalidParameter
        Naming the parameter: bad numbers, callables not positive/finite on the grid, a decrease
        map violating ``0 <= d(w) < w``, a run too short for the batches, ``n_losses`` above
        :data:`MAX_LOSSES` or ``batches`` above :data:`MAX_BATCHES`.
    ResourceLimit
        Tables (``points_per_decade``) or kept pre-loss windows (``keep_pre_loss``) that do not
        fit in memory (checked before allocating).

    Examples
    --------
    AIMD with a constant loss rate (mean drift balance):
    :math:`E[W] = \\alpha/(\\lambda(1-\\beta))`.

    >>> import numpy as np
    >>> est = simulate_window(lambda w: np.ones_like(w), lambda w: 0.1 + 0 * w,
    ...                       lambda w: 0.5 * w, 100_000, rng=2)
    >>> est.mean_window.distance(1 / (0.1 * 0.5)) < 3
    True
    """
    if power_law is not None and time_averages is None and grid is None:
        scaled = _rescaled(power_law, n_losses, w_min=w_min, w_max=w_max, w0=w0, warmup=warmup,
                           rng=rng, level=level, n_batches=n_batches, progress=progress,
                           keep_pre_loss=keep_pre_loss, points_per_decade=points_per_decade)
        if scaled is not None:
            return scaled
    n_losses = _integer("n_losses", n_losses, 1)
    if n_losses > MAX_LOSSES:
        raise InvalidParameter("n_losses", n_losses, f"an integer <= {MAX_LOSSES}",
                               f"about {_STEPS_PER_LOSS} steps a loss cycle, over the limit of "
                               f"{SIM_WORK_LIMIT:.0e} steps of one simulation (about a minute); "
                               "use several seeded runs")
    n_batches = _integer("n_batches", n_batches, 2)
    if n_batches > MAX_BATCHES:
        raise InvalidParameter("n_batches", n_batches, f"an integer in [2, {MAX_BATCHES:.0e}]",
                               "batch means need a few dozen batches")
    plan = RunPlan.make(n_losses, n_batches, warmup, level, jobs_name="n_losses", unit="losses")
    keep_pre_loss = _integer("keep_pre_loss", keep_pre_loss, 0)
    points_per_decade = _integer("points_per_decade", points_per_decade, 10)
    level, batches = plan.level, plan.n_batches
    w_min = real_value("w_min", w_min, "a finite real number >= 0", lambda v: v >= 0)
    w_max = real_value("w_max", w_max, f"a real number > w_min={w_min!r} (inf for no cap)",
                       lambda v: v > w_min and v > 0, allow_inf=True)
    has_cap = math.isfinite(w_max)
    if grid is None:
        lo, hi = DEFAULT_GRID
    else:
        try:
            lo, hi = (float(v) for v in grid)
        except (TypeError, ValueError):
            raise InvalidParameter("grid", grid, "a pair (lo, hi) with 0 < lo < hi < inf") from None
        if not (0 < lo < hi < math.inf):
            raise InvalidParameter("grid", grid, "a pair (lo, hi) with 0 < lo < hi < inf")
    if w_min > 0:
        lo = w_min
    if has_cap:
        hi = w_max
    if not lo < hi:
        if grid is None and has_cap and w_max <= DEFAULT_GRID[0]:
            raise InvalidParameter("w_max", w_max, f"> {DEFAULT_GRID[0]:g} (the smallest window "
                                   "the simulator resolves)")
        if grid is None:
            raise InvalidParameter("w_min", w_min, f"< {hi:g} (the largest window the "
                                   "simulator resolves)")
        raise InvalidParameter("grid", grid,
                               f"a range containing [w_min, w_max] = [{w_min}, {w_max}]")
    observables: list[tuple[str, Callable]] = []
    if time_averages is not None:
        if not isinstance(time_averages, Mapping):
            raise InvalidParameter("time_averages", time_averages,
                                   "a mapping from names to vectorised callables")
        for key, g in time_averages.items():
            if not callable(g):
                raise InvalidParameter(f"time_averages[{key!r}]", g, "a vectorised callable")
            observables.append((str(key), g))

    if power_law is not None:
        alpha, k, gamma, l_exp, beta = _power_law(power_law)
        m = l_exp - k + 1.0
        # the declared profiles of the power-law class, compiled (tables of observables, cap)
        a_f, lam_f, d_f = PowerLawParameters(alpha, k, gamma, l_exp, beta).numeric()
        method = "power_law"
        default_w0 = (alpha * m / gamma) ** (1.0 / m) if m > 0 else 1.0
    else:
        for name, f in (("a", a), ("lam", lam), ("d", d)):
            if not callable(f):
                raise InvalidParameter(name, f, "a vectorised callable of the window "
                                       "(or pass power_law=(alpha, k, gamma, l, beta))")
        a_f, lam_f, d_f = a, lam, d
        method = "tabulated"
        default_w0 = 1.0
    if w0 is None:
        w0 = min(max(default_w0, w_min, lo), w_max, hi)
    else:
        w0 = real_value("w0", w0, "a real number in [max(w_min, grid lo), min(w_max, grid hi)] "
                        f"= [{lo:g}, {hi:g}]", lambda v: lo <= v <= hi)

    seed = kernel_seed(rng)

    J = 4 + len(observables)
    if method == "tabulated" or observables:
        # tables: J rows of cumulative integrals, cells, exponents, denominators over n nodes,
        # and the Gauss-Legendre evaluations (n x _GL_ORDER per row) while they are built
        n_nodes = max(math.ceil((math.log10(hi) - math.log10(lo)) * points_per_decade) + 1, 3)
        require_memory("points_per_decade", points_per_decade,
                       8.0 * n_nodes * J * (6 + 2 * _GL_ORDER),
                       what=f"{n_nodes:.3g} table nodes for {J} integrands",
                       limit=f"smaller (the default is {DEFAULT_POINTS_PER_DECADE:d})")
        tables = _build_tables(a_f, lam_f, d_f, [g for _, g in observables], lo, hi,
                               points_per_decade, w_min)
    else:
        tables = None
    lam_cap = (float(_evaluate("lam", lam_f, np.array([w_max]), positive=True)[0]) if has_cap
               else 1.0)
    gcap = np.zeros(J)
    if has_cap:
        gcap[1:4] = [1.0, w_max, w_max * w_max]
        for r, (_, g) in enumerate(observables):
            gcap[4 + r] = float(_evaluate(f"time_averages[{r}]", g, np.array([w_max]),
                                          positive=False)[0])

    # equal slices after the plan's warm-up (the remainder is warm-up too), merged into
    # batches by the output analysis
    slices = _slices(n_losses - plan.n_warm, batches)
    per_batch = (n_losses - plan.n_warm) // slices
    n_warm = n_losses - per_batch * slices
    n_ring = min(keep_pre_loss, per_batch * slices)
    require_memory("keep_pre_loss", keep_pre_loss, 8.0 * n_ring,
                   what=f"{n_ring:.3g} kept pre-loss windows", limit="smaller")
    acc = np.zeros((slices, J + 1))
    ring = np.zeros(n_ring)
    if ring.size == 0:
        ring_buf = np.zeros(1)
    else:
        ring_buf = ring
    y_state = np.array([float(w0)])
    counters = np.zeros(3, dtype=np.int64)
    seed_numba(seed)

    if method == "power_law":
        t = tables if tables is not None else _empty_tables()
        cap_val = w_max if has_cap else math.inf

        def call(stop: int) -> int:
            return _power_kernel(alpha, k, gamma, l_exp, beta, w_min, has_cap, cap_val, lam_cap,
                                 lo, hi, n_warm, per_batch, stop, y_state, counters, acc, ring_buf,
                                 t.lw, t.lw0, t.h, t.cum, t.cell, t.expo, t.den, gcap)
    else:
        t = tables

        def call(stop: int) -> int:
            return _table_kernel(t.lw, t.lw0, t.h, t.cum, t.cell, t.expo, t.den, t.ld, w_min,
                                 has_cap, w_max, lam_cap, gcap, n_warm, per_batch, stop, y_state,
                                 counters, acc, ring_buf)

    status = _OK

    def step(stop: int) -> tuple[int, bool]:
        nonlocal status
        status = call(stop)
        return int(counters[0]), status != _OK

    start = time.perf_counter()
    run_chunked(step, n_losses, progress=bool(progress), desc=f"window ({method})", unit="loss")
    elapsed = time.perf_counter() - start
    done = int(counters[0])
    eps = done / elapsed if elapsed > 0 else math.inf
    quad = tables.error if tables is not None else None

    if status == _OFF_GRID:
        raise InvalidParameter("grid", (lo, hi), "a window range containing every simulated window",
                               "a window left the grid of the time_averages tables; widen it")
    if status != _OK:
        if status == _ESCAPED_UP:
            reason = (f"after {done} losses the window escaped: no further loss before the window "
                      f"exceeded {hi:g}: an unstable protocol (Lambda(inf) < inf or geometric "
                      f"growth), or stationary windows beyond {hi:g}")
        else:
            reason = (f"after {done} losses the window collapsed below {lo:g} (W -> 0 without a "
                      f"floor); set w_min > 0")
        return WindowEstimate(None, None, None, None, None, None, True, reason, done, batches,
                              eps, {}, method, quad)

    time_ = acc[:, 0]
    if np.any(time_ <= 0):
        raise InvalidParameter("n_losses", n_losses, "large enough for batches of positive length")
    counts = np.full(slices, float(per_batch))

    def ratio(num: np.ndarray, den: np.ndarray) -> ConfidenceInterval:
        return _ratio(num, den, batches, level, n_losses)

    mean = ratio(acc[:, 1], time_)
    second = ratio(acc[:, 2], time_)
    rate = ratio(counts, time_)
    pre = ratio(acc[:, J], counts)
    cap = ratio(acc[:, J - 1], time_)
    extra = {name: ratio(acc[:, 3 + r], time_) for r, (name, _) in enumerate(observables)}
    sample = None
    if ring.size:
        p = int(counters[1])
        sample = np.concatenate([ring[p:], ring[:p]])
    return WindowEstimate(mean, second, rate, pre, sample, cap, False, None, done, batches, eps,
                          extra, method, quad)
