"""Claims files: regions, formula evaluation, comparisons, verdicts, counterexamples.

Each test compares the engine with an independent computation: closed forms evaluated with
mpmath or exact rationals, scipy's t quantiles, or the known truth of a synthetic claim.
"""

from __future__ import annotations

import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import stats

from symq.core.claims import Evidence, Inconclusive, Status
from symq.core.claimsfile import build_claim, load_claims_file, parse_region
from symq.core.claimsfile.quantities import FileContext
from symq.core.simstats import ConfidenceInterval
from symq.core.tolerance import Tolerance, point_error, widen


def claim(table, context=None):
    return build_claim("claims[0]", table, context or FileContext("test"))


# ----------------------------------------------------------------------------- regions

def test_region_grid_log_and_integers():
    region = parse_region("r", {"p": "1e-4:1e-1:4:log", "k": {"integers": [1, 3]}, "d": 2})
    points = region.points()
    assert len(points) == 12
    assert sorted({pt["p"] for pt in points}) == pytest.approx([1e-4, 1e-3, 1e-2, 1e-1])
    assert {pt["k"] for pt in points} == {1, 2, 3} and all(pt["d"] == 2 for pt in points)


def test_region_random_axes_are_reproducible_and_in_bounds():
    table = {"mu": {"uniform": [0.5, 2.0]}, "m": {"randint": [2, 6]}, "samples": 50, "seed": 3}
    a, b = parse_region("r", table).points(), parse_region("r", table).points()
    assert a == b and len(a) == 50
    assert all(0.5 <= pt["mu"] <= 2.0 and 2 <= pt["m"] <= 6 for pt in a)
    assert {pt["m"] for pt in a} == {2, 3, 4, 5, 6}


def test_region_where_filters_points():
    region = parse_region("r", {"x": "0:1:11", "y": "0:1:11", "where": "x + y <= 1"})
    points = region.points()
    assert len(points) == 66  # the lattice points of the triangle x + y <= 1: 11*12/2
    assert all(pt["x"] + pt["y"] <= 1 + 1e-12 for pt in points)


# ----------------------------------------------------------------------------- evaluation

def test_exact_rational_evaluation_and_symbolic_proof():
    c = claim({"name": "geometric", "statement": "lam/(1 - lam) + 1 == 1/(1 - lam)",
               "region": {"lam": [0.2, 0.5, 0.9]}, "tolerance": 0})
    v = c.check()
    assert v.status is Status.HOLDS and v.max_error == 0
    assert Evidence.SYMBOLIC in v.evidence and Evidence.EXACT in v.evidence
    # an identity that is false at a rational point is refuted exactly
    v = claim({"name": "off by one", "statement": "lam/(1 - lam) == 1/(1 - lam)",
               "region": {"lam": [0.5]}, "tolerance": 0}).check()
    assert v.status is Status.FAILS
    assert v.reference_value == sp.Integer(2) and v.claimed_value == sp.Integer(1)


def test_infinite_sums_against_closed_forms_at_30_digits():
    # a fast series (summed directly) and a slow one (extrapolated): both to 1e-25
    fast = claim({"name": "geometric series", "statement": "sum(x^k, k, 0, oo) == 1/(1 - x)",
                  "region": {"x": [0.3, 0.9]}, "tolerance": 1e-25}).check()
    assert fast.status is Status.HOLDS and fast.max_error < 1e-40
    slow = claim({"name": "Basel", "statement": "sum(1/k^2, k, 1, oo) == pi^2/6",
                  "region": {}, "tolerance": 1e-25}).check()
    assert slow.status is Status.HOLDS, slow.detail
    assert Evidence.HIGH_PRECISION in slow.evidence


def test_a_divergent_sum_is_undecided_not_a_number():
    v = claim({"name": "harmonic", "statement": "sum(1/k, k, 1, oo) == 10",
               "region": {}, "tolerance": 1e-3}).check()
    assert v.status is Status.INCONCLUSIVE and "does not converge" in v.detail


def test_fifty_digit_value_matches_mpmath():
    v = claim({"name": "erf", "statement": "erf(x) + erfc(x) == 1", "region": {"x": [0.5, 3.0]},
               "tolerance": 1e-45}).check()
    assert v.status is Status.HOLDS  # holds only if both sides carry ~50 digits
    mp = mpmath.mp.clone() if hasattr(mpmath.mp, "clone") else None
    assert mp is None or mp.dps == 15


def test_let_quantities_and_constants_compose():
    table = {"name": "M/M/1 Little", "statement": "EQ == lam*ET",
             "let": {"ET": "1/(mu - lam)", "EQ": "rho/(1 - rho)", "rho": "lam/mu"},
             "region": {"lam": [0.5, 1.5], "mu": 2}, "tolerance": 0}
    v = claim(table).check()
    assert v.status is Status.HOLDS and v.max_error == 0


# ----------------------------------------------------------------------------- comparisons

def test_bonferroni_widening_matches_student_t():
    ci = ConfidenceInterval(1.0, 0.1, 0.95, 20, "batch_means")
    expected = 0.1 * stats.t.ppf(1 - 0.005 / 2, 19) / stats.t.ppf(0.975, 19)
    assert widen(ci, 0.995) == pytest.approx(expected, rel=1e-12)


def test_interval_inequality_has_three_outcomes():
    tol = Tolerance(ci=0.95)
    a = ConfidenceInterval(1.0, 0.1, 0.95, 30, "batch_means")
    assert point_error(a, "<=", 1.5, tol, 1) == 0.0           # the whole interval is below
    assert point_error(a, "<=", 0.5, tol, 1) > 0.0            # the whole interval is above
    from symq.core.claims import Inconclusive

    with pytest.raises(Inconclusive, match="cannot decide"):
        point_error(a, "<=", 1.05, tol, 1)                     # the interval straddles


def test_true_simulation_claims_fail_at_most_at_the_family_rate():
    """200 repetitions of a TRUE claim with 20 simulated points each: with the Bonferroni
    widening the claim may fail in at most 5% of repetitions (binomial upper margin)."""
    rng = np.random.default_rng(7)
    failures = 0
    repetitions, n_points, n_batches = 200, 20, 10
    for _ in range(repetitions):
        outside = 0
        for _ in range(n_points):
            batches = rng.normal(2.0, 1.0, n_batches)
            half = stats.t.ppf(0.975, n_batches - 1) * batches.std(ddof=1) / math.sqrt(n_batches)
            ci = ConfidenceInterval(float(batches.mean()), float(half), 0.95, n_batches, "sim")
            try:  # absolute tolerance 0: the claim fails exactly when the interval misses 2
                point_error(ci, "==", 2.0, Tolerance(absolute=0.0, ci=0.95), n_points)
                outside += 1
            except Inconclusive:
                pass
        failures += outside > 0
    bound = repetitions * 0.05 + 3 * math.sqrt(repetitions * 0.05 * 0.95)
    assert failures <= bound
    # without the widening the same claims would fail most of the time: 1 - 0.95^20 = 64%
    assert 1 - 0.95 ** n_points > 0.6


# ----------------------------------------------------------------------------- verdicts

def test_counterexample_and_holding_boundary_of_a_false_inequality():
    """x^2 <= 2 holds exactly for x <= sqrt(2): the verdict locates the switch around it and
    the smallest counterexample lies just above it."""
    v = claim({"name": "square", "statement": "x^2 <= 2", "region": {"x": "0:3:7"},
               "tolerance": 0}).check()
    assert v.status is Status.FAILS
    assert v.worst_point == {"x": 3.0}
    low, high = (float(t) for t in v.holds_region.split("switch lies in [")[1].split("]")[0]
                 .split(","))
    assert low <= math.sqrt(2) <= high and high - low < 0.01
    assert math.sqrt(2) < v.counterexample["x"] <= 1.5


def test_limit_claims_hold_and_fail():
    holds = claim({"name": "sinc", "statement": "sin(x)/x -> 1", "limit": {"x": 0},
                   "region": {"x": "1e-6:1e-1:6:log"}, "tolerance": 1e-10}).check()
    assert holds.status is Status.HOLDS, holds.detail
    # (1 + x)^(1/x) -> e, so the limit 2.7 is refuted at the nearest point
    fails = claim({"name": "e", "statement": "(1 + x)^(1/x) -> 2.7", "limit": {"x": 0},
                   "region": {"x": "1e-6:1e-1:6:log"}, "tolerance": 1e-3}).check()
    assert fails.status is Status.FAILS
    # the relative error is symmetric: |a - b| / max(|a|, |b|)
    assert fails.max_error == pytest.approx((math.e - 2.7) / math.e, rel=1e-4)


def test_reference_to_a_registered_model_against_the_closed_form():
    """Mitzenmacher (2001): the JSQ(d) fixed point's E[T] = sum_i lam^((d^i - d)/(d - 1))."""
    v = claim({"name": "Mitzenmacher E[T]", "formula": "sum(lam^((d^i - d)/(d - 1)), i, 1, oo)",
               "reference": "supermarket:ET", "region": {"lam": [0.3, 0.9], "d": [2, 3]},
               "tolerance": 1e-9}).check()
    assert v.status is Status.HOLDS
    assert "supermarket:ET" in v.compared and v.n_points == 4


def test_python_claims_file_with_a_function(tmp_path: Path):
    path = tmp_path / "mm1.py"
    path.write_text('''
PAPER = {"title": "M/M/1", "authors": ["A. K. Erlang"], "year": 1917}

def mean_number(point):
    rho = point["rho"]
    return rho / (1 - rho)

CLAIMS = [{"name": "mean number", "statement": "EQ == rho/(1 - rho)",
           "let": {"EQ": mean_number}, "region": {"rho": [0.25, 0.5]}, "tolerance": 1e-12}]
''')
    loaded = load_claims_file(path)
    assert not loaded.errors and loaded.paper.key == "mm1"
    (v,) = [c.check() for c in loaded.paper.build_claims()]
    assert v.status is Status.HOLDS and v.max_error < 1e-15


def test_python_claims_file_with_its_own_model_object(tmp_path: Path):
    """A Python file may hand a ModelSpec to MODELS: here E[T] of M/M/1 by quadrature of the
    sojourn-time tail exp(-(mu - lam) t), checked against the closed form 1/(mu - lam)."""
    path = tmp_path / "own_model.py"
    path.write_text('''
import math
from scipy.integrate import quad
from symq.core.parameters import Parameter, PositiveReal
from symq.core.registry import ModelSpec
from symq.core.result import Result

def solve(lam, mu):
    value, _ = quad(lambda t: math.exp(-(mu - lam) * t), 0, math.inf, epsabs=1e-13)
    return Result("mm1-quad", {"lam": lam, "mu": mu}, {"ET": value}, "quadrature")

PAPER = {"title": "M/M/1 by quadrature"}
MODELS = {"mm1-quad": ModelSpec("mm1-quad", "M/M/1 E[T] by quadrature",
                                (Parameter("lam", PositiveReal()), Parameter("mu", PositiveReal())),
                                solve, outputs=("ET",))}
CLAIMS = [{"name": "E[T] = 1/(mu - lam)", "statement": "ET == 1/(mu - lam)",
           "let": {"ET": "mm1-quad:ET"}, "region": {"lam": [0.5, 0.9], "mu": 1},
           "tolerance": 1e-9}]
''')
    loaded = load_claims_file(path)
    assert not loaded.errors and loaded.models["mm1-quad"].source == f"file {path}"
    (v,) = [c.check() for c in loaded.paper.build_claims()]
    assert v.status is Status.HOLDS and v.n_points == 2


def test_a_folder_check_reads_toml_and_python_files_that_define_claims_only(tmp_path: Path):
    """Checking a folder never runs a script that is not a claims file; its Python claims files
    are chosen only with allow_python (symq check --allow-python)."""
    from symq.core.claimsfile import claims_files

    marker = tmp_path / "ran"
    (tmp_path / "script.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (tmp_path / "mine.py").write_text('PAPER = {"title": "t"}\nCLAIMS = []\n')
    (tmp_path / "mine.toml").write_text('[paper]\ntitle = "t"\n')
    (tmp_path / "_draft.toml").write_text("")
    assert [p.name for p in claims_files(tmp_path)] == ["mine.toml"]
    assert [p.name for p in claims_files(tmp_path, allow_python=True)] == ["mine.py", "mine.toml"]
    assert not marker.exists()
