"""The mean-field models of ``symq solve``: ``supermarket``, ``refined-jsq``, ``jsq-ph``,
``refined-jsq-ph`` and the simulation model ``jsq-sim``.

Plain :class:`~symq.core.registry.ModelSpec` objects: importing this module registers nothing.
:mod:`symq.meanfield.registration` lists them, and :func:`symq.core.registry.load_domains`
registers them, so that ``symq solve supermarket d=2 lam=0.9`` and
``symq solve refined-jsq d=2 lam=0.9 N=100`` work without any edit of the CLI.  Each model's
solver returns its typed result (:class:`~symq.meanfield.results.SupermarketFixedPoint`,
:class:`~symq.meanfield.results.RefinedJSQ`, :class:`~symq.meanfield.results.JSQPHComparison`,
:class:`~symq.meanfield.simulation.JSQEstimate`), whose fields the registry turns into the
values of a :class:`~symq.core.result.Result` (:meth:`~symq.core.result.ResultBase.outputs`;
the parameters ``d``, ``lam``, ``N`` are the result's ``params``, not its values).  ``lam`` is
declared positive only: ``lam >= 1`` is an unstable system and raises
:class:`~symq.core.errors.StabilityError` in the solver, not
:class:`~symq.core.errors.InvalidParameter`.  ``outputs=`` lists the result keys a claim may name
as ``MODEL:KEY``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from symq.core.errors import MISSING, InvalidParameter
from symq.core.parameters import Choice, IntegerAtLeast, Interval, Parameter, PositiveReal
from symq.core.randomness import RngLike
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result
from symq.core.simrun import run_parameters
from symq.laws import as_phase_type, hyperexponential2, size_law

from .jsq_ph import product_form_ET, product_form_residual, solve_jsq_ph
from .refined_ph import refined_jsq_ph
from .results import JSQPHComparison, RefinedJSQ
from .simulation import JSQEstimate, simulate_jsq
from .supermarket import refined_jsq, solve_supermarket

__all__ = ["SUPERMARKET", "REFINED_JSQ", "JSQ_PH", "REFINED_JSQ_PH", "JSQ_SIM",
           "D", "LAM", "N", "jsq_ph_model", "jsq_sim_model"]

D = Parameter("d", IntegerAtLeast(1), typical=2, description="queues sampled per arrival")
LAM = Parameter("lam", PositiveReal(), typical=0.9,
                description="per-server arrival rate (unit service rate); must be < 1")
N = Parameter("N", IntegerAtLeast(1), typical=100, description="number of servers")


def _supermarket_scalars(result: Result) -> dict[str, float]:
    v = result.values
    return {"ET": float(v["ET"]), "EQ": float(v["EQ"]), "EW": float(v["EW"]),
            "P_wait": float(v["P_wait"])}


def _refined_scalars(result: Result) -> dict[str, float]:
    v = result.values
    return {"EQ": float(v["EQ"]), "EQ_N": float(v["EQ_N"]), "ET": float(v["ET"]),
            "ET_N": float(v["ET_N"])}


SUPERMARKET = ModelSpec(
    name="supermarket",
    summary=("JSQ(d) supermarket model, exponential service, mean-field fixed point "
             "(Vvedenskaya-Dobrushin-Karpelevich 1996; Mitzenmacher 2001)"),
    parameters=(D, LAM),
    solve=solve_supermarket,
    scalar_outputs=_supermarket_scalars,
    paper="li-supermarket",
    outputs=("ET", "EQ", "EW", "P_wait", "tail", "tail_levels", "tail_rest", "ET_heavy_traffic",
             "truncation_bound", "K"),
)

ORDER = Parameter("order", IntegerAtLeast(1, 2), typical=1, required=False, default=1,
                  description="terms of the expansion: 1 (V/N, Gast & Van Houdt 2018) or 2 "
                              "(also V2/N^2, Gast, Bortolussi & Tribastone 2019: outputs V2, "
                              "EQ_N2, ET_N2, EW_N2, refined2_valid)")

REFINED_JSQ = ModelSpec(
    name="refined-jsq",
    summary=("JSQ(d) with N servers: refined mean field E[X^N] ~ pi + V/N (Gast & Van Houdt, "
             "SIGMETRICS 2018, Theorem 1), order=2 adds V2/N^2 (Gast, Bortolussi & "
             "Tribastone 2019)"),
    parameters=(D, LAM, N, ORDER),
    solve=refined_jsq,
    scalar_outputs=_refined_scalars,
    paper="li-supermarket",
    outputs=("pi", "V", "u", "EQ", "EQ_N", "ET", "ET_N", "EW", "EW_N", "K", "truncation_bound",
             "drift_residual", "max_real_eigenvalue", "pi_rest", "refined_valid",
             "refined_invalid", "V2", "EQ_N2", "ET_N2", "EW_N2", "refined2_valid",
             "refined2_invalid"),
)

SCV = Parameter("scv", PositiveReal(), typical=10,
                description="squared coefficient of variation of the H2 job size (>= 1)")
F_BRANCH = Parameter("f", Interval(0, 1, left_open=True, right_open=True), typical=0.5,
                     description="fraction of the mean job size carried by H2 branch 1")


def _refined_ph(d: int, lam: float, scv: float, f: float, N: int) -> RefinedJSQ:
    return refined_jsq_ph(d, lam, hyperexponential2(1.0, scv, f), N)


def jsq_ph_model(d: int, lam: float, scv: float, f: float = 0.5) -> JSQPHComparison:
    """The registered ``jsq-ph`` model: JSQ(d), H2(mean 1, ``scv``, ``f``) service, FCFS.

    Returns
    -------
    JSQPHComparison
        ``ET``, ``EQ``, ``EW``, ``tail`` (``u_1, ...`` while ``u_k >= 1e-16``),
        ``iterations``, ``residual`` (ODE drift at the fixed point), ``invariants``, ``K``,
        ``product_form_ET`` (Li's product form, i.e. the exponential-service value),
        ``product_form_residual`` (max ODE drift of Li's candidate ``x_k = u_k theta``) and the
        law's ``alpha``, ``A``.

    Raises
    ------
    InvalidParameter
        ``scv < 1`` or ``f`` outside ``(0, 1)`` (from :func:`hyperexponential2`), bad ``d``/``lam``.
    StabilityError
        ``lam >= 1``.
    """
    start = time.perf_counter()
    law = hyperexponential2(1.0, scv, f)
    fp = solve_jsq_ph(d, lam, law)
    pf_res = float(np.max(product_form_residual(d, lam, law)))
    pf_et = product_form_ET(d, lam, law)
    return JSQPHComparison(
        ET=fp.ET, EQ=fp.EQ, EW=fp.EW, tail=fp.tail(), iterations=fp.iterations,
        residual=fp.residual, invariants=fp.invariants, K=fp.K, product_form_ET=pf_et,
        product_form_residual=pf_res, alpha=law.alpha, A=law.A,
        method=(f"cavity / level-dependent QBD iteration (as Hellemans & Van Houdt's "
                f"SQ_PH.m), K={fp.K} levels, {fp.iterations} iterations, "
                f"ODE residual {fp.residual:.1e}"),
        exactness=Exactness.NUMERIC, seconds=time.perf_counter() - start)


REFINED_JSQ_PH = ModelSpec(
    name="refined-jsq-ph",
    summary=("JSQ(d) with N servers and H2(mean 1, scv, f) service, FCFS: refined mean field "
             "E[x^N] ~ pi + V/N (Gast & Van Houdt 2018, Theorem 1)"),
    parameters=(D, LAM, SCV, F_BRANCH, N),
    solve=_refined_ph,
    scalar_outputs=lambda r: {k: float(r.values[k]) for k in ("EQ", "EQ_N", "ET", "ET_N", "EW",
                                                              "EW_N")},
    paper="li-supermarket",
    outputs=("pi", "V", "u", "EQ", "EQ_N", "ET", "ET_N", "EW", "EW_N", "K", "truncation_bound",
             "drift_residual", "max_real_eigenvalue", "refined_valid", "refined_invalid"),
)

JSQ_PH = ModelSpec(
    name="jsq-ph",
    summary=("JSQ(d) with H2(mean 1, scv, f) service, FCFS: true mean-field fixed point by the "
             "cavity QBD iteration, and the residual of Li's (2010) product-form candidate"),
    parameters=(D, LAM, SCV, F_BRANCH),
    solve=jsq_ph_model,
    scalar_outputs=lambda r: {k: float(r.values[k]) for k in
                              ("ET", "EQ", "EW", "product_form_ET", "product_form_residual")},
    paper="li-supermarket",
    outputs=("ET", "EQ", "EW", "tail", "iterations", "residual", "invariants", "K",
             "product_form_ET", "product_form_residual", "alpha", "A"),
)

#: The job-size laws of ``jsq-sim``: the names of :data:`symq.laws.SIZE_LAWS` whose law has a
#: phase-type form the JSQ kernel can walk (``det``, ``gamma``, ``lognormal``, ... have none).
JSQ_SIM_LAWS = ("exp", "h2", "erlang")
SIZES = Parameter("sizes", Choice(JSQ_SIM_LAWS), typical="exp", required=False,
                  default="exp",
                  description="job-size law, mean 1: exp, h2 (H2(1, scv, f)) or erlang (scv = 1/k)")
#: ``scv`` and ``f`` of ``jsq-ph``, optional here (``scv`` for ``sizes=h2`` or ``erlang``, ``f``
#: for ``sizes=h2`` only).
SCV_H2 = dataclasses.replace(SCV, required=False, default=None,
                             description="squared coefficient of variation of the job size "
                                         "(>= 1 for sizes=h2, 1/k for sizes=erlang)")
F_H2 = dataclasses.replace(F_BRANCH, required=False, default=None,
                           description=F_BRANCH.description + "; sizes=h2 only (default 0.5)")
#: Departures simulated by default: about 0.3 s at N = 100 (10^6 jobs at 3-4 million a second).
SIM_JOBS = 10**6


def jsq_sim_model(N: int, d: int, lam: float, sizes: str = "exp",
                  scv: float | None = None, f: float | None = None, n_jobs: int = SIM_JOBS,
                  n_batches: int = 30, level: float = 0.95, rng: RngLike = None,
                  progress: bool = False) -> JSQEstimate:
    """The registered ``jsq-sim`` model: :func:`~symq.meanfield.simulation.simulate_jsq` with
    ``N`` servers, JSQ(``d``), per-server arrival rate ``lam``, exponential, H2(1, scv, f) or
    Erlang(k = 1/scv, mean 1) job sizes (mean 1, as ``jsq-ph``), FCFS, probes with replacement,
    started empty, the warm-up chosen from the data (MSER-5,
    :func:`symq.core.simoutput.analyse_series`).

    ``sizes`` is a name of :data:`JSQ_SIM_LAWS` (case-insensitive: the former ``service=H2``
    is read as ``sizes=h2``, with a warning, by :attr:`~symq.core.registry.ModelSpec.renamed`).

    Returns
    -------
    JSQEstimate
        Its values (the registered model's): ``ET``, ``EW``, ``EQ``, ``utilisation`` as
        :class:`~symq.core.simstats.ConfidenceInterval` (batch means, ``n_batches`` batches,
        confidence ``level``), ``tail`` (time-average fractions ``u_1..u_30`` of servers with at
        least ``k`` jobs, no interval), ``n_jobs``, ``n_batches``, ``jobs_per_second``.

    Raises
    ------
    InvalidParameter
        ``scv`` or ``f`` with ``sizes=exp``, ``f`` with ``sizes=erlang``, ``scv`` missing with
        ``sizes=h2`` or ``erlang``, an ``scv`` the law cannot have, values out of their domains.
    StabilityError
        ``lam >= 1``.
    """
    sizes = str(sizes).lower()
    if sizes == "exp":
        for name, value in (("scv", scv), ("f", f)):
            if value is not None and not (name == "scv" and value == 1):
                raise InvalidParameter(name, value, "absent with sizes=exp",
                                       "set sizes=h2 for a hyperexponential job size")
        law = None
        law_text = "exp(1)"
    elif sizes == "erlang":
        if f is not None:
            raise InvalidParameter("f", f, "absent with sizes=erlang",
                                   "f is the branch probability of sizes=h2")
        if scv is None:
            raise InvalidParameter("scv", MISSING, "1/k for an integer k >= 1 (sizes=erlang)")
        law = as_phase_type(size_law("erlang", 1.0, scv), "sizes")
        law_text = f"Erlang(k={law.order}, mean 1)"
    else:
        if scv is None:
            raise InvalidParameter("scv", MISSING, SCV.domain.describe() + " (sizes=h2)")
        f = 0.5 if f is None else f
        law = hyperexponential2(1.0, scv, f)
        law_text = f"H2(1, scv={scv:g}, f={f:g})"
    est = simulate_jsq(N, d, lam, law, n_jobs=n_jobs, n_batches=n_batches, level=level, rng=rng,
                       progress=progress)
    return dataclasses.replace(
        est, method=(f"simulation of JSQ({d}) with N={N} servers and {law_text} job sizes "
                     f"(Gillespie, numba), {est.n_jobs} departures, batch means over "
                     f"{est.n_batches} batches, {level:.0%} intervals"))


JSQ_SIM = ModelSpec(
    name="jsq-sim",
    summary=("finite-N JSQ(d) simulation (exponential or H2(1, scv, f) job sizes): ET, EW, EQ "
             "with confidence intervals (Mitzenmacher 2001's supermarket model at finite N)"),
    parameters=(
        N, D, LAM, SIZES, SCV_H2, F_H2,
        *run_parameters(SIM_JOBS, minimum_jobs=1000,
                        jobs="departures simulated (warm-up included, chosen by MSER-5)"),
    ),
    solve=jsq_sim_model,
    scalar_outputs=lambda r: {k: float(r.values[k].mean) for k in ("ET", "EW", "EQ")},
    paper="li-supermarket",
    outputs=("ET", "EW", "EQ", "utilisation", "tail", "n_jobs", "n_batches", "jobs_per_second"),
    renamed={"service": "sizes"},
)
