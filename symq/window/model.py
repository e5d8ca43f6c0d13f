"""The ``awp`` model: ``symq solve awp protocol=newreno p=1e-4 --json`` (:data:`AWP`, listed in
:mod:`symq.window.registration`).

A preset (``newreno``, ``scalable``, ``highspeed``, ``highspeed-family`` with ``S=``) with a
per-packet loss probability ``p`` (``loss_model=time``: ``p`` losses per round-trip time), or a
general protocol from three formulas in ``w``: ``a=`` (increase per round-trip time),
``loss=`` (loss rate per round-trip time) and ``after_loss=`` (the window right after a loss).
Returns a :class:`ProtocolSolution`, whose fields are :data:`OUTPUTS`: ``EW`` (here the mean
window ``E[W]`` in packets), ``EW2`` (``E[W^2]``, infinite for a heavy-tailed window law),
``throughput``, ``loss_rate``, ``stable``, ...; an unstable protocol returns ``stable: false``, its
stability verdict and no moments.  :func:`protocol_result` is the solve path shared with the
window models a claims file declares (:mod:`symq.window.declared`).

Examples
--------
>>> r = solve_awp(protocol="newreno", p=1e-4)
>>> r.stable, round(r.EW, 2)
(True, 130.98)
>>> solve_awp(a="0.01*w", loss="0.05", after_loss="0.875*w", w_min=1.0).stable
False
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from symq.core.errors import MISSING, InvalidParameter, StabilityError
from symq.core.parameters import (
    Choice,
    Expression,
    NonNegativeReal,
    Parameter,
    PositiveReal,
)
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result, ResultBase

from .protocol import PRESETS, WindowProtocol, general, highspeed_family
from .solve import METHODS, MIMD_FLOOR_METHOD, WindowLaw, solve_protocol
from .symbolic import WindowStability, stability

__all__ = ["AWP", "ProtocolSolution", "solve_awp", "protocol_from_options", "protocol_result",
           "OUTPUTS", "PROTOCOL_PARAMETERS", "awp_scalars"]

PROTOCOLS = ("newreno", "scalable", "highspeed", "highspeed-family")


#: Names of the profiles as typed on the command line (``a=`` is the field ``increase``).
LABELS = {"increase": "a", "loss": "loss", "after_loss": "after_loss"}


def protocol_from_options(protocol: str | None = None, p: float | None = None,
                          a: Any = None, loss: Any = None, after_loss: Any = None,
                          S: float | None = None, loss_model: str | None = None,
                          w_min: float | None = None, w_max: float | None = None,
                          rtt: float = 1.0) -> WindowProtocol:
    """A :class:`~symq.window.protocol.WindowProtocol` from the ``awp`` model's options.

    A preset (``protocol=``) takes ``p`` (and ``S`` for ``highspeed-family``) and fixes the
    profiles; a general protocol takes the three formulas ``a``, ``loss`` and ``after_loss``.
    An option that the chosen model would ignore is an error, never silently dropped.

    Raises
    ------
    InvalidParameter
        A missing or an ignored option (named as typed: ``a``, ``loss``, ``after_loss``,
        ``p``, ``S``, ``loss_model``), or a profile or bound outside its domain.
    """
    bounds: dict[str, Any] = {"rtt": rtt, "labels": LABELS}
    if w_min is not None:
        bounds["w_min"] = w_min
    if w_max is not None:
        bounds["w_max"] = w_max
    formulas = {"a": a, "loss": loss, "after_loss": after_loss}
    given = {k: v for k, v in formulas.items() if v is not None}
    presets = "|".join(PROTOCOLS)
    if protocol is None:
        for name, value in (("p", p), ("S", S), ("loss_model", loss_model)):
            if value is not None:
                raise InvalidParameter(name, value, f"given only with protocol={presets}",
                                       "a general protocol (a=, loss=, after_loss=) has its loss "
                                       "rate in loss=; this option would be ignored")
        missing = [k for k in formulas if k not in given]
        if missing:
            raise InvalidParameter(missing[0], MISSING,
                                   "a formula in w (a general protocol needs a=, loss= and "
                                   f"after_loss=, or give protocol={presets} and p=)")
        return general(given["a"], given["loss"], given["after_loss"], **bounds)
    if given:
        name = next(iter(given))
        raise InvalidParameter(name, str(given[name]),
                               "given only for a general protocol (without protocol=)",
                               f"the preset protocol={protocol} fixes the profiles; this "
                               "formula would be ignored")
    if S is not None and protocol != "highspeed-family":
        raise InvalidParameter("S", S, "given only with protocol=highspeed-family",
                               f"protocol={protocol} has no response exponent; S would be ignored")
    if p is None:
        raise InvalidParameter("p", MISSING, f"a loss probability in (0, 1) (protocol={protocol} "
                               "needs p=)")
    options = {"loss_model": loss_model or "packet", **bounds}
    if protocol == "highspeed-family" and S is None:
        raise InvalidParameter("S", MISSING, "a real number > 0 (the response exponent of "
                               "protocol=highspeed-family)")
    if protocol not in PRESETS and protocol != "highspeed-family":
        raise InvalidParameter("protocol", protocol, "one of " + ", ".join(PROTOCOLS))
    try:
        if protocol == "highspeed-family":
            return highspeed_family(S, p, **options)
        return PRESETS[protocol](p, **options)
    except InvalidParameter as exc:
        if exc.name not in LABELS.values():
            raise
        # a preset's own profile is out of range: the user typed S (or p), not a=
        name, value = ("S", S) if protocol == "highspeed-family" else ("p", p)
        raise InvalidParameter(name, value, f"a value for which protocol={protocol} has finite "
                               "profiles", f"it gives {exc}") from None


def solve_awp(protocol: str | None = None, p: float | None = None, a: Any = None,
              loss: Any = None, after_loss: Any = None, S: float | None = None,
              loss_model: str | None = None, w_min: float | None = None,
              w_max: float | None = None, rtt: float = 1.0,
              method: str = "auto") -> ProtocolSolution:
    """Solve one protocol; unstable ones give ``stable = False`` and no moments."""
    start = time.perf_counter()
    tcp = protocol_from_options(protocol, p, a, loss, after_loss, S, loss_model, w_min, w_max,
                                rtt)
    name, value = (("S", S) if protocol == "highspeed-family" else ("p", p)) if protocol \
        else ("loss", loss)
    try:
        result = protocol_result(tcp, method, start=start)
    except InvalidParameter as exc:
        if not protocol or exc.name not in ("a", "loss", "after_loss", "m"):
            raise
        # a preset's profile (or its law's scale) out of floating point inside the solver: the
        # user typed p (or S)
        domain = (f"a value for which the window law of protocol={protocol} can be computed "
                  "in floating point" if exc.name == "m" else
                  f"a value for which protocol={protocol} has positive finite profiles in "
                  "floating point")
        raise InvalidParameter(name, value, domain, exc.reason or str(exc)) from None
    except StabilityError as exc:
        verdict = stability(tcp)
        if not verdict.stable:
            raise
        # the stability test says stable: the numerical solver's window range was too narrow
        raise InvalidParameter(name, value, "a value whose stationary windows lie within the "
                               "numerical solver's range (windows within e^35 of 1)",
                               f"the protocol is stable ({verdict.reason}), but its "
                               f"stationary windows lie beyond the solver's range") from exc
    check_range(result.outputs(), protocol, p, loss, S, rtt, method=result.method)
    return result


def check_range(values: Mapping[str, Any], protocol: str | None, p: float | None, loss: Any,
                S: float | None, rtt: float | None = None, method: str = "") -> None:
    """Refuse, naming what the user typed, a stable protocol whose moments leave floating point
    (NewReno at ``p = 1e-320``: ``E[W^2] = 2/p``); ``method`` is the solver's (its
    ``EW2`` may be infinite exactly)."""
    def finite(v: Any) -> bool:
        x = getattr(v, "mean", v)
        try:
            return abs(float(x)) < float("inf")
        except (TypeError, ValueError):
            return True

    keys = ("EW", "EW2", "throughput", "loss_rate", "pre_loss_mean")
    exact_infinite = {"EW2"} if method == MIMD_FLOOR_METHOD else set()
    bad = [k for k in keys if k in values and not finite(values[k]) and k not in exact_infinite]
    if not bad:
        return
    if bad == ["throughput"] and "EW" in values and rtt is not None:
        # throughput = E[W]/rtt with a finite E[W]: the round-trip time is too short
        least = float(getattr(values["EW"], "mean", values["EW"])) / 1e308
        raise InvalidParameter("rtt", rtt, f"a round-trip time >= {least:.3g}",
                               f"throughput = E[W]/rtt overflows; EW = "
                               f"{getattr(values['EW'], 'mean', values['EW']):.3g}")
    name, value = (("S", S) if protocol == "highspeed-family" else ("p", p)) if protocol \
        else ("loss", loss)
    shown = ", ".join(f"{k} = {getattr(values[k], 'mean', values[k]):.3g}" for k in keys
                      if k in values and finite(values[k]))
    raise InvalidParameter(name, value, "a value for which the window's moments stay below "
                           "1e308 (the floating-point range)",
                           f"{', '.join(bad)} overflow" + (f"; {shown}" if shown else ""))


@dataclass(frozen=True)
class ProtocolSolution(ResultBase):
    """Stability verdict and, for a stable protocol, the stationary window's moments (the
    result of the ``awp`` model and of a ``window`` model a claims file declares).

    Attributes
    ----------
    stable : bool
        The verdict of :func:`~symq.window.symbolic.stability`.
    stability : str
        Its status: ``"stable"``, ``"transient"``, ``"collapse"`` or ``"borderline"``.
    stability_reason : str
        One sentence.
    EW, EW2 : float or None
        The mean window ``E[W]`` and ``E[W^2]`` in packets (``EW2`` infinite for a heavy-tailed
        window law); ``None`` for an unstable protocol, as every field below but the
        bookkeeping.
    throughput : float or None
        ``E[W]/rtt``.
    loss_rate : float or None
        ``E[lam(W)]``, losses per round-trip time.
    drift_balance, error_estimate, atom_at_cap : float or None
        As in :class:`~symq.window.solve.WindowLaw`.
    method : str
        The solver's (the window law's ``method``), or the stability test's for an unstable
        protocol.
    exactness : Exactness
        ``exact`` (closed forms, symbolic limits) or ``numeric``.
    seconds : float
        Wall time of the solve.
    protocol : WindowProtocol
        The protocol solved (its name, profiles and bounds; not among the model's values).
    law : WindowLaw or None
        The stationary window law (``None`` for an unstable protocol; not among the values).
    verdict : WindowStability
        The stability verdict in full (not among the values).
    """

    summary: ClassVar[tuple[str, ...]] = ("stable", "EW", "throughput", "loss_rate")

    stable: bool
    stability: str
    stability_reason: str
    method: str
    exactness: Exactness
    EW: float | None = None
    EW2: float | None = None
    throughput: float | None = None
    loss_rate: float | None = None
    drift_balance: float | None = None
    error_estimate: float | None = None
    atom_at_cap: float | None = None
    seconds: float = 0.0
    protocol: WindowProtocol | None = field(default=None, repr=False)
    law: WindowLaw | None = field(default=None, repr=False)
    verdict: WindowStability | None = field(default=None, repr=False)


def protocol_result(tcp: WindowProtocol, method: str = "auto",
                    start: float | None = None) -> ProtocolSolution:
    """The ``awp`` model's result for a built protocol.

    The one solve path of every registered window model (``awp`` and the models a claims file
    declares with ``kind = "window"``): the stability test
    (:func:`~symq.window.symbolic.stability`), then :func:`~symq.window.solve.solve_protocol`
    for a stable protocol.  Values: :data:`OUTPUTS` (``stable``, ``stability`` and
    ``stability_reason`` only, for an unstable one).

    Parameters
    ----------
    tcp : WindowProtocol
    method : {"auto", "closed form", "numeric"}
    start : float, optional
        ``time.perf_counter()`` when the solve began (default: now).
    """
    start = time.perf_counter() if start is None else start
    verdict = stability(tcp)
    common = {"stable": verdict.stable, "stability": verdict.status,
              "stability_reason": verdict.reason, "protocol": tcp, "verdict": verdict}
    if not verdict.stable:
        return ProtocolSolution(
            **common, method=f"stability test ({verdict.method} limits); no stationary law",
            exactness=Exactness.EXACT if verdict.method == "symbolic" else Exactness.NUMERIC,
            seconds=time.perf_counter() - start)
    law = solve_protocol(tcp, method=method, verdict=verdict)
    return ProtocolSolution(
        **common, method=law.method, exactness=law.exactness, EW=law.mean_window,
        EW2=law.mean_square_window, throughput=law.throughput, loss_rate=law.loss_rate,
        drift_balance=law.drift_balance, error_estimate=law.error_estimate,
        atom_at_cap=law.atom_at_cap, law=law, seconds=time.perf_counter() - start)


#: The result keys of a stable protocol (a claim refers to them as ``awp:EW``, ...).
OUTPUTS = ("EW", "EW2", "throughput", "loss_rate", "stable", "stability", "stability_reason",
           "drift_balance", "error_estimate", "atom_at_cap")


def awp_scalars(result: Result) -> dict[str, float]:
    """The flat numbers of an ``awp`` result for sweeps (``EW``, ``EW2``, ``throughput``,
    ``loss_rate``, and ``stable`` as 1.0 or 0.0; only ``stable`` for an unstable protocol);
    also the scalars of a ``window`` model a claims file declares."""
    v = result.values
    if not v["stable"]:
        return {"stable": 0.0}
    return {"EW": float(v["EW"]), "EW2": float(v["EW2"]), "throughput": float(v["throughput"]),
            "loss_rate": float(v["loss_rate"]), "stable": 1.0}


#: The parameters that define a protocol (every ``awp`` parameter but ``method``); the
#: ``window-sim`` model declares the same.
PROTOCOL_PARAMETERS: tuple[Parameter, ...] = (
    Parameter("protocol", Choice(PROTOCOLS), typical="newreno", required=False,
              description="preset: " + ", ".join(PROTOCOLS) + " (omit for a general one)"),
    Parameter("p", PositiveReal(), typical=1e-4, required=False,
              description="loss probability per packet (per RTT with loss_model=time)"),
    Parameter("a", Expression(("w",)), required=False,
              description="general protocol: window increase per RTT, a formula in w"),
    Parameter("loss", Expression(("w",)), required=False,
              description="general protocol: loss rate per RTT, a formula in w"),
    Parameter("after_loss", Expression(("w",)), required=False,
              description="general protocol: the window right after a loss, e.g. 0.5*w"),
    Parameter("S", PositiveReal(), required=False,
              description="response exponent of the highspeed-family preset"),
    Parameter("loss_model", Choice(("packet", "time")), required=False,
              description="with a preset: packet (default): lam = p w; time: lam = p"),
    Parameter("w_min", NonNegativeReal(), required=False, description="window floor"),
    Parameter("w_max", PositiveReal(), required=False, description="window cap"),
    Parameter("rtt", PositiveReal(), required=False, default=1.0,
              description="round-trip time (throughput = E[W]/rtt)"),
)

#: The solver choice of the ``awp`` model.
METHOD_PARAMETER = Parameter("method", Choice(METHODS), required=False, default="auto",
                             description="solver")


AWP = ModelSpec(
    name="awp",
    summary=("adaptive window protocol (TCP NewReno, Scalable, HighSpeed or a general profile) "
             "under window-dependent Poisson losses: stationary window law, stability "
             "(Altman, Avrachenkov, Kherani, Prabhu, INFOCOM 2005)"),
    parameters=(*PROTOCOL_PARAMETERS, METHOD_PARAMETER),
    solve=solve_awp,
    scalar_outputs=awp_scalars,
    paper="awp",
    outputs=OUTPUTS,
    allow_infinite=("EW2",),
    example="protocol=newreno p=1e-4",
)
