r"""The ``gg1-sim`` model: a GI/G/1 FCFS queue of two named laws, simulated, beside its exact
waiting time where one exists (:data:`GG1_SIM`, listed in :mod:`symq.me.registration`).

``symq solve gg1-sim lam=0.8 arrivals=erlang arrival_scv=0.5 sizes=h2 scv=4`` draws
interarrival times of mean ``1/lam`` and squared coefficient of variation ``arrival_scv`` and
service times of mean ``mean`` and SCV ``scv``, both from the named laws of :mod:`symq.laws`,
and returns

* ``EW``, ``P_wait`` and ``ccdf`` (:math:`P(W > t)`): batch-means confidence intervals from the
  Lindley recursion (:func:`symq.me.gg1.simulate_gg1_waiting`);
* ``EW_exact``, ``P_wait_exact`` and ``ccdf_exact``: the spectral factorisation of
  :mod:`symq.me.gg1_spectral` (``ccdf_exact`` inverted with its two-method error bar), where the
  service law has a rational transform (``exp``, ``erlang``, ``h2``) and the interarrival law a
  rational or delay transform (also ``det``); ``None`` otherwise, which a claim reports as
  inconclusive;
* ``EW_matrix``: the PH/PH/1 queue by matrix-geometric methods (:mod:`symq.me.phph1`), where
  both laws are phase-type: a second exact route, independent of the first;
* ``rho`` and Kingman's upper bound ``kingman_upper`` (Kingman 1962).

Examples
--------
>>> r = GG1_SIM.run({"lam": 0.5, "arrivals": "erlang", "arrival_scv": 0.5, "sizes": "erlang",
...                  "scv": 0.5, "n_jobs": 400_000}, rng=1)
>>> round(r["EW_exact"], 9) == round(r["EW_matrix"], 9), r["EW"].distance(r["EW_exact"]) < 4
(True, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sp

from symq.core.approximate import Approximate
from symq.core.errors import InvalidParameter
from symq.core.parameters import Choice, NonNegativeReal, Parameter, PositiveReal
from symq.core.randomness import RngLike
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result, ResultBase
from symq.core.simrun import run_parameters
from symq.core.simstats import ConfidenceInterval
from symq.laws import SIZE_LAWS, Deterministic, size_law, size_parameters
from symq.laws.protocol import Distribution

from .gg1 import gg1_references, simulate_gg1_waiting
from .gg1_spectral import gi_g1_waiting
from .phph1 import ph_ph1_waiting
from .transforms import Transform, invert

__all__ = ["GG1_SIM", "GG1Simulation", "solve_gg1_sim", "law_transform"]

NAME = "gg1-sim"

#: Simulated customers by default.
DEFAULT_JOBS = 1_000_000


def law_transform(law: Distribution, name: str) -> Transform | None:
    """The LST of a law as a :class:`~symq.me.transforms.Transform` in exact rationals: a
    phase-type law's :math:`\\alpha(sI - A)^{-1}(-A\\mathbf 1)`, a deterministic law's
    :math:`e^{-ds}`; None for a law with neither form."""
    s = sp.Symbol("s", positive=True)
    if isinstance(law, Deterministic):
        expr = sp.exp(-sp.nsimplify(float(law.mean()), rational=True) * s)
    else:
        try:
            ph = law.phase_type()
        except InvalidParameter:        # the laws layer's refusal: no phase-type form
            return None
        alpha = sp.Matrix([[sp.nsimplify(float(a), rational=True) for a in ph.alpha]])
        A = sp.Matrix([[sp.nsimplify(float(x), rational=True) for x in row] for row in ph.A])
        exit_rates = -A * sp.ones(A.shape[0], 1)
        resolvent = (s * sp.eye(A.shape[0]) - A).inv()
        expr = sp.cancel((alpha * resolvent * exit_rates)[0, 0])
    return Transform(expr, "lst", (), name)


@dataclass(frozen=True)
class GG1Simulation(ResultBase):
    """A GI/G/1 FCFS simulation beside its exact waiting time (``gg1-sim``; module docstring).

    Attributes
    ----------
    EW, P_wait, ccdf : ConfidenceInterval
        :math:`E[W]`, :math:`P(W > 0)` and :math:`P(W > t)`, simulated.
    EW_exact, P_wait_exact : float or None
        By spectral factorisation (None: no rational service transform).
    ccdf_exact : Approximate or None
        :math:`P(W > t)` inverted from the exact :math:`W^*`, with its error bar.
    EW_matrix : float or None
        By the PH/PH/1 QBD (None: a law without a phase-type form).
    rho, kingman_upper, t : float
    method, exactness, seconds
    """

    summary: ClassVar[tuple[str, ...]] = ("EW", "EW_exact", "EW_matrix", "rho")

    EW: ConfidenceInterval
    P_wait: ConfidenceInterval
    ccdf: ConfidenceInterval
    EW_exact: float | None
    P_wait_exact: float | None
    ccdf_exact: Approximate | None
    EW_matrix: float | None
    rho: float
    kingman_upper: float
    t: float
    method: str = ("Lindley recursion, batch means; spectral factorisation and a PH/PH/1 QBD "
                   "where the laws allow")
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0


def solve_gg1_sim(lam: float, arrivals: str = "exp", arrival_scv: float | None = None,
                  sizes: str = "exp", mean: float = 1.0, scv: float | None = None,
                  t: float = 1.0, n_jobs: int = DEFAULT_JOBS, n_batches: int = 40,
                  level: float = 0.95, rng: RngLike = None,
                  progress: bool = False) -> GG1Simulation:
    """Simulate a GI/G/1 FCFS queue of two named laws, with its exact wait where one exists.

    Parameters
    ----------
    lam : float
        Arrival rate (interarrival mean ``1/lam``); ``lam * mean < 1``.
    arrivals, arrival_scv
        The interarrival law and its SCV (:func:`symq.laws.size_law`).
    sizes, mean, scv
        The service law, its mean and SCV.
    t : float
        The point of ``ccdf``.
    n_jobs, n_batches, level, rng, progress
        As in :func:`symq.me.mg1.solve_mg1_sim`.

    Raises
    ------
    InvalidParameter
        Naming the law parameter out of its domain; ``n_jobs`` too short for the load.
    StabilityError
        :math:`\\rho \\ge 1`.
    """
    start = time.perf_counter()
    interarrival = size_law(arrivals, 1.0 / lam, arrival_scv)
    service = size_law(sizes, mean, scv)
    est = simulate_gg1_waiting(interarrival, service, [0.0, t], n_jobs=n_jobs, rng=rng,
                               n_batches=n_batches, level=level, progress=progress)
    ref = gg1_references(1.0 / lam, float(interarrival.variance()), mean,
                         float(service.variance()))
    ew_exact = p_exact = None
    ccdf_exact = None
    a_lst, s_lst = law_transform(interarrival, "arrivals"), law_transform(service, "sizes")
    phase_type = not isinstance(service, Deterministic)
    if a_lst is not None and s_lst is not None and phase_type:
        exact = gi_g1_waiting(a_lst, s_lst)
        ew_exact, p_exact = exact.EW, exact.P_wait
        inv = invert(exact.waiting, [t], {}, "ccdf", 10)
        ccdf_exact = Approximate(float(inv.value[0]), float(inv.error[0]),
                                 f"ccdf at {t:g}: {inv.method}")
    ew_matrix = None
    if phase_type and s_lst is not None and a_lst is not None \
            and not isinstance(interarrival, Deterministic):
        ew_matrix = ph_ph1_waiting(interarrival, service).EW
    return GG1Simulation(est.EW, est.ccdf[0], est.ccdf[1], ew_exact, p_exact, ccdf_exact,
                         ew_matrix, ref.rho, ref.kingman_upper, t,
                         seconds=time.perf_counter() - start)


def _scalar_outputs(result: Result) -> dict[str, Any]:
    v = result.values
    exact = v["ccdf_exact"]
    return {"EW": v["EW"].mean, "EW_half_width": v["EW"].half_width,
            "P_wait": v["P_wait"].mean, "P_wait_half_width": v["P_wait"].half_width,
            "ccdf": v["ccdf"].mean, "ccdf_half_width": v["ccdf"].half_width,
            "EW_exact": math.nan if v["EW_exact"] is None else v["EW_exact"],
            "ccdf_exact": math.nan if exact is None else exact.value,
            "EW_matrix": math.nan if v["EW_matrix"] is None else v["EW_matrix"],
            "rho": v["rho"]}


GG1_SIM = ModelSpec(
    name=NAME,
    summary=("GI/G/1 FCFS queue of two named laws by simulation (Lindley recursion): EW, "
             "P_wait, P(W > t) with confidence intervals; exact by spectral factorisation and "
             "by a PH/PH/1 QBD where the laws allow"),
    parameters=(
        Parameter("lam", PositiveReal(), typical=0.5,
                  description="arrival rate (interarrival mean 1/lam); lam*mean must be < 1"),
        Parameter("arrivals", Choice(SIZE_LAWS), typical="exp", required=False,
                  default="exp", description="interarrival law: " + ", ".join(SIZE_LAWS)),
        Parameter("arrival_scv", NonNegativeReal(), required=False,
                  description="SCV of the interarrival times (omit for exp and det)"),
        *size_parameters("exp"),
        Parameter("t", PositiveReal(), typical=1.0, required=False, default=1.0,
                  description="the point t of ccdf = P(W > t)"),
        *run_parameters(DEFAULT_JOBS, n_batches=40,
                        jobs="customers simulated (warm-up included, chosen by MSER-5)"),
    ),
    solve=solve_gg1_sim,
    scalar_outputs=_scalar_outputs,
    outputs=("EW", "P_wait", "ccdf", "EW_exact", "P_wait_exact", "ccdf_exact", "EW_matrix",
             "rho", "kingman_upper"),
)
