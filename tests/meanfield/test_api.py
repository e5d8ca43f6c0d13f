"""The public surface of symq.meanfield: every exported name resolves, one calling convention."""

from __future__ import annotations

import importlib

import pytest

from symq.core.errors import InvalidParameter

PACKAGES = ["symq.meanfield", "symq.meanfield.attained"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_name_in_all_resolves(name: str) -> None:
    module = importlib.import_module(name)
    # ``from module import *`` raises AttributeError on the first name that does not resolve
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing


def test_population_stability_is_its_own_name() -> None:
    import symq.meanfield as mf

    assert "PopulationStability" in mf.__all__ and "Stability" not in mf.__all__
    assert mf.PopulationStability.__name__ == "PopulationStability"


def test_n_jobs_is_keyword_only_in_both_simulators() -> None:
    from symq.meanfield import simulate_jsq
    from symq.meanfield.attained import simulate_attained

    with pytest.raises(TypeError):
        simulate_attained(10, 2, 0.5, ([1.0], [[-1.0]]), [[1.0, 2.0]], 1.0, 10_000)  # type: ignore[misc]
    with pytest.raises(InvalidParameter, match="n_jobs is keyword-only"):
        simulate_jsq(10, 2, 0.5, 10_000)  # the fourth positional is the service law
    est = simulate_jsq(10, 2, 0.5, n_jobs=20_000, rng=1)
    assert est.n_jobs == 20_000


def test_one_job_size_law_everywhere() -> None:
    # the same Erlang-2 law (mean 1) as a PhaseType, an (alpha, A) pair and an ME law
    import scipy.stats

    from symq.laws import erlang
    from symq.me import ME
    from symq.meanfield import refined_jsq_ph, simulate_jsq, solve_jsq_ph
    from symq.meanfield.attained import simulate_policy, solve_attained

    ph = erlang(2, 1.0)
    pair = (ph.alpha.tolist(), ph.A.tolist())
    me = ME.erlang(2, 2)  # two phases of rate 2
    ref = solve_jsq_ph(2, 0.7, ph).ET
    assert solve_jsq_ph(2, 0.7, pair).ET == ref
    assert abs(solve_jsq_ph(2, 0.7, me).ET - ref) < 1e-10 * ref  # through Cumani's CF1 form
    kw = dict(delta=0.5, rep_max=5.0, B=30)
    att = solve_attained("LEW", 2, 0.7, ph, **kw).ET
    assert abs(solve_attained("LEW", 2, 0.7, me, **kw).ET - att) < 1e-9 * att
    assert refined_jsq_ph(2, 0.7, me, 50).ET_N == pytest.approx(refined_jsq_ph(2, 0.7, ph, 50).ET_N,
                                                                 rel=1e-8)
    est = simulate_jsq(20, 2, 0.7, me, n_jobs=40_000, rng=1)
    same = simulate_jsq(20, 2, 0.7, ph, n_jobs=40_000, rng=1)
    assert abs(est.ET.mean - same.ET.mean) < 1e-9  # the same tables up to rounding
    simulate_policy("LEW", 20, 2, 0.7, me, delta=0.5, rep_max=5.0, n_jobs=40_000, rng=1)
    # a law without a phase-type form is refused by name, and the message says why
    with pytest.raises(InvalidParameter, match="parameter sizes=.*phase-type"):
        solve_jsq_ph(2, 0.7, scipy.stats.lognorm(0.8))
    with pytest.raises(InvalidParameter, match="parameter sizes="):
        solve_attained("LEW", 2, 0.7, 2.5)  # a number is no job-size law
