"""Suite-wide settings.

Each pytest-xdist worker runs numba's parallel kernels on one thread: the workers already keep
every core busy, and two workers each starting threads on all cores slowed the value-iteration
tests up to fivefold (oversubscription).  Results do not depend on the thread count (the
parallel and serial passes are bit-identical, ``tests/dispatch/test_simplex.py``).
"""

from __future__ import annotations

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER") and "NUMBA_NUM_THREADS" not in os.environ:
    os.environ["NUMBA_NUM_THREADS"] = "1"

#: The long tests (seconds on two workers, measured), started first so that none of them begins
#: near the end of the run and leaves the other worker idle (worksteal takes work from the *end*
#: of a worker's queue, so a long test queued late is the run's tail).  A module named here moves
#: whole: its module-scoped fixture (the docs site build) then runs once, on one worker.  The
#: order changes when a test runs, never what it checks.
SLOW_FIRST: dict[str, float] = {
    "tests/test_docs.py": 40.0,
    "tests/papers/test_claims_hold.py::test_every_claim_holds[hyytia-righter]": 16.0,
    "tests/papers/test_claims_hold.py::test_every_claim_holds[li-supermarket]": 15.0,
    "tests/test_examples.py::test_example_runs[attained_service_policies.py]": 10.0,
    "tests/me/test_exact_random.py::test_squares_minus_a_small_term_are_decided_and_every_"
    "verdict_checks_out": 9.0,
    "tests/test_cli.py::test_check_ps_routing_every_claim_holds_and_json_parses": 8.8,
    "tests/routing/test_numeric.py::test_every_claim_holds[insensitivity by simulation]": 8.0,
    "tests/dispatch/test_accuracy.py::test_error_estimate_covers_exact_values[2-0.7-lwl]": 7.5,
    "tests/papers/test_claims_hold.py::test_every_claim_holds[attained-service]": 7.3,
    "tests/papers/test_claims_hold.py::test_every_claim_holds[li-nonlinear]": 6.0,
    "tests/dispatch/test_accuracy.py::test_speeds_optimal_beats_least_finishing_time_and_"
    "the_split": 5.5,
    "tests/test_examples.py::test_example_runs[dispatch_optimal_policy.py]": 5.0,
    "tests/test_plugins.py::test_installed_plugin_is_listed_and_checked_and_a_broken_one_is_"
    "one_warning": 5.0,
    "tests/papers/test_claims_hold.py::test_every_claim_holds[me-pade]": 4.8,
    "tests/me/test_certify.py::test_random_exponential_sums_agree_with_a_dense_grid": 4.5,
    "tests/meanfield/attained/test_derivation.py::test_mean_residual_life_grows_as_derived": 4.5,
    "tests/papers/test_claims_hold.py::test_every_claim_holds[awp]": 4.5,
}


def _slow_key(item: pytest.Item) -> str | None:
    """The entry of :data:`SLOW_FIRST` that names ``item`` (its module or itself), if any."""
    nodeid = item.nodeid
    if nodeid in SLOW_FIRST:
        return nodeid
    module = nodeid.split("::", 1)[0]
    return module if module in SLOW_FIRST else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start the long tests of :data:`SLOW_FIRST` first, spread over the workers.

    pytest-xdist's worksteal gives worker ``i`` the ``i``-th contiguous slice of the collection
    (``len(pending) // workers_left`` items each) and later moves the *tail* of a busy worker's
    queue to an idle one.  The long tests are dealt, longest first, to the slice with the least
    long work so far, and each slice starts with its own; the other tests keep their order.
    Every worker collects the same list (the order is deterministic), as xdist requires.
    """
    groups: dict[str, list[pytest.Item]] = {}
    rest: list[pytest.Item] = []
    for item in items:
        key = _slow_key(item)
        if key is None:
            rest.append(item)
        else:
            groups.setdefault(key, []).append(item)
    if not groups:
        return
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    sizes, left = [], len(items)
    for i in range(workers):
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for key in sorted(groups, key=lambda k: -SLOW_FIRST[k]):
        target = min(range(workers), key=lambda w: (load[w], w))
        heads[target].extend(groups[key])
        load[target] += SLOW_FIRST[key]
    ordered: list[pytest.Item] = []
    position = 0
    for head, size in zip(heads, sizes, strict=True):
        fill = max(0, size - len(head))
        ordered += head + rest[position:position + fill]
        position += fill
    ordered += rest[position:]
    items[:] = ordered
