"""The registered mg1-sim model against the Pollaczek-Khinchine mean, computed here.

The simulation (Lindley recursion, batch means, 95% intervals) must lie within three half-widths
of E[W] = lam E[X^2]/(2(1 - rho)), with E[X^2] written out for each law in the test (2 m^2 for
the exponential, the two-phase mixture sum 2 p_i/mu_i^2 for H2).  Three half-widths of a 95%
interval are about six standard errors: with a correct simulator and these fixed seeds a miss
would mean a bias (a wrong law, a wrong recursion), not chance.
"""

from __future__ import annotations

import math

import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.core.registry import get_model
from symq.core.simstats import ConfidenceInterval

SPEC = get_model("mg1-sim")


def test_registered_with_outputs() -> None:
    assert SPEC.accepts_rng
    assert set(SPEC.outputs) == {"EW", "ET", "EW_exact", "ET_exact", "rho"}
    assert [p.name for p in SPEC.parameters] == ["lam", "sizes", "mean", "scv", "n_jobs",
                                                 "n_batches", "level"]


def test_exponential_sizes_match_mm1() -> None:
    lam, mean = 0.35, 2.0                      # rho = 0.7
    result = SPEC.run({"lam": lam, "mean": mean, "n_jobs": 400_000}, rng=11)
    rho = lam * mean
    exact = lam * 2 * mean ** 2 / (2 * (1 - rho))      # E[X^2] = 2 m^2
    assert exact == pytest.approx(rho / (1 - rho) * mean)   # M/M/1
    assert result["EW_exact"] == pytest.approx(exact, rel=1e-14)
    assert isinstance(result["EW"], ConfidenceInterval)
    assert result["EW"].distance(exact) < 3
    assert result["ET"].distance(exact + mean) < 3
    assert result["ET"].mean - result["EW"].mean == pytest.approx(mean)


def test_h2_sizes_match_pollaczek_khinchine() -> None:
    lam, scv = 0.6, 4.0
    result = SPEC.run({"lam": lam, "sizes": "h2", "scv": scv, "n_jobs": 1_000_000}, rng=5)
    # balanced-means H2 with mean 1: p = (1 +- sqrt(3/5))/2, mu_i = 2 p_i
    r = math.sqrt((scv - 1) / (scv + 1))
    probs = [(1 + r) / 2, (1 - r) / 2]
    second = sum(2 * p / (2 * p) ** 2 for p in probs)
    assert second == pytest.approx(1 + scv)
    exact = lam * second / (2 * (1 - lam))
    assert result["EW_exact"] == pytest.approx(exact, rel=1e-12)
    assert result["EW"].distance(exact) < 3
    # Kingman's heavy-traffic form is exact for Poisson arrivals (c_a^2 = 1)
    kingman = lam / (1 - lam) * (1 + scv) / 2 * 1.0
    assert result["EW_exact"] == pytest.approx(kingman, rel=1e-12)


def test_deterministic_sizes_halve_the_mm1_wait() -> None:
    result = SPEC.run({"lam": 0.5, "sizes": "det", "n_jobs": 200_000}, rng=3)
    assert result["EW_exact"] == pytest.approx(0.5)     # M/D/1: rho/(2(1 - rho))
    assert result["EW"].distance(0.5) < 3


def test_same_seed_same_result() -> None:
    a = SPEC.run({"lam": 0.5, "n_jobs": 30_000}, rng=7)
    b = SPEC.run({"lam": 0.5, "n_jobs": 30_000}, rng=7)
    assert a["EW"] == b["EW"]


@pytest.mark.parametrize("params, error, pattern", [
    ({"lam": 1.0}, StabilityError, r"rho = lam\*mean = 1\*1 = 1 must be < 1"),
    ({"lam": 0.4, "mean": 3.0}, StabilityError, r"rho = lam\*mean = 0\.4\*3 = 1\.2"),
    ({"lam": 0.5, "scv": 4.0}, InvalidParameter, r"scv=4\.0 must be omitted or 1 for sizes=exp"),
    ({"lam": 0.5, "sizes": "h2"}, InvalidParameter, r"scv=<missing> must be given"),
    ({"lam": 0.5, "sizes": "h2", "scv": 0.5}, InvalidParameter, r"scv=0\.5 must be a real "
                                                                r"number >= 1 for sizes=h2"),
    ({"lam": 0.5, "sizes": "cauchy"}, InvalidParameter, r"sizes='cauchy' must be one of exp"),
    ({"lam": 0.5, "n_jobs": 100}, InvalidParameter, r"n_jobs"),
    ({"lam": 0.5, "level": 1.0}, InvalidParameter, r"level=1\.0 must be a real number in"),
])
def test_bad_input(params, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        SPEC.run(params, rng=1)
