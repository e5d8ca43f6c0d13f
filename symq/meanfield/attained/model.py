"""The registered ``attained`` model and the bridge from a policy to the simulator.

``symq solve attained policy=LEW d=5 lam=0.7 scv=10 f=0.5 T=2 delta=0.1 --json`` solves the
mean-field fixed point of one attained-service policy (Hellemans & Van Houdt, IEEE/ACM ToN
2021) for hyper-Erlang job sizes with mean 1 (``k = 1``: the two-phase hyperexponential
H2(1, scv, f) of the paper) and returns an :class:`AttainedPolicyMeans`: ``EW``, ``ET`` (the
paper's ``E[R]``, under the glossary's name) and ``P_wait``, with the truncation's figures.  The
former key ``ER`` is read, with a warning, for one release (``attained:ER`` in a claims file).

Examples
--------
>>> from symq.core.registry import get_model
>>> spec = get_model("attained")
>>> sorted(p.name for p in spec.parameters)[:4]
['B', 'T', 'd', 'delta']
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from symq.core.parameters import (
    Choice,
    IntegerAtLeast,
    Interval,
    Parameter,
    PositiveReal,
)
from symq.core.randomness import RngLike
from symq.core.registry import ModelSpec
from symq.core.renamed import former_attribute, renamed_keywords
from symq.core.resources import largest_fitting, memory_budget, require_memory
from symq.core.result import Exactness, ResultBase
from symq.laws import as_phase_type, hyper_erlang

from ..sizes import PhaseTypeLaw
from .cavity import age_layer_count, attained_bytes, solve_attained
from .policies import POLICY_NAMES, Policy, get_policy
from .simulation import AttainedEstimate, simulate_attained

__all__ = ["ATTAINED", "AttainedPolicyMeans", "simulate_policy", "solve_attained_model",
           "SIMULATION_QUEUE_CAP"]

#: Queue-length columns of the score table given to the simulator (longer queues are clamped).
SIMULATION_QUEUE_CAP = 200


@renamed_keywords(service="sizes")
def simulate_policy(policy: str | Policy, N: int, d: int, lam: float, sizes: PhaseTypeLaw,
                    *, delta: float = 0.1, rep_max: float = 40.0,
                    T: float = 2.0, n_jobs: int = 10**6, rng: RngLike = None,
                    **options: Any) -> AttainedEstimate:
    """Simulate ``N`` servers under ``policy`` with the same age layers as the analysis.

    The policy's score table is built for layers ``b_k = (k-1) delta``, ``k = 1..r+1``,
    ``r = ceil(rep_max/delta)`` (as in
    :func:`~symq.meanfield.attained.cavity.solve_attained`) and queue lengths up to
    :data:`SIMULATION_QUEUE_CAP`, then handed to
    :func:`~symq.meanfield.attained.simulation.simulate_attained` (``options`` are passed on:
    ``warmup``, ``replace``, ``progress``, ``n_batches``, ``level``, ...).  ``sizes`` is the
    job-size law (:func:`symq.laws.as_phase_type`), converted once here.

    Examples
    --------
    >>> est = simulate_policy("SQ-RTB", 50, 2, 0.5, ([1.0], [[-1.0]]), delta=0.5, rep_max=5.0,
    ...                       n_jobs=60_000, rng=1)
    >>> 0.4 < est.utilisation.mean < 0.6
    True
    """
    pol = get_policy(policy, T=T) if not isinstance(policy, Policy) else policy
    law = as_phase_type(sizes, "sizes")
    r = int(np.ceil(rep_max / delta - 1e-12)) if delta > 0 else 0
    lower = delta * np.arange(r + 1, dtype=float)
    table = pol.score_table(lower, SIMULATION_QUEUE_CAP, law)
    return simulate_attained(N, d, lam, law, table, delta, n_jobs=n_jobs, rng=rng, **options)


#: the defaults against which the parameter that makes a request too large is found.
_DEFAULTS = {"delta": 0.1, "rep_max": 40.0, "B": 30, "k": 1}


def _size(delta: float, rep_max: float, B: float, k: float) -> float:
    return attained_bytes(age_layer_count(float(delta), float(rep_max)) + 1, float(B),
                          2.0 * float(k))


def _guard(**given: Any) -> None:
    """Refuse, before anything is allocated, a request whose memory does not fit the budget.

    The parameter named is the one that, alone at the value given (the others at their
    defaults), needs the most memory; the limit is the largest (for ``delta`` the smallest)
    value of it that fits with the other parameters as given.
    """
    try:
        vals = {"delta": float(given["delta"]), "rep_max": float(given["rep_max"]),
                "B": int(given["B"]), "k": int(given["k"])}
    except (TypeError, ValueError, OverflowError):
        return  # the solver's own checks name the bad value
    if not (vals["delta"] > 0 and vals["rep_max"] > 0 and vals["B"] >= 2 and vals["k"] >= 1):
        return
    budget = memory_budget()
    if _size(**vals) <= budget:
        return
    culprit = max(vals, key=lambda name: _size(**{**_DEFAULTS, name: vals[name]}))
    value = vals[culprit]

    def bytes_for(v: float) -> float:
        return _size(**{**vals, culprit: v})

    if culprit == "delta":
        best = largest_fitting(bytes_for, value, max(vals["rep_max"], value), budget,
                               decreasing=True)
        limit = f"at least {best:.3g} (with rep_max={vals['rep_max']:g})"
    elif culprit == "rep_max":
        best = largest_fitting(bytes_for, vals["delta"], value, budget)
        limit = f"at most {best:.3g} (with delta={vals['delta']:g})"
    else:
        low = 2 if culprit == "B" else 1
        best = largest_fitting(bytes_for, low, value, budget, integer=True)
        limit = f"at most {int(best)}"
    require_memory(culprit, given[culprit], _size(**vals),
                   what=(f"{age_layer_count(vals['delta'], vals['rep_max']) + 1:.3g} age layers x "
                         f"B={vals['B']} x {2 * vals['k']} phases"), limit=limit)


@dataclass(frozen=True)
class AttainedPolicyMeans(ResultBase):
    """The values of the registered model ``attained``: one policy's mean-field means.

    Read from the fixed point :class:`~symq.meanfield.attained.cavity.AttainedFixedPoint` by
    :func:`solve_attained_model`.

    Attributes
    ----------
    EW : float
        Mean waiting time.
    ET : float
        Mean response time (the paper's ``E[R]``; the former key ``ER`` is read, with a
        warning, for one release).
    P_wait : float
        Probability that an arrival waits.
    queue_tail : ndarray
        ``P(Q >= l)``, ``l = 1..B``.
    iterations : int
        Cavity iterations.
    change : float
        Last change of the iteration.
    layers : int
        Age layers ``r + 1``.
    truncation_mass : float
        Relative mass at the queue-length truncation ``B``.
    method : str
    exactness : Exactness
        ``numeric``.
    seconds : float
        Wall time of the solve.
    """

    summary: ClassVar[tuple[str, ...]] = ("EW", "ET", "P_wait")

    EW: float
    ET: float
    P_wait: float
    queue_tail: NDArray[np.float64]
    iterations: int
    change: float
    layers: int
    truncation_mass: float
    method: str
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0

    ER = former_attribute("ER", "ET")


def solve_attained_model(policy: str, d: int, lam: float, scv: float, f: float = 0.5,
                         T: float = 2.0, delta: float = 0.1, k: int = 1, B: int = 30,
                         rep_max: float = 40.0) -> AttainedPolicyMeans:
    """``attained`` model: one policy, hyper-Erlang sizes of mean 1 (``k = 1``: H2).

    Returns
    -------
    AttainedPolicyMeans
        ``EW``, ``ET`` (the paper's ``E[R]``), ``P_wait``, ``queue_tail``
        (``P(Q >= l)``, ``l = 1..B``), ``iterations``, ``change``, ``layers`` (``r + 1``),
        ``truncation_mass``.
    """
    start = time.perf_counter()
    _guard(delta=delta, rep_max=rep_max, B=B, k=k)
    law = hyper_erlang(k, 1.0, scv, f)
    pol = get_policy(policy, T=T)
    fp = solve_attained(pol, d, lam, law, delta=delta, rep_max=rep_max, B=B, truncation="raise")
    return AttainedPolicyMeans(
        EW=float(fp.EW), ET=float(fp.ET), P_wait=float(fp.P_wait),
        queue_tail=np.asarray(fp.queue_tail, dtype=float), iterations=int(fp.iterations),
        change=float(fp.change), layers=int(fp.x.shape[0]),
        truncation_mass=float(fp.truncation_mass), method=fp.method, exactness=fp.exactness,
        seconds=time.perf_counter() - start)


ATTAINED = ModelSpec(
    name="attained",
    summary=("load balancing with attained-service reporting: mean-field E[W], E[R] of a "
             "policy ranking (age layer, queue length) (Hellemans & Van Houdt, ToN 2021)"),
    parameters=(
        Parameter("policy", Choice(POLICY_NAMES), typical="LEW",
                  description="dispatching policy: " + ", ".join(POLICY_NAMES)),
        Parameter("d", IntegerAtLeast(1), typical=5, description="servers probed per arrival"),
        Parameter("lam", PositiveReal(), typical=0.7,
                  description="per-server arrival rate (mean job size 1); must be < 1"),
        Parameter("scv", PositiveReal(), typical=10,
                  description="squared coefficient of variation of the job size (>= 1/k)"),
        Parameter("f", Interval(0, 1, left_open=True, right_open=True), typical=0.5,
                  description="fraction of the mean job size carried by branch 1",
                  required=False, default=0.5),
        Parameter("T", PositiveReal(), typical=2.0, description="age threshold of the RE policies",
                  required=False, default=2.0),
        Parameter("delta", PositiveReal(), typical=0.1, description="width of the age layers",
                  required=False, default=0.1),
        Parameter("k", IntegerAtLeast(1), typical=1,
                  description="Erlang phases per branch (hyper-Erlang sizes; 1 = H2)",
                  required=False, default=1),
        Parameter("B", IntegerAtLeast(2), typical=30, description="queue-length truncation",
                  required=False, default=30),
        Parameter("rep_max", PositiveReal(), typical=40.0,
                  description="ages above rep_max share the last layer", required=False,
                  default=40.0),
    ),
    solve=solve_attained_model,
    scalar_outputs=lambda r: {"EW": float(r.values["EW"]), "ET": float(r.values["ET"]),
                              "P_wait": float(r.values["P_wait"])},
    paper="attained-service",
    outputs=("EW", "ET", "P_wait", "queue_tail", "iterations", "change", "layers",
             "truncation_mass"),
)
