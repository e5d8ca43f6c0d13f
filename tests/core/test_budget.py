"""time_budget stops runaway symbolic work and leaves quick work alone."""

import time

import pytest

from symq.core.budget import time_budget
from symq.core.errors import DerivationTimeout, InvalidParameter


def test_quick_work_finishes():
    with time_budget(5.0, "nothing"):
        value = sum(range(10))
    assert value == 45


def test_slow_work_is_stopped_with_a_named_error():
    start = time.perf_counter()
    with pytest.raises(DerivationTimeout,
                       match="the endless loop exceeded its time budget of 0.2 s"):
        with time_budget(0.2, "the endless loop"):
            while True:
                pass
    assert time.perf_counter() - start < 5.0  # stopped, not left to hang


def test_nested_budgets_restore_the_outer_one():
    with pytest.raises(DerivationTimeout, match="outer"):
        with time_budget(0.3, "outer"):
            with time_budget(10.0, "inner"):
                pass
            while True:
                pass


def test_bad_budget():
    with pytest.raises(InvalidParameter, match="seconds"):
        with time_budget(0, "x"):
            pass


def test_an_inner_budget_cannot_extend_the_outer_deadline():
    with pytest.raises(DerivationTimeout, match="outer"):
        with time_budget(0.3, "outer"):
            with time_budget(10.0, "inner"):
                while True:
                    pass


def test_an_alarm_swallowed_inside_the_block_still_ends_it():
    """The alarm's exception can be swallowed where Python ignores exceptions (a weakref
    callback, a finaliser) or by a broad ``except`` in a library: the block then runs on, and
    the budget must still refuse its result."""
    import time

    from symq.core.budget import time_budget
    from symq.core.errors import DerivationTimeout

    swallowed = 0
    with pytest.raises(DerivationTimeout, match="ran on after the alarm"):
        with time_budget(0.05, "a stubborn block"):
            end = time.process_time() + 0.3
            while time.process_time() < end:    # CPU time: the budget counts it
                try:
                    sum(range(1000))
                except DerivationTimeout:    # what a library's broad except would do
                    swallowed += 1
    assert swallowed == 1


def test_the_budget_counts_cpu_time_not_the_wall_clock():
    """Waiting (the machine busy with other processes, or a sleep) does not use the budget:
    a bounded step's outcome does not depend on the machine's load."""
    start = time.perf_counter()
    with time_budget(0.1, "a sleeper"):
        time.sleep(0.3)
    assert time.perf_counter() - start >= 0.3
