r"""Dispatching models for claims files: the model ``dispatch-sim`` and the kind ``dispatch-score``.

``dispatch-sim`` simulates a named built-in policy
(:func:`~symq.dispatch.simulation.simulate.simulate_dispatch`) and returns its mean response time
``ET`` (and mean waiting time ``EW``) as
:class:`~symq.core.simstats.ConfidenceInterval` values, so that a claim can check a closed form
against simulation, or "policy A beats policy B", by simulation::

    symq solve dispatch-sim policy=rnd m=2 rho=0.5
    symq solve dispatch-sim policy=jiq m=4 rho=0.8 speeds=2,1,1,1

A claims file declares a new dispatching policy by its per-server score (Hyytiä & Righter,
arXiv 2402.08142, Section 4: index policies send the job to the server of least index)::

    [models.my-policy]
    kind = "dispatch-score"
    parameters = { beta = "positive" }
    score = "u + beta*x*n"           # s(u_i, n_i, x, i): the job goes to argmin_i s
    description = "least work, penalised by size times queue length"

and refers to it as ``my-policy:ET`` or ``my-policy:ET_sim``.  The score is formula text in
``u`` (backlog of server ``i``), ``n`` (its number of jobs), ``x`` (the job's size), ``i``
(1-based server index), ``lam`` (total arrival rate), ``rho`` (load per server), ``m`` and the
declared parameters (:func:`~symq.dispatch.policies.policy.score_policy`; in a Python claims file
also a sympy expression, a :class:`~symq.dispatch.policies.policy.ScorePolicy`, or a numba function
``s(u, n, x, i, p)``).  Outputs:

* ``ET``: the policy's mean response time by value-iteration policy evaluation on the full
  two-server lattice (:func:`~symq.dispatch.vi.solvers.evaluate_policy`), Richardson-extrapolated
  over the steps ``delta`` and ``delta/2`` (numeric, ``m <= 2`` and a score without ``n``), with
  ``error_estimate`` (the Richardson correction plus the Odoni bracket width; the truncation
  ``umax`` is not covered);
* ``ET_sim``, ``EW_sim``: simulation estimates (confidence intervals at ``level``, any ``m``).

``method`` chooses: ``vi``, ``simulation`` or ``both`` (default: both where value iteration
applies, simulation otherwise).

Examples
--------
>>> r = DISPATCH_SIM.run({"policy": "rnd", "m": 2, "rho": 0.5, "n_jobs": 200_000}, rng=1)
>>> r["ET"].contains(1 / (1 - 0.5))          # M/M/1 per server
True
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sp

from symq.core.claimsfile.declarations import check_keys
from symq.core.derivation import Derivation
from symq.core.errors import MISSING, InvalidParameter
from symq.core.parameters import Choice, Parameter, PositiveReal, PositiveVector
from symq.core.registry import ModelKind, ModelSpec
from symq.core.result import Exactness, Result, ResultBase
from symq.core.simrun import run_parameters
from symq.core.simstats import ConfidenceInterval
from symq.laws import Distribution

from .model import (
    DISPATCH,
    POLICY_CHOICES,
    check_given,
    check_m_for,
    check_simulation,
    check_sita_h,
    user_error,
)
from .policies import ScorePolicy, get_policy, score_policy
from .policies.score import MODEL_SYMBOLS, STATE_SYMBOLS
from .simulation.simulate import simulate_dispatch
from .sizes import named_sizes
from .vi.accuracy import default_truncation
from .vi.multigrid import richardson
from .vi.solvers import evaluate_policy

__all__ = ["DISPATCH_SIM", "SIM_POLICIES", "solve_dispatch_sim", "declare_dispatch_score",
           "DISPATCH_SCORE", "DispatchSimulation", "DispatchScoreResult"]

#: Built-in policies ``dispatch-sim`` simulates (``optimal`` needs value iteration: ``dispatch``),
#: with the join-idle-queue policies, which only the simulator has.
SIM_POLICIES = tuple(p for p in POLICY_CHOICES if p != "optimal") + ("jiq", "jiq-jsq")
#: Simulation defaults: about a second of simulation for two servers.
SIM_JOBS, SIM_BATCHES, SIM_LEVEL = 1_000_000, 30, 0.99
#: Value-iteration default step of ``dispatch-score`` (grids ``delta`` and ``delta/2``): 0.2 up
#: to ``rho = 0.5`` (``umax = 24``, a few seconds), 0.4 above, where ``umax`` doubles (about 7 s
#: at ``rho = 0.8``, 45 s at 0.9).
VI_DELTA, VI_DELTA_HIGH_LOAD = 0.2, 0.4


def default_step(rho: float) -> float:
    """The default value-iteration step of ``dispatch-score`` at load ``rho``."""
    return VI_DELTA if rho <= 0.5 else VI_DELTA_HIGH_LOAD
METHODS = ("both", "vi", "simulation")


def _shared(name: str) -> Parameter:
    """The parameter ``name`` as the ``dispatch`` model declares it (one declaration)."""
    return DISPATCH.parameter(name)


_SIM_PARAMETERS = run_parameters(SIM_JOBS, n_batches=SIM_BATCHES, level=SIM_LEVEL,
                                 minimum_jobs=10_000)


def _simulate(policy: Any, m: int, rho: float, law: Distribution, n_jobs: int, n_batches: int,
              level: float, rng: Any, key: str, sizes: str, scv: float | None,
              speeds: Any = None) -> Any:
    """:func:`simulate_dispatch` after the checks of a reliable, affordable run."""
    check_simulation(key, m, rho, law, n_jobs, sizes, scv, n_batches)
    return simulate_dispatch(policy, m, rho, law, n_jobs=n_jobs, n_batches=n_batches,
                             level=level, rng=1 if rng is None else rng, speeds=speeds)


def _law(sizes: str, scv: float | None) -> Any:
    return named_sizes(sizes, scv)


# --------------------------------------------------------------------------------------------
# dispatch-sim
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DispatchSimulation(ResultBase):
    """The simulated mean response and waiting times of the ``dispatch-sim`` model.

    Attributes
    ----------
    ET, EW : ConfidenceInterval
        Mean response time and mean waiting time per job.
    n_jobs : int
        Jobs simulated.
    n_batches : int
        Batches of the batch-means intervals.
    level : float
        Confidence level of the intervals.
    method, exactness
        Batch means; simulated.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "EW", "n_jobs")

    ET: ConfidenceInterval
    EW: ConfidenceInterval
    n_jobs: int
    n_batches: int
    level: float
    method: str = "simulation (batch means)"
    exactness: Exactness = Exactness.SIMULATED


def solve_dispatch_sim(policy: str, m: int, rho: float, sizes: str = "exp",
                       scv: float | None = None, h: float | None = None,
                       n_jobs: int = SIM_JOBS, n_batches: int = SIM_BATCHES,
                       level: float = SIM_LEVEL, rng: Any = None,
                       speeds: Any = None) -> DispatchSimulation:
    """Simulated mean response and waiting times of a built-in dispatching policy.

    Parameters
    ----------
    policy : str
        One of :data:`SIM_POLICIES`.
    m, rho, sizes, scv, h
        As in :func:`~symq.dispatch.model.solve_dispatch` (``h`` the SITA threshold, ``m = 2``);
        with ``speeds`` the load is :math:`\\rho = \\lambda E[X]/\\sum_i s_i`.
    n_jobs, n_batches, level
        Run length, number of batches and confidence level.
    rng : seed or Generator, optional
        Default seed 1 (the same parameters give the same estimate).
    speeds : sequence of m positive reals, optional
        Server speeds (default all 1; what each policy does with them:
        :mod:`symq.dispatch.policies.named`).

    Returns
    -------
    DispatchSimulation
        ``ET``, ``EW`` (:class:`~symq.core.simstats.ConfidenceInterval`), ``n_jobs``,
        ``n_batches``, ``level``.

    Raises
    ------
    InvalidParameter, StabilityError
        Bad or unused parameters (named as typed), a run too short for its confidence interval.
    """
    key = str(policy).lower()
    try:
        if key not in SIM_POLICIES:
            raise InvalidParameter("policy", policy, "one of " + ", ".join(SIM_POLICIES))
        check_given(key, sizes, scv, h, None, None)
        check_sita_h(key, m, h)
        law = _law(sizes, scv)
        check_m_for(key, m, law, n_jobs)
        pol = get_policy(key, **({} if h is None else {"h": float(h)}))
        est = _simulate(pol, m, rho, law, n_jobs, n_batches, level, rng, key, str(sizes).lower(),
                        scv, speeds)
    except InvalidParameter as exc:
        raise user_error(exc) from None
    return DispatchSimulation(ET=est.ET, EW=est.EW, n_jobs=est.n_jobs, n_batches=est.n_batches,
                              level=level)


DISPATCH_SIM = ModelSpec(
    name="dispatch-sim",
    summary=("simulated mean response time ET (a confidence interval) of a built-in "
             "dispatching policy to m FCFS servers: RND, RR, JSQ, LWL, JIQ, SITA, FPI; "
             "optionally with server speeds"),
    parameters=(
        Parameter("policy", Choice(SIM_POLICIES), typical="lwl",
                  description="dispatching policy: " + ", ".join(SIM_POLICIES)),
        *(_shared(k) for k in ("m", "rho", "sizes", "scv", "h")),
        Parameter("speeds", PositiveVector(), required=False,
                  description="server speeds, m positive reals (default all 1); the load is "
                              "then rho = lam E[X]/sum(speeds)"),
        *_SIM_PARAMETERS,
    ),
    solve=solve_dispatch_sim,
    scalar_outputs=lambda r: {"ET": float(r.values["ET"].mean),
                              "ET_half_width": float(r.values["ET"].half_width)},
    paper="hyytia-righter",
    outputs=("ET", "EW"),
)


# --------------------------------------------------------------------------------------------
# dispatch-score
# --------------------------------------------------------------------------------------------

KEYS = {
    "score": ("the per-server score s(u, n, x, i): formula text in u (backlog of server i), n "
              "(its number of jobs), x (the job's size), i (1-based server index), lam (total "
              "arrival rate), rho (load per server), m and the declared parameters; the job goes "
              "to argmin_i s, ties to the lowest index.  In a Python claims file also a sympy "
              "expression, a ScorePolicy or a numba function s(u, n, x, i, p) with "
              "p = (lam, rho, m, parameters...)"),
    "description": "one line saying what the policy does (optional)",
    "uses_counts": ("for a numba function only: whether it reads n (default true; value "
                    "iteration, whose state has no job counts, needs false)"),
}
OUTPUTS = ("ET", "error_estimate", "ET_sim", "EW_sim")
_OWN = ("m", "rho", "sizes", "scv", "method", "delta", "umax", "n_jobs", "n_batches", "level")


def _score_from(name: str, table: Mapping[str, Any], names: tuple[str, ...],
                where: str) -> ScorePolicy:
    """The score policy of a declaration (the whole table checked first)."""
    check_keys(where, table, KEYS, "a dispatch-score model")
    if "score" not in table:
        raise InvalidParameter(f"{where}.score", MISSING, KEYS["score"])
    score = table["score"]
    description = table.get("description", "")
    if not isinstance(description, str):
        raise InvalidParameter(f"{where}.description", description, "a string")
    uses = table.get("uses_counts")
    if uses is not None and not isinstance(uses, bool):
        raise InvalidParameter(f"{where}.uses_counts", uses, "true or false")
    if isinstance(score, ScorePolicy):
        if uses is not None:
            raise InvalidParameter(f"{where}.uses_counts", uses, "omitted for a ScorePolicy "
                                   "(it states its own)")
        unknown = [p for p in score.parameters if p not in names]
        if unknown:
            raise InvalidParameter(f"{where}.score", score.name, "a policy whose parameters "
                                   "are declared", f"declare {', '.join(unknown)} in "
                                   f"{where}.parameters")
        return score
    if uses is not None and (isinstance(score, (str, sp.Basic)) or not callable(score)):
        raise InvalidParameter(f"{where}.uses_counts", uses, "omitted for a formula",
                               "whether a formula reads n is read from the formula")
    return score_policy(name, score, names, uses_counts=uses, description=description,
                        label=f"{where}.score", parameters_label=f"{where}.parameters")


@dataclass(frozen=True)
class DispatchScoreResult(ResultBase):
    """The mean response time of a policy declared by its score (kind ``dispatch-score``).

    Value iteration (``method=vi`` or ``both``) sets ``ET``, ``error_estimate`` and ``grids``;
    simulation (``method=simulation`` or ``both``) sets ``ET_sim``, ``EW_sim``, ``n_jobs``,
    ``n_batches`` and ``level``.

    Attributes
    ----------
    ET : float or None
        Richardson-extrapolated value-iteration mean response time.
    error_estimate : float or None
        The Richardson correction plus the Odoni bracket width (truncation not covered).
    grids : list of dict or None
        ``delta``, ``umax``, ``g`` per grid.
    ET_sim, EW_sim : ConfidenceInterval or None
        Simulated mean response and waiting times.
    n_jobs, n_batches : int or None
        Jobs simulated and batches.
    level : float or None
        Confidence level of the simulation intervals.
    method : str
        ``value-iteration + simulation``, ``value-iteration`` or ``simulation``.
    exactness : Exactness
        Numeric with value iteration, simulated otherwise.
    """

    summary: ClassVar[tuple[str, ...]] = ("ET", "error_estimate", "ET_sim")
    uncertainty: ClassVar[dict[str, str]] = {"ET": "error_estimate"}

    ET: float | None = None
    error_estimate: float | None = None
    grids: list[dict[str, Any]] | None = None
    ET_sim: ConfidenceInterval | None = None
    EW_sim: ConfidenceInterval | None = None
    n_jobs: int | None = None
    n_batches: int | None = None
    level: float | None = None
    method: str = "value-iteration + simulation"
    exactness: Exactness = Exactness.NUMERIC


class _DeclaredScore:
    """A declared score policy and the solve of its model."""

    def __init__(self, name: str, policy: ScorePolicy, parameters: tuple[Parameter, ...],
                 where: str) -> None:
        self.name, self.policy, self.declared, self.where = name, policy, parameters, where

    def solve(self, m: int, rho: float, sizes: str = "exp", scv: float | None = None,
              method: str | None = None, delta: float | None = None, umax: float | None = None,
              n_jobs: int = SIM_JOBS, n_batches: int = SIM_BATCHES, level: float = SIM_LEVEL,
              rng: Any = None, **values: Any) -> DispatchScoreResult:
        pol = self.policy.with_values(**values)
        vi_ok = m <= 2 and not pol.uses_counts
        chosen = method or ("both" if vi_ok else "simulation")
        out: dict[str, Any] = {}
        try:
            check_given("score", sizes, scv, None, None, None)
            law = _law(sizes, scv)
            if chosen in ("both", "vi"):
                if not vi_ok:
                    name, value = (("m", m) if m > 2 else ("method", chosen))
                    raise InvalidParameter(name, value, "m <= 2 and a score without n for "
                                           "method=vi or both", "value iteration evaluates the "
                                           "policy on the two-server backlog lattice, which has "
                                           "no job counts; use method=simulation")
                out.update(self._vi(pol, m, rho, law, delta, umax))
            elif delta is not None or umax is not None:
                raise InvalidParameter("delta" if delta is not None else "umax",
                                       delta if delta is not None else umax,
                                       "omitted with method=simulation",
                                       "a parameter the model would ignore is refused")
            if chosen in ("both", "simulation"):
                est = _simulate(pol, m, rho, law, n_jobs, n_batches, level, rng, pol.name,
                                str(sizes).lower(), scv)
                out.update(ET_sim=est.ET, EW_sim=est.EW, n_jobs=est.n_jobs,
                           n_batches=est.n_batches, level=level)
        except InvalidParameter as exc:
            raise user_error(exc) from None
        method = {"both": "value-iteration + simulation", "vi": "value-iteration",
                  "simulation": "simulation"}[chosen]
        exactness = Exactness.SIMULATED if chosen == "simulation" else Exactness.NUMERIC
        return DispatchScoreResult(**out, method=method, exactness=exactness)

    @staticmethod
    def _vi(pol: ScorePolicy, m: int, rho: float, law: Distribution, delta: float | None,
            umax: float | None) -> dict[str, Any]:
        step = default_step(rho) if delta is None else delta
        top = default_truncation(m, rho) if umax is None else umax
        if umax is None:           # a multiple of the step
            top = math.ceil(top / step - 1e-9) * step
        rr = richardson(functools.partial(evaluate_policy, pol), m, rho, law, delta=step,
                        U=top, tol=1e-9)
        return {"ET": rr.ET, "error_estimate": rr.error_estimate,
                "grids": [{"delta": r.delta, "umax": r.U, "g": r.ET} for r in rr.results]}

    def derivation(self) -> Derivation:
        """The declared score and the decision rule it defines."""
        d = Derivation(f"Dispatching policy {self.name}",
                       source=f"declared in {self.where}; index policies of Hyytiä & Righter, "
                              "arXiv 2402.08142, Section 4",
                       summary=self.policy.description)
        u, n, x = sp.symbols("u_i n_i x", nonnegative=True)
        if self.policy.expr is not None:
            expr = self.policy.expr.xreplace({s: {"u": u, "n": n}.get(s.name, s)
                                             for s in self.policy.expr.free_symbols})
            d.add("score", sp.Eq(sp.Function("s")(u, n, x, sp.Symbol("i")), expr),
                  "the score of server $i$; the job goes to the server of least score (ties to "
                  "the lowest index)")
        else:
            d.add("score", sp.Function("s")(u, n, x, sp.Symbol("i")),
                  "a compiled function of the claims file (no formula to show)")
        return d

    def spec(self) -> ModelSpec:
        text = (str(self.policy.expr) if self.policy.expr is not None
                else "a compiled function")
        own = (
            *(_shared(k) for k in ("m", "rho", "sizes", "scv")),
            Parameter("method", Choice(METHODS), required=False,
                      description="vi (ET), simulation (ET_sim) or both; default both where "
                                  "value iteration applies (m <= 2, a score without n)"),
            Parameter("delta", PositiveReal(), required=False,
                      description=f"value-iteration step (default {VI_DELTA} up to rho=0.5, "
                                  f"{VI_DELTA_HIGH_LOAD} above; delta/2 is the fine grid of "
                                  "the Richardson pair)"),
            Parameter("umax", PositiveReal(), required=False,
                      description="backlog truncation of value iteration (default by load)"),
            *_SIM_PARAMETERS,
        )
        return ModelSpec(
            name=self.name,
            summary=(f"dispatching policy declared in {self.where}: argmin_i of the score "
                     f"{text}; ET by value-iteration policy evaluation (m <= 2), ET_sim by "
                     "simulation (a confidence interval)"),
            parameters=(*self.declared, *own), solve=self.solve,
            scalar_outputs=_score_scalars, derivation=self.derivation,
            # a score that reads n has no value-iteration results: asking for them is an input
            # error at load time (with a did-you-mean), not an inconclusive verdict
            outputs=tuple(k for k in OUTPUTS if not (self.policy.uses_counts
                                                     and k in ("ET", "error_estimate"))))


def _score_scalars(r: Result) -> dict[str, float]:
    out = {}
    if "ET" in r.values:
        out["ET"] = float(r.values["ET"])
    if "ET_sim" in r.values:
        out["ET_sim"] = float(r.values["ET_sim"].mean)
    return out


def declare_dispatch_score(name: str, table: Mapping[str, Any],
                           parameters: tuple[Parameter, ...], where: str) -> ModelSpec:
    """Build the model of a ``[models.NAME] kind = "dispatch-score"`` declaration.

    Parameters
    ----------
    name : str
        The model's name in the claims file.
    table : mapping
        The keys of :data:`KEYS` (``score`` required).
    parameters : tuple of Parameter
        The declared parameters (symbols of the score).
    where : str
        The key path as typed (``models.NAME``), for error messages.

    Returns
    -------
    ModelSpec
        Parameters: the declared ones, then ``m, rho, sizes, scv, method, delta, umax, n_jobs,
        n_batches, level``; outputs ``ET`` (value iteration), ``error_estimate``, ``ET_sim``,
        ``EW_sim`` (simulation).

    Raises
    ------
    InvalidParameter
        An unknown or missing key, a score outside the whitelist or with an undeclared symbol
        (naming ``where.score``), a declared parameter named like one of the model's own.
    """
    names = []
    for p in parameters:
        if p.name in _OWN or p.name in STATE_SYMBOLS or p.name in MODEL_SYMBOLS:
            raise InvalidParameter(f"{where}.parameters", p.name, "a name other than "
                                   + ", ".join((*STATE_SYMBOLS, *_OWN, "lam")),
                                   "the dispatch-score model has a symbol or parameter of "
                                   "that name")
        names.append(p.name)
    policy = _score_from(name, table, tuple(names), where)
    return _DeclaredScore(name, policy, tuple(parameters), where).spec()


DISPATCH_SCORE = ModelKind(
    kind="dispatch-score",
    summary=("a dispatching policy given by a per-server score s(u, n, x, i) (the job goes to "
             "argmin_i s): ET by value-iteration policy evaluation (m <= 2), ET_sim by "
             "simulation"),
    declare=declare_dispatch_score,
    keys=KEYS,
    outputs=OUTPUTS,
    example='''[models.size-aware-lwl]
kind = "dispatch-score"
parameters = { beta = "positive" }
score = "u + beta*x*u"
description = "least work left, long queues penalised for large jobs"
''',
)
