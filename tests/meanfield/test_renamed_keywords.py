"""Issue 31: the job-size law is ``sizes=`` in every public mean-field function.

The former keywords (``service=``, and ``law=`` for the ODE helpers, :func:`fit_phase_type` and
:func:`q_steps`) still work for one release, with a
:class:`~symq.core.renamed.RenamedKeywordWarning` that names the new keyword; giving both names
is refused, naming the old one.
"""

from __future__ import annotations

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.core.renamed import RenamedKeywordWarning
from symq.laws import PhaseType, hyperexponential2
from symq.meanfield.attained.cavity import solve_attained
from symq.meanfield.attained.model import simulate_policy
from symq.meanfield.attained.plots import attained_policies_data, plot_attained_policies
from symq.meanfield.attained.policies import get_policy, mean_residual_life
from symq.meanfield.attained.simulation import simulate_attained
from symq.meanfield.convergence import (
    convergence_rate,
    deviation_drift,
    drift,
    jacobian,
    mg1_comparison,
    mph1_tail,
    spectral_abscissa,
)
from symq.meanfield.jsq_ph import (
    jsq_ph_drift,
    product_form_candidate,
    product_form_ET,
    product_form_residual,
    solve_jsq_ph,
)
from symq.meanfield.nonlinear import jsq_ph_qbd
from symq.meanfield.refined_ph import jsq_ph_process, refined_jsq_ph
from symq.meanfield.service_fit import fit_phase_type
from symq.meanfield.simulation import q_steps, simulate_jsq

H2 = hyperexponential2(1.0, 4.0, 0.5)
X = np.full((6, 2), 0.05)  # an occupancy vector of K = 6 levels, 2 phases
TABLE = [[1.0, 2.0]]

#: (function, the former keyword, the other arguments): every renamed public function.
RENAMED = [
    (solve_attained, "service", dict(policy="SQ", d=2, lam=0.5, delta=1.0, rep_max=5.0)),
    (simulate_policy, "service", dict(policy="SQ", N=10, d=2, lam=0.5, n_jobs=10_000)),
    (attained_policies_data, "service", dict(policies=("SQ",), d=2, loads=(0.5,))),
    (plot_attained_policies, "service", dict(policies=("SQ",), d=2, loads=(0.5,))),
    (mean_residual_life, "service", dict(a=[0.0, 1.0])),
    (get_policy("LEW").score_table, "service", dict(lower=[0.0, 1.0], B=3)),
    (simulate_attained, "service", dict(N=10, d=2, lam=0.5, scores=TABLE, delta=1.0)),
    (convergence_rate, "service", dict(d=2, lam=0.5)),
    (mph1_tail, "service", dict(lam=0.5, levels=4)),
    (mg1_comparison, "service", dict(d=2, lam=0.5)),
    (jsq_ph_drift, "service", dict(x=X, d=2, lam=0.5)),
    (solve_jsq_ph, "service", dict(d=2, lam=0.5)),
    (product_form_candidate, "service", dict(d=2, lam=0.5)),
    (product_form_residual, "service", dict(d=2, lam=0.5)),
    (product_form_ET, "service", dict(d=2, lam=0.5)),
    (jsq_ph_qbd, "service", dict(d=2, lam=0.5)),
    (jsq_ph_process, "service", dict(d=2, K=3)),
    (refined_jsq_ph, "service", dict(d=2, lam=0.5, N=50)),
    (simulate_jsq, "service", dict(N=10, d=2, lam=0.5, n_jobs=10_000)),
    (drift, "law", dict(X=X, d=2, lam=0.5)),
    (deviation_drift, "law", dict(Y=X, P=X, d=2, lam=0.5)),
    (jacobian, "law", dict(X=X, d=2, lam=0.5)),
    (spectral_abscissa, "law", dict(X=X, d=2, lam=0.5)),
    (fit_phase_type, "law", dict()),
    (q_steps, "law", dict()),
]

#: The cheap ones, run under both names: the same numbers.
CHEAP = {"mean_residual_life", "score_table", "mph1_tail", "jsq_ph_drift", "solve_jsq_ph",
         "product_form_candidate", "product_form_residual", "product_form_ET", "drift",
         "deviation_drift", "jacobian", "spectral_abscissa", "fit_phase_type", "q_steps",
         "refined_jsq_ph", "solve_attained"}


def _id(case):
    return f"{case[0].__name__}({case[1]}=)"


@pytest.mark.parametrize("function,old,kwargs", RENAMED, ids=[_id(c) for c in RENAMED])
def test_both_names_together_are_refused_naming_the_old_one(function, old, kwargs):
    """The decorator is in place on every renamed function (nothing is computed)."""
    with pytest.raises(InvalidParameter, match=rf"parameter {old}=.* must be omitted when "
                                               r"sizes= is given"):
        function(**kwargs, **{old: H2, "sizes": H2})


def _same(a, b):
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, PhaseType):
        return np.array_equal(a.alpha, b.alpha) and np.array_equal(a.A, b.A)
    if hasattr(a, "ph"):  # PHApproximation
        return _same(a.ph, b.ph)
    if hasattr(a, "ET"):
        return a.ET == b.ET
    if hasattr(a, "ET_N"):
        return a.ET_N == b.ET_N
    return a == b


@pytest.mark.parametrize("function,old,kwargs",
                         [c for c in RENAMED if c[0].__name__ in CHEAP],
                         ids=[_id(c) for c in RENAMED if c[0].__name__ in CHEAP])
def test_the_former_keyword_still_works_with_a_warning(function, old, kwargs):
    with pytest.warns(RenamedKeywordWarning, match=rf"\({old}=\.\.\.\) is renamed .*\(sizes="):
        before = function(**kwargs, **{old: H2})
    assert _same(before, function(**kwargs, sizes=H2))
