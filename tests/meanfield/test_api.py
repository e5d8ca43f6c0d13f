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
    est = simulate_jsq(10, 2, 0.5, n_jobs=10_000, rng=1)
    assert est.n_jobs == 10_000
