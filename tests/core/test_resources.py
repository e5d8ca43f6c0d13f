"""Memory guards: the budget, the refusal message and the largest value that fits."""

from __future__ import annotations

import math

import pytest

from symq.core.errors import InvalidParameter, ResourceLimit
from symq.core.resources import largest_fitting, memory_budget, require_memory


def test_budget_follows_the_environment(monkeypatch):
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", "123456")
    assert memory_budget() == 123456
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", "nonsense")
    assert memory_budget() > 2**20  # falls back to half the machine
    monkeypatch.delenv("SYMQ_MEMORY_LIMIT")
    with open("/proc/meminfo") as fh:
        total = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("MemTotal:"))
    assert memory_budget() <= total // 2


def test_refusal_names_parameter_value_need_and_limit(monkeypatch):
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(2**20))
    require_memory("B", 10, 2**19)  # fits
    with pytest.raises(ResourceLimit) as info:
        require_memory("B", 10**9, 8e9, what="1e9 levels", limit="at most 131072")
    message = str(info.value)
    assert isinstance(info.value, InvalidParameter)
    assert message.startswith("parameter B=1000000000 must be at most 131072")
    assert "1e9 levels (7.45 GiB) of a budget of 1 MiB" in message
    for bad in (math.inf, math.nan):
        with pytest.raises(ResourceLimit):
            require_memory("n", 1, bad)


def test_largest_fitting_matches_a_brute_force_search():
    budget = 10_000
    for per_item in (1, 7, 8, 13, 100):
        found = largest_fitting(lambda n, c=per_item: c * n * n, 1, 10**9, budget, integer=True)
        brute = max(n for n in range(1, 200) if per_item * n * n <= budget)
        assert found == brute


def test_smallest_grid_step_that_fits_is_within_the_tolerance():
    # (U/delta)^2 states of 8 bytes: fits iff delta >= U sqrt(8 / budget), here 0.01 exactly
    U, budget = 10.0, 8_000_000
    found = largest_fitting(lambda d: 8 * (U / d) ** 2, 1e-9, 1.0, budget, decreasing=True)
    assert 8 * (U / found) ** 2 <= budget
    assert found == pytest.approx(0.01, rel=2e-3)
    # nothing fits: the end nearest to fitting is returned
    assert largest_fitting(lambda d: math.inf, 1e-9, 1.0, budget, decreasing=True) == 1.0
