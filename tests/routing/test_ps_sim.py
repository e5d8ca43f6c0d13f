"""The registered ps-sim model: M/G/1-PS insensitivity, E[T] = E[X]/(C - lam E[X]) for any law.

The exact value is computed here from lam, C and the mean only.  Tolerance: three half-widths of
the 95% batch-means interval (about six standard errors), with fixed seeds; the laws are the
extremes of variability (deterministic, SCV 0; H2 with SCV 4; a lognormal with SCV 3).
"""

from __future__ import annotations

import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.registry import get_model
from symq.core.simstats import ConfidenceInterval

SPEC = get_model("ps-sim")


def test_registered() -> None:
    assert SPEC.accepts_rng
    assert {"ET", "EQ", "ET_exact", "EQ_exact"} <= set(SPEC.outputs)
    assert [p.name for p in SPEC.parameters][:5] == ["lam", "C", "sizes", "mean", "scv"]


@pytest.mark.parametrize("sizes, scv, seed", [("det", None, 1), ("h2", 4.0, 2),
                                              ("lognormal", 3.0, 3)])
def test_insensitivity(sizes, scv, seed) -> None:
    lam, C, mean = 0.7, 1.0, 1.0
    exact = mean / (C - lam * mean)                  # = E[X]/(1 - rho) with C = 1
    rho = lam * mean / C
    result = SPEC.run({"lam": lam, "sizes": sizes, "scv": scv, "n_jobs": 300_000}, rng=seed)
    assert isinstance(result["ET"], ConfidenceInterval)
    assert result["ET_exact"] == pytest.approx(exact, rel=1e-14)
    assert result["ET"].distance(exact) < 3
    assert result["EQ"].distance(rho / (1 - rho)) < 3
    assert result["EQ_exact"] == pytest.approx(rho / (1 - rho), rel=1e-14)


def test_capacity_and_mean_scale() -> None:
    lam, C, mean = 0.5, 2.0, 3.0                     # x = 1.5, E[T] = 3/(2 - 1.5) = 6
    result = SPEC.run({"lam": lam, "C": C, "sizes": "h2", "mean": mean, "scv": 2.0,
                       "n_jobs": 300_000}, rng=4)
    assert result["ET_exact"] == pytest.approx(6.0)
    assert result["ET"].distance(6.0) < 3
    assert result["rho"] == pytest.approx(0.75)


@pytest.mark.parametrize("params, error, pattern", [
    ({"lam": 1.0}, StabilityError, r"x = lam\*mean = 1\*1 = 1 must be < capacity C=1"),
    ({"lam": 0.5, "sizes": "det", "scv": 1.0}, InvalidParameter,
     r"scv=1\.0 must be omitted or 0 for sizes=det"),
    ({"lam": 0.5, "sizes": "h3"}, InvalidParameter, r"sizes='h3' must be one of"),
    ({"lam": 0.5, "C": 0}, InvalidParameter, r"parameter C=0 must be a positive real number"),
    ({"lam": 0.5, "n_jobs": 50}, InvalidParameter, r"n_jobs"),
])
def test_bad_input(params, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        SPEC.run(params, rng=1)
