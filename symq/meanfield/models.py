"""The registered mean-field models: ``supermarket``, ``refined-jsq``, ``jsq-ph``, ``refined-jsq-ph``.

Registered with :func:`symq.core.registry.register_model` on import, so that
``symq solve supermarket d=2 lam=0.9`` and ``symq solve refined-jsq d=2 lam=0.9 N=100`` work
without any edit of the CLI.  ``lam`` is declared positive only: ``lam >= 1`` is an unstable
system and raises :class:`~symq.core.errors.StabilityError` in the solver, not
:class:`~symq.core.errors.InvalidParameter`.
"""

from __future__ import annotations

from symq.core.parameters import IntegerAtLeast, Interval, Parameter, PositiveReal
from symq.core.registry import ModelSpec, register_model
from symq.core.result import Result

from .supermarket import refined_jsq, solve_supermarket
from .jsq_ph import jsq_ph_model
from .phase_type import hyperexponential2
from .refined_ph import refined_jsq_ph

__all__ = ["SUPERMARKET", "REFINED_JSQ", "JSQ_PH", "REFINED_JSQ_PH", "D", "LAM", "N"]

D = Parameter("d", IntegerAtLeast(1), typical=2, description="queues sampled per arrival")
LAM = Parameter("lam", PositiveReal(), typical=0.9,
                description="per-server arrival rate (unit service rate); must be < 1")
N = Parameter("N", IntegerAtLeast(1), typical=100, description="number of servers")


def _supermarket(d: int, lam: float) -> Result:
    return solve_supermarket(d, lam)


def _refined(d: int, lam: float, N: int) -> Result:  # noqa: N803
    return refined_jsq(d, lam, N)


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
    alpha, A = hyperexponential2(1.0, scv, f)  # noqa: N806
    return refined_jsq_ph(d, lam, alpha, A, N)


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
