"""Mean-field engine: symbolic population processes, refined mean field, supermarket JSQ(d).

* :mod:`~symq.meanfield.population`: :class:`PopulationProcess`, a density-dependent
  population process declared with sympy rates; drift, Jacobian, Hessian and diffusion matrix
  derived once and compiled once; ODE, fixed point (ODE + guarded Newton), local stability
  and the refined ``1/N`` term (Gast & Van Houdt, SIGMETRICS 2018, Theorem 1).
* :mod:`~symq.meanfield.expansion`: the size expansion to order ``1/N^2`` (Gast, Bortolussi &
  Tribastone, Performance Evaluation 2019), in steady state and transient.
* :mod:`~symq.meanfield.supermarket`: JSQ(d) with exponential service (Vvedenskaya,
  Dobrushin, Karpelevich 1996; Mitzenmacher 2001): closed form checked symbolically,
  numeric fixed point, metrics, refined mean field.
* :mod:`~symq.laws` and :mod:`~symq.meanfield.jsq_ph`: JSQ(d) with
  phase-type service, FCFS (cavity / level-dependent QBD iteration) and Li's product form;
* :mod:`~symq.meanfield.refined_ph`: the refined ``1/N`` term for phase-type service;
* :mod:`~symq.meanfield.nonlinear`: nonlinear fixed points pi = stat(Q(pi)) (Li 2016) of
  level-dependent QBDs, each solved by backward R-recursion (the UL-type RG-factorization) of
  :class:`symq.markov.level_reduction.LevelDependentQBD` (re-exported here);
* :mod:`~symq.meanfield.simulation`: the finite-N JSQ(d) simulator (numba);
* :mod:`~symq.meanfield.tails`: queue-length tail regimes under power-law service (Bramson, Lu,
  Prabhakar 2013) through PH laws over growing scales;
* :mod:`~symq.meanfield.attained`: load balancing with attained-service reporting (Hellemans &
  Van Houdt 2021): policies as ranking scores, cavity analysis with age layers, simulator;
* :mod:`~symq.meanfield.plots`: data and (optional) matplotlib plots of the JSQ(d) tail, of
  E[T] from the mean field, the refined mean field and simulation, and of the distance to the
  fixed point along the ODE;
* :mod:`~symq.meanfield.results`: the result types of the JSQ(d) solvers (frozen dataclasses
  on :class:`symq.core.result.ResultBase`, glossary names ``ET``, ``EQ``, ``EW``, ``tail``);
* :mod:`~symq.meanfield.models`: the registered ``supermarket``, ``refined-jsq``, ``jsq-ph``,
  ``refined-jsq-ph`` models and the simulation model ``jsq-sim`` (confidence intervals), each
  solver returning its typed result;
* :mod:`~symq.meanfield.declared` and :mod:`~symq.meanfield.declared_solve`: the model kind
  ``population``, a population process declared as text in a claims file (jumps and rate
  formulas), solved for its fixed point, stability, declared outputs and refined ``1/N`` terms.

Every entry that takes job sizes accepts one job-size law (a :class:`symq.laws.PhaseType`
such as :func:`symq.laws.hyper_erlang` returns, an ``(alpha, A)`` pair, or an ``ME`` law with a
phase-type form), converted in one place by :func:`symq.laws.as_phase_type`.  The phase-type
families live in :mod:`symq.laws` (``from symq.laws import hyperexponential2``); importing
them from ``symq.meanfield`` still works for one release, with a
:class:`~symq.core.renamed.RenamedKeywordWarning`.

Examples
--------
>>> from symq.meanfield import solve_supermarket
>>> round(solve_supermarket(1, 0.5).ET, 12)  # d = 1: M/M/1, E[T] = 1/(1 - lam)
2.0
"""

import warnings
from typing import Any

from . import attained
from .declared import POPULATION, declare_population
from .equilibria import EquilibriumSet, LimitSetSurvey, limit_sets
from .expansion import (
    MeanFieldExpansion,
    TransientExpansion,
    expansion_steady_state,
    expansion_transient,
)
from .jsq_ph import (
    JSQPHFixedPoint,
    jsq_ph_drift,
    product_form_candidate,
    product_form_ET,
    product_form_residual,
    solve_jsq_ph,
)
from .models import JSQ_PH, JSQ_SIM, REFINED_JSQ, REFINED_JSQ_PH, SUPERMARKET
from .nonlinear import (
    LevelDependentQBD,
    NonlinearQBD,
    jsq_exponential_qbd,
    jsq_ph_qbd,
    relative_entropy_trajectory,
)
from .plots import (
    jsq_response_data,
    jsq_tail_data,
    lyapunov_data,
    plot_jsq_response,
    plot_jsq_tail,
    plot_lyapunov,
)
from .population import (
    FixedPoint,
    PopulationProcess,
    PopulationStability,
    RefinedTerms,
    Trajectory,
)
from .refined_ph import jsq_ph_process, refined_jsq_ph
from .results import JSQPHComparison, RefinedJSQ, SupermarketFixedPoint
from .simulation import JSQEstimate, simulate_jsq
from .supermarket import (
    closed_form_symbolic,
    closed_form_tail,
    derivation,
    heavy_traffic_ET,
    jsq_process,
    refined_jsq,
    solve_supermarket,
    truncation_level,
    verify_closed_form,
)
from .tails import TailScan, powerlaw_hyperexponential, tail_regime_scan

__all__ = [
    "PopulationProcess", "FixedPoint", "PopulationStability", "RefinedTerms", "Trajectory",
    "MeanFieldExpansion", "TransientExpansion", "expansion_steady_state", "expansion_transient",
    "solve_supermarket", "refined_jsq", "SupermarketFixedPoint", "RefinedJSQ", "JSQPHComparison",
    "jsq_process", "closed_form_tail", "closed_form_symbolic",
    "truncation_level", "verify_closed_form", "derivation", "heavy_traffic_ET",
    "SUPERMARKET", "REFINED_JSQ", "JSQ_PH", "REFINED_JSQ_PH", "JSQ_SIM", "POPULATION",
    "declare_population", "refined_jsq_ph", "jsq_ph_process",
    "solve_jsq_ph", "JSQPHFixedPoint", "jsq_ph_drift", "product_form_candidate",
    "product_form_residual", "product_form_ET",
    "LevelDependentQBD", "NonlinearQBD", "jsq_exponential_qbd", "jsq_ph_qbd",
    "relative_entropy_trajectory",
    "simulate_jsq", "JSQEstimate",
    "tail_regime_scan", "TailScan", "powerlaw_hyperexponential",
    "jsq_tail_data", "plot_jsq_tail", "jsq_response_data", "plot_jsq_response",
    "lyapunov_data", "plot_lyapunov",
    "attained",
    "limit_sets", "EquilibriumSet", "LimitSetSurvey",
]

#: Phase-type families of :mod:`symq.laws` that ``symq.meanfield`` re-exported (one release).
_MOVED_TO_LAWS = frozenset({"erlang", "hyper_erlang", "hyperexponential2", "ph_from_me",
                            "ph_moments", "ph_stationary_phase"})


def __getattr__(name: str) -> Any:
    """``symq.meanfield.hyperexponential2`` and the other phase-type families of
    :mod:`symq.laws`: read for one release, with a warning naming their home."""
    if name in _MOVED_TO_LAWS:
        import symq.laws
        from symq.core.renamed import RenamedKeywordWarning

        warnings.warn(f"symq.meanfield.{name} is symq.laws.{name}: import it from symq.laws "
                      "(symq.meanfield re-exports it for one release)",
                      RenamedKeywordWarning, stacklevel=2)
        return getattr(symq.laws, name)
    raise AttributeError(f"module 'symq.meanfield' has no attribute {name!r}")
