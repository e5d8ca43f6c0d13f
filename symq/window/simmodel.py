"""The ``window-sim`` model and the declared kind ``window-sim`` (listed in
:mod:`symq.window.registration`): Monte Carlo of a window protocol as a reference a claim can
name (``window-sim:EW``).

``window-sim`` takes the protocol as the ``awp`` model does (a preset with ``p``, or the
formulas ``a``, ``loss``, ``after_loss`` in ``w``; the same parameter declarations), plus the
run length ``n_losses`` (loss cycles, warm-up included), ``n_batches`` and ``rng``, and runs the
exact event-sampling simulator (:func:`~symq.window.simulation.simulate_protocol`: one loss
cycle at a time, no time discretisation; Altman, Avrachenkov, Kherani, Prabhu, IEEE INFOCOM
2005, Section II).  It returns a :class:`ProtocolSimulation`, whose values are
:class:`~symq.core.simstats.ConfidenceInterval` estimates under the ``awp`` model's names: ``EW``
(the mean window), ``EW2``, ``throughput``, ``loss_rate``, and ``pre_loss_mean``; an unstable
protocol whose window leaves the simulator's range gives ``escaped: true`` with the reason and no
estimates.

The declared kind ``window-sim`` simulates a protocol declared as the kind ``window`` is
(:mod:`symq.window.declared`), so a claims file can check its own protocol's closed form
against a simulation.

Examples
--------
>>> r = solve_window_sim(protocol="newreno", p=0.01, n_losses=50_000, rng=1)
>>> abs(r.EW.mean * 0.1 - 1.3098) < 4 * r.EW.half_width * 0.1   # E[W] sqrt(p)
True
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from symq.core.errors import InvalidParameter
from symq.core.parameters import IntegerAtLeast, Parameter
from symq.core.randomness import RngLike
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import Exactness, Result, ResultBase
from symq.core.simstats import ConfidenceInterval

from .declared import KEYS, DeclaredWindow, parse_window
from .model import PROTOCOL_PARAMETERS, check_range, protocol_from_options
from .protocol import WindowProtocol
from .simulation import WindowEstimate, simulate_protocol
from .symbolic import stability

__all__ = ["WINDOW_SIM", "ProtocolSimulation", "solve_window_sim", "declare_window_sim",
           "SIM_OUTPUTS", "DEFAULT_N_LOSSES", "WINDOW_SIM_KIND"]

#: Default run length (the simulator's): 1e6 loss cycles take under a second once compiled.
DEFAULT_N_LOSSES = 1_000_000
#: Default number of batches of the batch-means intervals.
DEFAULT_N_BATCHES = 30

#: The result keys of a run whose window stayed in range.
SIM_OUTPUTS = ("EW", "EW2", "throughput", "loss_rate", "pre_loss_mean", "escaped",
               "escape_reason", "n_losses", "n_batches")

#: The run parameters of both simulation models.
RUN_PARAMETERS = (
    Parameter("n_losses", IntegerAtLeast(1), required=False, default=DEFAULT_N_LOSSES,
              description="loss cycles simulated, warm-up (10%) included"),
    Parameter("n_batches", IntegerAtLeast(2), required=False, default=DEFAULT_N_BATCHES,
              description="batches of the batch-means confidence intervals"),
)


@dataclass(frozen=True)
class ProtocolSimulation(ResultBase):
    """Monte Carlo estimates of a window protocol under the ``awp`` model's names (the result of
    the ``window-sim`` model and of a ``window-sim`` model a claims file declares).

    Attributes
    ----------
    escaped : bool
        The window left the simulator's range (an unstable protocol): no estimates then.
    n_losses : int
        Loss cycles simulated, warm-up included (fewer if escaped).
    n_batches : int
        Batches of the batch-means intervals.
    escape_reason : str or None
        Why the run stopped, when ``escaped``.
    EW, EW2 : ConfidenceInterval or None
        The time-average window ``E[W]`` and ``E[W^2]`` (``None`` when escaped, as the fields
        below).
    throughput : ConfidenceInterval or None
        ``E[W]/rtt``.
    loss_rate : ConfidenceInterval or None
        Losses per round-trip time.
    pre_loss_mean : ConfidenceInterval or None
        Palm mean of the window just before a loss.
    method : str
        ``"simulation (exact loss cycles of the power-law class)"`` or ``"simulation (exact
        loss cycles on tabulated integrals)"``.
    exactness : Exactness
        ``simulated``.
    seconds : float
        Wall time of the run.
    protocol : WindowProtocol
        The protocol simulated (its name, profiles and bounds; not among the model's values).
    estimate : WindowEstimate
        The simulator's full estimate (not among the values).
    """

    summary: ClassVar[tuple[str, ...]] = ("EW", "throughput", "loss_rate", "escaped")

    escaped: bool
    n_losses: int
    n_batches: int
    method: str
    escape_reason: str | None = None
    EW: ConfidenceInterval | None = None
    EW2: ConfidenceInterval | None = None
    throughput: ConfidenceInterval | None = None
    loss_rate: ConfidenceInterval | None = None
    pre_loss_mean: ConfidenceInterval | None = None
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0
    protocol: WindowProtocol | None = field(default=None, repr=False)
    estimate: WindowEstimate | None = field(default=None, repr=False)


def _estimates(tcp: WindowProtocol, est: WindowEstimate, start: float) -> ProtocolSimulation:
    """The simulation's result under the ``awp`` model's names."""
    how = ("simulation (exact loss cycles of the power-law class)" if est.method == "power_law"
           else "simulation (exact loss cycles on tabulated integrals)")
    common: dict[str, Any] = {"escaped": est.escaped, "n_losses": est.n_losses,
                              "n_batches": est.n_batches, "method": how, "protocol": tcp,
                              "estimate": est}
    if est.escaped or est.mean_window is None:
        return ProtocolSimulation(**common, escape_reason=est.escape_reason,
                                  seconds=time.perf_counter() - start)
    scaled = dataclasses.replace(est.mean_window, mean=est.mean_window.mean / tcp.rtt,
                                 half_width=est.mean_window.half_width / tcp.rtt)
    return ProtocolSimulation(**common, EW=est.mean_window, EW2=est.mean_square_window,
                              throughput=scaled, loss_rate=est.loss_rate,
                              pre_loss_mean=est.pre_loss_mean,
                              seconds=time.perf_counter() - start)


def _scalars(result: Result) -> dict[str, float]:
    """Flat numbers for sweeps: each estimate's mean and half-width."""
    out: dict[str, float] = {"escaped": float(result.values["escaped"])}
    for key, value in result.values.items():
        if isinstance(value, ConfidenceInterval):
            out[key] = value.mean
            out[f"{key}_half_width"] = value.half_width
    return out


def solve_window_sim(protocol: str | None = None, p: float | None = None, a: Any = None,
                     loss: Any = None, after_loss: Any = None, S: float | None = None,
                     loss_model: str | None = None, w_min: float | None = None,
                     w_max: float | None = None, rtt: float = 1.0,
                     n_losses: int = DEFAULT_N_LOSSES, n_batches: int = DEFAULT_N_BATCHES,
                     rng: RngLike = None, progress: bool = False) -> ProtocolSimulation:
    """Simulate one protocol (options as for :func:`~symq.window.model.solve_awp`; ``progress``
    shows a tqdm bar on stderr).

    Raises
    ------
    InvalidParameter
        A bad protocol option (as :func:`~symq.window.model.protocol_from_options`), or a run
        too short for ``n_batches`` batches (at least 100 loss cycles each after the warm-up).
    """
    start = time.perf_counter()
    tcp = protocol_from_options(protocol, p, a, loss, after_loss, S, loss_model, w_min, w_max,
                                rtt)
    name, value = (("S", S) if protocol == "highspeed-family" else ("p", p)) if protocol \
        else ("loss", loss)
    est = _simulate(tcp, n_losses, name, value, n_batches=n_batches, rng=rng, progress=progress)
    result = _estimates(tcp, est, start)
    check_range(result.outputs(), protocol, p, loss, S)
    return result


def _simulate(tcp: WindowProtocol, n_losses: int, name: str, value: Any,
              **options: Any) -> WindowEstimate:
    """:func:`simulate_protocol`, its range errors and ambiguous escapes told in the user's
    terms: a stable protocol (:func:`~symq.window.symbolic.stability`) whose window outgrew the
    simulator's range is refused naming ``name`` (what the user typed), not called unstable."""
    try:
        est = simulate_protocol(tcp, n_losses, **options)
    except InvalidParameter as exc:
        if exc.name.startswith("power_law."):
            raise InvalidParameter(name, value, "a value for which the window's moments stay "
                                   "below 1e308 (the floating-point range)", exc.reason) from None
        if exc.name in ("a", "lam", "d") and callable(exc.value):
            what = {"a": "window increase a(w)", "lam": "loss rate lam(w)",
                    "d": "window after a loss d(w)"}[exc.name]
            raise InvalidParameter(name, value, f"a value for which the {what} is positive and "
                                   "finite in floating point over the simulated windows "
                                   "(1e-12 to 1e15)", exc.reason.split(";")[0]) from None
        raise
    if est.escaped and "escaped" in (est.escape_reason or ""):
        verdict = stability(tcp)
        if verdict.stable:
            raise InvalidParameter(
                name, value, "a value whose stationary windows lie within the simulator's range",
                f"the protocol is stable ({verdict.reason}), but after {est.n_losses} losses "
                f"its window exceeded the simulator's range (windows up to 1e15); the analytic "
                f"model awp solves it")
    return est


WINDOW_SIM = ModelSpec(
    name="window-sim",
    summary=("Monte Carlo of an adaptive window protocol (exact loss cycles): E[W], E[W^2], "
             "throughput and loss rate as confidence intervals (Altman, Avrachenkov, Kherani, "
             "Prabhu, INFOCOM 2005)"),
    parameters=(*PROTOCOL_PARAMETERS, *RUN_PARAMETERS),
    solve=solve_window_sim,
    scalar_outputs=_scalars,
    paper="awp",
    outputs=SIM_OUTPUTS,
    example="protocol=newreno p=1e-4",
)


# ------------------------------------------------------------------ the declared kind

#: Keys of a ``window-sim`` declaration: those of ``window`` but the solver choice.
SIM_KEYS = {key: meaning for key, meaning in KEYS.items() if key != "method"}


def _declared_spec(decl: DeclaredWindow) -> ModelSpec:
    def solve(rng: RngLike = None, **values: Any) -> ProtocolSimulation:
        start = time.perf_counter()
        run = {key: values.pop(key) for key in ("n_losses", "n_batches")}
        tcp = decl.protocol(values)
        est = simulate_protocol(tcp, run["n_losses"], n_batches=run["n_batches"], rng=rng)
        return _estimates(tcp, est, start)

    return ModelSpec(
        name=decl.name,
        summary=(f"Monte Carlo of the window protocol declared in {decl.where}: a(w) = "
                 f"{decl.increase}, lam(w) = {decl.loss}, d(w) = {decl.after_loss}"),
        parameters=(*decl.parameters, *RUN_PARAMETERS), solve=solve, scalar_outputs=_scalars,
        derivation=decl.derivation, outputs=SIM_OUTPUTS)


def declare_window_sim(name: str, table: Mapping[str, Any], parameters: tuple[Parameter, ...],
                       where: str) -> ModelSpec:
    """The simulation model declared by a ``kind = "window-sim"`` table (the keys of the kind
    ``window`` but ``method``; see :func:`~symq.window.declared.declare_window`), with the
    run parameters ``n_losses`` and ``n_batches`` and a ``rng``.

    Raises
    ------
    InvalidParameter
        As :func:`~symq.window.declared.declare_window`, naming ``f"{where}.{key}"``.
    """
    return _declared_spec(parse_window(name, table, parameters, where, keys=SIM_KEYS,
                                       reserved=("n_losses", "n_batches")))


#: The model kind ``window-sim`` (listed in :mod:`symq.window.registration`).
WINDOW_SIM_KIND: ModelKind = ModelKind(
    kind="window-sim",
    summary=("Monte Carlo (exact loss cycles) of an adaptive window protocol declared by a(w), "
             "lam(w) and d(w): E[W], E[W^2], throughput, loss rate as confidence intervals"),
    declare=declare_window_sim,
    keys=SIM_KEYS,
    outputs=SIM_OUTPUTS,
    example='''\
[models.my-tcp-sim]
kind = "window-sim"
parameters = { c = "positive" }
increase = "1"
loss = "p*w"
after_loss = "c*w"
''',
)
