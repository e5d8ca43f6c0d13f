"""The registered mean-field models: ``supermarket``, ``refined-jsq``, ``jsq-ph``, ``refined-jsq-ph``.

Registered with :func:`symq.core.registry.register_model` on import, so that
``symq solve supermarket d=2 lam=0.9`` and ``symq solve refined-jsq d=2 lam=0.9 N=100`` work
without any edit of the CLI.  These adapters are the only place where the solvers' result types
(:class:`~symq.meanfield.results.SupermarketFixedPoint`, :class:`~symq.meanfield.results.RefinedJSQ`,
:class:`~symq.meanfield.jsq_ph.JSQPHFixedPoint`) become the CLI's JSON (a generic
:class:`~symq.core.result.Result`, whose keys are the command line's contract).  ``lam`` is declared positive only: ``lam >= 1`` is an unstable
system and raises :class:`~symq.core.errors.StabilityError` in the solver, not
:class:`~symq.core.errors.InvalidParameter`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from symq.core.parameters import IntegerAtLeast, Interval, Parameter, PositiveReal
from symq.core.registry import ModelSpec, register_model
from symq.core.result import Exactness, Result

from .jsq_ph import product_form_ET, product_form_residual, solve_jsq_ph
from .phase_type import hyperexponential2
from .refined_ph import refined_jsq_ph
from .results import RefinedJSQ
from .supermarket import refined_jsq, solve_supermarket

__all__ = ["SUPERMARKET", "REFINED_JSQ", "JSQ_PH", "REFINED_JSQ_PH", "D", "LAM", "N",
           "jsq_ph_model"]

D = Parameter("d", IntegerAtLeast(1), typical=2, description="queues sampled per arrival")
LAM = Parameter("lam", PositiveReal(), typical=0.9,
                description="per-server arrival rate (unit service rate); must be < 1")
N = Parameter("N", IntegerAtLeast(1), typical=100, description="number of servers")


def _supermarket(d: int, lam: float) -> Result:
    fp = solve_supermarket(d, lam)
    values: dict[str, Any] = {"ET": fp.ET, "EQ": fp.EQ, "EW": fp.EW, "P_wait": fp.P_wait,
                              "tail": fp.tail.tolist(), "tail_levels": fp.tail_levels,
                              "tail_rest": fp.tail_rest}
    if fp.ET_heavy_traffic is not None:
        values["ET_heavy_traffic"] = fp.ET_heavy_traffic
    values["truncation_bound"] = fp.truncation_bound
    values["K"] = fp.K
    return Result(model="supermarket", params={"d": fp.d, "lam": fp.lam}, values=values,
                  method=fp.method, exactness=fp.exactness, timings=fp.timings)


def _refined_values(r: RefinedJSQ, keys: tuple[str, ...]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in keys:
        value = getattr(r, key)
        values[key] = value.tolist() if isinstance(value, np.ndarray) else value
    return values


def _refined(d: int, lam: float, N: int) -> Result:  # noqa: N803
    r = refined_jsq(d, lam, N)
    keys = ("pi", "V", "EQ", "EQ_N", "ET", "ET_N", "K", "truncation_bound",
            "max_real_eigenvalue") + (("pi_rest",) if r.pi_rest is not None else ()) + (
            "refined_valid", "refined_invalid")
    return Result(model="refined-jsq", params={"d": r.d, "lam": r.lam, "N": r.N},
                  values=_refined_values(r, keys), method=r.method, exactness=r.exactness,
                  timings=r.timings)


def _supermarket_scalars(result: Result) -> dict[str, float]:
    v = result.values
    return {"ET": float(v["ET"]), "EQ": float(v["EQ"]), "EW": float(v["EW"]),
            "P_wait": float(v["P_wait"])}


def _refined_scalars(result: Result) -> dict[str, float]:
    v = result.values
    return {"EQ": float(v["EQ"]), "EQ_N": float(v["EQ_N"]), "ET": float(v["ET"]),
            "ET_N": float(v["ET_N"])}


SUPERMARKET = register_model(ModelSpec(
    name="supermarket",
    summary=("JSQ(d) supermarket model, exponential service, mean-field fixed point "
             "(Vvedenskaya-Dobrushin-Karpelevich 1996; Mitzenmacher 2001)"),
    parameters=(D, LAM),
    solve=_supermarket,
    scalar_outputs=_supermarket_scalars,
    paper="li-supermarket",
))

REFINED_JSQ = register_model(ModelSpec(
    name="refined-jsq",
    summary=("JSQ(d) with N servers: refined mean field E[X^N] ~ pi + V/N "
             "(Gast & Van Houdt, SIGMETRICS 2018, Theorem 1)"),
    parameters=(D, LAM, N),
    solve=_refined,
    scalar_outputs=_refined_scalars,
    paper="li-supermarket",
))

SCV = Parameter("scv", PositiveReal(), typical=10,
                description="squared coefficient of variation of the H2 job size (>= 1)")
F_BRANCH = Parameter("f", Interval(0, 1, left_open=True, right_open=True), typical=0.5,
                     description="fraction of the mean job size carried by H2 branch 1")


def _refined_ph(d: int, lam: float, scv: float, f: float, N: int) -> Result:  # noqa: N803
    r = refined_jsq_ph(d, lam, hyperexponential2(1.0, scv, f), N)
    keys = ("pi", "V", "u", "EQ", "EQ_N", "ET", "ET_N", "EW", "EW_N", "K", "truncation_bound",
            "drift_residual", "max_real_eigenvalue", "refined_valid", "refined_invalid")
    return Result(model="refined-jsq-ph", params={"d": r.d, "lam": r.lam, "N": r.N},
                  values=_refined_values(r, keys), method=r.method, exactness=r.exactness,
                  timings=r.timings)


def jsq_ph_model(d: int, lam: float, scv: float, f: float = 0.5) -> Result:
    """The registered ``jsq-ph`` model: JSQ(d), H2(mean 1, ``scv``, ``f``) service, FCFS.

    Returns
    -------
    Result
        ``values``: ``ET``, ``EQ``, ``EW``, ``tail`` (``u_1, ...`` while ``u_k >= 1e-16``),
        ``iterations``, ``residual`` (ODE drift at the fixed point), ``invariants``, ``K``,
        ``product_form_ET`` (Li's product form, i.e. the exponential-service value) and
        ``product_form_residual`` (max ODE drift of Li's candidate ``x_k = u_k theta``).

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
    mid = time.perf_counter()
    pf_res = float(np.max(product_form_residual(d, lam, law)))
    pf_et = product_form_ET(d, lam, law)
    values = {
        "ET": fp.ET, "EQ": fp.EQ, "EW": fp.EW, "tail": fp.tail(), "iterations": fp.iterations,
        "residual": fp.residual, "invariants": fp.invariants, "K": fp.K,
        "product_form_ET": pf_et, "product_form_residual": pf_res,
        "alpha": law.alpha.tolist(), "A": law.A.tolist(),
    }
    return Result(model="jsq-ph", params={"d": fp.d, "lam": fp.lam, "scv": float(scv), "f": float(f)},
                  values=values,
                  method=(f"cavity / level-dependent QBD iteration (as Hellemans & Van Houdt's "
                          f"SQ_PH.m), K={fp.K} levels, {fp.iterations} iterations, "
                          f"ODE residual {fp.residual:.1e}"),
                  exactness=Exactness.NUMERIC,
                  timings={"solve": mid - start, "product_form": time.perf_counter() - mid})


REFINED_JSQ_PH = register_model(ModelSpec(
    name="refined-jsq-ph",
    summary=("JSQ(d) with N servers and H2(mean 1, scv, f) service, FCFS: refined mean field "
             "E[x^N] ~ pi + V/N (Gast & Van Houdt 2018, Theorem 1)"),
    parameters=(D, LAM, SCV, F_BRANCH, N),
    solve=_refined_ph,
    scalar_outputs=lambda r: {k: float(r.values[k]) for k in ("EQ", "EQ_N", "ET", "ET_N", "EW",
                                                              "EW_N")},
    paper="li-supermarket",
))

JSQ_PH = register_model(ModelSpec(
    name="jsq-ph",
    summary=("JSQ(d) with H2(mean 1, scv, f) service, FCFS: true mean-field fixed point by the "
             "cavity QBD iteration, and the residual of Li's (2010) product-form candidate"),
    parameters=(D, LAM, SCV, F_BRANCH),
    solve=jsq_ph_model,
    scalar_outputs=lambda r: {k: float(r.values[k]) for k in
                              ("ET", "EQ", "EW", "product_form_ET", "product_form_residual")},
    paper="li-supermarket",
))
